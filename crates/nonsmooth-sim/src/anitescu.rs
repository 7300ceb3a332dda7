//! Anitescu–Potra velocity-level time stepping (M. Anitescu & F. Potra, "Formulating
//! dynamic multi-rigid-body contact problems with friction as solvable linear
//! complementarity problems", Nonlinear Dynamics 14, 1997; Stewart & Trinkle 1996), with a
//! polyhedral friction pyramid and Lemke's method.
//!
//! Unknown impulses: normal λ_n (one per contact and per active joint-limit row), friction
//! β ≥ 0 along `d` pyramid directions per contact, and γ (≈ sliding speed). With
//! `v₁ = v₀ + M⁻¹(h f + G_nᵀλ_n + Dβ)` the LCP reads
//!
//! ```text
//! 0 ≤ λ_n ⊥ G_n v₁ + φ₀/h ≥ 0,
//! 0 ≤ β   ⊥ Dᵀ v₁ + E γ   ≥ 0,
//! 0 ≤ γ   ⊥ μ λ_n − Eᵀ β  ≥ 0,
//! ```
//!
//! then `q₁ = q₀ + h N(q₀) v₁`. Contacts and limits are rigid here (their stiffness is
//! ignored); the φ₀/h term is the usual constraint stabilization, its penetration part
//! limited to [`crate::MAX_DEPENETRATION_SPEED`] (φ₀ below −h·1 m/s counts as
//! −h·1 m/s), so that a body placed into another is pushed out at that speed, not launched.
//! Bilateral constraints are
//! not supported by this stepper (a typed error).
//!
//! # Groups of coupled contacts
//! The LCP splits into independent LCPs, one per connected component of the Delassus matrix
//! `JᵀM⁻¹J` (contacts that share no body, directly or through other contacts, do not
//! interact within a step): a pile scattered over the ground is many small LCPs rather than
//! one large one. Each group is assembled from the columns each body touches and solved with
//! the robust cascade below; the step's report sums or maximizes over the groups.
//!
//! # Robust solve
//! The LCP matrix `[[JᵀM⁻¹J, E], [μ, −Eᵀ, 0]]` (J = [G_nᵀ, D]) is copositive, and the LCP
//! is solvable and processed by Lemke's method whenever `zᵀq ≥ 0` for every `z ≥ 0` with
//! `Mz ≥ 0`, `zᵀMz = 0` (Anitescu & Potra 1997; Cottle–Pang–Stone §4.4);
//! but it is highly degenerate (rank-deficient `JᵀM⁻¹J` when `m + d·n_c > n_v`, opposite
//! pyramid directions, duplicated contacts, `q` rows that are zero up to round-off) and
//! badly scaled for large μ and light bodies, so that a floating-point Lemke run can end in
//! a spurious ray termination or in a basis whose solution has a large residual. Each step
//! therefore:
//!
//! 1. drops contacts that exactly duplicate an earlier one (same rows, gap and μ up to
//!    round-off; the velocity update does not depend on how an impulse is split between
//!    copies);
//! 2. equilibrates the LCP by positive diagonal row/column scaling `M̂ = R M C`, `q̂ = R q`,
//!    `z = C ẑ` (complementarity is invariant under it): impulse rows/columns by
//!    `1/√(JᵀM⁻¹J)ᵢᵢ` (unit Delassus diagonal), the γ column by the inverse mean of its
//!    pyramid rows' scales (unit `E` entries) and the γ row by the inverse of its largest
//!    entry;
//! 3. polishes each Lemke candidate on its support (`M_SS z_S = −q_S` by LU, SVD where that
//!    fails) and checks it
//!    on the *unscaled* LCP: residual `max(‖(−z)⁺‖∞, ‖(−w)⁺‖∞, maxᵢ|zᵢwᵢ|)` at most
//!    [`AnitescuPotraStepper::residual_tol`]` · (1 + ‖q‖∞)(1 + ‖z‖∞)`, and the step's
//!    energy identity: with complementarity,
//!    `½‖v₁‖²_M − ½‖v_free‖²_M = −λᵀφ/h − Σ μλγ − ½‖v₁ − v_free‖²_M ≤ λᵀ(−φ)⁺/h`, so a
//!    candidate whose kinetic-energy gain exceeds `λᵀ(−φ)⁺/h` (plus round-off) is rejected;
//! 4. on a failed or rejected solve restarts Lemke ([`Restart`]): warm from the support of
//!    the first candidate (a freshly factorized basis instead of one carried through a
//!    long degenerate pivot sequence), then cold with the covering vector `dᵢ = 1 + i/n`,
//!    then with a small Tikhonov term `M̂ + εI` (ε = 1e-10, 1e-8 on the unit-diagonal
//!    matrix), which makes the matrix strictly copositive so Lemke's method processes the
//!    LCP for every `q` (Cottle–Pang–Stone §3.8, §4.4); every candidate must pass
//!    the checks of 3 on the unregularized LCP;
//! 5. drops the penetration part of the stabilization (`φ₀/h → φ₀⁺/h`):
//!    then `zᵀq ≥ 0` for every such `z`, the solvability condition above (a penetration
//!    correction that a rank-deficient contact set cannot satisfy makes the LCP infeasible);
//! 6. as a last resort raises `q` by a round-off amount δ on every impulse row
//!    ([`ROUNDOFF_RELAXATION`]): where `zᵀq = 0` holds only in exact arithmetic (internal
//!    forces of a closed loop of contacts and joints, rows at `φ ≈ 0`), round-off can make
//!    it negative and the floating-point LCP infeasible; with δ, `zᵀq > 0`;
//! 7. when no candidate met the residual tolerance, takes the first that is within
//!    [`INEXACT_FACTOR`] times it and passes the energy check ([`ApStepReport::inexact`];
//!    the step counts as not converged, [`Stepper::last_step_converged`]);
//! 8. otherwise returns [`SimError::Solver`] with [`SolverError::NoSolution`] listing every
//!    attempt (never a state built from an unchecked solution); a stepper's step then solves
//!    the regularized convex program of the same contacts instead, accepted only when it
//!    passes its own energy check (counted, [`crate::Recoveries::convex_fallbacks`]).
//!
//! [`AnitescuPotraStepper::step_report`] returns the diagnostics of a step
//! ([`ApStepReport`]).

