//! Event-driven simulator of the zero-order-dynamics (ZOD) hybrid model
//! (docs/decisions/000-sos-stability.md, model) and the falsification test built on it (a check
//! beyond the paper).
//!
//! In each mode the accelerations are constant, so the motion is a parabola and the events
//! (a free contact reaching `γ = 0`, the slip velocity `σ̇` crossing 0) are roots of
//! polynomials of degree ≤ 2, found in closed form. Impacts (`γ_i = 0`, `γ̇_i < 0`) apply the
//! Kane–Levinson map [`PlanarParams::impact`]. The mode at a contact state is chosen among the
//! consistent ones in a fixed order (stick before slip, keeping contacts before lifting).

use rand::{Rng, SeedableRng};
use serde::Serialize;

use crate::poly::Poly;
use crate::SosError;

use crate::planar::{ContactState, Mode, ModeDynamics, PlanarParams, TH, U, V, W, Y, Z};

/// Options of [`simulate`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SimOptions {
    /// Final time.
    pub t_max: f64,
    /// Event budget (Zeno sequences of bounces stop here).
    pub max_events: usize,
    /// Velocity tolerance under which a contact counts as persistent and `σ̇` as zero.
    pub vel_tol: f64,
}

impl Default for SimOptions {
    fn default() -> Self {
        Self {
            t_max: 20.0,
            max_events: 2000,
            vel_tol: 1e-10,
        }
    }
}

/// How a simulation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum SimEnd {
    /// Came to rest in the static mode SS.
    Rest,
    /// Reached `t_max`.
    Horizon,
    /// Event budget exhausted.
    EventLimit,
    /// No consistent mode (Painlevé-type indeterminacy or inconsistency).
    Undetermined,
}

/// Result of [`simulate`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SimResult {
    /// Largest Euclidean norm of the state (distance to the equilibrium `x = 0`) over
    /// the sampled instants (events and step midpoints).
    pub max_excursion: f64,
    /// Final state.
    pub final_state: [f64; 6],
    /// Final time.
    pub t_end: f64,
    /// Number of mode switches and impacts.
    pub events: usize,
    /// How it ended.
    pub end: SimEnd,
}

fn norm(x: &[f64; 6]) -> f64 {
    x.iter().map(|a| a * a).sum::<f64>().sqrt()
}

fn mode(a: ContactState, b: ContactState) -> Mode {
    Mode(a, b)
}

/// Picks the ZOD mode at state `x` with persistent contacts `active`.
fn select_mode(
    p: &PlanarParams,
    x: &[f64; 6],
    active: &[bool; 2],
    vt: f64,
) -> Option<ModeDynamics> {
    use ContactState::*;
    let ok = |m: Mode| p.mode_dynamics(m).filter(|d| d.forces_admissible(p));
    let sd = p.sigma_dot(x);
    let slip = |s: f64| if s > 0.0 { Pos } else { Neg };
    let single = |i: usize, st: ContactState| {
        if i == 0 {
            mode(st, Free)
        } else {
            mode(Free, st)
        }
    };
    match active {
        [false, false] => ok(mode(Free, Free)),
        [a, _] if *a != active[1] => {
            let i = if *a { 0 } else { 1 };
            if sd.abs() > vt {
                return ok(single(i, slip(sd)));
            }
            if let Some(d) = ok(single(i, Stick)) {
                return Some(d);
            }
            [1.0, -1.0]
                .into_iter()
                .find_map(|s| ok(single(i, slip(s))).filter(|d| s * d.sigma_ddot(p) > 0.0))
        }
        _ => {
            let lift_ok = |d: &ModeDynamics, j: usize| d.gamma_ddot(p, j) >= 0.0;
            if sd.abs() > vt {
                let s = slip(sd);
                if let Some(d) = ok(mode(s, s)) {
                    return Some(d);
                }
                if let Some(d) = ok(single(0, s)).filter(|d| lift_ok(d, 1)) {
                    return Some(d);
                }
                return ok(single(1, s)).filter(|d| lift_ok(d, 0));
            }
            if let Some(d) = ok(mode(Stick, Stick)) {
                return Some(d);
            }
            if let Some(d) = ok(single(0, Stick)).filter(|d| lift_ok(d, 1)) {
                return Some(d);
            }
            if let Some(d) = ok(single(1, Stick)).filter(|d| lift_ok(d, 0)) {
                return Some(d);
            }
            for s in [1.0, -1.0] {
                let st = slip(s);
                let cands = [
                    ok(mode(st, st)),
                    ok(single(0, st)).filter(|d| lift_ok(d, 1)),
                    ok(single(1, st)).filter(|d| lift_ok(d, 0)),
                ];
                if let Some(d) = cands
                    .into_iter()
                    .flatten()
                    .find(|d| s * d.sigma_ddot(p) > 0.0)
                {
                    return Some(d);
                }
            }
            None
        }
    }
}

