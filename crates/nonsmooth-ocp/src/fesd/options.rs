//! Discretization, MPCC strategy and NLP (IPOPT) settings of the FESD OCP and integrator
//! ([`FesdOptions`] = [`Discretization`] + [`MpccStrategy`] + [`NlpSettings`]), each with its
//! defaults, a validated builder and its rules in one `validate` function; the cut
//! continuation's steps ([`CutStep`]) and the checkpoint file of converged NLPs.
//!
//! ```
//! use nonsmooth_ocp::fesd::{Discretization, FesdOptions, MpccStrategy, NlpSettings};
//! # fn main() -> Result<(), nonsmooth_ocp::OcpError> {
//! let o = FesdOptions {
//!     discretization: Discretization::builder().n_s(2).n_fe(3).build()?,
//!     mpcc: MpccStrategy::builder().penalty(false).kappa(0.1).build()?,
//!     nlp: NlpSettings::builder().tol(1e-8).max_iter(3000).build()?,
//! };
//! // an invalid value is a typed error naming the field and the rule
//! let e = Discretization::builder().n_fe(0).build().unwrap_err();
//! assert!(e.to_string().contains("n_fe must be positive"));
//! # let _ = o;
//! # Ok(())
//! # }
//! ```
//!
//! The problem files' `[fesd]` keys set fields of all three groups through these builders
//! (`crate::problem`), so a rule and its message are the same for a file and for Rust code.

use super::tableau::{Dcs, Scheme, Tableau};
use crate::smoothed_switch::Smoothing;
use crate::OcpError;

/// All options of the FESD discretization and its solution: what NLP is built
/// ([`Discretization`]), how its complementarity constraints are relaxed and driven to zero
/// ([`MpccStrategy`]), and how IPOPT solves each NLP ([`NlpSettings`]).
///
/// Every group has a [`Default`] and a builder that checks its values
/// (`Discretization::builder().n_s(2).build()?`); the fields are public as well, and
/// [`build`](super::build) checks them all again ([`FesdOptions::validate`]).
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct FesdOptions {
    /// Collocation, DCS, finite elements, step equilibration, speed of time.
    pub discretization: Discretization,
    /// Relaxation and homotopy of the complementarity constraints, end game, phases.
    pub mpcc: MpccStrategy,
    /// IPOPT settings of every NLP, progress output and checkpoint file.
    pub nlp: NlpSettings,
}

impl FesdOptions {
    /// These options with the deadline of [`NlpSettings::time_limit`] counted from now (kept
    /// where one is already set: an earlier phase of the same run started the clock).
    pub fn with_deadline(&self) -> FesdOptions {
        let mut o = self.clone();
        if o.nlp.deadline.is_none() {
            o.nlp.deadline = o
                .nlp
                .time_limit
                .map(|t| std::time::Instant::now() + std::time::Duration::from_secs_f64(t));
        }
        o
    }

    /// Checks every group ([`Discretization::validate`], [`MpccStrategy::validate`],
    /// [`NlpSettings::validate`]).
    ///
    /// # Errors
    /// [`OcpError::InvalidInput`] naming the first invalid field and its rule.
    pub fn validate(&self) -> Result<(), OcpError> {
        self.discretization.validate()?;
        self.mpcc.validate()?;
        self.nlp.validate()
    }
}

/// `InvalidInput("{field} must be positive and finite, got {v}")` unless `v` is.
fn positive(field: &str, v: f64) -> Result<(), OcpError> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(invalid(format!(
            "{field} must be positive and finite, got {v}"
        )))
    }
}

/// `InvalidInput("{field} must be finite and ≥ 0, got {v}")` unless `v` is.
fn nonnegative(field: &str, v: f64) -> Result<(), OcpError> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(invalid(format!("{field} must be finite and ≥ 0, got {v}")))
    }
}

fn invalid(message: String) -> OcpError {
    OcpError::InvalidInput(message)
}