use crate::error::SimError;
use crate::free_motion::{stabilized_gap, Component, Delassus, RigidContact, SparseRow};
use crate::stepper::Stepper;
use nalgebra::{DMatrix, DVector};
use nonsmooth_core::geometry::ContactMargins;
use nonsmooth_core::{Dimension, Model, State};
use nonsmooth_solvers::lcp::{lcp_residuals, lemke, Lcp, LemkeOptions};
use nonsmooth_solvers::SolverError;

/// Name used in solver errors of this stepper.
const SOLVER: &str = "anitescu-potra";
/// Tikhonov terms tried, in order, on the scaled (unit-diagonal) LCP matrix after a failed
/// unregularized solve.
const REGULARIZATION: [f64; 2] = [1e-10, 1e-8];
/// How far above [`AnitescuPotraStepper::residual_tol`] a candidate may be when no candidate
/// met it: it is still checked for energy, and the step counts as not converged.
pub const INEXACT_FACTOR: f64 = 1e3;
/// Ratio tie tolerance of the stepper's Lemke runs ([`LemkeOptions::ratio_tie_tol`]).
/// The equilibrated LCP (unit Delassus diagonal) has ratios of the order of its scaled
/// impulses, 1e-3 to 1e-1 for a robot's feet, so Lemke's default floor `1e-9 · max(1, θ)`
/// counts ratios that differ by 1e-8 of their size as ties. The lexicographic rule (meant
/// for exact ties, Cottle–Pang–Stone Ch. 4) then may pick a row whose ratio exceeds the
/// minimum, and the basic variable of the true minimum goes negative by up to 1e-9 per
/// pivot. Measured on the mesh feet of
/// `examples/mjcf/quadruped.xml` (4 coplanar corners per foot, 40–60 rows): the pyramid rows
/// of the returned basis ended at `w = −1e-8 … −2e-7`, above the residual check; with ties
/// at 1e-11 and below every one of those LCPs solves to a residual of 1e-17.
pub const RATIO_TIE_TOL: f64 = 1e-12;
/// Relative amount `δ / (1 + ‖q‖∞)` by which the last stage of the solve raises `q` on every
/// impulse row (step 6 of the module docs). A null direction `z` of `JᵀM⁻¹J` (an internal
/// force of a closed loop: a shin pressed against its own torso across rigid hinges, a foot
/// pinched between the torso and the ground) has `zᵀq = zᵀ(J v_free + φ/h)` equal to
/// `zᵀφ/h ≥ 0` in exact arithmetic, but round-off in `J v_free` on rows with `φ ≈ 0` makes
/// it −1e-14 and the LCP infeasible in floating point (Lemke ends on a ray). Raising every
/// impulse row by δ makes `zᵀq > 0` for every such `z`; a row then admits an approach
/// velocity δ (1e-10 m/s at ‖q‖∞ ≈ 1, a gap change of 5e-13 m per 5 ms step).
pub const ROUNDOFF_RELAXATION: f64 = 1e-10;

/// The `anitescu-potra` stepper.
#[derive(Debug, Clone)]
pub struct AnitescuPotraStepper {
    /// Friction-pyramid directions per contact in 3D (≥ 3; planar models always use ±t).
    pub directions: usize,
    /// Lemke options (default: Lemke's, with ratio ties at [`RATIO_TIE_TOL`]).
    pub lemke: LemkeOptions,
    /// Relative tolerance of the residual check on the unscaled LCP (see the module docs).
    /// Default `1e-8`.
    pub residual_tol: f64,
    /// Approach speed (m/s) above which a contact with a restitution coefficient bounces
    /// (Newton's law on the normal velocity); slower contacts are inelastic, so that resting
    /// contacts do not jitter. Default 0.1 m/s.
    pub restitution_threshold: f64,
    /// The report of the last step (its contact impulses, whether it was accepted
    /// inexactly).
    last_report: ApStepReport,
    /// Whether the last step was solved by the convex fallback.
    fell_back: bool,
    /// The contact-set stage's workspace (the per-body snapshot, updated in place).
    workspace: crate::contact_set::SnapshotWorkspace,
}

impl Default for AnitescuPotraStepper {
    fn default() -> Self {
        AnitescuPotraStepper {
            directions: 4,
            lemke: LemkeOptions {
                ratio_tie_tol: RATIO_TIE_TOL,
                ..LemkeOptions::default()
            },
            residual_tol: 1e-8,
            restitution_threshold: 0.1,
            last_report: ApStepReport::default(),
            fell_back: false,
            workspace: Default::default(),
        }
    }
}