/// Smallest root `t > t_min` of `c + b t + ½ a t²` at which the value becomes negative.
fn first_crossing(c: f64, b: f64, a: f64, t_min: f64) -> Option<f64> {
    let qa = 0.5 * a;
    let mut roots = Vec::new();
    if qa.abs() < 1e-300 {
        if b.abs() > 0.0 {
            roots.push(-c / b);
        }
    } else {
        let disc = b * b - 4.0 * qa * c;
        if disc >= 0.0 {
            let sq = disc.sqrt();
            roots.push((-b - sq) / (2.0 * qa));
            roots.push((-b + sq) / (2.0 * qa));
        }
    }
    roots
        .into_iter()
        .filter(|t| *t > t_min && (b + a * t) <= 0.0)
        .fold(None, |acc: Option<f64>, t| {
            Some(acc.map_or(t, |a| a.min(t)))
        })
}

/// What happened at a recorded instant of [`simulate_traced`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum EventKind {
    /// The state just before an impact at the contact (0 or 1).
    PreImpact(usize),
    /// The end of a segment of constant mode (mode switch, contact landing, slip stop, rest
    /// or horizon); the mode that was active during the segment.
    SegmentEnd(Mode),
}

/// One recorded instant of [`simulate_traced`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SimEvent {
    /// Time.
    pub t: f64,
    /// State at that instant (before the impulse for [`EventKind::PreImpact`]).
    pub state: [f64; 6],
    /// What happened.
    pub kind: EventKind,
}

/// Simulates the ZOD hybrid system from `x0` (state relative to the equilibrium).
pub fn simulate(p: &PlanarParams, x0: &[f64; 6], opts: &SimOptions) -> SimResult {
    simulate_impl(p, x0, opts, &mut |_| {})
}

/// As [`simulate`], also returning every event instant: the pre-impact states and the ends
/// of the constant-mode segments (acceptance test 8 of docs/decisions/000-sos-stability.md: the
/// certificate `V₂` evaluated at the event times of the hybrid simulation).
pub fn simulate_traced(
    p: &PlanarParams,
    x0: &[f64; 6],
    opts: &SimOptions,
) -> (SimResult, Vec<SimEvent>) {
    let mut ev = Vec::new();
    let r = simulate_impl(p, x0, opts, &mut |e| ev.push(e));
    (r, ev)
}

