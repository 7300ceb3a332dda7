//! MJCF (MuJoCo XML) import: the example files, analytic checks (box inertia, degrees vs
//! radians, default classes, joint anchors), typed errors naming file, line and element,
//! and a comparison with MuJoCo's own compilation of the examples
//! (`tests/data/mujoco_reference.json`, written by `scripts/mujoco_check.py`).

use std::path::{Path, PathBuf};

use nalgebra::{DVector, Matrix3, UnitQuaternion, Vector3};
use nonsmooth_core::dynamics::{kinematics, mass_matrix};
use nonsmooth_core::io::MjcfOptions;
use nonsmooth_core::{ActuatorKind, JointKind, Model, ModelError, Shape};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn example(name: &str) -> Model {
    let path = repo().join("examples/mjcf").join(name);
    Model::from_file(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn import(src: &str) -> Result<Model, ModelError> {
    Model::from_mjcf_str(src, Some("test.xml"), &MjcfOptions::default())
}

/// A fresh directory for files of one test.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nonsmooth_mjcf_{}_{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * (1.0 + a.abs().max(b.abs()))
}

#[test]
fn examples_import() {
    let arm = example("arm.xml");
    // The static base is merged into the world; a ball shoulder, two hinges.
    let names: Vec<&str> = arm.bodies.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["upper", "lower", "hand"]);
    assert_eq!((arm.nq(), arm.nv()), (6, 5));
    assert_eq!(arm.joints[0].kind, JointKind::Ball);
    assert_eq!(arm.simulation.dt, Some(0.002));
    assert_eq!(arm.colliders.len(), 7);
    assert!(matches!(arm.colliders[0].shape, Shape::Plane { .. }));
    assert!(arm
        .colliders
        .iter()
        .any(|c| c.name == "pedestal" && c.body.is_none()));
    let block = arm.colliders.iter().find(|c| c.name == "block").unwrap();
    assert!(matches!(&block.shape, Shape::Mesh(m) if m.collides_as_hull()));
    assert_eq!(arm.actuators.len(), 2);
    assert_eq!(arm.actuators[0].kind, ActuatorKind::Motor);
    assert_eq!(arm.actuators[0].gear, 50.0);
    assert_eq!(arm.actuators[0].effort_limit, Some((-0.8, 1.0)));
    assert_eq!(
        arm.actuators[1].kind,
        ActuatorKind::Position { kp: 20.0, kv: 1.5 }
    );
    assert_eq!(arm.actuators[1].effort_limit, Some((-5.0, 5.0)));
    assert!(arm.import_warnings.iter().any(|w| w.contains("base")));

    let quad = example("quadruped.xml");
    assert_eq!(quad.bodies.len(), 9);
    assert_eq!((quad.nq(), quad.nv()), (15, 14));
    assert_eq!(quad.joints[0].kind, JointKind::Floating);
    assert_eq!(quad.actuators.len(), 8);
    let feet = quad
        .colliders
        .iter()
        .filter(|c| matches!(c.shape, Shape::Mesh(_)))
        .count();
    assert_eq!(feet, 4);
    // Free joint: q0 is the body pose (euler zyx in radians: intrinsic z, then y, then x).
    let q = &quad.initial_state.q;
    assert_eq!(&q.as_slice()[..3], &[0.1, -0.2, 0.45]);
    let expect = UnitQuaternion::from_axis_angle(&Vector3::z_axis(), 0.3)
        * UnitQuaternion::from_axis_angle(&Vector3::y_axis(), 0.05)
        * UnitQuaternion::from_axis_angle(&Vector3::x_axis(), -0.02);
    assert!(close(q[3], expect.w, 1e-15) && close(q[6], expect.k, 1e-15));

    let hop = example("planar_hopper.xml");
    let names: Vec<&str> = hop.bodies.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["torso/rootx", "torso/rootz", "torso", "leg"]);
    assert_eq!(hop.bodies[0].mass, 0.0);
    let kinds: Vec<JointKind> = hop.joints.iter().map(|j| j.kind).collect();
    assert_eq!(
        kinds,
        [
            JointKind::Prismatic,
            JointKind::Prismatic,
            JointKind::Revolute,
            JointKind::Prismatic
        ]
    );
    let leg = hop.joint_index("leg_slide").unwrap();
    let lim = hop.joints[leg].limit.unwrap();
    assert_eq!((lim.lower, lim.upper), (-0.1, 0.2));
    assert!(hop
        .import_warnings
        .iter()
        .any(|w| w.contains("<sensor/jointpos> ×2")));
    // The rooty anchor (0, 0, 0.1): the hinge frame sits 0.1 above the slides' frame.
    let rooty = hop.joint_index("rooty").unwrap();
    assert_eq!(
        hop.joints[rooty].placement.translation.vector,
        Vector3::new(0.0, 0.0, 0.1)
    );
}