/// Builder setters: `plain` fields take the field's type, `into` fields anything that
/// converts into it (`Option<f64>` fields take an `f64` or `None`).
macro_rules! setter {
    ($group:ident, plain $field:ident : $ty:ty) => {
        #[doc = concat!("Sets [`", stringify!($group), "::", stringify!($field), "`].")]
        pub fn $field(mut self, value: $ty) -> Self {
            self.0.$field = value;
            self
        }
    };
    ($group:ident, into $field:ident : $ty:ty) => {
        #[doc = concat!("Sets [`", stringify!($group), "::", stringify!($field), "`].")]
        pub fn $field(mut self, value: impl Into<$ty>) -> Self {
            self.0.$field = value.into();
            self
        }
    };
}

/// A builder of a validated options group: starts from the group's default
/// (`Group::builder()`) or from a value (`value.to_builder()`), and `build` checks it.
macro_rules! group_builder {
    ($group:ident, $builder:ident, $( $kind:ident $field:ident : $ty:ty ),* $(,)?) => {
        #[doc = concat!("Builder of [`", stringify!($group), "`]: one setter per field, ")]
        #[doc = concat!("then [`", stringify!($builder), "::build`] checks the values.")]
        #[derive(Debug, Clone, PartialEq)]
        #[must_use]
        pub struct $builder($group);

        impl $group {
            /// A builder starting from the defaults.
            pub fn builder() -> $builder {
                $builder(Self::default())
            }

            /// A builder starting from this value.
            pub fn to_builder(&self) -> $builder {
                $builder(self.clone())
            }
        }

        impl Default for $builder {
            fn default() -> Self {
                $group::builder()
            }
        }

        impl $builder {
            $( setter!($group, $kind $field : $ty); )*

            #[doc = concat!("The checked [`", stringify!($group), "`].")]
            ///
            /// # Errors
            #[doc = concat!("[`OcpError::InvalidInput`] naming the field and its rule (see [`", stringify!($group), "::validate`]).")]
            pub fn build(self) -> Result<$group, OcpError> {
                self.0.validate()?;
                Ok(self.0)
            }
        }
    };
}

/// The discretization: which NLP approximates the time-freezing OCP (collocation, DCS
/// representation, finite elements, FESD step equilibration and cross complementarity,
/// objective regularizers, the initial guess of the stage variables).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Discretization {
    /// Collocation stages n_s (Radau IIA: order 2n_s − 1; Gauss–Legendre: 2n_s); 1, 2 or 3.
    pub n_s: usize,
    /// Collocation scheme (Radau IIA by default; Gauss–Legendre as an option).
    pub scheme: Scheme,
    /// DCS representation (step functions by default; Stewart as an option).
    pub dcs: Dcs,
    /// Finite elements per control interval N_FE (≥ 1).
    pub n_fe: usize,
    /// FESD (free h, cross complementarity) or a fixed-grid IRK.
    pub fesd: bool,
    /// Element length bounds h ∈ [(1 − γ_h) h̄, (1 + γ_h) h̄] (γ_h ∈ [0, 1) keeps h > 0).
    pub gamma_h: f64,
    /// Weight of the step-equilibration penalty (≥ 0).
    pub rho_h: f64,
    /// Number of leading switching functions with cross complementarity (switch detection);
    /// the others get stage-wise complementarity only. Default: all (a problem file on a
    /// model with several contacts: the contact gaps, one per contact). With 1 only the contact
    /// gap c₁ = f_c is detected: sign changes of nᵀv and bᵀv in flight (irrelevant there,
    /// θ₁ = 1) then need no element boundary, at the price of first-order accuracy at the
    /// jump end and at stick/slip transitions.
    pub cross_components: usize,
    /// Weight ρ_sot ≥ 0 of the speed-of-time penalty ρ_sot Σ_k (s_k − 1)² (nosnoc's
    /// `rho_sot`): frozen time must be caught up by s > 1 under the clock constraints, so the
    /// penalty makes unphysical use of the auxiliary dynamics in the relaxed NLPs expensive.
    pub rho_sot: f64,
    /// The system's path constraints ([`ModelSystem::path`](crate::model_system::ModelSystem::path)) at every stage point (default) or only
    /// at the control-interval ends (nosnoc's default `g_ineq_at_stg = 0`,
    /// `g_ineq_at_fe = 0`, which the authors' hopper code keeps). State bounds stay at every
    /// stage point either way.
    pub path_at_stages: bool,
    /// Weight ε ≥ 0 of the linear objective term ε Σ α₁ over all stage points. On the sliding
    /// manifold (c₁ = c₂ = 0) θ₁ = α₁ + (1 − α₁)α₂ does not determine (α₁, α₂), and with
    /// c₁ = 0 throughout, an element may hold both the end of a frozen jump and sliding
    /// (the jump → sliding transition changes no sign). The bias selects α₁ = 0 whenever
    /// c₁ ≤ 0, so that sliding uses α₂ > 0, which cross complementarity forbids in an element
    /// with n(q)ᵀv < 0 anywhere: the jump end then falls on an element boundary.
    pub alpha_bias: f64,
    /// Initial guess of every stage's α ∈ [0, 1] (step representation; nosnoc's
    /// `initial_alpha`).
    pub alpha0: f64,
    /// Shift ≥ 0 of the initial guess of the stage multipliers: λᵖ = max(c(y₀), 0) + shift
    /// and λⁿ = max(−c(y₀), 0) + shift (c = λᵖ − λⁿ still holds at y₀; nosnoc starts both at
    /// 0.5, away from their bounds).
    pub lambda_shift: f64,
}

