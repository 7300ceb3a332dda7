//! Imperfect inertias of published robot files: singular inertias welded by fixed joints merge
//! into their parent (mass properties combined analytically), inertias that violate the
//! triangle inequality are kept with a warning (or balanced on request, as MuJoCo's
//! `balanceinertia`), and only a model whose mass matrix is singular is refused, naming the
//! joint and the link.

use nalgebra::{Matrix3, Vector3};
use nonsmooth_core::dynamics::crba::mass_matrix;
use nonsmooth_core::{Model, ModelError, UrdfOptions};

fn inertial(mass: f64, xyz: [f64; 3], i: [f64; 3]) -> String {
    format!(
        r#"<inertial><origin xyz="{} {} {}" rpy="0 0 0"/><mass value="{mass}"/><inertia ixx="{}" ixy="0" ixz="0" iyy="{}" iyz="0" izz="{}"/></inertial>"#,
        xyz[0], xyz[1], xyz[2], i[0], i[1], i[2]
    )
}

/// trunk (2 kg, floating) ← camera (0.1 kg point mass, fixed at (0.2, 0, 0.05)),
/// ← finger (0.05 kg point mass 0.1 m below a y-axis hinge), ← arm (principal moments
/// (0.01, 0.01, 0.05): no rigid body has them).
fn robot(extra: &str) -> String {
    format!(
        r#"<?xml version="1.0"?>
<robot name="imperfect">
  <link name="trunk">{trunk}</link>
  <link name="camera">{camera}</link>
  <link name="finger">{finger}</link>
  <link name="arm">{arm}</link>
  <joint name="camera_joint" type="fixed">
    <parent link="trunk"/><child link="camera"/>
    <origin xyz="0.2 0 0.05" rpy="0 0 0"/>
  </joint>
  <joint name="finger_joint" type="revolute">
    <parent link="trunk"/><child link="finger"/>
    <origin xyz="0 0.1 0" rpy="0 0 0"/>
    <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/>
  </joint>
  <joint name="arm_joint" type="revolute">
    <parent link="trunk"/><child link="arm"/>
    <origin xyz="0 -0.1 0" rpy="0 0 0"/>
    <axis xyz="1 0 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/>
  </joint>
{extra}
</robot>"#,
        trunk = inertial(2.0, [0.0; 3], [0.02, 0.03, 0.04]),
        camera = inertial(0.1, [0.0; 3], [0.0; 3]),
        finger = inertial(0.05, [0.0, 0.0, -0.1], [0.0; 3]),
        arm = inertial(1.0, [0.0; 3], [0.01, 0.01, 0.05]),
    )
}

fn floating() -> UrdfOptions {
    UrdfOptions {
        floating_base: true,
        ..UrdfOptions::default()
    }
}

fn assert_mass_matrix_pd(m: &Model) {
    let mut q = m.initial_state.q.clone();
    let m0 = mass_matrix(m, &q);
    assert!(m0.clone().cholesky().is_some(), "M(q0) not PD");
    // Away from q0 as well: every hinge at 0.7 rad.
    for j in &m.joints {
        if j.kind == nonsmooth_core::JointKind::Revolute {
            q[j.q_index] = 0.7;
        }
    }
    let m1 = mass_matrix(m, &q);
    assert!(m1.cholesky().is_some(), "M(q) not PD");
}

