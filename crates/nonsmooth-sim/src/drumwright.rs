//! Drumwright's unconditionally stable first-order constraint solver (seed 003: E. Drumwright,
//! "An Unconditionally Stable First-Order Constraint Solver for Multibody Systems").
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
//! Per-row quantities (digest §3.4): `S = h²K + hB`, `R = S⁻¹`, `ε = hK/(hK + B)`; a rigid row
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
//! # Decisions (seed 003 digest §5), each exercised by a test in this module
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
//! - **D4** (min-norm QP vs max()): [`UnilateralForm::MinNorm`] is the paper's QP (eqs 83–85,
//!   Hessian ζI); [`UnilateralForm::MaxLcp`] is the LCP-equivalent convex QP
//!   `min ½λᵀ(R + GΛGᵀ)λ − λᵀR q, λ ≥ 0` whose solution is λᵢ = max(0, spring forceᵢ).
//! - **D5** (ζ and λ_n inflation): [`FrictionCoupling::Literal`] solves the appendix program
//!   with ζ = 1/h (which inflates λ_n, see the digest §4.5); [`FrictionCoupling::Staged`]
//!   (default) is the mitigation: a lexicographic/fixed-point split, normal rows first with
//!   the friction forces of the previous sweep fixed, then friction with λ_n fixed, repeated.
//!   The normal forces then equal their spring values.
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
//! # Block fast path (issue #4: the sphere stack)
//! With [`DrumwrightOptions::fast_solver`] (default on), a model whose joints are all root
//! joints, without bilateral constraints or joint limits, stepped with the staged coupling
//! (D5) and without contact Ġ (D1), is stepped from a [`BlockSnapshot`] instead of the
//! dense [`ContactSnapshot`]: block-diagonal M (one Cholesky per body), Jacobian rows stored
//! as per-body blocks, contacts from a sweep-and-prune broad phase, and the Delassus matrix
//! `W = G M⁻¹ Gᵀ` assembled sparsely body by body (contacts couple only through shared
//! bodies; for the stack W is block tridiagonal), so a step costs O(bodies + contacts).
//! When W is not sparse (Σ over bodies of (rows on the body)² above max(16·rows + 1024,
//! rows²/4), e.g.
//! the 900 points of the foundation on one body) the Clarabel path is used unchanged.
//! The two stages are solved by the specialized solvers of [`crate::drumwright_fast`]:
//! - normal stage: the LCP `λ ≥ 0 ⊥ (R + W_uu)λ − c ≥ 0` by block principal pivoting,
//!   warm-started from the previous step's active contacts, each pivot one envelope
//!   Cholesky factorization; accepted when the complementarity residual is ≤ 1e-9
//!   (relative) and, for the min-norm form (D4), when the KKT multipliers of the min-norm
//!   QP certify that the LCP solution is also the min-norm one (always so for an M-matrix,
//!   as for the stack's vertical normal rows);
//! - friction stage: the all-sticking minimizer of ½‖λ_t‖² + ½‖Eλ_t + e‖²
//!   (E = I + S_t W_tt) from the quasi-definite augmented system `[I Eᵀ; E −I]`
//!   (envelope LDLᵀ, one refinement step, normwise backward error ≤ 1e-13), accepted when
//!   it lies in every Coulomb disk (then it is the constrained optimum).
//!
//! A stage that fails its check (a sliding contact, a min-norm solution that differs from
//! the LCP one) is solved by Clarabel on the dense program instead; the step's
//! [`StepReport::fast_solves`] and [`StepReport::fallbacks`] count both. The test file
//! `tests/fast_solver.rs` checks each stage against Clarabel on the stack (N = 1, 10, 25),
//! the incline and random 2D/3D sphere piles.
//!
//! The per-step data of the fast path live in workspaces kept in the stepper, overwritten
//! in place from step to step: the block snapshot ([`BlockSnapshot::update`] reuses the
//! storage of its mass and Jacobian blocks), the mass-block inverses, the rows, the sparse W
//! and its sub-blocks and the report entries; the program assembly allocates nothing in
//! steady state. Per-body blocks are fixed-size (6 × 6 inverses, 6-vectors of row
//! coefficients, zero-padded for joints with fewer coordinates). A mass block equal entry
//! for entry to the one its cached inverse came from (floating bodies whose origin is the
//! centre of mass, e.g. spheres: the block depends only on the model) is not factored
//! again. Row i of W is the merge of the sorted row lists of its at most two bodies (no
//! sort). The min-norm certificate of the normal stage reuses the pivoting method's last
//! envelope factorization when its index set is the same (the same arithmetic as factoring
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

use crate::drumwright_fast::{
    friction_gradient, friction_objective, friction_residual, lcp_residual,
    min_norm_certificate_factored, solve_friction_sticking, solve_lcp_factored, SymSparse,
};
use crate::{SimError, Stepper};
use nalgebra::{DMatrix, DVector, Matrix6, Vector6};
use nonsmooth_core::dynamics::{check_state, integrate_configuration};
use nonsmooth_core::geometry::ContactMargins;
use nonsmooth_core::snapshot::{BlockSnapshot, ContactSnapshot};
use nonsmooth_core::{ComplianceLaw, Dimension, JointKind, Model, State};
use nonsmooth_solvers::conic::{Cone, ConicOptions, ConicProblemBuilder};
use nonsmooth_solvers::{SolveStatus, SolverError};

/// Which constraint rows enter a step (decision D3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inclusion {
    /// Every contact within the model's contact margin and every limit row of a limited
    /// joint, whatever the sign of φ₀ (the program decides whether it carries force).
    Speculative,
    /// Only rows with φ₀ ≤ 0 (detected penetration or limit violation).
    PenetratingOnly,
}

/// Semantics of unilateral and contact-normal rows (decision D4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnilateralForm {
    /// The paper's minimum-norm QP (eqs 83–85): min ½ζ‖λ‖² s.t. Aλ ≥ q, λ ≥ 0.
    MinNorm,
    /// The LCP-equivalent ("max()") convex QP: min ½λᵀ(R + GΛGᵀ)λ − λᵀRq s.t. λ ≥ 0.
    MaxLcp,
}

/// How normal and friction forces are coupled (decision D5).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FrictionCoupling {
    /// The single program of Appendix 0.A (eqs 176–186) with weight ζ on λ_n and λ_u
    /// (`None` = the paper's ζ = 1/h). Requires [`UnilateralForm::MinNorm`].
    Literal {
        /// Weight ζ on λ_n and λ_u; `None` means 1/h.
        zeta: Option<f64>,
    },
    /// Lexicographic / fixed-point split (mitigation of D5, after Anitescu–Hart): at most
    /// `sweeps` times, solve the normal and unilateral rows with the current friction forces
    /// fixed, then the friction rows (slack objective of eq 99, Coulomb cone with λ_n
    /// fixed), until the forces change by at most
    /// [`DrumwrightOptions::sweep_tolerance`] (relative).
    Staged {
        /// Maximum number of normal/friction sweeps.
        sweeps: usize,
    },
}

/// Options of [`DrumwrightStepper`].
#[derive(Debug, Clone, PartialEq)]
pub struct DrumwrightOptions {
    /// D3: which rows enter a step.
    pub inclusion: Inclusion,
    /// D4: semantics of unilateral rows.
    pub unilateral: UnilateralForm,
    /// D5: normal/friction coupling.
    pub friction: FrictionCoupling,
    /// D6: smallest penetration (m) at which a Hertz or Hunt–Crossley contact's secant
    /// stiffness k√d is evaluated, so that touching and approaching contacts are stiff.
    pub hertz_floor: f64,
    /// D5: relative force change at which the staged sweeps stop.
    pub sweep_tolerance: f64,
    /// D3: a speculative joint-limit row enters when φ₀ ≤ margin + w·h·|φ̇₀| (w this
    /// factor, margin the model's contact margin); farther rows cannot carry force within
    /// the step and only degrade the conditioning of the program.
    pub speculative_window: f64,
    /// D1: include Ġv and M̂Ġv for bilateral rows.
    pub bilateral_gdot: bool,
    /// D1: include Ġv and M̂Ġv for unilateral, contact-normal and friction rows.
    pub unilateral_gdot: bool,
    /// Tangential damping B_r = B_s = `tangent_damping_times_h / h` (paper §6.4: 10⁶/h).
    pub tangent_damping_times_h: f64,
    /// Options of the conic solver (Clarabel).
    pub solver: ConicOptions,
    /// Fast path (issue deliverable 2): build the staged programs in sparse "lifted" form,
    /// with the auxiliary velocities `u = Λ Gᵀ λ` as extra variables and the equalities
    /// `(M + G_bᵀS_bG_b) u − Gᵀ λ = 0`, so the dense Delassus matrix `G Λ Gᵀ` is never
    /// formed and the KKT system keeps the sparsity of G (contacts couple only through
    /// shared bodies). Mathematically the same program as the dense form; the test
    /// `lifted_programs_agree_with_the_dense_delassus_form` checks agreement to 1e-6.
    /// Used when the step has at least this many contact/unilateral rows (`usize::MAX`
    /// disables it). Small programs stay dense: there the dense form is as fast and Clarabel
    /// reaches a tighter accuracy on the badly scaled Hertz rows. A lifted solve that fails
    /// falls back to the dense form.
    pub sparse_min_rows: usize,
    /// Also lift the friction stage (off by default: with the tangential damping
    /// B_r = 10⁶/h the lifted friction program is badly scaled and Clarabel's answer differs
    /// from the dense one by up to 0.5 %, above the 1e-6 agreement the issue requires).
    pub sparse_friction: bool,
    /// Use the lifted normal stage also in steps with friction rows (off by default: on the
    /// sphere stack the lifted KKT system is slower in Clarabel than the dense form, measured
    /// 22 ms versus 12 ms per step at N = 100; on the frictionless 900-element foundation it
    /// is about 10× faster).
    pub sparse_with_friction: bool,
    /// Block fast path (issue #4, sphere stack): for models whose joints are all root
    /// joints, without bilateral constraints or joint limits, with the staged coupling and
    /// no contact Ġ, build the step from a [`BlockSnapshot`] (block-diagonal M, Jacobian
    /// rows as per-body blocks, sparse Delassus matrix) and solve the normal stage by block
    /// principal pivoting and the friction stage by a sparse Cholesky / semismooth Newton
    /// solver ([`crate::drumwright_fast`]), each verified by a KKT check (relative 1e-9),
    /// with Clarabel as the fallback ([`StepReport::fallbacks`]). Skipped (the Clarabel path
    /// is used) when the Delassus matrix is not sparse, e.g. many contacts on one body.
    pub fast_solver: bool,
    /// D3 for fast bodies: detect contacts within
    /// [`nonsmooth_core::snapshot::velocity_margins`] (each collider's margin widened by the
    /// distance its fastest point travels in one step) so that a body moving faster than
    /// margin/h meets its speculative contact before it passes through (default on).
    pub velocity_margin: bool,
}

