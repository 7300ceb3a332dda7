//! Complementarity-free maximal-dissipation time stepping: the forward counterpart of Stage I
//! of the two-stage QP inverse dynamics of Zapolsky & Drumwright (*Inverse Dynamics with Rigid
//! Contact and Friction*, 2017, §6, eqs 69–79 with erratum E6 of
//! docs/decisions/004-inverse-dynamics.md; the model of Drumwright & Shell, "Modeling contact
//! friction and joint friction in dynamic robotic simulation using the principle of maximum
//! dissipation", WAFR 2010).
//!
//! Given the state (q, v) (actuator impulses are applied by the caller before the step, as
//! for every [`Stepper`]), the contact impulses minimize the kinetic energy after the step,
//! subject to velocity-level non-penetration with the same φ/h stabilization as the
//! controller and the Anitescu–Potra stepper, and to the friction pyramid; there is **no**
//! complementarity between the normal impulse and the separation velocity. In force units
//! f = z/h with `R = [Nᵀ Tᵀ]` (normal rows, then the tangent rows T₁, T₂ — one planar —
//! stacked in direction blocks as in the controller, erratum E12):
//!
//! ```text
//! v* = v + h M⁻¹ f_ext,   v⁺ = v* + h M⁻¹ R f,
//! min_f  ½ fᵀ (Rᵀ M⁻¹ R) f + fᵀ Rᵀ v* / h          (= ½ v⁺ᵀ M v⁺ / h² + const)
//! s.t.   N v⁺ ≥ −φ/h,   f_N ≥ 0,   Σ_j |f_T,j,i| ≤ μᵢ f_N,i   (the pyramid; dropped when no_slip)
//! ```
//!
//! The pyramid is the controller's, spanned by the edges `[T₁; −T₁; T₂; −T₂]` with edge forces
//! `f_F ≥ 0`, `Σ_edges f_F,i ≤ μᵢ f_N,i`: the net tangential forces it admits are exactly the
//! set above, written as its 2^k faces `Σ_j s_j f_T,j,i ≤ μᵢ f_N,i` (s ∈ {±1}^k) so that the
//! unknowns are the net forces (3 per spatial contact instead of 5, and a Hessian without the
//! edges' rank deficiency). [`MaxDissipationImpulses::edges`] reports the edge forces of the
//! net forces (`f⁺`, `f⁻`).
//!
//! then `q₁ = q₀ + h N(q₀) v⁺`. Joint-limit rows enter as frictionless normal rows. Only
//! rows within [`MaxDissipationStepper::active_gap`] (0.1 mm by default, the contact set of
//! the inverse-dynamics controllers) or that would close during the step under the free
//! velocity (φ + h·row·v* ≤ 0) enter: without complementarity a contact anywhere inside the
//! model's contact margin would otherwise be pushed "at a distance" whenever that lowers
//! the kinetic energy. Contacts are detected within the speculative margins (each
//! collider's margin widened by its travel over the step). A row left out that the step's
//! velocity would close (φ + h·row·v⁺ < 0: bodies driven into each other by the impulses of
//! other contacts, as in a stack landing) joins the set and the QP is solved again, at most
//! [`ACTIVE_SET_ROUNDS`] times; a step that still leaves such a row is accepted and counted
//! as not converged ([`Stepper::last_step_converged`]). A joining contact brings along the
//! contacts of its bodies that stay within the model's margin over the step (a landing stack
//! stops in one round, not one sphere per round). When a body leaves the step faster than it
//! entered it (by more than half the model's contact margin over the step, along some
//! coordinate), contacts are detected once more within margins that cover both velocities,
//! and those the step's velocity would close join (a sphere kicked towards the ground by a
//! collision); their impulses act but are not reported, as they are not in the snapshot of
//! the step's start state.
//! Solved by Clarabel as a sparse QP (the Hessian `Rᵀ M⁻¹ R` assembled from the columns each
//! body touches, so a pile costs O(contacts)); the returned impulses are checked
//! against the constraints (relative residual ≤ [`MaxDissipationStepper::tolerance`]).
//!
//! Known property of the complementarity-free model (not a bug): a contact that slides
//! receives more normal impulse than needed to stop penetration, because extra normal
//! impulse buys friction dissipation. For one point sliding on a plane with the pyramid
//! edge along the sliding direction the optimum has `v⁺_n = μ v⁺_t` (a small lift-off),
//! see `tests/max_dissipation.rs`.

