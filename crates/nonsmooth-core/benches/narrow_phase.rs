//! The general narrow phase (parry contact manifolds) per pair: box–box (a cube resting on a
//! cube, 4 contacts), capsule–box (a capsule lying across a box, 2 contacts) and a 50-point
//! convex hull on a plane; the closed-form box–plane pair beside them for scale. Prints the
//! mean wall time of one pair query.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use nalgebra::{Isometry3, Translation3, Unit, UnitQuaternion, Vector3};
use nonsmooth_core::geometry::{pair_contacts, ConvexHull};
use nonsmooth_core::{Dimension, Shape};

fn at(x: f64, y: f64, z: f64) -> Isometry3<f64> {
    Isometry3::from_parts(Translation3::new(x, y, z), UnitQuaternion::identity())
}

/// 50 points on a sphere of radius 0.05 (a Fibonacci lattice).
fn round_hull() -> Shape {
    let n = 50;
    let golden = std::f64::consts::PI * (3.0 - 5f64.sqrt());
    let points = (0..n)
        .map(|k| {
            let z = 1.0 - 2.0 * (k as f64 + 0.5) / n as f64;
            let r = (1.0 - z * z).sqrt();
            let t = golden * k as f64;
            Vector3::new(r * t.cos(), r * t.sin(), z) * 0.05
        })
        .collect();
    Shape::Convex(ConvexHull::new(points).expect("hull"))
}

/// A named pair query: (name, A, pose of A, B, pose of B).
type Case<'a> = (
    &'a str,
    &'a Shape,
    Isometry3<f64>,
    &'a Shape,
    Isometry3<f64>,
);

fn bench(c: &mut Criterion) {
    let cube = Shape::Box {
        half_extents: Vector3::new(0.05, 0.05, 0.05),
    };
    let capsule = Shape::Capsule {
        radius: 0.02,
        half_length: 0.1,
    };
    let plane = Shape::Plane {
        normal: Unit::new_normalize(Vector3::z()),
    };
    let hull = round_hull();
    let lying = Isometry3::from_parts(
        Translation3::new(0.0, 0.0, 0.07),
        UnitQuaternion::from_euler_angles(0.0, std::f64::consts::FRAC_PI_2, 0.0),
    );
    let cases: [Case; 4] = [
        (
            "box_box",
            &cube,
            at(0.0, 0.0, 0.1),
            &cube,
            at(0.0, 0.0, 0.0),
        ),
        ("capsule_box", &capsule, lying, &cube, at(0.0, 0.0, 0.0)),
        (
            "convex50_plane",
            &hull,
            at(0.0, 0.0, 0.0485),
            &plane,
            at(0.0, 0.0, 0.0),
        ),
        (
            "box_plane_closed_form",
            &cube,
            at(0.0, 0.0, 0.05),
            &plane,
            at(0.0, 0.0, 0.0),
        ),
    ];
    let mut g = c.benchmark_group("narrow_phase");
    for (name, a, pa, b, pb) in cases {
        let n = pair_contacts(Dimension::Spatial, a, &pa, b, &pb, 1e-3).map_or(0, |found| {
            found.iter().filter(|(_, g)| g.gap <= 1e-3).count()
        });
        let reps = 20_000;
        let start = std::time::Instant::now();
        for _ in 0..reps {
            black_box(pair_contacts(Dimension::Spatial, a, &pa, b, &pb, 1e-3));
        }
        println!(
            "narrow phase {name}: {:.2} µs per pair ({n} contacts)",
            start.elapsed().as_secs_f64() / reps as f64 * 1e6
        );
        g.bench_function(name, |bch| {
            bch.iter(|| pair_contacts(Dimension::Spatial, black_box(a), &pa, b, &pb, 1e-3))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
