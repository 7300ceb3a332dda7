//! Closed-form contact primitives, tangent bases and the pair dispatcher against hand
//! computations.

use nalgebra::{Isometry3, Translation3, Unit, UnitQuaternion, Vector3};
use nonsmooth_core::geometry::{
    box_plane, collider_world_poses, detect_contacts, point_heightmap, sphere_box,
    sphere_heightmap, sphere_plane, sphere_sphere, tangent_basis,
};
use nonsmooth_core::{Collider, ContactMaterial, Dimension, HeightMap, Model, Shape};
use num_dual::Dual64;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

fn assert_vec(a: &Vector3<f64>, b: &Vector3<f64>, tol: f64) {
    assert!((a - b).norm() <= tol, "{a:?} != {b:?}");
}

fn world_only_model(dimension: Dimension) -> Model {
    Model {
        name: "test".into(),
        dimension,
        gravity: Vector3::zeros(),
        bodies: vec![],
        joints: vec![],
        materials: vec![ContactMaterial::default_material()],
        ..Model::new("", Dimension::Spatial)
    }
}

fn collider(name: &str, body: Option<usize>, shape: Shape) -> Collider {
    Collider {
        name: name.into(),
        body,
        pose: Isometry3::identity(),
        shape,
        material: 0,
        filter: Default::default(),
    }
}

fn ground() -> Shape {
    Shape::Plane {
        normal: Vector3::z_axis(),
    }
}

#[test]
fn sphere_resting_on_plane_has_zero_gap_and_vertical_normal() {
    let c = Vector3::new(0.3, -0.2, 0.5);
    let g = sphere_plane(&c, 0.5, &Vector3::zeros(), &Vector3::z());
    assert!(close(g.gap, 0.0, 1e-15));
    assert_vec(&g.normal, &Vector3::z(), 1e-15);
    assert_vec(&g.point_a, &Vector3::new(0.3, -0.2, 0.0), 1e-15);
    assert_vec(&g.point_b, &Vector3::new(0.3, -0.2, 0.0), 1e-15);

    // A tilted plane through (0, 0, 1) with normal (1, 0, 1)/√2: φ = nᵀ(c − o) − r.
    let n = Vector3::new(1.0, 0.0, 1.0).normalize();
    let c = Vector3::new(2.0, 5.0, 3.0);
    let g = sphere_plane(&c, 0.25, &Vector3::new(0.0, 0.0, 1.0), &n);
    assert!(close(g.gap, (2.0 + 2.0) / 2f64.sqrt() - 0.25, 1e-14));
    assert_vec(&(g.point_a - g.point_b), &(n * g.gap), 1e-14);
}

#[test]
fn sphere_sphere_gap_is_distance_minus_radii() {
    let ca = Vector3::new(1.0, 2.0, 3.0);
    let cb = Vector3::new(-0.5, 0.0, 1.0);
    let g = sphere_sphere(Dimension::Spatial, &ca, 0.5, &cb, 1.0);
    let d = (ca - cb).norm();
    assert!(close(g.gap, d - 1.5, 1e-14));
    assert_vec(&g.normal, &((ca - cb) / d), 1e-15);
    assert_vec(&g.point_a, &(ca - g.normal * 0.5), 1e-14);
    assert_vec(&g.point_b, &(cb + g.normal * 1.0), 1e-14);
    assert_vec(&(g.point_a - g.point_b), &(g.normal * g.gap), 1e-14);
    // Overlap gives a negative gap.
    let g = sphere_sphere(
        Dimension::Spatial,
        &Vector3::x(),
        0.7,
        &Vector3::zeros(),
        0.6,
    );
    assert!(close(g.gap, -0.3, 1e-15));
}

#[test]
fn tilted_box_corner_gaps_match_hand_computation() {
    let (theta, zc) = (0.3f64, 1.0);
    let h = Vector3::new(0.5, 0.3, 0.2);
    let pose = Isometry3::from_parts(
        Translation3::new(0.1, 0.2, zc),
        UnitQuaternion::from_axis_angle(&Vector3::y_axis(), theta),
    );
    let contacts = box_plane(
        Dimension::Spatial,
        &pose,
        &h,
        &Vector3::zeros(),
        &Vector3::z(),
    );
    assert_eq!(contacts.len(), 8);
    for (k, g) in &contacts {
        let sx = if k & 1 != 0 { 1.0 } else { -1.0 };
        let sz = if k & 4 != 0 { 1.0 } else { -1.0 };
        // R_y(θ) (x, y, z) has z-component −x sin θ + z cos θ.
        let expected = zc - sx * h.x * theta.sin() + sz * h.z * theta.cos();
        assert!(
            close(g.gap, expected, 1e-14),
            "corner {k}: {} vs {expected}",
            g.gap
        );
        assert_vec(&g.normal, &Vector3::z(), 0.0);
        assert!(close(g.point_b.z, 0.0, 1e-14));
    }
}

