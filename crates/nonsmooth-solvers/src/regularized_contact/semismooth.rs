//! The semismooth Newton method on the step's equations, for problems with constraints of
//! the Coulomb kinds (whose impulse map is no gradient, so the convex program of
//! [`solve`](super::solve) does not exist).
//!
//! Equations (the momentum balance with the impulse maps, Castro et al. 2022 §IV; with the
//! Coulomb map the mixed formulation of Alart and Curnier 1991, eq. 3.10 in the velocity):
//!
//! ```text
//! F(v) = A (v − v*) − Jᵀ γ(v) = 0,   γ_c(v) = Γ_c(−R_c⁻¹ (J_c v − v̂_c)),
//! ```
//!
//! `F` is piecewise smooth (strongly semismooth). Newton's method uses the element
//! `H = A + Jᵀ G J` of its generalized Jacobian, `G_c = (∂Γ_c/∂y) R_c⁻¹`, not symmetric on
//! a sliding Coulomb contact (`coulomb.rs`), factored by LU (`jacobian.rs`); where the
//! direction `Δv = −H⁻¹F` does not satisfy `Δvᵀ F < 0` (possible with a non-symmetric
//! `H`), the direction of the Tresca problem whose bounds are frozen at the iterate's
//! `μγ_n` (drop `∂γ_t/∂y_n`: `H` symmetric positive definite) is used instead.
//!
//! Step length: the exact line search of [`solve`](super::solve) (Castro et al. 2022,
//! SAP §V-C) applied to `φ(α) = Δvᵀ F(v + αΔv)`, `α_max` when `φ(α_max) ≤ 0`, else a zero
//! of `φ` by Newton's method on `φ` safeguarded by bisection. For the convex kinds
//! `φ = ℓ'` and the solve is SAP's; near a solution `F(v + Δv) = o(‖Δv‖)`, so `φ(1) ≈ 0`
//! and the full step (quadratic convergence) is kept. Armijo backtracking on the merit
//! `½‖D F‖²` (J. Nocedal and S. Wright, "Numerical Optimization", 2006, §11.5) was tried
//! first and rejected: where a Newton direction, computed with a stiff row inactive,
//! drives that row into contact, `‖F‖` grows past the row's kink at once, the merit
//! accepts only steps that stop before the kink, the row stays inactive and the
//! iteration stalls (measured on random 1–3 body problems with `R_n = 10⁻⁶`: steps of
//! 10⁻⁹ after 30 iterations); `φ` has its zero past the kink, where the row carries the
//! force that balances. There is no merit function: the iteration limit bounds a run
//! that does not converge.
//!
//! A point is accepted at the test of [`solve`](super::solve):
//! `‖D F(v)‖ ≤ ε_abs + ε_rel · max(‖D A v‖, ‖D Jᵀγ‖)`, `D = diag(A)^{-1/2}`. The
//! method can stop short: a singular `H` with no descent direction of the frozen
//! problem either, or steps at the rounding level of `v` (`AlmostSolved`), or the
//! iteration limit (`MaxIterations`). Without a merit function the residual is not
//! monotone; stopping a run after 10 or 25 iterations without a new smallest residual
//! was measured to cost more than it saves (toppling 100-sphere stack, 200 steps: 16 and
//! 9 fallbacks instead of 3, 22 and 20 instead of 16 iterations per step); the caller decides (the `drumwright` stepper falls
//! back to its fixed point on the friction bounds).

use nalgebra::DVector;

use super::hessian::BlockScratch;
use super::jacobian::{JacobianSolver, SemismoothWorkspace};
use super::problem::RegularizedContactProblem;
use super::solve::{evaluate, line_search, solution, starting_point, take_step, Workspace};
use super::{RegularizedContactOptions, RegularizedContactSolution};
use crate::status::{SolveStatus, SolverError};

