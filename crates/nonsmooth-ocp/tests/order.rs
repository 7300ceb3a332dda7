//! Integration order of the FESD integrator (E4 of docs/decisions/002-time-freezing.md) on the
//! spring-loaded mass falling onto the ground (`examples/spring_mass.toml`): Radau IIA with switch
//! detection keeps its order 2n_s − 1 across the impact, the same IRK on a fixed grid drops to
//! order 1. Also checks that the active-set polishing makes the frozen jump and the rest on the
//! ground exact.

use crate::common;

use std::sync::Arc;

use nonsmooth_ocp::fesd::{simulate, FesdOptions, Scheme};
use nonsmooth_ocp::time_freezing::TimeFreezing;

const A_N: f64 = 10.0;

/// The spring-loaded mass with a_n = [`A_N`].
fn system() -> Arc<TimeFreezing> {
    Arc::new(TimeFreezing::new(common::spring_mass(), A_N).unwrap())
}

/// The exact state at τ from q0 ([`common::spring_mass_exact`]).
fn exact(q0: f64, tau: f64) -> [f64; 3] {
    common::spring_mass_exact(q0, A_N, tau)
}
const TAU: f64 = 2.0;

fn error(n_s: usize, fesd: bool, n: usize) -> (f64, [f64; 3]) {
    let tf = system();
    let o = {
        let mut o = FesdOptions::default();
        o.discretization.n_s = n_s;
        o.discretization.n_fe = 3;
        o.discretization.fesd = fesd;
        o.mpcc.accept_relaxed = !fesd;
        o
    };
    let r = simulate(&tf, &[1.0, 0.0, 0.0], TAU / n as f64, n, &|_| vec![], &o).unwrap();
    let y = r.traj.y.last().unwrap();
    let ex = exact(1.0, TAU);
    let d = [y[0] - ex[0], y[1] - ex[1], y[2] - ex[2]];
    (d.iter().map(|v| v.abs()).fold(0.0, f64::max), d)
}

#[test]
fn exact_solution_is_consistent() {
    // impact at t = π/6 with v = −2√3; sliding with γ = a_n/(a_n + ω²)
    let t_imp = std::f64::consts::PI / 6.0;
    let y = exact(1.0, t_imp - 1e-12);
    assert!(y[0].abs() < 1e-10 && (y[1] + 2.0 * 3f64.sqrt()).abs() < 1e-9);
    let jump = 2.0 * 3f64.sqrt() / A_N;
    let y = exact(1.0, t_imp + jump + 1.0);
    assert!((y[2] - (t_imp + A_N / (A_N + 4.0))).abs() < 1e-12);
}

#[test]
fn fesd_radau_keeps_its_order_across_the_impact() {
    let (e4, _) = error(2, true, 4);
    let (e8, d8) = error(2, true, 8);
    let p = (e4 / e8).log2();
    eprintln!("n_s = 2: {e4:.3e} {e8:.3e} order {p:.3}");
    assert!((p - 3.0).abs() < 0.5, "order {p}");
    // position and velocity on the ground are exact after polishing (only t carries error)
    assert!(d8[0].abs() < 1e-10 && d8[1].abs() < 1e-10, "{d8:?}");
}

#[test]
fn fixed_grid_irk_is_first_order() {
    let (e8, d8) = error(3, false, 8);
    let (e16, _) = error(3, false, 16);
    let p = (e8 / e16).log2();
    eprintln!("fixed n_s = 3: {e8:.3e} {e16:.3e} order {p:.3}");
    assert!((p - 1.0).abs() < 0.5, "order {p}");
    // without switch detection the error is orders of magnitude above FESD's
    assert!(e8 > 1e-3 && d8[0].abs() > 1e-3);
}

fn endpoint(q0: f64, n_s: usize, fesd: bool, n: usize) -> Vec<f64> {
    let tf = system();
    let o = {
        let mut o = FesdOptions::default();
        o.discretization.n_s = n_s;
        o.discretization.n_fe = 3;
        o.discretization.fesd = fesd;
        o.mpcc.accept_relaxed = !fesd;
        o
    };
    let r = simulate(&tf, &[q0, 0.0, 0.0], TAU / n as f64, n, &|_| vec![], &o).unwrap();
    r.traj.y.last().unwrap().clone()
}