/// How the accepted Lemke run of a step was started (see the module docs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Restart {
    /// Cold start with the stepper's [`LemkeOptions`].
    #[default]
    Cold,
    /// Warm start (`LemkeOptions::warm_start`) from the support of the first, rejected,
    /// candidate: the basis inverse is then factorized afresh instead of carried through
    /// a long degenerate pivot sequence.
    Warm,
    /// Cold start with the covering vector `dᵢ = 1 + i/n`, which breaks the symmetric
    /// ties of the pyramid rows differently.
    Ramp,
}

/// Diagnostics of one [`AnitescuPotraStepper`] step.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ApStepReport {
    /// Size of the LCP (0 when no contact or limit row was active), summed over its groups
    /// of coupled contacts (each group is solved on its own, see the module docs).
    pub lcp_size: usize,
    /// Lemke pivots of the accepted solves, summed over the groups.
    pub pivots: usize,
    /// Solves tried, summed over the groups (one per group when each first, scaled and
    /// unregularized, solve was accepted).
    pub attempts: usize,
    /// How the accepted Lemke run was started (the first group that needed a restart).
    pub restart: Restart,
    /// Largest Tikhonov term of the accepted solves (0 for none).
    pub regularization: f64,
    /// Whether the penetration part of the stabilization had to be dropped.
    pub stabilization_dropped: bool,
    /// Whether the accepted solve is that of `q` relaxed by round-off on its impulse rows
    /// ([`ROUNDOFF_RELAXATION`], step 6 of the module docs).
    pub q_relaxed: bool,
    /// Residual `max(‖(−z)⁺‖∞, ‖(−w)⁺‖∞, maxᵢ|zᵢwᵢ|)` of the accepted solution on the
    /// unscaled LCP.
    pub residual: f64,
    /// Kinetic-energy change `½‖v₁‖²_M − ½‖v_free‖²_M` of the contact impulses (J).
    pub energy_gain: f64,
    /// Its bound `λᵀ(−φ)⁺/h` (J).
    pub energy_bound: f64,
    /// Largest impulse (N·s) of the accepted solution.
    pub max_impulse: f64,
    /// Whether no candidate met the residual tolerance and the step took the first one within
    /// [`INEXACT_FACTOR`] times it that passed the energy check (step 7 of the module docs);
    /// such a step counts as not converged ([`Stepper::last_step_converged`]).
    pub inexact: bool,
    /// Contacts dropped because they exactly duplicate an earlier contact (same normal
    /// and tangent rows, gap and friction up to round-off): a duplicated row only makes
    /// the LCP degenerate, the impulse split between copies is arbitrary and the velocity
    /// update is the same.
    pub duplicates_dropped: usize,
    /// The impulses (N·s) of the accepted solution at each contact that took one, indexed
    /// into the snapshot of the step's start state with the speculative margins
    /// ([`Stepper::contact_margins`]); tangential impulses along the contact's tangents
    /// (the net of the friction pyramid's directions).
    pub contact_impulses: Vec<crate::stepper::ContactImpulse>,
}

/// Residual of a Lemke candidate (relative to `(1 + ‖q‖∞)(1 + ‖z‖∞)`) below which
/// [`polish`] leaves it as it is.
const POLISH_SKIP: f64 = 1e-13;

/// Active-set polish of a Lemke solution of `LCP(M, q)` (unregularized): with the
/// support `S = {i : zᵢ > wᵢ}` read off the candidate, solves the complementary system
/// `M_SS z_S = −q_S` by LU, or where that fails or does not improve by an SVD least-squares
/// solve (minimum-norm on a singular `M_SS`, e.g. opposite pyramid directions), and keeps
/// the result when its residual is smaller. Lemke's
/// product-form basis inverse loses accuracy over long degenerate pivot sequences; the
/// support it finds is still right, and this recovers the solution to round-off.
fn polish(mat: &DMatrix<f64>, q: &DVector<f64>, z: DVector<f64>) -> DVector<f64> {
    let res = |z: &DVector<f64>| {
        let mut w = q.clone();
        w.gemv(1.0, mat, z, 1.0);
        lcp_residuals(z, &w).max()
    };
    let mut best_r = res(&z);
    // a candidate already at round-off needs no polish (the acceptance tolerance,
    // `residual_tol`, is orders of magnitude above this)
    let round_off = POLISH_SKIP * (1.0 + q.amax()) * (1.0 + z.amax());
    let mut best = z;
    let mut solved: Option<Vec<usize>> = None;
    for _ in 0..2 {
        if best_r <= round_off {
            break;
        }
        let mut w = q.clone();
        w.gemv(1.0, mat, &best, 1.0);
        let support: Vec<usize> = (0..q.len()).filter(|&i| best[i] > w[i]).collect();
        // the same support as the last solve gives the same system: nothing to gain
        if support.is_empty() || solved.as_ref() == Some(&support) {
            break;
        }
        let k = support.len();
        let a = DMatrix::from_fn(k, k, |i, j| mat[(support[i], support[j])]);
        let b = DVector::from_fn(k, |i, _| -q[support[i]]);
        let candidate = |zs: &DVector<f64>| {
            let mut cand = DVector::zeros(q.len());
            for (i, &si) in support.iter().enumerate() {
                cand[si] = zs[i].max(0.0);
            }
            cand
        };
        // LU first (a nonsingular support, the common case), the SVD's minimum-norm solve
        // when LU fails or does not improve (a singular M_SS)
        let lu = a.clone().lu().solve(&b).map(|zs| {
            let cand = candidate(&zs);
            (res(&cand), cand)
        });
        let (r, cand) = match lu {
            Some((r, cand)) if r < best_r => (r, cand),
            _ => {
                let svd = a.svd(true, true);
                let eps = 1e-13 * svd.singular_values.max();
                let Ok(zs) = svd.solve(&b, eps) else {
                    break;
                };
                let cand = candidate(&zs);
                (res(&cand), cand)
            }
        };
        if r < best_r {
            best_r = r;
            best = cand;
            solved = Some(support);
        } else {
            break;
        }
    }
    best
}

