//! The planar hopper of Nurkanović et al. Sec. 6 on its model file (`examples/hopper.toml`):
//! flight, stance, the stance stabilization, cut continuation, hole growth and repeatable solves.

use crate::common;

use common::{hopper_problem, hopper_system, HopperSpec};
use nonsmooth_ocp::model_system::ModelSystem;

/// Thigh and shank lengths of the hopper (m).
const L_THIGH: f64 = 0.2;
const L_SHANK: f64 = 0.2;
/// Gravity of the model (m/s²).
const GRAVITY: f64 = 9.81;

/// World (x, y) of the knee (the thigh's end) at q.
fn knee(sys: &ModelSystem, q: &[f64]) -> [f64; 2] {
    use nalgebra::{DVector, Vector3};
    use nonsmooth_core::dynamics::{kinematics, point_position};
    let model = sys.model();
    let kin = kinematics(model, &DVector::from_column_slice(q), &DVector::zeros(4));
    let thigh = model.body_index("thigh").expect("thigh");
    let p = point_position(&kin, Some(thigh), &Vector3::new(0.0, -0.2, 0.0));
    [p.x, p.y]
}

/// Explicit RK4 of the smooth flight ODE q' = v, v' = M⁻¹(f_v + Bu) with u = 0.
fn rk4_flight(h: &ModelSystem, y0: &[f64], t_end: f64, n: usize) -> Vec<f64> {
    let f = |y: &[f64]| -> Vec<f64> {
        let a = h.f_v(&y[..4], &y[4..8], 0.0, &[0.0, 0.0]);
        y[4..8].iter().chain(&a).copied().collect()
    };
    let dt = t_end / n as f64;
    let mut y = y0.to_vec();
    for _ in 0..n {
        let add = |y: &[f64], k: &[f64], s: f64| -> Vec<f64> {
            y.iter().zip(k).map(|(y, k)| y + s * k).collect()
        };
        let k1 = f(&y);
        let k2 = f(&add(&y, &k1, dt / 2.0));
        let k3 = f(&add(&y, &k2, dt / 2.0));
        let k4 = f(&add(&y, &k3, dt));
        for i in 0..8 {
            y[i] += dt / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
        }
    }
    y
}

/// A flight step of the hopper whose initial knee is outside the OCP's path constraint
/// q_x − l_t sin φ_hip ≥ −0.05 (knee x = −0.059). The integrator does not impose the OCP's
/// path constraints (with them this step is infeasible for the fixed-mode NLP and ends in a
/// spurious homotopy point with α₁ = 0.8 and complementarity 2e-2 to 5e-2): the mode
/// prediction solves both steps at once with exact complementarity, and every stage point
/// is the free fall (no rotation, clock = τ) of an RK4 reference.
#[test]
fn flight_step_outside_ocp_path_bounds_is_free_fall() {
    use nonsmooth_ocp::fesd::{simulate, FesdOptions};
    use nonsmooth_ocp::time_freezing::TimeFreezing;
    use std::sync::Arc;

    let hop = hopper_system();
    let q0 = [0.0, 0.5, 0.3, -0.6];
    assert!(knee(&hop, &q0)[0] < -0.05);
    let tf = Arc::new(TimeFreezing::new(hop.clone(), 200.0).expect("time-freezing system"));
    let y0 = [0.0, 0.5, 0.3, -0.6, 0.5, 0.0, 0.0, 0.0, 0.0];
    let o = {
        let mut o = FesdOptions::default();
        o.discretization.n_s = 2;
        o
    };
    let sim = simulate(&tf, &y0, 0.05, 2, &|_| vec![0.0, 0.0], &o).expect("flight steps");
    assert_eq!(sim.comp_residual, 0.0);
    assert_eq!(sim.nlp_count, 1, "one fixed-mode NLP for both steps");
    assert_eq!(sim.traj.y.len(), 1 + 2 * 3 * 2);
    for ((tau, y), th) in sim.traj.tau.iter().zip(&sim.traj.y).zip(&sim.traj.theta1) {
        let r = rk4_flight(&hop, &y0[..8], *tau, 200);
        for i in 0..8 {
            assert!(
                (y[i] - r[i]).abs() < 1e-9,
                "τ = {tau}: y[{i}] = {} vs {}",
                y[i],
                r[i]
            );
        }
        // free fall: x = 0.5 τ, z = 0.5 − g τ²/2, angles and angular velocities unchanged
        assert!((r[1] - (0.5 - 0.5 * GRAVITY * tau * tau)).abs() < 1e-12);
        assert!((r[2] - 0.3).abs() < 1e-12 && r[6].abs() < 1e-12);
        assert!((y[8] - tau).abs() < 1e-9, "clock {} at τ = {tau}", y[8]);
        assert!(th.is_nan() || (th - 1.0).abs() < 1e-12);
        assert!(hop.f_c::<f64>(&y[..4]) > 0.05);
    }
}

