//! Newton's method with an exact line search on the primal regularized contact problem.

use nalgebra::DVector;

use super::hessian::{BlockScratch, HessianSolver};
use super::problem::{ConstraintKind, RegularizedContactProblem, SOLVER};
use super::projection::project;
use super::region::Region;
use crate::status::{SolveStatus, SolverError};

/// Options of [`solve`]. The defaults suit simulation time steps; see the
/// [module documentation](super#tolerances) for what each tolerance bounds.
#[derive(Debug, Clone, PartialEq)]
pub struct RegularizedContactOptions {
    /// Newton iteration limit (default 100). Zero only evaluates the starting point.
    pub max_iterations: usize,
    /// Absolute tolerance `ε_abs` on the scaled gradient norm (default 1e-14).
    pub abs_tolerance: f64,
    /// Relative tolerance `ε_rel` on the scaled gradient norm (default 1e-8).
    pub rel_tolerance: f64,
    /// Evaluation limit of one line search (default 50).
    pub max_line_search_iterations: usize,
    /// A line search stops once `|ℓ'(α)| ≤ line_search_tolerance · |ℓ'(0)|` (default 1e-10).
    pub line_search_tolerance: f64,
    /// Largest step length tried, `α_max ≥ 1` (default 1.5, as SAP).
    pub alpha_max: f64,
    /// Problems with at most this many velocities factor the Hessian densely (default 30);
    /// larger ones use the sparse Cholesky.
    pub dense_threshold: usize,
}

impl Default for RegularizedContactOptions {
    fn default() -> Self {
        Self {
            max_iterations: 100,
            abs_tolerance: 1e-14,
            rel_tolerance: 1e-8,
            max_line_search_iterations: 50,
            line_search_tolerance: 1e-10,
            alpha_max: 1.5,
            dense_threshold: 30,
        }
    }
}

impl RegularizedContactOptions {
    /// Checks every field: tolerances finite and ≥ 0 with `abs + rel > 0`,
    /// `line_search_tolerance` in (0, 1), `alpha_max` finite and ≥ 1, at least one line
    /// search evaluation.
    pub fn validate(&self) -> Result<(), SolverError> {
        let bad = |reason: &str| SolverError::InvalidInput {
            solver: SOLVER,
            reason: format!("option {reason}"),
        };
        for (x, name) in [
            (self.abs_tolerance, "abs_tolerance"),
            (self.rel_tolerance, "rel_tolerance"),
        ] {
            if !(x.is_finite() && x >= 0.0) {
                return Err(bad(&format!("{name} = {x} must be finite and >= 0")));
            }
        }
        if self.abs_tolerance + self.rel_tolerance <= 0.0 {
            return Err(bad("abs_tolerance + rel_tolerance must be positive"));
        }
        let lt = self.line_search_tolerance;
        if !(lt > 0.0 && lt < 1.0) {
            return Err(bad(&format!(
                "line_search_tolerance = {lt} must be in (0, 1)"
            )));
        }
        if !(self.alpha_max.is_finite() && self.alpha_max >= 1.0) {
            return Err(bad(&format!(
                "alpha_max = {} must be finite and >= 1",
                self.alpha_max
            )));
        }
        if self.max_line_search_iterations == 0 {
            return Err(bad("max_line_search_iterations must be at least 1"));
        }
        Ok(())
    }
}

/// Result of [`solve`].
#[derive(Debug, Clone, PartialEq)]
pub struct RegularizedContactSolution {
    /// Generalized velocity `v`.
    pub v: DVector<f64>,
    /// Stacked impulses `γ = P_F(−R⁻¹(J v − v̂))` in constraint order (see
    /// [`impulse`](Self::impulse)); each lies in its set `F` by construction.
    pub gamma: DVector<f64>,
    /// Stacked constraint velocities `J v`.
    pub constraint_velocity: DVector<f64>,
    /// `Solved` when the gradient test passed; `MaxIterations` at the iteration limit;
    /// `AlmostSolved` when the iterates stalled at rounding level above the tolerance.
    pub status: SolveStatus,
    /// Newton iterations taken (0 when the starting point already passed the test).
    pub iterations: usize,
    /// Evaluations of `ℓ'(α)` over all line searches.
    pub line_search_iterations: usize,
    /// Scaled gradient norm `‖D ∇ℓ(v)‖₂` at the returned `v`.
    pub gradient_norm: f64,
    /// The threshold it was compared with, `ε_abs + ε_rel · max(‖D A v‖₂, ‖D Jᵀγ‖₂)`.
    pub tolerance: f64,
    /// Cost `ℓ(v)`.
    pub cost: f64,
    /// Largest violation of a set constraint by `γ`: `max(0, −γ)` for unilateral rows,
    /// `max(0, ‖γ_t‖ − μ γ_n, −γ_n)` for friction cones, `max(0, ‖γ‖ − radius)` for
    /// bounded friction; 0 up to rounding.
    pub cone_violation: f64,
    row_offsets: Vec<usize>,
}

