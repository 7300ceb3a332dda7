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

/// With the default cap the 32-contact stages (Fig. 19's duplicated feet, rank-deficient N)
/// are solved by Lemke; stages above `lemke_max_size` go to Clarabel; both give the same
/// torques and normal forces (to Clarabel's accuracy).
#[test]
fn stages_above_the_lemke_cap_go_to_clarabel_with_the_same_answer() {
    let des = Desired::Acceleration(DVector::zeros(12));
    let lemke = InverseDynamics::new(IdOptions::new(Variant::QpCoulomb))
        .solve(&problem(32), &des)
        .expect("32 contacts");
    assert!(
        lemke.method.starts_with("lemke stage I + lemke stage II"),
        "{}",
        lemke.method
    );
    let mut capped = IdOptions::new(Variant::QpCoulomb);
    capped.lemke_max_size = 64;
    let clarabel = InverseDynamics::new(capped)
        .solve(&problem(32), &des)
        .expect("32 contacts");
    assert!(
        clarabel
            .method
            .starts_with("clarabel stage I + clarabel stage II"),
        "{}",
        clarabel.method
    );
    let du = (&lemke.torques - &clarabel.torques).amax();
    assert!(du < 1e-5, "torques differ by {du}");
    let dn = (lemke.normal_forces.sum() - clarabel.normal_forces.sum()).abs();
    assert!(dn < 1e-3, "Σf_N differs by {dn}");
}