use crate::contact_set::{ContactModel, ContactSet, SnapshotWorkspace};
use crate::error::SimError;
use crate::free_motion::{
    stabilized_gap, FreeMotion, MassSolver, RigidContact, RigidLimit, SparseRow,
};
use crate::stepper::Stepper;
use nalgebra::DVector;
use nonsmooth_core::geometry::ContactMargins;
use nonsmooth_core::{Model, State};
use nonsmooth_solvers::conic::{
    Cone, ConicOptions, ConicProblem, ConicProblemBuilder, ConicSolution, ConicSolver,
};
use nonsmooth_solvers::{SolveStatus, SolverError};

/// Most solves of one step's QP while rows that its velocity would close join the active set
/// (module docs); a step that still leaves such rows is accepted as not converged.
pub const ACTIVE_SET_ROUNDS: usize = 200;

/// The `qp-max-dissipation` stepper.
#[derive(Debug, Clone)]
pub struct MaxDissipationStepper {
    /// Drop the friction pyramid (unbounded tangential impulses, the forward model of
    /// ID_QP,∞); default `false` (the pyramid with each contact's μ, the model of ID_QP,μ).
    pub no_slip: bool,
    /// Clarabel options; by default without iterative refinement (a quarter of a solve
    /// saved), a step whose solve then fails or does not pass the constraint check is solved
    /// again with it ([`Stepper::last_step_repeated_solve`], counted by the
    /// [`crate::Simulator`]).
    pub conic: ConicOptions,
    /// Rows with a gap at most this (m) are always active (default 1e-4 m, the contact
    /// set of the inverse-dynamics controllers); rows farther away enter only when they
    /// would close during the step under the free velocity.
    pub active_gap: f64,
    /// Largest accepted constraint violation of the returned impulses, relative to
    /// `1 + max|right-hand side|` (force units).
    pub tolerance: f64,
    last: Option<MaxDissipationImpulses>,
    repeated_solve: bool,
    converged: bool,
    solver: CachedSolver,
    /// The contact-set stage's workspace (the per-body snapshot, updated in place).
    workspace: SnapshotWorkspace,
}

/// The Clarabel solver of the last step, reused (data updated in place: no setup, no
/// symbolic factorization) while the QP's structure — sizes, cones, sparsity patterns — and
/// the options stay the same, as for a pile at rest. A clone starts without one.
#[derive(Default)]
struct CachedSolver(Option<(ConicSolver, ConicOptions)>);

impl Clone for CachedSolver {
    fn clone(&self) -> Self {
        Self(None)
    }
}

impl std::fmt::Debug for CachedSolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("CachedSolver")
            .field(&self.0.as_ref().map(|(s, _)| s.problem().num_vars()))
            .finish()
    }
}

impl CachedSolver {
    /// Solves `problem`, through the kept solver where its structure allows.
    fn solve(
        &mut self,
        problem: &ConicProblem,
        options: &ConicOptions,
    ) -> Result<ConicSolution, SolverError> {
        if let Some((solver, kept)) = &mut self.0 {
            let old = solver.problem();
            let same = kept == options
                && old.cones() == problem.cones()
                && old.num_vars() == problem.num_vars()
                && old.p().colptr() == problem.p().colptr()
                && old.p().rowval() == problem.p().rowval()
                && old.a().colptr() == problem.a().colptr()
                && old.a().rowval() == problem.a().rowval();
            if same {
                let updated = solver
                    .update_q(problem.q())
                    .and_then(|_| solver.update_b(problem.b()))
                    .and_then(|_| solver.update_p_values(problem.p().nzval()))
                    .and_then(|_| solver.update_a_values(problem.a().nzval()));
                if updated.is_ok() {
                    return solver.solve();
                }
            }
        }
        self.0 = None;
        let mut solver = ConicSolver::new(problem.clone(), options)?;
        let sol = solver.solve();
        self.0 = Some((solver, options.clone()));
        sol
    }
}

