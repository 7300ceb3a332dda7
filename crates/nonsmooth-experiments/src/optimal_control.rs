//! Nurkanović, Albrecht, Brogliato & Diehl, *The Time-Freezing Reformulation for Numerical
//! Optimal Control of Complementarity Lagrangian Systems with State Jumps* (2023): FESD simulations
//! of the time-freezing reformulation against the analytic solutions (E1, E2 of
//! docs/decisions/002-time-freezing.md).
//!
//! - `tf-particle-sim`: guiding particle of Ex. 1–3 (impact, frozen jump, sliding with
//!   γ = 0.5, lift-off at τ = 2.75, state at τ = 3.5);
//! - `tf-particle-friction`: Ex. 4 with μ = 0.6 (tangential jump v₁⁺ = 0.50295);
//! - `tf-particle-ocp`: Ex. 5 without friction, against the discrete optimum of the horizontal
//!   double integrator (≈ 13.5 = the continuous optimum with u₁ = 4.5(1 − t));
//! - `tf-order`: global error vs step of FESD Radau IIA n_s = 1, 2, 3 and of the same IRK on a
//!   fixed grid on a spring-loaded mass falling onto the ground (cosine flight, inelastic
//!   impact, sliding on the ground), E4 of docs/decisions/002-time-freezing.md;
//! - `tf-hopper-ocp`: the planar hopper of Sec. 6 (T = 2.5, |u| ≤ 60, N = 20, N_FE = 3,
//!   three elliptic holes) solved from y0 everywhere and u = 0 through the smoothing phase
//!   with the holes grown from nothing ([`HOPPER_PROBLEM`]), then the exact active-set MPCC
//!   method from the homotopy's point (`b_stationary`, `lpec_count`, `bnlp_count`, both
//!   methods side by side in `methods.csv`);
//! - `tf-bouncing-ball`: ball dropped from 1 m, a_n = 100, n_s = 3, 20 steps × 3 elements.

use std::sync::Arc;

use crate::fail;
use nonsmooth_figures::optimal_control::{frame_strip, obstacle_outline};
use nonsmooth_ocp::fesd::{simulate, solve_ocp, FesdOptions, Horizon, SimResult};
use nonsmooth_ocp::model_system::{ModelSystem, PathTerm};
use nonsmooth_ocp::problem::ModelProblem;
use nonsmooth_ocp::time_freezing::physical_time_states;
use nonsmooth_ocp::time_freezing::TimeFreezing;
use nonsmooth_report::viewer::{ViewerScene, IDENTITY_POSE};
use nonsmooth_report::{
    staircase, Experiment, ExperimentOutcome, Figure, ReportError, RunContext, Series,
};

const G: f64 = 9.81;

/// The experiments of the time-freezing paper.
pub fn experiments() -> Vec<Experiment> {
    vec![
        Experiment {
            id: "tf-particle-sim",
            title: "Time-freezing particle (Ex. 1-3) with FESD Radau IIA n_s = 3",
            paper: "Nurkanović et al. 2023 (time-freezing), Ex. 3, Fig. 3",
            run: particle_sim,
        },
        Experiment {
            id: "tf-particle-friction",
            title: "Time-freezing particle with Coulomb friction (Ex. 4)",
            paper: "Nurkanović et al. 2023 (time-freezing), Ex. 4, Fig. 5",
            run: particle_friction,
        },
        Experiment {
            id: "tf-particle-ocp",
            title: "Particle OCP through an impact (Ex. 5, frictionless sanity variant)",
            paper: "Nurkanović et al. 2023 (time-freezing), Ex. 5, Fig. 6",
            run: particle_ocp,
        },
        Experiment {
            id: "tf-order",
            title: "Integration order of FESD Radau IIA (n_s = 1, 2, 3) vs a fixed-grid IRK",
            paper: "Nurkanović et al. 2023 (time-freezing) and 2022 (FESD), order 2n_s - 1",
            run: order,
        },
        Experiment {
            id: "tf-hopper-ocp",
            title: "Planar hopper over three holes (Sec. 6) from the trivial initialization",
            paper: "Nurkanović et al. 2023 (time-freezing), Sec. 6, Figs. 7-8",
            run: hopper_ocp,
        },
        Experiment {
            id: "tf-bouncing-ball",
            title: "Inelastic bouncing ball by time-freezing + FESD",
            paper: "Nurkanović et al. 2023 (time-freezing)",
            run: bouncing_ball,
        },
        Experiment {
            id: "tf-contact-rich",
            title: "Contact-rich problems from model files: a box pushed on four corners, a \
                    landing inside a control interval, replayed through a rigid stepper",
            paper: "Nurkanović et al. 2023 (time-freezing), several contacts",
            run: contact_rich,
        },
    ]
}

/// The system of a model file's text (`source` names it in errors) with the motors
/// `controls`.
fn model_system(
    id: &str,
    text: &str,
    source: &str,
    controls: &[&str],
) -> Result<ModelSystem, ReportError> {
    let model =
        nonsmooth_core::Model::from_toml_str(text, Some(source)).map_err(|e| fail(id, e))?;
    let names: Vec<String> = controls.iter().map(|c| c.to_string()).collect();
    ModelSystem::new(model, None, &names).map_err(|e| fail(id, e))
}

/// The guiding particle of Ex. 1–4 on `examples/particle.toml` (friction μ if given):
/// a horizontal force of 7 N, and from t = 1 on (τ = 2, the end of step 8) the vertical
/// force 2g(t − 1) that lifts it off at t = 1.5, as motor efforts affine in the physical
/// clock ([`ModelSystem::with_clock_rates`]: controls (u_x, u_y, r_x, r_y)).
fn run_particle(
    id: &str,
    mu: Option<f64>,
    steps: usize,
    n_fe: usize,
) -> Result<SimResult, ReportError> {
    let text = match mu {
        Some(mu) => PARTICLE_MODEL.replace("friction = 0.0", &format!("friction = {mu}")),
        None => PARTICLE_MODEL.to_string(),
    };
    let sys = model_system(id, &text, "examples/particle.toml", &["force_x", "force_y"])?;
    let tf = Arc::new(TimeFreezing::new(sys.with_clock_rates(), G).map_err(|e| fail(id, e))?);
    let step = 0.25;
    let controls = move |k: usize| {
        if k as f64 * step >= 2.0 - 1e-12 {
            vec![7.0, -2.0 * G, 0.0, 2.0 * G]
        } else {
            vec![7.0, 0.0, 0.0, 0.0]
        }
    };
    simulate(&tf, &[0.0, 1.0, 0.0, 0.0, 0.0], step, steps, &controls, &{
        let mut o = FesdOptions::default();
        o.discretization.n_fe = n_fe;
        o
    })
    .map_err(|e| fail(id, e))
}

