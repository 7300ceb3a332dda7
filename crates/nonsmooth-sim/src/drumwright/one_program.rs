//! The one-program contact stage of the `drumwright` stepper ([`FrictionCoupling::OneProgram`]):
//! the step's regularized program in its symmetric `(W + R)` form, solved in the velocity
//! `v₁` by Newton's method ([`nonsmooth_solvers::regularized_contact`]).
//!
//! Per row (Drumwright, eqs 82–85 scaled by `R = S⁻¹`, `S = h²K + hB`): regularization
//! `R = 1/(h(hK + B))` and bias velocity `v̂ = −(ε/h) φ₀` with `ε = hK/(hK + B)`; friction rows
//! (`K_r = 0`, `B_r` the tangential damping, §6.2) have `R_t = 1/(h B_r)` and `v̂_t = 0`. The
//! program's impulses `γ = h λ` then satisfy `γ = P_F(−R⁻¹(J v₁ − v̂))`: the spring–damper
//! law of every row (eq 15, implicit Euler eqs 36–39), projected on its admissible set.
//!
//! Rigid rows (no stiffness, `K → ∞`: `R = 0`, `ε = 1`) get `R = σ W_ii` with `σ` =
//! [`DrumwrightOptions::rigid_regularization`] (`W_ii` the row's Delassus diagonal, as
//! Drake's SAP estimates near-rigid contact), and the friction rows' `R_t` is never below
//! `σ W_ii` either: the program stays strictly convex and its Newton Hessian
//! `M + Jᵀ G J` well conditioned while the rows stay effectively rigid (the penetration a
//! rigid row admits per step is `h σ W_ii γ`, a relative `σ` of the velocity change).
//!
//! Friction (decision D5): the Coulomb bound of each contact enters as a disk
//! `‖γ_t‖ ≤ μ γ̄_n` for an estimate `γ̄_n` of its normal impulse (Tresca friction, a
//! [`ConstraintKind::Disk`]/[`ConstraintKind::Interval`] constraint), the normal row a
//! separate unilateral constraint. Coupling `γ_n` inside the cone of one convex program
//! (SAP's cone) gives every sliding contact the relaxation `v_n − v̂_n + R_n γ_n = μ‖v_t‖`
//! (Anitescu's): with the paper's stiff Hertz rows the normal force exceeds its spring
//! value by `(hK + B) μ ‖v_t‖` unless the contact separates, by `h μ ‖v_t‖` per step, which
//! is the λ_n inflation of the literal program in another form. The estimate is the
//! previous step's normal force of the same contact (none: no bound on the first round),
//! and the disk is updated to `μ γ_n` of the solution until every contact is consistent
//! (sticking strictly inside its bound, or sliding on a bound within
//! [`DrumwrightOptions::sweep_tolerance`] of `μ γ_n`): a fixed point on the normal impulses
//! (Anitescu–Hart), each round one warm-started Newton solve of the whole program, normally
//! one round per step (the previous step's normal forces are already consistent).

use super::*;
use crate::derivatives::{ConstraintSource, StepProblem};
use nonsmooth_solvers::regularized_contact::{
    solve as newton_solve, solve_semismooth, Constraint, ConstraintKind, RegularizedContactProblem,
    RegularizedContactProblemBuilder, RegularizedContactSolution,
};

/// One row of the program: Jacobian entries `(velocity index, value)`, the row's
/// regularization `R` and bias velocity `v̂`.
#[derive(Debug, Clone)]
pub(super) struct ProgramRow {
    pub(super) jac: Vec<(usize, f64)>,
    pub(super) r: f64,
    pub(super) v_hat: f64,
}

/// The generalized mass `A` of the program: dense, or one block per root joint.
pub(super) enum ProgramMass<'a> {
    Dense(&'a DMatrix<f64>),
    Blocks(&'a [nonsmooth_core::snapshot::MassBlock]),
}

/// Everything the one program of a step needs.
pub(super) struct ProgramInput<'a> {
    pub(super) mass: ProgramMass<'a>,
    /// Free velocity `v*` (bilateral rows already eliminated).
    pub(super) v_free: &'a DVector<f64>,
    /// Unilateral rows (contact normals and limits), in the stepper's order.
    pub(super) normals: Vec<ProgramRow>,
    /// Tangent rows, in the stepper's order.
    pub(super) tangents: Vec<ProgramRow>,
    pub(super) contacts: &'a [ContactRows],
    /// The previous step's forces `[λ_n, λ_t₁, λ_t₂]` of each contact, matched by contact
    /// identity (by index in `contacts`; `None`: a new contact).
    pub(super) force_guess: Vec<Option<[f64; 3]>>,
    /// Warm start of the Newton iteration (the step's initial velocity).
    pub(super) warm: &'a DVector<f64>,
    pub(super) planar: bool,
}

