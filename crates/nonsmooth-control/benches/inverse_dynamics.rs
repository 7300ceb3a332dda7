//! Criterion benchmarks of the inverse-dynamics variants on the reference quadruped
//! (`examples/id_quadruped.toml`, standing, q̈_des = 0, Δt = 1 ms) against the number of
//! contacts, 4–64 (the feet contacts duplicated, as the paper's Fig. 19 "artificially
//! increased" contacts: N is rank deficient), every variant:
//!
//! - `warm/<variant>/<n>`: one controller called repeatedly, as in a control loop (the QP
//!   stages start from the previous call's active sets, §4.6; ID_LCP,∞'s PPM likewise);
//! - `cold/<variant>/<n>`: a fresh controller per call (the QP stages by Lemke on their KKT
//!   LCPs, Algorithm 2's PPM from one index);
//! - `jittered/<variant>/32`: warm, 32 contacts whose duplicates are moved by up to 0.1 mm
//!   (nearly dependent rows of N, no exact duplicates);
//! - `clarabel_stages/<variant>/4`: both QP stages by Clarabel, no warm start (the reference
//!   route).
//!
//! Targets (ours, against the paper's Fig. 19): QP,∞ and QP,μ warm ≤ 20 µs at 4 contacts and < 1000
//! µs at 32; ID_LCP,∞ growing at most linearly.
//!
//! Where the time went before the QP stages were warm-started in reduced form (per call,
//! QP,μ, 2-core machine, by timing each phase): at 8 contacts 58 µs, of which Lemke on the
//! two KKT LCPs 31 µs and their assembly 12 µs; at 16 contacts 356 µs, Lemke 222 µs and the
//! dense Stage I data (`H = Rᵀ M̃⁻¹ R`, the (k+2)n × (k+1)n constraint matrix with its
//! identity block, the KKT matrix) 115 µs; at 32 contacts 1334 µs, Lemke 724 µs and the dense
//! data 430 µs. Both grow with the square of the KKT size per pivot (and the tableaus above
//! ~100 KiB are fresh pages on every call), which is the jump between 8 and 16 contacts.
//! The reduced, warm-started stages (`src/active_set.rs`) never form an nz × nz matrix and
//! solve one small linear system per stage when the active set is unchanged.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use nalgebra::{DVector, Vector3};
use nonsmooth_control::{ContactSpec, Desired, IdOptions, IdProblem, InverseDynamics, Variant};
use nonsmooth_core::{ContactSnapshot, Model};

const QUADRUPED: &str = include_str!("../../../examples/id_quadruped.toml");
const COUNTS: [usize; 5] = [4, 8, 16, 32, 64];

fn model() -> Model {
    Model::from_toml_str(QUADRUPED, None).expect("model")
}

fn problem(model: &Model, contacts: usize) -> IdProblem {
    let s = &model.initial_state;
    IdProblem::from_state(model, &s.q, &s.v, 1e-3)
        .and_then(|p| p.with_contacts_cycled(contacts))
        .expect("problem")
}

/// The feet contacts repeated up to `count`, each copy moved in the ground plane by a
/// deterministic offset of at most 0.1 mm.
fn jittered(model: &Model, count: usize) -> IdProblem {
    let s = &model.initial_state;
    let snap = ContactSnapshot::new(model, &s.q, &s.v, 0.0).expect("snapshot");
    let feet: Vec<_> = snap.contacts.iter().collect();
    let specs: Vec<ContactSpec> = (0..count)
        .map(|i| {
            let c = feet[i % feet.len()];
            let k = (i / feet.len()) as f64;
            let offset = Vector3::new((1.7 * k).sin(), (2.3 * k).cos(), 0.0) * 1e-4;
            ContactSpec {
                body: c.body_b.or(c.body_a).expect("a robot body"),
                point: c.point + offset,
                normal: c.normal,
                friction: c.friction,
                gap: c.gap,
            }
        })
        .collect();
    IdProblem::with_contacts(model, &s.q, &s.v, &specs, 1e-3).expect("jittered problem")
}

fn bench(c: &mut Criterion) {
    let model = model();
    let des = Desired::Acceleration(DVector::zeros(model.nu()));
    for (mode, warm) in [("warm", true), ("cold", false)] {
        for variant in Variant::ALL {
            let mut group = c.benchmark_group(format!("{mode}/{}", variant.name()));
            for n in COUNTS {
                let p = problem(&model, n);
                let mut ctl = InverseDynamics::new(IdOptions::new(variant));
                group.bench_with_input(BenchmarkId::from_parameter(n), &p, |b, p| {
                    if warm {
                        b.iter(|| ctl.solve(p, &des).expect("solve"))
                    } else {
                        b.iter(|| {
                            InverseDynamics::new(IdOptions::new(variant))
                                .solve(p, &des)
                                .expect("solve")
                        })
                    }
                });
                if warm && variant.is_qp() {
                    let s = ctl.stats();
                    assert_eq!(s.warm_fallbacks + s.clarabel_fallbacks, 0, "{s:?}");
                }
            }
            group.finish();
        }
    }
    let pj = jittered(&model, 32);
    let mut group = c.benchmark_group("jittered");
    for variant in Variant::ALL {
        let mut ctl = InverseDynamics::new(IdOptions::new(variant));
        group.bench_with_input(BenchmarkId::new(variant.name(), 32), &pj, |b, p| {
            b.iter(|| ctl.solve(p, &des).expect("solve"))
        });
        if variant.is_qp() {
            // The first (cold) call may need Clarabel on the nearly dependent rows; every
            // warm call after it is answered from the active set.
            let s = ctl.stats();
            assert_eq!(s.warm_fallbacks, 0, "{s:?}");
            println!("jittered/{}/32: {s:?}", variant.name());
        }
    }
    group.finish();
    let p4 = problem(&model, 4);
    let mut group = c.benchmark_group("clarabel_stages");
    for variant in [Variant::QpNoSlip, Variant::QpCoulomb] {
        let mut opts = IdOptions::new(variant);
        opts.stage_one_lemke = false;
        opts.stage_two_lemke = false;
        opts.warm_start = false;
        let mut ctl = InverseDynamics::new(opts);
        group.bench_function(BenchmarkId::new(variant.name(), 4), |b| {
            b.iter(|| ctl.solve(&p4, &des).expect("solve"))
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .measurement_time(std::time::Duration::from_millis(600))
        .warm_up_time(std::time::Duration::from_millis(200));
    targets = bench
}
criterion_main!(benches);
