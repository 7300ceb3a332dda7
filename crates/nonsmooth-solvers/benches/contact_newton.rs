//! Time per solve of the regularized contact problem on vertical stacks of 10, 100 and
//! 1000 spheres (6 velocities each, a frictional cone per contact, SAP's near-rigid
//! regularization), cold (from `v*`) and warm (from the solution), with the fitted growth
//! exponent `p` of `time ∝ nᵖ`.
//!
//! `cargo bench -p nonsmooth-solvers --bench contact_newton` prints the table first, then
//! runs the criterion groups.

use std::hint::black_box;
use std::time::Instant;

use criterion::{BenchmarkId, Criterion};
use nalgebra::{DMatrix, DVector};
use nonsmooth_solvers::regularized_contact::{
    solve, Constraint, ConstraintKind, RegularizedContactOptions, RegularizedContactProblem,
};

const SIZES: [usize; 3] = [10, 100, 1000];

/// Rows of the velocity of the point `(0, 0, az)` of the 6-DOF body at offset `o`.
fn point_rows(o: usize, az: f64, sign: f64, t: &mut Vec<(usize, usize, f64)>) {
    t.push((0, o, sign));
    t.push((0, o + 4, sign * az));
    t.push((1, o + 1, sign));
    t.push((1, o + 3, -sign * az));
    t.push((2, o + 2, sign));
}

/// A stack of `nb` unit spheres (radius 0.1) at rest but for a deterministic horizontal
/// velocity and spin pattern of size `lateral`; `h = 0.01`, `μ = 0.5`.
fn stack(nb: usize, lateral: f64) -> RegularizedContactProblem {
    let (m, rho, h, mu) = (1.0, 0.1, 0.01, 0.5);
    let rn = 2.0 / (4.0 * std::f64::consts::PI * std::f64::consts::PI);
    let rt = 7e-3;
    let inertia = 0.4 * m * rho * rho;
    let block =
        DMatrix::from_diagonal(&DVector::from_vec(vec![m, m, m, inertia, inertia, inertia]));
    let n = 6 * nb;
    let mut v_star = DVector::zeros(n);
    let mut b = RegularizedContactProblem::builder(n);
    for k in 0..nb {
        b = b.mass_block(6 * k, &block);
        let phase = k as f64 * 0.7;
        v_star[6 * k] = lateral * phase.sin();
        v_star[6 * k + 1] = lateral * phase.cos();
        v_star[6 * k + 2] = -9.81 * h;
        v_star[6 * k + 5] = lateral / rho * (2.0 * phase).sin();
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
    match b.free_velocity(v_star).build() {
        Ok(p) => p,
        Err(e) => panic!("stack of {nb}: {e}"),
    }
}

/// Least-squares slope of `ln t` against `ln n`.
fn exponent(ns: &[usize], ts: &[f64]) -> f64 {
    let xs: Vec<f64> = ns.iter().map(|&n| (n as f64).ln()).collect();
    let ys: Vec<f64> = ts.iter().map(|t| t.ln()).collect();
    let k = xs.len() as f64;
    let (mx, my) = (xs.iter().sum::<f64>() / k, ys.iter().sum::<f64>() / k);
    let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = xs.iter().map(|x| (x - mx) * (x - mx)).sum();
    sxy / sxx
}

/// Median seconds of `f` over enough repetitions to fill about 0.3 s.
fn time(mut f: impl FnMut()) -> f64 {
    let start = Instant::now();
    f();
    let once = start.elapsed().as_secs_f64().max(1e-7);
    let reps = ((0.3 / once) as usize).clamp(3, 2000);
    let mut samples: Vec<f64> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    samples[reps / 2]
}

fn scaling_table() {
    let opt = RegularizedContactOptions::default();
    for lateral in [0.0, 0.05] {
        println!("stack of spheres, lateral velocity {lateral} m/s, h = 0.01 s, SAP near-rigid R");
        println!(
            "{:>6} {:>6} {:>11} {:>6} {:>12} {:>12} {:>12}",
            "bodies", "n", "contacts", "iters", "cold ms", "ms/iter", "warm ms"
        );
        let (mut cold, mut per_iter, mut warm) = (Vec::new(), Vec::new(), Vec::new());
        for &nb in &SIZES {
            let p = stack(nb, lateral);
            let s = match solve(&p, None, &opt) {
                Ok(s) => s,
                Err(e) => panic!("{e}"),
            };
            assert!(
                s.converged(),
                "stack of {nb} did not converge: {:?}",
                s.status
            );
            let tc = time(|| {
                black_box(solve(&p, None, &opt).ok());
            });
            let tw = time(|| {
                black_box(solve(&p, Some(&s.v), &opt).ok());
            });
            let it = s.iterations.max(1) as f64;
            println!(
                "{:>6} {:>6} {:>11} {:>6} {:>12.4} {:>12.4} {:>12.4}",
                nb,
                p.num_velocities(),
                p.num_constraints(),
                s.iterations,
                tc * 1e3,
                tc * 1e3 / it,
                tw * 1e3
            );
            cold.push(tc);
            per_iter.push(tc / it);
            warm.push(tw);
        }
        println!(
            "growth exponent p (time ∝ n^p): cold {:.2}, per iteration {:.2}, warm {:.2}\n",
            exponent(&SIZES, &cold),
            exponent(&SIZES, &per_iter),
            exponent(&SIZES, &warm)
        );
    }
}

fn criterion_groups(c: &mut Criterion) {
    let opt = RegularizedContactOptions::default();
    let mut g = c.benchmark_group("regularized_contact_stack");
    g.sample_size(10);
    for &nb in &SIZES {
        let p = stack(nb, 0.05);
        g.bench_with_input(BenchmarkId::new("cold", nb), &p, |b, p| {
            b.iter(|| black_box(solve(p, None, &opt).ok()))
        });
    }
    g.finish();
}

fn main() {
    scaling_table();
    let mut c = Criterion::default().configure_from_args();
    criterion_groups(&mut c);
    c.final_summary();
}
