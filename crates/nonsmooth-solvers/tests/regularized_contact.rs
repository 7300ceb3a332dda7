//! The regularized contact solver (Newton on the primal) against closed forms, against
//! Clarabel on the dual, and on stacks of spheres.

use nalgebra::{DMatrix, DVector};
use nonsmooth_solvers::conic::{Cone, ConicOptions, ConicProblemBuilder};
use nonsmooth_solvers::regularized_contact::{
    solve, Constraint, ConstraintKind, RegularizedContactOptions, RegularizedContactProblem,
    RegularizedContactSolution,
};
use nonsmooth_solvers::{SolveStatus, SolverError};

const G: f64 = 9.81;

/// A small deterministic pseudo-random generator (64-bit LCG, top 53 bits).
pub(crate) struct Lcg(pub(crate) u64);

impl Lcg {
    pub(crate) fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
    pub(crate) fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next()
    }
    pub(crate) fn int(&mut self, lo: usize, hi: usize) -> usize {
        (lo + (self.next() * (hi - lo + 1) as f64) as usize).min(hi)
    }
    pub(crate) fn chance(&mut self, p: f64) -> bool {
        self.next() < p
    }
}

fn dense_and_sparse() -> [RegularizedContactOptions; 2] {
    [
        RegularizedContactOptions::default(),
        RegularizedContactOptions {
            dense_threshold: 0,
            ..Default::default()
        },
    ]
}

/// Independent check of the optimality test: `‖D (A (v − v*) − Jᵀγ)‖ ≤ tol` with the
/// solver's tolerance, recomputed from the public data.
fn check_optimality(p: &RegularizedContactProblem, s: &RegularizedContactSolution) {
    let e = &s.v - p.free_velocity();
    let grad = p.mass_mul(&e).unwrap() - p.jacobian_transpose_mul(&s.gamma).unwrap();
    let a = p.mass_dense();
    let gn = (0..grad.len())
        .map(|i| (grad[i] / a[(i, i)].sqrt()).powi(2))
        .sum::<f64>()
        .sqrt();
    assert!(
        gn <= s.tolerance * (1.0 + 1e-6),
        "gradient {gn} above {}",
        s.tolerance
    );
    assert!((gn - s.gradient_norm).abs() <= 1e-6 * s.tolerance + 1e-300);
    let gmax = s.gamma.amax();
    assert!(
        s.cone_violation <= 1e-14 * (1.0 + gmax),
        "{}",
        s.cone_violation
    );
}

/// Rows `(x, y, z)` of the velocity of the point `(0, 0, az)` of a 6-DOF body
/// `(vx, vy, vz, ωx, ωy, ωz)` at column offset `o`, scaled by `sign`: `v + ω × (0, 0, az)`.
fn point_rows(o: usize, az: f64, sign: f64, t: &mut Vec<(usize, usize, f64)>) {
    t.push((0, o, sign));
    t.push((0, o + 4, sign * az));
    t.push((1, o + 1, sign));
    t.push((1, o + 3, -sign * az));
    t.push((2, o + 2, sign));
}

fn sphere_mass(m: f64, rho: f64) -> DMatrix<f64> {
    let i = 0.4 * m * rho * rho;
    DMatrix::from_diagonal(&DVector::from_vec(vec![m, m, m, i, i, i]))
}

/// A vertical stack of `nb` spheres (mass `m`, radius `rho`) on the ground, each with 6
/// velocities; contacts ground–sphere 0 and sphere i–sphere i+1, friction `mu`, normal
/// and tangential regularizations `rn`, `rt`. Initial velocities have random horizontal
/// and spin components of size `lateral`; `v* = v₀ + h g`.
fn stack(
    nb: usize,
    lateral: f64,
    mu: f64,
    rn: f64,
    rt: f64,
    case: u64,
) -> RegularizedContactProblem {
    let (m, rho, h) = (1.0, 0.1, 0.01);
    let mut rng = Lcg(case.wrapping_mul(0x9E3779B97F4A7C15) ^ 0x2545F4914F6CDD1D);
    let n = 6 * nb;
    let mut v_star = DVector::zeros(n);
    let mut b = RegularizedContactProblem::builder(n);
    for k in 0..nb {
        b = b.mass_block(6 * k, &sphere_mass(m, rho));
        for d in [0, 1] {
            v_star[6 * k + d] = lateral * rng.uniform(-1.0, 1.0);
        }
        for d in 3..6 {
            v_star[6 * k + d] = lateral / rho * rng.uniform(-1.0, 1.0);
        }
        v_star[6 * k + 2] = -G * h;
    }
    for k in 0..nb {
        let mut t = Vec::new();
        point_rows(6 * k, -rho, 1.0, &mut t);
        if k > 0 {
            point_rows(6 * (k - 1), rho, -1.0, &mut t);
        }
        b = b.constraint(Constraint::new(
            ConstraintKind::Cone { mu },
            t,
            vec![rt, rt, rn],
            vec![0.0; 3],
        ));
    }
    b.free_velocity(v_star).build().unwrap()
}

