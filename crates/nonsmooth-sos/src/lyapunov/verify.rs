//! Post-check of a certificate, independent of the substitutions of the SOS program: a
//! Monte-Carlo sign test of every condition of Theorem 2 on physical states (acceptance test 8 of
//! docs/decisions/000-sos-stability.md), with the impact through [`PlanarParams::impact`] and the
//! exact ballistic flight to the next touchdown.

use rand::{Rng, SeedableRng};

use super::build::{build, Kind};
use super::types::{CertifyOptions, Method};
use crate::planar::{ContactState, Mode, PlanarParams, TH, U, V, W, Y, Z};
use crate::poly::Poly;
use crate::SosError;

/// The ballistic (FF) flight from `x0` to the first touchdown: returns the pre-impact state
/// and the landing contact, `None` when no contact lands.
pub(super) fn ballistic_to_impact(p: &PlanarParams, x0: &[f64; 6]) -> Option<([f64; 6], usize)> {
    let ca = p.alpha.cos();
    let a = p.a_ff();
    let mut best: Option<(f64, usize)> = None;
    for c in 0..2 {
        let (g0, gd0) = (p.gamma(x0, c), p.gamma_dot(x0, c));
        if g0 < -1e-12 {
            return None;
        }
        // Largest root of g0 + gd0 t − ½ cosα t² = 0.
        let t = (gd0 + (gd0 * gd0 + 2.0 * ca * g0.max(0.0)).sqrt()) / ca;
        if best.is_none_or(|(tb, _)| t < tb) {
            best = Some((t, c));
        }
    }
    let (t, i) = best?;
    let mut xm = *x0;
    xm[Y] += x0[U] * t + 0.5 * a[0] * t * t;
    xm[Z] += x0[V] * t + 0.5 * a[1] * t * t;
    xm[TH] += x0[W] * t;
    xm[U] += a[0] * t;
    xm[V] += a[1] * t;
    Some((xm, i))
}

pub(super) fn sample_ball<R: Rng>(rng: &mut R, n: usize, r: f64) -> Vec<f64> {
    loop {
        let x: Vec<f64> = (0..n).map(|_| rng.gen_range(-r..r)).collect();
        if x.iter().map(|a| a * a).sum::<f64>() <= r * r {
            return x;
        }
    }
}

fn norm2(x: &[f64; 6]) -> f64 {
    x[1..].iter().map(|a| a * a).sum()
}

/// Monte-Carlo sign test of every condition on physical states (acceptance test 8 of
/// docs/decisions/000-sos-stability.md). Returns the smallest condition value found (conditions are
/// scaled by their samples' sizes only through the ball, i.e. not at all).
pub fn monte_carlo_check(
    p: &PlanarParams,
    method: Method,
    v: &Poly,
    samples: usize,
    seed: u64,
) -> Result<f64, SosError> {
    let (_, _, kinds, _) = build(
        p,
        method,
        CertifyOptions::default().flight,
        CertifyOptions::default().v2_degree,
    )?;
    monte_carlo(p, method, v, 0.0, &kinds, samples, seed)
}