fn simulate_impl(
    p: &PlanarParams,
    x0: &[f64; 6],
    opts: &SimOptions,
    record: &mut dyn FnMut(SimEvent),
) -> SimResult {
    let mut x = *x0;
    let mut t = 0.0;
    let mut events = 0;
    let mut max_exc = norm(&x);
    let gtol = 1e-12;
    let vt = opts.vel_tol;
    let end = loop {
        if events >= opts.max_events {
            break SimEnd::EventLimit;
        }
        if t >= opts.t_max {
            break SimEnd::Horizon;
        }
        // Impacts.
        let mut impacted = false;
        for i in 0..2 {
            if p.gamma(&x, i) <= gtol && p.gamma_dot(&x, i) < -vt {
                record(SimEvent {
                    t,
                    state: x,
                    kind: EventKind::PreImpact(i),
                });
                match p.impact(&x, i) {
                    Some((xp, _, _)) => {
                        x = xp;
                        impacted = true;
                    }
                    None => return finish(x, t, events, max_exc, SimEnd::Undetermined),
                }
            }
        }
        if impacted {
            events += 1;
            max_exc = max_exc.max(norm(&x));
            continue;
        }
        let active = [0, 1].map(|i| p.gamma(&x, i) <= gtol && p.gamma_dot(&x, i).abs() <= vt);
        let Some(md) = select_mode(p, &x, &active, vt) else {
            break SimEnd::Undetermined;
        };
        if md.mode == Mode(ContactState::Stick, ContactState::Stick) {
            break SimEnd::Rest;
        }
        let a = md.accel;
        let Mode(s1, s2) = md.mode;
        let mut dt = opts.t_max - t;
        let mut stop_slip = false;
        for (j, st) in [s1, s2].iter().enumerate() {
            if *st == ContactState::Free {
                let (g, gd, gdd) = (p.gamma(&x, j), p.gamma_dot(&x, j), md.gamma_ddot(p, j));
                if let Some(tc) = first_crossing(g.max(0.0), gd, gdd, 1e-14) {
                    dt = dt.min(tc);
                }
            }
        }
        let slipping = [s1, s2]
            .iter()
            .any(|s| matches!(s, ContactState::Pos | ContactState::Neg));
        if slipping {
            let (sd, sdd) = (p.sigma_dot(&x), md.sigma_ddot(p));
            if sd * sdd < 0.0 {
                let ts = -sd / sdd;
                if ts < dt {
                    dt = ts;
                    stop_slip = true;
                }
            }
        }
        let dt = dt.max(0.0);
        let adv = |x: &[f64; 6], h: f64| -> [f64; 6] {
            let mut y = *x;
            y[Y] += x[U] * h + 0.5 * a[0] * h * h;
            y[Z] += x[V] * h + 0.5 * a[1] * h * h;
            y[TH] += x[W] * h + 0.5 * a[2] * h * h;
            y[U] += a[0] * h;
            y[V] += a[1] * h;
            y[W] += a[2] * h;
            y
        };
        max_exc = max_exc.max(norm(&adv(&x, 0.5 * dt)));
        x = adv(&x, dt);
        if stop_slip {
            x[U] = -p.h * x[W];
        }
        max_exc = max_exc.max(norm(&x));
        t += dt;
        events += 1;
        record(SimEvent {
            t,
            state: x,
            kind: EventKind::SegmentEnd(md.mode),
        });
        if dt == 0.0 && !stop_slip {
            // No progress possible (degenerate event); treat as undetermined.
            break SimEnd::Undetermined;
        }
    };
    finish(x, t, events, max_exc, end)
}

fn finish(x: [f64; 6], t: f64, events: usize, max_exc: f64, end: SimEnd) -> SimResult {
    SimResult {
        max_excursion: max_exc,
        final_state: x,
        t_end: t,
        events,
        end,
    }
}

/// Result of [`falsify`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Falsification {
    /// Number of perturbed runs.
    pub samples: usize,
    /// Perturbation radius.
    pub radius: f64,
    /// Largest excursion over all runs.
    pub max_excursion: f64,
    /// Runs whose excursion exceeded `divergence_factor · radius`.
    pub diverged: usize,
    /// Runs that ended without a consistent mode.
    pub undetermined: usize,
    /// Initial state (relative to the equilibrium) of the first run that diverged: replay it
    /// with [`simulate_traced`] for the trajectory that leaves.
    pub first_diverged_start: Option<[f64; 6]>,
}

impl Falsification {
    /// True when some run diverged.
    pub fn any_diverged(&self) -> bool {
        self.diverged > 0
    }
}

