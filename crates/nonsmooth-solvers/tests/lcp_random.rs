//! Randomised tests of the LCP solvers on seeded problem classes: symmetric positive definite,
//! symmetric positive semidefinite, monotone (PSD + skew), nonsymmetric P-matrices and
//! strictly copositive (copositive-plus) matrices, sizes 1–200, with the brute-force
//! enumerator as oracle for n ≤ 8.

use nalgebra::{DMatrix, DVector};
use nonsmooth_solvers::lcp::{
    enumerate_all, lemke, pgs, Lcp, LcpSolution, LemkeOptions, PgsOptions,
};
use nonsmooth_solvers::{SolveStatus, SolverError};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[derive(Clone, Copy, Debug)]
enum Class {
    /// B Bᵀ + 0.1 I.
    SymPd,
    /// B Bᵀ with B n × ⌈n/2⌉ (singular).
    SymPsd,
    /// B Bᵀ (singular) + S − Sᵀ: monotone, nonsymmetric.
    Monotone,
    /// D + S − Sᵀ with D positive diagonal: nonsymmetric positive definite ⇒ P-matrix.
    PSkew,
    /// Strictly row diagonally dominant with positive diagonal ⇒ P-matrix.
    PDominant,
    /// Nonnegative entries, positive diagonal ⇒ strictly copositive.
    Copositive,
}

fn uniform(rng: &mut ChaCha8Rng, r: usize, c: usize) -> DMatrix<f64> {
    DMatrix::from_fn(r, c, |_, _| rng.gen_range(-1.0..1.0))
}

fn matrix(class: Class, n: usize, rng: &mut ChaCha8Rng) -> DMatrix<f64> {
    match class {
        Class::SymPd => {
            let b = uniform(rng, n, n);
            &b * b.transpose() + DMatrix::identity(n, n) * 0.1
        }
        Class::SymPsd => {
            let b = uniform(rng, n, n.div_ceil(2));
            &b * b.transpose()
        }
        Class::Monotone => {
            let b = uniform(rng, n, n.div_ceil(2));
            let s = uniform(rng, n, n);
            &b * b.transpose() + &s - s.transpose()
        }
        Class::PSkew => {
            let s = uniform(rng, n, n);
            let d = DMatrix::from_diagonal(&DVector::from_fn(n, |_, _| rng.gen_range(0.5..2.0)));
            d + &s - s.transpose()
        }
        Class::PDominant => {
            let mut m = uniform(rng, n, n);
            for i in 0..n {
                let off: f64 = (0..n).filter(|&j| j != i).map(|j| m[(i, j)].abs()).sum();
                m[(i, i)] = off + rng.gen_range(0.1..1.0);
            }
            m
        }
        Class::Copositive => {
            let mut m = DMatrix::from_fn(n, n, |_, _| rng.gen_range(0.0..1.0));
            for i in 0..n {
                m[(i, i)] += 0.5;
            }
            m
        }
    }
}

/// `q = w* − M z*` with complementary random supports: a solution is planted.
fn planted_q(m: &DMatrix<f64>, rng: &mut ChaCha8Rng) -> DVector<f64> {
    let n = m.nrows();
    let mut z = DVector::zeros(n);
    let mut w = DVector::zeros(n);
    for i in 0..n {
        if rng.gen_bool(0.5) {
            z[i] = rng.gen_range(0.1..1.0);
        } else {
            w[i] = rng.gen_range(0.1..1.0);
        }
    }
    w - m * z
}

fn random_q(n: usize, rng: &mut ChaCha8Rng) -> DVector<f64> {
    DVector::from_fn(n, |_, _| rng.gen_range(-1.0..1.0))
}

fn assert_valid(lcp: &Lcp, s: &LcpSolution, tol: f64, ctx: &str) {
    assert_eq!(s.status, SolveStatus::Solved, "{ctx}");
    assert!(
        s.residuals.complementarity <= tol,
        "{ctx}: {:?}",
        s.residuals
    );
    assert!(s.residuals.primal <= tol, "{ctx}: {:?}", s.residuals);
    // Independent re-evaluation of the returned z.
    let (w, r) = lcp.evaluate(&s.z).unwrap();
    assert!((w - &s.w).amax() <= 1e-12 * (1.0 + s.w.amax()), "{ctx}");
    assert!(r.max() <= tol, "{ctx}");
}

