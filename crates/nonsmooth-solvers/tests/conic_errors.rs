//! Infeasible, unbounded and malformed conic problems map to typed errors.

use nalgebra::{dmatrix, dvector, DMatrix};
use nonsmooth_solvers::conic::{
    Cone, ConicOptions, ConicProblemBuilder, ConicSolver, Qp, SocConstraint, Socp,
};
use nonsmooth_solvers::SolverError;

#[test]
fn contradictory_bounds_are_primal_infeasible() {
    // x ≥ 1 and x ≤ 0.
    let err = Qp::new(dmatrix![1.0], dvector![0.0])
        .with_inequalities(dmatrix![-1.0; 1.0], dvector![-1.0, 0.0])
        .solve(&ConicOptions::default())
        .unwrap_err();
    match err {
        SolverError::PrimalInfeasible { detail, .. } => {
            assert!(detail.contains("bᵀz"), "{detail}")
        }
        other => panic!("expected PrimalInfeasible, got {other:?}"),
    }
}

#[test]
fn unbounded_lp_is_dual_infeasible() {
    // min −x₀ − x₁ s.t. x ≥ 0, x₀ − x₁ ≤ 1.
    let err = Qp::lp(dvector![-1.0, -1.0])
        .with_inequalities(dmatrix![1.0, -1.0], dvector![1.0])
        .with_bounds(dvector![0.0, 0.0], dvector![f64::INFINITY, f64::INFINITY])
        .solve(&ConicOptions::default())
        .unwrap_err();
    assert!(matches!(err, SolverError::DualInfeasible { .. }), "{err:?}");
}

