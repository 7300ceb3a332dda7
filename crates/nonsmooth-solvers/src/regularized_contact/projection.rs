//! The projection `γ = P_F(y)` onto each constraint's set `F` in the norm weighted by the
//! constraint's regularization `R`, and its derivative (Castro et al. 2022, §V-B).
//!
//! Rows are ordered tangents first, normal last. For the friction cones, with
//! `R = diag(R_t, …, R_t, R_n)`, `μ̂ = μ R_t / R_n`, `y_r = ‖y_t‖`:
//!
//! - stiction, `y_r ≤ μ y_n`: `γ = y`;
//! - separation, `μ̂ y_r ≤ −y_n`: `γ = 0`;
//! - sliding, otherwise: `γ_n = (y_n + μ̂ y_r) / (1 + μ μ̂)`, `γ_t = μ γ_n y_t / y_r`.

use super::coulomb::coulomb_map;
use super::problem::ConstraintKind;
use super::region::Region;

/// Computes `γ = P_F(y)` into `gamma` and, when `g` is given, `G = (∂γ/∂y) R⁻¹`
/// (`rows × rows`, row-major, symmetric positive semidefinite) into `g`. For the Coulomb
/// kinds, the impulse map of `coulomb.rs` (no projection; `G` not symmetric when sliding).
/// `y`, `r`, `gamma` have the constraint's row count.
pub(crate) fn project(
    kind: ConstraintKind,
    y: &[f64],
    r: &[f64],
    gamma: &mut [f64],
    g: Option<&mut [f64]>,
) -> Region {
    match kind {
        ConstraintKind::Bilateral => {
            gamma[0] = y[0];
            if let Some(g) = g {
                g[0] = 1.0 / r[0];
            }
            Region::Inside
        }
        ConstraintKind::Unilateral => {
            if y[0] > 0.0 {
                gamma[0] = y[0];
                if let Some(g) = g {
                    g[0] = 1.0 / r[0];
                }
                Region::Inside
            } else {
                gamma[0] = 0.0;
                if let Some(g) = g {
                    g[0] = 0.0;
                }
                Region::Separated
            }
        }
        ConstraintKind::Cone { mu } => project_cone::<2>(mu, y, r, gamma, g),
        ConstraintKind::Planar { mu } => project_cone::<1>(mu, y, r, gamma, g),
        ConstraintKind::Disk { radius } => project_ball::<2>(radius, y, r, gamma, g),
        ConstraintKind::Interval { radius } => project_ball::<1>(radius, y, r, gamma, g),
        ConstraintKind::Coulomb { mu } => coulomb_map::<2>(mu, y, r, gamma, g),
        ConstraintKind::PlanarCoulomb { mu } => coulomb_map::<1>(mu, y, r, gamma, g),
    }
}

/// Projection onto the ball `{‖γ‖ ≤ ρ}` of `T` rows with equal regularizations (the
/// R-weighted projection is then the Euclidean one): `γ = y` inside, `γ = ρ y/‖y‖`
/// outside, with derivative `(ρ/‖y‖)(I − ŷŷᵀ)`.
fn project_ball<const T: usize>(
    radius: f64,
    y: &[f64],
    r: &[f64],
    gamma: &mut [f64],
    g: Option<&mut [f64]>,
) -> Region {
    let yr = y[..T].iter().map(|x| x * x).sum::<f64>().sqrt();
    if yr <= radius {
        gamma[..T].copy_from_slice(&y[..T]);
        if let Some(g) = g {
            g[..T * T].fill(0.0);
            for i in 0..T {
                g[i * T + i] = 1.0 / r[i];
            }
        }
        return Region::Inside;
    }
    if radius == 0.0 {
        gamma[..T].fill(0.0);
        if let Some(g) = g {
            g[..T * T].fill(0.0);
        }
        return Region::Separated;
    }
    let c = radius / yr;
    let mut that = [0.0; T];
    for i in 0..T {
        that[i] = y[i] / yr;
        gamma[i] = c * y[i];
    }
    if let Some(g) = g {
        for i in 0..T {
            for j in 0..T {
                let id = if i == j { 1.0 } else { 0.0 };
                g[i * T + j] = c * (id - that[i] * that[j]) / r[j];
            }
        }
    }
    Region::Sliding
}