const CLASSES: [Class; 6] = [
    Class::SymPd,
    Class::SymPsd,
    Class::Monotone,
    Class::PSkew,
    Class::PDominant,
    Class::Copositive,
];

#[test]
fn lemke_planted_all_classes_sizes_1_to_200() {
    let mut rng = ChaCha8Rng::seed_from_u64(20260101);
    for class in CLASSES {
        for n in [1, 2, 3, 5, 8, 13, 20, 50, 100, 200] {
            let m = matrix(class, n, &mut rng);
            let q = planted_q(&m, &mut rng);
            let lcp = Lcp::new(m, q).unwrap();
            let s = lemke(&lcp, &LemkeOptions::default())
                .unwrap_or_else(|e| panic!("{class:?} n={n}: {e}"));
            assert_valid(&lcp, &s, 1e-9, &format!("{class:?} n={n}"));
            assert!(s.iterations <= 50 * (n + 1));
        }
    }
}

#[test]
fn lemke_random_q_always_solvable_classes() {
    // P-matrices and strictly copositive matrices: LCP(M, q) is solvable for every q
    // (Cottle–Pang–Stone Ch. 3), so Lemke must succeed.
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for class in [
        Class::SymPd,
        Class::PSkew,
        Class::PDominant,
        Class::Copositive,
    ] {
        for n in [1, 4, 10, 30, 60, 120, 200] {
            let m = matrix(class, n, &mut rng);
            let q = random_q(n, &mut rng);
            let lcp = Lcp::new(m, q).unwrap();
            let s = lemke(&lcp, &LemkeOptions::default())
                .unwrap_or_else(|e| panic!("{class:?} n={n}: {e}"));
            assert_valid(&lcp, &s, 1e-9, &format!("{class:?} n={n}"));
        }
    }
}

#[test]
fn lemke_matches_enumerator_p_matrices_unique() {
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    for class in [Class::SymPd, Class::PSkew, Class::PDominant] {
        for n in 1..=8 {
            for _ in 0..6 {
                let m = matrix(class, n, &mut rng);
                let q = random_q(n, &mut rng);
                let lcp = Lcp::new(m, q).unwrap();
                let all = enumerate_all(&lcp, 1e-9).unwrap();
                assert_eq!(
                    all.len(),
                    1,
                    "{class:?} n={n}: P-matrix LCP has a unique solution"
                );
                let s = lemke(&lcp, &LemkeOptions::default()).unwrap();
                let diff = (&s.z - &all[0].z).amax();
                assert!(diff <= 1e-8, "{class:?} n={n}: |z_lemke - z_enum| = {diff}");
            }
        }
    }
}

#[test]
fn lemke_matches_enumerator_non_p_classes() {
    // Copositive-plus classes: Lemke succeeds iff the LCP is solvable (Cottle–Pang–Stone
    // §4.4), and its solution is one of the enumerated ones.
    let mut rng = ChaCha8Rng::seed_from_u64(4242);
    let mut solved = 0;
    let mut infeasible = 0;
    let mut multiple = 0;
    for class in [Class::SymPsd, Class::Monotone, Class::Copositive] {
        for n in 1..=8 {
            for _ in 0..8 {
                let m = matrix(class, n, &mut rng);
                let q = random_q(n, &mut rng);
                let lcp = Lcp::new(m, q).unwrap();
                let all = enumerate_all(&lcp, 1e-9).unwrap();
                match lemke(&lcp, &LemkeOptions::default()) {
                    Ok(s) => {
                        assert_valid(&lcp, &s, 1e-9, &format!("{class:?} n={n}"));
                        assert!(!all.is_empty(), "{class:?} n={n}: enumerator found none");
                        let best = all
                            .iter()
                            .map(|e| (&e.z - &s.z).amax())
                            .fold(f64::INFINITY, f64::min);
                        assert!(
                            best <= 1e-7,
                            "{class:?} n={n}: Lemke z not enumerated ({best})"
                        );
                        solved += 1;
                        if all.len() > 1 {
                            multiple += 1;
                        }
                    }
                    Err(SolverError::NoSolution { reason, .. }) => {
                        assert!(reason.contains("ray termination"));
                        assert!(
                            all.is_empty(),
                            "{class:?} n={n}: ray but {} solutions",
                            all.len()
                        );
                        infeasible += 1;
                    }
                    Err(e) => panic!("{class:?} n={n}: {e}"),
                }
            }
        }
    }
    // The sample exercises both outcomes and problems with several solutions.
    assert!(
        solved > 50 && infeasible > 5 && multiple > 0,
        "{solved} {infeasible} {multiple}"
    );
}