impl Default for Discretization {
    fn default() -> Self {
        Self {
            n_s: 3,
            scheme: Scheme::RadauIIA,
            dcs: Dcs::Step,
            n_fe: 3,
            fesd: true,
            gamma_h: 0.99,
            rho_h: 1e-3,
            cross_components: usize::MAX,
            rho_sot: 0.0,
            path_at_stages: true,
            alpha_bias: 1e-4,
            alpha0: 0.5,
            lambda_shift: 0.0,
        }
    }
}

impl Discretization {
    /// The rules of the discretization: a tableau exists for `scheme` and `n_s` (n_s ∈ {1, 2,
    /// 3}), `n_fe ≥ 1`, `gamma_h ∈ [0, 1)`, `rho_h`, `rho_sot`, `alpha_bias` and
    /// `lambda_shift` finite and ≥ 0, `alpha0 ∈ [0, 1]`.
    ///
    /// # Errors
    /// [`OcpError::InvalidInput`] naming the first invalid field and its rule.
    pub fn validate(&self) -> Result<(), OcpError> {
        if let Err(OcpError::InvalidInput(m)) = Tableau::new(self.scheme, self.n_s) {
            return Err(invalid(format!("n_s: {m}")));
        }
        if self.n_fe == 0 {
            return Err(invalid("n_fe must be positive, got 0".into()));
        }
        if !(self.gamma_h >= 0.0 && self.gamma_h < 1.0) {
            return Err(invalid(format!(
                "gamma_h must lie in [0, 1), got {}",
                self.gamma_h
            )));
        }
        nonnegative("rho_h", self.rho_h)?;
        nonnegative("rho_sot", self.rho_sot)?;
        nonnegative("alpha_bias", self.alpha_bias)?;
        nonnegative("lambda_shift", self.lambda_shift)?;
        if !(0.0..=1.0).contains(&self.alpha0) {
            return Err(invalid(format!(
                "alpha0 must lie in [0, 1], got {}",
                self.alpha0
            )));
        }
        Ok(())
    }
}

group_builder!(
    Discretization,
    DiscretizationBuilder,
    plain n_s: usize,
    plain scheme: Scheme,
    plain dcs: Dcs,
    plain n_fe: usize,
    plain fesd: bool,
    plain gamma_h: f64,
    plain rho_h: f64,
    plain cross_components: usize,
    plain rho_sot: f64,
    plain path_at_stages: bool,
    plain alpha_bias: f64,
    plain alpha0: f64,
    plain lambda_shift: f64,
);

