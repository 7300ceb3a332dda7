//! Optimal control on a model file (`[ocp] model = "…"`): the ball of
//! `examples/ball_on_ground.toml` must shed its speed by landing and braking with friction
//! (`examples/ocp_ball_brake.toml`), its optimal controls replayed through the simulator end
//! where the OCP ends; bad problem files are typed errors naming the key and its line.

use nonsmooth_ocp::fesd::solve_ocp;
use nonsmooth_ocp::problem::ModelProblem;
use nonsmooth_sim::Simulator;
use std::path::{Path, PathBuf};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

fn problem_text() -> String {
    std::fs::read_to_string(examples().join("ocp_ball_brake.toml")).expect("example exists")
}

/// Parses `text` as if it were a file in `examples/` (so that the model path resolves).
fn parse(text: &str) -> Result<ModelProblem, nonsmooth_ocp::OcpError> {
    let source = examples().join("edited_problem.toml");
    ModelProblem::from_toml_str(text, Some(&source.display().to_string()))
}

#[test]
fn ball_brakes_on_the_ground_and_the_simulator_agrees() {
    let p = match ModelProblem::from_file(&examples().join("ocp_ball_brake.toml")) {
        Ok(p) => p,
        _ => panic!("a problem on a model file"),
    };
    assert_eq!(p.state_names, ["x.q", "y.q", "x.v", "y.v", "t"]);
    assert_eq!(p.control_names, ["thrust"]);
    let hz = &p.horizon;
    // The thrust bound alone cannot stop the ball in time: at |u| ≤ u_max the speed at T is
    // at least v₀ − u_max T / m > 0 without ground contact (infeasible terminal v_x = 0).
    let (v0, u_max, mass) = (hz.y0[2], hz.u_bounds[0].1[0], 1.0);
    assert!(
        v0 - u_max * p.t_final / mass > 1.0,
        "the test needs contact to be feasible"
    );

    let sol = solve_ocp(&p.tf, hz, &p.options).expect("the OCP solves from the trivial start");
    assert!(
        sol.comp_residual <= 1e-9,
        "complementarity {}",
        sol.comp_residual
    );
    assert!(
        sol.terminal_error <= 1e-6,
        "terminal error {}",
        sol.terminal_error
    );
    let last = sol.traj.y.last().unwrap();
    let x_ocp = last[0];
    assert!((x_ocp - 2.0).abs() < 1e-6);
    // the solution lands: some stage point lies on the ground
    let r = 0.1;
    assert!(
        sol.traj.y.iter().any(|y| y[1] - r < 1e-6),
        "the ball never lands"
    );

    // Replay: zero-order hold of the optimal controls, anitescu-potra at a step ten times
    // finer than the OCP's finite elements.
    let n = hz.n_steps;
    let sub = 10 * p.options.discretization.n_fe;
    let dt = p.t_final / (n * sub) as f64;
    let model = p.tf.cls.model().clone();
    let mut sim = Simulator::new(model, "anitescu-potra", dt).unwrap();
    for u in &sol.u {
        assert_eq!(u.len(), p.tf.cls.nu());
        sim.step_n(sub, u).unwrap();
    }
    let x_sim = sim.q()[0];
    eprintln!(
        "ball brake: objective {:.6}, complementarity {:.1e}, terminal error {:.1e}, \
         {} IPOPT iterations; replay (anitescu-potra, h = {dt:.5} s): x {x_sim:.5} m vs \
         {x_ocp:.5} m, v_x {:.2e} m/s",
        sol.objective,
        sol.comp_residual,
        sol.terminal_error,
        sol.nlp_iterations,
        sim.v()[0]
    );
    assert!(
        (x_sim - x_ocp).abs() <= 0.01,
        "replayed final x {x_sim} vs the OCP's {x_ocp}"
    );
    assert!(
        sim.v()[0].abs() < 0.05,
        "replayed final speed {}",
        sim.v()[0]
    );
}

