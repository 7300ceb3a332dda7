//! Seconds per grid point of the multi-V certificate (build + Clarabel solve + post-checks),
//! printed for e = 0 (Fig. 2 points: α = 30°, μ₂ = 2) and for e > 0 (one Fig. 3 point:
//! α = 20°, μ = 1.3, d = 0.8, e = 0.1, which carries the degree-6 pre-impact flight
//! conditions and is measured once, with the build/solve split). `SOS_BENCH_E_POSITIVE=0`
//! skips the e > 0 point (a few seconds).

use criterion::{criterion_group, criterion_main, Criterion};
use nonsmooth_sos::lyapunov::{certify, CertifyOptions};
use nonsmooth_sos::planar::PlanarParams;
use std::time::Instant;

fn bench(c: &mut Criterion) {
    let pts = [(1.2, 0.7), (2.0, 1.0), (0.8, 1.3), (1.6, 2.0)];
    let t = Instant::now();
    for (mu1, d) in pts {
        let p = PlanarParams::new(30f64.to_radians(), mu1, 2.0, d, 0.0);
        let _ = certify(&p, &CertifyOptions::default());
    }
    println!(
        "e = 0: {:.3} s per grid point",
        t.elapsed().as_secs_f64() / pts.len() as f64
    );
    if std::env::var("SOS_BENCH_E_POSITIVE").as_deref() != Ok("0") {
        let p = PlanarParams::new(20f64.to_radians(), 1.3, 1.3, 0.8, 0.1);
        let t = Instant::now();
        match certify(&p, &CertifyOptions::default()) {
            Ok(r) => println!(
                "e = 0.1: {:.3} s per grid point (build {:.3} s, Clarabel {:.3} s, {:?})",
                t.elapsed().as_secs_f64(),
                r.build_seconds,
                r.solve_seconds,
                r.verdict
            ),
            Err(e) => println!("e = 0.1: error {e}"),
        }
    }
    let mut g = c.benchmark_group("sos");
    g.sample_size(10);
    g.bench_function("fig2_point_e0", |b| {
        let p = PlanarParams::new(30f64.to_radians(), 2.0, 2.0, 1.0, 0.0);
        b.iter(|| certify(&p, &CertifyOptions::default()))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
