//! Unit tests of the program construction: template and Gram sizes (Theorem 2;
//! docs/decisions/000-sos-stability.md, program), the shape of the flight-then-impact programs, and
//! agreement of the flight targets with the physical event chain (impact, ballistic flight,
//! impact).

use rand::{Rng, SeedableRng};

use super::build::{build, Kind};
use super::template::template_monomials;
use super::types::{FlightFormulation, Method};
use super::verify::{ballistic_to_impact, sample_ball};
use crate::planar::{PlanarParams, TH, U, V, W, Y, Z};
use crate::SosError;

/// Checks one physical flight sample against its condition: the target polynomial at
/// the reduced variables equals `want` (the physical drop of `V`; for `k = i` possibly
/// divided by `g = −γ̇_k(w)`), and the sample lies in the condition's semialgebraic set.
fn check_flight_sample(
    p: &PlanarParams,
    cond: &crate::program::Condition,
    z: &[f64],
    (k, i): (usize, usize),
    (w, x0, xm): (&[f64; 6], &[f64; 6], &[f64; 6]),
    want: f64,
    name: &str,
) -> Result<(), SosError> {
    let t = cond.p.evaluate_coefficients(z);
    let g = -p.gamma_dot(w, k);
    let red: Vec<f64> = if k == i {
        vec![w[TH], w[U], g, w[W]]
    } else {
        let dl = (xm[U] - x0[U]) / p.alpha.sin();
        vec![w[U], w[V], w[W], dl]
    };
    let got = t.eval(&red)?;
    let ok = (got - want).abs() < 1e-8 * (1.0 + want.abs())
        || (k == i && (got * g - want).abs() < 1e-8 * (1.0 + want.abs()));
    assert!(ok, "{name}: polynomial {got} vs physics {want} (g = {g})");
    for gk in &cond.ineqs {
        let val = gk.eval(&red)?;
        assert!(
            val >= -1e-9,
            "{name}: constraint {val} < 0 at a physical state"
        );
    }
    Ok(())
}

#[test]
fn template_and_gram_sizes() -> Result<(), SosError> {
    let p = PlanarParams::new(30f64.to_radians(), 0.5, 2.0, 1.0, 0.0);
    let (prog, v2, kinds, _) = build(&p, Method::MultiV, FlightFormulation::AnyStart, 3)?;
    // 55 template coefficients, 3 of them forced to 0, + y.
    assert_eq!(template_monomials().len(), 55);
    assert_eq!(v2.terms().len(), 53);
    let size = prog.size();
    // The Gram sizes of docs/decisions/000-sos-stability.md ("Conditions of Theorem 2 and
    // the SOS program"; Várkonyi 2022, "Lyapunov stability analysis of rigid body systems
    // with multiple contacts by sums-of-squares programming", Theorem 2) less the constant
    // monomial, which facial reduction removes from σ₀ and from the ball multiplier (the
    // conditions vanish at the equilibrium):
    // positivity σ0: 21 → 20, multipliers on γ₁, γ₂: 6, ball: 6 → 5.
    assert_eq!(&size.psd_blocks[..4], &[20, 6, 6, 5]);
    // single-slip modes: 3 vars → 10 → 9; impact: 5 vars → 21 → 20.
    assert!(size.psd_blocks.contains(&9) && size.psd_blocks.contains(&20));
    assert_eq!(kinds.len(), 1 + p.consistent_modes().len() + 2);
    let q = PlanarParams { e: 0.1, ..p };
    let (prog, _, _, _) = build(&q, Method::MultiV, FlightFormulation::AnyStart, 3)?;
    // flight then impact: 4 reduced vars, σ₀ basis of degree 1–3: 34.
    assert!(prog.size().psd_blocks.contains(&34));
    Ok(())
}

#[test]
fn flight_after_impact_program_shape() -> Result<(), SosError> {
    let p = PlanarParams::new(20f64.to_radians(), 1.0, 1.0, 1.0, 0.1);
    let (prog, _, kinds, _) = build(&p, Method::MultiV, FlightFormulation::AfterImpact, 3)?;
    let labels: Vec<&str> = prog.conditions().iter().map(|c| c.label.as_str()).collect();
    // 2 × 2 contact pairs × 3 × 3 impulse pieces (no slip piece is dropped at μ = 1).
    assert_eq!(
        labels
            .iter()
            .filter(|l| l.starts_with("flight after"))
            .count(),
        36
    );
    // Plain impacts only with both contacts closed: 2 contacts × 3 pieces.
    assert_eq!(
        labels.iter().filter(|l| l.contains("both closed")).count(),
        6
    );
    assert!(!labels.iter().any(|l| l.starts_with("flight from")));
    assert!(kinds.contains(&Kind::FlightAfterImpact));
    assert!(kinds.contains(&Kind::PositivityScaled));
    // Flight conditions: 4 reduced variables, σ₀ on (a top-degree-pruned subset of) the
    // 34 monomials of degree 1–3.
    let blocks = prog.size().psd_blocks;
    assert!(blocks.iter().all(|b| *b <= 34), "{blocks:?}");
    assert!(
        blocks.iter().filter(|b| **b > 9).count() >= 36,
        "{blocks:?}"
    );
    Ok(())
}