/// Whether two contacts are the same constraint up to round-off (relative `1e-12`).
fn same_contact(a: &RigidContact, b: &RigidContact) -> bool {
    let close = |x: f64, y: f64, scale: f64| (x - y).abs() <= 1e-12 * (1.0 + scale);
    let tol = 1e-12 * (1.0 + a.normal.amax());
    a.friction == b.friction
        && close(a.gap, b.gap, a.gap.abs())
        && a.tangents.len() == b.tangents.len()
        && a.normal.close_to(&b.normal, tol)
        && a.tangents
            .iter()
            .zip(&b.tangents)
            .all(|(x, y)| x.close_to(y, tol))
}

/// The assembled LCP of one group of coupled contacts (a connected component of the
/// Delassus matrix: contacts that share no body, directly or through other contacts, have
/// independent LCPs).
struct StepLcp {
    /// Snapshot index of the contact of each contact normal row (the limit rows follow).
    contacts: Vec<usize>,
    /// Per pyramid direction: its normal row and its components along the contact's
    /// tangents.
    directions: Vec<(usize, Vec<f64>)>,
    mat: DMatrix<f64>,
    /// `q` with the full stabilization `φ₀/h`.
    q: DVector<f64>,
    /// Gaps φ₀ of the normal rows as the stabilization uses them ([`stabilized_gap`]); 0 for
    /// a bouncing row's penetration.
    gaps: Vec<f64>,
    /// Constant term b of each normal row (`w = J v⁺ + b`): φ/h, or the Newton restitution
    /// term of a bouncing contact.
    offsets: Vec<f64>,
    /// Number of normal rows.
    m: usize,
    /// Number of impulse unknowns (normal rows + pyramid directions).
    ni: usize,
    /// `M⁻¹ J`, column by column.
    minv_j: Vec<SparseRow>,
    /// `J v_free`.
    jv: DVector<f64>,
    /// Kinetic energy of `v_free` on the bodies of the group.
    ke_free: f64,
    /// Column (and row) scaling of the equilibrated LCP.
    col_scale: DVector<f64>,
    /// Row scaling of the equilibrated LCP.
    row_scale: DVector<f64>,
}

/// One normal row of a step before the split into groups.
struct NormalRow {
    row: SparseRow,
    gap: f64,
    /// Constant term b of the row (`w = J v⁺ + b ≥ 0`).
    offset: f64,
    friction: f64,
    /// Snapshot index of its contact (`None` for a joint limit).
    contact: Option<usize>,
}

impl StepLcp {
    /// The contact impulses of the solution `z` (normal rows, then pyramid directions):
    /// one per contact with a nonzero impulse, tangential impulses summed over its
    /// directions.
    fn contact_impulses(&self, z: &DVector<f64>) -> Vec<crate::stepper::ContactImpulse> {
        let mut out: Vec<crate::stepper::ContactImpulse> = self
            .contacts
            .iter()
            .enumerate()
            .map(|(i, &contact)| crate::stepper::ContactImpulse {
                contact,
                normal: z[i],
                tangent: Vec::new(),
            })
            .collect();
        for (k, (i, coeffs)) in self.directions.iter().enumerate() {
            if let Some(imp) = out.get_mut(*i) {
                imp.tangent.resize(coeffs.len(), 0.0);
                for (t, c) in imp.tangent.iter_mut().zip(coeffs) {
                    *t += c * z[self.m + k];
                }
            }
        }
        out.retain(|imp| imp.normal != 0.0 || imp.tangent.iter().any(|t| *t != 0.0));
        out
    }
}

/// An accepted candidate.
struct Accepted {
    z: DVector<f64>,
    pivots: usize,
    residual: f64,
    energy_gain: f64,
    energy_bound: f64,
}

impl AnitescuPotraStepper {
    /// One step through the staged step ([`Stepper::step`], the convex fallback included)
    /// with its diagnostics (see the module docs for the robust solve); a step solved by the
    /// fallback reports its impulses only ([`Stepper::last_step_fell_back`]).
    ///
    /// # Errors
    /// As [`Stepper::step`]: [`SimError::InvalidOption`] for a bad step size or pyramid,
    /// [`SimError::Unsupported`] for bilateral constraints, [`SimError::Model`] for a bad
    /// state, [`SimError::Solver`] when neither the LCP nor the fallback found a checked
    /// solution, [`SimError::Diverged`] for a singular mass matrix or a non-finite result.
    pub fn step_report(
        &mut self,
        model: &Model,
        state: &State,
        h: f64,
    ) -> Result<(State, ApStepReport), SimError> {
        let next = Stepper::step(self, model, state, h)?;
        Ok((next, self.last_report.clone()))
    }

