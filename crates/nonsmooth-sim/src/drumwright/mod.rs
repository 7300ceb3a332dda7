//! Drumwright's unconditionally stable first-order constraint solver (E. Drumwright, "An
//! Unconditionally Stable First-Order Constraint Solver for Multibody Systems", 2019).
//!
//! Every constraint (bilateral joint row, joint limit, contact normal, contact friction) is a
//! spring–damper in constraint space. The constraint deformations are advanced with implicit
//! Euler and the resulting forces λ₁ are applied in a semi-implicit (symplectic) Euler update
//! of (q, v) (paper eqs 36–39, Theorem 1):
//!
//! ```text
//! v₁ = v₀ + h M⁻¹ (Gᵀ λ₁ + f),   q₁ = q₀ + h N(q₀) v₁.
//! ```
//!
//! Per-row quantities (eqs 51–62; the symmetric form of the solve in
//! docs/decisions/003-stable-constraint-solver.md, D9): `S = h²K + hB`, `R = S⁻¹`, `ε = hK/(hK + B)`; a rigid row
//! (no stiffness in the model) is the limit K → ∞: `R = 0`, `ε = 1`.
//!
//! - **Bilateral only** (§3.4): one symmetric positive-definite solve
//!   `(W + R) λ₁ = −(1/h)[(ε/h) φ₀ + φ̇₀ + h G M⁻¹ f + h Ġ v₀] − R M̂ Ġ v₀`, `W = G M⁻¹ Gᵀ`
//!   (the λ form of paper eqs 61, 62, 53; decision D9).
//! - **Unilateral / contact** (§5, §6, Appendix 0.A): bilateral rows are eliminated with the
//!   implicit-Euler augmented mass `Λ = (M + G_bᵀ S_b G_b)⁻¹` (Woodbury form of the paper's
//!   `M⁻¹(G_bᵀC⁻¹D + I)`): `v₁ = v_free + h Λ G*ᵀ λ*` with
//!   `v_free = Λ (M v₀ + h f + h G_bᵀ a_b)`, `a_b = −K_b φ_b0 − (hK_b + B_b) h Ġ_b v₀ − M̂_b Ġ_b v₀`.
//!   The normal/unilateral rows read `(R + G Λ G*ᵀ) λ* ≥ R q` (the paper's `A λ* ≥ q` scaled
//!   by the positive diagonal R), `λ ≥ 0`; friction rows carry the slack
//!   `β = λ_t + S_t G_t Λ G*ᵀ λ* + d_t` and the Coulomb cone (two linear rows in 2D, a
//!   second-order cone in 3D, §6.3). Using `v_free` includes the `G_bᵀ C⁻¹ c` term that the
//!   paper's eqs 174/175 omit (decision D10).
//!
//! # Stages of a step
//! A step runs the stages every velocity-level rigid scheme shares ([`crate::pipeline`]):
//! the step is checked; the contact set of its start state is detected once, within
//! [`Stepper::contact_margins`] (the speculative margins with
//! [`DrumwrightOptions::velocity_margin`]), with the actuation added to M and f (servos
//! implicitly; an external load is an explicit force of the actuation, as the paper's f in
//! eqs 36–39, [`crate::external_load`]); this module's contact-model stage
//! computes `v₁`; the configuration is integrated and the new state checked. The code of
//! this module is what differs from the other rigid schemes:
//! - the rows with their compliance laws (D3 inclusion, D6 Hertz and Hunt–Crossley
//!   linearizations, rigid rows as the limit K → ∞);
//! - the augmented mass `M + G_bᵀ S_b G_b` that eliminates compliant bilateral rows;
//! - the programs (the one program, the staged programs, the program of Appendix 0.A)
//!   and their solvers.
//!
//! The contact set is read through its per-body view by the block fast path (below) when
//! the model's joints are all root joints, the options allow the fast path and the
//! actuation has no servos; otherwise, and when the fast path declines the step (a
//! Delassus matrix that is not sparse), through its dense view, the [`ContactSnapshot`] with
//! the actuation applied ([`DrumwrightStepper::step_velocity`]).
//!
//! # Decisions (D1–D10 of docs/decisions/003-stable-constraint-solver.md), each exercised by a
//! test in `tests/drumwright.rs`
//! - **D1** (Ġ and M̂Ġv): per group, [`DrumwrightOptions::bilateral_gdot`] (default on, as
//!   in the paper's pendulum) and [`DrumwrightOptions::unilateral_gdot`] (default off: contact
//!   Ġ is approximate and M̂ is undefined for rank-deficient groups). When on, M̂ = W⁺ (a
//!   pseudo-inverse), so redundant rows never fail.
//! - **D2** (M̂ per group): M̂ is computed per group (bilateral, unilateral+normal, tangents),
//!   as in Appendix 0.A.
//! - **D3** (inclusion): [`Inclusion::Speculative`] (default) keeps every contact the
//!   snapshot reports within the model's contact margin and every limit row with
//!   φ₀ ≤ margin + 2h|φ̇₀| ([`DrumwrightOptions::speculative_window`]), whatever the sign
//!   of φ₀; [`Inclusion::PenetratingOnly`] keeps rows with φ₀ ≤ 0 only.
//!   The paper's joint-limit result (Fig 6) needs the speculative policy.
//! - **D4** (min-norm QP vs max()): [`UnilateralForm::MaxLcp`] (default) is the force law
//!   of eq 68, λᵢ = max(0, spring forceᵢ), as the LCP-equivalent convex QP
//!   `min ½λᵀ(R + GΛGᵀ)λ − λᵀR q, λ ≥ 0` — the symmetric `(W + R)` form the one program
//!   solves; [`UnilateralForm::MinNorm`] is the paper's QP (eqs 83–85, Hessian ζI), which
//!   equals it for a single row or rows whose `R + W` is an M-matrix and otherwise spreads
//!   force onto rows whose springs are extended (the Winkler box of `tests/drumwright.rs`).
//!   With the one program, `MinNorm` is honoured by a KKT certificate that the program's
//!   normal forces are also the min-norm ones (else the step is solved by the staged
//!   programs, counted as a fallback).
//! - **D5** (ζ and λ_n inflation): [`FrictionCoupling::Literal`] solves the appendix program
//!   with ζ = 1/h (which inflates λ_n: the minimizer trades normal force for the friction
//!   slack β); [`FrictionCoupling::Staged`] is a lexicographic/fixed-point split, normal rows
//!   first with the friction forces of the previous sweep fixed, then friction with λ_n
//!   fixed, repeated; [`FrictionCoupling::OneProgram`] (default) solves normal and friction
//!   rows together: each step's Coulomb problem with the max() normal forces, in one
//!   semismooth Newton solve, its fallback a fixed point on friction bounds `μ γ̄_n` (see
//!   below). In both of the last two the normal forces equal their spring values
//!   (`max_normal_inflation` over the incline's 2 s runs: 3.2e-4 with the one program,
//!   7.7e-5 with its fixed point alone, 2.8e-4 staged; bench `benches/contact_stage.rs`).
//! - **D6** (Hertz): secant stiffness `K = k √d` with φ = −d (the model's `stiffness` lumps
//!   E*√r, no 4/3 factor), `B` = the model damping; Hunt–Crossley: `K = k √d`,
//!   `B = k d^{3/2} b`. d is the larger of the current penetration, the predicted one
//!   `−(φ₀ + h φ̇₀)` and [`DrumwrightOptions::hertz_floor`] (1 µm), so a contact that is
//!   about to touch is already stiff (a soft first contact would be corrected as a
//!   velocity and launch bodies); a separated contact has no damping.
//! - **D7** (missing parameters): fixed in the `examples/drumwright_*.toml` model files.
//! - **D8** (energy): tested for boundedness, not exact conservation.
//! - **D9** (numerical form): the symmetric (W + R) form; [`y_form_velocity`] keeps the
//!   paper's Y form for comparison only.
//! - **D10** (typos): the corrected equations above are used; the test
//!   `d10_bilateral_elimination_satisfies_the_uneliminated_equations` checks the eliminated
//!   solution against the un-eliminated equations of motion and bilateral force law.
//!
//! # The one program (default)
//! [`FrictionCoupling::OneProgram`] solves each step as one program in the end-of-step
//! velocity `v₁`. Without friction it is strictly convex, the primal form of the symmetric
//! `(W + R)` program ([`nonsmooth_solvers::regularized_contact`]):
//!
//! ```text
//! min over v₁  ½ (v₁ − v_free)ᵀ A (v₁ − v_free) + Σ_c ½ γ_cᵀ R_c γ_c,
//! γ_c = P_F(−R_c⁻¹ (J_c v₁ − v̂_c)),   A = M + G_bᵀ S_b G_b,
//! ```
//!
//! whose impulses `γ = hλ` solve `min ½γᵀ(W + R)γ + (J v_free − v̂)ᵀγ` over the admissible
//! sets. Per row (eq 82 scaled by `R = S⁻¹`): `R = 1/(h(hK + B))`, `v̂ = −(ε/h)φ₀`
//! (minus `hĠv + hR M̂Ġv` when D1's Ġ terms are on). Friction rows (`K_r = 0`,
//! `B_r` = [`DrumwrightOptions::tangent_damping_times_h`]`/h`, §6.4) have
//! `R_t = max(1/(hB_r), σ_t W_ii)`, `v̂_t = 0`: inside its bound the friction force is a
//! damper `−φ̇_r1/(hR_t)` (the paper's `−B_r φ̇_r1`, without the slack β of eq 99, which
//! realizes between B_r/2 and B_r). Rigid rows (`K → ∞`) get `R = σ W_ii`
//! ([`DrumwrightOptions::rigid_regularization`], σ = 1e-6, `W_ii` the Delassus diagonal:
//! SAP's near-rigid estimate with a far smaller σ), so the program stays strictly convex
//! while a rigid row admits a penetration of a relative σ of its velocity change per step.
//! The friction floor σ_t = 1e-3 ([`DrumwrightOptions::friction_regularization`]; SAP ties
//! `R_t` to `W_ii` the same way): the paper's `B_r = 10⁶/h` gives `R_t ≈ 10⁻⁶ W_ii` on
//! the stack's spheres, where Newton's method, cut by the line search at each contact that
//! changes between sticking and sliding, needed more than 100 iterations while the stack
//! collapses (σ_t = 1e-6: 28 of the first 100 steps of the toppling 100-stack missed the
//! iteration limit; 1e-3: none). A sticking contact then creeps at `R_t |γ_t|`: ≈ 1e-5 m/s
//! for the incline's box at μ = 0.375 (test `a9_a10_…`: < 1 mm). The convex solves (the
//! fixed point and the coupled cones below) use Newton's method with exact line search,
//! warm-started from the step's initial velocity (the previous step's result) and accepted
//! at its momentum-balance test (relative 1e-8, [`DrumwrightOptions::contact_solver`]).
//!
//! Friction (D5): with the Coulomb cone `‖γ_t‖ ≤ μγ_n` inside one convex program (SAP's
//! choice), the cone's multiplier enters the normal row: a sliding contact obeys
//! `v_n − v̂_n + R_nγ_n = μ‖v_t + R_tγ_t‖` (Anitescu's relaxation), so its normal force
//! exceeds the spring value by `(hK + B)μ‖v_t‖` — thousands of newtons on the paper's Hertz
//! feet — unless the contact separates by `hμ‖v_t‖` per step; no choice of `R_t` (SAP's
//! `R_t = σW_ii` included) removes that term, which depends on `R_n`. The one program
//! therefore solves the true Coulomb problem instead: each frictional contact is one
//! constraint of the Coulomb kind
//! ([`ConstraintKind::Coulomb`](nonsmooth_solvers::regularized_contact::ConstraintKind::Coulomb),
//! planar `PlanarCoulomb`; rows tangents then normal) whose impulse is Alart and Curnier's
//! non-associated map (P. Alart and A. Curnier, "A mixed formulation for frictional contact
//! problems prone to Newton like solution methods", 1991), with the R-weighting above:
//!
//! ```text
//! y = −R⁻¹ (J v₁ − v̂),   γ_n = max(0, y_n),   γ_t = P_{‖·‖ ≤ μγ_n}(y_t),
//! ```
//!
//! the normal impulse the max() law of its row alone (no inflation, no separation velocity),
//! the friction impulse the damper's trial value projected on the disk `μγ_n`. The step's
//! equations `A(v₁ − v_free) = Jᵀγ(v₁)` are no longer the gradient of a convex function;
//! they are solved by the semismooth Newton method of
//! [`nonsmooth_solvers::regularized_contact::solve_semismooth`]: generalized Jacobian
//! `A + JᵀGJ`, `G` non-symmetric on a sliding contact (`∂γ_t/∂y_n = μ t̂`), factored by an
//! LU without pivoting on the Cholesky structure of an AMD ordering (faer's pivoted sparse
//! LU where a pivot fails; dense LU up to 30 velocities), the ordering and structure kept in
//! the stepper and reused across iterations and steps while the contact graph is unchanged;
//! the exact line search of SAP applied to the residual along the direction; accepted at
//! the same scaled momentum test (relative 1e-8, [`DrumwrightOptions::contact_solver`]). It
//! starts from the better (smaller residual) of the step's initial velocity and the velocity
//! the previous step's contact forces give, `v_free + hA⁻¹Jᵀλ_prev`, each contact's
//! `[λ_n, λ_t₁, λ_t₂]` matched by contact identity (collider pair and feature), new contacts
//! without force. Its solution satisfies Coulomb's law with the normal forces of the max()
//! law exactly: the solution the fixed point below converges to (the solver's tests compare
//! the two to 1e-8 on random problems).
//!
//! The fixed point (the fallback, and with [`DrumwrightOptions::coulomb_newton`] off the
//! method): each contact's friction bounded by a disk `‖γ_t‖ ≤ μγ̄_n` (Tresca friction), its
//! normal a separate unilateral row, with `γ̄_n` the previous step's normal impulse of the
//! same contact; after each convex Newton solve the bounds are set to `μγ_n` and the program
//! is solved again until every contact is consistent (within
//! [`DrumwrightOptions::sweep_tolerance`]), at most `rounds` times, every other round
//! extrapolated by Aitken's Δ² (after Anitescu–Hart; the bounds of a collapsing pile converge
//! linearly at rates 0.8–0.9 per round, those of coplanar corners sharing a nearly
//! non-unique load oscillate at −0.7 to −1). It costs 8–10 Newton solves per step on a
//! toppling pile, which is what the single semismooth solve removes.
//!
//! Fallbacks, each counted ([`StepReport::fell_back`], [`Stepper::last_step_fell_back`],
//! in a run [`crate::Recoveries::convex_fallbacks`]): when the semismooth Newton solve does
//! not converge (100 iterations, or no descent direction), the fixed point; when the bounds
//! reach no fixed point, the step is solved once more with each contact's Coulomb cone
//! coupled to its normal row (SAP's single convex program, with the relaxation above on its
//! sliding contacts, on that step only); when a convex Newton solve fails or does not
//! converge, or the min-norm certificate fails under [`UnilateralForm::MinNorm`], by the
//! staged programs ([`DrumwrightOptions::fallback_sweeps`] sweeps). The program runs on the
//! block fast path (mass blocks of root joints) and on the dense path (one dense block
//! `M + G_bᵀS_bG_b` for articulated models).
//!
//! Time and Newton iterations per step: `cargo bench -p nonsmooth-sim --bench
//! contact_stage` (the one program, its fixed point alone and the staged programs on the
//! toppling 100-sphere stack and both quadrupeds, and the incline's normal-force
//! inflation); against MuJoCo, `bash scripts/compare_mujoco.sh` (measured tables in
//! docs/simulation.md).
//!
//! # Block fast path (the sphere stack)
//! With [`DrumwrightOptions::fast_solver`] (default on), a model whose joints are all root
//! joints, without bilateral constraints or joint limits, stepped with the one program or
//! the staged coupling (D5), without contact Ġ (D1) and without servos, is stepped from the
//! contact set's per-body view (a [`BlockSnapshot`]) instead of its dense
//! [`ContactSnapshot`]: block-diagonal M (one Cholesky per body), Jacobian rows stored
//! as per-body blocks, contacts from a sweep-and-prune broad phase, and the Delassus matrix
//! `W = G M⁻¹ Gᵀ` assembled sparsely body by body (contacts couple only through shared
//! bodies; for the stack W is block tridiagonal), so a step costs O(bodies + contacts).
//! When W is not sparse (Σ over bodies of (rows on the body)² above max(16·rows + 1024,
//! rows²/4), e.g.
//! the 900 points of the foundation on one body) the Clarabel path is used unchanged.
//! The two stages are solved by the specialized sparse solvers of `nonsmooth-solvers`
//! ([`nonsmooth_solvers::lcp::block_pivoting`](mod@nonsmooth_solvers::lcp::block_pivoting)
//! and [`nonsmooth_solvers::friction`]):
//! - normal stage: the LCP `λ ≥ 0 ⊥ (R + W_uu)λ − c ≥ 0` by block principal pivoting,
//!   warm-started from the previous step's active contacts, each pivot one sparse
//!   Cholesky factorization (faer); accepted when the complementarity residual is ≤ 1e-9
//!   (relative) and, for the min-norm form (D4), when the KKT multipliers of the min-norm
//!   QP certify that the LCP solution is also the min-norm one (always so for an M-matrix,
//!   as for the stack's vertical normal rows);
//! - friction stage: the all-sticking minimizer of ½‖λ_t‖² + ½‖Eλ_t + e‖²
//!   (E = I + S_t W_tt) from the quasi-definite augmented system `[I Eᵀ; E −I]`
//!   (sparse signed LDLᵀ (faer), one refinement step, normwise backward error ≤ 1e-13), accepted when
//!   it lies in every Coulomb disk (then it is the constrained optimum); when contacts slide
//!   (at most 16 frictional contacts), Newton's method on the multipliers of the disks
//!   ([`nonsmooth_solvers::friction::solve_friction_sliding`]), accepted at a KKT residual
//!   ≤ 1e-12.
//!
//! A stage that fails its check (sliding in a pile, a min-norm solution that differs from
//! the LCP one) is solved by Clarabel on the dense program instead; the step's
//! [`StepReport::fast_solves`] and [`StepReport::fallbacks`] count both. The test file
//! `tests/fast_solver.rs` checks each stage against Clarabel on the stack (N = 1, 10, 25),
//! the incline and random 2D/3D sphere piles.
//!
//! The per-step data of the fast path live in workspaces kept in the stepper, overwritten
//! in place from step to step: the block snapshot of the shared contact-set stage
//! ([`BlockSnapshot::update_with_contact_margins`] reuses the storage of its mass and
//! Jacobian blocks), the mass-block inverses, the rows, the sparse W
//! and its sub-blocks and the report entries; the program assembly allocates nothing in
//! steady state. Per-body blocks are fixed-size (6 × 6 inverses, 6-vectors of row
//! coefficients, zero-padded for joints with fewer coordinates). A mass block equal entry
//! for entry to the one its cached inverse came from (floating bodies whose origin is the
//! centre of mass, e.g. spheres: the block depends only on the model) is not factored
//! again. Row i of W is the merge of the sorted row lists of its at most two bodies (no
//! sort). The min-norm certificate of the normal stage reuses the pivoting method's last
//! factorization when its index set is the same (the same arithmetic as factoring
//! again). Every acceptance check (residuals, KKT certificate, cone membership, Clarabel
//! fallback) is unchanged.
//!
//! Measured on the settled stack (release build, callgrind instruction counts per step,
//! the difference of two runs with different step counts, which the loaded 2-core machine does not
//! distort): N = 10 0.20 M instructions, N = 50 0.94 M, N = 100 1.85 M (before the
//! workspaces: 0.44 M, 2.19 M, 4.35 M; Clarabel path 1.73 M at N = 10 and 66 M at N = 100,
//! of which the dense snapshot alone is 30 M). At N = 100 the block snapshot is about
//! 0.92 M (kinematics, RNEA, narrow phase), assembling the sparse program 0.58 M, the
//! normal stage 0.17 M.