/// A checked solution of the one program.
pub(super) struct ProgramSolution {
    /// Whether the step needed a fallback: the fixed point on the friction bounds after a
    /// semismooth Newton solve that did not converge, or, where the fixed point was not
    /// reached, the program with the Coulomb cones coupled (SAP's form).
    pub(super) fell_back: bool,
    /// Forces λ = γ/h of the unilateral rows, then of the tangent rows.
    pub(super) lambda: DVector<f64>,
    pub(super) rounds: usize,
    pub(super) newton_iterations: usize,
}

/// The one program with each contact's friction bounded by a disk (an interval in 2D)
/// and the constraint of each row.
struct BoundedProgram {
    /// The program.
    problem: RegularizedContactProblem,
    /// The constraint of each unilateral row (`usize::MAX`: a row with no Jacobian).
    con_of_row: Vec<usize>,
    /// `(contact, constraint)` of each friction constraint.
    friction: Vec<(usize, usize)>,
}

/// The last change of the friction bounds and whether it was extrapolated, for Aitken's
/// Δ² acceleration of the fixed point.
#[derive(Default)]
struct BoundHistory {
    /// The change of the bounds in the last round.
    last_change: Option<Vec<f64>>,
    /// Whether the last round's bounds were extrapolated.
    extrapolated: bool,
}

impl DrumwrightStepper {
    /// Solves the one program of a step: the Coulomb problem in one semismooth Newton
    /// solve ([`DrumwrightOptions::coulomb_newton`]), else or where that does not converge
    /// the fixed point on the friction bounds (a fallback, counted). `Ok(None)` when the
    /// fixed point's Newton solves fail too (the caller then solves the staged programs).
    pub(super) fn solve_one_program(
        &mut self,
        input: &ProgramInput<'_>,
        h: f64,
        rounds: usize,
    ) -> Result<Option<ProgramSolution>, SimError> {
        if !self.options.coulomb_newton {
            return self.solve_fixed_point(input, h, rounds);
        }
        let iterations = match self.solve_coulomb_program(input, h)? {
            Ok(solution) => return Ok(Some(solution)),
            Err(iterations) => iterations,
        };
        Ok(self
            .solve_fixed_point(input, h, rounds)?
            .map(|sol| ProgramSolution {
                fell_back: true,
                newton_iterations: sol.newton_iterations + iterations,
                ..sol
            }))
    }

    /// The step's Coulomb problem (each frictional contact one [`ConstraintKind::Coulomb`]
    /// constraint, rows tangents then normal; other unilateral rows
    /// [`ConstraintKind::Unilateral`]) in one semismooth Newton solve, started from the
    /// better of the step's initial velocity and the velocity the previous step's forces
    /// give (matched by contact identity). `Err(iterations)` when it does not converge.
    fn solve_coulomb_program(
        &mut self,
        input: &ProgramInput<'_>,
        h: f64,
    ) -> Result<Result<ProgramSolution, usize>, SimError> {
        let Some((problem, layout)) = coupled_program(input, FrictionLaw::Coulomb)? else {
            return Ok(Err(0));
        };
        let from_forces = warm_start_from_forces(input, h);
        let mut starts = vec![input.warm];
        starts.extend(from_forces.as_ref());
        let sol = match solve_semismooth(
            &problem,
            &starts,
            &self.options.contact_solver,
            &mut self.coulomb_workspace,
        ) {
            Ok(sol) => sol,
            Err(_) => return Ok(Err(0)),
        };
        if !accepted(&sol) {
            return Ok(Err(sol.iterations));
        }
        Ok(Ok(ProgramSolution {
            fell_back: false,
            lambda: layout_forces(input, &layout, &sol, h),
            rounds: 1,
            newton_iterations: sol.iterations,
        }))
    }