    /// The stepper's options are in range.
    fn check_options(&self) -> Result<(), SimError> {
        if self.directions < 3 {
            return Err(SimError::InvalidOption {
                option: "directions",
                reason: "a friction pyramid needs at least 3 directions".into(),
            });
        }
        if !(self.residual_tol.is_finite() && self.residual_tol > 0.0) {
            return Err(SimError::InvalidOption {
                option: "residual_tol",
                reason: format!("must be positive and finite, got {}", self.residual_tol),
            });
        }
        Ok(())
    }

    /// The contact-model stage: the post-step velocity from the free motion, one LCP per
    /// group of coupled contacts, and the report of the solves.
    fn solve_groups(
        &self,
        step: &crate::pipeline::Step<'_>,
        free: &crate::free_motion::FreeMotion,
    ) -> Result<(DVector<f64>, ApStepReport), SimError> {
        let (state, h) = (step.state, step.h);
        let mut report = ApStepReport::default();
        let (groups, duplicates) = self.assemble(free, &state.v, h);
        report.duplicates_dropped = duplicates;
        let mut v1 = free.v_free.clone();
        for lcp in &groups {
            let mut part = ApStepReport::default();
            let acc = self.solve(lcp, h, &mut part, state.t)?;
            report.lcp_size += lcp.mat.nrows();
            report.attempts += part.attempts;
            report.pivots += acc.pivots;
            report.residual = report.residual.max(acc.residual);
            report.energy_gain += acc.energy_gain;
            report.energy_bound += acc.energy_bound;
            report.max_impulse = report.max_impulse.max(acc.z.rows(0, lcp.ni).amax());
            report.regularization = report.regularization.max(part.regularization);
            report.stabilization_dropped |= part.stabilization_dropped;
            report.q_relaxed |= part.q_relaxed;
            report.inexact |= part.inexact;
            if report.restart == Restart::Cold {
                report.restart = part.restart;
            }
            report.contact_impulses.extend(lcp.contact_impulses(&acc.z));
            for (k, col) in lcp.minv_j.iter().enumerate() {
                col.add_scaled_to(acc.z[k], &mut v1);
            }
        }
        report.contact_impulses.sort_by_key(|c| c.contact);
        Ok((v1, report))
    }

    /// Constant term b of a contact's normal row `w = J_n v⁺ + b ≥ 0`: φ/h (the gap may close
    /// within the step), or, for a contact with restitution e > 0 that closes within the step
    /// at more than [`AnitescuPotraStepper::restitution_threshold`], Newton's law
    /// `v_n⁺ ≥ −e v_n⁻` (`b = e v_n⁻`): the bounce starts at the step that would close the
    /// gap, up to h·|v_n⁻| before the surfaces touch.
    fn row_offset(&self, c: &RigidContact, v: &DVector<f64>, h: f64) -> f64 {
        let phi_h = stabilized_gap(c.gap, h) / h;
        let Some(e) = c.restitution.filter(|e| *e > 0.0) else {
            return phi_h;
        };
        let vn = c.normal.dot(v);
        if vn < -self.restitution_threshold && c.gap + h * vn < 0.0 {
            e * vn
        } else {
            phi_h
        }
    }

    /// Builds the LCPs of the step, one per group of coupled contacts (see [`StepLcp`]), with
    /// their equilibration; none without active rows. Also returns the number of contacts
    /// dropped as exact duplicates of an earlier one.
    fn assemble(
        &self,
        free: &crate::free_motion::FreeMotion,
        v: &DVector<f64>,
        h: f64,
    ) -> (Vec<StepLcp>, usize) {
        let (normals, dirs, duplicates) = self.normal_rows_and_directions(free, v, h);
        let m_all = normals.len();
        if m_all == 0 {
            return (Vec::new(), duplicates);
        }
        // Columns of the impulse map J: normal rows, then pyramid directions.
        let columns: Vec<SparseRow> = normals
            .iter()
            .map(|n| n.row.clone())
            .chain(dirs.iter().map(|d| d.1.clone()))
            .collect();
        // a contact's normal and pyramid columns form one group (its γ couples them)
        let owner: Vec<usize> = (0..m_all).chain(dirs.iter().map(|d| d.0)).collect();
        let delassus = free.mass.delassus(&columns, &owner);
        let mut entries_of: Vec<Vec<(usize, usize, f64)>> =
            vec![Vec::new(); delassus.components.len()];
        for &e in &delassus.entries {
            entries_of[delassus.component_of[e.0]].push(e);
        }
        let impulse_map = ImpulseMap {
            normals,
            dirs,
            columns,
            delassus,
        };
        let mut local = vec![0usize; impulse_map.columns.len()];
        let mut groups = Vec::with_capacity(impulse_map.delassus.components.len());
        for (comp, entries) in impulse_map.delassus.components.iter().zip(&entries_of) {
            groups.push(group_lcp(free, &impulse_map, comp, entries, &mut local, h));
        }
        (groups, duplicates)
    }

