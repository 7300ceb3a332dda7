//! The box-constrained quadratic program of control-limited DDP,
//!
//! ```text
//! minimize ½ xᵀ H x + gᵀ x   subject to   lower ≤ x ≤ upper,   H ≻ 0,
//! ```
//!
//! by the projected Newton method of Tassa, Mansard & Todorov, *Control-limited
//! differential dynamic programming* (ICRA 2014, Algorithm 3; Bertsekas 1982): at each
//! iterate the variables at a bound whose gradient pushes outward are clamped, a Newton step
//! is taken on the free ones and the step is projected onto the box with an Armijo
//! backtracking search. The result carries the Cholesky factor of `H` restricted to the free
//! variables at the solution, from which the feedback gain of the free controls follows.

use nalgebra::{Cholesky, DMatrix, DVector, Dyn};

/// Iteration cap of the projected Newton method.
const MAX_ITERATIONS: usize = 100;
/// Smallest norm of the free gradient that is still descended.
const MIN_GRADIENT: f64 = 1e-8;
/// Smallest relative improvement of the objective that continues the iteration.
const MIN_RELATIVE_IMPROVEMENT: f64 = 1e-8;
/// Armijo constant of the projected line search (Tassa et al. 2014 use 0.1).
const ARMIJO: f64 = 0.1;
/// Backtracking factor of the projected line search (Tassa et al. 2014 use 0.6).
const BACKTRACK: f64 = 0.6;
/// The smallest step of the line search.
const MIN_STEP: f64 = 1e-22;

/// The solution of a box QP.
#[derive(Debug, Clone)]
pub struct BoxQpSolution {
    /// The minimizer.
    pub x: DVector<f64>,
    /// Which variables are free (not clamped at a bound with the gradient pointing out).
    pub free: Vec<bool>,
    /// The Cholesky factor of `H` restricted to the free variables (rows and columns in
    /// index order); `None` when every variable is clamped.
    pub free_factor: Option<Cholesky<f64, Dyn>>,
}

/// Why a box QP has no solution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoxQpFailure {
    /// `H` restricted to the free variables is not positive definite.
    NotPositiveDefinite,
}

/// Solves the box QP from the starting point `x0` (projected onto the box first); `lower ≤
/// upper` entrywise (infinite bounds allowed).
///
/// # Errors
/// [`BoxQpFailure::NotPositiveDefinite`] when the Cholesky factorization of a free block of
/// `H` fails (the caller regularizes `H` and tries again).
pub fn solve_box_qp(
    h: &DMatrix<f64>,
    g: &DVector<f64>,
    lower: &DVector<f64>,
    upper: &DVector<f64>,
    x0: &DVector<f64>,
) -> Result<BoxQpSolution, BoxQpFailure> {
    let n = g.len();
    let project = |x: &DVector<f64>| {
        DVector::from_iterator(n, (0..n).map(|i| x[i].max(lower[i]).min(upper[i])))
    };
    let objective = |x: &DVector<f64>| 0.5 * x.dot(&(h * x)) + g.dot(x);
    let mut x = project(x0);
    let mut value = objective(&x);
    let mut free = vec![true; n];
    let mut factor: Option<Cholesky<f64, Dyn>> = None;
    let mut factored_set: Option<Vec<bool>> = None;
    for _ in 0..MAX_ITERATIONS {
        let gradient = g + h * &x;
        free = (0..n)
            .map(|i| {
                let at_lower = x[i] <= lower[i] && gradient[i] > 0.0;
                let at_upper = x[i] >= upper[i] && gradient[i] < 0.0;
                !(at_lower || at_upper)
            })
            .collect();
        let indices: Vec<usize> = (0..n).filter(|&i| free[i]).collect();
        if indices.is_empty() {
            factor = None;
            break;
        }
        if factored_set.as_ref() != Some(&free) {
            let block = h.select_rows(&indices).select_columns(&indices);
            factor = Some(Cholesky::new(block).ok_or(BoxQpFailure::NotPositiveDefinite)?);
            factored_set = Some(free.clone());
        }
        let gradient_free = gradient.select_rows(&indices);
        if gradient_free.norm() < MIN_GRADIENT {
            break;
        }
        let Some(chol) = factor.as_ref() else { break };
        let newton = -chol.solve(&gradient_free);
        let mut direction = DVector::zeros(n);
        for (k, &i) in indices.iter().enumerate() {
            direction[i] = newton[k];
        }
        let slope = direction.dot(&gradient);
        if slope >= 0.0 {
            break;
        }
        let mut step = 1.0;
        let accepted = loop {
            let candidate = project(&(&x + &direction * step));
            let candidate_value = objective(&candidate);
            if (candidate_value - value) / (step * slope) > ARMIJO {
                break Some((candidate, candidate_value));
            }
            step *= BACKTRACK;
            if step < MIN_STEP {
                break None;
            }
        };
        let Some((candidate, candidate_value)) = accepted else {
            break;
        };
        let improvement = value - candidate_value;
        x = candidate;
        value = candidate_value;
        if improvement < MIN_RELATIVE_IMPROVEMENT * value.abs().max(f64::MIN_POSITIVE) {
            break;
        }
    }
    // `factor` is that of the last free set computed (refactored whenever the set changed).
    Ok(BoxQpSolution {
        x,
        free,
        free_factor: factor,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interior_minimum_is_the_newton_step() {
        let h = DMatrix::from_row_slice(2, 2, &[2.0, 0.5, 0.5, 1.0]);
        let g = DVector::from_vec(vec![-1.0, 0.3]);
        let big = DVector::from_element(2, 10.0);
        let s = solve_box_qp(&h, &g, &-&big, &big, &DVector::zeros(2)).unwrap();
        let exact = -h.clone().cholesky().unwrap().solve(&g);
        assert!((s.x - exact).amax() < 1e-12);
        assert_eq!(s.free, vec![true, true]);
    }

    #[test]
    fn a_bound_is_active_and_its_variable_clamped() {
        // Unconstrained minimum at x = (3, ·); the box stops the first variable at 1.
        let h = DMatrix::from_row_slice(2, 2, &[1.0, 0.0, 0.0, 1.0]);
        let g = DVector::from_vec(vec![-3.0, 0.5]);
        let lower = DVector::from_vec(vec![-1.0, -1.0]);
        let upper = DVector::from_vec(vec![1.0, 1.0]);
        let s = solve_box_qp(&h, &g, &lower, &upper, &DVector::zeros(2)).unwrap();
        assert!((s.x[0] - 1.0).abs() < 1e-12 && (s.x[1] + 0.5).abs() < 1e-12);
        assert_eq!(s.free, vec![false, true]);
        assert_eq!(s.free_factor.map(|c| c.l().nrows()), Some(1));
    }

    #[test]
    fn an_indefinite_free_block_is_reported() {
        let h = DMatrix::from_row_slice(1, 1, &[-1.0]);
        let g = DVector::from_vec(vec![0.1]);
        let b = DVector::from_element(1, 1.0);
        let r = solve_box_qp(&h, &g, &-&b, &b, &DVector::zeros(1));
        assert_eq!(r.err(), Some(BoxQpFailure::NotPositiveDefinite));
    }
}