/// Cut continuation (`MpccStrategy::cut_schedule`): the flight-cut rows exist for the
/// components some entry sets, start at the first entry's thresholds (`CUT_OFF` where it
/// leaves a cut inactive), the homotopy's first NLPs use the entries' σ, then σ ← κσ, and
/// the final point satisfies the last entry's cuts (1 − α_i)(λᵖ_i − δ_i) ≤ 0. Short hopper
/// horizon (4 intervals, N_FE = 2, n_s = 1, one hole, target = start pose).
#[test]
fn cut_schedule_drives_sigma_and_the_cut_thresholds() {
    use nonsmooth_ocp::fesd::{build, homotopy, CutStep, FesdBlock, CUT_OFF};

    let p = hopper_problem(&HopperSpec {
        holes: vec![0.5],
        fesd: "n_s = 1\nn_fe = 2".into(),
        ..HopperSpec::default()
    });
    let (tf, hz) = (p.tf, p.horizon);
    let sched = vec![
        CutStep {
            sigma: 1.0,
            delta: None,
            delta_v: None,
        },
        CutStep {
            sigma: 0.1,
            delta: Some(0.05),
            delta_v: None,
        },
        CutStep {
            sigma: 0.1,
            delta: Some(0.01),
            delta_v: Some(0.1),
        },
    ];
    let o = {
        let mut o = p.options;
        o.mpcc.cut_schedule = sched.clone();
        o
    };
    let (mut nlp, layout, x0) = build(&tf, &hz, &o).expect("NLP");
    let cuts: Vec<(f64, usize)> = nlp
        .blocks
        .iter()
        .filter_map(|b| match b.kind {
            FesdBlock::FlightCut { delta, comp } => Some((delta, comp)),
            _ => None,
        })
        .collect();
    // one row per stage point and cut component: 4 × 2 elements × 1 stage × 2
    assert_eq!(cuts.len(), 16);
    assert!(cuts.iter().all(|(d, _)| *d == CUT_OFF));
    let (sol, log) = homotopy(&mut nlp, &layout, x0, &o).expect("homotopy");
    assert_eq!(log[0].sigma, 1.0);
    assert_eq!(log[1].sigma, 0.1);
    assert_eq!(log[2].sigma, 0.1);
    if log.len() > 3 {
        assert!(
            (log[3].sigma - 0.01).abs() < 1e-15,
            "σ ← κσ after the schedule"
        );
    }
    assert!(log.last().expect("log").comp_residual <= o.mpcc.comp_tol);
    for b in &nlp.blocks {
        if let FesdBlock::FlightCut { delta, comp } = b.kind {
            let want = if comp == 0 { 0.01 } else { 0.1 };
            assert_eq!(delta, want);
            let (a, lp) = (sol.x[b.vars[0]], sol.x[b.vars[1]]);
            assert!(
                (1.0 - a) * (lp - delta) <= 1e-8,
                "cut violated: α {a}, λᵖ {lp}"
            );
        }
    }
    // a non-positive σ or a negative threshold in the schedule is a typed error
    for bad in [
        CutStep {
            sigma: 0.0,
            ..sched[0]
        },
        CutStep {
            delta: Some(-0.1),
            ..sched[0]
        },
    ] {
        let o = {
            let mut o = o.clone();
            o.mpcc.cut_schedule = vec![bad];
            o
        };
        assert!(build(&tf, &hz, &o).is_err());
    }
}

