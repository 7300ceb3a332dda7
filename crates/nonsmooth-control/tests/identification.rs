//! Friction identification by damped Gauss–Newton on recorded slides of
//! examples/sliding_box.toml.

use nonsmooth_control::identification::{
    identify, IdentificationError, IdentificationOptions, IdentificationResult, Recording,
};
use nonsmooth_core::{Model, State};
use nonsmooth_sim::derivatives::Parameter;
use nonsmooth_sim::Simulator;
use rand::{Rng, SeedableRng};

const SLIDING_BOX: &str = include_str!("../../../examples/sliding_box.toml");
const DT: f64 = 0.01;
const STEPS: usize = 30;

fn sliding_box() -> Model {
    Model::from_toml_str(SLIDING_BOX, Some("sliding_box.toml")).unwrap()
}

/// The slide of `model` with friction `mu` from `initial`, 0.3 s, no command.
fn record(model: &Model, mu: f64, initial: &State) -> Recording {
    let mut truth = model.clone();
    truth.materials[0].friction = mu;
    let mut sim = Simulator::new(truth, "drumwright", DT).unwrap();
    Recording::simulate(&mut sim, initial, vec![vec![]; STEPS]).unwrap()
}

fn friction() -> Parameter {
    Parameter::parse("friction:steel_on_wood").unwrap()
}

/// The friction coefficient identified from `recording` by `drumwright` from μ = 0.5, with
/// the default options.
fn identify_friction(model: &Model, recording: &Recording) -> IdentificationResult {
    identify(
        model,
        "drumwright",
        DT,
        recording,
        &[friction()],
        &[0.5],
        &IdentificationOptions::default(),
    )
    .unwrap()
}

#[test]
fn the_friction_coefficient_of_a_slide_is_recovered_from_a_wrong_guess() {
    let model = sliding_box();
    let recording = record(&model, 0.3, &model.initial_state);
    let r = identify_friction(&model, &recording);
    assert!(r.converged);
    assert!((r.estimate[0] - 0.3).abs() < 0.003, "{:?}", r.estimate);
    assert!(r.history.windows(2).all(|w| w[1].cost < w[0].cost));
    assert_eq!(r.implicit_derivatives, r.derivative_calls);
}

#[test]
fn random_coefficients_and_launch_speeds_are_recovered() {
    let model = sliding_box();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    for _ in 0..10 {
        let mu = rng.gen_range(0.1..0.9);
        let speed = rng.gen_range(0.5..3.0);
        let heading: f64 = rng.gen_range(0.0..std::f64::consts::TAU);
        let mut initial = model.initial_state.clone();
        initial.v[0] = speed * heading.cos();
        initial.v[1] = speed * heading.sin();
        let recording = record(&model, mu, &initial);
        let r = identify_friction(&model, &recording);
        let error = (r.estimate[0] - mu).abs() / mu;
        assert!(
            error < 0.01,
            "μ = {mu}, v = {speed}: estimate {:?}",
            r.estimate
        );
    }
}

#[test]
fn bad_inputs_are_typed_errors() {
    let model = sliding_box();
    let recording = record(&model, 0.3, &model.initial_state);
    let options = IdentificationOptions::default();
    let run = |params: &[Parameter], guess: &[f64], rec: &Recording| {
        identify(&model, "drumwright", DT, rec, params, guess, &options)
    };
    assert!(matches!(
        run(&[friction()], &[0.5, 0.5], &recording),
        Err(IdentificationError::InvalidInput(_))
    ));
    assert!(matches!(
        run(&[friction()], &[-0.5], &recording),
        Err(IdentificationError::InvalidInput(_))
    ));
    let unknown = Parameter::parse("friction:ice").unwrap();
    assert!(matches!(
        run(&[unknown], &[0.5], &recording),
        Err(IdentificationError::Simulation { .. })
    ));
    let mut empty = recording.clone();
    empty.states.clear();
    assert!(matches!(
        run(&[friction()], &[0.5], &empty),
        Err(IdentificationError::InvalidInput(_))
    ));
    assert!(matches!(
        IdentificationOptions::builder()
            .damping(1.0, 0.5, 10.0)
            .build(),
        Err(IdentificationError::InvalidOption {
            option: "damping",
            ..
        })
    ));
}