use crate::error::SimError;
use crate::stepper::Stepper;
use nalgebra::{DMatrix, DVector, Matrix6, Vector6};
use nonsmooth_core::geometry::ContactMargins;
use nonsmooth_core::snapshot::{BlockSnapshot, ContactSnapshot};
use nonsmooth_core::{ComplianceLaw, Dimension, JointKind, Model, State};
use nonsmooth_solvers::conic::{Cone, ConicProblemBuilder};
use nonsmooth_solvers::friction::{
    friction_gradient, friction_objective, friction_residual, solve_friction_sliding,
    solve_friction_sticking, SlidingSettings,
};
use nonsmooth_solvers::lcp::{
    block_pivoting_factored, min_norm_certificate, min_norm_certificate_factored, natural_residual,
};
use nonsmooth_solvers::sparse::SymSparse;
use nonsmooth_solvers::{SolveStatus, SolverError};

mod options;
mod report;
mod stages;
pub use options::{DrumwrightOptions, FrictionCoupling, Inclusion, UnilateralForm};
pub use report::{ContactForce, StepReport, StepTotals};
use stages::{dense_triplets, upper_triplets, Lift, Program};
mod block;
mod one_program;
use crate::contact_set::{BlockView, ContactModel, ContactSet, SnapshotWorkspace};
use crate::free_motion::MassSolver;
use block::BlockProgram;
pub use block::StageComparison;
use nonsmooth_solvers::regularized_contact::SemismoothWorkspace;
use one_program::{force_guesses, ProgramInput, ProgramMass, ProgramRow};