/// (impact τ, jump-end τ, lift-off τ) read from the stage points (switches fall on them).
fn events(r: &SimResult, q_idx: usize, v_idx: usize) -> (f64, f64, f64) {
    let tol = 1e-4;
    let tr = &r.traj;
    let impact = tr
        .tau
        .iter()
        .zip(&tr.y)
        .find(|(_, y)| y[q_idx] < tol)
        .map_or(f64::NAN, |(t, _)| *t);
    let jump_end = tr
        .tau
        .iter()
        .zip(&tr.y)
        .find(|(t, y)| **t > impact && y[v_idx] > -tol)
        .map_or(f64::NAN, |(t, _)| *t);
    let liftoff = tr
        .tau
        .iter()
        .zip(&tr.y)
        // Sliding stage points have |v| ~ 1e-13; the switch point itself carries the
        // homotopy's residual (≈ 3e-9 at τ = 2.75), the first point after lift-off ≈ 1e-3.
        .filter(|(t, y)| **t > jump_end && y[v_idx].abs() < 1e-6)
        .map(|(t, _)| *t)
        .fold(f64::NAN, f64::max);
    (impact, jump_end, liftoff)
}

fn plot(
    ctx: &RunContext,
    out: &mut ExperimentOutcome,
    file: &str,
    title: &str,
    r: &SimResult,
    names: &[&str],
) -> Result<(), ReportError> {
    let mut fig = Figure::new(title, "numerical time τ", "state");
    for (i, n) in names.iter().enumerate() {
        let pts = r
            .traj
            .tau
            .iter()
            .zip(&r.traj.y)
            .map(|(t, y)| (*t, y[i]))
            .collect();
        fig = fig.with(Series::line(*n, pts));
    }
    fig.write_svg(&ctx.path(file))?;
    out.figure(file);
    Ok(())
}

fn particle_sim(ctx: &RunContext, out: &mut ExperimentOutcome) -> Result<(), ReportError> {
    let id = "tf-particle-sim";
    // 6 elements per step in full mode: the error of the non-polynomial part (t ≥ 1) is
    // O(h⁵) in the element length
    let (steps, n_fe, step) = if ctx.quick {
        (4, 3, 0.25)
    } else {
        (14, 6, 0.25)
    };
    let r = run_particle(id, None, steps, n_fe)?;
    let (impact, jump_end, liftoff) = events(&r, 1, 3);
    let ts = (2.0 / G).sqrt();
    out.metric("impact_tau", impact);
    out.metric("jump_end_tau", jump_end);
    out.expect("impact_tau", ts, 1e-5, "E1: τ_s = √(2/g)");
    out.expect("jump_end_tau", 2.0 * ts, 1e-5, "E1: τ_s + √(2g)/a_n");
    let y = r.traj.y.last().cloned().unwrap_or_default();
    let tau_end = steps as f64 * step;
    let exact = exact_particle(tau_end);
    // The error is taken at the element boundaries (every n_s-th trajectory point: Radau
    // IIA's last stage is the element end), where collocation is superconvergent (order
    // 2n_s − 1); the interior stage values are only of stage order n_s (≈ 4e-6 here in the
    // sliding phase t ≥ 1) and are not what the 1e-8 target refers to.
    let n_s = FesdOptions::default().discretization.n_s;
    let mut max_err: f64 = 0.0;
    for (t, yy) in r.traj.tau.iter().zip(&r.traj.y).step_by(n_s) {
        let e = exact_particle(*t);
        for i in 0..4 {
            max_err = max_err.max((yy[i] - e[i]).abs());
        }
    }
    out.metric("q1_end", y[0]);
    out.metric("q2_end", y[1]);
    out.metric("v1_end", y[2]);
    out.metric("v2_end", y[3]);
    out.metric("max_error", max_err);
    out.metric("nlp_iterations", r.nlp_iterations as f64);
    out.metric("cpu_seconds", r.cpu_seconds);
    out.expect("q1_end", exact[0], 1e-5, "Ex. 3 analytic solution (E1)");
    out.expect("v1_end", exact[2], 1e-5, "Ex. 3 analytic solution (E1)");
    out.expect("q2_end", exact[1], 1e-5, "Ex. 3 analytic solution (E1)");
    out.expect("v2_end", exact[3], 1e-5, "Ex. 3 analytic solution (E1)");
    out.expect(
        "max_error",
        0.0,
        1e-8,
        "our tolerance: the analytic particle trajectory to 1e-8 with n_s = 3 (E1)",
    );
    if !ctx.quick {
        out.metric("liftoff_tau", liftoff);
        out.expect(
            "liftoff_tau",
            2.75,
            1e-3,
            "Ex. 3 analytic (E1): lift-off at t = 1.5, τ = 2.75",
        );
    }
    out.notes.push(format!(
        "FESD Radau IIA n_s = 3, N_FE = {n_fe}, steps of {step} to τ = {tau_end}; ℓ1-penalty homotopy, comp_tol 1e-9, \
         active-set polish (no penetration while frozen), fixed-mode prediction for steps without a switch: \
         the remaining error is the O(h⁵) discretization error of the non-polynomial part t ≥ 1"
    ));
    plot(
        ctx,
        out,
        "particle.svg",
        "Time-freezing particle (Fig. 3)",
        &r,
        &["q1", "q2", "v1", "v2", "t"],
    )
}