#[test]
fn imperfect_inertias_load_with_warnings() {
    let m = Model::from_urdf_str(&robot(""), Some("imperfect.urdf"), &floating()).expect("loads");
    let names: Vec<&str> = m.bodies.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, vec!["trunk", "finger", "arm"]);

    // The camera's point mass merged into the trunk: m = 2.1, c = 0.1 (0.2, 0, 0.05) / 2.1,
    // I = I_trunk + parallel-axis terms of both masses about c.
    let trunk = &m.bodies[0];
    assert!((trunk.mass - 2.1).abs() < 1e-12);
    let p = Vector3::new(0.2, 0.0, 0.05);
    let c = p * (0.1 / 2.1);
    assert!((trunk.com - c).norm() < 1e-12, "{}", trunk.com);
    let shift = |d: Vector3<f64>, mk: f64| {
        (Matrix3::identity() * d.norm_squared() - d * d.transpose()) * mk
    };
    let expected = Matrix3::from_diagonal(&Vector3::new(0.02, 0.03, 0.04))
        + shift(-c, 2.0)
        + shift(p - c, 0.1);
    assert!(
        (trunk.inertia - expected).norm() < 1e-12,
        "{}",
        trunk.inertia
    );
    // Analytic Iyy: 0.03 + 2 |c|² + 0.1 |p − c|² (both offsets lie in the x–z plane).
    let iyy = 0.03 + 2.0 * c.norm_squared() + 0.1 * (p - c).norm_squared();
    assert!((trunk.inertia[(1, 1)] - iyy).abs() < 1e-12);

    // The finger (point mass on a hinge) and the arm (triangle inequality violated) are kept
    // as given.
    assert_eq!(m.bodies[1].inertia, Matrix3::zeros());
    assert_eq!(
        m.bodies[2].inertia,
        Matrix3::from_diagonal(&Vector3::new(0.01, 0.01, 0.05))
    );
    let w = m.import_warnings.join("\n");
    for needle in [
        "link `camera`: zero inertia; merged",
        "into `trunk` across fixed joint `camera_joint`",
        "link `finger`: zero inertia; kept as given",
        "link `arm`: principal moments (0.01, 0.01, 0.05) violate the triangle inequality",
        "balance_inertia",
    ] {
        assert!(w.contains(needle), "missing `{needle}` in:\n{w}");
    }
    // The dynamics are computable: the mass matrix is positive definite, at q0 and away.
    assert_mass_matrix_pd(&m);
    // The finger's hinge sees exactly m r² = 0.05 · 0.1².
    let finger = &m.joints[1];
    let m0 = mass_matrix(&m, &m.initial_state.q);
    assert!((m0[(finger.v_index, finger.v_index)] - 0.05 * 0.01).abs() < 1e-12);
    // The arm's hinge (x axis through its centre of mass) sees Ixx = 0.01 as given.
    let arm = &m.joints[2];
    assert!((m0[(arm.v_index, arm.v_index)] - 0.01).abs() < 1e-12);
}

#[test]
fn balance_inertia_repairs_as_mujoco() {
    let options = UrdfOptions {
        balance_inertia: true,
        ..floating()
    };
    let m = Model::from_urdf_str(&robot(""), None, &options).expect("loads");
    let arm = m.bodies.iter().find(|b| b.name == "arm").unwrap();
    // MuJoCo's balanceinertia: all three principal moments set to their mean (0.07 / 3).
    let mean = 0.07 / 3.0;
    assert!((arm.inertia - Matrix3::identity() * mean).norm() < 1e-15);
    // The trunk (a valid inertia, with the camera merged in) is untouched by balancing.
    assert!((m.bodies[0].inertia[(1, 1)] - 0.03).abs() > 1e-6);
    let w = m.import_warnings.join("\n");
    assert!(w.contains("link `arm`") && w.contains("balanced"), "{w}");
    assert!(!w.contains("kept as given (the mass matrix of the model is positive definite) (U"));
}

#[test]
fn degenerate_trunk_with_fixed_legs_is_computable() {
    // A floating trunk with zero rotational inertia: the legs welded to it (each a valid
    // inertia, kept as bodies) make the composite positive definite.
    let src = robot(
        r#"<link name="leg">
    <inertial><origin xyz="0 0 -0.1" rpy="0 0 0"/><mass value="0.3"/><inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/></inertial>
  </link>
  <joint name="leg_mount" type="fixed">
    <parent link="trunk"/><child link="leg"/><origin xyz="0.1 0 0" rpy="0 0 0"/>
  </joint>"#,
    )
    .replacen(
        &inertial(2.0, [0.0; 3], [0.02, 0.03, 0.04]),
        &inertial(2.0, [0.0; 3], [0.0; 3]),
        1,
    );
    let m = Model::from_urdf_str(&src, None, &floating()).expect("loads");
    assert_eq!(m.bodies[0].name, "trunk");
    assert!(m.bodies.iter().any(|b| b.name == "leg"));
    assert_mass_matrix_pd(&m);
}