    /// The fixed point on the friction bounds: each contact's friction bounded by a disk
    /// `μγ̄_n` (Tresca), solved by Newton's method on the convex program, the bounds reset
    /// to `μγ_n` of the solution and solved again until consistent, at most `rounds`
    /// solves, then the coupled cones; `Ok(None)` when a Newton solve fails or does not
    /// converge.
    fn solve_fixed_point(
        &self,
        input: &ProgramInput<'_>,
        h: f64,
        rounds: usize,
    ) -> Result<Option<ProgramSolution>, SimError> {
        let Some(BoundedProgram {
            mut problem,
            con_of_row,
            friction,
        }) = bounded_program(input, h)?
        else {
            return Ok(None);
        };
        let options = &self.options.contact_solver;
        let mut warm = input.warm.clone();
        let mut iterations = 0;
        let mut radius: Vec<f64> = friction
            .iter()
            .map(|&(k, c)| match problem.kind(c) {
                Some(ConstraintKind::Disk { radius } | ConstraintKind::Interval { radius }) => {
                    radius
                }
                _ => input.contacts[k].mu * input.force_guess[k].map_or(0.0, |f| f[0]) * h,
            })
            .collect();
        let mut history = BoundHistory::default();
        for round in 1..=rounds.max(1) {
            let sol = match newton_solve(&problem, Some(&warm), options) {
                Ok(sol) => sol,
                Err(_) => return Ok(None),
            };
            iterations += sol.iterations;
            if !accepted(&sol) {
                return Ok(None);
            }
            let previous_radius = radius.clone();
            if self.update_bounds(input, &con_of_row, &friction, &sol, &mut radius, h) {
                return Ok(Some(ProgramSolution {
                    fell_back: false,
                    lambda: program_forces(input, &con_of_row, &friction, &sol, h),
                    rounds: round,
                    newton_iterations: iterations,
                }));
            }
            history.extrapolate(&mut radius, &previous_radius);
            for (f, &(_, c)) in friction.iter().enumerate() {
                problem
                    .set_friction_bound(c, radius[f])
                    .map_err(solver_error)?;
            }
            warm = sol.v;
        }
        Ok(self
            .solve_cone_program(input, h, &warm)?
            .map(|(lambda, extra)| ProgramSolution {
                fell_back: true,
                lambda,
                rounds: rounds.max(1) + 1,
                newton_iterations: iterations + extra,
            }))
    }

    /// Sets each friction bound to `μγ_n` of the solution's normal impulse; returns whether
    /// every previous bound was consistent with it (a contact sticking strictly inside both
    /// bounds, or a bound within the sweep tolerance of `μγ_n`).
    fn update_bounds(
        &self,
        input: &ProgramInput<'_>,
        con_of_row: &[usize],
        friction: &[(usize, usize)],
        sol: &RegularizedContactSolution,
        radius: &mut [f64],
        h: f64,
    ) -> bool {
        let nu = input.normals.len();
        let gmax = (0..nu)
            .filter(|&i| con_of_row[i] != usize::MAX)
            .map(|i| sol.impulse(con_of_row[i])[0])
            .fold(0.0, f64::max);
        let tol = self.options.sweep_tolerance * (h + gmax);
        let mut consistent = true;
        for (f, &(k, c)) in friction.iter().enumerate() {
            let contact = &input.contacts[k];
            let gn = sol.impulse(con_of_row[contact.normal])[0].max(0.0);
            let bound = contact.mu * gn;
            let gt = sol.impulse(c).iter().map(|x| x * x).sum::<f64>().sqrt();
            let inside = gt < radius[f] && gt <= bound;
            if !(inside || (radius[f] - bound).abs() <= contact.mu * tol) {
                consistent = false;
            }
            radius[f] = bound;
        }
        consistent
    }
}

