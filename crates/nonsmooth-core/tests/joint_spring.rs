//! Joint springs (`spring = { stiffness, reference }` on revolute and prismatic joints): the
//! passive force −k (q − q_ref) in the forward dynamics and in the contact snapshot, a save
//! and reload that keeps them, and typed errors naming the key.

use nalgebra::DVector;
use nonsmooth_core::dynamics::forward_dynamics;
use nonsmooth_core::snapshot::BlockSnapshot;
use nonsmooth_core::{ContactSnapshot, Model};

/// A 2 kg mass on a vertical slide with a spring (k = 8 N/m, rest at −1), no gravity.
const SPRUNG: &str = r#"
[model]
name = "sprung"
dimension = "planar"
gravity = [0.0, 0.0, 0.0]

[[bodies]]
name = "mass"
mass = 2.0
inertia = [1e-3, 1e-3, 1e-3]

[[joints]]
name = "y"
kind = "prismatic"
parent = "world"
child = "mass"
axis = [0.0, 1.0, 0.0]
spring = { stiffness = 8.0, reference = -1.0 }

[initial]
q.y = 0.5
"#;

#[test]
fn the_spring_pulls_towards_its_rest_coordinate() {
    let m = Model::from_toml_str(SPRUNG, Some("sprung.toml")).unwrap();
    let q = DVector::<f64>::from_element(1, 0.5);
    let v = DVector::<f64>::zeros(1);
    // −k (q − q_ref) / m = −8 · 1.5 / 2
    let a = forward_dynamics(&m, &q, &v, &DVector::zeros(1)).unwrap();
    assert!((a[0] + 6.0).abs() < 1e-12, "{a}");
    let snap = ContactSnapshot::new(&m, &q, &v, 0.0).unwrap();
    assert!((snap.forces[0] + 12.0).abs() < 1e-12, "{}", snap.forces);
    let blocks = BlockSnapshot::new(&m, &q, &v, 0.0)
        .unwrap()
        .expect("one free block");
    assert!((blocks.blocks[0].force[0] + 12.0).abs() < 1e-12);
    // saved and reloaded with the spring
    let again = Model::from_toml_str(&m.to_toml_string().unwrap(), None).unwrap();
    assert_eq!(again.joints[0].spring, m.joints[0].spring);
}

#[test]
fn bad_springs_are_named_errors() {
    let negative = SPRUNG.replace("stiffness = 8.0", "stiffness = -8.0");
    let e = Model::from_toml_str(&negative, Some("sprung.toml")).unwrap_err();
    assert!(e.to_string().contains("spring"), "{e}");
    let planar = SPRUNG
        .replace("kind = \"prismatic\"", "kind = \"planar\"")
        .replace("[initial]\nq.y = 0.5\n", "");
    let e = Model::from_toml_str(&planar, Some("sprung.toml")).unwrap_err();
    assert!(
        e.to_string()
            .contains("springs apply to revolute and prismatic joints"),
        "{e}"
    );
    let unknown = SPRUNG.replace("reference = -1.0", "rest = -1.0");
    let e = Model::from_toml_str(&unknown, Some("sprung.toml")).unwrap_err();
    assert!(e.to_string().contains("rest"), "{e}");
}