/// The `drumwright` stepper (Drumwright 2019).
#[derive(Debug, Clone, Default)]
pub struct DrumwrightStepper {
    /// Options (decisions D1–D10).
    pub options: DrumwrightOptions,
    /// Forces and solver data of the last successful step.
    pub last: StepReport,
    /// Sums of the step reports since the stepper was made.
    pub totals: StepTotals,
    /// Warm start of the block fast path: whether each contact (collider A, collider B,
    /// feature) carried a normal force in the previous step (sorted by key).
    warm_active: Vec<((usize, usize, usize), bool)>,
    /// Workspace of the block fast path (allocations reused from step to step).
    block_work: BlockProgram,
    /// The contact-set stage's workspace (the per-body snapshot, updated in place).
    workspace: SnapshotWorkspace,
    /// The forces `[λ_n, λ_t₁, λ_t₂]` of the last step by contact (collider A, collider B,
    /// feature), sorted by key: the warm start and the friction bounds of the next one
    /// program.
    program_forces: Vec<one_program::RememberedForces>,
    /// The one program's semismooth Newton workspace (the sparse LU analysis, kept while
    /// the contact graph is unchanged).
    coulomb_workspace: SemismoothWorkspace,
}

/// One scalar constraint row of a step.
#[derive(Debug, Clone)]
struct Row {
    g: DVector<f64>,
    phi: f64,
    gdot_v: f64,
    k: f64,
    b: f64,
    rigid: bool,
}