#[test]
fn dimension_mismatches_are_named() {
    let err = Qp::new(DMatrix::identity(2, 2), dvector![0.0, 0.0, 0.0])
        .to_problem()
        .unwrap_err();
    assert!(
        matches!(
            err,
            SolverError::DimensionMismatch {
                what: "rows of P",
                expected: 3,
                got: 2,
                ..
            }
        ),
        "{err:?}"
    );
    let err = Qp::new(DMatrix::identity(2, 2), dvector![0.0, 0.0])
        .with_equalities(dmatrix![1.0, 1.0], dvector![1.0, 2.0])
        .to_problem()
        .unwrap_err();
    assert!(
        matches!(
            err,
            SolverError::DimensionMismatch {
                what: "length of constraint block b",
                expected: 1,
                got: 2,
                ..
            }
        ),
        "{err:?}"
    );
    let err = Socp::new(
        Qp::lp(dvector![1.0, 0.0]),
        vec![SocConstraint::Affine {
            m: dmatrix![1.0, 0.0, 0.0],
            m0: dvector![0.0],
            c: dvector![1.0, 0.0],
            d: 0.0,
        }],
    )
    .to_problem()
    .unwrap_err();
    assert!(
        matches!(
            err,
            SolverError::DimensionMismatch {
                what: "columns of SOC matrix",
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn non_finite_inputs_are_named() {
    let err = Qp::new(DMatrix::identity(2, 2), dvector![f64::NAN, 0.0])
        .solve(&ConicOptions::default())
        .unwrap_err();
    assert!(
        matches!(
            err,
            SolverError::NonFinite {
                what: "linear cost c",
                ..
            }
        ),
        "{err:?}"
    );
    let err = Qp::new(DMatrix::identity(2, 2), dvector![0.0, 0.0])
        .with_inequalities(dmatrix![1.0, f64::INFINITY], dvector![1.0])
        .to_problem()
        .unwrap_err();
    assert!(
        matches!(
            err,
            SolverError::NonFinite {
                what: "constraint block A",
                ..
            }
        ),
        "{err:?}"
    );
    let err = Qp::new(dmatrix![f64::NAN], dvector![0.0])
        .to_problem()
        .unwrap_err();
    assert!(
        matches!(err, SolverError::NonFinite { what: "P", .. }),
        "{err:?}"
    );
}

#[test]
fn asymmetric_p_and_bad_structure_are_invalid_input() {
    let err = Qp::new(dmatrix![1.0, 0.5; 0.0, 1.0], dvector![0.0, 0.0])
        .to_problem()
        .unwrap_err();
    assert!(matches!(err, SolverError::InvalidInput { .. }), "{err:?}");
    let err = ConicProblemBuilder::new(2)
        .quadratic_triplets(&[(0, 0, 1.0), (0, 1, 0.5), (1, 1, 1.0)])
        .unwrap_err();
    assert!(matches!(err, SolverError::InvalidInput { .. }), "{err:?}");
    let err = ConicProblemBuilder::new(2)
        .quadratic_upper_triplets(&[(1, 0, 0.5)])
        .unwrap_err();
    assert!(matches!(err, SolverError::InvalidInput { .. }), "{err:?}");
    let err = ConicProblemBuilder::new(2)
        .constraint_triplets(Cone::Nonnegative(1), &[(1, 0, 1.0)], &[1.0])
        .unwrap_err();
    assert!(matches!(err, SolverError::InvalidInput { .. }), "{err:?}");
    let err = ConicProblemBuilder::new(1)
        .constraint_dense(Cone::SecondOrder(1), &dmatrix![1.0], &[1.0])
        .unwrap_err();
    assert!(matches!(err, SolverError::InvalidInput { .. }), "{err:?}");
    let bad = ConicOptions {
        eps_abs: -1.0,
        ..ConicOptions::default()
    };
    let err = Qp::new(dmatrix![1.0], dvector![0.0])
        .solve(&bad)
        .unwrap_err();
    assert!(matches!(err, SolverError::InvalidInput { .. }), "{err:?}");
}

#[test]
fn solver_updates_are_checked() {
    let problem = Qp::new(DMatrix::identity(2, 2), dvector![1.0, 0.0])
        .with_inequalities(dmatrix![1.0, 1.0], dvector![1.0])
        .to_problem()
        .unwrap();
    let mut solver = ConicSolver::new(problem, &ConicOptions::default()).unwrap();
    let err = solver.update_q(&[1.0]).unwrap_err();
    assert!(
        matches!(
            err,
            SolverError::DimensionMismatch {
                what: "updated q",
                ..
            }
        ),
        "{err:?}"
    );
    let err = solver.update_b(&[f64::NAN]).unwrap_err();
    assert!(
        matches!(
            err,
            SolverError::NonFinite {
                what: "updated b",
                ..
            }
        ),
        "{err:?}"
    );
    // The failed updates left the data untouched: x = −q projected = (−1, 0).
    let sol = solver.solve().unwrap();
    assert!(
        (sol.x[0] + 1.0).abs() < 1e-7 && sol.x[1].abs() < 1e-7,
        "{}",
        sol.x
    );
}

#[test]
fn iteration_limit_without_usable_point_is_no_solution() {
    let opts = ConicOptions {
        max_iter: 1,
        ..ConicOptions::default()
    };
    let err = Qp::new(DMatrix::identity(2, 2), dvector![-2.0, -1.0])
        .with_inequalities(dmatrix![1.0, 1.0], dvector![1.0])
        .solve(&opts)
        .unwrap_err();
    assert!(matches!(err, SolverError::NoSolution { .. }), "{err:?}");
}

#[test]
fn from_parts_checks_structure_and_skips_empty_cones() {
    use nonsmooth_solvers::conic::{ConicProblem, SparseMatrix};
    // P stored with a below-diagonal entry is rejected.
    let p_full = SparseMatrix::from_dense(&dmatrix![1.0, 0.5; 0.5, 1.0], "P").unwrap();
    let a = SparseMatrix::from_triplets(1, 2, &[(0, 0, 1.0), (0, 1, 1.0)], "A").unwrap();
    let err = ConicProblem::from_parts(
        p_full,
        vec![0.0, 0.0],
        a.clone(),
        vec![1.0],
        vec![Cone::Zero(1)],
    )
    .unwrap_err();
    assert!(matches!(err, SolverError::InvalidInput { .. }), "{err:?}");
    // Cone sizes must add up to the rows of A.
    let p_up = SparseMatrix::from_triplets(2, 2, &[(0, 0, 1.0), (1, 1, 1.0)], "P").unwrap();
    let err = ConicProblem::from_parts(
        p_up.clone(),
        vec![0.0, 0.0],
        a.clone(),
        vec![1.0],
        vec![Cone::Zero(2)],
    )
    .unwrap_err();
    assert!(
        matches!(err, SolverError::DimensionMismatch { .. }),
        "{err:?}"
    );
    // An empty cone block is harmless: min ½‖x‖² s.t. x₀ + x₁ = 1 → objective ¼.
    let problem = ConicProblem::from_parts(
        p_up,
        vec![0.0, 0.0],
        a,
        vec![1.0],
        vec![Cone::Nonnegative(0), Cone::Zero(1)],
    )
    .unwrap();
    let sol = problem.solve(&ConicOptions::default()).unwrap();
    assert!((sol.objective - 0.25).abs() < 1e-8);
    assert!((problem.objective(sol.x.as_slice()).unwrap() - 0.25).abs() < 1e-8);
    assert!(problem.objective(&[1.0]).is_err());
}
