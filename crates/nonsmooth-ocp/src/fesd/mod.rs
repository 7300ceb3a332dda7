//! Finite elements with switch detection (FESD; Nurkanović, Sperl, Albrecht & Diehl 2022)
//! for the time-freezing DCS (seed 002 eq. 31/35), as an integrator with fixed controls and
//! as a direct multiple-shooting OCP in numerical time, both solved by a Scholtes relaxation
//! homotopy over IPOPT.
//!
//! Per control interval (step) there are N_FE finite elements with free lengths h_n summing
//! to the step length; each element carries a Radau IIA collocation (n_s = 1, 2, 3) with the
//! algebraic equations c(Y) = λᵖ − λⁿ and α ∈ [0, 1] at every stage point. Cross
//! complementarity Σ_{j=0..n_s} Σ_{j'=1..n_s} α_{j'}∘λⁿ_j + (1 − α_{j'})∘λᵖ_j (λ_0 = the
//! previous element's last stage) is relaxed to ≤ σ per element and component. Step
//! equilibration uses the heuristic penalty ρ_h Σ (h_n − h̄)²/h̄² (nosnoc's
//! `heuristic_mean`). With `fesd = false` the same IRK runs on a fixed grid with stage-wise
//! complementarity only (the order-1 baseline of digest E4). After the homotopy an
//! active-set polish ([`polish`]) fixes the complementarity pairs' active sides and re-solves
//! the smooth NLP, so that the products vanish exactly. General path constraints of the
//! system ([`Cls::path`]) are imposed at every stage point of the OCP (not in the
//! integrator, which follows the dynamics wherever they lead). The integrator ([`simulate`])
//! first predicts the mode of the coming steps ([`solve_fixed_mode`]): runs of steps without
//! a switch are solved as one smooth NLP with the active set fixed, and only the steps with a
//! switch go through the homotopy. For OCPs, [`FesdOptions::rho_sot`] penalizes the speed of
//! time and [`FesdOptions::elastic`] turns the Scholtes relaxation into its elastic form.
//!
//! Alternatives to the defaults: [`FesdOptions::scheme`] = [`Scheme::GaussLegendre`] replaces
//! Radau IIA by Gauss–Legendre collocation (explicit element end state
//! y_end = y_n + h s Σ bᵢFᵢ with its own boundary multipliers in the cross complementarity), and
//! [`FesdOptions::dcs`] = [`Dcs::Stewart`] replaces the step representation by Stewart's
//! reformulation (θ per sign-vector region, g(y) − λ − μ𝟙 = 0, θ ⊥ λ).

use std::sync::Arc;

use crate::ipopt::{solve, thread_cpu_seconds, IpoptOptions, IpoptSolution, IpoptStatus};
use crate::nlp::{BlockFn, BlockNlp, Real};
use crate::smoothing::{heaviside, Smoothing};
use crate::tf::{Cls, TimeFreezing};
use crate::OcpError;

/// Radau IIA Butcher tableau (A, c) for n_s = 1, 2, 3 (Hairer & Wanner, Table IV.5.5).
pub fn radau_iia(n_s: usize) -> Result<(Vec<Vec<f64>>, Vec<f64>), OcpError> {
    let r6 = 6f64.sqrt();
    match n_s {
        1 => Ok((vec![vec![1.0]], vec![1.0])),
        2 => Ok((
            vec![vec![5.0 / 12.0, -1.0 / 12.0], vec![0.75, 0.25]],
            vec![1.0 / 3.0, 1.0],
        )),
        3 => Ok((
            vec![
                vec![
                    (88.0 - 7.0 * r6) / 360.0,
                    (296.0 - 169.0 * r6) / 1800.0,
                    (-2.0 + 3.0 * r6) / 225.0,
                ],
                vec![
                    (296.0 + 169.0 * r6) / 1800.0,
                    (88.0 + 7.0 * r6) / 360.0,
                    (-2.0 - 3.0 * r6) / 225.0,
                ],
                vec![(16.0 - r6) / 36.0, (16.0 + r6) / 36.0, 1.0 / 9.0],
            ],
            vec![(4.0 - r6) / 10.0, (4.0 + r6) / 10.0, 1.0],
        )),
        other => Err(OcpError::InvalidInput(format!(
            "Radau IIA with n_s = {other} is not available (1, 2 or 3)"
        ))),
    }
}

/// Gauss–Legendre Butcher tableau (A, b, c) for n_s = 1, 2, 3 (Hairer & Wanner, Table
/// IV.5.1/5.2; order 2n_s). Not stiffly accurate: the element end value is
/// y₀ + h Σ bᵢ F(Yᵢ), not the last stage.
#[allow(clippy::type_complexity)]
pub fn gauss_legendre(n_s: usize) -> Result<(Vec<Vec<f64>>, Vec<f64>, Vec<f64>), OcpError> {
    match n_s {
        1 => Ok((vec![vec![0.5]], vec![1.0], vec![0.5])),
        2 => {
            let r = 3f64.sqrt() / 6.0;
            Ok((
                vec![vec![0.25, 0.25 - r], vec![0.25 + r, 0.25]],
                vec![0.5, 0.5],
                vec![0.5 - r, 0.5 + r],
            ))
        }
        3 => {
            let r = 15f64.sqrt();
            Ok((
                vec![
                    vec![5.0 / 36.0, 2.0 / 9.0 - r / 15.0, 5.0 / 36.0 - r / 30.0],
                    vec![5.0 / 36.0 + r / 24.0, 2.0 / 9.0, 5.0 / 36.0 - r / 24.0],
                    vec![5.0 / 36.0 + r / 30.0, 2.0 / 9.0 + r / 15.0, 5.0 / 36.0],
                ],
                vec![5.0 / 18.0, 4.0 / 9.0, 5.0 / 18.0],
                vec![0.5 - r / 10.0, 0.5, 0.5 + r / 10.0],
            ))
        }
        other => Err(OcpError::InvalidInput(format!(
            "Gauss-Legendre with n_s = {other} is not available (1, 2 or 3)"
        ))),
    }
}

/// Collocation scheme of the finite elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub enum Scheme {
    /// Radau IIA (order 2n_s − 1, stiffly accurate: the last stage is the element end).
    #[default]
    RadauIIA,
    /// Gauss–Legendre (order 2n_s, not stiffly accurate): each element gets an explicit end
    /// state y_end = y₀ + h s Σ bᵢ F(Yᵢ) and boundary multipliers (λᵖ, λⁿ) with
    /// c(y_end) = λᵖ − λⁿ, which enter the cross complementarity of the element and, as the
    /// j = 0 point, of the next element (FESD paper, Nurkanović et al. 2022, §4 on
    /// non-stiffly-accurate schemes). In [`solve_ocp`] the ℓ1-penalty homotopy is preceded
    /// by a Scholtes relaxation homotopy (see there; docs/decisions/002-time-freezing.md,
    /// "Gauss–Legendre runs Scholtes first").
    GaussLegendre,
}

/// Representation of the time-freezing DCS in the FESD NLP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub enum Dcs {
    /// Step representation (seed 002 eq. 31): α ∈ [0, 1]^{n_c}, c(y) = λᵖ − λⁿ,
    /// α ⊥ λⁿ, 1 − α ⊥ λᵖ.
    #[default]
    Step,
    /// Stewart's reformulation: one multiplier θ_r ≥ 0 per sign-vector region
    /// ([`TimeFreezing::n_stewart`]), Σ θ_r = 1, λ ≥ 0 with g(y) − λ − μ𝟙 = 0
    /// (g_r = −S_rᵀc, [`TimeFreezing::stewart_g`]) and θ ⊥ λ, with the FESD cross
    /// complementarity over all stage/boundary pairs. The integrator's fixed-mode prediction
    /// ([`FesdOptions::mode_predict`]), the Euler prediction and the α bias do not apply;
    /// the active-set polish fixes θ_r = 0 or λ_r = 0.
    Stewart,
}

/// Butcher data of a scheme: the stage matrix A, the weights b, the nodes c and whether
/// the scheme is stiffly accurate (last row of A = b, c_{n_s} = 1).
#[derive(Debug, Clone, PartialEq)]
pub struct Tableau {
    /// Stage matrix A (n_s × n_s).
    pub a: Vec<Vec<f64>>,
    /// Weights b.
    pub b: Vec<f64>,
    /// Nodes c.
    pub c: Vec<f64>,
    /// Whether the element end value is the last stage.
    pub stiffly_accurate: bool,
}

impl Tableau {
    /// The tableau of `scheme` with `n_s` stages (1, 2 or 3).
    pub fn new(scheme: Scheme, n_s: usize) -> Result<Self, OcpError> {
        match scheme {
            Scheme::RadauIIA => {
                let (a, c) = radau_iia(n_s)?;
                let b = a[n_s - 1].clone();
                Ok(Self {
                    a,
                    b,
                    c,
                    stiffly_accurate: true,
                })
            }
            Scheme::GaussLegendre => {
                let (a, b, c) = gauss_legendre(n_s)?;
                Ok(Self {
                    a,
                    b,
                    c,
                    stiffly_accurate: false,
                })
            }
        }
    }
    /// Rows of the collocation block: A, followed by bᵀ for a non-stiffly-accurate scheme
    /// (the end-state equation).
    pub fn rows(&self) -> Vec<Vec<f64>> {
        let mut r = self.a.clone();
        if !self.stiffly_accurate {
            r.push(self.b.clone());
        }
        r
    }
}

/// Whether the pair (α at stage `jp`, λ at point `j`) enters the complementarity of an
/// element with `ns` stages: all pairs with cross complementarity, else the stage-wise
/// pairs j = jp + 1 and, for a non-stiffly-accurate scheme, the end point j = n_s + 1 with
/// the last stage.
pub fn comp_pair(cross: bool, jp: usize, j: usize, ns: usize) -> bool {
    cross || j == jp + 1 || (j == ns + 1 && jp + 1 == ns)
}

/// Number of rows of an element's complementarity block with one row per product
/// ([`FesdOptions::per_pair`]): two products (α λⁿ and (1 − α) λᵖ) per pair of
/// [`comp_pair`] and component, `n_lam` multiplier points, the first `n_cross` components
/// with cross complementarity when `cross`.
pub fn comp_pair_rows(cross: bool, n_cross: usize, ns: usize, n_lam: usize, nc: usize) -> usize {
    let mut r = 0;
    for i in 0..nc {
        for jp in 0..ns {
            r += 2
                * (0..n_lam)
                    .filter(|&j| comp_pair(cross && i < n_cross, jp, j, ns))
                    .count();
        }
    }
    r
}

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

/// The smooth pieces of the FESD NLP.
#[derive(Debug, Clone)]
pub enum FesdBlock<C> {
    /// Y_j − y_n − h s Σ_l a_jl F(Y_l, α_l, u) = 0 for the n_r ≥ n_s rows of `a` (row n_s + 1,
    /// if present, is bᵀ with Y_{n_s+1} = y_end); vars [y_n, Y_1..Y_{n_r}, α_1..α_{n_s}, h, s, u].
    Collocation {
        /// The time-freezing system.
        tf: Arc<TimeFreezing<C>>,
        /// Rows of the Butcher matrix (n_r × n_s, see [`Tableau::rows`]).
        a: Arc<Vec<Vec<f64>>>,
        /// Stewart's θ (length [`TimeFreezing::n_stewart`]) per stage instead of α.
        stewart: bool,
    },
    /// Stewart: g(Y) − λ − μ𝟙 = 0; vars [Y, λ (n_θ), μ].
    StewartAlgebraic {
        /// The time-freezing system.
        tf: Arc<TimeFreezing<C>>,
    },
    /// Stewart (cross) complementarity per region r: Σ θ_{j',r} λ_{j,r} over the pairs of
    /// [`comp_pair`]; vars [θ (n_s×n_θ), λ (n_λ×n_θ)][, s_e].
    StewartComp {
        /// Stages.
        n_s: usize,
        /// Number of multiplier points.
        n_lam: usize,
        /// Number of regions n_θ.
        n_th: usize,
        /// Cross complementarity (FESD) or stage-wise.
        cross: bool,
        /// Scale of the output (penalty ρ or 1).
        weight: f64,
        /// Elastic mode: the last variable is the slack.
        elastic: bool,
    },
    /// c(Y) − λᵖ + λⁿ = 0; vars [Y, λᵖ, λⁿ].
    Algebraic {
        /// The time-freezing system.
        tf: Arc<TimeFreezing<C>>,
    },
    /// Aggregated (cross) complementarity per component; vars [α (n_s×n_c), λᵖ (n_λ×n_c),
    /// λⁿ (n_λ×n_c)] with n_λ = n_s + 1 (Radau) or n_s + 2 (with the end point).
    Comp {
        /// Stages.
        n_s: usize,
        /// Number of multiplier points n_λ (element start, stages, end point if any).
        n_lam: usize,
        /// Switching functions.
        n_c: usize,
        /// Cross (all stage pairs) or stage-wise only.
        cross: bool,
        /// Number of leading components with cross complementarity (the rest stage-wise).
        n_cross: usize,
        /// Scale of the output (the penalty ρ in ℓ1-penalty mode, 1 as a constraint).
        weight: f64,
        /// Elastic mode: the last variable is the slack s_e, subtracted from every output.
        elastic: bool,
        /// As a constraint: one row per product α_{j'}λⁿ_j and (1 − α_{j'})λᵖ_j (nosnoc's
        /// `cross_comp_mode` 1, see [`comp_pair_rows`]) instead of one aggregated row per
        /// component.
        per_pair: bool,
    },
    /// Linear objective ρ s_e of the elastic mode; vars `[s_e]`.
    Elastic {
        /// Weight ρ = 1/σ.
        weight: f64,
    },
    /// General path constraints g(q) of the system ([`Cls::path`]); vars `[q]`.
    Path {
        /// The time-freezing system.
        tf: Arc<TimeFreezing<C>>,
    },
    /// Flight cut (1 − α)(λᵖ − δ) ≤ 0 at one stage point ([`FesdOptions::flight_cut`]);
    /// vars `[α_i, λᵖ_i]`.
    FlightCut {
        /// Threshold δ.
        delta: f64,
        /// Switching function index (0: gap, 1: normal velocity).
        comp: usize,
    },
    /// Smoothed step functions α_i − ½(1 + tanh((λᵖ_i − λⁿ_i)/w_i)) = 0 at one stage point
    /// ([`crate::smoothing`]); vars [α (n_c), λᵖ (n_c), λⁿ (n_c)].
    Smoothing {
        /// Widths w_i (units of the switching functions).
        widths: Vec<f64>,
    },
    /// Linear objective w Σ x over the multipliers of the stage points (the smoothing
    /// phase's choice of the complementary split); vars: the multipliers.
    LambdaSum {
        /// Weight w (0 outside the smoothing phase).
        weight: f64,
    },
    /// Σ h = step length (linear); vars [h_1..].
    SumH,
    /// Objective ρ (h − h̄)²/h̄²; vars `[h]`.
    StepEq {
        /// Nominal length h̄.
        hbar: f64,
        /// Weight ρ.
        rho: f64,
    },
    /// Linear objective w x₀; vars `[α₁]` (see [`FesdOptions::alpha_bias`]).
    Linear {
        /// Weight w.
        weight: f64,
    },
    /// Objective ρ (s − 1)²; vars `[s]`.
    SpeedOfTime {
        /// Weight ρ.
        rho: f64,
    },
    /// Objective w Σ (x_i − target_i)²; vars: the terminal components of y(T̃) (soft
    /// terminal phase, [`FesdOptions::soft_terminal`]).
    Terminal {
        /// Targets.
        target: Vec<f64>,
        /// Weight w (scaled by 1/σ in the homotopy).
        weight: f64,
    },
    /// Objective w Σ u_i²; vars `[u]`, or w Σ u_i² (t₁ − t₀); vars `[u, t₀, t₁]` (the
    /// clock at the interval's start and end) with `per_clock`.
    ControlCost {
        /// Weight (the physical length of the control interval without `per_clock`).
        weight: f64,
        /// Multiply by the clock increment over the interval.
        per_clock: bool,
    },
}

