//! Exact sparse derivatives of the FESD NLP against central finite differences.

use crate::common;

use std::sync::Arc;

use nonsmooth_ocp::fesd::{build, Discretization, FesdOptions, Horizon, MpccStrategy, Scheme};
use nonsmooth_ocp::ipopt::Nlp;
use nonsmooth_ocp::model_system::ModelSystem;
use nonsmooth_ocp::time_freezing::TimeFreezing;

/// The particle of `examples/particle.toml` at 1.3 kg with friction μ = 0.6 and both forces
/// affine in the physical clock (so the dynamics depend on t, too).
fn heavy_particle() -> ModelSystem {
    let model = common::example_model(
        "particle.toml",
        &[
            (
                "name = \"point\"\nmass = 1.0",
                "name = \"point\"\nmass = 1.3",
            ),
            ("friction = 0.0", "friction = 0.6"),
        ],
    );
    ModelSystem::new(model, None, &["force_x".into(), "force_y".into()])
        .unwrap()
        .with_clock_rates()
}

#[test]
fn fesd_jacobian_and_hessian_match_finite_differences() {
    let tf = Arc::new(TimeFreezing::new(heavy_particle(), 9.81).unwrap());
    let hz = Horizon {
        y0: vec![0.1, 0.3, 0.5, -1.0, 0.0],
        lam0: None,
        n_steps: 2,
        step_len: 0.2,
        u_bounds: vec![(vec![-1.0; 4], vec![1.0; 4]); 2],
        s_bounds: (1.0, 5.0),
        clock: nonsmooth_ocp::fesd::Clock::Stagewise(0.4),
        global_speed: false,
        terminal: vec![],
        y_bounds: None,
        control_weight: 0.2,
        tracking: vec![],
        initial_guess: None,
    };
    let o = {
        let mut o = FesdOptions::default();
        o.discretization.n_s = 2;
        o.discretization.n_fe = 2;
        o
    };
    check_derivatives(&tf, &hz, &o, 1e-6, 1e-5);
    // Gauss–Legendre: the end-state rows bᵀ and the end-point multipliers (Scholtes mode,
    // so the cross complementarity is a constraint with its own Jacobian/Hessian)
    let o = {
        let mut o = FesdOptions::default();
        o.discretization.n_s = 2;
        o.discretization.n_fe = 2;
        o.discretization.scheme = Scheme::GaussLegendre;
        o.mpcc.penalty = false;
        o
    };
    check_derivatives(&tf, &hz, &o, 1e-6, 1e-5);
    // terminal clock with one speed of time: the running cost w ‖u_k‖² (t_{k+1} − t_k)
    // couples u_k with the clock values at the interval ends
    let hz = Horizon {
        clock: nonsmooth_ocp::fesd::Clock::Terminal(0.4),
        global_speed: true,
        control_weight: 1.0,
        tracking: vec![],
        initial_guess: None,
        ..hz
    };
    let (nlp, layout, _) = build(&tf, &hz, &o).unwrap();
    assert!(layout.s.iter().all(|&s| s == layout.s[0]));
    let (local, _, _) = build(
        &tf,
        &Horizon {
            global_speed: false,
            ..hz.clone()
        },
        &o,
    )
    .unwrap();
    assert_eq!(nlp.num_vars() + 1, local.num_vars());
    check_derivatives(&tf, &hz, &o, 1e-6, 1e-5);
}

