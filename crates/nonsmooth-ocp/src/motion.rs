//! What the controls can do to a body, told before any NLP (both formulations name a
//! target `unreachable` from it):
//!
//! - whether they move it at all: rollouts through the simulator of the controls held at
//!   their bounds. A body at rest that none of them moves is held by static friction under
//!   every admissible control; and FESD-J's reachability phase, which static friction
//!   leaves on a plateau (a push below the friction bound moves nothing, so no gradient
//!   leads away), is distrusted where the rollouts move the body;
//! - how far they can move it: for one free body on flat ground, the momentum balance
//!   bounds its travel along the ground in the horizon ([`beyond_travel`]).

use nalgebra::DVector;
use nalgebra::Vector3;
use nonsmooth_core::dynamics::{kinematics, mass_matrix, point_jacobian, point_position};
use nonsmooth_sim::{Actuation, Simulator};

use crate::fesd::Horizon;
use crate::model_system::ModelSystem;

/// Steps of the rollouts per control interval.
const STEPS_PER_INTERVAL: usize = 20;

/// At most this many controls are combined at both bounds (2ⁿ rollouts); with more, every
/// control at its lower bound, then every one at its upper bound.
const MAX_COMBINED: usize = 4;

/// What the rollouts at the control bounds found.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rollouts {
    /// The largest change of a terminal component over the horizon.
    pub largest_change: f64,
    /// Whether every vertex of the control bounds was rolled out (each control at either
    /// bound, all combinations): then a body that none of them moves from rest is held by
    /// static friction under every admissible control (the forces that keep a body at rest
    /// form a convex set, which then holds the whole box of bounds).
    pub every_vertex: bool,
}

/// Rollouts (`drumwright`) of the horizon from its start with every control held at one of
/// its bounds (see [`Rollouts`]); `None` when a rollout fails or the horizon has no
/// terminal components or no controls.
pub(crate) fn rollouts_at_bounds(
    sys: &ModelSystem,
    hz: &Horizon,
    t_final: f64,
) -> Option<Rollouts> {
    let model = sys.model().clone();
    let (nq, nv) = (model.nq(), model.nv());
    let nu = sys.nu();
    if hz.terminal.is_empty() || nu == 0 || hz.u_bounds.len() != hz.n_steps {
        return None;
    }
    let patterns: Vec<Vec<bool>> = if nu <= MAX_COMBINED {
        (0..1usize << nu)
            .map(|m| (0..nu).map(|i| m >> i & 1 == 1).collect())
            .collect()
    } else {
        vec![vec![false; nu], vec![true; nu]]
    };
    let dt = t_final / (hz.n_steps * STEPS_PER_INTERVAL) as f64;
    let mut sim = Simulator::new(model, "drumwright", dt).ok()?;
    let mut largest: f64 = 0.0;
    for upper in patterns {
        sim.reset_to(&hz.y0[..nq], &hz.y0[nq..nq + nv]).ok()?;
        for (lo, hi) in &hz.u_bounds {
            let u: Vec<f64> = upper
                .iter()
                .enumerate()
                .map(|(i, &up)| if up { hi[i] } else { lo[i] })
                .collect();
            if u.iter().any(|x| !x.is_finite()) {
                return None;
            }
            for _ in 0..STEPS_PER_INTERVAL {
                let input = Actuation::from_generalized_force(sys.control_force(sim.t(), &u));
                sim.advance(&input, dt).ok()?;
            }
        }
        let (q, v) = (sim.q(), sim.v());
        for &(i, _) in &hz.terminal {
            let now = match i {
                i if i < nq => q[i],
                i if i < nq + nv => v[i - nq],
                _ => continue,
            };
            largest = largest.max((now - hz.y0[i]).abs());
        }
    }
    Some(Rollouts {
        largest_change: largest,
        every_vertex: nu <= MAX_COMBINED,
    })
}