impl<C: Cls> BlockFn for FesdBlock<C> {
    fn eval<T: Real>(&self, x: &[T], out: &mut [T]) {
        match self {
            FesdBlock::Collocation { tf, a, stewart } => {
                let (ny, nc, nr, ns) = (tf.ny(), colloc_width(tf, *stewart), a.len(), a[0].len());
                let y0 = &x[..ny];
                let ys = &x[ny..ny + nr * ny];
                let al = &x[ny + nr * ny..ny + nr * ny + ns * nc];
                let k = ny + nr * ny + ns * nc;
                let (h, s, u) = (x[k], x[k + 1], &x[k + 2..]);
                let f: Vec<Vec<T>> = (0..ns)
                    .map(|l| {
                        colloc_rhs(
                            tf,
                            *stewart,
                            &ys[l * ny..(l + 1) * ny],
                            &al[l * nc..(l + 1) * nc],
                            u,
                        )
                    })
                    .collect();
                let hs = h * s;
                for j in 0..nr {
                    for i in 0..ny {
                        let mut acc = T::from(0.0);
                        for (l, fl) in f.iter().enumerate() {
                            acc += fl[i] * a[j][l];
                        }
                        out[j * ny + i] = ys[j * ny + i] - y0[i] - hs * acc;
                    }
                }
            }
            FesdBlock::Algebraic { tf } => {
                let (ny, nc) = (tf.ny(), tf.nc());
                let c = tf.switching(&x[..ny]);
                for i in 0..nc {
                    out[i] = c[i] - x[ny + i] + x[ny + nc + i];
                }
            }
            FesdBlock::Comp {
                n_s,
                n_lam,
                n_c,
                cross,
                n_cross,
                weight,
                elastic,
                per_pair,
            } => {
                let (ns, nc, nl) = (*n_s, *n_c, *n_lam);
                let (x, slack) = split_elastic(x, *elastic);
                let al = &x[..ns * nc];
                let lp = &x[ns * nc..ns * nc + nl * nc];
                let ln = &x[ns * nc + nl * nc..];
                if *per_pair && out.len() > 1 {
                    let mut r = 0;
                    for i in 0..nc {
                        for jp in 0..ns {
                            let a = al[jp * nc + i];
                            for j in 0..nl {
                                if comp_pair(*cross && i < *n_cross, jp, j, ns) {
                                    out[r] = a * ln[j * nc + i] * *weight;
                                    out[r + 1] = (T::from(1.0) - a) * lp[j * nc + i] * *weight;
                                    if let Some(se) = slack {
                                        out[r] -= se;
                                        out[r + 1] -= se;
                                    }
                                    r += 2;
                                }
                            }
                        }
                    }
                    return;
                }
                for i in 0..nc {
                    let mut acc = T::from(0.0);
                    for jp in 0..ns {
                        let a = al[jp * nc + i];
                        for j in 0..nl {
                            if comp_pair(*cross && i < *n_cross, jp, j, ns) {
                                acc += a * ln[j * nc + i] + (T::from(1.0) - a) * lp[j * nc + i];
                            }
                        }
                    }
                    if out.len() == 1 {
                        if i == 0 {
                            out[0] = T::from(0.0);
                        }
                        out[0] += acc * *weight;
                    } else {
                        out[i] = acc * *weight;
                        if let Some(se) = slack {
                            out[i] -= se;
                        }
                    }
                }
            }
            FesdBlock::StewartAlgebraic { tf } => {
                let (ny, nt) = (tf.ny(), tf.n_stewart());
                let g = tf.stewart_g(&x[..ny]);
                let mu = x[ny + nt];
                for r in 0..nt {
                    out[r] = g[r] - x[ny + r] - mu;
                }
            }
            FesdBlock::StewartComp {
                n_s,
                n_lam,
                n_th,
                cross,
                weight,
                elastic,
            } => {
                let (ns, nl, nt) = (*n_s, *n_lam, *n_th);
                let (x, slack) = split_elastic(x, *elastic);
                let th = &x[..ns * nt];
                let la = &x[ns * nt..ns * nt + nl * nt];
                for r in 0..nt {
                    let mut acc = T::from(0.0);
                    for jp in 0..ns {
                        for j in 0..nl {
                            if comp_pair(*cross, jp, j, ns) {
                                acc += th[jp * nt + r] * la[j * nt + r];
                            }
                        }
                    }
                    if out.len() == 1 {
                        if r == 0 {
                            out[0] = T::from(0.0);
                        }
                        out[0] += acc * *weight;
                    } else {
                        out[r] = acc * *weight;
                        if let Some(se) = slack {
                            out[r] -= se;
                        }
                    }
                }
            }
            FesdBlock::Path { tf } => {
                for (o, g) in out.iter_mut().zip(tf.cls.path(x)) {
                    *o = g;
                }
            }
            FesdBlock::FlightCut { delta, .. } => {
                out[0] = (T::from(1.0) - x[0]) * (x[1] - *delta);
            }
            FesdBlock::Smoothing { widths } => {
                let nc = widths.len();
                for (i, w) in widths.iter().enumerate() {
                    out[i] = x[i] - heaviside(x[nc + i] - x[2 * nc + i], *w);
                }
            }
            FesdBlock::LambdaSum { weight } => {
                out[0] = x.iter().fold(T::from(0.0), |s, v| s + *v) * *weight
            }
            FesdBlock::SumH => out[0] = x.iter().fold(T::from(0.0), |s, v| s + *v),
            FesdBlock::Linear { weight } | FesdBlock::Elastic { weight } => out[0] = x[0] * *weight,
            FesdBlock::StepEq { hbar, rho } => {
                let d = (x[0] - *hbar) / *hbar;
                out[0] = d * d * *rho;
            }
            FesdBlock::SpeedOfTime { rho } => {
                let d = x[0] - 1.0;
                out[0] = d * d * *rho;
            }
            FesdBlock::ControlCost { weight, per_clock } => {
                let (u, dt) = if *per_clock {
                    let n = x.len();
                    (&x[..n - 2], x[n - 1] - x[n - 2])
                } else {
                    (x, T::from(1.0))
                };
                out[0] = u.iter().fold(T::from(0.0), |s, v| s + *v * *v) * dt * *weight
            }
            FesdBlock::Terminal { target, weight } => {
                out[0] = x
                    .iter()
                    .zip(target)
                    .fold(T::from(0.0), |s, (v, t)| s + (*v - *t) * (*v - *t))
                    * *weight
            }
        }
    }
    fn eval_hess<T: Real>(&self, x: &[T], out: &mut [T], i: usize, j: usize) {
        if let FesdBlock::Collocation { tf, a, stewart } = self {
            let (ny, nc, nr, ns) = (tf.ny(), colloc_width(tf, *stewart), a.len(), a[0].len());
            let stage = |k: usize| -> Option<usize> {
                if k >= ny && k < ny + ns * ny {
                    Some((k - ny) / ny)
                } else if k >= ny + nr * ny && k < ny + nr * ny + ns * nc {
                    Some((k - ny - nr * ny) / nc)
                } else {
                    None
                }
            };
            // a pair touching stage l only sees −h s a_jl F(Y_l, α_l, u) (Y_j − y_n is affine)
            if let Some(l) = stage(i).or(stage(j)) {
                let ys = &x[ny + l * ny..ny + (l + 1) * ny];
                let al = &x[ny + nr * ny + l * nc..ny + nr * ny + (l + 1) * nc];
                let k = ny + nr * ny + ns * nc;
                let (h, s, u) = (x[k], x[k + 1], &x[k + 2..]);
                let f = colloc_rhs(tf, *stewart, ys, al, u);
                let hs = h * s;
                for jj in 0..nr {
                    for ii in 0..ny {
                        out[jj * ny + ii] = -(hs * f[ii] * a[jj][l]);
                    }
                }
                return;
            }
        }
        self.eval(x, out)
    }
    fn is_linear(&self) -> bool {
        matches!(
            self,
            FesdBlock::SumH
                | FesdBlock::Linear { .. }
                | FesdBlock::Elastic { .. }
                | FesdBlock::LambdaSum { .. }
        )
    }
    fn eval_jac<T: Real>(&self, x: &[T], out: &mut [T], i: usize) {
        let FesdBlock::Collocation { tf, a, stewart } = self else {
            return self.eval(x, out);
        };
        // Y_j − y_n is affine; F(Y_l, α_l, u) depends on stage l and the globals only
        let (ny, nc, nr, ns) = (tf.ny(), colloc_width(tf, *stewart), a.len(), a[0].len());
        let k = ny + nr * ny + ns * nc;
        for j in 0..nr {
            for ii in 0..ny {
                out[j * ny + ii] = x[ny + j * ny + ii] - x[ii];
            }
        }
        let stages: Vec<usize> = if i < ny {
            vec![]
        } else if i < ny + ns * ny {
            vec![(i - ny) / ny]
        } else if i < ny + nr * ny {
            vec![]
        } else if i < k {
            vec![(i - ny - nr * ny) / nc]
        } else {
            (0..ns).collect()
        };
        let (h, s, u) = (x[k], x[k + 1], &x[k + 2..]);
        let hs = h * s;
        for l in stages {
            let ys = &x[ny + l * ny..ny + (l + 1) * ny];
            let al = &x[ny + nr * ny + l * nc..ny + nr * ny + (l + 1) * nc];
            let f = colloc_rhs(tf, *stewart, ys, al, u);
            for j in 0..nr {
                for ii in 0..ny {
                    out[j * ny + ii] -= hs * f[ii] * a[j][l];
                }
            }
        }
    }
    fn hess_groups(&self) -> Option<Vec<Vec<usize>>> {
        let FesdBlock::Collocation { tf, a, stewart } = self else {
            return None;
        };
        // group l: stage l's Y_l and α_l with the globals (h, s, u)
        let (ny, nc, nr, ns, nu) = (
            tf.ny(),
            colloc_width(tf, *stewart),
            a.len(),
            a[0].len(),
            tf.cls.nu(),
        );
        let k = ny + nr * ny + ns * nc;
        Some(
            (0..ns)
                .map(|l| {
                    let mut g: Vec<usize> = (ny + l * ny..ny + (l + 1) * ny).collect();
                    g.extend(ny + nr * ny + l * nc..ny + nr * ny + (l + 1) * nc);
                    g.extend(k..k + 2 + nu);
                    g
                })
                .collect(),
        )
    }
    fn eval_group<T: Real>(&self, x: &[T], out: &mut [T], group: usize) {
        let FesdBlock::Collocation { tf, a, stewart } = self else {
            return self.eval(x, out);
        };
        let (ny, nc, nr, ns) = (tf.ny(), colloc_width(tf, *stewart), a.len(), a[0].len());
        let l = group;
        let ys = &x[ny + l * ny..ny + (l + 1) * ny];
        let al = &x[ny + nr * ny + l * nc..ny + nr * ny + (l + 1) * nc];
        let k = ny + nr * ny + ns * nc;
        let (h, s, u) = (x[k], x[k + 1], &x[k + 2..]);
        let f = colloc_rhs(tf, *stewart, ys, al, u);
        let hs = h * s;
        for j in 0..nr {
            for ii in 0..ny {
                out[j * ny + ii] = -(hs * f[ii] * a[j][l]);
            }
        }
    }
    fn eval_group_weighted<T: Real>(&self, x: &[T], w: &[f64], group: usize) -> Option<T> {
        // Stewart keeps the per-output path: its integrator's homotopy is sensitive to the
        // rounding of the Hessian (with the weighted sum its particle integrator put the jump
        // end inside an element; docs/decisions/002-time-freezing.md, "Exact derivatives")
        let FesdBlock::Collocation {
            tf,
            a,
            stewart: false,
        } = self
        else {
            return None;
        };
        // Σ_j Σ_i w_ji (−h s a_jl F_i(Y_l, α_l, u)) = −h s Σ_i F_i (Σ_j w_ji a_jl)
        let (ny, nc, nr, ns) = (tf.ny(), tf.nc(), a.len(), a[0].len());
        let l = group;
        let ys = &x[ny + l * ny..ny + (l + 1) * ny];
        let al = &x[ny + nr * ny + l * nc..ny + nr * ny + (l + 1) * nc];
        let k = ny + nr * ny + ns * nc;
        let (h, s, u) = (x[k], x[k + 1], &x[k + 2..]);
        let f = tf.rhs(ys, al, u);
        let mut acc = T::from(0.0);
        for (ii, fi) in f.iter().enumerate() {
            let c: f64 = (0..nr).map(|j| w[j * ny + ii] * a[j][l]).sum();
            if c != 0.0 {
                acc += *fi * c;
            }
        }
        Some(-(h * s * acc))
    }
    fn hess_pair(&self, i: usize, j: usize) -> bool {
        match self {
            FesdBlock::Collocation { tf, a, stewart } => {
                // classes: y_n (affine), stage l (Y_l, α_l), globals (h, s, u)
                let (ny, nc, nr, ns) = (tf.ny(), colloc_width(tf, *stewart), a.len(), a[0].len());
                let class = |k: usize| -> Option<usize> {
                    if k < ny || (k >= ny + ns * ny && k < ny + nr * ny) {
                        None
                    } else if k < ny + ns * ny {
                        Some((k - ny) / ny)
                    } else if k < ny + nr * ny + ns * nc {
                        Some((k - ny - nr * ny) / nc)
                    } else {
                        Some(usize::MAX)
                    }
                };
                match (class(i), class(j)) {
                    (Some(a), Some(b)) => a == b || a == usize::MAX || b == usize::MAX,
                    _ => false,
                }
            }
            // α enters linearly, tanh couples λᵖ_i and λⁿ_i of one component
            FesdBlock::Smoothing { widths } => {
                let nc = widths.len();
                i >= nc && j >= nc && (i - nc) % nc == (j - nc) % nc
            }
            // c(Y) − λᵖ + λⁿ: the multipliers enter linearly
            FesdBlock::Algebraic { tf } | FesdBlock::StewartAlgebraic { tf } => {
                i < tf.ny() && j < tf.ny()
            }
            FesdBlock::StewartComp {
                n_s,
                n_lam,
                n_th,
                cross,
                ..
            } => {
                let (ns, nl, nt) = (*n_s, *n_lam, *n_th);
                let na = ns * nt;
                if i < na || j >= na || i >= na + nl * nt {
                    return false;
                }
                let (jp, ra) = (j / nt, j % nt);
                let (jl, rl) = ((i - na) / nt, (i - na) % nt);
                ra == rl && comp_pair(*cross, jp, jl, ns)
            }
            // bilinear α∘λ products of the same component
            FesdBlock::Comp {
                n_s,
                n_lam,
                n_c,
                cross,
                n_cross,
                ..
            } => {
                let (ns, nc, nl) = (*n_s, *n_c, *n_lam);
                let na = ns * nc;
                if i < na || j >= na || i >= na + 2 * nl * nc {
                    return false;
                }
                let (jp, ca) = (j / nc, j % nc);
                let idx = (i - na) % (nl * nc);
                let (jl, cl) = (idx / nc, idx % nc);
                ca == cl && comp_pair(*cross && ca < *n_cross, jp, jl, ns)
            }
            _ => true,
        }
    }
}

