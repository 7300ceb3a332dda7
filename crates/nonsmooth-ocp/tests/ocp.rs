//! Particle OCP of Nurkanović et al. Ex. 5 (frictionless sanity variant of E5,
//! docs/decisions/002-time-freezing.md).

use crate::common;

use std::sync::Arc;

use common::G;
use nonsmooth_ocp::fesd::{
    solve_ocp, Discretization, FesdOptions, Horizon, MpccStrategy, NlpSettings, Scheme,
};
use nonsmooth_ocp::time_freezing::TimeFreezing;

/// Discrete optimum of min Σ Δ u_k² s.t. q(T) = 3, v(T) = 0 for a double integrator with
/// piecewise-constant u on N intervals of length Δ (minimum-norm solution).
fn discrete_optimum(n: usize, t: f64) -> f64 {
    let grid: Vec<f64> = (0..=n).map(|k| t * k as f64 / n as f64).collect();
    grid_optimum(&grid)
}

/// Discrete optimum of min Σ Δ_k u_k² s.t. q(T) = 3, v(T) = 0 for a double integrator with
/// piecewise-constant u on the intervals [t_k, t_{k+1}] of `grid` (T = its last entry).
fn grid_optimum(grid: &[f64]) -> f64 {
    let t = grid[grid.len() - 1];
    // row k of A: the effect of u_k on (q(T), v(T)); minimize Σ Δ_k u_k² s.t. A u = b:
    // u = W⁻¹Aᵀ (A W⁻¹ Aᵀ)⁻¹ b with W = diag(Δ), cost bᵀ (A W⁻¹ Aᵀ)⁻¹ b
    let mut m = [[0.0; 2]; 2];
    for w in grid.windows(2) {
        let d = w[1] - w[0];
        if d < 1e-12 {
            // a frozen interval: its control has no effect and no cost
            continue;
        }
        let r = [d * (t - w[1]) + 0.5 * d * d, d];
        for i in 0..2 {
            for j in 0..2 {
                m[i][j] += r[i] * r[j] / d;
            }
        }
    }
    let det = m[0][0] * m[1][1] - m[0][1] * m[1][0];
    let b = [3.0, 0.0];
    let y = [
        (m[1][1] * b[0] - m[0][1] * b[1]) / det,
        (m[0][0] * b[1] - m[1][0] * b[0]) / det,
    ];
    b[0] * y[0] + b[1] * y[1]
}

/// The particle OCP of Ex. 5 (frictionless, `examples/particle.toml` with its horizontal
/// force): time-freezing system and horizon (N = 20).
fn particle(n: usize) -> (Arc<TimeFreezing>, Horizon) {
    let tf = Arc::new(TimeFreezing::new(common::particle(None), G).unwrap());
    let hz = Horizon {
        y0: vec![0.0, 1.0, 0.0, 0.0, 0.0],
        lam0: None,
        n_steps: n,
        step_len: 2.0 / n as f64,
        u_bounds: vec![(vec![-10.0], vec![10.0]); n],
        s_bounds: (1.0, 10.0),
        clock: nonsmooth_ocp::fesd::Clock::Stagewise(2.0),
        global_speed: false,
        terminal: vec![(0, 3.0), (1, 0.0), (2, 0.0), (3, 0.0)],
        y_bounds: None,
        control_weight: 2.0 / n as f64,
        tracking: vec![],
        initial_guess: None,
    };
    (tf, hz)
}

#[test]
fn particle_ocp_reaches_target_with_discrete_optimal_cost() {
    let n = 20;
    let (tf, hz) = particle(n);
    let o = {
        let mut o = FesdOptions::default();
        o.discretization.n_s = 2;
        o
    };
    let sol = solve_ocp(&tf, &hz, &o).unwrap();
    let exact = discrete_optimum(n, 2.0);
    if std::env::var("FESD_DEBUG").is_ok() {
        for (t, (y, th)) in sol
            .traj
            .tau
            .iter()
            .zip(sol.traj.y.iter().zip(&sol.traj.theta1))
            .take(40)
        {
            eprintln!("{t:.5} {y:.6?} th {th:.4}");
        }
        eprintln!("u {:?}", sol.u.iter().map(|u| u[0]).collect::<Vec<_>>());
    }
    eprintln!(
        "objective {} (discrete optimum {exact}) comp {} term {} iters {} cpu {} s {:?}",
        sol.objective,
        sol.comp_residual,
        sol.terminal_error,
        sol.nlp_iterations,
        sol.cpu_seconds,
        sol.s
    );
    assert!((exact - 13.5).abs() < 0.2);
    // with N_FE = 3 the frozen jump does not fit into one element of the impact interval, so
    // the solution has a mixed jump → sliding element (no sign change of c, so cross
    // complementarity allows it) whose collocation error lowers the objective by 0.0265
    // (13.5073; see four_elements_put_the_jump_end_on_an_element_boundary and
    // docs/optimal-control.md, "Limitations")
    assert!((sol.objective - exact).abs() < 0.05);
    assert!(sol.u[0][0] > 4.0 && sol.u[19][0] < -4.0);
    // speed of time compensates γ = 1/2 on the contact intervals
    for k in 6..20 {
        assert!((sol.s[k] - 2.0).abs() < 1e-6, "s_{k} = {}", sol.s[k]);
    }
    assert!(sol.terminal_error < 1e-6);
    assert!(sol.comp_residual < 1e-9);
}

