//! Property tests: on random LCPs, QPs and SOCPs the reported status agrees with the measured
//! residuals, and the residuals agree with an independent recomputation from the solution.

use nalgebra::{DMatrix, DVector};
use nonsmooth_solvers::conic::{ConicOptions, Qp, SocConstraint, Socp};
use nonsmooth_solvers::lcp::{lcp_residuals, lemke, pgs, Lcp, LemkeOptions, PgsOptions};
use nonsmooth_solvers::{SolveStatus, SolverError};
use proptest::prelude::*;

/// Tolerance of a `Solved` LCP returned by Lemke, relative to `1 + ‖q‖∞` (the default
/// `accept_tol` of [`LemkeOptions`]).
const LEMKE_ACCEPT: f64 = 1e-9;

fn matrix(n: usize, m: usize) -> impl Strategy<Value = DMatrix<f64>> {
    proptest::collection::vec(-3.0..3.0f64, n * m).prop_map(move |v| DMatrix::from_vec(n, m, v))
}

fn vector(n: usize) -> impl Strategy<Value = DVector<f64>> {
    proptest::collection::vec(-3.0..3.0f64, n).prop_map(DVector::from_vec)
}

/// A random LCP: `M = A Aᵀ + s·S + δI` with `S` skew (so `M` is positive definite when
/// `kind = 0`, merely copositive-plus-ish otherwise), or a fully random `M` (`kind = 2`).
fn lcp_strategy() -> impl Strategy<Value = (DMatrix<f64>, DVector<f64>, u8)> {
    (1usize..9)
        .prop_flat_map(|n| (matrix(n, n), matrix(n, n), vector(n), 0u8..3))
        .prop_map(|(a, b, q, kind)| {
            let n = q.len();
            let m = match kind {
                0 => &a * a.transpose() + (&b - b.transpose()) + DMatrix::identity(n, n) * 0.1,
                1 => &a * a.transpose(),
                _ => a,
            };
            (m, q, kind)
        })
}