impl BoundHistory {
    /// The bounds converge linearly: monotonically (rate ρ often 0.8–0.9 in toppling piles)
    /// or oscillating (ρ ≈ −0.7 to −1 where several coplanar contacts share a normal load
    /// that is nearly non-unique, e.g. the four corners of a box foot). Every other round,
    /// Aitken's Δ² extrapolation to the fixed point of the linear model,
    /// `x + ρ/(1 − ρ) d_k`, along the last change d_k with the rate
    /// ρ = d_k·d_{k−1}/|d_{k−1}|² estimated from the last two changes. For ρ < 0 this
    /// damps the oscillation (ρ = −1, a two-value cycle, gives the midpoint of its values).
    fn extrapolate(&mut self, radius: &mut [f64], previous_radius: &[f64]) {
        let change: Vec<f64> = radius
            .iter()
            .zip(previous_radius)
            .map(|(b, r)| if r.is_finite() { b - r } else { 0.0 })
            .collect();
        if let Some(last) = self.last_change.as_ref().filter(|_| !self.extrapolated) {
            let dot: f64 = change.iter().zip(last).map(|(a, b)| a * b).sum();
            let norm2: f64 = last.iter().map(|b| b * b).sum();
            let rate = if norm2 > 0.0 { dot / norm2 } else { 0.0 };
            if rate != 0.0 && rate < 0.98 {
                let gain = rate / (1.0 - rate);
                for (x, d) in radius.iter_mut().zip(&change) {
                    *x = (*x + gain * d).max(0.0);
                }
                self.extrapolated = true;
            }
        } else {
            self.extrapolated = false;
        }
        self.last_change = Some(change);
    }
}

/// One constraint of the program from its rows: the rows' Jacobians, one regularization
/// (the largest of the rows') and their bias velocities.
fn row_constraint(kind: ConstraintKind, rows: &[&ProgramRow]) -> Constraint {
    let r = rows.iter().map(|x| x.r).fold(0.0, f64::max);
    let mut jac = Vec::new();
    for (k, row) in rows.iter().enumerate() {
        jac.extend(row.jac.iter().map(|&(j, x)| (k, j, x)));
    }
    Constraint::new(
        kind,
        jac,
        vec![r; rows.len()],
        rows.iter().map(|x| x.v_hat).collect(),
    )
}

/// The program with bounded friction: constraint c < nu is unilateral row c; then one
/// friction constraint per contact with tangent rows, bounded by `μ h γ̄_n` of its normal
/// force estimate (unbounded without one). `None` when a contact's tangent count does not
/// fit the dimension.
fn bounded_program(input: &ProgramInput<'_>, h: f64) -> Result<Option<BoundedProgram>, SimError> {
    let nu = input.normals.len();
    let mut builder = program_builder(input);
    let mut friction: Vec<(usize, usize)> = Vec::new(); // (contact, constraint)
    let mut con_of_row = vec![usize::MAX; nu];
    let mut count = 0;
    for (i, row) in input.normals.iter().enumerate() {
        if row.jac.is_empty() {
            continue;
        }
        builder = builder.constraint(row_constraint(ConstraintKind::Unilateral, &[row]));
        con_of_row[i] = count;
        count += 1;
    }
    for (k, c) in input.contacts.iter().enumerate() {
        if c.tangents.is_empty() || con_of_row[c.normal] == usize::MAX {
            continue;
        }
        let rows: Vec<&ProgramRow> = c.tangents.iter().map(|&t| &input.tangents[t]).collect();
        if rows.iter().all(|r| r.jac.is_empty()) {
            continue;
        }
        let radius = match input.force_guess[k] {
            Some(f) => c.mu * (f[0] * h).max(0.0),
            None => f64::INFINITY,
        };
        let kind = match (input.planar, rows.len()) {
            (true, 1) => ConstraintKind::Interval { radius },
            (false, 2) => ConstraintKind::Disk { radius },
            _ => return Ok(None),
        };
        builder = builder.constraint(row_constraint(kind, &rows));
        friction.push((k, count));
        count += 1;
    }
    let problem = builder.build().map_err(solver_error)?;
    Ok(Some(BoundedProgram {
        problem,
        con_of_row,
        friction,
    }))
}

/// Forces `λ = γ/h` of the solution: the unilateral rows, then the tangent rows.
fn program_forces(
    input: &ProgramInput<'_>,
    con_of_row: &[usize],
    friction: &[(usize, usize)],
    sol: &RegularizedContactSolution,
    h: f64,
) -> DVector<f64> {
    let nu = input.normals.len();
    let nt = input.tangents.len();
    let mut lambda = DVector::zeros(nu + nt);
    for i in 0..nu {
        if con_of_row[i] != usize::MAX {
            lambda[i] = sol.impulse(con_of_row[i])[0] / h;
        }
    }
    for &(k, c) in friction {
        for (g, &t) in sol.impulse(c).iter().zip(&input.contacts[k].tangents) {
            lambda[nu + t] = g / h;
        }
    }
    lambda
}

