//! Seconds per step of the `drumwright` stepper (Drumwright 2019): a settled stack of N = 10, 50,
//! 100 Hertz spheres (§6.5, Fig 10; examples/drumwright_stack.toml parameters, h = 10 ms)
//! and the Winkler foundation with 100 and 900 elements under the 50 N circling load
//! (§5.5, Table 1; examples/drumwright_foundation.toml, E = 1e7, h = 10 ms), and the box
//! sliding down the incline (§6.4, Fig 9; examples/drumwright_incline.toml, the paper's 1 s
//! run timed whole; goal ≤ 0.1 ms per step: 0.092 ms on this 2-core machine with the
//! block path's sliding friction solve, 0.141 ms when every sliding friction stage went to
//! Clarabel). Each scene is
//! first run for a while (outside the timing); the printed figure is the mean wall time of
//! one step. Stack: the default options (block fast path: `BlockSnapshot`, sparse Delassus
//! matrix, pivoting / sticking solvers with Clarabel fallback) and "clarabel" (fast path
//! off: dense snapshot and Clarabel stages, the form before the block fast path).
//! Foundation: the dense Delassus form ("dense") and the default options (lifted sparse
//! programs for steps with ≥ 48 rows).
//!
//! Stack figures of the fast path with its step workspaces (in-place `BlockSnapshot::update`,
//! reused mass-block inverses and sparse program storage), measured with callgrind
//! (instructions per step, independent of machine load):
//! 0.20 M at N = 10, 0.94 M at 50, 1.85 M at 100 (before the workspaces 0.44 M, 2.19 M,
//! 4.35 M; Clarabel path 66 M at N = 100). Wall time: see docs/simulation.md (the 2-core
//! machine is shared, so wall-clock figures carry the load they were taken under).

use nonsmooth_sim::scenes;
use scenes::sphere_stack;

use std::time::{Duration, Instant};

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion};
use nalgebra::Vector3;
use nonsmooth_core::{Model, Shape, State};
use nonsmooth_sim::external_load::PointLoad;
use nonsmooth_sim::{Actuation, DrumwrightOptions, DrumwrightStepper, Stepper};

const FOUNDATION: &str = include_str!("../../../examples/drumwright_foundation.toml");
const INCLINE: &str = include_str!("../../../examples/drumwright_incline.toml");

fn stack(n: usize) -> Model {
    sphere_stack(n).expect("generated stack model")
}

/// The foundation with an n × n grid, E = 1e7 (k_i = E / n²).
fn foundation(n: usize) -> Model {
    let mut m = Model::from_toml_str(FOUNDATION, None).expect("foundation model");
    for mat in &mut m.materials {
        if mat.name == "soil" {
            mat.stiffness = Some(1e7 / (n * n) as f64);
        }
    }
    let mut points = Vec::new();
    for i in 0..n {
        for j in 0..n {
            let x = -0.5 + (i as f64 + 0.5) / n as f64;
            let y = -0.5 + (j as f64 + 0.5) / n as f64;
            points.push(Vector3::new(x, y, -0.5));
        }
    }
    for c in &mut m.colliders {
        if c.name == "elements" {
            c.shape = Shape::Points {
                points: points.clone(),
            };
        }
    }
    m
}

fn options(dense: bool) -> DrumwrightOptions {
    DrumwrightOptions {
        sparse_min_rows: if dense { usize::MAX } else { 48 },
        ..Default::default()
    }
}

fn clarabel_options() -> DrumwrightOptions {
    DrumwrightOptions {
        fast_solver: false,
        ..Default::default()
    }
}

