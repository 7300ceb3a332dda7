//! # nonsmooth-control
//!
//! Inverse dynamics (ID) with rigid contact and friction after Zapolsky & Drumwright,
//! *Inverse Dynamics with Rigid Contact and Friction* (2017; errata, choices and acceptance
//! checks in docs/decisions/004-inverse-dynamics.md). Given a model, its state (q, v), a
//! desired joint acceleration or next-step velocity of the actuated DOF, the contacts and
//! the control period Δt, [`InverseDynamics::solve`] returns the actuator torques together
//! with the predicted contact impulses and forces, so that applying the torques for one step
//! of the same rigid contact model reproduces the desired velocities (the *right-inverse*
//! property, §3).
//!
//! Discretization (paper eq. 37, sign convention of erratum **E2**: `+Pᵀτ`):
//!
//! ```text
//! M (v⁺ − v⁻) = Nᵀ f_N + Fᵀ f_F + Pᵀ τ + Δt f_ext,    P v⁺ = q̇_des = P v⁻ + Δt q̈_des  (eqs 38–39)
//! ```
//!
//! with τ an actuator *impulse*; the returned torque is `u = τ/Δt` (erratum **E1**). Here
//! `Pᵀ` is [`nonsmooth_core::Model::actuation_matrix`] (gear included), `f_ext` the
//! snapshot's non-contact forces (gravity, Coriolis, joint damping), `F = [T₁; −T₁; T₂; −T₂]`
//! stacked in direction blocks so that `E = [I; I; I; I]` (nk × n, erratum **E12**), and every
//! contact enters with its stabilization term φ/Δt (eqs 35–36).
//!
//! Variants ([`Variant`]):
//! - [`Variant::LcpNoSlip`] (ID_LCP,∞, §4): Algorithm 1 with incremental (bordered) Cholesky,
//!   the reduced no-slip LCP `Q = N M̃ₑ⁻¹ Nᵀ`, solved by the warm-started principal pivoting
//!   method (Algorithm 2, Appendix F working set of size ≤ rank) with iteration cap,
//!   singularity guard and regularized-Lemke fallback;
//! - [`Variant::LcpCoulomb`] (ID_LCP,μ, §5): the corrected Anitescu–Potra LCP (eq. 64 with
//!   errata **E4**, **E5**), Lemke;
//! - [`Variant::QpNoSlip`] / [`Variant::QpCoulomb`] (ID_QP,∞ / ID_QP,μ, §6): Stage I maximal
//!   dissipation QP (eqs 69–79, erratum **E6**), Stage II minimum-norm torque on the optimal
//!   face (eqs 102–112, erratum **E10**: the *total* torque ‖u‖ is minimized), both stages in
//!   reduced form warm-started from the previous call's active sets (§4.6), Lemke on the KKT
//!   LCPs as the cold start, Clarabel as the last fallback;
//! - [`Variant::QpCoulombOneStage`] (one-stage ID_QP,μ, §6.1): Stage I of ID_QP,μ with the
//!   Hessian regularized, no Stage II.
//!
//! Infeasible desired motions (erratum **E15**) are detected and, if
//! [`IdOptions::relax_infeasible`] is set, replaced by the closest realizable motion through
//! the §4.5 relaxation (with errata **E8**: friction impulses are variables and every
//! tangential row is checked), reported in [`IdSolution::relaxation`].
//!
//! Trajectory optimization and identification through the simulator's step derivatives
//! (`nonsmooth_sim::derivatives`, docs/derivatives.md): [`ilqr`] (iterative LQR with
//! control limits), [`receding_horizon`] (iLQR replanned at every step), [`identification`]
//! (damped Gauss–Newton on model parameters from a recorded trajectory), with [`tangent`]
//! (state differences in the tangent space), [`rollout`] and [`box_qp`] (the control-limited
//! QP of the backward pass).
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]
#![warn(missing_docs)]

mod active_set;
pub mod box_qp;
pub mod controllers;
mod elimination;
mod error;
pub mod forward;
pub mod grasping;
pub mod identification;
pub mod ilqr;
mod lcp;
pub mod locomotion;
mod problem;
mod qp;
pub mod receding_horizon;
mod relax;
pub mod rollout;
pub mod tangent;

pub use elimination::{find_indices, Elimination, RowLabel};
pub use error::ControlError;
pub use lcp::{coulomb_lcp, coulomb_mlcp, noslip_lcp, noslip_mlcp, ppm, PpmOutcome};
pub use problem::{ContactRow, ContactSpec, Desired, IdProblem};

