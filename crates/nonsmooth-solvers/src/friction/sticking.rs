//! The friction stage with every contact sticking, from the quasi-definite augmented system
//! (see the parent module).

use nalgebra::DVector;

use super::{block_norm, zero_disk_rows};
use crate::sparse::{SparseLdlt, SymSparse};

/// The all-sticking solution of the friction stage `min ½‖λ‖² + ½‖Eλ + e‖²` (rows of
/// contacts with b_c = 0 fixed at zero), accepted when it lies in every disk
/// `‖λ_c‖ ≤ b_c`, in which case it is the constrained optimum (the constraints are then
/// inactive and the objective is strictly convex). Returns `None` when the solution leaves a
/// disk or the linear solve fails its check ([`solve_friction_fixed`]; the caller then uses
/// [`solve_friction_sliding`](super::solve_friction_sliding) or a general conic solver).
pub fn solve_friction_sticking(
    e_rows: &[Vec<(usize, f64)>],
    e: &DVector<f64>,
    blocks: &[(Vec<usize>, f64)],
    tol: f64,
) -> Option<DVector<f64>> {
    let fixed = zero_disk_rows(e_rows.len(), blocks);
    let lambda = solve_friction_fixed(e_rows, e, &fixed, tol)?;
    blocks
        .iter()
        .all(|(rows, b)| block_norm(&lambda, rows) <= *b)
        .then_some(lambda)
}

/// The minimizer of the friction-stage objective `½‖λ‖² + ½‖Eλ + e‖²` over the rows that
/// are not `fixed` (the others held at their given values). Solved through the symmetric
/// quasi-definite augmented system `[I Eᵀ; E −I] [λ; β] = [0; −e']` (β = Eλ + e', e' = e +
/// E λ_fixed), factored by [`SparseLdlt::quasi_definite`] (a signed `L D Lᵀ` with λ pivots
/// positive and β pivots negative), so the condition number is that of E, not of EᵀE; one
/// step of iterative refinement, then a normwise backward-error check (≤ `tol`; `None` when
/// it fails).
pub fn solve_friction_fixed(
    e_rows: &[Vec<(usize, f64)>],
    e: &DVector<f64>,
    fixed: &[Option<f64>],
    tol: f64,
) -> Option<DVector<f64>> {
    solve_friction_shifted(e_rows, e, fixed, &vec![0.0; e_rows.len()], tol).map(|(x, _)| x)
}

/// [`solve_friction_fixed`] with `shift[i] ≥ 0` added to the Hessian's diagonal on row i:
/// the stationarity conditions `(I + EᵀE + diag(ν)) λ = −Eᵀe` of contacts held on their
/// circles by the multipliers ν of [`solve_friction_sliding`](super::solve_friction_sliding).
pub(super) fn solve_friction_shifted(
    e_rows: &[Vec<(usize, f64)>],
    e: &DVector<f64>,
    fixed: &[Option<f64>],
    shift: &[f64],
    tol: f64,
) -> Option<(DVector<f64>, ShiftedSystem)> {
    let n = e_rows.len();
    // Unknown positions: λ_i (free rows) then β_i, interleaved row by row.
    let mut pos_l = vec![usize::MAX; n];
    let mut pos_b = vec![0; n];
    let mut dim = 0;
    for i in 0..n {
        if fixed[i].is_none() {
            pos_l[i] = dim;
            dim += 1;
        }
        pos_b[i] = dim;
        dim += 1;
    }
    let mut trip = Vec::new();
    let mut positive = vec![false; dim];
    let mut rhs = DVector::zeros(dim);
    for i in 0..n {
        if fixed[i].is_none() {
            trip.push((pos_l[i], pos_l[i], 1.0 + shift[i]));
            positive[pos_l[i]] = true;
        }
        trip.push((pos_b[i], pos_b[i], -1.0));
        let mut ei = e[i];
        for &(j, v) in &e_rows[i] {
            match fixed[j] {
                None => {
                    trip.push((pos_b[i], pos_l[j], v));
                    trip.push((pos_l[j], pos_b[i], v));
                }
                Some(x) => ei += v * x,
            }
        }
        rhs[pos_b[i]] = -ei;
    }
    let k = SymSparse::from_triplets(dim, &trip);
    let f = SparseLdlt::quasi_definite(&k, None, &|i| positive[i])?;
    let mut x = rhs.as_slice().to_vec();
    f.solve_mut(&mut x)?;
    let mut x = DVector::from_vec(x);
    let mut res = &rhs - k.mul(&x);
    let mut d = res.as_slice().to_vec();
    f.solve_mut(&mut d)?;
    x += DVector::from_vec(d);
    res = &rhs - k.mul(&x);
    let knorm = k
        .rows
        .iter()
        .map(|r| r.iter().map(|e| e.1.abs()).sum::<f64>())
        .fold(0.0, f64::max);
    let backward = res.amax() / (knorm * x.amax() + rhs.amax()).max(f64::MIN_POSITIVE);
    if backward.is_nan() || backward > tol {
        return None;
    }
    let lambda = DVector::from_iterator(n, (0..n).map(|i| fixed[i].unwrap_or_else(|| x[pos_l[i]])));
    Some((lambda, ShiftedSystem { k, f, pos_l }))
}