#[test]
fn imports_save_as_toml_and_reload_equal() {
    let hop = example("planar_hopper.xml");
    let text = hop.to_toml_string().unwrap();
    assert_eq!(Model::from_toml_str(&text, None).unwrap(), hop);
    assert!(example("quadruped.xml").to_toml_string().is_ok());
}

#[test]
fn box_geom_gives_the_solid_box_inertia() {
    let src = r#"<mujoco><worldbody>
        <body name="b" pos="0 0 1"><freejoint/>
          <geom type="box" size="0.1 0.2 0.3" density="500"/>
        </body></worldbody></mujoco>"#;
    let m = import(src).unwrap();
    let (a, b, c) = (0.1, 0.2, 0.3);
    let mass = 500.0 * 8.0 * a * b * c;
    let body = &m.bodies[0];
    assert!(close(body.mass, mass, 1e-14));
    let expect = Matrix3::from_diagonal(&Vector3::new(
        mass / 3.0 * (b * b + c * c),
        mass / 3.0 * (a * a + c * c),
        mass / 3.0 * (a * a + b * b),
    ));
    assert!((body.inertia - expect).norm() < 1e-14);
    assert_eq!(body.com, Vector3::zeros());
}

#[test]
fn geom_masses_combine_with_the_parallel_axis_theorem() {
    // Two spheres of mass 1 at x = ±0.5: COM at 0, Iyy = Izz = 2·(2/5 r² + 0.25), Ixx = 2·2/5 r².
    let src = r#"<mujoco><worldbody><body name="b"><joint type="hinge"/>
        <geom type="sphere" size="0.1" pos="0.5 0 0" mass="1"/>
        <geom type="sphere" size="0.1" pos="-0.5 0 0" mass="1"/>
        </body></worldbody></mujoco>"#;
    let m = import(src).unwrap();
    let i = m.bodies[0].inertia;
    let s = 0.4 * 0.01;
    assert!(close(i[(0, 0)], 2.0 * s, 1e-14));
    assert!(close(i[(1, 1)], 2.0 * (s + 0.25), 1e-14));
    assert!(close(m.bodies[0].mass, 2.0, 1e-15));
}

#[test]
fn degrees_and_radians_give_the_same_model() {
    let body = |angle: &str, euler: [f64; 3], aa: f64, range: f64| {
        format!(
            r#"<mujoco><compiler angle="{angle}"/><worldbody>
            <body name="a" euler="{} {} {}"><joint name="j" range="-{range} {range}"/>
              <geom type="capsule" size="0.05 0.2"/>
              <body name="b" pos="0 0 0.4" axisangle="0 1 1 {aa}"><joint name="k"/>
                <geom type="sphere" size="0.1"/></body></body></worldbody></mujoco>"#,
            euler[0], euler[1], euler[2]
        )
    };
    let deg = import(&body("degree", [30.0, -45.0, 60.0], 90.0, 45.0)).unwrap();
    let d2r = std::f64::consts::PI / 180.0;
    let rad = import(&body(
        "radian",
        [30.0 * d2r, -45.0 * d2r, 60.0 * d2r],
        90.0 * d2r,
        45.0 * d2r,
    ))
    .unwrap();
    for (a, b) in deg.joints.iter().zip(&rad.joints) {
        assert!((a.placement.rotation.angle_to(&b.placement.rotation)).abs() < 1e-14);
        assert_eq!(a.limit.is_some(), b.limit.is_some());
        if let (Some(la), Some(lb)) = (a.limit, b.limit) {
            assert!(close(la.lower, lb.lower, 1e-15) && close(la.upper, lb.upper, 1e-15));
        }
    }
    assert!(
        (deg.joints[1].placement.translation.vector - rad.joints[1].placement.translation.vector)
            .norm()
            < 1e-15
    );
    assert!(close(
        deg.joints[0].limit.unwrap().upper,
        std::f64::consts::FRAC_PI_4,
        1e-15
    ));
}

