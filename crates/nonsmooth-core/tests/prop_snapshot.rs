//! Property tests: random valid articulated models (revolute, prismatic, fixed and floating
//! joints, spheres and boxes over a ground plane) and random states give a snapshot whose mass
//! matrix is symmetric positive definite and whose every entry is finite; contact normals and
//! tangents are orthonormal; non-finite states are rejected with a typed error naming the field.

use nalgebra::{
    DVector, Isometry3, Matrix3, Rotation3, Translation3, UnitQuaternion, Vector3, Vector4,
};
use nonsmooth_core::{
    Body, Collider, ContactSnapshot, Dimension, Joint, JointKind, Model, ModelError, Shape,
};
use proptest::prelude::*;

/// One body of a random tree: (parent choice, joint kind, mass, principal moments, inertia
/// rotation, joint offset, axis, shape choice).
type BodySpec = (u8, u8, f64, [f64; 3], [f64; 3], [f64; 3], [f64; 3], bool);

fn body_spec() -> impl Strategy<Value = BodySpec> {
    (
        any::<u8>(),
        0u8..4,
        0.05..20.0f64,
        [0.5..1.0f64, 0.5..1.0, 0.5..1.0],
        [-3.0..3.0f64, -3.0..3.0, -3.0..3.0],
        [-0.5..0.5f64, -0.5..0.5, -0.5..0.5],
        [-1.0..1.0f64, -1.0..1.0, -1.0..1.0],
        any::<bool>(),
    )
}

fn build_model(specs: &[BodySpec]) -> Model {
    let mut model = Model::new("random", Dimension::Spatial);
    model.colliders.push(Collider {
        name: "ground".into(),
        body: None,
        pose: Isometry3::identity(),
        shape: Shape::Plane {
            normal: Vector3::z_axis(),
        },
        material: 0,
        filter: Default::default(),
    });
    for (i, (parent, kind, mass, moments, rot, offset, axis, sphere)) in specs.iter().enumerate() {
        let parent = if i == 0 || parent % 3 == 0 {
            None
        } else {
            Some(*parent as usize % i)
        };
        let kind = match kind {
            0 => JointKind::Revolute,
            1 => JointKind::Prismatic,
            2 => JointKind::Fixed,
            _ => JointKind::Floating,
        };
        let r = Rotation3::from_scaled_axis(Vector3::from(*rot));
        let inertia =
            r.matrix() * Matrix3::from_diagonal(&Vector3::from(*moments)) * r.matrix().transpose();
        let axis = Vector3::from(*axis) + Vector3::new(0.0, 0.0, 1e-3);
        let joint = Joint::new(format!("j{i}"), kind, parent)
            .with_placement(Isometry3::from_parts(
                Translation3::from(Vector3::from(*offset)),
                UnitQuaternion::identity(),
            ))
            .with_axis(axis);
        let id = model
            .add_body(Body::new(format!("b{i}"), *mass, inertia * *mass), joint)
            .unwrap();
        let shape = if *sphere {
            Shape::Sphere { radius: 0.1 }
        } else {
            Shape::Box {
                half_extents: Vector3::new(0.1, 0.2, 0.05),
            }
        };
        model.colliders.push(Collider {
            name: format!("c{i}"),
            body: Some(id),
            pose: Isometry3::identity(),
            shape,
            material: 0,
            filter: Default::default(),
        });
    }
    model
}