impl Row {
    fn s(&self, h: f64) -> f64 {
        if self.rigid {
            f64::INFINITY
        } else {
            h * h * self.k + h * self.b
        }
    }
    fn r(&self, h: f64) -> f64 {
        if self.rigid {
            0.0
        } else {
            1.0 / self.s(h)
        }
    }
    fn eps(&self, h: f64) -> f64 {
        if self.rigid {
            1.0
        } else {
            h * self.k / (h * self.k + self.b)
        }
    }
}

/// A contact: its normal row (index into the unilateral list) and tangent rows.
#[derive(Debug, Clone)]
struct ContactRows {
    snapshot_index: usize,
    normal: usize,
    tangents: Vec<usize>,
    mu: f64,
}

/// Rows of one step, grouped as in Appendix 0.A.
#[derive(Debug, Clone, Default)]
struct StepRows {
    bilateral: Vec<Row>,
    /// Unilateral rows: contact normals and joint limits (n and u groups).
    unilateral: Vec<Row>,
    unilateral_names: Vec<Option<String>>,
    tangents: Vec<Row>,
    contacts: Vec<ContactRows>,
}

fn invalid(reason: impl Into<String>) -> SimError {
    SimError::Unsupported {
        stepper: "drumwright",
        reason: reason.into(),
    }
}

/// `W⁺ x` for the symmetric PSD group Delassus matrix W (eigen-decomposition pseudo-inverse,
/// relative cut-off 1e-10): the M̂Ġv term of D1/D2 for possibly rank-deficient groups.
fn mhat_times(w: &DMatrix<f64>, x: &DVector<f64>) -> DVector<f64> {
    if w.nrows() == 0 {
        return DVector::zeros(0);
    }
    let eig = w.clone().symmetric_eigen();
    let cut = 1e-10 * eig.eigenvalues.amax().max(f64::MIN_POSITIVE);
    let mut y = eig.eigenvectors.transpose() * x;
    for (i, yi) in y.iter_mut().enumerate() {
        let l = eig.eigenvalues[i];
        *yi = if l > cut { *yi / l } else { 0.0 };
    }
    &eig.eigenvectors * y
}

/// Stacks rows into a matrix (one row per constraint).
fn stack(rows: &[Row], nv: usize) -> DMatrix<f64> {
    let mut g = DMatrix::zeros(rows.len(), nv);
    for (i, r) in rows.iter().enumerate() {
        g.set_row(i, &r.g.transpose());
    }
    g
}

fn solver_error(e: SolverError) -> SimError {
    SimError::Solver(e)
}

impl DrumwrightStepper {
    /// A stepper with `options`.
    pub fn new(options: DrumwrightOptions) -> Self {
        DrumwrightStepper {
            options,
            last: StepReport::default(),
            totals: StepTotals::default(),
            warm_active: Vec::new(),
            block_work: BlockProgram::default(),
            workspace: SnapshotWorkspace::default(),
            program_forces: Vec::new(),
            coulomb_workspace: SemismoothWorkspace::default(),
        }
    }

    /// (K, B, rigid) of a contact normal row (D6 Hertz linearization).
    fn contact_law(
        &self,
        stiffness: Option<f64>,
        damping: Option<f64>,
        law: ComplianceLaw,
        gap: f64,
        phidot: f64,
        h: f64,
    ) -> (f64, f64, bool) {
        match stiffness {
            None => (0.0, 0.0, true),
            Some(k) => {
                let damping = damping.unwrap_or(0.0);
                match law {
                    ComplianceLaw::Linear => (k, damping, false),
                    ComplianceLaw::Hertz | ComplianceLaw::HuntCrossley => {
                        // Secant stiffness at the larger of the current and the
                        // predicted penetration, never below `hertz_floor` (D6).
                        let d_now = (-gap).max(0.0);
                        let d_pred = -(gap + h * phidot);
                        let d = d_now.max(d_pred).max(self.options.hertz_floor);
                        let ks = k * d.sqrt();
                        let bs = if d_now <= 0.0 {
                            0.0
                        } else if law == ComplianceLaw::Hertz {
                            damping
                        } else {
                            k * d_now * d_now.sqrt() * damping
                        };
                        (ks, bs, false)
                    }
                }
            }
        }
    }

    /// Collects the constraint rows of a step (D3 inclusion, D6 Hertz linearization); a
    /// joint limit is kept within its window widened by `widen` (0 in a step).
    fn rows(
        &self,
        model: &Model,
        snap: &ContactSnapshot<f64>,
        h: f64,
        widen: f64,
    ) -> Result<StepRows, SimError> {
        let nv = snap.nv();
        let v = &snap.v;
        let mut out = StepRows::default();
        for r in &snap.bilateral {
            let (k, b, rigid) = match r.stiffness {
                Some(k) => (k, r.damping.unwrap_or(0.0), false),
                None => (0.0, 0.0, true),
            };
            out.bilateral.push(Row {
                g: r.row.clone(),
                phi: r.phi,
                gdot_v: r.row_dot_v,
                k,
                b,
                rigid,
            });
        }
        // Joint limits: built here for the speculative policy (the snapshot keeps only
        // rows within the contact margin).
        for j in &model.joints {
            let Some(limit) = j.limit else { continue };
            if !matches!(j.kind, JointKind::Revolute | JointKind::Prismatic) {
                continue;
            }
            let qi = snap.q[j.q_index];
            for (suffix, phi, sign) in [
                ("lower", qi - limit.lower, 1.0),
                ("upper", limit.upper - qi, -1.0),
            ] {
                let window = model.contact_margin
                    + widen
                    + self.options.speculative_window * h * snap.v[j.v_index].abs();
                let keep = match self.options.inclusion {
                    Inclusion::Speculative => phi <= window,
                    Inclusion::PenetratingOnly => phi <= 0.0,
                };
                if !keep {
                    continue;
                }
                let mut g = DVector::zeros(nv);
                g[j.v_index] = sign;
                let (k, b, rigid) = match limit.stiffness {
                    Some(k) => (k, limit.damping.unwrap_or(0.0), false),
                    None => (0.0, 0.0, true),
                };
                out.unilateral.push(Row {
                    g,
                    phi,
                    gdot_v: 0.0,
                    k,
                    b,
                    rigid,
                });
                out.unilateral_names
                    .push(Some(format!("{}.{suffix}", j.name)));
            }
        }
        for (ci, c) in snap.contacts.iter().enumerate() {
            let phidot = c.rows.normal.dot(v);
            if self.options.inclusion == Inclusion::PenetratingOnly && c.gap > 0.0 {
                continue;
            }
            let (k, b, rigid) = self.contact_law(c.stiffness, c.damping, c.law, c.gap, phidot, h);
            if !rigid && h * h * k + h * b <= 0.0 {
                continue;
            }
            let normal = out.unilateral.len();
            out.unilateral.push(Row {
                g: c.rows.normal.clone(),
                phi: c.gap,
                gdot_v: c.normal_row_dot_v,
                k,
                b,
                rigid,
            });
            out.unilateral_names.push(None);
            let mut tangents = Vec::new();
            if c.friction > 0.0 {
                let bt = self.options.tangent_damping_times_h / h;
                for t in 0..c.rows.tangents.nrows() {
                    tangents.push(out.tangents.len());
                    out.tangents.push(Row {
                        g: c.rows.tangents.row(t).transpose(),
                        phi: 0.0,
                        gdot_v: c.tangent_rows_dot_v[t],
                        k: 0.0,
                        b: bt,
                        rigid: false,
                    });
                }
            }
            out.contacts.push(ContactRows {
                snapshot_index: ci,
                normal,
                tangents,
                mu: c.friction,
            });
        }
        Ok(out)
    }

