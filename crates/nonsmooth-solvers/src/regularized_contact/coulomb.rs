//! The impulse map of the Coulomb kinds and its generalized derivative: the
//! non-associated friction law of P. Alart and A. Curnier, "A mixed formulation for
//! frictional contact problems prone to Newton like solution methods", Computer Methods
//! in Applied Mechanics and Engineering 92(3), 1991 (the augmented-Lagrangian
//! complementarity function of their §3, with the penalty `R⁻¹` of each row).
//!
//! Rows are ordered tangents first, normal last. With `y = −R⁻¹(v_c − v̂)`:
//!
//! ```text
//! γ_n = max(0, y_n),   γ_t = P_{‖·‖ ≤ μγ_n}(y_t),
//! ```
//!
//! the max() law of the normal row alone and the Euclidean projection of the tangential
//! trial impulse onto the disk of radius `μγ_n` (for equal tangential regularizations the
//! R-weighted projection onto the disk is the Euclidean one). Unlike the projection onto
//! the cone (Castro et al. 2022, SAP §V-B), the normal impulse does not depend on the
//! tangential velocity, so the map is no gradient: its derivative `D = ∂γ/∂y` has the
//! one-sided block `∂γ_t/∂y_n = μ t̂` on a sliding contact and none in `∂γ_n/∂y_t`.
//!
//! - separation, `y_n ≤ 0`: `γ = 0`, `D = 0`;
//! - stiction, `‖y_t‖ ≤ μ y_n`: `γ = y`, `D = I`;
//! - sliding, otherwise (`t̂ = y_t/‖y_t‖`): `γ_t = μ y_n t̂`,
//!   `∂γ_t/∂y_t = (μ y_n/‖y_t‖)(I − t̂t̂ᵀ)`, `∂γ_t/∂y_n = μ t̂`, `∂γ_n/∂y_n = 1`.
//!
//! On the kinks (`y_n = 0`, `‖y_t‖ = μ y_n`) the element of the generalized Jacobian of
//! the neighbouring region named first above is returned.

use super::region::Region;

/// Computes `γ` of the Coulomb kind with `T` tangent rows into `gamma` and, when `g` is
/// given, `G = (∂γ/∂y) R⁻¹` (`(T+1) × (T+1)`, row-major, not symmetric when sliding).
pub(crate) fn coulomb_map<const T: usize>(
    mu: f64,
    y: &[f64],
    r: &[f64],
    gamma: &mut [f64],
    g: Option<&mut [f64]>,
) -> Region {
    let k = T + 1;
    let yn = y[T];
    if yn <= 0.0 {
        gamma[..k].fill(0.0);
        if let Some(g) = g {
            g[..k * k].fill(0.0);
        }
        return Region::Separated;
    }
    let radius = mu * yn;
    let yr = y[..T].iter().map(|x| x * x).sum::<f64>().sqrt();
    if yr <= radius {
        gamma[..k].copy_from_slice(&y[..k]);
        if let Some(g) = g {
            g[..k * k].fill(0.0);
            for i in 0..k {
                g[i * k + i] = 1.0 / r[i];
            }
        }
        return Region::Inside;
    }
    // Sliding: yr > radius ≥ 0.
    let c = radius / yr;
    let mut that = [0.0; T];
    for i in 0..T {
        that[i] = y[i] / yr;
        gamma[i] = c * y[i];
    }
    gamma[T] = yn;
    if let Some(g) = g {
        g[..k * k].fill(0.0);
        for i in 0..T {
            for j in 0..T {
                let id = if i == j { 1.0 } else { 0.0 };
                g[i * k + j] = c * (id - that[i] * that[j]) / r[j];
            }
            g[i * k + T] = mu * that[i] / r[T];
        }
        g[T * k + T] = 1.0 / r[T];
    }
    Region::Sliding
}

#[cfg(test)]
mod tests {
    use super::*;

    /// γ lies in the cone, satisfies the law's three cases, and G matches central
    /// differences of γ in `v_c` (`∂γ/∂v_c = −G`) away from the kinks.
    #[test]
    fn coulomb_map_is_the_law_and_derivative_matches_differences() {
        let mut state = 987654321u64;
        let mut rnd = move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        };
        let mut regions = [0usize; 3];
        for trial in 0..2000 {
            let t = 1 + trial % 2;
            let k = t + 1;
            let mu = 1.2 * rnd().abs();
            let rt = 10f64.powf(2.0 * rnd());
            let rn = 10f64.powf(2.0 * rnd());
            let mut r = vec![rt; k];
            r[t] = rn;
            let y: Vec<f64> = (0..k).map(|_| rnd()).collect();
            let map = |y: &[f64], gam: &mut [f64], g: Option<&mut [f64]>| {
                if t == 2 {
                    coulomb_map::<2>(mu, y, &r, gam, g)
                } else {
                    coulomb_map::<1>(mu, y, &r, gam, g)
                }
            };
            let mut gam = vec![0.0; k];
            let mut g = vec![0.0; k * k];
            let region = map(&y, &mut gam, Some(&mut g));
            regions[region as usize] += 1;
            assert_eq!(gam[t], y[t].max(0.0));
            let gt = gam[..t].iter().map(|x| x * x).sum::<f64>().sqrt();
            let yt = y[..t].iter().map(|x| x * x).sum::<f64>().sqrt();
            assert!(gt <= mu * gam[t] * (1.0 + 1e-14));
            if region == Region::Sliding {
                // On the boundary, along y_t.
                assert!((gt - mu * gam[t]).abs() <= 1e-14 * (1.0 + gt));
                for i in 0..t {
                    assert!((gam[i] * yt - y[i] * gt).abs() <= 1e-14 * (1.0 + yt));
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
                let rp = map(&yp, &mut gp, None);
                let mut vm = vc.clone();
                vm[j] -= hstep;
                let ym: Vec<f64> = (0..k).map(|i| -vm[i] / r[i]).collect();
                let rm = map(&ym, &mut gm, None);
                if rp != region || rm != region {
                    continue;
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
        }
        assert!(regions.iter().all(|&c| c > 100), "{regions:?}");
    }
}
