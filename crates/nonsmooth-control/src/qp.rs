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
//! (the objective is ½v⁺ᵀMv⁺/Δt² up to a constant). Stage II (eqs 102–112) searches
//! `f = f₀ + W w`, `W` a basis of null(H) from a symmetric eigendecomposition with a relative
//! rank tolerance (erratum E11: dim W is computed, it is ≥ 5n − 6 for a floating base), for
//! the minimum-norm *total* torque `u(f) = u_a − K f` (erratum E10: we minimize ‖u‖, as the
//! full form eq 102), subject to f ≥ 0 and the friction rows; `w = 0` is feasible. A
//! Tikhonov term 1e-10·‖w‖² (relative) makes w unique; the torque is unique anyway.

use nalgebra::{DMatrix, DVector};
use nonsmooth_solvers::conic::{ConicSolution, Qp};
use nonsmooth_solvers::{SolveStatus, SolverError};

use crate::elimination::Elimination;
use crate::error::ControlError;
use crate::lcp::{assemble, split_coulomb};
use crate::problem::{check_realizable, IdProblem};
use crate::{IdOptions, IdSolution, Variant};

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

/// Basis of null(H) (columns) for a symmetric positive semidefinite `H`, by Cholesky with
/// diagonal pivoting (Golub & Van Loan §4.2.8; Higham, *Accuracy and Stability*, §10.3):
/// `Pᵀ H P = L Lᵀ` stops at rank r when every remaining Schur-complement diagonal is below
/// `tol · max diag(H)`; with `Lᵀ = [L₁ᵀ L₂ᵀ]` (L₁ r × r lower triangular) the columns of
/// `P [−L₁⁻ᵀ L₂ᵀ; I]` span null(H); a thin QR makes them orthonormal. Cost O(n² r + n k²)
/// instead of a full eigendecomposition. `tol` plays the part of the relative eigenvalue
/// tolerance `null_tol`.
pub(crate) fn nullspace(h: &DMatrix<f64>, tol: f64) -> DMatrix<f64> {
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
    let k = n - rank;
    let mut w = DMatrix::zeros(n, k);
    if k == 0 {
        return w;
    }
    // Solve L₁ᵀ X = −L₂ᵀ (L₁ᵀ upper triangular, r × r) by back substitution.
    let mut x = DMatrix::zeros(rank, k);
    for c in 0..k {
        for i in (0..rank).rev() {
            let mut v = -a[(rank + c, i)];
            for j in i + 1..rank {
                v -= a[(j, i)] * x[(j, c)];
            }
            x[(i, c)] = v / a[(i, i)];
        }
    }
    for c in 0..k {
        for i in 0..rank {
            w[(perm[i], c)] = x[(i, c)];
        }
        w[(perm[rank + c], c)] = 1.0;
    }
    // Orthonormal columns (thin Householder QR): keeps the Stage II programs well scaled.
    w.qr().q()
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
        let w = nullspace(&s1.h, opts.null_tol);
        if w.ncols() > 0 {
            // u(f) = u_a + Kf with u_a = Y(q̇ − Pv*)/Δt and K = −Y P M⁻¹ R.
            let ua = elim.multipliers_free() / dt;
            // K W and K f through the map itself (K is never formed).
            let kw = elim.multiplier_map(&(&s1.rmat * &w));
            let rf = &s1.rmat * &f;
            let kf = elim.multiplier_map(&DMatrix::from_column_slice(rf.len(), 1, rf.as_slice()));
            let u0 = &ua + kf.column(0);
            let mut hess = kw.transpose() * &kw;
            let reg = 1e-10 * hess.diagonal().amax().max(1e-300);
            for i in 0..hess.nrows() {
                hess[(i, i)] += reg;
            }
            let lin = kw.transpose() * &u0;
            let nz = f.len();
            let coulomb = variant.coulomb();
            let rows = nz + if coulomb { n } else { 0 };
            let mut g = DMatrix::zeros(rows, w.ncols());
            let mut hv = DVector::zeros(rows);
            g.rows_mut(0, nz).copy_from(&(-&w));
            hv.rows_mut(0, nz).copy_from(&f.map(|x| x.max(0.0)));
            if coulomb {
                let fr = friction_rows(problem);
                g.rows_mut(nz, n).copy_from(&(&fr * &w));
                hv.rows_mut(nz, n)
                    .copy_from(&(-(&fr * &f)).map(|x| x.max(0.0)));
            }
            // Lemke first when asked; a failure falls back to Clarabel.
            let lemke_two = if opts.stage_two_lemke {
                stage_two_lemke(variant, &hess, &lin, &g, &hv, opts).ok()
            } else {
                None
            };
            let used_lemke_two = lemke_two.is_some();
            let sol2 = match lemke_two {
                Some(sol) => sol,
                None => {
                    let qp = Qp::new(hess, lin).with_inequalities(g, hv);
                    let sol2 = qp
                        .solve(&opts.conic)
                        .map_err(|e| conic_error(variant, "stage II", e))?;
                    accept(variant, "stage II", &sol2)?;
                    sol2
                }
            };
            f += &w * &sol2.x;
            iterations += sol2.iterations as usize;
            status = sol2.status;
            residuals.primal = residuals.primal.max(sol2.residuals.primal);
            residuals.dual = residuals.dual.max(sol2.residuals.dual);
            residuals.complementarity = residuals
                .complementarity
                .max(sol2.residuals.complementarity);
            method = format!(
                "{} stage I + {} stage II (null dim {})",
                if lemke_one { "lemke" } else { "clarabel" },
                if used_lemke_two { "lemke" } else { "clarabel" },
                w.ncols()
            );
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

/// Stage II, `min ½wᵀHw + lᵀw s.t. G w ≤ h` with `w` free, solved by Lemke on its KKT LCP
/// with `w = p − m`, `p, m ≥ 0`:
///
/// ```text
/// LCP( [[H, −H, Gᵀ], [−H, H, −Gᵀ], [−G, G, 0]],  [l; −l; h] ),   z = (p, m, μ)
/// ```
///
/// whose matrix is positive semidefinite, so Lemke's method finds a solution whenever the QP
/// is feasible (Cottle, Pang & Stone §4.4). The LCP residuals (≤ 1e-8 relative, checked by
/// [`crate::lcp::lemke_regularized`]) are the QP's KKT residuals.
fn stage_two_lemke(
    variant: Variant,
    hess: &DMatrix<f64>,
    lin: &DVector<f64>,
    g: &DMatrix<f64>,
    hv: &DVector<f64>,
    opts: &IdOptions,
) -> Result<ConicSolution, ControlError> {
    let k = hess.nrows();
    let r = g.nrows();
    let size = 2 * k + r;
    if size > opts.lemke_max_size {
        return Err(lemke_failed(
            variant,
            "stage II (lemke)",
            format!("KKT LCP of size {size} above lemke_max_size"),
        ));
    }
    let mut mat = DMatrix::zeros(size, size);
    let mut q = DVector::zeros(size);
    mat.view_mut((0, 0), (k, k)).copy_from(hess);
    mat.view_mut((0, k), (k, k)).copy_from(&(-hess));
    mat.view_mut((k, 0), (k, k)).copy_from(&(-hess));
    mat.view_mut((k, k), (k, k)).copy_from(hess);
    let gt = g.transpose();
    mat.view_mut((0, 2 * k), (k, r)).copy_from(&gt);
    mat.view_mut((k, 2 * k), (k, r)).copy_from(&(-&gt));
    mat.view_mut((2 * k, 0), (r, k)).copy_from(&(-g));
    mat.view_mut((2 * k, k), (r, k)).copy_from(g);
    q.rows_mut(0, k).copy_from(lin);
    q.rows_mut(k, k).copy_from(&(-lin));
    q.rows_mut(2 * k, r).copy_from(hv);
    let l = crate::lcp::lemke_regularized(&mat, &q, &opts.lemke)
        .map_err(|e| lemke_failed(variant, "stage II (lemke)", e.to_string()))?;
    let x = l.z.rows(0, k) - l.z.rows(k, k);
    Ok(kkt_solution(x, hess, lin, &l))
}