    /// Bilateral-only step: one SPD solve of (W + R)λ = R q (§3.4, D9).
    fn bilateral_step(
        &self,
        rows: &[Row],
        mass: &DMatrix<f64>,
        f: &DVector<f64>,
        v0: &DVector<f64>,
        h: f64,
    ) -> Result<(DVector<f64>, DVector<f64>), SimError> {
        let nv = v0.len();
        let chol = mass
            .clone()
            .cholesky()
            .ok_or_else(|| invalid("mass matrix is not positive definite"))?;
        let v_free = v0 + chol.solve(f) * h;
        if rows.is_empty() {
            return Ok((v_free, DVector::zeros(0)));
        }
        let g = stack(rows, nv);
        let minv_gt = chol.solve(&g.transpose());
        let w = &g * &minv_gt;
        let gdot = self.options.bilateral_gdot;
        let gdv = DVector::from_iterator(
            rows.len(),
            rows.iter().map(|r| if gdot { r.gdot_v } else { 0.0 }),
        );
        let mg = if gdot {
            mhat_times(&w, &gdv)
        } else {
            DVector::zeros(rows.len())
        };
        let gv = &g * &v_free;
        let mut a = w.clone();
        let mut rhs = DVector::zeros(rows.len());
        for (i, r) in rows.iter().enumerate() {
            a[(i, i)] += r.r(h);
            rhs[i] = -(r.eps(h) / (h * h)) * r.phi - (gv[i] + h * gdv[i]) / h - r.r(h) * mg[i];
        }
        let lambda = a
            .cholesky()
            .ok_or_else(|| {
                invalid("W + R is not positive definite (rigid, redundant bilateral rows)")
            })?
            .solve(&rhs);
        let v1 = v_free + minv_gt * &lambda * h;
        Ok((v1, lambda))
    }
}

/// The bilateral elimination of a dense step (Woodbury form of the augmented mass) and
/// the free motion under it.
struct AugmentedFreeMotion {
    /// Stacked bilateral rows `G_b`.
    gb: DMatrix<f64>,
    /// The augmented mass `Λ⁻¹ = M + G_bᵀ S_b G_b`.
    aug: DMatrix<f64>,
    /// Factor of `aug`.
    lam: MassSolver,
    /// `a_b = −K_b φ_b0 − (hK_b + B_b) h Ġ_b v₀ − M̂_b Ġ_b v₀`.
    a_b: DVector<f64>,
    /// `v_free = Λ (M v₀ + h f + h G_bᵀ a_b)`.
    v_free: DVector<f64>,
}

/// The unilateral and tangent rows of a dense step stacked, with their Ġv terms (D1).
struct StackedRows {
    /// `G*`: unilateral rows, then tangent rows.
    gs: DMatrix<f64>,
    /// `Ġ v₀` per row (zero when D1's unilateral Ġ terms are off).
    gdv: DVector<f64>,
    /// `M̂_u Ġ_u v₀` of the unilateral rows.
    mg_u: DVector<f64>,
    /// `M̂_t Ġ_t v₀` of the tangent rows.
    mg_t: DVector<f64>,
}

/// One dense step after its rows and free motion are known: what the contact program and
/// the reports read.
struct DenseStep {
    /// Rows and compliance laws of the step.
    rows: StepRows,
    /// The bilateral elimination and the free motion.
    free: AugmentedFreeMotion,
    /// The unilateral and tangent rows stacked.
    stacked: StackedRows,
    /// Time step.
    h: f64,
}

impl DrumwrightStepper {
    /// The contact-model stage on a dense snapshot (the dense view of a step's contact set,
    /// or any snapshot with the actuation already in its M and f): the rows with their
    /// compliance laws, the bilateral elimination and the program of the configured
    /// coupling; returns v₁ and fills `self.last`.
    ///
    /// # Errors
    /// [`SimError::Unsupported`] for rows the formulation cannot take, solver failures, and
    /// [`SimError::Diverged`] for a non-finite velocity.
    pub fn step_velocity(
        &mut self,
        model: &Model,
        snap: &ContactSnapshot<f64>,
        h: f64,
    ) -> Result<DVector<f64>, SimError> {
        let rows = self.rows(model, snap, h, 0.0)?;
        let mut report = StepReport::default();
        if rows.unilateral.is_empty() && rows.tangents.is_empty() {
            let (v1, lambda) =
                self.bilateral_step(&rows.bilateral, &snap.mass_matrix, &snap.forces, &snap.v, h)?;
            report.bilateral = lambda.iter().copied().collect();
            self.last = report;
            return Ok(v1);
        }
        let free = self.augmented_free_motion(&rows, snap, h)?;
        let stacked = self.stack_contact_rows(&rows, &snap.mass_matrix, snap.nv())?;
        let one_program = matches!(self.options.friction, FrictionCoupling::OneProgram { .. });
        let program = self.staged_program(&rows, &free, &stacked, snap, h, !one_program);
        let step = DenseStep {
            rows,
            free,
            stacked,
            h,
        };
        let lambda = self.solve_contact_program(snap, &step, &program, &mut report)?;
        let (free, gs) = (&step.free, &step.stacked.gs);
        let v1 = &free.v_free + free.lam.solve_vector(&(gs.transpose() * &lambda)) * h;
        if !v1.iter().all(|x| x.is_finite()) {
            return Err(SimError::Diverged {
                t: snap.t + h,
                reason: "drumwright produced a non-finite velocity".into(),
            });
        }
        step_reports(&step, &v1, &lambda, &mut report);
        self.last = report;
        Ok(v1)
    }

