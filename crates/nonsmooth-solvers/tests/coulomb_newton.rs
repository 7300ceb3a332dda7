//! The Coulomb kinds of the regularized contact problem solved by the semismooth Newton
//! method: against closed forms on an incline, against the fixed point on the friction
//! bounds (Tresca disks `‖γ_t‖ ≤ μγ̄_n` updated to `γ̄_n = γ_n`) on random small
//! problems, and with bounded iteration counts.

use nalgebra::{DMatrix, DVector, Vector3};
use nonsmooth_solvers::regularized_contact::{
    solve, solve_semismooth, Constraint, ConstraintKind, RegularizedContactOptions,
    RegularizedContactProblem, RegularizedContactSolution, SemismoothWorkspace,
};
use nonsmooth_solvers::{SolveStatus, SolverError};

use crate::regularized_contact::Lcg;

const G: f64 = 9.81;

fn tight() -> RegularizedContactOptions {
    RegularizedContactOptions {
        rel_tolerance: 1e-10,
        abs_tolerance: 1e-300,
        ..Default::default()
    }
}

fn dense_and_sparse(base: RegularizedContactOptions) -> [RegularizedContactOptions; 2] {
    [
        base.clone(),
        RegularizedContactOptions {
            dense_threshold: 0,
            ..base
        },
    ]
}

/// The momentum balance `A (v − v*) = Jᵀγ` at the solver's tolerance, recomputed from the
/// public data.
fn check_balance(p: &RegularizedContactProblem, s: &RegularizedContactSolution) {
    let e = &s.v - p.free_velocity();
    let f = p.mass_mul(&e).unwrap() - p.jacobian_transpose_mul(&s.gamma).unwrap();
    let a = p.mass_dense();
    let fnorm = (0..f.len())
        .map(|i| (f[i] / a[(i, i)].sqrt()).powi(2))
        .sum::<f64>()
        .sqrt();
    assert!(
        fnorm <= s.tolerance * (1.0 + 1e-6),
        "{fnorm} > {}",
        s.tolerance
    );
}

/// A point mass `m` on an incline at angle `theta` in the contact frame (x down the slope,
/// z the normal; planar: x and z only), moving down the slope at `v0`, a compliant normal
/// row pressed in by `v̂_n` and the regularizations `rt`, `rn`.
#[allow(clippy::too_many_arguments)]
fn incline(
    planar: bool,
    theta: f64,
    mu: f64,
    m: f64,
    (rt, rn): (f64, f64),
    v_hat_n: f64,
    v0: f64,
    h: f64,
) -> RegularizedContactProblem {
    let (vs_t, vs_n) = (v0 + G * h * theta.sin(), -G * h * theta.cos());
    let (n, kind, v_star) = if planar {
        (2, ConstraintKind::PlanarCoulomb { mu }, vec![vs_t, vs_n])
    } else {
        (3, ConstraintKind::Coulomb { mu }, vec![vs_t, 0.0, vs_n])
    };
    let mut r = vec![rt; n];
    r[n - 1] = rn;
    let mut v_hat = vec![0.0; n];
    v_hat[n - 1] = v_hat_n;
    RegularizedContactProblem::builder(n)
        .mass_block(0, &(DMatrix::identity(n, n) * m))
        .free_velocity(DVector::from_vec(v_star))
        .constraint(Constraint::from_dense(
            kind,
            &DMatrix::identity(n, n),
            r,
            v_hat,
        ))
        .build()
        .unwrap()
}