/// A program with one constraint per frictional contact and, per constraint, the stepper
/// rows of its rows.
type CoupledProgram = (RegularizedContactProblem, Vec<Vec<usize>>);

/// A contact's identity (collider A, collider B, feature) and its forces
/// `[λ_n, λ_t₁, λ_t₂]`.
pub(super) type RememberedForces = ((usize, usize, usize), [f64; 3]);

/// How a contact's friction and normal rows form one constraint.
#[derive(Clone, Copy)]
enum FrictionLaw {
    /// SAP's cone (convex, with Anitescu's relaxation on sliding contacts).
    Cone,
    /// Alart and Curnier's Coulomb map with the max() normal impulse.
    Coulomb,
}

/// The program with each frictional contact one constraint of `law` (rows tangents then
/// normal) and every other unilateral row a [`ConstraintKind::Unilateral`] constraint;
/// with, per constraint, the stepper rows of its rows (unilateral row `i`, tangent row
/// `t` as `nu + t`). `None` when a contact's tangent count does not fit the dimension.
fn coupled_program(
    input: &ProgramInput<'_>,
    law: FrictionLaw,
) -> Result<Option<CoupledProgram>, SimError> {
    let nu = input.normals.len();
    let mut builder = program_builder(input);
    let mut with_friction = vec![None; nu];
    for (k, c) in input.contacts.iter().enumerate() {
        let n = &input.normals[c.normal];
        if !c.tangents.is_empty() && !n.jac.is_empty() {
            with_friction[c.normal] = Some(k);
        }
    }
    let mut layout: Vec<Vec<usize>> = Vec::new();
    for (i, row) in input.normals.iter().enumerate() {
        if row.jac.is_empty() {
            continue;
        }
        let (kind, rows): (ConstraintKind, Vec<usize>) = match with_friction[i] {
            Some(k) => {
                let c = &input.contacts[k];
                let mut rows: Vec<usize> = c.tangents.iter().map(|&t| nu + t).collect();
                rows.push(i);
                let mu = c.mu;
                let kind = match (law, input.planar, c.tangents.len()) {
                    (FrictionLaw::Cone, true, 1) => ConstraintKind::Planar { mu },
                    (FrictionLaw::Cone, false, 2) => ConstraintKind::Cone { mu },
                    (FrictionLaw::Coulomb, true, 1) => ConstraintKind::PlanarCoulomb { mu },
                    (FrictionLaw::Coulomb, false, 2) => ConstraintKind::Coulomb { mu },
                    _ => return Ok(None),
                };
                (kind, rows)
            }
            None => (ConstraintKind::Unilateral, vec![i]),
        };
        let row_of = |x: usize| {
            if x < nu {
                &input.normals[x]
            } else {
                &input.tangents[x - nu]
            }
        };
        let m = rows.len();
        let rt = rows[..m - 1]
            .iter()
            .map(|&x| row_of(x).r)
            .fold(0.0, f64::max);
        let mut r: Vec<f64> = vec![rt; m];
        r[m - 1] = row_of(rows[m - 1]).r;
        let mut jac = Vec::new();
        for (k, &x) in rows.iter().enumerate() {
            jac.extend(row_of(x).jac.iter().map(|&(j, v)| (k, j, v)));
        }
        let v_hat = rows.iter().map(|&x| row_of(x).v_hat).collect();
        builder = builder.constraint(Constraint::new(kind, jac, r, v_hat));
        layout.push(rows);
    }
    let problem = builder.build().map_err(solver_error)?;
    Ok(Some((problem, layout)))
}

/// Forces `λ = γ/h` of a solution of a [`coupled_program`]: the unilateral rows, then the
/// tangent rows.
fn layout_forces(
    input: &ProgramInput<'_>,
    layout: &[Vec<usize>],
    sol: &RegularizedContactSolution,
    h: f64,
) -> DVector<f64> {
    let mut lambda = DVector::zeros(input.normals.len() + input.tangents.len());
    for (c, rows) in layout.iter().enumerate() {
        for (g, &x) in sol.impulse(c).iter().zip(rows) {
            lambda[x] = g / h;
        }
    }
    lambda
}

