//! The two-stage convex variants ID_QP,μ / ID_QP,∞ (§6) and the one-stage ID_QP,μ of §6.1.
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
//! (the objective is ½v⁺ᵀMv⁺/Δt² up to a constant). `M̃⁻¹` has rank m − nu (the base DOF:
//! 6 for the quadruped), so with `M̃⁻¹ = BᵀB` (B from diagonal-pivoted Cholesky, p × m) the
//! Hessian is `H = FᵀF` with the thin factor `F = B R` (p × (k+1)n), `c = Fᵀ B M v*/Δt` and
//! the non-penetration rows are `(N Bᵀ) F`: Stage I is never formed as a dense (k+1)n-square
//! matrix ([`crate::active_set`]).
//!
//! Stage II (eqs 102–112) keeps Stage I's optimal face and picks on it the minimum-norm
//! *total* torque `u(f) = u_a + K f` (erratum E10: by default we minimize ‖u‖, as the full
//! form eq 102; [`crate::StageTwoObjective::DeviationFromRigidId`] minimizes ‖u − f_ID‖
//! instead, the reduced form of eqs 105–112 and the authors' Pacer plugin — measured on the
//! quadruped walk it was less smooth, docs/locomotion.md). If Stage II's solver fails (it is
//! feasible at f = f₀, so the failure is numerical), Stage I's impulses are kept, as in the
//! authors' plugin. The paper parametrizes the face as `f = f₀ + W w` with `W` a basis of
//! null(H); we use the equivalent description in `f` itself (decision,
//! docs/decisions/004-inverse-dynamics.md):
//!
//! ```text
//! Stage II: min ½‖u_a + K f‖² + ½ρ‖f − f₀‖²   s.t.  E f = E f₀,  f ≥ 0,  friction rows
//! ```
//!
//! where `E` holds the rows of `F` that pivoted Cholesky of `F Fᵀ` keeps (rank r computed with
//! the relative tolerance `null_tol`; erratum E11: the face's dimension `nz − r` is computed,
//! it is ≥ 5n − 6 for a floating base). `E f = E f₀` ⟺ `f − f₀ ∈ null(H)`, and the linear
//! term `c ∈ range(H)`, so the Stage I objective is constant on this set. The Tikhonov term
//! `ρ = 1e-10 · max diag(KᵀK)` makes f unique; the torque is unique anyway.
//!
//! One-stage ID_QP,μ (§6.1, "regularizing the Hessian matrix in the quadratic program", after
//! Todorov 2014; timed in Fig. 19): Stage I of ID_QP,μ with `H + εI`,
//! `ε = IdOptions::one_stage_regularization · max diag(H)`, whose unique solution gives the
//! impulses and the torque directly (no Stage II).
//!
//! Every stage is solved from the previous call's active set when the controller has one
//! (§4.6 warm start; [`crate::active_set`]), else (and when the warm solve does not converge,
//! counted in [`crate::IdStats`]) by Lemke on the stage's KKT LCP, with Clarabel as the last
//! fallback.

use nalgebra::{DMatrix, DVector};
use nonsmooth_solvers::conic::{ConicSolution, Qp};
use nonsmooth_solvers::{SolveStatus, SolverError};

use crate::active_set::{status_of, ActiveSet, QpPoint, ReducedQp, ACCEPT_TOL};
use crate::elimination::check_realizable;
use crate::elimination::Elimination;
use crate::error::ControlError;
use crate::lcp::{assemble, split_coulomb, SolveReport};
use crate::problem::IdProblem;
use crate::{IdOptions, IdSolution, IdStats, IdStatus, StageTwoObjective, Variant};

/// Relative rank tolerance of the factor `B` of `M̃⁻¹` (its null space, the actuated
/// directions, is zero up to the roundoff of `M⁻¹ − ZᵀZ`).
const MT_RANK_TOL: f64 = 1e-12;

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

/// The warm-start state of the QP variants kept by [`crate::InverseDynamics`] between calls:
/// the active sets of the last call's stages, valid for the same variant and number of
/// contacts.
#[derive(Debug, Clone, Default)]
pub(crate) struct QpWarm {
    key: Option<(Variant, usize)>,
    one: Option<ActiveSet>,
    two: Option<ActiveSet>,
}

