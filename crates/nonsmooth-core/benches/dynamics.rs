//! CRBA + RNEA on an 18-DOF floating-base quadruped (floating trunk + 4 legs × 3 revolute
//! joints, masses and lengths of a ~20 kg robot). Target: under 5 µs per M(q) + h(q, v).

use std::hint::black_box;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion};
use nalgebra::{DMatrix, DVector, Isometry3, Matrix3, Unit, Vector3};
use nonsmooth_core::dynamics::{
    bias_force, bias_force_into, mass_matrix, mass_matrix_and_bias_into, mass_matrix_into,
    neutral_configuration, DynamicsWorkspace,
};
use nonsmooth_core::{Body, Dimension, Joint, JointKind, Model};

fn box_body(name: &str, mass: f64, com: Vector3<f64>, dims: Vector3<f64>) -> Body {
    let (x, y, z) = (dims.x * dims.x, dims.y * dims.y, dims.z * dims.z);
    Body {
        name: name.into(),
        mass,
        com,
        inertia: Matrix3::from_diagonal(&Vector3::new(y + z, x + z, x + y)) * (mass / 12.0),
    }
}

fn revolute(
    name: &str,
    parent: usize,
    child: usize,
    at: Vector3<f64>,
    axis: Vector3<f64>,
) -> Joint {
    Joint {
        name: name.into(),
        kind: JointKind::Revolute,
        parent: Some(parent),
        child,
        placement: Isometry3::translation(at.x, at.y, at.z),
        axis: Unit::new_normalize(axis),
        limit: None,
        damping: 0.0,
        spring: None,
        armature: 0.0,
        q_index: 0,
        v_index: 0,
    }
}

/// The 18-DOF quadruped: 12 kg trunk (0.5 × 0.3 × 0.1 m), hip abduction/adduction about x
/// (0.7 kg hip link), hip flexion about y (1.0 kg, 0.2 m thigh), knee about y (0.2 kg,
/// 0.2 m shank).
fn quadruped() -> Model {
    let mut bodies = vec![box_body(
        "trunk",
        12.0,
        Vector3::new(0.01, 0.0, 0.0),
        Vector3::new(0.5, 0.3, 0.1),
    )];
    let mut joints = vec![Joint {
        name: "base".into(),
        kind: JointKind::Floating,
        parent: None,
        child: 0,
        placement: Isometry3::identity(),
        axis: Vector3::z_axis(),
        limit: None,
        damping: 0.0,
        spring: None,
        armature: 0.0,
        q_index: 0,
        v_index: 0,
    }];
    for (leg, (sx, sy)) in [
        ("fl", (1.0, 1.0)),
        ("fr", (1.0, -1.0)),
        ("hl", (-1.0, 1.0)),
        ("hr", (-1.0, -1.0)),
    ] {
        let hip = bodies.len();
        bodies.push(box_body(
            &format!("{leg}_hip"),
            0.7,
            Vector3::new(0.0, sy * 0.03, 0.0),
            Vector3::new(0.08, 0.06, 0.06),
        ));
        joints.push(revolute(
            &format!("{leg}_abad"),
            0,
            hip,
            Vector3::new(sx * 0.2, sy * 0.1, 0.0),
            Vector3::x(),
        ));
        let thigh = bodies.len();
        bodies.push(box_body(
            &format!("{leg}_thigh"),
            1.0,
            Vector3::new(0.0, 0.0, -0.1),
            Vector3::new(0.04, 0.04, 0.2),
        ));
        joints.push(revolute(
            &format!("{leg}_hip"),
            hip,
            thigh,
            Vector3::new(0.0, sy * 0.08, 0.0),
            Vector3::y(),
        ));
        let shank = bodies.len();
        bodies.push(box_body(
            &format!("{leg}_shank"),
            0.2,
            Vector3::new(0.0, 0.0, -0.1),
            Vector3::new(0.03, 0.03, 0.2),
        ));
        joints.push(revolute(
            &format!("{leg}_knee"),
            thigh,
            shank,
            Vector3::new(0.0, 0.0, -0.2),
            Vector3::y(),
        ));
    }
    let mut model = Model {
        name: "quadruped".into(),
        dimension: Dimension::Spatial,
        gravity: Vector3::new(0.0, 0.0, -9.81),
        bodies,
        joints,
        materials: vec![],
        ..Model::new("", Dimension::Spatial)
    };
    model.assign_coordinate_offsets();
    model.initial_state.q = neutral_configuration(&model);
    model.initial_state.v = DVector::zeros(model.nv());
    model
}

fn state(model: &Model) -> (DVector<f64>, DVector<f64>) {
    let mut q = neutral_configuration(model);
    q[2] = 0.35;
    let (s, c) = 0.1_f64.sin_cos();
    q[3] = c;
    q[6] = s;
    for k in 7..model.nq() {
        q[k] = 0.3 * (k as f64).sin();
    }
    let v = DVector::from_fn(model.nv(), |i, _| 0.5 * (i as f64 + 1.0).cos());
    (q, v)
}

/// Median of per-call times over many short batches, printed as the headline figure.
fn print_median(model: &Model, q: &DVector<f64>, v: &DVector<f64>) {
    let mut ws = DynamicsWorkspace::new(model);
    let mut m = DMatrix::zeros(model.nv(), model.nv());
    let mut h = DVector::zeros(model.nv());
    let batch = 200;
    let mut samples: Vec<f64> = (0..500)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..batch {
                mass_matrix_and_bias_into(
                    model,
                    black_box(q),
                    black_box(v),
                    &mut ws,
                    &mut m,
                    &mut h,
                );
                black_box((&m, &h));
            }
            start.elapsed().as_secs_f64() / batch as f64
        })
        .collect();
    samples.sort_by(|a, b| a.total_cmp(b));
    println!(
        "quadruped (nv = {}): CRBA + RNEA median {:.3} µs per call (mass_matrix_and_bias_into)",
        model.nv(),
        samples[samples.len() / 2] * 1e6
    );
}

fn bench(c: &mut Criterion) {
    let model = quadruped();
    let (q, v) = state(&model);
    print_median(&model, &q, &v);
    let mut ws = DynamicsWorkspace::new(&model);
    let mut m = DMatrix::zeros(model.nv(), model.nv());
    let mut h = DVector::zeros(model.nv());
    let mut group = c.benchmark_group("quadruped18");
    group.sample_size(20);
    group.measurement_time(std::time::Duration::from_secs(2));
    group.warm_up_time(std::time::Duration::from_millis(500));
    group.bench_function("crba+rnea shared workspace", |b| {
        b.iter(|| {
            mass_matrix_and_bias_into(
                &model,
                black_box(&q),
                black_box(&v),
                &mut ws,
                &mut m,
                &mut h,
            )
        })
    });
    group.bench_function("crba+rnea separate _into calls", |b| {
        b.iter(|| {
            mass_matrix_into(&model, black_box(&q), &mut ws, &mut m);
            bias_force_into(&model, black_box(&q), black_box(&v), &mut ws, &mut h);
        })
    });
    group.bench_function("crba+rnea allocating functions", |b| {
        b.iter(|| {
            (
                mass_matrix(&model, black_box(&q)),
                bias_force(&model, black_box(&q), black_box(&v)),
            )
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
