//! Lemke vs projected Gauss–Seidel on random LCPs with a planted solution, sizes 10–200, two
//! classes: (a) singular symmetric PSD `M = B Bᵀ` with `B` `n × n/2`; (b) nonsymmetric
//! P-matrices: `M = D + S − Sᵀ` (positive diagonal `D`, skew part; PGS diverges on it and is
//! not timed) and strictly row diagonally dominant `M` with positive diagonal. Planting: `z*`, `w*` with
//! complementary random supports, `q = w* − M z*`. Residuals are printed once per case,
//! outside the timing loop.

use std::time::Duration;

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion};
use nalgebra::{DMatrix, DVector};
use nonsmooth_solvers::lcp::{lemke, pgs, Lcp, LemkeOptions, PgsOptions};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn uniform(rng: &mut ChaCha8Rng, r: usize, c: usize) -> DMatrix<f64> {
    DMatrix::from_fn(r, c, |_, _| rng.gen_range(-1.0..1.0))
}

fn planted(m: DMatrix<f64>, rng: &mut ChaCha8Rng) -> Lcp {
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
    let q = w - &m * z;
    Lcp::new(m, q).expect("finite planted problem")
}

fn psd(n: usize, rng: &mut ChaCha8Rng) -> Lcp {
    let b = uniform(rng, n, (n / 2).max(1));
    let m = &b * b.transpose();
    planted(m, rng)
}

fn p_skew(n: usize, rng: &mut ChaCha8Rng) -> Lcp {
    let s = uniform(rng, n, n);
    let d = DMatrix::from_diagonal(&DVector::from_fn(n, |_, _| rng.gen_range(0.5..2.0)));
    planted(d + &s - s.transpose(), rng)
}

fn p_dominant(n: usize, rng: &mut ChaCha8Rng) -> Lcp {
    let mut m = uniform(rng, n, n);
    for i in 0..n {
        let off: f64 = (0..n).filter(|&j| j != i).map(|j| m[(i, j)].abs()).sum();
        m[(i, i)] = off * rng.gen_range(1.05..1.5);
    }
    planted(m, rng)
}

fn bench(c: &mut Criterion) {
    let mut rng = ChaCha8Rng::seed_from_u64(2026);
    let lemke_opts = LemkeOptions::default();
    let pgs_opts = PgsOptions {
        max_iterations: 2000,
        tol: 1e-9,
        ..PgsOptions::default()
    };
    type Gen = fn(usize, &mut ChaCha8Rng) -> Lcp;
    let classes: [(&str, Gen); 3] = [
        ("psd_BBt", psd),
        ("p_skew", p_skew),
        ("p_dominant", p_dominant),
    ];
    for (name, gen) in classes {
        let mut group = c.benchmark_group(format!("lcp_{name}"));
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_secs(1));
        for n in [10usize, 50, 100, 200] {
            let lcp = gen(n, &mut rng);
            match lemke(&lcp, &lemke_opts) {
                Ok(s) => eprintln!(
                    "{name} n={n}: lemke pivots={} residual={:.2e} status={:?}",
                    s.iterations,
                    s.residuals.max(),
                    s.status
                ),
                Err(e) => eprintln!("{name} n={n}: lemke error: {e}"),
            }
            let pgs_ok = match pgs(&lcp, &pgs_opts) {
                Ok(s) => {
                    eprintln!(
                        "{name} n={n}: pgs sweeps={} residual={:.2e} status={:?}",
                        s.iterations,
                        s.residuals.max(),
                        s.status
                    );
                    true
                }
                Err(e) => {
                    eprintln!("{name} n={n}: pgs error: {e}");
                    false
                }
            };
            group.bench_with_input(BenchmarkId::new("lemke", n), &lcp, |b, p| {
                b.iter(|| lemke(black_box(p), &lemke_opts))
            });
            if pgs_ok {
                group.bench_with_input(BenchmarkId::new("pgs", n), &lcp, |b, p| {
                    b.iter(|| pgs(black_box(p), &pgs_opts))
                });
            }
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
