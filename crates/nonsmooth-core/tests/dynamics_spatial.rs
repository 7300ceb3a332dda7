//! Spatial algebra: structured Plücker transforms, cross products and rigid-body inertias
//! against their 6×6 matrix forms (Featherstone RBDA ch. 2).

use nalgebra::{Isometry3, Matrix3, Translation3, UnitQuaternion, Vector3, Vector6};
use nonsmooth_core::dynamics::spatial::{
    crf, crm, cross_force, cross_motion, SpatialInertia, SpatialTransform,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn rv6(rng: &mut ChaCha8Rng) -> Vector6<f64> {
    Vector6::from_fn(|_, _| rng.gen_range(-1.0..1.0))
}

fn rv3(rng: &mut ChaCha8Rng) -> Vector3<f64> {
    Vector3::from_fn(|_, _| rng.gen_range(-1.0..1.0))
}

fn random_transform(rng: &mut ChaCha8Rng) -> (Isometry3<f64>, SpatialTransform<f64>) {
    let iso = Isometry3::from_parts(
        Translation3::from(rv3(rng)),
        UnitQuaternion::from_scaled_axis(rv3(rng) * 2.0),
    );
    (iso, SpatialTransform::from_isometry(&iso))
}

#[test]
fn transforms_match_matrix_forms() {
    let mut rng = ChaCha8Rng::seed_from_u64(51);
    let mut worst: f64 = 0.0;
    for _ in 0..50 {
        let (iso_ab, x_ba) = random_transform(&mut rng);
        let (iso_bc, x_cb) = random_transform(&mut rng);
        let xm = x_ba.to_matrix();
        let (m, f) = (rv6(&mut rng), rv6(&mut rng));
        worst = worst.max((x_ba.apply_motion(&m) - xm * m).amax());
        // Force transform X* = X⁻ᵀ (RBDA eq. 2.25).
        let xf = xm.try_inverse().unwrap().transpose();
        worst = worst.max((x_ba.apply_force(&f) - xf * f).amax());
        worst = worst.max((x_ba.inv_apply_motion(&x_ba.apply_motion(&m)) - m).amax());
        worst = worst.max((x_ba.inv_apply_force(&f) - xm.transpose() * f).amax());
        // Composition agrees with the pose product and with matrix multiplication.
        let x_ca = x_cb.compose(&x_ba);
        worst = worst.max((x_ca.to_matrix() - x_cb.to_matrix() * xm).amax());
        let direct = SpatialTransform::from_isometry(&(iso_ab * iso_bc));
        worst = worst.max((direct.to_matrix() - x_ca.to_matrix()).amax());
        // Duality: (X m)·(X* f) = m·f.
        worst = worst.max((x_ba.apply_motion(&m).dot(&x_ba.apply_force(&f)) - m.dot(&f)).abs());
    }
    assert!(worst <= 1e-13, "transform mismatch {worst}");
}

#[test]
fn cross_products_match_matrices() {
    let mut rng = ChaCha8Rng::seed_from_u64(52);
    let mut worst: f64 = 0.0;
    for _ in 0..50 {
        let (v, m, f) = (rv6(&mut rng), rv6(&mut rng), rv6(&mut rng));
        worst = worst.max((cross_motion(&v, &m) - crm(&v) * m).amax());
        worst = worst.max((cross_force(&v, &f) - crf(&v) * f).amax());
        worst = worst.max((crf(&v) + crm(&v).transpose()).amax());
        // v × v = 0 and (v × m)·f + m·(v ×* f) = 0.
        worst = worst.max(cross_motion(&v, &v).amax());
        worst = worst.max((cross_motion(&v, &m).dot(&f) + m.dot(&cross_force(&v, &f))).abs());
    }
    assert!(worst <= 1e-14, "cross product mismatch {worst}");
}

#[test]
fn inertia_construction_and_transformation() {
    let mut rng = ChaCha8Rng::seed_from_u64(53);
    let mut worst: f64 = 0.0;
    for _ in 0..50 {
        let mass = rng.gen_range(0.5..2.0);
        let com = rv3(&mut rng);
        let a = Matrix3::from_fn(|_, _| rng.gen_range(-1.0..1.0));
        let ic = a * a.transpose() + Matrix3::identity() * 0.1;
        let inertia = SpatialInertia::<f64>::from_com(mass, &com, &ic);
        let im = inertia.to_matrix();
        let v = rv6(&mut rng);
        worst = worst.max((inertia.mul_motion(&v) - im * v).amax());
        // Kinetic energy: ½ vᵀ I v = ½ m |v_c|² + ½ ωᵀ Ī_c ω.
        let w = Vector3::new(v[0], v[1], v[2]);
        let vo = Vector3::new(v[3], v[4], v[5]);
        let vc = vo + w.cross(&com);
        let ke = 0.5 * mass * vc.norm_squared() + 0.5 * w.dot(&(ic * w));
        worst = worst.max((0.5 * v.dot(&(im * v)) - ke).abs());
        // Xᵀ I X in structured form (RBDA Table 2.8) vs matrices.
        let (_, x) = random_transform(&mut rng);
        let moved = inertia.transform_to_parent(&x).to_matrix();
        let expected = x.to_matrix().transpose() * im * x.to_matrix();
        worst = worst.max((moved - expected).amax());
    }
    assert!(worst <= 1e-12, "inertia mismatch {worst}");
}
