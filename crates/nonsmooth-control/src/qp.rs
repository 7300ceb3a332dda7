//! The two-stage convex variants ID_QP,μ / ID_QP,∞ (§6).
//!
//! Unknowns in force units, f = [f_N; f_F]/Δt with `R = [Nᵀ Fᵀ]`. After eliminating τ and
//! v⁺ with X = P (eqs 75–79 corrected, erratum E6: ½ in the objective, `M̃⁻¹` the top-left
//! block of X⁻¹, φ/Δt and the q̇_des term kept in the constraint):
//!
//! ```text
//! Stage I:  min ½ fᵀ H f + cᵀ f,   H = Rᵀ M̃⁻¹ R,   c = Rᵀ M̃⁻¹ M v* / Δt
//!           s.t. N M̃⁻¹ R f ≥ −(φ/Δt + N v̂)/Δt,   f ≥ 0,   μᵢ f_N,i ≥ Σ_edges f_F,i  (QP,μ only)
//! ```
//!
//! (the objective is ½v⁺ᵀMv⁺/Δt² up to a constant). Stage II (eqs 102–112) keeps Stage I's
//! optimal face and picks on it the minimum-norm *total* torque `u(f) = u_a + K f` (erratum
//! E10: by default we minimize ‖u‖, as the full form eq 102;
//! [`crate::StageTwoObjective::DeviationFromRigidId`] minimizes ‖u − f_ID‖ instead, the
//! reduced form of eqs 105–112 and the authors' Pacer plugin — measured on the quadruped
//! walk it was less smooth, docs/locomotion.md). If Stage II's solver fails (it is feasible
//! at f = f₀, so the failure is numerical), Stage I's impulses are kept, as in the authors'
//! plugin. The paper parametrizes the face as
//! `f = f₀ + W w` with `W` a basis of null(H); we use the equivalent description in `f`
//! itself (decision, docs/decisions/004-inverse-dynamics.md):
//!
//! ```text
//! Stage II: min ½‖u_a + K f‖² + ½ρ‖f − f₀‖²   s.t.  E f = E f₀,  f ≥ 0,  friction rows
//! ```
//!
//! where `Eᵀ` is the pivoted-Cholesky factor of H (`Pᵀ H P = L Lᵀ`, rank r computed with the
//! relative tolerance `null_tol`; erratum E11: the face's dimension `nz − r` is computed, it is
//! ≥ 5n − 6 for a floating base). `E f = E f₀` ⟺ `f − f₀ ∈ null(H)`, and the linear term
//! `c ∈ range(H)`, so the Stage I objective is constant on this set. The Tikhonov term
//! `ρ = 1e-10 · max diag(KᵀK)` makes f unique; the torque is unique anyway. Solved as a KKT LCP
//! by Lemke (size nz + n + 2r, against 2(nz − r) + nz + n for the `w` form), Clarabel as the
//! fallback.

use nalgebra::{DMatrix, DVector};
use nonsmooth_solvers::conic::{ConicSolution, Qp};
use nonsmooth_solvers::{SolveStatus, SolverError};

use crate::elimination::Elimination;
use crate::error::ControlError;
use crate::lcp::{assemble, split_coulomb};
use crate::problem::{check_realizable, IdProblem};
use crate::{IdOptions, IdSolution, StageTwoObjective, Variant};

/// R = [Nᵀ Fᵀ] (m × (k+1)n).
pub(crate) fn contact_map(problem: &IdProblem) -> DMatrix<f64> {
    let n = problem.num_contacts();
    let k = 2 * problem.ntan();
    let mut rmat = DMatrix::zeros(problem.nv(), n + k * n);
    rmat.columns_mut(0, n)
        .copy_from(&problem.normal_matrix().transpose());
    rmat.columns_mut(n, k * n)
        .copy_from(&problem.friction_matrix().transpose());
    rmat
}

/// Friction-pyramid rows `Σ_edges f_F,i − μᵢ f_N,i ≤ 0` (n × (k+1)n).
pub(crate) fn friction_rows(problem: &IdProblem) -> DMatrix<f64> {
    let n = problem.num_contacts();
    let k = 2 * problem.ntan();
    let mu = problem.friction();
    let mut g = DMatrix::zeros(n, n + k * n);
    for i in 0..n {
        g[(i, i)] = -mu[i];
        for e in 0..k {
            g[(i, n + e * n + i)] = 1.0;
        }
    }
    g
}

