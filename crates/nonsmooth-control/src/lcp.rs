//! The LCP-based variants: ID_LCP,∞ (§4, Algorithms 1–2, Appendix F) and ID_LCP,μ (§5).

use nalgebra::{DMatrix, DVector};
use nonsmooth_solvers::lcp::{lcp_residuals, lemke, Lcp, LcpSolution, LemkeOptions, Mlcp};
use nonsmooth_solvers::{Residuals, SolveStatus, SolverError};

use crate::elimination::check_realizable;
use crate::elimination::{Elimination, RowLabel};
use crate::error::ControlError;
use crate::problem::IdProblem;
use crate::{IdOptions, IdSolution, IdStatus, Variant};

/// The corrected Anitescu–Potra LCP of ID_LCP,μ (eq 64 with errata E4, E5), for the
/// elimination `elim` (X = P for ID, no rows for the forward model), z = [f_N; f_F; λ]:
///
/// ```text
/// Q = [ N M̃⁻¹ Nᵀ   N M̃⁻¹ Fᵀ   0 ]     r = [ φ/Δt + N v̂ ]
///     [ F M̃⁻¹ Nᵀ   F M̃⁻¹ Fᵀ   E ]         [   F v̂      ]
///     [   μ          −Eᵀ       0 ]         [    0       ]
/// ```
pub(crate) fn coulomb_lcp_from(
    problem: &IdProblem,
    elim: &Elimination,
) -> (DMatrix<f64>, DVector<f64>) {
    let n = problem.num_contacts();
    let k = 2 * problem.ntan();
    let nmat = problem.normal_matrix();
    let fmat = problem.friction_matrix();
    let mut rmat = DMatrix::zeros(problem.nv(), n + k * n);
    rmat.columns_mut(0, n).copy_from(&nmat.transpose());
    rmat.columns_mut(n, k * n).copy_from(&fmat.transpose());
    let mtr = &elim.mt * &rmat;
    let size = (k + 2) * n;
    let mut q = DMatrix::zeros(size, size);
    let top = rmat.transpose() * &mtr;
    q.view_mut((0, 0), (n + k * n, n + k * n)).copy_from(&top);
    let mu = problem.friction();
    for i in 0..n {
        for e in 0..k {
            q[(n + e * n + i, n + k * n + i)] = 1.0;
            q[(n + k * n + i, n + e * n + i)] = -1.0;
        }
        q[(n + k * n + i, i)] = mu[i];
    }
    let mut r = DVector::zeros(size);
    let nv = &nmat * &elim.vhat + problem.gaps() / problem.dt();
    r.rows_mut(0, n).copy_from(&nv);
    r.rows_mut(n, k * n).copy_from(&(&fmat * &elim.vhat));
    (q, r)
}

/// The ID_LCP,μ LCP `(Q, r)` for the target `qdes` (see [`coulomb_mlcp`] for the MLCP it
/// reduces).
///
/// # Errors
/// As [`Elimination::build`].
pub fn coulomb_lcp(
    problem: &IdProblem,
    qdes: &DVector<f64>,
) -> Result<(DMatrix<f64>, DVector<f64>), ControlError> {
    let elim = Elimination::build(problem, problem.free_velocity(), Some(qdes), false)?;
    Ok(coulomb_lcp_from(problem, &elim))
}

/// `κ = −Δt f_ext − M v⁻`.
fn kappa(problem: &IdProblem) -> DVector<f64> {
    -(problem.forces() * problem.dt()) - problem.mass_matrix() * problem.velocity()
}

