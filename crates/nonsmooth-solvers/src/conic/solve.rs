//! The Clarabel call, status mapping and independent residual measurement.
//!
//! Clarabel (Goulart & Chen 2024) is a primal–dual interior-point method on the homogeneous
//! self-dual embedding; its returned triple `(x, s, z)` satisfies, at a solution,
//!
//! ```text
//! A x + s = b,   P x + q + Aᵀ z = 0,   s ∈ K,   z ∈ K*,   sᵀ z = 0.
//! ```
//!
//! [`ConicSolution::residuals`] is measured here from the returned `(x, s, z)` and the
//! original (unscaled) data, not copied from Clarabel's internal, equilibrated values.

use std::time::Duration;

use clarabel::solver::{DefaultSettings, DefaultSolver, IPSolver, SolverStatus};
use nalgebra::DVector;

use super::problem::{check_finite, check_len, Cone, ConicProblem, SOLVER};
use crate::status::{Residuals, SolveStatus, SolverError};

/// Solver options. Defaults follow Clarabel's (tolerances 1e-8, 200 iterations), with
/// printing off.
#[derive(Debug, Clone, PartialEq)]
pub struct ConicOptions {
    /// Absolute duality-gap tolerance (Clarabel `tol_gap_abs`).
    pub eps_abs: f64,
    /// Relative duality-gap and relative feasibility tolerance (Clarabel `tol_gap_rel` and
    /// `tol_feas`).
    pub eps_rel: f64,
    /// Infeasibility-certificate tolerance (Clarabel `tol_infeas_abs` and `tol_infeas_rel`).
    pub eps_infeas: f64,
    /// Iteration limit.
    pub max_iter: u32,
    /// Wall-clock limit; `None` for none.
    pub time_limit: Option<Duration>,
    /// Print Clarabel's iteration log to stdout.
    pub verbose: bool,
    /// Let Clarabel drop constraint rows with infinite (≥ 1e20) right-hand sides. Ignored
    /// (forced off) by [`ConicSolver`], whose data updates need the original structure.
    pub presolve: bool,
    /// A run stopped by the iteration or time limit is returned as
    /// [`SolveStatus::MaxIterations`] when every measured residual is at most
    /// `usable_residual · (1 + max(‖q‖∞, ‖b‖∞))`; otherwise it is an error.
    pub usable_residual: f64,
    /// Clarabel's iterative refinement of every KKT solve (`iterative_refinement_enable`);
    /// default on. Off saves about a quarter of a solve on well-conditioned problems, at
    /// the price of accuracy on ill-conditioned ones: check the residuals of the result.
    pub iterative_refinement: bool,
}

impl Default for ConicOptions {
    fn default() -> Self {
        Self {
            eps_abs: 1e-8,
            eps_rel: 1e-8,
            eps_infeas: 1e-8,
            max_iter: 200,
            time_limit: None,
            verbose: false,
            presolve: true,
            usable_residual: 1e-6,
            iterative_refinement: true,
        }
    }
}

impl ConicOptions {
    fn validate(&self) -> Result<(), SolverError> {
        let bad = |what: &str| SolverError::InvalidInput {
            solver: SOLVER,
            reason: format!("option {what} must be positive and finite"),
        };
        for (v, name) in [
            (self.eps_abs, "eps_abs"),
            (self.eps_rel, "eps_rel"),
            (self.eps_infeas, "eps_infeas"),
            (self.usable_residual, "usable_residual"),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(bad(name));
            }
        }
        if self.max_iter == 0 {
            return Err(bad("max_iter"));
        }
        Ok(())
    }

    fn settings(&self, updatable: bool) -> DefaultSettings<f64> {
        #[cfg_attr(not(feature = "sdp"), allow(unused_mut))]
        let mut s = DefaultSettings::<f64> {
            max_iter: self.max_iter,
            time_limit: self.time_limit.map_or(f64::INFINITY, |d| d.as_secs_f64()),
            verbose: self.verbose,
            tol_gap_abs: self.eps_abs,
            tol_gap_rel: self.eps_rel,
            tol_feas: self.eps_rel,
            tol_infeas_abs: self.eps_infeas,
            tol_infeas_rel: self.eps_infeas,
            presolve_enable: self.presolve && !updatable,
            input_sparse_dropzeros: false,
            iterative_refinement_enable: self.iterative_refinement,
            ..DefaultSettings::default()
        };
        #[cfg(feature = "sdp")]
        if updatable {
            s.chordal_decomposition_enable = false;
        }
        s
    }
}