/// The MPCC strategy: how the complementarity constraints of the discretization are relaxed
/// (Scholtes, ℓ1 penalty, elastic), the homotopy that drives the relaxation to zero, its
/// phases (smoothing, soft terminal, cut continuation) and its end game (polish).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MpccStrategy {
    /// ℓ1 penalty ρ Σ α∘λⁿ + (1−α)∘λᵖ in the objective (ρ = 1/σ) instead of the Scholtes
    /// relaxation ≤ σ.
    pub penalty: bool,
    /// Elastic Scholtes mode (nosnoc's `elastic_ineq`; needs `penalty = false`): one slack
    /// s_e ∈ [0, `s_elastic_max`] relaxes every aggregated complementarity constraint to
    /// ≤ s_e and the objective gets ρ s_e with ρ = 1/σ. Every relaxed NLP is feasible, and
    /// the homotopy drives s_e to zero by the growing penalty instead of a shrinking bound.
    pub elastic: bool,
    /// Upper bound of the elastic slack (positive).
    pub s_elastic_max: f64,
    /// Scholtes mode (`penalty = false`): one relaxed constraint per complementarity
    /// product (nosnoc's `cross_comp_mode` 1) instead of one aggregated sum per element and
    /// switching function.
    pub per_pair: bool,
    /// Initial relaxation σ₀ > 0 (penalty mode: ρ₀ = 1/σ₀).
    pub sigma0: f64,
    /// Relaxation reduction factor κ ∈ (0, 1).
    pub kappa: f64,
    /// Maximum number of NLPs in the homotopy.
    pub n_homotopy: usize,
    /// Complementarity tolerance (> 0).
    pub comp_tol: f64,
    /// Retries of failed homotopy NLPs, at most this many in one homotopy (0 = stop at the
    /// first failure): the failed step σ_ok → κσ_ok is retried from the last converged point
    /// with the step factor's square root, √κ, then κ^(1/4), …; a converged NLP restores κ.
    /// Reason: on the hopper, runs of the same settings that differed only in rounding failed
    /// a step (σ = 3e-4) in one run and passed it (down to 2e-8) in another, so a failed step
    /// is often a matter of the path rather than of the problem.
    pub homotopy_retries: usize,
    /// Active-set polishing after the homotopy (see [`polish`](super::polish::polish)): fixes every
    /// complementarity pair's active side and re-solves the then smooth NLP, which removes
    /// the O(√comp) residual drift of the relaxed solution (e.g. penetration while frozen).
    pub polish: bool,
    /// With `polish`, try the active-set polish as soon as a relaxed NLP reaches this
    /// complementarity residual (> 0; and stop the homotopy when it succeeds).
    pub polish_tol: f64,
    /// Infeasibility test of the penalty and elastic homotopies (decades of σ, ≥ 0; 0 =
    /// off): when a converged relaxed NLP's complementarity residual is above `polish_tol`
    /// and at least half that of a converged NLP at a σ `10^unreachable_decades` times
    /// larger, the relaxed NLP is solved once more with the terminal values released; when
    /// its residual then falls tenfold the homotopy ends with [`OcpError::Unreachable`]
    /// naming the binding constraints (an exact ℓ1 penalty drives the residual to zero once σ
    /// is small enough wherever the MPCC is feasible; see `fesd::infeasibility`), otherwise
    /// it goes on.
    pub unreachable_decades: f64,
    /// Return the last relaxed iterate instead of [`OcpError::HomotopyStalled`] when the
    /// complementarity tolerance is not reached (used for the fixed-grid IRK baseline,
    /// whose discrete complementarity system has no exact solution at an impact inside an
    /// element).
    pub accept_relaxed: bool,
    /// Integrator only: initial guess of each step's stage states by an explicit Euler
    /// prediction with the previous step's mode instead of y₀ everywhere.
    pub predict: bool,
    /// Integrator only: before the homotopy, solve each step as a smooth NLP with the
    /// previous step's active set (mode) fixed on all its stage points ([`solve_fixed_mode`](super::solve_fixed_mode));
    /// accepted when IPOPT converges with all complementarity products zero, otherwise the
    /// homotopy runs as usual. Steps without a switch then cost one short smooth solve.
    pub mode_predict: bool,
    /// Soft terminal phase (0 = off, ≥ 0): while σ > [`MpccStrategy::soft_terminal_sigma`]
    /// the terminal constraint is replaced by the penalty (w/σ) Σ (y_i(T̃) − target_i)² with
    /// w = `soft_terminal`, so that every relaxed NLP of the early homotopy is feasible
    /// (standing still satisfies all complementarity constraints); afterwards the terminal
    /// constraint is imposed exactly again.
    pub soft_terminal: f64,
    /// σ at or below which the terminal constraint is hard again (see
    /// [`MpccStrategy::soft_terminal`]).
    pub soft_terminal_sigma: f64,
    /// Flight cut δ ≥ 0 on the first switching function (step representation only; `None`
    /// = off): the stage-wise constraint (1 − α₁)(λᵖ₁ − δ) ≤ 0 at every stage point. Every
    /// exact solution satisfies it (λᵖ₁ > 0 forces α₁ = 1 by complementarity, and
    /// λᵖ₁ ≤ δ makes the product ≤ 0), but it forbids the relaxed points with α₁ < 1 at a
    /// gap c₁ = λᵖ₁ > δ, which use the auxiliary dynamics in flight ("thrust in the air",
    /// docs/optimal-control.md, "Limitations"). δ is in units of the (scaled) switching
    /// function.
    pub flight_cut: Option<f64>,
    /// The same cut on the second switching function (normal velocity):
    /// (1 − α₂)(λᵖ₂ − δ_v) ≤ 0 at every stage point (`None` = off).
    pub flight_cut_v: Option<f64>,
    /// Cut continuation (empty = off): the first NLPs of the homotopy, one per entry, use
    /// the entry's σ and flight-cut thresholds δ, δ_v in (1 − α₁)(λᵖ₁ − δ) ≤ 0 and
    /// (1 − α₂)(λᵖ₂ − δ_v) ≤ 0 (see [`MpccStrategy::flight_cut`]; `None` in an entry = that
    /// cut inactive in this NLP, threshold [`CUT_OFF`]); each NLP is warm-started from the
    /// previous one, so a relaxed optimum found without the cut can be deformed step by step
    /// towards one that obeys it. After the last entry the homotopy goes on with
    /// σ ← κσ and the last entry's thresholds. The cut rows exist for a component when
    /// some entry (or `flight_cut` / `flight_cut_v`) sets it.
    pub cut_schedule: Vec<CutStep>,
    /// Smoothing phase before the MPCC homotopy (`None` = off; step representation only):
    /// α = ½(1 + tanh(c / w)) at every stage point with shrinking widths w, then the
    /// homotopy from the smoothed trajectory ([`crate::smoothing`]).
    pub smoothing: Option<Smoothing>,
    /// The MPCC method: the relaxation homotopy alone, or the homotopy as phase I of the
    /// exact active-set method ([`MpccMethod::ActiveSet`], [`crate::fesd::active_set`]).
    pub method: MpccMethod,
    /// Settings of the active-set method (used with [`MpccMethod::ActiveSet`]).
    pub active_set: ActiveSetOptions,
}

