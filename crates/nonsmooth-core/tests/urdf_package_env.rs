//! `package://` through the environment: `ROS_PACKAGE_PATH` (ROS 1) and
//! `AMENT_PREFIX_PATH`'s `share` folders (ROS 2). One test in its own binary, as it sets
//! environment variables that the import reads.

use nonsmooth_core::{Model, Shape, UrdfOptions};
use std::path::PathBuf;

fn robot(mesh: &str) -> String {
    format!(
        r#"<robot name="r"><link name="a">
  <inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial>
  <collision><geometry><mesh filename="{mesh}" scale="0.1 0.1 0.1"/></geometry></collision>
</link></robot>"#
    )
}

fn mesh_file(m: &Model) -> PathBuf {
    m.colliders
        .iter()
        .find_map(|c| match &c.shape {
            Shape::Mesh(mesh) => mesh.source().map(|s| PathBuf::from(&s.file)),
            _ => None,
        })
        .expect("a mesh collider")
}

#[test]
fn packages_are_found_through_ros_package_path_and_ament_prefix_path() {
    let root = std::env::temp_dir().join(format!("nonsmooth-env-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let cube = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/meshes/cube.stl"
    ));
    // ROS 1: a source tree with the package in a folder of another name.
    let ros = root.join("catkin/src/desc");
    std::fs::create_dir_all(ros.join("meshes")).unwrap();
    std::fs::write(
        ros.join("package.xml"),
        "<package><name>ros1_desc</name></package>",
    )
    .unwrap();
    std::fs::copy(&cube, ros.join("meshes/part.stl")).unwrap();
    // ROS 2: an install space, <prefix>/share/<name>.
    let share = root.join("install/share/ros2_desc");
    std::fs::create_dir_all(share.join("meshes")).unwrap();
    std::fs::write(
        share.join("package.xml"),
        "<package><name>ros2_desc</name></package>",
    )
    .unwrap();
    std::fs::copy(&cube, share.join("meshes/part.stl")).unwrap();
    // The URDF elsewhere, so that the upward search finds neither.
    let urdf_dir = root.join("elsewhere");
    std::fs::create_dir_all(&urdf_dir).unwrap();
    let file = urdf_dir.join("r.urdf");
    let options = UrdfOptions::default();

    std::env::set_var("ROS_PACKAGE_PATH", root.join("catkin/src"));
    std::env::set_var("AMENT_PREFIX_PATH", root.join("install"));
    let m = Model::from_urdf_str(
        &robot("package://ros1_desc/meshes/part.stl"),
        file.to_str(),
        &options,
    )
    .expect("through ROS_PACKAGE_PATH");
    assert_eq!(mesh_file(&m), ros.join("meshes/part.stl"));
    let m = Model::from_urdf_str(
        &robot("package://ros2_desc/meshes/part.stl"),
        file.to_str(),
        &options,
    )
    .expect("through AMENT_PREFIX_PATH");
    assert_eq!(mesh_file(&m), share.join("meshes/part.stl"));

    // Without the variables neither is found; the error names the package.
    std::env::remove_var("ROS_PACKAGE_PATH");
    std::env::remove_var("AMENT_PREFIX_PATH");
    let e = Model::from_urdf_str(
        &robot("package://ros2_desc/meshes/part.stl"),
        file.to_str(),
        &options,
    )
    .expect_err("no environment");
    assert!(
        e.to_string().contains("package `ros2_desc` not found"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&root);
}