#[test]
fn default_classes_and_childclass_resolve_like_mujoco() {
    let src = r#"<mujoco>
      <default>
        <joint damping="1" armature="0.1"/>
        <geom friction="0.7" type="sphere" size="0.1"/>
        <default class="a">
          <joint damping="2"/>
          <default class="b">
            <joint armature="0.3" range="-10 10"/>
            <geom friction="0.2"/>
          </default>
        </default>
      </default>
      <worldbody>
        <body name="p"><joint name="j0"/><geom/>
          <body name="q" childclass="b"><joint name="j1"/><joint name="j2" class="a"/><geom name="g1"/>
            <body name="r"><joint name="j3" class="main"/><geom name="g2" class="main"/></body>
          </body>
        </body>
      </worldbody></mujoco>"#;
    let m = import(src).unwrap();
    let j = |n: &str| &m.joints[m.joint_index(n).unwrap()];
    assert_eq!((j("j0").damping, j("j0").armature), (1.0, 0.1));
    assert!(j("j0").limit.is_none());
    // Class b inherits a's damping and overrides armature.
    assert_eq!((j("j1").damping, j("j1").armature), (2.0, 0.3));
    assert!(close(
        j("j1").limit.unwrap().upper,
        10f64.to_radians(),
        1e-15
    ));
    // An explicit class wins over the childclass.
    assert_eq!((j("j2").damping, j("j2").armature), (2.0, 0.1));
    assert!(j("j2").limit.is_none());
    // The childclass reaches grandchildren; class="main" resets to the top level.
    assert_eq!((j("j3").damping, j("j3").armature), (1.0, 0.1));
    let mu = |n: &str| {
        let c = m.colliders.iter().find(|c| c.name == n).unwrap();
        m.materials[c.material].friction
    };
    assert_eq!(mu("g1"), 0.2);
    assert_eq!(mu("g2"), 0.7);
    assert_eq!(
        m.materials[m.colliders[0].material].name,
        "mjcf_friction_0.7"
    );
}

#[test]
fn a_joint_anchor_off_the_body_origin_rotates_the_body_about_it() {
    // Body frame at (0, 0, 1); hinge about y at the anchor (0.5, 0, 0); all mass at (1, 0, 0).
    let src = r#"<mujoco><worldbody>
        <body name="b" pos="0 0 1"><joint name="h" axis="0 1 0" pos="0.5 0 0"/>
          <geom type="sphere" size="0.05" pos="1 0 0"/>
          <body name="c" pos="1 0 0"><joint name="h2" axis="0 1 0"/>
            <geom type="sphere" size="0.05" pos="0 0 -0.5"/></body>
        </body></worldbody></mujoco>"#;
    let m = import(src).unwrap();
    assert!(m
        .import_warnings
        .iter()
        .any(|w| w.contains("joint anchor") && w.contains('b')));
    let mut q = m.initial_state.q.clone();
    q[0] = std::f64::consts::FRAC_PI_2;
    let kin = kinematics(&m, &q, &DVector::zeros(m.nv()));
    // By hand: (0,0,1) + a + R_y(90°)(p − a) = (0,0,1) + (0.5,0,0) + (0,0,−0.5).
    let com = kin.poses[0] * nalgebra::Point3::from(m.bodies[0].com);
    assert!((com.coords - Vector3::new(0.5, 0.0, 0.5)).norm() < 1e-14);
    // The child (origin at the mass point) and its own mass point (0.5 below it, rotated
    // to −x by the hinge).
    let c = kin.poses[1] * nalgebra::Point3::from(m.bodies[1].com);
    assert!((c.coords - Vector3::new(0.0, 0.0, 0.5)).norm() < 1e-14);
}

#[test]
fn includes_are_expanded_relative_to_the_including_file() {
    let dir = scratch("include");
    std::fs::create_dir_all(dir.join("parts")).unwrap();
    std::fs::write(
        dir.join("parts/defaults.xml"),
        r#"<mujoco><default><joint damping="3"/></default></mujoco>"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("parts/body.xml"),
        r#"<mujoco><include file="defaults.xml"/></mujoco>"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("main.xml"),
        r#"<mujoco><include file="parts/body.xml"/><worldbody>
        <body name="b"><joint name="j"/><geom size="0.1"/></body></worldbody></mujoco>"#,
    )
    .unwrap();
    let m = Model::from_file(dir.join("main.xml")).unwrap();
    assert_eq!(m.joints[0].damping, 3.0);
}