/// Analytic state (q1, q2, v1, v2, t) of Ex. 3 at numerical time τ (E1 of
/// docs/decisions/002-time-freezing.md).
fn exact_particle(tau: f64) -> [f64; 5] {
    let ts = (2.0 / G).sqrt();
    let vs = (2.0 * G).sqrt();
    if tau <= ts {
        let t = tau;
        return [3.5 * t * t, 1.0 - 0.5 * G * t * t, 7.0 * t, -G * t, t];
    }
    if tau <= 2.0 * ts {
        return [3.5 * ts * ts, 0.0, 7.0 * ts, -vs + G * (tau - ts), ts];
    }
    let t = if tau <= 2.0 {
        ts + 0.5 * (tau - 2.0 * ts)
    } else if tau <= 2.75 {
        2.0 - (3.0 - tau).sqrt()
    } else {
        1.5 + (tau - 2.75)
    };
    let (q2, v2) = if t > 1.5 {
        (G * (t - 1.5).powi(3) / 3.0, G * (t - 1.5).powi(2))
    } else {
        (0.0, 0.0)
    };
    [3.5 * t * t, q2, 7.0 * t, v2, t]
}

fn particle_friction(ctx: &RunContext, out: &mut ExperimentOutcome) -> Result<(), ReportError> {
    let id = "tf-particle-friction";
    let steps = if ctx.quick { 4 } else { 14 };
    let r = run_particle(id, Some(0.6), steps, 3)?;
    let (_, jump_end, liftoff) = events(&r, 1, 3);
    let v1 = r
        .traj
        .tau
        .iter()
        .zip(&r.traj.y)
        .find(|(t, _)| (**t - jump_end).abs() < 1e-12)
        .map_or(f64::NAN, |(_, y)| y[2]);
    out.metric("v1_after_impact", v1);
    out.expect(
        "v1_after_impact",
        3.1606 - 0.6 * 4.4294,
        1e-3,
        "Ex. 4 analytic (E2): v1⁺ = v1⁻ − μ·√(2g)",
    );
    if !ctx.quick {
        out.metric("liftoff_tau", liftoff);
        out.expect("liftoff_tau", 2.75, 1e-3, "Ex. 4 (E2): lift-off unchanged");
    }
    plot(
        ctx,
        out,
        "friction.svg",
        "Particle with friction (Fig. 5)",
        &r,
        &["q1", "q2", "v1", "v2", "t"],
    )
}

/// The falling point of `tf-bouncing-ball` (`examples/falling_point.toml`).
const FALLING_POINT_MODEL: &str = include_str!("../../../examples/falling_point.toml");

fn bouncing_ball(ctx: &RunContext, out: &mut ExperimentOutcome) -> Result<(), ReportError> {
    let id = "tf-bouncing-ball";
    let a_n = 100.0;
    let sys = model_system(id, FALLING_POINT_MODEL, "examples/falling_point.toml", &[])?;
    let tf = Arc::new(TimeFreezing::new(sys, a_n).map_err(|e| fail(id, e))?);
    let ts = (2.0 / G).sqrt();
    let horizon = ts + (2.0 * G).sqrt() / a_n + (1.0 - ts) * (a_n + G) / a_n;
    let steps = 20;
    let r = simulate(
        &tf,
        &[1.0, 0.0, 0.0],
        horizon / steps as f64,
        steps,
        &|_| vec![],
        &FesdOptions::default(),
    )
    .map_err(|e| fail(id, e))?;
    let y = r.traj.y.last().cloned().unwrap_or_default();
    let impact = r
        .traj
        .y
        .iter()
        .find(|y| y[0] < 1e-4)
        .map_or(f64::NAN, |y| y[2]);
    out.metric("abs_err_q", y[0].abs());
    out.metric("abs_err_v", y[1].abs());
    out.metric("impact_time", impact);
    out.metric("clock_end", y[2]);
    out.metric("cpu_seconds", r.cpu_seconds);
    out.metric("nlp_iterations", r.nlp_iterations as f64);
    out.expect("abs_err_q", 0.0, 5e-6, "analytic: rest on the ground");
    out.expect("abs_err_v", 0.0, 1e-8, "analytic: rest on the ground");
    out.expect("impact_time", ts, 1e-5, "analytic: √(2/g)");
    plot(
        ctx,
        out,
        "ball.svg",
        "Bouncing ball, time-freezing",
        &r,
        &["q", "v", "t"],
    )
}

const BALL_MODEL: &str = include_str!("../../../examples/ball_on_ground.toml");
const LATE_LANDING_PROBLEM: &str = include_str!("../../../examples/ocp_ball_late_landing.toml");
const BOX_MODEL: &str = include_str!("../../../examples/box_on_ground.toml");
const BOX_PUSH_PROBLEM: &str = include_str!("../../../examples/ocp_box_push.toml");

