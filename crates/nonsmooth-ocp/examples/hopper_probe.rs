//! Exploration driver for the hopper OCP of seed 002 Sec. 6 (settings from the environment).

use std::sync::Arc;

use nonsmooth_ocp::fesd::{solve_ocp, CutStep, FesdOptions, Horizon, OcpSolution};
use nonsmooth_ocp::hopper::{self, Hopper};
use nonsmooth_ocp::tf::TimeFreezing;

fn env<T: std::str::FromStr>(k: &str, d: T) -> T {
    std::env::var(k)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(d)
}

/// Prints the largest complementarity products of a stalled iterate with their context.
/// Hop count and smallest hole clearance (min ellipse value − 1) of a solution.
fn hops_and_clearance(hop: &Hopper, sol: &nonsmooth_ocp::fesd::OcpSolution) -> (usize, f64) {
    let hops = hopper::hop_count(hop, &sol.traj.y, 1e-3);
    let clear = sol
        .traj
        .y
        .iter()
        .flat_map(|y| hop.hole_values(y))
        .fold(f64::INFINITY, f64::min)
        - 1.0;
    (hops, clear)
}

fn diagnose(
    tf: &Arc<TimeFreezing<Hopper>>,
    hz: &nonsmooth_ocp::fesd::Horizon,
    o: &FesdOptions,
    x: &[f64],
) {
    let Ok((_, layout, _)) = nonsmooth_ocp::fesd::build(tf, hz, o) else {
        return;
    };
    let (_, nc, _, ns) = layout.dims;
    let mut rows = vec![];
    for (ie, e) in layout.elems.iter().enumerate() {
        for jp in 0..ns {
            for j in 0..e.lp.len() {
                for i in 0..nc {
                    if !nonsmooth_ocp::fesd::comp_pair(o.fesd && i < layout.n_cross, jp, j, ns) {
                        continue;
                    }
                    let a = x[e.alpha[jp] + i];
                    let (lp, ln) = (x[e.lp[j] + i], x[e.ln[j] + i]);
                    let p = (a * ln).max((1.0 - a) * lp);
                    let y = &x[e.y[jp]..e.y[jp] + 9];
                    rows.push((
                        p,
                        ie,
                        jp,
                        j,
                        i,
                        a,
                        lp,
                        ln,
                        tf.switching(y),
                        x[layout.s[e.step]],
                    ));
                }
            }
        }
    }
    rows.sort_by(|a, b| b.0.total_cmp(&a.0));
    for r in rows.iter().take(25) {
        let al = &x[layout.elems[r.1].alpha[r.2]..layout.elems[r.1].alpha[r.2] + nc];
        println!(
            "prod {:.2e} elem {} (step {}) stage {} point {} comp {} alpha {:.3} lp {:.3e} ln {:.3e} c(stage) {:?} alphas {:?} s {:.2}",
            r.0, r.1, r.1 / o.n_fe, r.2, r.3, r.4, r.5, r.6, r.7,
            r.8.iter().map(|v| format!("{v:+.3e}")).collect::<Vec<_>>(),
            al.iter().map(|v| format!("{v:.3}")).collect::<Vec<_>>(),
            r.9
        );
    }
}

/// `SMOOTH="f1,f2,…"` (width factors), `SMW="w1,w2,w3"` (base widths), `SMLAM=ε` →
/// [`FesdOptions::smoothing`].
fn smoothing() -> Option<nonsmooth_ocp::smoothing::Smoothing> {
    let list = |k: &str, d: &str| -> Vec<f64> {
        std::env::var(k)
            .unwrap_or_else(|_| d.to_string())
            .split(',')
            .filter_map(|v| v.trim().parse().ok())
            .collect()
    };
    std::env::var("SMOOTH").ok()?;
    Some(nonsmooth_ocp::smoothing::Smoothing {
        widths: list("SMW", "0.02,0.2,0.2"),
        factors: list("SMOOTH", "1"),
        lambda_weight: env("SMLAM", 1e-3),
        cross_sigmas: list("SMCROSS", ""),
        terminal_weight: env("SMTW", 100.0),
    })
}

/// `CUTSCHED="σ:δ:δ_v,…"` (`-` = cut inactive) → [`FesdOptions::cut_schedule`].
fn cut_schedule() -> Vec<CutStep> {
    let Ok(spec) = std::env::var("CUTSCHED") else {
        return vec![];
    };
    spec.split(',')
        .filter_map(|e| {
            let f: Vec<&str> = e.split(':').collect();
            let opt = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok());
            Some(CutStep {
                sigma: opt(0)?,
                delta: opt(1),
                delta_v: opt(2),
            })
        })
        .collect()
}