fn check_lcp_solution(lcp: &Lcp, z: &DVector<f64>, w: &DVector<f64>, reported: f64) {
    let w_again = lcp.m() * z + lcp.q();
    assert!((w - &w_again).amax() <= 1e-9 * (1.0 + w_again.amax()));
    let r = lcp_residuals(z, w);
    assert!((r.max() - reported).abs() <= 1e-12 * (1.0 + reported));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, failure_persistence: None, .. ProptestConfig::default() })]

    /// Lemke: `Solved` means residuals within the acceptance tolerance; a positive-definite
    /// `M` always has a solution, so Lemke must find it; ray termination is a typed error.
    #[test]
    fn lemke_status_matches_residuals((m, q, kind) in lcp_strategy()) {
        let lcp = Lcp::new(m, q.clone()).unwrap();
        match lemke(&lcp, &LemkeOptions::default()) {
            Ok(sol) => {
                check_lcp_solution(&lcp, &sol.z, &sol.w, sol.residuals.max());
                let scale = 1.0 + q.amax();
                match sol.status {
                    SolveStatus::Solved => prop_assert!(sol.residuals.max() <= LEMKE_ACCEPT * scale),
                    _ => prop_assert!(sol.residuals.max() > LEMKE_ACCEPT * scale),
                }
            }
            Err(e) => {
                prop_assert!(kind != 0, "PD LCP must be solved, got {e}");
                prop_assert!(matches!(e, SolverError::NoSolution { .. }), "{e}");
                prop_assert!(!e.to_string().is_empty());
            }
        }
    }

    /// PGS on a PD LCP: the returned residuals are the measured ones, and a `Solved` status
    /// means they meet the requested tolerance.
    #[test]
    fn pgs_status_matches_residuals(
        (a, q) in (1usize..9).prop_flat_map(|n| (matrix(n, n), vector(n)))
    ) {
        let n = q.len();
        let m = &a * a.transpose() + DMatrix::identity(n, n) * 0.1;
        let lcp = Lcp::new(m, q).unwrap();
        let opts = PgsOptions::default();
        if let Ok(sol) = pgs(&lcp, &opts) {
            check_lcp_solution(&lcp, &sol.z, &sol.w, sol.residuals.max());
            prop_assert!(sol.z.iter().all(|z| *z >= 0.0));
        }
    }

    /// Box-constrained strictly convex QPs are always feasible: Clarabel must report
    /// success, residuals small, and the bounds hold.
    #[test]
    fn qp_status_matches_residuals(
        (a, c, lo) in (1usize..7).prop_flat_map(|n| (matrix(n, n), vector(n), vector(n)))
    ) {
        let n = c.len();
        let p = &a * a.transpose() + DMatrix::identity(n, n) * 1e-2;
        let hi = lo.map(|l| l + 1.0);
        let qp = Qp::new(p, c).with_bounds(lo.clone(), hi.clone());
        let sol = qp.solve(&ConicOptions::default()).unwrap();
        prop_assert!(matches!(sol.status, SolveStatus::Solved | SolveStatus::AlmostSolved));
        if sol.status == SolveStatus::Solved {
            prop_assert!(sol.residuals.primal <= 1e-6, "{:?}", sol.residuals);
            prop_assert!(sol.residuals.dual <= 1e-6, "{:?}", sol.residuals);
        }
        for i in 0..n {
            prop_assert!(sol.x[i] >= lo[i] - 1e-6 && sol.x[i] <= hi[i] + 1e-6);
        }
    }

    /// A QP whose bounds contradict an equality is primal infeasible: a typed error, never a
    /// "solved" point.
    #[test]
    fn infeasible_qp_is_reported(c in vector(3), shift in 0.5..5.0f64) {
        let qp = Qp::new(DMatrix::identity(3, 3), c)
            .with_bounds(DVector::zeros(3), DVector::from_element(3, 1.0))
            .with_equalities(DMatrix::from_row_slice(1, 3, &[1.0, 1.0, 1.0]), DVector::from_element(1, 3.0 + shift));
        let err = qp.solve(&ConicOptions::default()).unwrap_err();
        prop_assert!(matches!(err, SolverError::PrimalInfeasible { .. }), "{err}");
    }

    /// Projection-type SOCP `min ½‖x − y‖² s.t. ‖x₁..‖ ≤ μ x₀`: the solution lies in the cone
    /// and matches the closed-form projection onto the scaled cone.
    #[test]
    fn socp_solution_is_in_cone(y in vector(3), mu in 0.1..2.0f64) {
        let qp = Qp::new(DMatrix::identity(3, 3), -y.clone());
        let cone = SocConstraint::Affine {
            m: DMatrix::from_row_slice(2, 3, &[0.0, 1.0, 0.0, 0.0, 0.0, 1.0]),
            m0: DVector::zeros(2),
            c: DVector::from_vec(vec![mu, 0.0, 0.0]),
            d: 0.0,
        };
        let sol = Socp::new(qp, vec![cone]).solve(&ConicOptions::default()).unwrap();
        prop_assert!(matches!(sol.status, SolveStatus::Solved | SolveStatus::AlmostSolved));
        let x = &sol.x;
        prop_assert!((x[1] * x[1] + x[2] * x[2]).sqrt() <= mu * x[0] + 1e-6);
        // Closed-form projection onto {‖t‖ ≤ μ n}: scale to the standard cone.
        let (n0, t) = (y[0] * mu, (y[1] * y[1] + y[2] * y[2]).sqrt());
        let expected_n = if t <= n0 {
            y[0]
        } else if n0 <= -t * mu * mu {
            0.0
        } else {
            // Onto the boundary ray (1, μ t̂)/√(1 + μ²): normal part (y₀ + μ‖t‖)/(1 + μ²).
            (y[0] + mu * t) / (1.0 + mu * mu)
        };
        prop_assert!((x[0] - expected_n).abs() <= 1e-5 * (1.0 + y.amax()), "{} vs {}", x[0], expected_n);
    }
}
