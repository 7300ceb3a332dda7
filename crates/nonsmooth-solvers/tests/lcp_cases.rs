//! Specific LCP instances: degenerate problems on which Lemke's method cycles without the
//! lexicographic rule, unsolvable problems (ray termination), the MLCP reduction on problems
//! with analytic solutions, the enumerator on a problem with three known solutions, and bad
//! input producing typed errors.

use nalgebra::{DMatrix, DVector};
use nonsmooth_solvers::lcp::{
    enumerate_all, lemke, pgs, solve_mlcp_lemke, Lcp, LemkeOptions, Mlcp, PgsOptions,
};
use nonsmooth_solvers::{SolveStatus, SolverError};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn lcp(rows: usize, m: &[f64], q: &[f64]) -> Lcp {
    Lcp::new(
        DMatrix::from_row_slice(rows, rows, m),
        DVector::from_row_slice(q),
    )
    .unwrap()
}

fn non_lex() -> LemkeOptions {
    LemkeOptions {
        lexicographic: false,
        ..LemkeOptions::default()
    }
}

/// M = [[1,1,2],[2,1,0],[0,0,2]], q = (−1,−1,−1): M ≥ 0 with positive diagonal is strictly
/// copositive, so the LCP is solvable and Lemke's method must terminate with a solution. All
/// three ratios of the first pivot tie; with the smallest-index tie-break the method cycles
/// (found by a seeded search over degenerate integer instances), the lexicographic rule
/// terminates after 3 pivots.
#[test]
fn degenerate_3x3_cycles_without_lex_rule_and_terminates_with_it() {
    let p = lcp(
        3,
        &[1.0, 1.0, 2.0, 2.0, 1.0, 0.0, 0.0, 0.0, 2.0],
        &[-1.0, -1.0, -1.0],
    );
    let bad = lemke(&p, &non_lex()).unwrap_err();
    match bad {
        SolverError::Failed { reason, .. } => assert!(reason.contains("pivot cap")),
        e => panic!("expected cycling to hit the pivot cap, got {e}"),
    }
    let s = lemke(&p, &LemkeOptions::default()).unwrap();
    assert_eq!(s.status, SolveStatus::Solved);
    assert_eq!(s.iterations, 3);
    assert!(s.residuals.max() <= 1e-12);
    let all = enumerate_all(&p, 1e-10).unwrap();
    assert!(all.iter().any(|e| (&e.z - &s.z).amax() <= 1e-12));
}

/// A 5 × 5 strictly copositive instance with two identical rows (rows 1 and 2) and repeated
/// entries of q; the smallest-index rule cycles, the lexicographic rule solves it.
#[test]
fn degenerate_5x5_repeated_rows_cycles_without_lex_rule() {
    #[rustfmt::skip]
    let m = [
        1.0, 2.0, 0.0, 2.0, 2.0,
        1.0, 2.0, 0.0, 2.0, 2.0,
        2.0, 2.0, 1.0, 2.0, 2.0,
        0.0, 0.0, 2.0, 1.0, 2.0,
        2.0, 1.0, 1.0, 1.0, 1.0,
    ];
    let p = lcp(5, &m, &[-2.0, -1.0, -2.0, -2.0, -1.0]);
    assert!(matches!(
        lemke(&p, &non_lex()),
        Err(SolverError::Failed { .. })
    ));
    let s = lemke(&p, &LemkeOptions::default()).unwrap();
    assert!(s.residuals.max() <= 1e-12);
    // w = M z + q ≥ 0 with z = (0,0,0,2,0) is the solution found.
    assert!((&s.z - DVector::from_row_slice(&[0.0, 0.0, 0.0, 2.0, 0.0])).amax() <= 1e-12);
}