impl QpWarm {
    fn sets(
        &mut self,
        variant: Variant,
        contacts: usize,
    ) -> (Option<ActiveSet>, Option<ActiveSet>) {
        if self.key != Some((variant, contacts)) {
            *self = QpWarm {
                key: Some((variant, contacts)),
                one: None,
                two: None,
            };
        }
        (self.one.clone(), self.two.clone())
    }
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

/// The Stage I data in reduced form: the QP (thin factor `F = B R`, `c`, the rows
/// `A f ≥ b`: non-penetration, then friction for QP,μ) and `R`.
pub(crate) struct StageOne {
    pub qp: ReducedQp,
    pub rmat: DMatrix<f64>,
}

pub(crate) fn stage_one(problem: &IdProblem, elim: &Elimination, coulomb: bool) -> StageOne {
    let n = problem.num_contacts();
    let dt = problem.dt();
    let rmat = contact_map(problem);
    let nz = rmat.ncols();
    // M̃⁻¹ = BᵀB (B: p × m, p = rank M̃⁻¹), F = B R, H = FᵀF.
    let b = range_factor(&elim.mt, MT_RANK_TOL);
    let fac = &b * &rmat;
    let d = &b * (problem.mass_matrix() * problem.free_velocity()) / dt;
    let lin = fac.tr_mul(&d);
    let nmat = problem.normal_matrix();
    let rows = n + if coulomb { n } else { 0 };
    let mut ineq = DMatrix::zeros(rows, nz);
    let mut rhs = DVector::zeros(rows);
    // N M̃⁻¹ R f ≥ −(N v̂ + φ/Δt)/Δt, with N M̃⁻¹ R = (N Bᵀ) F.
    ineq.rows_mut(0, n)
        .copy_from(&((&nmat * b.transpose()) * &fac));
    rhs.rows_mut(0, n)
        .copy_from(&(-(&nmat * &elim.vhat + problem.gaps() / dt) / dt));
    if coulomb {
        ineq.rows_mut(n, n).copy_from(&(-friction_rows(problem)));
    }
    StageOne {
        qp: ReducedQp {
            fac,
            rho: 0.0,
            lin,
            eq: DMatrix::zeros(0, nz),
            eq_rhs: DVector::zeros(0),
            ineq,
            ineq_rhs: rhs,
        },
        rmat,
    }
}

/// How a stage was solved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route {
    Warm,
    Lemke,
    Pivoting,
    Clarabel,
}

impl Route {
    fn name(self) -> &'static str {
        match self {
            Route::Warm => "warm",
            Route::Lemke => "lemke",
            Route::Pivoting => "principal pivoting",
            Route::Clarabel => "clarabel",
        }
    }
}

/// A solved stage: the point, the route, the status, and why a warm start was not used.
struct Stage {
    point: QpPoint,
    route: Route,
    status: SolveStatus,
    note: Option<String>,
}

/// The active sets a stage's principal pivoting may start from, in the order tried.
struct StageStarts<'a> {
    /// The previous call's optimal set (a warm start), if any.
    warm: Option<&'a ActiveSet>,
    /// A cold guess tried before Lemke, if any.
    guess_first: Option<&'a ActiveSet>,
    /// The cold guess tried after a Lemke failure.
    guess: &'a ActiveSet,
}