/// SAP's near-rigid regularization for the unit spheres of [`stack`] (Castro et al. 2022,
/// §V-A): `R_n = β²/(4π²) w_n` with `β = 1` and the Delassus diagonal `w_n = 2/m` of a
/// sphere–sphere contact, `R_t = σ w_t` with `σ = 10⁻³` and `w_t = 2 (1/m + ρ²/I) = 7/m`.
const SAP_RN: f64 = 2.0 / (4.0 * std::f64::consts::PI * std::f64::consts::PI);
const SAP_RT: f64 = 7e-3;

#[test]
fn sphere_resting_on_ground_carries_its_weight() {
    // One contact, normal row touching only v_z: W_nn = 1/m. In stiction,
    // γ = −R⁻¹ v_c and m (v_z − v*_z) = γ_n give γ_n = m g h / (1 + m R_n): the
    // regularization's relative deficit is m R_n / (1 + m R_n) ≤ m R_n.
    for (m, rn) in [(1.0, 1e-4), (2.5, 1e-6), (0.1, 1e-2)] {
        let (rho, h) = (0.2, 0.005);
        let mut t = Vec::new();
        point_rows(0, -rho, 1.0, &mut t);
        let mut v_star = DVector::zeros(6);
        v_star[2] = -G * h;
        let p = RegularizedContactProblem::builder(6)
            .mass_block(0, &sphere_mass(m, rho))
            .free_velocity(v_star)
            .constraint(Constraint::new(
                ConstraintKind::Cone { mu: 0.5 },
                t,
                vec![rn, rn, rn],
                vec![0.0; 3],
            ))
            .build()
            .unwrap();
        for opt in dense_and_sparse() {
            let s = solve(&p, None, &opt).unwrap();
            assert_eq!(s.status, SolveStatus::Solved);
            check_optimality(&p, &s);
            let gam = s.impulse(0);
            let weight = m * G * h;
            assert!(
                (gam[2] - weight / (1.0 + m * rn)).abs() <= 1e-10 * weight,
                "{gam:?}"
            );
            assert!(
                (gam[2] - weight).abs() <= 1.0001 * m * rn * weight,
                "{gam:?}"
            );
            assert!(gam[0].abs() <= 1e-14 * weight && gam[1].abs() <= 1e-14 * weight);
            // The regularization lets the contact sink at v_n = −R_n γ_n.
            assert!((s.constraint_velocity[2] + rn * gam[2]).abs() <= 1e-10 * rn * weight);
        }
    }
}

/// A point mass on an incline at angle `theta`, in the contact frame (x down the slope,
/// z the normal), `R_t = R_n = r`, `v̂ = 0`, starting at rest.
fn incline(theta: f64, mu: f64, m: f64, r: f64, h: f64) -> RegularizedContactProblem {
    let v_star = DVector::from_vec(vec![G * h * theta.sin(), 0.0, -G * h * theta.cos()]);
    RegularizedContactProblem::builder(3)
        .mass_block(0, &(DMatrix::identity(3, 3) * m))
        .free_velocity(v_star)
        .constraint(Constraint::from_dense(
            ConstraintKind::Cone { mu },
            &DMatrix::identity(3, 3),
            vec![r; 3],
            vec![0.0; 3],
        ))
        .build()
        .unwrap()
}

