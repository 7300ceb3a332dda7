//! URDF import of real robot files' habits: massless frame links merged across fixed joints,
//! mesh collisions resolved through `package://`, COLLADA meshes and mimic joints warned about,
//! and typed errors for an unresolvable package path and a massless moving link.

use nonsmooth_core::{JointKind, Model, ModelError, Shape, UrdfOptions};
use std::path::PathBuf;

fn examples() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples"))
}

fn inertial(mass: f64) -> String {
    format!(
        r#"<inertial><mass value="{mass}"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>"#
    )
}

/// base_footprint (massless) → base_link (2 kg) → leg (revolute, 0.5 kg, a mesh foot) and
/// base_link → camera_link (massless, fixed, a sphere collider) and a follower joint mimicking
/// the hip.
fn robot(foot: &str) -> String {
    format!(
        r#"<?xml version="1.0"?>
<robot name="walker">
  <link name="base_footprint"/>
  <link name="base_link">
    {base}
    <collision><geometry><box size="0.4 0.2 0.1"/></geometry></collision>
    <collision><geometry><mesh filename="package://meshes/shell.dae"/></geometry></collision>
  </link>
  <link name="leg">
    {leg}
    <collision>
      <origin xyz="0 0 -0.3" rpy="0 0 0"/>
      <geometry><mesh filename="{foot}" scale="0.05 0.05 0.05"/></geometry>
    </collision>
  </link>
  <link name="follower">{leg}</link>
  <link name="camera_link">
    <collision><geometry><sphere radius="0.02"/></geometry></collision>
  </link>
  <joint name="footprint_joint" type="fixed">
    <parent link="base_footprint"/><child link="base_link"/>
    <origin xyz="0 0 0.4" rpy="0 0 0"/>
  </joint>
  <joint name="hip" type="revolute">
    <parent link="base_link"/><child link="leg"/>
    <axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="10" velocity="5"/>
  </joint>
  <joint name="follow" type="revolute">
    <parent link="base_link"/><child link="follower"/>
    <axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="10" velocity="5"/>
    <mimic joint="hip" multiplier="1"/>
  </joint>
  <joint name="camera_joint" type="fixed">
    <parent link="base_link"/><child link="camera_link"/>
    <origin xyz="0.2 0 0.05" rpy="0 0 0"/>
  </joint>
</robot>"#,
        base = inertial(2.0),
        leg = inertial(0.5),
    )
}

fn options(floating: bool) -> UrdfOptions {
    UrdfOptions {
        floating_base: floating,
        package_paths: vec![examples()],
        ..UrdfOptions::default()
    }
}

#[test]
fn massless_links_merge_and_meshes_resolve() {
    let src = robot("package://meshes/cube.stl");
    let file = examples().join("walker.urdf");
    let m = Model::from_urdf_str(&src, file.to_str(), &options(true)).expect("imports");
    let names: Vec<&str> = m.bodies.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, vec!["base_link", "leg", "follower"]);
    // base_link took the floating joint of the massless root.
    assert_eq!(m.joints[0].kind, JointKind::Floating);
    // The camera's sphere moved to base_link at the camera joint's origin.
    let camera = m
        .colliders
        .iter()
        .find(|c| c.name == "camera_link_collision0")
        .expect("camera collider");
    assert_eq!(camera.body, Some(0));
    assert!(
        (camera.pose.translation.vector - nalgebra::Vector3::new(0.2, 0.0, 0.05)).norm() < 1e-12
    );
    // The foot mesh (a 0.05-scaled unit cube) collides through its hull on the moving leg.
    let foot = m
        .colliders
        .iter()
        .find(|c| matches!(c.shape, Shape::Mesh(_)))
        .expect("foot mesh");
    let Shape::Mesh(mesh) = &foot.shape else {
        unreachable!()
    };
    assert!(mesh.collides_as_hull());
    assert!(mesh.vertices().iter().all(|v| v.amax() <= 0.025 + 1e-12));
    let w = m.import_warnings.join("\n");
    assert!(
        w.contains("base_footprint") && w.contains("camera_link"),
        "{w}"
    );
    assert!(
        w.contains(".dae") && w.contains("mimic") && w.contains("follow"),
        "{w}"
    );
    // Fixed base: the massless root's colliders would go to the world; base_link is fixed.
    let fixed = Model::from_urdf_str(&src, file.to_str(), &options(false)).expect("imports");
    assert_eq!(fixed.joints[0].kind, JointKind::Fixed);
    assert!((fixed.joints[0].placement.translation.vector.z - 0.4).abs() < 1e-12);
}

#[test]
fn bad_urdf_inputs_are_typed_errors() {
    let file = examples().join("walker.urdf");
    // An unresolvable package.
    let src = robot("package://nowhere/foot.stl");
    let e = Model::from_urdf_str(&src, file.to_str(), &options(true)).expect_err("no package");
    let text = e.to_string();
    assert!(matches!(e, ModelError::Urdf { .. }), "{e:?}");
    assert!(
        text.contains("nowhere/foot.stl") && text.contains("leg"),
        "{text}"
    );
    // A missing mesh file relative to the URDF.
    let src = robot("meshes/missing.obj");
    let e = Model::from_urdf_str(&src, file.to_str(), &options(true)).expect_err("missing");
    assert!(e.to_string().contains("missing.obj"), "{e}");
    // A massless link on a moving joint.
    let src = robot("package://meshes/cube.stl").replace(
        &format!("<link name=\"follower\">{}</link>", inertial(0.5)),
        "<link name=\"follower\"/>",
    );
    let e = Model::from_urdf_str(&src, file.to_str(), &options(true)).expect_err("massless");
    assert!(
        e.to_string().contains("follower") && e.to_string().contains("no mass"),
        "{e}"
    );
}

#[test]
fn a_urdf_robot_sits_in_a_model_file_next_to_its_ground() {
    let path = examples().join("quadruped_urdf_on_ground.toml");
    let m = Model::from_file(&path).expect("loads");
    // The file's ground, then the robot: base_link (floating, at the pose) and four legs.
    assert_eq!(m.colliders[0].name, "ground");
    let names: Vec<&str> = m.bodies.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(
        names,
        vec!["base_link", "fl_leg", "fr_leg", "hl_leg", "hr_leg"]
    );
    assert_eq!(m.joints[0].kind, JointKind::Floating);
    assert!((m.joints[0].placement.translation.vector.z - 0.32).abs() < 1e-12);
    let rubber = m.materials.iter().position(|x| x.name == "rubber").unwrap();
    assert!(m.colliders[1..].iter().all(|c| c.material == rubber));
    assert!(m
        .import_warnings
        .iter()
        .any(|w| w.contains("base_footprint")));
    // Bad input: a robot file that is not there, a material that is not declared.
    let src = std::fs::read_to_string(&path).unwrap();
    let e = Model::from_toml_str(
        &src.replace("box_quadruped.urdf", "nowhere.urdf"),
        path.to_str(),
    )
    .expect_err("missing robot");
    assert!(e.to_string().contains("nowhere.urdf"), "{e}");
    let e = Model::from_toml_str(
        &src.replace(
            "package_paths = [\".\"]\nmaterial = \"rubber\"",
            "package_paths = [\".\"]\nmaterial = \"ice\"",
        ),
        path.to_str(),
    )
    .expect_err("unknown material");
    assert!(
        e.to_string().contains("ice") && e.to_string().contains("robots[0]"),
        "{e}"
    );
}