#[test]
fn terminal_clock_with_one_speed_of_time_is_optimal_on_its_own_grid() {
    // the authors' hopper setting (nosnoc stagewise_clock_constraint = 0, one speed of time):
    // only t(T̃) = T, so the control intervals last what the solution gives them, and the
    // running cost is Σ ‖u_k‖² (t_{k+1} − t_k). The horizontal motion is the double
    // integrator on that grid, so a solution must have the grid's discrete optimum as cost.
    // Gauss–Legendre (n_s = 2): Radau IIA puts the jump end inside an element of the impact
    // interval (the mixed element of the stagewise problem) and lands 0.0024 below it.
    let n = 20;
    let (tf, mut hz) = particle(n);
    hz.clock = nonsmooth_ocp::fesd::Clock::Terminal(2.0);
    hz.global_speed = true;
    hz.control_weight = 1.0;
    let o = {
        let mut o = FesdOptions::default();
        o.discretization.n_s = 2;
        o.discretization.scheme = Scheme::GaussLegendre;
        o
    };
    let sol = solve_ocp(&tf, &hz, &o).unwrap();
    let grid = &sol.interval_clock;
    eprintln!(
        "terminal clock: objective {} (own grid {}, uniform {}) comp {} s {} grid {grid:.4?}",
        sol.objective,
        grid_optimum(grid),
        discrete_optimum(n, 2.0),
        sol.comp_residual,
        sol.s[0]
    );
    assert!(sol.comp_residual <= 1e-9);
    assert!(sol.terminal_error < 1e-6);
    assert!((grid[n] - 2.0).abs() < 1e-9 && grid[0] == 0.0);
    assert!(grid.windows(2).all(|w| w[1] >= w[0] - 1e-12));
    assert!(sol.s.iter().all(|&s| s == sol.s[0]) && sol.s[0] > 1.0);
    assert!(
        (sol.objective - grid_optimum(grid)).abs() < 1e-6 * sol.objective,
        "{} vs {}",
        sol.objective,
        grid_optimum(grid)
    );
}

#[test]
fn gauss_legendre_particle_ocp_converges_to_the_discrete_optimum() {
    // Gauss–Legendre n_s = 2 (order 4), the paper's N = 20, N_FE = 3: solve_ocp runs the
    // Scholtes homotopy (the ℓ1 penalty stalls at 0.2152 in an "air braking" local minimum)
    let n = 20;
    let (tf, hz) = particle(n);
    let o = {
        let mut o = FesdOptions::default();
        o.discretization.n_s = 2;
        o.discretization.scheme = Scheme::GaussLegendre;
        o
    };
    let sol = solve_ocp(&tf, &hz, &o).unwrap();
    let exact = discrete_optimum(n, 2.0);
    eprintln!(
        "GL objective {} (discrete optimum {exact}) comp {} term {} iters {} NLPs {} s {:?}",
        sol.objective,
        sol.comp_residual,
        sol.terminal_error,
        sol.nlp_iterations,
        sol.log.len(),
        sol.s
    );
    assert!(sol.comp_residual <= 1e-9);
    assert!(sol.terminal_error < 1e-6);
    // measured: 13.5338346 = the exact discrete optimum to 1e-8; Radau IIA (n_s = 2) gives
    // 13.5073157 (0.0265 lower, its mixed jump → sliding element; the Radau test above
    // allows 0.05), so the two schemes agree to within that tolerance
    assert!((sol.objective - exact).abs() < 1e-6, "{}", sol.objective);
    assert!(sol.u[0][0] > 4.0 && sol.u[19][0] < -4.0);
    for k in 5..20 {
        assert!((sol.s[k] - 2.0).abs() < 1e-6, "s_{k} = {}", sol.s[k]);
    }
}

