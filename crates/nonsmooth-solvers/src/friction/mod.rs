//! The friction stage of a staged contact solve: a strictly convex quadratic program over
//! per-contact Coulomb disks.
//!
//! With the normal forces fixed, the tangential impulses λ (rows grouped by contact) solve
//!
//! ```text
//! min ½‖λ‖² + ½‖Eλ + e‖²   s.t.   ‖λ_c‖ ≤ b_c  for every contact c,
//! ```
//!
//! where E (stored by rows, `e_rows[i]` = `(column, value)` pairs) is `I + S_t W_tt` for a
//! diagonal scaling `S_t` and the tangential Delassus block `W_tt`, and `b_c = μ_c λ_n,c`
//! is the radius of contact c's friction disk (an interval for a contact with one tangent
//! row). `blocks[c] = (rows of contact c, b_c)`; contacts with `b_c ≤ 0` have their rows
//! fixed at zero. This is the slack form of the friction program of E. Drumwright, "An
//! Unconditionally Stable First-Order Constraint Solver for Multibody Systems" (2019),
//! eq. 99, with the slack `β = Eλ + e`.
//!
//! Solvers, each verified before a result is returned (`None` otherwise, so that the caller
//! can fall back to a general conic solver):
//! - [`solve_friction_fixed`] and [`solve_friction_sticking`] (module `sticking`): the
//!   unconstrained minimizer from the symmetric quasi-definite augmented system
//!   `[I Eᵀ; E −I] [λ; β] = [0; −e]` (Vanderbei, "Symmetric quasidefinite matrices",
//!   *SIAM J. Optim.* 5, 1995), factored as `K = L D Lᵀ` by faer's sparse LDLᵀ
//!   ([`SparseLdlt::quasi_definite`](crate::sparse::SparseLdlt::quasi_definite): λ_i and
//!   β_i interleaved, no reordering and no pivoting, the pivot signs checked against the
//!   blocks), so that the
//!   conditioning is that of E, not of EᵀE (whose entries reach 10¹⁵ for stiff contacts).
//!   The augmented system is kept rather than the normal equations
//!   `(I + EᵀE) λ = −Eᵀe` (an `L Lᵀ` of the Schur complement on λ) or the Schur complement
//!   on β, `I + E Eᵀ`, since both square the conditioning of E. Accepted at a normwise
//!   backward error ≤ `tol` and, for the sticking solve, only when the minimizer lies in
//!   every disk (then it is the constrained optimum);
//! - [`solve_friction_sliding`] (module `sliding`): when contacts slide, the stationarity
//!   conditions `(I + EᵀE + diag ν) λ = −Eᵀe` with one multiplier ν_c ≥ 0 per disk, ν
//!   updated by Newton's method on Moré & Sorensen's secular equation `1/‖λ_c(ν)‖ = 1/b_c`
//!   (J. J. Moré & D. C. Sorensen, "Computing a trust region step", *SIAM J. Sci. Stat.
//!   Comput.* 4, 1983); accepted when the natural KKT residual of [`friction_residual`] is
//!   below [`SlidingSettings::kkt_tol`]. It is meant for a few sliding contacts (its Newton
//!   step is dense in the sliding contacts) and returns `None` beyond
//!   [`SlidingSettings::max_contacts`] or when it does not converge.
//!
//! [`friction_gradient`], [`friction_objective`] and [`friction_residual`] evaluate a
//! candidate (from these solvers or any other), with the gradient in factored form
//! `λ + Eᵀ(Eλ + e)` so that it stays accurate where EᵀE is huge; [`project_disk`] is the
//! Euclidean projection onto one contact's disk.

use nalgebra::DVector;

mod sliding;
mod sticking;

pub use sliding::{solve_friction_sliding, SlidingSettings};
pub use sticking::{solve_friction_fixed, solve_friction_sticking};

/// Projection onto the disk (interval in 1D) `‖x‖ ≤ b` of one contact's tangent block, in
/// place (onto the origin when `b ≤ 0`).
pub fn project_disk(x: &mut [f64], b: f64) {
    let norm = x.iter().map(|v| v * v).sum::<f64>().sqrt();
    if norm > b {
        let s = if norm > 0.0 { b.max(0.0) / norm } else { 0.0 };
        for v in x.iter_mut() {
            *v *= s;
        }
    }
}