/// Why the hopper's stance is rigid at n_s = 1 (docs/optimal-control.md, "Limitations"):
/// the foot height f_c(q) = q_z − l_t cos φ_h − l_s cos(φ_h + φ_k) is convex in q where
/// both cosines are positive, so an implicit-Euler step q_e = q_s + Δ that ends on the
/// sliding manifold (n(q_e)ᵀΔ = 0, i.e. c₂ = nᵀv = 0 at the stage) lowers the foot by
/// f_c(q_s) − f_c(q_e) ≈ ½ ΔᵀHΔ > 0 whenever the leg rotates: a stance element starting
/// on the ground ends below it (here 9.1 mm for a 0.2 rad hip rotation), which the foot
/// height bound p_foot,z ≥ −0.005 (or ≥ 0) forbids after one or two elements.
#[test]
fn implicit_euler_stance_step_lowers_the_foot() {
    let h = hopper_system();
    let qe = [0.1f64, 0.36, -0.5, 0.9];
    let n = h.normal(&qe);
    // a rotation of the hip about the standing foot: Δφ_h = 0.2, Δφ_k chosen with nᵀΔ = 0
    // (and Δq_z = 0, Δq_x = 0)
    let dh = 0.2;
    let dk = -n[2] * dh / n[3];
    let d = [0.0, 0.0, dh, dk];
    assert!(n.iter().zip(&d).map(|(a, b)| a * b).sum::<f64>().abs() < 1e-15);
    let qs: Vec<f64> = qe.iter().zip(&d).map(|(q, d)| q - d).collect();
    let drop = h.f_c::<f64>(&qs) - h.f_c::<f64>(&qe);
    // ½ ΔᵀHΔ with H = l_t cos φ_h e_h e_hᵀ + l_s cos(φ_h + φ_k)(e_h + e_k)(e_h + e_k)ᵀ
    let (a1, a2) = (qe[2], qe[2] + qe[3]);
    let quad = 0.5 * (L_THIGH * a1.cos() * dh * dh + L_SHANK * a2.cos() * (dh + dk).powi(2));
    assert!(drop > 8e-3 && drop < 1e-2, "foot lowered by {drop}");
    assert!((drop - quad).abs() < 0.1 * quad, "{drop} vs ½ΔᵀHΔ = {quad}");
}

/// The stance of the time-freezing hopper needs the stabilized normal switching function
/// (`TimeFreezing::with_stance_stabilization`, docs/decisions/002-time-freezing.md, "Stance
/// stabilization").
/// The hopper stands on the ground with the knee bent (φ_h = 0.3, φ_k = −0.6, v = 0) and
/// collapses under gravity at u = 0 with the foot sticking (μ = 0.8): a stance with leg
/// rotation. With c₂ = nᵀv the FESD integrator (n_s = 2) has no exact first step: the
/// stage points keep nᵀv = 0 while f_c drifts up, which α₁ = 0 forbids, and the homotopy
/// stalls (complementarity 2e-7). With c₂ = nᵀv + k (f_c + δ) (k = 10 /s, δ = 1 mm) every
/// step solves with exact complementarity, the foot settles into the ground towards −δ
/// and never rises above it, and it does not slide.
#[test]
fn stabilized_stance_with_leg_rotation_is_exact() {
    use nonsmooth_ocp::fesd::{simulate, FesdOptions};
    use nonsmooth_ocp::time_freezing::TimeFreezing;
    use nonsmooth_ocp::OcpError;
    use std::sync::Arc;

    let hop = hopper_system();
    let (ph, pk) = (0.3, -0.6);
    let qz = L_THIGH * f64::cos(ph) + L_SHANK * f64::cos(ph + pk);
    let y0 = [0.0, qz, ph, pk, 0.0, 0.0, 0.0, 0.0, 0.0];
    assert!(hop.f_c::<f64>(&y0[..4]).abs() < 1e-15);
    let o = {
        let mut o = FesdOptions::default();
        o.discretization.n_s = 2;
        o
    };
    let plain = Arc::new(TimeFreezing::new(hop.clone(), 200.0).expect("time-freezing system"));
    match simulate(&plain, &y0, 0.02, 1, &|_| vec![0.0, 0.0], &o) {
        Err(OcpError::HomotopyStalled { comp_residual, .. }) => {
            println!("unstabilized first step stalls at complementarity {comp_residual:.2e}");
            assert!(comp_residual > 1e-9);
        }
        Ok(s) => panic!(
            "unstabilized stance solved (complementarity {:.1e}): revisit the docs' claim",
            s.comp_residual
        ),
        Err(e) => panic!("unexpected error {e}"),
    }
    let depth = 1e-3;
    let tf = Arc::new(
        TimeFreezing::new(hop.clone(), 200.0)
            .and_then(|t| t.with_stance_stabilization(10.0, depth))
            .expect("stabilized system"),
    );
    let sim = simulate(&tf, &y0, 0.02, 8, &|_| vec![0.0, 0.0], &o).expect("stance steps");
    assert!(sim.comp_residual <= 1e-9, "{:.2e}", sim.comp_residual);
    let last = sim.traj.y.last().expect("trajectory");
    assert!(last[8] > 0.15, "clock {}", last[8]);
    assert!(last[1] < qz - 0.01, "the hip sinks: {} vs {qz}", last[1]);
    assert!(last[3] < pk - 0.05, "the knee bends: {}", last[3]);
    let foot_x0 = hop.contact_point(&y0[..4])[0];
    let mut prev_t = 0.0;
    for y in &sim.traj.y {
        let fc: f64 = hop.f_c(&y[..4]);
        assert!(fc <= 1e-12 && fc >= -1.05 * depth, "f_c = {fc}");
        assert!(
            (hop.contact_point(&y[..4])[0] - foot_x0).abs() < 1e-6,
            "the foot slides"
        );
        assert!(y[8] >= prev_t - 1e-12, "the clock runs backwards");
        prev_t = y[8];
    }
}

