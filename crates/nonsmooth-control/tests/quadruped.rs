//! Acceptance checks 1–6 and 12 of docs/decisions/004-inverse-dynamics.md on the reference
//! quadruped and arm.

use nalgebra::{DMatrix, DVector, SymmetricEigen};
use nonsmooth_control::forward::{coulomb_step, forward_step};
use nonsmooth_control::{
    coulomb_lcp, coulomb_mlcp, noslip_lcp, noslip_mlcp, ppm, ContactSpec, ControlError, Desired,
    Elimination, IdOptions, IdProblem, IdStatus, InverseDynamics, StageTwoObjective, Variant,
};
use nonsmooth_core::Model;
use rand::{Rng, SeedableRng};

const QUADRUPED: &str = include_str!("../../../examples/id_quadruped.toml");
const ARM: &str = include_str!("../../../examples/id_arm_wall.toml");
const DT: f64 = 1e-3;

fn quadruped() -> Model {
    Model::from_toml_str(QUADRUPED, Some("id_quadruped.toml")).unwrap()
}

fn standing(model: &Model) -> IdProblem {
    let s = &model.initial_state;
    IdProblem::from_state(model, &s.q, &s.v, DT).unwrap()
}

/// A random state near the stance: small joint and base velocities.
fn random_problem(model: &Model, rng: &mut impl Rng) -> IdProblem {
    let s = &model.initial_state;
    let mut v = s.v.clone();
    for x in v.iter_mut() {
        *x = rng.gen_range(-0.05..0.05);
    }
    IdProblem::from_state(model, &s.q, &v, DT).unwrap()
}

fn random_accel(nu: usize, rng: &mut impl Rng) -> Desired {
    Desired::Acceleration(DVector::from_fn(nu, |_, _| rng.gen_range(-2.0..2.0)))
}

#[test]
fn statics_total_normal_force_is_mg_for_every_variant() {
    let model = quadruped();
    let p = standing(&model);
    assert_eq!(p.num_contacts(), 4);
    let mg = 4.8 * 9.81;
    for variant in Variant::ALL {
        let mut id = InverseDynamics::new(IdOptions::new(variant));
        let sol = id
            .solve(&p, &Desired::Acceleration(DVector::zeros(12)))
            .unwrap();
        let total: f64 = sol.normal_forces.sum();
        // LCP variants: exact up to roundoff; QP variants: interior-point accuracy.
        let tol = if variant.coulomb() && variant != Variant::QpCoulomb
            || variant == Variant::LcpNoSlip
        {
            1e-9
        } else {
            1e-5
        };
        assert!(
            (total - mg).abs() < tol * mg,
            "{variant:?}: total {total} vs {mg}"
        );
        if variant == Variant::QpCoulomb {
            // Stage II spreads the load over all four feet (left/right symmetric; the
            // hind feet carry a little more because the bent legs move the CoM back).
            let f = &sol.normal_forces;
            assert!((f[0] - f[1]).abs() < 1e-6 * mg && (f[2] - f[3]).abs() < 1e-6 * mg);
            for fi in f.iter() {
                assert!((fi - mg / 4.0).abs() < 0.1 * mg / 4.0, "{f:?}");
            }
        }
    }
}

#[test]
fn right_inverse_every_variant() {
    let model = quadruped();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(4);
    for _ in 0..5 {
        let p = random_problem(&model, &mut rng);
        let des = random_accel(12, &mut rng);
        for variant in Variant::ALL {
            let mut id = InverseDynamics::new(IdOptions::new(variant));
            let sol = id.solve(&p, &des).unwrap();
            // Random accelerations splay the legs: inconsistent with no slip (E7), so the
            // no-slip LCP relaxes to the closest consistent motion; the others solve as is.
            if variant != Variant::LcpNoSlip {
                assert_eq!(sol.status, IdStatus::Solved);
            }
            let vp = forward_step(&p, variant, &sol).unwrap();
            let pv = p.selection() * &vp;
            let err = (&pv - &sol.desired_velocity).amax() / (1.0 + sol.desired_velocity.amax());
            assert!(err < 1e-8, "{variant:?}: relative velocity error {err}");
            // Predicted non-penetration holds.
            let w = p.normal_matrix() * &sol.v_plus + p.gaps() / DT;
            assert!(w.min() > -1e-8, "{variant:?}: penetration {w}");
        }
    }
}