use nalgebra::DVector;
use nonsmooth_solvers::conic::ConicOptions;
use nonsmooth_solvers::lcp::LemkeOptions;
use nonsmooth_solvers::{Residuals, SolveStatus};

/// The four inverse-dynamics formulations of the paper.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Variant {
    /// ID(tᵢ)_LCP,∞ — no slip with normal complementarity (§4, eqs 40–45, Algorithms 1–2,
    /// Appendices E–F). Corrects errata E2, E3 (sign of g), E7 (Appendix E holds only for a
    /// kinematically consistent q̇_des: dropped tangent rows are re-checked) and E9 (PSD is
    /// P₀, not P: the PPM is guarded and falls back to regularized Lemke).
    LcpNoSlip,
    /// ID(tᵢ)_LCP,μ — Coulomb friction (linearized pyramid, k = 4) with normal
    /// complementarity (§5, eqs 52–68): the Anitescu–Potra LCP of size (k+2)n solved by
    /// Lemke. Corrects errata E4 (+κ in eq 59), E5 (M̃⁻¹ and v̂ in eq 64, E in the f_F row,
    /// last row [μ, −Eᵀ, 0], Fᵀf_F in eq 68) and E12 (E is nk × n).
    LcpCoulomb,
    /// ID(tᵢ)_QP,∞ — two-stage convex method without normal complementarity and without a
    /// friction bound (§6, eqs 69–79 and 102–112, the friction row removed). Corrects E6,
    /// E10 and E11 (the nullspace dimension is computed numerically).
    QpNoSlip,
    /// ID(tᵢ)_QP,μ — two-stage convex method with the friction pyramid μ f_N ≥ Σ f_F (§6,
    /// eqs 69–79, 102–112; erratum E12 for the mis-typed cone of eq 32, E6, E10, E11).
    QpCoulomb,
    /// ID(tᵢ)^one-stage_QP,μ — the one-stage alternative of §6.1 (timed in Fig. 19): Stage I
    /// of ID_QP,μ (eqs 69–79, E6) with the Hessian regularized, `H + εI` with
    /// `ε = IdOptions::one_stage_regularization · max diag(H)` (Todorov 2014), so that its
    /// solution is unique and gives the torque without Stage II; warm-started like the
    /// other QP variants.
    QpCoulombOneStage,
}

impl Variant {
    /// All variants, in the paper's order of presentation.
    pub const ALL: [Variant; 5] = [
        Variant::LcpNoSlip,
        Variant::LcpCoulomb,
        Variant::QpNoSlip,
        Variant::QpCoulomb,
        Variant::QpCoulombOneStage,
    ];

    /// The command-line name (`lcp-noslip`, `lcp-coulomb`, `qp-noslip`, `qp-coulomb`,
    /// `qp-coulomb-one-stage`).
    pub fn name(self) -> &'static str {
        match self {
            Variant::LcpNoSlip => "lcp-noslip",
            Variant::LcpCoulomb => "lcp-coulomb",
            Variant::QpNoSlip => "qp-noslip",
            Variant::QpCoulomb => "qp-coulomb",
            Variant::QpCoulombOneStage => "qp-coulomb-one-stage",
        }
    }

    /// Metric-friendly name (`lcp_noslip`, ...).
    pub fn snake(self) -> &'static str {
        match self {
            Variant::LcpNoSlip => "lcp_noslip",
            Variant::LcpCoulomb => "lcp_coulomb",
            Variant::QpNoSlip => "qp_noslip",
            Variant::QpCoulomb => "qp_coulomb",
            Variant::QpCoulombOneStage => "qp_coulomb_one_stage",
        }
    }

    /// Parses a command-line name.
    ///
    /// # Errors
    /// [`ControlError::UnknownVariant`] for any other string.
    pub fn from_name(name: &str) -> Result<Self, ControlError> {
        Variant::ALL
            .into_iter()
            .find(|v| v.name() == name || v.snake() == name)
            .ok_or_else(|| ControlError::UnknownVariant(name.to_string()))
    }

    /// Whether the variant models Coulomb friction (else: no slip / unbounded friction).
    pub fn coulomb(self) -> bool {
        matches!(
            self,
            Variant::LcpCoulomb | Variant::QpCoulomb | Variant::QpCoulombOneStage
        )
    }

    /// Whether the variant is one of the convex (QP) formulations of §6.
    pub fn is_qp(self) -> bool {
        matches!(
            self,
            Variant::QpNoSlip | Variant::QpCoulomb | Variant::QpCoulombOneStage
        )
    }
}

