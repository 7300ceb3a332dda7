//! Phase timing of one `drumwright` step on the settled sphere stack (issue #4 profiling):
//! `cargo run --release -p nonsmooth-sim --example stack_profile -- N STEPS [clarabel]`
//! (`clarabel`: the fast path off; `steps`: time only the steps, for instruction counts with
//! `valgrind --tool=callgrind`, differencing two values of STEPS).

use std::time::Instant;

use nonsmooth_core::snapshot::{BlockSnapshot, ContactSnapshot};

use nonsmooth_sim::scenes::sphere_stack;
use nonsmooth_sim::{DrumwrightOptions, DrumwrightStepper, Stepper};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).map_or(Ok(100), |s| s.parse())?;
    let reps: usize = args.get(2).map_or(Ok(200), |s| s.parse())?;
    let model = sphere_stack(n)?;
    let clarabel = args.get(3).is_some_and(|a| a == "clarabel");
    let mut st = DrumwrightStepper::new(DrumwrightOptions {
        fast_solver: !clarabel,
        ..Default::default()
    });
    let mut s = model.initial_state.clone();
    for _ in 0..100 {
        s = st.step(&model, &s, 0.01)?;
    }
    let steps_only = args.get(3).is_some_and(|a| a == "steps");
    if steps_only {
        for _ in 0..reps {
            s = st.step(&model, &s, 0.01)?;
        }
        std::hint::black_box(&s);
        return Ok(());
    }
    let t = Instant::now();
    for _ in 0..reps {
        std::hint::black_box(BlockSnapshot::from_state(&model, &s)?);
    }
    println!(
        "block snapshot: {:.3e} s",
        t.elapsed().as_secs_f64() / reps as f64
    );
    let t = Instant::now();
    for _ in 0..reps.min(20) {
        std::hint::black_box(ContactSnapshot::from_state(&model, &s)?);
    }
    println!(
        "dense snapshot: {:.3e} s",
        t.elapsed().as_secs_f64() / reps.min(20) as f64
    );
    let t = Instant::now();
    for _ in 0..reps {
        std::hint::black_box(st.step(&model, &s, 0.01)?);
    }
    println!(
        "step: {:.3e} s ({} fast, {} fallbacks)",
        t.elapsed().as_secs_f64() / reps as f64,
        st.last.fast_solves,
        st.last.fallbacks
    );
    Ok(())
}