#[test]
fn four_elements_put_the_jump_end_on_an_element_boundary() {
    // With N_FE = 3 the impact interval (s = 6, forced by the clock constraint: flight
    // 0.0515 + jump 0.4515 + sliding 2 · 0.0485 = 0.6 = s T/N) cannot hold the frozen jump
    // in one element (s h ≤ 6 · 1.99 h̄ = 0.398 < 0.4515), so every exact FESD solution has a
    // mixed jump → sliding element (Radau: objective 13.5073 < the discrete optimum). With
    // N_FE = 4 the structure flight | jump | jump | sliding exists; the Scholtes homotopy with
    // the α₁ bias 0.1 (sliding on α₂, which cross complementarity keeps out of jump elements)
    // finds it and the objective is the discrete optimum.
    let n = 20;
    let (tf, hz) = particle(n);
    let o = {
        let mut o = FesdOptions::default();
        o.discretization.n_s = 2;
        o.discretization.n_fe = 4;
        o.mpcc.penalty = false;
        o.discretization.alpha_bias = 0.1;
        o
    };
    let sol = solve_ocp(&tf, &hz, &o).unwrap();
    let exact = discrete_optimum(n, 2.0);
    eprintln!(
        "N_FE = 4: objective {} (discrete optimum {exact}) comp {} NLPs {}",
        sol.objective,
        sol.comp_residual,
        sol.log.len()
    );
    assert!(sol.comp_residual <= 1e-9);
    assert!(sol.terminal_error < 1e-6);
    assert!((sol.objective - exact).abs() < 1e-6, "{}", sol.objective);
    // the jump end (v₂ reaches 0 with q₂ = 0 and the clock at the impact time) is an element
    // boundary: some trajectory point there has θ₁ = 0 before and the next stage θ₁ = 1/2
    let t_imp = (2.0 / G).sqrt();
    let tr = &sol.traj;
    let k = (1..tr.y.len())
        .find(|&i| tr.y[i][1].abs() < 1e-9 && tr.y[i][3].abs() < 1e-9 && tr.theta1[i] < 1e-9)
        .expect("jump end");
    assert!((tr.y[k][4] - t_imp).abs() < 1e-9, "t = {}", tr.y[k][4]);
    assert!(
        (tr.theta1[k + 1] - 0.5).abs() < 1e-6,
        "θ₁ = {}",
        tr.theta1[k + 1]
    );
}

/// Continuation in the terminal position (`continuation::solve_by_terminal_continuation`):
/// x(T) = 3 (Ex. 5) from the trivial initialization, then 3.5 and 4 warm-started with
/// σ₀ = 1e-2. Every waypoint is solved with exact complementarity, and the last one ends at
/// the same solution as the direct solve of x(T) = 4.
#[test]
fn terminal_continuation_reaches_the_direct_solution() {
    use nonsmooth_ocp::continuation::{
        solve_by_terminal_continuation, ContinuationMode, ContinuationPlan,
    };
    let (tf, hz) = particle(20);
    let o = {
        let mut o = FesdOptions::default();
        o.discretization.n_s = 2;
        o
    };
    let mut far = hz.clone();
    far.terminal[0].1 = 4.0;
    let direct = solve_ocp(&tf, &far, &o).unwrap();
    let waypoints: Vec<Vec<(usize, f64)>> = [3.0, 3.5, 4.0]
        .iter()
        .map(|&x| vec![(0, x), (1, 0.0), (2, 0.0), (3, 0.0)])
        .collect();
    let mut reported = vec![];
    let plan = ContinuationPlan::through(waypoints.clone(), 1e-2).unwrap();
    let run = solve_by_terminal_continuation(&tf, &hz, &o, &plan, &mut |w, s| {
        reported.push((w, s.objective))
    })
    .unwrap();
    assert_eq!(reported.iter().map(|r| r.0).collect::<Vec<_>>(), [0, 1, 2]);
    assert!(
        run.failure.is_none(),
        "{:?}",
        run.failure.map(|f| (f.0, f.1.to_string()))
    );
    assert_eq!(run.solutions.len(), 3);
    for (sol, w) in run.solutions.iter().zip(&waypoints) {
        assert!(sol.comp_residual < 1e-9, "{:.2e}", sol.comp_residual);
        assert!(sol.terminal_error < 1e-6);
        let end = &sol.traj.y[sol.traj.y.len() - 1];
        assert!((end[0] - w[0].1).abs() < 1e-6);
    }
    let last = &run.solutions[2];
    eprintln!(
        "continuation objective {} (direct {}), warm NLPs {} / {}",
        last.objective,
        direct.objective,
        run.solutions[1].log.len(),
        run.solutions[2].log.len()
    );
    assert!((last.objective - direct.objective).abs() < 1e-6 * direct.objective);
    // bad input is a named error, not a panic
    for (w, s0) in [
        (vec![], 1e-2),
        (vec![vec![(9, 1.0)]], 1e-2),
        (waypoints.clone(), 0.0),
    ] {
        let plan = ContinuationPlan {
            waypoints: w,
            warm_sigma0: s0,
            mode: ContinuationMode::Homotopy,
            local_speed_after_first: false,
        };
        let e = solve_by_terminal_continuation(&tf, &hz, &o, &plan, &mut |_, _| {}).unwrap_err();
        assert!(e.to_string().contains("continuation"), "{e}");
    }
}