    /// The normal rows of the step (contacts, then limits) and the pyramid directions of
    /// the contacts with friction; contacts that exactly repeat an earlier one are dropped
    /// and counted.
    fn normal_rows_and_directions(
        &self,
        free: &crate::free_motion::FreeMotion,
        v: &DVector<f64>,
        h: f64,
    ) -> (Vec<NormalRow>, Vec<PyramidDirection>, usize) {
        let mut normals: Vec<NormalRow> = Vec::new();
        let mut dirs: Vec<PyramidDirection> = Vec::new();
        let mut kept: Vec<&RigidContact> = Vec::new();
        let mut duplicates = 0;
        for c in &free.contacts {
            if kept.iter().any(|k| same_contact(k, c)) {
                duplicates += 1;
                continue;
            }
            kept.push(c);
            let i = normals.len();
            normals.push(NormalRow {
                row: c.normal.clone(),
                gap: c.gap,
                offset: self.row_offset(c, v, h),
                friction: c.friction,
                contact: Some(c.index),
            });
            if c.friction > 0.0 {
                match free.dimension {
                    Dimension::Planar => {
                        let t = &c.tangents[0];
                        dirs.push((i, t.clone(), vec![1.0]));
                        dirs.push((i, t.scaled(-1.0), vec![-1.0]));
                    }
                    Dimension::Spatial => {
                        let (t1, t2) = (&c.tangents[0], &c.tangents[1]);
                        for k in 0..self.directions {
                            let a = 2.0 * std::f64::consts::PI * k as f64 / self.directions as f64;
                            let d = SparseRow::combine(a.cos(), t1, a.sin(), t2);
                            dirs.push((i, d, vec![a.cos(), a.sin()]));
                        }
                    }
                }
            }
        }
        for l in &free.limits {
            normals.push(NormalRow {
                row: l.row.clone(),
                gap: l.phi,
                offset: stabilized_gap(l.phi, h) / h,
                friction: 0.0,
                contact: None,
            });
        }
        (normals, dirs, duplicates)
    }

    /// The solve cascade of the module docs; returns the first checked solution.
    fn solve(
        &self,
        lcp: &StepLcp,
        h: f64,
        report: &mut ApStepReport,
        t: f64,
    ) -> Result<Accepted, SimError> {
        let n = lcp.mat.nrows();
        let mut q_plus = lcp.q.clone();
        let mut any_penetration = false;
        for k in 0..lcp.m {
            if lcp.gaps[k] < 0.0 {
                q_plus[k] -= lcp.gaps[k] / h;
                any_penetration = true;
            }
        }
        let scaled_mat = DMatrix::from_fn(n, n, |i, j| {
            lcp.row_scale[i] * lcp.mat[(i, j)] * lcp.col_scale[j]
        });
        // The last stage's q, relaxed by round-off on every impulse row (step 6 of the
        // module docs).
        let mut q_relaxed = if any_penetration {
            q_plus.clone()
        } else {
            lcp.q.clone()
        };
        let relax = ROUNDOFF_RELAXATION * (1.0 + q_relaxed.amax());
        for k in 0..lcp.ni {
            q_relaxed[k] += relax;
        }
        let mut why: Vec<String> = Vec::new();
        // (q, penetration dropped, relaxed by round-off)
        let mut stabilizations: Vec<(&DVector<f64>, bool, bool)> = vec![(&lcp.q, false, false)];
        if any_penetration {
            stabilizations.push((&q_plus, true, false));
        }
        stabilizations.push((&q_relaxed, any_penetration, true));
        let ramp = DVector::from_fn(n, |i, _| 1.0 + i as f64 / n as f64);
        let mut inexact: Option<(Accepted, f64, bool, Restart)> = None;
        for (q, drop, relaxed) in stabilizations {
            let q_scaled = q.component_mul(&lcp.row_scale);
            let mut support: Option<Vec<usize>> = None;
            let mut plan: Vec<(f64, Restart)> = vec![(0.0, Restart::Cold)];
            plan.push((0.0, Restart::Warm));
            plan.push((0.0, Restart::Ramp));
            plan.extend(REGULARIZATION.iter().map(|&e| (e, Restart::Cold)));
            for (eps, restart) in plan {
                let mut opts = self.lemke.clone();
                match restart {
                    Restart::Cold => {}
                    Restart::Warm => match &support {
                        Some(s) => opts.warm_start = Some(s.clone()),
                        None => continue,
                    },
                    Restart::Ramp => opts.covering = Some(ramp.clone()),
                }
                report.attempts += 1;
                let mut mhat = scaled_mat.clone();
                for i in 0..n {
                    mhat[(i, i)] += eps;
                }
                let cand = Lcp::new(mhat, q_scaled.clone())
                    .and_then(|l| lemke(&l, &opts))
                    .map_err(|e| e.to_string())
                    .and_then(|s| {
                        let zhat = polish(&scaled_mat, &q_scaled, s.z);
                        if support.is_none() {
                            support = Some((0..n).filter(|&i| zhat[i] > 0.0).collect());
                        }
                        let z = zhat.component_mul(&lcp.col_scale);
                        let accept = |(residual, energy_gain, energy_bound)| Accepted {
                            z: z.clone(),
                            pivots: s.iterations,
                            residual,
                            energy_gain,
                            energy_bound,
                        };
                        self.check(lcp, q, &z, 1.0).map(accept).inspect_err(|_| {
                            if inexact.is_none() {
                                inexact = self
                                    .check(lcp, q, &z, INEXACT_FACTOR)
                                    .ok()
                                    .map(|checked| (accept(checked), eps, drop, restart));
                            }
                        })
                    });
                match cand {
                    Ok(acc) => {
                        report.regularization = eps;
                        report.stabilization_dropped = drop;
                        report.q_relaxed = relaxed;
                        report.restart = restart;
                        return Ok(acc);
                    }
                    Err(e) => why.push(format!(
                        "[{restart:?}, ε = {eps:e}{}{}] {e}",
                        if drop { ", φ⁺" } else { "" },
                        if relaxed { ", q + δ" } else { "" }
                    )),
                }
            }
        }
        if let Some((acc, eps, drop, restart)) = inexact {
            report.regularization = eps;
            report.stabilization_dropped = drop;
            report.restart = restart;
            report.inexact = true;
            return Ok(acc);
        }
        Err(SimError::Solver(SolverError::NoSolution {
            solver: SOLVER,
            reason: format!(
                "no checked LCP solution at t = {t} after {} attempts (size {n}): {}",
                report.attempts,
                why.join("; ")
            ),
        }))
    }

