//! The MPCC active-set method on the MacMPEC problems of `nonsmooth_solvers::mpcc::macmpec`
//! (known solutions), a branch optimum that is not B-stationary, and bad input.
#![cfg(feature = "mpcc")]

use nonsmooth_solvers::mpcc::macmpec::{cases, pair, Quadratic};
use nonsmooth_solvers::mpcc::{
    solve, solve_from_point, solve_from_relaxed, ActiveSetSettings, Mpcc, MpccError, MpccSolution,
};

/// The solver of a phase I under test: an MPCC, its start point and the settings.
type Method = fn(&Mpcc<'_>, &[f64], &ActiveSetSettings) -> Result<MpccSolution, MpccError>;

/// Runs `method` on every MacMPEC problem from its x0 and checks a B-stationarity
/// certificate, a complementarity residual of at most `comp_tol` and the known value.
fn every_case_reaches_its_known_solution(method: Method, comp_tol: f64) {
    for case in cases() {
        let mpcc = Mpcc {
            nlp: &case.nlp,
            pairs: case.pairs.clone(),
        };
        let s = method(&mpcc, &case.x0, &ActiveSetSettings::default())
            .unwrap_or_else(|e| panic!("{}: {e}", case.name));
        println!(
            "{:<10} f = {:>12.9}  (known {:>5})  {:?}  comp {:.1e}  LPECs {}  BNLPs {}  relaxed {}",
            case.name,
            s.solution.objective,
            case.optimum,
            s.verdict,
            s.comp_residual,
            s.lpec_count,
            s.bnlp_count,
            s.relaxed_count
        );
        assert!(
            s.verdict.is_b_stationary(),
            "{}: {:?}",
            case.name,
            s.verdict
        );
        assert!(
            s.comp_residual <= comp_tol,
            "{}: {}",
            case.name,
            s.comp_residual
        );
        assert!(
            (s.solution.objective - case.optimum).abs() <= 1e-6,
            "{}: f = {} against {}",
            case.name,
            s.solution.objective,
            case.optimum
        );
    }
}

/// Every problem: exact complementarity, a B-stationarity certificate and the known value.
#[test]
fn macmpec_problems_reach_their_known_solutions_with_a_certificate() {
    every_case_reaches_its_known_solution(solve, 1e-12);
}

/// Phase II leaves a branch optimum that is not B-stationary: min (x − 1)² + y² with
/// 0 ≤ x ⊥ y ≥ 0 projected from (0, 0.5) onto the branch x = 0, whose optimum is the
/// biactive origin (f = 1); the LPEC there finds the descent along x on the branch y = 0 and
/// the method ends at (1, 0) with f = 0, certified.
#[test]
fn phase_two_leaves_a_branch_optimum_that_is_not_b_stationary() {
    let mut nlp = Quadratic::new(2);
    nlp.q = vec![(0, 0, 2.0), (1, 1, 2.0)];
    nlp.c = vec![-2.0, 0.0];
    nlp.c0 = 1.0;
    let mpcc = Mpcc {
        nlp: &nlp,
        pairs: vec![pair(0, 1)],
    };
    let s = solve_from_relaxed(&mpcc, &[0.0, 0.5], None, &ActiveSetSettings::default()).unwrap();
    let first = s.log.iter().find(|l| l.kind == "bnlp").unwrap();
    assert!((first.objective - 1.0).abs() < 1e-6, "{:?}", s.log);
    assert!(s.solution.objective.abs() < 1e-9, "{s:?}");
    assert!(
        (s.solution.x[0] - 1.0).abs() < 1e-6 && s.solution.x[1] == 0.0,
        "{s:?}"
    );
    assert!(s.verdict.is_b_stationary(), "{s:?}");
}

/// Bad pairs and settings are typed errors naming the pair or the setting.
#[test]
fn bad_pairs_and_settings_are_named() {
    let nlp = Quadratic::new(2);
    let bad = Mpcc {
        nlp: &nlp,
        pairs: vec![pair(0, 5)],
    };
    let e = solve(&bad, &[0.0, 0.0], &ActiveSetSettings::default()).unwrap_err();
    assert!(e.to_string().contains("pair 0"), "{e}");
    let same = Mpcc {
        nlp: &nlp,
        pairs: vec![pair(1, 1)],
    };
    assert!(solve(&same, &[0.0, 0.0], &ActiveSetSettings::default()).is_err());
    let ok = Mpcc {
        nlp: &nlp,
        pairs: vec![pair(0, 1)],
    };
    let settings = ActiveSetSettings {
        trust_region_shrink: 1.5,
        ..ActiveSetSettings::default()
    };
    let e = solve(&ok, &[0.0, 0.0], &settings).unwrap_err();
    assert!(e.to_string().contains("trust_region_shrink"), "{e}");
}

/// A time limit reached is a typed error carrying the last feasible branch point (exactly
/// complementary); a problem without a feasible branch is certified locally infeasible, with
/// its ℓ1 violation and the certified point.
#[test]
fn time_limit_and_infeasible_branches_are_typed_errors_with_their_points() {
    let case = cases().into_iter().find(|c| c.name == "kth2").unwrap();
    let mpcc = Mpcc {
        nlp: &case.nlp,
        pairs: case.pairs.clone(),
    };
    let settings = ActiveSetSettings {
        time_limit: 1e-12,
        ..ActiveSetSettings::default()
    };
    let e = solve_from_relaxed(&mpcc, &[0.0, 1.0], None, &settings).unwrap_err();
    assert!(matches!(e, MpccError::TimeLimit { .. }), "{e}");
    let x = e.last_point().expect("the branch point");
    assert_eq!(mpcc.comp_residual(x), 0.0);
    // x + y = 1 with 0 ≤ x ⊥ y ≥ 0 and x ≥ 2: no branch is feasible; the least ℓ1
    // violation is 1 (on the branch y = 0, anywhere in 1 ≤ x ≤ 2)
    let nlp = Quadratic::new(2)
        .row(&[(0, 1.0), (1, 1.0)], 1.0, 1.0)
        .row(&[(0, 1.0)], 2.0, 1e20);
    let infeasible = Mpcc {
        nlp: &nlp,
        pairs: vec![pair(0, 1)],
    };
    let e = solve_from_relaxed(
        &infeasible,
        &[0.5, 0.5],
        None,
        &ActiveSetSettings::default(),
    )
    .unwrap_err();
    let MpccError::LocallyInfeasible { violation, ref x } = e else {
        panic!("{e}");
    };
    assert!((violation - 1.0).abs() < 1e-6, "{e}");
    assert_eq!(infeasible.comp_residual(x), 0.0);
    assert!(
        x[1] == 0.0 && x[0] >= 1.0 - 1e-6 && x[0] <= 2.0 + 1e-6,
        "{x:?}"
    );
}

/// Phase I where no projection of the relaxed point is feasible: min (x − 1)² + (y − 1)²
/// with 0 ≤ x ⊥ y ≥ 0 and x ≥ 1 from (0, 0.5), where y cannot reach zero within the
/// projection's trust region and the branch x = 0 violates x ≥ 1 by 1. The feasibility MPCC
/// leaves that branch on a widened trust region; phase II ends at (1, 0), f = 1, certified.
#[test]
fn the_feasibility_phase_finds_the_branch_no_projection_reaches() {
    let mut nlp = Quadratic::new(2).row(&[(0, 1.0)], 1.0, 1e20);
    nlp.q = vec![(0, 0, 2.0), (1, 1, 2.0)];
    nlp.c = vec![-2.0, -2.0];
    nlp.c0 = 2.0;
    let mpcc = Mpcc {
        nlp: &nlp,
        pairs: vec![pair(0, 1)],
    };
    let s = solve_from_relaxed(&mpcc, &[0.0, 0.5], None, &ActiveSetSettings::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        s.log
            .iter()
            .any(|l| l.kind == "bnlp" && l.ok && l.detail.contains("feasibility branch")),
        "{:#?}",
        s.log
    );
    assert!((s.solution.objective - 1.0).abs() < 1e-8, "{s:?}");
    assert!(
        // x = 1 + O(√μ) on the row x ≥ 1 of an interior-point solution
        (s.solution.x[0] - 1.0).abs() < 1e-4 && s.solution.x[1] == 0.0,
        "{:?}",
        s.solution.x
    );
    assert!(s.verdict.is_b_stationary(), "{:?}", s.verdict);
}

/// Phase I from any point: every MacMPEC problem started at its x0 without a relaxed NLP
/// (the feasibility MPCC, then phase II) ends exactly complementary, certified and at its
/// known value.
#[test]
fn macmpec_problems_from_their_start_points_by_the_feasibility_phase() {
    every_case_reaches_its_known_solution(solve_from_point, 0.0);
}