/// `E x` for E stored by rows.
fn rows_mul(rows: &[Vec<(usize, f64)>], x: &DVector<f64>) -> DVector<f64> {
    DVector::from_iterator(
        rows.len(),
        rows.iter()
            .map(|r| r.iter().map(|&(j, v)| v * x[j]).sum::<f64>()),
    )
}

/// `Eᵀ y` for E stored by rows (n columns).
fn rows_mul_t(rows: &[Vec<(usize, f64)>], y: &DVector<f64>, n: usize) -> DVector<f64> {
    let mut out = DVector::zeros(n);
    for (i, r) in rows.iter().enumerate() {
        for &(j, v) in r {
            out[j] += v * y[i];
        }
    }
    out
}

/// Gradient `λ + Eᵀ(Eλ + e)` of the friction-stage objective `½‖λ‖² + ½‖Eλ + e‖²`, in
/// factored form: its components along the null space of the Delassus block stay accurate
/// even though `EᵀE` has entries of order (h B_t W)² ≈ 10¹⁵.
pub fn friction_gradient(
    e_rows: &[Vec<(usize, f64)>],
    e: &DVector<f64>,
    lambda: &DVector<f64>,
) -> DVector<f64> {
    let beta = rows_mul(e_rows, lambda) + e;
    lambda + rows_mul_t(e_rows, &beta, lambda.len())
}

/// Objective `½‖λ‖² + ½‖Eλ + e‖²` of the friction stage.
pub fn friction_objective(
    e_rows: &[Vec<(usize, f64)>],
    e: &DVector<f64>,
    lambda: &DVector<f64>,
) -> f64 {
    let beta = rows_mul(e_rows, lambda) + e;
    0.5 * (lambda.norm_squared() + beta.norm_squared())
}

/// KKT residual of the friction stage `min ½‖λ‖² + ½‖Eλ + e‖²` over the disks
/// `‖λ_c‖ ≤ b_c` (`blocks[c]` = the tangent rows of contact c and b_c): the natural residual
/// `‖λ − P_K(λ − ρ∇)‖∞` with ρ = 1/(1 + ‖E‖∞²) and ∇ from [`friction_gradient`], relative
/// to `max(1, |λ|∞)`, together with the largest cone violation `max_c(‖λ_c‖ − b_c)`.
pub fn friction_residual(
    e_rows: &[Vec<(usize, f64)>],
    e: &DVector<f64>,
    blocks: &[(Vec<usize>, f64)],
    lambda: &DVector<f64>,
) -> (f64, f64) {
    let grad = friction_gradient(e_rows, e, lambda);
    let enorm = e_rows
        .iter()
        .map(|r| r.iter().map(|x| x.1.abs()).sum::<f64>())
        .fold(0.0, f64::max);
    let rho = 1.0 / (1.0 + enorm * enorm);
    let mut z = lambda - grad * rho;
    let mut cone = 0.0f64;
    for (rows, b) in blocks {
        let mut x: Vec<f64> = rows.iter().map(|&i| z[i]).collect();
        project_disk(&mut x, *b);
        for (k, &i) in rows.iter().enumerate() {
            z[i] = x[k];
        }
        let norm = rows
            .iter()
            .map(|&i| lambda[i] * lambda[i])
            .sum::<f64>()
            .sqrt();
        cone = cone.max(norm - b);
    }
    let scale = 1.0f64.max(lambda.amax());
    ((lambda - z).amax() / scale, cone.max(0.0))
}

/// Rows of contacts whose disk has radius b_c ≤ 0, fixed at zero.
fn zero_disk_rows(n: usize, blocks: &[(Vec<usize>, f64)]) -> Vec<Option<f64>> {
    let mut fixed = vec![None; n];
    for (rows, b) in blocks {
        if *b <= 0.0 {
            for &i in rows {
                fixed[i] = Some(0.0);
            }
        }
    }
    fixed
}

/// `‖λ_c‖` of one contact's tangent rows.
fn block_norm(lambda: &DVector<f64>, rows: &[usize]) -> f64 {
    rows.iter()
        .map(|&i| lambda[i] * lambda[i])
        .sum::<f64>()
        .sqrt()
}

