//! Seconds per step of the `drumwright` stepper (seed 003 §6.5, Fig 10): a settled stack of
//! N = 10, 50, 100 Hertz spheres (examples/drumwright_stack.toml parameters, h = 10 ms).
//! The state is first settled for 100 steps (outside the timing); the printed figure is
//! the mean wall time of one step.

use std::time::{Duration, Instant};

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion};
use nonsmooth_core::{Model, State};
use nonsmooth_sim::{DrumwrightStepper, Stepper};

const STACK: &str = include_str!("../../../examples/drumwright_stack.toml");

fn stack(n: usize) -> Model {
    let head = &STACK[..STACK.find("[[bodies]]").unwrap_or(STACK.len())];
    let mut src = head.to_string();
    for i in 0..n {
        src.push_str(&format!(
            "[[bodies]]\nname = \"s{i}\"\nmass = 0.1\ninertia = {{ solid_sphere = 0.05 }}\n\n\
             [[colliders]]\nname = \"c{i}\"\nbody = \"s{i}\"\nshape = {{ sphere = 0.05 }}\n\
             material = \"steel\"\n\n"
        ));
    }
    src.push_str("[initial]\n");
    for i in 0..n {
        let z = 0.052 + i as f64 * 0.102;
        src.push_str(&format!("q.s{i} = [0.0, 0.0, {z}, 1.0, 0.0, 0.0, 0.0]\n"));
    }
    Model::from_toml_str(&src, None).expect("generated stack model")
}

fn settled(model: &Model, st: &mut DrumwrightStepper) -> State {
    let mut s = model.initial_state.clone();
    for _ in 0..100 {
        s = st.step(model, &s, 0.01).expect("settling step");
    }
    s
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("drumwright_stack_step");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(3));
    for n in [10usize, 50, 100] {
        let model = stack(n);
        let mut st = DrumwrightStepper::default();
        let s = settled(&model, &mut st);
        let start = Instant::now();
        let reps = 20;
        for _ in 0..reps {
            black_box(st.step(&model, &s, 0.01).expect("step"));
        }
        println!(
            "stack N = {n}: {:.3e} s per step",
            start.elapsed().as_secs_f64() / reps as f64
        );
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| black_box(st.step(&model, &s, 0.01).expect("step")))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