fn main() {
    let n: usize = env("N", 20);
    let n_s: usize = env("NS", 1);
    let n_fe: usize = env("NFE", 3);
    let ax: f64 = env("AX", 0.25);
    let nh: usize = env("NHOLES", 3);
    let target: f64 = env("TX", 3.0);
    let hop = Hopper {
        holes: [0.5, 1.5, 2.5][..nh].to_vec(),
        hole_axes: (ax, 0.1),
        foot_z_min: env("FOOTZ", -0.005),
        gravity: env("GRAV", 9.81),
        ..Hopper::default()
    };
    let scale = vec![env("SC1", 1.0), env("SC2", 1.0), env("SC3", 1.0)];
    let tf = Arc::new(
        TimeFreezing::new(hop.clone(), env("AN", 200.0))
            .and_then(|t| t.with_switch_scale(scale))
            .and_then(
                |t| match std::env::var("STAB").ok().and_then(|v| v.parse().ok()) {
                    Some(k) => t.with_stance_stabilization(k, env("STABD", 1e-3)),
                    None => Ok(t),
                },
            )
            .unwrap(),
    );
    let mut hz = hopper::horizon(n, 2.5, target, env("UMAX", 60.0), env("SMAX", 25.0));
    if env("TCLOCK", 0) == 1 {
        hz.clock = nonsmooth_ocp::fesd::Clock::Terminal(2.5);
        hz.control_weight = 1.0;
    }
    hz.global_speed = env("GLOBALS", 0) == 1;
    if let Some(st) = tf.stance {
        hopper::rest_on_stabilized_ground(&mut hz, st.depth);
    }
    let o = FesdOptions {
        polish: env("POLISH", 1) == 1,
        per_pair: env("PERPAIR", 0) == 1,
        alpha0: env("ALPHA0", 0.5),
        lambda_shift: env("LAM0", 0.0),
        soft_terminal: env("SOFT", 0.0),
        soft_terminal_sigma: env("SOFTSIG", 1e-3),
        n_s,
        n_fe,
        penalty: env("PEN", 0) == 1,
        sigma0: env("S0", 1.0),
        kappa: env("KAPPA", 0.1),
        n_homotopy: env("NH", 20),
        cross_components: env("NCROSS", 1),
        ipopt_tol: env("TOL", 1e-8),
        max_iter: env("MAXIT", 1000),
        verbose: true,
        mu_adaptive: env("MUADAPT", 0) == 1,
        warm_duals: env("WARM", 1) == 1,
        elastic: env("ELASTIC", 0) == 1,
        rho_sot: env("RSOT", 0.0),
        flight_cut: std::env::var("CUT").ok().and_then(|v| v.parse().ok()),
        flight_cut_v: std::env::var("CUTV").ok().and_then(|v| v.parse().ok()),
        cut_schedule: cut_schedule(),
        path_at_stages: env("PATHSTG", 1) == 1,
        smoothing: smoothing(),
        alpha_bias: env("ABIAS", 1e-4),
        gamma_h: env("GAMMAH", 0.99),
        homotopy_retries: env("RETRY", 0),
        ..FesdOptions::default()
    };
    let t0 = std::time::Instant::now();
    let gait = hopper::HopGait {
        hops: env("HOPS", 3),
        flight: env("TFLIGHT", 0.25),
        stance: env("TSTANCE", 0.125),
        push: env("TPUSH", 0.3),
        swing_height: env("SWING", 0.12),
        reach: env("REACH", 0.39),
        offset: env("OFFSET", 0.2),
    };
    if env("GUESSONLY", 0) == 1 {
        let (nlp, layout, mut x0) = nonsmooth_ocp::fesd::build(&tf, &hz, &o).unwrap();
        hopper::hop_guess(&tf, &hz, &layout, &gait, &mut x0).unwrap();
        let (plo, phi) = nonsmooth_ocp::tf::Cls::path_bounds(&hop);
        for e in layout.elems.iter() {
            for &iy in &e.y {
                let y = &x0[iy..iy + 9];
                let g = nonsmooth_ocp::tf::Cls::path(&hop, &y[..4]);
                let bad: Vec<usize> = (0..g.len())
                    .filter(|&i| g[i] < plo[i] - 1e-9 || g[i] > phi[i] + 1e-9)
                    .collect();
                let yb: Vec<usize> = (0..9)
                    .filter(|&i| y[i] < nlp.xl[iy + i] - 1e-9 || y[i] > nlp.xu[iy + i] + 1e-9)
                    .collect();
                println!(
                    "t {:.3} q {:?} v {:?} foot {:?} c {:?} badpath {bad:?} badbounds {yb:?}",
                    y[8],
                    y[..4].iter().map(|v| format!("{v:.3}")).collect::<Vec<_>>(),
                    y[4..8]
                        .iter()
                        .map(|v| format!("{v:.2}"))
                        .collect::<Vec<_>>(),
                    hop.foot(&y[..4])
                        .iter()
                        .map(|v| format!("{v:.3}"))
                        .collect::<Vec<_>>(),
                    tf.switching(y)
                        .iter()
                        .map(|v| format!("{v:.2}"))
                        .collect::<Vec<_>>()
                );
            }
        }
        return;
    }
    if env("POLISHGUESS", 0) == 1 {
        // the active set of the gait guess fixed (the active-set polish from the guess): a
        // smooth NLP whose solution, if any, is an exact hopping solution
        let (mut nlp, layout, mut x0) = nonsmooth_ocp::fesd::build(&tf, &hz, &o).unwrap();
        hopper::hop_guess(&tf, &hz, &layout, &gait, &mut x0).unwrap();
        let m = nonsmooth_ocp::ipopt::Nlp::num_cons(&nlp);
        let sol = nonsmooth_ocp::ipopt::IpoptSolution::from_primal(x0, m);
        let t0 = std::time::Instant::now();
        match nonsmooth_ocp::fesd::polish(&mut nlp, &layout, &sol, &o) {
            Some((p, e)) => {
                let out = nonsmooth_ocp::fesd::extract_ocp(&tf, &hz, &layout, &p.x, &o).unwrap();
                let hops = hopper::hop_count(&hop, &out.traj.y, 1e-3);
                println!(
                    "FIXED-MODE OK obj {:.4} comp {:.2e} viol {:.2e} hops {hops} iters {} cpu {:.1} ({:.1} s wall)",
                    out.objective, e.comp_residual, p.constraint_violation, e.iterations, e.cpu_seconds,
                    t0.elapsed().as_secs_f64()
                );
            }
            None => println!("FIXED-MODE FAILED after {:.1}s", t0.elapsed().as_secs_f64()),
        }
        return;
    }
    if env("SMONLY", 0) == 1 {
        smoothing_only(&tf, &hz, &o, &hop);
        return;
    }
    if let Ok(file) = std::env::var("SMLOAD") {
        // the MPCC homotopy (without the smoothing phase) from a saved smoothed point
        let o = FesdOptions {
            smoothing: None,
            ..o.clone()
        };
        let (mut nlp, layout, _) = nonsmooth_ocp::fesd::build(&tf, &hz, &o).unwrap();
        let x0 = read_cache(&file).expect("SMLOAD point");
        if env("SMPOLISH", 0) == 1 {
            let xs = snap_to_active_set(&layout, &x0, &o, env("SMSNAP", 0.05));
            nonsmooth_ocp::smoothing::print_worst_rows(&nlp, &xs);
            let m = nonsmooth_ocp::ipopt::Nlp::num_cons(&nlp);
            let sol = nonsmooth_ocp::ipopt::IpoptSolution::from_primal(xs, m);
            let mu: f64 = env("MUFIX", 1e-2);
            match nonsmooth_ocp::fesd::solve_on_active_set(&mut nlp, &layout, &sol, &o, mu, true) {
                Some((p, e)) => {
                    let out =
                        nonsmooth_ocp::fesd::extract_ocp(&tf, &hz, &layout, &p.x, &o).unwrap();
                    let (hops, clear) = hops_and_clearance(&hop, &out);
                    println!(
                        "SNAP-POLISH OK obj {:.4} comp {:.2e} viol {:.2e} term {:.2e} hops {hops} clear {clear:.2e} iters {} cpu {:.1}",
                        out.objective, e.comp_residual, p.constraint_violation, out.terminal_error, e.iterations, e.cpu_seconds
                    );
                    if let Ok(f) = std::env::var("SMSAVE") {
                        write_point(f, &p.x);
                    }
                }
                None => println!(
                    "SNAP-POLISH FAILED after {:.1}s",
                    t0.elapsed().as_secs_f64()
                ),
            }
            return;
        }
        let res = nonsmooth_ocp::fesd::solve_built(&tf, &hz, &o, nlp, &layout, x0);
        print_result(&tf, &hz, &o, res, t0, false);
        return;
    }
    if let Ok(list) = std::env::var("GRAVCONT") {
        gravity_continuation(&tf, &hz, &o, &list);
        return;
    }
    if let Ok(list) = std::env::var("FIXCONT") {
        // target continuation on the active set of an exact solution: the first target (0)
        // from the trivial guess, then each target by the smooth NLP with that solution's
        // complementarity active set fixed (steps bisected on failure)
        let targets: Vec<f64> = list
            .split(',')
            .filter_map(|v| v.trim().parse().ok())
            .collect();
        let locals = env("FIXLOCALS", 0) == 1;
        let with_target = |x: f64| {
            let mut h = hz.clone();
            h.global_speed = hz.global_speed && !locals;
            h.terminal
                .iter_mut()
                .filter(|(k, _)| *k == 0)
                .for_each(|(_, v)| *v = x);
            h
        };
        let make_tf = |holes: usize, axes: (f64, f64)| {
            let h = Hopper {
                holes: [0.5, 1.5, 2.5][..holes].to_vec(),
                hole_axes: axes,
                ..hop.clone()
            };
            let mut t = TimeFreezing::new(h, env("AN", 200.0)).unwrap();
            t.stance = tf.stance;
            Arc::new(t)
        };
        let first = Horizon {
            global_speed: hz.global_speed,
            ..with_target(env("FIX0", 0.0))
        };
        let tf0 = make_tf(env("FIXHOLES0", nh), (ax, 0.1));
        let tf = make_tf(nh, (ax, 0.1));
        let cache = std::env::var("FIXCACHE").ok();
        let cached = cache
            .as_ref()
            .and_then(|f| std::fs::read_to_string(f).ok())
            .map(|t| {
                t.split_whitespace()
                    .map(|v| v.parse::<f64>().unwrap())
                    .collect::<Vec<f64>>()
            });
        let solved = match cached {
            Some(x) => {
                let (_, layout, _) = nonsmooth_ocp::fesd::build(&tf0, &first, &o).unwrap();
                nonsmooth_ocp::fesd::extract_ocp(&tf0, &first, &layout, &x, &o)
            }
            None => solve_ocp(&tf0, &first, &o),
        };
        let mut prev = match solved {
            Ok(s) => s,
            Err(e) => {
                println!("first solve failed: {e}");
                return;
            }
        };
        if let Some(f) = &cache {
            write_point(f, &prev.x);
        }
        if locals {
            // carry the global-speed solution over to one speed of time per interval
            let (_, la, _) = nonsmooth_ocp::fesd::build(&tf0, &first, &o).unwrap();
            let (_, lb, xb) =
                nonsmooth_ocp::fesd::build(&tf0, &with_target(env("FIX0", 0.0)), &o).unwrap();
            let xb = nonsmooth_ocp::fesd::transfer_point(&la, &prev.x, &lb, xb).unwrap();
            prev = nonsmooth_ocp::fesd::extract_ocp(
                &tf0,
                &with_target(env("FIX0", 0.0)),
                &lb,
                &xb,
                &o,
            )
            .unwrap();
            println!(
                "carried over to local speeds: obj {:.4} comp {:.2e}",
                prev.objective, prev.comp_residual
            );
        }
        let (hops, clear) = hops_and_clearance(&hop, &prev);
        println!(
            "FIX start: obj {:.4} comp {:.2e} hops {hops} clear {clear:.2e}",
            prev.objective, prev.comp_residual
        );
        let mu: f64 = env("MUFIX", 1e-2);
        let mut at = env("FIX0", 0.0);
        let mut restructures = 0;
        for &goal in &targets {
            let mut step = goal - at;
            while (goal - at).abs() > 1e-12 {
                let next = if (goal - at).abs() <= step.abs() {
                    goal
                } else {
                    at + step
                };
                let step_now = next - at;
                let h = with_target(next);
                let (mut nlp, layout, _) = nonsmooth_ocp::fesd::build(&tf, &h, &o).unwrap();
                let m = nonsmooth_ocp::ipopt::Nlp::num_cons(&nlp);
                let start = nonsmooth_ocp::ipopt::IpoptSolution::from_primal(prev.x.clone(), m);
                let t1 = std::time::Instant::now();
                match nonsmooth_ocp::fesd::solve_on_active_set(
                    &mut nlp,
                    &layout,
                    &start,
                    &o,
                    mu,
                    env("FREEIDLE", 1) == 1,
                ) {
                    Some((p, e)) => {
                        prev =
                            nonsmooth_ocp::fesd::extract_ocp(&tf, &h, &layout, &p.x, &o).unwrap();
                        let (hops, clear) = hops_and_clearance(&hop, &prev);
                        println!(
                            "FIX target {next:.4}: obj {:.4} comp {:.2e} term {:.2e} hops {hops} clear {clear:.2e} iters {} ({:.1} s)",
                            prev.objective, e.comp_residual, prev.terminal_error, e.iterations, t1.elapsed().as_secs_f64()
                        );
                        at = next;
                        step *= 1.5;
                        if let Ok(f) = std::env::var("FIXSAVE") {
                            // the latest exact point, e.g. a GRAVCACHE start at this target
                            write_point(f, &prev.x);
                        }
                    }
                    None => {
                        println!(
                            "FIX target {next:.4} failed ({:.1} s); halving",
                            t1.elapsed().as_secs_f64()
                        );
                        if let Ok(s0) = std::env::var("FIXHOM").map(|v| v.parse::<f64>().unwrap()) {
                            let warm = FesdOptions {
                                sigma0: s0,
                                ..o.clone()
                            };
                            let (nlp, layout, _) =
                                nonsmooth_ocp::fesd::build(&tf, &h, &warm).unwrap();
                            let t2 = std::time::Instant::now();
                            match nonsmooth_ocp::fesd::solve_built(
                                &tf,
                                &h,
                                &warm,
                                nlp,
                                &layout,
                                prev.x.clone(),
                            ) {
                                Ok(sol) => {
                                    prev = sol;
                                    let (hops, clear) = hops_and_clearance(&hop, &prev);
                                    println!(
                                        "HOM target {next:.4}: obj {:.4} comp {:.2e} hops {hops} clear {clear:.2e} ({:.1} s)",
                                        prev.objective, prev.comp_residual, t2.elapsed().as_secs_f64()
                                    );
                                    at = next;
                                    continue;
                                }
                                Err(e) => println!(
                                    "HOM target {next:.4} failed: {e} ({:.1} s)",
                                    t2.elapsed().as_secs_f64()
                                ),
                            }
                        }
                        step = 0.5 * step_now;
                        if step.abs() < env("FIXMIN", 1e-3) {
                            // re-optimize the contact sequence at the reached target (warm
                            // homotopy from the exact point), then go on on its active set
                            let s0: f64 = env("FIXRESTRUCT", 0.0);
                            if s0 > 0.0 && restructures < 3 {
                                restructures += 1;
                                let here = with_target(at);
                                let warm = FesdOptions {
                                    sigma0: s0,
                                    ..o.clone()
                                };
                                let (nlp, layout, _) =
                                    nonsmooth_ocp::fesd::build(&tf, &here, &warm).unwrap();
                                let t2 = std::time::Instant::now();
                                match nonsmooth_ocp::fesd::solve_built(
                                    &tf,
                                    &here,
                                    &warm,
                                    nlp,
                                    &layout,
                                    prev.x.clone(),
                                ) {
                                    Ok(sol) => {
                                        prev = sol;
                                        let (hops, clear) = hops_and_clearance(&hop, &prev);
                                        println!(
                                            "RESTRUCT at {at:.4}: obj {:.4} comp {:.2e} hops {hops} clear {clear:.2e} ({:.1} s)",
                                            prev.objective, prev.comp_residual, t2.elapsed().as_secs_f64()
                                        );
                                        step = 0.1;
                                        continue;
                                    }
                                    Err(e) => println!("RESTRUCT at {at:.4} failed: {e}"),
                                }
                            }
                            println!("FIX stuck at {at:.4} ({at})");
                            return;
                        }
                    }
                }
            }
        }
        let grow: usize = env("FIXGROW", 0);
        let full = with_target(at);
        for k in 1..=grow {
            let f = k as f64 / grow as f64;
            let tfk = make_tf(3, (ax * f, 0.1 * f));
            match nonsmooth_ocp::continuation::solve_near(&tfk, &full, &o, &prev.x).unwrap() {
                Some(sol) => {
                    prev = sol;
                    let clear = prev
                        .traj
                        .y
                        .iter()
                        .flat_map(|y| tfk.cls.hole_values(y))
                        .fold(f64::INFINITY, f64::min)
                        - 1.0;
                    println!(
                        "GROW {f:.3}: obj {:.4} comp {:.2e} clear {clear:.2e} iters {}",
                        prev.objective, prev.comp_residual, prev.nlp_iterations
                    );
                }
                None => {
                    println!("GROW {f:.3} failed");
                    return;
                }
            }
        }
        return;
    }
    if let Ok(list) = std::env::var("CONT") {
        // continuation in the target x: target 0 (standing) from the trivial guess, then
        // each listed target warm-started from the previous solution with σ₀ = CONTS0
        let waypoints: Vec<Vec<(usize, f64)>> = std::iter::once(0.0)
            .chain(list.split(',').filter_map(|v| v.trim().parse().ok()))
            .map(|x| {
                let mut t = hz.terminal.clone();
                t.iter_mut()
                    .filter(|(k, _)| *k == 0)
                    .for_each(|(_, v)| *v = x);
                t
            })
            .collect();
        let plan = nonsmooth_ocp::continuation::ContinuationPlan {
            waypoints: waypoints.clone(),
            warm_sigma0: env("CONTS0", 1e-2),
            mode: if env("CONTAS", 0) == 1 {
                nonsmooth_ocp::continuation::ContinuationMode::ActiveSet
            } else {
                nonsmooth_ocp::continuation::ContinuationMode::Homotopy
            },
            local_speed_after_first: env("CONTLOCAL", 0) == 1,
        };
        let run = nonsmooth_ocp::continuation::solve_by_terminal_continuation(
            &tf,
            &hz,
            &o,
            &plan,
            &mut |w, sol| {
                let (hops, clear) = hops_and_clearance(&hop, sol);
                println!(
                    "CONT target {:?}: obj {:.4} comp {:.2e} term {:.2e} hops {hops} clear {clear:.2e} nlps {} iters {} ({:.1} s)",
                    waypoints[w][0], sol.objective, sol.comp_residual, sol.terminal_error,
                    sol.log.len(), sol.nlp_iterations, sol.cpu_seconds
                );
            },
        )
        .unwrap();
        if let Some((w, e)) = run.failure {
            println!("CONT target {:?}: {e}", waypoints[w][0]);
            if let nonsmooth_ocp::OcpError::HomotopyStalled { x, .. } = e {
                let mut h = hz.clone();
                h.terminal = waypoints[w].clone();
                diagnose(&tf, &h, &o, &x);
            }
        }
        return;
    }
    let res = if env("GUESS", 0) == 1 {
        hopper::solve_from_gait(&tf, &hz, &o, &gait, env("FIXC", 0) == 1)
    } else {
        solve_ocp(&tf, &hz, &o)
    };
    print_result(&tf, &hz, &o, res, t0, true);
}