/// The error's location: (file ends with, line, field contains).
fn assert_location(err: &ModelError, file_end: &str, line: usize, field: &str) {
    let text = err.to_string();
    let loc = match err {
        ModelError::Mjcf { location, .. }
        | ModelError::Syntax { location, .. }
        | ModelError::UnknownName { location, .. }
        | ModelError::NonFinite { location, .. } => location,
        other => panic!("unexpected error kind: {other}"),
    };
    assert!(
        loc.file.as_deref().is_some_and(|f| f.ends_with(file_end)),
        "{text}"
    );
    assert_eq!(loc.line, Some(line), "{text}");
    assert!(loc.field.contains(field), "{text}");
}

#[test]
fn bad_input_gives_typed_errors_with_file_line_and_element() {
    // Unknown geom type.
    let err = import(
        "<mujoco><worldbody>\n<body name=\"b\"><joint/>\n<geom name=\"g\" type=\"torus\" size=\"1\"/>\n</body></worldbody></mujoco>",
    )
    .unwrap_err();
    assert!(matches!(err, ModelError::Mjcf { .. }));
    assert_location(&err, "test.xml", 3, "geom[g].type");
    assert!(err.to_string().contains("torus"));

    // Non-numeric attribute.
    let err = import(
        "<mujoco><worldbody>\n<body name=\"b\" pos=\"0 zero 1\"><joint/><geom size=\"1\"/>\n</body></worldbody></mujoco>",
    )
    .unwrap_err();
    assert_location(&err, "test.xml", 2, "body[b].pos");
    assert!(err.to_string().contains("zero"));

    // A free joint on a non-root body.
    let err = import(
        "<mujoco><worldbody>\n<body name=\"a\"><joint/><geom size=\"1\"/>\n<body name=\"b\">\n<freejoint name=\"f\"/><geom size=\"1\"/>\n</body></body></worldbody></mujoco>",
    )
    .unwrap_err();
    assert_location(&err, "test.xml", 4, "freejoint[f]");
    assert!(err.to_string().contains("top-level"));

    // Malformed XML.
    let err = import("<mujoco><worldbody>\n<body>\n</worldbody></mujoco>").unwrap_err();
    assert!(matches!(err, ModelError::Syntax { .. }), "{err}");
    assert_eq!(
        match &err {
            ModelError::Syntax { location, .. } => location.line,
            _ => None,
        },
        Some(3)
    );

    // Unknown actuator joint.
    let err = import(
        "<mujoco><worldbody><body><joint name=\"j\"/><geom size=\"1\"/></body></worldbody>\n<actuator>\n<motor name=\"m\" joint=\"nope\"/></actuator></mujoco>",
    )
    .unwrap_err();
    assert!(matches!(err, ModelError::UnknownName { .. }));
    assert_location(&err, "test.xml", 3, "motor[m].joint");
}

#[test]
fn mesh_problems_and_include_cycles_are_typed_errors() {
    let dir = scratch("mesh");
    let write = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    // Missing mesh file.
    let p = write(
        "missing.xml",
        "<mujoco>\n<asset>\n<mesh name=\"m\" file=\"nowhere.stl\"/>\n</asset></mujoco>",
    );
    let err = Model::from_file(&p).unwrap_err();
    assert!(matches!(err, ModelError::Mjcf { .. }));
    assert_location(&err, "missing.xml", 3, "mesh[m].file");
    assert!(err.to_string().contains("nowhere.stl"));

    // Malformed mesh (an OBJ face naming a vertex that does not exist).
    write("bad.obj", "v 0 0 0\nv 1 0 0\nf 1 2 7\n");
    let p = write(
        "malformed.xml",
        "<mujoco>\n<asset>\n<mesh name=\"m\" file=\"bad.obj\"/>\n</asset></mujoco>",
    );
    let err = Model::from_file(&p).unwrap_err();
    assert_location(&err, "malformed.xml", 3, "mesh[m].file");

    // A mesh read from (ASCII) STL, relative to meshdir, works.
    std::fs::create_dir_all(dir.join("meshes")).unwrap();
    std::fs::copy(
        repo().join("examples/meshes/cube.stl"),
        dir.join("meshes/c.stl"),
    )
    .unwrap();
    let p = write(
        "stl.xml",
        r#"<mujoco><compiler meshdir="meshes"/><asset><mesh file="c.stl" scale="0.1 0.1 0.1"/></asset>
        <worldbody><body><freejoint/><geom type="mesh" mesh="c" density="1000"/></body></worldbody></mujoco>"#,
    );
    let m = Model::from_file(&p).unwrap();
    assert!(close(m.bodies[0].mass, 1.0, 1e-12));
    assert!(close(m.bodies[0].inertia[(0, 0)], 1.0 / 6.0 * 0.01, 1e-12));

    // Include cycle: a → b → a.
    write("a.xml", "<mujoco>\n<include file=\"b.xml\"/></mujoco>");
    write("b.xml", "<mujoco>\n\n<include file=\"a.xml\"/></mujoco>");
    let err = Model::from_file(dir.join("a.xml")).unwrap_err();
    assert_location(&err, "b.xml", 3, "include.file");
    let text = err.to_string();
    assert!(
        text.contains("cycle") && text.contains("a.xml") && text.contains("b.xml"),
        "{text}"
    );
}