#[test]
fn a_moving_body_without_inertia_along_its_motion_is_refused() {
    // A wheel: a point mass on its own hinge axis (mass but no inertia about the axis).
    let src = robot(
        r#"<link name="wheel">
    <inertial><mass value="0.1"/><inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial>
  </link>
  <joint name="wheel_joint" type="continuous">
    <parent link="arm"/><child link="wheel"/>
    <origin xyz="0 0 -0.2" rpy="0 0 0"/><axis xyz="0 1 0"/>
  </joint>"#,
    );
    let e = Model::from_urdf_str(&src, Some("imperfect.urdf"), &floating()).expect_err("singular");
    let text = e.to_string();
    assert!(
        matches!(&e, ModelError::SingularMassMatrix { joint, reason, location }
            if joint == "wheel_joint" && reason.contains("body `wheel`") && location.line.is_some()
                && location.field == "joints.wheel_joint"),
        "{e:?}"
    );
    assert!(
        text.contains("imperfect.urdf") && text.contains("wheel_joint"),
        "{text}"
    );
    // A negative principal moment is garbage, not an imperfection: still refused.
    let src = robot("").replace(
        &inertial(1.0, [0.0; 3], [0.01, 0.01, 0.05]),
        &inertial(1.0, [0.0; 3], [0.01, -0.01, 0.05]),
    );
    let e = Model::from_urdf_str(&src, None, &floating()).expect_err("negative");
    assert!(
        matches!(e, ModelError::InertiaNotPositiveDefinite { .. }) && e.to_string().contains("arm"),
        "{e:?}"
    );
}

#[test]
fn a_singular_link_fixed_to_the_world_goes_to_the_world() {
    // Fixed base: the trunk is welded to the world; a zero-inertia sensor on a world-fixed
    // link needs no dynamics.
    let src = robot("").replacen(
        &inertial(2.0, [0.0; 3], [0.02, 0.03, 0.04]),
        &inertial(2.0, [0.0; 3], [0.0; 3]),
        1,
    );
    let m = Model::from_urdf_str(&src, None, &UrdfOptions::default()).expect("loads");
    let names: Vec<&str> = m.bodies.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, vec!["finger", "arm"]);
    assert!(m
        .import_warnings
        .iter()
        .any(|w| w.contains("link `trunk`") && w.contains("welded to the world")));
    assert_eq!(m.nv(), 2);
    assert_mass_matrix_pd(&m);
}

#[test]
fn a_massless_cross_between_two_hinges_is_a_joint_frame() {
    // A universal joint: trunk → cross (massless, revolute about x) → paddle (revolute
    // about y, 1 kg). Pinocchio loads it; so do we, the cross kept as a joint frame.
    let src = robot(
        r#"<link name="cross"/>
  <link name="paddle">
    <inertial><origin xyz="0 0 -0.2" rpy="0 0 0"/><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
  </link>
  <joint name="u1" type="revolute">
    <parent link="trunk"/><child link="cross"/><origin xyz="0 0 -0.1" rpy="0 0 0"/>
    <axis xyz="1 0 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/>
  </joint>
  <joint name="u2" type="revolute">
    <parent link="cross"/><child link="paddle"/>
    <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/>
  </joint>"#,
    );
    let m = Model::from_urdf_str(&src, None, &floating()).expect("loads");
    let cross = m.body_index("cross").expect("the cross stays");
    assert_eq!(m.bodies[cross].mass, 0.0);
    assert_mass_matrix_pd(&m);
    // Each hinge of the universal joint sees the paddle: 0.01 + 1 · 0.2² about x and y.
    let m0 = mass_matrix(&m, &m.initial_state.q);
    for name in ["u1", "u2"] {
        let j = m.joints.iter().find(|j| j.name == name).unwrap();
        assert!((m0[(j.v_index, j.v_index)] - 0.05).abs() < 1e-12, "{name}");
    }
    assert!(!m.import_warnings.iter().any(|w| w.contains("`cross`")));
}