/// The reason a target is unreachable when the body starts at rest and no control moves
/// it: every rollout at the control bounds keeps the terminal components within `tol` of
/// the start (every vertex rolled out) while the target is farther than `tol` away. `None`
/// otherwise (or when the rollouts cannot tell).
pub(crate) fn immobile(
    sys: &ModelSystem,
    hz: &Horizon,
    rollouts: Option<&Rollouts>,
    tol: f64,
) -> Option<String> {
    let nq = sys.nq();
    let at_rest = hz.y0.get(nq..2 * nq)?.iter().all(|v| *v == 0.0);
    let distance = hz
        .terminal
        .iter()
        .filter(|(i, _)| *i < 2 * nq)
        .map(|(i, t)| (t - hz.y0[*i]).abs())
        .fold(0.0, f64::max);
    if !at_rest || distance <= tol {
        return None;
    }
    let r = rollouts?;
    (r.every_vertex && r.largest_change <= tol).then(|| {
        format!(
            "unreachable: no admissible control moves the body (held at every combination of \
             the control bounds it stays within {:.1e} of its start; the target is \
             {distance:.4e} away)",
            r.largest_change
        )
    })
}

/// The verdict of the checks before any NLP: the target beyond the travel the momentum
/// balance allows ([`beyond_travel`]), or a body no control moves ([`immobile`]).
pub(crate) fn unreachable(
    sys: &ModelSystem,
    hz: &Horizon,
    t_final: f64,
    rollouts: Option<&Rollouts>,
    tol: f64,
) -> Option<String> {
    beyond_travel(sys, hz, t_final, tol).or_else(|| immobile(sys, hz, rollouts, tol))
}