#[test]
fn garbage_never_panics() {
    let inputs = [
        "",
        "<mujoco/>",
        "<robot/>",
        "<mujoco><worldbody><body><joint type=\"screw\"/></body></worldbody></mujoco>",
        "<mujoco><worldbody><body><joint/></body></worldbody></mujoco>",
        "<mujoco><worldbody><body><freejoint/><joint/><geom size=\"1\"/></body></worldbody></mujoco>",
        "<mujoco><worldbody><body><joint/><geom type=\"plane\" size=\"1 1 1\"/></body></worldbody></mujoco>",
        "<mujoco><worldbody><body><joint/><geom type=\"box\" size=\"1\"/></body></worldbody></mujoco>",
        "<mujoco><worldbody><body><joint axis=\"0 0 0\"/><geom size=\"1\"/></body></worldbody></mujoco>",
        "<mujoco><worldbody><body quat=\"0 0 0 0\"><joint/><geom size=\"1\"/></body></worldbody></mujoco>",
        "<mujoco><worldbody><body><joint/><geom type=\"mesh\" mesh=\"x\"/></body></worldbody></mujoco>",
        "<mujoco><worldbody><body><joint/><geom size=\"nan\"/></body></worldbody></mujoco>",
        "<mujoco><worldbody><body childclass=\"x\"/></worldbody></mujoco>",
        "<mujoco><include/></mujoco>",
        "<mujoco><worldbody><body><joint range=\"1 0\" limited=\"true\"/><geom size=\"1\"/></body></worldbody></mujoco>",
    ];
    for src in inputs {
        let result = std::panic::catch_unwind(|| import(src));
        assert!(result.is_ok(), "panicked on {src}");
    }
    // The empty model is valid; the others that must fail do.
    assert!(import("<mujoco/>").unwrap().bodies.is_empty());
    assert!(import(inputs[3]).is_err());
    assert!(import(inputs[4]).is_err(), "a massless moving leaf body");
}

