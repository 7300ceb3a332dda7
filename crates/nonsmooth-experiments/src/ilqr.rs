//! iLQR through rigid contact on the step derivatives of `drumwright` (docs/derivatives.md,
//! "Used: iLQR and identification"):
//!
//! - `ilqr-box-push`: the box of `examples/ocp_box_push.toml` (on `box_on_ground.toml`)
//!   pushed 0.5 m and stopped in 1 s by `push` (|u| ≤ 10 N, `tip` held at 0), cost the effort
//!   `∫u² dt` plus a terminal quadratic; the controls replayed through a fresh simulator
//!   reach the target within 1 cm and rest within 1 cm/s, and the effort is the least effort
//!   of the continuous problem, `min_τ f²τ + 12d²/τ³ = f²τ + 12d²/τ³ at τ = √(6d/f)` (the
//!   push ends at τ < 1 s and friction `f = μmg` stops the box), beside the time-freezing
//!   OCP's 27.56 (docs/optimal-control.md: ten piecewise-constant controls);
//! - `ilqr-quadruped-stand`: `examples/quadruped.toml` held at its stand for 2 s. iLQR over
//!   the whole 2 s from the standing inverse-dynamics torque ends in the fallen local minimum
//!   (measured, not checked); iLQR replanned at every step over a short horizon
//!   (`nonsmooth_control::receding_horizon`) holds it, and its commands replayed open loop
//!   through a fresh simulator keep the trunk within 1 cm of its stand height.

use crate::fail;
use nalgebra::DVector;
use nonsmooth_control::ilqr::{solve, ControlMap, IlqrOptions, IlqrResult, QuadraticCost};
use nonsmooth_control::receding_horizon::{self, RecedingHorizonOptions};
use nonsmooth_control::rollout::rollout;
use nonsmooth_control::tangent::state_difference;
use nonsmooth_control::{Desired, IdOptions, IdProblem, InverseDynamics, Variant};
use nonsmooth_core::{Model, State};
use nonsmooth_report::table::write_csv;
use nonsmooth_report::{Experiment, ExperimentOutcome, Figure, ReportError, RunContext, Series};
use nonsmooth_sim::Simulator;

/// The iLQR experiments.
pub fn experiments() -> Vec<Experiment> {
    vec![
        Experiment {
            id: "ilqr-box-push",
            title: "iLQR: a box pushed 0.5 m and stopped on four corners",
            paper: "Li & Todorov 2004; Tassa, Mansard & Todorov 2014 (control limits)",
            run: box_push,
        },
        Experiment {
            id: "ilqr-quadruped-stand",
            title: "iLQR: the quadruped held at its stand for 2 s",
            paper: "Tassa, Erez & Todorov 2012 (receding-horizon iLQR)",
            run: quadruped_stand,
        },
    ]
}

const BOX_ON_GROUND: &str = include_str!("../../../examples/box_on_ground.toml");
const QUADRUPED: &str = include_str!("../../../examples/quadruped.toml");
/// The objective of the time-freezing OCP of `examples/ocp_box_push.toml`
/// (docs/optimal-control.md, "Defaults: one stage, two elements").
const OCP_BOX_PUSH_OBJECTIVE: f64 = 27.56;
const STEPPER: &str = "drumwright";

fn load(src: &str, file: &str, id: &str) -> Result<Model, ReportError> {
    Model::from_toml_str(src, Some(file)).map_err(|e| fail(id, e))
}

/// The least effort `∫u² dt` of moving a unit mass by `d` against sliding friction `f` from
/// rest to rest when the push may end early (friction then holds the box): `u − f` linear in
/// time over the motion of duration τ costs `f²τ + 12d²/τ³`, least at `τ = √(6d/f)`.
fn least_push_effort(d: f64, f: f64) -> (f64, f64) {
    let tau = (6.0 * d / f).sqrt();
    (f * f * tau + 12.0 * d * d / tau.powi(3), tau)
}