/// The block variables of a complementarity block and, in elastic mode, its trailing
/// elastic slack.
fn split_elastic<T: Real>(x: &[T], elastic: bool) -> (&[T], Option<T>) {
    match x.split_last() {
        Some((slack, rest)) if elastic => (rest, Some(*slack)),
        _ => (x, None),
    }
}

/// Width of a stage's switching variables: n_c (α) or n_θ (Stewart's θ).
fn colloc_width<C: Cls>(tf: &TimeFreezing<C>, stewart: bool) -> usize {
    if stewart {
        tf.n_stewart()
    } else {
        tf.nc()
    }
}

/// The right-hand side from α (step) or θ (Stewart).
fn colloc_rhs<C: Cls, T: Real>(
    tf: &TimeFreezing<C>,
    stewart: bool,
    y: &[T],
    w: &[T],
    u: &[T],
) -> Vec<T> {
    if stewart {
        tf.rhs_stewart(y, w, u)
    } else {
        tf.rhs(y, w, u)
    }
}

/// Variable indices of one finite element.
#[derive(Debug, Clone)]
pub struct ElementIdx {
    /// Element length h.
    pub h: usize,
    /// Start of the element's initial state y_n (y0 or the previous element's end state).
    pub y_start: usize,
    /// Start of each stage's Y.
    pub y: Vec<usize>,
    /// Start of the element's end state (the last stage for Radau IIA, a separate variable
    /// y_end = y_n + h s Σ bᵢ F(Yᵢ) for Gauss–Legendre).
    pub y_end: usize,
    /// Start of each stage's α.
    pub alpha: Vec<usize>,
    /// Start of λᵖ for j = 0..n_s (j = 0 is the previous element's end point), and
    /// j = n_s + 1 at the element's end point for Gauss–Legendre.
    pub lp: Vec<usize>,
    /// Start of λⁿ at the same points as `lp`.
    pub ln: Vec<usize>,
    /// Control interval of the element.
    pub step: usize,
}

/// Index layout of a FESD horizon NLP.
#[derive(Debug, Clone)]
pub struct Layout {
    /// n_y, n_c (n_θ for Stewart), n_u, n_s.
    pub dims: (usize, usize, usize, usize),
    /// Initial state variables.
    pub y0: usize,
    /// Controls per step.
    pub u: Vec<usize>,
    /// Speed of time per step.
    pub s: Vec<usize>,
    /// Elements in order.
    pub elems: Vec<ElementIdx>,
    /// First row of each element's complementarity block (n_c rows).
    pub comp_rows: Vec<usize>,
    /// Number of rows of each element's complementarity constraint (n_c, or
    /// [`comp_pair_rows`] with [`FesdOptions::per_pair`]).
    pub comp_row_len: usize,
    /// Soft terminal phase: (variable, target) of each terminal component, made hard once σ
    /// reaches [`FesdOptions::soft_terminal_sigma`] (empty otherwise).
    pub terminal: Vec<(usize, f64)>,
    /// Collocation nodes c_j.
    pub c: Vec<f64>,
    /// Number of leading components with cross complementarity.
    pub n_cross: usize,
    /// The elastic slack variable (elastic mode only).
    pub elastic: Option<usize>,
    /// DCS representation: with [`Dcs::Stewart`], `alpha` holds θ and `lp` holds λ (both of
    /// width `dims.1` = n_θ) and `ln` holds μ (width 1).
    pub dcs: Dcs,
    /// The NLP has the smoothing rows of [`FesdOptions::smoothing`].
    pub smoothing: bool,
}

/// A horizon to discretize: initial state, steps and bounds.
#[derive(Debug, Clone)]
pub struct Horizon {
    /// Initial state y(0) = (q, v, t).
    pub y0: Vec<f64>,
    /// Boundary multipliers (λᵖ, λⁿ) before the first element; default from c(y0).
    pub lam0: Option<(Vec<f64>, Vec<f64>)>,
    /// Number of control intervals N.
    pub n_steps: usize,
    /// Numerical length of each control interval T̃/N.
    pub step_len: f64,
    /// Control bounds per step (fix a control by lo = hi).
    pub u_bounds: Vec<(Vec<f64>, Vec<f64>)>,
    /// Speed-of-time bounds (1, 1) for simulation.
    pub s_bounds: (f64, f64),
    /// How the physical clock t is tied to the control grid.
    pub clock: Clock,
    /// One speed-of-time variable s for the whole horizon instead of one per control
    /// interval (nosnoc's `local_speed_of_time_variable = 0`, the setting of the authors'
    /// hopper code); only meaningful with [`Clock::Terminal`].
    pub global_speed: bool,
    /// Fixed components of the final state (index, value).
    pub terminal: Vec<(usize, f64)>,
    /// State bounds at all stage points (path constraints as bounds).
    pub y_bounds: Option<(Vec<f64>, Vec<f64>)>,
    /// Weight w of the control cost (0 for simulation): w Σ_k ‖u_k‖² with
    /// [`Clock::Stagewise`] (w = T/N makes it the physical-time integral, every interval
    /// lasting T/N), otherwise w Σ_k ‖u_k‖² (t_{k+1} − t_k) with the clock values at the
    /// interval ends (w = 1: the physical-time integral, whatever each interval lasts).
    pub control_weight: f64,
}

/// How the physical clock t (the last state of y) is tied to the control grid.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Clock {
    /// No clock constraint (simulation, where s = 1 is fixed).
    Free,
    /// Stage clock constraints t_k = k T/N at every control-interval end (seed 002,
    /// Sec. 5: an equidistant control grid in physical time).
    Stagewise(f64),
    /// Only the final clock t(T̃) = T (nosnoc's `stagewise_clock_constraint = 0`, the
    /// setting of the authors' hopper code): the control intervals are equidistant in
    /// numerical time and last whatever physical time the solution gives them.
    Terminal(f64),
}

/// The FESD NLP, its layout and an initial guess.
pub type Built<C> = (BlockNlp<FesdBlock<C>>, Layout, Vec<f64>);

/// Builds the FESD NLP of `h`, its layout and an initial guess (y0 everywhere, α = ½),
/// with the system's path constraints ([`Cls::path`]) at every stage point.
pub fn build<C: Cls>(
    tf: &Arc<TimeFreezing<C>>,
    hz: &Horizon,
    o: &FesdOptions,
) -> Result<Built<C>, OcpError> {
    build_nlp(tf, hz, o, true)
}

