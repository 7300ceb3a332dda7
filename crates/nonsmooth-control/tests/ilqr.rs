//! iLQR through rigid contact: the box push of examples/ocp_box_push.toml (replayed through a
//! fresh simulator) and a short receding-horizon stand of examples/quadruped.toml.

use nalgebra::DVector;
use nonsmooth_control::ilqr::{solve, ControlMap, IlqrError, IlqrOptions, QuadraticCost};
use nonsmooth_control::receding_horizon::{self, RecedingHorizonOptions};
use nonsmooth_control::rollout::rollout;
use nonsmooth_control::{Desired, IdOptions, IdProblem, InverseDynamics, Variant};
use nonsmooth_core::Model;
use nonsmooth_sim::Simulator;

const BOX_ON_GROUND: &str = include_str!("../../../examples/box_on_ground.toml");
const QUADRUPED: &str = include_str!("../../../examples/quadruped.toml");

/// The least effort `∫u² dt` of a push over `d` against sliding friction `f` (unit mass) that
/// starts and ends at rest, the push free to end before the horizon: `min_τ f²τ + 12d²/τ³`
/// at `τ = √(6d/f)` (the acceleration `u − f` linear in time over the motion, the box at rest
/// and unpushed after it).
fn least_effort(d: f64, f: f64) -> f64 {
    let tau = (6.0 * d / f).sqrt();
    f * f * tau + 12.0 * d * d / tau.powi(3)
}

#[test]
fn the_pushed_box_reaches_its_target_at_rest_in_a_fresh_replay() {
    let model = Model::from_toml_str(BOX_ON_GROUND, Some("box_on_ground.toml")).unwrap();
    let dt = 0.02;
    let steps = 50;
    let mut sim = Simulator::new(model.clone(), "drumwright", dt).unwrap();
    let controls = ControlMap::named(&model, &["push"]).unwrap();
    let mut target = model.initial_state.clone();
    target.q[0] = 0.5;
    let cost = QuadraticCost::new(target, 3, 1).terminal_weights(&[1e5; 6]);
    // The box must slide for the push to move it: 7 N for half the horizon, then nothing.
    let guess: Vec<DVector<f64>> = (0..steps)
        .map(|k| DVector::from_element(1, if k < steps / 2 { 7.0 } else { 0.0 }))
        .collect();
    let initial = model.initial_state.clone();
    let result = solve(
        &mut sim,
        &initial,
        &cost,
        &controls,
        &guess,
        &IlqrOptions::default(),
    )
    .unwrap();
    assert!(result.converged(), "{:?}", result.stop);
    // drumwright's steps are differentiated implicitly.
    assert!(result.derivatives.implicit > 0 && result.derivatives.finite_difference == 0);
    assert!(result.cost_history.windows(2).all(|w| w[1] < w[0]));
    assert!(result.controls.iter().all(|u| u[0].abs() <= 10.0));

    let mut fresh = Simulator::new(model.clone(), "drumwright", dt).unwrap();
    let replay = rollout(&mut fresh, &initial, &result.commands).unwrap();
    let last = replay.last().unwrap();
    let position_error = ((last.q[0] - 0.5).powi(2) + (last.q[1] - 0.1).powi(2)).sqrt();
    let speed = (last.v[0].powi(2) + last.v[1].powi(2)).sqrt();
    assert!(position_error < 0.01, "position error {position_error}");
    assert!(speed < 0.01, "speed {speed}");
    assert!(last.q[2].abs() < 0.01 && last.v[2].abs() < 0.01);

    let effort: f64 = result.controls.iter().map(|u| dt * u.norm_squared()).sum();
    let friction = 0.5 * 9.81;
    let optimum = least_effort(0.5, friction);
    assert!(
        (effort - optimum).abs() < 0.01 * optimum,
        "effort {effort} vs {optimum}"
    );
}

