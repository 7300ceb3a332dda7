//! The `Simulator` and actuation inside the step (a simulator the user drives):
//! - a motor torque that balances gravity holds the pendulum at π/6 (drumwright,
//!   anitescu-potra);
//! - the first step of every velocity-level scheme from rest is `v = h M⁻¹ (f + Pᵀu)`;
//! - the 1 s driven trajectory converges to an RK45 reference as h shrinks;
//! - commands beyond the effort bounds are clamped and counted;
//! - a stiff position servo (kp = 1e6) holds its joint at the command;
//! - malformed commands and states are typed errors that leave the simulator unchanged.

use nalgebra::DVector;
use nonsmooth_core::dynamics::{bias_force, mass_matrix};
use nonsmooth_core::{Model, State};
use nonsmooth_sim::{Actuation, SimError, Simulator};
use std::f64::consts::FRAC_PI_6;

const PENDULUM: &str = include_str!("../../../examples/pendulum.toml");

fn pendulum() -> Model {
    Model::from_toml_str(PENDULUM, Some("pendulum.toml")).unwrap()
}

/// The pendulum with its motor replaced by a position servo of gains `kp`, `kv`.
fn servo_pendulum(kp: f64, kv: f64) -> Model {
    let text = PENDULUM.replace(
        "effort_limit = [-5.0, 5.0]",
        &format!("kind = \"position\"\nkp = {kp:e}\nkv = {kv:e}"),
    );
    Model::from_toml_str(&text, Some("servo_pendulum.toml")).unwrap()
}

#[test]
fn a_torque_balancing_gravity_holds_the_pendulum_at_its_angle() {
    let u = [9.81 * FRAC_PI_6.sin()];
    for stepper in ["drumwright", "anitescu-potra"] {
        let mut sim = Simulator::new(pendulum(), stepper, 1e-3).unwrap();
        sim.reset_to(&[FRAC_PI_6], &[0.0]).unwrap();
        let mut worst: f64 = 0.0;
        for _ in 0..1000 {
            sim.step(&u).unwrap();
            worst = worst.max((sim.q()[0] - FRAC_PI_6).abs());
        }
        assert!((sim.t() - 1.0).abs() < 1e-12, "{stepper}: t = {}", sim.t());
        assert!(worst < 1e-6, "{stepper}: drift {worst}");
        assert_eq!(sim.counters().steps, 1000);
        assert_eq!(sim.counters().clamped_commands, 0);
    }
}

/// The velocity-level schemes: one step from rest is `v₁ = h M⁻¹ (f + Pᵀu)` with f the
/// generalized force at the start (gravity; no contact, no limit).
const VELOCITY_LEVEL: [&str; 5] = [
    "penalty-symplectic",
    "penalty-explicit",
    "drumwright",
    "anitescu-potra",
    "qp-max-dissipation",
];

#[test]
fn the_first_step_applies_the_torque_in_the_velocity_update() {
    let model = pendulum();
    let q0 = DVector::from_vec(vec![0.5]);
    let v0 = DVector::zeros(1);
    let h = 1e-3;
    let m = mass_matrix(&model, &q0);
    let f = -bias_force(&model, &q0, &v0);
    let expected = m
        .cholesky()
        .unwrap()
        .solve(&(f + DVector::from_vec(vec![2.0])))
        * h;
    for name in VELOCITY_LEVEL {
        let mut sim = Simulator::new(model.clone(), name, h).unwrap();
        sim.reset_to(&[0.5], &[0.0]).unwrap();
        sim.step(&[2.0]).unwrap();
        let rel = (sim.v()[0] - expected[0]).abs() / expected[0].abs();
        assert!(rel < 1e-9, "{name}: v = {} vs {}", sim.v()[0], expected[0]);
    }
}