    /// Eliminates the bilateral rows with the augmented mass `M + G_bᵀ S_b G_b` (Woodbury
    /// form) and computes the free motion `v_free` under it.
    fn augmented_free_motion(
        &self,
        rows: &StepRows,
        snap: &ContactSnapshot<f64>,
        h: f64,
    ) -> Result<AugmentedFreeMotion, SimError> {
        let nv = snap.nv();
        let (v0, f, mass) = (&snap.v, &snap.forces, &snap.mass_matrix);
        if rows.bilateral.iter().any(|r| r.rigid) {
            return Err(invalid(
                "rigid bilateral constraints together with unilateral rows need stiffness \
                 (the augmented mass M + G_bᵀS_bG_b is undefined)",
            ));
        }
        let gb = stack(&rows.bilateral, nv);
        let nb = rows.bilateral.len();
        let sb = DVector::from_iterator(nb, rows.bilateral.iter().map(|r| r.s(h)));
        let mut aug = mass.clone();
        if nb > 0 {
            aug += gb.transpose() * DMatrix::from_diagonal(&sb) * &gb;
        }
        let lam = MassSolver::new(&aug, snap.t)?;
        let mut a_b = DVector::zeros(nb);
        if nb > 0 {
            let gdot = self.options.bilateral_gdot;
            let gdv = DVector::from_iterator(
                nb,
                rows.bilateral
                    .iter()
                    .map(|r| if gdot { r.gdot_v } else { 0.0 }),
            );
            let mg = if gdot {
                let minv = mass
                    .clone()
                    .cholesky()
                    .ok_or_else(|| invalid("mass matrix is not positive definite"))?;
                let wb = &gb * minv.solve(&gb.transpose());
                mhat_times(&wb, &gdv)
            } else {
                DVector::zeros(nb)
            };
            for (i, r) in rows.bilateral.iter().enumerate() {
                a_b[i] = -r.k * r.phi - (h * r.k + r.b) * h * gdv[i] - mg[i];
            }
        }
        let rhs = mass * v0 + f * h + gb.transpose() * &a_b * h;
        let v_free = lam.solve_vector(&rhs);
        Ok(AugmentedFreeMotion {
            gb,
            aug,
            lam,
            a_b,
            v_free,
        })
    }

    /// Stacks the unilateral and tangent rows into `G*` with their `Ġv` and, when D1's
    /// unilateral Ġ terms are on, `M̂Ġv` per group (D2).
    fn stack_contact_rows(
        &self,
        rows: &StepRows,
        mass: &DMatrix<f64>,
        nv: usize,
    ) -> Result<StackedRows, SimError> {
        let nu = rows.unilateral.len();
        let nt = rows.tangents.len();
        let mut all = rows.unilateral.clone();
        all.extend(rows.tangents.iter().cloned());
        let gs = stack(&all, nv);
        let ugdot = self.options.unilateral_gdot;
        let gdv = DVector::from_iterator(
            nu + nt,
            all.iter().map(|r| if ugdot { r.gdot_v } else { 0.0 }),
        );
        let (mg_u, mg_t) = if ugdot {
            let minv = mass
                .clone()
                .cholesky()
                .ok_or_else(|| invalid("mass matrix is not positive definite"))?;
            let gu = gs.rows(0, nu).into_owned();
            let gt = gs.rows(nu, nt).into_owned();
            let wu = &gu * minv.solve(&gu.transpose());
            let wt = &gt * minv.solve(&gt.transpose());
            (
                mhat_times(&wu, &gdv.rows(0, nu).into_owned()),
                mhat_times(&wt, &gdv.rows(nu, nt).into_owned()),
            )
        } else {
            (DVector::zeros(nu), DVector::zeros(nt))
        };
        Ok(StackedRows {
            gs,
            gdv,
            mg_u,
            mg_t,
        })
    }

    /// The staged [`Program`] of a dense step: the Delassus matrix `W = G* Λ G*ᵀ` (or the
    /// sparse data of its lifted form), `R q` and `R` of the unilateral rows, `S_t` and `d_t`
    /// of the tangent rows. Without `delassus`, `W` is left empty: the one program works
    /// in the velocity and needs `W` only where it falls back to the staged programs.
    fn staged_program(
        &self,
        rows: &StepRows,
        free: &AugmentedFreeMotion,
        stacked: &StackedRows,
        snap: &ContactSnapshot<f64>,
        h: f64,
        delassus: bool,
    ) -> Program {
        let nv = snap.nv();
        let nu = rows.unilateral.len();
        let nt = rows.tangents.len();
        let n_star = nu + nt;
        let literal = matches!(self.options.friction, FrictionCoupling::Literal { .. })
            && !rows.tangents.is_empty();
        let use_lift = delassus
            && n_star >= self.options.sparse_min_rows.max(2)
            && !literal
            && (rows.tangents.is_empty() || self.options.sparse_with_friction);
        let StackedRows {
            gs,
            gdv,
            mg_u,
            mg_t,
        } = stacked;
        let (w, lift) = if use_lift {
            let aug = &free.aug;
            let lift = Lift {
                gu: dense_triplets(&gs.rows(0, nu).into_owned()),
                gt: dense_triplets(&gs.rows(nu, nt).into_owned()),
                aug_upper: upper_triplets(aug),
                aug: dense_triplets(aug),
                nv,
                gs: gs.clone(),
            };
            (DMatrix::zeros(0, 0), Some(lift))
        } else if delassus {
            (free.lam.delassus_dense(gs), None)
        } else {
            (DMatrix::zeros(0, 0), None)
        };
        let gv = gs * &free.v_free;
        let mut rq = DVector::zeros(nu);
        let mut r = DVector::zeros(nu);
        for (i, row) in rows.unilateral.iter().enumerate() {
            r[i] = row.r(h);
            rq[i] = -(row.eps(h) / (h * h)) * row.phi - (gv[i] + h * gdv[i]) / h - r[i] * mg_u[i];
        }
        let mut s_t = DVector::zeros(nt);
        let mut d_t = DVector::zeros(nt);
        for (i, row) in rows.tangents.iter().enumerate() {
            s_t[i] = row.s(h);
            d_t[i] = (h * row.k + row.b) * (gv[nu + i] + h * gdv[nu + i]) + mg_t[i];
        }
        Program {
            w,
            rq,
            r,
            s_t,
            d_t,
            nu,
            lift,
            planar: snap.dimension == Dimension::Planar,
        }
    }