/// The velocity the previous step's forces give in this step, `v* + h A⁻¹ Jᵀ λ` with
/// each contact's `[λ_n, λ_t₁, λ_t₂]` matched by contact identity (new contacts and other
/// rows: no force); `None` when no contact is known or `A` cannot be factored.
fn warm_start_from_forces(input: &ProgramInput<'_>, h: f64) -> Option<DVector<f64>> {
    if input.force_guess.iter().all(Option::is_none) {
        return None;
    }
    let mut tau = DVector::zeros(input.v_free.len());
    for (c, guess) in input.contacts.iter().zip(&input.force_guess) {
        let Some(f) = guess else { continue };
        let mut add = |row: &ProgramRow, x: f64| {
            for &(j, a) in &row.jac {
                tau[j] += a * x * h;
            }
        };
        add(&input.normals[c.normal], f[0]);
        for (k, &t) in c.tangents.iter().take(2).enumerate() {
            add(&input.tangents[t], f[1 + k]);
        }
    }
    match input.mass {
        ProgramMass::Dense(m) => {
            let dv = m.clone().cholesky()?.solve(&tau);
            Some(input.v_free + dv)
        }
        ProgramMass::Blocks(blocks) => {
            let mut v = input.v_free.clone();
            for blk in blocks {
                let n = blk.mass.nrows();
                let rhs = tau.rows(blk.v_index, n).into_owned();
                if rhs.iter().all(|x| *x == 0.0) {
                    continue;
                }
                let dv = blk.mass.clone().cholesky()?.solve(&rhs);
                for k in 0..n {
                    v[blk.v_index + k] += dv[k];
                }
            }
            Some(v)
        }
    }
}

impl DrumwrightStepper {
    /// The program with each contact's Coulomb cone `‖γ_t‖ ≤ μγ_n` coupled to its normal row
    /// (SAP's form, rows tangents then normal): one convex program, no fixed point, at the
    /// price of the relaxation `v_n − v̂_n + R_nγ_n = μ‖v_t + R_tγ_t‖` on sliding contacts.
    /// The fallback of a step whose friction bounds reach no fixed point; returns the
    /// forces (unilateral rows, then tangent rows) and the Newton iterations, `None` when
    /// Newton fails or does not converge.
    fn solve_cone_program(
        &self,
        input: &ProgramInput<'_>,
        h: f64,
        warm: &DVector<f64>,
    ) -> Result<Option<(DVector<f64>, usize)>, SimError> {
        let Some((problem, layout)) = coupled_program(input, FrictionLaw::Cone)? else {
            return Ok(None);
        };
        let sol = match newton_solve(&problem, Some(warm), &self.options.contact_solver) {
            Ok(sol) if accepted(&sol) => sol,
            _ => return Ok(None),
        };
        Ok(Some((
            layout_forces(input, &layout, &sol, h),
            sol.iterations,
        )))
    }

    /// `R` of a row of the one program: the spring–damper's `1/(h(hK + B))`, or for a rigid
    /// row `σ W_ii`.
    pub(super) fn program_r(&self, row: &Row, w_ii: f64, h: f64, friction: bool) -> f64 {
        let sigma = if friction {
            self.options.friction_regularization
        } else {
            self.options.rigid_regularization
        };
        let floor = sigma * w_ii;
        if row.rigid {
            floor.max(f64::MIN_POSITIVE)
        } else {
            row.r(h).max(floor).max(f64::MIN_POSITIVE)
        }
    }
}

/// Whether a Newton solve of the program is its solution: the momentum test passed, or the
/// iterates stalled at rounding level (`AlmostSolved`) within ten times the test's
/// threshold — a tolerance near the rounding level of `v` (e.g. 1e-11 relative on a pile)
/// stalls just above it, and the fallbacks are far less accurate than such a point.
fn accepted(sol: &RegularizedContactSolution) -> bool {
    let stalled_at_rounding = sol.status == nonsmooth_solvers::SolveStatus::AlmostSolved
        && sol.gradient_norm <= 10.0 * sol.tolerance;
    (sol.converged() || stalled_at_rounding) && sol.v.iter().all(|x| x.is_finite())
}

/// The forces of `keys` from the previous step's `(key, [λ_n, λ_t₁, λ_t₂])` list (sorted
/// by key).
pub(super) fn force_guesses(
    previous: &[RememberedForces],
    keys: impl Iterator<Item = (usize, usize, usize)>,
) -> Vec<Option<[f64; 3]>> {
    keys.map(|key| {
        previous
            .binary_search_by(|e| e.0.cmp(&key))
            .ok()
            .map(|k| previous[k].1)
    })
    .collect()
}