/// How the MPCC of the FESD discretization is solved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MpccMethod {
    /// The relaxation homotopy (Scholtes or ℓ1 penalty) with its polish.
    #[default]
    Homotopy,
    /// The homotopy down to [`ActiveSetOptions::phase_one_tol`] as phase I, then the
    /// active-set method with LPECs ([`nonsmooth_solvers::mpcc`]): exact complementarity and a
    /// B-stationarity verdict.
    ActiveSet,
}

impl MpccMethod {
    /// The method named `"homotopy"` or `"active-set"`.
    ///
    /// # Errors
    /// [`OcpError::InvalidInput`] for any other name.
    pub fn from_name(name: &str) -> Result<Self, OcpError> {
        match name {
            "homotopy" => Ok(Self::Homotopy),
            "active-set" => Ok(Self::ActiveSet),
            other => Err(invalid(format!(
                "mpcc method must be \"homotopy\" or \"active-set\", got {other:?}"
            ))),
        }
    }
}

/// Settings of the active-set method on the FESD MPCC (the branch NLPs use
/// [`NlpSettings`]'s tolerance and iteration limit).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ActiveSetOptions {
    /// The homotopy (phase I) stops at this complementarity residual (> 0) or at its own
    /// end, and its point is projected onto a branch.
    pub phase_one_tol: f64,
    /// Initial trust-region radius of the phase-II LPECs (> 0).
    pub trust_region: f64,
    /// Smallest radius before phase II stops without a certificate (> 0).
    pub trust_region_min: f64,
    /// Most LPECs.
    pub max_lpecs: usize,
    /// CPU seconds of the active-set phases (> 0).
    pub time_limit: f64,
    /// Wall seconds of one LPEC (HiGHS's time limit, > 0).
    pub lpec_time_limit: f64,
    /// Biactivity tolerance of the BNLP points (≥ 0, see
    /// [`nonsmooth_solvers::mpcc::ActiveSetSettings::active_tol`]).
    pub active_tol: f64,
}