/// Why a continuation: the particle moved only to x(T) = 1 stalls from the trivial
/// initialization (the first relaxed NLP brakes the fall on the auxiliary field in the air,
/// complementarity 0.215), while the continuation 3 → 1 solves it exactly.
#[test]
fn continuation_solves_a_target_the_direct_homotopy_misses() {
    use nonsmooth_ocp::continuation::{solve_by_terminal_continuation, ContinuationPlan};
    let (tf, mut hz) = particle(20);
    let o = {
        let mut o = FesdOptions::default();
        o.discretization.n_s = 2;
        o
    };
    hz.terminal[0].1 = 1.0;
    match solve_ocp(&tf, &hz, &o) {
        Err(nonsmooth_ocp::OcpError::HomotopyStalled { comp_residual, .. }) => {
            eprintln!("direct x(T) = 1 stalls at {comp_residual:.3e}");
            assert!(comp_residual > 1e-3);
        }
        other => panic!(
            "expected the direct solve to stall: {:?}",
            other.map(|s| s.comp_residual)
        ),
    }
    let waypoints: Vec<Vec<(usize, f64)>> = [3.0, 1.0]
        .iter()
        .map(|&x| vec![(0, x), (1, 0.0), (2, 0.0), (3, 0.0)])
        .collect();
    let plan = ContinuationPlan::through(waypoints, 1e-2).unwrap();
    let run = solve_by_terminal_continuation(&tf, &hz, &o, &plan, &mut |_, _| {}).unwrap();
    assert!(run.failure.is_none());
    let sol = &run.solutions[1];
    assert!(sol.comp_residual < 1e-9 && sol.terminal_error < 1e-6);
    let end = &sol.traj.y[sol.traj.y.len() - 1];
    assert!((end[0] - 1.0).abs() < 1e-6 && end[1].abs() < 1e-6);
}

/// The active-set continuation ([`ContinuationMode::ActiveSet`]): x(T) = 3 from the trivial
/// initialization, then 4 and 1 each as one smooth NLP on the previous solution's active set.
/// The particle's fall, impact and sliding do not depend on u₁, so the contact sequence of
/// x(T) = 3 is that of every target: each waypoint is exact and equals the homotopy's
/// solution (the direct solve for 4, the homotopy continuation for 1, whose direct solve
/// stalls).
#[test]
fn active_set_continuation_keeps_the_contact_sequence_exact() {
    use nonsmooth_ocp::continuation::{
        solve_by_terminal_continuation, ContinuationMode, ContinuationPlan,
    };
    let (tf, hz) = particle(20);
    let o = {
        let mut o = FesdOptions::default();
        o.discretization.n_s = 2;
        o
    };
    let target = |x: f64| vec![(0, x), (1, 0.0), (2, 0.0), (3, 0.0)];
    let waypoints = vec![target(3.0), target(4.0), target(1.0)];
    let run_in = |mode| {
        let plan = ContinuationPlan::through(waypoints.clone(), 1e-2)
            .unwrap()
            .with_mode(mode);
        solve_by_terminal_continuation(&tf, &hz, &o, &plan, &mut |_, _| {}).unwrap()
    };
    let active = run_in(ContinuationMode::ActiveSet);
    let homotopy = run_in(ContinuationMode::Homotopy);
    assert!(active.failure.is_none() && homotopy.failure.is_none());
    for (w, (a, h)) in active.solutions.iter().zip(&homotopy.solutions).enumerate() {
        eprintln!(
            "waypoint {w}: active set {:.9} ({} NLPs, {} iterations), homotopy {:.9} ({} NLPs, {} iterations)",
            a.objective,
            a.log.len(),
            a.nlp_iterations,
            h.objective,
            h.log.len(),
            h.nlp_iterations
        );
        assert!(a.comp_residual < 1e-12, "{:.2e}", a.comp_residual);
        assert!(a.terminal_error < 1e-6);
        assert!((a.objective - h.objective).abs() < 1e-6 * h.objective);
    }
    // the warm waypoints are smooth NLPs: one each, σ = 0 in the log
    for a in &active.solutions[1..] {
        assert!(a.log.iter().all(|l| l.sigma == 0.0), "{:?}", a.log);
    }
}