#[test]
fn lemke_custom_covering_vector_gives_same_unique_solution() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let n = 30;
    let m = matrix(Class::PSkew, n, &mut rng);
    let q = random_q(n, &mut rng);
    let lcp = Lcp::new(m, q).unwrap();
    let a = lemke(&lcp, &LemkeOptions::default()).unwrap();
    let opts = LemkeOptions {
        covering: Some(DVector::from_fn(n, |i, _| 0.5 + i as f64 / n as f64)),
        ..LemkeOptions::default()
    };
    let b = lemke(&lcp, &opts).unwrap();
    assert!((&a.z - &b.z).amax() <= 1e-9);
    assert!(b.residuals.max() <= 1e-9);
}

#[test]
fn pgs_converges_on_pd_and_agrees_with_lemke() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for n in [5, 20, 60] {
        let m = matrix(Class::SymPd, n, &mut rng);
        // Make it comfortably conditioned for a stationary method.
        let m = m + DMatrix::identity(n, n) * (n as f64 * 0.1);
        let q = random_q(n, &mut rng);
        let lcp = Lcp::new(m, q).unwrap();
        let l = lemke(&lcp, &LemkeOptions::default()).unwrap();
        for omega in [1.0, 1.3] {
            let opts = PgsOptions {
                omega,
                tol: 1e-11,
                ..PgsOptions::default()
            };
            let p = pgs(&lcp, &opts).unwrap();
            assert_eq!(p.status, SolveStatus::Solved, "n={n} omega={omega}");
            assert!(p.residuals.max() <= 1e-8, "n={n}: {:?}", p.residuals);
            let diff = (&p.z - &l.z).amax();
            assert!(
                diff <= 1e-8,
                "n={n} omega={omega}: |z_pgs - z_lemke| = {diff}"
            );
        }
    }
}

#[test]
fn pgs_reports_max_iterations_when_not_converged() {
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    let n = 40;
    let m = matrix(Class::SymPsd, n, &mut rng) + DMatrix::identity(n, n) * 1e-3;
    let q = planted_q(&m, &mut rng);
    let lcp = Lcp::new(m, q).unwrap();
    let opts = PgsOptions {
        max_iterations: 3,
        ..PgsOptions::default()
    };
    let p = pgs(&lcp, &opts).unwrap();
    assert_eq!(p.status, SolveStatus::MaxIterations);
    assert_eq!(p.iterations, 3);
    assert!(p.residuals.max() > 1e-8);
    // The iterate stays feasible in z.
    assert!(p.z.iter().all(|&x| x >= 0.0));
}

#[test]
fn pgs_divergence_on_skew_dominated_p_matrix_is_typed_error() {
    // M = D + S − Sᵀ is a P-matrix (Lemke solves it) but its skew part dominates the
    // diagonal, so projected Gauss–Seidel diverges; that must be reported, not returned.
    let mut rng = ChaCha8Rng::seed_from_u64(13);
    let n = 30;
    let m = matrix(Class::PSkew, n, &mut rng);
    let q = planted_q(&m, &mut rng);
    let lcp = Lcp::new(m, q).unwrap();
    assert!(
        lemke(&lcp, &LemkeOptions::default())
            .unwrap()
            .residuals
            .max()
            <= 1e-9
    );
    match pgs(&lcp, &PgsOptions::default()) {
        Err(SolverError::Failed { solver, reason }) => {
            assert_eq!(solver, "pgs");
            assert!(reason.contains("diverged"));
        }
        r => panic!("expected divergence, got {r:?}"),
    }
}