/// Highly degenerate family: strictly copositive integer matrices with pairs of identical
/// rows and q = −1 (every first-pivot ratio ties). Lemke must terminate with a valid
/// solution every time, and for n ≤ 8 that solution is one the enumerator finds.
#[test]
fn degenerate_repeated_rows_family_terminates() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    for trial in 0..60 {
        let n = 2 + 2 * (trial % 10);
        let mut m = DMatrix::zeros(n, n);
        for k in (0..n).step_by(2) {
            for j in 0..n {
                m[(k, j)] = f64::from(rng.gen_range(0u8..3));
            }
            m[(k, k)] = m[(k, k)].max(1.0);
            m[(k, k + 1)] = m[(k, k + 1)].max(1.0);
            for j in 0..n {
                m[(k + 1, j)] = m[(k, j)];
            }
        }
        let q = DVector::from_element(n, -1.0);
        let p = Lcp::new(m, q).unwrap();
        let s = lemke(&p, &LemkeOptions::default()).unwrap_or_else(|e| panic!("n={n}: {e}"));
        assert!(s.residuals.max() <= 1e-9, "n={n}: {:?}", s.residuals);
        if n <= 8 {
            let all = enumerate_all(&p, 1e-9).unwrap();
            assert!(all.iter().any(|e| (&e.z - &s.z).amax() <= 1e-8), "n={n}");
        }
    }
}

#[test]
fn unsolvable_scalar_instance_is_ray_termination() {
    // w = −z − 1 < 0 for every z ≥ 0.
    let p = lcp(1, &[-1.0], &[-1.0]);
    match lemke(&p, &LemkeOptions::default()) {
        Err(SolverError::NoSolution { solver, reason }) => {
            assert_eq!(solver, "lemke");
            assert!(reason.contains("ray termination"), "{reason}");
        }
        r => panic!("expected NoSolution, got {r:?}"),
    }
    assert!(enumerate_all(&p, 1e-12).unwrap().is_empty());
}

#[test]
fn unsolvable_psd_instance_is_ray_termination() {
    // M = [[1,−1],[−1,1]] (PSD), q = (−1,−1): w₁ + w₂ = −2 for every z, so infeasible.
    let p = lcp(2, &[1.0, -1.0, -1.0, 1.0], &[-1.0, -1.0]);
    assert!(matches!(
        lemke(&p, &LemkeOptions::default()),
        Err(SolverError::NoSolution { .. })
    ));
    assert!(enumerate_all(&p, 1e-12).unwrap().is_empty());
}

#[test]
fn enumerator_lists_all_three_solutions() {
    // M = [[1,2],[2,1]], q = (−1,−1): solutions z = (1,0), (0,1) and (1/3,1/3).
    let p = lcp(2, &[1.0, 2.0, 2.0, 1.0], &[-1.0, -1.0]);
    let all = enumerate_all(&p, 1e-12).unwrap();
    assert_eq!(all.len(), 3);
    let expect = [[1.0, 0.0], [0.0, 1.0], [1.0 / 3.0, 1.0 / 3.0]];
    for e in expect {
        let e = DVector::from_row_slice(&e);
        assert!(all.iter().any(|s| (&s.z - &e).amax() <= 1e-14), "{e}");
    }
    for s in &all {
        assert!(s.residuals.max() <= 1e-14);
        assert_eq!(s.iterations, 4);
    }
    let l = lemke(&p, &LemkeOptions::default()).unwrap();
    assert!(all.iter().any(|s| (&s.z - &l.z).amax() <= 1e-12));
}

#[test]
fn pivot_cap_is_a_typed_error() {
    let p = lcp(2, &[2.0, 1.0, 1.0, 2.0], &[-5.0, -6.0]);
    let opts = LemkeOptions {
        max_pivots: Some(1),
        ..LemkeOptions::default()
    };
    assert!(matches!(
        lemke(&p, &opts),
        Err(SolverError::Failed {
            solver: "lemke",
            ..
        })
    ));
}