/// One rejection-sampling draw of a perturbation uniform in the cube of half-width
/// `radius`: kept (`Some`) when it lies in the ball of `radius` and both gaps are
/// non-negative (`γ₁, γ₂ ≥ 0`), else `None`.
fn admissible_perturbation(
    p: &PlanarParams,
    rng: &mut rand_chacha::ChaCha8Rng,
    radius: f64,
) -> Option<[f64; 6]> {
    let x: [f64; 6] = std::array::from_fn(|_| rng.gen_range(-radius..radius));
    (norm(&x) <= radius && p.gamma(&x, 0) >= 0.0 && p.gamma(&x, 1) >= 0.0).then_some(x)
}

/// Perturbs the equilibrium randomly (uniform in the ball of `radius` intersected with
/// `γ₁, γ₂ ≥ 0`) and simulates each sample; a run diverges when its excursion exceeds
/// `divergence_factor · radius`. A non-positive or non-finite radius runs no sample.
pub fn falsify(
    p: &PlanarParams,
    samples: usize,
    radius: f64,
    divergence_factor: f64,
    seed: u64,
    opts: &SimOptions,
) -> Falsification {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut out = Falsification {
        samples,
        radius,
        max_excursion: 0.0,
        diverged: 0,
        undetermined: 0,
        first_diverged_start: None,
    };
    if !(radius.is_finite() && radius > 0.0) {
        out.samples = 0;
        return out;
    }
    let mut done = 0;
    while done < samples {
        let Some(x) = admissible_perturbation(p, &mut rng, radius) else {
            continue;
        };
        done += 1;
        let r = simulate(p, &x, opts);
        out.max_excursion = out.max_excursion.max(r.max_excursion);
        if r.max_excursion > divergence_factor * radius {
            out.diverged += 1;
            out.first_diverged_start.get_or_insert(x);
        }
        if r.end == SimEnd::Undetermined {
            out.undetermined += 1;
        }
    }
    out
}

/// Result of [`certificate_along_events`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EventMonotonicity {
    /// Number of perturbed runs.
    pub samples: usize,
    /// Number of consecutive sample pairs compared over all runs.
    pub comparisons: usize,
    /// Number of impacts met over all runs.
    pub impacts: usize,
    /// Largest increase `V(s_{k+1}) − V(s_k)` between consecutive samples (negative when
    /// `V` decreased everywhere).
    pub max_increase: f64,
    /// Largest `|V|` over all samples (the scale of `max_increase`).
    pub max_abs_value: f64,
    /// Runs that ended without a consistent mode (not compared after that point).
    pub undetermined: usize,
}