#[test]
fn out_of_range_options_and_unknown_actuators_are_typed_errors() {
    let invalid = |r: Result<IlqrOptions, IlqrError>, option: &str| match r {
        Err(IlqrError::InvalidOption { option: o, .. }) => assert_eq!(o, option),
        other => panic!("expected an invalid {option}, got {other:?}"),
    };
    invalid(
        IlqrOptions::builder().max_iterations(0).build(),
        "max_iterations",
    );
    invalid(IlqrOptions::builder().tolerance(-1.0).build(), "tolerance");
    invalid(
        IlqrOptions::builder()
            .regularization(1.0, 0.0, 10.0)
            .build(),
        "regularization",
    );
    invalid(
        IlqrOptions::builder().regularization_factor(1.0).build(),
        "regularization_factor",
    );
    invalid(
        IlqrOptions::builder().step_sizes(vec![]).build(),
        "step_sizes",
    );
    invalid(
        IlqrOptions::builder().step_sizes(vec![2.0]).build(),
        "step_sizes",
    );
    assert!(matches!(
        RecedingHorizonOptions::builder().horizon(0).build(),
        Err(IlqrError::InvalidOption {
            option: "horizon",
            ..
        })
    ));

    let model = Model::from_toml_str(BOX_ON_GROUND, Some("box_on_ground.toml")).unwrap();
    assert_eq!(
        ControlMap::named(&model, &["pull"]),
        Err(IlqrError::UnknownActuator("pull".into()))
    );
    let controls = ControlMap::named(&model, &["push"]).unwrap();
    let mut sim = Simulator::new(model.clone(), "drumwright", 0.02).unwrap();
    let initial = model.initial_state.clone();
    let cost = QuadraticCost::new(initial.clone(), 3, 2);
    let guess = vec![DVector::zeros(1); 3];
    let r = solve(
        &mut sim,
        &initial,
        &cost,
        &controls,
        &guess,
        &IlqrOptions::default(),
    );
    assert!(
        matches!(r, Err(IlqrError::DimensionMismatch { .. })),
        "{r:?}"
    );
    let cost = QuadraticCost::new(initial.clone(), 3, 1);
    let r = solve(
        &mut sim,
        &initial,
        &cost,
        &controls,
        &[],
        &IlqrOptions::default(),
    );
    assert_eq!(r.err(), Some(IlqrError::NoControls));
    let nan = vec![DVector::from_element(1, f64::NAN)];
    let r = solve(
        &mut sim,
        &initial,
        &cost,
        &controls,
        &nan,
        &IlqrOptions::default(),
    );
    assert!(matches!(r, Err(IlqrError::NonFinite(_))), "{r:?}");
    let negative = QuadraticCost::new(initial.clone(), 3, 1).control_weights(&[-1.0]);
    let r = solve(
        &mut sim,
        &initial,
        &negative,
        &controls,
        &guess,
        &IlqrOptions::default(),
    );
    assert!(matches!(r, Err(IlqrError::InvalidCost(_))), "{r:?}");
}

#[test]
fn receding_horizon_ilqr_holds_the_quadruped_stand() {
    let model = Model::from_toml_str(QUADRUPED, Some("quadruped.toml")).unwrap();
    let dt = 0.01;
    let stand = model.initial_state.clone();
    let problem = IdProblem::from_state(&model, &stand.q, &stand.v, dt).unwrap();
    let holding = InverseDynamics::new(IdOptions::new(Variant::QpCoulomb))
        .solve(&problem, &Desired::Acceleration(DVector::zeros(12)))
        .unwrap()
        .torques;
    let mut weights = vec![1.0; 36];
    weights[..6].copy_from_slice(&[1e2, 1e2, 1e4, 1e3, 1e3, 1e3]);
    weights[6..18].fill(10.0);
    let cost = QuadraticCost::new(stand.clone(), 18, 12)
        .state_weights(&weights)
        .terminal_weights(&weights)
        .control_weights(&[1e-3; 12])
        .control_reference(holding.as_slice());
    let controls = ControlMap::all(&model);
    let options = RecedingHorizonOptions::builder()
        .horizon(10)
        .ilqr(IlqrOptions::builder().max_iterations(2).build().unwrap())
        .build()
        .unwrap();
    let mut plant = Simulator::new(model.clone(), "drumwright", dt).unwrap();
    let mut planner = Simulator::new(model.clone(), "drumwright", dt).unwrap();
    let plan = vec![holding.clone(); 10];
    let run = receding_horizon::run(
        &mut plant,
        &mut planner,
        &cost,
        &controls,
        &plan,
        30,
        &options,
    )
    .unwrap();
    let sag = run
        .states
        .iter()
        .map(|x| (x.q[2] - stand.q[2]).abs())
        .fold(0.0, f64::max);
    assert!(sag < 1e-3, "trunk height off by {sag}");
    assert_eq!(run.plans.len(), 30);
}