#[test]
fn mlcp_particle_on_ground_contact_active() {
    // Mass 2 particle, momentum balance 2 v − λ + 3 = 0 (A u + C z + a = 0 with u = v),
    // complementarity 0 ≤ v ⊥ λ ≥ 0 (w = D u + B z + b = v): λ = 3, v = 0.
    let mlcp = Mlcp::new(
        DMatrix::from_element(1, 1, 2.0),
        DMatrix::from_element(1, 1, -1.0),
        DVector::from_element(1, 3.0),
        DMatrix::from_element(1, 1, 1.0),
        DMatrix::zeros(1, 1),
        DVector::zeros(1),
    )
    .unwrap();
    let s = solve_mlcp_lemke(&mlcp, &LemkeOptions::default()).unwrap();
    assert!((s.z[0] - 3.0).abs() <= 1e-14);
    assert!(s.u[0].abs() <= 1e-14);
    assert!(s.residuals.max() <= 1e-14);
}

#[test]
fn mlcp_two_free_variables_analytic() {
    // A = diag(2, 4), C = [[0],[−1]], a = (−2, 8); D = [0, 1], B = [1], b = (0).
    // u₁ = 1; u₂ = (λ − 8)/4; w = u₂ + λ = (5λ − 8)/4 ⇒ λ = 8/5, u₂ = −8/5, w = 0.
    let mlcp = Mlcp::new(
        DMatrix::from_row_slice(2, 2, &[2.0, 0.0, 0.0, 4.0]),
        DMatrix::from_row_slice(2, 1, &[0.0, -1.0]),
        DVector::from_row_slice(&[-2.0, 8.0]),
        DMatrix::from_row_slice(1, 2, &[0.0, 1.0]),
        DMatrix::from_element(1, 1, 1.0),
        DVector::zeros(1),
    )
    .unwrap();
    let s = solve_mlcp_lemke(&mlcp, &LemkeOptions::default()).unwrap();
    assert!((s.z[0] - 1.6).abs() <= 1e-14);
    assert!((s.u[0] - 1.0).abs() <= 1e-14);
    assert!((s.u[1] + 1.6).abs() <= 1e-14);
    assert!(s.w[0].abs() <= 1e-14);
    assert_eq!(s.status, SolveStatus::Solved);
    // Same problem with b = 10: the contact separates, λ = 0, w = u₂ + 10 = 8.
    let mlcp = Mlcp::new(
        DMatrix::from_row_slice(2, 2, &[2.0, 0.0, 0.0, 4.0]),
        DMatrix::from_row_slice(2, 1, &[0.0, -1.0]),
        DVector::from_row_slice(&[-2.0, 8.0]),
        DMatrix::from_row_slice(1, 2, &[0.0, 1.0]),
        DMatrix::from_element(1, 1, 1.0),
        DVector::from_element(1, 10.0),
    )
    .unwrap();
    let s = solve_mlcp_lemke(&mlcp, &LemkeOptions::default()).unwrap();
    assert_eq!(s.z[0], 0.0);
    assert!((s.w[0] - 8.0).abs() <= 1e-14);
    assert!((s.u[1] + 2.0).abs() <= 1e-14);
}

#[test]
fn mlcp_singular_a_is_typed_error() {
    let mlcp = Mlcp::new(
        DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 2.0, 4.0]),
        DMatrix::zeros(2, 1),
        DVector::zeros(2),
        DMatrix::zeros(1, 2),
        DMatrix::from_element(1, 1, 1.0),
        DVector::from_element(1, -1.0),
    )
    .unwrap();
    match solve_mlcp_lemke(&mlcp, &LemkeOptions::default()) {
        Err(SolverError::InvalidInput { solver, reason }) => {
            assert_eq!(solver, "mlcp");
            assert!(reason.contains("singular"));
        }
        r => panic!("expected InvalidInput, got {r:?}"),
    }
}