/// Solves one stage: from `starts.warm` by principal pivoting (if given), else from
/// `starts.guess_first` (if given), else or on failure by Lemke on the KKT LCP (if `lemke`
/// and the LCP is within `lemke_max_size`), on a Lemke failure by principal pivoting from
/// `starts.guess` (Stage II: the support of Stage I's impulses), else by Clarabel. Every
/// fallback is counted in `stats`.
fn solve_stage(
    qp: &ReducedQp,
    starts: StageStarts<'_>,
    lemke: bool,
    variant: Variant,
    stage: &'static str,
    opts: &IdOptions,
    stats: &mut IdStats,
) -> Result<Stage, ControlError> {
    let StageStarts {
        warm,
        guess_first,
        guess,
    } = starts;
    let scale = qp.scale();
    let mut note = None;
    // From a guess more pivots are allowed than from a warm start: up to twice the number
    // of complementary pairs.
    let guess_cap = opts
        .ppm_max_iterations
        .max(2 * (qp.lin.len() + qp.ineq.nrows()));
    match warm {
        Some(set) if opts.warm_start => match qp.solve_from(set, opts.ppm_max_iterations) {
            Ok(point) => {
                stats.warm_solves += 1;
                let status = status_of(&point, scale);
                return Ok(Stage {
                    point,
                    route: Route::Warm,
                    status,
                    note,
                });
            }
            Err(reason) => {
                stats.warm_fallbacks += 1;
                note = Some(format!("{stage} warm start failed: {reason}"));
            }
        },
        _ => {
            stats.cold_solves += 1;
            if let Some(first) = guess_first {
                if let Ok(point) = qp.solve_from(first, guess_cap) {
                    let status = status_of(&point, scale);
                    return Ok(Stage {
                        point,
                        route: Route::Pivoting,
                        status,
                        note,
                    });
                }
            }
        }
    }
    let size = qp.lin.len() + qp.ineq.nrows() + 2 * qp.eq.nrows();
    // Above `lemke_max_size` the stage goes to Clarabel directly (the option's contract).
    if lemke && size <= opts.lemke_max_size {
        let reason = {
            let (mat, q) = qp.kkt_lcp();
            match crate::lcp::lemke_regularized(&mat, &q, &opts.lemke) {
                Ok(l) => {
                    let point = qp.read_kkt(&l.z, l.iterations);
                    if point.residuals.max() <= ACCEPT_TOL * scale {
                        let status = status_of(&point, scale);
                        return Ok(Stage {
                            point,
                            route: Route::Lemke,
                            status,
                            note,
                        });
                    }
                    format!("KKT residuals {:e} above tolerance", point.residuals.max())
                }
                Err(e) => e.to_string(),
            }
        };
        stats.lemke_failures += 1;
        let msg = format!("{stage} lemke: {reason}");
        note = Some(match note {
            Some(n) => format!("{n}; {msg}"),
            None => msg,
        });
        match qp.solve_from(guess, guess_cap) {
            Ok(point) => {
                let status = status_of(&point, scale);
                return Ok(Stage {
                    point,
                    route: Route::Pivoting,
                    status,
                    note,
                });
            }
            Err(reason) => {
                let msg = format!("{stage} principal pivoting: {reason}");
                note = note.map(|n| format!("{n}; {msg}"));
            }
        }
    }
    stats.clarabel_fallbacks += 1;
    let sol = clarabel(qp, variant, stage, opts)?;
    let x = sol.x.map(|v| v.max(0.0));
    // The active set read off the interior-point solution (x and the row slacks against
    // 1e-7 of their scales), checked by one principal-pivoting solve: if it is a KKT point
    // it seeds the next call's warm start, else the next call starts cold again.
    let xmax = x.amax().max(1e-300);
    let slack = &qp.ineq * &x - &qp.ineq_rhs;
    let smax = slack.amax().max(1e-300);
    let guess = ActiveSet {
        basic: (0..x.len()).filter(|&j| x[j] > 1e-7 * xmax).collect(),
        active: (0..slack.len())
            .filter(|&i| slack[i] <= 1e-7 * smax)
            .collect(),
    };
    let set = qp
        .solve_from(&guess, opts.ppm_max_iterations)
        .map(|p| p.set)
        .unwrap_or_default();
    let point = QpPoint {
        x,
        set,
        residuals: sol.residuals,
        iterations: sol.iterations as usize,
    };
    Ok(Stage {
        point,
        route: Route::Clarabel,
        status: sol.status,
        note,
    })
}

/// The reference route: the stage QP by Clarabel (interior point).
fn clarabel(
    qp: &ReducedQp,
    variant: Variant,
    stage: &'static str,
    opts: &IdOptions,
) -> Result<ConicSolution, ControlError> {
    let nz = qp.lin.len();
    let ri = qp.ineq.nrows();
    let mut hess = qp.fac.tr_mul(&qp.fac);
    for j in 0..nz {
        hess[(j, j)] += qp.rho;
    }
    let hess = (&hess + hess.transpose()) * 0.5;
    // G x ≤ h: −x ≤ 0 and −A x ≤ −b.
    let mut g = DMatrix::zeros(nz + ri, nz);
    let mut h = DVector::zeros(nz + ri);
    g.view_mut((0, 0), (nz, nz))
        .copy_from(&(-DMatrix::<f64>::identity(nz, nz)));
    g.rows_mut(nz, ri).copy_from(&(-&qp.ineq));
    h.rows_mut(nz, ri).copy_from(&(-&qp.ineq_rhs));
    let mut problem = Qp::new(hess, qp.lin.clone()).with_inequalities(g, h);
    if qp.eq.nrows() > 0 {
        problem = problem.with_equalities(qp.eq.clone(), qp.eq_rhs.clone());
    }
    let sol = problem
        .solve(&opts.conic)
        .map_err(|e| conic_error(variant, stage, e))?;
    accept(variant, stage, &sol)?;
    Ok(sol)
}