fn box_push(ctx: &RunContext, out: &mut ExperimentOutcome) -> Result<(), ReportError> {
    let id = "ilqr-box-push";
    let model = load(BOX_ON_GROUND, "examples/box_on_ground.toml", id)?;
    let dt: f64 = if ctx.quick { 0.02 } else { 0.01 };
    let steps = (1.0 / dt).round() as usize;
    let (distance, height) = (0.5, 0.1);
    let mut sim = Simulator::new(model.clone(), STEPPER, dt).map_err(|e| fail(id, e))?;
    let controls = ControlMap::named(&model, &["push"]).map_err(|e| fail(id, e))?;
    let initial = model.initial_state.clone();
    let mut target = initial.clone();
    target.q[0] = distance;
    target.q[1] = height;
    target.q[2] = 0.0;
    target.v.fill(0.0);
    // A terminal error of 1 mm costs 0.1, against an effort of about 25.
    let cost = QuadraticCost::new(target, model.nv(), 1).terminal_weights(&[1e5; 6]);
    // The box sticks under a push below μmg = 4.9 N, where the push has no derivative: the
    // first guess slides it (7 N for half the horizon).
    let guess: Vec<DVector<f64>> = (0..steps)
        .map(|k| DVector::from_element(1, if 2 * k < steps { 7.0 } else { 0.0 }))
        .collect();
    (ctx.progress)(&format!("iLQR over {steps} steps of {dt} s"));
    let result = solve(
        &mut sim,
        &initial,
        &cost,
        &controls,
        &guess,
        &IlqrOptions::default(),
    )
    .map_err(|e| fail(id, e))?;

    let mut fresh = Simulator::new(model.clone(), STEPPER, dt).map_err(|e| fail(id, e))?;
    let replay = rollout(&mut fresh, &initial, &result.commands).map_err(|e| fail(id, e))?;
    let last = replay.last().ok_or_else(|| fail(id, "empty replay"))?;
    let effort: f64 = result.controls.iter().map(|u| dt * u.norm_squared()).sum();
    let friction = model
        .materials
        .first()
        .map(|m| m.friction)
        .ok_or_else(|| fail(id, "no material"))?
        * model.bodies.iter().map(|b| b.mass).sum::<f64>()
        * model.gravity.norm();
    let (least, push_duration) = least_push_effort(distance, friction);
    let bound_violation = result
        .controls
        .iter()
        .map(|u| (u[0].abs() - 10.0).max(0.0))
        .fold(0.0, f64::max);

    out.metric("dt_s", dt);
    out.metric("objective_effort", effort);
    out.metric("objective_total", result.cost.total());
    out.metric("least_effort_continuous", least);
    out.metric("least_effort_push_duration_s", push_duration);
    out.metric(
        "terminal_position_error_m",
        ((last.q[0] - distance).powi(2) + (last.q[1] - height).powi(2)).sqrt(),
    );
    out.metric("terminal_angle_error_rad", last.q[2].abs());
    out.metric(
        "terminal_speed_m_s",
        (last.v[0].powi(2) + last.v[1].powi(2)).sqrt(),
    );
    out.metric("terminal_angular_speed_rad_s", last.v[2].abs());
    out.metric("push_bound_violation_n", bound_violation);
    record_solver_metrics(out, &result);

    out.expect(
        "terminal_position_error_m",
        0.0,
        0.01,
        "target within 1 cm (replay through a fresh Simulator)",
    );
    out.expect(
        "terminal_speed_m_s",
        0.0,
        0.01,
        "at rest within 1 cm/s (replay)",
    );
    out.expect("terminal_angle_error_rad", 0.0, 0.01, "flat (replay)");
    out.expect(
        "objective_effort",
        least,
        0.01 * least,
        "least effort of the continuous problem, f²τ + 12d²/τ³ at τ = √(6d/f)",
    );
    out.expect("push_bound_violation_n", 0.0, 1e-12, "|push| ≤ 10 N");
    out.expect("converged", 1.0, 0.0, "relative cost decrease below 1e-7");
    out.reference(
        "objective_effort",
        OCP_BOX_PUSH_OBJECTIVE,
        0.1 * OCP_BOX_PUSH_OBJECTIVE,
        "time-freezing OCP, docs/optimal-control.md (10 piecewise-constant controls)",
    );
    let summary = format!(
        "effort ∫u² dt = {effort:.4} (time-freezing OCP: {OCP_BOX_PUSH_OBJECTIVE}; least effort \
         of the continuous problem {least:.4}), {} iterations, {:.3} s ({:.3} s in derivatives, \
         {} implicit and {} finite-difference linearizations)",
        result.iterations,
        result.wall_time_s,
        result.derivative_time_s,
        result.derivatives.implicit,
        result.derivatives.finite_difference
    );
    (ctx.progress)(&summary);
    out.notes.push(summary);
    out.notes.push(
        "The OCP's objective is higher: its ten piecewise-constant controls cannot follow the \
         linearly decreasing push of the optimum, which iLQR's one control per step does."
            .into(),
    );
    crate::print_checks(ctx, out);

    let header: Vec<String> = ["t", "x", "y", "theta", "vx", "vy", "omega", "push"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let rows: Vec<Vec<f64>> = replay
        .iter()
        .enumerate()
        .map(|(k, x)| {
            let push = result.controls.get(k).map_or(f64::NAN, |u| u[0]);
            vec![x.t, x.q[0], x.q[1], x.q[2], x.v[0], x.v[1], x.v[2], push]
        })
        .collect();
    write_csv(&ctx.path("box_push_replay.csv"), &header, &rows)?;
    out.file("box_push_replay.csv");
    write_cost_history(ctx, out, &result, "box_push_iterations.csv")?;
    let t: Vec<f64> = replay.iter().map(|x| x.t).collect();
    Figure::new(
        "Box push: iLQR controls replayed",
        "t [s]",
        "x [m], push / 10 [N]",
    )
    .with(Series::line(
        "x (replay)",
        t.iter().zip(&replay).map(|(t, x)| (*t, x.q[0])).collect(),
    ))
    .with(Series::line(
        "push / 10",
        t.iter()
            .zip(&result.controls)
            .map(|(t, u)| (*t, u[0] / 10.0))
            .collect(),
    ))
    .write_svg(&ctx.path("box_push.svg"))?;
    out.figure("box_push.svg");
    Ok(())
}

/// Iterations, stop reason, times and derivative counts of an iLQR run.
fn record_solver_metrics(out: &mut ExperimentOutcome, result: &IlqrResult) {
    out.metric("iterations", result.iterations as f64);
    out.metric("converged", if result.converged() { 1.0 } else { 0.0 });
    out.metric("wall_time_s", result.wall_time_s);
    out.metric("derivative_time_s", result.derivative_time_s);
    out.metric("derivatives_implicit", result.derivatives.implicit as f64);
    out.metric(
        "derivatives_finite_difference",
        result.derivatives.finite_difference as f64,
    );
}

fn write_cost_history(
    ctx: &RunContext,
    out: &mut ExperimentOutcome,
    result: &IlqrResult,
    file: &str,
) -> Result<(), ReportError> {
    let rows: Vec<Vec<f64>> = result
        .cost_history
        .iter()
        .enumerate()
        .map(|(i, c)| vec![i as f64, *c])
        .collect();
    write_csv(
        &ctx.path(file),
        &["accepted_iteration".to_string(), "cost".to_string()],
        &rows,
    )?;
    out.file(file);
    Ok(())
}

/// The largest deviations of a quadruped trajectory from the stand: trunk height (m), trunk
/// orientation (rad, the rotation vector's norm), joint angles (rad).
fn stand_deviation(model: &Model, states: &[State], stand: &State) -> Result<[f64; 3], String> {
    let mut worst = [0.0f64; 3];
    for x in states {
        let e = state_difference(model, x, stand).map_err(|e| e.to_string())?;
        worst[0] = worst[0].max(e[2].abs());
        worst[1] = worst[1].max(e.rows(3, 3).norm());
        worst[2] = worst[2].max(e.rows(6, model.nv() - 6).amax());
    }
    Ok(worst)
}

fn quadruped_stand(ctx: &RunContext, out: &mut ExperimentOutcome) -> Result<(), ReportError> {
    let id = "ilqr-quadruped-stand";
    let model = load(QUADRUPED, "examples/quadruped.toml", id)?;
    let dt: f64 = 0.01;
    let duration: f64 = if ctx.quick { 0.5 } else { 2.0 };
    let steps = (duration / dt).round() as usize;
    let nv = model.nv();
    let nu = model.actuators.len();
    let stand = model.initial_state.clone();

    // The standing torque: inverse dynamics with zero acceleration (ID_QP,μ).
    let problem = IdProblem::from_state(&model, &stand.q, &stand.v, dt).map_err(|e| fail(id, e))?;
    let holding = InverseDynamics::new(IdOptions::new(Variant::QpCoulomb))
        .solve(&problem, &Desired::Acceleration(DVector::zeros(nu)))
        .map_err(|e| fail(id, e))?
        .torques;
    // Trunk x, y, height, orientation; joints; velocities.
    let mut weights = vec![1.0; 2 * nv];
    weights[..6].copy_from_slice(&[1e2, 1e2, 1e4, 1e3, 1e3, 1e3]);
    weights[6..nv].fill(10.0);
    let cost = QuadraticCost::new(stand.clone(), nv, nu)
        .state_weights(&weights)
        .terminal_weights(&weights)
        .control_weights(&vec![1e-3; nu])
        .control_reference(holding.as_slice());
    let controls = ControlMap::all(&model);
    let simulator = || Simulator::new(model.clone(), STEPPER, dt).map_err(|e| fail(id, e));
    let mut figure = Figure::new("Quadruped stand: trunk height", "t [s]", "z [m]");

    // 1. iLQR over the whole horizon from the standing torque.
    if !ctx.quick {
        (ctx.progress)("iLQR over the whole 2 s from the standing torque");
        let mut sim = simulator()?;
        let options = IlqrOptions::builder()
            .max_iterations(30)
            .tolerance(1e-6)
            .build()
            .map_err(|e| fail(id, e))?;
        let guess = vec![holding.clone(); steps];
        let result =
            solve(&mut sim, &stand, &cost, &controls, &guess, &options).map_err(|e| fail(id, e))?;
        let worst = stand_deviation(&model, &result.states, &stand).map_err(|e| fail(id, e))?;
        out.metric("full_horizon_max_height_error_m", worst[0]);
        out.metric("full_horizon_iterations", result.iterations as f64);
        out.metric("full_horizon_wall_time_s", result.wall_time_s);
        out.metric(
            "full_horizon_cost_initial",
            result.cost_history.first().copied().unwrap_or(f64::NAN),
        );
        out.metric("full_horizon_cost_final", result.cost.total());
        let line = format!(
            "whole-horizon iLQR from the standing torque: stopped {} after {} iterations \
             ({:.1} s), cost {:.1} → {:.1}, trunk height off by up to {:.3} m: the standing \
             torque held open loop lets the robot fall, and iLQR stops in a local minimum with \
             it fallen",
            result.stop.label(),
            result.iterations,
            result.wall_time_s,
            result.cost_history.first().copied().unwrap_or(f64::NAN),
            result.cost.total(),
            worst[0]
        );
        (ctx.progress)(&line);
        out.notes.push(line);
        figure.series.push(Series::line(
            "whole-horizon iLQR from the standing torque",
            result.states.iter().map(|x| (x.t, x.q[2])).collect(),
        ));
    }

    // 2. Receding-horizon iLQR.
    let (horizon, iterations) = if ctx.quick { (10, 2) } else { (20, 3) };
    (ctx.progress)(&format!(
        "receding-horizon iLQR: {horizon} steps ahead, {iterations} iterations per step, {steps} steps"
    ));
    let options = RecedingHorizonOptions::builder()
        .horizon(horizon)
        .ilqr(
            IlqrOptions::builder()
                .max_iterations(iterations)
                .tolerance(1e-6)
                .build()
                .map_err(|e| fail(id, e))?,
        )
        .build()
        .map_err(|e| fail(id, e))?;
    let mut plant = simulator()?;
    let mut planner = simulator()?;
    let run = receding_horizon::run(
        &mut plant,
        &mut planner,
        &cost,
        &controls,
        &vec![holding.clone(); horizon],
        steps,
        &options,
    )
    .map_err(|e| fail(id, e))?;
    let mut fresh = simulator()?;
    let replay = rollout(&mut fresh, &stand, &run.commands).map_err(|e| fail(id, e))?;
    let closed_loop = stand_deviation(&model, &run.states, &stand).map_err(|e| fail(id, e))?;
    let open_loop = stand_deviation(&model, &replay, &stand).map_err(|e| fail(id, e))?;
    let plan_times: Vec<f64> = run.plans.iter().map(|p| p.wall_time_s).collect();
    let mean_plan = plan_times.iter().sum::<f64>() / plan_times.len().max(1) as f64;
    let max_torque = run.controls.iter().map(|u| u.amax()).fold(0.0, f64::max);

    out.metric("horizon_steps", horizon as f64);
    out.metric("iterations_per_step", iterations as f64);
    out.metric("duration_s", replay.last().map_or(0.0, |x| x.t - stand.t));
    out.metric("replay_max_height_error_m", open_loop[0]);
    out.metric("replay_max_orientation_error_rad", open_loop[1]);
    out.metric("replay_max_joint_error_rad", open_loop[2]);
    out.metric("closed_loop_max_height_error_m", closed_loop[0]);
    out.metric("max_abs_torque_nm", max_torque);
    out.metric("wall_time_s", run.wall_time_s);
    out.metric("mean_plan_time_s", mean_plan);
    out.metric(
        "plan_iterations",
        run.plans.iter().map(|p| p.iterations).sum::<usize>() as f64,
    );
    out.metric("derivatives_implicit", run.derivatives.implicit as f64);
    out.metric(
        "derivatives_finite_difference",
        run.derivatives.finite_difference as f64,
    );
    out.expect(
        "replay_max_height_error_m",
        0.0,
        0.01,
        "trunk within 1 cm of its stand height (open-loop replay, fresh Simulator)",
    );
    out.expect(
        "duration_s",
        duration,
        1e-9,
        "the whole horizon replayed (2 s; quick: 0.5 s)",
    );
    out.metric("torque_bound_violation_nm", (max_torque - 30.0).max(0.0));
    out.expect(
        "torque_bound_violation_nm",
        0.0,
        1e-12,
        "within the motors' ±30 N·m",
    );
    let line = format!(
        "receding-horizon iLQR ({horizon} steps ahead, {iterations} iterations per step): \
         trunk height within {:.2e} m over {duration} s in the replay, orientation within \
         {:.2e} rad, joints within {:.2e} rad; {:.1} s ({:.3} s per plan, {} implicit \
         linearizations)",
        open_loop[0],
        open_loop[1],
        open_loop[2],
        run.wall_time_s,
        mean_plan,
        run.derivatives.implicit
    );
    (ctx.progress)(&line);
    out.notes.push(line);
    crate::print_checks(ctx, out);

    let mut header = vec!["t".to_string(), "trunk_z".to_string()];
    header.extend(model.actuators.iter().map(|a| a.name.clone()));
    let rows: Vec<Vec<f64>> = replay
        .iter()
        .enumerate()
        .map(|(k, x)| {
            let mut row = vec![x.t, x.q[2]];
            match run.controls.get(k) {
                Some(u) => row.extend(u.iter()),
                None => row.extend(std::iter::repeat_n(f64::NAN, nu)),
            }
            row
        })
        .collect();
    write_csv(&ctx.path("quadruped_stand_replay.csv"), &header, &rows)?;
    out.file("quadruped_stand_replay.csv");
    let plan_rows: Vec<Vec<f64>> = run
        .plans
        .iter()
        .enumerate()
        .map(|(k, p)| vec![k as f64, p.iterations as f64, p.cost, p.wall_time_s])
        .collect();
    write_csv(
        &ctx.path("quadruped_stand_plans.csv"),
        &["step", "iterations", "cost", "wall_time_s"].map(String::from),
        &plan_rows,
    )?;
    out.file("quadruped_stand_plans.csv");
    figure.series.push(Series::line(
        "receding-horizon iLQR, commands replayed",
        replay.iter().map(|x| (x.t, x.q[2])).collect(),
    ));
    figure.write_svg(&ctx.path("quadruped_stand.svg"))?;
    out.figure("quadruped_stand.svg");
    Ok(())
}
