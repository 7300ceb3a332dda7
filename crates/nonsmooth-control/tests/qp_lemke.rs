//! The Lemke route of the two-stage QP variants (Stage I and Stage II as KKT LCPs) against
//! Clarabel: the Stage II torque is unique, so both must give the same torques (1e-6
//! relative) on every problem, and the same predicted total normal force.

use nalgebra::DVector;
use nonsmooth_control::{Desired, IdOptions, IdProblem, InverseDynamics, Variant};
use nonsmooth_core::Model;

const QUADRUPED: &str = include_str!("../../../examples/id_quadruped.toml");

fn problem(contacts: usize) -> IdProblem {
    let model = Model::from_toml_str(QUADRUPED, None).expect("model");
    let s = &model.initial_state;
    IdProblem::from_state(&model, &s.q, &s.v, 1e-3)
        .and_then(|p| p.with_contacts_cycled(contacts))
        .expect("problem")
}

fn options(variant: Variant, lemke: bool) -> IdOptions {
    let mut o = IdOptions::new(variant);
    o.stage_one_lemke = lemke;
    o.stage_two_lemke = lemke;
    o.lemke_max_size = usize::MAX;
    o
}

#[test]
fn lemke_and_clarabel_give_the_same_torques() {
    for contacts in [4usize, 8] {
        let p = problem(contacts);
        for variant in [Variant::QpCoulomb, Variant::QpNoSlip] {
            for k in 0..6 {
                let des = Desired::Acceleration(DVector::from_fn(12, |i, _| {
                    0.3 * ((k * 12 + i) as f64 * 0.7).sin()
                }));
                let a = InverseDynamics::new(options(variant, false))
                    .solve(&p, &des)
                    .expect("clarabel");
                let b = InverseDynamics::new(options(variant, true))
                    .solve(&p, &des)
                    .expect("lemke");
                let scale = 1.0 + a.torques.amax();
                let diff = (&a.torques - &b.torques).amax();
                assert!(
                    diff <= 1e-6 * scale,
                    "{} contacts, {variant:?}, case {k}: torques differ by {diff:e} \
                     (clarabel {}, lemke {})",
                    contacts,
                    a.torques,
                    b.torques
                );
                let na: f64 = a.normal_forces.sum();
                let nb: f64 = b.normal_forces.sum();
                assert!((na - nb).abs() <= 1e-6 * (1.0 + na.abs()), "{na} vs {nb}");
                assert!(b.method.contains("lemke stage II"), "{}", b.method);
            }
        }
    }
}

#[test]
fn large_stages_go_to_clarabel_by_default() {
    let des = Desired::Acceleration(DVector::zeros(12));
    let small = InverseDynamics::new(IdOptions::new(Variant::QpCoulomb))
        .solve(&problem(4), &des)
        .expect("4 contacts");
    assert!(
        small.method.starts_with("lemke stage I + lemke stage II"),
        "{}",
        small.method
    );
    let large = InverseDynamics::new(IdOptions::new(Variant::QpCoulomb))
        .solve(&problem(32), &des)
        .expect("32 contacts");
    assert!(
        large
            .method
            .starts_with("clarabel stage I + clarabel stage II"),
        "{}",
        large.method
    );
}