/// The hopper of Sec. 6 (friction, path and hole constraints) in the Scholtes mode with
/// cross complementarity on the gap only: the grouped vector-dual Hessian of the
/// collocation blocks and the sparse complementarity Hessian against finite differences.
#[test]
fn hopper_jacobian_and_hessian_match_finite_differences() {
    let p = common::hopper_problem(&common::HopperSpec {
        n: 2,
        t: 0.25,
        target_x: 0.2,
        s_max: 25.0,
        ..common::HopperSpec::default()
    });
    let (tf, mut hz) = (p.tf.clone(), p.horizon.clone());
    hz.y0 = vec![0.05, 0.41, 0.2, -0.3, 0.3, -0.2, 0.5, 1.0, 0.0];
    // n_s = 1 and 3; the elastic mode (slack in every complementarity constraint) and the
    // speed-of-time penalty with n_s = 2
    for (n_s, elastic) in [(1, false), (3, false), (2, true)] {
        let o = FesdOptions {
            discretization: Discretization::builder()
                .n_s(n_s)
                .n_fe(2)
                .cross_components(1)
                .rho_sot(if elastic { 100.0 } else { 0.0 })
                .build()
                .unwrap(),
            mpcc: MpccStrategy::builder()
                .penalty(false)
                .elastic(elastic)
                .build()
                .unwrap(),
            ..FesdOptions::default()
        };
        check_derivatives(&tf, &hz, &o, 1e-5, 1e-4);
    }
    // one Scholtes row per product, the soft terminal penalty and scaled switching functions
    let tf = Arc::new(
        TimeFreezing::new(p.tf.cls.clone(), 200.0)
            .unwrap()
            .with_switch_scale(vec![10.0, 1.0, 0.5])
            .unwrap(),
    );
    let o = {
        let mut o = FesdOptions::default();
        o.discretization.n_s = 2;
        o.discretization.n_fe = 2;
        o.mpcc.penalty = false;
        o.discretization.cross_components = 1;
        o.mpcc.per_pair = true;
        o.mpcc.soft_terminal = 5.0;
        o
    };
    check_derivatives(&tf, &hz, &o, 1e-5, 1e-4);
    // the flight cuts (1 − α_i)(λᵖ_i − δ_i) ≤ 0 on the gap and the normal velocity
    let o = {
        let mut o = FesdOptions::default();
        o.discretization.n_s = 2;
        o.discretization.n_fe = 2;
        o.mpcc.penalty = false;
        o.discretization.cross_components = 1;
        o.mpcc.flight_cut = Some(0.01);
        o.mpcc.flight_cut_v = Some(0.05);
        o
    };
    let (nlp_cut, _, _) = build(&tf, &hz, &o).unwrap();
    let (nlp_off, _, _) = build(&tf, &hz, &{
        let mut o = o.clone();
        o.mpcc.flight_cut = None;
        o.mpcc.flight_cut_v = None;
        o
    })
    .unwrap();
    // two cut rows per stage point: 2 steps × 2 elements × 2 stages × 2 components
    assert_eq!(nlp_cut.num_cons(), nlp_off.num_cons() + 16);
    // path constraints only at the 2 interval ends instead of all 8 stage points
    let (nlp_ends, _, _) = build(&tf, &hz, &{
        let mut o = o.clone();
        o.discretization.path_at_stages = false;
        o
    })
    .unwrap();
    assert_eq!(
        nlp_ends.num_cons() + 6 * tf.cls.n_path(),
        nlp_cut.num_cons()
    );
    check_derivatives(&tf, &hz, &o, 1e-5, 1e-4);
    // a negative threshold is a typed error
    let bad = {
        let mut o = o;
        o.mpcc.flight_cut = Some(-1.0);
        o
    };
    assert!(build(&tf, &hz, &bad).is_err());
}