#[test]
fn block_on_incline_sticks_below_the_friction_angle() {
    // Stiction: γ = −R⁻¹ v, m (v − v*) = γ ⇒ γ = −m v* / (1 + m R), inside the cone iff
    // tan θ ≤ μ (equal R's); tangential velocity v_t = −R γ_t, small with R.
    let (mu, m, r, h) = (0.5, 2.0, 1e-5, 0.01);
    for deg in [5.0f64, 15.0, 25.0] {
        let theta = deg.to_radians();
        assert!(theta.tan() < mu);
        let p = incline(theta, mu, m, r, h);
        for opt in dense_and_sparse() {
            let s = solve(&p, None, &opt).unwrap();
            assert_eq!(s.status, SolveStatus::Solved);
            check_optimality(&p, &s);
            let g = s.impulse(0);
            let vs = p.free_velocity();
            for i in 0..3 {
                let want = -m * vs[i] / (1.0 + m * r);
                assert!((g[i] - want).abs() <= 1e-9 * m * G * h, "{g:?}");
            }
            let gt = g[0].hypot(g[1]);
            assert!(gt < mu * g[2] * (1.0 - 1e-3), "not strictly inside: {g:?}");
            let vt = s.v[0].hypot(s.v[1]);
            assert!(vt <= r * m * G * h * 1.000001, "tangential velocity {vt}");
        }
    }
}

#[test]
fn block_on_incline_slides_above_the_friction_angle() {
    // Sliding: γ_t = −μ γ_n along the slope and, from the projection's closed form with
    // μ̂ = μ, γ_n = (μ v*_t − v*_n) / ((1 + μ²)(R + 1/m)); v = v* + γ / m.
    let (mu, m, r, h) = (0.5, 2.0, 1e-5, 0.01);
    for deg in [30.0f64, 45.0, 70.0] {
        let theta = deg.to_radians();
        assert!(theta.tan() > mu);
        let p = incline(theta, mu, m, r, h);
        for opt in dense_and_sparse() {
            let s = solve(&p, None, &opt).unwrap();
            assert_eq!(s.status, SolveStatus::Solved);
            check_optimality(&p, &s);
            let g = s.impulse(0);
            let vs = p.free_velocity();
            let gn = (mu * vs[0] - vs[2]) / ((1.0 + mu * mu) * (r + 1.0 / m));
            assert!((g[2] - gn).abs() <= 1e-9 * gn, "{g:?} vs {gn}");
            let gt = g[0].hypot(g[1]);
            assert!((gt - mu * g[2]).abs() <= 1e-9 * mu * g[2], "{g:?}");
            assert!(g[0] < 0.0 && g[1].abs() <= 1e-12 * gn);
            // Slides down the slope, with the friction opposing it.
            assert!(s.v[0] > 1e-3 * G * h * theta.sin(), "{}", s.v);
            for i in 0..3 {
                assert!((s.v[i] - (vs[i] + g[i] / m)).abs() <= 1e-9 * G * h);
            }
        }
    }
}

/// Solves the dual `min ½ γᵀ(W + R)γ + (J v* − v̂)ᵀγ, γ ∈ F` with Clarabel and returns
/// `(v, γ)` with `v = v* + A⁻¹ Jᵀ γ`.
fn clarabel_dual(p: &RegularizedContactProblem) -> (DVector<f64>, DVector<f64>) {
    let a = p.mass_dense();
    let j = p.jacobian_dense();
    let ainv = a.clone().cholesky().unwrap().inverse();
    let mut w = &j * &ainv * j.transpose();
    let r = p.regularization();
    for i in 0..w.nrows() {
        w[(i, i)] += r[i];
    }
    let w = (&w + w.transpose()) * 0.5;
    let q = &j * p.free_velocity() - DVector::from_column_slice(p.bias_velocity());
    let mut b = ConicProblemBuilder::new(p.num_rows())
        .quadratic_dense(&w)
        .unwrap()
        .linear(q.as_slice())
        .unwrap();
    for c in 0..p.num_constraints() {
        let o = p.rows_of(c).unwrap().start;
        match p.kind(c).unwrap() {
            ConstraintKind::Cone { mu } => {
                // s = (μ γ_n, γ_t₁, γ_t₂) ∈ SOC(3).
                let t = [(0, o + 2, -mu), (1, o, -1.0), (2, o + 1, -1.0)];
                b = b
                    .constraint_triplets(Cone::SecondOrder(3), &t, &[0.0; 3])
                    .unwrap();
            }
            ConstraintKind::Planar { mu } => {
                // μ γ_n − γ_t ≥ 0, μ γ_n + γ_t ≥ 0.
                let t = [(0, o + 1, -mu), (0, o, 1.0), (1, o + 1, -mu), (1, o, -1.0)];
                b = b
                    .constraint_triplets(Cone::Nonnegative(2), &t, &[0.0; 2])
                    .unwrap();
            }
            ConstraintKind::Unilateral => {
                b = b
                    .constraint_triplets(Cone::Nonnegative(1), &[(0, o, -1.0)], &[0.0])
                    .unwrap();
            }
            ConstraintKind::Bilateral => {}
            ConstraintKind::Disk { radius } => {
                // s = (ρ, γ_t₁, γ_t₂) ∈ SOC(3).
                let t = [(1, o, -1.0), (2, o + 1, -1.0)];
                b = b
                    .constraint_triplets(Cone::SecondOrder(3), &t, &[radius, 0.0, 0.0])
                    .unwrap();
            }
            ConstraintKind::Interval { radius } => {
                // ρ − γ_t ≥ 0, ρ + γ_t ≥ 0.
                let t = [(0, o, 1.0), (1, o, -1.0)];
                b = b
                    .constraint_triplets(Cone::Nonnegative(2), &t, &[radius; 2])
                    .unwrap();
            }
            ConstraintKind::Coulomb { .. } | ConstraintKind::PlanarCoulomb { .. } => {
                unreachable!("the Coulomb kinds have no convex dual program")
            }
        }
    }
    let opts = ConicOptions {
        eps_abs: 1e-10,
        eps_rel: 1e-10,
        ..Default::default()
    };
    let sol = b.build().unwrap().solve(&opts).unwrap();
    assert!(matches!(
        sol.status,
        SolveStatus::Solved | SolveStatus::AlmostSolved
    ));
    assert!(sol.residuals.max() <= 1e-7, "{:?}", sol.residuals);
    let gamma = sol.x;
    let v = p.free_velocity() + &ainv * j.transpose() * &gamma;
    (v, gamma)
}