/// The MLCP of eq 59 with the signs fixed (erratum E4: +κ), in the form
/// `A x + C z + g = 0`, `w = D x + B z + h` of Appendix C, x = [v⁺; τ],
/// z = [f_N; f_F; λ]:
/// `A = [[M, −Pᵀ], [P, 0]]`, `g = [κ; −q̇_des]`, `C = [[−Nᵀ, −Fᵀ, 0], [0, 0, 0]]`,
/// `D = [[N, 0], [F, 0], [0, 0]]`, `B = [[0, 0, 0], [0, 0, E], [μ, −Eᵀ, 0]]`,
/// `h = [φ/Δt; 0; 0]`.
///
/// # Errors
/// [`ControlError::InvalidInput`] if the MLCP data are rejected.
pub fn coulomb_mlcp(problem: &IdProblem, qdes: &DVector<f64>) -> Result<Mlcp, ControlError> {
    let (m, nu, n) = (problem.nv(), problem.nu(), problem.num_contacts());
    let k = 2 * problem.ntan();
    let nz = (k + 2) * n;
    let (a, g) = free_block(problem, qdes, &[]);
    let nmat = problem.normal_matrix();
    let fmat = problem.friction_matrix();
    let mut c = DMatrix::zeros(m + nu, nz);
    c.view_mut((0, 0), (m, n)).copy_from(&(-nmat.transpose()));
    c.view_mut((0, n), (m, k * n))
        .copy_from(&(-fmat.transpose()));
    let mut d = DMatrix::zeros(nz, m + nu);
    d.view_mut((0, 0), (n, m)).copy_from(&nmat);
    d.view_mut((n, 0), (k * n, m)).copy_from(&fmat);
    let mut bm = DMatrix::zeros(nz, nz);
    let mu = problem.friction();
    for i in 0..n {
        for e in 0..k {
            bm[(n + e * n + i, n + k * n + i)] = 1.0;
            bm[(n + k * n + i, n + e * n + i)] = -1.0;
        }
        bm[(n + k * n + i, i)] = mu[i];
    }
    let mut h = DVector::zeros(nz);
    h.rows_mut(0, n).copy_from(&(problem.gaps() / problem.dt()));
    Mlcp::new(a, c, g, d, bm, h).map_err(|e| ControlError::InvalidInput(e.to_string()))
}

/// `A = [[M, −Pᵀ, −Xᵀ...], [P, 0], [X, 0]]` and `g = [κ; −q̇_des; 0]` for the extra no-slip rows.
fn free_block(
    problem: &IdProblem,
    qdes: &DVector<f64>,
    extra: &[DVector<f64>],
) -> (DMatrix<f64>, DVector<f64>) {
    let (m, nu) = (problem.nv(), problem.nu());
    let ne = extra.len();
    let size = m + nu + ne;
    let mut a = DMatrix::zeros(size, size);
    a.view_mut((0, 0), (m, m)).copy_from(problem.mass_matrix());
    a.view_mut((0, m), (m, nu))
        .copy_from(&(-problem.actuation()));
    a.view_mut((m, 0), (nu, m)).copy_from(problem.selection());
    for (j, x) in extra.iter().enumerate() {
        a.view_mut((0, m + nu + j), (m, 1)).copy_from(&(-x));
        a.view_mut((m + nu + j, 0), (1, m))
            .copy_from(&x.transpose());
    }
    let mut g = DVector::zeros(size);
    g.rows_mut(0, m).copy_from(&kappa(problem));
    g.rows_mut(m, nu).copy_from(&(-qdes));
    (a, g)
}

/// The reduced no-slip LCP of ID_LCP,∞: `Q = N M̃ₑ⁻¹ Nᵀ`, `r = φ/Δt + N v̂ₑ` with
/// `Xₑ = [P; S_𝒮; T_𝒯]` from Algorithm 1 (paper §4; docs/decisions/004-inverse-dynamics.md, common
/// eliminations, "closed form").
///
/// # Errors
/// As [`Elimination::build`].
pub fn noslip_lcp(
    problem: &IdProblem,
    qdes: &DVector<f64>,
) -> Result<(DMatrix<f64>, DVector<f64>), ControlError> {
    let elim = Elimination::build(problem, problem.free_velocity(), Some(qdes), true)?;
    let nmat = problem.normal_matrix();
    let q = &nmat * &elim.mt * nmat.transpose();
    let r = &nmat * &elim.vhat + problem.gaps() / problem.dt();
    Ok(((&q + q.transpose()) * 0.5, r))
}