#[test]
fn dispatcher_keeps_only_corners_within_margin() {
    let theta = 0.3f64;
    let h = Vector3::new(0.5, 0.3, 0.2);
    let zc = h.x * theta.sin() + h.z * theta.cos() - 0.01;
    let mut model = world_only_model(Dimension::Spatial);
    model.colliders.push(collider("ground", None, ground()));
    // A box attached to the world in the model is skipped (world–world); attach it to a
    // "body" pose instead through collider_world_poses.
    model.bodies.push(nonsmooth_core::Body {
        name: "box".into(),
        mass: 1.0,
        com: Vector3::zeros(),
        inertia: nalgebra::Matrix3::identity(),
    });
    model
        .colliders
        .push(collider("box", Some(0), Shape::Box { half_extents: h }));
    let body_pose = Isometry3::from_parts(
        Translation3::new(0.0, 0.0, zc),
        UnitQuaternion::from_axis_angle(&Vector3::y_axis(), theta),
    );
    let poses = collider_world_poses(&model, &[body_pose]).unwrap();
    let found = detect_contacts(&model, &poses, 0.0).unwrap();
    let features: Vec<usize> = found.iter().map(|c| c.feature).collect();
    assert_eq!(features, vec![1, 3]);
    for c in &found {
        assert_eq!((c.collider_a, c.collider_b), (1, 0));
        assert!(close(c.geometry.gap, -0.01, 1e-14));
    }
    // Excluding the pair removes the contacts; a larger margin admits more corners.
    model.excluded_pairs.push((0, 1));
    assert!(detect_contacts(&model, &poses, 0.0).unwrap().is_empty());
    model.excluded_pairs.clear();
    assert_eq!(detect_contacts(&model, &poses, 10.0).unwrap().len(), 8);
    // Wrong number of poses is an error.
    assert!(detect_contacts(&model, &poses[..1], 0.0).is_err());
    assert!(collider_world_poses::<f64>(&model, &[]).is_err());
}

fn slope_map(a: f64, b: f64, c: f64) -> HeightMap {
    let (x0, y0, dx, dy) = (-1.0, -2.0, 0.5, 0.25);
    let heights = (0..12)
        .map(|iy| {
            (0..9)
                .map(|ix| a * (x0 + ix as f64 * dx) + b * (y0 + iy as f64 * dy) + c)
                .collect()
        })
        .collect();
    HeightMap {
        x0,
        y0,
        dx,
        dy,
        heights,
    }
}

#[test]
fn heightmap_on_a_slope_matches_the_analytic_plane() {
    let (a, b, c) = (0.2, -0.1, 0.05);
    let map = slope_map(a, b, c);
    let map_pose = Isometry3::translation(1.0, 2.0, 0.5);
    let norm = (1.0 + a * a + b * b).sqrt();
    let n = Vector3::new(-a, -b, 1.0) / norm;
    let p = Vector3::new(1.7, 2.3, 2.0);
    let local = p - Vector3::new(1.0, 2.0, 0.5);
    let dist = (local.z - a * local.x - b * local.y - c) / norm;
    let g = point_heightmap(Dimension::Spatial, &p, &map, &map_pose).unwrap();
    assert!(close(g.gap, dist, 1e-13), "{} vs {dist}", g.gap);
    assert_vec(&g.normal, &n, 1e-14);
    // The witness on the map lies on the plane.
    let wb = g.point_b - Vector3::new(1.0, 2.0, 0.5);
    assert!(close(wb.z, a * wb.x + b * wb.y + c, 1e-13));
    // A sphere of radius 0.3 at p.
    let s = sphere_heightmap(Dimension::Spatial, &p, 0.3, &map, &map_pose).unwrap();
    assert!(close(s.gap, dist - 0.3, 1e-13));
    // Outside the grid: no contact.
    assert!(point_heightmap(
        Dimension::Spatial,
        &Vector3::new(9.0, 2.0, 0.0),
        &map,
        &map_pose
    )
    .is_none());

    // Exact derivative with dual numbers: ∂φ/∂x = −a n_z along the slope.
    let pd = Vector3::new(Dual64::new(1.7, 1.0), Dual64::from(2.3), Dual64::from(2.0));
    let pose_d = Isometry3::translation(Dual64::from(1.0), Dual64::from(2.0), Dual64::from(0.5));
    let gd = point_heightmap(Dimension::Spatial, &pd, &map, &pose_d).unwrap();
    assert!(close(gd.gap.re, dist, 1e-13));
    assert!(close(gd.gap.eps, -a / norm, 1e-13));
}

