//! Fuzz target: the MJCF (MuJoCo XML) importer. Any text must give a model or a typed error,
//! never a panic; a model that parses must also give a snapshot (or a typed error) at its
//! initial state. The text is named as a file of `examples/mjcf/`, so that the seeds' relative
//! mesh paths (`meshdir="../meshes"`) resolve to the shipped meshes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nonsmooth_core::io::MjcfOptions;
use nonsmooth_core::{ContactSnapshot, Model};

const NAME: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/mjcf/fuzz.xml");

fuzz_target!(|src: &str| {
    if let Ok(model) = Model::from_mjcf_str(src, Some(NAME), &MjcfOptions::default()) {
        if model.nv() <= 64 {
            let _ = ContactSnapshot::from_state(&model, &model.initial_state);
        }
    }
});
