//! Every `OcpError` a user can trigger, with what its message must name (the IPOPT failure of
//! an infeasible OCP is in `derivatives.rs`).

use crate::common;

use nonsmooth_ocp::fesd::{build, solve_ocp, FesdOptions, Horizon};
use nonsmooth_ocp::time_freezing::TimeFreezing;
use nonsmooth_ocp::OcpError;
use std::sync::Arc;

/// The falling point of `examples/falling_point.toml` (no controls), a_n = 10.
fn ball() -> Arc<TimeFreezing> {
    Arc::new(TimeFreezing::new(common::falling_point(), 10.0).expect("valid time-freezing system"))
}

fn drop_horizon() -> Horizon {
    Horizon {
        y0: vec![1.0, 0.0, 0.0],
        lam0: None,
        n_steps: 2,
        step_len: 0.4,
        u_bounds: vec![(vec![], vec![]); 2],
        s_bounds: (1.0, 1.0),
        clock: nonsmooth_ocp::fesd::Clock::Free,
        global_speed: false,
        terminal: vec![],
        y_bounds: None,
        control_weight: 0.0,
        tracking: vec![],
        initial_guess: None,
    }
}

#[test]
fn unavailable_stage_count_is_named() {
    let o = {
        let mut o = FesdOptions::default();
        o.discretization.n_s = 4;
        o
    };
    match build(&ball(), &drop_horizon(), &o) {
        Err(e @ OcpError::InvalidInput(_)) => assert!(e.to_string().contains("n_s = 4"), "{e}"),
        other => panic!("expected InvalidInput, got {:?}", other.err()),
    }
}

#[test]
fn wrong_initial_state_length_is_named() {
    let mut hz = drop_horizon();
    hz.y0 = vec![1.0, 0.0];
    match build(&ball(), &hz, &FesdOptions::default()) {
        Err(e @ OcpError::InvalidInput(_)) => {
            assert!(
                e.to_string().contains("y0 must have 3 finite entries"),
                "{e}"
            )
        }
        other => panic!("expected InvalidInput, got {:?}", other.err()),
    }
}

#[test]
fn non_finite_initial_state_is_rejected() {
    let mut hz = drop_horizon();
    hz.y0[0] = f64::NAN;
    assert!(matches!(
        build(&ball(), &hz, &FesdOptions::default()),
        Err(OcpError::InvalidInput(_))
    ));
}

#[test]
fn a_homotopy_cut_short_reports_its_residuals() {
    // One relaxed NLP across an impact, without the polishing step, does not reach
    // complementarity 1e-14.
    let o = {
        let mut o = FesdOptions::default();
        o.discretization.n_s = 1;
        o.discretization.n_fe = 2;
        o.mpcc.n_homotopy = 1;
        o.mpcc.comp_tol = 1e-14;
        o.mpcc.polish = false;
        o
    };
    match solve_ocp(&ball(), &drop_horizon(), &o) {
        Err(e @ OcpError::HomotopyStalled { .. }) => {
            let OcpError::HomotopyStalled {
                comp_residual,
                ref x,
                ref log,
                ..
            } = e
            else {
                unreachable!()
            };
            assert!(comp_residual > 1e-14 && comp_residual.is_finite());
            assert!(!x.is_empty(), "the last iterate is returned");
            // the log of the NLPs solved so far travels with the error (one NLP here)
            assert_eq!(log.len(), 1);
            assert!(log[0].iterations > 0 && (log[0].comp_residual - comp_residual).abs() < 1e-12);
            assert!(
                e.to_string()
                    .starts_with("homotopy stalled: complementarity"),
                "{e}"
            );
        }
        other => panic!("expected HomotopyStalled, got {other:?}"),
    }
}