/// The no-slip MLCP of eqs 42–43 (signs fixed, errata E2/E3) restricted to the tangent rows
/// kept by Algorithm 1: x = [v⁺; τ; f_𝒮; f_𝒯], z = f_N, `A = [[M, −Pᵀ, −Xᵀ], [P, 0, 0],
/// [X, 0, 0]]`, `g = [κ; −q̇_des; 0]`, `C = [−Nᵀ; 0]`, `D = [N, 0]`, `B = 0`, `h = φ/Δt`.
/// Its Schur reduction equals [`noslip_lcp`].
///
/// # Errors
/// As [`Elimination::build`]; [`ControlError::InvalidInput`] if the MLCP is rejected.
pub fn noslip_mlcp(problem: &IdProblem, qdes: &DVector<f64>) -> Result<Mlcp, ControlError> {
    let elim = Elimination::build(problem, problem.free_velocity(), Some(qdes), true)?;
    let extra: Vec<DVector<f64>> = elim
        .labels
        .iter()
        .filter_map(|l| match l {
            RowLabel::Tangent { contact, dir } => Some(
                problem.contacts()[*contact]
                    .tangent_rows
                    .row(*dir)
                    .transpose(),
            ),
            RowLabel::Actuator(_) => None,
        })
        .collect();
    let (a, g) = free_block(problem, qdes, &extra);
    let (m, n) = (problem.nv(), problem.num_contacts());
    let size = a.nrows();
    let nmat = problem.normal_matrix();
    let mut c = DMatrix::zeros(size, n);
    c.view_mut((0, 0), (m, n)).copy_from(&(-nmat.transpose()));
    let mut d = DMatrix::zeros(n, size);
    d.view_mut((0, 0), (n, m)).copy_from(&nmat);
    let h = problem.gaps() / problem.dt();
    Mlcp::new(a, c, g, d, DMatrix::zeros(n, n), h)
        .map_err(|e| ControlError::InvalidInput(e.to_string()))
}

/// Result of [`ppm`].
#[derive(Debug, Clone, PartialEq)]
pub struct PpmOutcome {
    /// The solution z (length n); at most |active| ≤ rank(N M̃⁻¹) entries are positive.
    pub z: DVector<f64>,
    /// The final working set B̄ (indices with z possibly > 0).
    pub active: Vec<usize>,
    /// Iterations used.
    pub iterations: usize,
}

/// Algorithm 2 (warm-started principal pivoting, PPM I) on `LCP(r, N M̃⁻¹ Nᵀ)` without ever
/// forming the n × n matrix (Appendix F): each iteration factorizes only
/// `A = N_B̄ M̃⁻¹ N_B̄ᵀ` (|B̄| ≤ rank ≤ m) and evaluates `w† = r + N(M̃⁻¹ N_B̄ᵀ z†)` in O(nm).
/// Guards (erratum E9: PSD is only P₀): an entering row that makes `A` singular, or the
/// iteration cap, ends the method with `Err(reason)` so the caller can fall back to Lemke.
///
/// # Errors
/// `Err(reason)` (a plain message) when the method cannot continue.
pub fn ppm(
    nmat: &DMatrix<f64>,
    mt: &DMatrix<f64>,
    r: &DVector<f64>,
    warm: Option<&[usize]>,
    max_iterations: usize,
) -> Result<PpmOutcome, String> {
    let n = r.len();
    let rscale = 1.0 + r.amax();
    let tol = 1e-12 * rscale;
    if n == 0 || r.min() >= -tol {
        return Ok(PpmOutcome {
            z: DVector::zeros(n),
            active: Vec::new(),
            iterations: 0,
        });
    }
    let mut active: Vec<usize> = match warm {
        Some(w) if !w.is_empty() && w.iter().all(|&i| i < n) => w.to_vec(),
        _ => vec![r.imin()],
    };
    let mtn = |rows: &[usize]| -> DMatrix<f64> {
        let mut nb = DMatrix::zeros(rows.len(), nmat.ncols());
        for (a, &i) in rows.iter().enumerate() {
            nb.row_mut(a).copy_from(&nmat.row(i));
        }
        nb
    };
    for iter in 1..=max_iterations {
        let nb = mtn(&active);
        let mtnbt = mt * nb.transpose();
        let a = &nb * &mtnbt;
        let a = (&a + a.transpose()) * 0.5;
        let diag_max = a.diagonal().amax();
        let chol = a
            .clone()
            .cholesky()
            .filter(|c| {
                let l = c.l_dirty();
                (0..l.nrows()).all(|i| l[(i, i)] * l[(i, i)] > 1e-11 * diag_max)
            })
            .ok_or_else(|| format!("singular working-set matrix at iteration {iter}"))?;
        let rb = DVector::from_iterator(active.len(), active.iter().map(|&i| r[i]));
        let zd = -chol.solve(&rb);
        let w = r + nmat * (&mtnbt * &zd);
        let mut enter: Option<(usize, f64)> = None;
        for i in 0..n {
            if !active.contains(&i) && w[i] < -tol && enter.is_none_or(|(_, v)| w[i] < v) {
                enter = Some((i, w[i]));
            }
        }
        let jmin = zd.imin();
        let zneg = zd[jmin] < -tol * 1e-3;
        match enter {
            None => {
                if zneg {
                    active.remove(jmin);
                    if active.is_empty() {
                        active.push(w.imin());
                    }
                    continue;
                }
                let mut z = DVector::zeros(n);
                for (a, &i) in active.iter().enumerate() {
                    z[i] = zd[a].max(0.0);
                }
                return Ok(PpmOutcome {
                    z,
                    active,
                    iterations: iter,
                });
            }
            Some((i, _)) => {
                if zneg {
                    active.remove(jmin);
                }
                active.push(i);
            }
        }
    }
    Err(format!("iteration cap {max_iterations} reached"))
}

