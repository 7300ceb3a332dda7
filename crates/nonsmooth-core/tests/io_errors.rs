//! Every kind of bad model input yields the right typed `ModelError`, and its message names
//! the file, the exact line and the field path.

use nonsmooth_core::{Model, ModelError, UrdfOptions};

/// A valid two-body model; tests replace one line (1-based) to break it.
const BASE: &[&str] = &[
    "[model]",                                              // 1
    "name = \"t\"",                                         // 2
    "dimension = \"spatial\"",                              // 3
    "gravity = [0.0, 0.0, -9.81]",                          // 4
    "",                                                     // 5
    "[[bodies]]",                                           // 6
    "name = \"a\"",                                         // 7
    "mass = 1.0",                                           // 8
    "inertia = [0.1, 0.1, 0.1]",                            // 9
    "",                                                     // 10
    "[[bodies]]",                                           // 11
    "name = \"b\"",                                         // 12
    "mass = 2.0",                                           // 13
    "inertia = { solid_sphere = 0.1 }",                     // 14
    "",                                                     // 15
    "[[joints]]",                                           // 16
    "name = \"hinge\"",                                     // 17
    "kind = \"revolute\"",                                  // 18
    "parent = \"a\"",                                       // 19
    "child = \"b\"",                                        // 20
    "placement = { xyz = [0, 0, 1], quat = [1, 0, 0, 0] }", // 21
    "axis = [0, 1, 0]",                                     // 22
    "",                                                     // 23
    "[[materials]]",                                        // 24
    "name = \"rubber\"",                                    // 25
    "friction = 0.5",                                       // 26
    "stiffness = 1e4",                                      // 27
    "",                                                     // 28
    "[[colliders]]",                                        // 29
    "name = \"ground\"",                                    // 30
    "shape = { plane = [0, 0, 1] }",                        // 31
    "material = \"rubber\"",                                // 32
    "",                                                     // 33
    "[[colliders]]",                                        // 34
    "name = \"ball\"",                                      // 35
    "body = \"b\"",                                         // 36
    "shape = { sphere = 0.1 }",                             // 37
    "material = \"rubber\"",                                // 38
    "",                                                     // 39
    "[[actuators]]",                                        // 40
    "name = \"motor\"",                                     // 41
    "joint = \"hinge\"",                                    // 42
    "",                                                     // 43
    "[initial]",                                            // 44
    "q.a = [0, 0, 1, 1, 0, 0, 0]",                          // 45
    "q.hinge = 0.1",                                        // 46
];

const FILE: &str = "bad.toml";

fn with_line(line: usize, text: &str) -> String {
    let mut lines: Vec<&str> = BASE.to_vec();
    lines[line - 1] = text;
    lines.join("\n") + "\n"
}

fn load(src: &str) -> Result<Model, ModelError> {
    Model::from_toml_str(src, Some(FILE))
}

/// Loads `src`, expects an error, and checks file, line and field in its message.
fn expect_err(src: &str, line: usize, field: &str) -> ModelError {
    let err = match load(src) {
        Ok(_) => panic!("expected an error at line {line} (`{field}`)"),
        Err(e) => e,
    };
    let msg = err.to_string();
    let want = format!("{FILE}:{line}: field `{field}`");
    assert!(msg.contains(&want), "message `{msg}` lacks `{want}`");
    err
}

#[test]
fn base_document_is_valid() {
    let m = load(&with_line(5, "")).unwrap();
    assert_eq!((m.nq(), m.nv(), m.nu(), m.bodies.len()), (8, 7, 1, 2));
    assert_eq!(m.initial_state.q[7], 0.1);
    // Solid sphere helper: 2/5 · 2 kg · (0.1 m)².
    assert!((m.bodies[1].inertia[(2, 2)] - 0.008).abs() < 1e-15);
}

#[test]
fn malformed_toml_is_a_syntax_error_with_line() {
    let err = expect_err(&with_line(13, "mass = = 2.0"), 13, "mass");
    assert!(matches!(err, ModelError::Syntax { .. }), "{err:?}");
}

#[test]
fn wrong_type_names_the_field() {
    let err = expect_err(&with_line(13, "mass = \"heavy\""), 13, "bodies[1].mass");
    assert!(matches!(err, ModelError::Syntax { .. }), "{err:?}");
}

#[test]
fn missing_field_names_the_field() {
    let err = expect_err(&with_line(13, ""), 11, "bodies[1].mass");
    assert!(matches!(err, ModelError::Syntax { .. }), "{err:?}");
}