/// The dual cost `½ γᵀ(W + R)γ + (J v* − v̂)ᵀγ`.
fn dual_cost(p: &RegularizedContactProblem, gamma: &DVector<f64>) -> f64 {
    let a = p.mass_dense();
    let j = p.jacobian_dense();
    let x = a.cholesky().unwrap().solve(&(j.transpose() * gamma));
    let mut c = 0.5 * (&j * x).dot(gamma);
    for (i, r) in p.regularization().iter().enumerate() {
        c += 0.5 * r * gamma[i] * gamma[i];
    }
    c + (&j * p.free_velocity() - DVector::from_column_slice(p.bias_velocity())).dot(gamma)
}

/// A random problem: SPD `A` with coupled blocks, two constraints of each kind on random
/// sparse rows, random `v*`, `v̂`, `R`, `μ`.
fn random_problem(rng: &mut Lcg) -> RegularizedContactProblem {
    let n = rng.int(6, 14);
    let bm = DMatrix::from_fn(n, n, |_, _| rng.uniform(-1.0, 1.0));
    let mut a = &bm * bm.transpose() * 0.3 + DMatrix::identity(n, n);
    // Sparsify A while keeping it SPD: zero couplings outside a band, then add diagonal.
    for i in 0..n {
        for j in 0..n {
            if i.abs_diff(j) > 2 {
                a[(i, j)] = 0.0;
            }
        }
    }
    for i in 0..n {
        a[(i, i)] += 3.0;
    }
    let v_star = DVector::from_fn(n, |_, _| rng.uniform(-1.0, 1.0));
    let mut b = RegularizedContactProblem::builder(n)
        .mass_block(0, &a)
        .free_velocity(v_star);
    let kinds = [
        ConstraintKind::Cone { mu: 0.0 },
        ConstraintKind::Planar { mu: 0.0 },
        ConstraintKind::Unilateral,
        ConstraintKind::Bilateral,
        ConstraintKind::Disk { radius: 0.0 },
        ConstraintKind::Interval { radius: 0.0 },
    ];
    for _ in 0..2 {
        for kind in kinds {
            let kind = match kind {
                ConstraintKind::Cone { .. } => ConstraintKind::Cone {
                    mu: rng.uniform(0.1, 1.2),
                },
                ConstraintKind::Planar { .. } => ConstraintKind::Planar {
                    mu: rng.uniform(0.1, 1.2),
                },
                ConstraintKind::Disk { .. } => ConstraintKind::Disk {
                    radius: rng.uniform(0.0, 0.5),
                },
                ConstraintKind::Interval { .. } => ConstraintKind::Interval {
                    radius: rng.uniform(0.0, 0.5),
                },
                k => k,
            };
            let rows = kind.rows();
            let mut t = Vec::new();
            for i in 0..rows {
                for j in 0..n {
                    if rng.chance(0.35) || j == (i * 7 + n / 2) % n {
                        t.push((i, j, rng.uniform(-1.0, 1.0)));
                    }
                }
            }
            let rt = 10f64.powf(rng.uniform(-3.0, -1.0));
            let rn = 10f64.powf(rng.uniform(-3.0, -1.0));
            let mut r = vec![rt; rows];
            if !matches!(
                kind,
                ConstraintKind::Disk { .. } | ConstraintKind::Interval { .. }
            ) {
                r[rows - 1] = rn;
            }
            let v_hat = (0..rows).map(|_| rng.uniform(-0.5, 0.5)).collect();
            b = b.constraint(Constraint::new(kind, t, r, v_hat));
        }
    }
    b.build().unwrap()
}