impl Default for DrumwrightOptions {
    fn default() -> Self {
        DrumwrightOptions {
            inclusion: Inclusion::Speculative,
            unilateral: UnilateralForm::MinNorm,
            friction: FrictionCoupling::Staged { sweeps: 100 },
            sweep_tolerance: 1e-7,
            hertz_floor: 1e-6,
            speculative_window: 2.0,
            bilateral_gdot: true,
            unilateral_gdot: false,
            tangent_damping_times_h: 1e6,
            solver: ConicOptions {
                presolve: false,
                eps_abs: 1e-10,
                eps_rel: 1e-10,
                ..ConicOptions::default()
            },
            sparse_min_rows: 48,
            sparse_friction: false,
            sparse_with_friction: false,
            fast_solver: true,
            velocity_margin: true,
        }
    }
}

/// Forces of one contact after a step.
#[derive(Debug, Clone, PartialEq)]
pub struct ContactForce {
    /// Index of the contact in the step's [`ContactSnapshot::contacts`].
    pub contact: usize,
    /// Normal force λ_n (N).
    pub normal: f64,
    /// Friction forces λ_t along the contact tangents.
    pub tangent: Vec<f64>,
    /// The spring–damper value max(0, −K φ₁ − B φ̇₁) at the end of the step.
    pub spring_normal: f64,
    /// End-of-step slip velocity φ̇_t1 = G_t v₁ along the tangents.
    pub slip: Vec<f64>,
}

/// What the last step computed.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StepReport {
    /// Bilateral forces λ_b, in the order of [`ContactSnapshot::bilateral`].
    pub bilateral: Vec<f64>,
    /// Unilateral (joint-limit) forces with their row names.
    pub unilateral: Vec<(String, f64)>,
    /// Contact forces.
    pub contacts: Vec<ContactForce>,
    /// Status of the last conic solve, if one was needed.
    pub solver_status: Option<SolveStatus>,
    /// Conic solves in the step.
    pub solves: usize,
    /// Nonzeros of the (upper-triangular) Hessian of the last conic program.
    pub hessian_nnz: usize,
    /// Conic solves of the step that used the lifted sparse form (fast path).
    pub lifted_solves: usize,
    /// Stage solves of the step done by the specialized solvers of the block fast path
    /// ([`DrumwrightOptions::fast_solver`]) and accepted by their KKT check.
    pub fast_solves: usize,
    /// Stage solves of the block fast path that fell back to Clarabel (the specialized
    /// solver did not converge or failed its KKT check).
    pub fallbacks: usize,
    /// Staged normal/friction sweeps of the step (D5).
    pub sweeps: usize,
    /// Whether the step ended at the limit of staged sweeps without meeting
    /// [`DrumwrightOptions::sweep_tolerance`], its last sweep accepted (counted by
    /// [`Stepper::last_step_converged`]).
    pub sweep_limit_reached: bool,
}

/// The `drumwright` stepper (seed 003).
#[derive(Debug, Clone, Default)]
pub struct DrumwrightStepper {
    /// Options (decisions D1–D10).
    pub options: DrumwrightOptions,
    /// Forces and solver data of the last successful step.
    pub last: StepReport,
    /// Warm start of the block fast path: whether each contact (collider A, collider B,
    /// feature) carried a normal force in the previous step (sorted by key).
    warm_active: Vec<((usize, usize, usize), bool)>,
    /// Workspace of the block fast path (allocations reused from step to step).
    block_work: BlockProgram,
    /// The block snapshot of the last fast-path step, updated in place by the next one.
    block_snapshot: Option<BlockSnapshot>,
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
            warm_active: Vec::new(),
            block_work: BlockProgram::default(),
            block_snapshot: None,
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