    /// Solves a dense step's contact program by the configured [`FrictionCoupling`];
    /// returns the forces of the unilateral rows, then of the tangent rows.
    fn solve_contact_program(
        &mut self,
        snap: &ContactSnapshot<f64>,
        step: &DenseStep,
        program: &Program,
        report: &mut StepReport,
    ) -> Result<DVector<f64>, SimError> {
        let (rows, lam, h) = (&step.rows, &step.free.lam, step.h);
        let nt = rows.tangents.len();
        Ok(match self.options.friction {
            FrictionCoupling::Literal { zeta } if nt > 0 => {
                if self.options.unilateral != UnilateralForm::MinNorm {
                    return Err(SimError::InvalidOption {
                        option: "friction",
                        reason: "the literal Appendix 0.A program exists only for the \
                                 minimum-norm form; use the staged coupling with MaxLcp"
                            .into(),
                    });
                }
                self.literal_program(program, rows, zeta.unwrap_or(1.0 / h), report)?
            }
            FrictionCoupling::Literal { .. } => {
                self.normal_stage(program, lam, &DVector::zeros(0), report)?
            }
            FrictionCoupling::Staged { sweeps } => {
                self.staged_solve(program, lam, rows, sweeps, report)?
            }
            FrictionCoupling::OneProgram { rounds } => {
                let input = self.dense_program_input(snap, step, program.planar)?;
                let solved = self.solve_one_program(&input, h, rounds)?.filter(|sol| {
                    self.options.unilateral == UnilateralForm::MaxLcp
                        || dense_min_norm_certificate(
                            &input,
                            lam,
                            &step.stacked.gs,
                            &program.r,
                            &sol.lambda,
                        )
                });
                let lambda = match solved {
                    Some(sol) => {
                        report.one_program = true;
                        report.fell_back = sol.fell_back;
                        report.newton_iterations = sol.newton_iterations;
                        report.program_rounds = sol.rounds;
                        sol.lambda
                    }
                    None => {
                        report.fell_back = true;
                        let sweeps = self.options.fallback_sweeps;
                        let (free, stacked) = (&step.free, &step.stacked);
                        let full = self.staged_program(rows, free, stacked, snap, h, true);
                        self.staged_solve(&full, lam, rows, sweeps, report)?
                    }
                };
                let nu = rows.unilateral.len();
                self.remember_forces(rows.contacts.iter().map(|c| {
                    let sc = &snap.contacts[c.snapshot_index];
                    let mut f = [lambda[c.normal], 0.0, 0.0];
                    for (k, &t) in c.tangents.iter().take(2).enumerate() {
                        f[1 + k] = lambda[nu + t];
                    }
                    ((sc.collider_a, sc.collider_b, sc.feature), f)
                }));
                lambda
            }
        })
    }
}

/// Fills the step's reports from `v₁` and the contact forces `lambda`: bilateral forces
/// `λ_b = a_b − (hK_b + B_b) G_b v₁`, named unilateral forces, and per contact its forces,
/// spring force and slip.
fn step_reports(
    step: &DenseStep,
    v1: &DVector<f64>,
    lambda: &DVector<f64>,
    report: &mut StepReport,
) {
    let (rows, h) = (&step.rows, step.h);
    let nu = rows.unilateral.len();
    let gdv = &step.stacked.gdv;
    let gbv = &step.free.gb * v1;
    report.bilateral = rows
        .bilateral
        .iter()
        .enumerate()
        .map(|(i, row)| step.free.a_b[i] - (h * row.k + row.b) * gbv[i])
        .collect();
    let gv1 = &step.stacked.gs * v1;
    for (i, name) in rows.unilateral_names.iter().enumerate() {
        if let Some(name) = name {
            report.unilateral.push((name.clone(), lambda[i]));
        }
    }
    for c in &rows.contacts {
        let row = &rows.unilateral[c.normal];
        let phidot1 = gv1[c.normal] + h * gdv[c.normal];
        let phi1 = row.phi + h * phidot1;
        let spring = if row.rigid {
            lambda[c.normal]
        } else {
            (-row.k * phi1 - row.b * phidot1).max(0.0)
        };
        report.contacts.push(ContactForce {
            contact: c.snapshot_index,
            normal: lambda[c.normal],
            tangent: c.tangents.iter().map(|&t| lambda[nu + t]).collect(),
            spring_normal: spring,
            slip: c.tangents.iter().map(|&t| gv1[nu + t]).collect(),
        });
    }
}

trait PushMany {
    fn push_many(self, other: &DVector<f64>) -> DVector<f64>;
}

impl PushMany for DVector<f64> {
    fn push_many(self, other: &DVector<f64>) -> DVector<f64> {
        let n = self.len();
        let mut out = self.resize_vertically(n + other.len(), 0.0);
        out.rows_mut(n, other.len()).copy_from(other);
        out
    }
}

/// The paper's Y form of a bilateral-only step (eqs 61, 62, 53; D9), kept for comparison:
/// `φ̇₁ = Y (φ̇₀ − h W K φ₀ + h G M⁻¹ f)`, `Y = (I + W S)⁻¹`, `λ₁ = −Kφ₁ − Bφ̇₁`, with the
/// Ġ terms off. Returns v₁. Loses precision once h²k ≳ 10¹¹ (D9 of
/// docs/decisions/003-stable-constraint-solver.md).
///
/// # Errors
/// [`SimError::Unsupported`] for rigid rows, a singular mass matrix or a singular I + WS.
pub fn y_form_velocity(snap: &ContactSnapshot<f64>, h: f64) -> Result<DVector<f64>, SimError> {
    let nv = snap.nv();
    let n = snap.bilateral.len();
    let chol = snap
        .mass_matrix
        .clone()
        .cholesky()
        .ok_or_else(|| invalid("mass matrix is not positive definite"))?;
    let mut g = DMatrix::zeros(n, nv);
    let mut k = DVector::zeros(n);
    let mut b = DVector::zeros(n);
    let mut phi = DVector::zeros(n);
    for (i, r) in snap.bilateral.iter().enumerate() {
        g.set_row(i, &r.row.transpose());
        k[i] = r
            .stiffness
            .ok_or_else(|| invalid("the Y form needs soft rows"))?;
        b[i] = r.damping.unwrap_or(0.0);
        phi[i] = r.phi;
    }
    let minv_gt = chol.solve(&g.transpose());
    let w = &g * &minv_gt;
    let s = DMatrix::from_diagonal(&(k.map(|x| h * h * x) + b.map(|x| h * x)));
    let ymat = (DMatrix::identity(n, n) + &w * s)
        .try_inverse()
        .ok_or_else(|| invalid("I + W S is singular"))?;
    let phidot0 = &g * &snap.v;
    let minv_f = chol.solve(&snap.forces);
    let kphi = k.component_mul(&phi);
    let phidot1 = ymat * (phidot0 - &w * kphi * h + &g * minv_f * h);
    let phi1 = &phi + &phidot1 * h;
    let lambda = -k.component_mul(&phi1) - b.component_mul(&phidot1);
    Ok(&snap.v + chol.solve(&(g.transpose() * lambda + &snap.forces)) * h)
}

impl ContactModel for DrumwrightStepper {
    const NAME: &'static str = "drumwright";

    /// The options are checked where a step uses them.
    fn check_options(&self) -> Result<(), SimError> {
        Ok(())
    }

    /// The block fast path reads the per-body view: when its options allow it and the
    /// actuation has no servos (whose implicit terms change the mass blocks).
    fn per_body_view(&self, step: &crate::pipeline::Step<'_>) -> bool {
        self.fast_path_allowed() && !step.input.has_servos()
    }

    fn workspace(&mut self) -> &mut SnapshotWorkspace {
        &mut self.workspace
    }

    /// The block fast path on the per-body view when it applies and certifies its answer;
    /// else the dense rows and programs on the dense view ([`DrumwrightStepper::step_velocity`]).
    fn velocity(
        &mut self,
        step: &crate::pipeline::Step<'_>,
        contacts: &mut ContactSet<'_>,
    ) -> Result<DVector<f64>, SimError> {
        let mut v1 = None;
        if let Some(view) = contacts.blocks() {
            v1 = self.try_block_step(view, &step.state.v, step.h)?;
        }
        let v1 = match v1 {
            Some(v1) => v1,
            None => {
                let snap = contacts.dense()?;
                self.step_velocity(step.model, snap, step.h)?
            }
        };
        let t = &mut self.totals;
        t.steps += 1;
        t.newton_iterations += self.last.newton_iterations;
        t.program_rounds += self.last.program_rounds;
        t.fell_back += usize::from(self.last.fell_back);
        Ok(v1)
    }
}

