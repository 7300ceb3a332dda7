//! Receding-horizon control (model predictive control) by iLQR, as in Tassa, Erez & Todorov,
//! *Synthesis and stabilization of complex behaviors through online trajectory optimization*
//! (IROS 2012, §III): at every step of the plant, iLQR ([`crate::ilqr`]) optimizes the next
//! `H` controls from the measured state, warm-started with the previous plan shifted by one
//! step (its last control repeated), and the first control is applied.

use std::time::Instant;

use nalgebra::DVector;
use nonsmooth_core::State;
use nonsmooth_sim::Simulator;

use crate::ilqr::{
    solve, ControlMap, DerivativeCounts, IlqrError, IlqrOptions, QuadraticCost, StopReason,
};

/// Options of [`run`]; build them with [`RecedingHorizonOptions::builder`] (checked).
#[derive(Debug, Clone, PartialEq)]
pub struct RecedingHorizonOptions {
    horizon: usize,
    ilqr: IlqrOptions,
}

impl RecedingHorizonOptions {
    /// A builder: horizon 20 steps, three iLQR iterations per step (the other iLQR options
    /// at their defaults).
    pub fn builder() -> RecedingHorizonOptionsBuilder {
        RecedingHorizonOptionsBuilder {
            horizon: 20,
            ilqr: IlqrOptions::builder().max_iterations(3).build(),
        }
    }

    /// The horizon (steps).
    pub fn horizon(&self) -> usize {
        self.horizon
    }

    /// The options of each iLQR solve.
    pub fn ilqr(&self) -> &IlqrOptions {
        &self.ilqr
    }
}

/// The builder of [`RecedingHorizonOptions`].
#[derive(Debug, Clone)]
pub struct RecedingHorizonOptionsBuilder {
    horizon: usize,
    ilqr: Result<IlqrOptions, IlqrError>,
}

impl RecedingHorizonOptionsBuilder {
    /// The horizon in steps (≥ 1).
    pub fn horizon(mut self, steps: usize) -> Self {
        self.horizon = steps;
        self
    }

    /// The options of each iLQR solve (their iteration cap is the work per step).
    pub fn ilqr(mut self, options: IlqrOptions) -> Self {
        self.ilqr = Ok(options);
        self
    }

    /// The options, checked.
    ///
    /// # Errors
    /// [`IlqrError::InvalidOption`] for a zero horizon.
    pub fn build(self) -> Result<RecedingHorizonOptions, IlqrError> {
        if self.horizon == 0 {
            return Err(IlqrError::InvalidOption {
                option: "horizon",
                reason: "must be at least one step".into(),
            });
        }
        Ok(RecedingHorizonOptions {
            horizon: self.horizon,
            ilqr: self.ilqr?,
        })
    }
}

/// One iLQR solve of the run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlanRecord {
    /// Iterations.
    pub iterations: usize,
    /// The plan's cost.
    pub cost: f64,
    /// Why it stopped.
    pub stop: StopReason,
    /// Its wall-clock time (s).
    pub wall_time_s: f64,
}

/// The result of [`run`].
#[derive(Debug, Clone)]
pub struct RecedingHorizonResult {
    /// The plant's states `x_0 … x_N`.
    pub states: Vec<State>,
    /// The controls applied.
    pub controls: Vec<DVector<f64>>,
    /// The full actuator commands applied (for a replay by [`Simulator::step`]).
    pub commands: Vec<Vec<f64>>,
    /// Every plan, one per step.
    pub plans: Vec<PlanRecord>,
    /// Step derivatives of all plans, by method.
    pub derivatives: DerivativeCounts,
    /// Wall-clock time of the run (s).
    pub wall_time_s: f64,
}

/// Runs `steps` steps of `plant` from its current state, each control planned by iLQR on
/// `planner` (a simulator of the plant's model: the prediction model) for `cost` over the
/// actuators of `controls`, the first plan warm-started from `initial_plan` (its length must
/// be the horizon).
///
/// # Errors
/// [`IlqrError::DimensionMismatch`] for a first plan of the wrong length; the errors of
/// [`crate::ilqr::solve`]; [`IlqrError::Simulation`] when a step of the plant fails.
pub fn run(
    plant: &mut Simulator<'_>,
    planner: &mut Simulator<'_>,
    cost: &QuadraticCost,
    controls: &ControlMap,
    initial_plan: &[DVector<f64>],
    steps: usize,
    options: &RecedingHorizonOptions,
) -> Result<RecedingHorizonResult, IlqrError> {
    let start = Instant::now();
    if initial_plan.len() != options.horizon {
        return Err(IlqrError::DimensionMismatch {
            what: "first plan (one control per step of the horizon)".into(),
            expected: options.horizon,
            got: initial_plan.len(),
        });
    }
    let mut plan = initial_plan.to_vec();
    let mut states = vec![plant.state().clone()];
    let mut applied = Vec::with_capacity(steps);
    let mut commands = Vec::with_capacity(steps);
    let mut plans = Vec::with_capacity(steps);
    let mut derivatives = DerivativeCounts::default();
    for _ in 0..steps {
        let measured = plant.state().clone();
        let result = solve(planner, &measured, cost, controls, &plan, &options.ilqr)?;
        derivatives.implicit += result.derivatives.implicit;
        derivatives.finite_difference += result.derivatives.finite_difference;
        plans.push(PlanRecord {
            iterations: result.iterations,
            cost: result.cost.total(),
            stop: result.stop,
            wall_time_s: result.wall_time_s,
        });
        let (Some(first), Some(command)) = (result.controls.first(), result.commands.first())
        else {
            return Err(IlqrError::NoControls);
        };
        plant
            .step(command)
            .map_err(|source| IlqrError::Simulation {
                during: "step of the plant",
                source: Box::new(source),
            })?;
        applied.push(first.clone());
        commands.push(command.clone());
        states.push(plant.state().clone());
        plan = result.controls[1..].to_vec();
        plan.push(result.controls[result.controls.len() - 1].clone());
    }
    Ok(RecedingHorizonResult {
        states,
        controls: applied,
        commands,
        plans,
        derivatives,
        wall_time_s: start.elapsed().as_secs_f64(),
    })
}
