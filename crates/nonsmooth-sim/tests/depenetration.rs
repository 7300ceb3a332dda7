//! A body that starts inside another is warned about and pushed out at no more than
//! `MAX_DEPENETRATION_SPEED` by the rigid velocity-level steppers, not launched at φ/h.

use nonsmooth_core::Model;
use nonsmooth_sim::{model_warnings, stepper_by_name, MAX_DEPENETRATION_SPEED};

/// A 1 kg ball of radius 0.1 m whose centre starts at `z` above the ground plane.
fn ball_at(z: f64) -> Model {
    let src = format!(
        r#"
[model]
name = "ball"
dimension = "spatial"
gravity = [0.0, 0.0, -9.81]

[[bodies]]
name = "ball"
mass = 1.0
inertia = {{ solid_sphere = 0.1 }}

[[colliders]]
name = "ground"
shape = {{ plane = [0.0, 0.0, 1.0] }}

[[colliders]]
name = "surface"
body = "ball"
shape = {{ sphere = 0.1 }}

[initial]
q.ball = [0.0, 0.0, {z}, 1.0, 0.0, 0.0, 0.0]
"#
    );
    Model::from_toml_str(&src, None).unwrap()
}

#[test]
fn a_ball_started_5_cm_into_the_ground_rises_out_at_the_capped_speed() {
    let model = ball_at(0.05);
    for name in ["anitescu-potra", "qp-max-dissipation"] {
        let mut stepper = stepper_by_name(name).unwrap();
        let h = 1e-3;
        let mut s = model.initial_state.clone();
        let mut top_speed: f64 = 0.0;
        // out after 0.05 s, a hop of v²/2g ≈ 5 cm on the separation speed, resting by 0.6 s
        for _ in 0..600 {
            s = stepper.step(&model, &s, h).unwrap();
            top_speed = top_speed.max(s.v[2]);
        }
        // φ/h would be 50 m/s; the cap is 1 m/s (plus one step of gravity)
        assert!(
            top_speed <= MAX_DEPENETRATION_SPEED + 9.81 * h + 1e-9,
            "{name}: rose at {top_speed} m/s"
        );
        assert!(
            top_speed >= 0.5 * MAX_DEPENETRATION_SPEED,
            "{name}: {top_speed}"
        );
        assert!((s.q[2] - 0.1).abs() < 2e-3, "{name}: z = {}", s.q[2]);
        assert!(s.v[2].abs() < 0.05, "{name}: vz = {}", s.v[2]);
    }
}

#[test]
fn colliders_that_start_inside_each_other_are_warned_about_with_their_depth() {
    let stepper = stepper_by_name("anitescu-potra").unwrap();
    let inside = |z: f64| -> Vec<String> {
        model_warnings(&ball_at(z), stepper.as_ref())
            .into_iter()
            .filter(|w| w.contains("inside each other"))
            .collect()
    };
    let deep = inside(0.05);
    assert_eq!(deep.len(), 1, "{deep:?}");
    assert!(
        deep[0].contains("`ground`") && deep[0].contains("`surface`"),
        "{}",
        deep[0]
    );
    assert!(deep[0].contains("0.050 m"), "{}", deep[0]);
    // resting contact and a sub-millimetre overlap are not reported
    assert!(inside(0.1).is_empty());
    assert!(inside(0.0995).is_empty());
}
