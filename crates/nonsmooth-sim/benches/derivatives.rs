//! Derivatives of a step (`nonsmooth_sim::derivatives`) on six scenes — a pendulum resting
//! on its joint limit, a box sliding, a box at rest, a sphere rolling, the quadruped
//! standing on its feet (`examples/mjcf/quadruped.xml`, its servos holding the initial
//! pose; and `examples/quadruped.toml`, motors under a PD hold) and a 10-sphere pile — and
//! on generated variations of the first four (random sizes, masses, friction coefficients
//! and velocities). Per scene it prints the method, the contact modes, the relative error of
//! `[A B C]` (`C` the parameters' columns where asked) against central differences of the
//! step solved exactly (the stepper's step problem at each moved input solved to a relative
//! 1e-13: the reference the acceptance reads), the same against central differences of
//! whole `drumwright` steps (solved to 1e-11; a step that falls back from its Newton solve
//! to the fixed point is accurate to the fixed point's tolerance only, which such
//! differences amplify by 1/ε), how far the step's velocity is from the exact solution, the
//! time of one `derivatives` call and of one step, and their ratio; then the variations'
//! pass rate (relative error ≤ 1e-5 against the exact reference).
//!
//! `cargo bench -p nonsmooth-sim --bench derivatives`; MuJoCo's `mjd_transitionFD` on the
//! same quadruped in the same run: `bash scripts/derivatives_benchmark.sh`.

use nalgebra::{DMatrix, DVector};
use nonsmooth_core::dynamics::integrate_configuration;
use nonsmooth_core::{Model, State};
use nonsmooth_sim::derivatives::{tangent_of_change, ConstraintMode};
use nonsmooth_sim::{
    pipeline, step_derivatives, Actuation, DerivativeMethod, DerivativeOptions, DrumwrightOptions,
    DrumwrightStepper, Parameter, Simulator, StepDerivatives, Stepper,
};
use nonsmooth_solvers::regularized_contact::{
    solve_semismooth, RegularizedContactOptions, SemismoothWorkspace,
};
use std::time::Instant;

const DT: f64 = 1e-3;

/// A command as a function of the state.
type Command = Box<dyn Fn(&Model, &State) -> Vec<f64>>;

/// A scene: the model, its settling, the command (a function of the state) and the
/// parameters to differentiate.
struct Scene {
    name: String,
    model: Model,
    settle: usize,
    command: Command,
    parameters: Vec<Parameter>,
}

fn no_command() -> Command {
    Box::new(|_, _| Vec::new())
}

/// Reads a model file of the repository.
fn example(path: &str) -> Model {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../");
    Model::from_file(format!("{root}{path}")).expect("shipped model")
}

/// A spatial model `name` with gravity, one material `m` of friction `mu` and the ground
/// plane z = 0: the start of the benchmark's scenes.
fn ground_scene(name: &str, margin: f64, mu: f64) -> String {
    format!(
        r#"[model]
name = "{name}"
dimension = "spatial"
gravity = [0.0, 0.0, -9.81]
contact_margin = {margin:?}

[[materials]]
name = "m"
friction = {mu:?}

[[colliders]]
name = "ground"
shape = {{ plane = [0.0, 0.0, 1.0] }}
material = "m"
"#
    )
}

fn box_model(half: [f64; 3], mass: f64, mu: f64, vx: f64, margin: f64) -> Model {
    let [a, b, c] = half;
    let ground = ground_scene("box", margin, mu);
    let text = format!(
        r#"{ground}
[[bodies]]
name = "box"
mass = {mass:?}
inertia = {{ solid_box = [{a:?}, {b:?}, {c:?}] }}

[[colliders]]
name = "box_shape"
body = "box"
shape = {{ box = [{a:?}, {b:?}, {c:?}] }}
material = "m"

[initial]
q.box = [0.0, 0.0, {c:?}, 1.0, 0.0, 0.0, 0.0]
v.box = [{vx:?}, 0.0, 0.0, 0.0, 0.0, 0.0]
"#
    );
    Model::from_toml_str(&text, Some("box")).expect("box")
}