/// Pass condition E7 of docs/decisions/002-time-freezing.md (FESD on the time-freezing system
/// gives correct numerical sensitivities, where time stepping on a fixed grid does not:
/// Nurkanović, Albrecht, Brogliato & Diehl 2023, "The Time-Freezing Reformulation for Numerical
/// Optimal Control of Complementarity Lagrangian Systems with State Jumps", §1 and §5.3): the
/// sensitivity of the endpoint (after the impact, the frozen jump and the
/// sliding phase) with respect to the initial height, by central finite differences of the
/// FESD integrator, matches the exact sensitivity of the time-freezing solution (the clock
/// at τ = 2 moves with the impact time and the jump length; q and v on the ground do not
/// move); on a fixed grid the switch is not located and the finite-difference sensitivity
/// is wrong by orders of magnitude more (Stewart–Anitescu).
#[test]
fn sensitivities_across_the_impact_match_the_exact_ones() {
    let d = 1e-3;
    let exact: Vec<f64> = (0..3)
        .map(|i| (exact(1.0 + d, TAU)[i] - exact(1.0 - d, TAU)[i]) / (2.0 * d))
        .collect();
    let fd = |fesd: bool| -> Vec<f64> {
        let (p, m) = (endpoint(1.0 + d, 2, fesd, 8), endpoint(1.0 - d, 2, fesd, 8));
        (0..3).map(|i| (p[i] - m[i]) / (2.0 * d)).collect()
    };
    let (f, g) = (fd(true), fd(false));
    let err = |s: &[f64]| -> f64 {
        s.iter()
            .zip(&exact)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max)
    };
    eprintln!("exact {exact:?}, FESD {f:?}, fixed grid {g:?}");
    assert!(exact[2].abs() > 0.1, "the clock depends on q0: {exact:?}");
    assert!(err(&f) < 1e-3, "FESD sensitivity {f:?} vs {exact:?}");
    assert!(err(&g) > 10.0 * err(&f).max(1e-4), "fixed grid {g:?}");
}

fn gl_end(n_s: usize, n: usize, tau: f64) -> Vec<f64> {
    let tf = system();
    let o = {
        let mut o = FesdOptions::default();
        o.discretization.n_s = n_s;
        o.discretization.n_fe = 3;
        o.discretization.scheme = Scheme::GaussLegendre;
        o
    };
    let r = simulate(&tf, &[1.0, 0.0, 0.0], tau / n as f64, n, &|_| vec![], &o).unwrap();
    r.traj.y.last().unwrap().clone()
}

fn max_err(y: &[f64], ex: [f64; 3]) -> f64 {
    (0..3).map(|i| (y[i] - ex[i]).abs()).fold(0.0, f64::max)
}

#[test]
fn gauss_legendre_has_order_2ns_on_the_smooth_part() {
    // τ = 0.4 < t_imp = π/6: the cosine fall only
    let tau = 0.4;
    let ex = exact(1.0, tau);
    for (n_s, want) in [(1usize, 2.0), (2, 4.0)] {
        let e1 = max_err(&gl_end(n_s, 1, tau), ex);
        let e2 = max_err(&gl_end(n_s, 2, tau), ex);
        let p = (e1 / e2).log2();
        eprintln!("GL n_s = {n_s}: {e1:.3e} {e2:.3e} order {p:.3}");
        assert!((p - want).abs() < 0.4, "n_s = {n_s}: order {p}");
    }
}

#[test]
fn gauss_legendre_fesd_is_accurate_across_the_impact() {
    // with switch detection the impact and jump end fall on element boundaries: the error
    // after the impact keeps the order 2n_s (far above the fixed grid's order 1)
    let ex = exact(1.0, TAU);
    let e4 = max_err(&gl_end(2, 4, TAU), ex);
    let e8 = max_err(&gl_end(2, 8, TAU), ex);
    let p = (e4 / e8).log2();
    eprintln!("GL n_s = 2 through the impact: {e4:.3e} {e8:.3e} order {p:.3}");
    assert!((p - 4.0).abs() < 0.5, "order {p}");
    assert!(e8 < 1e-4, "error {e8}");
}