#[test]
fn lemke_warm_start_from_previous_support() {
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    let n = 80;
    let m = matrix(Class::PSkew, n, &mut rng);
    let q = random_q(n, &mut rng);
    let lcp = Lcp::new(m.clone(), q.clone()).unwrap();
    let cold = lemke(&lcp, &LemkeOptions::default()).unwrap();
    let support: Vec<usize> = (0..n).filter(|&i| cold.z[i] > 0.0).collect();
    assert!(cold.iterations > 10);
    // Exact support: no pivot at all, same (unique) solution.
    let warm_opts = LemkeOptions {
        warm_start: Some(support.clone()),
        ..LemkeOptions::default()
    };
    let exact = lemke(&lcp, &warm_opts).unwrap();
    assert_eq!(exact.iterations, 0);
    assert!((&exact.z - &cold.z).amax() <= 1e-10);
    assert!(exact.residuals.max() <= 1e-9);
    // Perturbed q (next time step): fewer pivots than a cold start, same unique solution.
    let q2 = &q + DVector::from_fn(n, |_, _| rng.gen_range(-0.05..0.05));
    let lcp2 = Lcp::new(m, q2).unwrap();
    let cold2 = lemke(&lcp2, &LemkeOptions::default()).unwrap();
    let warm2 = lemke(&lcp2, &warm_opts).unwrap();
    assert!((&warm2.z - &cold2.z).amax() <= 1e-9);
    assert!(warm2.residuals.max() <= 1e-9);
    assert!(
        warm2.iterations < cold2.iterations,
        "{} vs {}",
        warm2.iterations,
        cold2.iterations
    );
    // A poor guess (every index) still gives the solution; an out-of-range index is an error.
    let all = LemkeOptions {
        warm_start: Some((0..n).collect()),
        ..LemkeOptions::default()
    };
    let s = lemke(&lcp2, &all).unwrap();
    assert!((&s.z - &cold2.z).amax() <= 1e-9);
    let bad = LemkeOptions {
        warm_start: Some(vec![n]),
        ..LemkeOptions::default()
    };
    assert!(matches!(
        lemke(&lcp2, &bad),
        Err(SolverError::InvalidInput { .. })
    ));
}

#[test]
fn lemke_warm_start_on_infeasible_problem_still_reports_no_solution() {
    // M = [[1,−1],[−1,1]], q = (−1,−1) is infeasible; a warm guess must not change that.
    let lcp = Lcp::new(
        DMatrix::from_row_slice(2, 2, &[1.0, -1.0, -1.0, 1.0]),
        DVector::from_row_slice(&[-1.0, -1.0]),
    )
    .unwrap();
    for guess in [vec![0], vec![1], vec![0, 1]] {
        let opts = LemkeOptions {
            warm_start: Some(guess),
            ..LemkeOptions::default()
        };
        assert!(matches!(
            lemke(&lcp, &opts),
            Err(SolverError::NoSolution { .. })
        ));
    }
}

#[test]
fn lemke_planted_degenerate_solutions() {
    // About a third of the indices have zᵢ* = wᵢ* = 0 (degenerate complementarity, the
    // usual case for resting contacts), which produces ties in the ratio test.
    let mut rng = ChaCha8Rng::seed_from_u64(777);
    for class in CLASSES {
        for n in [3, 10, 40, 120] {
            let m = matrix(class, n, &mut rng);
            let mut z = DVector::zeros(n);
            let mut w = DVector::zeros(n);
            for i in 0..n {
                match rng.gen_range(0..3) {
                    0 => z[i] = rng.gen_range(0.1..1.0),
                    1 => w[i] = rng.gen_range(0.1..1.0),
                    _ => {}
                }
            }
            let q = w - &m * z;
            let lcp = Lcp::new(m, q).unwrap();
            let s = lemke(&lcp, &LemkeOptions::default())
                .unwrap_or_else(|e| panic!("{class:?} n={n}: {e}"));
            assert_valid(&lcp, &s, 1e-9, &format!("{class:?} n={n}"));
        }
    }
}
