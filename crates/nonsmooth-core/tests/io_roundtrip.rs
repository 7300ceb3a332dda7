//! `from_toml_str(to_toml_string(m)) == m` for models using every feature of the format,
//! and the meaning of each feature after loading.

use nalgebra::{DVector, Isometry3, Matrix3, Translation3, UnitQuaternion, Vector3};
use nonsmooth_core::*;

const ALL_FEATURES: &str = r#"
# Root keys must come before the first table header.
exclude = [["tip", "hand"]]

[model]
name = "everything"
dimension = "spatial"
gravity = [0.0, 0.0, -9.81]
contact_margin = 0.002

[[bodies]]
name = "arm"
mass = 1.5
com = [0.1, 0.0, 0.0]
inertia = [[0.02, 0.001, 0.0], [0.001, 0.03, 0.0], [0.0, 0.0, 0.04]]

[[bodies]]
name = "base"
mass = 3.0
inertia = { solid_cylinder = [0.1, 0.3] }

[[bodies]]
name = "slider"
mass = 0.5
inertia = { hollow_sphere = 0.05 }

[[joints]]
name = "shoulder"
kind = "revolute"
parent = "base"
child = "arm"
placement = { xyz = [0.0, 0.0, 0.3], rpy = [0.1, 0.2, 0.3] }
axis = [0, 0, 1]
limit = { lower = -1.0, upper = 1.5, stiffness = 1e4, damping = 10.0 }
damping = 0.05

[[joints]]
name = "base_weld"
kind = "fixed"
parent = "world"
child = "base"
placement = { xyz = [1.0, 2.0, 0.0], quat = [0.0, 0.0, 0.0, 2.0] }

[[joints]]
name = "rail"
kind = "prismatic"
parent = "arm"
child = "slider"
axis = [1, 0, 0]
limit = { lower = 0.0, upper = 0.4 }

[[materials]]
name = "steel"
friction = 0.4
restitution = 0.5

[[materials]]
name = "rubber"
friction = 0.9
stiffness = 2e5
damping = 30.0
law = "hunt-crossley"

[[colliders]]
name = "terrain"
shape = { heightmap = { x0 = -1.0, y0 = -1.0, dx = 0.5, dy = 0.5, heights = [[0.0, 0.1, 0.0], [0.0, 0.2, 0.1]] } }
material = "rubber"

[[colliders]]
name = "floor"
body = "world"
shape = { plane = [0.0, 0.0, 2.0] }
pose = { xyz = [0.0, 0.0, -0.5] }

[[colliders]]
name = "pad"
body = "slider"
shape = { points = [[0.0, 0.0, 0.0], [0.1, 0.0, 0.0]] }
material = "rubber"

[[colliders]]
name = "hand"
body = "arm"
shape = { box = [0.05, 0.02, 0.01] }
pose = { xyz = [0.3, 0.0, 0.0], rpy = [0.0, 0.0, 0.5] }
material = "steel"

[[colliders]]
name = "tip"
body = "arm"
shape = "point"

[[pairs]]
a = "hand"
b = "floor"
material = "rubber"

[[pairs]]
a = "pad"
b = "terrain"
material = { friction = 0.1, stiffness = 1e3 }

[[constraints]]
name = "tether"
kind = "distance"
body_a = "world"
anchor_a = [0.0, 0.0, 2.0]
body_b = "slider"
length = 1.5

[[constraints]]
name = "pin"
kind = "point"
body_a = "arm"
anchor_a = [0.4, 0.0, 0.0]
body_b = "slider"
stiffness = 1e6
damping = 100.0

[[actuators]]
name = "shoulder_motor"
joint = "shoulder"
gear = 50.0
effort_limit = [-2.0, 2.0]

[[actuators]]
name = "rail_motor"
joint = "rail"

[initial]
t = 1.25
q = [0.3, 0.1]
v.rail = -0.2
"#;

