//! Rollouts: the states a simulator reaches from a state under a sequence of commands.

use nonsmooth_core::State;
use nonsmooth_sim::{SimError, Simulator};

/// The states `x₀ = initial, x₁, …, x_N` of `sim` stepped from `initial` with `commands[k]`
/// at step `k` (one entry per actuator of the model; empty: no command). The simulator is
/// left at `x_N`.
///
/// # Errors
/// The simulator's: a state that is not one of its model, a malformed command, a failed
/// step (the index of the step is not kept; the states so far are lost).
pub fn rollout(
    sim: &mut Simulator<'_>,
    initial: &State,
    commands: &[Vec<f64>],
) -> Result<Vec<State>, SimError> {
    sim.set_state(initial.clone())?;
    let mut states = Vec::with_capacity(commands.len() + 1);
    states.push(initial.clone());
    for u in commands {
        sim.step(u)?;
        states.push(sim.state().clone());
    }
    Ok(states)
}