/// The driven pendulum (u = 2 N·m from q = 0.5 at rest) for 1 s: the error of every
/// velocity-level scheme against RK45 (tight tolerances, h = 1e-4 outside steps) falls when
/// the step shrinks from h to h/4 (first-order schemes: by about 4).
#[test]
fn driven_trajectories_converge_to_the_rk45_reference() {
    let model = pendulum();
    let end = |name: &str, h: f64| -> f64 {
        let mut sim = Simulator::new(model.clone(), name, h).unwrap();
        sim.reset_to(&[0.5], &[0.0]).unwrap();
        sim.step_n((1.0 / h).round() as usize, &[2.0]).unwrap();
        assert!((sim.t() - 1.0).abs() < 1e-9, "{name}: t = {}", sim.t());
        sim.q()[0]
    };
    let reference = end("rk45", 1e-3);
    for name in VELOCITY_LEVEL {
        let coarse = (end(name, 4e-3) - reference).abs();
        let fine = (end(name, 1e-3) - reference).abs();
        assert!(
            fine < 0.4 * coarse && fine < 1e-2,
            "{name}: error {coarse:e} at h = 4e-3, {fine:e} at 1e-3"
        );
    }
}

#[test]
fn commands_beyond_the_effort_bounds_are_clamped_and_counted() {
    let mut clamped = Simulator::new(pendulum(), "anitescu-potra", 1e-3).unwrap();
    let mut at_bound = Simulator::new(pendulum(), "anitescu-potra", 1e-3).unwrap();
    for _ in 0..10 {
        clamped.step(&[50.0]).unwrap();
        at_bound.step(&[5.0]).unwrap();
    }
    assert_eq!(clamped.counters().clamped_commands, 10);
    assert_eq!(at_bound.counters().clamped_commands, 0);
    assert_eq!(clamped.q(), at_bound.q());
    let input = Actuation::from_command(&pendulum(), &pendulum().initial_state, &[-7.0]).unwrap();
    assert_eq!(input.clamped(), 1);
}

/// kp = 1e6 N·m/rad (and critical damping 2√(kp I) ≈ 2e3): the implicit servo settles at
/// the command; the static error m g l sin θ / kp ≈ 3e-6 rad.
#[test]
fn a_stiff_position_servo_holds_its_joint_at_the_command() {
    for stepper in [
        "drumwright",
        "anitescu-potra",
        "qp-max-dissipation",
        "penalty-symplectic",
    ] {
        let mut sim = Simulator::new(servo_pendulum(1e6, 2e3), stepper, 1e-3).unwrap();
        sim.step_n(500, &[0.3]).unwrap();
        let mut worst: f64 = 0.0;
        for _ in 0..500 {
            sim.step(&[0.3]).unwrap();
            worst = worst.max((sim.q()[0] - 0.3).abs());
        }
        assert!(worst < 1e-4, "{stepper}: off by {worst}");
    }
    // without damping the implicit integration still settles (no blow-up at h·ω = 1)
    let mut sim = Simulator::new(servo_pendulum(1e6, 0.0), "drumwright", 1e-3).unwrap();
    sim.step_n(1000, &[0.3]).unwrap();
    assert!((sim.q()[0] - 0.3).abs() < 1e-4, "undamped: {}", sim.q()[0]);
}

#[test]
fn malformed_commands_and_states_are_named_errors_and_change_nothing() {
    let mut sim = Simulator::new(pendulum(), "drumwright", 1e-3).unwrap();
    sim.step(&[1.0]).unwrap();
    let before = sim.state().clone();
    let expect_input = |r: Result<(), SimError>, argument: &str, needle: &str| match r {
        Err(SimError::InvalidInput {
            argument: a,
            reason,
        }) => {
            assert_eq!(a, argument);
            assert!(reason.contains(needle), "{reason}");
        }
        other => panic!("not an input error: {other:?}"),
    };
    expect_input(sim.step(&[1.0, 2.0]), "u", "expected 1 entries");
    expect_input(sim.step(&[f64::NAN]), "u", "entry 0");
    expect_input(sim.step(&[f64::INFINITY]), "u", "entry 0");
    expect_input(sim.reset_to(&[0.1, 0.2], &[0.0]), "q", "expected 1 entries");
    expect_input(sim.reset_to(&[0.1], &[f64::NAN]), "v", "entry 0");
    assert_eq!(sim.state(), &before);
    assert_eq!(sim.counters().steps, 1);
    // a floating body's quaternion must be of unit norm
    let ball = Model::from_file(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/bouncing_sphere.toml"
    ))
    .unwrap();
    let mut sim = Simulator::new(ball, "drumwright", 1e-3).unwrap();
    let mut q: Vec<f64> = sim.q().iter().copied().collect();
    q[3] = 2.0;
    let v = vec![0.0; sim.v().len()];
    expect_input(sim.reset_to(&q, &v), "q", "quaternion");
    assert!(Simulator::new(pendulum(), "nope", 1e-3).is_err());
    assert!(Simulator::new(pendulum(), "drumwright", 0.0).is_err());
}