/// Spheres of radius `r`: a ring of `ring` on the ground around one, and the rest on top.
fn sphere_model(r: f64, mass: f64, mu: f64, v: f64, margin: f64, count: usize) -> Model {
    let mut text = ground_scene("spheres", margin, mu);
    let mut initial = String::from("\n[initial]\n");
    let ring = 6.min(count.saturating_sub(1));
    for k in 0..count {
        let (x, y, z) = if k == 0 {
            (0.0, 0.0, r)
        } else if k <= ring {
            let a = std::f64::consts::TAU * (k - 1) as f64 / ring as f64;
            (2.02 * r * a.cos(), 2.02 * r * a.sin(), r)
        } else {
            let a = std::f64::consts::TAU * (k - ring - 1) as f64 / 3.0 + 0.5;
            (1.2 * r * a.cos(), 1.2 * r * a.sin(), 2.7 * r)
        };
        text += &format!(
            "\n[[bodies]]\nname = \"s{k}\"\nmass = {mass:?}\ninertia = {{ solid_sphere = {r:?} }}\n\n[[colliders]]\nname = \"s{k}_shape\"\nbody = \"s{k}\"\nshape = {{ sphere = {r:?} }}\nmaterial = \"m\"\n"
        );
        let w = if count == 1 { v / r } else { 0.0 };
        initial += &format!(
            "q.s{k} = [{x:?}, {y:?}, {z:?}, 1.0, 0.0, 0.0, 0.0]\nv.s{k} = [{v:?}, 0.0, 0.0, 0.0, {w:?}, 0.0]\n"
        );
    }
    Model::from_toml_str(&(text + &initial), Some("spheres")).expect("spheres")
}

/// The joints' coordinates of the actuators' joints at `state`.
fn actuated_positions(model: &Model, state: &State) -> Vec<f64> {
    model
        .actuators
        .iter()
        .map(|a| state.q[model.joints[a.joint].q_index])
        .collect()
}

fn scenes() -> Vec<Scene> {
    let mut out = Vec::new();
    let mut pendulum = example("examples/pendulum.toml");
    pendulum.joints[0].limit = Some(nonsmooth_core::model::JointLimit {
        lower: 0.4,
        upper: 3.0,
        stiffness: None,
        damping: None,
    });
    pendulum.contact_margin = 0.01;
    pendulum.initial_state.q[0] = 0.4;
    out.push(Scene {
        name: "pendulum on its limit".into(),
        model: pendulum,
        settle: 5,
        command: Box::new(|_, _| vec![1.0]),
        parameters: vec![Parameter::parse("mass:bob").expect("parameter")],
    });
    out.push(Scene {
        name: "box sliding".into(),
        model: example("examples/sliding_box.toml"),
        settle: 10,
        command: no_command(),
        parameters: vec![Parameter::parse("friction:steel_on_wood").expect("parameter")],
    });
    out.push(Scene {
        name: "box at rest".into(),
        model: box_model([0.2, 0.15, 0.1], 2.0, 0.3, 0.0, 0.01),
        settle: 20,
        command: no_command(),
        parameters: vec![Parameter::parse("mass:box").expect("parameter")],
    });
    out.push(Scene {
        name: "sphere rolling".into(),
        model: sphere_model(0.1, 0.5, 0.8, 1.0, 0.0, 1),
        settle: 5,
        command: no_command(),
        parameters: Vec::new(),
    });
    let mjcf = example("examples/mjcf/quadruped.xml");
    let targets = actuated_positions(&mjcf, &mjcf.initial_state);
    out.push(Scene {
        name: "quadruped standing (mjcf, servos)".into(),
        model: mjcf,
        settle: 300,
        command: Box::new(move |_, _| targets.clone()),
        parameters: Vec::new(),
    });
    let toml = example("examples/quadruped.toml");
    let hold = actuated_positions(&toml, &toml.initial_state);
    out.push(Scene {
        name: "quadruped standing (toml, PD motors)".into(),
        model: toml,
        settle: 300,
        command: Box::new(move |m, s| {
            m.actuators
                .iter()
                .zip(&hold)
                .map(|(a, &q0)| {
                    let j = &m.joints[a.joint];
                    let u = 200.0 * (q0 - s.q[j.q_index]) - 5.0 * s.v[j.v_index];
                    u.clamp(-30.0, 30.0)
                })
                .collect()
        }),
        parameters: Vec::new(),
    });
    out.push(Scene {
        name: "10-sphere pile".into(),
        model: sphere_model(0.05, 0.2, 0.5, 0.0, 0.005, 10),
        settle: 400,
        command: no_command(),
        parameters: vec![Parameter::parse("friction:m").expect("parameter")],
    });
    out
}