/// [`build`] with the path constraints ([`Cls::path`]) optional: the integrator
/// ([`simulate`]) leaves them out, since they are constraints of the OCP, not of the
/// dynamics (a state outside them, e.g. the hopper's knee at q_x − l_t sin φ_hip < −0.05,
/// would make the exact flow infeasible).
fn build_nlp<C: Cls>(
    tf: &Arc<TimeFreezing<C>>,
    hz: &Horizon,
    o: &FesdOptions,
    path_constraints: bool,
) -> Result<Built<C>, OcpError> {
    let st = o.dcs == Dcs::Stewart;
    let (ny, nc, nu) = (tf.ny(), colloc_width(tf, st), tf.cls.nu());
    let tab = Tableau::new(o.scheme, o.n_s)?;
    let cnodes = tab.c.clone();
    let sa = tab.stiffly_accurate;
    let ns = o.n_s;
    if hz.y0.len() != ny || hz.y0.iter().any(|v| !v.is_finite()) {
        return Err(OcpError::InvalidInput(format!(
            "y0 must have {ny} finite entries"
        )));
    }
    if hz.u_bounds.len() != hz.n_steps
        || hz
            .u_bounds
            .iter()
            .any(|(l, u)| l.len() != nu || u.len() != nu)
    {
        return Err(OcpError::InvalidInput(format!(
            "need {} control bound pairs of length {nu}",
            hz.n_steps
        )));
    }
    if !(hz.step_len > 0.0 && hz.step_len.is_finite()) || o.n_fe == 0 || hz.n_steps == 0 {
        return Err(OcpError::InvalidInput(
            "step length, N and N_FE must be positive".into(),
        ));
    }
    if let Some((p, n)) = hz.lam0.as_ref().filter(|_| !st) {
        if p.len() != nc || n.len() != nc {
            return Err(OcpError::InvalidInput(format!(
                "lam0 must have {nc} entries each"
            )));
        }
    }
    if let Some((l, u)) = &hz.y_bounds {
        if l.len() != ny || u.len() != ny {
            return Err(OcpError::InvalidInput(format!(
                "y_bounds must have {ny} entries each"
            )));
        }
    }
    if o.cut_schedule.iter().any(|c| {
        !(c.sigma > 0.0 && c.sigma.is_finite())
            || [c.delta, c.delta_v]
                .iter()
                .flatten()
                .any(|d| !(d.is_finite() && *d >= 0.0))
    }) {
        return Err(OcpError::InvalidInput(
            "cut schedule: σ must be positive and the thresholds finite and nonnegative".into(),
        ));
    }
    if let Some(sm) = &o.smoothing {
        if st {
            return Err(OcpError::InvalidInput(
                "smoothing needs the step representation (dcs = step), not Stewart".into(),
            ));
        }
        sm.validate(nc)?;
    }
    // the terminal is a penalty in the soft phase of the homotopy and in the smoothing phase
    let soft_terminal = o.soft_terminal > 0.0 || o.smoothing.is_some();
    let cuts = cut_thresholds(o);
    if cuts.iter().flatten().any(|d| !(d.is_finite() && *d >= 0.0)) {
        return Err(OcpError::InvalidInput(
            "flight cut thresholds must be finite and nonnegative".into(),
        ));
    }
    let a = Arc::new(tab.rows());
    let mut nlp = BlockNlp::default();
    let mut x0 = vec![];
    let push = |nlp: &mut BlockNlp<FesdBlock<C>>,
                x0: &mut Vec<f64>,
                vals: &[f64],
                lo: &[f64],
                hi: &[f64]| {
        let s = nlp.add_vars(vals.len(), 0.0, 0.0);
        nlp.xl[s..s + vals.len()].copy_from_slice(&lo[..vals.len()]);
        nlp.xu[s..s + vals.len()].copy_from_slice(&hi[..vals.len()]);
        x0.extend_from_slice(vals);
        s
    };
    let y0 = push(&mut nlp, &mut x0, &hz.y0, &hz.y0, &hz.y0);
    let c0 = tf.switching(&hz.y0);
    let (lp0v, ln0v) = if st {
        // λ = g − μ𝟙 with μ = min g (λ = 0 on the region of y0)
        let g = tf.stewart_g(&hz.y0);
        let mu = g.iter().copied().fold(f64::INFINITY, f64::min);
        (g.iter().map(|g| g - mu).collect(), vec![mu])
    } else {
        hz.lam0.clone().unwrap_or_else(|| {
            (
                c0.iter().map(|c| c.max(0.0)).collect(),
                c0.iter().map(|c| (-c).max(0.0)).collect(),
            )
        })
    };
    let lp0 = push(&mut nlp, &mut x0, &lp0v, &lp0v, &lp0v);
    let ln0 = push(&mut nlp, &mut x0, &ln0v, &ln0v, &ln0v);
    let inf = vec![1e20; ny.max(nc)];
    let ninf = vec![-1e20; ny.max(nc)];
    let (ylo, yhi) = hz
        .y_bounds
        .clone()
        .unwrap_or((ninf[..ny].to_vec(), inf[..ny].to_vec()));
    let hbar = hz.step_len / o.n_fe as f64;
    let shift = if st { 0.0 } else { o.lambda_shift };
    let lam_init_p: Vec<f64> = lp0v.iter().map(|v| v + shift).collect();
    let lam_init_n: Vec<f64> = ln0v.iter().map(|v| v + shift).collect();
    let mut layout = Layout {
        dims: (ny, nc, nu, ns),
        y0,
        u: vec![],
        s: vec![],
        elems: vec![],
        comp_rows: vec![],
        comp_row_len: 0,
        terminal: vec![],
        c: cnodes,
        n_cross: if st { usize::MAX } else { o.cross_components },
        elastic: None,
        dcs: o.dcs,
        smoothing: o.smoothing.is_some(),
    };
    let elastic_var = if o.elastic && !o.penalty {
        let v = push(
            &mut nlp,
            &mut x0,
            &[o.sigma0.min(o.s_elastic_max)],
            &[0.0],
            &[o.s_elastic_max],
        );
        nlp.add_objective(FesdBlock::Elastic { weight: 1.0 }, vec![v])?;
        Some(v)
    } else {
        None
    };
    layout.elastic = elastic_var;
    let (mut y_prev, mut lp_prev, mut ln_prev) = (y0, lp0, ln0);
    for k in 0..hz.n_steps {
        let (ul, uh) = &hz.u_bounds[k];
        let uinit: Vec<f64> = ul.iter().zip(uh).map(|(l, h)| 0f64.clamp(*l, *h)).collect();
        let u = push(&mut nlp, &mut x0, &uinit, ul, uh);
        let s0 = 1f64.clamp(hz.s_bounds.0, hz.s_bounds.1);
        let new_speed = !(hz.global_speed && k > 0);
        let s = if new_speed {
            push(&mut nlp, &mut x0, &[s0], &[hz.s_bounds.0], &[hz.s_bounds.1])
        } else {
            layout.s[0]
        };
        let y_interval_start = y_prev;
        layout.u.push(u);
        layout.s.push(s);
        let mut hs = vec![];
        for n in 0..o.n_fe {
            let (hl, hh) = if o.fesd {
                ((1.0 - o.gamma_h) * hbar, (1.0 + o.gamma_h) * hbar)
            } else {
                (hbar, hbar)
            };
            let h = push(&mut nlp, &mut x0, &[hbar], &[hl], &[hh]);
            hs.push(h);
            let mut e = ElementIdx {
                h,
                y_start: y_prev,
                y: vec![],
                y_end: y_prev,
                alpha: vec![],
                lp: vec![lp_prev],
                ln: vec![ln_prev],
                step: k,
            };
            for j in 0..ns + usize::from(!sa) {
                let (mut lo, mut hi) = (ylo.clone(), yhi.clone());
                let end_point = if sa { j == ns - 1 } else { j == ns };
                if end_point && n == o.n_fe - 1 {
                    let last = k == hz.n_steps - 1;
                    let tk = match hz.clock {
                        Clock::Stagewise(t_end) => Some(t_end * (k + 1) as f64 / hz.n_steps as f64),
                        Clock::Terminal(t_end) if last => Some(t_end),
                        _ => None,
                    };
                    if let Some(tk) = tk {
                        lo[ny - 1] = tk;
                        hi[ny - 1] = tk;
                    }
                    if k == hz.n_steps - 1 && !soft_terminal {
                        for (i, v) in &hz.terminal {
                            if *i < ny {
                                lo[*i] = *v;
                                hi[*i] = *v;
                            }
                        }
                    }
                }
                let init: Vec<f64> = (0..ny)
                    .map(|i| x0[y_prev + i].clamp(lo[i], hi[i]))
                    .collect();
                let yv = push(&mut nlp, &mut x0, &init, &lo, &hi);
                if j < ns {
                    e.y.push(yv);
                    let a0 = if st { 1.0 / nc as f64 } else { o.alpha0 };
                    e.alpha.push(push(
                        &mut nlp,
                        &mut x0,
                        &vec![a0; nc],
                        &vec![0.0; nc],
                        &vec![1.0; nc],
                    ));
                }
                if end_point {
                    e.y_end = yv;
                }
                e.lp.push(push(
                    &mut nlp,
                    &mut x0,
                    &lam_init_p,
                    &vec![0.0; nc],
                    &inf[..nc],
                ));
                let nn = lam_init_n.len();
                let ln_lo = if st { -1e20 } else { 0.0 };
                e.ln.push(push(
                    &mut nlp,
                    &mut x0,
                    &lam_init_n,
                    &vec![ln_lo; nn],
                    &inf[..nn],
                ));
            }
            // collocation
            let mut vars: Vec<usize> = (0..ny).map(|i| e.y_start + i).collect();
            for j in 0..ns {
                vars.extend((0..ny).map(|i| e.y[j] + i));
            }
            if !sa {
                vars.extend((0..ny).map(|i| e.y_end + i));
            }
            for j in 0..ns {
                vars.extend((0..nc).map(|i| e.alpha[j] + i));
            }
            vars.push(h);
            vars.push(s);
            vars.extend((0..nu).map(|i| u + i));
            let z = vec![0.0; a.len() * ny];
            nlp.add_constraint(
                FesdBlock::Collocation {
                    tf: tf.clone(),
                    a: a.clone(),
                    stewart: st,
                },
                vars,
                &z,
                &z,
            )?;
            if path_constraints && tf.cls.n_path() > 0 {
                let (plo, phi) = tf.cls.path_bounds();
                let nq = tf.cls.nq();
                for j in 0..ns + usize::from(!sa) {
                    let yj = if j < ns { e.y[j] } else { e.y_end };
                    if !o.path_at_stages && (n + 1 < o.n_fe || yj != e.y_end) {
                        continue;
                    }
                    nlp.add_constraint(
                        FesdBlock::Path { tf: tf.clone() },
                        (0..nq).map(|i| yj + i).collect(),
                        &plo,
                        &phi,
                    )?;
                }
            }
            for j in 0..ns + usize::from(!sa) {
                let yj = if j < ns { e.y[j] } else { e.y_end };
                let mut vars: Vec<usize> = (0..ny).map(|i| yj + i).collect();
                vars.extend((0..nc).map(|i| e.lp[j + 1] + i));
                vars.extend((0..lam_init_n.len()).map(|i| e.ln[j + 1] + i));
                let z = vec![0.0; nc];
                let block = if st {
                    FesdBlock::StewartAlgebraic { tf: tf.clone() }
                } else {
                    FesdBlock::Algebraic { tf: tf.clone() }
                };
                nlp.add_constraint(block, vars, &z, &z)?;
            }
            if st {
                for j in 0..ns {
                    nlp.add_constraint(
                        FesdBlock::SumH,
                        (0..nc).map(|i| e.alpha[j] + i).collect(),
                        &[1.0],
                        &[1.0],
                    )?;
                }
            }
            let mut vars: Vec<usize> = vec![];
            for j in 0..ns {
                vars.extend((0..nc).map(|i| e.alpha[j] + i));
            }
            for lp in &e.lp {
                vars.extend((0..nc).map(|i| lp + i));
            }
            if !st {
                for ln in &e.ln {
                    vars.extend((0..nc).map(|i| ln + i));
                }
            }
            let elastic = elastic_var.is_some();
            if let Some(v) = elastic_var {
                vars.push(v);
            }
            let comp = if st {
                FesdBlock::StewartComp {
                    n_s: ns,
                    n_lam: e.lp.len(),
                    n_th: nc,
                    cross: o.fesd,
                    weight: 1.0,
                    elastic,
                }
            } else {
                FesdBlock::Comp {
                    n_s: ns,
                    n_lam: e.lp.len(),
                    n_c: nc,
                    cross: o.fesd,
                    n_cross: o.cross_components,
                    weight: 1.0,
                    elastic,
                    per_pair: o.per_pair,
                }
            };
            if o.penalty {
                nlp.add_objective(comp, vars)?;
            } else {
                let ub = if elastic { 0.0 } else { o.sigma0 };
                let nrow = if o.per_pair && !st {
                    comp_pair_rows(o.fesd, o.cross_components, ns, e.lp.len(), nc)
                } else {
                    nc
                };
                layout.comp_row_len = nrow;
                let row = nlp.add_constraint(comp, vars, &vec![-1e20; nrow], &vec![ub; nrow])?;
                layout.comp_rows.push(row);
            }
            if !st {
                for (i, delta) in cuts.iter().enumerate().take(nc) {
                    let Some(delta) = *delta else { continue };
                    for j in 0..ns {
                        nlp.add_constraint(
                            FesdBlock::FlightCut { delta, comp: i },
                            vec![e.alpha[j] + i, e.lp[j + 1] + i],
                            &[-1e20],
                            &[0.0],
                        )?;
                    }
                }
            }
            if let Some(sm) = &o.smoothing {
                let mut lams = vec![];
                for j in 0..ns {
                    let mut vars: Vec<usize> = (0..nc).map(|i| e.alpha[j] + i).collect();
                    vars.extend((0..nc).map(|i| e.lp[j + 1] + i));
                    vars.extend((0..nc).map(|i| e.ln[j + 1] + i));
                    lams.extend_from_slice(&vars[nc..]);
                    let z = vec![0.0; nc];
                    nlp.add_constraint(
                        FesdBlock::Smoothing {
                            widths: sm.widths.clone(),
                        },
                        vars,
                        &z,
                        &z,
                    )?;
                }
                nlp.add_objective(
                    FesdBlock::LambdaSum {
                        weight: sm.lambda_weight,
                    },
                    lams,
                )?;
            }
            if o.alpha_bias > 0.0 && !st {
                for j in 0..ns {
                    nlp.add_objective(
                        FesdBlock::Linear {
                            weight: o.alpha_bias,
                        },
                        vec![e.alpha[j]],
                    )?;
                }
            }
            if o.fesd && o.rho_h > 0.0 {
                nlp.add_objective(FesdBlock::StepEq { hbar, rho: o.rho_h }, vec![h])?;
            }
            y_prev = e.y_end;
            lp_prev = e.lp[e.lp.len() - 1];
            ln_prev = e.ln[e.ln.len() - 1];
            layout.elems.push(e);
        }
        if o.fesd {
            nlp.add_constraint(FesdBlock::SumH, hs, &[hz.step_len], &[hz.step_len])?;
        }
        if o.rho_sot > 0.0 && hz.s_bounds.0 < hz.s_bounds.1 && new_speed {
            nlp.add_objective(FesdBlock::SpeedOfTime { rho: o.rho_sot }, vec![s])?;
        }
        if k == hz.n_steps - 1 && soft_terminal {
            let (idx, target): (Vec<usize>, Vec<f64>) = hz
                .terminal
                .iter()
                .filter(|(i, _)| *i < ny)
                .map(|(i, v)| (y_prev + i, *v))
                .unzip();
            layout.terminal = idx.iter().copied().zip(target.iter().copied()).collect();
            nlp.add_objective(
                FesdBlock::Terminal {
                    target,
                    weight: o.soft_terminal / o.sigma0,
                },
                idx,
            )?;
        }
        if hz.control_weight > 0.0 {
            let mut vars: Vec<usize> = (0..nu).map(|i| u + i).collect();
            let per_clock = !matches!(hz.clock, Clock::Stagewise(_));
            if per_clock {
                vars.extend([y_interval_start + ny - 1, y_prev + ny - 1]);
            }
            nlp.add_objective(
                FesdBlock::ControlCost {
                    weight: hz.control_weight,
                    per_clock,
                },
                vars,
            )?;
        }
    }
    Ok((nlp, layout, x0))
}

/// Initial thresholds of the flight-cut rows per switching function (`None` = no rows):
/// the first [`FesdOptions::cut_schedule`] entry ([`CUT_OFF`] where it leaves a cut
/// inactive that a later entry sets), else `flight_cut` / `flight_cut_v`.
fn cut_thresholds(o: &FesdOptions) -> [Option<f64>; 2] {
    let Some(first) = o.cut_schedule.first() else {
        return [o.flight_cut, o.flight_cut_v];
    };
    let used = |f: fn(&CutStep) -> Option<f64>, fixed: Option<f64>| {
        (fixed.is_some() || o.cut_schedule.iter().any(|c| f(c).is_some()))
            .then(|| f(first).unwrap_or(CUT_OFF))
    };
    [
        used(|c| c.delta, o.flight_cut),
        used(|c| c.delta_v, o.flight_cut_v),
    ]
}

/// Largest single complementarity product (all cross pairs when `cross`).
pub fn comp_residual(layout: &Layout, x: &[f64], cross: bool) -> f64 {
    let mut r: f64 = 0.0;
    visit_comp_products(layout, x, cross, &mut |p| r = r.max(p.value));
    r
}

/// One complementarity product of the FESD NLP ([`comp_products`]).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct CompProduct {
    /// Element index over the horizon (`layout.elems`).
    pub element: usize,
    /// Control interval of the element.
    pub interval: usize,
    /// Stage whose α enters the product (0..n_s).
    pub stage: usize,
    /// Multiplier point (0 = the previous element's end point, 1..=n_s the stages).
    pub point: usize,
    /// Switching function i.
    pub switch: usize,
    /// `"alpha*lambda_n"` (α_i λⁿ_i), `"(1-alpha)*lambda_p"` ((1 − α_i) λᵖ_i) or, for
    /// Stewart's reformulation, `"theta*lambda"`.
    pub side: &'static str,
    /// |product|.
    pub value: f64,
}