#[test]
fn contacts_of_the_last_step_report_geometry_and_impulses() {
    // the box on four Hertz feet (Drumwright 2019, Fig. 9): compliant contact, always in contact
    let model = Model::from_file(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/drumwright_incline.toml"
    ))
    .unwrap();
    let mut sim = Simulator::new(model, "drumwright", 1e-2).unwrap();
    assert!(sim.contacts().unwrap().is_empty());
    sim.step_n(50, &[]).unwrap();
    let contacts = sim.contacts().unwrap();
    assert_eq!(contacts.len(), 4);
    // the normal impulses carry the weight's normal component over the step
    let total: f64 = contacts.iter().filter_map(|c| c.normal_impulse).sum();
    let g = sim.model().gravity.norm();
    let weight = sim.model().bodies.iter().map(|b| b.mass).sum::<f64>() * g * 1e-2;
    let cos = 15f64.to_radians().cos();
    assert!(
        (total - weight * cos).abs() < 0.05 * weight,
        "{total} vs {}",
        weight * cos
    );
    assert!(contacts.iter().all(|c| c.tangential_impulse.is_some()));
    assert_eq!(sim.body_poses().len(), sim.model().bodies.len());
}

/// A rigid resting contact is reported with the margins the step used (drumwright's
/// speculative contacts), so that the impulses land on the contacts they belong to.
#[test]
fn rigid_contacts_are_reported_with_the_steppers_own_margins() {
    let model = Model::from_file(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/sliding_box.toml"
    ))
    .unwrap();
    for stepper in ["drumwright", "anitescu-potra"] {
        let mut sim = Simulator::new(model.clone(), stepper, 1e-3).unwrap();
        sim.step_n(5, &[]).unwrap();
        let contacts = sim.contacts().unwrap();
        assert_eq!(contacts.len(), 4, "{stepper}");
        // The normal impulses carry the weight over the step, the friction impulses
        // (μ = 0.3) oppose the sliding along +x.
        let total: f64 = contacts.iter().filter_map(|c| c.normal_impulse).sum();
        let weight = model.bodies.iter().map(|b| b.mass).sum::<f64>() * 9.81 * 1e-3;
        assert!(
            (total - weight).abs() < 0.05 * weight,
            "{stepper}: {total} vs {weight}"
        );
        let friction = contacts
            .iter()
            .filter_map(|c| c.tangential_impulse)
            .fold(nalgebra::Vector3::zeros(), |a, t| a + t);
        assert!(
            friction.x < -0.25 * weight && friction.x > -0.31 * weight,
            "{stepper}: friction {friction}, weight {weight}"
        );
        // The mean force over the step of the contact that takes the most impulse points
        // up from the ground into the box (collider A).
        let c = contacts
            .iter()
            .max_by(|a, b| a.normal_impulse.partial_cmp(&b.normal_impulse).unwrap())
            .unwrap();
        assert!(c.force(1e-3).unwrap().z > 0.0, "{stepper}: {c:?}");
    }
}

/// The box at rest: every rigid stepper that reports impulses carries its weight (the
/// maximal-dissipation QP lifts a sliding box off, a property of its model).
fn resting_box() -> Model {
    let mut model = Model::from_file(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/sliding_box.toml"
    ))
    .unwrap();
    model.initial_state.v.fill(0.0);
    model
}