/// `[A B C]` side by side.
fn all(d: &StepDerivatives) -> DMatrix<f64> {
    let (r, na, nb, nc) = (d.a.nrows(), d.a.ncols(), d.b.ncols(), d.c.ncols());
    let mut m = DMatrix::zeros(r, na + nb + nc);
    m.columns_mut(0, na).copy_from(&d.a);
    m.columns_mut(na, nb).copy_from(&d.b);
    m.columns_mut(na + nb, nc).copy_from(&d.c);
    m
}

/// The state the step from `state` with command `u` reaches when its step problem is
/// solved to a relative 1e-13.
fn exact_step(model: &Model, state: &State, u: &[f64]) -> Result<State, String> {
    let input = if model.actuators.is_empty() {
        Actuation::none()
    } else if u.is_empty() {
        Actuation::from_command(model, state, &vec![0.0; model.actuators.len()])
            .map_err(|e| e.to_string())?
    } else {
        Actuation::from_command(model, state, u).map_err(|e| e.to_string())?
    };
    let step = pipeline::prepare(model, state, &input, DT).map_err(|e| e.to_string())?;
    let problem = DrumwrightStepper::default()
        .step_problem(&step, None)
        .map_err(|e| e.to_string())?
        .ok_or("no step problem")?;
    let options = RegularizedContactOptions {
        rel_tolerance: 1e-13,
        ..RegularizedContactOptions::default()
    };
    let solution = solve_semismooth(
        &problem.problem,
        &[&state.v],
        &options,
        &mut SemismoothWorkspace::default(),
    )
    .map_err(|e| e.to_string())?;
    Ok(State {
        q: integrate_configuration(model, &state.q, &solution.v, DT),
        v: solution.v,
        t: state.t + DT,
    })
}

/// `[A B C]` by central differences (step 1e-6) of [`exact_step`].
fn exact_reference(
    model: &Model,
    start: &State,
    u: &[f64],
    parameters: &[Parameter],
) -> Result<DMatrix<f64>, String> {
    let nv = model.nv();
    let u0 = if u.is_empty() {
        vec![0.0; model.actuators.len()]
    } else {
        u.to_vec()
    };
    let columns = 2 * nv + u0.len() + parameters.len();
    let nominal = exact_step(model, start, &u0)?;
    let mut out = DMatrix::zeros(2 * nv, columns);
    for col in 0..columns {
        let moved = |s: f64| -> Result<State, String> {
            let (mut state, mut command, mut m) = (start.clone(), u0.clone(), model.clone());
            let e = 1e-6;
            if col < nv {
                let mut d = DVector::zeros(nv);
                d[col] = s * e;
                state.q = integrate_configuration(model, &start.q, &d, 1.0);
            } else if col < 2 * nv {
                state.v[col - nv] += s * e * start.v[col - nv].abs().max(1.0);
            } else if col < 2 * nv + u0.len() {
                command[col - 2 * nv] += s * e * u0[col - 2 * nv].abs().max(1.0);
            } else {
                let p = &parameters[col - 2 * nv - u0.len()];
                let x = p.value(model).map_err(|e| e.to_string())?;
                m = p.with_value(model, x + s * e * x.abs().max(1e-3));
            }
            exact_step(&m, &state, &command)
        };
        let (plus, minus) = (moved(1.0)?, moved(-1.0)?);
        let width = 2e-6
            * if col < nv {
                1.0
            } else if col < 2 * nv {
                start.v[col - nv].abs().max(1.0)
            } else if col < 2 * nv + u0.len() {
                u0[col - 2 * nv].abs().max(1.0)
            } else {
                let p = &parameters[col - 2 * nv - u0.len()];
                p.value(model).map_err(|e| e.to_string())?.abs().max(1e-3)
            };
        let dq = tangent_of_change(model, &nominal.q, &(&plus.q - &minus.q)) / width;
        let dv = (&plus.v - &minus.v) / width;
        out.view_mut((0, col), (nv, 1)).copy_from(&dq);
        out.view_mut((nv, col), (nv, 1)).copy_from(&dv);
    }
    Ok(out)
}

