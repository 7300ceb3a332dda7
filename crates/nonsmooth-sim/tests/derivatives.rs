//! Derivatives of a step (`nonsmooth_sim::derivatives`): the implicit derivatives of the
//! default `drumwright` step against central differences of whole steps (solved to a
//! relative 1e-13) on scenes away from mode switches — a pendulum resting on its joint
//! limit, a box sliding, a box at rest, a sphere rolling, and the same with parameters
//! (friction, mass) — each within 1e-5 relative; the state they report is the step's; the
//! contact modes are the expected ones.

use nalgebra::DMatrix;
use nonsmooth_core::{Model, State};
use nonsmooth_sim::derivatives::{ConstraintMode, Direction};
use nonsmooth_sim::{
    step_derivatives, DerivativeMethod, DerivativeOptions, DrumwrightOptions, DrumwrightStepper,
    Parameter, Simulator, StepDerivatives,
};

const PENDULUM: &str = include_str!("../../../examples/pendulum.toml");
const SLIDING_BOX: &str = include_str!("../../../examples/sliding_box.toml");

const SPHERE: &str = r#"
[model]
name = "rolling_sphere"
dimension = "spatial"
gravity = [0.0, 0.0, -9.81]

[[materials]]
name = "rubber"
friction = 0.8

[[colliders]]
name = "ground"
shape = { plane = [0.0, 0.0, 1.0] }
material = "rubber"

[[bodies]]
name = "ball"
mass = 0.5
inertia = { solid_sphere = 0.1 }

[[colliders]]
name = "ball_surface"
body = "ball"
shape = { sphere = 0.1 }
material = "rubber"

[initial]
q.ball = [0.0, 0.0, 0.1, 1.0, 0.0, 0.0, 0.0]
v.ball = [1.0, 0.0, 0.0, 0.0, 10.0, 0.0]
"#;