#[test]
fn agrees_with_clarabel_on_the_dual() {
    let mut rng = Lcg(7);
    let (mut stick, mut slide, mut apart) = (0, 0, 0);
    let mut worst = 0f64;
    for trial in 0..40 {
        let p = random_problem(&mut rng);
        let (v_ref, g_ref) = clarabel_dual(&p);
        for opt in dense_and_sparse() {
            let s = solve(&p, None, &opt).unwrap();
            assert_eq!(s.status, SolveStatus::Solved, "trial {trial}");
            check_optimality(&p, &s);
            let dv = (&s.v - &v_ref).amax() / (1.0 + v_ref.amax());
            let dg = (&s.gamma - &g_ref).amax() / (1.0 + g_ref.amax());
            worst = worst.max(dv).max(dg);
            assert!(
                dv <= 1e-5 && dg <= 1e-5,
                "trial {trial}: dv {dv:e}, dγ {dg:e}"
            );
            // Our γ is feasible by construction and no worse for the dual than the
            // interior-point one.
            let (ours, theirs) = (dual_cost(&p, &s.gamma), dual_cost(&p, &g_ref));
            assert!(
                ours <= theirs + 1e-8 * (1.0 + theirs.abs()),
                "{ours} > {theirs}"
            );
        }
        let s = solve(&p, None, &RegularizedContactOptions::default()).unwrap();
        for c in 0..p.num_constraints() {
            if let Some(ConstraintKind::Cone { mu }) = p.kind(c) {
                let g = s.impulse(c);
                let gt = g[0].hypot(g[1]);
                if g[2] == 0.0 {
                    apart += 1;
                } else if (gt - mu * g[2]).abs() <= 1e-12 * g[2] {
                    slide += 1;
                } else {
                    stick += 1;
                }
            }
        }
    }
    eprintln!("largest relative difference to Clarabel: {worst:e}");
    // The random set exercises every region of the cone projection.
    assert!(
        stick >= 3 && slide >= 3 && apart >= 3,
        "{stick} {slide} {apart}"
    );
}

#[test]
fn stack_of_100_spheres_at_rest() {
    // Contact k carries the spheres above it: (N − k) m g h plus the momentum they keep,
    // m Σ_{j≥k} v_j,z, where sphere j sinks at v_j,z ≈ −R_n Σ_{i≤j} γ_i,n (every contact
    // below it yields at R_n times its impulse) — a relative deficit below m R_n N².
    let (nb, rn) = (100, 1e-6);
    let p = stack(nb, 0.0, 0.5, rn, 1e-7, 1);
    for opt in dense_and_sparse() {
        let s = solve(&p, None, &opt).unwrap();
        assert_eq!(s.status, SolveStatus::Solved);
        assert!(s.iterations <= 30, "{} iterations", s.iterations);
        check_optimality(&p, &s);
        let weight = nb as f64 * G * 0.01;
        let g0 = s.impulse(0)[2];
        assert!(
            g0 <= weight && g0 >= weight * (1.0 - rn * (nb * nb) as f64),
            "{g0}"
        );
        // Every contact carries the weight above it, to the same relative accuracy.
        for k in 0..nb {
            let above = (nb - k) as f64 * G * 0.01;
            let gk = s.impulse(k);
            assert!(
                gk[2] <= above && gk[2] >= above * (1.0 - rn * (nb * nb) as f64),
                "{k}: {gk:?}"
            );
            assert!(gk[0].abs() + gk[1].abs() <= 1e-9 * above);
        }
    }
}