/// `local_speed_after_first`: the first waypoint with one speed of time for the horizon
/// (terminal clock), the next ones with one speed per interval, warm-started from the
/// first solution carried over to the larger NLP (`fesd::transfer_point`). The
/// per-interval problem contains the global one (equal speeds), so its solution is exact and
/// not more expensive than the global-speed solution of the same target.
#[test]
fn continuation_frees_the_speed_of_time_after_the_first_waypoint() {
    use nonsmooth_ocp::continuation::{solve_by_terminal_continuation, ContinuationPlan};
    let (tf, mut hz) = particle(20);
    hz.clock = nonsmooth_ocp::fesd::Clock::Terminal(2.0);
    hz.global_speed = true;
    hz.control_weight = 1.0;
    let o = {
        let mut o = FesdOptions::default();
        o.discretization.n_s = 2;
        o.discretization.scheme = Scheme::GaussLegendre;
        o
    };
    let target = |x: f64| vec![(0, x), (1, 0.0), (2, 0.0), (3, 0.0)];
    let waypoints = vec![target(3.0), target(3.0), target(3.5)];
    let global = ContinuationPlan::through(waypoints.clone(), 1e-2).unwrap();
    let local = ContinuationPlan {
        local_speed_after_first: true,
        ..global.clone()
    };
    let run = |plan: &ContinuationPlan| {
        let r = solve_by_terminal_continuation(&tf, &hz, &o, plan, &mut |_, _| {}).unwrap();
        assert!(
            r.failure.is_none(),
            "{:?} local {}",
            r.failure.map(|f| (f.0, f.1.to_string())),
            plan.local_speed_after_first
        );
        r.solutions
    };
    let (g, l) = (run(&global), run(&local));
    for (a, b) in g.iter().zip(&l) {
        eprintln!(
            "global speed {:.9} (s {:.3?}), local speeds {:.9} (s {:.3?})",
            a.objective,
            &a.s[..4],
            b.objective,
            &b.s[..4]
        );
        assert!(b.comp_residual < 1e-9 && b.terminal_error < 1e-6);
        assert!(b.objective <= a.objective + 1e-6 * a.objective);
    }
    // the per-interval speeds re-time the grid (measured: 13.5419 against 13.5529 at x = 3)
    for (a, b) in g.iter().zip(&l).skip(1) {
        assert!(b.objective < a.objective - 1e-4);
    }
    // the first waypoint is the same global-speed solve in both runs
    assert!((g[0].objective - l[0].objective).abs() < 1e-12);
    assert!(l[0].s.iter().all(|s| (s - l[0].s[0]).abs() < 1e-12));
    // afterwards each interval has its own speed variable
    assert!(l[1].x.len() > g[1].x.len());
}

#[test]
fn smoothing_phase_then_homotopy_reaches_the_exact_particle_solution() {
    let n = 20;
    let (tf, hz) = particle(n);
    let base = {
        let mut o = FesdOptions::default();
        o.discretization.n_s = 2;
        o
    };
    let direct = solve_ocp(&tf, &hz, &base).unwrap();
    let o = {
        let mut o = base;
        o.mpcc.smoothing = Some(nonsmooth_ocp::smoothing::Smoothing {
            widths: vec![1e-2, 1e-1],
            factors: vec![100.0, 10.0, 1.0, 0.1, 0.01],
            lambda_weight: 1e-3,
            cross_sigmas: vec![],
            terminal_weight: 100.0,
            max_iter: None,
        });
        o.mpcc.sigma0 = 1e-4;
        o.nlp.max_iter = 3000;
        o.nlp.verbose = true;
        o
    };
    let sol = match solve_ocp(&tf, &hz, &o) {
        Ok(s) => s,
        Err(e) => panic!("{}", e.to_string().chars().take(300).collect::<String>()),
    };
    eprintln!(
        "smoothed start: objective {} (direct {}) comp {} log {:?}",
        sol.objective, direct.objective, sol.comp_residual, sol.log
    );
    assert!(sol.comp_residual < 1e-9);
    assert!(sol.terminal_error < 1e-6);
    assert!((sol.objective - direct.objective).abs() < 1e-6);
}

