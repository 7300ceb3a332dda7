//! Every example model loads, validates and has the expected sizes; TOML round trips.

use std::path::PathBuf;

use nonsmooth_core::{JointKind, Model, Shape, UrdfOptions};

fn example(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name)
}

fn load(name: &str) -> Model {
    match Model::from_file(example(name)) {
        Ok(m) => m,
        Err(e) => panic!("{name}: {e}"),
    }
}

fn assert_round_trip(model: &Model) {
    let text = model.to_toml_string().expect("serializes");
    let back = Model::from_toml_str(&text, Some("roundtrip.toml"))
        .unwrap_or_else(|e| panic!("reload failed: {e}\n{text}"));
    assert_eq!(&back, model, "round trip changed the model:\n{text}");
}

#[test]
fn bouncing_sphere_loads() {
    let m = load("bouncing_sphere.toml");
    assert_eq!((m.nq(), m.nv(), m.nu(), m.bodies.len()), (7, 6, 0, 1));
    assert_eq!(m.joints[0].kind, JointKind::Floating);
    assert_eq!(m.joints[0].name, "ball");
    assert_eq!(m.initial_state.q[2], 1.0);
    // Solid sphere: I = 2/5 m r² = 0.004.
    assert!((m.bodies[0].inertia[(0, 0)] - 0.004).abs() < 1e-15);
    assert_eq!(m.colliders.len(), 2);
    assert_eq!(m.colliders[1].shape, Shape::Sphere { radius: 0.1 });
    let mat = m.pair_material(0, 1);
    // Two identical compliant sides in series: K/2, B/2; μ and e unchanged.
    assert!((mat.stiffness.unwrap() - 5e4).abs() < 1e-9);
    assert!((mat.damping.unwrap() - 25.0).abs() < 1e-12);
    assert!((mat.friction - 0.5).abs() < 1e-15);
    assert_eq!(mat.restitution, Some(0.8));
    assert_round_trip(&m);
}

#[test]
fn pendulum_loads() {
    let m = load("pendulum.toml");
    assert_eq!((m.nq(), m.nv(), m.nu(), m.bodies.len()), (1, 1, 1, 1));
    assert_eq!(m.initial_state.q[0], 0.5);
    assert_eq!(m.actuation_matrix()[(0, 0)], 1.0);
    assert_round_trip(&m);
}

#[test]
fn sliding_box_loads() {
    let m = load("sliding_box.toml");
    assert_eq!((m.nq(), m.nv(), m.nu(), m.bodies.len()), (7, 6, 0, 1));
    // Solid box, half extents (0.2, 0.15, 0.1), m = 2: Ixx = m/3 (hy² + hz²).
    let ixx = 2.0 / 3.0 * (0.15f64.powi(2) + 0.1f64.powi(2));
    assert!((m.bodies[0].inertia[(0, 0)] - ixx).abs() < 1e-15);
    assert_eq!(m.initial_state.v[0], 2.0);
    assert!((m.pair_material(0, 1).friction - 0.3).abs() < 1e-15);
    assert_round_trip(&m);
}

#[test]
fn quadruped_loads() {
    let m = load("quadruped.toml");
    assert_eq!((m.nq(), m.nv(), m.nu(), m.bodies.len()), (19, 18, 12, 13));
    // the ground, the four point feet, the trunk's box and a capsule on each thigh and shank
    assert_eq!(m.colliders.len(), 14);
    let ground = m.colliders.iter().position(|c| c.name == "ground").unwrap();
    let trunk = m
        .colliders
        .iter()
        .position(|c| c.name == "trunk_box")
        .unwrap();
    let shank = m
        .colliders
        .iter()
        .position(|c| c.name == "fl_shank_capsule")
        .unwrap();
    let foot = m
        .colliders
        .iter()
        .position(|c| c.name == "fl_foot")
        .unwrap();
    // the trunk and the legs touch the ground, not each other or the feet
    assert!(nonsmooth_core::geometry::may_touch(&m, trunk, ground));
    assert!(nonsmooth_core::geometry::may_touch(&m, shank, ground));
    assert!(!nonsmooth_core::geometry::may_touch(&m, trunk, shank));
    assert!(!nonsmooth_core::geometry::may_touch(&m, foot, shank));
    // Topological order: every parent precedes its child.
    for (i, j) in m.joints.iter().enumerate() {
        assert_eq!(j.child, i);
        assert!(j.parent.is_none_or(|p| p < i));
    }
    let total: f64 = m.bodies.iter().map(|b| b.mass).sum();
    assert!((total - (10.0 + 4.0 * 1.8)).abs() < 1e-12);
    assert_round_trip(&m);
}

#[test]
fn two_link_arm_urdf_imports() {
    let m = load("urdf/two_link_arm.urdf");
    // base fixed to the world, two revolute joints.
    assert_eq!((m.nq(), m.nv(), m.nu(), m.bodies.len()), (2, 2, 2, 3));
    let masses: Vec<f64> = m.bodies.iter().map(|b| b.mass).collect();
    assert_eq!(masses, vec![2.0, 1.0, 0.5]);
    assert_eq!(m.joints[0].kind, JointKind::Fixed);
    assert_eq!(m.joints[1].kind, JointKind::Revolute);
    let shoulder = &m.joints[1];
    let limit = shoulder.limit.expect("revolute limit");
    assert_eq!((limit.lower, limit.upper), (-2.0, 2.0));
    assert_eq!(shoulder.damping, 0.05);
    assert!((shoulder.placement.translation.vector.z - 0.1).abs() < 1e-15);
    assert!(
        m.joints[2].limit.is_none(),
        "continuous joints have no limit"
    );
    assert_eq!(m.actuators[0].effort_limit, Some((-40.0, 40.0)));
    // Upper arm inertia given in a frame rotated by +90° about y: the rod's small moment
    // (0.0001 about the frame's x) ends up about the link's z axis.
    let i = &m.bodies[1].inertia;
    assert!((i[(0, 0)] - 0.0209).abs() < 1e-12);
    assert!((i[(1, 1)] - 0.0209).abs() < 1e-12);
    assert!((i[(2, 2)] - 0.0001).abs() < 1e-12);
    assert!(i[(0, 2)].abs() < 1e-12);
    assert!((m.bodies[1].com.z - 0.25).abs() < 1e-15);
    // Box, cylinder and sphere colliders.
    assert_eq!(m.colliders.len(), 3);
    assert_eq!(
        m.colliders[0].shape,
        Shape::Box {
            half_extents: nalgebra::Vector3::new(0.1, 0.1, 0.05)
        }
    );
    assert_eq!(
        m.colliders[1].shape,
        Shape::Cylinder {
            radius: 0.03,
            half_length: 0.25
        }
    );
    assert_eq!(m.colliders[2].name, "tip");
    // The velocity limits URDF requires are not enforced: said once.
    assert!(m
        .import_warnings
        .iter()
        .any(|w| w.contains("velocity limits")));
    assert_round_trip(&m);
}

#[test]
fn urdf_floating_base_option() {
    let path = example("urdf/two_link_arm.urdf");
    let opts = UrdfOptions {
        floating_base: true,
        actuators: false,
        ..UrdfOptions::default()
    };
    let m = Model::from_urdf_file(&path, &opts).unwrap();
    assert_eq!((m.nq(), m.nv(), m.nu()), (9, 8, 0));
    assert_eq!(m.joints[0].kind, JointKind::Floating);
    assert_eq!(m.initial_state.q[3], 1.0);
}