#[test]
fn stack_of_100_spheres_sliding_and_spinning() {
    for case in 0..3 {
        let p = stack(100, 0.5, 0.3, SAP_RN, SAP_RT, case);
        let s = solve(&p, None, &RegularizedContactOptions::default()).unwrap();
        assert_eq!(s.status, SolveStatus::Solved, "case {case}");
        assert!(s.iterations <= 60, "{} iterations", s.iterations);
        check_optimality(&p, &s);
        // Some contacts slide (on the cone boundary), the mix is not trivial.
        let sliding = (0..p.num_constraints())
            .filter(|&c| {
                let g = s.impulse(c);
                g[2] > 0.0 && (g[0].hypot(g[1]) - 0.3 * g[2]).abs() <= 1e-12 * g[2]
            })
            .count();
        assert!(sliding > 0, "case {case}: no sliding contact");
    }
}

#[test]
fn warm_start_from_the_solution_takes_at_most_one_iteration() {
    for (nb, lateral) in [(1, 0.0), (4, 0.3), (100, 0.5)] {
        let p = stack(nb, lateral, 0.3, SAP_RN, SAP_RT, 11);
        let s = solve(&p, None, &RegularizedContactOptions::default()).unwrap();
        assert_eq!(s.status, SolveStatus::Solved);
        let w = solve(&p, Some(&s.v), &RegularizedContactOptions::default()).unwrap();
        assert_eq!(w.status, SolveStatus::Solved);
        assert!(w.iterations <= 1, "{nb}: {} iterations", w.iterations);
        assert!((&w.v - &s.v).amax() <= 1e-9 * (1.0 + s.v.amax()));
    }
}

#[test]
fn without_constraints_one_newton_step_gives_v_star() {
    let p = RegularizedContactProblem::builder(3)
        .mass_block(
            0,
            &DMatrix::from_row_slice(3, 3, &[2.0, 0.5, 0.0, 0.5, 1.0, 0.2, 0.0, 0.2, 3.0]),
        )
        .free_velocity(DVector::from_vec(vec![1.0, -2.0, 3.0]))
        .build()
        .unwrap();
    let s = solve(
        &p,
        Some(&DVector::zeros(3)),
        &RegularizedContactOptions::default(),
    )
    .unwrap();
    assert_eq!(s.status, SolveStatus::Solved);
    assert_eq!(s.iterations, 1);
    assert!((&s.v - p.free_velocity()).amax() <= 1e-14);
}

#[test]
fn unilateral_and_bilateral_closed_forms() {
    // One velocity, mass m, v* = −1: a unilateral row pushes back to v = −R γ with
    // γ = m / (1 + m R); a bilateral row with v̂ = 2 gives γ = m (2 − v*) / (1 + m R)...
    let (m, r) = (3.0, 0.01);
    for (kind, vhat, want) in [
        (ConstraintKind::Unilateral, 0.0, m / (1.0 + m * r)),
        (ConstraintKind::Bilateral, 2.0, m * 3.0 / (1.0 + m * r)),
    ] {
        let p = RegularizedContactProblem::builder(1)
            .mass_triplets(&[(0, 0, m)])
            .free_velocity(DVector::from_vec(vec![-1.0]))
            .constraint(Constraint::new(
                kind,
                vec![(0, 0, 1.0)],
                vec![r],
                vec![vhat],
            ))
            .build()
            .unwrap();
        let s = solve(&p, None, &RegularizedContactOptions::default()).unwrap();
        assert!(
            (s.gamma[0] - want).abs() <= 1e-12 * want,
            "{kind:?}: {}",
            s.gamma[0]
        );
    }
    // A unilateral row that is not pressed stays at γ = 0 and leaves v = v*.
    let p = RegularizedContactProblem::builder(1)
        .mass_triplets(&[(0, 0, 1.0)])
        .free_velocity(DVector::from_vec(vec![0.5]))
        .constraint(Constraint::new(
            ConstraintKind::Unilateral,
            vec![(0, 0, 1.0)],
            vec![1e-3],
            vec![0.0],
        ))
        .build()
        .unwrap();
    let s = solve(&p, None, &RegularizedContactOptions::default()).unwrap();
    assert_eq!((s.gamma[0], s.v[0], s.iterations), (0.0, 0.5, 0));
}

fn reason(e: SolverError) -> String {
    match e {
        SolverError::InvalidInput { reason, .. } => reason,
        other => panic!("expected InvalidInput, got {other:?}"),
    }
}