/// A state of the right size: quaternions normalised, floating bases near the ground so that
/// some contacts are active.
fn random_state(model: &Model, raw: &[f64]) -> (DVector<f64>, DVector<f64>) {
    let mut q = DVector::zeros(model.nq());
    let mut k = 0;
    let mut next = || {
        k += 1;
        raw[k % raw.len()]
    };
    for j in &model.joints {
        match j.kind {
            JointKind::Floating => {
                q[j.q_index] = next();
                q[j.q_index + 1] = next();
                q[j.q_index + 2] = 0.1 * next();
                let quat =
                    Vector4::new(next(), next(), next(), next()) + Vector4::new(0.0, 0.0, 0.0, 0.5);
                let quat = quat.normalize();
                for a in 0..4 {
                    q[j.q_index + 3 + a] = quat[a];
                }
            }
            JointKind::Fixed => {}
            _ => {
                for a in 0..j.kind.nq() {
                    q[j.q_index + a] = next();
                }
            }
        }
    }
    let v = DVector::from_fn(model.nv(), |i, _| 3.0 * raw[(i * 7 + 3) % raw.len()]);
    (q, v)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, .. ProptestConfig::default() })]

    #[test]
    fn snapshot_of_random_model_is_well_formed(
        specs in proptest::collection::vec(body_spec(), 1..7),
        raw in proptest::collection::vec(-1.5..1.5f64, 16..32),
    ) {
        let model = build_model(&specs);
        prop_assert!(model.validate().is_ok(), "{:?}", model.validate());
        let (q, v) = random_state(&model, &raw);
        let snap = ContactSnapshot::new(&model, &q, &v, 0.0).unwrap();
        let m = &snap.mass_matrix;
        let scale = 1.0 + m.amax();
        prop_assert!((m - m.transpose()).amax() <= 1e-10 * scale, "M not symmetric");
        prop_assert!(m.clone().cholesky().is_some(), "M not positive definite");
        prop_assert!(m.iter().all(|x| x.is_finite()));
        prop_assert!(snap.forces.iter().all(|x| x.is_finite()));
        prop_assert!(snap.velocity_map.iter().all(|x| x.is_finite()));
        for c in &snap.contacts {
            prop_assert!(c.gap.is_finite());
            prop_assert!((c.normal.norm() - 1.0).abs() < 1e-12);
            for t in &c.tangents {
                prop_assert!((t.norm() - 1.0).abs() < 1e-12);
                prop_assert!(t.dot(&c.normal).abs() < 1e-12);
            }
            prop_assert!(c.rows.normal.iter().all(|x| x.is_finite()));
            prop_assert!(c.rows.tangents.iter().all(|x| x.is_finite()));
            prop_assert!(c.normal_row_dot_v.is_finite());
        }
    }

    #[test]
    fn non_finite_state_is_a_typed_error_naming_the_entry(
        specs in proptest::collection::vec(body_spec(), 1..5),
        raw in proptest::collection::vec(-1.5..1.5f64, 16..32),
        which in any::<prop::sample::Index>(),
        bad in prop_oneof![Just(f64::NAN), Just(f64::INFINITY), Just(f64::NEG_INFINITY)],
    ) {
        let model = build_model(&specs);
        let (mut q, mut v) = random_state(&model, &raw);
        let total = q.len() + v.len();
        prop_assume!(total > 0);
        let i = which.index(total);
        let field = if i < q.len() { q[i] = bad; format!("q[{i}]") } else { v[i - q.len()] = bad; format!("v[{}]", i - q.len()) };
        let err = ContactSnapshot::new(&model, &q, &v, 0.0).unwrap_err();
        prop_assert!(matches!(err, ModelError::NonFinite { .. }), "{err}");
        prop_assert!(err.to_string().contains(&field), "{err} should name {field}");
    }
}

/// Regression (fuzz target `snapshot_state`, crash-edb955b6): a finite but astronomically
/// large position made the mass matrix overflow and was returned as a snapshot full of
/// infinities. It is now a typed error naming the state.
#[test]
fn overflowing_state_is_rejected_not_returned() {
    let model =
        Model::from_toml_str(include_str!("../../../examples/sliding_box.toml"), None).unwrap();
    let q = DVector::from_vec(vec![
        -5.900538482655582e-169,
        -1.5177100709670865e82,
        9.532824124368238e-130,
        9.532824124368238e-130,
        -1.2242175395443312e78,
        0.5,
        0.5,
    ]);
    let v = DVector::from_element(6, 0.5);
    match ContactSnapshot::<f64>::new(&model, &q, &v, 0.0) {
        Ok(snap) => assert!(snap.mass_matrix.iter().all(|x| x.is_finite())),
        Err(e) => {
            assert!(matches!(e, ModelError::InvalidValue { .. }), "{e}");
            assert!(e.to_string().contains("overflows"), "{e}");
        }
    }
}