impl Default for ActiveSetOptions {
    fn default() -> Self {
        Self {
            phase_one_tol: 1e-4,
            trust_region: 1e-1,
            trust_region_min: 1e-8,
            max_lpecs: 30,
            time_limit: 600.0,
            lpec_time_limit: 60.0,
            active_tol: 1e-5,
        }
    }
}

impl ActiveSetOptions {
    /// Positive, finite values (`active_tol` ≥ 0), `trust_region_min ≤ trust_region`.
    ///
    /// # Errors
    /// [`OcpError::InvalidInput`] naming the field and its rule.
    pub fn validate(&self) -> Result<(), OcpError> {
        self.validate_named("active_set.")
    }

    /// [`ActiveSetOptions::validate`] with the fields named `{prefix}{field}` (a problem
    /// file's `[mpcc]` keys).
    ///
    /// # Errors
    /// [`OcpError::InvalidInput`] naming the field and its rule.
    pub fn validate_named(&self, prefix: &str) -> Result<(), OcpError> {
        let name = |field: &str| format!("{prefix}{field}");
        positive(&name("phase_one_tol"), self.phase_one_tol)?;
        positive(&name("trust_region"), self.trust_region)?;
        positive(&name("trust_region_min"), self.trust_region_min)?;
        positive(&name("time_limit"), self.time_limit)?;
        positive(&name("lpec_time_limit"), self.lpec_time_limit)?;
        nonnegative(&name("active_tol"), self.active_tol)?;
        if self.trust_region_min > self.trust_region {
            return Err(invalid(format!(
                "{} ({}) must not exceed {} ({})",
                name("trust_region_min"),
                self.trust_region_min,
                name("trust_region"),
                self.trust_region
            )));
        }
        Ok(())
    }
}

impl Default for MpccStrategy {
    fn default() -> Self {
        Self {
            penalty: true,
            elastic: false,
            s_elastic_max: 10.0,
            per_pair: false,
            sigma0: 1.0,
            kappa: 0.1,
            n_homotopy: 14,
            comp_tol: 1e-9,
            homotopy_retries: 0,
            polish: true,
            polish_tol: 1e-4,
            unreachable_decades: 3.0,
            accept_relaxed: false,
            predict: false,
            mode_predict: true,
            soft_terminal: 0.0,
            soft_terminal_sigma: 1e-3,
            flight_cut: None,
            flight_cut_v: None,
            cut_schedule: vec![],
            smoothing: None,
            method: MpccMethod::Homotopy,
            active_set: ActiveSetOptions::default(),
        }
    }
}

impl MpccStrategy {
    /// The rules of the MPCC strategy: `sigma0`, `comp_tol`, `polish_tol`, `s_elastic_max`
    /// and `soft_terminal_sigma` positive and finite, `kappa ∈ (0, 1)`, `elastic` only with
    /// `penalty = false`, `soft_terminal` finite and ≥ 0, the flight cuts and the cut schedule
    /// by [`MpccStrategy::validate_cuts`], the smoothing phase by
    /// [`Smoothing::validate`] (against its own width count; the count of the model's
    /// switching functions is checked when the NLP is built).
    ///
    /// # Errors
    /// [`OcpError::InvalidInput`] naming the first invalid field and its rule.
    pub fn validate(&self) -> Result<(), OcpError> {
        positive("sigma0", self.sigma0)?;
        if !(self.kappa > 0.0 && self.kappa < 1.0) {
            return Err(invalid(format!(
                "kappa must lie in (0, 1), got {}",
                self.kappa
            )));
        }
        positive("comp_tol", self.comp_tol)?;
        positive("polish_tol", self.polish_tol)?;
        nonnegative("unreachable_decades", self.unreachable_decades)?;
        positive("s_elastic_max", self.s_elastic_max)?;
        if self.elastic && self.penalty {
            return Err(invalid(
                "elastic needs penalty = false (the elastic mode is a Scholtes relaxation)".into(),
            ));
        }
        nonnegative("soft_terminal", self.soft_terminal)?;
        positive("soft_terminal_sigma", self.soft_terminal_sigma)?;
        self.validate_cuts()?;
        if let Some(sm) = &self.smoothing {
            sm.validate(sm.widths.len())?;
        }
        self.active_set.validate()?;
        Ok(())
    }