impl RegularizedContactSolution {
    /// True when the gradient test passed (`status == Solved`).
    pub fn converged(&self) -> bool {
        self.status == SolveStatus::Solved
    }

    /// Impulse of constraint `c` (its rows of `gamma`; empty if `c` is out of range).
    pub fn impulse(&self, c: usize) -> &[f64] {
        match (self.row_offsets.get(c), self.row_offsets.get(c + 1)) {
            (Some(&a), Some(&b)) => &self.gamma.as_slice()[a..b],
            _ => &[],
        }
    }

    /// Number of constraints.
    pub fn num_constraints(&self) -> usize {
        self.row_offsets.len().saturating_sub(1)
    }
}

/// State at one point `v`: constraint velocities, impulses, `G` blocks, gradient.
pub(super) struct Eval {
    pub(super) vc: Vec<f64>,
    pub(super) gamma: Vec<f64>,
    pub(super) g: Vec<f64>,
    pub(super) active: Vec<bool>,
    /// `A (v − v*)`.
    pub(super) ae: Vec<f64>,
    /// `Jᵀ γ`.
    pub(super) jtg: Vec<f64>,
    pub(super) grad: Vec<f64>,
}

/// Buffers of one solve, allocated once and reused by every Newton iteration.
pub(super) struct Workspace {
    /// Evaluation at the current iterate.
    pub(super) ev: Eval,
    /// Offsets of each constraint's `G` block in `ev.g`.
    pub(super) g_off: Vec<usize>,
    /// Gradient scaling `D = diag(A)^{-1/2}`.
    pub(super) dscale: Vec<f64>,
    /// `A v*`.
    pub(super) av_star: Vec<f64>,
    /// `v − v*`.
    pub(super) e: Vec<f64>,
    /// Newton direction `Δv`.
    pub(super) dv: Vec<f64>,
    /// `A Δv`.
    pub(super) adv: Vec<f64>,
    /// `J Δv`.
    pub(super) dvc: Vec<f64>,
    /// One constraint's unprojected impulse `−R⁻¹(J v − v̂)`.
    pub(super) y: [f64; 3],
    /// One constraint's projected impulse during the line search.
    pub(super) gam: [f64; 3],
    /// One constraint's `G` block during the line search.
    pub(super) gblk: [f64; 9],
}

impl Workspace {
    /// Buffers sized for `p`.
    pub(super) fn new(p: &RegularizedContactProblem) -> Self {
        let n = p.n;
        let m = p.m_rows;
        let dscale: Vec<f64> = p.diag.iter().map(|d| 1.0 / d.sqrt()).collect();
        let mut av_star = vec![0.0; n];
        p.a.mul_into(p.v_star.as_slice(), &mut av_star);

        let mut g_off = Vec::with_capacity(p.cons.len());
        let mut g_len = 0;
        for c in &p.cons {
            g_off.push(g_len);
            g_len += c.rows * c.rows;
        }
        let ev = Eval {
            vc: vec![0.0; m],
            gamma: vec![0.0; m],
            g: vec![0.0; g_len],
            active: vec![false; p.cons.len()],
            ae: vec![0.0; n],
            jtg: vec![0.0; n],
            grad: vec![0.0; n],
        };
        Self {
            ev,
            g_off,
            dscale,
            av_star,
            e: vec![0.0; n],
            dv: vec![0.0; n],
            adv: vec![0.0; n],
            dvc: vec![0.0; m],
            y: [0.0; 3],
            gam: [0.0; 3],
            gblk: [0.0; 9],
        }
    }
}

