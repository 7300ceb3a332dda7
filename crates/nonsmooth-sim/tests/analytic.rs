//! The penalty steppers against analytic solutions: free fall, projectile, small-angle
//! pendulum period, energy bound of a damped bounce, and typed errors.

use nonsmooth_core::dynamics::{kinetic_energy, potential_energy};
use nonsmooth_core::Model;
use nonsmooth_sim::{
    simulate, stepper_by_name, PenaltyIntegrator, PenaltyStepper, SimError, SimOptions, Stepper,
};

const BALL: &str = include_str!("../../../examples/bouncing_sphere.toml");
const PENDULUM: &str = include_str!("../../../examples/pendulum.toml");

fn run(
    model: &Model,
    stepper: &mut dyn Stepper,
    dt: f64,
    duration: f64,
) -> nonsmooth_sim::Trajectory {
    let options = SimOptions {
        dt,
        duration,
        record_every: 1,
    };
    simulate(
        model,
        stepper,
        &model.initial_state,
        &options,
        &mut |_, _| {},
    )
    .unwrap()
}

#[test]
fn free_fall_matches_the_discrete_closed_form_and_the_parabola() {
    let model = Model::from_toml_str(BALL, Some("bouncing_sphere.toml")).unwrap();
    let h = 1e-3;
    let mut stepper = PenaltyStepper::new(PenaltyIntegrator::SymplecticEuler);
    let traj = run(&model, &mut stepper, h, 0.3);
    let g = -9.81;
    for (n, (t, q)) in traj.t.iter().zip(&traj.q).enumerate() {
        let nf = n as f64;
        let discrete = 1.0 + h * h * g * nf * (nf + 1.0) / 2.0;
        assert!((q[2] - discrete).abs() < 1e-12, "step {n}");
        let exact = 1.0 + 0.5 * g * t * t;
        // Symplectic Euler leads the parabola by ½|g| h t.
        assert!((q[2] - exact - 0.5 * g * h * t).abs() < 1e-12);
        assert_eq!(&q.fixed_rows::<4>(3).as_slice(), &[1.0, 0.0, 0.0, 0.0]);
    }
    assert!((traj.v.last().unwrap()[2] - g * 0.3).abs() < 1e-12);
}

#[test]
fn projectile_explicit_euler_lags_the_parabola_by_half_g_h_t() {
    let mut model = Model::from_toml_str(BALL, Some("bouncing_sphere.toml")).unwrap();
    model.initial_state.v[0] = 2.0;
    model.initial_state.v[2] = 3.0;
    let h = 1e-3;
    let mut stepper = PenaltyStepper::new(PenaltyIntegrator::ExplicitEuler);
    let traj = run(&model, &mut stepper, h, 0.5);
    let g = -9.81;
    let (t, q) = (*traj.t.last().unwrap(), traj.q.last().unwrap());
    assert!((q[0] - 2.0 * t).abs() < 1e-12, "horizontal motion is exact");
    let exact = 1.0 + 3.0 * t + 0.5 * g * t * t;
    assert!((q[2] - (exact - 0.5 * g * h * t)).abs() < 1e-9);
}

#[test]
fn small_angle_pendulum_period_within_a_tenth_of_a_percent() {
    let mut model = Model::from_toml_str(PENDULUM, Some("pendulum.toml")).unwrap();
    model.initial_state.q[0] = 0.01;
    let body = &model.bodies[0];
    let d = body.com.norm();
    let i_pivot = body.inertia[(2, 2)] + body.mass * d * d;
    let period = 2.0 * std::f64::consts::PI * (i_pivot / (body.mass * 9.81 * d)).sqrt();
    let mut stepper = PenaltyStepper::new(PenaltyIntegrator::SymplecticEuler);
    let traj = run(&model, &mut stepper, 1e-3, 3.2 * period);
    let theta: Vec<f64> = traj.q.iter().map(|q| q[0]).collect();
    let mut crossings = Vec::new();
    for i in 1..theta.len() {
        if theta[i - 1] < 0.0 && theta[i] >= 0.0 {
            let s = theta[i - 1] / (theta[i - 1] - theta[i]);
            crossings.push(traj.t[i - 1] + s * (traj.t[i] - traj.t[i - 1]));
        }
    }
    assert!(crossings.len() >= 3);
    let measured = (crossings[crossings.len() - 1] - crossings[0]) / (crossings.len() - 1) as f64;
    assert!(
        ((measured - period) / period).abs() < 1e-3,
        "period {measured} vs {period}"
    );
}

#[test]
fn damped_bounce_never_gains_energy() {
    let model = Model::from_toml_str(BALL, Some("bouncing_sphere.toml")).unwrap();
    let mut stepper = stepper_by_name("penalty-symplectic").unwrap();
    let traj = run(&model, stepper.as_mut(), 1e-4, 1.0);
    let energy = |i: usize| {
        kinetic_energy(&model, &traj.q[i], &traj.v[i]) + potential_energy(&model, &traj.q[i])
    };
    let e0 = energy(0);
    let min_z = traj.q.iter().map(|q| q[2]).fold(f64::MAX, f64::min);
    assert!(min_z < 0.1, "the sphere reached the floor");
    // Away from contact the mechanical energy (elastic energy excluded) is at most the initial
    // one up to the O(h) error of symplectic Euler; after the bounce it is strictly lower.
    let last = traj.t.len() - 1;
    for i in 0..traj.t.len() {
        if traj.q[i][2] > 0.1 {
            assert!(
                energy(i) <= e0 + 0.01 * e0.abs().max(1.0),
                "t = {}",
                traj.t[i]
            );
        }
    }
    assert!(energy(last) < e0 - 0.1, "damping dissipated energy");
}

#[test]
fn rigid_contact_and_bad_options_are_typed_errors() {
    let src = BALL
        .replace("stiffness = 1e5\n", "")
        .replace("damping = 50.0\n", "");
    let model = Model::from_toml_str(&src, Some("rigid.toml")).unwrap();
    let mut stepper = stepper_by_name("penalty-symplectic").unwrap();
    let options = SimOptions {
        dt: 1e-3,
        duration: 1.0,
        record_every: 1,
    };
    let err = simulate(
        &model,
        stepper.as_mut(),
        &model.initial_state,
        &options,
        &mut |_, _| {},
    )
    .unwrap_err();
    assert!(
        matches!(err.root_cause(), SimError::Unsupported { .. }),
        "{err}"
    );
    assert!(matches!(err, SimError::StepFailed { step, .. } if step > 1));
    assert!(err.to_string().contains("stiffness"));
    let bad = SimOptions {
        dt: -1.0,
        ..options
    };
    assert!(matches!(
        bad.steps(),
        Err(SimError::InvalidOption { option: "dt", .. })
    ));
    assert!(matches!(
        stepper_by_name("rk99"),
        Err(SimError::UnknownStepper { .. })
    ));
    let mut state = model.initial_state.clone();
    state.q[2] = f64::NAN;
    assert!(matches!(
        stepper.step(&model, &state, 1e-3),
        Err(SimError::Model(_))
    ));
}
