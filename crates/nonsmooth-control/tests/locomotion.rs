//! Locomotion testbed: IK, gait reference, controllers in the closed loop.

use nalgebra::{DVector, Vector3};
use nonsmooth_control::controllers::{
    actuated_positions, controller_by_id, experiment_id_controller,
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
fn stance_feet_move_together_and_the_reference_is_continuous() {
    let gait = GaitPlanner::trot(0.75);
    let dt = 1e-3;
    let mut t = 0.0;
    while t < 0.9 {
        let (a, b) = (gait.feet(t), gait.feet(t + dt));
        let stance: Vec<usize> = (0..4)
            .filter(|&i| gait.in_stance(i, t) && gait.in_stance(i, t + dt))
            .collect();
        // Every stance foot moves back by the distance the trunk advances (also in the ramp).
        let dodo = gait.odometer(t + dt) - gait.odometer(t);
        for &i in &stance {
            let d = b[i] - a[i];
            assert!(
                (d.x + dodo).abs() < 1e-12 && d.z.abs() < 1e-12,
                "t {t} leg {i}: {d:?}"
            );
        }
        t += dt;
    }
    // Joint velocities are continuous across lift-off (t = 0.375 for FL) and touchdown
    // (t = 0.6): the swing spline matches the stance feet's velocity.
    for tb in [0.375, 0.6] {
        let before = gait.reference(tb - 2e-4).unwrap();
        let after = gait.reference(tb + 2e-4).unwrap();
        assert!((&after.qd - &before.qd).amax() < 0.05, "{tb}");
        assert!(after.swing.len() == 12);
    }
}

#[test]
fn consistent_acceleration_keeps_stance_feet_at_rest() {
    use nonsmooth_control::controllers::BaseFeedback;
    use nonsmooth_core::ContactSnapshot;
    let model = quadruped();
    let s = &model.initial_state;
    let mut v = s.v.clone();
    for (k, x) in v.iter_mut().enumerate() {
        *x = 0.01 * ((k as f64) * 0.7).sin();
    }
    let snap = ContactSnapshot::new(&model, &s.q, &v, 0.0).unwrap();
    let qdd = DVector::from_fn(12, |i, _| ((i as f64) * 1.3).cos());
    let mut swing = vec![false; 12];
    swing[..3].fill(true); // front-left leg in swing
    let dt = 1e-3;
    let fb = BaseFeedback::default();
    let out = fb
        .consistent_acceleration(&model, &snap, &qdd, &swing, dt)
        .unwrap();
    // The swing leg keeps its desired acceleration exactly.
    assert!((out.rows(0, 3) - qdd.rows(0, 3)).amax() < 1e-9);
    // A base acceleration exists that, with the returned θ̈, stops the three stance feet:
    // C_b a_b = −(C v/Δt + C_θ θ̈) in the least-squares sense with zero residual.
    let rows: Vec<_> = snap.contacts.iter().skip(1).collect();
    assert_eq!(rows.len(), 3);
    let mut c = nalgebra::DMatrix::zeros(9, model.nv());
    for (i, ct) in rows.iter().enumerate() {
        c.row_mut(3 * i).copy_from(&ct.rows.normal.transpose());
        c.row_mut(3 * i + 1).copy_from(&ct.rows.tangents.row(0));
        c.row_mut(3 * i + 2).copy_from(&ct.rows.tangents.row(1));
    }
    let cb = c.columns(0, 6).into_owned();
    let rhs = -(&c * &v / dt + &c * &snap.actuation * &out);
    let ab = cb.clone().svd(true, true).solve(&rhs, 1e-12).unwrap();
    assert!((&cb * ab - &rhs).amax() < 1e-6 * rhs.amax().max(1.0));
    // Without stance contacts the desired acceleration is returned unchanged.
    let all_swing = vec![true; 12];
    let same = fb
        .consistent_acceleration(&model, &snap, &qdd, &all_swing, dt)
        .unwrap();
    assert!((same - &qdd).amax() < 1e-12);
    assert!(fb
        .consistent_acceleration(&model, &snap, &DVector::zeros(3), &swing, dt)
        .is_err());
}

/// `BaseFeedback::impact_velocity`: the trunk of the standing quadruped falls at 0.1 m/s
/// onto its three stance feet (front-left leg in swing): after the frictionless inelastic
/// impact no stance foot approaches the ground, the approaching ones are at rest along the
/// normal, the kinetic energy has not grown, and the joint velocities jump (the impulse acts
/// through the legs). A robot at rest is left unchanged.
#[test]
fn impact_velocity_stops_the_approaching_stance_feet() {
    use nonsmooth_control::controllers::BaseFeedback;
    use nonsmooth_core::ContactSnapshot;
    let model = quadruped();
    let s = &model.initial_state;
    let mut v = s.v.clone();
    let vi = model.joints[0].v_index;
    v[vi + 2] = -0.1;
    let snap = ContactSnapshot::new(&model, &s.q, &v, 0.0).unwrap();
    let mut swing = vec![false; 12];
    swing[..3].fill(true);
    let fb = BaseFeedback::default();
    let vp = fb.impact_velocity(&snap, &swing).unwrap();
    let stance: Vec<_> = snap.contacts.iter().skip(1).collect();
    assert_eq!(stance.len(), 3);
    for c in &stance {
        assert!(c.rows.normal.dot(&v) < -1e-3, "the stance feet approach");
        let after = c.rows.normal.dot(&vp);
        assert!(
            after.abs() < 1e-12,
            "normal velocity after the impact {after}"
        );
    }
    let energy = |w: &DVector<f64>| 0.5 * w.dot(&(&snap.mass_matrix * w));
    assert!(energy(&vp) <= energy(&v) * (1.0 + 1e-12));
    let joints = |w: &DVector<f64>| snap.actuation.transpose() * w;
    assert!((joints(&vp) - joints(&v)).amax() > 1e-3);
    let rest = ContactSnapshot::new(&model, &s.q, &s.v, 0.0).unwrap();
    assert_eq!(fb.impact_velocity(&rest, &swing).unwrap(), rest.v);
}

#[test]
fn lcp_mu_with_trunk_feedback_walks_and_beats_pid_on_rigid_ground() {
    let model = terrain_model(&quadruped(), &TERRAINS[0]);
    let gait = GaitPlanner::trot(0.75);
    let mut errs = Vec::new();
    for id in ["lcp_mu", "pid"] {
        let mut c = controller_by_id(id, true).unwrap();
        let rec = run_closed_loop(
            &model,
            c.as_mut(),
            &gait,
            &LoopOptions::new(0.8, "anitescu-potra"),
        )
        .unwrap();
        assert!(rec.fell.is_none(), "{id}: {:?}", rec.fall_reason);
        // The robot advances: the planned distance is 0.13 m (0.2 m/s after a 0.3 s ramp);
        // the inverse-dynamics controller covers most of it, the soft PID slips.
        let x = rec.com.last().unwrap().1.x - rec.com[0].1.x;
        let want = if id == "pid" {
            0.02
        } else {
            0.7 * gait.odometer(0.8)
        };
        assert!(x > want, "{id}: advanced {x} m");
        errs.push(rec.mean_pos_err());
    }
    assert!(errs[0] < errs[1], "lcp_mu {} vs pid {}", errs[0], errs[1]);
}

#[test]
fn lcp_mu_walks_on_the_compliant_ground_with_the_acceleration_level_contact() {
    // On the spring–damper ground (10 plant sub-steps per control step) ID(tᵢ)_LCP,μ with the
    // acceleration-level contact for penetrating feet (`hold_penetrating`,
    // `BaseFeedback::compliant_ground`, set by `controller_by_id(.., false)`) walks; with the
    // velocity-level rigid prediction it fell at 0.50 s, predicting up to ~1.8 kN to stop
    // feet moving inside the spring within one step.
    let model = terrain_model(&quadruped(), &TERRAINS[2]);
    let gait = GaitPlanner::trot(0.75);
    let opts = LoopOptions::new(0.7, TERRAINS[2].stepper());
    assert_eq!(opts.substeps, 10);
    let mut c = controller_by_id("lcp_mu", false).unwrap();
    let rec = run_closed_loop(&model, c.as_mut(), &gait, &opts).unwrap();
    assert!(rec.fell.is_none(), "{:?} {:?}", rec.fell, rec.fall_reason);
    let peak = rec
        .predicted_normal
        .iter()
        .flatten()
        .fold(0.0_f64, |a, b| a.max(*b));
    assert!(peak < 6.0 * 4.8 * 9.81, "peak predicted Σf_N {peak} N");
    assert!(rec.mean_pos_err() < 0.03, "{}", rec.mean_pos_err());
}

#[test]
fn qp_mu_trots_in_place_on_sticky_ground_while_lcp_mu_walks() {
    // Stage I of ID(tᵢ)_QP,μ minimizes the kinetic energy with the actuated joints
    // prescribed, so it predicts trunk-braking friction and never the propulsive friction
    // of a sticking stance foot: on rigid μ = ∞ (the controller assuming μ = 1.5, the
    // authors' cap) it tracks the joints but the trunk hardly moves, while ID(tᵢ)_LCP,μ
    // (Coulomb friction with complementarity, the plant's own model) covers the plan. With
    // the assumed μ capped at 0.1 the braking is bounded and QP,μ walks too.
    let model = terrain_model(&quadruped(), &TERRAINS[1]);
    let gait = GaitPlanner::trot(0.75);
    let opts = LoopOptions::new(1.5, TERRAINS[1].stepper());
    let run = |c: &mut dyn nonsmooth_control::controllers::Controller| {
        let rec = run_closed_loop(&model, c, &gait, &opts).unwrap();
        assert!(rec.fell.is_none(), "{:?}", rec.fall_reason);
        assert!((rec.planned_travel - gait.odometer(1.5)).abs() < 1e-9);
        (rec.progress(), rec.mean_pos_err())
    };
    let (qp, qp_err) = run(controller_by_id("qp_mu", true).unwrap().as_mut());
    let (lcp, _) = run(controller_by_id("lcp_mu", true).unwrap().as_mut());
    let mut capped = experiment_id_controller("qp_mu", Variant::QpCoulomb, true);
    capped.friction_cap = 0.1;
    let (qp_capped, _) = run(&mut capped);
    assert!(qp_err < 0.05, "QP,μ tracks the joints: {qp_err}");
    assert!(qp < 0.15, "QP,μ progress {qp}");
    assert!(lcp > 0.8, "LCP,μ progress {lcp}");
    assert!(
        qp_capped > 0.4,
        "QP,μ with μ capped at 0.1: progress {qp_capped}"
    );
}

#[test]
fn compliant_terrain_starts_at_the_spring_equilibrium() {
    let model = quadruped();
    let m = terrain_model(&model, &TERRAINS[2]);
    let drop = model.initial_state.q[2] - m.initial_state.q[2];
    let expected = 4.8 * 9.81 / (4.0 * 1.2e4);
    assert!((drop - expected).abs() < 1e-9, "{drop} vs {expected}");
    let rigid = terrain_model(&model, &TERRAINS[0]);
    assert_eq!(rigid.initial_state.q[2], model.initial_state.q[2]);
}

#[test]
fn a_model_that_does_not_match_the_gait_plan_is_a_typed_error() {
    // A floating sphere has no actuated joints for the trot's 12: named, not a panic.
    let sphere = Model::from_toml_str(
        include_str!("../../../examples/bouncing_sphere.toml"),
        Some("bouncing_sphere.toml"),
    )
    .unwrap();
    let mut c = controller_by_id("pid", true).unwrap();
    let err = run_closed_loop(
        &sphere,
        c.as_mut(),
        &GaitPlanner::trot(0.75),
        &LoopOptions::new(0.1, "anitescu-potra"),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("12 joints") && err.contains("0 actuated"),
        "{err}"
    );
}