/// Lemke with the repo's regularized fallback: first unregularized; if the pivot cap is hit,
/// retries with `Q + εI` (ε = 1e-12 … 1e-6 times ‖Q‖∞), accepting only a point whose
/// residuals *for the original problem* are small. Ray termination on the unregularized
/// problem is returned as is (for copositive-plus Q it proves infeasibility).
pub(crate) fn lemke_regularized(
    q: &DMatrix<f64>,
    r: &DVector<f64>,
    opts: &LemkeOptions,
) -> Result<LcpSolution, SolverError> {
    let lcp = Lcp::new(q.clone(), r.clone())?;
    let first = lemke(&lcp, opts);
    let tol = 1e-8 * (1.0 + r.amax());
    match first {
        Ok(s) if s.residuals.max() <= tol => return Ok(s),
        Err(e @ SolverError::NoSolution { .. }) => return Err(e),
        _ => {}
    }
    let scale = q.amax().max(1e-300);
    let mut last = None;
    for eps in [1e-12, 1e-10, 1e-8, 1e-6] {
        let reg = q + DMatrix::identity(q.nrows(), q.nrows()) * (eps * scale);
        let lr = Lcp::new(reg, r.clone())?;
        if let Ok(s) = lemke(&lr, opts) {
            let (w, res) = lcp.evaluate(&s.z)?;
            if res.max() <= tol {
                return Ok(LcpSolution {
                    z: s.z,
                    w,
                    status: SolveStatus::Solved,
                    residuals: res,
                    iterations: s.iterations,
                });
            }
            last = Some(res);
        }
    }
    Err(SolverError::Failed {
        solver: "lemke-regularized",
        reason: format!("no acceptable solution (last residuals {last:?})"),
    })
}

fn lemke_error(variant: Variant, e: SolverError) -> ControlError {
    match e {
        SolverError::NoSolution { reason, .. } => ControlError::InfeasibleDesired {
            variant: variant.name(),
            reason: format!("Lemke ray termination ({reason})"),
        },
        other => ControlError::SolverFailed {
            variant: variant.name(),
            stage: "lemke",
            status: None,
            residuals: Residuals::default(),
            reason: other.to_string(),
        },
    }
}