/// A target out of reach (`examples/ocp_ball_unreachable.toml`: a 1 N thrust cannot push the
/// ball 0.5 m up a slope that gravity and friction hold it on with 5.4 N) ends with the
/// unreachable outcome, the terminal constraint on x named first, instead of a homotopy that
/// runs down to σ = 1e-10 and stalls.
#[test]
fn unreachable_target_is_said_as_such_naming_the_terminal_x() {
    let p = ModelProblem::from_file(&examples().join("ocp_ball_unreachable.toml"))
        .unwrap_or_else(|e| panic!("{e}"));
    // the premise: the thrust bound is below the downhill gravity plus the friction bound
    let g = p.tf.cls.model().gravity;
    let (mass, mu, u_max) = (1.0, 0.3, p.horizon.u_bounds[0].1[0]);
    assert!(
        u_max < mass * (-g[0] + mu * -g[1]),
        "the test needs an unreachable target"
    );
    let e = match solve_ocp(&p.tf, &p.horizon, &p.options) {
        Err(e) => e.with_state_names(&p.state_names),
        Ok(sol) => panic!("solved with complementarity {}", sol.comp_residual),
    };
    let message = e.to_string();
    eprintln!("{message}");
    let nonsmooth_ocp::OcpError::Unreachable { detail, log, .. } = &e else {
        panic!("expected the unreachable outcome, got {message}")
    };
    let (comp_residual, constraint_violation, binding) = (
        &detail.comp_residual,
        &detail.constraint_violation,
        &detail.binding,
    );
    assert!(
        message.starts_with("no contact-consistent solution found: the target appears unreachable")
    );
    assert!(*comp_residual > 0.1 && *constraint_violation < 1e-6);
    // it stops after three decades of σ (four NLPs), not at the end of the homotopy
    assert!(log.len() <= 5, "{} NLPs", log.len());
    let first = &binding[0];
    assert_eq!(
        first.kind,
        nonsmooth_ocp::fesd::BindingKind::Terminal {
            component: 0,
            value: 0.5
        },
        "{message}"
    );
    assert_eq!(first.name, "x.q");
    assert!(message.contains("terminal x.q = 0.5"), "{message}");
}

#[test]
fn unknown_coordinate_is_named_with_its_line() {
    let text = problem_text().replace("v.x = 0.0", "v.z = 0.0");
    let line = text.lines().position(|l| l.starts_with("v.z")).unwrap() + 1;
    let e = parse(&text).err().expect("an error").to_string();
    assert!(e.contains(&format!("edited_problem.toml:{line}")), "{e}");
    assert!(
        e.contains("ocp.terminal.v.z") && e.contains("no coordinate \"z\""),
        "{e}"
    );
}

#[test]
fn unknown_actuator_and_body_are_named() {
    let text = problem_text().replace("s_max = 10.0", "s_max = 10.0\ncontrols = [\"jet\"]");
    let e = parse(&text).err().expect("an error").to_string();
    assert!(
        e.contains("ocp.controls") && e.contains("no actuator \"jet\""),
        "{e}"
    );
    let text = problem_text().replace(
        "[time_freezing]",
        "[[ocp.path.outside_ellipse]]\nbody = \"wheel\"\ncenter = [1.0, 0.0]\naxes = [0.1, 0.1]\n\n[time_freezing]",
    );
    let e = parse(&text).err().expect("an error").to_string();
    assert!(e.contains("no body \"wheel\""), "{e}");
}

#[test]
fn terminal_value_outside_its_bounds_is_named() {
    let text = problem_text().replace("q.y = 0.1\n", "q.y = 1.5\n");
    let line = text
        .lines()
        .position(|l| l.starts_with("q.y = 1.5"))
        .unwrap()
        + 1;
    let e = parse(&text).err().expect("an error").to_string();
    assert!(
        e.contains(&format!(":{line}:")) && e.contains("outside its bounds"),
        "{e}"
    );
}