/// Solves the regularized contact problem by Newton's method with exact line search,
/// starting from `warm_start` (default `v*`).
///
/// Errors: options out of range or a warm start of the wrong length / not finite
/// ([`SolverError::InvalidInput`], [`SolverError::DimensionMismatch`],
/// [`SolverError::NonFinite`]); a failed Hessian factorization, which means `A` is not
/// positive definite ([`SolverError::Failed`]); a constraint of a Coulomb kind, whose
/// impulse map is no gradient ([`SolverError::InvalidInput`]: solve it with
/// [`solve_semismooth`](super::solve_semismooth)). Running out of iterations is not an
/// error: the solution's `status` says it.
pub fn solve(
    problem: &RegularizedContactProblem,
    warm_start: Option<&DVector<f64>>,
    options: &RegularizedContactOptions,
) -> Result<RegularizedContactSolution, SolverError> {
    options.validate()?;
    if let Some(c) = problem.cons.iter().position(|c| !c.kind.is_convex()) {
        return Err(SolverError::InvalidInput {
            solver: SOLVER,
            reason: format!(
                "constraint {c} is of a Coulomb kind, which is no convex program: \
                 use solve_semismooth"
            ),
        });
    }
    let p = problem;
    let mut v = starting_point(p, warm_start)?;
    let mut ws = Workspace::new(p);
    let mut hess = HessianSolver::new(p, options.dense_threshold)?;
    let mut scratch = BlockScratch::default();

    let mut iterations = 0;
    let mut ls_total = 0;
    let mut stalled = false;
    let (status, gnorm, tol) = loop {
        let (gnorm, tol) = evaluate(p, &v, &mut ws, options);
        if gnorm <= tol {
            break (SolveStatus::Solved, gnorm, tol);
        }
        if iterations >= options.max_iterations {
            break (SolveStatus::MaxIterations, gnorm, tol);
        }
        if stalled {
            break (SolveStatus::AlmostSolved, gnorm, tol);
        }

        hess.factor(p, &ws.ev.g, &ws.g_off, &ws.ev.active, &mut scratch)?;
        let d0 = newton_direction(&mut hess, &mut ws)?;
        if d0.is_nan() || d0 >= 0.0 {
            // No descent left at rounding level (or a non-finite direction).
            break (SolveStatus::AlmostSolved, gnorm, tol);
        }

        let alpha = line_search(p, &mut ws, d0, options, &mut ls_total);
        iterations += 1;
        stalled = take_step(&mut v, &ws.dv, alpha);
    };

    Ok(solution(
        p,
        v,
        ws,
        status,
        (iterations, ls_total),
        (gnorm, tol),
    ))
}

/// `v += α Δv`; whether the step was at the rounding level of `v` (the iteration stalls).
pub(super) fn take_step(v: &mut [f64], dv: &[f64], alpha: f64) -> bool {
    let mut step = 0f64;
    let mut vmax = 0f64;
    for (x, d) in v.iter_mut().zip(dv) {
        *x += alpha * d;
        step = step.max((alpha * d).abs());
        vmax = vmax.max(x.abs());
    }
    step <= 4.0 * f64::EPSILON * vmax
}

/// The solution at `v` from the workspace's evaluation there: `counts` are the Newton
/// iterations and line search evaluations, `test` the scaled residual norm and its
/// threshold.
pub(super) fn solution(
    p: &RegularizedContactProblem,
    v: Vec<f64>,
    ws: Workspace,
    status: SolveStatus,
    counts: (usize, usize),
    test: (f64, f64),
) -> RegularizedContactSolution {
    let (cost, violation) = cost_and_violation(p, &ws);
    let mut row_offsets = Vec::with_capacity(p.cons.len() + 1);
    row_offsets.extend(p.cons.iter().map(|c| c.row));
    row_offsets.push(p.m_rows);
    RegularizedContactSolution {
        v: DVector::from_vec(v),
        gamma: DVector::from_vec(ws.ev.gamma),
        constraint_velocity: DVector::from_vec(ws.ev.vc),
        status,
        iterations: counts.0,
        line_search_iterations: counts.1,
        gradient_norm: test.0,
        tolerance: test.1,
        cost,
        cone_violation: violation,
        row_offsets,
    }
}

