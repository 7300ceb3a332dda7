//! Property test of the right-inverse property (Zapolsky & Drumwright 2017): on random consistent
//! states of the standing quadruped and random desired accelerations, a forward step of the same
//! contact model driven by the computed torques reproduces the desired joint velocities, for every
//! variant (the no-slip LCP up to its documented relaxation to the closest consistent
//! motion), and never predicts penetration.

use nalgebra::DVector;
use nonsmooth_control::forward::forward_step;
use nonsmooth_control::{Desired, IdOptions, IdProblem, IdStatus, InverseDynamics, Variant};
use nonsmooth_core::Model;
use proptest::prelude::*;

const QUADRUPED: &str = include_str!("../../../examples/id_quadruped.toml");
const DT: f64 = 1e-3;

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, failure_persistence: None, .. ProptestConfig::default() })]

    #[test]
    fn computed_torques_reproduce_the_desired_velocities(
        v in proptest::collection::vec(-0.05..0.05f64, 18),
        a in proptest::collection::vec(-2.0..2.0f64, 12),
    ) {
        let model = Model::from_toml_str(QUADRUPED, None).unwrap();
        let s = &model.initial_state;
        prop_assume!(model.nv() == v.len());
        let p = IdProblem::from_state(&model, &s.q, &DVector::from_vec(v), DT).unwrap();
        let des = Desired::Acceleration(DVector::from_vec(a));
        for variant in Variant::ALL {
            let sol = InverseDynamics::new(IdOptions::new(variant)).solve(&p, &des).unwrap();
            prop_assert!(sol.torques.iter().all(|x| x.is_finite()));
            if variant != Variant::LcpNoSlip {
                prop_assert_eq!(sol.status, IdStatus::Solved);
            }
            let vp = forward_step(&p, variant, &sol).unwrap();
            let pv = p.selection() * &vp;
            let err = (&pv - &sol.desired_velocity).amax() / (1.0 + sol.desired_velocity.amax());
            prop_assert!(err < 1e-7, "{:?}: relative velocity error {}", variant, err);
            let w = p.normal_matrix() * &sol.v_plus + p.gaps() / DT;
            prop_assert!(w.min() > -1e-7, "{:?}: penetration {}", variant, w);
        }
    }
}