#[test]
fn planar_heightmap_profile_uses_first_row() {
    let map = HeightMap {
        x0: 0.0,
        y0: 0.0,
        dx: 1.0,
        dy: 1.0,
        heights: vec![vec![0.0, 0.5, 0.5], vec![9.0, 9.0, 9.0]],
    };
    // Slope 0.5 on [0, 1]: y = 0.5 x.
    let p = Vector3::new(0.4, 1.0, 0.0);
    let g = point_heightmap(Dimension::Planar, &p, &map, &Isometry3::identity()).unwrap();
    let norm = (1.0f64 + 0.25).sqrt();
    assert!(close(g.gap, (1.0 - 0.2) / norm, 1e-14));
    assert_vec(&g.normal, &(Vector3::new(-0.5, 1.0, 0.0) / norm), 1e-14);
}

#[test]
fn planar_box_has_four_corners_and_one_tangent() {
    let theta = 0.4f64;
    let h = Vector3::new(0.4, 0.2, 9.0);
    let yc = 0.35;
    let pose = Isometry3::from_parts(
        Translation3::new(0.7, yc, 0.0),
        UnitQuaternion::from_axis_angle(&Vector3::z_axis(), theta),
    );
    let n = Vector3::y();
    let contacts = box_plane(Dimension::Planar, &pose, &h, &Vector3::zeros(), &n);
    assert_eq!(contacts.len(), 4);
    for (k, g) in &contacts {
        let sx = if k & 1 != 0 { 1.0 } else { -1.0 };
        let sy = if k & 2 != 0 { 1.0 } else { -1.0 };
        let expected = yc + sx * h.x * theta.sin() + sy * h.y * theta.cos();
        assert!(close(g.gap, expected, 1e-14));
        assert!(close(g.point_a.z, 0.0, 0.0));
        let t = tangent_basis(Dimension::Planar, &g.normal);
        assert_eq!(t.len(), 1);
        assert!(close(t[0].dot(&g.normal), 0.0, 1e-15));
        assert!(close(t[0].norm(), 1.0, 1e-15));
        assert_vec(&t[0], &Vector3::new(-1.0, 0.0, 0.0), 0.0);
    }
}

#[test]
fn spatial_tangent_basis_is_right_handed_and_orthonormal() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut normals: Vec<Vector3<f64>> = (0..200)
        .map(|_| {
            Vector3::new(
                rng.gen_range(-1.0..1.0),
                rng.gen_range(-1.0..1.0),
                rng.gen_range(-1.0..1.0),
            )
            .normalize()
        })
        .collect();
    normals.extend([
        Vector3::z(),
        -Vector3::z(),
        Vector3::x(),
        Vector3::new(1e-5, 0.0, -1.0).normalize(),
    ]);
    for n in &normals {
        let t = tangent_basis(Dimension::Spatial, n);
        assert_eq!(t.len(), 2);
        assert!(close(t[0].norm(), 1.0, 1e-12));
        assert!(close(t[1].norm(), 1.0, 1e-12));
        assert!(close(t[0].dot(&t[1]), 0.0, 1e-12));
        assert!(close(t[0].dot(n), 0.0, 1e-12));
        assert_vec(&t[0].cross(&t[1]), n, 1e-12);
    }
    let t = tangent_basis(Dimension::Spatial, &Vector3::z());
    assert_vec(&t[0], &Vector3::x(), 0.0);
    assert_vec(&t[1], &Vector3::y(), 0.0);
}

