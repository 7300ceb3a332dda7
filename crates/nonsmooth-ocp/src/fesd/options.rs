//! Discretization and homotopy options ([`FesdOptions`], its defaults), the cut
//! continuation's steps ([`CutStep`]) and the checkpoint file of converged NLPs.

use super::tableau::{Dcs, Scheme};
use crate::smoothing::Smoothing;
use crate::OcpError;

#[cfg(doc)]
use super::{polish::polish, solve_fixed_mode, solve_from_point};
#[cfg(doc)]
use crate::tf::Cls;

/// Discretization and homotopy options.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FesdOptions {
    /// Collocation stages n_s (Radau IIA: order 2n_s − 1; Gauss–Legendre: 2n_s).
    pub n_s: usize,
    /// Collocation scheme (Radau IIA by default; Gauss–Legendre as an option).
    pub scheme: Scheme,
    /// DCS representation (step functions by default; Stewart as an option).
    pub dcs: Dcs,
    /// Finite elements per control interval N_FE.
    pub n_fe: usize,
    /// FESD (free h, cross complementarity) or a fixed-grid IRK.
    pub fesd: bool,
    /// Element length bounds h ∈ [(1 − γ_h) h̄, (1 + γ_h) h̄] (γ_h < 1 keeps h > 0).
    pub gamma_h: f64,
    /// Weight of the step-equilibration penalty.
    pub rho_h: f64,
    /// ℓ1 penalty ρ Σ α∘λⁿ + (1−α)∘λᵖ in the objective (ρ = 1/σ) instead of the Scholtes
    /// relaxation ≤ σ.
    pub penalty: bool,
    /// Initial relaxation σ₀ (penalty mode: ρ₀ = 1/σ₀).
    pub sigma0: f64,
    /// Relaxation reduction factor κ.
    pub kappa: f64,
    /// Maximum number of NLPs in the homotopy.
    pub n_homotopy: usize,
    /// Complementarity tolerance.
    pub comp_tol: f64,
    /// IPOPT `tol`.
    pub ipopt_tol: f64,
    /// IPOPT `max_iter` per NLP.
    pub max_iter: i32,
    /// Active-set polishing after the homotopy (see [`polish`]): fixes every
    /// complementarity pair's active side and re-solves the then smooth NLP, which removes
    /// the O(√comp) residual drift of the relaxed solution (e.g. penetration while frozen).
    pub polish: bool,
    /// Weight ε of the linear objective term ε Σ α₁ over all stage points. On the sliding
    /// manifold (c₁ = c₂ = 0) θ₁ = α₁ + (1 − α₁)α₂ does not determine (α₁, α₂), and with
    /// c₁ = 0 throughout, an element may hold both the end of a frozen jump and sliding
    /// (the jump → sliding transition changes no sign). The bias selects α₁ = 0 whenever
    /// c₁ ≤ 0, so that sliding uses α₂ > 0, which cross complementarity forbids in an element
    /// with n(q)ᵀv < 0 anywhere: the jump end then falls on an element boundary.
    pub alpha_bias: f64,
    /// Return the last relaxed iterate instead of [`OcpError::HomotopyStalled`] when the
    /// complementarity tolerance is not reached (used for the fixed-grid IRK baseline,
    /// whose discrete complementarity system has no exact solution at an impact inside an
    /// element).
    pub accept_relaxed: bool,
    /// Number of leading switching functions with cross complementarity (switch detection);
    /// the others get stage-wise complementarity only. Default: all. With 1 only the contact
    /// gap c₁ = f_c is detected: sign changes of nᵀv and bᵀv in flight (irrelevant there,
    /// θ₁ = 1) then need no element boundary, at the price of first-order accuracy at the
    /// jump end and at stick/slip transitions.
    pub cross_components: usize,
    /// With `polish`, try the active-set polish as soon as a relaxed NLP reaches this
    /// complementarity residual (and stop the homotopy when it succeeds).
    pub polish_tol: f64,
    /// Integrator only: initial guess of each step's stage states by an explicit Euler
    /// prediction with the previous step's mode instead of y₀ everywhere.
    pub predict: bool,
    /// Print one line per NLP of the homotopy to standard error.
    pub verbose: bool,
    /// Weight ρ_sot of the speed-of-time penalty ρ_sot Σ_k (s_k − 1)² (nosnoc's `rho_sot`):
    /// frozen time must be caught up by s > 1 under the clock constraints, so the penalty
    /// makes unphysical use of the auxiliary dynamics in the relaxed NLPs expensive.
    pub rho_sot: f64,
    /// Integrator only: before the homotopy, solve each step as a smooth NLP with the
    /// previous step's active set (mode) fixed on all its stage points ([`solve_fixed_mode`]);
    /// accepted when IPOPT converges with all complementarity products zero, otherwise the
    /// homotopy runs as usual. Steps without a switch then cost one short smooth solve.
    pub mode_predict: bool,
    /// IPOPT's adaptive barrier update (`mu_strategy adaptive`) in the homotopy NLPs instead
    /// of the monotone default.
    pub mu_adaptive: bool,
    /// Warm-start the homotopy's NLPs with the previous NLP's multipliers and a small
    /// initial barrier parameter (IPOPT `warm_start_init_point`); otherwise only the primal
    /// point is passed on.
    pub warm_duals: bool,
    /// Elastic Scholtes mode (nosnoc's `elastic_ineq`; needs `penalty = false`): one slack
    /// s_e ∈ [0, `s_elastic_max`] relaxes every aggregated complementarity constraint to
    /// ≤ s_e and the objective gets ρ s_e with ρ = 1/σ. Every relaxed NLP is feasible, and
    /// the homotopy drives s_e to zero by the growing penalty instead of a shrinking bound.
    pub elastic: bool,
    /// Upper bound of the elastic slack.
    pub s_elastic_max: f64,
    /// Scholtes mode (`penalty = false`): one relaxed constraint per complementarity
    /// product (nosnoc's `cross_comp_mode` 1) instead of one aggregated sum per element and
    /// switching function.
    pub per_pair: bool,
    /// Initial guess of every stage's α (step representation; nosnoc's `initial_alpha`).
    pub alpha0: f64,
    /// Shift of the initial guess of the stage multipliers: λᵖ = max(c(y₀), 0) + shift and
    /// λⁿ = max(−c(y₀), 0) + shift (c = λᵖ − λⁿ still holds at y₀; nosnoc starts both at
    /// 0.5, away from their bounds).
    pub lambda_shift: f64,
    /// Soft terminal phase (0 = off): while σ > [`FesdOptions::soft_terminal_sigma`] the
    /// terminal constraint is replaced by the penalty (w/σ) Σ (y_i(T̃) − target_i)² with
    /// w = `soft_terminal`, so that every relaxed NLP of the early homotopy is feasible
    /// (standing still satisfies all complementarity constraints); afterwards the terminal
    /// constraint is imposed exactly again.
    pub soft_terminal: f64,
    /// σ at or below which the terminal constraint is hard again (see
    /// [`FesdOptions::soft_terminal`]).
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
    /// (1 − α₂)(λᵖ₂ − δ_v) ≤ 0 (see [`FesdOptions::flight_cut`]; `None` in an entry = that
    /// cut inactive in this NLP, threshold [`CUT_OFF`]); each NLP is warm-started from the
    /// previous one, so a relaxed optimum found without the cut can be deformed step by step
    /// towards one that obeys it. After the last entry the homotopy goes on with
    /// σ ← κσ and the last entry's thresholds. The cut rows exist for a component when
    /// some entry (or `flight_cut` / `flight_cut_v`) sets it.
    pub cut_schedule: Vec<CutStep>,
    /// The system's path constraints ([`Cls::path`]) at every stage point (default) or only
    /// at the control-interval ends (nosnoc's default `g_ineq_at_stg = 0`,
    /// `g_ineq_at_fe = 0`, which the authors' hopper code keeps). State bounds stay at every
    /// stage point either way.
    pub path_at_stages: bool,
    /// Smoothing phase before the MPCC homotopy (`None` = off; step representation only):
    /// α = ½(1 + tanh(c / w)) at every stage point with shrinking widths w, then the
    /// homotopy from the smoothed trajectory ([`crate::smoothing`]).
    pub smoothing: Option<Smoothing>,
    /// Retries of failed homotopy NLPs, at most this many in one homotopy (0 = stop at the
    /// first failure): the failed step σ_ok → κσ_ok is retried from the last converged point
    /// with the step factor's square root, √κ, then κ^(1/4), …; a converged NLP restores κ.
    /// Reason: on the hopper, runs of the same settings that differed only in rounding failed
    /// a step (σ = 3e-4) in one run and passed it (down to 2e-8) in another, so a failed step
    /// is often a matter of the path rather than of the problem.
    pub homotopy_retries: usize,
    /// Initial barrier parameter of the homotopy's first NLP (`None` = IPOPT's 0.1), with
    /// IPOPT's `bound_push` and `bound_frac` set to it too, so that a start point close to a
    /// solution (the smoothed point of [`crate::smoothing`], a [`solve_from_point`] start)
    /// is not pushed ≈ 1e-2 into the interior of its bounds and re-solved from there.
    pub first_mu: Option<f64>,
    /// File that receives the primal point of every converged NLP (smoothing phase, model
    /// growth, homotopy) as `{"variables": n, "x": [...]}`, the format of
    /// [`solve_from_point`]'s start points: an interrupted run leaves its last converged point
    /// there. `None` (default): no file is written.
    pub checkpoint: Option<std::path::PathBuf>,
}