struct Measured {
    method: DerivativeMethod,
    modes: [usize; 3],
    error: f64,
    whole_step_error: f64,
    step_gap: f64,
    derivatives_ms: f64,
    step_ms: f64,
}

fn measure(scene: &Scene, repeats: usize) -> Result<Measured, String> {
    let mut sim =
        Simulator::new(scene.model.clone(), "drumwright", DT).map_err(|e| e.to_string())?;
    for _ in 0..scene.settle {
        let u = (scene.command)(sim.model(), sim.state());
        sim.step(&u).map_err(|e| e.to_string())?;
    }
    let start = sim.state().clone();
    let u = (scene.command)(sim.model(), &start);
    let options = scene
        .parameters
        .iter()
        .cloned()
        .fold(DerivativeOptions::default(), |o, p| o.parameter(p));
    let clock = Instant::now();
    let mut implicit = None;
    for _ in 0..repeats {
        implicit = Some(sim.derivatives(&u, &options).map_err(|e| e.to_string())?);
    }
    let derivatives_ms = clock.elapsed().as_secs_f64() * 1e3 / repeats as f64;
    let implicit = implicit.ok_or("no repeat")?;
    let clock = Instant::now();
    for _ in 0..repeats {
        sim.set_state(start.clone()).map_err(|e| e.to_string())?;
        sim.step(&u).map_err(|e| e.to_string())?;
    }
    let step_ms = clock.elapsed().as_secs_f64() * 1e3 / repeats as f64;
    let stepped = sim.state().clone();
    let mut tight = DrumwrightOptions::default();
    tight.contact_solver.rel_tolerance = 1e-11;
    let mut reference = DrumwrightStepper::new(tight);
    let differences = step_derivatives(
        &mut reference,
        &scene.model,
        &start,
        &u,
        DT,
        &options.method(DerivativeMethod::FiniteDifference),
    )
    .map_err(|e| e.to_string())?;
    let a = all(&implicit);
    let relative = |b: &DMatrix<f64>| (&a - b).amax() / b.amax().max(1e-300);
    let exact = exact_reference(&scene.model, &start, &u, &scene.parameters)?;
    let error = relative(&exact);
    let whole_step_error = relative(&all(&differences));
    let step_gap =
        (&stepped.v - &exact_step(&scene.model, &start, &u)?.v).amax() / stepped.v.amax().max(1.0);
    let mut modes = [0; 3];
    for c in &implicit.constraints {
        modes[match c.mode {
            ConstraintMode::Separated => 0,
            ConstraintMode::Sticking => 1,
            ConstraintMode::Sliding => 2,
        }] += 1;
    }
    Ok(Measured {
        method: implicit.method,
        modes,
        error,
        whole_step_error,
        step_gap,
        derivatives_ms,
        step_ms,
    })
}

/// A small linear congruential generator (reproducible variations without a dependency).
struct Lcg(u64);

impl Lcg {
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        lo + (hi - lo) * ((self.0 >> 11) as f64 / (1u64 << 53) as f64)
    }
}