/// Evaluates a Lyapunov certificate `v` (a polynomial in the six states `(y, z, θ, u, v, ω)`)
/// at the event instants of ZOD simulations from random perturbations of radius `radius`
/// (uniform in the ball intersected with `γ₁, γ₂ ≥ 0`) and reports the largest increase
/// between consecutive samples (acceptance test 8 of docs/decisions/000-sos-stability.md, second
/// half).
///
/// The samples of a run are the pre-impact states and the ends of the segments spent in a
/// contact mode (every mode but FF): these are the instants at which the multi-V conditions
/// compare `V₂` (Várkonyi, Theorem 2: `V₂` non-increasing in every contact mode and at every
/// impact for `e = 0`; for `e > 0`, docs/decisions/000-sos-stability.md decision 7, `V₂`
/// compared at successive pre-impact states, with the flight between them). Free-flight
/// segments are not sampled: there `V₂` may grow (the energy `V₁` governs them). Errors when
/// `v` is not a polynomial in 6 variables or does not evaluate.
pub fn certificate_along_events(
    p: &PlanarParams,
    v: &Poly,
    samples: usize,
    radius: f64,
    seed: u64,
    opts: &SimOptions,
) -> Result<EventMonotonicity, SosError> {
    if v.nvars() != 6 {
        return Err(SosError::Dimension(format!(
            "certificate in {} variables, expected 6",
            v.nvars()
        )));
    }
    if !(radius.is_finite() && radius > 0.0) {
        return Err(SosError::InvalidInput(format!(
            "perturbation radius {radius} must be positive and finite"
        )));
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut out = EventMonotonicity {
        samples,
        comparisons: 0,
        impacts: 0,
        max_increase: f64::NEG_INFINITY,
        max_abs_value: 0.0,
        undetermined: 0,
    };
    let ff = Mode(ContactState::Free, ContactState::Free);
    let mut done = 0;
    while done < samples {
        let Some(x) = admissible_perturbation(p, &mut rng, radius) else {
            continue;
        };
        done += 1;
        let (r, ev) = simulate_traced(p, &x, opts);
        if r.end == SimEnd::Undetermined {
            out.undetermined += 1;
        }
        let mut prev: Option<f64> = None;
        for e in ev {
            let sampled = match e.kind {
                EventKind::PreImpact(_) => {
                    out.impacts += 1;
                    true
                }
                EventKind::SegmentEnd(m) => m != ff,
            };
            if !sampled {
                continue;
            }
            let val = v.eval(&e.state)?;
            out.max_abs_value = out.max_abs_value.max(val.abs());
            if let Some(pv) = prev {
                out.comparisons += 1;
                out.max_increase = out.max_increase.max(val - pv);
            }
            prev = Some(val);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_fall_then_plastic_impact_comes_to_rest() {
        // Stable point (Fig. 2's stable region): lift the body slightly and drop it.
        let p = PlanarParams::new(30f64.to_radians(), 2.0, 2.0, 1.0, 0.0);
        let x0 = [0.0, 1e-3, 0.0, 0.0, 0.0, 0.0];
        let r = simulate(&p, &x0, &SimOptions::default());
        assert_eq!(r.end, SimEnd::Rest);
        // Impact speed √(2 g cosα · 10⁻³) ≈ 0.042 bounds the excursion.
        assert!(r.max_excursion < 0.05);
        assert!(r.final_state[Y].abs() < 1e-2);
    }

    #[test]
    fn traced_events_mark_impacts_and_segment_ends() {
        let p = PlanarParams::new(30f64.to_radians(), 2.0, 2.0, 1.0, 0.0);
        let x0 = [0.0, 1e-3, 0.0, 0.0, 0.0, 0.0];
        let (r, ev) = simulate_traced(&p, &x0, &SimOptions::default());
        assert_eq!(r, simulate(&p, &x0, &SimOptions::default()));
        let impacts: Vec<&SimEvent> = ev
            .iter()
            .filter(|e| matches!(e.kind, EventKind::PreImpact(_)))
            .collect();
        assert!(!impacts.is_empty());
        for e in &impacts {
            let EventKind::PreImpact(i) = e.kind else {
                continue;
            };
            // Touching and approaching, as an impact needs.
            assert!(p.gamma(&e.state, i).abs() < 1e-9);
            assert!(p.gamma_dot(&e.state, i) < 0.0);
        }
        // The first segment is the free fall, ending at the first impact's state.
        assert_eq!(
            ev[0].kind,
            EventKind::SegmentEnd(Mode(ContactState::Free, ContactState::Free))
        );
        assert!(ev.windows(2).all(|w| w[0].t <= w[1].t));
        // Wrong variable count and radius are errors.
        let v = Poly::zero(5);
        assert!(certificate_along_events(&p, &v, 1, 1e-3, 1, &SimOptions::default()).is_err());
        let v = Poly::zero(6);
        assert!(certificate_along_events(&p, &v, 1, 0.0, 1, &SimOptions::default()).is_err());
    }

    #[test]
    fn ambiguous_point_diverges() {
        // d = 0.3, μ₁ = 0.1 (acceptance test 1 of docs/decisions/000-sos-stability.md): PF is
        // consistent, the body slides away.
        let p = PlanarParams::new(30f64.to_radians(), 0.1, 2.0, 0.3, 0.0);
        let f = falsify(&p, 20, 1e-3, 100.0, 3, &SimOptions::default());
        assert!(f.any_diverged());
    }

    #[test]
    fn no_friction_slides() {
        let p = PlanarParams::new(30f64.to_radians(), 0.0, 0.0, 1.0, 0.0);
        let r = simulate(&p, &[0.0; 6], &SimOptions::default());
        assert!(r.max_excursion > 1.0);
    }
}