/// The objective of Stage II of the QP variants (erratum E10 of
/// docs/decisions/004-inverse-dynamics.md: the paper's full form, eq 102, and its reduced form, eqs
/// 105–112, differ).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StageTwoObjective {
    /// Minimize ½‖u‖² of the total actuator torque (eq 102).
    TotalTorque,
    /// Minimize ½‖u − f_ID‖², `f_ID = C q̈_des − P f_ext` the joint-space rigid-body inverse
    /// dynamics without contact and without base coupling (`C = P M Pᵀ`, `q̈_des =
    /// (q̇_des − P v⁻)/Δt`): the reduced form of eqs 105–112, `x = u − f_ID`, which is what
    /// the authors' Pacer plugin minimizes (its Stage II objective is `‖F⁻¹(q̇* − k − U z)‖`,
    /// i.e. ‖x‖ with `u = x + f_ID`).
    DeviationFromRigidId,
}

/// Options of [`InverseDynamics`].
#[derive(Debug, Clone, PartialEq)]
pub struct IdOptions {
    /// The formulation.
    pub variant: Variant,
    /// Warm-start from the previous call's active sets when the variant and the number of
    /// contacts are unchanged (§4.6): the PPM of [`Variant::LcpNoSlip`], and the stages of
    /// the QP variants (principal pivoting on the stage's KKT system from the last active
    /// set; a warm solve that does not converge falls back to Lemke and is counted in
    /// [`IdStats::warm_fallbacks`]).
    pub warm_start: bool,
    /// Iteration cap of the PPM (Algorithm 2) and of the warm-started principal pivoting of
    /// the QP stages; after it the solve falls back to Lemke.
    pub ppm_max_iterations: usize,
    /// Run Stage II of the QP variants (§6.2.4); `false` gives the Stage-I-only controller.
    pub stage_two: bool,
    /// What Stage II's torque norm is measured from (erratum E10; see [`StageTwoObjective`]).
    pub stage_two_objective: StageTwoObjective,
    /// Solve Stage I by Lemke on its KKT LCP (the authors' QP → LCP route, which returns a
    /// vertex of the optimal face that depends on the contact order) instead of Clarabel
    /// (which returns the analytic centre of the face). With Stage II on, the torque does not
    /// depend on the point of the face. A Lemke failure falls back to Clarabel.
    pub stage_one_lemke: bool,
    /// Solve Stage II by Lemke on its KKT LCP (the face's equality rows split into two
    /// inequalities, see `qp.rs`) instead of Clarabel. The torque of Stage II is unique, so both give the same torques (checked to
    /// 1e-6 in the tests).
    pub stage_two_lemke: bool,
    /// Largest KKT LCP (unknowns) that the Lemke routes of the QP stages take on; larger
    /// stages go to Clarabel directly (dense Lemke costs O(n²) per pivot and O(n) pivots).
    /// Default 1024 (about 140 contacts with the 4-edge pyramid). On the quadruped with its
    /// feet duplicated (Fig. 19, rank-deficient N) both stages by Lemke take 0.39 ms at 16
    /// contacts, 1.4 ms at 32 and 5 ms at 64, against 5.4, 27 and 147 ms with Clarabel, with
    /// the same torques (to Clarabel's 1e-6): a cap of 64 unknowns (9 contacts) sent every
    /// larger stage to the slow path.
    pub lemke_max_size: usize,
    /// Relative rank tolerance of Stage I's Hessian H that defines Stage II's face
    /// (pivoted-Cholesky Schur complements of `F Fᵀ`, `H = FᵀF`, below `null_tol` times the
    /// largest diagonal count as zero).
    pub null_tol: f64,
    /// The regularization of [`Variant::QpCoulombOneStage`], relative to the largest
    /// diagonal entry of Stage I's Hessian. Default 1e-6: the Stage I objective at the
    /// regularized solution is optimal to about that relative accuracy, and the torque,
    /// which depends on the internal forces that only the regularization selects, is
    /// determined to ~1e-6 relative by solves accepted at 1e-8 KKT residuals (with 1e-8 the
    /// warm and cold solves of 16 duplicated contacts differed by 3e-3 relative).
    pub one_stage_regularization: f64,
    /// Replace an infeasible desired motion by the closest realizable one (§4.5, E15)
    /// instead of returning [`ControlError::InfeasibleDesired`].
    pub relax_infeasible: bool,
    /// Options of the Clarabel solves (Stage I, Stage II, relaxation).
    pub conic: ConicOptions,
    /// Options of Lemke's method.
    pub lemke: LemkeOptions,
}