fn variations(count: usize) -> Vec<Scene> {
    let mut rng = Lcg(20261206);
    let mut out = Vec::new();
    for k in 0..count {
        let half = [
            rng.uniform(0.05, 0.4),
            rng.uniform(0.05, 0.4),
            rng.uniform(0.03, 0.2),
        ];
        let (mass, mu) = (rng.uniform(0.2, 20.0), rng.uniform(0.1, 1.0));
        let scene = match k % 4 {
            0 => Scene {
                name: format!("sliding box {k}"),
                model: box_model(half, mass, mu, rng.uniform(0.5, 4.0), 0.0),
                settle: 5,
                command: no_command(),
                parameters: vec![Parameter::parse("friction:m").expect("parameter")],
            },
            1 => Scene {
                name: format!("box at rest {k}"),
                model: box_model(half, mass, mu, 0.0, 0.01),
                settle: 20,
                command: no_command(),
                parameters: vec![Parameter::parse("mass:box").expect("parameter")],
            },
            2 => Scene {
                name: format!("rolling sphere {k}"),
                model: sphere_model(half[0], mass, mu, rng.uniform(0.2, 3.0), 0.0, 1),
                settle: 5,
                command: no_command(),
                parameters: Vec::new(),
            },
            _ => {
                let mut m = example("examples/pendulum.toml");
                let lower = rng.uniform(0.1, 1.0);
                m.joints[0].limit = Some(nonsmooth_core::model::JointLimit {
                    lower,
                    upper: 3.0,
                    stiffness: None,
                    damping: None,
                });
                m.contact_margin = 0.01;
                m.initial_state.q[0] = lower;
                m.bodies[0].mass = mass;
                let u = rng.uniform(-2.0, 2.0);
                Scene {
                    name: format!("pendulum on its limit {k}"),
                    model: m,
                    settle: 5,
                    command: Box::new(move |_, _| vec![u]),
                    parameters: Vec::new(),
                }
            }
        };
        out.push(scene);
    }
    out
}

fn main() {
    let repeats: usize = std::env::var("NONSMOOTH_DERIVATIVE_REPEATS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    println!(
        "{:<38} {:>8} {:>10} {:>10} {:>11} {:>9} {:>12} {:>10} {:>8}",
        "scene",
        "method",
        "sep/st/sl",
        "rel. error",
        "whole steps",
        "step gap",
        "derivatives",
        "step",
        "ratio"
    );
    for scene in scenes() {
        match measure(&scene, repeats) {
            Ok(m) => println!(
                "{:<38} {:>8} {:>10} {:>10.1e} {:>11.1e} {:>9.1e} {:>9.3} ms {:>7.3} ms {:>7.1}×",
                scene.name,
                match m.method {
                    DerivativeMethod::Implicit => "implicit",
                    _ => "fd",
                },
                format!("{}/{}/{}", m.modes[0], m.modes[1], m.modes[2]),
                m.error,
                m.whole_step_error,
                m.step_gap,
                m.derivatives_ms,
                m.step_ms,
                m.derivatives_ms / m.step_ms
            ),
            Err(e) => println!("{:<38} failed: {e}", scene.name),
        }
    }
    let count: usize = std::env::var("NONSMOOTH_DERIVATIVE_VARIATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40);
    let mut passed = 0;
    let mut worst: f64 = 0.0;
    for scene in variations(count) {
        match measure(&scene, 1) {
            Ok(m) if m.error <= 1e-5 && m.method == DerivativeMethod::Implicit => {
                passed += 1;
                worst = worst.max(m.error);
            }
            Ok(m) => println!(
                "  {}: relative error {:.1e} ({:?})",
                scene.name, m.error, m.method
            ),
            Err(e) => println!("  {}: failed: {e}", scene.name),
        }
    }
    println!(
        "generated variations (sliding boxes, boxes at rest, rolling spheres, pendulums on \
         their limit): {passed}/{count} within 1e-5 (worst of those {worst:.1e})"
    );
}