/// The polynomial pre-impact flight targets agree with the physical event chain
/// (impact at `k`, ballistic flight to the next pre-impact state) for a random numeric
/// `V`, and every physical sample lies in its condition's semialgebraic set.
#[test]
fn pre_impact_targets_match_physics() -> Result<(), SosError> {
    let p = PlanarParams::new(20f64.to_radians(), 0.8, 0.8, 1.0, 0.3);
    let (prog, v2, kinds, _) = build(&p, Method::MultiV, FlightFormulation::PreImpact, 3)?;
    assert!(kinds.contains(&Kind::FlightPreImpact));
    let labels: Vec<&str> = prog.conditions().iter().map(|c| c.label.as_str()).collect();
    // 2 × 2 contact pairs × 3 impulse pieces; no plain-impact conditions.
    assert_eq!(
        labels
            .iter()
            .filter(|l| l.starts_with("pre-impact"))
            .count(),
        12
    );
    assert!(!labels
        .iter()
        .any(|l| l.contains("impact") && !l.starts_with("pre-impact")));
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let z: Vec<f64> = (0..prog.num_vars())
        .map(|_| rng.gen_range(-1.0..1.0))
        .collect();
    let v = v2.evaluate_coefficients(&z);
    let l = [p.l(0), p.l(1)];
    let mut checked = [0usize; 2];
    for _ in 0..8000 {
        let s = sample_ball(&mut rng, 6, 0.5);
        let mut w = [0.0; 6];
        w.copy_from_slice(&s);
        w[Y] = 0.0;
        let k = usize::from(rng.gen_bool(0.5));
        w[Z] = -l[k] * w[TH];
        if p.gamma(&w, 1 - k) < 0.0 {
            continue;
        }
        let Some((x0, ln, lt)) = p.impact(&w, k) else {
            continue;
        };
        let Some((xm, i)) = ballistic_to_impact(&p, &x0) else {
            continue;
        };
        let tol = 1e-9 * (1.0 + ln.abs());
        let piece = if (lt - p.mu(k) * ln).abs() < tol && ln > 1e-12 {
            "slip-"
        } else if (lt + p.mu(k) * ln).abs() < tol && ln > 1e-12 {
            "slip+"
        } else {
            "stick"
        };
        let name = format!("pre-impact {} flight to impact {} ({piece})", k + 1, i + 1);
        let Some(cond) = prog.conditions().iter().find(|c| c.label == name) else {
            continue;
        };
        let want = v.eval(&w)? - v.eval(&xm)?;
        check_flight_sample(&p, cond, &z, (k, i), (&w, &x0, &xm), want, &name)?;
        checked[usize::from(k != i)] += 1;
    }
    assert!(
        checked[0] > 100 && checked[1] > 40,
        "too few samples checked: {checked:?}"
    );
    Ok(())
}

/// The polynomial flight-after-impact targets agree with the physical event chain
/// (impact, ballistic flight, impact) for a random numeric `V`: for every sampled
/// previous pre-impact state, the target of the piece pair that the physical impacts
/// pick equals `V(x₀) − V(x₁⁺)` (divided by `g` for the same-contact hop).
#[test]
fn flight_after_impact_targets_match_physics() -> Result<(), SosError> {
    let p = PlanarParams::new(20f64.to_radians(), 0.8, 0.8, 1.0, 0.3);
    let (prog, v2, _, _) = build(&p, Method::MultiV, FlightFormulation::AfterImpact, 3)?;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let z: Vec<f64> = (0..prog.num_vars())
        .map(|_| rng.gen_range(-1.0..1.0))
        .collect();
    let v = v2.evaluate_coefficients(&z);
    let l = [p.l(0), p.l(1)];
    let piece = |x: &[f64; 6], c: usize, lt: f64, ln: f64| -> &'static str {
        let _ = x;
        if (lt - p.mu(c) * ln).abs() < 1e-9 * (1.0 + ln.abs()) && ln > 1e-12 {
            "slip-"
        } else if (lt + p.mu(c) * ln).abs() < 1e-9 * (1.0 + ln.abs()) && ln > 1e-12 {
            "slip+"
        } else {
            "stick"
        }
    };
    let mut checked = 0;
    for _ in 0..4000 {
        let s = sample_ball(&mut rng, 6, 0.5);
        let mut w = [0.0; 6];
        w.copy_from_slice(&s);
        w[Y] = 0.0;
        let k = usize::from(rng.gen_bool(0.5));
        w[Z] = -l[k] * w[TH];
        if p.gamma(&w, 1 - k) < 0.0 {
            continue;
        }
        let Some((x0, ln0, lt0)) = p.impact(&w, k) else {
            continue;
        };
        let Some((xm, i)) = ballistic_to_impact(&p, &x0) else {
            continue;
        };
        let Some((xp, ln1, lt1)) = p.impact(&xm, i) else {
            continue;
        };
        let (a, b) = (piece(&w, k, lt0, ln0), piece(&xm, i, lt1, ln1));
        // Ambiguous piece labels at stick/slip boundaries are skipped.
        let name = format!(
            "flight after impact {} then impact {} ({a}, {b})",
            k + 1,
            i + 1
        );
        let Some(cond) = prog.conditions().iter().find(|c| c.label == name) else {
            continue;
        };
        let want = v.eval(&x0)? - v.eval(&xp)?;
        check_flight_sample(&p, cond, &z, (k, i), (&w, &x0, &xm), want, &name)?;
        checked += 1;
    }
    assert!(checked > 200, "only {checked} samples checked");
    Ok(())
}
