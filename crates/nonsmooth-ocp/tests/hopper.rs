//! The planar hopper of seed 002 Sec. 6: its Lagrangian dynamics conserve energy up to the
//! actuator power, and its contact normal/tangent are the gradients of the foot position.

use nonsmooth_ocp::hopper::Hopper;
use nonsmooth_ocp::nlp::Real;
use nonsmooth_ocp::tf::Cls;
use num_dual::Dual64;

fn energy<T: Real>(h: &Hopper, q: &[T], v: &[T]) -> T {
    let m = h.mass_matrix(q);
    let mut e = T::from(0.0);
    for r in 0..4 {
        for c in 0..4 {
            e += v[r] * m[r][c] * v[c] * T::from(0.5);
        }
    }
    // potential: Σ m_i g z_i with the centres of mass
    let (a1, a2) = (q[2], q[2] + q[3]);
    let zt = q[1] - a1.cos() * h.s_thigh;
    let zs = q[1] - a1.cos() * h.l_thigh - a2.cos() * h.s_shank;
    e + (q[1] * h.m_hip + zt * h.m_thigh + zs * h.m_shank) * h.gravity
}

#[test]
fn energy_rate_equals_actuator_power() {
    let h = Hopper::default();
    let q = [0.3f64, 0.45, 0.4, -0.7];
    let v = [0.8f64, -0.3, 1.7, -2.2];
    let u = [5.0f64, -3.0];
    let vdot = h.f_v(&q, &v, 0.0, &u);
    // dE/dt = ∂E/∂q · v + ∂E/∂v · v̇ by dual numbers
    let mut rate = 0.0;
    for i in 0..4 {
        let mut qd: Vec<Dual64> = q.iter().map(|x| Dual64::from(*x)).collect();
        let vd: Vec<Dual64> = v.iter().map(|x| Dual64::from(*x)).collect();
        qd[i].eps = 1.0;
        rate += energy(&h, &qd, &vd).eps * v[i];
        let qd: Vec<Dual64> = q.iter().map(|x| Dual64::from(*x)).collect();
        let mut vd: Vec<Dual64> = v.iter().map(|x| Dual64::from(*x)).collect();
        vd[i].eps = 1.0;
        rate += energy(&h, &qd, &vd).eps * vdot[i];
    }
    let power = u[0] * v[2] + u[1] * v[3];
    assert!((rate - power).abs() < 1e-10, "{rate} vs {power}");
}

#[test]
fn normal_and_tangent_are_foot_gradients() {
    let h = Hopper::default();
    let q = [0.1f64, 0.38, -0.5, 0.9];
    let n = h.normal(&q);
    let b = h.tangent(&q);
    for i in 0..4 {
        let mut qd: Vec<Dual64> = q.iter().map(|x| Dual64::from(*x)).collect();
        qd[i].eps = 1.0;
        let f = h.foot(&qd);
        assert!((f[1].eps - n[i]).abs() < 1e-14);
        assert!((f[0].eps - b[i]).abs() < 1e-14);
    }
    // the nominal stance has the foot on the ground, outside the holes (width 0.5: the
    // first hole spans x ∈ [0.25, 0.75])
    let q0 = [0.0f64, 0.4, 0.0, 0.0];
    assert!(h.f_c(&q0).abs() < 1e-15);
    let holes = h.hole_values(&q0);
    assert!((holes[0] - 4.0).abs() < 1e-12 && holes[1] > 1.0 && holes[2] > 1.0);
    let q_edge = [0.25f64, 0.4, 0.0, 0.0];
    assert!((h.hole_values(&q_edge)[0] - 1.0).abs() < 1e-12);
}