#[test]
fn dispatcher_orders_pairs_and_skips_unsupported_ones() {
    let mut model = world_only_model(Dimension::Spatial);
    for name in ["a", "b"] {
        model.bodies.push(nonsmooth_core::Body {
            name: name.into(),
            mass: 1.0,
            com: Vector3::zeros(),
            inertia: nalgebra::Matrix3::identity(),
        });
    }
    let hm = slope_map(0.0, 0.0, 0.0);
    model.colliders = vec![
        collider("ground", None, ground()),                       // 0
        collider("ball", Some(0), Shape::Sphere { radius: 0.5 }), // 1
        collider(
            "cube",
            Some(1),
            Shape::Box {
                half_extents: Vector3::new(0.1, 0.1, 0.1),
            },
        ), // 2
        collider(
            "feet",
            Some(1),
            Shape::Points {
                points: vec![Vector3::new(0.0, 0.0, -0.2), Vector3::new(0.0, 0.0, 5.0)],
            },
        ), // 3
        collider("terrain", None, Shape::HeightMap(hm)),          // 4
        collider(
            "wall",
            None,
            Shape::Plane {
                normal: Unit::new_normalize(Vector3::new(1.0, 0.0, 0.0)),
            },
        ), // 5
    ];
    let poses = vec![
        Isometry3::identity(),
        Isometry3::translation(0.0, 0.0, 0.4),
        Isometry3::translation(0.0, 0.0, 0.05),
        Isometry3::translation(0.0, 0.0, 0.15),
        Isometry3::identity(),
        Isometry3::translation(-10.0, 0.0, 0.0),
    ];
    let found = detect_contacts(&model, &poses, 0.0).unwrap();
    let pairs: Vec<(usize, usize, usize)> = found
        .iter()
        .map(|c| (c.collider_a, c.collider_b, c.feature))
        .collect();
    // In pair-loop order: ball–ground, cube–ground (4 lower corners), feet–ground (foot 0),
    // ball–cube (the box is B), feet–ball (foot 0 inside the ball; the sphere is B),
    // ball–terrain, cube–terrain (4), feet–terrain (foot 0). Cube–feet share a body,
    // ground–terrain / ground–wall are world–world, nothing touches the far wall.
    assert_eq!(
        pairs,
        vec![
            (1, 0, 0),
            (2, 0, 0),
            (2, 0, 1),
            (2, 0, 2),
            (2, 0, 3),
            (3, 0, 0),
            (1, 2, 0),
            (3, 1, 0),
            (1, 4, 0),
            (2, 4, 0),
            (2, 4, 1),
            (2, 4, 2),
            (2, 4, 3),
            (3, 4, 0),
        ]
    );
    let foot_ball = &found[7].geometry;
    // Foot at z = −0.05, ball centre at 0.4: distance 0.45 − 0.5.
    assert!(close(foot_ball.gap, -0.05, 1e-14));
    assert_vec(&foot_ball.normal, &-Vector3::z(), 1e-15);
    let ball_terrain = &found[8].geometry;
    assert!(close(ball_terrain.gap, -0.1, 1e-14));
    // Ball centre 0.35 above the cube's top face (z = 0.15): φ = 0.25 − 0.5.
    let ball_cube = &found[6].geometry;
    assert!(close(ball_cube.gap, -0.25, 1e-14));
    assert_vec(&ball_cube.normal, &Vector3::z(), 1e-15);
}

#[test]
fn sphere_box_outside_and_inside() {
    let h = Vector3::new(0.5, 0.3, 0.2);
    let pose = Isometry3::from_parts(
        Translation3::new(1.0, -1.0, 0.5),
        UnitQuaternion::from_axis_angle(&Vector3::z_axis(), 0.5),
    );
    // Outside, near the (+x, +y, +z) corner: distance to the corner minus r.
    let local_c = Vector3::new(0.8, 0.7, 0.6);
    let c = pose * nalgebra::Point3::from(local_c);
    let g = sphere_box(Dimension::Spatial, &c.coords, 0.1, &pose, &h);
    let d = local_c - h;
    assert!(close(g.gap, d.norm() - 0.1, 1e-14));
    assert_vec(&g.normal, &(pose.rotation * d.normalize()), 1e-14);
    assert_vec(
        &g.point_b,
        &(pose * nalgebra::Point3::from(h)).coords,
        1e-14,
    );
    assert_vec(&(g.point_a - g.point_b), &(g.normal * g.gap), 1e-14);
    // Inside, closest to the −y face: φ = −(h_y − |y|) − r.
    let local_c = Vector3::new(0.1, -0.25, 0.0);
    let c = pose * nalgebra::Point3::from(local_c);
    let g = sphere_box(Dimension::Spatial, &c.coords, 0.1, &pose, &h);
    assert!(close(g.gap, -0.05 - 0.1, 1e-14));
    assert_vec(&g.normal, &(pose.rotation * -Vector3::y()), 1e-14);
    assert_vec(&(g.point_a - g.point_b), &(g.normal * g.gap), 1e-14);
    // Planar: z is ignored; a disk right of the rectangle.
    let g = sphere_box(
        Dimension::Planar,
        &Vector3::new(0.9, 0.1, 5.0),
        0.25,
        &Isometry3::identity(),
        &h,
    );
    assert!(close(g.gap, 0.4 - 0.25, 1e-14));
    assert_vec(&g.normal, &Vector3::x(), 1e-15);
}