/// How a solver found the contact impulses: the route taken, its status, the residuals of
/// the returned point and the iterations spent.
pub(crate) struct SolveReport {
    /// The route taken (`"lemke"`, `"ppm"`, ...).
    pub method: String,
    /// The solver's status.
    pub status: SolveStatus,
    /// The residuals of the returned point.
    pub residuals: Residuals,
    /// The iterations (pivots) spent.
    pub iterations: usize,
}

/// Assembles an [`IdSolution`] from the contact impulses, the elimination and how the
/// impulses were found.
pub(crate) fn assemble(
    problem: &IdProblem,
    variant: Variant,
    elim: &Elimination,
    qdes: &DVector<f64>,
    normal: DVector<f64>,
    tangent: DVector<f64>,
    report: SolveReport,
) -> IdSolution {
    let SolveReport {
        method,
        status,
        residuals,
        iterations,
    } = report;
    let n = problem.num_contacts();
    let ntan = problem.ntan();
    let mut g = problem.normal_matrix().transpose() * &normal;
    for j in 0..ntan {
        let tj = DVector::from_iterator(n, (0..n).map(|i| tangent[i * ntan + j]));
        g += problem.tangent_matrix(j).transpose() * tj;
    }
    let lam = elim.multipliers(&g);
    let nu = problem.nu();
    let tau = lam.rows(0, nu).into_owned();
    let v_plus = &elim.vhat + &elim.mt * &g;
    let ke = 0.5 * v_plus.dot(&(problem.mass_matrix() * &v_plus));
    let dt = problem.dt();
    IdSolution {
        variant,
        status: IdStatus::Solved,
        torques: &tau / dt,
        normal_forces: &normal / dt,
        tangent_forces: &tangent / dt,
        normal_impulses: normal,
        tangent_impulses: tangent,
        v_plus,
        desired_velocity: qdes.clone(),
        method,
        solver_status: status,
        residuals,
        iterations,
        kinetic_energy: ke,
        relaxation: None,
    }
}

/// ID_LCP,∞: Algorithm 1, reduced LCP, PPM (warm) with Lemke fallback, recovery of
/// `[τ; f_𝒮; f_𝒯] = Yₑ(bₑ − Xₑv* − XₑM⁻¹Nᵀf_N)` (dropped rows get 0, Appendix E).
pub(crate) fn solve_noslip(
    problem: &IdProblem,
    qdes: &DVector<f64>,
    warm: Option<Vec<usize>>,
    opts: &IdOptions,
) -> Result<(IdSolution, Vec<usize>), ControlError> {
    let variant = Variant::LcpNoSlip;
    let elim_p = Elimination::build(problem, problem.free_velocity(), Some(qdes), false)?;
    check_realizable(problem, &elim_p, variant)?;
    let elim = Elimination::build(problem, problem.free_velocity(), Some(qdes), true)?;
    let nmat = problem.normal_matrix();
    let r = &nmat * &elim.vhat + problem.gaps() / problem.dt();
    let n = problem.num_contacts();
    let ppm_result = ppm(
        &nmat,
        &elim.mt,
        &r,
        warm.as_deref(),
        opts.ppm_max_iterations,
    );
    let (z, active, method, iterations) = match ppm_result {
        Ok(out) => (out.z, out.active, "ppm".to_string(), out.iterations),
        Err(reason) => {
            let q = &nmat * &elim.mt * nmat.transpose();
            let q = (&q + q.transpose()) * 0.5;
            let s = lemke_regularized(&q, &r, &opts.lemke).map_err(|e| lemke_error(variant, e))?;
            let active = (0..n).filter(|&i| s.z[i] > 0.0).collect();
            (s.z, active, format!("lemke (ppm: {reason})"), s.iterations)
        }
    };
    // Independent check of the returned point on the full problem.
    let w = &r + &nmat * (&elim.mt * (nmat.transpose() * &z));
    let residuals = lcp_residuals(&z, &w);
    if residuals.max() > 1e-7 * (1.0 + r.amax()) {
        return Err(ControlError::SolverFailed {
            variant: variant.name(),
            stage: "ppm/lemke",
            status: None,
            residuals,
            reason: "LCP residuals too large".into(),
        });
    }
    let g_n = nmat.transpose() * &z;
    let lam = elim.multipliers(&g_n);
    let ntan = problem.ntan();
    let mut tangent = DVector::zeros(n * ntan);
    for (a, l) in elim.labels.iter().enumerate() {
        if let RowLabel::Tangent { contact, dir } = l {
            tangent[contact * ntan + dir] = lam[a];
        }
    }
    // Erratum E7: Appendix E holds only for a kinematically consistent q̇_des; check every
    // tangent row, the dropped ones included.
    let g_all = &g_n + tangent_generalized(problem, &tangent);
    let v_plus = &elim_p.vhat + &elim_p.mt * &g_all;
    let vscale = 1.0 + v_plus.amax();
    for (i, c) in problem.contacts().iter().enumerate() {
        let slip = (&c.tangent_rows * &v_plus).amax();
        if slip > 1e-9 * vscale * (1.0 + c.tangent_rows.amax()) {
            return Err(ControlError::InfeasibleDesired {
                variant: variant.name(),
                reason: format!(
                    "contact {i} would slip ({slip:e}) under no slip: the desired motion is \
                     kinematically inconsistent with the contacts (erratum E7)"
                ),
            });
        }
    }
    let sol = assemble(
        problem,
        variant,
        &elim_p,
        qdes,
        z,
        tangent,
        SolveReport {
            method,
            status: SolveStatus::Solved,
            residuals,
            iterations,
        },
    );
    Ok((sol, active))
}

