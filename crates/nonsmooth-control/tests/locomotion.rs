//! Locomotion testbed: IK, gait reference, controllers in the closed loop.

use nalgebra::{DVector, Vector3};
use nonsmooth_control::controllers::{
    actuated_positions, controller_by_id, experiment_id_controller, Controller, DelayedId,
    IdController, JointPid,
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
    if std::env::var("BASE").is_ok() {
        c.base = Some(nonsmooth_control::controllers::BaseFeedback::default());
    }
    // RS, RT, RA, CG: BaseFeedback reach speed, reach time, reach acceleration, contact gap.
    if let Some(b) = c.base.as_mut() {
        b.reach_speed = std::env::var("RS")
            .ok()
            .and_then(|x| x.parse().ok())
            .unwrap_or(b.reach_speed);
        b.reach_time = std::env::var("RT")
            .ok()
            .and_then(|x| x.parse().ok())
            .unwrap_or(b.reach_time);
        b.reach_accel = std::env::var("RA")
            .ok()
            .and_then(|x| x.parse().ok())
            .unwrap_or(b.reach_accel);
        b.contact_gap = std::env::var("CG")
            .ok()
            .and_then(|x| x.parse().ok())
            .unwrap_or(b.contact_gap);
        // IMP=1: project from the post-impact velocity (`BaseFeedback::impact_consistent`).
        b.impact_consistent = std::env::var("IMP").is_ok();
    }
    // HOLD=1: acceleration-level contact inside a compliant ground (`hold_penetrating`,
    // `BaseFeedback::compliant_ground`).
    if std::env::var("HOLD").is_ok() && !rigid {
        c.hold_penetrating = true;
        if let Some(b) = c.base.as_mut() {
            b.compliant_ground = true;
        }
    }
    if let Some(g) = std::env::var("AG").ok().and_then(|x| x.parse().ok()) {
        c.active_gap = g;
    }
    if std::env::var("REUSE").is_ok() {
        c.reuse_contact_force = true;
    }
    if let Some(g) = std::env::var("FC").ok().and_then(|x| x.parse().ok()) {
        c.friction_cap = g;
    }
    // Joint PID torque on top of u_ID (the authors' Pacer output, as `controller_by_id`);
    // NOTFB=1 leaves it out, TFB=k scales its gains.
    if std::env::var("NOTFB").is_err() {
        let k = std::env::var("TFB")
            .ok()
            .and_then(|x| x.parse::<f64>().ok())
            .unwrap_or(1.0);
        c.torque_feedback = Some(JointPid::new(10.0 * k, 0.1 * k, 0.003 * k));
    }
    if std::env::var("NOPD").is_ok() {
        c.gains = nonsmooth_control::controllers::AccelerationGains { kp: 0.0, kd: 0.0 };
    }
    // KP, KD: the θ̈_des joint gains (`AccelerationGains`).
    if let Some(kp) = std::env::var("KP").ok().and_then(|x| x.parse().ok()) {
        c.gains.kp = kp;
    }
    if let Some(kd) = std::env::var("KD").ok().and_then(|x| x.parse().ok()) {
        c.gains.kd = kd;
    }
    Box::new(c)
}