#[test]
fn coulomb_id_impulses_solve_the_forward_lcp() {
    let model = quadruped();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let p = random_problem(&model, &mut rng);
    let des = random_accel(12, &mut rng);
    let sol = InverseDynamics::new(IdOptions::new(Variant::LcpCoulomb))
        .solve(&p, &des)
        .unwrap();
    let fwd = coulomb_step(&p, &sol.torques).unwrap();
    let err = (p.selection() * &fwd.v_plus - &sol.desired_velocity).amax();
    assert!(err < 1e-8 * (1.0 + sol.desired_velocity.amax()));
    let diff = (fwd.normal_impulses.sum() - sol.normal_impulses.sum()).abs();
    assert!(diff < 1e-9, "summed normal impulse differs by {diff}");
}

#[test]
fn lcp_matrices_are_psd_copositive_and_match_the_mlcp_reduction() {
    let model = quadruped();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    let p = random_problem(&model, &mut rng);
    let qdes = p.desired_velocity(&random_accel(12, &mut rng)).unwrap();
    // No slip: symmetric PSD, equal to B − D A⁻¹ C.
    let (q, r) = noslip_lcp(&p, &qdes).unwrap();
    assert!((&q - q.transpose()).amax() < 1e-12 * q.amax());
    let eig = SymmetricEigen::new(q.clone()).eigenvalues;
    assert!(eig.min() > -1e-10 * q.amax());
    let (lcp, _, _) = noslip_mlcp(&p, &qdes).unwrap().reduce().unwrap();
    assert!((lcp.m() - &q).amax() < 1e-10 * (1.0 + q.amax()));
    assert!((lcp.q() - &r).amax() < 1e-10 * (1.0 + r.amax()));
    // Coulomb: copositive on random z ≥ 0, equal to the MLCP reduction.
    let (q, r) = coulomb_lcp(&p, &qdes).unwrap();
    for _ in 0..200 {
        let z = DVector::from_fn(q.nrows(), |_, _| rng.gen_range(0.0..1.0));
        assert!(z.dot(&(&q * &z)) >= -1e-10 * q.amax() * z.norm_squared());
    }
    let (lcp, _, _) = coulomb_mlcp(&p, &qdes).unwrap().reduce().unwrap();
    assert!((lcp.m() - &q).amax() < 1e-10 * (1.0 + q.amax()));
    assert!((lcp.q() - &r).amax() < 1e-10 * (1.0 + r.amax()));
}

#[test]
fn stage_two_keeps_the_stage_one_optimum_and_is_permutation_invariant() {
    let model = quadruped();
    let p = standing(&model);
    let des = Desired::Acceleration(DVector::zeros(12));
    for variant in [Variant::QpCoulomb, Variant::QpNoSlip] {
        let mut opts = IdOptions::new(variant);
        opts.stage_two = false;
        let s1 = InverseDynamics::new(opts).solve(&p, &des).unwrap();
        let s2 = InverseDynamics::new(IdOptions::new(variant))
            .solve(&p, &des)
            .unwrap();
        let ke_scale = 0.5 * (p.mass_matrix() * p.free_velocity()).dot(p.free_velocity());
        assert!((s1.kinetic_energy - s2.kinetic_energy).abs() < 1e-7 * ke_scale.max(1e-12));
        let slack1 = p.normal_matrix() * &s1.v_plus;
        let slack2 = p.normal_matrix() * &s2.v_plus;
        assert!((slack1 - slack2).amax() < 1e-7);
        // Reverse the contact order: the torques are unique.
        let rows: Vec<_> = p.contacts().iter().rev().cloned().collect();
        let pr = p.with_contact_rows(rows).unwrap();
        let s3 = InverseDynamics::new(IdOptions::new(variant))
            .solve(&pr, &des)
            .unwrap();
        let du = (&s3.torques - &s2.torques).amax();
        assert!(du < 1e-5 * (1.0 + s2.torques.amax()), "{variant:?}: {du}");
    }
}