/// Stage I alone: the impulses f₀ in force units, and how they were found.
fn solve_stage_one(
    s1: &StageOne,
    warm: Option<&ActiveSet>,
    guess_first: Option<&ActiveSet>,
    variant: Variant,
    opts: &IdOptions,
    stats: &mut IdStats,
) -> Result<Stage, ControlError> {
    solve_stage(
        &s1.qp,
        StageStarts {
            warm,
            guess_first,
            guess: &ActiveSet::default(),
        },
        opts.stage_one_lemke,
        variant,
        "stage I",
        opts,
        stats,
    )
}

/// Diagonal-pivoted Cholesky of a symmetric positive semidefinite `h` (Golub & Van Loan
/// §4.2.8; Higham, *Accuracy and Stability*, §10.3): `Pᵀ H P = L Lᵀ`, stopped at rank r when
/// every remaining Schur-complement diagonal is below `tol · max diag(H)`. Returns the
/// permutation and the factor's first r columns (in place in the returned matrix).
fn pivoted_cholesky(h: &DMatrix<f64>, tol: f64) -> (Vec<usize>, usize, DMatrix<f64>) {
    let n = h.nrows();
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
    (perm, rank, a)
}

/// The range factor of a symmetric positive semidefinite `H`: the `r × n` matrix `E` with
/// `H ≈ EᵀE` by [`pivoted_cholesky`]: `E = Lᵀ Pᵀ` (the first r columns of L). Then `null(E)`
/// is H's numerical null space. Cost O(n² r) instead of a full eigendecomposition.
pub(crate) fn range_factor(h: &DMatrix<f64>, tol: f64) -> DMatrix<f64> {
    let n = h.nrows();
    if n == 0 {
        return DMatrix::zeros(0, 0);
    }
    let (perm, rank, a) = pivoted_cholesky(h, tol);
    let mut e = DMatrix::zeros(rank, n);
    for c in 0..rank {
        for (i, &p) in perm.iter().enumerate().skip(c) {
            e[(c, p)] = a[(i, c)];
        }
    }
    e
}

/// The rows of `fac` that span its row space (pivoted Cholesky of `F Fᵀ`, relative
/// tolerance `tol`): `E` with `null(E) = null(F)` = null(FᵀF) and full row rank.
fn independent_rows(fac: &DMatrix<f64>, tol: f64) -> DMatrix<f64> {
    if fac.nrows() == 0 {
        return fac.clone();
    }
    let gram = fac * fac.transpose();
    let (perm, rank, _) = pivoted_cholesky(&gram, tol);
    DMatrix::from_fn(rank, fac.ncols(), |r, c| fac[(perm[r], c)])
}

