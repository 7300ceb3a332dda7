//! Certificates on the paper's examples (digest §6 tests 8–10, quick forms).

use nonsmooth_sos::lyapunov::{certify, monte_carlo_check, CertifyOptions, Method, Verdict};
use nonsmooth_sos::planar::PlanarParams;
use nonsmooth_sos::sim::{falsify, SimOptions};

fn fig2(mu1: f64, d: f64) -> PlanarParams {
    PlanarParams::new(30f64.to_radians(), mu1, 2.0, d, 0.0)
}

#[test]
fn fig2_point_is_certified_and_survives_checks() {
    let p = fig2(2.0, 1.0);
    let r = certify(&p, &CertifyOptions::default()).expect("solves");
    assert_eq!(r.verdict, Verdict::Certified, "{r:?}");
    assert!(r.epsilon > 1e-7);
    // Digest §6 test 8: Monte-Carlo sign test, ≥ 10⁵ samples over all conditions.
    let v = r.v.expect("certificate polynomial");
    let conditions = 1 + r.modes.len() + 2;
    let per = 100_000 / conditions + 1;
    let worst = monte_carlo_check(&p, Method::MultiV, &v, per, 11).expect("checks");
    assert!(worst >= -1e-6, "worst condition value {worst}");
    // Falsification: no run diverges.
    let f = falsify(&p, 50, 1e-3, 100.0, 5, &SimOptions::default());
    assert!(!f.any_diverged(), "{f:?}");
}

#[test]
fn ptt_baseline_fails_where_multi_v_succeeds() {
    // Digest §6 test 9: the single monotone V has no certificate.
    let p = fig2(2.0, 1.0);
    let r = certify(
        &p,
        &CertifyOptions {
            method: Method::Ptt,
            ..CertifyOptions::default()
        },
    )
    .expect("solves");
    assert!(!r.certified(), "{r:?}");
}

#[test]
fn excluded_points_get_reasons_not_certificates() {
    let opts = CertifyOptions::default();
    // d ≤ h tanα: not applicable.
    let r = certify(&fig2(1.0, 0.5), &opts).expect("runs");
    assert!(matches!(r.verdict, Verdict::NotApplicable(_)));
    // α outside (0, π/2) and negative μ.
    let r = certify(&PlanarParams::new(1.6, 1.0, 2.0, 1.0, 0.0), &opts).expect("runs");
    assert!(matches!(r.verdict, Verdict::NotApplicable(_)));
    let r = certify(&fig2(-0.1, 1.0), &opts).expect("runs");
    assert!(matches!(r.verdict, Verdict::NotApplicable(_)));
    // No equilibrium: μ₁ + μ₂ < 2 tanα.
    let p = PlanarParams::new(20f64.to_radians(), 0.3, 0.3, 1.0, 0.1);
    let r = certify(&p, &opts).expect("runs");
    assert_eq!(r.verdict, Verdict::NoEquilibrium);
}

/// Digest §6 test 11 (one Fig. 3 point, e = 0.1). Ignored by default: the degree-6
/// flight-then-impact conditions take tens of seconds with Clarabel (docs/stability.md §7).
/// It checks that the e > 0 program is built and solved, and that a certificate, when one
/// is found, survives the simulation.
#[test]
#[ignore]
fn fig3_point_e_positive() {
    let p = PlanarParams::new(20f64.to_radians(), 1.0, 1.0, 1.0, 0.1);
    let r = certify(&p, &CertifyOptions::default()).expect("solves");
    println!(
        "{:?} eps={:.3e} build={:.2}s solve={:.2}s size={:?}",
        r.verdict, r.epsilon, r.build_seconds, r.solve_seconds, r.size
    );
    if r.certified() {
        let f = falsify(&p, 50, 1e-3, 100.0, 5, &SimOptions::default());
        assert!(!f.any_diverged(), "{f:?}");
    }
}

/// The full `sos-fig2` grid (11 × 10, as in `nonsmooth reproduce sos-fig2`), run directly:
/// prints the experiment's metrics. Ignored by default (minutes).
#[test]
#[ignore]
fn fig2_full_grid_metrics() {
    use nonsmooth_sos::grid::{linspace, sweep, GridSpec};
    let spec = GridSpec {
        alpha: 30f64.to_radians(),
        mu2: Some(2.0),
        e: 0.0,
        mu: linspace(0.0, 2.0, 11),
        d: linspace(0.2, 2.0, 10),
        ptt: true,
        sim_samples: 100,
        sim_radius: 1e-3,
        divergence_factor: 100.0,
    };
    let r = sweep(&spec, &|_| {}).expect("sweeps");
    println!(
        "certified_points={} certified_in_ambiguous={} certified_with_d_le_tan_alpha={} \
         certified_but_diverged_in_simulation={} ptt_certified_points={} seconds_per_point={:.3}",
        r.certified_points,
        r.certified_in_ambiguous,
        r.certified_with_d_le_tan_alpha,
        r.certified_but_diverged_in_simulation,
        r.ptt_certified_points,
        r.seconds_per_point
    );
    assert_eq!(r.certified_in_ambiguous, 0);
    assert_eq!(r.certified_with_d_le_tan_alpha, 0);
    assert_eq!(r.certified_but_diverged_in_simulation, 0);
    assert!(r.certified_points >= 1);
}
