//! Seed 002 (Nurkanović, Albrecht, Brogliato & Diehl, time-freezing for complementarity
//! Lagrangian systems with inelastic impacts): FESD simulations of the time-freezing
//! reformulation against the analytic solutions of the digest (E1, E2).
//!
//! - `tf-particle-sim`: guiding particle of Ex. 1–3 (impact, frozen jump, sliding with
//!   γ = 0.5, lift-off at τ = 2.75, state at τ = 3.5);
//! - `tf-particle-friction`: Ex. 4 with μ = 0.6 (tangential jump v₁⁺ = 0.50295);
//! - `tf-particle-ocp`: Ex. 5 without friction, against the discrete optimum of the horizontal
//!   double integrator (≈ 13.5 = the continuous optimum with u₁ = 4.5(1 − t));
//! - `tf-bouncing-ball`: ball dropped from 1 m, a_n = 100, n_s = 3, 20 steps × 3 elements.

use std::sync::Arc;

use nonsmooth_ocp::fesd::{simulate, solve_ocp, FesdOptions, Horizon, SimResult};
use nonsmooth_ocp::tf::{PointMass, TimeFreezing};
use nonsmooth_report::{Experiment, ExperimentOutcome, Figure, ReportError, RunContext, Series};

const G: f64 = 9.81;

/// The seed-002 experiments.
pub fn experiments() -> Vec<Experiment> {
    vec![
        Experiment {
            id: "tf-particle-sim",
            title: "Time-freezing particle (Ex. 1-3) with FESD Radau IIA n_s = 3",
            paper: "seed 002 (Nurkanović et al., time-freezing), Fig. 3",
            run: particle_sim,
        },
        Experiment {
            id: "tf-particle-friction",
            title: "Time-freezing particle with Coulomb friction (Ex. 4)",
            paper: "seed 002 (Nurkanović et al., time-freezing), Fig. 5",
            run: particle_friction,
        },
        Experiment {
            id: "tf-particle-ocp",
            title: "Particle OCP through an impact (Ex. 5, frictionless sanity variant)",
            paper: "seed 002 (Nurkanović et al., time-freezing), Fig. 6",
            run: particle_ocp,
        },
        Experiment {
            id: "tf-bouncing-ball",
            title: "Inelastic bouncing ball by time-freezing + FESD",
            paper: "seed 002 (Nurkanović et al., time-freezing)",
            run: bouncing_ball,
        },
    ]
}

fn fail(id: &str, err: impl std::fmt::Display) -> ReportError {
    ReportError::Experiment {
        id: id.to_string(),
        message: err.to_string(),
    }
}