/// The first iterate: the checked warm start, or `v*`.
pub(super) fn starting_point(
    p: &RegularizedContactProblem,
    warm_start: Option<&DVector<f64>>,
) -> Result<Vec<f64>, SolverError> {
    Ok(match warm_start {
        Some(w) => {
            p.check_len(w, "warm start")?;
            if w.iter().any(|x| !x.is_finite()) {
                return Err(SolverError::NonFinite {
                    solver: SOLVER,
                    what: "warm start",
                });
            }
            w.as_slice().to_vec()
        }
        None => p.v_star.as_slice().to_vec(),
    })
}

/// Evaluates impulses, `G` blocks and gradient at `v` into `ws.ev`; returns the scaled
/// gradient norm and the convergence threshold it is compared with.
pub(super) fn evaluate(
    p: &RegularizedContactProblem,
    v: &[f64],
    ws: &mut Workspace,
    options: &RegularizedContactOptions,
) -> (f64, f64) {
    let n = p.n;
    let ev = &mut ws.ev;
    let y = &mut ws.y;
    for i in 0..n {
        ws.e[i] = v[i] - p.v_star[i];
    }
    p.a.mul_into(&ws.e, &mut ev.ae);
    ev.jtg.fill(0.0);
    for (ci, c) in p.cons.iter().enumerate() {
        let rr = c.row..c.row + c.rows;
        c.apply(v, &mut ev.vc[rr.clone()]);
        for (k, i) in rr.clone().enumerate() {
            y[k] = -(ev.vc[i] - p.v_hat[i]) / p.r[i];
        }
        let go = ws.g_off[ci];
        let region = project(
            c.kind,
            &y[..c.rows],
            &p.r[rr.clone()],
            &mut ev.gamma[rr.clone()],
            Some(&mut ev.g[go..go + c.rows * c.rows]),
        );
        ev.active[ci] = region != Region::Separated;
        c.apply_transpose_add(&ev.gamma[rr], &mut ev.jtg);
    }
    let dscale = &ws.dscale;
    let mut gn2 = 0.0;
    let mut pv2 = 0.0;
    let mut jg2 = 0.0;
    for i in 0..n {
        ev.grad[i] = ev.ae[i] - ev.jtg[i];
        gn2 += (dscale[i] * ev.grad[i]).powi(2);
        pv2 += (dscale[i] * (ev.ae[i] + ws.av_star[i])).powi(2);
        jg2 += (dscale[i] * ev.jtg[i]).powi(2);
    }
    let gnorm = gn2.sqrt();
    let tol = options.abs_tolerance + options.rel_tolerance * pv2.sqrt().max(jg2.sqrt());
    (gnorm, tol)
}

/// Solves `H Δv = −∇ℓ` with the factored Hessian into `ws.dv`; returns the directional
/// derivative `ℓ'(0) = Δvᵀ ∇ℓ`.
fn newton_direction(hess: &mut HessianSolver, ws: &mut Workspace) -> Result<f64, SolverError> {
    for (d, g) in ws.dv.iter_mut().zip(&ws.ev.grad) {
        *d = -g;
    }
    hess.solve(&mut ws.dv)?;
    Ok(ws.dv.iter().zip(&ws.ev.grad).map(|(a, b)| a * b).sum())
}