#[test]
fn model_without_contact_is_named() {
    let dir = std::env::temp_dir().join(format!("nonsmooth-ocp-model-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let model = std::fs::read_to_string(examples().join("ball_on_ground.toml"))
        .unwrap()
        .replace(
            "[[colliders]]\nname = \"ground\"\nshape = { plane = [0.0, 1.0, 0.0] }\nmaterial = \"rough\"\n",
            "",
        );
    std::fs::write(dir.join("ball_on_ground.toml"), model).unwrap();
    let source = dir.join("p.toml").display().to_string();
    let e = ModelProblem::from_toml_str(&problem_text(), Some(&source))
        .err()
        .expect("an error")
        .to_string();
    assert!(
        e.contains("no contact") && e.contains("time_freezing.contact"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Pseudo-random numbers in [lo, hi) (a fixed linear congruential sequence).
fn samples(n: usize, lo: f64, hi: f64, seed: &mut u64) -> Vec<f64> {
    (0..n)
        .map(|_| {
            *seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            lo + (hi - lo) * ((*seed >> 11) as f64 / (1u64 << 53) as f64)
        })
        .collect()
}

fn close(a: &[f64], b: &[f64], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}");
    for (x, y) in a.iter().zip(b) {
        assert!(
            (x - y).abs() <= 1e-10 * (1.0 + y.abs()),
            "{what}: {a:?} vs {b:?}"
        );
    }
}

/// The hopper of `examples/hopper.toml` through the generic path has the kinematics of the
/// time-freezing paper's Sec. 6 (angles from the downward vertical, l_t = l_s = 0.2): the gap is
/// the foot height z − l_t cos φ_h − l_s cos(φ_h + φ_k), the normal its gradient, the tangent the
/// gradient of the foot's x = x − l_t sin φ_h − l_s sin(φ_h + φ_k), friction μ = 0.8.
#[test]
fn hopper_model_file_has_the_papers_kinematics() {
    use nonsmooth_ocp::model_system::ModelSystem;
    let model = nonsmooth_core::Model::from_file(examples().join("hopper.toml")).unwrap();
    let sys = ModelSystem::new(model, None, &["hip".into(), "knee".into()]).unwrap();
    let l = 0.2;
    assert_eq!(sys.friction(), Some(0.8));
    let mut seed = 7;
    for _ in 0..20 {
        let q = samples(4, -1.0, 1.0, &mut seed);
        let (h, hk) = (q[2], q[2] + q[3]);
        let gap = q[1] - l * h.cos() - l * hk.cos();
        close(&[sys.f_c::<f64>(&q)], &[gap], "gap");
        let normal = [0.0, 1.0, l * h.sin() + l * hk.sin(), l * hk.sin()];
        close(&sys.normal::<f64>(&q), &normal, "normal");
        let tangent = [1.0, 0.0, -l * h.cos() - l * hk.cos(), -l * hk.cos()];
        close(&sys.tangent::<f64>(&q), &tangent, "tangent");
        let foot = sys.contact_point(&q);
        close(
            &foot,
            &[q[0] - l * h.sin() - l * hk.sin(), gap],
            "foot position",
        );
    }
}

/// The particle of `examples/particle.toml` is the point mass of Ex. 1–5: gap q_y, normal
/// (0, 1), free acceleration (u_x, u_y + r_y t)/m − (0, g) with the clock-affine forces.
#[test]
fn particle_model_file_is_the_papers_point_mass() {
    use nonsmooth_ocp::model_system::ModelSystem;
    let model = nonsmooth_core::Model::from_file(examples().join("particle.toml")).unwrap();
    let sys = ModelSystem::new(model, None, &["force_x".into(), "force_y".into()])
        .unwrap()
        .with_clock_rates();
    assert_eq!((sys.friction(), sys.nu()), (None, 4));
    let mut seed = 11;
    for _ in 0..10 {
        let q = samples(2, -1.0, 1.0, &mut seed);
        let v = samples(2, -2.0, 2.0, &mut seed);
        let u = samples(4, -10.0, 10.0, &mut seed);
        let t = 0.7;
        close(&[sys.f_c::<f64>(&q)], &[q[1]], "gap");
        close(&sys.normal::<f64>(&q), &[0.0, 1.0], "normal");
        close(
            &sys.f_v::<f64>(&q, &v, t, &u),
            &[u[0] + u[2] * t, u[1] + u[3] * t - 9.81],
            "f_v",
        );
    }
}

/// `[ocp.cost] track` adds Σ_k (T/N) w (y_i(t_k) − target)² at the control-interval ends:
/// at the trivial initialization (y = y₀ everywhere) the objective grows by N (T/N) w
/// (y₀ᵢ − target)²; a tracking key the model lacks is named with its line.
#[test]
fn tracking_cost_adds_the_running_term() {
    use nonsmooth_ocp::fesd::build;
    use nonsmooth_solvers::nlp::ipopt::Nlp;
    let objective_at_start = |text: &str| {
        let p = parse(text).unwrap();
        let (nlp, layout, x0) = build(&p.tf, &p.horizon, &p.options).unwrap();
        // v_x at the end of each control interval (the last element of each)
        let el = &layout.elems;
        let ends: Vec<f64> = (0..el.len())
            .filter(|&i| i + 1 == el.len() || el[i + 1].step != el[i].step)
            .map(|i| x0[el[i].y_end + 2])
            .collect();
        (nlp.objective(&x0).unwrap(), p, ends)
    };
    let (plain, _, _) = objective_at_start(&problem_text());
    let text = problem_text().replace(
        "[ocp.terminal]",
        "[ocp.cost]\ntrack.v.x = { target = 0.5, weight = 2.0 }\n\n[ocp.terminal]",
    );
    let (tracked, p, ends) = objective_at_start(&text);
    assert_eq!(p.horizon.tracking.len(), 1);
    assert_eq!(ends.len(), p.horizon.n_steps);
    let dt = p.t_final / p.horizon.n_steps as f64;
    let expected: f64 = ends.iter().map(|v| dt * 2.0 * (v - 0.5).powi(2)).sum();
    assert!(
        ((tracked - plain) - expected).abs() < 1e-9 * expected,
        "{tracked} − {plain} vs {expected}"
    );
    let bad = problem_text().replace(
        "[ocp.terminal]",
        "[ocp.cost]\ntrack.q.z = { target = 0.5, weight = 2.0 }\n\n[ocp.terminal]",
    );
    let line = bad
        .lines()
        .position(|l| l.starts_with("track.q.z"))
        .unwrap()
        + 1;
    let e = parse(&bad).err().expect("an error").to_string();
    assert!(
        e.contains(&format!(":{line}:")) && e.contains("ocp.cost.track.q.z"),
        "{e}"
    );
}

/// `[ocp.initial_guess] simulate = true` starts the NLP from a rollout of the model under
/// zero controls: every stage point holds the rollout's state at its physical time (the
/// falling particle of `examples/ocp_particle.toml`: y = y₀ − g t²/2 until it lands), and
/// the homotopy reaches the trivial start's optimum (Ex. 5: 13.507316). Bad keys are named.
#[test]
fn rollout_guess_starts_on_the_falling_trajectory_and_reaches_the_optimum() {
    use nonsmooth_ocp::fesd::build;
    let text = std::fs::read_to_string(examples().join("ocp_particle.toml")).unwrap();
    let guessed = text.replace(
        "[time_freezing]",
        "[ocp.initial_guess]\nsimulate = true\n\n[time_freezing]",
    );
    let p = parse(&guessed).unwrap_or_else(|e| panic!("{e}"));
    let guess = p.horizon.initial_guess.as_ref().expect("a rollout");
    assert!((guess.t.last().unwrap() - p.t_final).abs() < 2e-3);
    let (_, layout, x0) = build(&p.tf, &p.horizon, &p.options).unwrap();
    let y0 = p.horizon.y0.clone();
    // the first element's first stage: free fall from rest at its physical time
    let e = &layout.elems[0];
    let h = p.t_final / (p.horizon.n_steps * p.options.discretization.n_fe) as f64;
    let t = layout.c[0] * h;
    let g = -p.tf.cls.model().gravity[1];
    assert!((x0[e.y[0] + 1] - (y0[1] - 0.5 * g * t * t)).abs() < 1e-3);
    assert!((x0[e.y[0] + 4] - t).abs() < 1e-12, "the stage's clock");
    let sol = solve_ocp(&p.tf, &p.horizon, &p.options).unwrap_or_else(|e| panic!("{e}"));
    assert!(sol.comp_residual <= 1e-9, "{}", sol.comp_residual);
    assert!(
        (sol.objective - 13.507316).abs() < 1e-5,
        "objective {}",
        sol.objective
    );
    let bad = guessed.replace(
        "simulate = true",
        "simulate = true\ncontrols = { jet = 1.0 }",
    );
    let e = parse(&bad).err().expect("an error").to_string();
    assert!(
        e.contains("ocp.initial_guess.controls") && e.contains("jet"),
        "{e}"
    );
    let bad = guessed.replace("simulate = true", "simulate = true\nstepper = \"warp\"");
    let e = parse(&bad).err().expect("an error").to_string();
    assert!(e.contains("ocp.initial_guess.stepper"), "{e}");
}

/// A landing 2 ms after a control-interval boundary (`examples/ocp_ball_late_landing.toml`):
/// exact complementarity with the default discretization, the switch found inside the
/// interval. The replay ends 6.9 cm beyond the optimal final x (first-order collocation
/// with elements of 50 ms), so replay and optimum agree to 10 cm, not 1 cm.
#[test]
fn a_landing_inside_a_control_interval_converges_exactly_and_its_replay_agrees() {
    let p = ModelProblem::from_file(&examples().join("ocp_ball_late_landing.toml"))
        .unwrap_or_else(|e| panic!("{e}"));
    // the premise: the free fall from y₀ lands 2 ms after t = 0.2 s
    let g = -p.tf.cls.model().gravity[1];
    let landing = (2.0 * (p.horizon.y0[1] - 0.1) / g).sqrt();
    assert!((landing - 0.202).abs() < 1e-5, "lands at {landing}");
    let sol = solve_ocp(&p.tf, &p.horizon, &p.options).unwrap_or_else(|e| panic!("{e}"));
    assert!(sol.comp_residual <= 1e-9, "{}", sol.comp_residual);
    // ten anitescu-potra steps per finite element
    let r = p
        .replay(&sol, "anitescu-potra", 10)
        .unwrap_or_else(|e| panic!("{e}"));
    let (sim, ocp) = (&r.simulated, &r.optimal);
    eprintln!(
        "late landing: objective {:.6}, {} IPOPT iterations; replay {sim:?} vs {ocp:?}",
        sol.objective, sol.nlp_iterations
    );
    assert!((sim[0] - ocp[0]).abs() <= 0.1, "x {} vs {}", sim[0], ocp[0]);
    assert!(
        (sim[1] - ocp[1]).abs() <= 0.01,
        "y {} vs {}",
        sim[1],
        ocp[1]
    );
}