/// Every complementarity product that [`comp_residual`] bounds (cross complementarity when
/// `cross`, stage-wise otherwise), with where it sits, so that a stalled homotopy can say
/// which elements and switching functions hold its residual.
pub fn comp_products(layout: &Layout, x: &[f64], cross: bool) -> Vec<CompProduct> {
    let mut out = vec![];
    visit_comp_products(layout, x, cross, &mut |p| out.push(p));
    out
}

/// Calls `visit` with every product of [`comp_products`] without collecting them (the
/// homotopy evaluates [`comp_residual`] after every NLP and every integrator step).
fn visit_comp_products(
    layout: &Layout,
    x: &[f64],
    cross: bool,
    visit: &mut dyn FnMut(CompProduct),
) {
    let (_, nc, _, ns) = layout.dims;
    for (element, e) in layout.elems.iter().enumerate() {
        for stage in 0..ns {
            for point in 0..e.lp.len() {
                for switch in 0..nc {
                    if !comp_pair(cross && switch < layout.n_cross, stage, point, ns) {
                        continue;
                    }
                    let at = |side, value: f64| CompProduct {
                        element,
                        interval: e.step,
                        stage,
                        point,
                        switch,
                        side,
                        value: value.abs(),
                    };
                    let a = x[e.alpha[stage] + switch];
                    if layout.dcs == Dcs::Stewart {
                        visit(at("theta*lambda", a * x[e.lp[point] + switch]));
                        continue;
                    }
                    visit(at("alpha*lambda_n", a * x[e.ln[point] + switch]));
                    visit(at(
                        "(1-alpha)*lambda_p",
                        (1.0 - a) * x[e.lp[point] + switch],
                    ));
                }
            }
        }
    }
}

/// One NLP of the homotopy.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct NlpLog {
    /// Relaxation σ.
    pub sigma: f64,
    /// Objective.
    pub objective: f64,
    /// Complementarity residual after the solve.
    pub comp_residual: f64,
    /// IPOPT iterations.
    pub iterations: usize,
    /// CPU seconds.
    pub cpu_seconds: f64,
    /// IPOPT status.
    pub status: IpoptStatus,
}

/// Scholtes relaxation homotopy: σ_i = σ₀ κ^i, each NLP warm-started from the previous one,
/// until the complementarity residual is ≤ comp_tol. A failed NLP after the first ends the
/// homotopy at the last converged point, or, with [`FesdOptions::homotopy_retries`], is
/// retried with a smaller step (see there). When the first NLP fails after the smoothing
/// phase, the error is [`OcpError::HomotopyStalled`] with the smoothed point (the last
/// converged one), not IPOPT's failed iterate; without a smoothing phase it is IPOPT's
/// error with that iterate.
pub fn homotopy<C: Cls>(
    nlp: &mut BlockNlp<FesdBlock<C>>,
    layout: &Layout,
    x0: Vec<f64>,
    o: &FesdOptions,
) -> Result<(IpoptSolution, Vec<NlpLog>), OcpError> {
    let mut log = vec![];
    let mut x = match &o.smoothing {
        Some(sm) if layout.smoothing => {
            crate::smoothing::run_phase(nlp, layout, x0, o, sm, true, &mut log)?
        }
        _ => x0,
    };
    // the smoothed point, kept for the error when the first NLP fails from it (the loop
    // below fixes the terminal entries of `x`)
    let smoothed = (o.smoothing.is_some() && layout.smoothing).then(|| x.clone());
    let mut warm: Option<IpoptSolution> = None;
    let mut sigma = o.sigma0;
    let mut polished = false;
    // σ of the last converged NLP, the current step factor and the retries left
    let (mut sigma_ok, mut step, mut retries) = (o.sigma0, o.kappa, o.homotopy_retries);
    for it in 0..o.n_homotopy.max(o.cut_schedule.len()).max(1) {
        if let Some(step) = o.cut_schedule.get(it) {
            sigma = step.sigma;
            let d = [step.delta, step.delta_v];
            for b in nlp.blocks.iter_mut() {
                if let FesdBlock::FlightCut { delta, comp } = &mut b.kind {
                    *delta = d.get(*comp).copied().flatten().unwrap_or(CUT_OFF);
                }
            }
        }
        if layout.elastic.is_none() {
            for r in &layout.comp_rows {
                for i in 0..layout.comp_row_len {
                    nlp.gu[r + i] = sigma;
                }
            }
        }
        let hard = layout.terminal.is_empty()
            || o.soft_terminal <= 0.0
            || sigma <= o.soft_terminal_sigma * (1.0 + 1e-12);
        for b in nlp.blocks.iter_mut() {
            match (b.row, &mut b.kind) {
                (None, FesdBlock::Comp { weight, .. })
                | (None, FesdBlock::StewartComp { weight, .. })
                | (None, FesdBlock::Elastic { weight }) => {
                    *weight = 1.0 / sigma;
                }
                (None, FesdBlock::Terminal { weight, .. }) => {
                    *weight = if hard { 0.0 } else { o.soft_terminal / sigma };
                }
                _ => {}
            }
        }
        if hard {
            for (i, v) in &layout.terminal {
                nlp.xl[*i] = *v;
                nlp.xu[*i] = *v;
                x[*i] = *v;
            }
        }
        let warm_mu = (it > 0 && o.warm_duals).then(|| (sigma * 0.1).clamp(1e-9, 0.1));
        let mut opts = relaxed_nlp_options(o, warm_mu);
        if o.mu_adaptive {
            opts.string.push(("mu_strategy".into(), "adaptive".into()));
        }
        if let (0, Some(mu)) = (it, o.first_mu) {
            for key in ["mu_init", "bound_push", "bound_frac"] {
                opts.num.push((key.into(), mu));
            }
        }
        let duals = if o.warm_duals { warm.as_ref() } else { None };
        let sol = match solve(nlp, &x, duals, &opts) {
            Ok(s) => s,
            Err(OcpError::Ipopt { solution, .. }) if warm.is_some() => {
                // a failed tightening keeps the last converged point
                if o.verbose {
                    eprintln!(
                        "σ = {sigma:.3e}: failed ({:?}) after {} iterations",
                        solution.status, solution.iterations
                    );
                }
                log.push(NlpLog {
                    sigma,
                    objective: solution.objective,
                    comp_residual: comp_residual(layout, &solution.x, o.fesd),
                    iterations: solution.iterations,
                    cpu_seconds: solution.cpu_seconds,
                    status: solution.status,
                });
                if retries > 0 && o.cut_schedule.len() <= it {
                    retries -= 1;
                    step = step.sqrt();
                    sigma = sigma_ok * step;
                    continue;
                }
                break;
            }
            Err(e) => {
                // the first NLP failed: after the smoothing phase its point is the last
                // converged one
                if let (OcpError::Ipopt { solution, .. }, Some(start)) = (&e, smoothed) {
                    let violation = crate::smoothing::max_violation(nlp, &start);
                    return Err(crate::smoothing::stalled_at_start(
                        layout, o, start, violation, solution, log,
                    ));
                }
                return Err(e);
            }
        };
        let comp = comp_residual(layout, &sol.x, o.fesd);
        if o.verbose {
            eprintln!(
                "σ = {sigma:.3e}: objective {:.6e}, complementarity {comp:.3e}, {} iterations, {:.2} s, {:?}",
                sol.objective, sol.iterations, sol.cpu_seconds, sol.status
            );
        }
        log.push(NlpLog {
            sigma,
            objective: sol.objective,
            comp_residual: comp,
            iterations: sol.iterations,
            cpu_seconds: sol.cpu_seconds,
            status: sol.status,
        });
        x = sol.x.clone();
        write_checkpoint(o, &x)?;
        let done = comp <= o.comp_tol;
        if !done && o.polish && comp <= o.polish_tol {
            if let Some((p, entry)) = polish(&mut *nlp, layout, &sol, o) {
                if entry.comp_residual <= o.comp_tol {
                    log.push(entry);
                    warm = Some(p);
                    polished = true;
                    break;
                }
            }
        }
        warm = Some(sol);
        if done {
            break;
        }
        sigma_ok = sigma;
        step = o.kappa;
        sigma *= step;
    }
    let mut sol = warm.ok_or_else(|| OcpError::InvalidInput("no NLP solved".into()))?;
    if o.polish && !polished {
        if let Some((p, entry)) = polish(&mut *nlp, layout, &sol, o) {
            log.push(entry);
            sol = p;
        }
    }
    let comp = comp_residual(layout, &sol.x, o.fesd);
    if comp > o.comp_tol && !o.accept_relaxed {
        return Err(OcpError::HomotopyStalled {
            comp_residual: comp,
            constraint_violation: sol.constraint_violation,
            x: sol.x,
            log,
        });
    }
    Ok((sol, log))
}

/// IPOPT options of the homotopy's NLPs, the smoothing phase and the polish: tolerance
/// `ipopt_tol` (also on the constraint violation), an acceptable stop at 1e3 × that after
/// 3 iterations, no bound relaxation; with `warm_mu` a warm start from the previous
/// multipliers with that initial barrier parameter and bound pushes of 1e-9.
pub(crate) fn relaxed_nlp_options(o: &FesdOptions, warm_mu: Option<f64>) -> IpoptOptions {
    let mut opts = IpoptOptions::quiet(o.ipopt_tol, o.max_iter);
    opts.num.push(("acceptable_tol".into(), 1e3 * o.ipopt_tol));
    opts.int.push(("acceptable_iter".into(), 3));
    opts.num.push(("bound_relax_factor".into(), 0.0));
    opts.num.push(("constr_viol_tol".into(), o.ipopt_tol));
    if let Some(mu) = warm_mu {
        opts.string
            .push(("warm_start_init_point".into(), "yes".into()));
        opts.num.push(("mu_init".into(), mu));
        opts.num.push(("warm_start_bound_push".into(), 1e-9));
        opts.num.push(("warm_start_mult_bound_push".into(), 1e-9));
    }
    opts
}

/// Threshold below which α (or 1 − α) counts as at its bound in [`polish`].
const POLISH_ALPHA: f64 = 1e-3;
/// Largest multiplier value that [`polish`] may fix to zero.
const POLISH_LAMBDA: f64 = 1e-4;
/// Largest constraint violation of an accepted [`polish`] point.
const POLISH_MAX_VIOLATION: f64 = 1e-8;

/// MPCC active-set polishing (a standard end game for relaxation methods, cf. Scholtes
/// 2001 §4 and the "polishing" step of MPCC solvers): from the last relaxed solution every
/// α component is classified per stage as 0 (then λᵖ = 0 on all stage points it is crossed
/// with), 1 (then λⁿ = 0) or interior (sliding: λᵖ = λⁿ = 0); the fixed variables turn all
/// complementarity products into identities and the resulting smooth NLP is solved by
/// IPOPT warm-started from the relaxed point. The pairs that the fixed mode makes
/// irrelevant (α₂, α₃ where α₁ = 1, α₃ where α₂ = 1) stay free and are projected onto exact
/// complementarity afterwards ([`solve_on_active_set`] with `free_idle`): fixing the side of,
/// e.g., nᵀv in flight from a relaxed point over-constrains the smooth NLP (on the hopper,
/// x = 3 without holes, every polish with those pairs fixed failed down to σ = 2e-8; with
/// them free it converged at σ = 2e-9). Returns `None` (keep the relaxed
/// solution) when the classification would fix a multiplier larger than a small threshold,
/// when IPOPT fails, or when the polished point is not better.
pub fn polish<C: Cls>(
    nlp: &mut BlockNlp<FesdBlock<C>>,
    layout: &Layout,
    sol: &IpoptSolution,
    o: &FesdOptions,
) -> Option<(IpoptSolution, NlpLog)> {
    let capped = FesdOptions {
        max_iter: o.max_iter.min(POLISH_MAX_ITER),
        ..o.clone()
    };
    solve_on_active_set(nlp, layout, sol, &capped, POLISH_MU_INIT, true)
}

/// IPOPT's initial barrier parameter of [`polish`]: the start point is (nearly) feasible.
const POLISH_MU_INIT: f64 = 1e-9;

/// Most IPOPT iterations of one [`polish`]: on the right active set the start point is
/// nearly optimal; a wrong one runs into the iteration limit (on the hopper end game 3000
/// iterations, about four minutes, for every failed polish), so the homotopy goes on sooner.
const POLISH_MAX_ITER: i32 = 500;

/// [`polish`] with the initial barrier parameter `mu_init`: the smooth NLP on the active
/// set of `sol` (every complementarity product fixed to an identity), warm-started from
/// `sol`. A start point far from feasibility (another terminal set than the one `sol` solved,
/// [`crate::continuation`]) needs a larger `mu_init` than the polish's 1e-9.
///
/// With `free_idle`, the pairs of switching functions that the fixed mode makes irrelevant
/// are not fixed: in the step representation θ₁ = α₁ + (1−α₁)α₂, θ₂ = (1−α₁)(1−α₂)α₃,
/// θ₃ = (1−α₁)(1−α₂)(1−α₃), so α₁ = 1 makes θ independent of α₂, α₃ and α₂ = 1 of α₃.
/// The sign of such a c_i (e.g. nᵀv and bᵀv in flight) may then change while the
/// trajectory deforms; after the solve every freed pair is projected onto its exact
/// complementarity (λᵖ = max(c, 0), λⁿ = max(−c, 0), α = 1 or 0 by the sign of c), which
/// leaves θ and every constraint unchanged. Only pairs without cross complementarity are
/// freed, and only for the Scholtes rows of the step representation.
pub fn solve_on_active_set<C: Cls>(
    nlp: &mut BlockNlp<FesdBlock<C>>,
    layout: &Layout,
    sol: &IpoptSolution,
    o: &FesdOptions,
    mu_init: f64,
    free_idle: bool,
) -> Option<(IpoptSolution, NlpLog)> {
    let saved = (nlp.xl.clone(), nlp.xu.clone(), nlp.gu.clone());
    let out = polish_inner(nlp, layout, sol, o, mu_init, free_idle);
    nlp.xl = saved.0;
    nlp.xu = saved.1;
    nlp.gu = saved.2;
    out
}

