//! Fuzz target: the URDF importer. Any text must give a model or a typed error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nonsmooth_core::{ContactSnapshot, Model, UrdfOptions};

fuzz_target!(|src: &str| {
    if let Ok(model) = Model::from_urdf_str(src, Some("fuzz.urdf"), &UrdfOptions::default()) {
        if model.nv() <= 64 {
            let _ = ContactSnapshot::from_state(&model, &model.initial_state);
        }
    }
});