/// Our body's world orientation and COM against MuJoCo's `xquat` and `xipos`, our mass
/// matrix at q0 against `mj_fullM` (the joint-anchor shift moves body origins, not
/// orientations or COMs).
#[test]
fn mjcf_matches_mujoco_reference() {
    // `scripts/mujoco_check.sh` regenerates the reference with the installed MuJoCo and
    // points this variable at it; otherwise the committed one (MuJoCo 4.0.0) is read.
    let path = std::env::var_os("NONSMOOTH_MUJOCO_REFERENCE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/mujoco_reference.json")
        });
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let reference: serde_json::Value = serde_json::from_str(&text).unwrap();
    let files = reference["files"].as_object().unwrap();
    assert_eq!(files.len(), 3);
    let num = |v: &serde_json::Value| v.as_f64().unwrap();
    let vec3 = |v: &serde_json::Value| Vector3::new(num(&v[0]), num(&v[1]), num(&v[2]));
    let mut origins_compared = 0;
    for (path, r) in files {
        let model = Model::from_file(repo().join(path)).unwrap();
        let q = model.initial_state.q.clone();
        let nv = r["nv"].as_u64().unwrap() as usize;
        assert_eq!(model.nv(), nv, "{path}");
        assert_eq!(model.nq(), r["nq"].as_u64().unwrap() as usize, "{path}");
        // Joints in MuJoCo's order (ours: the real joints, skipping fixed ones).
        let ours: Vec<&str> = model
            .joints
            .iter()
            .filter(|j| j.kind != JointKind::Fixed)
            .map(|j| j.name.as_str())
            .collect();
        let theirs: Vec<&str> = r["joints"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j.as_str().unwrap())
            .collect();
        assert_eq!(ours, theirs, "{path}");
        let m = mass_matrix(&model, &q);
        let mut max_m: f64 = 0.0;
        for i in 0..nv {
            for j in 0..nv {
                max_m = max_m.max((m[(i, j)] - num(&r["mass_matrix"][i][j])).abs());
            }
        }
        let kin = kinematics(&model, &q, &DVector::zeros(model.nv()));
        let (mut max_com, mut max_rot, mut max_mass): (f64, f64, f64) = (0.0, 0.0, 0.0);
        let mut max_origin: f64 = 0.0;
        let moved: Vec<String> = model
            .import_warnings
            .iter()
            .filter_map(|w| w.strip_prefix("body frames moved to the joint anchor"))
            .flat_map(|w| w.rsplit(": ").next().unwrap_or("").split(", "))
            .map(str::to_string)
            .collect();
        let mut compared = 0;
        for (name, b) in r["bodies"].as_object().unwrap() {
            let Some(i) = model.body_index(name) else {
                // Only bodies merged into the world may be missing.
                assert!(
                    model
                        .import_warnings
                        .iter()
                        .any(|w| w.contains(name.as_str())),
                    "{path}: body {name} missing"
                );
                continue;
            };
            compared += 1;
            let pose = kin.poses[i];
            let com = pose * nalgebra::Point3::from(model.bodies[i].com);
            max_com = max_com.max((com.coords - vec3(&b["xipos"])).norm());
            let xq = &b["xquat"];
            let theirs = UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(
                num(&xq[0]),
                num(&xq[1]),
                num(&xq[2]),
                num(&xq[3]),
            ));
            max_rot = max_rot.max(pose.rotation.angle_to(&theirs));
            max_mass = max_mass.max((model.bodies[i].mass - num(&b["mass"])).abs());
            // The body frame's origin too, where the import kept it at the MJCF body frame
            // (a frame moved to its joint's anchor is compared through orientation and COM,
            // which fix the pose of the rigid body as well).
            if !moved.iter().any(|m| m == name) {
                max_origin = max_origin.max((pose.translation.vector - vec3(&b["xpos"])).norm());
                origins_compared += 1;
            }
        }
        assert!(
            max_origin < 1e-9,
            "{path}: body origin differs by {max_origin:e}"
        );
        println!(
            "{path}: {compared} bodies; max |ΔM| = {max_m:.3e}, max |Δxipos| = {max_com:.3e}, \
             max rotation difference = {max_rot:.3e} rad, max |Δmass| = {max_mass:.3e}"
        );
        assert!(max_m < 1e-9, "{path}: mass matrix differs by {max_m:e}");
        assert!(max_com < 1e-9, "{path}: COM differs by {max_com:e}");
        assert!(max_rot < 1e-9, "{path}: orientation differs by {max_rot:e}");
        assert!(max_mass < 1e-9, "{path}: mass differs by {max_mass:e}");
    }
    assert!(origins_compared > 0, "no body origin compared");
}

/// The same robot written as URDF and as MJCF: a floating trunk, a hip (revolute about y,
/// its link's inertial frame offset and rotated) and a knee (revolute about x).
const SAME_ROBOT_URDF: &str = r#"<robot name="leg">
  <link name="trunk">
    <inertial><origin xyz="0.01 -0.02 0.03" rpy="0 0 0"/><mass value="3.0"/>
      <inertia ixx="0.05" ixy="0.001" ixz="-0.002" iyy="0.04" iyz="0.003" izz="0.03"/></inertial>
  </link>
  <link name="thigh">
    <inertial><origin xyz="0 0 -0.15" rpy="0.3 -0.2 0.5"/><mass value="0.8"/>
      <inertia ixx="0.004" ixy="0" ixz="0" iyy="0.005" iyz="0" izz="0.001"/></inertial>
  </link>
  <link name="shank">
    <inertial><origin xyz="0.02 0 -0.12" rpy="0 0 0"/><mass value="0.4"/>
      <inertia ixx="0.002" ixy="0" ixz="0" iyy="0.002" iyz="0" izz="0.0005"/></inertial>
  </link>
  <joint name="hip" type="revolute">
    <parent link="trunk"/><child link="thigh"/>
    <origin xyz="0.2 0.1 -0.05" rpy="0.0 0.4 -0.3"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="20" velocity="10"/>
  </joint>
  <joint name="knee" type="revolute">
    <parent link="thigh"/><child link="shank"/>
    <origin xyz="0 0 -0.3" rpy="0.2 0 0"/><axis xyz="1 0 0"/>
    <limit lower="-2" upper="0" effort="20" velocity="10"/>
  </joint>