#[test]
fn incline_sticks_below_the_friction_angle_and_slides_above_with_the_spring_normal() {
    // With A = mI and J = I: γ_n = (v̂_n − v*_n)/(R_n + 1/m), the frictionless (max())
    // value; the sticking trial γ_t = −v*_t/(R_t + 1/m), kept when |γ_t| ≤ μγ_n, else
    // γ_t = −μγ_n along v*_t. At rest with R_t = R_n it sticks iff tan θ ≤ μ.
    let (mu, m, h) = (0.5, 2.0, 0.01);
    for planar in [false, true] {
        for (deg, v0, rt, rn, v_hat_n) in [
            (10.0f64, 0.0, 1e-5, 1e-5, 0.0),
            (26.0, 0.0, 1e-5, 1e-5, 0.0),
            (27.0, 0.0, 1e-5, 1e-5, 0.0),
            (40.0, 0.0, 1e-4, 1e-6, 0.3),
            (5.0, 1.5, 1e-3, 1e-6, 0.05),
        ] {
            let theta = deg.to_radians();
            let p = incline(planar, theta, mu, m, (rt, rn), v_hat_n, v0, h);
            let n = p.num_velocities();
            let vs = p.free_velocity().clone();
            let gn = (v_hat_n - vs[n - 1]) / (rn + 1.0 / m);
            let stick = -vs[0] / (rt + 1.0 / m);
            let gt = if stick.abs() <= mu * gn {
                stick
            } else {
                -mu * gn * vs[0].signum()
            };
            if v0 == 0.0 && rt == rn {
                assert_eq!(stick.abs() <= mu * gn, theta.tan() <= mu, "{deg}");
            }
            for opt in dense_and_sparse(tight()) {
                let mut ws = SemismoothWorkspace::default();
                let s = solve_semismooth(&p, &[], &opt, &mut ws).unwrap();
                assert_eq!(
                    s.status,
                    SolveStatus::Solved,
                    "{deg} {planar} {} {} {}",
                    s.gradient_norm,
                    s.tolerance,
                    s.iterations
                );
                check_balance(&p, &s);
                let gam = s.impulse(0);
                assert!((gam[n - 1] - gn).abs() <= 1e-9 * gn, "{deg}: {gam:?} {gn}");
                assert!((gam[0] - gt).abs() <= 1e-9 * gn, "{deg}: {gam:?} {gt}");
                if !planar {
                    assert!(gam[1].abs() <= 1e-14 * gn);
                }
                assert!(s.iterations <= 4, "{} iterations", s.iterations);
            }
            // SAP's cone (convex) inflates the normal impulse of a sliding contact.
            if stick.abs() > mu * gn && !planar {
                let cone = RegularizedContactProblem::builder(3)
                    .mass_block(0, &(DMatrix::identity(3, 3) * m))
                    .free_velocity(vs.clone())
                    .constraint(Constraint::from_dense(
                        ConstraintKind::Cone { mu },
                        &DMatrix::identity(3, 3),
                        vec![rt, rt, rn],
                        vec![0.0, 0.0, v_hat_n],
                    ))
                    .build()
                    .unwrap();
                let s = solve(&cone, None, &tight()).unwrap();
                assert!(s.impulse(0)[2] > gn * (1.0 + 1e-6), "{deg}");
            }
        }
    }
}

/// `(t₁, t₂, n)` rows of the velocity of the point `r` (from the centre of mass) of a
/// 6-DOF body at column `o`, scaled by `sign`: the row of direction `d` is `(d, r × d)`.
fn frame_rows(
    o: usize,
    r: &Vector3<f64>,
    frame: &[Vector3<f64>; 3],
    sign: f64,
    t: &mut Vec<(usize, usize, f64)>,
) {
    for (i, d) in frame.iter().enumerate() {
        let rd = r.cross(d);
        for k in 0..3 {
            t.push((i, o + k, sign * d[k]));
            t.push((i, o + 3 + k, sign * rd[k]));
        }
    }
}

/// A random orthonormal frame `(t₁, t₂, n)`.
fn random_frame(rng: &mut Lcg) -> [Vector3<f64>; 3] {
    let n = Vector3::new(
        rng.uniform(-0.3, 0.3),
        rng.uniform(-0.3, 0.3),
        rng.uniform(0.8, 1.0),
    )
    .normalize();
    let t1 = n.cross(&Vector3::new(1.0, 0.0, 0.0)).normalize();
    let t2 = n.cross(&t1);
    [t1, t2, n]
}

