//! An optimal solution's controls replayed through a rigid stepper: the check that the
//! discretized optimum is a motion of the model (the FESD discretization's error shows as
//! the distance between the two final poses).

use super::ModelProblem;
use crate::fesd::OcpSolution;
use crate::OcpError;
use nonsmooth_sim::Simulator;

/// The final configurations of a replay ([`ModelProblem::replay`]) and of the optimum.
#[derive(Debug, Clone, PartialEq)]
pub struct Replay {
    /// The replay's final q.
    pub simulated: Vec<f64>,
    /// The optimal solution's final q.
    pub optimal: Vec<f64>,
}

impl Replay {
    /// `|simulated_i − optimal_i|` for every coordinate.
    pub fn deviation(&self) -> Vec<f64> {
        self.simulated
            .iter()
            .zip(&self.optimal)
            .map(|(s, o)| (s - o).abs())
            .collect()
    }
}

impl ModelProblem {
    /// The controls of `sol` applied to the model (zero-order hold on each control interval)
    /// through `stepper` at `steps_per_element` steps per finite element, from the problem's
    /// initial state; the final configurations of that run and of `sol`.
    ///
    /// # Errors
    /// [`OcpError::InvalidInput`] for an unknown stepper, a control that is no actuator, a
    /// solution of another problem, or a failed simulation.
    pub fn replay(
        &self,
        sol: &OcpSolution,
        stepper: &str,
        steps_per_element: usize,
    ) -> Result<Replay, OcpError> {
        let optimal = sol
            .traj
            .y
            .last()
            .map(|y| y[..self.tf.cls.nq().min(y.len())].to_vec())
            .ok_or_else(|| {
                OcpError::InvalidInput("replay: the solution has no trajectory".into())
            })?;
        self.replay_controls(
            &sol.u,
            optimal,
            stepper,
            steps_per_element * self.options.discretization.n_fe,
        )
    }

    /// The controls `u` (one per control interval, zero-order hold) applied to the model
    /// through `stepper` at `steps_per_interval` steps per interval, from the problem's
    /// initial state; the final configurations of that run and `optimal` (the optimum's).
    ///
    /// # Errors
    /// As [`ModelProblem::replay`].
    pub fn replay_controls(
        &self,
        u: &[Vec<f64>],
        optimal: Vec<f64>,
        stepper: &str,
        steps_per_interval: usize,
    ) -> Result<Replay, OcpError> {
        let invalid = |what: String| OcpError::InvalidInput(format!("replay: {what}"));
        let model = self.tf.cls.model().clone();
        let n = self.horizon.n_steps;
        if u.len() != n || steps_per_interval == 0 {
            return Err(invalid(format!(
                "{} control intervals for a problem of {n}, {steps_per_interval} steps per interval",
                u.len()
            )));
        }
        let sub = steps_per_interval;
        let dt = self.t_final / (n * sub) as f64;
        let slots = self
            .control_names
            .iter()
            .map(|name| {
                model
                    .actuators
                    .iter()
                    .position(|a| &a.name == name)
                    .ok_or_else(|| invalid(format!("control `{name}` is no actuator")))
            })
            .collect::<Result<Vec<usize>, _>>()?;
        let n_act = model.actuators.len();
        let nq = model.nq();
        let sim_err = |e: nonsmooth_sim::SimError| invalid(e.to_string());
        let nv = model.nv();
        let y0 = &self.horizon.y0;
        let mut sim = Simulator::new(model, stepper, dt).map_err(sim_err)?;
        sim.reset_to(&y0[..nq], &y0[nq..nq + nv]).map_err(sim_err)?;
        for u in u {
            let mut full = vec![0.0; n_act];
            for (value, &slot) in u.iter().zip(&slots) {
                full[slot] = *value;
            }
            sim.step_n(sub, &full).map_err(sim_err)?;
        }
        Ok(Replay {
            simulated: sim.q().as_slice().to_vec(),
            optimal,
        })
    }
}
