//! Scenes of the general narrow phase (parry): box towers and pyramids that must stay put,
//! a capsule sliding down an incline at the Coulomb acceleration, and a cube given as a box,
//! an 8-point convex hull and a 12-triangle mesh behaving alike.

use nonsmooth_core::Model;
use nonsmooth_sim::stepper_by_name;

const RIGID: [&str; 3] = ["anitescu-potra", "drumwright", "qp-max-dissipation"];

fn header(name: &str, gravity: [f64; 3], mu: f64) -> String {
    format!(
        r#"[model]
name = "{name}"
dimension = "spatial"
gravity = [{:?}, {:?}, {:?}]
contact_margin = 1e-3

[[materials]]
name = "m"
friction = {mu}

[[colliders]]
name = "ground"
shape = {{ plane = [0.0, 0.0, 1.0] }}
material = "m"
"#,
        gravity[0], gravity[1], gravity[2]
    )
}

/// A free body `name` of 1 kg with the collider `shape` (TOML) and its inertia.
fn body(name: &str, shape: &str, inertia: &str, pose: &str) -> String {
    format!(
        r#"
[[bodies]]
name = "{name}"
mass = 1.0
inertia = {inertia}

[[colliders]]
name = "{name}_shape"
body = "{name}"
shape = {shape}
pose = {pose}
material = "m"
"#
    )
}

const CUBE: &str = "{ box = [0.05, 0.05, 0.05] }";
const CUBE_INERTIA: &str = "{ solid_box = [0.05, 0.05, 0.05] }";
const IDENTITY: &str = "{ xyz = [0.0, 0.0, 0.0] }";

/// Cubes of 0.1 m at the given centres, at rest on the ground plane, μ = 0.5.
fn cubes(name: &str, centres: &[[f64; 3]]) -> Model {
    let mut src = header(name, [0.0, 0.0, -9.81], 0.5);
    let mut initial = String::from("\n[initial]\n");
    for (k, c) in centres.iter().enumerate() {
        src += &body(&format!("c{k}"), CUBE, CUBE_INERTIA, IDENTITY);
        initial += &format!(
            "q.c{k} = [{:?}, {:?}, {:?}, 1.0, 0.0, 0.0, 0.0]\n",
            c[0], c[1], c[2]
        );
    }
    Model::from_toml_str(&(src + &initial), None).expect("model")
}

/// Largest displacement of any body origin from its start over `duration` s at h = 10 ms.
fn largest_drift(model: &Model, stepper: &str, duration: f64) -> f64 {
    let mut st = stepper_by_name(stepper).expect("stepper");
    let start = model.initial_state.clone();
    let mut s = start.clone();
    let mut worst: f64 = 0.0;
    for k in 0..(duration / 0.01).round() as usize {
        s = st
            .step(model, &s, 0.01)
            .unwrap_or_else(|e| panic!("{stepper}, step {k}: {e}"));
        for b in 0..model.bodies.len() {
            let d = (s.q.fixed_rows::<3>(7 * b) - start.q.fixed_rows::<3>(7 * b)).norm();
            worst = worst.max(d);
        }
    }
    worst
}

#[test]
fn box_towers_and_pyramids_stay_put_under_every_rigid_stepper() {
    let tower = cubes(
        "tower",
        &[
            [0.0, 0.0, 0.05],
            [0.001, -0.0005, 0.15],
            [-0.0008, 0.0007, 0.25],
        ],
    );
    let pyramid = cubes(
        "pyramid",
        &[
            [-0.11, 0.0, 0.05],
            [0.0, 0.0, 0.05],
            [0.11, 0.0, 0.05],
            [-0.055, 0.0, 0.15],
            [0.055, 0.0, 0.15],
            [0.0, 0.0, 0.25],
        ],
    );
    for stepper in RIGID {
        for (name, model) in [("tower", &tower), ("pyramid", &pyramid)] {
            let drift = largest_drift(model, stepper, 2.0);
            assert!(drift < 5e-4, "{name} under {stepper}: drift {drift} m");
        }
    }
}

fn capsule_on_incline(mu: f64) -> Model {
    let a = 20f64.to_radians();
    let mut src = header("capsule", [9.81 * a.sin(), 0.0, -9.81 * a.cos()], mu);
    // Axis along the fall line (x): the capsule's z axis turned onto x.
    src += &body(
        "cap",
        "{ capsule = { radius = 0.05, half_length = 0.2 } }",
        "{ solid_cylinder = [0.05, 0.5] }",
        "{ xyz = [0.0, 0.0, 0.0], rpy = [0.0, 1.5707963267948966, 0.0] }",
    );
    src += "\n[initial]\nq.cap = [0.0, 0.0, 0.05, 1.0, 0.0, 0.0, 0.0]\n";
    Model::from_toml_str(&src, None).expect("model")
}