/// Problem files that give only the model and the target, solved with the defaults that
/// follow the model, then replayed (zero-order hold, ten `anitescu-potra` steps per finite
/// element): `examples/ocp_ball_late_landing.toml` (a ball landing 2 ms after a
/// control-interval boundary, braked to rest) and, in full mode, `examples/ocp_box_push.toml`
/// (a box on four corners, μ = 0.5, pushed 0.5 m and stopped flat).
fn contact_rich(ctx: &RunContext, out: &mut ExperimentOutcome) -> Result<(), ReportError> {
    let id = "tf-contact-rich";
    let mut cases = vec![(
        "landing",
        LATE_LANDING_PROBLEM,
        "examples/ocp_ball_late_landing.toml",
        BALL_MODEL,
        "examples/ball_on_ground.toml",
        0.1,
    )];
    if !ctx.quick {
        cases.push((
            "box",
            BOX_PUSH_PROBLEM,
            "examples/ocp_box_push.toml",
            BOX_MODEL,
            "examples/box_on_ground.toml",
            0.04,
        ));
    }
    let first_order =
        "first-order collocation (one Radau stage, 50 ms elements): an O(h) replay gap";
    for (name, problem, problem_source, model, model_source, x_bound) in cases {
        let model = nonsmooth_core::Model::from_toml_str(model, Some(model_source))
            .map_err(|e| fail(id, e))?;
        let p = ModelProblem::with_model(problem, Some(problem_source), model)
            .map_err(|e| fail(id, e))?;
        let sol = solve_ocp(&p.tf, &p.horizon, &p.options).map_err(|e| fail(id, e))?;
        let replay = p
            .replay(&sol, "anitescu-potra", 10)
            .map_err(|e| fail(id, e))?;
        let gap = replay.deviation();
        out.metric(&format!("{name}_comp_residual"), sol.comp_residual);
        out.metric(&format!("{name}_terminal_error"), sol.terminal_error);
        out.metric(&format!("{name}_objective"), sol.objective);
        out.metric(&format!("{name}_nlp_iterations"), sol.nlp_iterations as f64);
        out.metric(&format!("{name}_cpu_seconds"), sol.cpu_seconds);
        out.metric(&format!("{name}_replay_dx"), gap[0]);
        out.metric(&format!("{name}_replay_dy"), gap[1]);
        out.expect(
            &format!("{name}_comp_residual"),
            0.0,
            1e-9,
            "an exact MPCC solution",
        );
        out.expect(
            &format!("{name}_terminal_error"),
            0.0,
            1e-6,
            "the terminal constraints",
        );
        out.expect(&format!("{name}_replay_dx"), 0.0, x_bound, first_order);
        out.expect(&format!("{name}_replay_dy"), 0.0, 0.01, first_order);
        if let Some(&dtheta) = gap.get(2) {
            out.metric(&format!("{name}_replay_dtheta"), dtheta);
            out.expect(&format!("{name}_replay_dtheta"), 0.0, 0.02, first_order);
        }
        out.notes.push(format!(
            "{name}: {}",
            nonsmooth_ocp::problem::RunSettings::of(&p.tf, &p.horizon, &p.options)
        ));
    }
    out.notes.push(
        "the replays end within the first-order bounds, not within 1 cm: the default \
         discretization (one collocation stage) converges exactly where two stages stall"
            .into(),
    );
    Ok(())
}

/// Minimum of Δ Σ u_k² subject to q(T) = 3, v(T) = 0 for a double integrator with
/// piecewise-constant u on N intervals (minimum-norm solution of a 2 × N linear system).
pub fn discrete_double_integrator_optimum(n: usize, t: f64, q_target: f64) -> f64 {
    let d = t / n as f64;
    let mut m = [[0.0; 2]; 2];
    for k in 0..n {
        let r = [d * (t - (k + 1) as f64 * d) + 0.5 * d * d, d];
        for i in 0..2 {
            for j in 0..2 {
                m[i][j] += r[i] * r[j];
            }
        }
    }
    let det = m[0][0] * m[1][1] - m[0][1] * m[1][0];
    d * q_target * q_target * m[1][1] / det
}

/// The particle of the time-freezing paper's Ex. 5 as a model file, and its OCP
/// (`tf-particle-ocp`).
const PARTICLE_MODEL: &str = include_str!("../../../examples/particle.toml");
const PARTICLE_PROBLEM: &str = include_str!("../../../examples/ocp_particle.toml");

fn particle_ocp(ctx: &RunContext, out: &mut ExperimentOutcome) -> Result<(), ReportError> {
    let id = "tf-particle-ocp";
    // The particle as a model file (examples/particle.toml) through the generic path.
    let model =
        nonsmooth_core::Model::from_toml_str(PARTICLE_MODEL, Some("examples/particle.toml"))
            .map_err(|e| fail(id, e))?;
    let p = ModelProblem::with_model(PARTICLE_PROBLEM, Some("examples/ocp_particle.toml"), model)
        .map_err(|e| fail(id, e))?;
    let (tf, hz, o) = (p.tf, p.horizon, p.options);
    let (n, t_end) = (hz.n_steps, p.t_final);
    let sol = solve_ocp(&tf, &hz, &o).map_err(|e| fail(id, e))?;
    let exact = discrete_double_integrator_optimum(n, t_end, 3.0);
    out.metric("objective", sol.objective);
    out.metric("discrete_optimum", exact);
    out.metric("terminal_error", sol.terminal_error);
    out.metric("comp_residual", sol.comp_residual);
    out.metric("cpu_seconds", sol.cpu_seconds);
    out.metric("nlp_iterations", sol.nlp_iterations as f64);
    out.metric("s_contact", sol.s[n - 1]);
    out.expect(
        "objective",
        exact,
        0.05,
        "discrete optimum of the decoupled horizontal problem",
    );
    out.expect("terminal_error", 0.0, 1e-6, "E5: our tolerance");
    out.expect("comp_residual", 0.0, 1e-9, "E5: our tolerance");
    out.expect("s_contact", 2.0, 1e-6, "Ex. 5, Fig. 6 (E5): s = 1/γ = 2");
    out.notes.push(
        "the jump→sliding transition keeps c₁ = 0, so it is not forced onto an element boundary; \
         the mixed element makes the objective differ from the discrete optimum by ≈ 0.03"
            .into(),
    );
    let fig = Figure::new(
        "Particle OCP: controls and speed of time (Fig. 6)",
        "physical time t",
        "value",
    )
    .with(Series::line(
        "u1",
        staircase(&sol.interval_clock, sol.u.iter().map(|u| u[0])),
    ))
    .with(Series::line(
        "s",
        staircase(&sol.interval_clock, sol.s.iter().copied()),
    ));
    fig.write_svg(&ctx.path("controls.svg"))?;
    out.figure("controls.svg");
    let mut fig = Figure::new(
        "Particle OCP: states in numerical time",
        "numerical time τ",
        "state",
    );
    for (i, name) in ["q1", "q2", "v1", "v2", "t"].iter().enumerate() {
        fig = fig.with(Series::line(
            *name,
            sol.traj
                .tau
                .iter()
                .zip(&sol.traj.y)
                .map(|(t, y)| (*t, y[i]))
                .collect(),
        ));
    }
    fig.write_svg(&ctx.path("states.svg"))?;
    out.figure("states.svg");
    Ok(())
}