/// The largest entry of `a − b` relative to the largest entry of `b`.
fn relative_error(a: &DMatrix<f64>, b: &DMatrix<f64>) -> f64 {
    (a - b).amax() / b.amax().max(1e-300)
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

/// The implicit derivatives at the state `settle` default steps of command `u` reach, and
/// the central differences of whole steps of a `drumwright` stepper solved to 1e-13 there.
fn implicit_and_differences(
    model: &Model,
    settle: usize,
    u: &[f64],
    parameters: &[Parameter],
) -> (StepDerivatives, StepDerivatives, State) {
    let dt = 1e-3;
    let mut sim = Simulator::new(model.clone(), "drumwright", dt).unwrap();
    sim.step_n(settle, u).unwrap();
    let options = parameters
        .iter()
        .cloned()
        .fold(DerivativeOptions::default(), |o, p| o.parameter(p));
    let implicit = sim.derivatives(u, &options).unwrap();
    assert_eq!(implicit.method, DerivativeMethod::Implicit);
    let start = sim.state().clone();
    sim.step(u).unwrap();
    let stepped = sim.state().clone();
    let mut tight = DrumwrightOptions::default();
    tight.contact_solver.rel_tolerance = 1e-11;
    tight.fast_solver = false;
    let mut reference = DrumwrightStepper::new(tight);
    let differences = step_derivatives(
        &mut reference,
        model,
        &start,
        u,
        dt,
        &options.method(DerivativeMethod::FiniteDifference),
    )
    .unwrap();
    assert_eq!(differences.method, DerivativeMethod::FiniteDifference);
    (implicit, differences, stepped)
}

/// Checks the implicit derivatives against the differences (within 1e-5 relative) and the
/// reported state against the step; returns the implicit derivatives.
fn check(
    name: &str,
    model: &Model,
    settle: usize,
    u: &[f64],
    parameters: &[Parameter],
) -> StepDerivatives {
    check_within(name, model, settle, u, parameters, 1e-5)
}

/// [`check`] within `tolerance`.
fn check_within(
    name: &str,
    model: &Model,
    settle: usize,
    u: &[f64],
    parameters: &[Parameter],
    tolerance: f64,
) -> StepDerivatives {
    let (implicit, differences, stepped) = implicit_and_differences(model, settle, u, parameters);
    let error = relative_error(&all(&implicit), &all(&differences));
    if std::env::var("SHOW").is_ok() {
        println!(
            "implicit {}\ndifferences {}",
            all(&implicit),
            all(&differences)
        );
    }
    println!(
        "{name}: relative error {error:.2e}, modes {:?}",
        implicit.constraints
    );
    assert!(error <= tolerance, "{name}: relative error {error:e}");
    assert!(
        implicit.one_sided.is_empty(),
        "{name}: {:?}",
        implicit.one_sided
    );
    let dv = (&implicit.next.v - &stepped.v).amax();
    assert!(
        dv <= 1e-6 * stepped.v.amax().max(1.0),
        "{name}: v₁ off by {dv:e}"
    );
    implicit
}

fn modes(d: &StepDerivatives) -> Vec<ConstraintMode> {
    d.constraints.iter().map(|c| c.mode).collect()
}

#[test]
fn a_pendulum_resting_on_its_limit_and_one_swinging_free() {
    let text = PENDULUM.replace(
        "damping = 0.0",
        "damping = 0.0\nlimit = { lower = 0.4, upper = 3.0 }",
    );
    let mut model = Model::from_toml_str(&text, Some("pendulum_limit.toml")).unwrap();
    // A margin keeps the limit row in the step on both sides of its rest (without one, a
    // pendulum resting on its limit sits on the switch where the row enters the step).
    model.contact_margin = 0.01;
    model.initial_state.q[0] = 0.4;
    let on_limit = check("pendulum on its limit", &model, 5, &[1.0], &[]);
    assert_eq!(modes(&on_limit), vec![ConstraintMode::Sticking]);
    model.initial_state.q[0] = 1.2;
    model.initial_state.v[0] = 0.5;
    let free = check("pendulum swinging", &model, 0, &[1.0], &[]);
    assert!(free.constraints.is_empty());
    // Free swing: ∂v₁/∂u = h / I with I = 1 + 1e-4 kg·m².
    assert!((free.b[(1, 0)] - 1e-3 / (1.0 + 1e-4)).abs() < 1e-12 * 1e3);
}

#[test]
fn a_box_sliding_with_its_friction_and_mass() {
    let model = Model::from_toml_str(SLIDING_BOX, Some("sliding_box.toml")).unwrap();
    let parameters = [
        Parameter::parse("friction:steel_on_wood").unwrap(),
        Parameter::parse("mass:box").unwrap(),
    ];
    let d = check("box sliding", &model, 10, &[], &parameters);
    assert!(!d.constraints.is_empty());
    assert!(modes(&d).iter().all(|m| *m == ConstraintMode::Sliding));
    // Sliding decelerates at μ g: ∂vₓ₁/∂μ = −g h.
    let dvx_dmu = d.c[(6, 0)];
    assert!((dvx_dmu + 9.81e-3).abs() < 1e-6, "∂vx/∂μ = {dvx_dmu}");
}

#[test]
fn a_box_at_rest() {
    let mut model = Model::from_toml_str(SLIDING_BOX, Some("sliding_box.toml")).unwrap();
    model.initial_state.v.fill(0.0);
    // With no margin, the corners of a box at rest sit on the switch where they enter
    // the step: the differences of whole steps would straddle it.
    model.contact_margin = 0.01;
    let d = check("box at rest", &model, 20, &[], &[]);
    assert!(!d.constraints.is_empty());
    assert!(modes(&d).iter().all(|m| *m == ConstraintMode::Sticking));
}

#[test]
fn a_sphere_rolling() {
    let model = Model::from_toml_str(SPHERE, Some("rolling_sphere.toml")).unwrap();
    let parameters = [Parameter::parse("mass:ball").unwrap()];
    let d = check("sphere rolling", &model, 5, &[], &parameters);
    assert_eq!(modes(&d), vec![ConstraintMode::Sticking]);
}

/// A disk sliding and spinning on the ground, held by a soft pin above it: the pin's `Ġv`
/// enters the step problem beside its free motion, so that the velocity columns cannot be
/// read off the free motion's momentum alone (that shortcut would be 2e-6 off here).
const PINNED_DISK: &str = r#"
[model]
name = "pinned_disk"
dimension = "planar"
gravity = [0.0, -9.81, 0.0]

[[materials]]
name = "rough"
friction = 0.3

[[colliders]]
name = "ground"
shape = { plane = [0.0, 1.0, 0.0] }
material = "rough"

[[bodies]]
name = "disk"
mass = 1.0
inertia = { solid_sphere = 0.1 }

[[colliders]]
name = "disk_shape"
body = "disk"
shape = { sphere = 0.1 }
material = "rough"

[[constraints]]
name = "pin"
kind = "point"
body_a = "disk"
anchor_a = [0.0, 0.5, 0.0]
body_b = "world"
anchor_b = [0.0, 0.6, 0.0]
stiffness = 1e4
damping = 1.0

[initial]
q.disk = [0.0, 0.1, 0.0]
v.disk = [0.5, 0.0, 15.0]
"#;

#[test]
fn a_pinned_disk_sliding_and_spinning() {
    let model = Model::from_toml_str(PINNED_DISK, Some("pinned_disk.toml")).unwrap();
    check_within("pinned disk", &model, 3, &[], &[], 1e-7);
}

#[test]
fn directions_and_bad_parameters() {
    let model = Model::from_toml_str(SLIDING_BOX, Some("sliding_box.toml")).unwrap();
    assert!(Parameter::parse("stiffness:x").is_err());
    let mut sim = Simulator::new(model, "drumwright", 1e-3).unwrap();
    let unknown = DerivativeOptions::default().parameter(Parameter::parse("mass:nobody").unwrap());
    let err = sim.derivatives(&[], &unknown).unwrap_err().to_string();
    assert!(err.contains("nobody"), "{err}");
    let d = sim.derivatives(&[], &DerivativeOptions::default()).unwrap();
    assert_eq!((d.a.nrows(), d.a.ncols(), d.b.ncols()), (12, 12, 0));
    assert_ne!(Direction::Position(0), Direction::Velocity(0));
}

#[test]
fn schemes_without_a_step_problem_use_finite_differences() {
    let model = Model::from_toml_str(PENDULUM, Some("pendulum.toml")).unwrap();
    let mut sim = Simulator::new(model, "anitescu-potra", 1e-3).unwrap();
    let d = sim
        .derivatives(&[0.5], &DerivativeOptions::default())
        .unwrap();
    assert_eq!(d.method, DerivativeMethod::FiniteDifference);
    assert!((d.b[(1, 0)] - 1e-3 / (1.0 + 1e-4)).abs() < 1e-8);
    let implicit = DerivativeOptions::default().method(DerivativeMethod::Implicit);
    assert!(sim.derivatives(&[0.5], &implicit).is_err());
}
