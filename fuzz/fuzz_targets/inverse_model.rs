//! Fuzz target: the model files of `nonsmooth inverse` up to the solve: the model and the
//! inverse-dynamics problem at its initial state (`IdProblem::from_state`: the contact
//! snapshot and the problem's checks). Any text must give a problem or a typed error, never a
//! panic; no QP or LCP is solved.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nonsmooth_control::IdProblem;
use nonsmooth_core::Model;

fuzz_target!(|text: &str| {
    let Ok(model) = Model::from_toml_str(text, Some("fuzz.toml")) else {
        return;
    };
    if model.nv() <= 64 {
        let s = &model.initial_state;
        let _ = IdProblem::from_state(&model, &s.q, &s.v, 1e-3);
    }
});