#[test]
fn a_capsule_slides_at_the_coulomb_acceleration_and_holds_above_tan() {
    let a = 20f64.to_radians();
    let expected = 9.81 * (a.sin() - 0.2 * a.cos());
    for stepper in ["anitescu-potra", "drumwright"] {
        for (mu, duration) in [(0.2, 1.0), (0.5, 1.0)] {
            let model = capsule_on_incline(mu);
            let mut st = stepper_by_name(stepper).expect("stepper");
            let mut s = model.initial_state.clone();
            for _ in 0..100 {
                s = st.step(&model, &s, duration / 100.0).expect("steps");
            }
            if mu < a.tan() {
                // The velocity of a constant acceleration is exact under the time stepping.
                let measured = s.v[0] / duration;
                assert!(
                    (measured - expected).abs() < 0.02 * expected,
                    "{stepper}: a = {measured}, expected {expected}"
                );
            } else {
                assert!(s.q[0].abs() < 1e-3, "{stepper}: creep {} m", s.q[0]);
            }
        }
    }
}

/// A 1 m cube centred at z = −0.5 (top face at z = 0) as a world collider `shape`, and a
/// sphere of radius 0.05 resting on it.
fn sphere_on_ground_cube(shape: &str) -> Model {
    let mut src = header("ground_cube", [0.0, 0.0, -9.81], 0.5);
    src += &format!(
        r#"
[[colliders]]
name = "block"
shape = {shape}
pose = {{ xyz = [0.0, 0.0, -0.5] }}
material = "m"
"#
    );
    // No ground plane under the block's top: drop the plane collider.
    let src = src.replace(
        "[[colliders]]\nname = \"ground\"\nshape = { plane = [0.0, 0.0, 1.0] }\nmaterial = \"m\"\n",
        "",
    );
    let src =
        src + &body(
            "ball",
            "{ sphere = 0.05 }",
            "{ solid_sphere = 0.05 }",
            IDENTITY,
        ) + "\n[initial]\nq.ball = [0.1, 0.05, 0.05, 1.0, 0.0, 0.0, 0.0]\n";
    let here = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/scene.toml");
    Model::from_toml_str(&src, Some(here)).expect("model")
}

const CUBE_POINTS: &str = "{ convex = [[-0.5, -0.5, -0.5], [0.5, -0.5, -0.5], [-0.5, 0.5, -0.5], \
     [0.5, 0.5, -0.5], [-0.5, -0.5, 0.5], [0.5, -0.5, 0.5], [-0.5, 0.5, 0.5], [0.5, 0.5, 0.5]] }";

#[test]
fn a_cube_as_box_hull_or_mesh_carries_a_sphere_at_the_same_height() {
    let shapes = [
        "{ box = [0.5, 0.5, 0.5] }",
        CUBE_POINTS,
        "{ mesh = { file = \"meshes/cube.obj\" } }",
        "{ mesh = { file = \"meshes/cube.stl\" } }",
    ];
    for stepper in ["anitescu-potra", "drumwright"] {
        let heights: Vec<f64> = shapes
            .iter()
            .map(|shape| {
                let model = sphere_on_ground_cube(shape);
                let mut st = stepper_by_name(stepper).expect("stepper");
                let mut s = model.initial_state.clone();
                for _ in 0..50 {
                    s = st.step(&model, &s, 0.01).expect("steps");
                }
                s.q[2]
            })
            .collect();
        for (shape, h) in shapes.iter().zip(&heights) {
            assert!(
                (h - heights[0]).abs() < 1e-6 && (h - 0.05).abs() < 1e-3,
                "{stepper}, {shape}: rest height {h} (box: {})",
                heights[0]
            );
        }
    }
}

/// A 0.1 m cube given by `shape` on a 20° incline (tilted gravity), μ = 0.2.
fn cube_on_incline(shape: &str) -> Model {
    let a = 20f64.to_radians();
    let mut src = header("cube_incline", [9.81 * a.sin(), 0.0, -9.81 * a.cos()], 0.2);
    src += &body("cube", shape, CUBE_INERTIA, IDENTITY);
    src += "\n[initial]\nq.cube = [0.0, 0.0, 0.05, 1.0, 0.0, 0.0, 0.0]\n";
    let here = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/scene.toml");
    Model::from_toml_str(&src, Some(here)).expect("model")
}

#[test]
fn a_cube_as_box_hull_or_mesh_slides_alike() {
    let shapes = [
        CUBE.to_string(),
        CUBE_POINTS.replace("0.5", "0.05"),
        "{ mesh = { file = \"meshes/cube.obj\", scale = 0.1 } }".to_string(),
    ];
    for stepper in ["anitescu-potra", "drumwright"] {
        let slides: Vec<f64> = shapes
            .iter()
            .map(|shape| {
                let model = cube_on_incline(shape);
                let mut st = stepper_by_name(stepper).expect("stepper");
                let mut s = model.initial_state.clone();
                for _ in 0..50 {
                    s = st.step(&model, &s, 0.01).expect("steps");
                }
                s.q[0]
            })
            .collect();
        assert!(slides[0] > 0.05, "{stepper}: the box slid {} m", slides[0]);
        for (shape, x) in shapes.iter().zip(&slides) {
            assert!(
                (x - slides[0]).abs() < 0.01 * slides[0],
                "{stepper}, {shape}: slid {x} m (box: {})",
                slides[0]
            );
        }
    }
}