#[test]
fn every_feature_loads_with_its_meaning() {
    let m = Model::from_toml_str(ALL_FEATURES, Some("all.toml")).unwrap();
    assert_eq!((m.nq(), m.nv(), m.nu()), (2, 2, 2));
    let names: Vec<&str> = m.bodies.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["base", "arm", "slider"]);
    // solid_cylinder [r, l]: Ixx = m (3r² + l²)/12, Izz = m r²/2.
    let ib = &m.bodies[0].inertia;
    assert!((ib[(0, 0)] - 3.0 * (0.03 + 0.09) / 12.0).abs() < 1e-15);
    assert!((ib[(2, 2)] - 0.015).abs() < 1e-15);
    assert_eq!(m.bodies[1].inertia[(0, 1)], 0.001);
    // Quaternion [0, 0, 0, 2] normalizes to a half turn about z.
    let weld = &m.joints[0];
    assert_eq!(weld.placement.rotation.quaternion().k, 1.0);
    // rpy follows URDF: R = Rz(yaw) Ry(pitch) Rx(roll).
    let (r, p, y) = m.joints[1].placement.rotation.euler_angles();
    assert!((r - 0.1).abs() < 1e-12 && (p - 0.2).abs() < 1e-12 && (y - 0.3).abs() < 1e-12);
    let limit = m.joints[1].limit.unwrap();
    assert_eq!((limit.stiffness, limit.damping), (Some(1e4), Some(10.0)));
    // Colliders naming no material get the default one, appended after the declared ones.
    assert_eq!(m.materials.len(), 3);
    assert_eq!(m.materials[2], ContactMaterial::default_material());
    assert_eq!(m.colliders[1].material, 2);
    assert_eq!(
        m.colliders[1].shape,
        Shape::Plane {
            normal: Vector3::z_axis()
        }
    );
    // Overrides: by name and inline (named after the pair).
    assert_eq!(m.pair_material(3, 1).name, "rubber");
    let inline = m.pair_material(0, 2);
    assert_eq!(inline.name, "pad+terrain");
    assert_eq!((inline.friction, inline.stiffness), (0.1, Some(1e3)));
    assert_eq!(m.excluded_pairs, vec![(3, 4)]);
    match &m.constraints[0].kind {
        ConstraintKind::Distance {
            body_a,
            body_b,
            length,
            ..
        } => {
            assert_eq!((*body_a, *body_b, *length), (None, Some(2), 1.5));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(m.actuators[1].gear, 1.0);
    let p_t = m.actuation_matrix();
    assert_eq!((p_t[(0, 0)], p_t[(1, 1)]), (50.0, 1.0));
    assert_eq!(m.initial_state.q.as_slice(), &[0.3, 0.1]);
    assert_eq!(m.initial_state.v.as_slice(), &[0.0, -0.2]);
    assert_eq!(m.initial_state.t, 1.25);
    assert_eq!(m.materials[1].law, ComplianceLaw::HuntCrossley);
}

#[test]
fn every_feature_round_trips() {
    let m = Model::from_toml_str(ALL_FEATURES, Some("all.toml")).unwrap();
    let text = m.to_toml_string().unwrap();
    let back = Model::from_toml_str(&text, Some("again.toml")).unwrap();
    assert_eq!(back, m);
    // And the text is a fixed point.
    assert_eq!(back.to_toml_string().unwrap(), text);
}

#[test]
fn planar_model_defaults() {
    let src = r#"
[model]
name = "disk"
dimension = "planar"

[[bodies]]
name = "disk"
mass = 1.0
inertia = [0.001, 0.001, 0.002]

[[colliders]]
name = "rim"
body = "disk"
shape = { sphere = 0.05 }
"#;
    let m = Model::from_toml_str(src, None).unwrap();
    assert_eq!(m.gravity, Vector3::new(0.0, -9.81, 0.0));
    assert_eq!(m.joints[0].kind, JointKind::Planar);
    assert_eq!((m.nq(), m.nv()), (3, 3));
    let back = Model::from_toml_str(&m.to_toml_string().unwrap(), None).unwrap();
    assert_eq!(back, m);
    // A floating joint is rejected in a planar model.
    let bad = src.replace(
        "[[colliders]]",
        "[[joints]]\nname = \"j\"\nkind = \"floating\"\nparent = \"world\"\nchild = \"disk\"\n\n[[colliders]]",
    );
    let err = Model::from_toml_str(&bad, Some("p.toml")).unwrap_err();
    assert!(matches!(err, ModelError::InvalidValue { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains("p.toml:13: field `joints[0].kind`"),
        "{err}"
    );
}

/// A model built in code with arbitrary rotations survives the round trip bit for bit.
#[test]
fn programmatic_model_round_trips_exactly() {
    let body = |name: &str, mass: f64| Body {
        name: name.into(),
        mass,
        com: Vector3::new(0.01, -0.02, 0.3),
        inertia: Matrix3::new(0.3, 0.01, 0.02, 0.01, 0.4, 0.03, 0.02, 0.03, 0.5),
    };
    let joint = |name: &str, kind, parent, child, angle: f64| Joint {
        name: name.into(),
        kind,
        parent,
        child,
        placement: Isometry3::from_parts(
            Translation3::new(0.1 * angle, 1.0 / 3.0, 0.7),
            UnitQuaternion::from_euler_angles(angle, 2.0 * angle, -angle),
        ),
        axis: nalgebra::Unit::new_normalize(Vector3::new(1.0, 2.0, 3.0)),
        limit: None,
        damping: 0.0,
        spring: None,
        armature: 0.0,
        q_index: 0,
        v_index: 0,
    };
    let mut m = Model {
        name: "code".into(),
        dimension: Dimension::Spatial,
        gravity: Vector3::new(0.0, 0.0, -9.81),
        bodies: vec![body("a", 1.0), body("b", 0.1)],
        joints: vec![
            joint("free", JointKind::Floating, None, 0, 0.7),
            joint("hinge", JointKind::Revolute, Some(0), 1, 1.3),
        ],
        materials: vec![],
        ..Model::new("", Dimension::Spatial)
    };
    m.assign_coordinate_offsets();
    let rot = UnitQuaternion::from_euler_angles(0.3, -0.2, 0.9);
    let qv = rot.quaternion();
    m.initial_state.q = DVector::from_vec(vec![0.1, 0.2, 0.3, qv.w, qv.i, qv.j, qv.k, 0.4]);
    m.initial_state.v = DVector::from_vec(vec![1.0 / 7.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1e-300]);
    m.validate().unwrap();
    let back = Model::from_toml_str(&m.to_toml_string().unwrap(), None).unwrap();
    assert_eq!(back, m);
}