fn conic_error(variant: Variant, stage: &'static str, e: SolverError) -> ControlError {
    match e {
        SolverError::PrimalInfeasible { detail, .. } => ControlError::InfeasibleDesired {
            variant: variant.name(),
            reason: format!("{stage} is primal infeasible{detail}"),
        },
        other => ControlError::SolverFailed {
            variant: variant.name(),
            stage,
            status: None,
            residuals: Default::default(),
            reason: other.to_string(),
        },
    }
}

fn accept(variant: Variant, stage: &'static str, s: &ConicSolution) -> Result<(), ControlError> {
    if s.status == SolveStatus::MaxIterations {
        return Err(ControlError::SolverFailed {
            variant: variant.name(),
            stage,
            status: Some(s.status),
            residuals: s.residuals,
            reason: "iteration limit".into(),
        });
    }
    Ok(())
}

/// The Stage I data `(H, c, G, h)` with `G f ≤ h` (rows: non-penetration, f ≥ 0, friction).
pub(crate) struct StageOne {
    pub h: DMatrix<f64>,
    pub c: DVector<f64>,
    pub g: DMatrix<f64>,
    pub hv: DVector<f64>,
    pub rmat: DMatrix<f64>,
}

pub(crate) fn stage_one(problem: &IdProblem, elim: &Elimination, coulomb: bool) -> StageOne {
    let n = problem.num_contacts();
    let dt = problem.dt();
    let rmat = contact_map(problem);
    let nz = rmat.ncols();
    let mtr = &elim.mt * &rmat;
    let h = rmat.transpose() * &mtr;
    let h = (&h + h.transpose()) * 0.5;
    let c = mtr.transpose() * (problem.mass_matrix() * problem.free_velocity()) / dt;
    let nmat = problem.normal_matrix();
    let rows = n + nz + if coulomb { n } else { 0 };
    let mut g = DMatrix::zeros(rows, nz);
    let mut hv = DVector::zeros(rows);
    g.rows_mut(0, n).copy_from(&(-(&nmat * &mtr)));
    hv.rows_mut(0, n)
        .copy_from(&((&nmat * &elim.vhat + problem.gaps() / dt) / dt));
    g.view_mut((n, 0), (nz, nz))
        .copy_from(&(-DMatrix::<f64>::identity(nz, nz)));
    if coulomb {
        g.rows_mut(n + nz, n).copy_from(&friction_rows(problem));
    }
    StageOne { h, c, g, hv, rmat }
}

/// Stage I alone (for tests and the chatter experiment): the impulses f₀ in force units.
pub(crate) fn solve_stage_one(
    problem: &IdProblem,
    elim: &Elimination,
    variant: Variant,
    opts: &IdOptions,
) -> Result<(StageOne, ConicSolution, bool), ControlError> {
    let s1 = stage_one(problem, elim, variant.coulomb());
    if opts.stage_one_lemke {
        // Lemke first; a failure (ray termination, residuals above tolerance) falls back to
        // Clarabel below, and the solution's `method` says which one answered.
        if let Ok(sol) = stage_one_lemke(problem, &s1, variant, opts) {
            return Ok((s1, sol, true));
        }
    }
    let qp = Qp::new(s1.h.clone(), s1.c.clone()).with_inequalities(s1.g.clone(), s1.hv.clone());
    let sol = qp
        .solve(&opts.conic)
        .map_err(|e| conic_error(variant, "stage I", e))?;
    accept(variant, "stage I", &sol)?;
    Ok((s1, sol, false))
}

/// Stage I by Lemke on its KKT LCP (see [`IdOptions::stage_one_lemke`]).
fn stage_one_lemke(
    problem: &IdProblem,
    s1: &StageOne,
    variant: Variant,
    opts: &IdOptions,
) -> Result<ConicSolution, ControlError> {
    // KKT LCP of min ½fᵀHf + cᵀf s.t. A f ≥ b (A = −G without the f ≥ 0 rows), f ≥ 0:
    // LCP([[H, −Aᵀ], [A, 0]], [c; −b]).
    let nz = s1.h.nrows();
    let n = problem.num_contacts();
    let keep: Vec<usize> = (0..s1.g.nrows())
        .filter(|&i| i < n || i >= n + nz)
        .collect();
    let na = keep.len();
    if nz + na > opts.lemke_max_size {
        return Err(lemke_failed(
            variant,
            "stage I (lemke)",
            format!("KKT LCP of size {} above lemke_max_size", nz + na),
        ));
    }
    let mut mat = DMatrix::zeros(nz + na, nz + na);
    let mut q = DVector::zeros(nz + na);
    mat.view_mut((0, 0), (nz, nz)).copy_from(&s1.h);
    q.rows_mut(0, nz).copy_from(&s1.c);
    for (a, &i) in keep.iter().enumerate() {
        let row = -s1.g.row(i);
        mat.view_mut((nz + a, 0), (1, nz)).copy_from(&row);
        mat.view_mut((0, nz + a), (nz, 1))
            .copy_from(&(-row.transpose()));
        q[nz + a] = s1.hv[i];
    }
    let l = crate::lcp::lemke_regularized(&mat, &q, &opts.lemke)
        .map_err(|e| lemke_failed(variant, "stage I (lemke)", e.to_string()))?;
    let x = l.z.rows(0, nz).into_owned();
    Ok(kkt_solution(x, &s1.h, &s1.c, &l))
}