/// ID_LCP,μ: the corrected AP LCP solved by (regularized) Lemke; recovery
/// `τ = Y_P(q̇_des − P v* − P M⁻¹(Nᵀf_N + Fᵀf_F))`.
pub(crate) fn solve_coulomb(
    problem: &IdProblem,
    qdes: &DVector<f64>,
    opts: &IdOptions,
) -> Result<IdSolution, ControlError> {
    let variant = Variant::LcpCoulomb;
    let elim = Elimination::build(problem, problem.free_velocity(), Some(qdes), false)?;
    check_realizable(problem, &elim, variant)?;
    let (q, r) = coulomb_lcp_from(problem, &elim);
    let s = lemke_regularized(&q, &r, &opts.lemke).map_err(|e| lemke_error(variant, e))?;
    if s.residuals.max() > 1e-7 * (1.0 + r.amax()) {
        return Err(ControlError::SolverFailed {
            variant: variant.name(),
            stage: "lemke",
            status: Some(s.status),
            residuals: s.residuals,
            reason: "LCP residuals too large".into(),
        });
    }
    let (normal, tangent) = split_coulomb(problem, &s.z);
    Ok(assemble(
        problem,
        variant,
        &elim,
        qdes,
        normal,
        tangent,
        SolveReport {
            method: "lemke".into(),
            status: s.status,
            residuals: s.residuals,
            iterations: s.iterations,
        },
    ))
}

/// `Σⱼ Tⱼᵀ f_T,j` for contact-major net tangent impulses.
pub(crate) fn tangent_generalized(problem: &IdProblem, tangent: &DVector<f64>) -> DVector<f64> {
    let n = problem.num_contacts();
    let ntan = problem.ntan();
    let mut g = DVector::zeros(problem.nv());
    for j in 0..ntan {
        let tj = DVector::from_iterator(n, (0..n).map(|i| tangent[i * ntan + j]));
        g += problem.tangent_matrix(j).transpose() * tj;
    }
    g
}

/// Splits z = [f_N; f_F; …] into normal impulses and net tangent impulses (contact-major).
pub(crate) fn split_coulomb(problem: &IdProblem, z: &DVector<f64>) -> (DVector<f64>, DVector<f64>) {
    let n = problem.num_contacts();
    let ntan = problem.ntan();
    let normal = z.rows(0, n).map(|x| x.max(0.0));
    let mut tangent = DVector::zeros(n * ntan);
    for i in 0..n {
        for j in 0..ntan {
            tangent[i * ntan + j] = z[n + 2 * j * n + i] - z[n + (2 * j + 1) * n + i];
        }
    }
    (normal, tangent)
}