    /// The rules of the flight cuts: `flight_cut`, `flight_cut_v` and every
    /// `cut_schedule` entry's `delta`, `delta_v` finite and ≥ 0, every entry's `sigma`
    /// positive and finite.
    ///
    /// # Errors
    /// [`OcpError::InvalidInput`] naming the field and its rule.
    pub fn validate_cuts(&self) -> Result<(), OcpError> {
        for (field, d) in [
            ("flight_cut", self.flight_cut),
            ("flight_cut_v", self.flight_cut_v),
        ] {
            if let Some(d) = d {
                nonnegative(field, d)?;
            }
        }
        if self.cut_schedule.iter().any(|c| {
            !(c.sigma.is_finite() && c.sigma > 0.0)
                || [c.delta, c.delta_v]
                    .iter()
                    .flatten()
                    .any(|d| !(d.is_finite() && *d >= 0.0))
        }) {
            return Err(invalid(
                "cut_schedule: sigma must be positive, delta and delta_v finite and ≥ 0".into(),
            ));
        }
        Ok(())
    }
}

group_builder!(
    MpccStrategy,
    MpccStrategyBuilder,
    plain penalty: bool,
    plain elastic: bool,
    plain s_elastic_max: f64,
    plain per_pair: bool,
    plain sigma0: f64,
    plain kappa: f64,
    plain n_homotopy: usize,
    plain comp_tol: f64,
    plain homotopy_retries: usize,
    plain polish: bool,
    plain polish_tol: f64,
    plain unreachable_decades: f64,
    plain accept_relaxed: bool,
    plain predict: bool,
    plain mode_predict: bool,
    plain soft_terminal: f64,
    plain soft_terminal_sigma: f64,
    into flight_cut: Option<f64>,
    into flight_cut_v: Option<f64>,
    plain cut_schedule: Vec<CutStep>,
    into smoothing: Option<Smoothing>,
    plain method: MpccMethod,
    plain active_set: ActiveSetOptions,
);

/// The NLP settings: IPOPT's options for every NLP of the homotopy (tolerance, iteration
/// limit, barrier strategy, warm start), progress output and the checkpoint file.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct NlpSettings {
    /// IPOPT `tol` (positive).
    pub tol: f64,
    /// IPOPT `max_iter` per NLP (positive).
    pub max_iter: i32,
    /// IPOPT's adaptive barrier update (`mu_strategy adaptive`) in the homotopy NLPs instead
    /// of the monotone default.
    pub mu_adaptive: bool,
    /// Warm-start the homotopy's NLPs with the previous NLP's multipliers and a small
    /// initial barrier parameter (IPOPT `warm_start_init_point`); otherwise only the primal
    /// point is passed on.
    pub warm_duals: bool,
    /// Initial barrier parameter of the homotopy's first NLP (`None` = IPOPT's 0.1; else in
    /// (0, 0.5]), with IPOPT's `bound_push` and `bound_frac` set to it too, so that a start
    /// point close to a solution (the smoothed point of [`crate::smoothing`], a
    /// [`solve_from_point`](super::solve_from_point) start) is not pushed ≈ 1e-2 into the interior of its bounds and
    /// re-solved from there.
    pub first_mu: Option<f64>,
    /// Print one line per NLP of the homotopy to standard error.
    pub verbose: bool,
    /// File that receives the primal point of every converged NLP (smoothing phase, model
    /// growth, homotopy) as `{"variables": n, "x": [...]}`, the format of
    /// [`solve_from_point`](super::solve_from_point)'s start points: an interrupted run leaves its last converged point
    /// there. `None` (default): no file is written.
    pub checkpoint: Option<std::path::PathBuf>,
    /// Wall seconds of the whole solve (positive; `None`, the default: no limit). From
    /// [`FesdOptions::with_deadline`] on, every NLP gets what remains as IPOPT's
    /// `max_cpu_time`, so that a phase past it ends at its last converged point, which the
    /// run returns with the reason (`nonsmooth_ocp::run::run` sets the deadline).
    pub time_limit: Option<f64>,
    /// The instant the time limit runs out ([`FesdOptions::with_deadline`]).
    #[serde(skip)]
    pub deadline: Option<std::time::Instant>,
}

