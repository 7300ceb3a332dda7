//! The friction stage with sliding contacts: Newton's method on the multipliers of the
//! friction disks (see the parent module).

use nalgebra::{DMatrix, DVector};

use super::sticking::solve_friction_shifted;
use super::{block_norm, friction_gradient, friction_residual, zero_disk_rows};

/// Tolerances and limits of [`solve_friction_sliding`].
#[derive(Debug, Clone, Copy)]
pub struct SlidingSettings {
    /// Normwise backward error accepted for each linear solve.
    pub solve_tol: f64,
    /// Natural KKT residual (relative to max(1, |λ|∞)) at which the result is accepted; the
    /// disks may be exceeded by at most this times the largest radius.
    pub kkt_tol: f64,
    /// Rounds (factorizations) before giving up.
    pub max_rounds: usize,
    /// Most contacts that can slide (b_c > 0) taken on.
    pub max_contacts: usize,
}

/// The friction stage `min ½‖λ‖² + ½‖Eλ + e‖²` over the disks `‖λ_c‖ ≤ b_c` when contacts
/// slide, through the stationarity conditions `(I + EᵀE + diag(ν)) λ = −Eᵀe` with a
/// multiplier ν_c ≥ 0 per contact (ν_c = 0: sticking), solved exactly for all rows at once
/// (`solve_friction_shifted`). Each round then updates ν: a sticking contact that leaves its
/// disk starts to slide with the multiplier of its own disk, the others held
/// (`disk_multiplier` with its block H_cc = I + (EᵀE)_cc); the sliding ones take one Newton
/// step together on `φ_c(ν) = 1/‖λ_c(ν)‖ − 1/b_c` (Moré–Sorensen's secular equation, nearly
/// linear in ν), its Jacobian `∂φ_c/∂ν_d = λ_cᵀ w_d,c / ‖λ_c‖³` from
/// `w_d = (H + diag ν)⁻¹ P_d λ`, one back-solve per sliding contact with the factored system
/// (the feet of one body are strongly coupled: a step per contact alone converges only
/// linearly there); a contact sticks again when ν_c reaches 0.
///
/// `warm` holds the multipliers of the previous solve (used when it had as many contacts)
/// and receives the final ones. More than `max_contacts` contacts that can slide (b_c > 0)
/// give `None` at once (a large sliding group is left to a general conic solver). Accepted
/// when the natural KKT residual of [`friction_residual`] is at most `kkt_tol` and no disk
/// is violated; `None` when no round reaches that within `max_rounds` or a solve fails (the
/// caller then uses a general conic solver).
pub fn solve_friction_sliding(
    e_rows: &[Vec<(usize, f64)>],
    e: &DVector<f64>,
    blocks: &[(Vec<usize>, f64)],
    settings: &SlidingSettings,
    warm: &mut Vec<f64>,
) -> Option<DVector<f64>> {
    let SlidingSettings {
        solve_tol,
        kkt_tol,
        max_rounds,
        max_contacts,
    } = *settings;
    if blocks.iter().filter(|(_, b)| *b > 0.0).count() > max_contacts {
        return None;
    }
    let n = e_rows.len();
    let base = zero_disk_rows(n, blocks);
    // the Hessian's diagonal blocks I + (EᵀE)_cc, from the rows of E
    let mut block_of = vec![usize::MAX; n];
    for (c, (rows, _)) in blocks.iter().enumerate() {
        for (k, &i) in rows.iter().enumerate() {
            block_of[i] = c * 2 + k.min(1);
        }
    }
    let mut h_blocks: Vec<[[f64; 2]; 2]> = blocks
        .iter()
        .map(|(rows, _)| {
            let mut h = [[0.0; 2]; 2];
            for (k, row) in h.iter_mut().enumerate().take(rows.len()) {
                row[k] = 1.0;
            }
            h
        })
        .collect();
    for row in e_rows {
        for &(j, vj) in row {
            for &(k, vk) in row {
                let (bj, bk) = (block_of[j], block_of[k]);
                if bj != usize::MAX && bj / 2 == bk / 2 {
                    h_blocks[bj / 2][bj % 2][bk % 2] += vj * vk;
                }
            }
        }
    }
    // per block: the multiplier ν_c of its circle (0 while it sticks), from the previous
    // solve when it had as many contacts (a wrong start costs rounds, never the answer)
    let mut nu = if warm.len() == blocks.len() {
        std::mem::take(warm)
    } else {
        vec![0.0; blocks.len()]
    };
    let bmax = blocks.iter().map(|b| b.1).fold(0.0, f64::max);
    let mut shift = vec![0.0; n];
    for _ in 0..max_rounds {
        for ((rows, _), &nc) in blocks.iter().zip(&nu) {
            for &i in rows {
                shift[i] = nc;
            }
        }
        let (lambda, system) = solve_friction_shifted(e_rows, e, &base, &shift, solve_tol)?;
        let (kkt, cone) = friction_residual(e_rows, e, blocks, &lambda);
        if kkt <= kkt_tol && cone <= kkt_tol * bmax.max(f64::MIN_POSITIVE) {
            *warm = nu;
            return Some(lambda);
        }
        // Newton on φ_c(ν) = 1/‖λ_c(ν)‖ − 1/b_c over the sliding contacts, all coupled:
        // dλ/dν_d = −(H + diag ν)⁻¹ P_d λ, so dφ_c/dν_d = λ_cᵀ w_d,c / ‖λ_c‖³ with
        // w_d = (H + diag ν)⁻¹ P_d λ
        let sliding: Vec<usize> = (0..blocks.len())
            .filter(|&c| nu[c] > 0.0 && blocks[c].1 > 0.0)
            .collect();
        let norms: Vec<f64> = blocks
            .iter()
            .map(|(rows, _)| block_norm(&lambda, rows))
            .collect();
        let mut step = None;
        if !sliding.is_empty() && sliding.iter().all(|&c| norms[c] > 0.0) {
            let m = sliding.len();
            let mut jac = DMatrix::zeros(m, m);
            let mut phi = DVector::zeros(m);
            for (a, &d) in sliding.iter().enumerate() {
                let mut v = DVector::zeros(n);
                for &i in &blocks[d].0 {
                    v[i] = lambda[i];
                }
                let w = system.solve(&v)?;
                for (r, &c) in sliding.iter().enumerate() {
                    let dot: f64 = blocks[c].0.iter().map(|&i| lambda[i] * w[i]).sum();
                    jac[(r, a)] = dot / norms[c].powi(3);
                }
                phi[a] = 1.0 / norms[d] - 1.0 / blocks[d].1;
            }
            step = jac.lu().solve(&(-phi));
        }
        if let Some(step) = &step {
            for (a, &c) in sliding.iter().enumerate() {
                nu[c] = (nu[c] + step[a]).max(0.0);
            }
        }
        let grad = friction_gradient(e_rows, e, &lambda);
        for (((rows, b), nc), h) in blocks.iter().zip(nu.iter_mut()).zip(&h_blocks) {
            if *b <= 0.0 || rows.len() > 2 {
                continue;
            }
            let m = rows.len();
            let x: Vec<f64> = rows.iter().map(|&i| lambda[i]).collect();
            let norm = x.iter().map(|v| v * v).sum::<f64>().sqrt();
            if *nc == 0.0 {
                // a sticking contact starts to slide with the multiplier of its own disk
                // (the others held): r_c = ∇_c − H_cc λ_c
                if norm > *b {
                    let r: Vec<f64> = (0..m)
                        .map(|k| grad[rows[k]] - (0..m).map(|l| h[k][l] * x[l]).sum::<f64>())
                        .collect();
                    *nc = disk_multiplier(h, &r, *b);
                }
                continue;
            }
            if step.is_some() {
                continue;
            }
            // without the coupled step: Newton with the contact's own block,
            // dλ_c/dν ≈ −(H_cc + ν I)⁻¹ λ_c
            let (a, off, c) = (
                h[0][0] + *nc,
                if m == 2 { h[0][1] } else { 0.0 },
                h[1][1] + *nc,
            );
            let quad = if m == 1 {
                x[0] * x[0] / a
            } else {
                let det = a * c - off * off;
                (c * x[0] * x[0] - 2.0 * off * x[0] * x[1] + a * x[1] * x[1]) / det
            };
            if norm == 0.0 {
                *nc = 0.0;
                continue;
            }
            let phi = 1.0 / norm - 1.0 / b;
            let dphi = quad / (norm * norm * norm);
            *nc = (*nc - phi / dphi).max(0.0);
        }
    }
    None
}