/// Problem of `tf-order`: the spring-loaded mass of `examples/spring_mass.toml` (ω = 2,
/// spring rest at −1, q(0) = 1), a_n = 10, horizon τ = 2 (impact at t = π/6 with
/// v⁻ = −2√3, frozen jump of 0.346, then resting on the ground).
const SPRING_MASS_MODEL: &str = include_str!("../../../examples/spring_mass.toml");
const ORDER_OMEGA: f64 = 2.0;
const ORDER_REST: f64 = -1.0;
const ORDER_AN: f64 = 10.0;
const ORDER_TAU: f64 = 2.0;
const ORDER_NFE: usize = 3;

/// Global error max_i |y_i(τ_end) − y_i,exact| of the integrator with `n_steps` steps.
pub fn order_error(n_s: usize, fesd: bool, n_steps: usize) -> Result<f64, String> {
    let sys = model_system(
        "tf-order",
        SPRING_MASS_MODEL,
        "examples/spring_mass.toml",
        &[],
    )
    .map_err(|e| e.to_string())?;
    let tf = Arc::new(TimeFreezing::new(sys, ORDER_AN).map_err(|e| e.to_string())?);
    let mut o = FesdOptions::default();
    o.discretization.n_s = n_s;
    o.discretization.n_fe = ORDER_NFE;
    o.discretization.fesd = fesd;
    o.mpcc.accept_relaxed = !fesd;
    let r = simulate(
        &tf,
        &[1.0, 0.0, 0.0],
        ORDER_TAU / n_steps as f64,
        n_steps,
        &|_| vec![],
        &o,
    )
    .map_err(|e| e.to_string())?;
    let y = r.traj.y.last().cloned().unwrap_or_default();
    let ex = spring_mass_exact(1.0, ORDER_AN, ORDER_TAU);
    Ok(y.iter()
        .zip(ex)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max))
}

/// Exact time-freezing state (q, v, t) of the spring-loaded mass (q̈ = −ω² (q − q_rest),
/// q_rest < 0) at numerical time τ from q(0) = q0 > 0, v(0) = 0 with auxiliary acceleration
/// a_n: cosine fall, frozen jump of length |v⁻|/a_n, then resting on the ground with
/// dt/dτ = γ = a_n/(a_n + ω²|q_rest|) (Thm 4 with D = 1).
pub fn spring_mass_exact(q0: f64, a_n: f64, tau: f64) -> [f64; 3] {
    let (w, r) = (ORDER_OMEGA, ORDER_REST);
    let amp = q0 - r;
    let t_imp = (-r / amp).acos() / w;
    if tau <= t_imp {
        return [r + amp * (w * tau).cos(), -amp * w * (w * tau).sin(), tau];
    }
    let v_imp = -amp * w * (w * t_imp).sin();
    let tau_jump = -v_imp / a_n;
    if tau <= t_imp + tau_jump {
        return [0.0, v_imp + a_n * (tau - t_imp), t_imp];
    }
    let phi = -w * w * r.abs();
    let gamma = a_n / (a_n - phi);
    [0.0, 0.0, t_imp + gamma * (tau - t_imp - tau_jump)]
}

/// One `tf-order` series: (metric, n_s, FESD?, quick step counts, full step counts).
type OrderCase = (
    &'static str,
    usize,
    bool,
    &'static [usize],
    &'static [usize],
);