#[test]
fn a_robot_in_a_model_file_can_ask_for_balanced_inertias() {
    let dir = std::env::temp_dir().join(format!("nonsmooth-balance-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("imperfect.urdf"), robot("")).unwrap();
    std::fs::write(
        dir.join("arm.xml"),
        r#"<mujoco><worldbody><body name="b"><joint type="hinge"/><geom size="0.1"/></body></worldbody></mujoco>"#,
    )
    .unwrap();
    let file = |robot: &str| {
        format!(
            "[model]\nname = \"m\"\ndimension = \"spatial\"\n\n[[robots]]\n{robot}\n\
             balance_inertia = true\n"
        )
    };
    let path = dir.join("scene.toml");
    let load = |text: String| {
        std::fs::write(&path, text).unwrap();
        Model::from_file(&path)
    };
    let m = load(file("urdf = \"imperfect.urdf\"\nfloating = true")).expect("loads");
    let arm = m.bodies.iter().find(|b| b.name == "arm").unwrap();
    assert!((arm.inertia - Matrix3::identity() * (0.07 / 3.0)).norm() < 1e-15);
    // An MJCF robot balances by its own <compiler>: the key is an error for it.
    let e = load(file("mjcf = \"arm.xml\"")).expect_err("URDF only");
    assert!(
        e.to_string().contains("balance_inertia") && e.to_string().contains("scene.toml"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_welded_link_with_a_negative_moment_merges_and_noise_is_zero() {
    // An antenna welded to the trunk whose CAD inertia has a negative principal moment
    // (TIAGo's, as published): merged into the trunk, whose sum is a valid inertia.
    let antenna = r#"<link name="antenna"><inertial><origin xyz="0 0 0.1" rpy="0 0 0"/><mass value="0.000001"/>
    <inertia ixx="0.00000002371" ixy="0.00000006119" ixz="0.00000001179" iyy="0.00000002833" iyz="0.00000000774" izz="0.00000003849"/></inertial></link>
  <joint name="antenna_joint" type="fixed"><parent link="trunk"/><child link="antenna"/></joint>"#;
    // A hinge's link whose inertia is rounding noise beside the robot's (iCub's ankle:
    // only ixz = 1.4e-20): a point mass.
    let ankle = r#"<link name="ankle"><inertial><origin xyz="0 0 -0.05" rpy="0 0 0"/><mass value="0.3"/>
    <inertia ixx="0" ixy="0" ixz="1.35525e-20" iyy="0" iyz="0" izz="0"/></inertial></link>
  <joint name="ankle_joint" type="revolute"><parent link="trunk"/><child link="ankle"/>
    <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>"#;
    let m = Model::from_urdf_str(&robot(&format!("{antenna}\n{ankle}")), None, &floating())
        .expect("loads");
    let warned = |needle: &str, link: &str| {
        m.import_warnings
            .iter()
            .any(|w| w.contains(needle) && w.contains(&format!("`{link}`")))
    };
    assert!(m.body_index("antenna").is_none(), "merged");
    assert!(
        warned("one is negative; merged", "antenna"),
        "{:?}",
        m.import_warnings
    );
    assert!(warned("taken as zero", "ankle"), "{:?}", m.import_warnings);
    let ankle = &m.bodies[m.body_index("ankle").unwrap()];
    assert_eq!(ankle.inertia, Matrix3::zeros());
    assert_mass_matrix_pd(&m);
    // The same antenna on a moving joint is refused: no rigid body has that inertia.
    let moving = antenna.replace(r#"type="fixed">"#, r#"type="revolute"><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/>"#);
    let e = Model::from_urdf_str(&robot(&moving), None, &floating()).expect_err("refused");
    assert!(e.to_string().contains("antenna"), "{e}");
}
