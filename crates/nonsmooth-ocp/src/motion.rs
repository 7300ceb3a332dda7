//! Whether the controls can move a body at all: rollouts through the simulator of the
//! controls held at their bounds. A body at rest that none of them moves is held by static
//! friction under every admissible control, so a target away from its start is
//! unreachable (both formulations name it so without an NLP); and FESD-J's reachability
//! phase, which static friction leaves on a plateau (a push below the friction bound moves
//! nothing, so no gradient leads away), is distrusted where the rollouts move the body.

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
