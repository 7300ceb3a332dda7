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

/// Monte-Carlo sign test of the conditions `kinds` of the certificate `v` (acceptance test 8
/// of docs/decisions/000-sos-stability.md): up to `samples` states per condition drawn from
/// the unit ball (at most 50 draws per accepted sample); returns the smallest value found.
/// `quartic_weight` is the coefficient of `u⁴ + v⁴ + ω⁴` in a scaled positivity condition.
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
    let conditions = ConditionValues {
        p,
        v,
        dv: (0..6).map(|k| v.diff(k)).collect::<Result<_, _>>()?,
        ptt: method == Method::Ptt,
        l: [p.l(0), p.l(1)],
        quartic_weight,
    };
    for kind in kinds {
        let mut done = 0;
        let mut tries = 0;
        while done < samples && tries < samples * 50 {
            tries += 1;
            let s = sample_ball(&mut rng, 7, 1.0);
            let mut x = [0.0; 6];
            x.copy_from_slice(&s[..6]);
            if !conditions.ptt {
                x[Y] = 0.0;
            }
            let Some(val) = conditions.at(kind, x, &mut rng)? else {
                continue;
            };
            done += 1;
            worst = worst.min(val);
        }
    }
    Ok(worst)
}

/// A pre-impact state `w`, the post-impact state `x₀`, the next pre-impact state `x⁻` and
/// its contact ([`ConditionValues::impact_then_flight`]).
type FlightChain = ([f64; 6], [f64; 6], [f64; 6], usize);

/// The conditions of a certificate `v` evaluated on physical states, for [`monte_carlo`].
struct ConditionValues<'a> {
    p: &'a PlanarParams,
    /// The certificate.
    v: &'a Poly,
    /// Its gradient `∂V/∂x_k`.
    dv: Vec<Poly>,
    /// The PTT baseline (a general `V`) rather than `V₂ = y + P`.
    ptt: bool,
    /// Contact positions `l₁, l₂`.
    l: [f64; 2],
    /// Coefficient of `u⁴ + v⁴ + ω⁴` in a scaled positivity condition.
    quartic_weight: f64,
}