impl IdOptions {
    /// Defaults for a variant: warm start on, 100 PPM iterations, Stage II on, both QP stages
    /// by Lemke (Clarabel as the fallback and the reference: 6× faster on the quadruped, same
    /// torques to 1e-6, `tests/qp_lemke.rs`), `null_tol = 1e-9`, relaxation on, Clarabel
    /// tolerances 1e-10.
    pub fn new(variant: Variant) -> Self {
        Self {
            variant,
            warm_start: true,
            ppm_max_iterations: 100,
            stage_two: true,
            stage_two_objective: StageTwoObjective::TotalTorque,
            stage_one_lemke: true,
            stage_two_lemke: true,
            lemke_max_size: 1024,
            null_tol: 1e-9,
            one_stage_regularization: 1e-6,
            relax_infeasible: true,
            conic: ConicOptions {
                eps_abs: 1e-10,
                eps_rel: 1e-10,
                ..ConicOptions::default()
            },
            lemke: LemkeOptions::default(),
        }
    }
}

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IdStatus {
    /// The desired motion was realizable and is reproduced.
    Solved,
    /// The desired motion was not realizable (E15); the torques realize the closest motion
    /// found by the §4.5 relaxation, reported in [`IdSolution::relaxation`].
    Relaxed,
}

/// The report of the §4.5 relaxation.
#[derive(Debug, Clone, PartialEq)]
pub struct Relaxation {
    /// Why the requested motion was declared infeasible.
    pub reason: String,
    /// The requested next-step velocity of the actuated DOF.
    pub requested: DVector<f64>,
    /// The realizable velocity that was used instead.
    pub realized: DVector<f64>,
    /// ‖realized − requested‖₂.
    pub distance: f64,
}

/// The solution of one inverse-dynamics call.
#[derive(Debug, Clone, PartialEq)]
pub struct IdSolution {
    /// The formulation used.
    pub variant: Variant,
    /// Outcome.
    pub status: IdStatus,
    /// Actuator torques u = τ/Δt (length nu).
    pub torques: DVector<f64>,
    /// Predicted normal impulses f_N (length n; force·Δt).
    pub normal_impulses: DVector<f64>,
    /// Predicted tangential impulses per contact and tangent (n × ntan, row-major flattened:
    /// contact i, tangent j at `i·ntan + j`), net of the ± pyramid edges.
    pub tangent_impulses: DVector<f64>,
    /// Predicted normal forces f_N/Δt.
    pub normal_forces: DVector<f64>,
    /// Predicted tangential forces (same layout as `tangent_impulses`) divided by Δt.
    pub tangent_forces: DVector<f64>,
    /// Predicted next velocity v⁺.
    pub v_plus: DVector<f64>,
    /// The actuated-velocity target used (`realized` after a relaxation).
    pub desired_velocity: DVector<f64>,
    /// Which numerical method produced the impulses (e.g. `"ppm"`, `"lemke"`,
    /// `"clarabel+stage2"`).
    pub method: String,
    /// Status of the last underlying solve.
    pub solver_status: SolveStatus,
    /// Measured residuals of the underlying solve.
    pub residuals: Residuals,
    /// Pivots / iterations of the underlying solve(s).
    pub iterations: usize,
    /// Stage I objective ½v⁺ᵀMv⁺ (QP variants; kinetic energy of v⁺ otherwise).
    pub kinetic_energy: f64,
    /// The §4.5 relaxation, if one was needed.
    pub relaxation: Option<Relaxation>,
}

/// Counters of the solver routes taken by an [`InverseDynamics`] controller (QP variants):
/// how many stage solves were answered from the previous call's active set, started cold,
/// or fell back. A fallback is never silent: it is counted here and named in
/// [`IdSolution::method`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IdStats {
    /// Calls of [`InverseDynamics::solve`].
    pub calls: usize,
    /// Stage solves answered by the warm-started principal pivoting.
    pub warm_solves: usize,
    /// Stage solves without a usable warm start (first call, variant or number of contacts
    /// changed, warm start off), solved by Lemke.
    pub cold_solves: usize,
    /// Warm-started stage solves that did not converge (iteration cap, singular basis,
    /// residuals above 1e-8 relative) and were solved again by Lemke.
    pub warm_fallbacks: usize,
    /// Stage solves that Lemke did not answer (ray or pivot cap, residuals above 1e-8
    /// relative); principal pivoting from a guess (Stage II: the support of Stage I's
    /// impulses) is tried next, then Clarabel.
    pub lemke_failures: usize,
    /// Stage solves answered by Clarabel after the other routes failed (or were switched off).
    pub clarabel_fallbacks: usize,
}

