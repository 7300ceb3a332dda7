//! Property tests: random initial states of a passive system with dissipative contact (a
//! damped, frictional sphere over a plane) stepped by every stepper never produce NaN, and the
//! mechanical energy `T + V_gravity` never exceeds its initial value by more than the scheme's
//! documented bound.
//!
//! Bounds (per step of size h, mass m, gravity g):
//! - implicit and velocity-level schemes (`drumwright`, `anitescu-potra`, `penalty-implicit`,
//!   `bdf`) and the error-controlled `rk45`: no growth beyond round-off and the integrator
//!   tolerance, `1e-6 · (1 + E₀)`;
//! - `penalty-symplectic`: symplectic Euler's bounded energy error, `m g² h² · steps`;
//! - `penalty-explicit`: explicit Euler gains exactly `½ m g² h²` per step in free flight, and
//!   is run with `h ω < ζ` inside contact so that the contact itself dissipates; the bound is
//!   `m g² h² · steps`.
//!
//! The elastic energy stored in a penalty spring is not counted, which only makes the check
//! stricter.

use nalgebra::DVector;
use nonsmooth_core::dynamics::{kinetic_energy, potential_energy};
use nonsmooth_core::{Model, State};
use nonsmooth_sim::{Simulator, STEPPER_NAMES};
use proptest::prelude::*;

const BALL: &str = include_str!("../../../examples/bouncing_sphere.toml");
const G: f64 = 9.81;

fn energy(model: &Model, s: &State) -> f64 {
    kinetic_energy(model, &s.q, &s.v) + potential_energy(model, &s.q)
}

fn allowance(stepper: &str, h: f64, steps: usize, e0: f64) -> f64 {
    let round_off = 1e-6 * (1.0 + e0.abs());
    match stepper {
        "penalty-explicit" | "penalty-symplectic" => round_off + G * G * h * h * steps as f64,
        _ => round_off,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, failure_persistence: None, .. ProptestConfig::default() })]

    #[test]
    fn steppers_stay_finite_and_do_not_create_energy(
        height in 0.1..0.6f64,
        lin in [-2.0..2.0f64, -2.0..2.0, -3.0..1.0],
        ang in [-5.0..5.0f64, -5.0..5.0, -5.0..5.0],
        h_scale in 0.2..1.0f64,
    ) {
        let model = Model::from_toml_str(BALL, None).unwrap();
        let mut initial = model.initial_state.clone();
        initial.q[2] = height;
        initial.v = DVector::from_vec(vec![lin[0], lin[1], lin[2], ang[0], ang[1], ang[2]]);
        let e0 = energy(&model, &initial);
        for name in STEPPER_NAMES {
            let explicit = name.starts_with("penalty-e") || name.starts_with("penalty-s");
            // Explicit schemes inside their stability region of the contact spring
            // (ω = √(k/m) ≈ 316 rad/s, ζ ≈ 0.08): h ω < ζ.
            let h = if explicit { 2e-4 * h_scale } else { 2e-3 * h_scale };
            let steps = (0.3 / h) as usize;
            let mut sim = Simulator::new(model.clone(), name, h).unwrap();
            sim.set_state(initial.clone()).unwrap();
            let mut worst: f64 = f64::NEG_INFINITY;
            for i in 0..steps {
                sim.step(&[]).map_err(|e| TestCaseError::fail(format!("{name} step {i}: {e}")))?;
                let s = sim.state();
                prop_assert!(s.q.iter().chain(s.v.iter()).all(|x| x.is_finite()), "{name}: non-finite state at step {i}");
                worst = worst.max(energy(&model, s) - e0);
            }
            let bound = allowance(name, h, steps, e0);
            prop_assert!(worst <= bound, "{name}: energy grew by {worst:.3e} > {bound:.3e} (h = {h:.2e})");
        }
    }
}

/// A spinning sphere that lands sliding and comes to roll (a case the property test drew):
/// `penalty-implicit`'s Newton iteration converges through the friction law's switch from
/// sliding to its viscous region.
#[test]
fn penalty_implicit_steps_through_the_onset_of_rolling() {
    let model = Model::from_toml_str(BALL, None).unwrap();
    let mut s = model.initial_state.clone();
    s.q[2] = 0.3941838988853074;
    s.v = DVector::from_vec(vec![
        -1.781254668351251,
        -1.8971681752733598,
        -0.5623706091805482,
        -1.6517927824640508,
        -1.857516400937154,
        -2.3650525478064393,
    ]);
    let h = 2e-3 * 0.8847689586995897;
    let mut sim = Simulator::new(model, "penalty-implicit", h).unwrap();
    sim.set_state(s).unwrap();
    for i in 0..(0.3 / h) as usize {
        sim.step(&[]).unwrap_or_else(|e| panic!("step {i}: {e}"));
    }
    let s = sim.state();
    assert!(s.q.iter().chain(s.v.iter()).all(|x| x.is_finite()));
}
