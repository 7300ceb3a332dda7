//! CRBA mass matrix: symmetry, positive definiteness and agreement with the Jacobian
//! oracle `M = Σ_i m_i J_cᵀ J_c + J_ωᵀ R_i Ī_i R_iᵀ J_ω` on random trees.

use crate::support;

use nalgebra::{DMatrix, Point3};
use nonsmooth_core::dynamics::{
    frame_jacobian, kinematics, mass_matrix, mass_matrix_and_bias_into, point_jacobian,
    DynamicsWorkspace,
};
use nonsmooth_core::Model;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use support::{random_state, rel_err, tree_family};

fn jacobian_oracle(model: &Model, q: &nalgebra::DVector<f64>) -> DMatrix<f64> {
    let nv = model.nv();
    let kin = kinematics(model, q, &nalgebra::DVector::zeros(nv));
    let mut m = DMatrix::zeros(nv, nv);
    for (i, body) in model.bodies.iter().enumerate() {
        let c = (kin.poses[i] * Point3::from(body.com)).coords;
        let jc = point_jacobian(model, &kin, Some(i), &c);
        let jf = frame_jacobian(model, &kin, i);
        let jw = jf.rows(0, 3).into_owned();
        let r = kin.poses[i].rotation.to_rotation_matrix().into_inner();
        let iw = r * body.inertia * r.transpose();
        m += jc.transpose() * &jc * body.mass + jw.transpose() * iw * &jw;
    }
    m
}

#[test]
fn mass_matrix_symmetric_positive_definite_on_random_trees() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut worst_asym: f64 = 0.0;
    let mut min_eig = f64::INFINITY;
    for model in tree_family(1, 45, false) {
        let (q, _) = random_state(&mut rng, &model);
        let m = mass_matrix(&model, &q);
        assert_eq!(m.shape(), (model.nv(), model.nv()));
        worst_asym = worst_asym.max((&m - m.transpose()).amax());
        if model.nv() > 0 {
            let eig = m.clone().symmetric_eigen().eigenvalues.min();
            min_eig = min_eig.min(eig);
        }
    }
    assert!(worst_asym <= 1e-12, "asymmetry {worst_asym}");
    assert!(min_eig > 0.0, "min eigenvalue {min_eig}");
}

#[test]
fn mass_matrix_matches_jacobian_oracle() {
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    let mut worst: f64 = 0.0;
    for model in tree_family(2, 45, false) {
        let (q, _) = random_state(&mut rng, &model);
        let m = mass_matrix(&model, &q);
        let oracle = jacobian_oracle(&model, &q);
        worst = worst.max(rel_err(&m, &oracle));
    }
    assert!(worst <= 1e-12, "CRBA vs Jacobian oracle: {worst}");
}

#[test]
fn workspace_variant_matches_plain_functions() {
    let mut rng = ChaCha8Rng::seed_from_u64(13);
    let models = tree_family(3, 12, true);
    // One workspace reused across models of different sizes.
    let mut ws = DynamicsWorkspace::new(&models[0]);
    let mut m = DMatrix::zeros(0, 0);
    let mut h = nalgebra::DVector::zeros(0);
    let mut worst: f64 = 0.0;
    for model in &models {
        let (q, v) = random_state(&mut rng, model);
        mass_matrix_and_bias_into(model, &q, &v, &mut ws, &mut m, &mut h);
        worst = worst.max(rel_err(&m, &mass_matrix(model, &q)));
        let hb = nonsmooth_core::dynamics::bias_force(model, &q, &v);
        worst = worst.max((&h - hb).amax());
    }
    assert!(worst == 0.0, "workspace variant differs by {worst}");
}
