//! Legitimate scenes never end in a solver error: toppling sphere stacks (seed 003's stack
//! with horizontal offsets of at most 0.1 mm) under `drumwright` at h = 10 ms. The friction
//! stage's objective is scaled by the tangential compliance (its Hessian would otherwise carry
//! entries of about 1e15, on which Clarabel stopped with `InsufficientProgress`), and
//! contacts without normal force get zero friction by equality rows instead of a cone
//! without interior. Falling spheres do not tunnel: each collider's contact margin grows by
//! the distance it travels in a step, and no sphere sinks more than 1 mm into the ground or
//! into another sphere.

#[path = "../../nonsmooth-experiments/src/scenes.rs"]
#[allow(dead_code, unused_imports)]
mod scenes;

use nonsmooth_sim::{DrumwrightStepper, Stepper};

#[test]
fn toppling_stacks_run_without_a_solver_error_or_tunnelling() {
    for seed in 1..=8 {
        let model = scenes::toppling_stack(10, 1e-4, seed).unwrap();
        let mut stepper = DrumwrightStepper::default();
        let mut s = model.initial_state.clone();
        let mut toppled = false;
        for k in 0..200 {
            s = stepper
                .step(&model, &s, 0.01)
                .unwrap_or_else(|e| panic!("seed {seed}, step {k}: {e}"));
            assert!(s.q.iter().chain(s.v.iter()).all(|x| x.is_finite()));
            let centre = |i: usize| s.q.fixed_rows::<3>(7 * i).into_owned();
            for i in 0..10 {
                assert!(
                    centre(i)[2] > 0.05 - 1e-3,
                    "seed {seed}, step {k}: sphere {i} at z = {}",
                    centre(i)[2]
                );
                for j in 0..i {
                    let d = (centre(i) - centre(j)).norm();
                    assert!(
                        d > 0.1 - 1e-3,
                        "seed {seed}, step {k}: spheres {i}, {j} at {d}"
                    );
                }
            }
            // the top sphere (body 9) has fallen well below its initial height (1.0 m)
            toppled |= s.q[7 * 9 + 2] < 0.5;
        }
        assert!(toppled, "seed {seed}: the stack did not topple in 2 s");
    }
}