/// Prints a solve's outcome: hops and hole clearance of a solution (with its NLP log when
/// `with_log`), or the largest products of a stalled iterate.
fn print_result(
    tf: &Arc<TimeFreezing<Hopper>>,
    hz: &Horizon,
    o: &FesdOptions,
    res: Result<OcpSolution, nonsmooth_ocp::OcpError>,
    t0: std::time::Instant,
    with_log: bool,
) {
    match res {
        Ok(sol) => {
            if with_log {
                for l in &sol.log {
                    println!("{l:?}");
                }
            }
            let (hops, clear) = hops_and_clearance(&tf.cls, &sol);
            println!(
                "OK obj {:.4} comp {:.2e} term {:.2e} hops {hops} clear {clear:.2e} iters {} cpu {:.1}",
                sol.objective, sol.comp_residual, sol.terminal_error, sol.nlp_iterations, t0.elapsed().as_secs_f64()
            );
        }
        Err(nonsmooth_ocp::OcpError::HomotopyStalled {
            x, comp_residual, ..
        }) => {
            println!(
                "STALL comp {comp_residual:.3e} after {:.1}s",
                t0.elapsed().as_secs_f64()
            );
            if let Ok(f) = std::env::var("STALLSAVE") {
                write_point(f, &x);
            }
            diagnose(tf, hz, o, &x);
        }
        Err(e) => println!("ERR {e} after {:.1}s", t0.elapsed().as_secs_f64()),
    }
}

