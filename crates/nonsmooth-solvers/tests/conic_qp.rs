//! Quadratic and linear programs through the conic (Clarabel) wrappers, checked against
//! closed-form optima.

use nalgebra::{dmatrix, dvector, DMatrix, DVector};
use nonsmooth_solvers::conic::{
    measure_residuals, ConicOptions, ConicProblemBuilder, ConicSolver, Qp,
};
use nonsmooth_solvers::SolveStatus;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn opts() -> ConicOptions {
    ConicOptions::default()
}

#[test]
fn min_norm_on_line() {
    // min ½‖x‖² s.t. x₀ + x₁ = 1  →  x = (½, ½), f = ¼, z = −½ (P x + Aᵀz = 0).
    let sol = Qp::new(DMatrix::identity(2, 2), dvector![0.0, 0.0])
        .with_equalities(dmatrix![1.0, 1.0], dvector![1.0])
        .solve(&opts())
        .unwrap();
    assert_eq!(sol.status, SolveStatus::Solved);
    assert!((sol.x[0] - 0.5).abs() < 1e-8, "{}", sol.x);
    assert!((sol.x[1] - 0.5).abs() < 1e-8, "{}", sol.x);
    assert!((sol.objective - 0.25).abs() < 1e-8);
    assert!((sol.z[0] + 0.5).abs() < 1e-7, "{}", sol.z);
    assert!(sol.residuals.max() < 1e-7, "{:?}", sol.residuals);
}

#[test]
fn active_inequality_projection() {
    // Projection of (2, 1) onto {x₀ + x₁ ≤ 1}: x = (1, 0), multiplier z = 1,
    // objective ½‖x‖² − (2, 1)·x = −1.5.
    let sol = Qp::new(DMatrix::identity(2, 2), dvector![-2.0, -1.0])
        .with_inequalities(dmatrix![1.0, 1.0], dvector![1.0])
        .solve(&opts())
        .unwrap();
    assert!((sol.x[0] - 1.0).abs() < 1e-7, "{}", sol.x);
    assert!(sol.x[1].abs() < 1e-7, "{}", sol.x);
    assert!((sol.objective + 1.5).abs() < 1e-7);
    assert!((sol.z[0] - 1.0).abs() < 1e-6, "{}", sol.z);
    assert!(sol.s[0].abs() < 1e-7);
    assert!(sol.residuals.max() < 1e-7, "{:?}", sol.residuals);
}

#[test]
fn inactive_inequality_leaves_unconstrained_optimum() {
    // min ½‖x − (0.2, 0.3)‖² with x₀ + x₁ ≤ 1 inactive → x = (0.2, 0.3), z = 0.
    let sol = Qp::new(DMatrix::identity(2, 2), dvector![-0.2, -0.3])
        .with_inequalities(dmatrix![1.0, 1.0], dvector![1.0])
        .solve(&opts())
        .unwrap();
    assert!((sol.x[0] - 0.2).abs() < 1e-7 && (sol.x[1] - 0.3).abs() < 1e-7);
    assert!(sol.z[0].abs() < 1e-7);
    assert!((sol.s[0] - 0.5).abs() < 1e-7);
}

#[test]
fn bounds_with_infinite_entries() {
    // min ½(x₀ − 3)² + ½(x₁ + 5)² with x₀ ∈ [0, 1], x₁ ∈ [−2, +∞) → x = (1, −2).
    let sol = Qp::new(DMatrix::identity(2, 2), dvector![-3.0, 5.0])
        .with_bounds(dvector![0.0, -2.0], dvector![1.0, f64::INFINITY])
        .solve(&opts())
        .unwrap();
    assert!((sol.x[0] - 1.0).abs() < 1e-7, "{}", sol.x);
    assert!((sol.x[1] + 2.0).abs() < 1e-7, "{}", sol.x);
    // Rows: lower x₀, lower x₁, upper x₀ (upper x₁ is infinite, no row).
    assert_eq!(sol.s.len(), 3);
    // Multipliers: x₀ upper bound z = 2, x₁ lower bound z = 3.
    assert!(
        (sol.z[2] - 2.0).abs() < 1e-6 && (sol.z[1] - 3.0).abs() < 1e-6,
        "{}",
        sol.z
    );
}

#[test]
fn lp_vertex() {
    // max x₀ + x₁ s.t. x₀ + 2x₁ ≤ 4, 3x₀ + x₁ ≤ 6, x ≥ 0 → (1.6, 1.2), value 2.8.
    let sol = Qp::lp(dvector![-1.0, -1.0])
        .with_inequalities(dmatrix![1.0, 2.0; 3.0, 1.0], dvector![4.0, 6.0])
        .with_bounds(dvector![0.0, 0.0], dvector![f64::INFINITY, f64::INFINITY])
        .solve(&opts())
        .unwrap();
    assert!(
        (sol.x[0] - 1.6).abs() < 1e-7 && (sol.x[1] - 1.2).abs() < 1e-7,
        "{}",
        sol.x
    );
    assert!((sol.objective + 2.8).abs() < 1e-7);
    assert!(sol.residuals.max() < 1e-6, "{:?}", sol.residuals);
}