/// The factored augmented system of [`solve_friction_shifted`], for further right-hand sides.
pub(super) struct ShiftedSystem {
    k: SymSparse,
    f: SparseLdlt,
    pos_l: Vec<usize>,
}

impl ShiftedSystem {
    /// `(I + EᵀE + diag(ν))⁻¹ v` on the free rows (v in λ-space; fixed rows of v ignored,
    /// their entries of the result zero): the augmented system with v on the λ rows and zero
    /// on the β rows, one step of iterative refinement. `None` when the solve fails
    /// ([`SparseLdlt::solve_mut`]).
    pub(super) fn solve(&self, v: &DVector<f64>) -> Option<DVector<f64>> {
        let mut rhs = DVector::zeros(self.k.rows.len());
        for (i, &p) in self.pos_l.iter().enumerate() {
            if p != usize::MAX {
                rhs[p] = v[i];
            }
        }
        let mut x = rhs.as_slice().to_vec();
        self.f.solve_mut(&mut x)?;
        let mut x = DVector::from_vec(x);
        let mut d = (&rhs - self.k.mul(&x)).as_slice().to_vec();
        self.f.solve_mut(&mut d)?;
        x += DVector::from_vec(d);
        Some(DVector::from_iterator(
            v.len(),
            self.pos_l
                .iter()
                .map(|&p| if p == usize::MAX { 0.0 } else { x[p] }),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::problem;
    use super::super::{friction_gradient, friction_residual};
    use super::*;
    use nalgebra::DMatrix;

    /// The augmented-system solve is the solution of the normal equations
    /// `(I + EᵀE) λ = −Eᵀe` (dense Cholesky), with fixed rows held; with radii large enough
    /// the sticking solve returns it and its KKT residual vanishes, with small radii it
    /// declines.
    #[test]
    fn sticking_solve_matches_the_normal_equations() {
        let (e_rows, e, blocks) = problem(9, 3, 2, 0.3);
        let n = e_rows.len();
        let dense = DMatrix::from_fn(n, n, |i, j| {
            e_rows[i]
                .iter()
                .filter(|x| x.0 == j)
                .map(|x| x.1)
                .sum::<f64>()
        });
        let h = DMatrix::identity(n, n) + dense.transpose() * &dense;
        let reference = h.cholesky().expect("spd").solve(&(-dense.transpose() * &e));
        let x = solve_friction_fixed(&e_rows, &e, &vec![None; n], 1e-13).expect("solves");
        assert!((&x - &reference).amax() < 1e-10 * (1.0 + reference.amax()));
        assert!(friction_gradient(&e_rows, &e, &x).amax() < 1e-10);

        // Rows 0 and 1 held at given values: the free rows are stationary.
        let mut fixed = vec![None; n];
        fixed[0] = Some(0.25);
        fixed[1] = Some(-0.5);
        let y = solve_friction_fixed(&e_rows, &e, &fixed, 1e-13).expect("solves");
        assert_eq!((y[0], y[1]), (0.25, -0.5));
        let g = friction_gradient(&e_rows, &e, &y);
        assert!(g.rows(2, n - 2).amax() < 1e-10, "{g}");

        let wide: Vec<(Vec<usize>, f64)> = blocks
            .iter()
            .map(|(r, _)| (r.clone(), 10.0 * (1.0 + reference.amax())))
            .collect();
        let s = solve_friction_sticking(&e_rows, &e, &wide, 1e-13).expect("all stick");
        assert!((&s - &x).amax() == 0.0);
        let (kkt, cone) = friction_residual(&e_rows, &e, &wide, &s);
        assert!(kkt < 1e-12 && cone == 0.0, "{kkt:e} {cone:e}");
        let narrow: Vec<(Vec<usize>, f64)> =
            blocks.iter().map(|(r, _)| (r.clone(), 1e-6)).collect();
        assert!(solve_friction_sticking(&e_rows, &e, &narrow, 1e-13).is_none());
    }
}
