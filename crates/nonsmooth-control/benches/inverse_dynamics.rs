//! Criterion benchmarks of the inverse-dynamics variants on the reference quadruped
//! (`examples/id_quadruped.toml`, standing, q̈_des = 0, Δt = 1 ms): every variant at 4
//! contacts, and ID_LCP,∞, ID_QP,∞ and ID_QP,μ against the number of contacts (4–64, feet
//! contacts duplicated, as the paper's Fig. 19); the QP variants also with Clarabel for both stages (the reference
//! route; the default solves them by Lemke). Targets from the issue: qp-coulomb ≤ 50 µs at 4 contacts,
//! lcp-noslip ≤ 100 µs at 40 contacts and linear growth.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use nalgebra::DVector;
use nonsmooth_control::{Desired, IdOptions, IdProblem, InverseDynamics, Variant};
use nonsmooth_core::Model;

const QUADRUPED: &str = include_str!("../../../examples/id_quadruped.toml");

fn problem(contacts: usize) -> IdProblem {
    let model = Model::from_toml_str(QUADRUPED, None).expect("model");
    let s = &model.initial_state;
    IdProblem::from_state(&model, &s.q, &s.v, 1e-3)
        .and_then(|p| p.with_contacts_cycled(contacts))
        .expect("problem")
}

fn bench(c: &mut Criterion) {
    let des = Desired::Acceleration(DVector::zeros(12));
    let p4 = problem(4);
    let mut group = c.benchmark_group("quadruped_4_contacts");
    for variant in Variant::ALL {
        let mut ctl = InverseDynamics::new(IdOptions::new(variant));
        group.bench_function(variant.name(), |b| {
            b.iter(|| ctl.solve(&p4, &des).expect("solve"))
        });
    }
    for variant in [Variant::QpNoSlip, Variant::QpCoulomb] {
        let mut opts = IdOptions::new(variant);
        opts.stage_one_lemke = false;
        opts.stage_two_lemke = false;
        let mut ctl = InverseDynamics::new(opts);
        group.bench_function(format!("{} (clarabel stages)", variant.name()), |b| {
            b.iter(|| ctl.solve(&p4, &des).expect("solve"))
        });
    }
    group.finish();
    for variant in [Variant::LcpNoSlip, Variant::QpNoSlip, Variant::QpCoulomb] {
        let mut group = c.benchmark_group(format!("{}_vs_contacts", variant.snake()));
        for n in [4usize, 8, 16, 32, 64] {
            let p = problem(n);
            let mut ctl = InverseDynamics::new(IdOptions::new(variant));
            group.bench_with_input(BenchmarkId::from_parameter(n), &p, |b, p| {
                b.iter(|| ctl.solve(p, &des).expect("solve"))
            });
        }
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(2)).warm_up_time(std::time::Duration::from_millis(500));
    targets = bench
}
criterion_main!(benches);