/// A QP solution read off the KKT LCP solved by Lemke (`x` the primal part).
fn kkt_solution(
    x: DVector<f64>,
    hess: &DMatrix<f64>,
    lin: &DVector<f64>,
    l: &nonsmooth_solvers::lcp::LcpSolution,
) -> ConicSolution {
    let objective = 0.5 * x.dot(&(hess * &x)) + lin.dot(&x);
    ConicSolution {
        s: DVector::zeros(0),
        z: DVector::zeros(0),
        x,
        objective,
        status: l.status,
        residuals: l.residuals,
        iterations: l.iterations as u32,
        solve_time: std::time::Duration::ZERO,
    }
}

/// The error of a Lemke route, which the caller replaces by Clarabel.
fn lemke_failed(variant: Variant, stage: &'static str, reason: String) -> ControlError {
    ControlError::SolverFailed {
        variant: variant.name(),
        stage,
        status: None,
        residuals: Default::default(),
        reason,
    }
}

/// The range factor of a symmetric positive semidefinite `H`: the `r × n` matrix `E` with
/// `H ≈ EᵀE`, by Cholesky with diagonal pivoting (Golub & Van Loan §4.2.8; Higham, *Accuracy
/// and Stability*, §10.3). `Pᵀ H P = L Lᵀ` stops at rank r when every remaining
/// Schur-complement diagonal is below `tol · max diag(H)`; `E = Lᵀ Pᵀ` (the first r columns of
/// L). Then `null(E)` is H's numerical null space, so `E f = E f₀` states `f − f₀ ∈ null(H)`.
/// Cost O(n² r) instead of a full eigendecomposition.
pub(crate) fn range_factor(h: &DMatrix<f64>, tol: f64) -> DMatrix<f64> {
    let n = h.nrows();
    if n == 0 {
        return DMatrix::zeros(0, 0);
    }
    let scale = h.diagonal().amax().max(1e-300);
    let mut a = h.clone();
    let mut perm: Vec<usize> = (0..n).collect();
    let mut rank = 0;
    while rank < n {
        // Pivot: the largest remaining diagonal of the Schur complement.
        let (mut best, mut best_val) = (rank, a[(rank, rank)]);
        for i in rank + 1..n {
            if a[(i, i)] > best_val {
                best = i;
                best_val = a[(i, i)];
            }
        }
        if best_val <= tol * scale {
            break;
        }
        a.swap_rows(rank, best);
        a.swap_columns(rank, best);
        perm.swap(rank, best);
        let d = best_val.sqrt();
        a[(rank, rank)] = d;
        for i in rank + 1..n {
            a[(i, rank)] /= d;
        }
        // Schur complement of the trailing block (kept full and symmetric for the pivoting).
        for j in rank + 1..n {
            let ljk = a[(j, rank)];
            for i in rank + 1..n {
                a[(i, j)] -= a[(i, rank)] * ljk;
            }
        }
        rank += 1;
    }
    let mut e = DMatrix::zeros(rank, n);
    for c in 0..rank {
        for (i, &p) in perm.iter().enumerate().skip(c) {
            e[(c, p)] = a[(i, c)];
        }
    }
    e
}