#[test]
fn mlcp_bad_dimensions_and_nan() {
    let e = Mlcp::new(
        DMatrix::identity(2, 2),
        DMatrix::zeros(2, 1),
        DVector::zeros(3),
        DMatrix::zeros(1, 2),
        DMatrix::identity(1, 1),
        DVector::zeros(1),
    )
    .unwrap_err();
    assert!(matches!(
        e,
        SolverError::DimensionMismatch {
            solver: "mlcp",
            expected: 2,
            got: 3,
            ..
        }
    ));
    let e = Mlcp::new(
        DMatrix::identity(2, 2),
        DMatrix::zeros(2, 1),
        DVector::zeros(2),
        DMatrix::zeros(1, 2),
        DMatrix::from_element(1, 1, f64::NAN),
        DVector::zeros(1),
    )
    .unwrap_err();
    assert!(matches!(
        e,
        SolverError::NonFinite {
            solver: "mlcp",
            what: "B"
        }
    ));
}

#[test]
fn bad_input_gives_typed_errors() {
    assert!(matches!(
        Lcp::new(DMatrix::zeros(3, 2), DVector::zeros(3)),
        Err(SolverError::DimensionMismatch { solver: "lcp", .. })
    ));
    assert!(matches!(
        Lcp::new(
            DMatrix::zeros(2, 2),
            DVector::from_row_slice(&[0.0, f64::NAN])
        ),
        Err(SolverError::NonFinite {
            solver: "lcp",
            what: "q"
        })
    ));
    let p = lcp(2, &[2.0, 1.0, 1.0, 2.0], &[-5.0, -6.0]);
    let wrong_d = LemkeOptions {
        covering: Some(DVector::from_element(3, 1.0)),
        ..LemkeOptions::default()
    };
    assert!(matches!(
        lemke(&p, &wrong_d),
        Err(SolverError::DimensionMismatch {
            solver: "lemke",
            expected: 2,
            got: 3,
            ..
        })
    ));
    let neg_d = LemkeOptions {
        covering: Some(DVector::from_row_slice(&[1.0, 0.0])),
        ..LemkeOptions::default()
    };
    assert!(matches!(
        lemke(&p, &neg_d),
        Err(SolverError::InvalidInput { .. })
    ));
    let nan_d = LemkeOptions {
        covering: Some(DVector::from_row_slice(&[1.0, f64::NAN])),
        ..LemkeOptions::default()
    };
    assert!(matches!(
        lemke(&p, &nan_d),
        Err(SolverError::NonFinite { .. })
    ));
    // PGS needs a positive diagonal and ω ∈ (0, 2).
    let zero_diag = lcp(2, &[0.0, 1.0, 1.0, 2.0], &[-1.0, -1.0]);
    assert!(matches!(
        pgs(&zero_diag, &PgsOptions::default()),
        Err(SolverError::InvalidInput { solver: "pgs", .. })
    ));
    let bad_omega = PgsOptions {
        omega: 2.0,
        ..PgsOptions::default()
    };
    assert!(matches!(
        pgs(&p, &bad_omega),
        Err(SolverError::InvalidInput { .. })
    ));
    let bad_start = PgsOptions {
        initial: Some(DVector::zeros(5)),
        ..PgsOptions::default()
    };
    assert!(matches!(
        pgs(&p, &bad_start),
        Err(SolverError::DimensionMismatch { .. })
    ));
    // Evaluation of a candidate of the wrong length.
    assert!(matches!(
        p.evaluate(&DVector::zeros(1)),
        Err(SolverError::DimensionMismatch { .. })
    ));
    // The enumerator is limited to n ≤ 8.
    let big = Lcp::new(DMatrix::identity(9, 9), DVector::zeros(9)).unwrap();
    assert!(matches!(
        enumerate_all(&big, 1e-9),
        Err(SolverError::InvalidInput { .. })
    ));
}

#[test]
fn pgs_small_analytic() {
    // M = [[2,1],[1,2]], q = (−5,−6): z = (4/3, 7/3).
    let p = lcp(2, &[2.0, 1.0, 1.0, 2.0], &[-5.0, -6.0]);
    let s = pgs(&p, &PgsOptions::default()).unwrap();
    assert_eq!(s.status, SolveStatus::Solved);
    assert!((s.z[0] - 4.0 / 3.0).abs() <= 1e-9);
    assert!((s.z[1] - 7.0 / 3.0).abs() <= 1e-9);
}