    /// Residual and energy checks of a candidate `z` on the unscaled LCP with vector `q`.
    /// Returns `(residual, energy gain, energy bound)` or why the candidate is rejected.
    /// The kinetic-energy change of the impulses `λ = z_{0..ni}` is
    /// `½‖v_free + M⁻¹Jλ‖²_M − ½‖v_free‖²_M = λᵀ J v_free + ½ λᵀ (Jᵀ M⁻¹ J) λ`.
    fn check(
        &self,
        lcp: &StepLcp,
        q: &DVector<f64>,
        z: &DVector<f64>,
        tol_factor: f64,
    ) -> Result<(f64, f64, f64), String> {
        if z.iter().any(|x| !x.is_finite()) {
            return Err("non-finite solution".into());
        }
        let mut w = q.clone();
        w.gemv(1.0, &lcp.mat, z, 1.0);
        let residual = lcp_residuals(z, &w).max();
        let scale = (1.0 + q.amax()) * (1.0 + z.amax());
        let tol = self.residual_tol * tol_factor * scale;
        if residual.is_nan() || residual > tol {
            return Err(format!("residual {residual:e} above {tol:e}"));
        }
        let ni = lcp.ni;
        let lambda = z.rows(0, ni);
        let ke_impulse = 0.5 * lambda.dot(&(lcp.mat.view((0, 0), (ni, ni)) * lambda));
        let gain = lambda.dot(&lcp.jv) + ke_impulse;
        // −λᵀb⁺ is the work of the rows' constant terms: a penetration correction (φ < 0)
        // or a restitution target (e v_n⁻ < 0)
        let bound: f64 = (0..lcp.m).map(|k| z[k] * (-lcp.offsets[k]).max(0.0)).sum();
        let slack = 1e-8 * (lcp.ke_free + ke_impulse + bound) + 1e-12;
        if gain.is_nan() || gain > bound + slack {
            return Err(format!(
                "kinetic energy gain {gain:e} J above its bound {bound:e} J"
            ));
        }
        Ok((residual, gain, bound))
    }
}

impl crate::contact_set::ContactModel for AnitescuPotraStepper {
    const NAME: &'static str = SOLVER;

    fn check_options(&self) -> Result<(), SimError> {
        AnitescuPotraStepper::check_options(self)
    }

    fn workspace(&mut self) -> &mut crate::contact_set::SnapshotWorkspace {
        &mut self.workspace
    }

    /// The free motion of the contact set, then one LCP per group of coupled contacts.
    fn velocity(
        &mut self,
        step: &crate::pipeline::Step<'_>,
        contacts: &mut crate::contact_set::ContactSet<'_>,
    ) -> Result<DVector<f64>, SimError> {
        let free = contacts.free_motion(SOLVER)?;
        self.fell_back = false;
        match self.solve_groups(step, &free) {
            Ok((v1, report)) => {
                self.last_report = report;
                Ok(v1)
            }
            // No checked LCP solution: the regularized convex program of the same contacts
            // (always feasible), counted as a fallback.
            Err(e) if crate::recovery::recoverable(&e) => {
                let (v1, impulses) = crate::free_motion::regularized_step(&free, step.h)?;
                self.fell_back = true;
                self.last_report = ApStepReport {
                    contact_impulses: impulses,
                    ..ApStepReport::default()
                };
                Ok(v1)
            }
            Err(e) => Err(e),
        }
    }
}

impl Stepper for AnitescuPotraStepper {
    fn name(&self) -> &'static str {
        "anitescu-potra"
    }

    fn honours_restitution(&self) -> bool {
        true
    }

    fn advance(&mut self, step: &crate::pipeline::Step<'_>) -> Result<State, SimError> {
        self.last_report.contact_impulses.clear();
        crate::contact_set::rigid_step(self, step)
    }

    fn last_step_converged(&self) -> bool {
        !self.last_report.inexact
    }

    fn last_step_fell_back(&self) -> bool {
        self.fell_back
    }

    /// The snapshot of a step detects contacts within the speculative margins.
    fn contact_margins(&self, model: &Model, h: f64) -> ContactMargins {
        ContactMargins::speculative(model.contact_margin, h)
    }

    fn last_contact_impulses(&self, _h: f64) -> Option<Vec<crate::stepper::ContactImpulse>> {
        Some(self.last_report.contact_impulses.clone())
    }
}

/// A pyramid direction: its contact's normal row, its column, and its components along
/// the contact's tangents.
type PyramidDirection = (usize, SparseRow, Vec<f64>);

/// The impulse map `J` of a step: normal rows (contacts, then limits), pyramid directions,
/// their columns in that order, and the Delassus matrix of the columns.
struct ImpulseMap {
    /// Normal rows: contacts, then limits.
    normals: Vec<NormalRow>,
    /// Pyramid directions of the contacts with friction.
    dirs: Vec<PyramidDirection>,
    /// The columns of `J`: normal rows, then pyramid directions.
    columns: Vec<SparseRow>,
    /// `W = Jᵀ M⁻¹ J` of the columns, by component.
    delassus: Delassus,
}