#[test]
fn invalid_inputs_are_typed_errors_naming_the_constraint_and_field() {
    let base = || {
        RegularizedContactProblem::builder(2)
            .mass_triplets(&[(0, 0, 1.0), (1, 1, 1.0)])
            .constraint(Constraint::new(
                ConstraintKind::Unilateral,
                vec![(0, 0, 1.0)],
                vec![1e-3],
                vec![0.0],
            ))
    };
    let cone = |mu: f64, r: Vec<f64>, j: Vec<(usize, usize, f64)>| {
        Constraint::new(ConstraintKind::Cone { mu }, j, r, vec![0.0; 3])
    };
    let j3 = vec![(0, 0, 1.0), (1, 1, 1.0), (2, 0, 1.0)];
    let e = reason(
        base()
            .constraint(cone(0.5, vec![1.0, 1.0, 0.0], j3.clone()))
            .build()
            .unwrap_err(),
    );
    assert!(e.contains("constraint 1") && e.contains("r[2]"), "{e}");
    let e = reason(
        base()
            .constraint(cone(-0.1, vec![1.0; 3], j3.clone()))
            .build()
            .unwrap_err(),
    );
    assert!(e.contains("constraint 1") && e.contains("mu"), "{e}");
    let e = reason(
        base()
            .constraint(cone(0.5, vec![1.0, 2.0, 1.0], j3.clone()))
            .build()
            .unwrap_err(),
    );
    assert!(
        e.contains("constraint 1") && e.contains("tangential"),
        "{e}"
    );
    let e = reason(
        base()
            .constraint(cone(0.5, vec![1.0; 2], j3.clone()))
            .build()
            .unwrap_err(),
    );
    assert!(e.contains("constraint 1") && e.contains("r:"), "{e}");
    let e = reason(
        base()
            .constraint(cone(0.5, vec![1.0; 3], vec![(0, 5, 1.0)]))
            .build()
            .unwrap_err(),
    );
    assert!(e.contains("constraint 1") && e.contains("jacobian"), "{e}");
    let e = reason(
        base()
            .constraint(cone(0.5, vec![1.0; 3], vec![(3, 0, 1.0)]))
            .build()
            .unwrap_err(),
    );
    assert!(e.contains("constraint 1") && e.contains("jacobian"), "{e}");
    let e = reason(
        base()
            .constraint(cone(0.5, vec![1.0; 3], vec![(0, 0, f64::NAN)]))
            .build()
            .unwrap_err(),
    );
    assert!(
        e.contains("constraint 1") && e.contains("not finite"),
        "{e}"
    );
    let e = reason(
        base()
            .constraint(Constraint::new(
                ConstraintKind::Bilateral,
                vec![(0, 1, 1.0)],
                vec![1.0],
                vec![f64::INFINITY],
            ))
            .build()
            .unwrap_err(),
    );
    assert!(e.contains("constraint 1") && e.contains("v_hat[0]"), "{e}");
    let e = reason(
        RegularizedContactProblem::builder(2)
            .mass_triplets(&[(0, 0, 1.0), (1, 1, 1.0), (0, 1, 0.5)])
            .build()
            .unwrap_err(),
    );
    assert!(e.contains("not symmetric"), "{e}");
    let e = reason(
        RegularizedContactProblem::builder(2)
            .mass_triplets(&[(0, 0, 1.0)])
            .build()
            .unwrap_err(),
    );
    assert!(e.contains("diagonal"), "{e}");
    assert!(matches!(
        base().free_velocity(DVector::zeros(3)).build(),
        Err(SolverError::DimensionMismatch {
            expected: 2,
            got: 3,
            ..
        })
    ));
    // Options and warm start.
    let p = base().build().unwrap();
    for bad in [
        RegularizedContactOptions {
            rel_tolerance: -1.0,
            ..Default::default()
        },
        RegularizedContactOptions {
            alpha_max: 0.5,
            ..Default::default()
        },
        RegularizedContactOptions {
            line_search_tolerance: 0.0,
            ..Default::default()
        },
        RegularizedContactOptions {
            abs_tolerance: 0.0,
            rel_tolerance: 0.0,
            ..Default::default()
        },
    ] {
        assert!(matches!(
            solve(&p, None, &bad),
            Err(SolverError::InvalidInput { .. })
        ));
    }
    assert!(matches!(
        solve(&p, Some(&DVector::zeros(5)), &Default::default()),
        Err(SolverError::DimensionMismatch { .. })
    ));
    assert!(matches!(
        solve(
            &p,
            Some(&DVector::from_element(2, f64::NAN)),
            &Default::default()
        ),
        Err(SolverError::NonFinite { .. })
    ));
    // An indefinite A with a positive diagonal fails in the factorization, as an error.
    for opt in dense_and_sparse() {
        let p = RegularizedContactProblem::builder(2)
            .mass_triplets(&[(0, 0, 1.0), (1, 1, 1.0), (0, 1, 2.0), (1, 0, 2.0)])
            .free_velocity(DVector::from_vec(vec![1.0, 0.0]))
            .build()
            .unwrap();
        let zero = DVector::zeros(2);
        assert!(matches!(
            solve(&p, Some(&zero), &opt),
            Err(SolverError::Failed { .. })
        ));
    }
}