/// `SMONLY=1`: the smoothing phase alone; prints the smoothed trajectory's summary and
/// saves its NLP point to `SMSAVE` (for `SMLOAD`). With `SMGROW=n` the phase first runs
/// without holes, then n more phases (width factors `SMGROWF`) with the holes grown to
/// k/n of their size, each warm-started from the previous point.
fn smoothing_only(tf: &Arc<TimeFreezing<Hopper>>, hz: &Horizon, o: &FesdOptions, hop: &Hopper) {
    let grow: usize = env("SMGROW", 0);
    let with_holes = |f: f64| {
        let h = Hopper {
            holes: if f > 0.0 { hop.holes.clone() } else { vec![] },
            hole_axes: (hop.hole_axes.0 * f, hop.hole_axes.1 * f),
            ..hop.clone()
        };
        let mut t = TimeFreezing::new(h, tf.a_n).unwrap();
        t.stance = tf.stance;
        Arc::new(t)
    };
    let first = if grow > 0 {
        with_holes(0.0)
    } else {
        tf.clone()
    };
    let start = std::env::var("SMLOAD").ok().and_then(|f| read_cache(&f));
    let Some(mut x) = smoothing_run(&first, hz, o, start) else {
        return;
    };
    smoothed_summary(&first, hz, o, &x);
    let factors: Vec<f64> = std::env::var("SMGROWF")
        .unwrap_or_else(|_| "0.1".into())
        .split(',')
        .filter_map(|v| v.trim().parse().ok())
        .collect();
    for k in 1..=grow {
        let f = k as f64 / grow as f64;
        let tfk = with_holes(f);
        let ok = FesdOptions {
            smoothing: o.smoothing.clone().map(|mut sm| {
                sm.factors = factors.clone();
                sm
            }),
            ..o.clone()
        };
        println!("GROW holes ×{f:.3}");
        let Some(xk) = smoothing_run(&tfk, hz, &ok, Some(x.clone())) else {
            return;
        };
        x = xk;
        smoothed_summary(&tfk, hz, &ok, &x);
    }
    if let Ok(f) = std::env::var("SMSAVE") {
        write_point(f, &x);
    }
}