/// The LCP of one group of coupled contacts (a component of the Delassus pattern) with
/// `entries` its Delassus entries; `local` maps global columns to the group's (scratch).
fn group_lcp(
    free: &crate::free_motion::FreeMotion,
    map: &ImpulseMap,
    comp: &Component,
    entries: &[(usize, usize, f64)],
    local: &mut [usize],
    h: f64,
) -> StepLcp {
    let (normals, dirs, columns) = (&map.normals, &map.dirs, &map.columns);
    let v_free = &free.v_free;
    let m_all = normals.len();
    for (k, &c) in comp.columns.iter().enumerate() {
        local[c] = k;
    }
    // the group's columns are increasing: its normal rows (contacts, then limits)
    // come first, then its pyramid directions, each contact's consecutively
    let m = comp.columns.iter().filter(|&&c| c < m_all).count();
    let ni = comp.columns.len();
    let group_dirs: Vec<usize> = comp.columns[m..].iter().map(|&c| c - m_all).collect();
    let friction_rows: Vec<usize> = {
        let mut f: Vec<usize> = group_dirs.iter().map(|&d| local[dirs[d].0]).collect();
        f.dedup();
        f
    };
    let ng = friction_rows.len();
    let n = ni + ng;
    let mut mat = DMatrix::zeros(n, n);
    for &(i, j, w) in entries {
        mat[(local[i], local[j])] += w;
    }
    let jv = DVector::from_fn(ni, |k, _| columns[comp.columns[k]].dot(v_free));
    let mut q = DVector::zeros(n);
    for k in 0..ni {
        q[k] = jv[k];
    }
    for k in 0..m {
        q[k] += normals[comp.columns[k]].offset;
    }
    let group = GroupLayout {
        m,
        ni,
        dirs: &group_dirs,
        friction_rows: &friction_rows,
    };
    let (col_scale, row_scale) = friction_columns_and_scaling(&mut mat, map, comp, local, &group);
    let rows = || comp.columns[..m].iter().map(|&c| &normals[c]);
    StepLcp {
        contacts: rows().filter_map(|n| n.contact).collect(),
        directions: group_dirs
            .iter()
            .map(|&d| (local[dirs[d].0], dirs[d].2.clone()))
            .collect(),
        mat,
        q,
        // a bouncing row has no penetration correction to drop
        gaps: rows()
            .map(|n| {
                if n.offset == stabilized_gap(n.gap, h) / h {
                    stabilized_gap(n.gap, h)
                } else {
                    n.gap.max(0.0)
                }
            })
            .collect(),
        offsets: rows().map(|n| n.offset).collect(),
        m,
        ni,
        minv_j: comp
            .columns
            .iter()
            .map(|&c| map.delassus.minv_columns[c].clone())
            .collect(),
        jv,
        ke_free: free.mass.kinetic_energy_of(v_free, &comp.blocks),
        col_scale,
        row_scale,
    }
}

/// The column layout of one group's LCP: `m` normal rows, then its pyramid directions (`ni`
/// impulse columns in all), then one friction column per contact with friction.
struct GroupLayout<'a> {
    /// Normal rows of the group.
    m: usize,
    /// Impulse columns of the group (normal rows and pyramid directions).
    ni: usize,
    /// The group's pyramid directions (indices into the step's directions).
    dirs: &'a [usize],
    /// The group's normal row of each friction column.
    friction_rows: &'a [usize],
}

/// Writes each friction column's coupling (`μ` in the normal row, ±1 with its pyramid
/// directions) into `mat` and returns the equilibration's column and row scales: unit
/// Delassus diagonal for the impulses, and per friction column the mean of its
/// directions' row scales and the largest of their column scales.
fn friction_columns_and_scaling(
    mat: &mut DMatrix<f64>,
    map: &ImpulseMap,
    comp: &Component,
    local: &[usize],
    group: &GroupLayout<'_>,
) -> (DVector<f64>, DVector<f64>) {
    let (m, ni) = (group.m, group.ni);
    let n = mat.nrows();
    // Equilibration: unit Delassus diagonal for the impulses.
    let mut col_scale = DVector::from_element(n, 1.0);
    let dmax = (0..ni).fold(0.0_f64, |a, i| a.max(mat[(i, i)]));
    for i in 0..ni {
        let d = mat[(i, i)];
        if d > 1e-14 * dmax && d.is_finite() {
            col_scale[i] = 1.0 / d.sqrt();
        } else if dmax > 0.0 {
            col_scale[i] = 1.0 / dmax.sqrt();
        }
    }
    let mut row_scale = col_scale.clone();
    for (g, &row) in group.friction_rows.iter().enumerate() {
        let col = ni + g;
        let mut sum = 0.0;
        let mut cnt = 0.0;
        let mu = map.normals[comp.columns[row]].friction;
        let mut big = mu * col_scale[row];
        for (k, &d) in group.dirs.iter().enumerate() {
            if local[map.dirs[d].0] == row {
                mat[(m + k, col)] = 1.0;
                mat[(col, m + k)] = -1.0;
                sum += row_scale[m + k];
                cnt += 1.0;
                big = big.max(col_scale[m + k]);
            }
        }
        mat[(col, row)] = mu;
        col_scale[col] = if sum > 0.0 { cnt / sum } else { 1.0 };
        row_scale[col] = if big > 0.0 { 1.0 / big } else { 1.0 };
    }
    (col_scale, row_scale)
}