impl Default for MaxDissipationStepper {
    fn default() -> Self {
        Self {
            no_slip: false,
            conic: ConicOptions {
                iterative_refinement: false,
                ..ConicOptions::default()
            },
            tolerance: 1e-6,
            active_gap: 1e-4,
            last: None,
            repeated_solve: false,
            converged: true,
            solver: CachedSolver::default(),
            workspace: SnapshotWorkspace::default(),
        }
    }
}

/// The impulses of the last step of a [`MaxDissipationStepper`] (in force units, i.e.
/// impulse / h), for inspection and tests.
#[derive(Debug, Clone, PartialEq)]
pub struct MaxDissipationImpulses {
    /// Normal forces, one per active contact (snapshot order) then one per active joint
    /// limit; a row is active when its gap is at most
    /// [`MaxDissipationStepper::active_gap`] or it would close during the step under the
    /// free velocity (φ + h·row·v* ≤ 0).
    pub normal: DVector<f64>,
    /// Snapshot index of each active contact (the contacts of `normal`, in order), in the
    /// snapshot of the step's start state within the speculative margins
    /// ([`Stepper::contact_margins`]); `usize::MAX` for a contact that only the detection
    /// after the step's impulses found (module docs).
    pub contacts: Vec<usize>,
    /// Pyramid edge forces in direction blocks (`[T₁; −T₁; T₂; −T₂]` spatial, `[T; −T]`
    /// planar), each block one entry per contact.
    pub edges: DVector<f64>,
    /// Number of tangent directions per contact (1 planar, 2 spatial).
    pub ntan: usize,
    /// Kinetic energy ½ v⁺ᵀ M v⁺ after the step (J).
    pub kinetic_energy: f64,
}

impl MaxDissipationImpulses {
    /// Net friction force of contact `i` along tangent `j`: `f_{+T_j,i} − f_{−T_j,i}`.
    pub fn friction(&self, i: usize, j: usize) -> f64 {
        let n = self.edges.len() / (2 * self.ntan).max(1);
        if j >= self.ntan || i >= n {
            return 0.0;
        }
        self.edges[2 * j * n + i] - self.edges[(2 * j + 1) * n + i]
    }
}

impl MaxDissipationStepper {
    /// The stepper with the friction pyramid (`no_slip = false`) or without it.
    pub fn new(no_slip: bool) -> Self {
        Self {
            no_slip,
            ..Self::default()
        }
    }

    /// The impulses of the last successful step (`None` before the first one or after a
    /// step without contacts).
    pub fn last_impulses(&self) -> Option<&MaxDissipationImpulses> {
        self.last.as_ref()
    }
}

impl Stepper for MaxDissipationStepper {
    fn name(&self) -> &'static str {
        "qp-max-dissipation"
    }

    /// The snapshot of a step detects contacts within the speculative margins.
    fn contact_margins(&self, model: &Model, h: f64) -> ContactMargins {
        ContactMargins::speculative(model.contact_margin, h)
    }

    fn last_step_converged(&self) -> bool {
        self.converged
    }

    fn last_step_repeated_solve(&self) -> bool {
        self.repeated_solve
    }

    fn last_contact_impulses(&self, h: f64) -> Option<Vec<crate::stepper::ContactImpulse>> {
        let Some(last) = &self.last else {
            // No step yet, or a step without active rows: no impulses.
            return Some(Vec::new());
        };
        Some(
            last.contacts
                .iter()
                .enumerate()
                .filter(|(_, &contact)| contact != usize::MAX)
                .map(|(i, &contact)| crate::stepper::ContactImpulse {
                    contact,
                    normal: last.normal[i] * h,
                    tangent: (0..last.ntan).map(|j| last.friction(i, j) * h).collect(),
                })
                .collect(),
        )
    }

    fn advance(&mut self, step: &crate::pipeline::Step<'_>) -> Result<State, SimError> {
        self.last = None;
        self.repeated_solve = false;
        self.converged = true;
        crate::contact_set::rigid_step(self, step)
    }
}