fn controller(name: &str, rigid: bool) -> Box<dyn Controller> {
    match name {
        "qp_mu" => idc(name, Variant::QpCoulomb, rigid),
        "qp_inf" => idc(name, Variant::QpNoSlip, rigid),
        "lcp_mu" => idc(name, Variant::LcpCoulomb, rigid),
        "lcp_inf" => idc(name, Variant::LcpNoSlip, rigid),
        "pid" => Box::new(JointPid::new(10.0, 0.1, 0.003)),
        "delay1" | "delay2" => {
            let mut c = DelayedId::new(name, if name == "delay1" { 1 } else { 2 });
            if std::env::var("BASE").is_ok() {
                c.base = Some(nonsmooth_control::controllers::BaseFeedback {
                    compliant_ground: std::env::var("HOLD").is_ok() && !rigid,
                    ..Default::default()
                });
            }
            if std::env::var("NOTFB").is_err() {
                c.torque_feedback = Some(JointPid::new(10.0, 0.1, 0.003));
            }
            Box::new(c)
        }
        _ => controller_by_id(name, rigid).unwrap(),
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
        c.row_mut(3 * i).copy_from(&ct.normal_row.transpose());
        c.row_mut(3 * i + 1).copy_from(&ct.tangent_rows.row(0));
        c.row_mut(3 * i + 2).copy_from(&ct.tangent_rows.row(1));
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
        assert!(c.normal_row.dot(&v) < -1e-3, "the stance feet approach");
        let after = c.normal_row.dot(&vp);
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

/// For every torque-rate step k ≥ 1 of a 1 ms run, the joints whose rate exceeds 500 N m/s
/// with the opposite sign of the step before (the chatter detector's reversal).
fn reversal_joints(torques: &[DVector<f64>]) -> Vec<Vec<usize>> {
    let r: Vec<DVector<f64>> = torques.windows(2).map(|w| (&w[1] - &w[0]) / 1e-3).collect();
    (1..r.len())
        .map(|k| {
            (0..r[k].len())
                .filter(|&j| {
                    r[k][j].abs() > 500.0
                        && r[k - 1][j].abs() > 500.0
                        && r[k][j] * r[k - 1][j] < 0.0
                })
                .collect()
        })
        .collect()
}

#[test]
#[ignore]
fn explore() {
    let model = quadruped();
    let env = |k: &str, d: f64| -> f64 {
        std::env::var(k)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(d)
    };
    let dur = env("DUR", 1.0);
    let duty = env("DUTY", 0.75);
    let ctrls = std::env::var("CTRLS")
        .unwrap_or_else(|_| "qp_mu,qp_inf,lcp_mu,lcp_inf,pid,delay1,delay2".into());
    let terrs = std::env::var("TERRS").unwrap_or_default();
    let gait = GaitPlanner::trot(duty);
    let all = [
        TERRAINS[0],
        TERRAINS[1],
        TERRAINS[2],
        TERRAINS[3],
        nonsmooth_control::locomotion::HEIGHTMAP_TERRAIN,
    ];
    for terrain in all {
        if !terrs.is_empty() && !terrs.split(',').any(|t| t == terrain.id) {
            continue;
        }
        let m = terrain_model(&model, &terrain);
        for name in ctrls.split(',') {
            let mut c = controller(name, terrain.rigid);
            let start = std::time::Instant::now();
            // STEPPER overrides the rigid terrains' plant (e.g. qp-max-dissipation).
            let stepper = match std::env::var("STEPPER") {
                Ok(s) if terrain.rigid => s,
                _ => terrain.stepper().to_string(),
            };
            let mut opts = LoopOptions::new(dur, &stepper);
            // TOI=1: split plant steps at the time of contact (`LoopOptions::time_of_contact`).
            opts.time_of_contact = env("TOI", 0.0) > 0.0;
            if !terrain.rigid {
                opts.substeps = env("SUB", opts.substeps as f64) as usize;
                opts.friction_regularization = env("VREG", opts.friction_regularization);
            }
            let rec = run_closed_loop(&m, c.as_mut(), &gait, &opts).unwrap();
            println!(
                "{:16} {:8} pos {:.4} vel {:.4} dtau {:9.2} tau {:.3} fell {:?} {:?} chat {:.3} force {:?} travel {:.3} ({:.2}) wall {:.2}",
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
                rec.travel,
                rec.progress(),
                start.elapsed().as_secs_f64()
            );
            // TRACEC=1: when and on which joints the torque reversals happen (phase in the
            // 0.3 s gait cycle), as counted by the chatter detector.
            if env("TRACEC", 0.0) > 0.0 {
                let mut hist = vec![0usize; 30];
                let mut joints = vec![0usize; 12];
                for (k, js) in reversal_joints(&rec.torques).into_iter().enumerate() {
                    let k = k + 1;
                    if !js.is_empty() {
                        let t = rec.t[k];
                        hist[((t % 0.3) / 0.01) as usize % 30] += 1;
                        for j in &js {
                            joints[*j] += 1;
                        }
                        if env("TRACEC", 0.0) > 1.0 {
                            println!("  rev t {t:.3} joints {js:?}");
                        }
                    }
                }
                println!("  reversal phase histogram (10 ms bins): {hist:?}");
                println!("  reversals per joint: {joints:?}");
            }
            // RUNS=1: lengths of the trains of consecutive reversal steps (any joint), and the
            // share of steps in trains of at least 2, 3, 5 and 10 reversals.
            if env("RUNS", 0.0) > 0.0 {
                let rev: Vec<bool> = reversal_joints(&rec.torques)
                    .iter()
                    .map(|js| !js.is_empty())
                    .collect();
                let mut trains = Vec::new();
                let mut len = 0usize;
                for &b in rev.iter().chain(std::iter::once(&false)) {
                    if b {
                        len += 1;
                    } else if len > 0 {
                        trains.push(len);
                        len = 0;
                    }
                }
                let mut hist = [0usize; 12];
                for &l in &trains {
                    hist[l.min(11)] += 1;
                }
                let n = rec.torques.len().max(1) as f64;
                let share = |m: usize| trains.iter().filter(|&&l| l >= m).sum::<usize>() as f64 / n;
                println!(
                    "  trains {} hist(1..11+) {:?} share>=2 {:.3} >=3 {:.3} >=5 {:.3} >=10 {:.3}",
                    trains.len(),
                    &hist[1..],
                    share(2),
                    share(3),
                    share(5),
                    share(10)
                );
            }
            // TRACEU=t0: the torques of every step in [t0, t0 + 30 ms).
            let t0 = env("TRACEU", -1.0);
            if t0 >= 0.0 {
                for (t, u) in rec.t.iter().zip(&rec.torques) {
                    if *t >= t0 && *t < t0 + 0.03 {
                        let s: Vec<String> = u.iter().map(|x| format!("{x:+.2}")).collect();
                        println!("  u {t:.3} {}", s.join(" "));
                    }
                }
            }
            if env("TRACE", 0.0) > 0.0 {
                for (k, f) in rec
                    .frames
                    .iter()
                    .enumerate()
                    .step_by(env("TRACESTEP", 5.0) as usize)
                {
                    let i = (k * 10).min(rec.pos_err.len().saturating_sub(1));
                    println!(
                        "  t {:.2} trunk {:.4} {:.4} {:.4} pos_err {:.4} umax {:.2}",
                        f.0,
                        f.1.x,
                        f.1.y,
                        f.1.z,
                        rec.pos_err.get(i).copied().unwrap_or(0.0),
                        rec.torques.get(i).map(|u| u.amax()).unwrap_or(0.0)
                    );
                    // TRACE=2: the feet (x, z) as well.
                    if env("TRACE", 0.0) > 1.0 {
                        let feet: Vec<String> =
                            f.2.iter()
                                .map(|p| format!("({:+.4} {:.4})", p.x, p.z))
                                .collect();
                        println!("    feet {}", feet.join(" "));
                    }
                }
            }
        }
    }
    let _ = DVector::<f64>::zeros(1);
}

#[test]
#[ignore]
fn diag_step() {
    use nonsmooth_control::controllers::{
        actuated_velocities, AccelerationGains, ControlInput, JointReference,
    };
    use nonsmooth_core::{ContactSnapshot, State};
    let name = std::env::var("CTRL").unwrap_or_else(|_| "lcp_mu".into());
    let steps: usize = std::env::var("STEPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    let ti: usize = std::env::var("TI")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let terrain = TERRAINS[ti];
    let model = terrain_model(&quadruped(), &terrain);
    let gait = GaitPlanner::trot(0.75);
    let mut c = controller(&name, terrain.rigid);
    let mut idc = IdController::new(
        &name,
        match name.as_str() {
            "qp_inf" => Variant::QpNoSlip,
            "lcp_mu" => Variant::LcpCoulomb,
            "lcp_inf" => Variant::LcpNoSlip,
            _ => Variant::QpCoulomb,
        },
    );
    idc.base = Some(nonsmooth_control::controllers::BaseFeedback::default());
    // DIAGV=2: the directly inspected controller also adds the joint PID torque (as
    // `controller_by_id`); the printed prediction is then that of u_ID alone.
    if std::env::var("DIAGV").as_deref() == Ok("2") {
        idc.torque_feedback = Some(JointPid::new(10.0, 0.1, 0.003));
    }
    let direct = std::env::var("DIAGV").is_ok();
    let mut stepper: Box<dyn nonsmooth_sim::Stepper> = if terrain.rigid {
        nonsmooth_sim::stepper_by_name(
            &std::env::var("STEPPER").unwrap_or_else(|_| "anitescu-potra".into()),
        )
        .unwrap()
    } else {
        let mut p =
            nonsmooth_sim::PenaltyStepper::new(nonsmooth_sim::PenaltyIntegrator::SymplecticEuler);
        p.friction_regularization = 0.02;
        Box::new(p)
    };
    let mut state = model.initial_state.clone();
    let dt = 1e-3;
    // Reversal bookkeeping: (u_{k-1}, rate_{k-1}), contact sets of the last steps, counts of
    // reversals with / without a contact-set change within the last 3 steps.
    let mut prev_u: Option<DVector<f64>> = None;
    let mut prev_rate: Option<DVector<f64>> = None;
    let mut sets: Vec<Vec<bool>> = Vec::new();
    let (mut rev_change, mut rev_steady) = (0usize, 0usize);
    // reversal steps whose torque, or the previous step's, hit the ±4 N m limit
    let (mut rev_clipped, mut clipped_before) = (0usize, false);
    for k in 0..steps {
        let t = k as f64 * dt;
        let r: JointReference = gait.reference(t).unwrap();
        let snap = ContactSnapshot::new(&model, &state.q, &state.v, t).unwrap();
        let input = ControlInput {
            model: &model,
            snapshot: &snap,
            reference: &r,
            dt,
        };
        let qdd = AccelerationGains::default().desired_acceleration(&model, &input);
        let qdd = if std::env::var("BASE").is_ok() {
            nonsmooth_control::controllers::BaseFeedback::default()
                .consistent_acceleration(&model, &snap, &qdd, &r.swing, dt)
                .unwrap()
        } else {
            qdd
        };
        let u = if direct {
            idc.control(&input).unwrap()
        } else {
            c.control(&input).unwrap()
        };
        let clipped = u.amax() > 4.0;
        let u = u.map(|x| x.clamp(-4.0, 4.0));
        let gen = &snap.actuation * &u;
        let chol = snap.mass_matrix.clone().cholesky().unwrap();
        let v_act = nonsmooth_control::locomotion::actuated_velocity(
            &model, &state, &snap, &chol, &gen, dt,
        );
        let next = stepper
            .step(
                &model,
                &State {
                    q: state.q.clone(),
                    v: v_act,
                    t,
                },
                dt,
            )
            .unwrap();
        let want = actuated_velocities(&model, &state.v) + &qdd * dt;
        let got = actuated_velocities(&model, &next.v);
        let sensed = &snap.mass_matrix * (&next.v - &state.v) / dt - &snap.forces - &gen;
        let ncont = snap.contacts.iter().filter(|c| c.gap <= 1e-4).count();
        {
            let set: Vec<bool> = (0..4)
                .map(|i| {
                    snap.contacts
                        .iter()
                        .any(|c| c.gap <= 1e-4 && c.collider_a.max(c.collider_b) % 4 == i)
                })
                .collect();
            if let Some(last) = sets.last() {
                for i in 0..4 {
                    if last[i] != set[i] && std::env::var("SHOWSET").is_ok() {
                        println!(
                            "set k {k} foot {i} {} planned {}",
                            if set[i] { "enters" } else { "leaves" },
                            if r.swing.get(3 * i).copied().unwrap_or(false) {
                                "swing"
                            } else {
                                "stance"
                            }
                        );
                    }
                }
            }
            sets.push(set);
            if let Some(pu) = &prev_u {
                let rate = (&u - pu) / dt;
                if let Some(pr) = &prev_rate {
                    let rev = rate
                        .iter()
                        .zip(pr.iter())
                        .any(|(a, b)| a.abs() > 500.0 && b.abs() > 500.0 && a * b < 0.0);
                    if rev {
                        if clipped || clipped_before {
                            rev_clipped += 1;
                        }
                        let n = sets.len();
                        let changed = (n.saturating_sub(4)..n - 1).any(|i| sets[i] != sets[i + 1]);
                        if changed {
                            rev_change += 1;
                        } else {
                            rev_steady += 1;
                            if std::env::var("SHOWSTEADY").is_ok() {
                                println!("steady reversal k {k} n {ncont}");
                            }
                        }
                    }
                }
                prev_rate = Some(rate);
            }
            prev_u = Some(u.clone());
            clipped_before = clipped;
        }
        let gaps: Vec<String> = snap
            .contacts
            .iter()
            .map(|c| format!("{:.1e}", c.gap))
            .collect();
        // WIN=k0: print every step from k0 on (30 steps); otherwise every 5th step.
        let win = std::env::var("WIN")
            .ok()
            .and_then(|s| s.parse::<usize>().ok());
        let show = match win {
            Some(k0) => k >= k0 && k < k0 + 30,
            None => k % 5 == 0 || (&want - &got).amax() > 1e-3,
        };
        if show {
            println!(
                "k {k} n {ncont} gaps {:?} swing {:?} res {:.2e} clip {clipped} pred {:?} sens {:.2} z {:.4} umax {:.2}",
                gaps,
                r.swing.iter().step_by(3).map(|s| *s as u8).collect::<Vec<_>>(),
                (&want - &got).amax(),
                c.predicted_normal_force(),
                sensed[2],
                next.q[2],
                u.amax()
            );
        }
        if direct && idc.failures > 0 && std::env::var("SHOWFAIL").is_ok() {
            println!("fail k {k}: {:?}", idc.last_error());
            idc.failures = 0;
        }
        if direct && k % 5 == 0 {
            if let Some(sol) = idc.last_solution() {
                for (i, ct) in snap.contacts.iter().enumerate() {
                    println!(
                        "   c{i} gap {:.1e} vn pred {:+.2e} sim {:+.2e} vt pred {:+.2e} {:+.2e} sim {:+.2e} {:+.2e}",
                        ct.gap,
                        ct.normal_row.dot(&sol.v_plus),
                        ct.normal_row.dot(&next.v),
                        ct.tangent_rows.row(0).transpose().dot(&sol.v_plus),
                        ct.tangent_rows.row(1).transpose().dot(&sol.v_plus),
                        ct.tangent_rows.row(0).transpose().dot(&next.v),
                        ct.tangent_rows.row(1).transpose().dot(&next.v),
                    );
                }
                println!(
                    "   base pred {:.2e} {:.2e} {:.2e} sim {:.2e} {:.2e} {:.2e} fN {:?}",
                    sol.v_plus[0],
                    sol.v_plus[1],
                    sol.v_plus[2],
                    next.v[0],
                    next.v[1],
                    next.v[2],
                    sol.normal_forces.as_slice()
                );
            }
        }
        state = next;
    }
    println!("reversals: {rev_change} with a contact-set change in the last 3 steps, {rev_steady} without, {rev_clipped} at a clipped torque (this or the last step)");
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
