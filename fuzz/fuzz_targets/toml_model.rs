//! Fuzz target: the TOML model parser. Any text must give a model or a typed error, never a
//! panic; a model that parses must also give a snapshot (or a typed error) at its initial state.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nonsmooth_core::{ContactSnapshot, Model};

fuzz_target!(|src: &str| {
    if let Ok(model) = Model::from_toml_str(src, Some("fuzz.toml")) {
        if model.nv() <= 64 {
            let _ = ContactSnapshot::from_state(&model, &model.initial_state);
        }
    }
});