#[test]
fn bad_meshes_are_typed_errors_and_open_meshes_warnings() {
    let here = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/scene.toml");
    let with_mesh = |mesh: &str| {
        let src = header("bad", [0.0, 0.0, -9.81], 0.5)
            + &format!(
                "\n[[colliders]]\nname = \"terrain\"\nshape = {{ mesh = {mesh} }}\nmaterial = \"m\"\n"
            );
        Model::from_toml_str(&src, Some(here))
    };
    let e = with_mesh("{ file = \"meshes/missing.stl\" }").expect_err("missing file");
    assert!(e.to_string().contains("missing.stl"), "{e}");
    let e = with_mesh(
        "{ vertices = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], triangles = [] }",
    )
    .expect_err("empty");
    assert!(
        e.to_string().contains("empty") && e.to_string().contains("colliders[1]"),
        "{e}"
    );
    let e = with_mesh(
        "{ vertices = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], triangles = [[0, 1, 5]] }",
    )
    .expect_err("index out of range");
    assert!(e.to_string().contains("colliders[1].shape.mesh"), "{e}");
    // One triangle: open, a warning (not an error).
    let open = with_mesh(
        "{ vertices = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], triangles = [[0, 1, 2]] }",
    )
    .expect("an open mesh loads");
    let w = open.geometry_warnings();
    assert!(
        w.iter()
            .any(|w| w.contains("terrain") && w.contains("open")),
        "{w:?}"
    );
}

#[test]
fn a_urdf_quadruped_with_mesh_feet_comes_to_rest_standing() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/quadruped_urdf_on_ground.toml"
    );
    let model = Model::from_file(path).expect("loads");
    let mut st = stepper_by_name("anitescu-potra").expect("stepper");
    let mut s = model.initial_state.clone();
    for _ in 0..200 {
        s = st.step(&model, &s, 0.005).expect("steps");
    }
    // The trunk's origin in the world: the floating joint's placement then its coordinates.
    let kin = nonsmooth_core::dynamics::kinematics(&model, &s.q, &s.v);
    let z = kin.poses[0].translation.vector.z;
    assert!((z - 0.27).abs() < 1e-3, "trunk at z = {z}");
    assert!(s.v.amax() < 1e-3, "still moving: {}", s.v.amax());
}

#[test]
fn an_mjcf_quadruped_with_mesh_feet_lands_on_its_ground_without_a_solver_error() {
    // Its servos hold the legs; the coplanar corners of the mesh feet make degenerate LCPs
    // (4 corners per foot, 40–60 rows), which Lemke with ratio ties at round-off solves to
    // the residual check: no step is accepted inexactly.
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/mjcf/quadruped.xml"
    );
    let model = Model::from_file(path).expect("loads");
    let mut st = stepper_by_name("anitescu-potra").expect("stepper");
    let mut s = model.initial_state.clone();
    let mut unconverged = 0;
    for _ in 0..200 {
        s = st.step(&model, &s, 0.005).expect("steps");
        unconverged += usize::from(!st.last_step_converged());
    }
    let torso = model.bodies.iter().position(|b| b.name == "torso").unwrap();
    let kin = nonsmooth_core::dynamics::kinematics(&model, &s.q, &s.v);
    let z = kin.poses[torso].translation.vector.z;
    assert!(z > 0.2 && z < 0.45, "torso at z = {z}");
    assert_eq!(unconverged, 0, "{unconverged} inexact steps");
}

#[test]
fn the_mjcf_quadruped_collapses_under_the_rigid_steppers_without_a_recovery() {
    // Unactuated, the legs fold until the knees reach their stops (speculative limit rows)
    // and the shins and feet press against the torso (closed loops of contacts and hinges:
    // null directions of the Delassus matrix, `anitescu::ROUNDOFF_RELAXATION`), the box
    // feet on four coplanar corners (oscillating friction bounds of drumwright's one
    // program). 3 s covers the steps that needed a fallback before.
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/mjcf/quadruped.xml"
    );
    let model = Model::from_file(path).expect("loads");
    for name in ["anitescu-potra", "drumwright"] {
        let mut st = stepper_by_name(name).expect("stepper");
        let mut s = model.initial_state.clone();
        let (mut fallbacks, mut unconverged) = (0, 0);
        for _ in 0..600 {
            s = st.step(&model, &s, 0.005).expect("steps");
            fallbacks += usize::from(st.last_step_fell_back());
            unconverged += usize::from(!st.last_step_converged());
        }
        assert_eq!((fallbacks, unconverged), (0, 0), "{name}");
    }
}