/// Least-squares slope of log(err) against log(h).
pub fn fitted_order(points: &[(f64, f64)]) -> f64 {
    let pts: Vec<(f64, f64)> = points
        .iter()
        .filter(|(h, e)| *h > 0.0 && *e > 0.0)
        .map(|(h, e)| (h.ln(), e.ln()))
        .collect();
    let n = pts.len() as f64;
    let (mx, my) = (
        pts.iter().map(|p| p.0).sum::<f64>() / n,
        pts.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
    sxy / sxx
}

fn order(ctx: &RunContext, out: &mut ExperimentOutcome) -> Result<(), ReportError> {
    let id = "tf-order";
    // (name, n_s, fesd, quick steps, full steps)
    let cases: [OrderCase; 4] = [
        ("order_ns1", 1, true, &[8, 16], &[8, 16, 32]),
        ("order_ns2", 2, true, &[4, 8], &[4, 8, 16]),
        ("order_ns3", 3, true, &[4, 8], &[4, 8, 16]),
        ("order_fixed_irk", 3, false, &[8, 16], &[8, 16, 32]),
    ];
    let mut fig = Figure::new(
        "Global error at τ = 2 vs element length (log-log)",
        "log10 h (element length)",
        "max |y − y_exact|",
    );
    fig.log_y = true;
    let mut rows = vec![];
    for (name, n_s, fesd, quick, full) in cases {
        let steps = if ctx.quick { quick } else { full };
        let mut pts = vec![];
        for &n in steps {
            let err = order_error(n_s, fesd, n).map_err(|e| fail(id, e))?;
            let h = ORDER_TAU / (n * ORDER_NFE) as f64;
            pts.push((h, err));
            rows.push(format!("{name}: N = {n}, h = {h:.4}, error = {err:.3e}"));
        }
        let p = fitted_order(&pts);
        out.metric(name, p);
        let label = if fesd {
            format!("FESD Radau IIA n_s = {n_s}")
        } else {
            format!("fixed-grid Radau IIA n_s = {n_s}")
        };
        fig = fig.with(Series::line(
            label,
            pts.iter().map(|(h, e)| (h.log10(), *e)).collect(),
        ));
        let (expected, why) = if fesd {
            ((2 * n_s - 1) as f64, "FESD order 2n_s − 1 (E4)")
        } else {
            (1.0, "fixed grid, switch inside an element: order 1 (E4)")
        };
        out.expect(name, expected, 0.5, why);
    }
    fig.write_svg(&ctx.path("order.svg"))?;
    out.figure("order.svg");
    out.notes.push(format!(
        "spring-loaded mass (ω = 2, rest −1, q0 = 1, a_n = 10) integrated to τ = {ORDER_TAU} with \
         N_FE = {ORDER_NFE}; order = least-squares slope of log error vs log h, checked to ±0.5; {}",
        rows.join("; ")
    ));
    Ok(())
}

/// The problem of `tf-hopper-ocp` in full mode: `examples/ocp_hopper_smoothing.toml` on the
/// model file `examples/hopper.toml`, the paper's hopper (T = 2.5, |u| ≤ 60, N = 20,
/// N_FE = 3, three holes) through the smoothing phase with the holes grown from nothing
/// (deviations from the paper in that file's header and in
/// docs/decisions/002-time-freezing.md, "`tf-hopper-ocp` settings").
pub const HOPPER_PROBLEM: &str = include_str!("../../../examples/ocp_hopper_smoothing.toml");
/// The hopper of the time-freezing paper's Sec. 6 as a model file.
pub const HOPPER_MODEL: &str = include_str!("../../../examples/hopper.toml");

/// Quick mode's problem: a smoke test of the machinery (model, path and hole constraints,
/// homotopy, polish) on a short horizon whose target is the start pose (4 intervals, one
/// hole, the direct Scholtes homotopy with the hopper's settings).
const HOPPER_QUICK_PROBLEM: &str = r#"
[ocp]
model = "hopper.toml"
N = 4
T = 2.5
s_max = 5.0
[ocp.terminal]
q.base_x = 0.0
q.base_z = 0.4
q.hip_joint = 0.0
q.knee_joint = 0.0
[ocp.path]
q.base_x = [-0.05, inf]
q.base_z = [0.2, 0.55]
q.hip_joint = [-1.1780972450961724, 1.1780972450961724]
q.knee_joint = [-1.5707963267948966, 1.5707963267948966]
[[ocp.path.point]]
body = "shank"
point = [0.0, -0.2, 0.0]
x = [-0.05, inf]
[[ocp.path.point]]
body = "thigh"
point = [0.0, -0.2, 0.0]
x = [-0.05, inf]
y = [0.05, inf]
[[ocp.path.point]]
body = "shank"
point = [0.0, -0.2, 0.0]
y = [-0.005, 0.2]
[[ocp.path.outside_ellipse]]
body = "shank"
point = [0.0, -0.2, 0.0]
center = [0.5, 0.0]
axes = [0.25, 0.1]
[time_freezing]
a_n = 200.0
[fesd]
n_s = 1
n_fe = 2
cross_components = 1
rho_sot = 100.0
relaxation = "scholtes"
n_homotopy = 40
homotopy_retries = 2
tol = 1e-8
max_iter = 3000
"#;

/// A hopper OCP as `tf-hopper-ocp` solves it: system, horizon, options, the hole growth of
/// the smoothing phase (if any), the target x and a description of the settings.
struct HopperSetup {
    tf: Arc<TimeFreezing>,
    hz: Horizon,
    o: FesdOptions,
    growth: Option<nonsmooth_ocp::smoothing::Growth>,
    target_x: f64,
    settings: String,
}

/// Quick mode: [`HOPPER_QUICK_PROBLEM`]. Full mode: [`HOPPER_PROBLEM`]; both on
/// [`HOPPER_MODEL`].
fn hopper_setup(quick: bool) -> Result<HopperSetup, nonsmooth_ocp::OcpError> {
    let model = nonsmooth_core::Model::from_toml_str(HOPPER_MODEL, Some("examples/hopper.toml"))
        .map_err(|e| nonsmooth_ocp::OcpError::InvalidInput(e.to_string()))?;
    let (text, source) = if quick {
        (HOPPER_QUICK_PROBLEM, "tf-hopper-ocp quick problem")
    } else {
        (HOPPER_PROBLEM, "examples/ocp_hopper_smoothing.toml")
    };
    let p = ModelProblem::with_model(text, Some(source), model)?;
    let base_x = p
        .state_names
        .iter()
        .position(|n| n.starts_with("base_x"))
        .unwrap_or(0);
    let target_x = p
        .horizon
        .terminal
        .iter()
        .find(|(i, _)| *i == base_x)
        .map_or(0.0, |(_, x)| *x);
    let o = &p.options;
    let holes: Vec<([f64; 2], [f64; 2])> = p
        .tf
        .cls
        .path_terms()
        .iter()
        .filter_map(|t| match t {
            nonsmooth_ocp::model_system::PathTerm::OutsideEllipse(e) => Some((e.center, e.axes)),
            nonsmooth_ocp::model_system::PathTerm::Point(_) => None,
        })
        .collect();
    let settings = if quick {
        format!(
            "quick mode: smoke test that keeps the start pose, no hop; N = {}, N_FE = {}, \
             n_s = {}, {} hole, Scholtes homotopy (σ₀ = {}, κ = {}) with cross complementarity \
             on the gap only, s ∈ [1, 5] with ρ_sot = {}, active-set polish, from y0 \
             everywhere and u = 0",
            p.horizon.n_steps,
            o.discretization.n_fe,
            o.discretization.n_s,
            holes.len(),
            o.mpcc.sigma0,
            o.mpcc.kappa,
            o.discretization.rho_sot
        )
    } else {
        let stab = p.tf.stance.map_or("none".to_string(), |s| {
            format!("k = {} /s, δ = {} m", s.rate, s.depth)
        });
        let (widths, factors) = o
            .mpcc
            .smoothing
            .as_ref()
            .map_or((vec![], vec![]), |s| (s.widths.clone(), s.factors.clone()));
        format!(
            "examples/ocp_hopper_smoothing.toml on examples/hopper.toml: N = {}, N_FE = {}, \
             n_s = {} (paper: 3), T = {}, target x = {target_x}, holes (centre, semi-axes) \
             {holes:?}, terminal clock and one speed of time (the authors' code), stance \
             stabilization {stab}, smoothing phase (widths {:?} × {:?}) with the holes grown \
             over the scales {:?} and full size, then the Scholtes homotopy from σ₀ = {} with \
             κ = {}, ρ_sot = {}, IPOPT/MUMPS, from y0 everywhere and u = 0",
            p.horizon.n_steps,
            o.discretization.n_fe,
            o.discretization.n_s,
            p.t_final,
            widths,
            factors,
            p.growth.as_ref().map_or(vec![], |g| g.scales.clone()),
            o.mpcc.sigma0,
            o.mpcc.kappa,
            o.discretization.rho_sot
        )
    };
    Ok(HopperSetup {
        tf: p.tf,
        hz: p.horizon,
        o: p.options,
        growth: p.growth,
        target_x,
        settings,
    })
}

fn hopper_ocp(ctx: &RunContext, out: &mut ExperimentOutcome) -> Result<(), ReportError> {
    let id = "tf-hopper-ocp";
    let HopperSetup {
        tf,
        hz,
        o,
        growth,
        target_x,
        settings,
    } = hopper_setup(ctx.quick).map_err(|e| fail(id, e))?;
    // one wall-time budget ([fesd] time_limit) for the homotopy and the active set beside it
    let o = o.with_deadline();
    let hop = &tf.cls;
    let n = hz.n_steps;
    let problem = nonsmooth_ocp::run::Problem {
        tf: &tf,
        horizon: &hz,
        options: &o,
        plan: None,
        growth: growth.as_ref(),
        state_names: &[],
        t_final: None,
    };
    let run =
        nonsmooth_ocp::run::run(&problem, None, &mut |_, _| {}).map_err(|f| fail(id, f.error))?;
    if let Some(f) = &run.failure {
        // the last iterate is recorded honestly: the checks below then fail
        let budget = run.time_limit_reached.map_or(String::new(), |t| {
            format!(" (its wall-time budget of {t} s ran out)")
        });
        out.notes.push(format!(
            "{f}{budget}; metrics are those of the last iterate"
        ));
    }
    let (converged, sol) = (run.solved(), run.solution);
    let min_clear = hop.min_obstacle_clearance(&sol.traj.y).unwrap_or(0.0);
    let hops = hop.flight_phases(&sol.traj.y, 1e-3);
    out.metric("objective", sol.objective);
    out.metric("terminal_error", sol.terminal_error);
    out.metric("comp_residual", sol.comp_residual);
    out.metric("hop_count", hops as f64);
    out.metric("min_hole_clearance", min_clear);
    out.metric("cpu_seconds", sol.cpu_seconds);
    out.metric("nlp_iterations", sol.nlp_iterations as f64);
    out.metric("converged", f64::from(u8::from(converged)));
    out.expect(
        "converged",
        1.0,
        0.0,
        "Sec. 6: converges from the trivial initialization (E6)",
    );
    out.expect(
        "terminal_error",
        0.0,
        1e-6,
        "E6: reaches q_target, our tolerance",
    );
    out.expect("comp_residual", 0.0, 1e-9, "E6: our tolerance");
    out.metric("hole_violation", (-min_clear).max(0.0));
    out.expect(
        "hole_violation",
        0.0,
        1e-6,
        "Sec. 6: the foot avoids every hole at all stage points (E6)",
    );
    if !ctx.quick {
        out.expect("hop_count", 3.0, 0.0, "Sec. 6 (E6): about three hops");
    }
    out.notes.push(settings);
    let problem = HopperProblem {
        tf: &tf,
        hz: &hz,
        o: &o,
    };
    active_set_beside(ctx, id, problem, &sol, converged, out)?;
    // trajectory in physical time
    let pick = |f: &dyn Fn(&[f64]) -> f64| -> Vec<(f64, f64)> {
        sol.traj.y.iter().map(|y| (y[8], f(y))).collect()
    };
    let foot = |y: &[f64]| hop.contact_point(&y[..4]);
    let fig = Figure::new(
        "Hopper OCP: trajectory (Fig. 7)",
        "physical time t",
        "position [m]",
    )
    .with(Series::line("hip x", pick(&|y| y[0])))
    .with(Series::line("hip z", pick(&|y| y[1])))
    .with(Series::line("foot x", pick(&|y| foot(y)[0])))
    .with(Series::line("foot z", pick(&|y| foot(y)[1])));
    fig.write_svg(&ctx.path("trajectory.svg"))?;
    out.figure("trajectory.svg");
    let fig = Figure::new(
        "Hopper OCP: torques (Fig. 8)",
        "physical time t",
        "torque [N m]",
    )
    .with(Series::line(
        "u hip",
        staircase(&sol.interval_clock, sol.u.iter().map(|u| u[0])),
    ))
    .with(Series::line(
        "u knee",
        staircase(&sol.interval_clock, sol.u.iter().map(|u| u[1])),
    ));
    fig.write_svg(&ctx.path("controls.svg"))?;
    out.figure("controls.svg");
    // animation frame strip: the leg at the control-interval boundaries, ground and holes
    let fig = frame_strip(hop, target_x, n, &sol);
    fig.write_svg(&ctx.path("frames.svg"))?;
    out.figure("frames.svg");
    let holes = hop
        .path_terms()
        .iter()
        .filter(|t| matches!(t, PathTerm::OutsideEllipse(_)))
        .count();
    let scene = hopper_scene(
        hop,
        &sol.traj.y,
        match holes {
            1 => "Hopper OCP solution over one hole (Sec. 6)".to_string(),
            n => format!("Hopper OCP solution over {n} holes (Sec. 6)"),
        },
    );
    nonsmooth_report::viewer::write_viewer_html(&ctx.path("viewer.html"), &scene)?;
    out.player("viewer.html");
    Ok(())
}

/// The hopper's optimal control problem as solved: its time-freezing system, horizon and
/// options.
#[derive(Clone, Copy)]
struct HopperProblem<'a> {
    tf: &'a Arc<TimeFreezing>,
    hz: &'a Horizon,
    o: &'a FesdOptions,
}

