//! Published robot files (example-robot-data's URDFs as used with Pinocchio, the DeepMind
//! Control Suite's MJCF models) loaded by nonsmooth and compared with Pinocchio and MuJoCo:
//! the joint-space mass matrix M(q) and the bias force h(q, v) (Coriolis, centrifugal and
//! gravity) at the reference configuration and at random states.
//!
//! The reference is written by `scripts/peer_robots_check.py` (run by
//! `scripts/peer_robots_check.sh`, which installs the peers and the robot files from PyPI)
//! and read through `NONSMOOTH_PEER_ROBOTS`; without that variable the test prints a note
//! and passes (the robot files are not in this repository).
//!
//! Coordinates are mapped joint by joint, by name (Pinocchio's free flyer by kind):
//! - nonsmooth's floating joint is q = (x, y, z, qw, qx, qy, qz), v = (ṗ in the world
//!   frame, ω in the body frame) — MuJoCo's free joint exactly;
//! - Pinocchio's free flyer is q = (x, y, z, qx, qy, qz, qw), v = (Rᵀṗ, ω), both in the body
//!   frame, so v_pin = T(q) v with T = diag(Rᵀ, I) on the base and the identity (a
//!   permutation) elsewhere; then M = Tᵀ M_pin T and, as v̇_pin = T v̇ + Ṫ v with
//!   Ṫ v = (−ω × Rᵀṗ, 0), h = Tᵀ (h_pin + M_pin Ṫ v);
//! - Pinocchio's continuous joints are q = (cos θ, sin θ), ours θ;
//! - a MuJoCo hinge or slide with `ref` is at qpos = ref in the file's pose, ours at 0.

use std::collections::HashMap;

use nalgebra::{DMatrix, DVector, Matrix3, UnitQuaternion, Vector3};
use nonsmooth_core::dynamics::{bias_force, mass_matrix};
use nonsmooth_core::io::UrdfOptions;
use nonsmooth_core::{JointKind, Model};
use serde_json::Value;

/// Agreement required in M and h, relative to the largest entry of the peer's M (for h: of
/// h or M, whichever is larger, as h vanishes at rest where gravity does no work).
const TOLERANCE: f64 = 1e-9;

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

fn vector(v: &Value) -> Vec<f64> {
    v.as_array().unwrap().iter().map(num).collect()
}

fn matrix(v: &Value) -> DMatrix<f64> {
    let rows: Vec<Vec<f64>> = v.as_array().unwrap().iter().map(vector).collect();
    let n = rows.len();
    DMatrix::from_fn(n, if n == 0 { 0 } else { rows[0].len() }, |i, j| rows[i][j])
}

/// One joint of the peer's model.
struct PeerJoint {
    name: String,
    kind: String,
    q: usize,
    nq: usize,
    v: usize,
    nv: usize,
    /// MuJoCo's `ref` of a hinge or slide: its coordinate in the file's pose (ours is zero
    /// there).
    reference: f64,
}

/// The largest mismatch of one robot over its states, relative to the scale of M and h.
struct Mismatch {
    mass: f64,
    bias: f64,
    /// One line per state (printed where the robot fails).
    states: Vec<String>,
    /// The number of import warnings (imperfect inertias, skipped COLLADA meshes, …).
    warnings: usize,
}