/// ID_QP,μ / ID_QP,∞.
pub(crate) fn solve(
    problem: &IdProblem,
    qdes: &DVector<f64>,
    opts: &IdOptions,
) -> Result<IdSolution, ControlError> {
    let variant = opts.variant;
    let dt = problem.dt();
    let elim = Elimination::build(problem, problem.free_velocity(), Some(qdes), false)?;
    check_realizable(problem, &elim, variant)?;
    let n = problem.num_contacts();
    if n == 0 {
        return Ok(assemble(
            problem,
            variant,
            &elim,
            qdes,
            DVector::zeros(0),
            DVector::zeros(0),
            "no contacts".into(),
            SolveStatus::Solved,
            Default::default(),
            0,
        ));
    }
    let (s1, sol1, lemke_one) = solve_stage_one(problem, &elim, variant, opts)?;
    let mut f = sol1.x.clone();
    let mut iterations = sol1.iterations as usize;
    let mut status = sol1.status;
    let mut residuals = sol1.residuals;
    let mut method = if lemke_one {
        "lemke stage I"
    } else {
        "clarabel stage I"
    }
    .to_string();
    if opts.stage_two {
        let e = range_factor(&s1.h, opts.null_tol);
        if e.nrows() < f.len() {
            // Stage II is feasible by construction (f = f₀), so a reported failure is
            // numerical (Clarabel's false "primal infeasible" certificates on the
            // ill-conditioned face of ID_QP,∞: 182 of 1300 steps of the rigid μ = ∞ walk);
            // as the authors' plugin does, fall back to Stage I's f₀, which is on the face
            // and Stage-I optimal (only the torque choice on the face is lost).
            match stage_two(problem, qdes, &elim, &s1, &e, &f, variant, opts) {
                Err(err) => {
                    method = format!("{method}; stage II failed, Stage I's impulses kept ({err})");
                }
                Ok(sol2) => {
                    f = sol2.0.x.clone();
                    iterations += sol2.0.iterations as usize;
                    status = sol2.0.status;
                    residuals.primal = residuals.primal.max(sol2.0.residuals.primal);
                    residuals.dual = residuals.dual.max(sol2.0.residuals.dual);
                    residuals.complementarity = residuals
                        .complementarity
                        .max(sol2.0.residuals.complementarity);
                    method = format!(
                        "{} stage I + {} stage II (face dim {})",
                        if lemke_one { "lemke" } else { "clarabel" },
                        if sol2.1 { "lemke" } else { "clarabel" },
                        f.len() - e.nrows()
                    );
                }
            }
        }
    }
    let z = &f * dt;
    let (normal, tangent) = split_coulomb(problem, &z);
    let mut sol = assemble(
        problem, variant, &elim, qdes, normal, tangent, method, status, residuals, iterations,
    );
    // Use the raw edge impulses (not the clipped normal) for the dynamics.
    let g = &s1.rmat * &z;
    let lam = elim.multipliers(&g);
    sol.torques = lam.rows(0, problem.nu()) / dt;
    sol.v_plus = &elim.vhat + &elim.mt * &g;
    sol.kinetic_energy = 0.5 * sol.v_plus.dot(&(problem.mass_matrix() * &sol.v_plus));
    Ok(sol)
}

/// Stage II on the optimal face of Stage I (module docs): returns the solution in `f` and
/// whether Lemke answered (else Clarabel).
#[allow(clippy::too_many_arguments)]
fn stage_two(
    problem: &IdProblem,
    qdes: &DVector<f64>,
    elim: &Elimination,
    s1: &StageOne,
    e: &DMatrix<f64>,
    f0: &DVector<f64>,
    variant: Variant,
    opts: &IdOptions,
) -> Result<(ConicSolution, bool), ControlError> {
    let nz = f0.len();
    // u(f) = u_a + K f with u_a = Y(q̇ − Pv*)/Δt and K = −Y P M⁻¹ R (K from the map itself).
    let mut ua = elim.multipliers_free() / problem.dt();
    if opts.stage_two_objective == StageTwoObjective::DeviationFromRigidId {
        // ½‖u_a + K f − f_ID‖²: shift the constant part by f_ID = C q̈_des − P f_ext.
        let p = problem.selection();
        let qdd = (qdes - p * problem.velocity()) / problem.dt();
        let c = p * problem.mass_matrix() * p.transpose();
        ua -= c * qdd - p * problem.forces();
    }
    let k = elim.multiplier_map(&s1.rmat);
    let mut hess = k.transpose() * &k;
    let reg = 1e-10 * hess.diagonal().amax().max(1e-300);
    for i in 0..nz {
        hess[(i, i)] += reg;
    }
    // Stage I's solution, clipped to f ≥ 0 (a solver's −1e-15 must not make the face empty).
    let f0 = f0.map(|x| x.max(0.0));
    let lin = k.transpose() * &ua - &f0 * reg;
    let e0 = e * &f0;
    // Friction rows −fr f ≥ b_fr, relaxed to what f₀ attains (feasible by construction).
    let fr = if variant.coulomb() {
        friction_rows(problem)
    } else {
        DMatrix::zeros(0, nz)
    };
    let b_fr = (-(&fr * &f0)).map(|x| x.min(0.0));
    if opts.stage_two_lemke {
        if let Ok(sol) = stage_two_lemke(variant, &hess, &lin, &fr, &b_fr, e, &e0, opts) {
            return Ok((sol, true));
        }
    }
    let rows = nz + fr.nrows();
    let mut g = DMatrix::zeros(rows, nz);
    let mut hv = DVector::zeros(rows);
    g.view_mut((0, 0), (nz, nz))
        .copy_from(&(-DMatrix::<f64>::identity(nz, nz)));
    g.rows_mut(nz, fr.nrows()).copy_from(&fr);
    hv.rows_mut(nz, fr.nrows()).copy_from(&(-&b_fr));
    let qp = Qp::new(hess, lin)
        .with_equalities(e.clone(), e0)
        .with_inequalities(g, hv);
    let sol = qp
        .solve(&opts.conic)
        .map_err(|err| conic_error(variant, "stage II", err))?;
    accept(variant, "stage II", &sol)?;
    Ok((sol, false))
}