/// The active-set MPCC method ([`nonsmooth_ocp::fesd::MpccMethod::ActiveSet`]) from the
/// homotopy's end point (converged or its last iterate, so the homotopy is phase I and runs
/// once), beside the homotopy: `b_stationary` (1/0), `lpec_count`, `bnlp_count` and the
/// active-set point's objective, complementarity, terminal error, hops and hole clearance as
/// `active_set_*` metrics, both methods in `methods.csv`, the verdict in a note.
fn active_set_beside(
    ctx: &RunContext,
    id: &str,
    problem: HopperProblem<'_>,
    homotopy: &nonsmooth_ocp::fesd::OcpSolution,
    homotopy_converged: bool,
    out: &mut ExperimentOutcome,
) -> Result<(), ReportError> {
    let HopperProblem { tf, hz, o } = problem;
    let hop = &tf.cls;
    let row = |name: &str, sol: &nonsmooth_ocp::fesd::OcpSolution, certified: Option<bool>| {
        let clearance = hop.min_obstacle_clearance(&sol.traj.y).unwrap_or(0.0);
        vec![
            name.to_string(),
            format!("{:.9}", sol.objective),
            format!("{:.3e}", sol.comp_residual),
            format!("{:.3e}", sol.terminal_error),
            hop.flight_phases(&sol.traj.y, 1e-3).to_string(),
            format!("{:.3e}", (-clearance).max(0.0)),
            certified.map_or("-".into(), |c| u8::from(c).to_string()),
            sol.active_set
                .as_ref()
                .map_or("-".into(), |a| a.lpec_count.to_string()),
            sol.active_set
                .as_ref()
                .map_or("-".into(), |a| a.bnlp_count.to_string()),
            format!("{:.1}", sol.cpu_seconds),
        ]
    };
    let mut rows = vec![row(
        if homotopy_converged {
            "homotopy"
        } else {
            "homotopy (stalled)"
        },
        homotopy,
        None,
    )];
    match nonsmooth_ocp::fesd::solve_active_set_from_point(tf, hz, o, &homotopy.x) {
        Ok(exact) => {
            let a = exact
                .active_set
                .as_ref()
                .ok_or_else(|| fail(id, "the active-set method returned no summary"))?;
            let clearance = hop.min_obstacle_clearance(&exact.traj.y).unwrap_or(0.0);
            out.metric("b_stationary", a.b_stationary());
            out.metric("lpec_count", a.lpec_count as f64);
            out.metric("bnlp_count", a.bnlp_count as f64);
            out.metric("active_set_objective", exact.objective);
            out.metric("active_set_comp_residual", exact.comp_residual);
            out.metric("active_set_terminal_error", exact.terminal_error);
            out.metric(
                "active_set_hop_count",
                hop.flight_phases(&exact.traj.y, 1e-3) as f64,
            );
            out.metric("active_set_hole_violation", (-clearance).max(0.0));
            out.metric("active_set_cpu_seconds", exact.cpu_seconds);
            out.notes.push(format!(
                "active set from the homotopy's point: {}; exact complementarity; {} LPECs, \
                 {} branch NLPs",
                a.verdict, a.lpec_count, a.bnlp_count
            ));
            rows.push(row("active set", &exact, Some(a.verdict.is_b_stationary())));
        }
        Err(e) => {
            out.metric("b_stationary", 0.0);
            out.notes
                .push(format!("active set from the homotopy's point: {e}"));
        }
    }
    out.expect(
        "b_stationary",
        1.0,
        0.0,
        "our requirement: a B-stationarity certificate (or the LPEC's reason, in the notes)",
    );
    let header = [
        "method",
        "objective",
        "comp_residual",
        "terminal_error",
        "hops",
        "hole_violation",
        "b_stationary",
        "lpecs",
        "bnlps",
        "cpu_seconds",
    ]
    .map(String::from);
    nonsmooth_report::table::write_csv_cells(&ctx.path("methods.csv"), &header, &rows)?;
    out.files.push("methods.csv".into());
    Ok(())
}

