//! Mathematical programs with complementarity constraints (MPCCs) solved to exact
//! complementarity by an active-set method with LPECs (feature `mpcc`), after Nurkanović &
//! Leyffer, "A globally convergent method for mathematical programs with complementarity
//! constraints" (arXiv 2501.13835, MPECopt):
//!
//! ```text
//! minimize f(x)   subject to   g_L ≤ g(x) ≤ g_U,   x_L ≤ x ≤ x_U,   0 ≤ G_i(x) ⊥ H_i(x) ≥ 0
//! ```
//!
//! with every side G_i, H_i an affine function `offset + sign · x_j` of one variable (a
//! [`Side`]): general complementarity functions are lifted by the caller into slack variables
//! with equality rows (`s = G(x)`, as MacMPEC's AMPL models do), which keeps every
//! linearization exact and lets a branch fix a side through variable bounds.
//!
//! - **Branch NLPs** (BNLPs, [`branch`]): one side of every pair fixed at zero through the
//!   bounds of its variable, the other kept ≥ 0; IPOPT with `bound_relax_factor = 0` and its
//!   fixed-variable treatment, so the returned point's complementarity is exactly zero.
//! - **LPECs** ([`lpec`]): the MPCC linearized at a point within a trust region
//!   ‖d‖∞ ≤ ρ, as a MILP for HiGHS (one binary per undecided pair, big-M from the trust
//!   region: a side can grow by at most ρ within the box, so M = side + ρ is exact).
//! - **Phase I** ([`active_set::solve`] or [`active_set::solve_from_relaxed`]): a relaxed point
//!   (the Scholtes relaxation G_i H_i ≤ σ of [`relaxed`], or the caller's own homotopy) is
//!   projected by an LPEC that minimizes ‖d‖₁, and the branch of its solution is solved as a
//!   BNLP; the first feasible BNLP ends phase I. Where no projected branch is feasible (or
//!   from any point, [`active_set::solve_from_point`]), the **feasibility MPCC**
//!   ([`feasibility`]) minimizes the constraints' ℓ1 violation by the same LPEC–BNLP
//!   iteration, whose branch NLPs are always feasible: it ends on a feasible branch, or
//!   B-stationary at a positive violation ([`MpccError::LocallyInfeasible`]).
//! - **Phase II**: at a BNLP solution x the LPEC with objective ∇f(x)ᵀd either has the
//!   optimal value 0 (d = 0 is optimal: x is B-stationary for the linearized MPCC, the
//!   verdict [`Verdict::BStationary`]) or its solution's active set gives a new branch, whose
//!   BNLP is solved from x + d. A BNLP that fails or does not decrease f shrinks ρ; a trust
//!   region below its minimum ends the method with [`Verdict::NotCertified`] and the reason.
//!
//! What the verdict certifies: B-stationarity of the MPCC linearized at x (the LPEC's optimum
//! is 0 on a trust region). With nonlinear constraints and MPCC-LICQ this is B-stationarity
//! of the MPCC; where MPCC-LICQ fails (FESD's cross complementarity shares variables between
//! pairs) it is the linearized statement, no more.

pub mod active_set;
pub mod branch;
pub mod descent;
pub mod feasibility;
pub mod lpec;
pub mod macmpec;
pub mod relaxed;

use crate::milp::MilpSettings;
use crate::nlp::ipopt::{IpoptOptions, Nlp};
use crate::status::SolverError;

pub use active_set::{solve, solve_from_point, solve_from_relaxed};
pub use descent::{ActiveSetLog, MpccSolution, Verdict};

/// One side of a complementarity pair: `offset + sign · x[var]` with sign ±1.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Side {
    /// The variable.
    pub var: usize,
    /// Constant term.
    pub offset: f64,
    /// +1 or −1.
    pub sign: f64,
}

impl Side {
    /// The side `x[var]`.
    pub fn var(var: usize) -> Self {
        Self {
            var,
            offset: 0.0,
            sign: 1.0,
        }
    }

    /// The side `1 − x[var]`.
    pub fn one_minus(var: usize) -> Self {
        Self {
            var,
            offset: 1.0,
            sign: -1.0,
        }
    }

    /// Value at `x`.
    pub fn value(&self, x: &[f64]) -> f64 {
        self.offset + self.sign * x[self.var]
    }

    /// The value of the variable at which the side is zero.
    pub fn zero_at(&self) -> f64 {
        -self.offset / self.sign
    }
}

/// A complementarity pair 0 ≤ G ⊥ H ≥ 0.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Pair {
    /// G.
    pub g: Side,
    /// H.
    pub h: Side,
}

impl Pair {
    /// |G · H| at `x`, plus any negative part of a side.
    pub fn residual(&self, x: &[f64]) -> f64 {
        let (g, h) = (self.g.value(x), self.h.value(x));
        (g * h).abs().max(-g).max(-h)
    }
}