/// The multiplier ν ≥ 0 of the disk `‖y‖ ≤ b` at the minimizer of `½ yᵀH y + rᵀy` over
/// it (the interval when `r` has one entry; H symmetric positive definite, the leading block
/// used): 0 when the unconstrained minimizer lies inside, else the ν > 0 with
/// `‖(H + νI)⁻¹ r‖ = b`, found by Newton's method on `1/‖y(ν)‖ − 1/b` in H's eigenbasis
/// (Moré and Sorensen's secular equation; monotone convergence from ν = 0).
fn disk_multiplier(h: &[[f64; 2]; 2], r: &[f64], b: f64) -> f64 {
    if r.len() == 1 {
        // (h + ν) b = |r| when −r/h leaves the interval
        return (r[0].abs() / b - h[0][0]).max(0.0);
    }
    let (a, off, c) = (h[0][0], h[0][1], h[1][1]);
    let det = a * c - off * off;
    let free = [
        -(c * r[0] - off * r[1]) / det,
        -(a * r[1] - off * r[0]) / det,
    ];
    if (free[0] * free[0] + free[1] * free[1]).sqrt() <= b {
        return 0.0;
    }
    // eigenvalues of the 2×2 block and r in its eigenbasis
    let theta = 0.5 * (2.0 * off).atan2(a - c);
    let (cs, sn) = (theta.cos(), theta.sin());
    let l1 = a * cs * cs + 2.0 * off * cs * sn + c * sn * sn;
    let l2 = a * sn * sn - 2.0 * off * cs * sn + c * cs * cs;
    let (p1, p2) = (cs * r[0] + sn * r[1], -sn * r[0] + cs * r[1]);
    let mut nu = 0.0f64;
    for _ in 0..100 {
        let (d1, d2) = (l1 + nu, l2 + nu);
        let norm2 = (p1 / d1).powi(2) + (p2 / d2).powi(2);
        let norm = norm2.sqrt();
        // φ(ν) = 1/‖y‖ − 1/b, φ'(ν) = (Σ pᵢ²/dᵢ³)/‖y‖³
        let phi = 1.0 / norm - 1.0 / b;
        let dphi = ((p1 * p1) / (d1 * d1 * d1) + (p2 * p2) / (d2 * d2 * d2)) / (norm2 * norm);
        let step = phi / dphi;
        nu = (nu - step).max(0.0);
        if step.abs() <= 1e-15 * nu.max(l1.min(l2)) {
            break;
        }
    }
    nu
}