    /// Collects the constraint rows of a step (D3 inclusion, D6 Hertz linearization).
    fn rows(
        &self,
        model: &Model,
        snap: &ContactSnapshot<f64>,
        h: f64,
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
            let phidot = c.normal_row.dot(v);
            if self.options.inclusion == Inclusion::PenetratingOnly && c.gap > 0.0 {
                continue;
            }
            let (k, b, rigid) = self.contact_law(c.stiffness, c.damping, c.law, c.gap, phidot, h);
            if !rigid && h * h * k + h * b <= 0.0 {
                continue;
            }
            let normal = out.unilateral.len();
            out.unilateral.push(Row {
                g: c.normal_row.clone(),
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
                for t in 0..c.tangent_rows.nrows() {
                    tangents.push(out.tangents.len());
                    out.tangents.push(Row {
                        g: c.tangent_rows.row(t).transpose(),
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

/// The data of the per-step convex program after bilateral elimination.
struct Program {
    /// Rows: unilateral (0..nu) then tangents (nu..nu+nt).
    w: DMatrix<f64>,
    /// R q for unilateral rows (scaled right-hand side).
    rq: DVector<f64>,
    /// R for unilateral rows.
    r: DVector<f64>,
    /// S for tangent rows.
    s_t: DVector<f64>,
    /// d for tangent rows.
    d_t: DVector<f64>,
    nu: usize,
    /// Sparse data of the lifted form (fast path); `w` is empty when present.
    lift: Option<Lift>,
}

impl Program {
    /// The dense form of a lifted program (fallback when a lifted solve fails).
    fn dense(&self, lam: &MassSolver) -> Program {
        let w = match &self.lift {
            Some(l) => lam.delassus(&l.gs),
            None => self.w.clone(),
        };
        Program {
            w,
            rq: self.rq.clone(),
            r: self.r.clone(),
            s_t: self.s_t.clone(),
            d_t: self.d_t.clone(),
            nu: self.nu,
            lift: None,
        }
    }
}

/// Data of the lifted (sparse) form: `u = Λ G*ᵀ λ*` with `Λ⁻¹ = M + G_bᵀS_bG_b`.
struct Lift {
    /// Nonzeros (row, column, value) of the unilateral rows G_u.
    gu: Vec<(usize, usize, f64)>,
    /// Nonzeros of the tangent rows G_t.
    gt: Vec<(usize, usize, f64)>,
    /// Upper-triangle nonzeros of the augmented mass Λ⁻¹.
    aug_upper: Vec<(usize, usize, f64)>,
    /// All nonzeros of Λ⁻¹.
    aug: Vec<(usize, usize, f64)>,
    nv: usize,
    /// The stacked rows G* (unilateral then tangent), for the coupling products
    /// `G_u Λ G_tᵀ λ_t` and `G_t Λ G_uᵀ λ_u` of the staged sweeps.
    gs: DMatrix<f64>,
}

/// Nonzero triplets of a dense matrix.
fn dense_triplets(m: &DMatrix<f64>) -> Vec<(usize, usize, f64)> {
    let mut t = Vec::new();
    for j in 0..m.ncols() {
        for i in 0..m.nrows() {
            let v = m[(i, j)];
            if v != 0.0 {
                t.push((i, j, v));
            }
        }
    }
    t
}

/// Relative size (to the largest friction bound of the step) below which a contact's friction
/// bound μλ_n counts as zero: its friction forces are fixed at zero by equality rows instead
/// of a cone without interior, which interior-point solvers cannot approach (a contact that
/// opens carries λ_n = 0 exactly or a round-off residue of it).
const ZERO_FRICTION_BOUND: f64 = 1e-9;

/// Appends the Coulomb cones of the friction stage (λ_n fixed): `|λ_t| ≤ μλ_n` as two
/// linear rows in 2D, `‖λ_t‖ ≤ μλ_n` as a second-order cone in 3D (§6.3); a contact whose
/// bound is zero ([`ZERO_FRICTION_BOUND`]) gets `λ_t = 0` as equality rows. Friction forces
/// are the first variables of the program.
fn friction_cones(
    mut b: ConicProblemBuilder,
    rows: &StepRows,
    lu: &DVector<f64>,
    planar: bool,
) -> Result<ConicProblemBuilder, SimError> {
    let largest = rows
        .contacts
        .iter()
        .map(|c| c.mu * lu[c.normal].max(0.0))
        .fold(0.0, f64::max);
    for c in &rows.contacts {
        if c.tangents.is_empty() {
            continue;
        }
        let bound = c.mu * lu[c.normal].max(0.0);
        if bound <= ZERO_FRICTION_BOUND * largest || bound == 0.0 {
            let tri: Vec<_> = c
                .tangents
                .iter()
                .enumerate()
                .map(|(k, &t)| (k, t, 1.0))
                .collect();
            b = b
                .constraint_triplets(
                    Cone::Zero(c.tangents.len()),
                    &tri,
                    &vec![0.0; c.tangents.len()],
                )
                .map_err(solver_error)?;
            continue;
        }
        if planar {
            let t = c.tangents[0];
            b = b
                .constraint_triplets(
                    Cone::Nonnegative(2),
                    &[(0, t, 1.0), (1, t, -1.0)],
                    &[bound, bound],
                )
                .map_err(solver_error)?;
        } else {
            let mut tri = Vec::new();
            for (k, &t) in c.tangents.iter().enumerate() {
                tri.push((k + 1, t, -1.0));
            }
            let mut rhs = vec![0.0; c.tangents.len() + 1];
            rhs[0] = bound;
            b = b
                .constraint_triplets(Cone::SecondOrder(c.tangents.len() + 1), &tri, &rhs)
                .map_err(solver_error)?;
        }
    }
    Ok(b)
}

fn upper_triplets(h: &DMatrix<f64>) -> Vec<(usize, usize, f64)> {
    let mut t = Vec::new();
    for j in 0..h.ncols() {
        for i in 0..=j {
            let v = h[(i, j)];
            if v != 0.0 {
                t.push((i, j, v));
            }
        }
    }
    t
}

impl DrumwrightStepper {
    /// Solves the normal/unilateral stage with tangent forces `lt` fixed (D4 forms).
    fn normal_stage(
        &self,
        p: &Program,
        lam: &MassSolver,
        lt: &DVector<f64>,
        report: &mut StepReport,
    ) -> Result<DVector<f64>, SimError> {
        let nu = p.nu;
        if nu == 0 {
            return Ok(DVector::zeros(0));
        }
        let dense;
        let p = match &p.lift {
            Some(lift) => match self.normal_stage_lifted(p, lift, lam, lt, report) {
                Ok(x)
                    if report.solver_status != Some(SolveStatus::AlmostSolved)
                        && report.solver_status != Some(SolveStatus::MaxIterations) =>
                {
                    return Ok(x)
                }
                _ => {
                    dense = p.dense(lam);
                    &dense
                }
            },
            None => p,
        };
        let nt = lt.len();
        let wuu = p.w.view((0, 0), (nu, nu)).into_owned();
        let wut = p.w.view((0, nu), (nu, nt)).into_owned();
        let rhs = &p.rq - &wut * lt;
        let mut aa = wuu;
        for i in 0..nu {
            aa[(i, i)] += p.r[i];
        }
        // Single row: closed form (A5).
        if nu == 1 {
            let val = if aa[(0, 0)] > 0.0 {
                (rhs[0] / aa[(0, 0)]).max(0.0)
            } else {
                0.0
            };
            return Ok(DVector::from_element(1, val));
        }
        let mut b = ConicProblemBuilder::new(nu);
        match self.options.unilateral {
            UnilateralForm::MinNorm => {
                let t: Vec<_> = (0..nu).map(|i| (i, i, 1.0)).collect();
                b = b.quadratic_upper_triplets(&t).map_err(solver_error)?;
                // (R + W) λ ≥ R q  →  −(R + W) λ + s = −R q.
                let mut tri = Vec::new();
                for j in 0..nu {
                    for i in 0..nu {
                        let v = aa[(i, j)];
                        if v != 0.0 {
                            tri.push((i, j, -v));
                        }
                    }
                }
                let neg: Vec<f64> = rhs.iter().map(|x| -x).collect();
                b = b
                    .constraint_triplets(Cone::Nonnegative(nu), &tri, &neg)
                    .map_err(solver_error)?;
            }
            UnilateralForm::MaxLcp => {
                b = b
                    .quadratic_upper_triplets(&upper_triplets(&aa))
                    .map_err(solver_error)?;
                let c: Vec<f64> = rhs.iter().map(|x| -x).collect();
                b = b.linear(&c).map_err(solver_error)?;
            }
        }
        let tri: Vec<_> = (0..nu).map(|i| (i, i, -1.0)).collect();
        b = b
            .constraint_triplets(Cone::Nonnegative(nu), &tri, &vec![0.0; nu])
            .map_err(solver_error)?;
        let prob = b.build().map_err(solver_error)?;
        report.hessian_nnz = prob.p().nnz();
        let sol = prob.solve(&self.options.solver).map_err(solver_error)?;
        report.solver_status = Some(sol.status);
        report.solves += 1;
        Ok(sol.x.map(|x| x.max(0.0)))
    }

    /// Friction stage with λ_u fixed: min ½‖λ_t‖² + ½‖β‖², β = λ_t + S_t(W_tt λ_t + W_tu λ_u)
    /// + d_t, Coulomb cone with λ_n fixed (eq 99–108 / 109–120 with λ_n known).
    #[allow(clippy::too_many_arguments)]
    fn friction_stage(
        &self,
        p: &Program,
        lam: &MassSolver,
        rows: &StepRows,
        lu: &DVector<f64>,
        planar: bool,
        report: &mut StepReport,
    ) -> Result<DVector<f64>, SimError> {
        let nu = p.nu;
        let nt = p.s_t.len();
        if nt == 0 {
            return Ok(DVector::zeros(0));
        }
        let dense;
        let p = match &p.lift {
            Some(lift) if self.options.sparse_friction => {
                match self.friction_stage_lifted(p, lift, lam, rows, lu, planar, report) {
                    Ok(x)
                        if report.solver_status != Some(SolveStatus::AlmostSolved)
                            && report.solver_status != Some(SolveStatus::MaxIterations) =>
                    {
                        return Ok(x)
                    }
                    _ => {
                        dense = p.dense(lam);
                        &dense
                    }
                }
            }
            Some(_) => {
                dense = p.dense(lam);
                &dense
            }
            None => p,
        };
        let wtt = p.w.view((nu, nu), (nt, nt)).into_owned();
        let wtu = p.w.view((nu, 0), (nt, nu)).into_owned();
        // β = E λ_t + e with E = I + S_t W_tt, e = S_t W_tu λ_u + d_t.
        let mut e_mat = DMatrix::identity(nt, nt);
        let mut e_vec = &p.d_t + DVector::zeros(nt);
        let wl = &wtu * lu;
        for i in 0..nt {
            for j in 0..nt {
                e_mat[(i, j)] += p.s_t[i] * wtt[(i, j)];
            }
            e_vec[i] += p.s_t[i] * wl[i];
        }
        // λ_t = 0 is optimal (and always feasible) when the objective has no linear term.
        if e_vec.amax() == 0.0 {
            return Ok(DVector::zeros(nt));
        }
        // The objective divided by s² (s = the largest S_t, 1e6 with the default tangential
        // damping), which leaves the minimizer unchanged: the Hessian I + EᵀE then has
        // entries of the order of W_tt instead of S_t²·W_tt ≈ 1e15.
        let s = p.s_t.iter().fold(1.0f64, |m, x| m.max(x.abs()));
        let (e_mat, e_vec) = (e_mat / s, e_vec / s);
        let hess = DMatrix::identity(nt, nt) / (s * s) + e_mat.transpose() * &e_mat;
        let g = e_mat.transpose() * &e_vec;
        let mut b = ConicProblemBuilder::new(nt)
            .quadratic_upper_triplets(&upper_triplets(&hess))
            .map_err(solver_error)?
            .linear(g.as_slice())
            .map_err(solver_error)?;
        b = friction_cones(b, rows, lu, planar)?;
        let prob = b.build().map_err(solver_error)?;
        report.hessian_nnz = prob.p().nnz();
        let sol = prob.solve(&self.options.solver).map_err(solver_error)?;
        report.solver_status = Some(sol.status);
        report.solves += 1;
        Ok(sol.x)
    }

    /// The literal Appendix 0.A program (eqs 176–186) in all of λ* at once.
    /// Lifted (sparse) normal stage: variables (λ_u, u) with `Λ⁻¹u − G_uᵀλ_u = 0`; the rows
    /// `Rλ + G_u u ≥ R q − G_u Λ G_tᵀ λ_t`, `λ ≥ 0`; objective ½‖λ‖² (D4 MinNorm) or
    /// ½λᵀRλ + ½uᵀΛ⁻¹u − (Rq)ᵀλ (D4 MaxLcp), i.e. the dense programs with W = G Λ Gᵀ
    /// expressed through u.
    fn normal_stage_lifted(
        &self,
        p: &Program,
        lift: &Lift,
        lam: &MassSolver,
        lt: &DVector<f64>,
        report: &mut StepReport,
    ) -> Result<DVector<f64>, SimError> {
        let nu = p.nu;
        let nv = lift.nv;
        let nt = lt.len();
        let gu = lift.gs.rows(0, nu);
        let mut rhs = p.rq.clone();
        if nt > 0 && lt.amax() > 0.0 {
            let gt = lift.gs.rows(nu, nt);
            rhs -= gu * lam.solve(&(gt.transpose() * lt));
        }
        if nu == 1 {
            let g = gu.row(0).transpose();
            let aa = p.r[0] + g.dot(&lam.solve(&g));
            let val = if aa > 0.0 {
                (rhs[0] / aa).max(0.0)
            } else {
                0.0
            };
            return Ok(DVector::from_element(1, val));
        }
        let mut b = ConicProblemBuilder::new(nu + nv);
        match self.options.unilateral {
            UnilateralForm::MinNorm => {
                let t: Vec<_> = (0..nu).map(|i| (i, i, 1.0)).collect();
                b = b.quadratic_upper_triplets(&t).map_err(solver_error)?;
            }
            UnilateralForm::MaxLcp => {
                let mut t: Vec<_> = (0..nu)
                    .filter(|&i| p.r[i] != 0.0)
                    .map(|i| (i, i, p.r[i]))
                    .collect();
                t.extend(lift.aug_upper.iter().map(|&(i, j, v)| (nu + i, nu + j, v)));
                b = b.quadratic_upper_triplets(&t).map_err(solver_error)?;
                let mut c = vec![0.0; nu + nv];
                for i in 0..nu {
                    c[i] = -rhs[i];
                }
                b = b.linear(&c).map_err(solver_error)?;
            }
        }
        let mut eq: Vec<_> = lift.aug.iter().map(|&(i, j, v)| (i, nu + j, v)).collect();
        eq.extend(lift.gu.iter().map(|&(i, k, v)| (k, i, -v)));
        b = b
            .constraint_triplets(Cone::Zero(nv), &eq, &vec![0.0; nv])
            .map_err(solver_error)?;
        if self.options.unilateral == UnilateralForm::MinNorm {
            let mut ineq: Vec<_> = (0..nu)
                .filter(|&i| p.r[i] != 0.0)
                .map(|i| (i, i, -p.r[i]))
                .collect();
            ineq.extend(lift.gu.iter().map(|&(i, k, v)| (i, nu + k, -v)));
            let neg: Vec<f64> = rhs.iter().map(|x| -x).collect();
            b = b
                .constraint_triplets(Cone::Nonnegative(nu), &ineq, &neg)
                .map_err(solver_error)?;
        }
        let tri: Vec<_> = (0..nu).map(|i| (i, i, -1.0)).collect();
        b = b
            .constraint_triplets(Cone::Nonnegative(nu), &tri, &vec![0.0; nu])
            .map_err(solver_error)?;
        let prob = b.build().map_err(solver_error)?;
        report.hessian_nnz = prob.p().nnz();
        let sol = prob.solve(&self.options.solver).map_err(solver_error)?;
        report.solver_status = Some(sol.status);
        report.solves += 1;
        report.lifted_solves += 1;
        Ok(DVector::from_iterator(
            nu,
            sol.x.iter().take(nu).map(|x| x.max(0.0)),
        ))
    }

    /// Lifted (sparse) friction stage: variables (λ_t, u, β) with `Λ⁻¹u − G_tᵀλ_t = 0`,
    /// `β − λ_t − S_t G_t u = d_t + S_t G_t Λ G_uᵀ λ_u`; objective ½‖λ_t‖² + ½‖β‖² (the
    /// slack objective of eq 99), Coulomb cones on λ_t with λ_n fixed.
    #[allow(clippy::too_many_arguments)]
    fn friction_stage_lifted(
        &self,
        p: &Program,
        lift: &Lift,
        lam: &MassSolver,
        rows: &StepRows,
        lu: &DVector<f64>,
        planar: bool,
        report: &mut StepReport,
    ) -> Result<DVector<f64>, SimError> {
        let nu = p.nu;
        let nt = p.s_t.len();
        let nv = lift.nv;
        let gt = lift.gs.rows(nu, nt);
        let mut e_vec = p.d_t.clone();
        if nu > 0 && lu.amax() > 0.0 {
            let gu = lift.gs.rows(0, nu);
            let c = gt * lam.solve(&(gu.transpose() * lu));
            for i in 0..nt {
                e_vec[i] += p.s_t[i] * c[i];
            }
        }
        if e_vec.amax() == 0.0 {
            return Ok(DVector::zeros(nt));
        }
        let n = 2 * nt + nv;
        let beta = nt + nv;
        let mut quad: Vec<_> = (0..nt).map(|i| (i, i, 1.0)).collect();
        quad.extend((0..nt).map(|i| (beta + i, beta + i, 1.0)));
        let mut b = ConicProblemBuilder::new(n)
            .quadratic_upper_triplets(&quad)
            .map_err(solver_error)?;
        let mut eq: Vec<_> = lift.aug.iter().map(|&(i, j, v)| (i, nt + j, v)).collect();
        eq.extend(lift.gt.iter().map(|&(i, k, v)| (k, i, -v)));
        b = b
            .constraint_triplets(Cone::Zero(nv), &eq, &vec![0.0; nv])
            .map_err(solver_error)?;
        let mut eq2: Vec<_> = (0..nt)
            .flat_map(|i| [(i, beta + i, 1.0), (i, i, -1.0)])
            .collect();
        eq2.extend(lift.gt.iter().map(|&(i, k, v)| (i, nt + k, -p.s_t[i] * v)));
        b = b
            .constraint_triplets(Cone::Zero(nt), &eq2, e_vec.as_slice())
            .map_err(solver_error)?;
        b = friction_cones(b, rows, lu, planar)?;
        let prob = b.build().map_err(solver_error)?;
        report.hessian_nnz = prob.p().nnz();
        let sol = prob.solve(&self.options.solver).map_err(solver_error)?;
        report.solver_status = Some(sol.status);
        report.solves += 1;
        report.lifted_solves += 1;
        Ok(DVector::from_iterator(nt, sol.x.iter().take(nt).copied()))
    }

    fn literal_program(
        &self,
        p: &Program,
        rows: &StepRows,
        zeta: f64,
        planar: bool,
        report: &mut StepReport,
    ) -> Result<DVector<f64>, SimError> {
        let nu = p.nu;
        let nt = p.s_t.len();
        let m = nu + nt;
        // β = (P_t + E) λ* + d, E = S_t W_t*.
        let mut pe = DMatrix::zeros(nt, m);
        for i in 0..nt {
            for j in 0..m {
                pe[(i, j)] = p.s_t[i] * p.w[(nu + i, j)];
            }
            pe[(i, nu + i)] += 1.0;
        }
        let mut hess = pe.transpose() * &pe;
        for i in 0..m {
            hess[(i, i)] += if i < nu { zeta } else { 1.0 };
        }
        let g = pe.transpose() * &p.d_t;
        let mut b = ConicProblemBuilder::new(m)
            .quadratic_upper_triplets(&upper_triplets(&hess))
            .map_err(solver_error)?
            .linear(g.as_slice())
            .map_err(solver_error)?;
        let mut tri = Vec::new();
        for i in 0..nu {
            for j in 0..m {
                let v = p.w[(i, j)] + if i == j { p.r[i] } else { 0.0 };
                if v != 0.0 {
                    tri.push((i, j, -v));
                }
            }
        }
        let neg: Vec<f64> = p.rq.iter().map(|x| -x).collect();
        b = b
            .constraint_triplets(Cone::Nonnegative(nu), &tri, &neg)
            .map_err(solver_error)?;
        let tri: Vec<_> = (0..nu).map(|i| (i, i, -1.0)).collect();
        b = b
            .constraint_triplets(Cone::Nonnegative(nu), &tri, &vec![0.0; nu])
            .map_err(solver_error)?;
        for c in &rows.contacts {
            if c.tangents.is_empty() {
                continue;
            }
            let n = c.normal;
            if planar {
                let t = nu + c.tangents[0];
                b = b
                    .constraint_triplets(
                        Cone::Nonnegative(2),
                        &[(0, t, 1.0), (0, n, -c.mu), (1, t, -1.0), (1, n, -c.mu)],
                        &[0.0, 0.0],
                    )
                    .map_err(solver_error)?;
            } else {
                let mut tri = vec![(0, n, -c.mu)];
                for (k, &t) in c.tangents.iter().enumerate() {
                    tri.push((k + 1, nu + t, -1.0));
                }
                b = b
                    .constraint_triplets(
                        Cone::SecondOrder(c.tangents.len() + 1),
                        &tri,
                        &vec![0.0; c.tangents.len() + 1],
                    )
                    .map_err(solver_error)?;
            }
        }
        let prob = b.build().map_err(solver_error)?;
        report.hessian_nnz = prob.p().nnz();
        let sol = prob.solve(&self.options.solver).map_err(solver_error)?;
        report.solver_status = Some(sol.status);
        report.solves += 1;
        let mut x = sol.x;
        for i in 0..nu {
            x[i] = x[i].max(0.0);
        }
        Ok(x)
    }

    /// One step at a frozen snapshot; returns v₁ and fills `self.last`.
    pub fn step_velocity(
        &mut self,
        model: &Model,
        snap: &ContactSnapshot<f64>,
        h: f64,
    ) -> Result<DVector<f64>, SimError> {
        let rows = self.rows(model, snap, h)?;
        let nv = snap.nv();
        let v0 = &snap.v;
        let f = &snap.forces;
        let mass = &snap.mass_matrix;
        let mut report = StepReport::default();
        if rows.unilateral.is_empty() && rows.tangents.is_empty() {
            let (v1, lambda) = self.bilateral_step(&rows.bilateral, mass, f, v0, h)?;
            report.bilateral = lambda.iter().copied().collect();
            self.last = report;
            return Ok(v1);
        }
        // Bilateral elimination with the augmented mass M + G_bᵀ S_b G_b (Woodbury form).
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
        let n_star = rows.unilateral.len() + rows.tangents.len();
        let literal = matches!(self.options.friction, FrictionCoupling::Literal { .. })
            && !rows.tangents.is_empty();
        let use_lift = n_star >= self.options.sparse_min_rows.max(2)
            && !literal
            && (rows.tangents.is_empty() || self.options.sparse_with_friction);
        let aug_copy = if use_lift { Some(aug.clone()) } else { None };
        let lam = MassSolver::new(model, aug, nb == 0)?;
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
        let v_free = lam.solve(&rhs);
        let nu = rows.unilateral.len();
        let nt = rows.tangents.len();
        let mut all = rows.unilateral.clone();
        all.extend(rows.tangents.iter().cloned());
        let gs = stack(&all, nv);
        let (w, lift) = match aug_copy {
            Some(aug) => {
                let lift = Lift {
                    gu: dense_triplets(&gs.rows(0, nu).into_owned()),
                    gt: dense_triplets(&gs.rows(nu, nt).into_owned()),
                    aug_upper: upper_triplets(&aug),
                    aug: dense_triplets(&aug),
                    nv,
                    gs: gs.clone(),
                };
                (DMatrix::zeros(0, 0), Some(lift))
            }
            None => (lam.delassus(&gs), None),
        };
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
        let gv = &gs * &v_free;
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
        let program = Program {
            w,
            rq,
            r,
            s_t,
            d_t,
            nu,
            lift,
        };
        let planar = snap.dimension == Dimension::Planar;
        let lambda = match self.options.friction {
            FrictionCoupling::Literal { zeta } if nt > 0 => {
                if self.options.unilateral != UnilateralForm::MinNorm {
                    return Err(SimError::InvalidOption {
                        option: "friction",
                        reason: "the literal Appendix 0.A program exists only for the \
                                 minimum-norm form; use the staged coupling with MaxLcp"
                            .into(),
                    });
                }
                self.literal_program(
                    &program,
                    &rows,
                    zeta.unwrap_or(1.0 / h),
                    planar,
                    &mut report,
                )?
            }
            FrictionCoupling::Literal { .. } => {
                self.normal_stage(&program, &lam, &DVector::zeros(0), &mut report)?
            }
            FrictionCoupling::Staged { sweeps } => {
                let mut lt = DVector::zeros(nt);
                let mut lu = DVector::zeros(nu);
                let mut converged = false;
                for _ in 0..sweeps.max(1) {
                    let lu_new = self.normal_stage(&program, &lam, &lt, &mut report)?;
                    if nt == 0 {
                        lu = lu_new;
                        converged = true;
                        break;
                    }
                    let lt_new =
                        self.friction_stage(&program, &lam, &rows, &lu_new, planar, &mut report)?;
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
                let mut x = lu;
                x = x.push_many(&lt);
                x
            }
        };
        let v1 = &v_free + lam.solve(&(gs.transpose() * &lambda)) * h;
        if !v1.iter().all(|x| x.is_finite()) {
            return Err(SimError::Diverged {
                t: snap.t + h,
                reason: "drumwright produced a non-finite velocity".into(),
            });
        }
        // Reports: bilateral forces λ_b = a_b − (hK_b + B_b) G_b v₁, contact forces.
        let gbv = &gb * &v1;
        report.bilateral = rows
            .bilateral
            .iter()
            .enumerate()
            .map(|(i, row)| a_b[i] - (h * row.k + row.b) * gbv[i])
            .collect();
        let gv1 = &gs * &v1;
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
        self.last = report;
        Ok(v1)
    }
}

/// Solves with the (augmented) mass matrix: dense Cholesky, or per-body blocks when every
/// joint is a root joint and no bilateral rows are eliminated (the mass matrix is then block
/// diagonal, and W = G M⁻¹ Gᵀ is accumulated body by body: contacts couple only through
/// shared bodies, the sparsity of the sphere stack and the foundation).
enum MassSolver {
    Dense(nalgebra::Cholesky<f64, nalgebra::Dyn>),
    Blocks(Vec<(usize, nalgebra::Cholesky<f64, nalgebra::Dyn>)>),
}

impl MassSolver {
    fn new(model: &Model, aug: DMatrix<f64>, may_block: bool) -> Result<Self, SimError> {
        let bad = || invalid("augmented mass M + G_bᵀS_bG_b is not positive definite");
        let all_roots = model.joints.iter().all(|j| j.parent.is_none());
        if may_block && all_roots && model.joints.len() > 1 {
            let mut blocks = Vec::new();
            for j in &model.joints {
                let n = j.kind.nv();
                if n == 0 {
                    continue;
                }
                let sub = aug.view((j.v_index, j.v_index), (n, n)).into_owned();
                blocks.push((j.v_index, sub.cholesky().ok_or_else(bad)?));
            }
            return Ok(MassSolver::Blocks(blocks));
        }
        Ok(MassSolver::Dense(aug.cholesky().ok_or_else(bad)?))
    }

    fn solve(&self, b: &DVector<f64>) -> DVector<f64> {
        match self {
            MassSolver::Dense(c) => c.solve(b),
            MassSolver::Blocks(blocks) => {
                let mut out = DVector::zeros(b.len());
                for (start, c) in blocks {
                    let n = c.l_dirty().nrows();
                    let x = c.solve(&b.rows(*start, n).into_owned());
                    out.rows_mut(*start, n).copy_from(&x);
                }
                out
            }
        }
    }

    /// W = G M⁻¹ Gᵀ.
    fn delassus(&self, g: &DMatrix<f64>) -> DMatrix<f64> {
        match self {
            MassSolver::Dense(c) => g * c.solve(&g.transpose()),
            MassSolver::Blocks(blocks) => {
                let m = g.nrows();
                let mut w = DMatrix::zeros(m, m);
                for (start, c) in blocks {
                    let n = c.l_dirty().nrows();
                    let rows: Vec<usize> = (0..m)
                        .filter(|&i| (0..n).any(|k| g[(i, start + k)] != 0.0))
                        .collect();
                    if rows.is_empty() {
                        continue;
                    }
                    let mut sub = DMatrix::zeros(rows.len(), n);
                    for (a, &i) in rows.iter().enumerate() {
                        for k in 0..n {
                            sub[(a, k)] = g[(i, start + k)];
                        }
                    }
                    let prod = &sub * c.solve(&sub.transpose());
                    for (a, &i) in rows.iter().enumerate() {
                        for (b, &j) in rows.iter().enumerate() {
                            w[(i, j)] += prod[(a, b)];
                        }
                    }
                }
                w
            }
        }
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
/// Ġ terms off. Returns v₁. Loses precision once h²k ≳ 10¹¹ (digest §3.4).
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

impl DrumwrightStepper {
    /// One step with an additional external load evaluated at the start of the step
    /// (explicit in f, as the paper's f in eqs 36–39).
    ///
    /// # Errors
    /// As [`Stepper::step`], plus an invalid load.
    pub fn step_with_load(
        &mut self,
        model: &Model,
        state: &State,
        h: f64,
        load: &crate::load::PointLoad,
    ) -> Result<State, SimError> {
        crate::stepper::check_step_size(h)?;
        check_state(model, &state.q, &state.v)?;
        let extra = load.generalized(model, &state.q, state.t)?;
        self.step_with_forces(model, state, h, Some(&extra), &crate::Actuation::none())
    }

    /// One step with `extra` generalized forces (if any) and the actuation `input` added to
    /// the snapshot's M and f: the block fast path when it applies (no servo terms, which
    /// change M) and certifies its answer, else the dense Clarabel path.
    fn step_with_forces(
        &mut self,
        model: &Model,
        state: &State,
        h: f64,
        extra: Option<&DVector<f64>>,
        input: &crate::Actuation,
    ) -> Result<State, SimError> {
        let mut block_extra = extra.cloned();
        if !input.is_none() && !input.has_servos() {
            let f = input.generalized_force(&state.q, &state.v);
            block_extra = Some(block_extra.map_or(f.clone(), |e| e + f));
        }
        let margins = if self.options.velocity_margin {
            ContactMargins::speculative(model.contact_margin, h)
        } else {
            ContactMargins::uniform(model.contact_margin)
        };
        let block = if input.has_servos() {
            None
        } else {
            self.try_block_step(model, state, h, block_extra.as_ref(), &margins)?
        };
        let (v1, q1) = match block {
            Some(v1) => {
                let q1 = integrate_sparse(model, &state.q, &v1, h);
                (v1, q1)
            }
            None => {
                let mut snap = ContactSnapshot::with_contact_margins(
                    model, &state.q, &state.v, state.t, &margins,
                )?;
                if let Some(extra) = extra {
                    snap.forces += extra;
                }
                input.apply_implicit(
                    &mut snap.mass_matrix,
                    &mut snap.forces,
                    &state.q,
                    &state.v,
                    h,
                );
                let v1 = self.step_velocity(model, &snap, h)?;
                let q1 = integrate_configuration(model, &state.q, &v1, h);
                (v1, q1)
            }
        };
        if !q1.iter().all(|x| x.is_finite()) {
            return Err(SimError::Diverged {
                t: state.t + h,
                reason: "drumwright produced a non-finite configuration".into(),
            });
        }
        Ok(State {
            q: q1,
            v: v1,
            t: state.t + h,
        })
    }
}

impl Stepper for DrumwrightStepper {
    fn name(&self) -> &'static str {
        "drumwright"
    }

    fn step_actuated(
        &mut self,
        model: &Model,
        state: &State,
        input: &crate::Actuation,
        h: f64,
    ) -> Result<State, SimError> {
        crate::stepper::check_step_size(h)?;
        check_state(model, &state.q, &state.v)?;
        self.step_with_forces(model, state, h, None, input)
    }

    fn last_step_converged(&self) -> bool {
        !self.last.sweep_limit_reached
    }

    fn last_contact_impulses(&self, h: f64) -> Option<Vec<crate::ContactImpulse>> {
        Some(
            self.last
                .contacts
                .iter()
                .map(|c| crate::ContactImpulse {
                    contact: c.contact,
                    normal: c.normal * h,
                    tangent: c.tangent.iter().map(|t| t * h).collect(),
                })
                .collect(),
        )
    }
}

/// Whether a Delassus matrix of `rows` rows with about `entries` nonzeros (Σ over bodies of
/// the squared number of rows on the body) is worth the block fast path: at most
/// 16 entries per row (+ 1024), or at most a quarter of the dense matrix. Many contacts on
/// one body (the 900 points of the foundation) make it dense; a pile of spheres, each
/// touching a few others, keeps it sparse.
fn delassus_is_sparse(entries: usize, rows: usize) -> bool {
    entries <= (16 * rows + 1024).max(rows * rows / 4)
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

/// One scalar row of the block (sparse) fast path: its coefficients on at most two joints'
/// velocity blocks (index into [`BlockSnapshot::blocks`], coefficients zero-padded to 6).
#[derive(Debug, Clone, Copy)]
struct BlockRow {
    parts: [(usize, Vector6<f64>); 2],
    len: usize,
}

impl BlockRow {
    fn parts(&self) -> &[(usize, Vector6<f64>)] {
        &self.parts[..self.len]
    }

    fn dot(&self, blocks: &[nonsmooth_core::snapshot::MassBlock], v: &DVector<f64>) -> f64 {
        self.parts()
            .iter()
            .map(|(b, c)| {
                let blk = &blocks[*b];
                let n = blk.force.len().min(6);
                v.as_slice()[blk.v_index..blk.v_index + n]
                    .iter()
                    .zip(&c.as_slice()[..n])
                    .map(|(x, y)| x * y)
                    .sum::<f64>()
            })
            .sum()
    }
}

/// Clears `rows` and leaves `n` empty rows, keeping the rows' allocations.
fn reset_rows<T>(rows: &mut Vec<Vec<T>>, n: usize) {
    rows.truncate(n);
    for r in rows.iter_mut() {
        r.clear();
    }
    while rows.len() < n {
        rows.push(Vec::new());
    }
}

/// Sets `x` to the zero vector of length `n`, reusing its storage when the length matches.
fn reset_vector(x: &mut DVector<f64>, n: usize) {
    if x.len() == n {
        x.fill(0.0);
    } else {
        *x = DVector::zeros(n);
    }
}

/// Relative tolerance of the KKT checks of the fast per-step solvers.
const FAST_KKT_TOL: f64 = 1e-9;

impl DrumwrightStepper {
    /// Whether the options allow the block fast path (staged coupling without contact Ġ).
    fn fast_path_allowed(&self) -> bool {
        self.options.fast_solver
            && matches!(self.options.friction, FrictionCoupling::Staged { .. })
            && !self.options.unilateral_gdot
    }

    /// The block fast path at `state` (extra generalized force `load`); `Ok(None)` when the
    /// model does not qualify (see [`BlockSnapshot`]) or its Delassus matrix is not sparse.
    fn try_block_step(
        &mut self,
        model: &Model,
        state: &State,
        h: f64,
        load: Option<&DVector<f64>>,
        margins: &ContactMargins,
    ) -> Result<Option<DVector<f64>>, SimError> {
        if !self.fast_path_allowed() {
            return Ok(None);
        }
        // The block snapshot of the previous step is updated in place (its storage reused).
        let mut bs = match self.block_snapshot.take() {
            Some(bs) => bs,
            None => match BlockSnapshot::from_state(model, state)? {
                Some(bs) => bs,
                None => return Ok(None),
            },
        };
        if !bs.update_with_contact_margins(model, &state.q, &state.v, state.t, margins)? {
            return Ok(None);
        }
        // Early sparsity estimate (the test of `block_program` on all detected contacts): many
        // contacts on one body (the foundation) stay on the Clarabel path.
        let mut per_body = vec![0usize; bs.block_of_body.len()];
        let mut rows = 0;
        for c in &bs.contacts {
            let k = 1 + if c.friction > 0.0 {
                c.tangents.len()
            } else {
                0
            };
            rows += k;
            for b in [c.body_a, c.body_b].into_iter().flatten() {
                if let Some(x) = per_body.get_mut(b) {
                    *x += k;
                }
            }
        }
        if !delassus_is_sparse(per_body.iter().map(|x| x * x).sum(), rows) {
            return Ok(None);
        }
        let out = self.block_step(&bs, &state.v, h, load);
        self.block_snapshot = Some(bs);
        out
    }

    /// The staged programs of one step on a [`BlockSnapshot`] with a sparse Delassus matrix,
    /// written into the workspace `p` (its allocations are reused from step to step).
    /// `Ok(false)` when the Delassus matrix is not sparse enough for the fast path.
    fn block_program(
        &self,
        bs: &BlockSnapshot,
        v0: &DVector<f64>,
        h: f64,
        load: Option<&DVector<f64>>,
        p: &mut BlockProgram,
    ) -> Result<bool, SimError> {
        let blocks = &bs.blocks;
        // M_b⁻¹ per block (zero-padded to 6 × 6), recomputed only for blocks whose mass
        // matrix differs (entry for entry) from the one the cached inverse was computed
        // from: the blocks of floating bodies whose origin is the centre of mass (spheres)
        // depend only on the model (v = (parent-frame linear, body-frame angular)), so their
        // Cholesky factorization and inverse are computed once.
        p.minv.truncate(blocks.len());
        p.mass_key.truncate(blocks.len());
        for (k, b) in blocks.iter().enumerate() {
            let n = b.mass.nrows();
            if n > 6 || b.mass.ncols() != n {
                return Err(invalid("mass block larger than 6 × 6"));
            }
            let unchanged = p.mass_key.get(k).is_some_and(|(kn, key)| {
                if *kn != n {
                    false
                } else if n == 6 {
                    key.as_slice() == b.mass.as_slice()
                } else {
                    key.view((0, 0), (n, n)) == b.mass
                }
            });
            if unchanged {
                continue;
            }
            let mut key = Matrix6::zeros();
            key.view_mut((0, 0), (n, n)).copy_from(&b.mass);
            let bad = || invalid("mass matrix is not positive definite");
            let inv = if n == 6 {
                key.cholesky().ok_or_else(bad)?.inverse()
            } else {
                let small = b.mass.clone().cholesky().ok_or_else(bad)?.inverse();
                let mut m = Matrix6::zeros();
                m.view_mut((0, 0), (n, n)).copy_from(&small);
                m
            };
            if k < p.minv.len() {
                p.minv[k] = inv;
                p.mass_key[k] = (n, key);
            } else {
                p.minv.push(inv);
                p.mass_key.push((n, key));
            }
        }
        if p.v_free.len() == v0.len() {
            p.v_free.copy_from(v0);
        } else {
            p.v_free = v0.clone();
        }
        for (b, mi) in blocks.iter().zip(&p.minv) {
            let n = b.force.len();
            let mut f = Vector6::zeros();
            for k in 0..n {
                f[k] = b.force[k] + load.map_or(0.0, |l| l[b.v_index + k]);
            }
            let dv = mi * f * h;
            for k in 0..n {
                p.v_free[b.v_index + k] += dv[k];
            }
        }
        // Rows: contact normals (0..nu), then tangents (nu..nu+nt).
        p.normals.clear();
        p.tangents.clear();
        // Contacts are overwritten in place (their tangent index lists keep their storage).
        let mut n_contacts = 0;
        let bt = self.options.tangent_damping_times_h / h;
        for (ci, c) in bs.contacts.iter().enumerate() {
            if self.options.inclusion == Inclusion::PenetratingOnly && c.gap > 0.0 {
                continue;
            }
            let row_of = |r: usize| {
                let mut row = BlockRow {
                    parts: [(0, Vector6::zeros()); 2],
                    len: 0,
                };
                for (body, rows) in [(c.body_a, &c.rows_a), (c.body_b, &c.rows_b)] {
                    let Some(k) = body.and_then(|b| bs.block_of_body.get(b).copied().flatten())
                    else {
                        continue;
                    };
                    if rows.ncols() == 0 || rows.ncols() > 6 || r >= rows.nrows() {
                        continue;
                    }
                    let mut g = Vector6::zeros();
                    let nr = rows.nrows();
                    for (gj, col) in g.iter_mut().zip(rows.as_slice().chunks_exact(nr)) {
                        *gj = col[r];
                    }
                    row.parts[row.len] = (k, g);
                    row.len += 1;
                }
                row
            };
            let nrow = row_of(0);
            let phidot = nrow.dot(blocks, v0);
            let (k, b, rigid) = self.contact_law(c.stiffness, c.damping, c.law, c.gap, phidot, h);
            if !rigid && h * h * k + h * b <= 0.0 {
                continue;
            }
            let normal = p.normals.len();
            p.normals.push((
                nrow,
                Row {
                    g: DVector::zeros(0),
                    phi: c.gap,
                    gdot_v: 0.0,
                    k,
                    b,
                    rigid,
                },
            ));
            if n_contacts == p.contacts.len() {
                p.contacts.push(ContactRows {
                    snapshot_index: ci,
                    normal,
                    tangents: Vec::new(),
                    mu: c.friction,
                });
            }
            let cr = &mut p.contacts[n_contacts];
            n_contacts += 1;
            cr.snapshot_index = ci;
            cr.normal = normal;
            cr.mu = c.friction;
            cr.tangents.clear();
            if c.friction > 0.0 {
                for t in 0..c.tangents.len() {
                    cr.tangents.push(p.tangents.len());
                    p.tangents.push(row_of(1 + t));
                }
            }
        }
        p.contacts.truncate(n_contacts);
        let nu = p.normals.len();
        let nt = p.tangents.len();
        let n = nu + nt;
        // Rows touching each block.
        reset_rows(&mut p.per_block, blocks.len());
        for i in 0..n {
            let r = row_ref(&p.normals, &p.tangents, i);
            for (k, (b, _)) in r.parts().iter().enumerate() {
                p.per_block[*b].push((i, k));
            }
        }
        let work: usize = p.per_block.iter().map(|l| l.len() * l.len()).sum();
        if !delassus_is_sparse(work, n) {
            return Ok(false);
        }
        // W row by row: `M_b⁻¹ gᵀ` of every (row, block) part first, then row i of W as
        // the merge of the (sorted) row lists of its at most two blocks, so its entries come
        // out sorted by column with shared columns summed.
        p.ys.clear();
        for i in 0..n {
            let r = row_ref(&p.normals, &p.tangents, i);
            let mut y = [Vector6::zeros(); 2];
            for (k, (b, g)) in r.parts().iter().enumerate() {
                y[k] = p.minv[*b] * g;
            }
            p.ys.push(y);
        }
        p.w.n = n;
        reset_rows(&mut p.w.rows, n);
        for (i, row) in p.w.rows.iter_mut().enumerate() {
            let parts = row_ref(&p.normals, &p.tangents, i).parts();
            let list = |k: usize| parts.get(k).map_or(&[][..], |(b, _)| &p.per_block[*b][..]);
            let (l1, l2) = (list(0), list(1));
            let val = |k: usize, (j, q): (usize, usize)| parts[k].1.dot(&p.ys[j][q]);
            let (mut a, mut b) = (0, 0);
            while a < l1.len() || b < l2.len() {
                let ja = l1.get(a).map_or(usize::MAX, |e| e.0);
                let jb = l2.get(b).map_or(usize::MAX, |e| e.0);
                if ja < jb {
                    row.push((ja, val(0, l1[a])));
                    a += 1;
                } else if jb < ja {
                    row.push((jb, val(1, l2[b])));
                    b += 1;
                } else {
                    row.push((ja, val(0, l1[a]) + val(1, l2[b])));
                    a += 1;
                    b += 1;
                }
            }
        }
        p.gv.clear();
        for i in 0..n {
            let gv = p.row(i).dot(blocks, &p.v_free);
            p.gv.push(gv);
        }
        reset_vector(&mut p.rq, nu);
        reset_vector(&mut p.r, nu);
        for (i, (_, row)) in p.normals.iter().enumerate() {
            p.r[i] = row.r(h);
            p.rq[i] = -(row.eps(h) / (h * h)) * row.phi - p.gv[i] / h;
        }
        reset_vector(&mut p.s_t, nt);
        reset_vector(&mut p.d_t, nt);
        for i in 0..nt {
            p.s_t[i] = h * bt;
            p.d_t[i] = bt * p.gv[nu + i];
        }
        // Sub-blocks of W (rows stay sorted by column).
        p.a_mat.n = nu;
        reset_rows(&mut p.a_mat.rows, nu);
        reset_rows(&mut p.wut, nu);
        reset_rows(&mut p.wtu, nt);
        reset_rows(&mut p.e_rows, nt);
        for (i, row) in p.w.rows.iter().enumerate() {
            let split = row.partition_point(|e| e.0 < nu);
            let (lo, hi) = row.split_at(split);
            if i < nu {
                let ar = &mut p.a_mat.rows[i];
                ar.extend_from_slice(lo);
                if let Some(d) = ar.iter_mut().find(|e| e.0 == i) {
                    d.1 += p.r[i];
                } else {
                    ar.push((i, p.r[i]));
                    ar.sort_unstable_by_key(|e| e.0);
                }
                p.wut[i].extend(hi.iter().map(|&(j, v)| (j - nu, v)));
            } else {
                let k = i - nu;
                p.wtu[k].extend_from_slice(lo);
                // E = I + S_t W_tt.
                let er = &mut p.e_rows[k];
                er.extend(hi.iter().map(|&(j, v)| (j - nu, p.s_t[k] * v)));
                if let Some(d) = er.iter_mut().find(|e| e.0 == k) {
                    d.1 += 1.0;
                } else {
                    er.push((k, 1.0));
                    er.sort_unstable_by_key(|e| e.0);
                }
            }
        }
        Ok(true)
    }

    /// Normal stage of a block program by the fast solver (block principal pivoting), with
    /// its KKT checks; `None` when it fails them.
    fn fast_normal(
        &self,
        p: &BlockProgram,
        lt: &DVector<f64>,
        warm: &[bool],
    ) -> Option<DVector<f64>> {
        let c = &p.rq - sparse_mul(&p.wut, lt);
        let nu = p.rq.len();
        solve_lcp_factored(&p.a_mat, &c, warm, 100 + 2 * nu)
            .filter(|s| {
                lcp_residual(&p.a_mat, &c, &s.lambda) <= FAST_KKT_TOL
                    && (self.options.unilateral == UnilateralForm::MaxLcp
                        || min_norm_certificate_factored(
                            &p.a_mat,
                            &s.lambda,
                            FAST_KKT_TOL,
                            s.factor.as_ref().map(|f| (s.active.as_slice(), f)),
                        ))
            })
            .map(|s| s.lambda)
    }

    /// Coulomb disks `(tangent rows, μ λ_n)` of the friction stage.
    fn disks(p: &BlockProgram, lu: &DVector<f64>) -> Vec<(Vec<usize>, f64)> {
        let mut out = Vec::new();
        Self::disks_into(p, lu, &mut out);
        out
    }

    /// [`Self::disks`] written into `out`, reusing its allocations.
    fn disks_into(p: &BlockProgram, lu: &DVector<f64>, out: &mut Vec<(Vec<usize>, f64)>) {
        let mut k = 0;
        for c in p.contacts.iter().filter(|c| !c.tangents.is_empty()) {
            let b = c.mu * lu[c.normal].max(0.0);
            if k < out.len() {
                out[k].0.clear();
                out[k].0.extend_from_slice(&c.tangents);
                out[k].1 = b;
            } else {
                out.push((c.tangents.clone(), b));
            }
            k += 1;
        }
        out.truncate(k);
    }

    /// `e = d_t + S_t W_tu λ_u` of the friction stage.
    fn friction_offset(p: &BlockProgram, lu: &DVector<f64>) -> DVector<f64> {
        &p.d_t + p.s_t.component_mul(&sparse_mul(&p.wtu, lu))
    }

    /// The dense [`Program`] of a block program (Clarabel fallback).
    fn dense_program(p: &BlockProgram) -> Program {
        Program {
            w: p.w.to_dense(),
            rq: p.rq.clone(),
            r: p.r.clone(),
            s_t: p.s_t.clone(),
            d_t: p.d_t.clone(),
            nu: p.rq.len(),
            lift: None,
        }
    }

    /// Solves both stages of the first staged sweep (friction forces zero in the normal
    /// stage; the friction stage with the Clarabel normal forces) with the fast solvers and
    /// with Clarabel, for the agreement tests of the fast path. `Ok(None)` when the model
    /// does not qualify for the block fast path.
    ///
    /// # Errors
    /// Invalid states and Clarabel failures.
    pub fn compare_fast_stages(
        &self,
        model: &Model,
        state: &State,
        h: f64,
    ) -> Result<Option<StageComparison>, SimError> {
        let Some(bs) = BlockSnapshot::from_state(model, state)? else {
            return Ok(None);
        };
        let mut p = BlockProgram::default();
        if !self.block_program(&bs, &state.v, h, None, &mut p)? {
            return Ok(None);
        }
        let nu = p.rq.len();
        let nt = p.s_t.len();
        let dense = Self::dense_program(&p);
        let rows = StepRows {
            contacts: p.contacts.clone(),
            ..StepRows::default()
        };
        let no_mass = MassSolver::Blocks(Vec::new());
        let mut report = StepReport::default();
        let lt0 = DVector::zeros(nt);
        let warm: Vec<bool> = p.rq.iter().map(|&x| x > 0.0).collect();
        let normal_fast = self.fast_normal(&p, &lt0, &warm);
        let normal_clarabel = self.normal_stage(&dense, &no_mass, &lt0, &mut report)?;
        let lcp_form = DrumwrightStepper::new(DrumwrightOptions {
            unilateral: UnilateralForm::MaxLcp,
            ..self.options.clone()
        });
        let normal_clarabel_lcp = lcp_form.normal_stage(&dense, &no_mass, &lt0, &mut report)?;
        let c = &p.rq - sparse_mul(&p.wut, &lt0);
        let normal_residual = normal_fast.as_ref().map(|x| lcp_residual(&p.a_mat, &c, x));
        let planar = bs.dimension == Dimension::Planar;
        let (
            friction_fast,
            friction_clarabel,
            friction_kkt,
            gradient_fast,
            gradient_clarabel,
            objective_fast,
            objective_clarabel,
            cone_clarabel,
        ) = if nt > 0 {
            let e = Self::friction_offset(&p, &normal_clarabel);
            let disks = Self::disks(&p, &normal_clarabel);
            let fast = solve_friction_sticking(&p.e_rows, &e, &disks, 1e-13);
            let clar = if e.amax() == 0.0 {
                DVector::zeros(nt)
            } else {
                self.friction_stage(
                    &dense,
                    &no_mass,
                    &rows,
                    &normal_clarabel,
                    planar,
                    &mut report,
                )?
            };
            let kkt = fast
                .as_ref()
                .map(|x| friction_residual(&p.e_rows, &e, &disks, x));
            let grad_fast = fast
                .as_ref()
                .map(|x| friction_gradient(&p.e_rows, &e, x).amax());
            let grad_clar = friction_gradient(&p.e_rows, &e, &clar).amax();
            let obj_fast = fast.as_ref().map(|x| friction_objective(&p.e_rows, &e, x));
            let obj_clar = friction_objective(&p.e_rows, &e, &clar);
            let cone_clar = disks
                .iter()
                .map(|(rows, b)| rows.iter().map(|&i| clar[i] * clar[i]).sum::<f64>().sqrt() - b)
                .fold(0.0, f64::max);
            (
                fast, clar, kkt, grad_fast, grad_clar, obj_fast, obj_clar, cone_clar,
            )
        } else {
            (
                Some(DVector::zeros(0)),
                DVector::zeros(0),
                Some((0.0, 0.0)),
                Some(0.0),
                0.0,
                Some(0.0),
                0.0,
                0.0,
            )
        };
        let _ = nu;
        Ok(Some(StageComparison {
            normal_fast,
            normal_clarabel,
            normal_residual,
            friction_fast,
            friction_clarabel,
            friction_residual: friction_kkt,
            normal_matrix: p.a_mat.clone(),
            normal_clarabel_lcp,
            gradient_fast,
            gradient_clarabel,
            objective_fast,
            objective_clarabel,
            cone_clarabel,
        }))
    }

    /// One step on a [`BlockSnapshot`]: the staged programs with a sparse Delassus matrix,
    /// solved by the specialized solvers of [`crate::drumwright_fast`] with Clarabel as the
    /// fallback.
    fn block_step(
        &mut self,
        bs: &BlockSnapshot,
        v0: &DVector<f64>,
        h: f64,
        load: Option<&DVector<f64>>,
    ) -> Result<Option<DVector<f64>>, SimError> {
        let mut p = std::mem::take(&mut self.block_work);
        if !self.block_program(bs, v0, h, load, &mut p)? {
            self.block_work = p;
            return Ok(None);
        }
        let blocks = &bs.blocks;
        let nu = p.rq.len();
        let nt = p.s_t.len();
        let contacts = &p.contacts;
        // Warm start of the normal stage: the previous step's active contacts.
        let warm: Vec<bool> = contacts
            .iter()
            .map(|c| {
                let bc = &bs.contacts[c.snapshot_index];
                let key = (bc.collider_a, bc.collider_b, bc.feature);
                self.warm_active
                    .binary_search_by(|e| e.0.cmp(&key))
                    .map_or(p.rq[c.normal] > 0.0, |k| self.warm_active[k].1)
            })
            .collect();
        let mut report = StepReport::default();
        let mut dense_program: Option<Program> = None;
        let mut dense_rows: Option<StepRows> = None;
        let no_mass = MassSolver::Blocks(Vec::new());
        let planar = bs.dimension == Dimension::Planar;
        let sweeps = match self.options.friction {
            FrictionCoupling::Staged { sweeps } => sweeps,
            FrictionCoupling::Literal { .. } => 1,
        };
        let mut lt = DVector::zeros(nt);
        let mut lu = DVector::zeros(nu);
        let mut converged = false;
        for _ in 0..sweeps.max(1) {
            let lu_new = match self.fast_normal(&p, &lt, &warm) {
                Some(x) => {
                    report.fast_solves += 1;
                    report.hessian_nnz = p.a_mat.nnz();
                    x
                }
                None => {
                    report.fallbacks += 1;
                    let dp = dense_program.get_or_insert_with(|| Self::dense_program(&p));
                    self.normal_stage(dp, &no_mass, &lt, &mut report)?
                }
            };
            if nt == 0 {
                lu = lu_new;
                converged = true;
                break;
            }
            let e_vec = Self::friction_offset(&p, &lu_new);
            let lt_new = if e_vec.amax() == 0.0 {
                DVector::zeros(nt)
            } else {
                let mut disks = std::mem::take(&mut p.disks);
                Self::disks_into(&p, &lu_new, &mut disks);
                let fast = solve_friction_sticking(&p.e_rows, &e_vec, &disks, 1e-13);
                p.disks = disks;
                match fast {
                    Some(x) => {
                        report.fast_solves += 1;
                        x
                    }
                    None => {
                        report.fallbacks += 1;
                        let dp = dense_program.get_or_insert_with(|| Self::dense_program(&p));
                        let dr = dense_rows.get_or_insert_with(|| StepRows {
                            contacts: contacts.clone(),
                            ..StepRows::default()
                        });
                        self.friction_stage(dp, &no_mass, dr, &lu_new, planar, &mut report)?
                    }
                }
            };
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
        if report.solver_status.is_none() && report.fast_solves > 0 {
            report.solver_status = Some(SolveStatus::Solved);
        }
        // v₁ = v_free + h M⁻¹ Gᵀ λ, block by block.
        p.gt_lambda.clear();
        p.gt_lambda.resize(blocks.len(), Vector6::zeros());
        for i in 0..nu + nt {
            let l = if i < nu { lu[i] } else { lt[i - nu] };
            if l == 0.0 {
                continue;
            }
            for (b, c) in row_ref(&p.normals, &p.tangents, i).parts() {
                p.gt_lambda[*b] += c * l;
            }
        }
        let mut v1 = p.v_free.clone();
        for ((b, mi), f) in blocks.iter().zip(&p.minv).zip(&p.gt_lambda) {
            let dv = mi * f * h;
            for k in 0..b.force.len() {
                v1[b.v_index + k] += dv[k];
            }
        }
        if !v1.iter().all(|x| x.is_finite()) {
            return Err(SimError::Diverged {
                t: bs.t + h,
                reason: "drumwright produced a non-finite velocity".into(),
            });
        }
        self.warm_active.clear();
        for c in contacts {
            let bc = &bs.contacts[c.snapshot_index];
            self.warm_active.push((
                (bc.collider_a, bc.collider_b, bc.feature),
                lu[c.normal] > 0.0,
            ));
        }
        self.warm_active.sort_unstable_by_key(|a| a.0);
        self.warm_active.dedup_by(|a, b| a.0 == b.0);
        // Contact forces of the report, written over the previous report's entries (their
        // tangent and slip vectors keep their storage).
        let mut forces = std::mem::take(&mut self.last.contacts);
        forces.truncate(contacts.len());
        for (k, c) in contacts.iter().enumerate() {
            let (nrow, row) = &p.normals[c.normal];
            let phidot1 = nrow.dot(blocks, &v1);
            let phi1 = row.phi + h * phidot1;
            let spring = if row.rigid {
                lu[c.normal]
            } else {
                (-row.k * phi1 - row.b * phidot1).max(0.0)
            };
            if k == forces.len() {
                forces.push(ContactForce {
                    contact: 0,
                    normal: 0.0,
                    tangent: Vec::new(),
                    spring_normal: 0.0,
                    slip: Vec::new(),
                });
            }
            let f = &mut forces[k];
            f.contact = c.snapshot_index;
            f.normal = lu[c.normal];
            f.spring_normal = spring;
            f.tangent.clear();
            f.tangent.extend(c.tangents.iter().map(|&t| lt[t]));
            f.slip.clear();
            f.slip
                .extend(c.tangents.iter().map(|&t| p.tangents[t].dot(blocks, &v1)));
        }
        report.contacts = forces;
        self.last = report;
        self.block_work = p;
        Ok(Some(v1))
    }
}

/// Data of one step of the block fast path (see [`DrumwrightStepper::block_program`]), kept
/// in the stepper as a workspace whose allocations are reused from step to step.
#[derive(Debug, Clone, Default)]
struct BlockProgram {
    /// Inverses of the mass blocks (zero-padded to 6 × 6).
    minv: Vec<Matrix6<f64>>,
    /// The (size, zero-padded) mass blocks `minv` was computed from.
    mass_key: Vec<(usize, Matrix6<f64>)>,
    /// `v₀ + h M⁻¹ f`.
    v_free: DVector<f64>,
    /// Normal rows with their spring–damper data.
    normals: Vec<(BlockRow, Row)>,
    /// Tangent rows.
    tangents: Vec<BlockRow>,
    /// Contacts (indices into `normals` / `tangents`).
    contacts: Vec<ContactRows>,
    /// The full sparse Delassus matrix (normals then tangents).
    w: SymSparse,
    rq: DVector<f64>,
    r: DVector<f64>,
    s_t: DVector<f64>,
    d_t: DVector<f64>,
    /// `R + W_uu`.
    a_mat: SymSparse,
    /// Rows of W_ut.
    wut: Vec<Vec<(usize, f64)>>,
    /// Rows of W_tu.
    wtu: Vec<Vec<(usize, f64)>>,
    /// Rows of E = I + S_t W_tt.
    e_rows: Vec<Vec<(usize, f64)>>,
    /// Scratch: (row, part) pairs touching each block.
    per_block: Vec<Vec<(usize, usize)>>,
    /// Scratch: `M_b⁻¹ gᵀ` of each row's (at most two) parts.
    ys: Vec<[Vector6<f64>; 2]>,
    /// Scratch: `Gᵀ λ` per block.
    gt_lambda: Vec<Vector6<f64>>,
    /// Scratch: `G v_free`.
    gv: Vec<f64>,
    /// Scratch: the Coulomb disks of the friction stage.
    disks: Vec<(Vec<usize>, f64)>,
}

impl BlockProgram {
    /// Row i (normals, then tangents).
    fn row(&self, i: usize) -> &BlockRow {
        row_ref(&self.normals, &self.tangents, i)
    }
}

/// Row i of the rows `normals` then `tangents`.
fn row_ref<'a>(normals: &'a [(BlockRow, Row)], tangents: &'a [BlockRow], i: usize) -> &'a BlockRow {
    match normals.get(i) {
        Some((r, _)) => r,
        None => &tangents[i - normals.len()],
    }
}

/// `X x` for X stored by rows.
fn sparse_mul(rows: &[Vec<(usize, f64)>], x: &DVector<f64>) -> DVector<f64> {
    DVector::from_iterator(
        rows.len(),
        rows.iter()
            .map(|r| r.iter().map(|&(j, v)| v * x[j]).sum::<f64>()),
    )
}

/// Both stages of a staged sweep solved by the fast solvers and by Clarabel
/// ([`DrumwrightStepper::compare_fast_stages`]).
#[derive(Debug, Clone)]
pub struct StageComparison {
    /// Normal stage by block principal pivoting (`None`: failed its KKT check).
    pub normal_fast: Option<DVector<f64>>,
    /// Normal stage by Clarabel.
    pub normal_clarabel: DVector<f64>,
    /// Complementarity residual of `normal_fast` (see
    /// [`crate::drumwright_fast::lcp_residual`]).
    pub normal_residual: Option<f64>,
    /// Friction stage (with the Clarabel normal forces) by the sticking solver (`None`:
    /// some contact slides, or the check failed).
    pub friction_fast: Option<DVector<f64>>,
    /// Friction stage by Clarabel.
    pub friction_clarabel: DVector<f64>,
    /// (natural residual, cone violation) of `friction_fast`
    /// ([`crate::drumwright_fast::friction_residual`]).
    pub friction_residual: Option<(f64, f64)>,
    /// The normal-stage matrix `R + W_uu` (sparse).
    pub normal_matrix: SymSparse,
    /// Normal stage by Clarabel in the LCP-equivalent form ([`UnilateralForm::MaxLcp`]),
    /// whose solution the pivoting method computes (and certifies as the min-norm
    /// solution with [`crate::drumwright_fast::min_norm_certificate`]).
    pub normal_clarabel_lcp: DVector<f64>,
    /// `‖∇‖∞` of the friction objective at `friction_fast`, gradient in factored form
    /// ([`crate::drumwright_fast::friction_gradient`]; zero at a sticking optimum).
    pub gradient_fast: Option<f64>,
    /// The same at `friction_clarabel`.
    pub gradient_clarabel: f64,
    /// Friction objective ½‖λ‖² + ½‖Eλ + e‖² at `friction_fast`
    /// ([`crate::drumwright_fast::friction_objective`]).
    pub objective_fast: Option<f64>,
    /// The same at `friction_clarabel`.
    pub objective_clarabel: f64,
    /// Largest cone violation of `friction_clarabel`.
    pub cone_clarabel: f64,
}

/// `q + h N(q) v` with quaternion renormalization, joint by joint: the same arithmetic as
/// [`integrate_configuration`] (the nonzero entries of `N(q) v` are summed in the same
/// order) without forming the dense nq × nv velocity map, which dominates a step of the
/// block fast path otherwise.
fn integrate_sparse(model: &Model, q: &DVector<f64>, v: &DVector<f64>, h: f64) -> DVector<f64> {
    let mut out = q.clone();
    for joint in &model.joints {
        let (iq, iv) = (joint.q_index, joint.v_index);
        match joint.kind {
            JointKind::Revolute | JointKind::Prismatic => out[iq] += v[iv] * h,
            JointKind::Fixed => {}
            JointKind::Planar => {
                for k in 0..3 {
                    out[iq + k] += v[iv + k] * h;
                }
            }
            JointKind::Floating => {
                for k in 0..3 {
                    out[iq + k] += v[iv + k] * h;
                }
                let (w, x, y, z) = (q[iq + 3], q[iq + 4], q[iq + 5], q[iq + 6]);
                let rows = [[-x, -y, -z], [w, -z, y], [z, w, -x], [-y, x, w]];
                for (r, row) in rows.iter().enumerate() {
                    let dot: f64 = row
                        .iter()
                        .enumerate()
                        .map(|(c, val)| 0.5 * val * v[iv + 3 + c])
                        .sum();
                    out[iq + 3 + r] += dot * h;
                }
                let mut quat = out.fixed_rows_mut::<4>(iq + 3);
                let norm = quat.norm();
                if norm > 1e-300 {
                    quat /= norm;
                }
            }
        }
    }
    out
}