impl ContactModel for MaxDissipationStepper {
    const NAME: &'static str = "qp-max-dissipation";

    fn check_options(&self) -> Result<(), SimError> {
        if !(self.tolerance.is_finite() && self.tolerance > 0.0) {
            return Err(SimError::InvalidOption {
                option: "tolerance",
                reason: format!("must be positive and finite, got {}", self.tolerance),
            });
        }
        if !(self.active_gap.is_finite() && self.active_gap >= 0.0) {
            return Err(SimError::InvalidOption {
                option: "active_gap",
                reason: format!("must be finite and non-negative, got {}", self.active_gap),
            });
        }
        Ok(())
    }

    fn workspace(&mut self) -> &mut SnapshotWorkspace {
        &mut self.workspace
    }

    /// Contacts come detected within the speculative margins (each collider's margin widened
    /// by its travel over the step), so that a fast body meets its contact before it passes
    /// through; the active set below then decides which of them act.
    fn velocity(
        &mut self,
        step: &crate::pipeline::Step<'_>,
        contacts: &mut ContactSet<'_>,
    ) -> Result<DVector<f64>, SimError> {
        let (model, state, input, h) = (step.model, step.state, step.input, step.h);
        let free = contacts.free_motion(Self::NAME)?;
        let FreeMotion {
            contacts: mut all_contacts,
            limits: all_limits,
            mass,
            v_free,
            ..
        } = free;
        // Active set: rows within `active_gap` or that would close during the step under the
        // free velocity, φ + h·(row·v*) ≤ 0. Without complementarity a row with a positive
        // gap could otherwise receive a normal impulse "at a distance" whenever that lowers
        // the kinetic energy (e.g. catch a falling foot anywhere inside the contact margin).
        // A row left out that the step's velocity would close (φ + h·row·v⁺ < 0: bodies
        // driven into each other by the impulses of other contacts, a stack landing) joins
        // the set and the QP is solved again, up to ACTIVE_SET_ROUNDS times.
        let gap = self.active_gap;
        let closing = |phi: f64, row: &SparseRow, v: &DVector<f64>| phi + h * row.dot(v) <= 0.0;
        let mut on_contacts: Vec<bool> = all_contacts
            .iter()
            .map(|c| c.gap <= gap || closing(c.gap, &c.normal, &v_free))
            .collect();
        let mut on_limits: Vec<bool> = all_limits
            .iter()
            .map(|l| l.phi <= gap || closing(l.phi, &l.row, &v_free))
            .collect();
        let mut rounds = 0;
        let mut redetected = false;
        let (v1, impulses) = loop {
            let contacts: Vec<&RigidContact> = all_contacts
                .iter()
                .zip(&on_contacts)
                .filter_map(|(c, on)| on.then_some(c))
                .collect();
            let limits: Vec<&RigidLimit> = all_limits
                .iter()
                .zip(&on_limits)
                .filter_map(|(l, on)| on.then_some(l))
                .collect();
            let (v1, impulses) =
                self.solve_active(&contacts, &limits, &mass, &v_free, h, state.t)?;
            rounds += 1;
            let mut joined = join_closing(
                &all_contacts,
                &mut on_contacts,
                &all_limits,
                &mut on_limits,
                &v1,
                h,
                model.contact_margin,
            );
            // A body that leaves the step faster than it entered it (along a coordinate, by
            // more than half the model's margin over the step) may reach contacts beyond the
            // speculative margins of its start velocity: detect once more.
            let sped_up = v1
                .iter()
                .zip(&state.v)
                .any(|(a, b)| h * (a.abs() - b.abs()) > 0.5 * model.contact_margin);
            if !joined && !redetected && sped_up {
                redetected = true;
                for c in contacts_in_reach(model, state, input, h, &v1, &all_contacts)? {
                    all_contacts.push(c);
                    on_contacts.push(true);
                    joined = true;
                }
            }
            if !joined {
                break (v1, impulses);
            }
            if rounds == ACTIVE_SET_ROUNDS {
                // accepted with rows still closing: counted as not converged
                self.converged = false;
                break (v1, impulses);
            }
        };
        self.last = impulses;
        Ok(v1)
    }
}