fn run_particle(id: &str, mu: Option<f64>, steps: usize) -> Result<SimResult, ReportError> {
    let pm = PointMass {
        dim: 2,
        mass: 1.0,
        gravity: G,
        mu,
    };
    let tf = Arc::new(TimeFreezing::new(pm, G).map_err(|e| fail(id, e))?);
    let step = 0.25;
    let controls = move |k: usize| {
        if k as f64 * step >= 2.0 - 1e-12 {
            vec![7.0, 0.0, 2.0 * G]
        } else {
            vec![7.0, 0.0, 0.0]
        }
    };
    simulate(
        &tf,
        &[0.0, 1.0, 0.0, 0.0, 0.0],
        step,
        steps,
        &controls,
        &FesdOptions::default(),
    )
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
        .filter(|(t, y)| **t > jump_end && y[v_idx].abs() < 1e-9)
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
    let steps = if ctx.quick { 4 } else { 14 };
    let r = run_particle(id, None, steps)?;
    let (impact, jump_end, liftoff) = events(&r, 1, 3);
    let ts = (2.0 / G).sqrt();
    out.metric("impact_tau", impact);
    out.metric("jump_end_tau", jump_end);
    out.expect("impact_tau", ts, 1e-5, "digest E1: τ_s = √(2/g)");
    out.expect("jump_end_tau", 2.0 * ts, 1e-5, "digest E1: τ_s + √(2g)/a_n");
    let y = r.traj.y.last().cloned().unwrap_or_default();
    let tau_end = steps as f64 * 0.25;
    let exact = exact_particle(tau_end);
    let mut max_err: f64 = 0.0;
    for (t, yy) in r.traj.tau.iter().zip(&r.traj.y) {
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
    out.expect("q1_end", exact[0], 1e-5, "digest E1 analytic solution");
    out.expect("v1_end", exact[2], 1e-5, "digest E1 analytic solution");
    out.expect("q2_end", exact[1], 1e-5, "digest E1 analytic solution");
    out.expect("v2_end", exact[3], 1e-5, "digest E1 analytic solution");
    if !ctx.quick {
        out.metric("liftoff_tau", liftoff);
        out.expect(
            "liftoff_tau",
            2.75,
            1e-3,
            "digest E1: lift-off at t = 1.5, τ = 2.75",
        );
    }
    out.notes.push(format!(
        "FESD Radau IIA n_s = 3, N_FE = 3, steps of 0.25 to τ = {tau_end}; ℓ1-penalty homotopy, comp_tol 1e-9: \
         the contact point penetrates by about 3e-6 at the impact element, hence tolerances 1e-5 \
         instead of the digest's 1e-8"
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

/// Analytic state (q1, q2, v1, v2, t) of Ex. 3 at numerical time τ (digest E1).
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
    let r = run_particle(id, Some(0.6), steps)?;
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
        "digest E2: v1⁺ = v1⁻ − μ·√(2g)",
    );
    if !ctx.quick {
        out.metric("liftoff_tau", liftoff);
        out.expect("liftoff_tau", 2.75, 1e-3, "digest E2: lift-off unchanged");
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

fn bouncing_ball(ctx: &RunContext, out: &mut ExperimentOutcome) -> Result<(), ReportError> {
    let id = "tf-bouncing-ball";
    let a_n = 100.0;
    let pm = PointMass {
        dim: 1,
        mass: 1.0,
        gravity: G,
        mu: None,
    };
    let tf = Arc::new(TimeFreezing::new(pm, a_n).map_err(|e| fail(id, e))?);
    let ts = (2.0 / G).sqrt();
    let horizon = ts + (2.0 * G).sqrt() / a_n + (1.0 - ts) * (a_n + G) / a_n;
    let steps = 20;
    let r = simulate(
        &tf,
        &[1.0, 0.0, 0.0],
        horizon / steps as f64,
        steps,
        &|_| vec![0.0],
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

fn particle_ocp(ctx: &RunContext, out: &mut ExperimentOutcome) -> Result<(), ReportError> {
    let id = "tf-particle-ocp";
    let pm = PointMass {
        dim: 2,
        mass: 1.0,
        gravity: G,
        mu: None,
    };
    let tf = Arc::new(TimeFreezing::new(pm, G).map_err(|e| fail(id, e))?);
    let (n, t_end) = (20, 2.0);
    let hz = Horizon {
        y0: vec![0.0, 1.0, 0.0, 0.0, 0.0],
        lam0: None,
        n_steps: n,
        step_len: t_end / n as f64,
        u_bounds: vec![(vec![-10.0, 0.0, 0.0], vec![10.0, 0.0, 0.0]); n],
        s_bounds: (1.0, 10.0),
        clock: Some(t_end),
        terminal: vec![(0, 3.0), (1, 0.0), (2, 0.0), (3, 0.0)],
        y_bounds: None,
        control_weight: t_end / n as f64,
    };
    let o = FesdOptions {
        n_s: 2,
        ..FesdOptions::default()
    };
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
    out.expect("terminal_error", 0.0, 1e-6, "digest E5");
    out.expect("comp_residual", 0.0, 1e-9, "digest E5");
    out.expect("s_contact", 2.0, 1e-6, "digest E5: s = 1/γ = 2 in contact");
    out.notes.push(
        "the jump→sliding transition keeps c₁ = 0, so it is not forced onto an element boundary; \
         the mixed element makes the objective differ from the discrete optimum by ≈ 0.03"
            .into(),
    );
    let dt = t_end / n as f64;
    let fig = Figure::new(
        "Particle OCP: controls and speed of time (Fig. 6)",
        "physical time t",
        "value",
    )
    .with(Series::line(
        "u1",
        sol.u
            .iter()
            .enumerate()
            .flat_map(|(k, u)| [(k as f64 * dt, u[0]), ((k + 1) as f64 * dt, u[0])])
            .collect(),
    ))
    .with(Series::line(
        "s",
        sol.s
            .iter()
            .enumerate()
            .flat_map(|(k, s)| [(k as f64 * dt, *s), ((k + 1) as f64 * dt, *s)])
            .collect(),
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