#[test]
fn ppm_uses_at_most_rank_contacts_with_duplicates() {
    let model = quadruped();
    let p = standing(&model);
    let mut rows = Vec::new();
    for _ in 0..10 {
        rows.extend(p.contacts().iter().cloned());
    }
    let p40 = p.with_contact_rows(rows).unwrap();
    let qdes = DVector::zeros(12);
    let elim = Elimination::build(&p40, p40.free_velocity(), Some(&qdes), true).unwrap();
    let nmat = p40.normal_matrix();
    let r = &nmat * &elim.vhat + p40.gaps() / DT;
    let out = ppm(&nmat, &elim.mt, &r, None, 100).unwrap();
    let positive = out.z.iter().filter(|&&x| x > 1e-14).count();
    let rank = (&nmat * &elim.mt * nmat.transpose()).rank(1e-10);
    assert!(positive <= rank.max(1), "{positive} > {rank}");
    let sol = InverseDynamics::new(IdOptions::new(Variant::LcpNoSlip))
        .solve(&p40, &Desired::Velocity(qdes))
        .unwrap();
    assert!((sol.normal_forces.sum() - 4.8 * 9.81).abs() < 1e-6 * 47.0);
}

#[test]
fn arm_pushed_into_wall_is_reported_and_relaxed() {
    let model = Model::from_toml_str(ARM, Some("id_arm_wall.toml")).unwrap();
    let s = &model.initial_state;
    let p = IdProblem::from_state(&model, &s.q, &s.v, DT).unwrap();
    assert_eq!(p.num_contacts(), 1);
    // Elbow velocity −1 rad/s drives the tip into the wall.
    let des = Desired::Velocity(DVector::from_vec(vec![0.0, -1.0]));
    for variant in Variant::ALL {
        let mut opts = IdOptions::new(variant);
        opts.relax_infeasible = false;
        let err = InverseDynamics::new(opts).solve(&p, &des).unwrap_err();
        assert!(
            matches!(err, ControlError::InfeasibleDesired { .. }),
            "{err}"
        );
        let sol = InverseDynamics::new(IdOptions::new(variant))
            .solve(&p, &des)
            .unwrap();
        assert_eq!(sol.status, IdStatus::Relaxed);
        let rel = sol.relaxation.as_ref().unwrap();
        // Closest realizable: tip normal velocity 0, i.e. the motion projected on the wall.
        let w = p.normal_matrix() * &sol.v_plus;
        assert!(w[0] > -1e-7 && w[0] < 1e-6, "{variant:?}: {w}");
        assert!(rel.distance > 0.1 && rel.distance < 1.0 + 1e-6);
        assert!(sol.torques.iter().all(|x| x.is_finite()));
    }
    // Away from the wall is feasible and not relaxed.
    let sol = InverseDynamics::new(IdOptions::new(Variant::QpCoulomb))
        .solve(&p, &Desired::Velocity(DVector::from_vec(vec![0.0, 1.0])))
        .unwrap();
    assert_eq!(sol.status, IdStatus::Solved);
}

#[test]
fn bad_input_gives_typed_errors() {
    let model = quadruped();
    let p = standing(&model);
    let mut id = InverseDynamics::new(IdOptions::new(Variant::QpCoulomb));
    let e = id
        .solve(&p, &Desired::Acceleration(DVector::zeros(11)))
        .unwrap_err();
    assert!(matches!(
        e,
        ControlError::DimensionMismatch {
            expected: 12,
            got: 11,
            ..
        }
    ));
    let mut a = DVector::zeros(12);
    a[3] = f64::NAN;
    let e = id.solve(&p, &Desired::Acceleration(a)).unwrap_err();
    assert!(matches!(e, ControlError::NonFinite { .. }));
    let s = &model.initial_state;
    let spec = ContactSpec {
        body: 99,
        point: nalgebra::Vector3::zeros(),
        normal: nalgebra::Vector3::z(),
        friction: 0.5,
        gap: 0.0,
    };
    let e = IdProblem::with_contacts(&model, &s.q, &s.v, &[spec], DT).unwrap_err();
    assert!(matches!(e, ControlError::UnknownBody { body: 99, .. }));
    let e = IdProblem::from_parts(
        DMatrix::identity(3, 3),
        DVector::zeros(3),
        DMatrix::zeros(3, 0),
        DVector::zeros(3),
        vec![],
        DT,
    )
    .unwrap_err();
    assert!(matches!(e, ControlError::NoActuators));
    assert!(matches!(
        Variant::from_name("lcp-foo"),
        Err(ControlError::UnknownVariant(_))
    ));
}