/// Projection onto `{‖γ_t‖ ≤ μ γ_n}` with `T` tangent rows followed by the normal row.
fn project_cone<const T: usize>(
    mu: f64,
    y: &[f64],
    r: &[f64],
    gamma: &mut [f64],
    g: Option<&mut [f64]>,
) -> Region {
    let k = T + 1;
    let yn = y[T];
    let yr = y[..T].iter().map(|x| x * x).sum::<f64>().sqrt();
    let (rt, rn) = (r[0], r[T]);
    let mu_hat = mu * rt / rn;
    if yr <= mu * yn {
        gamma[..k].copy_from_slice(&y[..k]);
        if let Some(g) = g {
            g[..k * k].fill(0.0);
            for i in 0..k {
                g[i * k + i] = 1.0 / r[i];
            }
        }
        return Region::Inside;
    }
    if mu_hat * yr <= -yn {
        gamma[..k].fill(0.0);
        if let Some(g) = g {
            g[..k * k].fill(0.0);
        }
        return Region::Separated;
    }
    // Sliding: here yr > 0 (yr = 0 falls in one of the two regions above).
    let denom = 1.0 + mu * mu_hat;
    let gn = (yn + mu_hat * yr) / denom;
    let mut that = [0.0; T];
    for i in 0..T {
        that[i] = y[i] / yr;
        gamma[i] = mu * gn * that[i];
    }
    gamma[T] = gn;
    if let Some(g) = g {
        // dγ/dy, then scaled by R⁻¹ on the right; symmetric by construction (the R-weighted
        // projection's derivative is R-self-adjoint), symmetrized against rounding.
        let mut d = [[0.0; 3]; 3];
        let c = mu * gn / yr;
        for i in 0..T {
            for j in 0..T {
                let tt = that[i] * that[j];
                let id = if i == j { 1.0 } else { 0.0 };
                d[i][j] = mu * mu_hat / denom * tt + c * (id - tt);
            }
            d[i][T] = mu * that[i] / denom;
            d[T][i] = mu_hat * that[i] / denom;
        }
        d[T][T] = 1.0 / denom;
        for i in 0..k {
            for j in 0..k {
                g[i * k + j] = d[i][j] / r[j];
            }
        }
        for i in 0..k {
            for j in 0..i {
                let s = 0.5 * (g[i * k + j] + g[j * k + i]);
                g[i * k + j] = s;
                g[j * k + i] = s;
            }
        }
    }
    Region::Sliding
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cone_kind(t: usize, mu: f64) -> ConstraintKind {
        if t == 2 {
            ConstraintKind::Cone { mu }
        } else {
            ConstraintKind::Planar { mu }
        }
    }

    /// The projection is the minimizer of ½‖γ − y‖²_R over F: check the first-order
    /// conditions through Moreau's decomposition (y − γ lies in the R-polar cone and is
    /// R-orthogonal to γ), and the derivative against central differences.
    #[test]
    fn projection_is_r_weighted_and_derivative_matches_differences() {
        let mut state = 12345u64;
        let mut rnd = move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        };
        let mut regions = [0usize; 3];
        for trial in 0..3000 {
            let t = 1 + trial % 2;
            let k = t + 1;
            let mu = if trial % 7 == 0 {
                0.0
            } else {
                1.5 * rnd().abs()
            };
            let rt = 10f64.powf(2.0 * rnd());
            let rn = 10f64.powf(2.0 * rnd());
            let mut r = vec![rt; k];
            r[t] = rn;
            let y: Vec<f64> = (0..k).map(|_| rnd()).collect();
            let mut gam = vec![0.0; k];
            let mut g = vec![0.0; k * k];
            let region = project(cone_kind(t, mu), &y, &r, &mut gam, Some(&mut g));
            regions[region as usize] += 1;
            // γ ∈ F.
            let gt = gam[..t].iter().map(|x| x * x).sum::<f64>().sqrt();
            assert!(gt <= mu * gam[t] * (1.0 + 1e-14) + 1e-15, "{gam:?}");
            // z = R (y − γ) ∈ −F* (polar of F): for every direction in F, ⟨z, f⟩ ≤ 0, which
            // for the cone means μ‖z_t‖ ≤ −z_n; and ⟨z, γ⟩ = 0.
            let z: Vec<f64> = (0..k).map(|i| r[i] * (y[i] - gam[i])).collect();
            let zt = z[..t].iter().map(|x| x * x).sum::<f64>().sqrt();
            // Rounding scale of z: its terms R y and R γ, before they cancel.
            let scale = (0..k).fold(1e-300f64, |a, i| {
                a.max((r[i] * y[i]).abs()).max((r[i] * gam[i]).abs())
            });
            assert!(
                mu * zt <= -z[t] + 1e-12 * scale,
                "{z:?} {region:?} mu {mu} r {r:?} y {y:?} g {gam:?}"
            );
            let zg: f64 = (0..k).map(|i| z[i] * gam[i]).sum();
            assert!(zg.abs() <= 1e-12 * scale * (1.0 + gt + gam[t].abs()));
            // G symmetric positive semidefinite and G = (∂γ/∂y) R⁻¹ (differences in v_c,
            // with y = −R⁻¹ v_c: ∂γ/∂v_c = −G).
            for i in 0..k {
                for j in 0..k {
                    assert!(
                        (g[i * k + j] - g[j * k + i]).abs() <= 1e-12 * (1.0 + g[i * k + j].abs())
                    );
                }
            }
            let vc: Vec<f64> = (0..k).map(|i| -r[i] * y[i]).collect();
            for j in 0..k {
                let hstep = 1e-7 * (1.0 + vc[j].abs());
                let mut gp = vec![0.0; k];
                let mut gm = vec![0.0; k];
                let mut vp = vc.clone();
                vp[j] += hstep;
                let yp: Vec<f64> = (0..k).map(|i| -vp[i] / r[i]).collect();
                let rp = project(cone_kind(t, mu), &yp, &r, &mut gp, None);
                let mut vm = vc.clone();
                vm[j] -= hstep;
                let ym: Vec<f64> = (0..k).map(|i| -vm[i] / r[i]).collect();
                let rm = project(cone_kind(t, mu), &ym, &r, &mut gm, None);
                if rp != region || rm != region {
                    continue; // a difference across a region boundary says nothing
                }
                for i in 0..k {
                    let fd = -(gp[i] - gm[i]) / (2.0 * hstep);
                    let an = g[i * k + j];
                    assert!(
                        (fd - an).abs() <= 1e-5 * (1.0 + an.abs()),
                        "trial {trial}: G[{i}][{j}] = {an}, differences {fd}"
                    );
                }
            }
            // PSD: xᵀ G x ≥ 0 for a few x.
            for _ in 0..4 {
                let x: Vec<f64> = (0..k).map(|_| rnd()).collect();
                let q: f64 = (0..k)
                    .map(|i| (0..k).map(|j| x[i] * g[i * k + j] * x[j]).sum::<f64>())
                    .sum();
                let gmax = g.iter().fold(0f64, |a, v| a.max(v.abs()));
                assert!(q >= -1e-12 * gmax);
            }
        }
        assert!(regions.iter().all(|&c| c > 100), "{regions:?}");
    }

    #[test]
    fn unilateral_and_bilateral() {
        let mut gam = [0.0];
        let mut g = [0.0];
        assert_eq!(
            project(
                ConstraintKind::Unilateral,
                &[-2.0],
                &[0.5],
                &mut gam,
                Some(&mut g)
            ),
            Region::Separated
        );
        assert_eq!((gam[0], g[0]), (0.0, 0.0));
        project(
            ConstraintKind::Unilateral,
            &[3.0],
            &[0.5],
            &mut gam,
            Some(&mut g),
        );
        assert_eq!((gam[0], g[0]), (3.0, 2.0));
        project(
            ConstraintKind::Bilateral,
            &[-3.0],
            &[0.25],
            &mut gam,
            Some(&mut g),
        );
        assert_eq!((gam[0], g[0]), (-3.0, 4.0));
    }
}