/// `MpccStrategy::homotopy_retries`: a Scholtes step that fails (here by a small IPOPT
/// iteration limit and a large step κ = 1e-4) is retried from the last converged point with
/// the step's square root, σ = √(σ_ok σ_failed), instead of ending the homotopy there, and
/// the homotopy then goes on much further than without the retry.
#[test]
fn a_failed_homotopy_step_is_retried_with_the_square_root_step() {
    use nonsmooth_ocp::ipopt::IpoptStatus;
    let (tf, hz) = particle(20);
    let o = FesdOptions {
        discretization: Discretization::builder().n_s(2).build().unwrap(),
        mpcc: MpccStrategy::builder()
            .penalty(false)
            .kappa(1e-4)
            .polish(false)
            .accept_relaxed(true)
            .homotopy_retries(2)
            .build()
            .unwrap(),
        // σ = 1 converges in 212 iterations, the step to σ = 1e-4 needs 366
        nlp: NlpSettings::builder().max_iter(300).build().unwrap(),
    };
    let sol = solve_ocp(&tf, &hz, &o).expect("relaxed solution");
    let ok = |s: IpoptStatus| matches!(s, IpoptStatus::Succeeded | IpoptStatus::Acceptable);
    let failed = sol
        .log
        .iter()
        .position(|l| !ok(l.status))
        .expect("a failed step");
    assert!(failed > 0, "{:?}", sol.log);
    let (last_ok, bad, retry) = (
        sol.log[failed - 1].sigma,
        sol.log[failed].sigma,
        sol.log[failed + 1].sigma,
    );
    assert!((bad / last_ok - 1e-4).abs() < 1e-12, "{:?}", sol.log);
    assert!(
        (retry - (last_ok * bad).sqrt()).abs() < 1e-12 * last_ok,
        "{:?}",
        sol.log
    );
    let without = solve_ocp(&tf, &hz, &{
        let mut o = o;
        o.mpcc.homotopy_retries = 0;
        o
    })
    .expect("relaxed solution");
    assert_eq!(without.log.len(), failed + 1, "{:?}", without.log);
    assert!(
        sol.comp_residual < 1e-3 * without.comp_residual,
        "retried {} vs stopped {}",
        sol.comp_residual,
        without.comp_residual
    );
}

/// [`nonsmooth_ocp::fesd::solve_from_point`]: the homotopy restarted from a converged
/// particle solution (Scholtes, σ₀ = 1e-4) returns the same optimum; with `first_mu` = 1e-6
/// the first NLP is not pushed into the interior and needs fewer IPOPT iterations than from
/// IPOPT's default barrier parameter (measured: 25 against 62; with the penalty homotopy and
/// σ₀ = 1e-2 … 1e-6 also fewer, 20–112 against 45–190); a point of the wrong length or with
/// a NaN is refused with the reason.
#[test]
fn the_homotopy_restarted_from_a_solution_returns_it() {
    use nonsmooth_ocp::fesd::solve_from_point;
    let (tf, hz) = particle(20);
    let o = {
        let mut o = FesdOptions::default();
        o.discretization.n_s = 2;
        o
    };
    let sol = solve_ocp(&tf, &hz, &o).unwrap();
    let restart = {
        let mut o = o.clone();
        o.mpcc.sigma0 = 1e-4;
        o.mpcc.penalty = false;
        o
    };
    let run = |first_mu| {
        let o = {
            let mut o = restart.clone();
            o.nlp.first_mu = first_mu;
            o
        };
        solve_from_point(&tf, &hz, &o, sol.x.clone()).map_err(|e| e.to_string())
    };
    let (cold, warm) = (run(None).unwrap(), run(Some(1e-6)).unwrap());
    for r in [&cold, &warm] {
        assert!(
            (r.objective - sol.objective).abs() < 1e-6,
            "{}",
            r.objective
        );
        assert!(r.comp_residual <= 1e-9 && r.terminal_error < 1e-6);
    }
    assert!(
        warm.log[0].iterations < cold.log[0].iterations,
        "first NLP: {} iterations with first_mu, {} without",
        warm.log[0].iterations,
        cold.log[0].iterations
    );
    let refused = |x: Vec<f64>| match solve_from_point(&tf, &hz, &restart, x) {
        Err(nonsmooth_ocp::OcpError::InvalidInput(m)) => m,
        other => panic!("not refused: {:?}", other.map(|s| s.objective)),
    };
    assert!(refused(sol.x[1..].to_vec()).contains("entries"));
    let mut nan = sol.x.clone();
    nan[7] = f64::NAN;
    assert!(refused(nan).contains("entry 7"));
    // a first NLP that fails (3 of its 62 iterations) hands back the start point, not
    // IPOPT's failed iterate, with that NLP in the log
    let capped = {
        let mut o = restart.clone();
        o.nlp.max_iter = 3;
        o
    };
    match solve_from_point(&tf, &hz, &capped, sol.x.clone()) {
        Err(nonsmooth_ocp::OcpError::HomotopyStalled { x, log, .. }) => {
            assert_eq!(x, sol.x);
            assert_eq!(log.len(), 1, "{log:?}");
            assert_eq!(log[0].iterations, 3);
            assert_eq!(
                log[0].status,
                nonsmooth_ocp::ipopt::IpoptStatus::MaxIterations
            );
        }
        other => panic!("not a stall: {:?}", other.map(|s| s.objective)),
    }
}

