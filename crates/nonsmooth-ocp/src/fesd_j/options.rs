//! Options of the FESD-J solve ([`ImpulseOptions`]).

use crate::OcpError;

/// Discretization and homotopy of a FESD-J solve; build with [`ImpulseOptions::builder`].
#[derive(Debug, Clone, PartialEq)]
pub struct ImpulseOptions {
    /// Finite elements per control interval (≥ 1).
    pub n_fe: usize,
    /// Step-equilibration weight ρ_h of Σ (h − h̄)²/h̄² (≥ 0).
    pub rho_h: f64,
    /// First relaxation σ₀ (> 0). 0.1: with σ₀ = 1 the relaxed pushed box is moved by its
    /// friction impulses at no effort, and the homotopy fails at σ = 0.01.
    pub sigma0: f64,
    /// σ ← κσ, κ ∈ (0, 1).
    pub kappa: f64,
    /// Most relaxed NLPs per homotopy (≥ 1).
    pub n_homotopy: usize,
    /// Complementarity residual at which a homotopy stops (> 0).
    pub comp_tol: f64,
    /// IPOPT's tolerance per NLP (> 0).
    pub tol: f64,
    /// IPOPT's iteration limit per NLP (≥ 1).
    pub max_iter: i32,
    /// Largest terminal miss of the closest reachable final state that still counts as
    /// reaching the target (> 0): above it the target is named unreachable.
    pub reach_tol: f64,
    /// Wall-clock budget of the whole solve in seconds (> 0); the solve ends with its best
    /// point when it is spent.
    pub time_limit: f64,
    /// The ℓ1 penalty (1/σ) Σ G·H in the objective instead of Scholtes' relaxation
    /// G·H ≤ σ (the default: from the trivial start, the penalty homotopy of the pushed box
    /// stalls at a complementarity of 0.4–0.6 with friction impulses pushing the box, for
    /// σ₀ = 1, 0.1 and 0.01).
    pub penalty: bool,
    /// Print each NLP's result to stderr.
    pub verbose: bool,
}

impl Default for ImpulseOptions {
    fn default() -> Self {
        Self {
            n_fe: 2,
            rho_h: 1e-3,
            sigma0: 0.1,
            kappa: 0.1,
            n_homotopy: 14,
            comp_tol: 1e-9,
            tol: 1e-9,
            max_iter: 1000,
            reach_tol: 1e-4,
            time_limit: 600.0,
            penalty: false,
            verbose: false,
        }
    }
}

impl ImpulseOptions {
    /// A builder from the defaults.
    pub fn builder() -> ImpulseOptionsBuilder {
        ImpulseOptionsBuilder(Self::default())
    }

    /// Checks every field's range; the error names the field.
    pub fn validate(&self) -> Result<(), OcpError> {
        let bad = |m: String| Err(OcpError::InvalidInput(m));
        let positive = |name: &str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                bad(format!("{name} must be finite and > 0, got {v}"))
            }
        };
        if self.n_fe == 0 {
            return bad("n_fe must be ≥ 1".into());
        }
        if self.n_homotopy == 0 {
            return bad("n_homotopy must be ≥ 1".into());
        }
        if self.max_iter < 1 {
            return bad(format!("max_iter must be ≥ 1, got {}", self.max_iter));
        }
        if !(self.rho_h.is_finite() && self.rho_h >= 0.0) {
            return bad(format!("rho_h must be finite and ≥ 0, got {}", self.rho_h));
        }
        if !(self.kappa > 0.0 && self.kappa < 1.0) {
            return bad(format!("kappa must be in (0, 1), got {}", self.kappa));
        }
        positive("sigma0", self.sigma0)?;
        positive("comp_tol", self.comp_tol)?;
        positive("tol", self.tol)?;
        positive("reach_tol", self.reach_tol)?;
        positive("time_limit", self.time_limit)
    }
}

/// Builder of [`ImpulseOptions`]; [`ImpulseOptionsBuilder::build`] validates.
#[derive(Debug, Clone)]
pub struct ImpulseOptionsBuilder(ImpulseOptions);

macro_rules! setters {
    ($($field:ident: $ty:ty),*) => {
        impl ImpulseOptionsBuilder {
            $(
                #[doc = concat!("Sets `", stringify!($field), "`.")]
                pub fn $field(mut self, value: $ty) -> Self {
                    self.0.$field = value;
                    self
                }
            )*
            /// The options, validated.
            pub fn build(self) -> Result<ImpulseOptions, OcpError> {
                self.0.validate()?;
                Ok(self.0)
            }
        }
    };
}

setters!(n_fe: usize, rho_h: f64, sigma0: f64, kappa: f64, n_homotopy: usize, comp_tol: f64,
         tol: f64, max_iter: i32, reach_tol: f64, time_limit: f64, penalty: bool, verbose: bool);