/// Result of a successful conic solve.
#[derive(Debug, Clone, PartialEq)]
pub struct ConicSolution {
    /// Primal variables (length `n`).
    pub x: DVector<f64>,
    /// Primal slacks `s = b − A x ∈ K` (length `m`).
    pub s: DVector<f64>,
    /// Dual variables `z ∈ K*` of the rows `A x + s = b` (length `m`); the Lagrangian is
    /// `½xᵀPx + qᵀx + zᵀ(A x − b)`, so an active inequality `gᵀx ≤ h` has `z ≥ 0`.
    pub z: DVector<f64>,
    /// Primal objective `½xᵀPx + qᵀx`, evaluated at the returned `x`.
    pub objective: f64,
    /// How the solve ended.
    pub status: SolveStatus,
    /// Measured residuals (max-norms): `primal = max(‖A x + s − b‖∞, dist(s, K))`,
    /// `dual = max(‖P x + q + Aᵀz‖∞, dist(z, K*))`, `complementarity = |xᵀPx + qᵀx + bᵀz|`
    /// (the primal–dual objective gap). Cone distances: `|s|` for the zero cone, the
    /// negative part for ℝ₊, the max-norm distance to the projection for second-order cones,
    /// and the most negative eigenvalue for PSD cones.
    pub residuals: Residuals,
    /// Interior-point iterations.
    pub iterations: u32,
    /// Clarabel's reported solve time.
    pub solve_time: Duration,
}

impl ConicProblem {
    /// Solves once (Clarabel setup, factorisation and interior-point iterations).
    ///
    /// Errors: [`SolverError::PrimalInfeasible`] / [`SolverError::DualInfeasible`] (also for
    /// Clarabel's reduced-accuracy "almost" variants) with the certificate's figures in
    /// `detail`; [`SolverError::NoSolution`] for an iteration/time limit with unusable
    /// iterate; [`SolverError::Failed`] for numerical failure; [`SolverError::InvalidInput`]
    /// for bad options.
    pub fn solve(&self, options: &ConicOptions) -> Result<ConicSolution, SolverError> {
        options.validate()?;
        let mut inner = new_inner(self, options.settings(false))?;
        run(&mut inner, self, options)
    }
}

/// The PSD cones' dense eigendecompositions go through the system OpenBLAS, whose worker
/// threads busy-wait: on the small SDPs of this project one thread is faster (sos-fig2's
/// quick grid: 9 s with one thread, 43 s with OpenBLAS's default on a loaded 2-core machine),
/// and several solves in parallel (rayon) would oversubscribe the cores. Set once, before the
/// first SDP solve, unless the user chose a count with `OPENBLAS_NUM_THREADS`.
#[cfg(feature = "sdp")]
fn single_threaded_blas() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if std::env::var_os("OPENBLAS_NUM_THREADS").is_none() {
            extern "C" {
                fn openblas_set_num_threads(n: std::ffi::c_int);
            }
            // SAFETY: OpenBLAS's documented setter; it only stores the count for later calls.
            unsafe { openblas_set_num_threads(1) };
        }
    });
}

fn new_inner(
    problem: &ConicProblem,
    settings: DefaultSettings<f64>,
) -> Result<DefaultSolver<f64>, SolverError> {
    #[cfg(feature = "sdp")]
    single_threaded_blas();
    let cones: Vec<_> = problem
        .cones
        .iter()
        .filter(|c| c.dim() > 0)
        .map(|c| c.to_clarabel())
        .collect();
    DefaultSolver::new(
        &problem.p.inner,
        &problem.q,
        &problem.a.inner,
        &problem.b,
        &cones,
        settings,
    )
    .map_err(|e| SolverError::InvalidInput {
        solver: SOLVER,
        reason: e.to_string(),
    })
}