#[test]
fn unknown_field_is_rejected() {
    let err = expect_err(&with_line(13, "mas = 2.0"), 13, "bodies[1].mas");
    assert!(matches!(err, ModelError::Syntax { .. }), "{err:?}");
}

#[test]
fn unknown_parent_body() {
    let err = expect_err(
        &with_line(19, "parent = \"nobody\""),
        19,
        "joints[0].parent",
    );
    assert!(
        matches!(&err, ModelError::UnknownName { kind: "body", name, .. } if name == "nobody"),
        "{err:?}"
    );
}

#[test]
fn unknown_material() {
    let err = expect_err(
        &with_line(38, "material = \"ice\""),
        38,
        "colliders[1].material",
    );
    assert!(
        matches!(
            err,
            ModelError::UnknownName {
                kind: "material",
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn unknown_joint_in_actuator_and_initial_state() {
    let err = expect_err(&with_line(42, "joint = \"knee\""), 42, "actuators[0].joint");
    assert!(
        matches!(err, ModelError::UnknownName { kind: "joint", .. }),
        "{err:?}"
    );
    let err = expect_err(&with_line(46, "q.knee = 0.1"), 46, "initial.q.knee");
    assert!(
        matches!(err, ModelError::UnknownName { kind: "joint", .. }),
        "{err:?}"
    );
}

#[test]
fn duplicate_names() {
    let err = expect_err(&with_line(12, "name = \"a\""), 12, "bodies[1].name");
    assert!(
        matches!(err, ModelError::DuplicateName { kind: "body", .. }),
        "{err:?}"
    );
    let err = expect_err(&with_line(35, "name = \"ground\""), 35, "colliders[1].name");
    assert!(
        matches!(
            err,
            ModelError::DuplicateName {
                kind: "collider",
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn non_positive_mass() {
    let err = expect_err(&with_line(13, "mass = 0.0"), 13, "bodies[1].mass");
    assert!(matches!(err, ModelError::NonPositiveMass { value, .. } if value == 0.0));
    let err = expect_err(&with_line(8, "mass = -1"), 8, "bodies[0].mass");
    assert!(matches!(err, ModelError::NonPositiveMass { value, .. } if value == -1.0));
}

#[test]
fn inertia_not_positive_definite() {
    let err = expect_err(
        &with_line(9, "inertia = [0.1, 0.1, -0.1]"),
        9,
        "bodies[0].inertia",
    );
    assert!(
        matches!(err, ModelError::InertiaNotPositiveDefinite { .. }),
        "{err:?}"
    );
    // Positive definite but no rigid body has principal moments (0.1, 0.1, 0.3): loaded as
    // given (the dynamics are computable), with a warning naming the body and the defect.
    let m = load(&with_line(9, "inertia = [0.1, 0.1, 0.3]")).expect("kept with a warning");
    assert_eq!(m.bodies[0].inertia[(2, 2)], 0.3);
    assert!(
        m.import_warnings
            .iter()
            .any(|w| w.contains("body `a`") && w.contains("triangle inequality")),
        "{:?}",
        m.import_warnings
    );
    // A point mass on its own hinge axis: the mass matrix is singular, refused naming the
    // joint and the body.
    let err = load(&with_line(14, "inertia = [0, 0, 0]")).expect_err("singular");
    assert!(
        matches!(&err, ModelError::SingularMassMatrix { joint, reason, .. }
            if joint == "hinge" && reason.contains("body `b`")),
        "{err:?}"
    );
    assert!(err.to_string().contains(FILE), "{err}");
    // The free body `a` without rotational inertia is fine: `b` hanging 1 m away turns with
    // it, so the composite inertia is positive definite.
    let m = load(&with_line(9, "inertia = [0, 0, 0]")).expect("composite is PD");
    assert!(m
        .import_warnings
        .iter()
        .any(|w| w.contains("body `a`: zero inertia")));
    // Non-symmetric full matrix.
    let err = expect_err(
        &with_line(9, "inertia = [[0.1, 0.01, 0], [0, 0.1, 0], [0, 0, 0.1]]"),
        9,
        "bodies[0].inertia",
    );
    assert!(
        matches!(err, ModelError::InertiaNotPositiveDefinite { .. }),
        "{err:?}"
    );
    // A full symmetric matrix is accepted.
    load(&with_line(
        9,
        "inertia = [[0.1, 0.01, 0], [0.01, 0.1, 0], [0, 0, 0.1]]",
    ))
    .unwrap();
}

#[test]
fn negative_friction() {
    let err = expect_err(
        &with_line(26, "friction = -0.2"),
        26,
        "materials[0].friction",
    );
    assert!(matches!(err, ModelError::NegativeFriction { value, .. } if value == -0.2));
}

#[test]
fn nan_and_inf_anywhere() {
    let err = expect_err(&with_line(13, "mass = nan"), 13, "bodies[1].mass");
    assert!(matches!(err, ModelError::NonFinite { value, .. } if value.is_nan()));
    let err = expect_err(
        &with_line(4, "gravity = [0.0, 0.0, -inf]"),
        4,
        "model.gravity[2]",
    );
    assert!(matches!(err, ModelError::NonFinite { value, .. } if value == f64::NEG_INFINITY));
    let err = expect_err(&with_line(46, "q.hinge = +inf"), 46, "initial.q.hinge");
    assert!(matches!(err, ModelError::NonFinite { .. }), "{err:?}");
    let err = expect_err(
        &with_line(21, "placement = { xyz = [0, nan, 1] }"),
        21,
        "joints[0].placement.xyz[1]",
    );
    assert!(matches!(err, ModelError::NonFinite { .. }), "{err:?}");
}

#[test]
fn zero_quaternions() {
    let err = expect_err(
        &with_line(21, "placement = { quat = [0, 0, 0, 0] }"),
        21,
        "joints[0].placement.quat",
    );
    assert!(matches!(err, ModelError::UnnormalizableQuaternion { norm, .. } if norm == 0.0));
    let err = expect_err(
        &with_line(45, "q.a = [0, 0, 1, 0, 0, 0, 0]"),
        45,
        "initial.q.a",
    );
    assert!(
        matches!(err, ModelError::UnnormalizableQuaternion { .. }),
        "{err:?}"
    );
    // A non-unit quaternion is normalized.
    let m = load(&with_line(45, "q.a = [0, 0, 1, 2, 0, 0, 0]")).unwrap();
    assert_eq!(m.initial_state.q[3], 1.0);
}

#[test]
fn wrong_initial_state_length() {
    let err = expect_err(
        &with_line(45, "q.a = [0, 0, 1, 1, 0, 0]"),
        45,
        "initial.q.a",
    );
    assert!(
        matches!(
            err,
            ModelError::DimensionMismatch {
                expected: 7,
                got: 6,
                ..
            }
        ),
        "{err:?}"
    );
    let err = expect_err(&with_line(46, "v = [0, 0, 0]"), 46, "initial.v");
    assert!(
        matches!(
            err,
            ModelError::DimensionMismatch {
                expected: 7,
                got: 3,
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn cycles_and_multiple_parents() {
    // b's parent is a; add a joint (lines 24–28) making a the child of b: a cycle.
    let mut src = with_line(46, "");
    src = src.replace(
        "[[materials]]",
        "[[joints]]\nname = \"back\"\nkind = \"fixed\"\nparent = \"b\"\nchild = \"a\"\n\n[[materials]]",
    );
    let err = expect_err(&src, 27, "joints[1].parent");
    assert!(
        matches!(&err, ModelError::Topology { reason, .. } if reason.contains("cycle")),
        "{err:?}"
    );
    // Two joints with child b.
    let src = with_line(5, "").replace(
        "[[materials]]",
        "[[joints]]\nname = \"second\"\nkind = \"fixed\"\nparent = \"world\"\nchild = \"b\"\n\n[[materials]]",
    );
    let err = expect_err(&src, 28, "joints[1].child");
    assert!(
        matches!(&err, ModelError::Topology { reason, .. } if reason.contains("more than one parent")),
        "{err:?}"
    );
}

#[test]
fn negative_sizes_and_stiffness() {
    let err = expect_err(
        &with_line(37, "shape = { sphere = -0.1 }"),
        37,
        "colliders[1].shape.sphere",
    );
    assert!(matches!(err, ModelError::InvalidValue { .. }), "{err:?}");
    let err = expect_err(
        &with_line(37, "shape = { box = [0.1, -0.2, 0.1] }"),
        37,
        "colliders[1].shape.box[1]",
    );
    assert!(matches!(err, ModelError::InvalidValue { .. }), "{err:?}");
    let err = expect_err(
        &with_line(27, "stiffness = -1e4"),
        27,
        "materials[0].stiffness",
    );
    assert!(matches!(err, ModelError::InvalidValue { .. }), "{err:?}");
    let err = expect_err(
        &with_line(14, "inertia = { solid_sphere = -0.1 }"),
        14,
        "bodies[1].inertia.solid_sphere",
    );
    assert!(matches!(err, ModelError::InvalidValue { .. }), "{err:?}");
    let err = expect_err(&with_line(22, "axis = [0, 0, 0]"), 22, "joints[0].axis");
    assert!(matches!(err, ModelError::InvalidValue { .. }), "{err:?}");
}

#[test]
fn bodies_are_sorted_topologically() {
    // Child first in the file; the loader puts the parent first.
    let src = r#"
[model]
name = "order"

[[bodies]]
name = "child"
mass = 1.0
inertia = [1, 1, 1]

[[bodies]]
name = "parent"
mass = 2.0
inertia = [1, 1, 1]

[[joints]]
name = "j"
kind = "prismatic"
parent = "parent"
child = "child"
axis = [2, 0, 0]

[initial]
q.j = 0.25
"#;
    let m = load(src).unwrap();
    assert_eq!(m.bodies[0].name, "parent");
    assert_eq!(m.bodies[1].name, "child");
    assert_eq!(m.joints[0].kind, nonsmooth_core::JointKind::Floating);
    assert_eq!(m.joints[1].parent, Some(0));
    assert_eq!((m.joints[1].q_index, m.joints[1].v_index), (7, 6));
    assert_eq!(m.initial_state.q[7], 0.25);
    assert_eq!(m.joints[1].axis.x, 1.0);
    let back = Model::from_toml_str(&m.to_toml_string().unwrap(), None).unwrap();
    assert_eq!(back, m);
}

#[test]
fn validate_programmatic_models() {
    let mut m = load(&with_line(5, "")).unwrap();
    m.validate().unwrap();
    m.bodies[1].mass = -3.0;
    let err = m.validate().unwrap_err();
    assert!(matches!(err, ModelError::NonPositiveMass { .. }), "{err:?}");
    assert!(err.to_string().contains("field `bodies[1].mass`"), "{err}");
    assert!(m.to_toml_string().is_err());

    let mut m = load(&with_line(5, "")).unwrap();
    m.materials[0].friction = f64::NAN;
    let err = m.validate().unwrap_err();
    assert!(matches!(err, ModelError::NonFinite { .. }), "{err:?}");
    assert!(err.to_string().contains("materials[0].friction"), "{err}");

    let mut m = load(&with_line(5, "")).unwrap();
    m.initial_state.v = nalgebra::DVector::zeros(3);
    let err = m.validate().unwrap_err();
    assert!(
        matches!(
            err,
            ModelError::DimensionMismatch {
                expected: 7,
                got: 3,
                ..
            }
        ),
        "{err:?}"
    );

    let mut m = load(&with_line(5, "")).unwrap();
    m.joints[1].parent = Some(1);
    let err = m.validate().unwrap_err();
    assert!(matches!(err, ModelError::Topology { .. }), "{err:?}");
}

#[test]
fn urdf_errors_name_the_file() {
    let err = Model::from_urdf_str(
        "<robot name=\"x\"><link",
        Some("arm.urdf"),
        &UrdfOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(err, ModelError::Urdf { .. }), "{err:?}");
    assert!(err.to_string().contains("arm.urdf"), "{err}");

    let src = r#"<robot name="r">
  <link name="a">
    <inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>
  </link>
  <link name="b">
    <inertial><mass value="-1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>
  </link>
  <joint name="j" type="revolute">
    <parent link="a"/><child link="c"/>
    <axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/>
  </joint>
</robot>"#;
    let err = Model::from_urdf_str(src, Some("r.urdf"), &UrdfOptions::default()).unwrap_err();
    assert!(
        matches!(err, ModelError::UnknownName { kind: "link", .. }),
        "{err:?}"
    );
    assert!(
        err.to_string().contains("r.urdf:8: field `joints.j.child`"),
        "{err}"
    );
    let src = src.replace("link=\"c\"", "link=\"b\"");
    let err = Model::from_urdf_str(&src, Some("r.urdf"), &UrdfOptions::default()).unwrap_err();
    assert!(matches!(err, ModelError::NonPositiveMass { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains("r.urdf:5: field `links.b.inertial.mass`"),
        "{err}"
    );
}

#[test]
fn file_errors() {
    let err = Model::from_file("/nonexistent/model.toml").unwrap_err();
    assert!(matches!(err, ModelError::Io { .. }), "{err:?}");
    assert!(err.to_string().contains("/nonexistent/model.toml"));
}

/// Replacing any line by any of these variants never panics, and every error names the file.
#[test]
fn no_panics_on_line_mutations() {
    let variants = [
        "",
        "x = 1",
        "mass = 1e400",
        "[[bodies]]",
        "[[joints]]",
        "name = \"world\"",
        "name = \"hinge\"",
        "q.a = []",
        "q.hinge = [1, 2]",
        "kind = \"planar\"",
        "kind = \"floating\"",
        "inertia = { solid_box = [0, 0, 0] }",
        "inertia = { solid_sphere = 1, solid_box = [1, 1, 1] }",
        "shape = { heightmap = { dx = 1, dy = 1, heights = [] } }",
        "shape = { heightmap = { dx = 1, dy = 1, heights = [[0, 1], [2]] } }",
        "parent = \"b\"",
        "child = \"a\"",
        "child = \"world\"",
        "dof = 5",
        "dof = -1",
        "v = []",
        "t = nan",
        "limit = { lower = 1, upper = -1 }",
        "placement = { rpy = [0, 0, 1], quat = [1, 0, 0, 0] }",
        "material = { friction = -1 }",
        "body = \"world\"",
        "effort_limit = [3, -3]",
        "dimension = \"planar\"",
        "dimension = \"cubic\"",
        "gravity = [0, 0]",
    ];
    let mut errors = 0;
    for line in 1..=BASE.len() {
        for v in variants {
            let src = with_line(line, v);
            match std::panic::catch_unwind(|| load(&src)) {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => {
                    errors += 1;
                    assert!(e.to_string().starts_with(FILE), "line {line} `{v}`: {e}");
                }
                Err(_) => panic!("panic for line {line} replaced by `{v}`"),
            }
        }
    }
    assert!(errors > BASE.len(), "only {errors} errors");
}

#[test]
fn simulation_section_round_trips_and_rejects_bad_step_sizes() {
    let good = format!(
        "{}\n\n[simulation]\nstepper = \"penalty-symplectic\"\ndt = 1e-4\nduration = 2.0\n",
        BASE.join("\n")
    );
    let model = load(&good).unwrap();
    assert_eq!(
        model.simulation.stepper.as_deref(),
        Some("penalty-symplectic")
    );
    assert_eq!(model.simulation.dt, Some(1e-4));
    assert_eq!(model.simulation.duration, Some(2.0));
    let text = model.to_toml_string().unwrap();
    assert_eq!(Model::from_toml_str(&text, None).unwrap(), model);
    // Line 47 is blank, 48 the header, 49 the stepper, 50 dt.
    let bad = good.replace("dt = 1e-4", "dt = -1e-4");
    let err = Model::from_toml_str(&bad, Some(FILE)).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("bad.toml:50"), "{msg}");
    assert!(msg.contains("simulation.dt"), "{msg}");
    let unknown = good.replace("dt = 1e-4", "step = 1e-4");
    assert!(Model::from_toml_str(&unknown, Some(FILE)).is_err());
}

#[test]
fn a_newer_format_version_is_named() {
    let src = "[model]\nformat = 4\nname = \"future\"\n";
    let err = Model::from_toml_str(src, Some("future.toml")).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("future.toml:2")
            && text.contains("model.format")
            && text.contains("formats 1 to 3"),
        "{text}"
    );
    // Versions 1 to 3 read; a saved model says which it is.
    for v in [1, 2, 3] {
        let m =
            Model::from_toml_str(&format!("[model]\nformat = {v}\nname = \"m\"\n"), None).unwrap();
        assert!(m.to_toml_string().unwrap().contains("format = 3"));
    }
}

/// A model of many free bodies, one without rotational inertia: the mass matrix is checked
/// tree by tree, and the error names that body (not the first one, not another tree's).
#[test]
fn singular_body_among_many_free_bodies() {
    let mut text = String::from("[model]\nname = \"pile\"\ndimension = \"spatial\"\n");
    for i in 0..40 {
        let inertia = if i == 17 {
            "[0, 0, 0]".to_string()
        } else {
            "{ solid_sphere = 0.05 }".to_string()
        };
        text.push_str(&format!(
            "\n[[bodies]]\nname = \"s{i}\"\nmass = 0.1\ninertia = {inertia}\n"
        ));
    }
    let err = load(&text).expect_err("singular");
    assert!(
        matches!(&err, ModelError::SingularMassMatrix { reason, .. } if reason.contains("body `s17`")),
        "{err:?}"
    );
    // The same model with every inertia positive loads.
    let fine = text.replace("inertia = [0, 0, 0]", "inertia = { solid_sphere = 0.05 }");
    assert_eq!(load(&fine).expect("positive definite").bodies.len(), 40);
}
