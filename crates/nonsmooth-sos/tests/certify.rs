//! Certificates on the examples of Várkonyi (2022, arXiv:2209.13908), "Lyapunov stability
//! analysis of rigid body systems with multiple contacts by sums-of-squares programming",
//! Figs. 2 and 3: acceptance tests 8–11 of docs/decisions/000-sos-stability.md, quick forms.

use nonsmooth_sos::event_driven::{certificate_along_events, falsify, SimOptions};
use nonsmooth_sos::lyapunov::{certify, monte_carlo_check, CertifyOptions, Method, Verdict};
use nonsmooth_sos::planar::PlanarParams;
use nonsmooth_sos::poly::Poly;

fn fig2(mu1: f64, d: f64) -> PlanarParams {
    PlanarParams::new(30f64.to_radians(), mu1, 2.0, d, 0.0)
}

#[test]
fn fig2_point_is_certified_and_survives_checks() {
    let p = fig2(2.0, 1.0);
    let r = certify(&p, &CertifyOptions::default()).expect("solves");
    assert_eq!(r.verdict, Verdict::Certified, "{r:?}");
    assert!(r.epsilon > 1e-7);
    // Acceptance test 8: Monte-Carlo sign test, ≥ 10⁵ samples over all conditions.
    let v = r.v.expect("certificate polynomial");
    let conditions = 1 + r.modes.len() + 2;
    let per = 100_000 / conditions + 1;
    let worst = monte_carlo_check(&p, Method::MultiV, &v, per, 11).expect("checks");
    assert!(worst >= -1e-6, "worst condition value {worst}");
    // Falsification: no run diverges.
    let f = falsify(&p, 50, 1e-3, 100.0, 5, &SimOptions::default());
    assert!(!f.any_diverged(), "{f:?}");
    // Acceptance test 8, second half: along ZOD simulations from random perturbations, the
    // certificate V₂ sampled at the event instants (pre-impact states, ends of contact-mode
    // segments) never increases beyond round-off.
    let m =
        certificate_along_events(&p, &v, 40, 1e-3, 17, &SimOptions::default()).expect("simulates");
    println!("{m:?}");
    assert!(m.comparisons >= 40 && m.impacts >= 40, "{m:?}");
    assert!(m.max_abs_value > 1e-5, "{m:?}");
    assert!(m.max_increase <= 1e-9 * m.max_abs_value, "{m:?}");
    // The test discriminates: V = y alone (no P) increases while the body slides downhill.
    let y = Poly::var(6, 0).expect("variable");
    let my =
        certificate_along_events(&p, &y, 40, 1e-3, 17, &SimOptions::default()).expect("simulates");
    println!("{my:?}");
    assert!(my.max_increase > 1e-3 * my.max_abs_value, "{my:?}");
}

#[test]
fn ptt_baseline_fails_where_multi_v_succeeds() {
    // Acceptance test 9: the single monotone V of Posa, Tobenkin & Tedrake has no certificate.
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

/// Acceptance tests 11 and 8 (second half) for e > 0 (Fig. 3, α = 20°, μ = 1.3, d = 0.8,
/// e = 0.1; a few seconds with the exact reductions of docs/decisions/000-sos-stability.md
/// decision 11): the point is certified, the Monte-Carlo sign test of every condition passes,
/// and along ZOD simulations from random perturbations (impacts with restitution, micro-hops)
/// `V₂` sampled at the pre-impact instants and at the ends of contact-mode segments, the
/// instants at which the pre-impact formulation compares it, never increases beyond
/// round-off.
#[test]
fn fig3_point_certified_and_non_increasing_at_events() {
    let p = PlanarParams::new(20f64.to_radians(), 1.3, 1.3, 0.8, 0.1);
    let r = certify(&p, &CertifyOptions::default()).expect("solves");
    assert_eq!(r.verdict, Verdict::Certified, "{r:?}");
    assert!(r.epsilon > 1e-7);
    let v = r.v.expect("certificate polynomial");
    let worst = monte_carlo_check(&p, Method::MultiV, &v, 5000, 3).expect("checks");
    assert!(worst >= -1e-6, "worst condition value {worst}");
    let m =
        certificate_along_events(&p, &v, 40, 1e-3, 23, &SimOptions::default()).expect("simulates");
    println!("{m:?}");
    assert!(m.comparisons >= 40, "{m:?}");
    assert!(m.max_abs_value > 1e-5, "{m:?}");
    assert!(m.max_increase <= 1e-9 * m.max_abs_value, "{m:?}");
    // Restitution: the runs bounce (several impacts per run on average).
    assert!(m.impacts >= 80, "{m:?}");
    // The test discriminates: V = y alone grows while the body slides or hops downhill.
    let y = Poly::var(6, 0).expect("variable");
    let my =
        certificate_along_events(&p, &y, 40, 1e-3, 23, &SimOptions::default()).expect("simulates");
    assert!(my.max_increase > 1e-3 * my.max_abs_value, "{my:?}");
    let f = falsify(&p, 40, 1e-3, 100.0, 29, &SimOptions::default());
    assert!(!f.any_diverged(), "{f:?}");
}
