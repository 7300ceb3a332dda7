//! LCP solves per second of the eq. (75) impact step (Algorithm 1 random walks), for the
//! rocking block (2 contacts) and the disk stack (5 contacts), on one core and on all cores
//! (rayon). Criterion reports the time per batch; the throughput lines print solves/s.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use nonsmooth_impact::models;
use nonsmooth_impact::sampling::{approximate, sim, CapSampler, SimSettings};
use nonsmooth_impact::{ImpactLcp, ImpactProblem};
use std::hint::black_box;
use std::time::Instant;

const BATCH: usize = 2048;

fn single_core(p: &ImpactProblem, s: &SimSettings) -> usize {
    let lcp = ImpactLcp::new(p);
    let mut solves = 0;
    for j in 0..BATCH {
        if let Ok(r) = sim(p, &lcp, s, CapSampler::Sobol { seed: 1 }, j) {
            solves += r.lcps;
        }
    }
    solves
}

fn all_cores(p: &ImpactProblem, s: &SimSettings) -> usize {
    approximate(p, s, 0.0, BATCH, CapSampler::Sobol { seed: 1 })
        .map(|r| r.samples.iter().map(|x| x.lcps).sum())
        .unwrap_or(0)
}

fn report(name: &str, f: &dyn Fn() -> usize) {
    let start = Instant::now();
    let mut solves = 0;
    let mut reps = 0;
    while start.elapsed().as_secs_f64() < 1.0 || reps < 2 {
        solves += f();
        reps += 1;
    }
    let rate = solves as f64 / start.elapsed().as_secs_f64();
    println!("{name}: {rate:.0} LCP solves per second");
}

fn bench(c: &mut Criterion) {
    let cases = [
        (
            "rocking_block",
            models::rocking_block(),
            SimSettings::new(0.3, 10),
        ),
        ("disks", models::disks(), SimSettings::new(1.0, 10)),
    ];
    let mut group = c.benchmark_group("impact_lcp");
    for (name, p, s) in cases {
        let Ok(p) = p else { continue };
        let per_batch = single_core(&p, &s).max(1) as u64;
        group.throughput(Throughput::Elements(per_batch));
        report(&format!("{name} single core"), &|| single_core(&p, &s));
        report(
            &format!(
                "{name} all cores ({} threads)",
                rayon::current_num_threads()
            ),
            &|| all_cores(&p, &s),
        );
        group.bench_function(format!("{name}/single_core"), |b| {
            b.iter(|| black_box(single_core(&p, &s)))
        });
        group.bench_function(format!("{name}/all_cores"), |b| {
            b.iter(|| black_box(all_cores(&p, &s)))
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = bench
}
criterion_main!(benches);