/// Explicit RK4 of the smooth flight ODE q' = v, v' = M⁻¹(f_v + Bu) with u = 0.
fn rk4_flight(h: &Hopper, y0: &[f64], t_end: f64, n: usize) -> Vec<f64> {
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
    use nonsmooth_ocp::tf::TimeFreezing;
    use std::sync::Arc;

    let hop = Hopper::default();
    let q0 = [0.0, 0.5, 0.3, -0.6];
    assert!(hop.knee(&q0)[0] < -0.05);
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
        assert!((r[1] - (0.5 - 0.5 * hop.gravity * tau * tau)).abs() < 1e-12);
        assert!((r[2] - 0.3).abs() < 1e-12 && r[6].abs() < 1e-12);
        assert!((y[8] - tau).abs() < 1e-9, "clock {} at τ = {tau}", y[8]);
        assert!(th.is_nan() || (th - 1.0).abs() < 1e-12);
        assert!(hop.f_c(&y[..4]) > 0.05);
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
    use nonsmooth_ocp::hopper;
    use nonsmooth_ocp::tf::TimeFreezing;
    use std::sync::Arc;

    let hop = Hopper {
        holes: vec![0.5],
        ..Hopper::default()
    };
    let tf = Arc::new(TimeFreezing::new(hop, 200.0).expect("time-freezing system"));
    let hz = hopper::horizon(4, 2.5, 0.0, 60.0, 5.0);
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
        let mut o = hopper::paper_options();
        o.discretization.n_s = 1;
        o.discretization.n_fe = 2;
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
    let h = Hopper::default();
    let qe = [0.1f64, 0.36, -0.5, 0.9];
    let n = h.normal(&qe);
    // a rotation of the hip about the standing foot: Δφ_h = 0.2, Δφ_k chosen with nᵀΔ = 0
    // (and Δq_z = 0, Δq_x = 0)
    let dh = 0.2;
    let dk = -n[2] * dh / n[3];
    let d = [0.0, 0.0, dh, dk];
    assert!(n.iter().zip(&d).map(|(a, b)| a * b).sum::<f64>().abs() < 1e-15);
    let qs: Vec<f64> = qe.iter().zip(&d).map(|(q, d)| q - d).collect();
    let drop = h.f_c(&qs) - h.f_c(&qe);
    // ½ ΔᵀHΔ with H = l_t cos φ_h e_h e_hᵀ + l_s cos(φ_h + φ_k)(e_h + e_k)(e_h + e_k)ᵀ
    let (a1, a2) = (qe[2], qe[2] + qe[3]);
    let quad = 0.5 * (h.l_thigh * a1.cos() * dh * dh + h.l_shank * a2.cos() * (dh + dk).powi(2));
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
    use nonsmooth_ocp::tf::TimeFreezing;
    use nonsmooth_ocp::OcpError;
    use std::sync::Arc;

    let hop = Hopper::default();
    let (ph, pk) = (0.3, -0.6);
    let qz = hop.l_thigh * f64::cos(ph) + hop.l_shank * f64::cos(ph + pk);
    let y0 = [0.0, qz, ph, pk, 0.0, 0.0, 0.0, 0.0, 0.0];
    assert!(hop.f_c(&y0[..4]).abs() < 1e-15);
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
    let foot_x0 = hop.foot(&y0[..4])[0];
    let mut prev_t = 0.0;
    for y in &sim.traj.y {
        let fc: f64 = hop.f_c(&y[..4]);
        assert!(fc <= 1e-12 && fc >= -1.05 * depth, "f_c = {fc}");
        assert!(
            (hop.foot(&y[..4])[0] - foot_x0).abs() < 1e-6,
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
    use nonsmooth_ocp::tf::TimeFreezing;

    let hop = Hopper::default();
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

/// The hopper with a stabilized stance (k = 30 /s, δ = [`GROWTH_DEPTH`]) and a_n = 200.
fn stabilized(h: Hopper) -> std::sync::Arc<nonsmooth_ocp::tf::TimeFreezing<Hopper>> {
    std::sync::Arc::new(
        nonsmooth_ocp::tf::TimeFreezing::new(h, 200.0)
            .and_then(|t| t.with_stance_stabilization(30.0, GROWTH_DEPTH))
            .expect("time-freezing system"),
    )
}

/// A short hole-growth problem: 4 intervals of a 0.5 s horizon, target = the start pose,
/// one hole next to the foot, n_s = 1, N_FE = 2, smoothing widths × 10, 1, 0.1.
fn short_growth_problem() -> (
    Hopper,
    nonsmooth_ocp::fesd::Horizon,
    nonsmooth_ocp::fesd::FesdOptions,
) {
    use nonsmooth_ocp::fesd::Clock;
    use nonsmooth_ocp::hopper;
    use nonsmooth_ocp::smoothing::Smoothing;
    let hop = Hopper {
        holes: vec![0.3],
        ..Hopper::default()
    };
    let t_end = 0.5;
    let mut hz = hopper::horizon(4, t_end, 0.0, 60.0, 5.0);
    hz.clock = Clock::Terminal(t_end);
    hz.control_weight = 1.0;
    hz.global_speed = true;
    hopper::rest_on_stabilized_ground(&mut hz, GROWTH_DEPTH);
    let mut o = hopper::paper_options();
    o.discretization.n_s = 1;
    o.discretization.n_fe = 2;
    o.mpcc.sigma0 = 1e-3;
    o.mpcc.smoothing = Some(Smoothing {
        widths: vec![1e-3, 0.05, 0.05],
        factors: vec![10.0, 1.0, 0.1],
        lambda_weight: 1e-3,
        cross_sigmas: vec![],
        terminal_weight: 100.0,
        max_iter: None,
    });
    (hop, hz, o)
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
        system: Arc::new(move |s| Ok(stabilized(base.with_hole_scale(s)))),
        factors: vec![1.0, 0.1],
        bisections: 0,
        close_stages: false,
    };
    assert!(growth.stage(0).unwrap().cls.holes.is_empty());
    assert_eq!(growth.stage(1).unwrap().cls.hole_axes, (0.125, 0.05));
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
    let clearance = sol
        .traj
        .y
        .iter()
        .flat_map(|y| hop.hole_values(y))
        .fold(f64::INFINITY, f64::min);
    assert!(clearance >= 1.0 - 1e-9, "{clearance}");
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
            Ok(stabilized(base.with_hole_scale(s)))
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
        system: Arc::new(move |s| Ok(stabilized(base.with_hole_scale(s)))),
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
        .replace("max_iter = 3000", "max_iter = 5\nn_homotopy = 1")
        .lines()
        .filter(|l| !l.starts_with("hole_growth"))
        .map(|l| format!("{l}\n"))
        .collect();
    let p = match nonsmooth_ocp::problem::Problem::from_toml_str(&text, None) {
        Ok(nonsmooth_ocp::problem::Problem::Hopper(p)) => p,
        other => panic!("not a hopper problem: {:?}", other.err()),
    };
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