#[test]
fn bad_smoothing_options_are_named() {
    let smoothing = |widths: Vec<f64>, factors: Vec<f64>| {
        let mut o = FesdOptions::default();
        o.mpcc.smoothing = Some(nonsmooth_ocp::smoothing::Smoothing {
            widths,
            factors,
            lambda_weight: 1e-3,
            cross_sigmas: vec![],
            terminal_weight: 100.0,
            max_iter: None,
        });
        o
    };
    let message = |o: &FesdOptions| match build(&ball(), &drop_horizon(), o) {
        Err(e @ OcpError::InvalidInput(_)) => e.to_string(),
        other => panic!("expected InvalidInput, got {:?}", other.err()),
    };
    // the ball has two switching functions (height, velocity)
    let e = message(&smoothing(vec![0.01; 3], vec![1.0]));
    assert!(
        e.contains("smoothing.widths") && e.contains("2 positive"),
        "{e}"
    );
    let e = message(&smoothing(vec![0.01, f64::NAN], vec![1.0]));
    assert!(e.contains("smoothing.widths"), "{e}");
    let e = message(&smoothing(vec![0.01, 0.1], vec![]));
    assert!(e.contains("smoothing.factors"), "{e}");
    let stewart = {
        let mut o = smoothing(vec![0.01, 0.1], vec![1.0]);
        o.discretization.dcs = nonsmooth_ocp::fesd::Dcs::Stewart;
        o
    };
    assert!(message(&stewart).contains("step representation"));
}

/// Each option group's builder ([`Discretization`], [`MpccStrategy`], [`NlpSettings`])
/// rejects an invalid value with an error naming the field and its rule, and [`build`]
/// applies the same rules to options set field by field.
#[test]
fn each_options_builder_names_the_invalid_field() {
    use nonsmooth_ocp::fesd::{Discretization, MpccStrategy, NlpSettings};
    fn named<T: std::fmt::Debug>(r: Result<T, OcpError>, says: &str) {
        match r {
            Err(e @ OcpError::InvalidInput(_)) => {
                assert!(e.to_string().contains(says), "{e} should name {says:?}")
            }
            other => panic!("expected InvalidInput naming {says:?}, got {other:?}"),
        }
    }
    named(Discretization::builder().n_s(4).build(), "n_s = 4");
    named(
        Discretization::builder().n_fe(0).build(),
        "n_fe must be positive",
    );
    named(
        Discretization::builder().gamma_h(1.0).build(),
        "gamma_h must lie in [0, 1)",
    );
    named(
        Discretization::builder().rho_h(-1.0).build(),
        "rho_h must be finite and ≥ 0",
    );
    named(
        Discretization::builder().alpha0(1.5).build(),
        "alpha0 must lie in [0, 1]",
    );
    named(
        MpccStrategy::builder().sigma0(0.0).build(),
        "sigma0 must be positive",
    );
    named(
        MpccStrategy::builder().kappa(1.0).build(),
        "kappa must lie in (0, 1)",
    );
    named(
        MpccStrategy::builder().comp_tol(f64::NAN).build(),
        "comp_tol must be positive",
    );
    named(
        MpccStrategy::builder().elastic(true).build(),
        "elastic needs penalty = false",
    );
    named(
        MpccStrategy::builder().flight_cut(-1.0).build(),
        "flight_cut must be finite and ≥ 0",
    );
    named(
        MpccStrategy::builder()
            .cut_schedule(vec![nonsmooth_ocp::fesd::CutStep {
                sigma: 0.0,
                delta: None,
                delta_v: None,
            }])
            .build(),
        "cut_schedule: sigma must be positive",
    );
    named(
        NlpSettings::builder().tol(0.0).build(),
        "tol must be positive",
    );
    named(
        NlpSettings::builder().max_iter(0).build(),
        "max_iter must be positive",
    );
    named(
        NlpSettings::builder().first_mu(0.9).build(),
        "first_mu must lie in (0, 0.5]",
    );
    // valid values build, the defaults are the builders' start, a value its own builder's
    let d = Discretization::builder()
        .n_s(2)
        .n_fe(4)
        .build()
        .expect("valid");
    assert_eq!((d.n_s, d.n_fe, d.gamma_h), (2, 4, 0.99));
    assert_eq!(d.to_builder().build().expect("valid"), d);
    assert_eq!(
        MpccStrategy::builder().build().expect("valid"),
        MpccStrategy::default()
    );
    assert_eq!(
        NlpSettings::builder().build().expect("valid"),
        NlpSettings::default()
    );
    let elastic = MpccStrategy::builder().penalty(false).elastic(true).build();
    assert!(elastic.expect("valid").elastic);
    nonsmooth_ocp::problem::default_options()
        .validate()
        .expect("valid preset");
    // the same rule for options set field by field, when the NLP is built
    let mut o = FesdOptions::default();
    o.mpcc.kappa = 2.0;
    named(
        build(&ball(), &drop_horizon(), &o),
        "kappa must lie in (0, 1)",
    );
}
