//! The warm-started QP stages (§4.6 applied to the stages' KKT systems, `src/active_set.rs`)
//! give the answers of the cold route (Lemke on the KKT LCPs), call after call of a control
//! loop, on duplicated and on jittered contacts (rank-deficient and nearly rank-deficient N),
//! without falling back; and the one-stage ID_QP,μ (§6.1) is Stage I's optimum.

use nalgebra::{DVector, Vector3};
use nonsmooth_control::{ContactSpec, Desired, IdOptions, IdProblem, InverseDynamics, Variant};
use nonsmooth_core::{ContactSnapshot, Model};

const QUADRUPED: &str = include_str!("../../../examples/id_quadruped.toml");

fn model() -> Model {
    Model::from_toml_str(QUADRUPED, None).unwrap()
}

fn duplicated(model: &Model, contacts: usize, v: &DVector<f64>) -> IdProblem {
    let s = &model.initial_state;
    IdProblem::from_state(model, &s.q, v, 1e-3)
        .and_then(|p| p.with_contacts_cycled(contacts))
        .unwrap()
}

/// The feet repeated up to `count`, each copy moved by up to 0.1 mm in the ground plane.
fn jittered(model: &Model, count: usize) -> IdProblem {
    let s = &model.initial_state;
    let snap = ContactSnapshot::new(model, &s.q, &s.v, 0.0).unwrap();
    let specs: Vec<ContactSpec> = (0..count)
        .map(|i| {
            let c = &snap.contacts[i % snap.contacts.len()];
            let k = (i / snap.contacts.len()) as f64;
            ContactSpec {
                body: c.body_b.or(c.body_a).unwrap(),
                point: c.point + Vector3::new((1.7 * k).sin(), (2.3 * k).cos(), 0.0) * 1e-4,
                normal: c.normal,
                friction: c.friction,
                gap: c.gap,
            }
        })
        .collect();
    IdProblem::with_contacts(model, &s.q, &s.v, &specs, 1e-3).unwrap()
}

fn sway(k: usize) -> Desired {
    Desired::Acceleration(DVector::from_fn(12, |i, _| {
        0.2 * (0.05 * k as f64 + i as f64).sin()
    }))
}

#[test]
fn warm_calls_match_cold_calls_in_a_control_loop() {
    let model = model();
    for contacts in [4usize, 16] {
        let p = duplicated(&model, contacts, &model.initial_state.v);
        for variant in [
            Variant::QpNoSlip,
            Variant::QpCoulomb,
            Variant::QpCoulombOneStage,
        ] {
            let mut warm = InverseDynamics::new(IdOptions::new(variant));
            for k in 0..30 {
                let des = sway(k);
                let a = warm.solve(&p, &des).unwrap();
                let b = InverseDynamics::new(IdOptions::new(variant))
                    .solve(&p, &des)
                    .unwrap();
                let scale = 1.0 + b.torques.amax();
                let du = (&a.torques - &b.torques).amax();
                // The one-stage Hessian is regularized by 1e-6 only: its solution is
                // unique but conditioned accordingly.
                let tol = if variant == Variant::QpCoulombOneStage {
                    1e-6
                } else {
                    1e-8
                };
                assert!(du <= tol * scale, "{variant:?} {contacts} step {k}: {du:e}");
                let dn = (a.normal_forces.sum() - b.normal_forces.sum()).abs();
                assert!(dn <= tol * (1.0 + b.normal_forces.sum()), "{dn:e}");
                if k > 0 {
                    assert!(a.method.starts_with("warm"), "{}", a.method);
                }
            }
            let s = warm.stats();
            assert_eq!(s.calls, 30);
            assert_eq!(
                s.warm_fallbacks + s.lemke_failures + s.clarabel_fallbacks,
                0
            );
            assert!(s.warm_solves > 0, "{s:?}");
        }
    }
}