impl Default for NlpSettings {
    fn default() -> Self {
        Self {
            tol: 1e-12,
            max_iter: 300,
            mu_adaptive: false,
            warm_duals: true,
            first_mu: None,
            verbose: false,
            checkpoint: None,
            time_limit: None,
            deadline: None,
        }
    }
}

impl NlpSettings {
    /// The rules of the NLP settings: `tol` positive and finite, `max_iter` positive,
    /// `first_mu` (if set) in (0, 0.5].
    ///
    /// # Errors
    /// [`OcpError::InvalidInput`] naming the first invalid field and its rule.
    pub fn validate(&self) -> Result<(), OcpError> {
        positive("tol", self.tol)?;
        if self.max_iter <= 0 {
            return Err(invalid(format!(
                "max_iter must be positive, got {}",
                self.max_iter
            )));
        }
        if let Some(mu) = self.first_mu.filter(|mu| !(*mu > 0.0 && *mu <= 0.5)) {
            return Err(invalid(format!("first_mu must lie in (0, 0.5], got {mu}")));
        }
        if let Some(t) = self.time_limit {
            positive("time_limit", t)?;
        }
        Ok(())
    }

    /// Seconds left before the deadline (`None` without one; 0 once it has passed).
    pub fn seconds_left(&self) -> Option<f64> {
        self.deadline.map(|d| {
            d.saturating_duration_since(std::time::Instant::now())
                .as_secs_f64()
        })
    }

    /// Whether the deadline has passed.
    pub fn out_of_time(&self) -> bool {
        self.seconds_left().is_some_and(|s| s <= 0.0)
    }

    /// IPOPT's `max_cpu_time` for an NLP started now: the seconds left, at least a tenth of a
    /// second (IPOPT's limit must be positive); `None` without a deadline.
    pub(crate) fn max_cpu_time(&self) -> Option<f64> {
        self.seconds_left().map(|s| s.max(0.1))
    }
}

group_builder!(
    NlpSettings,
    NlpSettingsBuilder,
    plain tol: f64,
    plain max_iter: i32,
    plain mu_adaptive: bool,
    plain warm_duals: bool,
    into first_mu: Option<f64>,
    plain verbose: bool,
    into checkpoint: Option<std::path::PathBuf>,
    into time_limit: Option<f64>,
);

/// Writes `x` to [`NlpSettings::checkpoint`], if one is set: to a temporary file next to it
/// first, then renamed over it, so a run stopped while writing leaves the previous
/// checkpoint whole.
///
/// # Errors
/// [`OcpError::InvalidInput`] naming the file when it cannot be written.
pub(crate) fn write_checkpoint(o: &FesdOptions, x: &[f64]) -> Result<(), OcpError> {
    let Some(path) = &o.nlp.checkpoint else {
        return Ok(());
    };
    let values: Vec<String> = x.iter().map(f64::to_string).collect();
    let text = format!(
        "{{\"variables\": {}, \"x\": [{}]}}\n",
        x.len(),
        values.join(", ")
    );
    let tmp = path.with_extension("json.partial");
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| OcpError::InvalidInput(format!("checkpoint {}: {e}", path.display())))
}

/// Threshold standing for an inactive flight cut in a [`MpccStrategy::cut_schedule`] entry
/// (far above any gap or normal velocity of the relaxed NLPs).
pub const CUT_OFF: f64 = 1e6;

/// One NLP of a cut continuation ([`MpccStrategy::cut_schedule`]).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct CutStep {
    /// Relaxation σ of this NLP.
    pub sigma: f64,
    /// Flight-cut threshold δ on the gap (`None` = inactive).
    pub delta: Option<f64>,
    /// Flight-cut threshold δ_v on the normal velocity (`None` = inactive).
    pub delta_v: Option<f64>,
}
