//! Determinism: the set-valued impact approximation (Algorithm 2, parallel over samples) gives
//! bit-identical outputs for the same seed whatever the number of worker threads, and on
//! repeated runs.

use nonsmooth_impact::models;
use nonsmooth_impact::sampling::{approximate, ApproxResult, CapSampler, SimSettings};

fn run(threads: usize, sampler: CapSampler) -> ApproxResult {
    let p = models::rocking_block().unwrap();
    let settings = SimSettings::new(0.3, 10);
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(|| approximate(&p, &settings, 0.05, 256, sampler).unwrap())
}

fn bits(r: &ApproxResult) -> Vec<u64> {
    r.outputs
        .iter()
        .flat_map(|v| v.iter().map(|x| x.to_bits()))
        .collect()
}

#[test]
fn impact_sets_are_bit_identical_across_thread_counts_and_runs() {
    for sampler in [
        CapSampler::Sobol { seed: 7 },
        CapSampler::Uniform { seed: 11 },
    ] {
        let one = run(1, sampler);
        assert!(!one.outputs.is_empty());
        for threads in [1, 2, 4] {
            let other = run(threads, sampler);
            assert_eq!(bits(&one), bits(&other), "{threads} threads, {sampler:?}");
            assert_eq!(one.rejected, other.rejected);
            assert_eq!(one.mean_lcps.to_bits(), other.mean_lcps.to_bits());
        }
    }
}