#[cfg(test)]
mod tests {
    use super::super::test_util::problem;
    use super::super::{friction_objective, project_disk, solve_friction_sticking};
    use super::*;

    const TEST_SETTINGS: SlidingSettings = SlidingSettings {
        solve_tol: 1e-13,
        kkt_tol: 1e-10,
        max_rounds: 30,
        max_contacts: 64,
    };

    /// A projected-gradient reference for the friction stage (slow, plain): `iters` steps of
    /// length 1/L on `½‖λ‖² + ½‖Eλ + e‖²` over the disks.
    fn projected_gradient(
        e_rows: &[Vec<(usize, f64)>],
        e: &DVector<f64>,
        blocks: &[(Vec<usize>, f64)],
        iters: usize,
    ) -> DVector<f64> {
        let n = e_rows.len();
        let dense = DMatrix::from_fn(n, n, |i, j| {
            e_rows[i]
                .iter()
                .filter(|x| x.0 == j)
                .map(|x| x.1)
                .sum::<f64>()
        });
        let lip = 1.0 + dense.norm_squared();
        let mut x = DVector::zeros(n);
        for _ in 0..iters {
            x -= friction_gradient(e_rows, e, &x) / lip;
            for (rows, b) in blocks {
                let mut v: Vec<f64> = rows.iter().map(|&i| x[i]).collect();
                project_disk(&mut v, *b);
                for (k, &i) in rows.iter().enumerate() {
                    x[i] = v[k];
                }
            }
        }
        x
    }