/// A complementarity pair left free by [`solve_on_active_set`]: indices of α_i, λᵖ_i, λⁿ_i.
struct IdlePair {
    alpha: usize,
    lp: usize,
    ln: usize,
}

/// Frees the pairs that the fixed α of a stage point make irrelevant (see
/// [`solve_on_active_set`]) and lifts the Scholtes rows they sit in; `orig` are the bounds
/// before the active set was fixed.
fn free_idle_pairs<C: Cls>(
    p: &mut BlockNlp<FesdBlock<C>>,
    layout: &Layout,
    o: &FesdOptions,
    orig: &(Vec<f64>, Vec<f64>),
) -> Vec<IdlePair> {
    let (_, nc, _, ns) = layout.dims;
    let plain_rows = layout.dcs == Dcs::Step
        && layout.elastic.is_none()
        && !o.penalty
        && layout.comp_row_len == nc
        && layout.comp_rows.len() == layout.elems.len();
    if !plain_rows {
        return vec![];
    }
    let first_free = if o.fesd { layout.n_cross.max(1) } else { 1 };
    let mut pairs = vec![];
    for (ie, e) in layout.elems.iter().enumerate() {
        for jp in 0..ns {
            for i in first_free..nc {
                let masked = (0..i).any(|k| {
                    let a = e.alpha[jp] + k;
                    p.xl[a] == 1.0 && p.xu[a] == 1.0
                });
                if !masked {
                    continue;
                }
                let pair = IdlePair {
                    alpha: e.alpha[jp] + i,
                    lp: e.lp[jp + 1] + i,
                    ln: e.ln[jp + 1] + i,
                };
                for v in [pair.alpha, pair.lp, pair.ln] {
                    p.xl[v] = orig.0[v];
                    p.xu[v] = orig.1[v];
                }
                p.gu[layout.comp_rows[ie] + i] = 1e20;
                pairs.push(pair);
            }
        }
    }
    pairs
}

/// Projects the freed pairs of [`free_idle_pairs`] onto exact complementarity.
fn project_idle_pairs(x: &mut [f64], pairs: &[IdlePair]) {
    for pair in pairs {
        let c = x[pair.lp] - x[pair.ln];
        x[pair.lp] = c.max(0.0);
        x[pair.ln] = (-c).max(0.0);
        if c > 0.0 {
            x[pair.alpha] = 1.0;
        } else if c < 0.0 {
            x[pair.alpha] = 0.0;
        }
    }
}

fn polish_inner<C: Cls>(
    p: &mut BlockNlp<FesdBlock<C>>,
    layout: &Layout,
    sol: &IpoptSolution,
    o: &FesdOptions,
    mu_init: f64,
    free_idle: bool,
) -> Option<(IpoptSolution, NlpLog)> {
    let (_, nc, _, ns) = layout.dims;
    let x = &sol.x;
    let orig = (p.xl.clone(), p.xu.clone());
    // thresholds grow with the residual of the relaxed point (√comp: both factors of a
    // product ≤ comp can be that large)
    let root = comp_residual(layout, x, o.fesd).sqrt();
    let tol_l = POLISH_LAMBDA.max(10.0 * root);
    let tol_a = POLISH_ALPHA.max(10.0 * root).min(0.25);
    let fix = |idx: usize, val: f64, p: &mut BlockNlp<FesdBlock<C>>| -> bool {
        if (x[idx] - val).abs() > tol_l {
            return false;
        }
        p.xl[idx] = val;
        p.xu[idx] = val;
        true
    };
    for e in &layout.elems {
        for jp in 0..ns {
            for i in 0..nc {
                let ai = e.alpha[jp] + i;
                let a = x[ai];
                let js: Vec<usize> = (0..e.lp.len())
                    .filter(|&j| comp_pair(o.fesd && i < layout.n_cross, jp, j, ns))
                    .collect();
                let lp_max = js.iter().map(|&j| x[e.lp[j] + i]).fold(0.0, f64::max);
                if layout.dcs == Dcs::Stewart {
                    // θ_r ⊥ λ_r: a positive λ anywhere or a vanishing θ_r fixes θ_r = 0,
                    // otherwise λ_r = 0
                    if lp_max > tol_l || a <= tol_a {
                        p.xl[ai] = 0.0;
                        p.xu[ai] = 0.0;
                    } else {
                        for &j in &js {
                            if !fix(e.lp[j] + i, 0.0, p) {
                                if o.verbose {
                                    eprintln!("polish: λ above the threshold {tol_l:.1e}");
                                }
                                return None;
                            }
                        }
                    }
                    continue;
                }
                let ln_max = js.iter().map(|&j| x[e.ln[j] + i]).fold(0.0, f64::max);
                // 0: α = 0 (λᵖ = 0), 1: α = 1 (λⁿ = 0), 2: interior (both λ = 0)
                let side = if lp_max.max(ln_max) > tol_l {
                    usize::from(lp_max > ln_max)
                } else if a <= tol_a {
                    0
                } else if a >= 1.0 - tol_a {
                    1
                } else {
                    2
                };
                let mut ok = true;
                if side == 0 {
                    p.xl[ai] = 0.0;
                    p.xu[ai] = 0.0;
                    for &j in &js {
                        ok &= fix(e.lp[j] + i, 0.0, p);
                    }
                } else if side == 1 {
                    p.xl[ai] = 1.0;
                    p.xu[ai] = 1.0;
                    for &j in &js {
                        ok &= fix(e.ln[j] + i, 0.0, p);
                    }
                } else {
                    for &j in &js {
                        ok &= fix(e.lp[j] + i, 0.0, p);
                        ok &= fix(e.ln[j] + i, 0.0, p);
                    }
                }
                if !ok {
                    return None;
                }
            }
        }
    }
    let idle = if free_idle {
        free_idle_pairs(p, layout, o, &orig)
    } else {
        vec![]
    };
    // the fixed bounds must hold at the start point for IPOPT's fixed-variable treatment
    let x0: Vec<f64> = x
        .iter()
        .zip(p.xl.iter().zip(&p.xu))
        .map(|(v, (l, u))| v.clamp(*l, *u))
        .collect();
    let mut opts = relaxed_nlp_options(o, None);
    // an "acceptable" stop may leave up to 1e-2 of violation (IPOPT's default), which the
    // check below (1e-8) rejects: the point must meet the exact tolerance
    opts.num.push((
        "acceptable_constr_viol_tol".into(),
        POLISH_MAX_VIOLATION.min(o.ipopt_tol),
    ));
    opts.num.push(("mu_init".into(), mu_init));
    opts.string
        .push(("warm_start_init_point".into(), "yes".into()));
    opts.num.push(("warm_start_bound_push".into(), mu_init));
    opts.num
        .push(("warm_start_mult_bound_push".into(), mu_init));
    let out = solve(&*p, &x0, Some(sol), &opts);
    if o.verbose {
        if let Err(e) = &out {
            eprintln!("polish: IPOPT failed: {e}");
        }
    }
    let mut out = out.ok()?;
    project_idle_pairs(&mut out.x, &idle);
    let comp = comp_residual(layout, &out.x, o.fesd);
    let before = comp_residual(layout, x, o.fesd);
    if out.constraint_violation > POLISH_MAX_VIOLATION || comp > before.max(1e-14) {
        if o.verbose {
            eprintln!(
                "polish rejected: violation {:.1e}, complementarity {comp:.1e} (before {before:.1e})",
                out.constraint_violation
            );
        }
        return None;
    }
    let entry = NlpLog {
        sigma: 0.0,
        objective: out.objective,
        comp_residual: comp,
        iterations: out.iterations,
        cpu_seconds: out.cpu_seconds,
        status: out.status,
    };
    Some((out, entry))
}

/// Fixed-point sweeps of the collocation equations in the initial guess of
/// [`solve_fixed_mode`].
const PREDICT_SWEEPS: usize = 8;
/// Tolerance on the predicted switching functions' sign in [`solve_fixed_mode`].
const PREDICT_TOL: f64 = 1e-9;

/// Threshold of α at its bound when a solved step's last-stage mode is read off.
const MODE_ALPHA: f64 = 1e-7;

/// Side of one step-function component α_i of a fixed mode ([`solve_fixed_mode`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// α_i = 0 and λᵖ_i = 0 (c_i ≤ 0).
    Zero,
    /// α_i = 1 and λⁿ_i = 0 (c_i ≥ 0).
    One,
    /// α_i free, λᵖ_i = λⁿ_i = 0 (sliding on c_i = 0).
    Interior,
}

/// Solves a FESD NLP with the mode `mode` (one [`Mode`] per switching function) fixed on
/// every stage point of every element: the multipliers and α on the fixed sides are fixed by
/// their bounds, which makes every complementarity product vanish identically, and the
/// remaining smooth NLP (collocation, algebraic equations, λ ≥ 0) is solved by IPOPT from
/// `x0`. The bounds λ ≥ 0 keep each switching function on its side, so a step that contains
/// a switch is infeasible for the fixed mode and returns an error with the failed attempt's
/// log entry (as does any IPOPT failure or a residual above `comp_tol`; `Err(None)` for a
/// mode of the wrong length); the caller then runs the homotopy. This is an active-set
/// prediction for the integrator: the accepted point is a solution of the FESD equations
/// with exact complementarity.
pub fn solve_fixed_mode<C: Cls>(
    tf: &TimeFreezing<C>,
    nlp: &mut BlockNlp<FesdBlock<C>>,
    layout: &Layout,
    x0: &[f64],
    mode: &[Mode],
    o: &FesdOptions,
) -> Result<(IpoptSolution, NlpLog), Option<NlpLog>> {
    let (ny, nc, nu, ns) = layout.dims;
    if mode.len() != nc || layout.dcs == Dcs::Stewart {
        return Err(None);
    }
    let mut x = x0.to_vec();
    // initial guess: the collocation equations with the nominal element lengths solved by
    // fixed-point iteration in the fixed mode; a predicted sign change of a switching
    // function means the step has a switch (skip to the homotopy)
    let tab = Tableau::new(o.scheme, ns).map_err(|_| None)?;
    for e in &layout.elems {
        for j in 0..ns {
            for (i, m) in mode.iter().enumerate() {
                match m {
                    Mode::Zero => x[e.alpha[j] + i] = 0.0,
                    Mode::One => x[e.alpha[j] + i] = 1.0,
                    Mode::Interior => {}
                }
            }
        }
    }
    for e in &layout.elems {
        let (h, s) = (x[e.h], x[layout.s[e.step]]);
        let u = x[layout.u[e.step]..layout.u[e.step] + nu].to_vec();
        let yn = x[e.y_start..e.y_start + ny].to_vec();
        let alphas: Vec<Vec<f64>> = (0..ns)
            .map(|j| x[e.alpha[j]..e.alpha[j] + nc].to_vec())
            .collect();
        let mut ys = picard_element(tf, &tab.a, &yn, &alphas, h * s, &u);
        if !tab.stiffly_accurate {
            ys.push(end_state(tf, &tab.b, &yn, &ys, &alphas, h * s, &u));
        }
        for (j, yj) in ys.iter().enumerate() {
            if yj.iter().any(|v| !v.is_finite()) {
                return Err(None);
            }
            let yi = if j < ns { e.y[j] } else { e.y_end };
            x[yi..yi + ny].copy_from_slice(yj);
            let c = tf.switching(yj);
            for (i, m) in mode.iter().enumerate() {
                let wrong = match m {
                    Mode::Zero => c[i] > PREDICT_TOL,
                    Mode::One => c[i] < -PREDICT_TOL,
                    Mode::Interior => false,
                };
                if wrong {
                    return Err(None);
                }
                x[e.lp[j + 1] + i] = c[i].max(0.0);
                x[e.ln[j + 1] + i] = (-c[i]).max(0.0);
            }
        }
    }
    let saved = (nlp.xl.clone(), nlp.xu.clone());
    let mut fix = |idx: usize, val: f64, x: &mut Vec<f64>| {
        nlp.xl[idx] = val;
        nlp.xu[idx] = val;
        x[idx] = val;
    };
    for e in &layout.elems {
        for j in 0..e.lp.len() - 1 {
            for (i, m) in mode.iter().enumerate() {
                let (lp, ln) = (e.lp[j + 1] + i, e.ln[j + 1] + i);
                let ai = (j < ns).then(|| e.alpha[j] + i);
                match m {
                    Mode::Zero => {
                        if let Some(ai) = ai {
                            fix(ai, 0.0, &mut x);
                        }
                        fix(lp, 0.0, &mut x);
                    }
                    Mode::One => {
                        if let Some(ai) = ai {
                            fix(ai, 1.0, &mut x);
                        }
                        fix(ln, 0.0, &mut x);
                    }
                    Mode::Interior => {
                        fix(lp, 0.0, &mut x);
                        fix(ln, 0.0, &mut x);
                    }
                }
            }
        }
    }
    let mut opts = IpoptOptions::quiet(o.ipopt_tol, o.max_iter.min(20));
    opts.num.push(("bound_relax_factor".into(), 0.0));
    opts.num.push(("constr_viol_tol".into(), o.ipopt_tol));
    opts.num.push(("mu_init".into(), 1e-6));
    let out = solve(&*nlp, &x, None, &opts);
    nlp.xl = saved.0;
    nlp.xu = saved.1;
    let out = match out {
        Ok(s) => s,
        Err(OcpError::Ipopt { solution, .. }) => {
            return Err(Some(NlpLog {
                sigma: 0.0,
                objective: solution.objective,
                comp_residual: comp_residual(layout, &solution.x, o.fesd),
                iterations: solution.iterations,
                cpu_seconds: solution.cpu_seconds,
                status: solution.status,
            }))
        }
        Err(_) => return Err(None),
    };
    let comp = comp_residual(layout, &out.x, o.fesd);
    let entry = NlpLog {
        sigma: 0.0,
        objective: out.objective,
        comp_residual: comp,
        iterations: out.iterations,
        cpu_seconds: out.cpu_seconds,
        status: out.status,
    };
    if comp > o.comp_tol || out.constraint_violation > 1e-8 {
        return Err(Some(entry));
    }
    Ok((out, entry))
}

