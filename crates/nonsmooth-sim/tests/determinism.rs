//! Determinism: the same model, stepper and step size give bit-identical trajectories on
//! repeated runs, for every stepper (no hidden state survives between fresh steppers, no
//! iteration-order or allocation-dependent arithmetic).

use nonsmooth_core::Model;
use nonsmooth_sim::{simulate, stepper_by_name, SimOptions, STEPPER_NAMES};

const BALL: &str = include_str!("../../../examples/bouncing_sphere.toml");

fn trajectory_bits(model: &Model, stepper: &str) -> Vec<u64> {
    let mut st = stepper_by_name(stepper).unwrap();
    let opts = SimOptions {
        dt: 1e-3,
        duration: 0.6,
        record_every: 1,
    };
    let traj = simulate(
        model,
        st.as_mut(),
        &model.initial_state,
        &opts,
        &mut |_, _| {},
    )
    .unwrap();
    traj.q
        .iter()
        .chain(traj.v.iter())
        .flat_map(|x| x.iter().map(|v| v.to_bits()))
        .collect()
}

#[test]
fn every_stepper_is_bit_reproducible() {
    let mut model = Model::from_toml_str(BALL, None).unwrap();
    model.initial_state.v[0] = 0.7; // sliding and spinning through the bounce
    model.initial_state.v[4] = 3.0;
    for name in STEPPER_NAMES {
        let a = trajectory_bits(&model, name);
        let b = trajectory_bits(&model, name);
        assert!(!a.is_empty());
        assert!(a == b, "{name}: two runs differ");
    }
}