</robot>"#;

const SAME_ROBOT_MJCF: &str = r#"<mujoco model="leg">
  <compiler angle="radian" eulerseq="XYZ"/>
  <worldbody>
    <body name="trunk">
      <freejoint name="trunk"/>
      <inertial pos="0.01 -0.02 0.03" mass="3.0"
                fullinertia="0.05 0.04 0.03 0.001 -0.002 0.003"/>
      <body name="thigh" pos="0.2 0.1 -0.05" euler="0.0 0.4 -0.3">
        <joint name="hip" type="hinge" axis="0 1 0" range="-1 1"/>
        <inertial pos="0 0 -0.15" euler="0.3 -0.2 0.5" mass="0.8" diaginertia="0.004 0.005 0.001"/>
        <body name="shank" pos="0 0 -0.3" euler="0.2 0 0">
          <joint name="knee" type="hinge" axis="1 0 0" range="-2 0"/>
          <inertial pos="0.02 0 -0.12" mass="0.4" diaginertia="0.002 0.002 0.0005"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>"#;

#[test]
fn the_same_robot_as_urdf_and_as_mjcf_has_the_same_mass_matrix() {
    let options = nonsmooth_core::UrdfOptions {
        floating_base: true,
        ..Default::default()
    };
    let urdf = Model::from_urdf_str(SAME_ROBOT_URDF, Some("leg.urdf"), &options).unwrap();
    let mjcf = import(SAME_ROBOT_MJCF).unwrap();
    assert_eq!((urdf.nq(), urdf.nv()), (9, 8));
    assert_eq!((mjcf.nq(), mjcf.nv()), (9, 8));
    // A configuration away from zero: trunk moved and turned, both joints bent.
    let turn = UnitQuaternion::from_euler_angles(0.3, -0.5, 0.8);
    let c = turn.quaternion().coords;
    let q = DVector::from_vec(vec![0.1, -0.2, 0.5, c[3], c[0], c[1], c[2], 0.7, -1.1]);
    let (mu, mm) = (mass_matrix(&urdf, &q), mass_matrix(&mjcf, &q));
    let diff = (&mu - &mm).abs().max();
    assert!(
        diff < 1e-9,
        "URDF vs MJCF mass matrices differ by {diff:e}\n{mu}{mm}"
    );
    // Same limits, both in radians.
    for (a, b) in urdf.joints.iter().zip(&mjcf.joints) {
        assert_eq!(
            a.limit.map(|l| (l.lower, l.upper)),
            b.limit.map(|l| (l.lower, l.upper))
        );
    }
}

#[test]
fn an_mjcf_robot_in_a_model_file_stands_next_to_the_files_own_ground() {
    let dir = scratch("robots");
    let robot = repo().join("examples/mjcf/quadruped.xml");
    let file = |extra: &str| {
        format!(
            "[model]\nname = \"m\"\ndimension = \"spatial\"\n\n[[materials]]\nname = \"rubber\"\n\
             friction = 0.9\n\n[[colliders]]\nname = \"floor\"\nshape = {{ plane = [0.0, 0.0, 1.0] }}\n\
             material = \"rubber\"\n\n[[robots]]\nmjcf = \"{}\"\nprefix = \"a_\"\n\
             pose = {{ xyz = [1.0, 0.0, 0.0] }}\n{extra}",
            robot.display()
        )
    };
    let path = dir.join("model.toml");
    std::fs::write(&path, file("")).unwrap();
    let model = Model::from_file(&path).unwrap();
    let alone = example("quadruped.xml");
    assert_eq!(model.bodies.len(), alone.bodies.len());
    assert!(model.bodies.iter().all(|b| b.name.starts_with("a_")));
    // The torso starts at pose ∘ its MJCF body pose (the free joint's frame is `pose`).
    let torso = |m: &Model| {
        let b = m
            .bodies
            .iter()
            .position(|b| b.name.ends_with("torso"))
            .unwrap();
        let kin = kinematics(m, &m.initial_state.q, &DVector::zeros(m.nv()));
        kin.poses[b].translation.vector
    };
    let shift = torso(&model) - torso(&alone);
    assert!(
        (shift - Vector3::new(1.0, 0.0, 0.0)).norm() < 1e-12,
        "{shift}"
    );
    // The robot keeps its own friction materials next to the file's rubber.
    let torso_box = model
        .colliders
        .iter()
        .find(|c| c.name == "a_body_box")
        .unwrap();
    assert_ne!(model.materials[torso_box.material].name, "rubber");
    assert!(model.materials.iter().any(|m| m.name == "rubber"));
    // Bad combinations are typed errors naming the field.
    for (extra, field) in [
        ("floating = true\n", "robots[0].floating"),
        (
            &format!("urdf = \"{}\"\n", robot.display()) as &str,
            "robots[0]",
        ),
    ] {
        std::fs::write(&path, file(extra)).unwrap();
        let err = Model::from_file(&path).unwrap_err().to_string();
        assert!(err.contains(field), "{err}");
    }
}