/// Stage states of one Radau IIA element of length `hs` (h times the speed of time) from
/// `yn` with fixed step-function values `alphas` per stage, by [`PREDICT_SWEEPS`] fixed-point
/// sweeps of the collocation equations (the initial guess of [`solve_fixed_mode`]).
fn picard_element<C: Cls>(
    tf: &TimeFreezing<C>,
    a: &[Vec<f64>],
    yn: &[f64],
    alphas: &[Vec<f64>],
    hs: f64,
    u: &[f64],
) -> Vec<Vec<f64>> {
    let ns = a.len();
    let mut ys: Vec<Vec<f64>> = vec![yn.to_vec(); ns];
    for _ in 0..PREDICT_SWEEPS {
        let f: Vec<Vec<f64>> = (0..ns).map(|l| tf.rhs(&ys[l], &alphas[l], u)).collect();
        for (j, yj) in ys.iter_mut().enumerate() {
            for (i, v) in yj.iter_mut().enumerate() {
                *v = yn[i] + hs * (0..ns).map(|l| a[j][l] * f[l][i]).sum::<f64>();
            }
        }
    }
    ys
}

/// End state y_n + h s Σ bᵢ F(Yᵢ) of a non-stiffly-accurate element from its stages.
fn end_state<C: Cls>(
    tf: &TimeFreezing<C>,
    b: &[f64],
    yn: &[f64],
    ys: &[Vec<f64>],
    alphas: &[Vec<f64>],
    hs: f64,
    u: &[f64],
) -> Vec<f64> {
    let f: Vec<Vec<f64>> = (0..b.len())
        .map(|l| tf.rhs(&ys[l], &alphas[l], u))
        .collect();
    (0..yn.len())
        .map(|i| yn[i] + hs * (0..b.len()).map(|l| b[l] * f[l][i]).sum::<f64>())
        .collect()
}

/// Number of consecutive integrator steps (at most `max_steps`) over which the fixed-mode
/// prediction ([`picard_element`] on the nominal elements) keeps every switching function
/// on the side of `mode` (interior components take `alpha`, else ½).
#[allow(clippy::too_many_arguments)]
fn predicted_run<C: Cls>(
    tf: &TimeFreezing<C>,
    y0: &[f64],
    mode: &[Mode],
    alpha: Option<&[f64]>,
    step_len: f64,
    max_steps: usize,
    controls: &dyn Fn(usize) -> Vec<f64>,
    o: &FesdOptions,
) -> usize {
    let Ok(tab) = Tableau::new(o.scheme, o.n_s) else {
        return 0;
    };
    let al: Vec<f64> = mode
        .iter()
        .enumerate()
        .map(|(i, m)| match m {
            Mode::Zero => 0.0,
            Mode::One => 1.0,
            Mode::Interior => alpha.and_then(|a| a.get(i).copied()).unwrap_or(0.5),
        })
        .collect();
    let alphas = vec![al; o.n_s];
    let h = step_len / o.n_fe.max(1) as f64;
    let mut y = y0.to_vec();
    for k in 0..max_steps {
        let u = controls(k);
        for _ in 0..o.n_fe {
            let mut ys = picard_element(tf, &tab.a, &y, &alphas, h, &u);
            if !tab.stiffly_accurate {
                ys.push(end_state(tf, &tab.b, &y, &ys, &alphas, h, &u));
            }
            for yj in &ys {
                if yj.iter().any(|v| !v.is_finite()) {
                    return k;
                }
                let c = tf.switching(yj);
                let wrong = mode.iter().zip(&c).any(|(m, c)| match m {
                    Mode::Zero => *c > PREDICT_TOL,
                    Mode::One => *c < -PREDICT_TOL,
                    Mode::Interior => false,
                });
                if wrong {
                    return k;
                }
            }
            if let Some(last) = ys.last() {
                y = last.clone();
            }
        }
    }
    max_steps
}

/// The mode of the smooth motion leaving `y0` under the controls `u`, for the first step
/// of the integrator's active-set prediction: α_i = 1 where c_i(y0) > 0, 0 where c_i(y0) < 0;
/// a switching function that vanishes at y0 takes the sign it has after a short explicit
/// step of the provisional mode. `None` when that sign is still undetermined (e.g. at rest
/// on the ground: the homotopy decides).
pub fn initial_mode<C: Cls>(tf: &TimeFreezing<C>, y0: &[f64], u: &[f64]) -> Option<Vec<Mode>> {
    let c = tf.switching(y0);
    let alpha: Vec<f64> = c
        .iter()
        .map(|c| if *c >= 0.0 { 1.0 } else { 0.0 })
        .collect();
    let f = tf.rhs(y0, &alpha, u);
    let eps = 1e-6;
    let y1: Vec<f64> = y0.iter().zip(&f).map(|(y, f)| y + eps * f).collect();
    let c1 = tf.switching(&y1);
    c.iter()
        .zip(&c1)
        .map(|(c, c1)| {
            let v = if c.abs() > PREDICT_TOL { *c } else { *c1 };
            if v.abs() <= PREDICT_TOL * eps {
                None
            } else if v > 0.0 {
                Some(Mode::One)
            } else {
                Some(Mode::Zero)
            }
        })
        .collect()
}

/// A discrete trajectory: numerical times and states at element starts and stage points.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trajectory {
    /// Numerical time τ.
    pub tau: Vec<f64>,
    /// States y = (q, v, t).
    pub y: Vec<Vec<f64>>,
    /// Filippov weight θ₁ at stage points (NaN at the initial point).
    pub theta1: Vec<f64>,
}

/// θ₁ of one stage's switching variables (α or Stewart's θ).
fn theta1<C: Cls>(tf: &TimeFreezing<C>, layout: &Layout, w: &[f64]) -> f64 {
    if layout.dcs == Dcs::Stewart {
        tf.stewart_fields(w)[0]
    } else {
        tf.theta(w)[0]
    }
}

/// Extracts the stage-point trajectory of a solved horizon starting at τ₀.
pub fn trajectory<C: Cls>(
    tf: &TimeFreezing<C>,
    layout: &Layout,
    x: &[f64],
    tau0: f64,
) -> Trajectory {
    let (ny, nc, _, ns) = layout.dims;
    let mut tr = Trajectory::default();
    tr.tau.push(tau0);
    tr.y.push(x[layout.y0..layout.y0 + ny].to_vec());
    tr.theta1.push(f64::NAN);
    let mut tau = tau0;
    for e in &layout.elems {
        let h = x[e.h];
        for j in 0..ns {
            tr.tau.push(tau + layout.c[j] * h);
            tr.y.push(x[e.y[j]..e.y[j] + ny].to_vec());
            tr.theta1
                .push(theta1(tf, layout, &x[e.alpha[j]..e.alpha[j] + nc]));
        }
        if e.y_end != e.y[ns - 1] {
            // Gauss–Legendre: the end point, with the last stage's θ₁
            tr.tau.push(tau + h);
            tr.y.push(x[e.y_end..e.y_end + ny].to_vec());
            tr.theta1.push(theta1(
                tf,
                layout,
                &x[e.alpha[ns - 1]..e.alpha[ns - 1] + nc],
            ));
        }
        tau += h;
    }
    tr
}

/// Result of a FESD simulation.
#[derive(Debug, Clone)]
pub struct SimResult {
    /// Stage-point trajectory.
    pub traj: Trajectory,
    /// Element boundaries (numerical times) in order.
    pub boundaries: Vec<f64>,
    /// Total IPOPT iterations.
    pub nlp_iterations: usize,
    /// Number of NLPs solved.
    pub nlp_count: usize,
    /// CPU seconds of the whole simulation.
    pub cpu_seconds: f64,
    /// Largest complementarity residual over the steps.
    pub comp_residual: f64,
}

/// Integrates the time-freezing system with fixed controls `controls(k)` on `n_steps` steps
/// of numerical length `step_len`, one homotopy per step (FESD as an integrator). The
/// system's path constraints ([`Cls::path`]) are not imposed.
pub fn simulate<C: Cls>(
    tf: &Arc<TimeFreezing<C>>,
    y0: &[f64],
    step_len: f64,
    n_steps: usize,
    controls: &dyn Fn(usize) -> Vec<f64>,
    o: &FesdOptions,
) -> Result<SimResult, OcpError> {
    let start = thread_cpu_seconds();
    let ny = tf.ny();
    let mut y = y0.to_vec();
    let mut lam: Option<(Vec<f64>, Vec<f64>)> = None;
    let mut alpha_prev: Option<Vec<f64>> = None;
    let mut mode_prev: Option<Vec<Mode>> = None;
    let mut out = SimResult {
        traj: Trajectory::default(),
        boundaries: vec![0.0],
        nlp_iterations: 0,
        nlp_count: 0,
        cpu_seconds: 0.0,
        comp_residual: 0.0,
    };
    let mut k = 0;
    let mut chunk_failed = false;
    while k < n_steps {
        let u = controls(k);
        let u_k = u.clone();
        if k == 0 {
            mode_prev = initial_mode(tf, &y, &u_k);
        }
        // a run of steps that the fixed-mode prediction keeps in the current mode is solved
        // as one NLP
        let mode_predict = o.mode_predict && o.dcs == Dcs::Step;
        let m = match (&mode_prev, mode_predict && !chunk_failed) {
            (Some(mode), true) => predicted_run(
                tf,
                &y,
                mode,
                alpha_prev.as_deref(),
                step_len,
                n_steps - k,
                &|i| controls(k + i),
                o,
            )
            .max(1),
            _ => 1,
        };
        chunk_failed = false;
        let hz = Horizon {
            y0: y.clone(),
            lam0: lam.clone(),
            n_steps: m,
            step_len,
            u_bounds: (k..k + m)
                .map(|i| {
                    let u = controls(i);
                    (u.clone(), u)
                })
                .collect(),
            s_bounds: (1.0, 1.0),
            clock: Clock::Free,
            global_speed: false,
            terminal: vec![],
            y_bounds: None,
            control_weight: 0.0,
        };
        let (mut nlp, layout, mut x0) = build_nlp(tf, &hz, o, false)?;
        // warm start of the mode: every α from the previous step's last stage
        if let Some(a) = &alpha_prev {
            for e in &layout.elems {
                for &j in &e.alpha {
                    x0[j..j + a.len()].copy_from_slice(a);
                }
            }
        }
        // state guess: explicit Euler prediction y0 + τ F(y0, α, u) at every stage point,
        // with the multipliers λᵖ = max(c, 0), λⁿ = max(−c, 0) of the predicted state
        if o.predict && o.dcs == Dcs::Step {
            let nc = layout.dims.1;
            let mut tau = 0.0;
            for e in &layout.elems {
                let h = x0[e.h];
                for j in 0..layout.dims.3 {
                    let al = x0[e.alpha[j]..e.alpha[j] + nc].to_vec();
                    let f = tf.rhs(&y, &al, &u_k);
                    let yj: Vec<f64> = (0..ny)
                        .map(|i| y[i] + (tau + layout.c[j] * h) * f[i])
                        .collect();
                    let c = tf.switching(&yj);
                    x0[e.y[j]..e.y[j] + ny].copy_from_slice(&yj);
                    for i in 0..nc {
                        x0[e.lp[j + 1] + i] = c[i].max(0.0);
                        x0[e.ln[j + 1] + i] = (-c[i]).max(0.0);
                    }
                }
                tau += h;
            }
        }
        let fixed = match &mode_prev {
            Some(m) if mode_predict => solve_fixed_mode(tf, &mut nlp, &layout, &x0, m, o),
            _ => Err(None),
        };
        if o.verbose {
            match &fixed {
                Ok((_, e)) => eprintln!(
                    "steps {k}..{}: fixed mode, {} iterations, {:.4} s",
                    k + m,
                    e.iterations,
                    e.cpu_seconds
                ),
                Err(Some(e)) => eprintln!(
                    "step {k}: fixed mode rejected ({:?}, complementarity {:.1e}, {} iterations)",
                    e.status, e.comp_residual, e.iterations
                ),
                Err(None) => eprintln!("step {k}: homotopy"),
            }
        }
        let (sol, log) = match fixed {
            Ok((sol, entry)) => (sol, vec![entry]),
            Err(failed) if m > 1 => {
                // retry the first step alone
                if let Some(f) = failed {
                    out.nlp_iterations += f.iterations;
                    out.nlp_count += 1;
                }
                chunk_failed = true;
                continue;
            }
            Err(failed) => {
                let (sol, mut log) = homotopy(&mut nlp, &layout, x0, o)?;
                if let Some(f) = failed {
                    log.insert(0, f);
                }
                (sol, log)
            }
        };
        out.nlp_iterations += log.iter().map(|l| l.iterations).sum::<usize>();
        out.nlp_count += log.len();
        out.comp_residual = out
            .comp_residual
            .max(comp_residual(&layout, &sol.x, o.fesd));
        let tr = trajectory(tf, &layout, &sol.x, k as f64 * step_len);
        let skip = usize::from(k > 0);
        out.traj.tau.extend_from_slice(&tr.tau[skip..]);
        out.traj.y.extend(tr.y[skip..].iter().cloned());
        out.traj.theta1.extend_from_slice(&tr.theta1[skip..]);
        let mut tau = k as f64 * step_len;
        for e in &layout.elems {
            tau += sol.x[e.h];
            out.boundaries.push(tau);
        }
        let last = layout
            .elems
            .last()
            .ok_or_else(|| OcpError::InvalidInput("empty step".into()))?;
        y = sol.x[last.y_end..last.y_end + ny].to_vec();
        let a_last = last.alpha[layout.dims.3 - 1];
        mode_prev = Some(
            sol.x[a_last..a_last + layout.dims.1]
                .iter()
                .map(|&a| {
                    if a <= MODE_ALPHA {
                        Mode::Zero
                    } else if a >= 1.0 - MODE_ALPHA {
                        Mode::One
                    } else {
                        Mode::Interior
                    }
                })
                .collect(),
        );
        alpha_prev = Some(
            sol.x[a_last..a_last + layout.dims.1]
                .iter()
                .map(|a| a.clamp(0.01, 0.99))
                .collect(),
        );
        // boundary multipliers from c(y) exactly (λᵖ = max(c, 0), λⁿ = max(−c, 0)): the
        // relaxed values would carry the previous step's residual into this step
        lam = None;
        k += m;
    }
    out.cpu_seconds = thread_cpu_seconds() - start;
    Ok(out)
}