/// The run loop records the impulses of the step from every recorded state for the
/// steppers that report them; the contacts rebuilt from them carry the weight.
#[test]
fn the_run_loop_records_impulses() {
    let model = resting_box();
    let options = nonsmooth_sim::SimOptions {
        dt: 1e-3,
        duration: 0.05,
        record_every: 7,
    };
    for name in ["drumwright", "anitescu-potra", "qp-max-dissipation"] {
        let mut st = nonsmooth_sim::stepper_by_name(name).unwrap();
        let plain = nonsmooth_sim::simulate(
            &model,
            st.as_mut(),
            &model.initial_state,
            &options,
            &mut |_, _| {},
        )
        .unwrap();
        assert!(plain.impulses.is_empty());
        let mut st = nonsmooth_sim::stepper_by_name(name).unwrap();
        let traj = nonsmooth_sim::simulate_recording_impulses(
            &model,
            st.as_mut(),
            &model.initial_state,
            &options,
            &mut |_, _| {},
        )
        .unwrap();
        assert_eq!(traj.q, plain.q, "{name}: recording changes nothing");
        assert_eq!(traj.impulses.len(), traj.t.len(), "{name}");
        let last = traj.impulses.len() - 1;
        assert!(
            traj.impulses[last].is_none(),
            "{name}: no step from the last state"
        );
        let mut carried = false;
        for (k, step) in traj.impulses[..last].iter().enumerate() {
            let step = step.as_ref().unwrap();
            assert!((step.h - 1e-3).abs() < 1e-12, "{name}: h = {}", step.h);
            let state = nonsmooth_core::State {
                q: traj.q[k].clone(),
                v: traj.v[k].clone(),
                t: traj.t[k],
            };
            let contacts = step.contacts(&model, &state).unwrap();
            let up: f64 = contacts.iter().map(|c| c.force(step.h).unwrap().z).sum();
            carried |= up > 0.0;
            // (qp-max-dissipation leaves the box hopping by round-off on the ground of zero
            // contact margin: some of its states have no contact.)
            if k > 0 && name != "qp-max-dissipation" {
                assert_eq!(contacts.len(), 4, "{name}: state {k}");
                assert!((up - 2.0 * 9.81).abs() < 0.05 * 2.0 * 9.81, "{name}: {up}");
            }
        }
        assert!(carried, "{name}");
    }
    // A stepper without impulses records none; a failed run (a penalty scheme on rigid
    // contact) keeps one entry per recorded state.
    let mut st = nonsmooth_sim::stepper_by_name("penalty-symplectic").unwrap();
    let run = nonsmooth_sim::run_simulation(
        &model,
        st.as_mut(),
        &model.initial_state,
        &nonsmooth_sim::SimOptions {
            record_every: 1,
            ..options
        },
        true,
        &mut |_, _| {},
    )
    .unwrap();
    let Some(nonsmooth_sim::SimError::StepFailed { .. }) = run.failure else {
        panic!("{:?}", run.failure);
    };
    let partial = run.trajectory;
    assert_eq!(partial.impulses.len(), partial.t.len());
    assert!(partial.impulses.iter().all(|i| i.is_none()));
}

/// The ODE schemes apply the torque in their right-hand side and `step` covers exactly h.
#[test]
fn ode_schemes_take_the_torque_and_cover_the_whole_step() {
    let model = pendulum();
    let state = State {
        q: DVector::from_vec(vec![0.5]),
        v: DVector::zeros(1),
        t: 0.0,
    };
    let input = Actuation::from_command(&model, &state, &[2.0]).unwrap();
    for name in ["rk45", "bdf", "penalty-implicit"] {
        let mut st = nonsmooth_sim::stepper_by_name(name).unwrap();
        let pushed = st.step_actuated(&model, &state, &input, 0.05).unwrap();
        let free = st.step(&model, &state, 0.05).unwrap();
        assert!((pushed.t - 0.05).abs() < 1e-15, "{name}: t = {}", pushed.t);
        assert!(
            pushed.v[0] > free.v[0] + 0.05,
            "{name}: {} vs {}",
            pushed.v[0],
            free.v[0]
        );
    }
}