/// The regularized program's builder with the step's free velocity and mass blocks.
fn program_builder(input: &ProgramInput<'_>) -> RegularizedContactProblemBuilder {
    let builder =
        RegularizedContactProblem::builder(input.v_free.len()).free_velocity(input.v_free.clone());
    match input.mass {
        ProgramMass::Dense(m) => builder.mass_block(0, m),
        ProgramMass::Blocks(blocks) => blocks
            .iter()
            .fold(builder, |b, blk| b.mass_block(blk.v_index, &blk.mass)),
    }
}

impl DrumwrightStepper {
    /// The step's Coulomb problem at `step`, assembled on the dense view and not solved
    /// (what [`crate::derivatives`] differentiates): the one program of
    /// [`FrictionCoupling::OneProgram`] with each frictional contact one
    /// [`ConstraintKind::Coulomb`] constraint, or, for a step without contact or limit
    /// rows, the free motion as a problem without constraints. `None` for options under
    /// which a step solves another program (the staged or literal couplings, the fixed
    /// point alone, the min-norm form) and for compliant bilateral rows without contact
    /// rows (their step is the bilateral solve). With `like`, the contacts are those of
    /// `like` (detected within margins widened by [`crate::derivatives::INCLUSION_WIDENING`],
    /// so that a contact resting at zero gap is kept when the state moves by a difference
    /// step) and the joint limits' windows are widened by as much.
    ///
    /// # Errors
    /// As a step's snapshot and rows.
    pub(super) fn coulomb_step_problem(
        &self,
        step: &crate::pipeline::Step<'_>,
        like: Option<&StepProblem>,
    ) -> Result<Option<StepProblem>, SimError> {
        let solves_coulomb_problem =
            matches!(self.options.friction, FrictionCoupling::OneProgram { .. })
                && self.options.coulomb_newton
                && self.options.unilateral == UnilateralForm::MaxLcp;
        if !solves_coulomb_problem {
            return Ok(None);
        }
        let mut margins = self.contact_margins(step.model, step.h);
        let widen = if like.is_some() {
            crate::derivatives::INCLUSION_WIDENING
        } else {
            0.0
        };
        margins.base += widen;
        let mut snap = crate::contact_set::dense_snapshot(step, &margins)?;
        if let Some(like) = like {
            snap.contacts.retain(|c| {
                like.constraints.contains(&ConstraintSource::Contact {
                    collider_a: c.collider_a,
                    collider_b: c.collider_b,
                    feature: c.feature,
                })
            });
        }
        let h = step.h;
        let rows = self.rows(step.model, &snap, h, widen)?;
        let no_contact_rows = rows.unilateral.is_empty() && rows.tangents.is_empty();
        if no_contact_rows && !rows.bilateral.is_empty() {
            return Ok(None);
        }
        let free = self.augmented_free_motion(&rows, &snap, h)?;
        if no_contact_rows {
            let problem = RegularizedContactProblem::builder(snap.nv())
                .free_velocity(free.v_free.clone())
                .mass_block(0, &free.aug)
                .build()
                .map_err(solver_error)?;
            return Ok(Some(StepProblem {
                problem,
                constraints: Vec::new(),
            }));
        }
        let stacked = self.stack_contact_rows(&rows, &snap.mass_matrix, snap.nv())?;
        let dense = DenseStep {
            rows,
            free,
            stacked,
            h,
        };
        let planar = snap.dimension == Dimension::Planar;
        let input = self.dense_program_input(&snap, &dense, planar)?;
        let Some((problem, layout)) = coupled_program(&input, FrictionLaw::Coulomb)? else {
            return Ok(None);
        };
        let rows = &dense.rows;
        let constraints = layout
            .iter()
            .map(|con_rows| {
                let normal = con_rows[con_rows.len() - 1];
                match rows.contacts.iter().find(|c| c.normal == normal) {
                    Some(c) => {
                        let sc = &snap.contacts[c.snapshot_index];
                        ConstraintSource::Contact {
                            collider_a: sc.collider_a,
                            collider_b: sc.collider_b,
                            feature: sc.feature,
                        }
                    }
                    None => ConstraintSource::Row {
                        name: rows.unilateral_names.get(normal).cloned().flatten(),
                    },
                }
            })
            .collect();
        Ok(Some(StepProblem {
            problem,
            constraints,
        }))
    }
}