#[test]
fn explicit_contacts_match_the_snapshot() {
    let model = quadruped();
    let s = &model.initial_state;
    let snap = nonsmooth_core::ContactSnapshot::new(&model, &s.q, &s.v, 0.0).unwrap();
    let specs: Vec<ContactSpec> = snap
        .contacts
        .iter()
        .map(|c| ContactSpec {
            body: c.body_a.or(c.body_b).unwrap(),
            point: c.point,
            normal: if c.body_a.is_some() {
                c.normal
            } else {
                -c.normal
            },
            friction: c.friction,
            gap: c.gap,
        })
        .collect();
    let p1 = IdProblem::from_snapshot(&snap, DT).unwrap();
    let p2 = IdProblem::with_contacts(&model, &s.q, &s.v, &specs, DT).unwrap();
    let des = Desired::Acceleration(DVector::zeros(12));
    let u1 = nonsmooth_control::inverse_dynamics(&p1, &des, Variant::LcpCoulomb).unwrap();
    let u2 = nonsmooth_control::inverse_dynamics(&p2, &des, Variant::LcpCoulomb).unwrap();
    assert!((u1.normal_forces.sum() - u2.normal_forces.sum()).abs() < 1e-9);
}

#[test]
fn arm_hand_holds_the_free_box_with_every_variant() {
    const HAND: &str = include_str!("../../../examples/id_arm_hand_box.toml");
    let model = Model::from_toml_str(HAND, Some("id_arm_hand_box.toml")).unwrap();
    assert_eq!((model.nv(), model.nu()), (17, 11));
    let s = &model.initial_state;
    let p = IdProblem::from_state(&model, &s.q, &s.v, DT).unwrap();
    assert_eq!(p.num_contacts(), 4);
    let weight = 1.296 * 9.81;
    for variant in Variant::ALL {
        let sol = InverseDynamics::new(IdOptions::new(variant))
            .solve(&p, &Desired::Acceleration(DVector::zeros(11)))
            .unwrap();
        assert_eq!(sol.status, IdStatus::Solved, "{variant:?}");
        let vp = forward_step(&p, variant, &sol).unwrap();
        assert!((p.selection() * vp).amax() < 1e-9, "{variant:?}");
        if variant == Variant::LcpCoulomb {
            // With normal complementarity and fingers held still nothing squeezes the box:
            // Lemke returns the solution in which it slides out (f_N = 0), a known
            // property of ID_LCP,μ (the paper's grasp row of Table 6 fails for it).
            continue;
        }
        // The box (last 6 DOF) stays at rest: the fingertip friction carries its weight.
        assert!(
            sol.v_plus.rows(11, 6).amax() < 1e-6,
            "{variant:?}: {}",
            sol.v_plus
        );
        let lift: f64 = sol.tangent_forces.iter().map(|x| x.abs()).sum();
        assert!(lift >= weight * (1.0 - 1e-6), "{variant:?}: {lift}");
    }
}

#[test]
fn noslip_force_prediction_matches_the_same_model_forward_step() {
    // Acceptance check 7 of docs/decisions/004-inverse-dynamics.md (Zapolsky & Drumwright
    // 2017, "Inverse Dynamics with Rigid Contact and Friction", §8.2 and Table 5), in a
    // same-model simulator: the summed normal force predicted by ID_LCP,∞ equals the forward
    // no-slip step's under the computed torques.
    let model = quadruped();
    let p = standing(&model);
    let sol = InverseDynamics::new(IdOptions::new(Variant::LcpNoSlip))
        .solve(&p, &Desired::Acceleration(DVector::from_element(12, 0.0)))
        .unwrap();
    let fwd = nonsmooth_control::forward::noslip_step(&p, &sol.torques).unwrap();
    let diff = (fwd.normal_impulses.sum() - sol.normal_impulses.sum()).abs();
    assert!(diff < 1e-9 * sol.normal_impulses.sum(), "{diff}");
}

