//! Locomotion testbed: IK, gait reference, controllers in the closed loop.

use nalgebra::{DVector, Vector3};
use nonsmooth_control::controllers::{
    actuated_positions, controller_by_id, Controller, DelayedId, IdController, JointPid,
};
use nonsmooth_control::locomotion::{
    leg_ik, run_closed_loop, terrain_model, GaitPlanner, LoopOptions, TERRAINS,
};
use nonsmooth_control::Variant;
use nonsmooth_core::Model;

fn quadruped() -> Model {
    Model::from_toml_str(
        include_str!("../../../examples/id_quadruped.toml"),
        Some("id_quadruped.toml"),
    )
    .unwrap()
}

fn idc(name: &str, v: Variant, rigid: bool) -> Box<dyn Controller> {
    let mut c = IdController::new(name, v);
    c.clamp_penetration = !rigid;
    Box::new(c)
}

fn controller(name: &str, rigid: bool) -> Box<dyn Controller> {
    match name {
        "qp_mu" => idc(name, Variant::QpCoulomb, rigid),
        "qp_inf" => idc(name, Variant::QpNoSlip, rigid),
        "lcp_mu" => idc(name, Variant::LcpCoulomb, rigid),
        "lcp_inf" => idc(name, Variant::LcpNoSlip, rigid),
        "pid" => Box::new(JointPid::new(10.0, 0.1, 0.003)),
        "delay1" => Box::new(DelayedId::new(name, 1)),
        _ => Box::new(DelayedId::new(name, 2)),
    }
}

#[test]
fn ik_matches_the_standing_pose_and_round_trips() {
    let gait = GaitPlanner::trot(0.75);
    let leg = gait.legs[0];
    let q = leg_ik(&leg, &Vector3::new(0.0, 0.0, -gait.height)).unwrap();
    assert!(q[0].abs() < 1e-12 && (q[1] - 0.6).abs() < 1e-12 && (q[2] + 1.2).abs() < 1e-12);
    // Forward kinematics of the IK solution reproduces an off-centre target.
    let target = Vector3::new(0.03, 0.01, -0.15);
    let [r, p, k] = leg_ik(&leg, &target).unwrap();
    let planar_x = -0.1 * p.sin() - 0.1 * (p + k).sin();
    let planar_z = -0.1 * p.cos() - 0.1 * (p + k).cos();
    let fk = Vector3::new(planar_x, -planar_z * r.sin(), planar_z * r.cos());
    assert!((fk - target).norm() < 1e-12, "{fk:?}");
    assert!(leg_ik(&leg, &Vector3::new(0.0, 0.0, -0.3)).is_err());
}

#[test]
fn gait_reference_starts_at_the_model_pose() {
    let model = quadruped();
    let gait = GaitPlanner::trot(0.75);
    let r = gait.reference(0.0).unwrap();
    let q0 = actuated_positions(&model, &model.initial_state.q);
    assert!((r.q - q0).amax() < 1e-9);
    assert!(r.qd.amax() < 1e-3, "{}", r.qd.amax());
    // After the ramp a swing foot rises to the step height at mid-swing.
    let t_mid = 0.3 * 2.0 + 0.3 * (0.75 + 0.125);
    let z = gait.feet(t_mid)[0].z + gait.height;
    assert!((z - 0.015).abs() < 1e-9, "{z}");
}

#[test]
fn lcp_mu_predicts_the_same_model_simulator_and_tracks_the_first_steps() {
    let model = terrain_model(&quadruped(), &TERRAINS[0]);
    let gait = GaitPlanner::trot(0.75);
    let mut c = controller_by_id("lcp_mu", true).unwrap();
    let rec = run_closed_loop(
        &model,
        c.as_mut(),
        &gait,
        &LoopOptions::new(0.06, "anitescu-potra"),
    )
    .unwrap();
    assert!(rec.fell.is_none());
    let (abs, rel) = rec.force_error().unwrap();
    assert!(rel < 0.01, "relative Σf_N error {rel} ({abs} N)");
    assert!(rec.mean_pos_err() < 1e-3, "{}", rec.mean_pos_err());
    // Standing load: Σf_N ≈ m g = 4.8 · 9.81 N at the start.
    assert!(
        (rec.sensed_normal[0] - 4.8 * 9.81).abs() < 0.5,
        "{}",
        rec.sensed_normal[0]
    );
}

#[test]
fn pid_and_delayed_id_trot_without_falling_and_unknown_ids_are_errors() {
    let model = terrain_model(&quadruped(), &TERRAINS[0]);
    let gait = GaitPlanner::trot(0.75);
    for id in ["pid", "delay1"] {
        let mut c = controller_by_id(id, true).unwrap();
        let rec = run_closed_loop(
            &model,
            c.as_mut(),
            &gait,
            &LoopOptions::new(0.1, "anitescu-potra"),
        )
        .unwrap();
        assert!(rec.fell.is_none(), "{id}: {:?}", rec.fall_reason);
        assert!(rec.mean_pos_err() < 0.05, "{id}: {}", rec.mean_pos_err());
        assert!(rec.torques.iter().all(|u| u.amax() <= 4.0 + 1e-12));
    }
    assert!(controller_by_id("nope", true).is_err());
}

#[test]
#[ignore]
fn explore() {
    let model = quadruped();
    let dur: f64 = std::env::var("DUR")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    let duty: f64 = std::env::var("DUTY")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0.75);
    let gait = GaitPlanner::trot(duty);
    for terrain in TERRAINS {
        let m = terrain_model(&model, &terrain);
        for name in [
            "qp_mu", "qp_inf", "lcp_mu", "lcp_inf", "pid", "delay1", "delay2",
        ] {
            let mut c = controller(name, terrain.rigid);
            let start = std::time::Instant::now();
            let rec = run_closed_loop(
                &m,
                c.as_mut(),
                &gait,
                &LoopOptions::new(dur, terrain.stepper()),
            )
            .unwrap();
            println!(
                "{:16} {:8} pos {:.4} vel {:.4} dtau {:9.2} tau {:.3} fell {:?} {:?} chat {:.3} force {:?} com {:?} wall {:.2}",
                terrain.id,
                name,
                rec.mean_pos_err(),
                rec.mean_vel_err(),
                rec.mean_dtau(1e-3),
                rec.mean_tau(),
                rec.fell,
                rec.fall_reason,
                rec.chatter_fraction,
                rec.force_error(),
                rec.com.last().map(|c| c.1),
                start.elapsed().as_secs_f64()
            );
        }
    }
    let _ = DVector::<f64>::zeros(1);
}