/// The layout of the QP's unknowns: normal forces (contacts, limits), then the net
/// tangential forces in direction blocks (`m + j·nc + i`: contact i, tangent j).
struct QpLayout {
    /// Active contacts.
    nc: usize,
    /// Normal rows (contacts, then limits).
    m: usize,
    /// Tangent directions per contact.
    ntan: usize,
}

/// The inequality constraints `G f ≤ b` of the QP.
struct QpConstraints {
    /// Triplets of `G`.
    g: Vec<(usize, usize, f64)>,
    /// Right-hand side `b`.
    b: DVector<f64>,
}

impl MaxDissipationStepper {
    /// The QP of the step on the active `contacts` and `limits` (module docs): the velocity
    /// after the step and the impulses (`None` without active rows).
    fn solve_active(
        &mut self,
        contacts: &[&RigidContact],
        limits: &[&RigidLimit],
        mass: &MassSolver,
        v_free: &DVector<f64>,
        h: f64,
        t: f64,
    ) -> Result<(DVector<f64>, Option<MaxDissipationImpulses>), SimError> {
        let nc = contacts.len();
        let nl = limits.len();
        let m = nc + nl;
        if m == 0 {
            return Ok((v_free.clone(), None));
        }
        let ntan = contacts.first().map(|c| c.tangents.len()).unwrap_or(0);
        if contacts.iter().any(|c| c.tangents.len() != ntan) {
            return Err(SimError::Unsupported {
                stepper: "qp-max-dissipation",
                reason: "contacts with different numbers of tangent directions".into(),
            });
        }
        let layout = QpLayout { nc, m, ntan };
        let nz = m + ntan * nc;
        let (columns, phi) = qp_columns(contacts, limits, &layout, h);
        // owners: contact i for its normal and tangent columns, each limit its own
        let owner: Vec<usize> = (0..nz)
            .map(|k| if k < m { k } else { (k - m) % nc })
            .collect();
        let delassus = mass.delassus(&columns, &owner);
        let upper: Vec<_> = delassus
            .entries
            .iter()
            .copied()
            .filter(|&(i, j, _)| i <= j)
            .collect();
        let lin: Vec<f64> = columns.iter().map(|c| c.dot(v_free) / h).collect();
        let cons = self.qp_constraints(contacts, &layout, &delassus.entries, &lin, &phi, h);
        let problem = ConicProblemBuilder::new(nz)
            .quadratic_upper_triplets(&upper)?
            .linear(&lin)?
            .constraint_triplets(Cone::Nonnegative(cons.b.len()), &cons.g, cons.b.as_slice())?
            .build()?;
        let f = self.solve_qp(&problem, &cons, t)?;
        let mut v1 = v_free.clone();
        for (k, col) in delassus.minv_columns.iter().enumerate() {
            col.add_scaled_to(f[k] * h, &mut v1);
        }
        let impulses = MaxDissipationImpulses {
            normal: f.rows(0, m).into_owned(),
            contacts: contacts.iter().map(|c| c.index).collect(),
            edges: pyramid_edges(&f, &layout),
            ntan,
            kinetic_energy: mass.kinetic_energy(&v1),
        };
        Ok((v1, Some(impulses)))
    }

