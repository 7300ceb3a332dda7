//! Semidefinite programs (feature `sdp`) through the conic (Clarabel) wrappers.
#![cfg(feature = "sdp")]

use nalgebra::{dmatrix, dvector, DMatrix};
use nonsmooth_solvers::conic::{smat, svec, Cone, ConicOptions, ConicProblemBuilder, Lmi, Qp, Sdp};
use nonsmooth_solvers::{SolveStatus, SolverError};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[test]
fn svec_is_an_isometry_and_smat_inverts_it() {
    let a = dmatrix![1.0, 2.0, 3.0; 2.0, 4.0, 5.0; 3.0, 5.0, 6.0];
    let b = dmatrix![0.5, -1.0, 0.0; -1.0, 2.0, 1.5; 0.0, 1.5, -3.0];
    let s = 2f64.sqrt();
    assert_eq!(svec(&a), dvector![1.0, 2.0 * s, 4.0, 3.0 * s, 5.0 * s, 6.0]);
    assert!((svec(&a).dot(&svec(&b)) - (&a * &b).trace()).abs() < 1e-12);
    assert!((smat(svec(&a).as_slice(), 3) - &a).amax() < 1e-14);
}

#[test]
fn min_trace_inner_product_is_smallest_eigenvalue() {
    // min tr(C X) s.t. tr X = 1, X ⪰ 0  ⇒  λ_min(C), X = v vᵀ.
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let k = 4;
    let r = DMatrix::from_fn(k, k, |_, _| rng.gen_range(-1.0..1.0));
    let c = &r + r.transpose();
    let nv = k * (k + 1) / 2;
    // Variables x = svec(X): cost svec(C)ᵀ x = tr(C X).
    let mut trace_row = DMatrix::zeros(1, nv);
    let mut idx = 0;
    for j in 0..k {
        trace_row[(0, idx + j)] = 1.0; // diagonal entry (j, j) sits at idx + j
        idx += j + 1;
    }
    let problem = ConicProblemBuilder::new(nv)
        .linear(svec(&c).as_slice())
        .unwrap()
        .equalities_dense(&trace_row, &[1.0])
        .unwrap()
        .constraint_dense(
            Cone::PsdTriangle(k),
            &-DMatrix::identity(nv, nv),
            &vec![0.0; nv],
        )
        .unwrap()
        .build()
        .unwrap();
    let sol = problem.solve(&ConicOptions::default()).unwrap();
    assert_eq!(sol.status, SolveStatus::Solved);
    let lmin = c.clone().symmetric_eigenvalues().min();
    assert!(
        (sol.objective - lmin).abs() < 1e-7,
        "{} vs {lmin}",
        sol.objective
    );
    let x = smat(sol.x.as_slice(), k);
    assert!((x.trace() - 1.0).abs() < 1e-8);
    // X is (nearly) rank one along the minimal eigenvector: C X ≈ λ_min X.
    assert!((&c * &x - &x * lmin).amax() < 1e-5);
    assert!(sol.residuals.max() < 1e-6, "{:?}", sol.residuals);
}

/// Gram-matrix LMI for p(x) − γ = zᵀ Q z with z = (1, x, x²) and p = x⁴ + a₂x² + a₀:
/// Q(γ, t) = [[a₀ − γ, 0, t], [0, a₂ − 2t, 0], [t, 0, 1]] (Parrilo 2003, §3).
fn sos_lmi(a0: f64, a2: f64, with_gamma: bool) -> Lmi {
    let f0 = dmatrix![a0, 0.0, 0.0; 0.0, a2, 0.0; 0.0, 0.0, 1.0];
    let ft = dmatrix![0.0, 0.0, 1.0; 0.0, -2.0, 0.0; 1.0, 0.0, 0.0];
    let fg = dmatrix![-1.0, 0.0, 0.0; 0.0, 0.0, 0.0; 0.0, 0.0, 0.0];
    Lmi {
        f0,
        f: if with_gamma { vec![fg, ft] } else { vec![ft] },
    }
}

#[test]
fn sos_lower_bound_of_quartic() {
    // max γ s.t. x⁴ − 3x² + 1 − γ is SOS → γ* = 1 − 9/4 = −1.25 (the true minimum).
    let sdp = Sdp::new(Qp::lp(dvector![-1.0, 0.0]), vec![sos_lmi(1.0, -3.0, true)]);
    let sol = sdp.solve(&ConicOptions::default()).unwrap();
    assert!((sol.x[0] + 1.25).abs() < 1e-6, "γ = {}", sol.x[0]);
    assert!((sol.x[1] + 1.5).abs() < 1e-3, "t = {}", sol.x[1]);
    assert!(sol.residuals.max() < 1e-6, "{:?}", sol.residuals);
}

#[test]
fn non_sos_polynomial_is_primal_infeasible() {
    // x⁴ − x² has a Gram matrix only if Q₀₀ = 0 forces Q₁₁ = −1: infeasible.
    let sdp = Sdp::new(Qp::lp(dvector![0.0]), vec![sos_lmi(0.0, -1.0, false)]);
    let err = sdp.solve(&ConicOptions::default()).unwrap_err();
    assert!(
        matches!(err, SolverError::PrimalInfeasible { .. }),
        "{err:?}"
    );
}

#[test]
fn lmi_input_is_validated() {
    let asym = Lmi {
        f0: dmatrix![1.0, 0.0; 1.0, 1.0],
        f: vec![DMatrix::identity(2, 2)],
    };
    let err = Sdp::new(Qp::lp(dvector![1.0]), vec![asym])
        .to_problem()
        .unwrap_err();
    assert!(matches!(err, SolverError::InvalidInput { .. }), "{err:?}");
    let short = Lmi {
        f0: DMatrix::identity(2, 2),
        f: vec![],
    };
    let err = Sdp::new(Qp::lp(dvector![1.0]), vec![short])
        .to_problem()
        .unwrap_err();
    assert!(
        matches!(
            err,
            SolverError::DimensionMismatch {
                what: "number of LMI coefficient matrices",
                ..
            }
        ),
        "{err:?}"
    );
}