#[test]
fn a_frame_places_its_bodies_and_geoms_like_the_same_poses_written_out() {
    let framed = r#"<mujoco><compiler angle="radian"/>
      <default><default class="heavy"><geom density="3000"/></default></default>
      <worldbody>
        <frame pos="0.5 0 0.2" euler="0 0 0.7" childclass="heavy">
          <geom name="post" type="box" size="0.05 0.05 0.2"/>
          <frame pos="0 0.1 0">
            <body name="arm" pos="0.3 0 0">
              <joint name="hinge" type="hinge" axis="0 1 0"/>
              <geom type="capsule" size="0.03" fromto="0 0 0 0.4 0 0"/>
            </body>
          </frame>
        </frame>
      </worldbody></mujoco>"#;
    // The same poses composed by hand: rotation 0.7 about z, then the inner offsets.
    let (c, s) = (0.7f64.cos(), 0.7f64.sin());
    let arm = (0.5 + 0.3 * c - 0.1 * s, 0.3 * s + 0.1 * c, 0.2);
    let flat = format!(
        r#"<mujoco><compiler angle="radian"/><worldbody>
          <geom name="post" type="box" size="0.05 0.05 0.2" pos="0.5 0 0.2" euler="0 0 0.7"
                density="3000"/>
          <body name="arm" pos="{} {} {}" euler="0 0 0.7">
            <joint name="hinge" type="hinge" axis="0 1 0"/>
            <geom type="capsule" size="0.03" fromto="0 0 0 0.4 0 0" density="3000"/>
          </body>
        </worldbody></mujoco>"#,
        arm.0, arm.1, arm.2
    );
    let (a, b) = (import(framed).unwrap(), import(&flat).unwrap());
    assert_eq!(a.bodies.len(), 1);
    assert!((a.bodies[0].mass - b.bodies[0].mass).abs() < 1e-12);
    let q = DVector::from_element(1, 0.4);
    let (ka, kb) = (
        kinematics(&a, &q, &DVector::zeros(1)),
        kinematics(&b, &q, &DVector::zeros(1)),
    );
    assert!((ka.poses[0].translation.vector - kb.poses[0].translation.vector).norm() < 1e-12);
    assert!(ka.poses[0].rotation.angle_to(&kb.poses[0].rotation) < 1e-12);
    let post = |m: &Model| m.colliders.iter().find(|c| c.name == "post").unwrap().pose;
    assert!((post(&a).translation.vector - post(&b).translation.vector).norm() < 1e-12);
    assert!(post(&a).rotation.angle_to(&post(&b).rotation) < 1e-12);
    assert!(
        a.import_warnings.iter().all(|w| !w.contains("frame")),
        "{:?}",
        a.import_warnings
    );
}

/// A hinge's `stiffness` and `springref` (degrees, like every angle) import as a joint spring
/// whose rest is in our coordinate, MuJoCo's minus `ref`; a ball joint's stiffness is dropped
/// with a warning.
#[test]
fn joint_stiffness_imports_as_a_spring_about_springref() {
    let src = r#"<mujoco><worldbody>
        <body name="b"><joint name="h" axis="0 1 0" stiffness="4" springref="30" ref="10"/>
          <geom type="sphere" size="0.05" pos="1 0 0"/>
          <body name="c" pos="1 0 0"><joint name="s" type="ball" stiffness="2"/>
            <geom type="sphere" size="0.05"/></body>
        </body></worldbody></mujoco>"#;
    let m = import(src).unwrap();
    let spring = m.joints[0].spring.expect("hinge spring");
    assert_eq!(spring.stiffness, 4.0);
    assert!((spring.reference - 20f64.to_radians()).abs() < 1e-14);
    assert!(m.joints[1].spring.is_none());
    assert!(
        m.import_warnings.iter().any(|w| w.contains("stiffness")),
        "{:?}",
        m.import_warnings
    );
}