impl Stepper for DrumwrightStepper {
    fn name(&self) -> &'static str {
        "drumwright"
    }

    fn advance(&mut self, step: &crate::pipeline::Step<'_>) -> Result<State, SimError> {
        crate::contact_set::rigid_step(self, step)
    }

    fn last_step_converged(&self) -> bool {
        !self.last.sweep_limit_reached
    }

    fn last_step_fell_back(&self) -> bool {
        self.last.fell_back
    }

    fn contact_margins(&self, model: &Model, h: f64) -> ContactMargins {
        if self.options.velocity_margin {
            ContactMargins::speculative(model.contact_margin, h)
        } else {
            ContactMargins::uniform(model.contact_margin)
        }
    }

    fn step_problem(
        &self,
        step: &crate::pipeline::Step<'_>,
        like: Option<&crate::derivatives::StepProblem>,
    ) -> Result<Option<crate::derivatives::StepProblem>, SimError> {
        self.coulomb_step_problem(step, like)
    }

    fn last_contact_impulses(&self, h: f64) -> Option<Vec<crate::stepper::ContactImpulse>> {
        Some(
            self.last
                .contacts
                .iter()
                .map(|c| crate::stepper::ContactImpulse {
                    contact: c.contact,
                    normal: c.normal * h,
                    tangent: c.tangent.iter().map(|t| t * h).collect(),
                })
                .collect(),
        )
    }
}

/// Accepts one normal/friction alternation of the staged solve (normal impulses `lu`,
/// friction impulses `lt`) and says whether the alternation has converged: unchanged friction
/// leaves the normal stage unchanged (exactly done), otherwise the largest change must be
/// within `tolerance` relative to 1 + the largest impulse.
fn accept_sweep(
    lu: &mut DVector<f64>,
    lt: &mut DVector<f64>,
    lu_new: DVector<f64>,
    lt_new: DVector<f64>,
    tolerance: f64,
) -> bool {
    let friction_change = (&lt_new - &*lt).amax();
    let change = (&lu_new - &*lu).amax().max(friction_change);
    let scale = 1.0 + lu_new.amax().max(lt_new.amax());
    *lu = lu_new;
    *lt = lt_new;
    friction_change == 0.0 || change <= tolerance * scale
}

impl DrumwrightStepper {
    /// The staged normal/friction alternation (D5) of a dense [`Program`]: at most `sweeps`
    /// sweeps; returns the forces of the unilateral rows, then of the tangent rows.
    fn staged_solve(
        &self,
        program: &Program,
        lam: &MassSolver,
        rows: &StepRows,
        sweeps: usize,
        report: &mut StepReport,
    ) -> Result<DVector<f64>, SimError> {
        let nu = rows.unilateral.len();
        let nt = rows.tangents.len();
        let mut lt = DVector::zeros(nt);
        let mut lu = DVector::zeros(nu);
        let mut converged = false;
        for _ in 0..sweeps.max(1) {
            let lu_new = self.normal_stage(program, lam, &lt, report)?;
            if nt == 0 {
                lu = lu_new;
                converged = true;
                break;
            }
            let lt_new = self.friction_stage(program, lam, rows, &lu_new, report)?;
            report.sweeps += 1;
            if accept_sweep(
                &mut lu,
                &mut lt,
                lu_new,
                lt_new,
                self.options.sweep_tolerance,
            ) {
                converged = true;
                break;
            }
        }
        report.sweep_limit_reached = !converged;
        Ok(lu.push_many(&lt))
    }

    /// The one program of a dense step (rows of a [`ContactSnapshot`], bilateral rows
    /// eliminated into the augmented mass `lam`): `v̂ = −(ε/h)φ₀ − hĠv − hR M̂Ġv` per
    /// unilateral row and `v̂ = −hĠv − hR M̂Ġv` per tangent row (the Ġ terms of D1 when on).
    fn dense_program_input<'a>(
        &self,
        snap: &'a ContactSnapshot<f64>,
        step: &'a DenseStep,
        planar: bool,
    ) -> Result<ProgramInput<'a>, SimError> {
        let (rows, h) = (&step.rows, step.h);
        let (aug, lam, v_free) = (&step.free.aug, &step.free.lam, &step.free.v_free);
        let StackedRows {
            gs,
            gdv,
            mg_u,
            mg_t,
        } = &step.stacked;
        let nu = rows.unilateral.len();
        let w_diag = lam.delassus_diagonal(gs);
        let jac = |g: &DVector<f64>| -> Vec<(usize, f64)> {
            g.iter()
                .enumerate()
                .filter(|(_, x)| **x != 0.0)
                .map(|(j, &x)| (j, x))
                .collect()
        };
        let normals = rows
            .unilateral
            .iter()
            .enumerate()
            .map(|(i, row)| ProgramRow {
                jac: jac(&row.g),
                r: self.program_r(row, w_diag[i], h, false),
                v_hat: -(row.eps(h) / h) * row.phi - h * gdv[i] - h * row.r(h) * mg_u[i],
            })
            .collect();
        let tangents = rows
            .tangents
            .iter()
            .enumerate()
            .map(|(t, row)| ProgramRow {
                jac: jac(&row.g),
                r: self.program_r(row, w_diag[nu + t], h, true),
                v_hat: -h * gdv[nu + t] - h * row.r(h) * mg_t[t],
            })
            .collect();
        let force_guess = force_guesses(
            &self.program_forces,
            rows.contacts.iter().map(|c| {
                let sc = &snap.contacts[c.snapshot_index];
                (sc.collider_a, sc.collider_b, sc.feature)
            }),
        );
        Ok(ProgramInput {
            mass: ProgramMass::Dense(aug),
            v_free,
            normals,
            tangents,
            contacts: &rows.contacts,
            force_guess,
            warm: &snap.v,
            planar,
        })
    }

    /// Keeps the forces `[λ_n, λ_t₁, λ_t₂]` of this step's contacts by contact identity: the
    /// next one program's warm start and friction bounds.
    fn remember_forces(&mut self, forces: impl Iterator<Item = ((usize, usize, usize), [f64; 3])>) {
        self.program_forces.clear();
        self.program_forces.extend(forces);
        self.program_forces.sort_unstable_by_key(|a| a.0);
        self.program_forces.dedup_by(|a, b| a.0 == b.0);
    }
}

/// Whether the one program's normal forces (the LCP / max() solution, D4) are also the
/// minimum-norm ones of the paper's QP (eqs 83–85) for its friction forces: the KKT
/// certificate of [`min_norm_certificate`] on `R + W_uu`.
fn dense_min_norm_certificate(
    input: &ProgramInput<'_>,
    lam: &MassSolver,
    gs: &DMatrix<f64>,
    r: &DVector<f64>,
    lambda: &DVector<f64>,
) -> bool {
    let nu = input.normals.len();
    if nu < 2 {
        return true;
    }
    let gu = gs.rows(0, nu).into_owned();
    let mut a = lam.delassus_dense(&gu);
    for i in 0..nu {
        a[(i, i)] += r[i];
    }
    let mut t = Vec::new();
    for j in 0..nu {
        for i in 0..nu {
            if a[(i, j)] != 0.0 {
                t.push((i, j, a[(i, j)]));
            }
        }
    }
    let a = SymSparse::from_triplets(nu, &t);
    let lu = lambda.rows(0, nu).into_owned();
    min_norm_certificate(&a, &lu, block::FAST_KKT_TOL)
}