/// A stepper that does not advance physical time by dt is refused by the Simulator.
#[test]
fn a_stepper_that_does_not_cover_dt_is_refused() {
    struct Frozen;
    impl nonsmooth_sim::Stepper for Frozen {
        fn name(&self) -> &'static str {
            "frozen"
        }
        fn advance(&mut self, step: &nonsmooth_sim::Step<'_>) -> Result<State, SimError> {
            Ok(step.state.clone())
        }
    }
    let mut sim = Simulator::with_stepper(pendulum(), Box::new(Frozen), 1e-3).unwrap();
    let before = sim.state().clone();
    match sim.step(&[0.0]) {
        Err(SimError::Unsupported { stepper, reason }) => {
            assert_eq!(stepper, "frozen");
            assert!(reason.contains("exactly the step"), "{reason}");
        }
        other => panic!("not refused: {other:?}"),
    }
    assert_eq!(sim.state(), &before);
}

/// A step whose solver fails is completed as smaller steps and counted; an error about the
/// input is not retried.
#[test]
fn failed_steps_are_recovered_by_halving_and_counted() {
    /// Fails (as a solver would) on steps longer than `limit`, else steps the pendulum with
    /// symplectic Euler.
    struct Picky {
        inner: Box<dyn nonsmooth_sim::Stepper>,
        limit: f64,
    }
    impl nonsmooth_sim::Stepper for Picky {
        fn name(&self) -> &'static str {
            "picky"
        }
        fn advance(&mut self, step: &nonsmooth_sim::Step<'_>) -> Result<State, SimError> {
            if step.h > self.limit {
                return Err(SimError::Solver(nonsmooth_solvers::SolverError::Failed {
                    solver: "picky",
                    reason: "too long a step".into(),
                }));
            }
            self.inner.advance(step)
        }
    }
    let picky = Picky {
        inner: nonsmooth_sim::stepper_by_name("penalty-symplectic").unwrap(),
        limit: 3e-4,
    };
    let mut sim = Simulator::with_stepper(pendulum(), Box::new(picky), 1e-3).unwrap();
    sim.step_n(10, &[1.0]).unwrap();
    assert!((sim.t() - 1e-2).abs() < 1e-15, "t = {}", sim.t());
    let rec = sim.counters().recoveries;
    // 1 ms → 0.5 ms (fails) → 0.25 ms: four sub-steps per step
    assert_eq!((rec.step_halving, rec.substeps), (10, 40));
    assert_eq!(rec.unconverged_steps, 0);
    // the same motion as stepping 0.25 ms directly
    let mut fine = Simulator::new(pendulum(), "penalty-symplectic", 2.5e-4).unwrap();
    fine.step_n(40, &[1.0]).unwrap();
    assert!((fine.q()[0] - sim.q()[0]).abs() < 1e-12);
    // past the deepest halving the solver's error is returned, the state is kept
    let hopeless = Picky {
        inner: nonsmooth_sim::stepper_by_name("penalty-symplectic").unwrap(),
        limit: 1e-9,
    };
    let mut sim = Simulator::with_stepper(pendulum(), Box::new(hopeless), 1e-3).unwrap();
    assert!(matches!(sim.step(&[1.0]), Err(SimError::Solver(_))));
    assert_eq!(sim.t(), 0.0);
}

/// A step accepted at the scheme's iteration limit is counted: `drumwright` limited to one
/// staged normal/friction sweep on the incline box (friction acts, so one sweep cannot
/// confirm convergence), against the default limit, which converges there.
#[test]
fn steps_accepted_at_the_sweep_limit_are_counted() {
    use nonsmooth_sim::drumwright::{DrumwrightOptions, FrictionCoupling};
    use nonsmooth_sim::DrumwrightStepper;
    let incline = || {
        Model::from_file(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/drumwright_incline.toml"
        ))
        .unwrap()
    };
    let one_sweep = DrumwrightStepper::new(DrumwrightOptions {
        friction: FrictionCoupling::Staged { sweeps: 1 },
        ..Default::default()
    });
    let mut sim = Simulator::with_stepper(incline(), Box::new(one_sweep), 1e-2).unwrap();
    sim.step_n(10, &[]).unwrap();
    assert!(sim.counters().recoveries.unconverged_steps > 0);
    let mut sim = Simulator::new(incline(), "drumwright", 1e-2).unwrap();
    sim.step_n(10, &[]).unwrap();
    assert_eq!(sim.counters().recoveries.unconverged_steps, 0);
}