/// Solves `F(v) = 0` by the semismooth Newton method (see the module documentation),
/// starting from the candidate of `starts` with the smallest residual (`v*` when
/// `starts` is empty). Any constraint kinds may be mixed; without Coulomb kinds the
/// equations are the optimality conditions of the convex program and the solution is
/// that of [`solve`](super::solve) (to the tolerance). `workspace` keeps the sparse LU
/// analysis for the next solve of a problem with the same pattern.
///
/// Errors: options out of range or a start of the wrong length / not finite
/// ([`SolverError::InvalidInput`], [`SolverError::DimensionMismatch`],
/// [`SolverError::NonFinite`]); a failed symbolic analysis ([`SolverError::Failed`]).
/// Running out of iterations (`MaxIterations`) or stopping without a descent direction or
/// at rounding level (`AlmostSolved`) is not an error: the solution's `status` says it;
/// `line_search_iterations` counts the evaluations of `φ`.
pub fn solve_semismooth(
    problem: &RegularizedContactProblem,
    starts: &[&DVector<f64>],
    options: &RegularizedContactOptions,
    workspace: &mut SemismoothWorkspace,
) -> Result<RegularizedContactSolution, SolverError> {
    options.validate()?;
    let p = problem;
    let mut ws = Workspace::new(p);
    let mut v = starting_point(p, None)?;
    if !starts.is_empty() {
        let mut best = f64::INFINITY;
        for s in starts {
            let x = starting_point(p, Some(s))?;
            let (g, _) = evaluate(p, &x, &mut ws, options);
            if g < best {
                best = g;
                v = x;
            }
        }
    }
    let (mut gnorm, mut tol) = evaluate(p, &v, &mut ws, options);
    let mut jac = JacobianSolver::new(p, options.dense_threshold, workspace)?;
    let mut scratch = BlockScratch::default();
    let mut g_sym = Vec::new();
    let mut iterations = 0;
    let mut evaluations = 0;
    let status = loop {
        if gnorm <= tol {
            break SolveStatus::Solved;
        }
        if iterations >= options.max_iterations {
            break SolveStatus::MaxIterations;
        }
        // The semismooth Newton direction; where it does not point down the residual
        // (Δvᵀ F ≥ 0, possible with a non-symmetric H), that of the Tresca problem with
        // the bounds frozen at this iterate (H symmetric positive definite).
        let mut slope = f64::NAN;
        if direction(p, &mut jac, &mut ws, None, &mut scratch)? {
            slope = ws.dv.iter().zip(&ws.ev.grad).map(|(a, b)| a * b).sum();
        }
        if slope.is_nan() || slope >= 0.0 {
            uncoupled(p, &ws, &mut g_sym);
            if direction(p, &mut jac, &mut ws, Some(&g_sym), &mut scratch)? {
                slope = ws.dv.iter().zip(&ws.ev.grad).map(|(a, b)| a * b).sum();
            }
            if slope.is_nan() || slope >= 0.0 {
                break SolveStatus::AlmostSolved;
            }
        }
        let alpha = line_search(p, &mut ws, slope, options, &mut evaluations);
        let stalled = take_step(&mut v, &ws.dv, alpha);
        (gnorm, tol) = evaluate(p, &v, &mut ws, options);
        iterations += 1;
        if stalled && gnorm > tol {
            break SolveStatus::AlmostSolved;
        }
    };
    Ok(solution(
        p,
        v,
        ws,
        status,
        (iterations, evaluations),
        (gnorm, tol),
    ))
}

/// Factors `H = A + Jᵀ G J` for the blocks `g` (default: the workspace's) and solves `H Δv = −F` into `ws.dv`;
/// `false` when `H` is singular or `Δv` not finite.
fn direction(
    p: &RegularizedContactProblem,
    jac: &mut JacobianSolver<'_>,
    ws: &mut Workspace,
    g: Option<&[f64]>,
    scratch: &mut BlockScratch,
) -> Result<bool, SolverError> {
    if !jac.factor(p, g.unwrap_or(&ws.ev.g), &ws.g_off, &ws.ev.active, scratch) {
        return Ok(false);
    }
    for (d, f) in ws.dv.iter_mut().zip(&ws.ev.grad) {
        *d = -f;
    }
    jac.solve(&mut ws.dv)?;
    Ok(ws.dv.iter().all(|x| x.is_finite()))
}

/// The `G` blocks of the workspace's evaluation without the coupling `∂γ_t/∂y_n` of the
/// sliding Coulomb constraints: the Hessian blocks of the Tresca problem with frozen
/// bounds (symmetric positive semidefinite).
fn uncoupled(p: &RegularizedContactProblem, ws: &Workspace, g: &mut Vec<f64>) {
    g.clear();
    g.extend_from_slice(&ws.ev.g);
    for (ci, c) in p.cons.iter().enumerate() {
        if !c.kind.is_convex() {
            let (k, o) = (c.rows, ws.g_off[ci]);
            for i in 0..k - 1 {
                g[o + i * k + k - 1] = 0.0;
            }
        }
    }
}