/// ID_QP,μ / ID_QP,∞ / one-stage ID_QP,μ.
pub(crate) fn solve(
    problem: &IdProblem,
    qdes: &DVector<f64>,
    opts: &IdOptions,
    warm: &mut QpWarm,
    stats: &mut IdStats,
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
            SolveReport {
                method: "no contacts".into(),
                status: SolveStatus::Solved,
                residuals: Default::default(),
                iterations: 0,
            },
        ));
    }
    let (warm_one, warm_two) = warm.sets(variant, n);
    let mut s1 = stage_one(problem, &elim, variant.coulomb());
    let one_stage = variant == Variant::QpCoulombOneStage;
    let mut guess_first = None;
    if one_stage {
        // Cold one-stage: the regularized Hessian is ill-conditioned for Lemke (its KKT
        // residuals miss 1e-8 from 16 duplicated contacts on), so the unregularized Stage I
        // is solved first (Lemke) and its active set starts the pivoting.
        if warm_one.is_none() || !opts.warm_start {
            guess_first = solve_stage_one(&s1, None, None, variant, opts, stats)
                .ok()
                .map(|st| st.point.set);
        }
        let hmax = (0..s1.qp.lin.len())
            .map(|j| s1.qp.fac.column(j).norm_squared())
            .fold(0.0_f64, f64::max);
        s1.qp.rho = opts.one_stage_regularization * hmax.max(1e-300);
    }
    let st1 = solve_stage_one(
        &s1,
        warm_one.as_ref(),
        guess_first.as_ref(),
        variant,
        opts,
        stats,
    )?;
    warm.one = Some(st1.point.set.clone());
    let mut f = st1.point.x.clone();
    let mut iterations = st1.point.iterations;
    let mut status = st1.status;
    let mut residuals = st1.point.residuals;
    let mut method = format!("{} stage I", st1.route.name());
    if one_stage {
        method = format!("{} one-stage (regularized stage I)", st1.route.name());
    }
    let mut notes: Vec<String> = st1.note.into_iter().collect();
    if opts.stage_two && !one_stage {
        let e = independent_rows(&s1.qp.fac, opts.null_tol);
        if e.nrows() < f.len() {
            // Stage II is feasible by construction (f = f₀), so a reported failure is
            // numerical (Clarabel's false "primal infeasible" certificates on the
            // ill-conditioned face of ID_QP,∞: 182 of 1300 steps of the rigid μ = ∞ walk);
            // as the authors' plugin does, fall back to Stage I's f₀, which is on the face
            // and Stage-I optimal (only the torque choice on the face is lost).
            let qp2 = stage_two(problem, qdes, &elim, &s1, e, &f, opts);
            // The cold guess of Stage II: f₀'s support and the friction rows tight at f₀.
            let slack = &qp2.ineq * &f - &qp2.ineq_rhs;
            let guess = ActiveSet {
                basic: (0..f.len()).filter(|&j| f[j] > 0.0).collect(),
                active: (0..slack.len()).filter(|&i| slack[i] <= 0.0).collect(),
            };
            match solve_stage(
                &qp2,
                StageStarts {
                    warm: warm_two.as_ref(),
                    guess_first: None,
                    guess: &guess,
                },
                opts.stage_two_lemke,
                variant,
                "stage II",
                opts,
                stats,
            ) {
                Err(err) => {
                    warm.two = None;
                    method = format!("{method}; stage II failed, Stage I's impulses kept ({err})");
                }
                Ok(st2) => {
                    warm.two = Some(st2.point.set.clone());
                    f = st2.point.x.clone();
                    iterations += st2.point.iterations;
                    status = st2.status;
                    let r2 = st2.point.residuals;
                    residuals.primal = residuals.primal.max(r2.primal);
                    residuals.dual = residuals.dual.max(r2.dual);
                    residuals.complementarity = residuals.complementarity.max(r2.complementarity);
                    method = format!(
                        "{} stage I + {} stage II (face dim {})",
                        st1.route.name(),
                        st2.route.name(),
                        f.len() - qp2.eq.nrows()
                    );
                    notes.extend(st2.note);
                }
            }
        }
    }
    if !notes.is_empty() {
        method = format!("{method}; {}", notes.join("; "));
    }
    let z = &f * dt;
    let (normal, tangent) = split_coulomb(problem, &z);
    // The dynamics use the raw edge impulses (not the clipped normal).
    let g = &s1.rmat * &z;
    let lam = elim.multipliers(&g);
    let v_plus = &elim.vhat + &elim.mt * &g;
    let kinetic_energy = 0.5 * v_plus.dot(&(problem.mass_matrix() * &v_plus));
    Ok(IdSolution {
        variant,
        status: IdStatus::Solved,
        torques: lam.rows(0, problem.nu()) / dt,
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
        kinetic_energy,
        relaxation: None,
    })
}

/// Stage II on the optimal face of Stage I (module docs) as a [`ReducedQp`]: factor K,
/// `ρ`, the face rows `E f = E f₀` and the friction rows relaxed to what f₀ attains (the
/// variant is `opts.variant`).
fn stage_two(
    problem: &IdProblem,
    qdes: &DVector<f64>,
    elim: &Elimination,
    s1: &StageOne,
    e: DMatrix<f64>,
    f0: &DVector<f64>,
    opts: &IdOptions,
) -> ReducedQp {
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
    let kmax = (0..nz)
        .map(|j| k.column(j).norm_squared())
        .fold(0.0_f64, f64::max);
    let rho = 1e-10 * kmax.max(1e-300);
    // Stage I's solution, clipped to f ≥ 0 (a solver's −1e-15 must not make the face empty).
    let f0 = f0.map(|x| x.max(0.0));
    let lin = k.tr_mul(&ua) - &f0 * rho;
    let e0 = &e * &f0;
    // Friction rows −fr f ≥ b_fr, relaxed to what f₀ attains (feasible by construction).
    let (ineq, ineq_rhs) = if opts.variant.coulomb() {
        let a = -friction_rows(problem);
        let b = (&a * &f0).map(|x| x.min(0.0));
        (a, b)
    } else {
        (DMatrix::zeros(0, nz), DVector::zeros(0))
    };
    ReducedQp {
        fac: k,
        rho,
        lin,
        eq: e,
        eq_rhs: e0,
        ineq,
        ineq_rhs,
    }
}