#[test]
fn iteration_limit_is_a_status_not_an_error() {
    let p = stack(20, 0.5, 0.3, 1e-6, 1e-7, 3);
    let s = solve(
        &p,
        None,
        &RegularizedContactOptions {
            max_iterations: 1,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(s.status, SolveStatus::MaxIterations);
    assert!(!s.converged());
    assert_eq!(s.iterations, 1);
    assert!(s.gradient_norm > s.tolerance);
}

/// A point mass on an incline (contact frame as in [`incline`]) with the Coulomb bound of
/// its friction given (`Disk`/`Interval`, Tresca) and the normal a separate unilateral row.
fn incline_bounded(
    theta: f64,
    radius: f64,
    planar: bool,
    r: f64,
    h: f64,
) -> RegularizedContactProblem {
    let m = 2.0;
    let n = if planar { 2 } else { 3 };
    let mut v_star = DVector::zeros(n);
    v_star[0] = G * h * theta.sin();
    v_star[n - 1] = -G * h * theta.cos();
    let t = DMatrix::identity(n, n);
    let (kind, nt) = if planar {
        (ConstraintKind::Interval { radius }, 1)
    } else {
        (ConstraintKind::Disk { radius }, 2)
    };
    RegularizedContactProblem::builder(n)
        .mass_block(0, &(DMatrix::identity(n, n) * m))
        .free_velocity(v_star)
        .constraint(Constraint::from_dense(
            ConstraintKind::Unilateral,
            &t.rows(n - 1, 1).into_owned(),
            vec![r],
            vec![0.0],
        ))
        .constraint(Constraint::from_dense(
            kind,
            &t.rows(0, nt).into_owned(),
            vec![r; nt],
            vec![0.0; nt],
        ))
        .build()
        .unwrap()
}

#[test]
fn bounded_friction_sticks_inside_and_slides_on_its_bound() {
    // m = 2, R = 1e-5: the normal impulse is m g h cos θ / (1 + m R) whatever the friction
    // (no coupling, no inflation); sticking inside the bound, else |γ_t| = bound.
    let (m, r, h) = (2.0, 1e-5, 0.01);
    let theta = 30f64.to_radians();
    for planar in [false, true] {
        let gn = m * G * h * theta.cos() / (1.0 + m * r);
        let stick = m * G * h * theta.sin() / (1.0 + m * r);
        for (radius, sticks) in [
            (2.0 * stick, true),
            (0.5 * stick, false),
            (f64::INFINITY, true),
            (0.0, false),
        ] {
            let mut p = incline_bounded(theta, radius, planar, r, h);
            for opt in dense_and_sparse() {
                let s = solve(&p, None, &opt).unwrap();
                assert_eq!(s.status, SolveStatus::Solved);
                check_optimality(&p, &s);
                assert!((s.impulse(0)[0] - gn).abs() <= 1e-9 * gn);
                let gt = s.impulse(1).iter().map(|x| x * x).sum::<f64>().sqrt();
                if sticks {
                    assert!((gt - stick).abs() <= 1e-9 * stick, "{gt} vs {stick}");
                } else {
                    assert!(
                        (gt - radius).abs() <= 1e-12 + 1e-9 * radius,
                        "{gt} vs {radius}"
                    );
                    assert!(s.v[0] > 0.0);
                }
            }
            // A changed bound is solved as a new problem of that bound.
            p.set_friction_bound(1, 0.25 * stick).unwrap();
            let s = solve(&p, None, &RegularizedContactOptions::default()).unwrap();
            let gt = s.impulse(1).iter().map(|x| x * x).sum::<f64>().sqrt();
            assert!((gt - 0.25 * stick).abs() <= 1e-9 * stick);
            assert!(p.set_friction_bound(0, 1.0).is_err());
            assert!(p.set_friction_bound(1, -1.0).is_err());
            assert!(p.set_friction_bound(7, 1.0).is_err());
        }
    }
}
