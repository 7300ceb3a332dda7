//! Every `OcpError` a user can trigger, with what its message must name (the IPOPT failure of
//! an infeasible OCP is in `derivatives.rs`).

use nonsmooth_ocp::fesd::{build, solve_ocp, FesdOptions, Horizon};
use nonsmooth_ocp::tf::{PointMass, TimeFreezing};
use nonsmooth_ocp::OcpError;
use std::sync::Arc;

fn ball() -> Arc<TimeFreezing<PointMass>> {
    let pm = PointMass {
        dim: 1,
        mass: 1.0,
        gravity: 9.81,
        mu: None,
    };
    Arc::new(TimeFreezing::new(pm, 10.0).expect("valid time-freezing system"))
}

fn drop_horizon() -> Horizon {
    Horizon {
        y0: vec![1.0, 0.0, 0.0],
        lam0: None,
        n_steps: 2,
        step_len: 0.4,
        u_bounds: vec![(vec![0.0], vec![0.0]); 2],
        s_bounds: (1.0, 1.0),
        clock: nonsmooth_ocp::fesd::Clock::Free,
        global_speed: false,
        terminal: vec![],
        y_bounds: None,
        control_weight: 0.0,
    }
}

#[test]
fn unavailable_stage_count_is_named() {
    let o = FesdOptions {
        n_s: 4,
        ..FesdOptions::default()
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
    let o = FesdOptions {
        n_s: 1,
        n_fe: 2,
        n_homotopy: 1,
        comp_tol: 1e-14,
        polish: false,
        ..FesdOptions::default()
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
    let smoothing = |widths: Vec<f64>, factors: Vec<f64>| FesdOptions {
        smoothing: Some(nonsmooth_ocp::smoothing::Smoothing {
            widths,
            factors,
            lambda_weight: 1e-3,
            cross_sigmas: vec![],
            terminal_weight: 100.0,
            max_iter: None,
        }),
        ..FesdOptions::default()
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
    let stewart = FesdOptions {
        dcs: nonsmooth_ocp::fesd::Dcs::Stewart,
        ..smoothing(vec![0.01, 0.1], vec![1.0])
    };
    assert!(message(&stewart).contains("step representation"));
}