    /// `G f ≤ b`: non-penetration (m rows: −N M⁻¹R f ≤ (N v* + φ/h)/h), with Coulomb
    /// friction the pyramid's faces Σ_j s_j f_T,j,i ≤ μᵢ f_N,i for every sign pattern s
    /// (2^ntan rows per contact; they hold the tangential forces of a frictionless contact
    /// at 0), and f_N ≥ 0 for the rows the faces do not bound (they imply μᵢ f_N,i ≥ 0):
    /// limits, frictionless contacts, every contact without slip.
    fn qp_constraints(
        &self,
        contacts: &[&RigidContact],
        layout: &QpLayout,
        delassus: &[(usize, usize, f64)],
        lin: &[f64],
        phi: &DVector<f64>,
        h: f64,
    ) -> QpConstraints {
        let QpLayout { nc, m, ntan } = *layout;
        let coulomb = !self.no_slip;
        let faces = 1usize << ntan;
        let pyramid: Vec<usize> = if coulomb {
            (0..nc).collect()
        } else {
            Vec::new()
        };
        let signed: Vec<usize> = (0..m)
            .filter(|&k| !coulomb || k >= nc || contacts[k].friction <= 0.0)
            .collect();
        let rows = m + signed.len() + faces * pyramid.len();
        let mut g: Vec<(usize, usize, f64)> = delassus
            .iter()
            .filter(|&&(i, _, _)| i < m)
            .map(|&(i, j, w)| (i, j, -w))
            .collect();
        let mut b = DVector::zeros(rows);
        for k in 0..m {
            // lin = Rᵀv*/h, so (N v* + φ/h)/h = lin + φ/h²
            b[k] = lin[k] + phi[k] / (h * h);
        }
        g.extend(signed.iter().enumerate().map(|(r, &k)| (m + r, k, -1.0)));
        let first_face = m + signed.len();
        for (p, &i) in pyramid.iter().enumerate() {
            for s in 0..faces {
                let r = first_face + faces * p + s;
                g.push((r, i, -contacts[i].friction));
                g.extend((0..ntan).map(|j| {
                    let sign = if s >> j & 1 == 1 { -1.0 } else { 1.0 };
                    (r, m + j * nc + i, sign)
                }));
            }
        }
        QpConstraints { g, b }
    }

    /// Solves the QP; a solve without iterative refinement that fails or does not pass the
    /// checks is repeated with it (and counted) before the step fails.
    fn solve_qp(
        &mut self,
        problem: &ConicProblem,
        cons: &QpConstraints,
        t: f64,
    ) -> Result<DVector<f64>, SimError> {
        let first = self.solver.solve(problem, &self.conic);
        match self.checked_forces(first, cons, t) {
            Ok(f) => Ok(f),
            Err(_) if !self.conic.iterative_refinement => {
                self.repeated_solve = true;
                self.checked_forces(
                    problem.solve(&ConicOptions {
                        iterative_refinement: true,
                        ..self.conic.clone()
                    }),
                    cons,
                    t,
                )
            }
            Err(e) => Err(e),
        }
    }

    /// The QP's forces when the solve reached its tolerance, they are finite and they
    /// satisfy `G f ≤ b` to the stepper's tolerance (relative to `1 + ‖b‖∞`).
    fn checked_forces(
        &self,
        sol: Result<ConicSolution, SolverError>,
        cons: &QpConstraints,
        t: f64,
    ) -> Result<DVector<f64>, SimError> {
        let sol = sol?;
        if sol.status == SolveStatus::MaxIterations {
            return Err(SimError::Solver(SolverError::Failed {
                solver: "clarabel",
                reason: format!(
                    "maximal-dissipation QP stopped at the iteration limit (residuals {:?})",
                    sol.residuals
                ),
            }));
        }
        let f = sol.x;
        if !f.iter().all(|x| x.is_finite()) {
            return Err(SimError::Diverged {
                t,
                reason: "maximal-dissipation QP returned non-finite impulses".into(),
            });
        }
        // Residual check on the constraints themselves.
        let mut gf = -&cons.b;
        for &(i, j, v) in &cons.g {
            gf[i] += v * f[j];
        }
        let viol = gf.max().max(0.0);
        let scale = 1.0 + cons.b.amax();
        if viol > self.tolerance * scale {
            return Err(SimError::Solver(SolverError::Failed {
                solver: "clarabel",
                reason: format!(
                    "maximal-dissipation impulses violate the constraints by {viol:.3e} \
                     (tolerance {:.3e})",
                    self.tolerance * scale
                ),
            }));
        }
        Ok(f)
    }
}