fn check_derivatives(
    tf: &Arc<TimeFreezing>,
    hz: &Horizon,
    o: &FesdOptions,
    tol_j: f64,
    tol_h: f64,
) {
    let (nlp, _layout, x0) = build(tf, hz, o).unwrap();
    // a generic point: perturb the initial guess deterministically
    let x: Vec<f64> = x0
        .iter()
        .enumerate()
        .map(|(i, v)| v + 0.1 * ((i * 7919 % 13) as f64 / 13.0 - 0.4))
        .collect();
    let (n, m) = (nlp.num_vars(), nlp.num_cons());
    let lam: Vec<f64> = (0..m).map(|i| ((i * 31 % 11) as f64 - 5.0) / 5.0).collect();
    let js = nlp.jacobian_structure();
    let mut jv = vec![0.0; js.len()];
    assert!(nlp.jacobian_values(&x, &mut jv));
    let mut jd = vec![vec![0.0; n]; m];
    for (k, (r, c)) in js.iter().enumerate() {
        jd[*r][*c] += jv[k];
    }
    let eps = 1e-6;
    let grad_l = |x: &[f64]| {
        let mut g = vec![0.0; n];
        nlp.gradient(x, &mut g);
        let mut jv = vec![0.0; js.len()];
        nlp.jacobian_values(x, &mut jv);
        for (k, (r, c)) in js.iter().enumerate() {
            g[*c] += lam[*r] * jv[k];
        }
        g
    };
    let hs = nlp.hessian_structure();
    let mut hv = vec![0.0; hs.len()];
    assert!(nlp.hessian_values(&x, 1.0, &lam, &mut hv));
    let mut hd = vec![vec![0.0; n]; n];
    for (k, (r, c)) in hs.iter().enumerate() {
        hd[*r][*c] += hv[k];
    }
    let mut worst_j: f64 = 0.0;
    let mut worst_h: f64 = 0.0;
    for c in 0..n {
        let (mut xp, mut xm) = (x.clone(), x.clone());
        xp[c] += eps;
        xm[c] -= eps;
        let (mut gp, mut gm) = (vec![0.0; m], vec![0.0; m]);
        nlp.constraints(&xp, &mut gp);
        nlp.constraints(&xm, &mut gm);
        for r in 0..m {
            worst_j = worst_j.max((jd[r][c] - (gp[r] - gm[r]) / (2.0 * eps)).abs());
        }
        let (lp, lm) = (grad_l(&xp), grad_l(&xm));
        for r in c..n {
            worst_h = worst_h.max((hd[r][c] - (lp[r] - lm[r]) / (2.0 * eps)).abs());
        }
    }
    assert!(worst_j < tol_j, "Jacobian mismatch {worst_j}");
    assert!(worst_h < tol_h, "Hessian mismatch {worst_h}");
}

#[test]
fn bad_inputs_are_typed_errors() {
    let point = common::falling_point();
    assert!(TimeFreezing::new(point.clone(), -1.0).is_err());
    let tf = Arc::new(TimeFreezing::new(point, 10.0).unwrap());
    let mut hz = Horizon {
        y0: vec![1.0, 0.0],
        lam0: None,
        n_steps: 1,
        step_len: 0.1,
        u_bounds: vec![(vec![], vec![])],
        s_bounds: (1.0, 1.0),
        clock: nonsmooth_ocp::fesd::Clock::Free,
        global_speed: false,
        terminal: vec![],
        y_bounds: None,
        control_weight: 0.0,
        tracking: vec![],
        initial_guess: None,
    };
    assert!(build(&tf, &hz, &FesdOptions::default()).is_err());
    hz.y0 = vec![1.0, 0.0, f64::NAN];
    assert!(build(&tf, &hz, &FesdOptions::default()).is_err());
    hz.y0 = vec![1.0, 0.0, 0.0];
    assert!(build(&tf, &hz, &{
        let mut o = FesdOptions::default();
        o.discretization.n_s = 4;
        o
    })
    .is_err());
    assert!(build(&tf, &hz, &FesdOptions::default()).is_ok());
}

#[test]
fn infeasible_ocp_reports_violation() {
    // the ball cannot be at q = 0.5 at rest after 0.2 s without control
    let tf = Arc::new(TimeFreezing::new(common::falling_point(), 10.0).unwrap());
    let hz = Horizon {
        y0: vec![1.0, 0.0, 0.0],
        lam0: None,
        n_steps: 2,
        step_len: 0.1,
        u_bounds: vec![(vec![], vec![]); 2],
        s_bounds: (1.0, 1.0),
        clock: nonsmooth_ocp::fesd::Clock::Free,
        global_speed: false,
        terminal: vec![(0, 0.5), (1, 0.0)],
        y_bounds: None,
        control_weight: 0.0,
        tracking: vec![],
        initial_guess: None,
    };
    let o = {
        let mut o = FesdOptions::default();
        o.discretization.n_s = 1;
        o.discretization.n_fe = 2;
        o.nlp.max_iter = 100;
        o
    };
    match nonsmooth_ocp::fesd::solve_ocp(&tf, &hz, &o) {
        Err(nonsmooth_ocp::OcpError::Ipopt {
            constraint_violation,
            ..
        }) => {
            assert!(constraint_violation > 1e-3)
        }
        other => panic!("expected an IPOPT error, got {other:?}"),
    }
}