fn report(label: &str, reps: usize, mut f: impl FnMut()) {
    let start = Instant::now();
    for _ in 0..reps {
        f();
    }
    println!(
        "{label}: {:.3e} s per step",
        start.elapsed().as_secs_f64() / reps as f64
    );
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("drumwright_step");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(3));
    for n in [10usize, 50, 100] {
        let model = stack(n);
        for fast in [false, true] {
            let opts = if fast {
                DrumwrightOptions::default()
            } else {
                clarabel_options()
            };
            let mut st = DrumwrightStepper::new(opts);
            let mut s = model.initial_state.clone();
            for _ in 0..100 {
                s = st.step(&model, &s, 0.01).expect("settling step");
            }
            let form = if fast { "default" } else { "clarabel" };
            let reps = if fast { 200 } else { 10 };
            report(&format!("stack N = {n} ({form})"), reps, || {
                black_box(st.step(&model, &s, 0.01).expect("step"));
            });
            if fast {
                println!(
                    "stack N = {n} (default): {} fast stage solves, {} Clarabel fallbacks in the last step",
                    st.last.fast_solves, st.last.fallbacks
                );
                group.bench_with_input(BenchmarkId::new("stack", n), &n, |b, _| {
                    b.iter(|| black_box(st.step(&model, &s, 0.01).expect("step")))
                });
            }
        }
    }
    // the incline box (μ = 0.25 < tan 15°: all four feet slide): the paper's 1 s run, 100
    // steps from rest, timed whole; goal ≤ 100 µs per step (the fixed cost of a step)
    let model = Model::from_toml_str(INCLINE, None).expect("incline model");
    let mut st = DrumwrightStepper::new(DrumwrightOptions::default());
    // one paper run; returns the fast stage solves and Clarabel fallbacks it took
    let run = |st: &mut DrumwrightStepper| {
        let mut s = model.initial_state.clone();
        let (mut fast, mut fallbacks) = (0, 0);
        for _ in 0..100 {
            s = st.step(&model, &s, 0.01).expect("incline step");
            fast += st.last.fast_solves;
            fallbacks += st.last.fallbacks;
        }
        (fast, fallbacks)
    };
    let (mut fast, mut fallbacks) = (0, 0);
    let start = Instant::now();
    let reps = 20;
    for _ in 0..reps {
        let (f, b) = run(&mut st);
        fast += f;
        fallbacks += b;
    }
    println!(
        "incline box, 1 s (default): {:.3e} s per step ({fast} fast stage solves, {fallbacks} Clarabel fallbacks in {} steps)",
        start.elapsed().as_secs_f64() / (100 * reps) as f64,
        100 * reps
    );
    group.bench_function("incline_1s_100_steps", |b| {
        b.iter(|| black_box(run(&mut st)))
    });
    let load = PointLoad {
        body: 0,
        force: Vector3::new(0.0, 0.0, -50.0),
        centre: Vector3::new(0.0, 0.0, 0.5),
        radius: 0.5,
        omega: 10.0,
    };
    for n in [10usize, 30] {
        let model = foundation(n);
        for dense in [true, false] {
            let mut st = DrumwrightStepper::new(options(dense));
            // the load's generalized force at the step's start, an explicit force of the
            // step's actuation
            let loaded = |s: &State| {
                Actuation::from_generalized_force(
                    load.generalized(&model, &s.q, s.t).expect("load"),
                )
            };
            let mut s: State = model.initial_state.clone();
            for _ in 0..20 {
                s = st
                    .step_actuated(&model, &s, &loaded(&s), 0.01)
                    .expect("settling step");
            }
            let input = loaded(&s);
            let form = if dense { "dense" } else { "default" };
            let reps = if dense && n == 30 { 2 } else { 10 };
            report(
                &format!("foundation {} elements ({form})", n * n),
                reps,
                || {
                    black_box(st.step_actuated(&model, &s, &input, 0.01).expect("step"));
                },
            );
            if !dense {
                group.bench_with_input(BenchmarkId::new("foundation", n * n), &n, |b, _| {
                    b.iter(|| black_box(st.step_actuated(&model, &s, &input, 0.01).expect("step")))
                });
            }
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