/// One smoothing phase from `x0` (or the trivial initialization).
fn smoothing_run(
    tf: &Arc<TimeFreezing<Hopper>>,
    hz: &Horizon,
    o: &FesdOptions,
    x0: Option<Vec<f64>>,
) -> Option<Vec<f64>> {
    let (mut nlp, layout, xt) = nonsmooth_ocp::fesd::build(tf, hz, o).unwrap();
    let sm = o.smoothing.clone().expect("SMOOTH");
    let mut log = vec![];
    match nonsmooth_ocp::smoothing::run_phase(
        &mut nlp,
        &layout,
        x0.unwrap_or(xt),
        o,
        &sm,
        true,
        &mut log,
    ) {
        Ok(x) => Some(x),
        Err(e) => {
            println!(
                "smoothing failed: {}",
                e.to_string().chars().take(200).collect::<String>()
            );
            None
        }
    }
}

/// Prints a smoothed point's trajectory summary and its largest complementarity products.
fn smoothed_summary(tf: &Arc<TimeFreezing<Hopper>>, hz: &Horizon, o: &FesdOptions, x: &[f64]) {
    let hop = &tf.cls;
    let (_, layout, _) = nonsmooth_ocp::fesd::build(tf, hz, o).unwrap();
    let out = nonsmooth_ocp::fesd::extract_ocp(tf, hz, &layout, x, o).unwrap();
    let (hops, clear) = hops_and_clearance(hop, &out);
    let foot_min = out
        .traj
        .y
        .iter()
        .map(|y| hop.foot(&y[..4])[1])
        .fold(f64::INFINITY, f64::min);
    let last = out.traj.y.last().unwrap();
    println!(
        "SMOOTHED obj {:.4} comp(projected) {:.2e} term {:.2e} hops {hops} clear {clear:.2e} foot_z_min {foot_min:.4} final q {:?} t {:.4} s {:.3}",
        out.objective,
        out.comp_residual,
        out.terminal_error,
        last[..4].iter().map(|v| format!("{v:.4}")).collect::<Vec<_>>(),
        last[8],
        out.s[0]
    );
    if env("SMTRACE", 0) == 1 {
        for (k, y) in out.traj.y.iter().enumerate().step_by(3) {
            let f = hop.foot(&y[..4]);
            println!(
                "  stage {k:3} t {:.3} x {:.3} z {:.3} foot ({:.3}, {:.4}) v ({:.2}, {:.2})",
                y[8], y[0], y[1], f[0], f[1], y[4], y[5]
            );
        }
        diagnose(tf, hz, o, x);
    }
}