fn run(
    inner: &mut DefaultSolver<f64>,
    problem: &ConicProblem,
    options: &ConicOptions,
) -> Result<ConicSolution, SolverError> {
    inner.solve();
    let sol = &inner.solution;
    let (x, s, z) = (&sol.x, &sol.s, &sol.z);
    let status = match sol.status {
        SolverStatus::Solved => SolveStatus::Solved,
        SolverStatus::AlmostSolved => SolveStatus::AlmostSolved,
        SolverStatus::PrimalInfeasible | SolverStatus::AlmostPrimalInfeasible => {
            // Certificate: Aᵀz = 0, bᵀz < 0, z ∈ K* (Farkas; Boyd & Vandenberghe §5.8).
            let mut atz = vec![0.0; problem.num_vars()];
            problem.a.gemv_t_add(z, &mut atz);
            let almost = if sol.status == SolverStatus::AlmostPrimalInfeasible {
                " (reduced accuracy)"
            } else {
                ""
            };
            return Err(SolverError::PrimalInfeasible {
                solver: SOLVER,
                detail: format!(
                    "{almost}: certificate z with ‖z‖∞ = {:.3e}, bᵀz = {:.3e}, ‖Aᵀz‖∞ = {:.3e}",
                    amax(z),
                    dot(&problem.b, z),
                    amax(&atz)
                ),
            });
        }
        SolverStatus::DualInfeasible | SolverStatus::AlmostDualInfeasible => {
            // Certificate: P x = 0, A x ∈ −K, qᵀx < 0 (an unbounded direction).
            let mut px = vec![0.0; problem.num_vars()];
            problem.p.symv_upper_add(x, &mut px);
            let almost = if sol.status == SolverStatus::AlmostDualInfeasible {
                " (reduced accuracy)"
            } else {
                ""
            };
            return Err(SolverError::DualInfeasible {
                solver: SOLVER,
                detail: format!(
                    "{almost}: certificate direction x with ‖x‖∞ = {:.3e}, qᵀx = {:.3e}, ‖P x‖∞ = {:.3e}",
                    amax(x),
                    dot(&problem.q, x),
                    amax(&px)
                ),
            });
        }
        SolverStatus::MaxIterations | SolverStatus::MaxTime => SolveStatus::MaxIterations,
        other => {
            return Err(SolverError::Failed {
                solver: SOLVER,
                reason: format!(
                    "Clarabel stopped with status {other:?} after {} iterations",
                    sol.iterations
                ),
            })
        }
    };
    let residuals = residuals_unchecked(problem, x, s, z);
    if status == SolveStatus::MaxIterations {
        let scale = 1.0 + amax(&problem.q).max(amax(&problem.b));
        let all_finite = x.iter().chain(s).chain(z).all(|v| v.is_finite());
        let worst = residuals.max();
        let usable = all_finite && worst.is_finite() && worst <= options.usable_residual * scale;
        if !usable {
            return Err(SolverError::NoSolution {
                solver: SOLVER,
                reason: format!(
                    "Clarabel stopped with status {:?} after {} iterations; largest residual {worst:.3e}",
                    sol.status, sol.iterations
                ),
            });
        }
    }
    Ok(ConicSolution {
        objective: problem.objective_unchecked(x),
        x: DVector::from_column_slice(x),
        s: DVector::from_column_slice(s),
        z: DVector::from_column_slice(z),
        status,
        residuals,
        iterations: sol.iterations,
        solve_time: Duration::from_secs_f64(sol.solve_time.max(0.0)),
    })
}

/// Measures the residuals described at [`ConicSolution::residuals`] for any triple
/// `(x, s, z)`; errors if a length differs from `n` (for `x`) or `m` (for `s`, `z`).
pub fn measure_residuals(
    problem: &ConicProblem,
    x: &[f64],
    s: &[f64],
    z: &[f64],
) -> Result<Residuals, SolverError> {
    check_len(problem.num_vars(), x.len(), "x")?;
    check_len(problem.num_rows(), s.len(), "s")?;
    check_len(problem.num_rows(), z.len(), "z")?;
    Ok(residuals_unchecked(problem, x, s, z))
}

fn residuals_unchecked(problem: &ConicProblem, x: &[f64], s: &[f64], z: &[f64]) -> Residuals {
    let n = problem.num_vars();
    let mut r = problem.b.iter().map(|b| -b).collect::<Vec<_>>();
    problem.a.gemv_add(x, &mut r);
    for (ri, si) in r.iter_mut().zip(s) {
        *ri += si;
    }
    let mut d = problem.q.clone();
    let mut px = vec![0.0; n];
    problem.p.symv_upper_add(x, &mut px);
    for (di, pi) in d.iter_mut().zip(&px) {
        *di += pi;
    }
    problem.a.gemv_t_add(z, &mut d);
    let mut primal = amax(&r);
    let mut dual = amax(&d);
    let mut off = 0;
    for cone in &problem.cones {
        let k = cone.dim();
        primal = primal.max(cone_distance(cone, &s[off..off + k], false));
        dual = dual.max(cone_distance(cone, &z[off..off + k], true));
        off += k;
    }
    let gap = dot(x, &px) + dot(&problem.q, x) + dot(&problem.b, z);
    Residuals {
        primal,
        dual,
        complementarity: gap.abs(),
    }
}

/// Max-norm distance of `v` from the cone (or from its dual cone when `dual`).
fn cone_distance(cone: &Cone, v: &[f64], dual: bool) -> f64 {
    match *cone {
        Cone::Zero(_) => {
            if dual {
                0.0
            } else {
                amax(v)
            }
        }
        Cone::Nonnegative(_) => v.iter().fold(0.0f64, |m, &x| m.max(-x)),
        Cone::SecondOrder(_) => {
            let p = project_soc(v);
            v.iter()
                .zip(&p)
                .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()))
        }
        #[cfg(feature = "sdp")]
        Cone::PsdTriangle(n) => {
            let m = super::svec::smat(v, n);
            let lmin = m.symmetric_eigenvalues().min();
            (-lmin).max(0.0)
        }
    }
}