/// When the homotopy's first NLP fails after the smoothing phase, the error carries the
/// smoothed point (the last converged one, from which `--start` restarts the end game) and
/// the log of the phase and of the failed NLP. The failure is forced: the phase's NLPs may
/// take up to 3000 IPOPT iterations, the homotopy's only 2, far below any path from the
/// smoothed point to complementarity σ₀ = 1e-6.
#[test]
fn a_first_nlp_failing_after_the_smoothing_phase_returns_the_smoothed_point() {
    use nonsmooth_ocp::fesd::build;
    use nonsmooth_ocp::smoothing::{run_phase, Smoothing};
    let (tf, hz) = particle(20);
    let o = {
        let mut o = FesdOptions::default();
        o.discretization.n_s = 2;
        o.mpcc.smoothing = Some(Smoothing {
            widths: vec![1e-2, 1e-1],
            factors: vec![100.0],
            lambda_weight: 1e-3,
            cross_sigmas: vec![],
            terminal_weight: 100.0,
            max_iter: Some(3000),
        });
        o.mpcc.sigma0 = 1e-6;
        o.nlp.max_iter = 2;
        o
    };
    let (mut nlp, layout, x0) = build(&tf, &hz, &o).unwrap();
    let mut phase_log = vec![];
    let sm = o.mpcc.smoothing.clone().unwrap();
    let smoothed = run_phase(&mut nlp, &layout, x0, &o, &sm, true, &mut phase_log).unwrap();
    match solve_ocp(&tf, &hz, &o) {
        Err(nonsmooth_ocp::OcpError::HomotopyStalled { x, log, .. }) => {
            let diff = x
                .iter()
                .zip(&smoothed)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            assert!(diff < 1e-12, "{diff}");
            assert_eq!(log.len(), phase_log.len() + 1, "{log:?}");
            let failed = log.last().unwrap();
            assert_eq!(failed.sigma, 1e-6);
            assert_eq!(failed.iterations, 2);
            assert_eq!(
                failed.status,
                nonsmooth_ocp::ipopt::IpoptStatus::MaxIterations
            );
        }
        other => panic!("not a stall: {:?}", other.map(|s| s.log)),
    }
}