/// Random small problems: `nb` bodies with random positive definite 6 × 6 masses, each
/// body on the ground at one or two points and touching the next body; `μ` in [0.1, 0.6];
/// `R_n` near-rigid to soft, `R_t` a multiple of it; `v̂_n` pressing in or pulling out;
/// `v*` with random sliding. Returns the problem with one kind per contact: `coulomb`
/// gives the Coulomb kind `(t₁, t₂, n)`, else a `Unilateral` normal then a `Disk` of
/// radius `bounds[k]` (constraints `2k`, `2k + 1`).
pub(crate) fn random_problem(
    case: u64,
    coulomb: bool,
    bounds: Option<&[f64]>,
) -> RegularizedContactProblem {
    let mut rng = Lcg(case.wrapping_mul(0x9E3779B97F4A7C15) ^ 0xD1B54A32D192ED03);
    let nb = 1 + (case % 3) as usize;
    let n = 6 * nb;
    let mut b = RegularizedContactProblem::builder(n);
    let mut v_star = DVector::zeros(n);
    for k in 0..nb {
        let mut l = DMatrix::<f64>::zeros(6, 6);
        for i in 0..6 {
            for j in 0..i {
                l[(i, j)] = rng.uniform(-0.2, 0.2);
            }
            l[(i, i)] = rng.uniform(0.5, 1.5);
        }
        b = b.mass_block(6 * k, &(&l * l.transpose()));
        for i in 0..6 {
            v_star[6 * k + i] = rng.uniform(-0.3, 0.3);
        }
        v_star[6 * k + 2] -= G * 0.01;
    }
    let mut contacts = Vec::new();
    for k in 0..nb {
        for _ in 0..1 + (rng.next() < 0.5) as usize {
            contacts.push((k, None));
        }
        if k + 1 < nb {
            contacts.push((k + 1, Some(k)));
        }
    }
    for (c, &(a, other)) in contacts.iter().enumerate() {
        let frame = random_frame(&mut rng);
        let ra = Vector3::new(
            rng.uniform(-0.2, 0.2),
            rng.uniform(-0.2, 0.2),
            rng.uniform(-0.3, -0.1),
        );
        let mut t = Vec::new();
        frame_rows(6 * a, &ra, &frame, 1.0, &mut t);
        if let Some(o) = other {
            let rb = Vector3::new(rng.uniform(-0.2, 0.2), rng.uniform(-0.2, 0.2), 0.2);
            frame_rows(6 * o, &rb, &frame, -1.0, &mut t);
        }
        let mu = rng.uniform(0.1, 0.6);
        let rn = 10f64.powf(rng.uniform(-6.0, -1.0));
        let rt = rn * 10f64.powf(rng.uniform(-1.0, 2.0));
        let v_hat_n = rng.uniform(-0.05, 0.1);
        if coulomb {
            b = b.constraint(Constraint::new(
                ConstraintKind::Coulomb { mu },
                t,
                vec![rt, rt, rn],
                vec![0.0, 0.0, v_hat_n],
            ));
        } else {
            let normal: Vec<_> = t
                .iter()
                .filter(|e| e.0 == 2)
                .map(|e| (0, e.1, e.2))
                .collect();
            let tangents: Vec<_> = t.iter().filter(|e| e.0 < 2).copied().collect();
            let radius = bounds.map_or(f64::INFINITY, |r| mu * r[c]);
            b = b
                .constraint(Constraint::new(
                    ConstraintKind::Unilateral,
                    normal,
                    vec![rn],
                    vec![v_hat_n],
                ))
                .constraint(Constraint::new(
                    ConstraintKind::Disk { radius },
                    tangents,
                    vec![rt, rt],
                    vec![0.0, 0.0],
                ));
        }
    }
    b.free_velocity(v_star).build().unwrap()
}

/// The fixed point on the friction bounds: solve the Tresca program (convex), set each
/// disk's radius to `μγ_n`, repeat until the normal impulses change by at most 1e-14
/// relative; `None` when 2000 rounds do not get there.
fn fixed_point(case: u64) -> Option<(DVector<f64>, usize)> {
    let contacts = random_problem(case, true, None).num_constraints();
    let mut normals = vec![f64::INFINITY; contacts];
    let mut warm: Option<DVector<f64>> = None;
    for round in 0..2000 {
        let bounds: Vec<f64> = normals.iter().map(|x| x.max(0.0)).collect();
        let p = random_problem(case, false, Some(&bounds));
        let s = solve(&p, warm.as_ref(), &tight()).unwrap();
        assert!(s.converged());
        let new: Vec<f64> = (0..contacts).map(|k| s.impulse(2 * k)[0]).collect();
        let scale = new.iter().fold(1e-300f64, |a, x| a.max(x.abs()));
        let change = new
            .iter()
            .zip(&normals)
            .fold(0f64, |a, (x, y)| a.max((x - y).abs()));
        normals = new;
        warm = Some(s.v.clone());
        if change <= 1e-14 * scale {
            // Stacked as the Coulomb problem: (t₁, t₂, n) per contact.
            let mut g = DVector::zeros(3 * contacts);
            for k in 0..contacts {
                g[3 * k] = s.impulse(2 * k + 1)[0];
                g[3 * k + 1] = s.impulse(2 * k + 1)[1];
                g[3 * k + 2] = s.impulse(2 * k)[0];
            }
            return Some((g, round + 1));
        }
    }
    None
}