/// Euclidean projection onto the second-order cone `{(t, u) : ‖u‖ ≤ t}`
/// (Boyd & Vandenberghe, *Convex Optimization*, exercise 8.3(c); Bauschke & Combettes):
/// `v` itself if inside, `0` if in the polar cone (`‖u‖ ≤ −t`), otherwise
/// `((t + ‖u‖)/2)·(1, u/‖u‖)`. An empty input is returned unchanged.
pub fn project_soc(v: &[f64]) -> Vec<f64> {
    let Some((&t, u)) = v.split_first() else {
        return Vec::new();
    };
    let nu = u.iter().map(|x| x * x).sum::<f64>().sqrt();
    if nu <= t {
        v.to_vec()
    } else if nu <= -t {
        vec![0.0; v.len()]
    } else {
        let a = 0.5 * (t + nu);
        let mut out = Vec::with_capacity(v.len());
        out.push(a);
        out.extend(u.iter().map(|x| a * x / nu));
        out
    }
}

fn amax(v: &[f64]) -> f64 {
    v.iter().fold(0.0f64, |m, x| m.max(x.abs()))
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// A Clarabel solver kept alive across solves, for problems whose numbers change but whose
/// structure (dimensions, cones, sparsity of `P` and `A`) does not — e.g. one contact QP
/// per time step. Updates overwrite Clarabel's equilibrated data in place (Clarabel's
/// `update_q`/`update_b`/`update_P`/`update_A`), skipping setup, equilibration and symbolic
/// factorisation. Clarabel 0.11 has no iterate warm start, so each solve restarts the
/// interior-point iterations.
///
/// Presolve (and, with `sdp`, chordal decomposition) is disabled for this object, as Clarabel
/// refuses data updates after either.
pub struct ConicSolver {
    inner: DefaultSolver<f64>,
    problem: ConicProblem,
    options: ConicOptions,
}

impl std::fmt::Debug for ConicSolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConicSolver")
            .field("problem", &self.problem)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl ConicSolver {
    /// Sets Clarabel up for `problem` (equilibration, KKT assembly).
    pub fn new(problem: ConicProblem, options: &ConicOptions) -> Result<Self, SolverError> {
        options.validate()?;
        let inner = new_inner(&problem, options.settings(true))?;
        Ok(Self {
            inner,
            problem,
            options: options.clone(),
        })
    }

    /// Solves with the current data.
    pub fn solve(&mut self) -> Result<ConicSolution, SolverError> {
        run(&mut self.inner, &self.problem, &self.options)
    }

    /// The current problem data.
    pub fn problem(&self) -> &ConicProblem {
        &self.problem
    }

    /// Replaces the linear cost `q` (length `n`).
    pub fn update_q(&mut self, q: &[f64]) -> Result<(), SolverError> {
        check_len(self.problem.num_vars(), q.len(), "updated q")?;
        check_finite(q, "updated q")?;
        self.problem.q.copy_from_slice(q);
        self.inner.update_q(&self.problem.q).map_err(update_err)
    }

    /// Replaces the right-hand side `b` (length `m`).
    pub fn update_b(&mut self, b: &[f64]) -> Result<(), SolverError> {
        check_len(self.problem.num_rows(), b.len(), "updated b")?;
        check_finite(b, "updated b")?;
        self.problem.b.copy_from_slice(b);
        self.inner.update_b(&self.problem.b).map_err(update_err)
    }

    /// Replaces the stored values of `P`'s upper triangle, in the order of
    /// `problem().p().nzval()` (same sparsity pattern).
    pub fn update_p_values(&mut self, values: &[f64]) -> Result<(), SolverError> {
        check_len(self.problem.p.nnz(), values.len(), "updated P values")?;
        check_finite(values, "updated P values")?;
        self.problem.p.inner.nzval.copy_from_slice(values);
        self.inner
            .update_P(&self.problem.p.inner.nzval)
            .map_err(update_err)
    }

    /// Replaces the stored values of `A`, in the order of `problem().a().nzval()` (same
    /// sparsity pattern).
    pub fn update_a_values(&mut self, values: &[f64]) -> Result<(), SolverError> {
        check_len(self.problem.a.nnz(), values.len(), "updated A values")?;
        check_finite(values, "updated A values")?;
        self.problem.a.inner.nzval.copy_from_slice(values);
        self.inner
            .update_A(&self.problem.a.inner.nzval)
            .map_err(update_err)
    }
}

fn update_err(e: impl std::fmt::Display) -> SolverError {
    SolverError::Failed {
        solver: SOLVER,
        reason: format!("data update rejected: {e}"),
    }
}
