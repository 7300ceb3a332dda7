//! The time-as-state DI stepper on the Zeno wobble (Halm & Posa §4.3, Figs. 7–8): the block
//! pivots on corner A at θ̇₀ = 1 rad/s, reaches the apex angle θ*, lands on B with the
//! angular velocity scaled by 0.7 per impact, and comes to rest at the accumulation time
//! t ≈ 2.67 s.

use nonsmooth_impact::models;
use nonsmooth_sim::{Stepper, TimeAsStateDi};

fn energy(state: &nonsmooth_core::State) -> f64 {
    0.5 * (state.v[0].powi(2) + state.v[1].powi(2))
        + 0.5 * 5.0 / 12.0 * state.v[2].powi(2)
        + 9.81 * state.q[1]
}

#[test]
fn zeno_wobble_with_time_as_state_stepper() {
    let src = include_str!("../../../examples/impact_rocking_block.toml");
    let model = nonsmooth_core::Model::from_toml_str(src, None).unwrap();
    let mut state = model.initial_state.clone();
    // Rotating about the left corner A = (−0.5, −1) at θ̇ = 1 rad/s: v = ẑ × (0.5, 1).
    state.v = nalgebra::DVector::from_vec(vec![-1.0, 0.5, 1.0]);
    let h = 2e-3;
    let mut stepper = TimeAsStateDi::with_s_step(h);
    assert_eq!(stepper.name(), "time-as-state-di");
    let mut apex: f64 = 0.0;
    let mut rest_time = None;
    let mut e_prev = energy(&state);
    for _ in 0..5_000 {
        let next = stepper.step(&model, &state, h).unwrap();
        // Every step advances physical time by exactly h, impacts included.
        assert!(
            (next.t - state.t - h).abs() < 1e-12,
            "{} {}",
            next.t,
            state.t
        );
        state = next;
        let e = energy(&state);
        assert!(e <= e_prev + 1e-3, "energy grew: {e} > {e_prev}");
        e_prev = e;
        if stepper.impacts.is_empty() {
            apex = apex.max(state.q[2].abs());
        }
        if state.q[2].abs() < 1e-4 && state.v.amax() < 1e-3 {
            rest_time = Some(state.t);
            break;
        }
    }
    let t = rest_time.unwrap();
    let ratios = stepper.impact_ratios(2, 0.05);
    eprintln!("apex {apex} ratios {ratios:?} rest {t} s {}", stepper.s);
    assert!((apex - models::zeno_apex_angle(1.0, 2.0, 1.0, 1.0)).abs() < 5e-3);
    assert!(ratios.len() >= 3);
    for r in &ratios[..3] {
        assert!((r - 0.7).abs() < 0.01, "ratio {r}");
    }
    assert!((t - 2.67).abs() < 0.1, "rest time {t}");
    // Paper: accumulation at s* ≈ 28.4.
    assert!((stepper.s - 28.4).abs() < 0.5, "s = {}", stepper.s);
}
