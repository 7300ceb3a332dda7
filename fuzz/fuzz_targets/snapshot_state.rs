//! Fuzz target: `ContactSnapshot` construction from arbitrary states (NaN, huge values,
//! unnormalised quaternions, wrong lengths) of the example models. Typed errors only.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nalgebra::DVector;
use nonsmooth_core::{ContactSnapshot, Model};
use std::sync::OnceLock;

const MODELS: [&str; 5] = [
    include_str!("../../examples/bouncing_sphere.toml"),
    include_str!("../../examples/sliding_box.toml"),
    include_str!("../../examples/drumwright_stack.toml"),
    include_str!("../../examples/quadruped.toml"),
    include_str!("../../examples/impact_disks.toml"),
];

fn models() -> &'static Vec<Model> {
    static CELL: OnceLock<Vec<Model>> = OnceLock::new();
    CELL.get_or_init(|| {
        MODELS
            .iter()
            .filter_map(|src| Model::from_toml_str(src, None).ok())
            .collect()
    })
}

fuzz_target!(|data: (u8, i8, i8, Vec<f64>)| {
    let (which, dq, dv, values) = data;
    let models = models();
    if models.is_empty() {
        return;
    }
    let model = &models[which as usize % models.len()];
    let nq = (model.nq() as isize + (dq % 2) as isize).max(0) as usize;
    let nv = (model.nv() as isize + (dv % 2) as isize).max(0) as usize;
    let take = |k: usize, off: usize| {
        DVector::from_fn(k, |i, _| values.get(off + i).copied().unwrap_or(0.5))
    };
    let q = take(nq, 0);
    let v = take(nv, nq);
    if let Ok(snap) = ContactSnapshot::new(model, &q, &v, 0.0) {
        assert!(snap.mass_matrix.iter().all(|x| x.is_finite()));
    }
});