fn random_qp(
    rng: &mut ChaCha8Rng,
    n: usize,
    m: usize,
) -> (DMatrix<f64>, DVector<f64>, DMatrix<f64>, DVector<f64>) {
    let l = DMatrix::from_fn(n, n, |_, _| rng.gen_range(-1.0..1.0));
    let p = &l * l.transpose() + DMatrix::identity(n, n);
    let c = DVector::from_fn(n, |_, _| rng.gen_range(-1.0..1.0));
    let g = DMatrix::from_fn(m, n, |_, _| rng.gen_range(-1.0..1.0));
    let h = DVector::from_fn(m, |_, _| rng.gen_range(0.0..0.5));
    (p, c, g, h)
}

#[test]
fn sparse_triplets_match_dense_input() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let (p, c, g, h) = random_qp(&mut rng, 5, 8);
    let dense = Qp::new(p.clone(), c.clone())
        .with_inequalities(g.clone(), h.clone())
        .solve(&opts())
        .unwrap();
    // Full-symmetric triplets of P, with one entry split in two (repeats are summed).
    let mut pt = Vec::new();
    for j in 0..5 {
        for i in 0..5 {
            pt.push((i, j, p[(i, j)]));
        }
    }
    pt.push((0, 0, 1.0));
    pt[0].2 -= 1.0;
    let gt: Vec<_> = (0..8)
        .flat_map(|i| (0..5).map(move |j| (i, j)))
        .map(|(i, j)| (i, j, g[(i, j)]))
        .collect();
    let sparse = ConicProblemBuilder::new(5)
        .quadratic_triplets(&pt)
        .unwrap()
        .linear(c.as_slice())
        .unwrap()
        .constraint_triplets(
            nonsmooth_solvers::conic::Cone::Nonnegative(8),
            &gt,
            h.as_slice(),
        )
        .unwrap()
        .build()
        .unwrap();
    assert_eq!(sparse.p().nnz(), 15); // upper triangle of a dense 5×5
    let s = sparse.solve(&opts()).unwrap();
    assert!((&s.x - &dense.x).amax() < 1e-8, "{} vs {}", s.x, dense.x);
    assert!((s.objective - dense.objective).abs() < 1e-8);
    // KKT check against the dense data: P x + c + Gᵀ z = 0.
    let kkt = &p * &s.x + &c + g.transpose() * &s.z;
    assert!(kkt.amax() < 1e-7, "{kkt}");
}

#[test]
fn reusable_solver_matches_fresh_solves() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let (p, c, g, h) = random_qp(&mut rng, 4, 6);
    let base = Qp::new(p.clone(), c.clone()).with_inequalities(g.clone(), h.clone());
    let mut solver = ConicSolver::new(base.to_problem().unwrap(), &opts()).unwrap();
    let first = solver.solve().unwrap();
    let fresh = base.solve(&opts()).unwrap();
    assert!((&first.x - &fresh.x).amax() < 1e-8);
    for k in 0..3 {
        let c2 = DVector::from_fn(4, |_, _| rng.gen_range(-1.0..1.0));
        let h2 = DVector::from_fn(6, |_, _| rng.gen_range(0.0..0.5));
        solver.update_q(c2.as_slice()).unwrap();
        solver.update_b(h2.as_slice()).unwrap();
        let re = solver.solve().unwrap();
        let fresh = Qp::new(p.clone(), c2)
            .with_inequalities(g.clone(), h2)
            .solve(&opts())
            .unwrap();
        assert!(
            (&re.x - &fresh.x).amax() < 1e-7,
            "update {k}: {} vs {}",
            re.x,
            fresh.x
        );
        assert!(re.residuals.max() < 1e-6, "{:?}", re.residuals);
    }
    // Scale A's values by 2 (same pattern): the feasible set G x ≤ h becomes 2 G x ≤ h.
    let a2: Vec<f64> = solver
        .problem()
        .a()
        .nzval()
        .iter()
        .map(|v| 2.0 * v)
        .collect();
    let h_now = solver.problem().b().to_vec();
    let c_now = solver.problem().q().to_vec();
    solver.update_a_values(&a2).unwrap();
    let re = solver.solve().unwrap();
    let fresh = Qp::new(p.clone(), DVector::from_vec(c_now))
        .with_inequalities(g * 2.0, DVector::from_vec(h_now))
        .solve(&opts())
        .unwrap();
    assert!((&re.x - &fresh.x).amax() < 1e-7);
    // Scale P's values by 3 (same pattern).
    let p3: Vec<f64> = solver
        .problem()
        .p()
        .nzval()
        .iter()
        .map(|v| 3.0 * v)
        .collect();
    solver.update_p_values(&p3).unwrap();
    let re = solver.solve().unwrap();
    let fresh = Qp::new(&p * 3.0, DVector::from_column_slice(solver.problem().q()))
        .with_inequalities(
            solver.problem().a().to_dense(),
            DVector::from_column_slice(solver.problem().b()),
        )
        .solve(&opts())
        .unwrap();
    assert!((&re.x - &fresh.x).amax() < 1e-7);
    let r = measure_residuals(
        solver.problem(),
        re.x.as_slice(),
        re.s.as_slice(),
        re.z.as_slice(),
    )
    .unwrap();
    assert_eq!(r, re.residuals);
    assert!(measure_residuals(solver.problem(), &[0.0], re.s.as_slice(), re.z.as_slice()).is_err());
}