/// A stateful inverse-dynamics controller (it keeps the warm starts between calls).
#[derive(Debug, Clone)]
pub struct InverseDynamics {
    options: IdOptions,
    warm: Option<(usize, Vec<usize>)>,
    qp_warm: qp::QpWarm,
    stats: IdStats,
}

impl InverseDynamics {
    /// A controller with the given options.
    pub fn new(options: IdOptions) -> Self {
        Self {
            options,
            warm: None,
            qp_warm: qp::QpWarm::default(),
            stats: IdStats::default(),
        }
    }

    /// The solver-route counters since the controller was created.
    pub fn stats(&self) -> IdStats {
        self.stats
    }

    /// The options.
    pub fn options(&self) -> &IdOptions {
        &self.options
    }

    /// Mutable options (e.g. to switch Stage II off).
    pub fn options_mut(&mut self) -> &mut IdOptions {
        &mut self.options
    }

    /// Forgets the warm starts (the counters are kept).
    pub fn reset(&mut self) {
        self.warm = None;
        self.qp_warm = qp::QpWarm::default();
    }

    /// Solves one inverse-dynamics step (see the crate docs for the equations).
    ///
    /// # Errors
    /// [`ControlError::DimensionMismatch`] / [`ControlError::NonFinite`] for a bad desired
    /// vector; [`ControlError::InfeasibleDesired`] when the motion is not realizable and
    /// relaxation is off; [`ControlError::SolverFailed`] with the solver's status and
    /// residuals when a solve fails (no torques are returned then).
    pub fn solve(
        &mut self,
        problem: &IdProblem,
        desired: &Desired,
    ) -> Result<IdSolution, ControlError> {
        let qdes = problem.desired_velocity(desired)?;
        self.stats.calls += 1;
        match self.solve_velocity(problem, &qdes) {
            Err(ControlError::InfeasibleDesired { reason, .. })
                if self.options.relax_infeasible =>
            {
                let realized = relax::relax(problem, &qdes, &self.options)?;
                let mut sol = self
                    .solve_velocity(problem, &realized)
                    .map_err(|e| match e {
                        ControlError::InfeasibleDesired { reason, .. } => {
                            ControlError::SolverFailed {
                                variant: self.options.variant.name(),
                                stage: "after relaxation",
                                status: None,
                                residuals: Residuals::default(),
                                reason,
                            }
                        }
                        other => other,
                    })?;
                sol.status = IdStatus::Relaxed;
                sol.relaxation = Some(Relaxation {
                    reason,
                    distance: (&realized - &qdes).norm(),
                    requested: qdes,
                    realized,
                });
                Ok(sol)
            }
            other => other,
        }
    }

    /// Solves with an explicit next-step target `q̇_des` of the actuated velocities.
    fn solve_velocity(
        &mut self,
        problem: &IdProblem,
        qdes: &DVector<f64>,
    ) -> Result<IdSolution, ControlError> {
        let variant = self.options.variant;
        match variant {
            Variant::LcpNoSlip => {
                let warm = if self.options.warm_start {
                    self.warm
                        .as_ref()
                        .filter(|(n, _)| *n == problem.num_contacts())
                        .map(|(_, a)| a.clone())
                } else {
                    None
                };
                let (sol, active) = lcp::solve_noslip(problem, qdes, warm, &self.options)?;
                self.warm = Some((problem.num_contacts(), active));
                Ok(sol)
            }
            Variant::LcpCoulomb => lcp::solve_coulomb(problem, qdes, &self.options),
            Variant::QpNoSlip | Variant::QpCoulomb | Variant::QpCoulombOneStage => qp::solve(
                problem,
                qdes,
                &self.options,
                &mut self.qp_warm,
                &mut self.stats,
            ),
        }
    }
}

/// One-shot convenience: a fresh [`InverseDynamics`] with [`IdOptions::new`].
///
/// # Errors
/// As [`InverseDynamics::solve`].
pub fn inverse_dynamics(
    problem: &IdProblem,
    desired: &Desired,
    variant: Variant,
) -> Result<IdSolution, ControlError> {
    InverseDynamics::new(IdOptions::new(variant)).solve(problem, desired)
}