/// The trajectory viewer's scene of a hopper solution `y` (stage points `(q, v, t)`): the
/// model's own scene ([`nonsmooth_figures::viewer::scene`]) over the stage points in physical
/// time (frozen impact phases collapse to their end), with the outlines of the holes
/// (dots) of the path constraints.
fn hopper_scene(sys: &ModelSystem, y: &[Vec<f64>], title: String) -> ViewerScene {
    use nonsmooth_report::viewer::{ViewerShape, ViewerShapeKind};
    let model = sys.model();
    let states = physical_time_states(model.nq(), model.nv(), y);
    let traj = nonsmooth_figures::viewer::trajectory_of(model, "optimal control", &states);
    let mut scene = nonsmooth_figures::viewer::scene(model, &traj, title);
    let outline = obstacle_outline(sys);
    if !outline.is_empty() {
        scene.shapes.push(ViewerShape {
            name: "holes".into(),
            body: None,
            offset: IDENTITY_POSE,
            kind: ViewerShapeKind::Points { points: outline },
        });
        scene
            .notes
            .push("The dots outline the holes that the foot must stay out of.".into());
    }
    scene
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Semi-axes of the ellipses of a system's path constraints.
    fn hole_axes(sys: &ModelSystem) -> Vec<[f64; 2]> {
        sys.path_terms()
            .iter()
            .filter_map(|t| match t {
                PathTerm::OutsideEllipse(e) => Some(e.axes),
                PathTerm::Point(_) => None,
            })
            .collect()
    }

    /// Full mode's problem (`examples/ocp_hopper_smoothing.toml`) parses into the paper's
    /// horizon and holes with the hole growth, and its settings note names every deviation.
    #[test]
    fn full_mode_hopper_problem_is_the_papers_course_with_hole_growth() {
        let s = hopper_setup(false).expect("full-mode problem");
        assert_eq!(
            (s.hz.n_steps, s.o.discretization.n_fe, s.target_x),
            (20, 3, 3.0)
        );
        assert_eq!(hole_axes(&s.tf.cls), vec![[0.25, 0.1]; 3]);
        let g = s.growth.expect("hole growth");
        assert_eq!(g.scales, vec![0.0, 0.25, 0.5, 0.75]);
        let grown: Vec<f64> = (0..g.scales.len())
            .map(|k| {
                let stage = g.stage(k).expect("stage");
                hole_axes(&stage.cls).first().map_or(0.0, |a| a[0] / 0.25)
            })
            .collect();
        assert_eq!(grown, g.scales);
        for part in [
            "n_s = 2 (paper: 3)",
            "terminal clock",
            "stance stabilization k = 100",
        ] {
            assert!(s.settings.contains(part), "{part}: {}", s.settings);
        }
    }
}