pub(super) fn monte_carlo(
    p: &PlanarParams,
    method: Method,
    v: &Poly,
    quartic_weight: f64,
    kinds: &[Kind],
    samples: usize,
    seed: u64,
) -> Result<f64, SosError> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut worst = f64::INFINITY;
    let dv: Vec<Poly> = (0..6).map(|k| v.diff(k)).collect::<Result<_, _>>()?;
    let ptt = method == Method::Ptt;
    let l = [p.l(0), p.l(1)];
    for kind in kinds {
        let mut done = 0;
        let mut tries = 0;
        while done < samples && tries < samples * 50 {
            tries += 1;
            let s = sample_ball(&mut rng, 7, 1.0);
            let mut x = [0.0; 6];
            x.copy_from_slice(&s[..6]);
            if !ptt {
                x[Y] = 0.0;
            }
            let val = match *kind {
                Kind::PositivityScaled => {
                    if p.gamma(&x, 0) < 0.0 || p.gamma(&x, 1) < 0.0 || norm2(&x) > 1.0 {
                        continue;
                    }
                    v.eval(&x)?
                        - x[Y]
                        - quartic_weight * (x[U].powi(4) + x[V].powi(4) + x[W].powi(4))
                }
                Kind::Positivity => {
                    if p.gamma(&x, 0) < 0.0 || p.gamma(&x, 1) < 0.0 || norm2(&x) > 1.0 {
                        continue;
                    }
                    let pv = v.eval(&x)?
                        - if ptt {
                            0.0
                        } else {
                            x[U].powi(4) + x[V].powi(4) + x[W].powi(4)
                        };
                    // V₂ − y = P for the multi-V form.
                    pv - if ptt { 0.0 } else { x[Y] }
                }
                Kind::Flow(mode, acc) => {
                    let Mode(a, b) = mode;
                    let active: Vec<usize> = [a, b]
                        .iter()
                        .enumerate()
                        .filter(|(_, st)| **st != ContactState::Free)
                        .map(|(k, _)| k)
                        .collect();
                    match active.len() {
                        1 => {
                            let i = active[0];
                            x[Z] = -l[i] * x[TH];
                            x[V] = -l[i] * x[W];
                            if [a, b].contains(&ContactState::Stick) {
                                x[U] = -p.h * x[W];
                            }
                        }
                        2 => {
                            x[Z] = 0.0;
                            x[TH] = 0.0;
                            x[V] = 0.0;
                            x[W] = 0.0;
                        }
                        _ => {}
                    }
                    let sd = p.sigma_dot(&x);
                    let ok_slip = match (a, b) {
                        (ContactState::Pos, _) | (_, ContactState::Pos) => sd >= 0.0,
                        (ContactState::Neg, _) | (_, ContactState::Neg) => sd <= 0.0,
                        _ => true,
                    };
                    if !ok_slip
                        || p.gamma(&x, 0) < -1e-12
                        || p.gamma(&x, 1) < -1e-12
                        || norm2(&x) > 1.0
                    {
                        continue;
                    }
                    let f = [x[U], x[V], x[W], acc[0], acc[1], acc[2]];
                    let mut d = 0.0;
                    for k in 0..6 {
                        d += dv[k].eval(&x)? * f[k];
                    }
                    -d
                }
                Kind::ImpactClosed => {
                    // Both contacts closed; the other contact not approaching.
                    let i = rng.gen_range(0..2usize);
                    x[Z] = 0.0;
                    x[TH] = 0.0;
                    if p.gamma_dot(&x, 1 - i) < 0.0 || norm2(&x) > 1.0 {
                        continue;
                    }
                    let Some((xp, _, _)) = p.impact(&x, i) else {
                        continue;
                    };
                    v.eval(&x)? - v.eval(&xp)?
                }
                Kind::FlightAfterImpact => {
                    // A previous impact at k from w, the ballistic flight from x₀ = M_k(w) to
                    // the next impact (whichever contact lands first), and that impact.
                    let k = rng.gen_range(0..2usize);
                    x[Z] = -l[k] * x[TH];
                    if p.gamma(&x, 1 - k) < 0.0 || norm2(&x) > 1.0 {
                        continue;
                    }
                    let Some((x0, _, _)) = p.impact(&x, k) else {
                        continue;
                    };
                    let Some((xm, i)) = ballistic_to_impact(p, &x0) else {
                        continue;
                    };
                    let Some((xp, _, _)) = p.impact(&xm, i) else {
                        continue;
                    };
                    v.eval(&x0)? - v.eval(&xp)?
                }
                Kind::FlightPreImpact => {
                    // A pre-impact state w at k, the impact, and the ballistic flight from
                    // M_k(w) to the next pre-impact state (whichever contact lands first).
                    let k = rng.gen_range(0..2usize);
                    x[Z] = -l[k] * x[TH];
                    if p.gamma(&x, 1 - k) < 0.0 || norm2(&x) > 1.0 {
                        continue;
                    }
                    let Some((x0, _, _)) = p.impact(&x, k) else {
                        continue;
                    };
                    let Some((xm, _)) = ballistic_to_impact(p, &x0) else {
                        continue;
                    };
                    v.eval(&x)? - v.eval(&xm)?
                }
                Kind::Impact(i) | Kind::FlightImpact(i) => {
                    x[Z] = -l[i] * x[TH];
                    if p.gamma(&x, 1 - i) < 0.0 || norm2(&x) > 1.0 {
                        continue;
                    }
                    let Some((xp, _, _)) = p.impact(&x, i) else {
                        continue;
                    };
                    if let Kind::FlightImpact(_) = kind {
                        // Flights that start at a contact k with γ_k = 0 (see `build`).
                        let a = p.a_ff();
                        let ca = p.alpha.cos();
                        let k = rng.gen_range(0..2usize);
                        let gd = p.gamma_dot(&x, i);
                        let dl = if k == i {
                            -2.0 * gd / ca
                        } else {
                            let dmax = 2.0 * (1.0 + l[i].abs()) / ca;
                            let dl = rng.gen_range(0.0..=dmax);
                            x[TH] =
                                ((x[V] + l[k] * x[W]) * dl + 0.5 * ca * dl * dl) / (l[k] - l[i]);
                            x[Z] = -l[i] * x[TH];
                            dl
                        };
                        if dl < 0.0 || p.gamma(&x, 1 - i) < 0.0 || norm2(&x) > 1.0 {
                            continue;
                        }
                        let Some((xp, _, _)) = p.impact(&x, i) else {
                            continue;
                        };
                        let mut x0 = x;
                        x0[Y] = x[Y] - x[U] * dl + 0.5 * a[0] * dl * dl;
                        x0[Z] = x[Z] - x[V] * dl + 0.5 * a[1] * dl * dl;
                        x0[TH] = x[TH] - x[W] * dl;
                        x0[U] = x[U] - a[0] * dl;
                        x0[V] = x[V] - a[1] * dl;
                        if p.gamma(&x0, 0) < -1e-9 || p.gamma(&x0, 1) < -1e-9 {
                            continue;
                        }
                        v.eval(&x0)? - v.eval(&xp)?
                    } else {
                        v.eval(&x)? - v.eval(&xp)?
                    }
                }
            };
            done += 1;
            worst = worst.min(val);
        }
    }
    Ok(worst)
}