    /// Sliding contacts (intervals of one row as in planar models, and disks of two rows
    /// with weak and with strong coupling): where the active set on the disks returns a
    /// point, it has a natural KKT residual below its tolerance, lies inside every disk with
    /// some contacts on their circle, and has the objective of a long projected-gradient run
    /// (the problem is strictly convex); here it returns one in every case.
    #[test]
    fn sliding_friction_solve_is_the_constrained_optimum() {
        let cases = [
            (3u64, 1usize, 1.0, true),
            (4, 1, 1.0, true),
            (6, 2, 0.1, true),
            (7, 2, 0.1, true),
            (1, 2, 1.0, true),
            (2, 2, 1.0, true),
        ];
        for (draw, width, coupling, must_converge) in cases {
            let (e_rows, e, blocks) = problem(draw, 4, width, coupling);
            assert!(solve_friction_sticking(&e_rows, &e, &blocks, 1e-13).is_none());
            let mut warm = Vec::new();
            let Some(x) = solve_friction_sliding(&e_rows, &e, &blocks, &TEST_SETTINGS, &mut warm)
            else {
                assert!(
                    !must_converge,
                    "draw {draw}: the active set did not converge"
                );
                continue;
            };
            let (kkt, cone) = friction_residual(&e_rows, &e, &blocks, &x);
            assert!(
                kkt <= 1e-10 && cone <= 1e-10,
                "draw {draw}: {kkt:e} {cone:e}"
            );
            let on_circle = blocks
                .iter()
                .filter(|(rows, b)| (block_norm(&x, rows) - b).abs() < 1e-10)
                .count();
            assert!(on_circle > 0, "draw {draw}: no contact slides");
            let reference = projected_gradient(&e_rows, &e, &blocks, 200_000);
            let (f, f_ref) = (
                friction_objective(&e_rows, &e, &x),
                friction_objective(&e_rows, &e, &reference),
            );
            assert!(
                f <= f_ref + 1e-9 * f_ref.abs().max(1.0),
                "draw {draw}: {f} vs {f_ref}"
            );
            assert!(
                (&x - &reference).amax() < 1e-5,
                "draw {draw}: {x} vs {reference}"
            );
        }
    }

    /// More contacts that can slide than `max_contacts` are declined at once, and the
    /// multipliers of a converged solve are handed back through `warm` (one per contact,
    /// positive on the sliding ones); a second solve from them returns the same point.
    #[test]
    fn contact_limit_and_warm_start() {
        let (e_rows, e, blocks) = problem(2, 4, 2, 1.0);
        let few = SlidingSettings {
            max_contacts: 3,
            ..TEST_SETTINGS
        };
        let mut warm = Vec::new();
        assert!(solve_friction_sliding(&e_rows, &e, &blocks, &few, &mut warm).is_none());
        let x = solve_friction_sliding(&e_rows, &e, &blocks, &TEST_SETTINGS, &mut warm)
            .expect("converges");
        assert_eq!(warm.len(), blocks.len());
        assert!(warm.iter().all(|&nu| nu >= 0.0) && warm.iter().any(|&nu| nu > 0.0));
        let y = solve_friction_sliding(&e_rows, &e, &blocks, &TEST_SETTINGS, &mut warm)
            .expect("converges from its own multipliers");
        assert!((&x - &y).amax() < 1e-9, "{x} vs {y}");
    }
}