/// An MPCC: the smooth NLP (objective, constraints, bounds; without the complementarity) and
/// its pairs.
pub struct Mpcc<'a> {
    /// The smooth part.
    pub nlp: &'a dyn Nlp,
    /// The complementarity pairs.
    pub pairs: Vec<Pair>,
}

impl Mpcc<'_> {
    /// Largest pair residual ([`Pair::residual`]) at `x`.
    pub fn comp_residual(&self, x: &[f64]) -> f64 {
        self.pairs.iter().map(|p| p.residual(x)).fold(0.0, f64::max)
    }

    /// Checks the pairs: variables in range, signs ±1, finite offsets, the two sides of a pair
    /// on different variables.
    pub fn validate(&self) -> Result<(), MpccError> {
        let n = self.nlp.num_vars();
        for (i, p) in self.pairs.iter().enumerate() {
            for (name, s) in [("G", p.g), ("H", p.h)] {
                if s.var >= n {
                    return Err(MpccError::InvalidInput(format!(
                        "pair {i}: side {name} names variable {} of {n}",
                        s.var
                    )));
                }
                if s.sign.abs() != 1.0 || !s.offset.is_finite() {
                    return Err(MpccError::InvalidInput(format!(
                        "pair {i}: side {name} must be offset ± x[j] with a finite offset \
                         (sign {}, offset {})",
                        s.sign, s.offset
                    )));
                }
            }
            if p.g.var == p.h.var {
                return Err(MpccError::InvalidInput(format!(
                    "pair {i}: both sides on variable {}",
                    p.g.var
                )));
            }
        }
        Ok(())
    }
}

/// The variable bounds of `nlp` (unset entries unbounded, ±1e20).
pub(crate) fn var_bounds(nlp: &dyn Nlp) -> (Vec<f64>, Vec<f64>) {
    let n = nlp.num_vars();
    let (mut lo, mut hi) = (vec![-1e20; n], vec![1e20; n]);
    nlp.var_bounds(&mut lo, &mut hi);
    (lo, hi)
}

/// The constraint bounds of `nlp` (unset entries unbounded, ±1e20).
pub(crate) fn con_bounds(nlp: &dyn Nlp) -> (Vec<f64>, Vec<f64>) {
    let m = nlp.num_cons();
    let (mut lo, mut hi) = (vec![-1e20; m], vec![1e20; m]);
    nlp.con_bounds(&mut lo, &mut hi);
    (lo, hi)
}

/// Settings of the active-set method (validated by [`ActiveSetSettings::validate`]).
#[derive(Debug, Clone)]
pub struct ActiveSetSettings {
    /// Initial trust-region radius ρ of the phase-II LPECs (> 0).
    pub trust_region: f64,
    /// Smallest radius (> 0, ≤ `trust_region`): below it phase II stops without a certificate.
    pub trust_region_min: f64,
    /// Factor in (0, 1) applied to ρ after a rejected branch.
    pub trust_region_shrink: f64,
    /// B-stationarity tolerance (> 0): x is certified when the LPEC's optimal value is
    /// ≥ −tol · ρ · max(1, ‖∇f(x)‖∞).
    pub stationarity_tol: f64,
    /// Least relative decrease of f that accepts a new branch: f_new ≤ f − tol · max(1, |f|).
    pub decrease_tol: f64,
    /// Most LPECs (phase I's projections included).
    pub max_iterations: usize,
    /// Biactivity tolerance (≥ 0): after a BNLP, the free sides with values in (0, tol] are
    /// fixed at zero as well, by snapping (when the constraints stay within the BNLP's
    /// tolerance) or by a second BNLP, and the point is kept when f does not grow by more than
    /// `decrease_tol`. An interior-point BNLP leaves a variable whose bound is active with a
    /// zero multiplier at ≈ √μ from it (≈ 1e-6), which would show the LPEC a descent that is
    /// not there.
    pub active_tol: f64,
    /// Scholtes relaxations of [`solve`]'s phase I: σ₀ (> 0) …
    pub sigma0: f64,
    /// … reduced by this factor in (0, 1) …
    pub kappa: f64,
    /// … at most this many times.
    pub n_relaxations: usize,
    /// Phase I projects a relaxed point once its largest min(G_i, H_i) is at most this.
    pub projection_threshold: f64,
    /// Limit on the method's CPU seconds (after phase I's relaxations: checked between
    /// subproblems).
    pub time_limit: f64,
    /// IPOPT options of the branch NLPs (the method adds `bound_relax_factor = 0`).
    pub bnlp: IpoptOptions,
    /// HiGHS settings of the LPECs.
    pub lpec: MilpSettings,
    /// Progress on stderr.
    pub verbose: bool,
}