impl ConditionValues<'_> {
    /// The value of condition `kind` at the state made from the ball sample `x` (and draws
    /// from `rng` where the condition chains events); `None` when it lies outside the
    /// condition's set.
    fn at<R: Rng>(&self, kind: &Kind, x: [f64; 6], rng: &mut R) -> Result<Option<f64>, SosError> {
        match *kind {
            Kind::PositivityScaled | Kind::Positivity => self.positivity(kind, &x),
            Kind::Flow(mode, acc) => self.flow(mode, acc, x),
            Kind::ImpactClosed => self.impact_closed(x, rng),
            Kind::FlightAfterImpact => self.flight_after_impact(x, rng),
            Kind::FlightPreImpact => self.flight_pre_impact(x, rng),
            Kind::Impact(i) => self.impact(i, x),
            Kind::FlightImpact(i) => self.flight_impact(i, x, rng),
        }
    }

    /// Positivity on `{γ₁ ≥ 0, γ₂ ≥ 0}` (paper eq. 54): `P − u⁴ − v⁴ − ω⁴` (with the quartic
    /// weight when scaled), `V` itself for PTT.
    fn positivity(&self, kind: &Kind, x: &[f64; 6]) -> Result<Option<f64>, SosError> {
        let (p, v, ptt) = (self.p, self.v, self.ptt);
        if p.gamma(x, 0) < 0.0 || p.gamma(x, 1) < 0.0 || norm2(x) > 1.0 {
            return Ok(None);
        }
        if *kind == Kind::PositivityScaled {
            return Ok(Some(
                v.eval(x)?
                    - x[Y]
                    - self.quartic_weight * (x[U].powi(4) + x[V].powi(4) + x[W].powi(4)),
            ));
        }
        let pv = v.eval(x)?
            - if ptt {
                0.0
            } else {
                x[U].powi(4) + x[V].powi(4) + x[W].powi(4)
            };
        // V₂ − y = P for the multi-V form.
        Ok(Some(pv - if ptt { 0.0 } else { x[Y] }))
    }

    /// `−∇V·ẋ` in contact mode `mode` (accelerations `acc`), the sample projected onto the
    /// mode's set.
    fn flow(&self, mode: Mode, acc: [f64; 3], mut x: [f64; 6]) -> Result<Option<f64>, SosError> {
        let (p, l) = (self.p, self.l);
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
        if !ok_slip || p.gamma(&x, 0) < -1e-12 || p.gamma(&x, 1) < -1e-12 || norm2(&x) > 1.0 {
            return Ok(None);
        }
        let f = [x[U], x[V], x[W], acc[0], acc[1], acc[2]];
        let mut d = 0.0;
        for (dvk, fk) in self.dv.iter().zip(f) {
            d += dvk.eval(&x)? * fk;
        }
        Ok(Some(-d))
    }

    /// An impact with both contacts closed, the other contact not approaching.
    fn impact_closed<R: Rng>(&self, mut x: [f64; 6], rng: &mut R) -> Result<Option<f64>, SosError> {
        let (p, v) = (self.p, self.v);
        let i = rng.gen_range(0..2usize);
        x[Z] = 0.0;
        x[TH] = 0.0;
        if p.gamma_dot(&x, 1 - i) < 0.0 || norm2(&x) > 1.0 {
            return Ok(None);
        }
        let Some((xp, _, _)) = p.impact(&x, i) else {
            return Ok(None);
        };
        Ok(Some(v.eval(&x)? - v.eval(&xp)?))
    }

    /// An impact at a random contact `k` from the pre-impact state `w` made from the sample
    /// (`γ_k = 0`, the other gap open) and the ballistic flight from `x₀ = M_k(w)` to the
    /// next pre-impact state `x⁻` at the contact `i` that lands first: `(w, x₀, x⁻, i)`.
    fn impact_then_flight<R: Rng>(&self, mut x: [f64; 6], rng: &mut R) -> Option<FlightChain> {
        let p = self.p;
        let k = rng.gen_range(0..2usize);
        x[Z] = -self.l[k] * x[TH];
        if p.gamma(&x, 1 - k) < 0.0 || norm2(&x) > 1.0 {
            return None;
        }
        let (x0, _, _) = p.impact(&x, k)?;
        let (xm, i) = ballistic_to_impact(p, &x0)?;
        Some((x, x0, xm, i))
    }

    /// A previous impact at `k` from `w`, the ballistic flight from `x₀ = M_k(w)` to the next
    /// impact (whichever contact lands first), and that impact: `V(x₀) − V(x⁺)`.
    fn flight_after_impact<R: Rng>(
        &self,
        x: [f64; 6],
        rng: &mut R,
    ) -> Result<Option<f64>, SosError> {
        let Some((_, x0, xm, i)) = self.impact_then_flight(x, rng) else {
            return Ok(None);
        };
        let Some((xp, _, _)) = self.p.impact(&xm, i) else {
            return Ok(None);
        };
        Ok(Some(self.v.eval(&x0)? - self.v.eval(&xp)?))
    }

    /// A pre-impact state `w` at `k`, the impact, and the ballistic flight from `M_k(w)` to
    /// the next pre-impact state `x⁻` (whichever contact lands first): `V(w) − V(x⁻)`.
    fn flight_pre_impact<R: Rng>(&self, x: [f64; 6], rng: &mut R) -> Result<Option<f64>, SosError> {
        let Some((w, _, xm, _)) = self.impact_then_flight(x, rng) else {
            return Ok(None);
        };
        Ok(Some(self.v.eval(&w)? - self.v.eval(&xm)?))
    }

    /// The pre- and post-impact states of an impact at contact `i` made from the sample
    /// (`γ_i = 0`, the other gap open), `None` outside the set or when there is no impact.
    fn impact_states(&self, i: usize, mut x: [f64; 6]) -> Option<([f64; 6], [f64; 6])> {
        let p = self.p;
        x[Z] = -self.l[i] * x[TH];
        if p.gamma(&x, 1 - i) < 0.0 || norm2(&x) > 1.0 {
            return None;
        }
        p.impact(&x, i).map(|(xp, _, _)| (x, xp))
    }

    /// A plain impact at contact `i`: `V(x⁻) − V(x⁺)`.
    fn impact(&self, i: usize, x: [f64; 6]) -> Result<Option<f64>, SosError> {
        let Some((x, xp)) = self.impact_states(i, x) else {
            return Ok(None);
        };
        Ok(Some(self.v.eval(&x)? - self.v.eval(&xp)?))
    }

    /// A flight that starts at a contact `k` with `γ_k = 0` (see
    /// [`flight_any_start`](super::flight::flight_any_start)) and ends with the impact at
    /// `i`: `V(x₀) − V(x⁺)`.
    fn flight_impact<R: Rng>(
        &self,
        i: usize,
        x: [f64; 6],
        rng: &mut R,
    ) -> Result<Option<f64>, SosError> {
        let (p, v, l) = (self.p, self.v, self.l);
        let Some((mut x, _)) = self.impact_states(i, x) else {
            return Ok(None);
        };
        let a = p.a_ff();
        let ca = p.alpha.cos();
        let k = rng.gen_range(0..2usize);
        let gd = p.gamma_dot(&x, i);
        let dl = if k == i {
            -2.0 * gd / ca
        } else {
            let dmax = 2.0 * (1.0 + l[i].abs()) / ca;
            let dl = rng.gen_range(0.0..=dmax);
            x[TH] = ((x[V] + l[k] * x[W]) * dl + 0.5 * ca * dl * dl) / (l[k] - l[i]);
            x[Z] = -l[i] * x[TH];
            dl
        };
        if dl < 0.0 || p.gamma(&x, 1 - i) < 0.0 || norm2(&x) > 1.0 {
            return Ok(None);
        }
        let Some((xp, _, _)) = p.impact(&x, i) else {
            return Ok(None);
        };
        let mut x0 = x;
        x0[Y] = x[Y] - x[U] * dl + 0.5 * a[0] * dl * dl;
        x0[Z] = x[Z] - x[V] * dl + 0.5 * a[1] * dl * dl;
        x0[TH] = x[TH] - x[W] * dl;
        x0[U] = x[U] - a[0] * dl;
        x0[V] = x[V] - a[1] * dl;
        if p.gamma(&x0, 0) < -1e-9 || p.gamma(&x0, 1) < -1e-9 {
            return Ok(None);
        }
        Ok(Some(v.eval(&x0)? - v.eval(&xp)?))
    }
}