/// The active set of a smoothed point made explicit: each stage's α is classified by its
/// value (≤ `snap` → 0, ≥ 1 − `snap` → 1, else interior) and every multiplier it is
/// (cross-)paired with is set to the value the class fixes (λᵖ = 0 for α = 0, λⁿ = 0 for
/// α = 1, both for interior), so that the active-set solve fixes exactly that structure.
fn snap_to_active_set(
    layout: &nonsmooth_ocp::fesd::Layout,
    x: &[f64],
    o: &FesdOptions,
    snap: f64,
) -> Vec<f64> {
    let (_, nc, _, ns) = layout.dims;
    let mut xs = x.to_vec();
    for e in &layout.elems {
        for jp in 0..ns {
            for i in 0..nc {
                let ai = e.alpha[jp] + i;
                let a = x[ai];
                let js: Vec<usize> = (0..e.lp.len())
                    .filter(|&j| {
                        nonsmooth_ocp::fesd::comp_pair(o.fesd && i < layout.n_cross, jp, j, ns)
                    })
                    .collect();
                if a <= snap {
                    xs[ai] = 0.0;
                    js.iter().for_each(|&j| xs[e.lp[j] + i] = 0.0);
                } else if a >= 1.0 - snap {
                    xs[ai] = 1.0;
                    js.iter().for_each(|&j| xs[e.ln[j] + i] = 0.0);
                } else {
                    js.iter().for_each(|&j| {
                        xs[e.lp[j] + i] = 0.0;
                        xs[e.ln[j] + i] = 0.0;
                    });
                }
            }
        }
    }
    xs
}