/// `R = [Nᵀ Tᵀ]`: the normal columns (contacts, limits), then the tangent blocks, and the
/// stabilized gap of each normal row.
fn qp_columns(
    contacts: &[&RigidContact],
    limits: &[&RigidLimit],
    layout: &QpLayout,
    h: f64,
) -> (Vec<SparseRow>, DVector<f64>) {
    let QpLayout { nc, m, ntan } = *layout;
    let mut columns = vec![SparseRow::default(); m + ntan * nc];
    let mut phi = DVector::zeros(m);
    for (i, c) in contacts.iter().enumerate() {
        columns[i] = c.normal.clone();
        phi[i] = stabilized_gap(c.gap, h);
        for (j, t) in c.tangents.iter().enumerate() {
            columns[m + j * nc + i] = t.clone();
        }
    }
    for (l, row) in limits.iter().enumerate() {
        columns[nc + l] = row.row.clone();
        phi[nc + l] = stabilized_gap(row.phi, h);
    }
    (columns, phi)
}

/// The pyramid edges of the net tangential forces (`[T₁; −T₁; T₂; −T₂]` blocks).
fn pyramid_edges(f: &DVector<f64>, layout: &QpLayout) -> DVector<f64> {
    let QpLayout { nc, m, ntan } = *layout;
    let mut edges = DVector::zeros(2 * ntan * nc);
    for j in 0..ntan {
        for i in 0..nc {
            let t = f[m + j * nc + i];
            edges[2 * j * nc + i] = t.max(0.0);
            edges[(2 * j + 1) * nc + i] = (-t).max(0.0);
        }
    }
    edges
}

/// Marks as active (`on`) the rows left out that the step's velocity `v1` would close
/// (φ + h·row·v1 < 0) and, in cascade, the contacts that stay within the model's `margin`
/// over the step and share a body with a joining contact (a landing stack stops in one round
/// instead of one sphere per round). Returns whether any row joined.
fn join_closing(
    contacts: &[RigidContact],
    on_contacts: &mut [bool],
    limits: &[RigidLimit],
    on_limits: &mut [bool],
    v1: &DVector<f64>,
    h: f64,
    margin: f64,
) -> bool {
    let closing = |phi: f64, row: &SparseRow| phi + h * row.dot(v1) <= 0.0;
    let mut joined = false;
    // velocity coordinates of the bodies whose contacts join
    let mut touched = vec![false; v1.len()];
    for (c, on) in contacts.iter().zip(on_contacts.iter_mut()) {
        if !*on && closing(c.gap, &c.normal) {
            *on = true;
            joined = true;
            c.normal.entries.iter().for_each(|e| touched[e.0] = true);
        }
    }
    let mut spreading = joined;
    while spreading {
        spreading = false;
        for (c, on) in contacts.iter().zip(on_contacts.iter_mut()) {
            let near = c.gap + h * c.normal.dot(v1).max(0.0) <= margin;
            if !*on && near && c.normal.entries.iter().any(|e| touched[e.0]) {
                *on = true;
                spreading = true;
                c.normal.entries.iter().for_each(|e| touched[e.0] = true);
            }
        }
    }
    for (l, on) in limits.iter().zip(on_limits.iter_mut()) {
        if !*on && closing(l.phi, &l.row) {
            *on = true;
            joined = true;
        }
    }
    joined
}

/// The contacts not among `known` that the step's velocity `v1` would close, detected within
/// speculative margins that cover both the start velocity and `v1`. They carry the index
/// `usize::MAX`: they are not in the snapshot of the step's start state, so their impulses
/// act but are not reported.
fn contacts_in_reach(
    model: &Model,
    state: &State,
    input: &crate::actuation::Actuation,
    h: f64,
    v1: &DVector<f64>,
    known: &[RigidContact],
) -> Result<Vec<RigidContact>, SimError> {
    let cover = State {
        q: state.q.clone(),
        v: v1.zip_map(&state.v, |a, b| if a.abs() > b.abs() { a } else { b }),
        t: state.t,
    };
    let step = crate::pipeline::Step {
        model,
        state: &cover,
        input,
        h,
    };
    let margins = ContactMargins::speculative(model.contact_margin, h);
    let wider = ContactSet::fresh_free_motion(&step, margins, "qp-max-dissipation")?;
    Ok(wider
        .contacts
        .into_iter()
        .filter(|c| c.gap + h * c.normal.dot(v1) <= 0.0 && !known.iter().any(|k| k.pair == c.pair))
        .map(|c| RigidContact {
            index: usize::MAX,
            ..c
        })
        .collect())
}