/// Solution of a time-freezing OCP.
#[derive(Debug, Clone)]
pub struct OcpSolution {
    /// Stage-point trajectory in numerical time (the clock is y's last entry).
    pub traj: Trajectory,
    /// Controls per control interval.
    pub u: Vec<Vec<f64>>,
    /// Speed of time per control interval.
    pub s: Vec<f64>,
    /// Physical time t_k at the control-interval boundaries k = 0..N (k T/N under
    /// [`Clock::Stagewise`]).
    pub interval_clock: Vec<f64>,
    /// Control cost (without the step-equilibration penalty): Σ_k w ‖u_k‖², times
    /// t_{k+1} − t_k unless the clock is stagewise ([`Horizon::control_weight`]).
    pub objective: f64,
    /// Largest cross-complementarity product.
    pub comp_residual: f64,
    /// Max |y_i(T̃) − target_i| over the terminal components.
    pub terminal_error: f64,
    /// Homotopy log.
    pub log: Vec<NlpLog>,
    /// Total IPOPT iterations.
    pub nlp_iterations: usize,
    /// CPU seconds (build + homotopy).
    pub cpu_seconds: f64,
    /// The NLP's primal point (layout of [`build`]), e.g. a warm start for
    /// [`solve_built`] on a neighbouring horizon.
    pub x: Vec<f64>,
}

/// Solves the OCP (seed 002 eq. 35) of horizon `hz` (speed of time, stage clock constraints,
/// terminal constraint, control cost) from the trivial initialization y0 everywhere, u = 0.
///
/// With [`Scheme::GaussLegendre`] and the ℓ1 penalty ([`FesdOptions::penalty`]) the
/// homotopy first runs the Scholtes relaxation (`penalty = false`, otherwise the same
/// options) and falls back to the penalty homotopy only when that fails: from the trivial
/// initialization the first penalty NLP of the particle OCP (Ex. 5) ends in a local
/// minimum that brakes the fall with the auxiliary field in the air (one frozen element at
/// f_c = 0.2152 with α₁ = 0, for every σ₀ measured), which no larger ρ leaves; the Scholtes
/// homotopy reaches the exact solution (docs/decisions/002-time-freezing.md, "Gauss–Legendre
/// runs Scholtes first").
pub fn solve_ocp<C: Cls>(
    tf: &Arc<TimeFreezing<C>>,
    hz: &Horizon,
    o: &FesdOptions,
) -> Result<OcpSolution, OcpError> {
    let start = thread_cpu_seconds();
    if o.scheme == Scheme::GaussLegendre && o.penalty {
        let scholtes = FesdOptions {
            penalty: false,
            ..o.clone()
        };
        if let Ok(mut out) = solve_ocp_once(tf, hz, &scholtes) {
            out.cpu_seconds = thread_cpu_seconds() - start;
            return Ok(out);
        }
    }
    let mut out = solve_ocp_once(tf, hz, o)?;
    out.cpu_seconds = thread_cpu_seconds() - start;
    Ok(out)
}

/// One homotopy of [`solve_ocp`] with the options as given.
fn solve_ocp_once<C: Cls>(
    tf: &Arc<TimeFreezing<C>>,
    hz: &Horizon,
    o: &FesdOptions,
) -> Result<OcpSolution, OcpError> {
    let (nlp, layout, x0) = build(tf, hz, o)?;
    solve_built(tf, hz, o, nlp, &layout, x0)
}

/// Runs the [`homotopy`] on an NLP made by [`build`] for `hz` (possibly with a changed
/// initial guess `x0` or bounds, e.g. a warm start) and reads the solution with its log
/// and IPOPT iteration count (`cpu_seconds` is left to the caller).
pub fn solve_built<C: Cls>(
    tf: &Arc<TimeFreezing<C>>,
    hz: &Horizon,
    o: &FesdOptions,
    mut nlp: BlockNlp<FesdBlock<C>>,
    layout: &Layout,
    x0: Vec<f64>,
) -> Result<OcpSolution, OcpError> {
    let (sol, log) = homotopy(&mut nlp, layout, x0, o)?;
    let mut out = extract_ocp(tf, hz, layout, &sol.x, o)?;
    out.nlp_iterations = log.iter().map(|l| l.iterations).sum();
    out.log = log;
    Ok(out)
}

/// Runs the MPCC homotopy of `o` (σ₀, κ, the polish; no smoothing phase and no model growth)
/// on the NLP that [`build`] makes for `hz`, starting from `x0`, a primal point of that NLP:
/// a solution's [`OcpSolution::x`] or the last iterate of a failed run (e.g. the smoothed
/// point that [`OcpError::HomotopyStalled`] carries after a model growth), so that a long
/// smoothing phase is run once and its end game tried with other homotopy settings.
/// `x0` may also be a point of the same problem with fewer elements per interval (N_FE a
/// divisor of `o.n_fe`): it is then carried to this mesh by [`crate::refine::refine_point`].
///
/// # Errors
/// [`OcpError::InvalidInput`] when `x0` has a length of neither this NLP nor a coarser
/// mesh's, or a non-finite entry (naming the entry); the homotopy's errors, except that a
/// failure of its first NLP is [`OcpError::HomotopyStalled`] carrying the start point (as
/// given, or refined onto this mesh) and that NLP in its log, so the written partial
/// solution is still the start point.
pub fn solve_from_point<C: Cls>(
    tf: &Arc<TimeFreezing<C>>,
    hz: &Horizon,
    o: &FesdOptions,
    x0: Vec<f64>,
) -> Result<OcpSolution, OcpError> {
    let start = thread_cpu_seconds();
    let o = FesdOptions {
        smoothing: None,
        ..o.clone()
    };
    if let Some(i) = x0.iter().position(|v| !v.is_finite()) {
        return Err(OcpError::InvalidInput(format!(
            "the start point's entry {i} is {}",
            x0[i]
        )));
    }
    let (nlp, layout, fresh) = build(tf, hz, &o)?;
    let x0 = if x0.len() == fresh.len() {
        x0
    } else {
        let n = fresh.len();
        crate::refine::from_coarser_mesh(tf, hz, &o, &x0, &layout, fresh)?.ok_or_else(|| {
            OcpError::InvalidInput(format!(
                "the start point has {} entries, this problem's NLP has {n} variables \
                 (nor is it a point of this problem with fewer elements per interval)",
                x0.len()
            ))
        })?
    };
    let violation = crate::smoothing::max_violation(&nlp, &x0);
    match solve_built(tf, hz, &o, nlp, &layout, x0.clone()) {
        Ok(mut out) => {
            out.cpu_seconds = thread_cpu_seconds() - start;
            Ok(out)
        }
        Err(OcpError::Ipopt { solution, .. }) => Err(crate::smoothing::stalled_at_start(
            &layout,
            &o,
            x0,
            violation,
            &solution,
            vec![],
        )),
        Err(e) => Err(e),
    }
}

/// Carries a primal point `x` of the NLP with layout `from` over to the NLP with layout `to`
/// (starting from `to`'s initial guess `x_to`), matching states, α, λ, element lengths,
/// controls and speeds of time by their role. The two NLPs must discretize the same
/// horizon (equal dimensions, intervals and elements, step representation); they may differ
/// in the speed-of-time structure: from one speed for the horizon to one per interval, each
/// interval taking the global value (or back, taking the first interval's).
///
/// # Errors
/// [`OcpError::InvalidInput`] when the layouts do not match.
pub fn transfer_point(
    from: &Layout,
    x: &[f64],
    to: &Layout,
    mut x_to: Vec<f64>,
) -> Result<Vec<f64>, OcpError> {
    let same = from.dims == to.dims
        && from.dcs == Dcs::Step
        && to.dcs == Dcs::Step
        && from.u.len() == to.u.len()
        && from.s.len() == to.s.len()
        && from.elems.len() == to.elems.len()
        && from.elems.iter().zip(&to.elems).all(|(a, b)| {
            a.y.len() == b.y.len() && a.lp.len() == b.lp.len() && a.ln.len() == b.ln.len()
        });
    if !same {
        return Err(OcpError::InvalidInput(
            "transfer_point: the two NLPs discretize different horizons".into(),
        ));
    }
    let (ny, nc, _, _) = from.dims;
    copy_interval_vars(from, x, to, &mut x_to);
    let mut copy = |a: usize, b: usize, n: usize| x_to[b..b + n].copy_from_slice(&x[a..a + n]);
    for (a, b) in from.elems.iter().zip(&to.elems) {
        copy(a.h, b.h, 1);
        copy(a.y_end, b.y_end, ny);
        for (i, j) in a.y.iter().zip(&b.y) {
            copy(*i, *j, ny);
        }
        for (i, j) in a.alpha.iter().zip(&b.alpha) {
            copy(*i, *j, nc);
        }
        for (i, j) in a.lp.iter().zip(&b.lp) {
            copy(*i, *j, nc);
        }
        for (i, j) in a.ln.iter().zip(&b.ln) {
            copy(*i, *j, nc);
        }
    }
    Ok(x_to)
}

/// Copies the initial state, the controls and the speeds of time of the point `x` of the NLP
/// with layout `from` into `x_to` of the NLP with layout `to` (same dimensions and control
/// intervals; a global speed of time is copied into every interval's, or the first
/// interval's back into a global one).
pub(crate) fn copy_interval_vars(from: &Layout, x: &[f64], to: &Layout, x_to: &mut [f64]) {
    let (ny, _, nu, _) = from.dims;
    let mut copy = |a: usize, b: usize, n: usize| x_to[b..b + n].copy_from_slice(&x[a..a + n]);
    copy(from.y0, to.y0, ny);
    for k in 0..from.u.len() {
        copy(from.u[k], to.u[k], nu);
        copy(from.s[k], to.s[k], 1);
    }
}

/// Reads an [`OcpSolution`] (trajectory, controls, objective, residuals; empty log) from a
/// primal point `x` of the NLP that [`build`] makes for `hz`, e.g. the last iterate carried
/// by [`OcpError::HomotopyStalled`] (pass the layout of a fresh `build` of the same horizon).
pub fn extract_ocp<C: Cls>(
    tf: &Arc<TimeFreezing<C>>,
    hz: &Horizon,
    layout: &Layout,
    x: &[f64],
    o: &FesdOptions,
) -> Result<OcpSolution, OcpError> {
    let (ny, _, nu, _) = layout.dims;
    let need = layout.elems.last().map_or(0, |e| {
        let nc = layout.dims.1;
        let n_ln = if layout.dcs == Dcs::Stewart { 1 } else { nc };
        let lam = e.lp.iter().fold(0, |m, &i| m.max(i + nc));
        let lam = e.ln.iter().fold(lam, |m, &i| m.max(i + n_ln));
        lam.max(e.y_end + ny)
    });
    if x.len() < need {
        return Err(OcpError::InvalidInput("x does not match the layout".into()));
    }
    let u: Vec<Vec<f64>> = layout.u.iter().map(|&i| x[i..i + nu].to_vec()).collect();
    let s: Vec<f64> = layout.s.iter().map(|&i| x[i]).collect();
    // the clock at y0 and at the end of each interval's last element
    let interval_clock: Vec<f64> = std::iter::once(x[layout.y0 + ny - 1])
        .chain(
            layout
                .elems
                .chunk_by(|a, b| a.step == b.step)
                .map(|interval| x[interval[interval.len() - 1].y_end + ny - 1]),
        )
        .collect();
    let objective = u
        .iter()
        .enumerate()
        .map(|(k, u)| {
            let dt = match hz.clock {
                Clock::Stagewise(_) => 1.0,
                _ => interval_clock[k + 1] - interval_clock[k],
            };
            hz.control_weight * dt * u.iter().map(|v| v * v).sum::<f64>()
        })
        .sum();
    let last = layout
        .elems
        .last()
        .ok_or_else(|| OcpError::InvalidInput("empty horizon".into()))?;
    let y_end = &x[last.y_end..last.y_end + ny];
    let terminal_error = hz
        .terminal
        .iter()
        .filter(|(i, _)| *i < ny)
        .map(|(i, v)| (y_end[*i] - v).abs())
        .fold(0.0, f64::max);
    Ok(OcpSolution {
        traj: trajectory(tf, layout, x, 0.0),
        u,
        s,
        interval_clock,
        objective,
        comp_residual: comp_residual(layout, x, o.fesd),
        terminal_error,
        nlp_iterations: 0,
        log: vec![],
        cpu_seconds: 0.0,
        x: x.to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::{project_idle_pairs, IdlePair};

    /// A freed pair keeps c = λᵖ − λⁿ and becomes exactly complementary, α on the side of
    /// the sign of c (and unchanged where c = 0).
    #[test]
    fn idle_pairs_are_projected_onto_exact_complementarity() {
        let pair = |k: usize| IdlePair {
            alpha: 3 * k,
            lp: 3 * k + 1,
            ln: 3 * k + 2,
        };
        let mut x = vec![0.3, 2.0, 0.5, 0.6, 0.2, 0.7, 0.4, 0.25, 0.25];
        project_idle_pairs(&mut x, &[pair(0), pair(1), pair(2)]);
        let want = [1.0, 1.5, 0.0, 0.0, 0.0, 0.5, 0.4, 0.0, 0.0];
        for (got, want) in x.iter().zip(want) {
            assert!((got - want).abs() < 1e-15, "{x:?}");
        }
    }
}
