//! Box piles (0.1 m cubes, μ = 0.5) on the ground: two layers of n × n, the upper layer
//! shifted by a quarter box so that each upper box rests on up to four lower ones (box–box
//! contact manifolds from the parry narrow phase, 4 contacts per pair; box–plane closed forms
//! below). Prints the mean wall time of one step at h = 10 ms under `drumwright`,
//! `anitescu-potra` and `qp-max-dissipation` (3 steps after 2 settling steps) for the pile of
//! `NONSMOOTH_PILE_BOXES` boxes (default 18: n = 3; the target pile of 200 is n = 10, which takes
//! minutes per `drumwright` step today, see docs/simulation.md), and criterion's figure for
//! the 18-box pile under `qp-max-dissipation`.

use criterion::{criterion_group, criterion_main, Criterion};
use nonsmooth_core::Model;
use nonsmooth_sim::{stepper_by_name, Simulator};
use std::time::Instant;

fn pile(n: usize) -> Model {
    let mut src = String::from(
        r#"[model]
name = "pile"
dimension = "spatial"
gravity = [0.0, 0.0, -9.81]
contact_margin = 1e-3

[[materials]]
name = "wood"
friction = 0.5

[[colliders]]
name = "ground"
shape = { plane = [0.0, 0.0, 1.0] }
material = "wood"
"#,
    );
    let mut initial = String::from("\n[initial]\n");
    let mut k = 0;
    for layer in 0..2 {
        let shift = 0.025 * layer as f64;
        for i in 0..n {
            for j in 0..n {
                let (x, y, z) = (
                    0.101 * i as f64 + shift,
                    0.101 * j as f64 + shift,
                    0.05 + 0.1 * layer as f64,
                );
                src += &format!(
                    "\n[[bodies]]\nname = \"b{k}\"\nmass = 1.0\ninertia = {{ solid_box = [0.05, 0.05, 0.05] }}\n\n[[colliders]]\nname = \"b{k}_shape\"\nbody = \"b{k}\"\nshape = {{ box = [0.05, 0.05, 0.05] }}\nmaterial = \"wood\"\n"
                );
                initial += &format!("q.b{k} = [{x:?}, {y:?}, {z:?}, 1.0, 0.0, 0.0, 0.0]\n");
                k += 1;
            }
        }
    }
    Model::from_toml_str(&(src + &initial), Some("pile")).expect("model")
}

fn bench(c: &mut Criterion) {
    let boxes: usize = std::env::var("NONSMOOTH_PILE_BOXES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(18);
    let n = ((boxes as f64 / 2.0).sqrt().round() as usize).max(1);
    let model = pile(n);
    for stepper in ["drumwright", "anitescu-potra", "qp-max-dissipation"] {
        // Through the Simulator, as a user steps: a failed solve is recovered by halving.
        let mut sim = Simulator::new(model.clone(), stepper, 0.01).expect("simulator");
        for _ in 0..2 {
            sim.step(&[]).expect("step");
        }
        let steps = 3;
        let start = Instant::now();
        for _ in 0..steps {
            sim.step(&[]).expect("step");
        }
        println!(
            "{}-box pile, {stepper}: {:.1} ms per step ({:?})",
            2 * n * n,
            start.elapsed().as_secs_f64() / steps as f64 * 1e3,
            sim.counters().recoveries
        );
    }
    let small = pile(3);
    let mut st = stepper_by_name("qp-max-dissipation").expect("stepper");
    let s = small.initial_state.clone();
    let mut g = c.benchmark_group("pile18_step");
    g.sample_size(10);
    g.bench_function("qp-max-dissipation", |b| {
        b.iter(|| st.step(&small, &s, 0.01).expect("step"))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