impl Default for ActiveSetSettings {
    fn default() -> Self {
        Self {
            trust_region: 1e-1,
            trust_region_min: 1e-8,
            trust_region_shrink: 0.1,
            stationarity_tol: 1e-7,
            decrease_tol: 1e-9,
            max_iterations: 50,
            active_tol: 1e-5,
            sigma0: 1.0,
            kappa: 0.1,
            n_relaxations: 12,
            projection_threshold: 1e-1,
            time_limit: 600.0,
            bnlp: IpoptOptions::quiet(1e-10, 3000),
            lpec: MilpSettings::default(),
            verbose: false,
        }
    }
}

impl ActiveSetSettings {
    /// Checks every field's range; the error names the field.
    pub fn validate(&self) -> Result<(), MpccError> {
        let bad = |field: &str, value: f64, want: &str| {
            Err(MpccError::InvalidInput(format!(
                "active-set setting {field} = {value}: must be {want}"
            )))
        };
        let positive = |v: f64| v.is_finite() && v > 0.0;
        let unit = |v: f64| v > 0.0 && v < 1.0;
        if !positive(self.trust_region) {
            return bad("trust_region", self.trust_region, "positive and finite");
        }
        if !positive(self.trust_region_min) || self.trust_region_min > self.trust_region {
            return bad(
                "trust_region_min",
                self.trust_region_min,
                "positive and at most trust_region",
            );
        }
        if !unit(self.trust_region_shrink) {
            return bad("trust_region_shrink", self.trust_region_shrink, "in (0, 1)");
        }
        if !positive(self.stationarity_tol) {
            return bad("stationarity_tol", self.stationarity_tol, "positive");
        }
        if !(self.decrease_tol >= 0.0 && self.decrease_tol.is_finite()) {
            return bad("decrease_tol", self.decrease_tol, "≥ 0 and finite");
        }
        if !(self.active_tol >= 0.0 && self.active_tol.is_finite()) {
            return bad("active_tol", self.active_tol, "≥ 0 and finite");
        }
        if !positive(self.sigma0) {
            return bad("sigma0", self.sigma0, "positive");
        }
        if !unit(self.kappa) {
            return bad("kappa", self.kappa, "in (0, 1)");
        }
        if !positive(self.projection_threshold) {
            return bad(
                "projection_threshold",
                self.projection_threshold,
                "positive",
            );
        }
        if self.time_limit.is_nan() || self.time_limit <= 0.0 {
            return bad("time_limit", self.time_limit, "positive");
        }
        if !positive(self.lpec.time_limit) {
            return bad("lpec.time_limit", self.lpec.time_limit, "positive");
        }
        Ok(())
    }
}

/// Why the active-set method returned no point. Every variant after phase I carries the last
/// feasible branch point (exactly complementary) so that the caller can write it.
#[derive(Debug, Clone, thiserror::Error)]
pub enum MpccError {
    /// Bad pairs or settings.
    #[error("MPCC active set: invalid input: {0}")]
    InvalidInput(String),
    /// No relaxed point could be projected onto a feasible branch.
    #[error("MPCC active set: phase I found no feasible branch NLP: {reason}")]
    NoFeasibleBranch {
        /// What failed last.
        reason: String,
        /// The last relaxed point.
        relaxed: Vec<f64>,
    },
    /// HiGHS could not solve an LPEC at a feasible branch point (infeasible, unbounded, no
    /// point within its time limit).
    #[error("MPCC active set: LPEC failed at a feasible branch point: {source}")]
    Lpec {
        /// HiGHS's error.
        source: SolverError,
        /// The last feasible branch point.
        x: Vec<f64>,
    },
    /// The feasibility MPCC's ℓ1 violation is B-stationary above zero: no branch near the
    /// point meets the constraints (to first order).
    #[error(
        "MPCC active set: locally infeasible: the constraints' ℓ1 violation is B-stationary \
         at {violation:.3e}, no branch near the point satisfies them"
    )]
    LocallyInfeasible {
        /// The ℓ1 violation (sum of the elastic slacks) at the certified point.
        violation: f64,
        /// The certified point (on the MPCC's variables, exactly complementary).
        x: Vec<f64>,
    },
    /// The CPU-time limit was reached.
    #[error("MPCC active set: time limit of {limit} s reached")]
    TimeLimit {
        /// The limit in seconds.
        limit: f64,
        /// The last feasible branch point (empty when phase I had not found one).
        x: Vec<f64>,
    },
}

impl MpccError {
    /// The last feasible branch point (or relaxed point) the error carries.
    pub fn last_point(&self) -> Option<&[f64]> {
        match self {
            Self::InvalidInput(_) => None,
            Self::NoFeasibleBranch { relaxed, .. } => Some(relaxed),
            Self::LocallyInfeasible { x, .. } => Some(x),
            Self::Lpec { x, .. } | Self::TimeLimit { x, .. } => {
                (!x.is_empty()).then_some(x.as_slice())
            }
        }
    }
}
