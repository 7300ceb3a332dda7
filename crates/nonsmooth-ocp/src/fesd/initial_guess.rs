//! An initial guess of the FESD variables from a state trajectory ([`StateGuess`], e.g. a
//! rollout of the model through a rigid time stepper): every stage point's state at its
//! physical time, the switching functions' multipliers λᵖ = max(c, 0), λⁿ = max(−c, 0) and
//! α on the side of c's sign, uniform element lengths, speed of time 1 and the rollout's
//! controls.
//!
//! The guess satisfies the algebraic equations c(Y) = λᵖ − λⁿ and the complementarity
//! constraints exactly at every stage point; the collocation equations only as well as the
//! trajectory follows the time-freezing dynamics (in contact the auxiliary dynamics and the
//! frozen clock differ from a rigid stepper's), so IPOPT starts near, not on, a solution.

use super::layout::{Clock, Horizon, Layout};
use super::options::FesdOptions;
use super::state_guess::StateGuess;
use super::tableau::Dcs;
use crate::nlp::BlockNlp;
use crate::time_freezing::TimeFreezing;

use super::blocks::FesdBlock;

/// Switching-function values this close to zero count as zero (on the surface): a rigid
/// stepper holds a closed contact's gap and normal velocity to its solver tolerance.
const SWITCH_ZERO: f64 = 1e-6;

/// Writes `guess` into the initial point `x0` of an NLP built by
/// [`build`](super::build) for `hz` (layout `layout`, bounds of `nlp`), each value clamped
/// to its variable's bounds; the step representation only (Stewart's θ are left as built).
pub(super) fn apply(
    tf: &TimeFreezing,
    hz: &Horizon,
    o: &FesdOptions,
    (nlp, layout): (&BlockNlp<FesdBlock>, &Layout),
    guess: &StateGuess,
    x0: &mut [f64],
) {
    let (ny, nc, _, ns) = layout.dims;
    let d = &o.discretization;
    let interval = match hz.clock {
        Clock::Stagewise(t) | Clock::Terminal(t) => t / hz.n_steps.max(1) as f64,
        Clock::Free => hz.step_len,
    };
    let element = interval / d.n_fe as f64;
    let mut set = |i: usize, v: f64| x0[i] = v.clamp(nlp.xl[i], nlp.xu[i]);
    for (k, (&u, &s)) in layout.u.iter().zip(&layout.s).enumerate() {
        set(s, 1.0);
        for (a, v) in guess
            .u
            .get(k)
            .or(guess.u.last())
            .into_iter()
            .flatten()
            .enumerate()
        {
            set(u + a, *v);
        }
    }
    let step = d.dcs == Dcs::Step;
    for (m, e) in layout.elems.iter().enumerate() {
        let start = (e.step as f64) * interval + (m % d.n_fe) as f64 * element;
        // the stage points (and Gauss–Legendre's end point) with their multiplier slots
        let mut points: Vec<(usize, f64)> =
            e.y.iter()
                .enumerate()
                .map(|(j, &y)| (y, start + layout.c[j] * element))
                .collect();
        if e.lp.len() > ns + 1 {
            points.push((e.y_end, start + element));
        }
        for (j, &(y, t)) in points.iter().enumerate() {
            let mut state = guess.at(t);
            state.push(t);
            for (i, v) in state.iter().take(ny).enumerate() {
                set(y + i, *v);
            }
            if !step {
                continue;
            }
            let c = tf.switching(&state);
            for (i, &ci) in c.iter().take(nc).enumerate() {
                // a function within SWITCH_ZERO of zero (a contact the stepper holds
                // closed) is on its surface: both multipliers zero, α free
                let ci = if ci.abs() <= SWITCH_ZERO { 0.0 } else { ci };
                set(e.lp[j + 1] + i, ci.max(0.0));
                set(e.ln[j + 1] + i, (-ci).max(0.0));
                if let Some(&a) = e.alpha.get(j) {
                    let side = if ci > 0.0 {
                        1.0
                    } else if ci < 0.0 {
                        0.0
                    } else {
                        d.alpha0
                    };
                    set(a + i, side);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_guess_interpolates_between_its_samples_and_holds_at_the_ends() {
        let g = StateGuess {
            t: vec![0.0, 1.0, 2.0],
            y: vec![vec![0.0, 1.0], vec![2.0, 1.0], vec![2.0, 3.0]],
            u: vec![],
        };
        assert_eq!(g.at(-1.0), vec![0.0, 1.0]);
        assert_eq!(g.at(0.5), vec![1.0, 1.0]);
        assert_eq!(g.at(1.5), vec![2.0, 2.0]);
        assert_eq!(g.at(5.0), vec![2.0, 3.0]);
        assert!(g.validate(2).is_ok());
        let e = g.validate(3).unwrap_err().to_string();
        assert!(e.contains("state 0 has 2 entries, the system 3"), "{e}");
        let backwards = StateGuess {
            t: vec![1.0, 0.0],
            y: vec![vec![0.0], vec![0.0]],
            u: vec![],
        };
        assert!(backwards.validate(1).is_err());
    }
}