/// nonsmooth's import of the file of a reference entry (URDF with the entry's floating base).
fn load(robot: &Value) -> Model {
    let path = robot["path"].as_str().unwrap();
    match robot["format"].as_str().unwrap() {
        "urdf" => {
            let options = UrdfOptions {
                floating_base: robot["floating"].as_bool().unwrap(),
                ..UrdfOptions::default()
            };
            Model::from_urdf_file(path, &options)
        }
        _ => Model::from_file(path),
    }
    .unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn compare(robot: &Value) -> Mismatch {
    let name = robot["name"].as_str().unwrap();
    let pinocchio = robot["peer"].as_str().unwrap() == "pinocchio";
    let model = load(robot);
    let peer: Vec<PeerJoint> = robot["joints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| PeerJoint {
            name: j["name"].as_str().unwrap().to_string(),
            kind: j["kind"].as_str().unwrap().to_string(),
            q: j["q"].as_u64().unwrap() as usize,
            nq: j["nq"].as_u64().unwrap() as usize,
            v: j["v"].as_u64().unwrap() as usize,
            nv: j["nv"].as_u64().unwrap() as usize,
            reference: j.get("ref").map_or(0.0, num),
        })
        .collect();
    let by_name: HashMap<&str, &PeerJoint> = peer.iter().map(|j| (j.name.as_str(), j)).collect();
    let peer_free = |j: &PeerJoint| j.kind == "JointModelFreeFlyer" || j.kind == "free";
    let nv = model.nv();
    assert_eq!(
        nv,
        robot["nv"].as_u64().unwrap() as usize,
        "{name}: number of velocities"
    );
    // Pairs (ours, theirs) of every joint with velocities.
    let mut pairs = Vec::new();
    for joint in model.joints.iter().filter(|j| j.kind.nv() > 0) {
        // By name; a floating base that Pinocchio names `root_joint` (ours: after the root
        // link) by kind, when the peer has only one.
        let theirs = by_name
            .get(joint.name.as_str())
            .copied()
            .or_else(|| {
                let free: Vec<&PeerJoint> = peer.iter().filter(|j| peer_free(j)).collect();
                (joint.kind == JointKind::Floating && free.len() == 1).then(|| free[0])
            })
            .unwrap_or_else(|| panic!("{name}: joint {} has no counterpart", joint.name));
        assert_eq!(theirs.nv, joint.kind.nv(), "{name}: joint {}", joint.name);
        pairs.push((joint, theirs));
    }
    assert_eq!(
        pairs.len(),
        peer.len(),
        "{name}: joints without a counterpart"
    );

    let mut worst = Mismatch {
        mass: 0.0,
        bias: 0.0,
        states: Vec::new(),
        warnings: model.import_warnings.len(),
    };
    for state in robot["states"].as_array().unwrap() {
        let label = state["label"].as_str().unwrap();
        let qp = vector(&state["q"]);
        let vp = DVector::from_vec(vector(&state["v"]));
        let mp = matrix(&state["mass_matrix"]);
        let hp = DVector::from_vec(vector(&state["bias"]));
        let mut q = model.initial_state.q.clone();
        let mut v = DVector::zeros(nv);
        // v_peer = t · v (ours), and the peer's acceleration at v̇ = 0 is ṫ · v.
        let mut t = DMatrix::zeros(nv, nv);
        let mut tdot_v = DVector::zeros(nv);
        for (ours, theirs) in &pairs {
            let (i, k, a) = (ours.q_index, theirs.q, ours.v_index);
            let b = theirs.v;
            match ours.kind {
                JointKind::Floating => {
                    q.rows_mut(i, 3).copy_from_slice(&qp[k..k + 3]);
                    let (w, x, y, z) = if pinocchio {
                        (qp[k + 6], qp[k + 3], qp[k + 4], qp[k + 5])
                    } else {
                        (qp[k + 3], qp[k + 4], qp[k + 5], qp[k + 6])
                    };
                    q.rows_mut(i + 3, 4).copy_from_slice(&[w, x, y, z]);
                    let omega = Vector3::new(vp[b + 3], vp[b + 4], vp[b + 5]);
                    let lin = Vector3::new(vp[b], vp[b + 1], vp[b + 2]);
                    let r: Matrix3<f64> = if pinocchio {
                        UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(w, x, y, z))
                            .to_rotation_matrix()
                            .into_inner()
                    } else {
                        Matrix3::identity()
                    };
                    // Pinocchio: lin = Rᵀ ṗ; MuJoCo: lin = ṗ.
                    v.rows_mut(a, 3).copy_from(&(r * lin));
                    v.rows_mut(a + 3, 3).copy_from(&omega);
                    t.view_mut((b, a), (3, 3)).copy_from(&r.transpose());
                    for d in 3..6 {
                        t[(b + d, a + d)] = 1.0;
                    }
                    if pinocchio {
                        tdot_v.rows_mut(b, 3).copy_from(&(-omega.cross(&lin)));
                    }
                }
                JointKind::Ball => {
                    assert_eq!(theirs.nq, 4, "{name}: joint {}", ours.name);
                    q.rows_mut(i, 4).copy_from_slice(&qp[k..k + 4]);
                    for d in 0..3 {
                        v[a + d] = vp[b + d];
                        t[(b + d, a + d)] = 1.0;
                    }
                }
                JointKind::Revolute | JointKind::Prismatic => {
                    q[i] = match theirs.nq {
                        1 => qp[k] - theirs.reference,
                        // A continuous joint of Pinocchio: (cos θ, sin θ).
                        2 => qp[k + 1].atan2(qp[k]),
                        n => panic!("{name}: joint {} has {n} coordinates", ours.name),
                    };
                    v[a] = vp[b];
                    t[(b, a)] = 1.0;
                }
                kind => panic!("{name}: joint {} of kind {kind:?} not mapped", ours.name),
            }
        }
        // The mapped velocity reproduces the peer's.
        assert!((&t * &v - &vp).amax() < 1e-12, "{name}: velocity map");
        let m = mass_matrix(&model, &q);
        let h = bias_force(&model, &q, &v);
        let m_expected = t.transpose() * &mp * &t;
        let h_expected = t.transpose() * (&hp + &mp * &tdot_v);
        let m_scale = mp.amax();
        let h_scale = hp.amax().max(m_scale);
        let dm = (&m - &m_expected).amax() / m_scale;
        let dh = (&h - &h_expected).amax() / h_scale;
        worst.states.push(format!(
            "{name} ({label}): nv = {nv}, max |ΔM| / {m_scale:.3e} = {dm:.3e}, \
             max |Δh| / {h_scale:.3e} = {dh:.3e}"
        ));
        worst.mass = worst.mass.max(dm);
        worst.bias = worst.bias.max(dh);
    }
    worst
}

