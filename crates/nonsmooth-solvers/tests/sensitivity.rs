//! Derivatives of the solution of the regularized contact problem (Coulomb kinds and
//! cones) with respect to its free velocity, bias velocities and friction coefficients,
//! against central differences of the solution, on random problems away from mode changes.

use nalgebra::{DMatrix, DVector};
use nonsmooth_solvers::regularized_contact::{
    sensitivity, solve_semismooth, Constraint, ConstraintKind, ConstraintMode,
    RegularizedContactOptions, RegularizedContactProblem, SemismoothWorkspace,
};

use nonsmooth_solvers::SolveStatus;

use crate::coulomb_newton::random_problem;

fn tight() -> RegularizedContactOptions {
    RegularizedContactOptions {
        rel_tolerance: 1e-14,
        abs_tolerance: 1e-300,
        max_iterations: 500,
        ..Default::default()
    }
}

/// The problem `p` with the free velocity `v_star`, the bias velocities `v_hat` and the
/// friction coefficients `mu` (one per constraint; ignored for kinds without one), with
/// Coulomb kinds made cones when `cone`.
fn rebuild(
    p: &RegularizedContactProblem,
    v_star: &DVector<f64>,
    v_hat: &[f64],
    mu: &[f64],
    cone: bool,
) -> RegularizedContactProblem {
    let n = p.num_velocities();
    let j = p.jacobian_dense();
    let mut b = RegularizedContactProblem::builder(n)
        .mass_block(0, &p.mass_dense())
        .free_velocity(v_star.clone());
    for (c, &mu_c) in mu.iter().enumerate().take(p.num_constraints()) {
        let rows = p.rows_of(c).unwrap();
        let kind = match (p.kind(c).unwrap(), cone) {
            (ConstraintKind::Coulomb { .. } | ConstraintKind::Cone { .. }, false) => {
                ConstraintKind::Coulomb { mu: mu_c }
            }
            (ConstraintKind::Coulomb { .. } | ConstraintKind::Cone { .. }, true) => {
                ConstraintKind::Cone { mu: mu_c }
            }
            (k, _) => k,
        };
        b = b.constraint(Constraint::from_dense(
            kind,
            &j.rows(rows.start, rows.len()).into_owned(),
            p.regularization()[rows.clone()].to_vec(),
            v_hat[rows].to_vec(),
        ));
    }
    b.build().unwrap()
}

fn friction(p: &RegularizedContactProblem) -> Vec<f64> {
    (0..p.num_constraints())
        .map(|c| match p.kind(c).unwrap() {
            ConstraintKind::Coulomb { mu } | ConstraintKind::Cone { mu } => mu,
            _ => 0.0,
        })
        .collect()
}

/// Solution and modes of a problem; `None` where the Newton iteration does not converge
/// (a random problem may defeat it; those are not checked). At 1e-14 the iteration may stop
/// at the rounding level of `v`, which is as good.
fn solved(
    p: &RegularizedContactProblem,
    warm: Option<&DVector<f64>>,
) -> Option<(DVector<f64>, Vec<ConstraintMode>)> {
    let starts: Vec<&DVector<f64>> = warm.into_iter().collect();
    let s = solve_semismooth(p, &starts, &tight(), &mut SemismoothWorkspace::default()).unwrap();
    if !(s.converged() || s.status == SolveStatus::AlmostSolved) {
        return None;
    }
    let mut ws = SemismoothWorkspace::default();
    let modes = sensitivity(p, &s.v, 30, &mut ws).unwrap().modes().to_vec();
    Some((s.v, modes))
}

/// Largest entry of `a − b` over the largest entry of `a` (at least 1e-3).
fn relative_error(a: &DMatrix<f64>, b: &DMatrix<f64>) -> f64 {
    (a - b).amax() / a.amax().max(1e-3)
}

/// Every derivative of the solution matches central differences (step 1e-6) to 1e-5
/// relative on random Coulomb and cone problems of one to three bodies, dense and sparse,
/// wherever the perturbed solutions keep the modes of the solution; most problems do.
#[test]
fn derivatives_of_the_solution_match_central_differences() {
    let eps = 1e-6;
    let mut checked = 0;
    let mut sliding = 0;
    let cases = 40;
    for case in 0..cases {
        for cone in [false, true] {
            let base = random_problem(case, true, None);
            let mu = friction(&base);
            let v_hat = base.bias_velocity().to_vec();
            let p = rebuild(&base, base.free_velocity(), &v_hat, &mu, cone);
            let Some((v, modes)) = solved(&p, None) else {
                continue;
            };
            let n = p.num_velocities();
            let m = p.num_rows();
            let nc = p.num_constraints();
            // Analytic derivatives, dense and sparse factorizations.
            let mut analytic = Vec::new();
            for threshold in [30, 0] {
                let mut ws = SemismoothWorkspace::default();
                let mut s = sensitivity(&p, &v, threshold, &mut ws).unwrap();
                assert_eq!(s.modes(), &modes[..]);
                let mut d = DMatrix::zeros(n, n + m + nc);
                d.columns_mut(0, n)
                    .copy_from(&s.wrt_free_velocity().unwrap());
                for c in 0..nc {
                    let rows = p.rows_of(c).unwrap();
                    let db = s.wrt_bias_velocity(c).unwrap().unwrap();
                    d.columns_mut(n + rows.start, rows.len()).copy_from(&db);
                    let dm = s.wrt_friction(c).unwrap().unwrap();
                    d.set_column(n + m + c, &dm);
                }
                analytic.push(d);
            }
            assert!(relative_error(&analytic[0], &analytic[1]) <= 1e-9);
            // Central differences of the solution, in the same column order.
            let mut fd = DMatrix::zeros(n, n + m + nc);
            let mut same_modes = true;
            for col in 0..n + m + nc {
                let mut side = |sign: f64| {
                    let mut vs = p.free_velocity().clone();
                    let mut vh = v_hat.clone();
                    let mut mm = mu.clone();
                    if col < n {
                        vs[col] += sign * eps;
                    } else if col < n + m {
                        vh[col - n] += sign * eps;
                    } else {
                        mm[col - n - m] += sign * eps;
                    }
                    match solved(&rebuild(&p, &vs, &vh, &mm, cone), Some(&v)) {
                        Some((x, md)) => {
                            same_modes &= md == modes;
                            x
                        }
                        None => {
                            same_modes = false;
                            v.clone()
                        }
                    }
                };
                let plus = side(1.0);
                let minus = side(-1.0);
                fd.set_column(col, &((plus - minus) / (2.0 * eps)));
            }
            if !same_modes {
                continue;
            }
            let err = relative_error(&analytic[0], &fd);

            assert!(
                err <= 1e-5,
                "case {case} cone {cone}: relative error {err:e}, modes {modes:?}"
            );
            checked += 1;
            sliding += modes.contains(&ConstraintMode::Sliding) as usize;
        }
    }
    eprintln!(
        "{checked} of {} problems checked, {sliding} with a sliding contact",
        2 * cases
    );
    assert!(
        checked >= 50,
        "only {checked} of {} problems away from a mode change",
        2 * cases
    );
    assert!(
        sliding >= 20,
        "only {sliding} problems with a sliding contact"
    );
}