#[test]
fn jittered_contacts_stay_on_the_warm_path() {
    let model = model();
    let p = jittered(&model, 32);
    let mg: f64 = model.bodies.iter().map(|b| b.mass).sum::<f64>() * model.gravity.norm();
    for variant in [
        Variant::QpNoSlip,
        Variant::QpCoulomb,
        Variant::QpCoulombOneStage,
    ] {
        let mut ctl = InverseDynamics::new(IdOptions::new(variant));
        let mut first = None;
        for k in 0..10 {
            let sol = ctl
                .solve(&p, &Desired::Acceleration(DVector::zeros(12)))
                .unwrap();
            assert!((sol.normal_forces.sum() - mg).abs() < 1e-4 * mg, "{k}");
            let u0 = first.get_or_insert_with(|| sol.torques.clone());
            assert!((&sol.torques - &*u0).amax() < 1e-6 * (1.0 + u0.amax()));
            if k > 0 {
                assert!(sol.method.starts_with("warm"), "{}", sol.method);
            }
        }
        assert_eq!(ctl.stats().warm_fallbacks, 0, "{:?}", ctl.stats());
    }
}

#[test]
fn a_changed_contact_count_restarts_cold_and_a_bad_warm_set_falls_back_counted() {
    let model = model();
    let mut ctl = InverseDynamics::new(IdOptions::new(Variant::QpCoulomb));
    let des = Desired::Acceleration(DVector::zeros(12));
    ctl.solve(&duplicated(&model, 8, &model.initial_state.v), &des)
        .unwrap();
    let sol = ctl
        .solve(&duplicated(&model, 4, &model.initial_state.v), &des)
        .unwrap();
    assert!(sol.method.starts_with("lemke"), "{}", sol.method);
    assert_eq!(ctl.stats().cold_solves, 4);
    // A state far from the previous one: the old active set may or may not hold; either the
    // warm solve answers or the fallback is counted and named, and the answer is the cold one.
    let v = DVector::from_fn(model.nv(), |i, _| 0.3 * ((i as f64) * 1.3).sin());
    let p = duplicated(&model, 4, &v);
    let des = Desired::Acceleration(DVector::from_fn(12, |i, _| 3.0 * (i as f64).cos()));
    let before = ctl.stats();
    let a = ctl.solve(&p, &des).unwrap();
    let b = InverseDynamics::new(IdOptions::new(Variant::QpCoulomb))
        .solve(&p, &des)
        .unwrap();
    assert!((&a.torques - &b.torques).amax() < 1e-6 * (1.0 + b.torques.amax()));
    let after = ctl.stats();
    if a.method.contains("warm start failed") {
        assert!(after.warm_fallbacks > before.warm_fallbacks);
    } else {
        assert_eq!(after.warm_fallbacks, before.warm_fallbacks);
    }
}

#[test]
fn one_stage_reaches_the_stage_one_optimum() {
    let model = model();
    let p = duplicated(&model, 8, &model.initial_state.v);
    let des = sway(3);
    let mut opts = IdOptions::new(Variant::QpCoulomb);
    opts.stage_two = false;
    let s1 = InverseDynamics::new(opts).solve(&p, &des).unwrap();
    let one = InverseDynamics::new(IdOptions::new(Variant::QpCoulombOneStage))
        .solve(&p, &des)
        .unwrap();
    let ke_scale = 0.5 * (p.mass_matrix() * p.free_velocity()).dot(p.free_velocity());
    assert!(
        (one.kinetic_energy - s1.kinetic_energy).abs() < 1e-6 * ke_scale.max(1e-12),
        "{} vs {}",
        one.kinetic_energy,
        s1.kinetic_energy
    );
    // Duplicated contacts share the load equally (the regularized solution is unique).
    let f = &one.normal_forces;
    for i in 0..4 {
        assert!((f[i] - f[i + 4]).abs() < 1e-6 * (1.0 + f[i].abs()), "{f}");
    }
    assert_eq!(
        Variant::from_name("qp-coulomb-one-stage").unwrap(),
        one.variant
    );
}