#[test]
fn stage_two_objectives_share_the_face_and_minimize_their_own_norm() {
    // Erratum E10: ‖u‖ (eq 102) and ‖u − f_ID‖ (eqs 105–112, the authors' plugin) pick
    // different torques on the same Stage I face; each is optimal for its own objective.
    let model = quadruped();
    let mut rng = rand::rngs::StdRng::seed_from_u64(17);
    let p = random_problem(&model, &mut rng);
    let des = random_accel(12, &mut rng);
    let qdes = p.desired_velocity(&des).unwrap();
    let sel = p.selection();
    let qdd = (&qdes - sel * p.velocity()) / DT;
    let f_id = sel * p.mass_matrix() * sel.transpose() * qdd - sel * p.forces();
    let mut differs = Vec::new();
    for variant in [Variant::QpCoulomb, Variant::QpNoSlip] {
        let total = InverseDynamics::new(IdOptions::new(variant))
            .solve(&p, &des)
            .unwrap();
        let mut opts = IdOptions::new(variant);
        opts.stage_two_objective = StageTwoObjective::DeviationFromRigidId;
        let dev = InverseDynamics::new(opts).solve(&p, &des).unwrap();
        let ke_scale = 0.5 * (p.mass_matrix() * p.free_velocity()).dot(p.free_velocity());
        assert!(
            (total.kinetic_energy - dev.kinetic_energy).abs() < 1e-6 * ke_scale.max(1e-9),
            "{variant:?}: Stage I optimum differs"
        );
        let (nt, nd) = (total.torques.norm(), dev.torques.norm());
        let (et, ed) = (
            (&total.torques - &f_id).norm(),
            (&dev.torques - &f_id).norm(),
        );
        assert!(
            nt <= nd * (1.0 + 1e-6) + 1e-9,
            "{variant:?}: ‖u‖ {nt} > {nd}"
        );
        assert!(
            ed <= et * (1.0 + 1e-6) + 1e-9,
            "{variant:?}: ‖u − f_ID‖ {ed} > {et}"
        );
        differs.push((&total.torques - &dev.torques).amax());
    }
    // On this state the two QP,μ torques agree (below 1e-6: its face leaves the torque
    // fixed); the QP,∞ face does not, and there the two objectives must disagree.
    assert!(differs[1] > 1e-6, "{differs:?}");
}

#[test]
fn a_failed_stage_two_keeps_the_stage_one_impulses() {
    // Stage II is feasible at f = f₀; when its solver fails anyway (here: Clarabel with a
    // 1-iteration cap and no Lemke route), the solve keeps Stage I's impulses, as the
    // authors' plugin does, instead of failing (which used to trigger the §4.5 relaxation).
    let model = quadruped();
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    let p = random_problem(&model, &mut rng);
    let des = random_accel(12, &mut rng);
    for variant in [Variant::QpCoulomb, Variant::QpNoSlip] {
        let mut opts = IdOptions::new(variant);
        opts.stage_two = false;
        let s1 = InverseDynamics::new(opts).solve(&p, &des).unwrap();
        let mut opts = IdOptions::new(variant);
        opts.stage_two_lemke = false;
        opts.conic.max_iter = 1;
        let s = InverseDynamics::new(opts).solve(&p, &des).unwrap();
        assert!(
            s.method.contains("stage II failed"),
            "{variant:?}: {}",
            s.method
        );
        assert!(s.relaxation.is_none());
        assert!((&s.torques - &s1.torques).amax() < 1e-9 * (1.0 + s1.torques.amax()));
        assert!((&s.v_plus - &s1.v_plus).amax() < 1e-12);
    }
}