#[test]
fn peer_robots_match() {
    let Some(path) = std::env::var_os("NONSMOOTH_PEER_ROBOTS") else {
        println!(
            "peer_robots_match: NONSMOOTH_PEER_ROBOTS not set, nothing compared \
             (bash scripts/peer_robots_check.sh installs the peers and runs this test)"
        );
        return;
    };
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.to_string_lossy()));
    let reference: Value = serde_json::from_str(&text).unwrap();
    println!(
        "Pinocchio {}, MuJoCo {}",
        reference["pinocchio_version"], reference["mujoco_version"]
    );
    let robots = reference["robots"].as_array().unwrap();
    assert!(!robots.is_empty());
    let mut failures = Vec::new();
    let mut summary = Vec::new();
    for robot in robots {
        let name = robot["name"].as_str().unwrap();
        // Every robot is compared, a failure on one (a load error, a joint without a
        // counterpart) reported with the others.
        let Ok(worst) = std::panic::catch_unwind(|| compare(robot)) else {
            summary.push(format!("{name:>20}: not compared (see the panic above)"));
            failures.push(name.to_string());
            continue;
        };
        summary.push(format!(
            "{name:>20} ({}, nv = {:>2}, {:>2} import warnings): max relative |ΔM| = {:.1e}, \
             |Δh| = {:.1e}",
            robot["peer"].as_str().unwrap(),
            robot["nv"],
            worst.warnings,
            worst.mass,
            worst.bias
        ));
        if !(worst.mass <= TOLERANCE && worst.bias <= TOLERANCE) {
            println!("{}", worst.states.join("\n"));
            failures.push(name.to_string());
        }
    }
    println!("{}", summary.join("\n"));
    // A different example-robot-data may lack some files (the script says which), but the
    // comparison covers legged robots, arms and hands, and the control suite.
    let count = |peer: &str| robots.iter().filter(|r| r["peer"] == peer).count();
    assert!(
        count("pinocchio") >= 8 && count("mujoco") >= 3,
        "too few robots compared: {} URDFs, {} MJCF files",
        count("pinocchio"),
        count("mujoco")
    );
    assert!(
        failures.is_empty(),
        "differ from their peer by more than {TOLERANCE:e}: {failures:?}"
    );
}