/// Stage II by Lemke on the KKT LCP of `min ½fᵀQf + lᵀf s.t. −F f ≥ b_F, E f = e₀, f ≥ 0`,
/// the equality as two inequalities with multipliers `ν⁺, ν⁻ ≥ 0`:
///
/// ```text
/// LCP( [[Q, Fᵀ, −Eᵀ, Eᵀ], [−F, 0, 0, 0], [E, 0, 0, 0], [−E, 0, 0, 0]],  [l; −b_F; −e₀; e₀] )
/// ```
///
/// whose matrix is positive semidefinite (`[[Q, −Aᵀ], [A, 0]]`, Q ⪰ 0), so Lemke's method
/// finds a solution whenever the QP is feasible (Cottle, Pang & Stone §4.4); the lexicographic
/// rule resolves the degeneracy of the paired equality rows. The LCP residuals (≤ 1e-8
/// relative, checked by [`crate::lcp::lemke_regularized`]) are the QP's KKT residuals.
#[allow(clippy::too_many_arguments)]
fn stage_two_lemke(
    variant: Variant,
    hess: &DMatrix<f64>,
    lin: &DVector<f64>,
    fr: &DMatrix<f64>,
    b_fr: &DVector<f64>,
    e: &DMatrix<f64>,
    e0: &DVector<f64>,
    opts: &IdOptions,
) -> Result<ConicSolution, ControlError> {
    let nz = hess.nrows();
    let nf = fr.nrows();
    let r = e.nrows();
    let size = nz + nf + 2 * r;
    if size > opts.lemke_max_size {
        return Err(lemke_failed(
            variant,
            "stage II (lemke)",
            format!("KKT LCP of size {size} above lemke_max_size"),
        ));
    }
    let mut mat = DMatrix::zeros(size, size);
    let mut q = DVector::zeros(size);
    mat.view_mut((0, 0), (nz, nz)).copy_from(hess);
    q.rows_mut(0, nz).copy_from(lin);
    let (a_fr, a_ep, a_em) = (nz, nz + nf, nz + nf + r);
    for j in 0..nz {
        for i in 0..nf {
            let v = fr[(i, j)];
            mat[(j, a_fr + i)] = v;
            mat[(a_fr + i, j)] = -v;
        }
        for i in 0..r {
            let v = e[(i, j)];
            mat[(j, a_ep + i)] = -v;
            mat[(j, a_em + i)] = v;
            mat[(a_ep + i, j)] = v;
            mat[(a_em + i, j)] = -v;
        }
    }
    q.rows_mut(a_fr, nf).copy_from(&(-b_fr));
    q.rows_mut(a_ep, r).copy_from(&(-e0));
    q.rows_mut(a_em, r).copy_from(e0);
    let l = crate::lcp::lemke_regularized(&mat, &q, &opts.lemke)
        .map_err(|err| lemke_failed(variant, "stage II (lemke)", err.to_string()))?;
    let x = l.z.rows(0, nz).into_owned();
    Ok(kkt_solution(x, hess, lin, &l))
}