/// Writes `x` to [`FesdOptions::checkpoint`], if one is set: to a temporary file next to it
/// first, then renamed over it, so a run stopped while writing leaves the previous
/// checkpoint whole.
///
/// # Errors
/// [`OcpError::InvalidInput`] naming the file when it cannot be written.
pub(crate) fn write_checkpoint(o: &FesdOptions, x: &[f64]) -> Result<(), OcpError> {
    let Some(path) = &o.checkpoint else {
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

/// Threshold standing for an inactive flight cut in a [`FesdOptions::cut_schedule`] entry
/// (far above any gap or normal velocity of the relaxed NLPs).
pub const CUT_OFF: f64 = 1e6;

/// One NLP of a cut continuation ([`FesdOptions::cut_schedule`]).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct CutStep {
    /// Relaxation σ of this NLP.
    pub sigma: f64,
    /// Flight-cut threshold δ on the gap (`None` = inactive).
    pub delta: Option<f64>,
    /// Flight-cut threshold δ_v on the normal velocity (`None` = inactive).
    pub delta_v: Option<f64>,
}

impl Default for FesdOptions {
    fn default() -> Self {
        Self {
            n_s: 3,
            scheme: Scheme::RadauIIA,
            dcs: Dcs::Step,
            n_fe: 3,
            fesd: true,
            penalty: true,
            gamma_h: 0.99,
            rho_h: 1e-3,
            sigma0: 1.0,
            kappa: 0.1,
            n_homotopy: 14,
            comp_tol: 1e-9,
            ipopt_tol: 1e-12,
            max_iter: 300,
            polish: true,
            alpha_bias: 1e-4,
            accept_relaxed: false,
            cross_components: usize::MAX,
            polish_tol: 1e-4,
            predict: false,
            verbose: false,
            rho_sot: 0.0,
            mode_predict: true,
            mu_adaptive: false,
            warm_duals: true,
            elastic: false,
            s_elastic_max: 10.0,
            per_pair: false,
            alpha0: 0.5,
            lambda_shift: 0.0,
            soft_terminal: 0.0,
            soft_terminal_sigma: 1e-3,
            flight_cut: None,
            flight_cut_v: None,
            cut_schedule: vec![],
            path_at_stages: true,
            smoothing: None,
            homotopy_retries: 0,
            first_mu: None,
            checkpoint: None,
        }
    }
}
