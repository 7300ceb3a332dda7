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
    // `package_paths = ["."]` finds the feet's mesh in examples/meshes, and the path a user
    // is shown has no `./` in it.
    let foot = mesh_file(&m).display().to_string();
    assert!(
        foot.ends_with("examples/meshes/cube.stl") && !foot.contains("/./"),
        "{foot}"
    );
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

/// A fresh empty directory under the system's temporary folder.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nonsmooth-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn manifest(dir: &std::path::Path, package: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("package.xml"),
        format!(
            "<?xml version=\"1.0\"?>\n<package format=\"3\">\n  <name> {package} </name>\n  \
             <version>0.1.0</version>\n</package>\n"
        ),
    )
    .unwrap();
}

/// The mesh collider's source file of the one mesh in `m`.
fn mesh_file(m: &Model) -> PathBuf {
    m.colliders
        .iter()
        .find_map(|c| match &c.shape {
            Shape::Mesh(mesh) => mesh.source().map(|s| PathBuf::from(&s.file)),
            _ => None,
        })
        .expect("a mesh collider with its file")
}

#[test]
fn packages_are_found_above_the_urdf_as_ros_finds_them() {
    // A catkin/colcon workspace: src/walker_pkg (manifest `walker_description`) holds the
    // URDF and its meshes; src/parts (manifest `walker_parts`) is a sibling package; a
    // decoy folder named `walker_parts` whose manifest names another package.
    let ws = scratch("ros-ws");
    let pkg = ws.join("src/walker_pkg");
    manifest(&pkg, "walker_description");
    manifest(&ws.join("src/parts"), "walker_parts");
    manifest(&ws.join("src/walker_parts"), "something_else");
    let cube = examples().join("meshes/cube.stl");
    std::fs::create_dir_all(pkg.join("meshes")).unwrap();
    std::fs::create_dir_all(pkg.join("urdf")).unwrap();
    std::fs::create_dir_all(ws.join("src/parts/feet")).unwrap();
    std::fs::copy(&cube, pkg.join("meshes/foot.stl")).unwrap();
    std::fs::copy(&cube, ws.join("src/parts/feet/foot.stl")).unwrap();
    std::fs::copy(&cube, ws.join("src/walker_parts/foot.stl")).unwrap();
    let file = pkg.join("urdf/walker.urdf");
    let no_paths = UrdfOptions {
        floating_base: true,
        ..UrdfOptions::default()
    };

    // The URDF's own package, found by its manifest (the folder has another name).
    let src = robot("package://walker_description/meshes/foot.stl");
    let m = Model::from_urdf_str(&src, file.to_str(), &no_paths).expect("own package");
    assert_eq!(
        mesh_file(&m).canonicalize().unwrap(),
        pkg.join("meshes/foot.stl").canonicalize().unwrap()
    );
    // A sibling package, found by its manifest; the decoy folder is not taken.
    let src = robot("package://walker_parts/feet/foot.stl");
    let m = Model::from_urdf_str(&src, file.to_str(), &no_paths).expect("sibling package");
    assert_eq!(
        mesh_file(&m).canonicalize().unwrap(),
        ws.join("src/parts/feet/foot.stl").canonicalize().unwrap()
    );
    // A package that is nowhere: the error names it and the folder searched from.
    let src = robot("package://absent_pkg/foot.stl");
    let e = Model::from_urdf_str(&src, file.to_str(), &no_paths).expect_err("absent");
    let text = e.to_string();
    assert!(
        matches!(e, ModelError::Urdf { .. })
            && text.contains("absent_pkg")
            && text.contains("walker_pkg"),
        "{text}"
    );
    // A package found but without the file: the error names the place looked at.
    let src = robot("package://walker_description/meshes/hand.stl");
    let e = Model::from_urdf_str(&src, file.to_str(), &no_paths).expect_err("no file");
    assert!(
        e.to_string().contains("meshes/hand.stl") && e.to_string().contains("walker_pkg"),
        "{e}"
    );
    // Explicit package paths come first: a second copy of `walker_parts` given by option.
    let other = scratch("ros-other");
    manifest(&other.join("elsewhere"), "walker_parts");
    std::fs::create_dir_all(other.join("elsewhere/feet")).unwrap();
    std::fs::copy(&cube, other.join("elsewhere/feet/foot.stl")).unwrap();
    let src = robot("package://walker_parts/feet/foot.stl");
    let explicit = UrdfOptions {
        package_paths: vec![other.clone()],
        ..no_paths.clone()
    };
    let m = Model::from_urdf_str(&src, file.to_str(), &explicit).expect("explicit path");
    assert_eq!(
        mesh_file(&m).canonicalize().unwrap(),
        other
            .join("elsewhere/feet/foot.stl")
            .canonicalize()
            .unwrap()
    );
    let _ = std::fs::remove_dir_all(&ws);
    let _ = std::fs::remove_dir_all(&other);
}

#[test]
fn a_folder_named_after_the_package_is_found_whatever_its_manifest_says() {
    // example-robot-data's layout: share/example-robot-data/ holds a package.xml naming
    // `example_robot_descriptions` and robots/<robot>/{urdf,meshes}; its URDFs say
    // `package://example-robot-data/robots/…` (one of them `package:///example-robot-data/…`)
    // and carry empty `<texture/>` elements.
    let share = scratch("erd");
    let data = share.join("example-robot-data");
    manifest(&data, "example_robot_descriptions");
    let robot_dir = data.join("robots/walker_description");
    std::fs::create_dir_all(robot_dir.join("meshes")).unwrap();
    std::fs::create_dir_all(robot_dir.join("urdf")).unwrap();
    std::fs::copy(
        examples().join("meshes/cube.stl"),
        robot_dir.join("meshes/foot.stl"),
    )
    .unwrap();
    let file = robot_dir.join("urdf/walker.urdf");
    let options = UrdfOptions {
        floating_base: true,
        ..UrdfOptions::default()
    };
    for prefix in ["package://", "package:///"] {
        let src = robot(&format!(
            "{prefix}example-robot-data/robots/walker_description/meshes/foot.stl"
        ))
        .replace(
            "<link name=\"leg\">",
            "<link name=\"leg\"><visual><geometry><box size=\"0.1 0.1 0.1\"/></geometry>\
             <material name=\"metal\"><texture /></material></visual>",
        );
        assert!(src.contains("<texture />"));
        let m = Model::from_urdf_str(&src, file.to_str(), &options).expect(prefix);
        assert_eq!(
            mesh_file(&m).canonicalize().unwrap(),
            robot_dir.join("meshes/foot.stl").canonicalize().unwrap()
        );
    }
    let _ = std::fs::remove_dir_all(&share);
}

#[test]
fn the_shipped_quadruped_loads_without_package_options() {
    // examples/urdf/box_quadruped.urdf uses package://meshes/…: the folder examples/meshes,
    // next to the URDF's folder, is found by searching upward.
    let path = examples().join("urdf/box_quadruped.urdf");
    let m = Model::from_file(&path).expect("loads with default options");
    let feet = m
        .colliders
        .iter()
        .filter(|c| matches!(c.shape, Shape::Mesh(_)))
        .count();
    assert_eq!(feet, 4);
    assert_eq!(
        mesh_file(&m).canonicalize().unwrap(),
        examples().join("meshes/cube.stl").canonicalize().unwrap()
    );
}