/// The reason a target lies beyond every admissible travel of one free body on flat ground
/// (`None` where it does not, or where the model is not of that kind).
///
/// For a single body with its centre of mass at its joint's origin, translated by two
/// coordinates along the ground's tangent `t` and normal `n` (gravity along `−n`, every
/// contact on planes of normal `n`, no joint damping, spring or limit), the momenta
/// `p_t = m v_t` and `p_n = m v_n` change only by the push and the contact forces:
/// `ṗ_n = a_n(u) − m g + Λ` (Λ ≥ 0 the normal forces and impulses, summed) and
/// `ṗ_t = a_t(u) + F` with `|F| ≤ μ Λ`. The terminal normal velocity fixes the total normal
/// impulse, `∫Λ ≤ Δp_n + m g T − T min a_n`, so friction's total impulse is at most
/// `B = μ ∫Λ`. The travel is `Δq_t = v_t(0) T + (1/m) ∫₀ᵀ (T − s) ṗ_t(s) ds` with
/// `∫ṗ_t = Δp_t` where the terminal tangential velocity is given; its largest value over
/// every push within its limits and every friction history within the budget (friction
/// counted as free to act in either direction, at any instant) is [`largest_travel`].
pub(crate) fn beyond_travel(
    sys: &ModelSystem,
    hz: &Horizon,
    t_final: f64,
    tol: f64,
) -> Option<String> {
    let model = sys.model();
    let body = model.bodies.first()?;
    let joint = model.joints.first()?;
    if model.bodies.len() != 1
        || body.com.norm() > 0.0
        || !model.constraints.is_empty()
        || joint.damping != 0.0
        || joint.spring.is_some()
        || joint.limit.is_some()
        || t_final.is_nan()
        || t_final <= 0.0
    {
        return None;
    }
    let n = sys.contacts().first()?.normal;
    if sys
        .contacts()
        .iter()
        .any(|c| c.body != 0 || (c.normal - n).norm() > 1e-12)
    {
        return None;
    }
    let g = -model.gravity.dot(&n);
    if g.is_nan() || g <= 0.0 || (model.gravity + g * n).norm() > 1e-12 * g {
        return None;
    }
    let mu = sys
        .contacts()
        .iter()
        .map(|c| c.friction)
        .fold(0.0, f64::max);
    // the coordinates that translate the body along n and along the ground (the same
    // world direction at the start and in a turned configuration), with momenta m v
    // (no coupling with the other coordinates in the mass matrix)
    let nq = sys.nq();
    let q0 = DVector::from_column_slice(hz.y0.get(..nq)?);
    let turned = q0.map(|x| x + 0.7);
    let columns = |q: &DVector<f64>| {
        let kin = kinematics(model, q, &DVector::zeros(nq));
        let origin = point_position(&kin, Some(0), &Vector3::zeros());
        point_jacobian(model, &kin, Some(0), &origin)
    };
    let (c0, c1) = (columns(&q0), columns(&turned));
    let (m0, m1) = (mass_matrix(model, &q0), mass_matrix(model, &turned));
    let mass = body.mass;
    let translates = |k: usize, along: &dyn Fn(&Vector3<f64>) -> bool| {
        let d = c0.column(k).into_owned();
        (d.norm() - 1.0).abs() < 1e-12
            && (c1.column(k) - d).norm() < 1e-12
            && along(&d)
            && [&m0, &m1].iter().all(|m| {
                (0..nq).all(|j| (m[(k, j)] - if j == k { mass } else { 0.0 }).abs() <= 1e-9 * mass)
            })
    };
    let kn = (0..nq).find(|&k| translates(k, &|d| (d - n).norm() < 1e-12))?;
    let kt = (0..nq).find(|&k| translates(k, &|d| d.dot(&n).abs() < 1e-12))?;
    let motors = sys.motors()?;
    // the range of the push's generalized force on coordinate k over every interval's bounds
    let push_range = |k: usize| -> Option<(f64, f64)> {
        let mut range = (0.0f64, 0.0f64);
        for (i, (lo, hi)) in hz.u_bounds.iter().enumerate() {
            let (mut a, mut b) = (0.0, 0.0);
            for (j, &(idx, gear)) in motors.iter().enumerate() {
                if idx == k {
                    let (x, y) = (lo.get(j)? * gear, hi.get(j)? * gear);
                    a += x.min(y);
                    b += x.max(y);
                }
            }
            range = if i == 0 {
                (a, b)
            } else {
                (range.0.min(a), range.1.max(b))
            };
        }
        (range.0.is_finite() && range.1.is_finite()).then_some(range)
    };
    if hz.u_bounds.len() != hz.n_steps {
        return None;
    }
    let ((t_lo, t_hi), (n_lo, _)) = (push_range(kt)?, push_range(kn)?);
    let target = |i: usize| hz.terminal.iter().find(|(j, _)| *j == i).map(|p| p.1);
    let (x_target, vn_target) = (target(kt)?, target(nq + kn)?);
    let (x0, vt0, vn0) = (hz.y0[kt], hz.y0[nq + kt], hz.y0[nq + kn]);
    let dp_t = target(nq + kt).map(|v| mass * (v - vt0));
    let normal_impulse = (mass * (vn_target - vn0) + mass * g * t_final - n_lo * t_final).max(0.0);
    let budget = mu * normal_impulse;
    let travel = x_target - x0;
    let upper = largest_travel(vt0, mass, t_final, (t_lo, t_hi), budget, dp_t);
    let lower = largest_travel(
        -vt0,
        mass,
        t_final,
        (-t_hi, -t_lo),
        budget,
        dp_t.map(|d| -d),
    )
    .map(|x| -x);
    let reason = match (lower, upper) {
        (Some(lo), Some(hi)) if travel > hi + tol || travel < lo - tol => format!(
            "the momentum balance bounds its travel along the ground in T = {t_final} s to \
             [{lo:.4}, {hi:.4}] m"
        ),
        (Some(_), Some(_)) => return None,
        _ => "no push within the limits, with friction at most μ times the normal impulse, \
              changes its momentum along the ground as the target's velocity asks"
            .to_string(),
    };
    Some(format!(
        "unreachable: {reason} (the push within its limits, friction at most μ = {mu} times \
         the normal impulse, which the vertical momentum bounds by {normal_impulse:.4} N s); \
         the target asks {travel:.4} m"
    ))
}