/// Writes an NLP point for [`read_cache`] (one number per line).
fn write_point(file: impl AsRef<std::path::Path>, x: &[f64]) {
    let text: Vec<String> = x.iter().map(|v| format!("{v:e}")).collect();
    std::fs::write(file, text.join("\n")).unwrap();
}

/// Reads an NLP point cached by [`gravity_continuation`] (one number per line).
fn read_cache(file: &str) -> Option<Vec<f64>> {
    let text = std::fs::read_to_string(file).ok()?;
    text.split_whitespace().map(|v| v.parse().ok()).collect()
}

/// `GRAVCONT=g1,g2,…`: continuation in the gravity constant. The first g from the trivial
/// initialization (the MPCC homotopy, [`solve_ocp`]; `GRAVCACHE=file` stores its NLP point
/// and reuses it when the file exists), then each further g by the smooth NLP on the
/// previous exact solution's active set ([`nonsmooth_ocp::fesd::solve_on_active_set`], idle
/// pairs free, IPOPT's μ₀ = `MUFIX`), the model rebuilt at every g; a failed step is halved
/// down to `GRAVMIN` (`GRAVSAVE=file` keeps the latest exact point), and with `GRAVHOM=σ₀` the warm homotopy with that σ₀ is tried before
/// each halving. `GRAVLOCALS=1` continues with one speed of time per interval.
fn gravity_continuation(tf: &Arc<TimeFreezing<Hopper>>, hz: &Horizon, o: &FesdOptions, list: &str) {
    use nonsmooth_ocp::ipopt::thread_cpu_seconds;
    let gs: Vec<f64> = list
        .split(',')
        .filter_map(|v| v.trim().parse().ok())
        .collect();
    let Some(&g0) = gs.first() else {
        println!("GRAVCONT: no gravity values");
        return;
    };
    let with_g = |g: f64| {
        let mut t = (**tf).clone();
        t.cls.gravity = g;
        Arc::new(t)
    };
    let locals = env("GRAVLOCALS", 0) == 1;
    let cont_hz = Horizon {
        global_speed: hz.global_speed && !locals,
        ..hz.clone()
    };
    let report = |label: &str,
                  g: f64,
                  t: &Arc<TimeFreezing<Hopper>>,
                  sol: &OcpSolution,
                  it: usize,
                  cpu: f64| {
        let (hops, clear) = hops_and_clearance(&t.cls, sol);
        println!(
            "{label} g {g:.4}: obj {:.4} comp {:.2e} term {:.2e} hops {hops} clear {clear:.2e} s [{:.3}, {:.3}] iters {it} cpu {cpu:.1}",
            sol.objective,
            sol.comp_residual,
            sol.terminal_error,
            sol.s.iter().copied().fold(f64::INFINITY, f64::min),
            sol.s.iter().copied().fold(0.0, f64::max),
        );
    };
    let tf0 = with_g(g0);
    let cache = std::env::var("GRAVCACHE").ok();
    let c0 = thread_cpu_seconds();
    // a cached point with one speed per interval (e.g. `FIXSAVE` after `FIXLOCALS`) is read
    // in the layout of `cont_hz`
    let mut cached_local = false;
    let solved = match cache.as_deref().and_then(read_cache) {
        Some(x) => nonsmooth_ocp::fesd::build(&tf0, hz, o).and_then(|(_, layout, x0)| {
            if x0.len() == x.len() {
                nonsmooth_ocp::fesd::extract_ocp(&tf0, hz, &layout, &x, o)
            } else {
                cached_local = true;
                let (_, lb, _) = nonsmooth_ocp::fesd::build(&tf0, &cont_hz, o)?;
                nonsmooth_ocp::fesd::extract_ocp(&tf0, &cont_hz, &lb, &x, o)
            }
        }),
        None => solve_ocp(&tf0, hz, o),
    };
    let mut prev = match solved {
        Ok(s) => s,
        Err(nonsmooth_ocp::OcpError::HomotopyStalled {
            x, comp_residual, ..
        }) => {
            println!(
                "GRAV first solve at g {g0}: STALL comp {comp_residual:.3e} cpu {:.1}",
                thread_cpu_seconds() - c0
            );
            diagnose(&tf0, hz, o, &x);
            return;
        }
        Err(e) => {
            println!("GRAV first solve at g {g0} failed: {e}");
            return;
        }
    };
    for l in &prev.log {
        println!("{l:?}");
    }
    report(
        "GRAV start",
        g0,
        &tf0,
        &prev,
        prev.nlp_iterations,
        thread_cpu_seconds() - c0,
    );
    if let Some(f) = &cache {
        write_point(f, &prev.x);
    }
    if prev.comp_residual > 1e-9 {
        println!("GRAV start not exact; no continuation");
        return;
    }
    if locals && !cached_local {
        let (_, la, _) = nonsmooth_ocp::fesd::build(&tf0, hz, o).unwrap();
        let (_, lb, xb) = nonsmooth_ocp::fesd::build(&tf0, &cont_hz, o).unwrap();
        let xb = nonsmooth_ocp::fesd::transfer_point(&la, &prev.x, &lb, xb).unwrap();
        prev = nonsmooth_ocp::fesd::extract_ocp(&tf0, &cont_hz, &lb, &xb, o).unwrap();
    }
    // `GRAVSAVE=file`: the latest exact point (one number per line, `GRAVCACHE` format)
    let save = |sol: &OcpSolution| {
        if let Ok(f) = std::env::var("GRAVSAVE") {
            write_point(f, &sol.x);
        }
    };
    let mu: f64 = env("MUFIX", 1e-2);
    let hom: Option<f64> = std::env::var("GRAVHOM").ok().and_then(|v| v.parse().ok());
    let mut at = g0;
    for &goal in &gs[1..] {
        let mut step = goal - at;
        while (goal - at).abs() > 1e-12 {
            let next = if (goal - at).abs() <= step.abs() {
                goal
            } else {
                at + step
            };
            let tfg = with_g(next);
            let (mut nlp, layout, _) = nonsmooth_ocp::fesd::build(&tfg, &cont_hz, o).unwrap();
            let m = nonsmooth_ocp::ipopt::Nlp::num_cons(&nlp);
            let start = nonsmooth_ocp::ipopt::IpoptSolution::from_primal(prev.x.clone(), m);
            let c1 = thread_cpu_seconds();
            let fixed =
                nonsmooth_ocp::fesd::solve_on_active_set(&mut nlp, &layout, &start, o, mu, true)
                    .and_then(|(p, e)| {
                        nonsmooth_ocp::fesd::extract_ocp(&tfg, &cont_hz, &layout, &p.x, o)
                            .ok()
                            .map(|s| (s, e.iterations))
                    });
            if let Some((sol, it)) = fixed {
                report("GRAV", next, &tfg, &sol, it, thread_cpu_seconds() - c1);
                save(&sol);
                prev = sol;
                at = next;
                step *= 1.5;
                continue;
            }
            println!(
                "GRAV g {next:.4}: active-set step failed (cpu {:.1})",
                thread_cpu_seconds() - c1
            );
            if let Some(s0) = hom {
                let warm = FesdOptions {
                    sigma0: s0,
                    ..o.clone()
                };
                let c2 = thread_cpu_seconds();
                let res = nonsmooth_ocp::fesd::build(&tfg, &cont_hz, &warm).and_then(
                    |(nlp, layout, _)| {
                        nonsmooth_ocp::fesd::solve_built(
                            &tfg,
                            &cont_hz,
                            &warm,
                            nlp,
                            &layout,
                            prev.x.clone(),
                        )
                    },
                );
                match res {
                    Ok(sol) if sol.comp_residual <= 1e-9 => {
                        report(
                            "GRAV hom",
                            next,
                            &tfg,
                            &sol,
                            sol.nlp_iterations,
                            thread_cpu_seconds() - c2,
                        );
                        save(&sol);
                        prev = sol;
                        at = next;
                        continue;
                    }
                    Ok(sol) => println!(
                        "GRAV hom g {next:.4}: comp {:.2e} (not exact) cpu {:.1}",
                        sol.comp_residual,
                        thread_cpu_seconds() - c2
                    ),
                    Err(e) => println!(
                        "GRAV hom g {next:.4} failed: {e} cpu {:.1}",
                        thread_cpu_seconds() - c2
                    ),
                }
            }
            step = 0.5 * (next - at);
            if step.abs() < env("GRAVMIN", 1e-3) {
                println!("GRAV stuck at g {at:.4}");
                return;
            }
        }
    }
    println!("GRAV reached g {at:.4}");
}