/// The stabilized normal switching function is c₂ = nᵀv + k (f_c + δ) (c₁ and c₃ unchanged),
/// and invalid rates or depths are named errors.
#[test]
fn stance_stabilization_shifts_only_the_normal_switching_function() {
    use nonsmooth_ocp::time_freezing::TimeFreezing;

    let hop = hopper_system();
    let y: [f64; 9] = [0.1, 0.35, 0.2, -0.5, 0.3, -0.2, 0.7, -1.1, 0.4];
    let plain = TimeFreezing::new(hop.clone(), 200.0).expect("plain");
    let stab = plain
        .clone()
        .with_stance_stabilization(12.0, 2e-3)
        .expect("stabilized");
    let (c0, c1) = (plain.switching(&y), stab.switching(&y));
    let fc: f64 = hop.f_c(&y[..4]);
    assert_eq!(c0[0], c1[0]);
    assert_eq!(c0[2], c1[2]);
    assert!((c1[1] - (c0[1] + 12.0 * (fc + 2e-3))).abs() < 1e-14);
    for (k, d) in [
        (0.0, 1e-3),
        (-1.0, 1e-3),
        (f64::NAN, 1e-3),
        (10.0, -1e-3),
        (10.0, f64::INFINITY),
    ] {
        let err = plain
            .clone()
            .with_stance_stabilization(k, d)
            .expect_err("invalid stabilization")
            .to_string();
        assert!(err.contains("stance stabilization"), "{err}");
    }
}

/// Stance stabilization depth δ of the short hole-growth problem.
const GROWTH_DEPTH: f64 = 1e-3;

/// The hopper system with a stabilized stance (k = 30 /s, δ = [`GROWTH_DEPTH`]) and
/// a_n = 200.
fn stabilized(sys: ModelSystem) -> std::sync::Arc<nonsmooth_ocp::time_freezing::TimeFreezing> {
    std::sync::Arc::new(
        nonsmooth_ocp::time_freezing::TimeFreezing::new(sys, 200.0)
            .and_then(|t| t.with_stance_stabilization(30.0, GROWTH_DEPTH))
            .expect("time-freezing system"),
    )
}

/// A short hole-growth problem: 4 intervals of a 0.5 s horizon, target = the start pose,
/// one hole next to the foot, n_s = 1, N_FE = 2, smoothing widths × 10, 1, 0.1.
fn short_growth_problem() -> (
    ModelSystem,
    nonsmooth_ocp::fesd::Horizon,
    nonsmooth_ocp::fesd::FesdOptions,
) {
    let p = hopper_problem(&HopperSpec {
        t: 0.5,
        holes: vec![0.3],
        terminal_clock: true,
        stance: Some((30.0, GROWTH_DEPTH)),
        fesd: "n_s = 1\nn_fe = 2\nsigma0 = 1e-3".into(),
        ..HopperSpec::default()
    });
    let mut o = p.options;
    o.mpcc.smoothing = Some(nonsmooth_ocp::smoothing::Smoothing {
        widths: vec![1e-3, 0.05, 0.05],
        factors: vec![10.0, 1.0, 0.1],
        lambda_weight: 1e-3,
        cross_sigmas: vec![],
        terminal_weight: 100.0,
        max_iter: None,
    });
    (p.tf.cls.clone(), p.horizon, o)
}