/// `NlpSettings::checkpoint` holds the last converged NLP point in `solve_from_point`'s
/// format: restarting from it returns the same optimum; an unwritable file is a named error.
#[test]
fn the_checkpoint_file_restarts_the_homotopy() {
    use nonsmooth_ocp::fesd::solve_from_point;
    let (tf, hz) = particle(20);
    let dir = std::env::temp_dir().join(format!("nonsmooth-checkpoint-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("point.json");
    let o = {
        let mut o = FesdOptions::default();
        o.discretization.n_s = 2;
        o.nlp.checkpoint = Some(file.clone());
        o
    };
    let sol = solve_ocp(&tf, &hz, &o).unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    let body = text
        .split('[')
        .nth(1)
        .and_then(|t| t.split(']').next())
        .unwrap();
    let x: Vec<f64> = body.split(',').map(|v| v.trim().parse().unwrap()).collect();
    assert_eq!(x.len(), sol.x.len());
    assert!(
        text.starts_with(&format!("{{\"variables\": {}, ", x.len())),
        "{text:.40}"
    );
    let restart = {
        let mut o = o.clone();
        o.mpcc.sigma0 = 1e-4;
        o.mpcc.penalty = false;
        o.nlp.checkpoint = None;
        o
    };
    let again = solve_from_point(&tf, &hz, &restart, x).unwrap();
    assert!((again.objective - sol.objective).abs() < 1e-6);
    assert!(again.comp_residual <= 1e-9);
    let unwritable = {
        let mut o = o;
        o.nlp.checkpoint = Some(dir.join("missing").join("point.json"));
        o
    };
    match solve_ocp(&tf, &hz, &unwritable) {
        Err(nonsmooth_ocp::OcpError::InvalidInput(m)) => assert!(m.contains("checkpoint"), "{m}"),
        other => panic!("not refused: {:?}", other.map(|s| s.objective)),
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// [`nonsmooth_ocp::refine`]: the particle solution on N_FE = 2 carried to N_FE = 4. The
/// carried point keeps the coarse complementarity (every fine product is a coarse one), the
/// coarse element ends are fine element ends, and `solve_from_point` on the fine problem,
/// given the coarse point, refines it itself and converges to an exact fine solution with
/// the coarse optimum (the controls are the same piecewise-constant family).
#[test]
fn a_coarse_solution_refined_restarts_the_homotopy_on_the_fine_mesh() {
    use nonsmooth_ocp::fesd::{build, comp_residual, solve_from_point};
    use nonsmooth_ocp::refine::{refine_point, refinement_factor};
    let (tf, hz) = particle(20);
    let coarse = {
        let mut o = FesdOptions::default();
        o.discretization.n_s = 2;
        o.discretization.n_fe = 2;
        o
    };
    let sol = solve_ocp(&tf, &hz, &coarse).unwrap();
    let fine = {
        let mut o = coarse.clone();
        o.discretization.n_fe = 4;
        o.mpcc.sigma0 = 1e-4;
        o.mpcc.penalty = false;
        o.nlp.first_mu = Some(1e-6);
        o
    };
    let (_, lc, _) = build(&tf, &hz, &coarse).unwrap();
    let (_, lf, xf) = build(&tf, &hz, &fine).unwrap();
    assert_eq!(refinement_factor(&lc, &lf), Some(2));
    assert_eq!(refinement_factor(&lf, &lc), None);
    let x = refine_point(&lc, &sol.x, &lf, xf).unwrap();
    let (cc, cf) = (
        comp_residual(&lc, &sol.x, true),
        comp_residual(&lf, &x, true),
    );
    assert!(cf <= cc, "fine {cf} > coarse {cc}");
    let ny = lc.dims.0;
    for (i, e) in lc.elems.iter().enumerate() {
        let f = &lf.elems[2 * i + 1];
        for c in 0..ny {
            let (a, b) = (sol.x[e.y_end + c], x[f.y_end + c]);
            assert!(
                (a - b).abs() < 1e-12,
                "element {i}, component {c}: {a} vs {b}"
            );
        }
        let h = x[lf.elems[2 * i].h] + x[f.h];
        assert!((h - sol.x[e.h]).abs() < 1e-15);
    }
    // a relaxed point (one Scholtes NLP, σ = 1e-2): its largest product carries over
    let relaxed = {
        let mut o = coarse.clone();
        o.mpcc.penalty = false;
        o.mpcc.sigma0 = 1e-2;
        o.mpcc.n_homotopy = 1;
        o.mpcc.polish = false;
        o
    };
    let xr = match solve_ocp(&tf, &hz, &relaxed) {
        Ok(s) => s.x,
        Err(e) => e.last_iterate().expect("an iterate").to_vec(),
    };
    let (cc, cf) = (
        comp_residual(&lc, &xr, true),
        comp_residual(&lf, &refine_point(&lc, &xr, &lf, x.clone()).unwrap(), true),
    );
    assert!(cc > 1e-4 && cf <= cc, "relaxed: fine {cf}, coarse {cc}");
    let again = solve_from_point(&tf, &hz, &fine, sol.x.clone()).unwrap();
    assert!(again.comp_residual <= 1e-9 && again.terminal_error < 1e-6);
    assert!(
        (again.objective - sol.objective).abs() < 1e-6 * sol.objective,
        "fine {} vs coarse {}",
        again.objective,
        sol.objective
    );
}