#[test]
fn random_problems_match_the_fixed_point_on_the_friction_bounds() {
    let mut compared = 0;
    let mut iterations = Vec::new();
    let mut regions = [0usize; 3];
    for case in 0..60u64 {
        let p = random_problem(case, true, None);
        let Some((reference, _rounds)) = fixed_point(case) else {
            continue;
        };
        for opt in dense_and_sparse(tight()) {
            let mut ws = SemismoothWorkspace::default();
            let s = solve_semismooth(&p, &[], &opt, &mut ws).unwrap();
            assert_eq!(s.status, SolveStatus::Solved, "case {case}");
            check_balance(&p, &s);
            let scale = reference.amax();
            let diff = (&s.gamma - &reference).amax();
            assert!(diff <= 1e-8 * scale, "case {case}: {diff} vs {scale}");
            iterations.push(s.iterations);
            for k in 0..p.num_constraints() {
                let g = s.impulse(k);
                let gt = (g[0] * g[0] + g[1] * g[1]).sqrt();
                let mu = match p.kind(k) {
                    Some(ConstraintKind::Coulomb { mu }) => mu,
                    _ => unreachable!(),
                };
                regions[if g[2] == 0.0 {
                    0
                } else if gt < mu * g[2] * (1.0 - 1e-12) {
                    1
                } else {
                    2
                }] += 1;
            }
        }
        compared += 1;
    }
    let mean = iterations.iter().sum::<usize>() as f64 / iterations.len() as f64;
    let max = iterations.iter().copied().max().unwrap_or(0);
    println!(
        "{compared} problems; separated/sticking/sliding contacts {regions:?}; Newton \
         iterations mean {mean:.1}, max {max}"
    );
    assert!(compared >= 50, "{compared}");
    assert!(regions.iter().all(|&c| c >= 10), "{regions:?}");
    assert!(max <= 25, "{max}");
}

#[test]
fn without_coulomb_kinds_the_semismooth_solution_is_the_convex_one() {
    for case in 0..20u64 {
        let bounds = vec![0.7; 8];
        let p = random_problem(case, false, Some(&bounds));
        let convex = solve(&p, None, &tight()).unwrap();
        let mut ws = SemismoothWorkspace::default();
        let s = solve_semismooth(&p, &[], &tight(), &mut ws).unwrap();
        assert!(
            convex.converged() && s.converged(),
            "{:?} {:?} {} {} {} {}",
            convex.status,
            s.status,
            s.gradient_norm,
            s.tolerance,
            convex.gradient_norm,
            convex.tolerance
        );
        let diff = (&s.gamma - &convex.gamma).amax();
        assert!(diff <= 1e-8 * convex.gamma.amax(), "case {case}: {diff}");
    }
}

#[test]
fn the_convex_solver_rejects_coulomb_kinds_and_the_lu_analysis_is_reused() {
    let p = random_problem(2, true, None);
    match solve(&p, None, &RegularizedContactOptions::default()) {
        Err(SolverError::InvalidInput { reason, .. }) => {
            assert!(reason.contains("constraint 0"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    let sparse = RegularizedContactOptions {
        dense_threshold: 0,
        ..Default::default()
    };
    let mut ws = SemismoothWorkspace::default();
    let first = solve_semismooth(&p, &[], &sparse, &mut ws).unwrap();
    // The same pattern again (other data): the analysis is reused; from the solution as
    // the start, no iteration is needed.
    let q = random_problem(2, true, None);
    let again = solve_semismooth(&q, &[&first.v], &sparse, &mut ws).unwrap();
    assert_eq!(ws.symbolic_analyses(), (1, 1));
    assert_eq!(again.iterations, 0);
    // The best of several starts is taken.
    let zero = DVector::zeros(p.num_velocities());
    let third = solve_semismooth(&q, &[&zero, &first.v], &sparse, &mut ws).unwrap();
    assert_eq!(third.iterations, 0);
    assert_eq!(ws.symbolic_analyses(), (1, 2));
}