#[cfg(test)]
pub(crate) mod test_util {
    use crate::sparse::test_util::random_spd;
    use nalgebra::{DMatrix, DVector};

    /// Rows of E, the vector e and the contact blocks (rows, radius) of a friction stage.
    pub(crate) type Problem = (Vec<Vec<(usize, f64)>>, DVector<f64>, Vec<(Vec<usize>, f64)>);

    /// A friction stage of `contacts` contacts with `width` tangent rows each: E = I + a
    /// random SPD matrix times `coupling` (dense rows), e = 3 sin(i − 1.5), radii
    /// b_c = 0.05 + 0.2 c.
    pub(crate) fn problem(draw: u64, contacts: usize, width: usize, coupling: f64) -> Problem {
        let n = contacts * width;
        let a: DMatrix<f64> = random_spd(n, draw) * coupling;
        let e_rows: Vec<Vec<(usize, f64)>> = (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| (j, a[(i, j)] + if i == j { 1.0 } else { 0.0 }))
                    .collect()
            })
            .collect();
        let e = DVector::from_fn(n, |i, _| 3.0 * (i as f64 - 1.5).sin());
        let blocks: Vec<(Vec<usize>, f64)> = (0..contacts)
            .map(|c| {
                (
                    (c * width..(c + 1) * width).collect(),
                    0.05 + 0.2 * c as f64,
                )
            })
            .collect();
        (e_rows, e, blocks)
    }
}

#[cfg(test)]
mod tests {
    use super::test_util::problem;
    use super::*;

    #[test]
    fn disk_projection_is_the_nearest_point() {
        let mut x = [3.0, 4.0];
        project_disk(&mut x, 1.0);
        assert!((x[0] - 0.6).abs() < 1e-15 && (x[1] - 0.8).abs() < 1e-15);
        let mut inside = [0.3, -0.4];
        project_disk(&mut inside, 1.0);
        assert_eq!(inside, [0.3, -0.4]);
        let mut interval = [-2.0];
        project_disk(&mut interval, 0.5);
        assert_eq!(interval, [-0.5]);
        let mut zero = [1.0, 1.0];
        project_disk(&mut zero, 0.0);
        assert_eq!(zero, [0.0, 0.0]);
    }

    /// The factored gradient is the derivative of the objective (central differences); the
    /// residual reports a cone violation, vanishes at an optimum (λ = 0 when every radius is
    /// zero) and not at a point that is not optimal.
    #[test]
    fn gradient_objective_and_residual_are_consistent() {
        let (e_rows, e, blocks) = problem(5, 3, 2, 0.5);
        let lambda = DVector::from_fn(6, |i, _| 0.1 * (i as f64 + 0.5).cos());
        let g = friction_gradient(&e_rows, &e, &lambda);
        for k in 0..6 {
            let h = 1e-6;
            let mut lp = lambda.clone();
            let mut lm = lambda.clone();
            lp[k] += h;
            lm[k] -= h;
            let fd = (friction_objective(&e_rows, &e, &lp) - friction_objective(&e_rows, &e, &lm))
                / (2.0 * h);
            assert!(
                (fd - g[k]).abs() < 1e-6 * (1.0 + g[k].abs()),
                "{k}: {fd} vs {}",
                g[k]
            );
        }
        // λ outside its disks: a positive cone violation is reported.
        let (_, cone) = friction_residual(&e_rows, &e, &blocks, &(lambda.clone() * 100.0));
        assert!(cone > 0.0);
        // At λ = 0 with zero radii every projection is 0: residual 0, no violation.
        let zero_blocks: Vec<(Vec<usize>, f64)> =
            blocks.iter().map(|(r, _)| (r.clone(), 0.0)).collect();
        let (kkt, cone) = friction_residual(&e_rows, &e, &zero_blocks, &DVector::zeros(6));
        assert_eq!((kkt, cone), (0.0, 0.0));
        // Away from the optimum the residual is not zero.
        let (kkt, _) = friction_residual(&e_rows, &e, &blocks, &DVector::zeros(6));
        assert!(kkt > 1e-3, "{kkt}");
    }
}
