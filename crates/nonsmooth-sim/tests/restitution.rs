//! A material's restitution is honoured by `anitescu-potra` (Newton's law on the normal
//! velocity) and named in a warning by the schemes that ignore it.

use nonsmooth_core::Model;
use nonsmooth_sim::{model_warnings, stepper_by_name, Simulator};

fn ball() -> Model {
    Model::from_file(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/bouncing_sphere.toml"
    ))
    .unwrap()
}

/// The ball (e = 0.8, dropped from 1 m onto the ground) under `anitescu-potra`: each apex is
/// e² = 0.64 of the one before, to 1 % (the bounce starts up to h·|v| before touching).
#[test]
fn newton_restitution_gives_apex_ratios_of_e_squared() {
    let mut sim = Simulator::new(ball(), "anitescu-potra", 1e-3).unwrap();
    assert!(sim.warnings().is_empty(), "{:?}", sim.warnings());
    let mut apexes = vec![];
    let mut last_vz = 0.0;
    for _ in 0..3000 {
        sim.step(&[]).unwrap();
        let vz = sim.v()[2];
        if last_vz > 0.0 && vz <= 0.0 {
            apexes.push(sim.q()[2] - 0.1);
        }
        last_vz = vz;
    }
    assert!(apexes.len() >= 4, "{apexes:?}");
    assert!((apexes[0] / 0.9 - 0.64).abs() < 0.01, "{apexes:?}");
    for w in apexes.windows(2).take(3) {
        assert!((w[1] / w[0] - 0.64).abs() < 0.01, "{apexes:?}");
    }
}

#[test]
fn schemes_that_ignore_restitution_say_so() {
    let model = ball();
    for name in [
        "drumwright",
        "penalty-symplectic",
        "qp-max-dissipation",
        "rk45",
    ] {
        let st = stepper_by_name(name).unwrap();
        let w = model_warnings(&model, st.as_ref());
        assert_eq!(w.len(), 1, "{name}: {w:?}");
        assert!(w[0].contains("rubber") && w[0].contains(name), "{}", w[0]);
    }
    let ap = stepper_by_name("anitescu-potra").unwrap();
    assert!(model_warnings(&model, ap.as_ref()).is_empty());
}
