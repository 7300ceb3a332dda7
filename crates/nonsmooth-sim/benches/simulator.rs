//! `Simulator::step` on the 18-DOF reference quadruped (`examples/id_quadruped.toml`: floating
//! trunk, 12 joints, 4 point feet on rigid ground) standing on its feet, its motors turned into
//! position servos (kp = 20 N·m/rad, kv = 0.5 N·m·s/rad) commanded to the standing pose, with
//! `drumwright` and `anitescu-potra` at 1 ms. Prints the mean wall time of one step; the
//! Python call overhead over this step is measured by `python/benches/step_overhead.py` on
//! the same scene.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use nonsmooth_core::Model;
use nonsmooth_sim::Simulator;
use std::time::Instant;

const QUADRUPED: &str = include_str!("../../../examples/id_quadruped.toml");

/// The quadruped with position servos on every joint (see the module docs).
fn servo_quadruped() -> Model {
    let text = QUADRUPED.replace(
        "[[actuators]]",
        "[[actuators]]\nkind = \"position\"\nkp = 20.0\nkv = 0.5",
    );
    Model::from_toml_str(&text, Some("id_quadruped.toml (servos)")).expect("model")
}

fn bench(c: &mut Criterion) {
    let model = servo_quadruped();
    // the standing joint angles (after the trunk's 7 coordinates)
    let u: Vec<f64> = model.initial_state.q.iter().skip(7).copied().collect();
    let mut g = c.benchmark_group("simulator_step_quadruped");
    for stepper in ["drumwright", "anitescu-potra"] {
        let mut sim = Simulator::new(model.clone(), stepper, 1e-3).expect("simulator");
        // a figure outside criterion's sampling, printed for the notes
        let n = 2000;
        let start = Instant::now();
        for _ in 0..n {
            if sim.t() > 0.5 {
                sim.reset();
            }
            sim.step(&u).expect("step");
        }
        println!(
            "{stepper}: {:.1} µs per Simulator::step (18 DOF, 4 feet, mean of {n})",
            start.elapsed().as_secs_f64() / n as f64 * 1e6
        );
        g.bench_function(stepper, |b| {
            b.iter(|| {
                if sim.t() > 0.5 {
                    sim.reset();
                }
                sim.step(black_box(&u)).expect("step");
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