/// Exact line search on `ℓ(v + α Δv)`: `α_max` when `ℓ'` is still negative there,
/// otherwise safeguarded Newton on `ℓ'(α) = 0` within the bracket. Counts every
/// evaluation of `ℓ'` in `ls_total`. With constraints of the Coulomb kinds there is no
/// `ℓ`: the same search finds a zero of the residual along the direction,
/// `φ(α) = Δvᵀ F(v + αΔv)`, `φ'(α) = Δvᵀ H(v + αΔv) Δv` (`semismooth.rs`).
pub(super) fn line_search(
    p: &RegularizedContactProblem,
    ws: &mut Workspace,
    d0: f64,
    options: &RegularizedContactOptions,
    ls_total: &mut usize,
) -> f64 {
    p.a.mul_into(&ws.dv, &mut ws.adv);
    let qa: f64 = ws.dv.iter().zip(&ws.adv).map(|(a, b)| a * b).sum();
    let qb: f64 = ws.dv.iter().zip(&ws.ev.ae).map(|(a, b)| a * b).sum();
    let mut touched = Vec::new();
    for (ci, c) in p.cons.iter().enumerate() {
        let rr = c.row..c.row + c.rows;
        c.apply(&ws.dv, &mut ws.dvc[rr.clone()]);
        if ws.dvc[rr].iter().any(|&x| x != 0.0) {
            touched.push(ci);
        }
    }
    let mut deriv = |alpha: f64| line_derivatives(p, ws, &touched, (qa, qb), alpha);
    let amax = options.alpha_max;
    let (dmax, _) = deriv(amax);
    *ls_total += 1;
    if dmax <= 0.0 {
        return amax;
    }
    let target = options.line_search_tolerance * d0.abs();
    let (mut lo, mut hi) = (0.0, amax);
    let mut alpha = 1.0;
    let mut out = alpha;
    for _ in 0..options.max_line_search_iterations {
        let (d1, d2) = deriv(alpha);
        *ls_total += 1;
        out = alpha;
        if d1.abs() <= target {
            break;
        }
        if d1 < 0.0 {
            lo = alpha;
        } else {
            hi = alpha;
        }
        if hi - lo <= 1e-14 * hi {
            break;
        }
        let newton = alpha - d1 / d2;
        alpha = if d2 > 0.0 && newton > lo && newton < hi {
            newton
        } else {
            0.5 * (lo + hi)
        };
    }
    out
}

/// `ℓ'(α)` and `ℓ''(α)` along `Δv`, from the quadratic part `qb + α qa` and the
/// constraints whose velocity `Δv` changes (`touched`).
fn line_derivatives(
    p: &RegularizedContactProblem,
    ws: &mut Workspace,
    touched: &[usize],
    (qa, qb): (f64, f64),
    alpha: f64,
) -> (f64, f64) {
    let (vc, dvc) = (&ws.ev.vc, &ws.dvc);
    let (y, gam, gblk) = (&mut ws.y, &mut ws.gam, &mut ws.gblk);
    let mut d1 = qb + alpha * qa;
    let mut d2 = qa;
    for &ci in touched {
        let c = &p.cons[ci];
        let k = c.rows;
        for t in 0..k {
            let i = c.row + t;
            y[t] = -(vc[i] + alpha * dvc[i] - p.v_hat[i]) / p.r[i];
        }
        project(
            c.kind,
            &y[..k],
            &p.r[c.row..c.row + k],
            &mut gam[..k],
            Some(&mut gblk[..k * k]),
        );
        let dc = &dvc[c.row..c.row + k];
        for a in 0..k {
            d1 -= dc[a] * gam[a];
            for b in 0..k {
                d2 += dc[a] * gblk[a * k + b] * dc[b];
            }
        }
    }
    (d1, d2)
}

/// Cost `ℓ(v)` and largest set violation of `γ` at the last evaluated point.
fn cost_and_violation(p: &RegularizedContactProblem, ws: &Workspace) -> (f64, f64) {
    let mut cost = 0.0;
    for i in 0..p.n {
        cost += 0.5 * ws.e[i] * ws.ev.ae[i];
    }
    let mut violation = 0f64;
    for c in &p.cons {
        let g = &ws.ev.gamma[c.row..c.row + c.rows];
        for (t, gi) in g.iter().enumerate() {
            cost += 0.5 * p.r[c.row + t] * gi * gi;
        }
        let viol = match c.kind {
            ConstraintKind::Bilateral => 0.0,
            ConstraintKind::Unilateral => (-g[0]).max(0.0),
            ConstraintKind::Cone { mu }
            | ConstraintKind::Planar { mu }
            | ConstraintKind::Coulomb { mu }
            | ConstraintKind::PlanarCoulomb { mu } => {
                let nt = c.rows - 1;
                let gt = g[..nt].iter().map(|x| x * x).sum::<f64>().sqrt();
                (gt - mu * g[nt]).max(-g[nt]).max(0.0)
            }
            ConstraintKind::Disk { radius } | ConstraintKind::Interval { radius } => {
                let gt = g.iter().map(|x| x * x).sum::<f64>().sqrt();
                (gt - radius).max(0.0)
            }
        };
        violation = violation.max(viol);
    }
    (cost, violation)
}