/// The semi-axes of the ellipses of a system's path constraints.
fn hole_axes(sys: &ModelSystem) -> Vec<[f64; 2]> {
    sys.path_terms()
        .iter()
        .filter_map(|t| match t {
            nonsmooth_ocp::model_system::PathTerm::OutsideEllipse(e) => Some(e.axes),
            nonsmooth_ocp::model_system::PathTerm::Point(_) => None,
        })
        .collect()
}

/// Hole growth in the smoothing phase (`smoothing::solve_ocp_with_growth`) on a short
/// horizon (4 intervals, target = the start pose, one hole next to the foot): the phase runs
/// on every stage in order (no hole, then half size, then the problem's own hole), each with
/// its width factors, the closing hard-terminal NLP only on the problem's own hole
/// (`close_stages` false), and the homotopy ends exact with the hole constraint satisfied at
/// every stage point.
#[test]
fn hole_growth_runs_the_smoothing_phase_on_every_stage_and_ends_exact() {
    use nonsmooth_ocp::smoothing::{solve_ocp_with_growth, Growth};
    use std::sync::Arc;

    let (hop, hz, o) = short_growth_problem();
    let base = hop.clone();
    let growth = Growth {
        scales: vec![0.0, 0.5],
        system: Arc::new(move |s| Ok(stabilized(base.with_obstacle_scale(s)?))),
        factors: vec![1.0, 0.1],
        bisections: 0,
        close_stages: false,
    };
    assert!(hole_axes(&growth.stage(0).unwrap().cls).is_empty());
    assert_eq!(
        hole_axes(&growth.stage(1).unwrap().cls),
        vec![[0.125, 0.05]]
    );
    let tf = stabilized(hop.clone());
    let sol = solve_ocp_with_growth(&tf, &hz, &o, &growth).expect("exact solution");
    let phases: Vec<f64> = sol.log.iter().take(8).map(|l| l.sigma).collect();
    assert_eq!(
        phases,
        [10.0, 1.0, 0.1, 1.0, 0.1, 1.0, 0.1, 0.1],
        "log {:?}",
        sol.log
    );
    assert!(sol.comp_residual <= 1e-9, "{}", sol.comp_residual);
    assert!(sol.terminal_error <= 1e-6, "{}", sol.terminal_error);
    let clearance = hop.min_obstacle_clearance(&sol.traj.y).expect("a hole");
    assert!(clearance >= -1e-9, "{clearance}");
    assert_eq!(
        sol.nlp_iterations,
        sol.log.iter().map(|l| l.iterations).sum::<usize>()
    );
}

/// A growth stage that cannot be solved (here: its system cannot be built above scale
/// 0.3) is bisected between the last solved scale and the failing one; when no bisection
/// is left the error carries the failing and the last solved scale, the last converged
/// point (which solves the stage of the solved scale) and the log of every phase run.
#[test]
fn a_failing_growth_stage_is_bisected_and_the_failure_keeps_the_last_point() {
    use nonsmooth_ocp::smoothing::{solve_ocp_with_growth, Growth};
    use nonsmooth_ocp::OcpError;
    use std::sync::{Arc, Mutex};

    let (hop, hz, o) = short_growth_problem();
    let asked = Arc::new(Mutex::new(vec![]));
    let (base, seen) = (hop.clone(), asked.clone());
    let growth = Growth {
        scales: vec![0.0, 0.5],
        system: Arc::new(move |s| {
            seen.lock().expect("lock").push(s);
            if s > 0.3 {
                return Err(OcpError::InvalidInput(format!("no system at scale {s}")));
            }
            Ok(stabilized(base.with_obstacle_scale(s)?))
        }),
        factors: vec![1.0, 0.1],
        bisections: 2,
        close_stages: true,
    };
    let tf = stabilized(hop);
    let e = solve_ocp_with_growth(&tf, &hz, &o, &growth).expect_err("growth cannot finish");
    assert_eq!(
        *asked.lock().expect("lock"),
        vec![0.0, 0.5, 0.25, 0.5, 0.375]
    );
    let OcpError::GrowthStalled {
        scale,
        solved,
        ref error,
        ref x,
        ref log,
    } = e
    else {
        panic!("{e}");
    };
    assert_eq!((scale, solved), (0.375, 0.25));
    assert!(
        error.to_string().contains("no system at scale 0.375"),
        "{error}"
    );
    let phases: Vec<f64> = log.iter().map(|l| l.sigma).collect();
    assert_eq!(phases, [10.0, 1.0, 0.1, 0.1, 1.0, 0.1, 0.1], "{log:?}");
    let (_, _, trivial) = nonsmooth_ocp::fesd::build(&tf, &hz, &o).expect("NLP");
    assert_eq!(x.len(), trivial.len());
    assert_eq!(e.last_iterate().map(<[f64]>::len), Some(x.len()));
    assert!(e.to_string().contains("scale 0.375"), "{e}");
}