/// The largest `v₀ T + (1/m) ∫₀ᵀ (T − s) (a(s) + F(s)) ds` over pushes `a(s)` in
/// `[lo, hi]` and friction impulse histories `F` of total variation at most `budget`, with
/// `∫(a + F) = Δp` where `dp` is given; `None` when no such history makes `Δp`.
///
/// For a fixed `A = ∫a`, the best push is bang–bang (`hi` until `t₁`, then `lo`, since the
/// weight `T − s` decreases) and the best friction puts `(B + Δp − A)/2` forward at `s = 0`
/// and the rest backward at `s = T`; the value is concave in `t₁` with its maximum at
/// `T/2`, so it is taken at `T/2` clamped to the `t₁` that keep `|Δp − A| ≤ B`.
fn largest_travel(
    v0: f64,
    mass: f64,
    t: f64,
    (lo, hi): (f64, f64),
    budget: f64,
    dp: Option<f64>,
) -> Option<f64> {
    let Some(dp) = dp else {
        return Some(v0 * t + (hi * t * t / 2.0 + t * budget) / mass);
    };
    let (a_min, a_max) = ((dp - budget).max(lo * t), (dp + budget).min(hi * t));
    if a_min > a_max {
        return None;
    }
    let t1 = if hi > lo {
        (t / 2.0).clamp((a_min - lo * t) / (hi - lo), (a_max - lo * t) / (hi - lo))
    } else {
        0.0
    };
    let a_total = lo * t + (hi - lo) * t1;
    let value = hi * (t * t1 - t1 * t1 / 2.0)
        + lo * (t - t1) * (t - t1) / 2.0
        + t * (budget + dp - a_total) / 2.0;
    Some(v0 * t + value / mass)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::{generate, Expected};
    use crate::problem::ModelProblem;

    #[test]
    fn the_largest_travel_is_the_bang_bang_optimum() {
        let (u, t, b, m) = (3.0, 2.0, 1.5, 2.0);
        // rest to rest: full push to T/2, full braking after, friction's budget split
        // forward at the start and backward at the end: (U T²/4 + B T/2)/m
        let x = largest_travel(0.0, m, t, (-u, u), b, Some(0.0)).unwrap();
        assert!(
            (x - (u * t * t / 4.0 + b * t / 2.0) / m).abs() < 1e-12,
            "{x}"
        );
        // the final velocity free: full push throughout, all friction forward at the start
        let x = largest_travel(0.5, m, t, (-u, u), b, None).unwrap();
        assert!(
            (x - (0.5 * t + (u * t * t / 2.0 + b * t) / m)).abs() < 1e-12,
            "{x}"
        );
        // a pushing-only actuator (a ≥ 0) from rest to rest: the push must be cancelled by
        // friction, A ≤ B: the bang-bang switch at A/U = B/U
        let x = largest_travel(0.0, m, t, (0.0, u), b, Some(0.0)).unwrap();
        let t1 = b / u;
        let want = u * (t * t1 - t1 * t1 / 2.0) + t * (b - u * t1) / 2.0;
        assert!((x - want / m).abs() < 1e-12, "{x} {}", want / m);
        // a momentum change beyond the push and friction together has no history
        assert!(largest_travel(0.0, m, t, (-u, u), b, Some(u * t + b + 0.1)).is_none());
    }

    #[test]
    fn the_travel_bound_names_far_targets_and_never_a_reachable_one() {
        let dir = std::env::temp_dir().join(format!("nonsmooth-travel-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (mut named, mut far) = (0, 0);
        for g in generate(11, 10, 8).unwrap() {
            std::fs::write(dir.join(format!("{}_model.toml", g.name)), &g.model_toml).unwrap();
            let file = dir.join(format!("{}.toml", g.name));
            std::fs::write(&file, &g.problem_toml).unwrap();
            let p = ModelProblem::from_file(&file).unwrap();
            let verdict = beyond_travel(&p.tf.cls, &p.horizon, p.t_final, 1e-4);
            match &g.expected {
                Expected::Reachable => assert!(verdict.is_none(), "{}: {verdict:?}", g.name),
                Expected::Unreachable { reason } if reason.contains("beyond") => {
                    far += 1;
                    named += usize::from(verdict.is_some());
                }
                Expected::Unreachable { .. } => {}
            }
        }
        std::fs::remove_dir_all(&dir).ok();
        assert!(far > 0);
        assert_eq!(named, far, "far targets named by the momentum balance");
    }
}