/// The homotopy's first NLP after the hole growth, limited to 2 IPOPT iterations (the phase's
/// NLPs to 3000), fails: far below any path from the smoothed point to complementarity
/// ≤ 1e-14. The error is a stalled homotopy that carries the smoothed point and the log of
/// every phase with the failed NLP last.
#[test]
fn a_failing_first_homotopy_nlp_after_the_growth_keeps_the_smoothed_point() {
    use nonsmooth_ocp::smoothing::{solve_ocp_with_growth, Growth};
    use nonsmooth_ocp::OcpError;
    use std::sync::Arc;

    let (hop, hz, o) = short_growth_problem();
    let mut smoothing = o.mpcc.smoothing.clone().expect("smoothing phase");
    smoothing.max_iter = Some(3000);
    let o = {
        let mut o = o;
        o.mpcc.sigma0 = 1e-14;
        o.nlp.max_iter = 2;
        o.mpcc.polish = false;
        o.mpcc.smoothing = Some(smoothing);
        o
    };
    let base = hop.clone();
    let growth = Growth {
        scales: vec![0.0],
        system: Arc::new(move |s| Ok(stabilized(base.with_obstacle_scale(s)?))),
        factors: vec![0.1],
        bisections: 0,
        close_stages: false,
    };
    let e = solve_ocp_with_growth(&stabilized(hop), &hz, &o, &growth).expect_err("fails");
    let OcpError::HomotopyStalled {
        comp_residual,
        constraint_violation,
        ref log,
        ..
    } = e
    else {
        panic!("{e}");
    };
    let last = log.last().expect("log");
    assert_eq!(last.sigma, o.mpcc.sigma0, "{log:?}");
    assert_eq!(last.iterations, 2, "{log:?}");
    assert!(last.status != nonsmooth_ocp::ipopt::IpoptStatus::Succeeded);
    assert!(log.len() >= 4, "{log:?}");
    assert!(
        comp_residual.is_finite() && constraint_violation < 1e-6,
        "{e}"
    );
}

/// The same NLP solved twice gives the same point to the last bit: the six-element hopper
/// over the three holes (2000+ variables), a few IPOPT iterations. With MUMPS's automatic
/// ordering (SCOTCH, randomized) the two points differ by ≈ 1e-10 after one iteration
/// ([`nonsmooth_ocp::ipopt::MUMPS_PIVOT_ORDER`]).
#[test]
fn the_same_solve_twice_gives_the_same_point() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/ocp_hopper_holes6.toml"
    ))
    .unwrap();
    let cut = text.find("[fesd.smoothing]").unwrap();
    // without the smoothing phase (and so without the hole growth)
    let text: String = text[..cut]
        .replace("max_iter = 3000", "max_iter = 5")
        .replace("n_homotopy = 40", "n_homotopy = 1")
        .lines()
        .filter(|l| !l.starts_with("obstacle_growth"))
        .map(|l| format!("{l}\n"))
        .collect();
    let p = common::parse_in_examples(&text);
    let solve = || match nonsmooth_ocp::fesd::solve_ocp(&p.tf, &p.horizon, &p.options) {
        Ok(sol) => sol.x,
        Err(e) => e
            .last_iterate()
            .expect("a failure with its iterate")
            .to_vec(),
    };
    let (a, b) = (solve(), solve());
    assert!(a.len() > 2000, "{} variables", a.len());
    let differing = a
        .iter()
        .zip(&b)
        .filter(|(x, y)| x.to_bits() != y.to_bits())
        .count();
    assert_eq!(differing, 0, "{differing} of {} entries differ", a.len());
}
