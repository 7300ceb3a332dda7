//! Fuzz target: the model files of `nonsmooth stability` up to the solve: the model, the planar
//! body on two contacts read from it (`PlanarBody::from_model`) and its static check, after the
//! sweep parameters a comment names. Any text must give a value or a typed error, never a
//! panic; no SDP is solved.
//!
//! Sweep axes are taken from the comment lines that hold `--grid` (as the example files show
//! their command lines): every word after it is a `PATH=LO:HI:N` or `PATH=V1,V2,…` axis,
//! parsed as `nonsmooth stability --grid` does, and the model is built at the first value of
//! each axis (`Model::from_toml_str_with`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use nonsmooth_core::{Model, ParameterAxis, ParameterPath};
use nonsmooth_sos::model::PlanarBody;

/// The words after `--grid` on the comment lines of `text`.
fn grid_words(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| l.trim_start().starts_with('#'))
        .filter_map(|l| l.split_once("--grid").map(|(_, rest)| rest))
        .flat_map(str::split_whitespace)
        .take(8)
        .collect()
}

fuzz_target!(|text: &str| {
    let mut parameters: Vec<(ParameterPath, f64)> = Vec::new();
    for word in grid_words(text) {
        let Ok(axis) = word.parse::<ParameterAxis>() else {
            return;
        };
        assert!(!axis.values.is_empty(), "an axis has values");
        assert!(
            axis.values.iter().all(|v| v.is_finite()),
            "finite axis values"
        );
        parameters.push((axis.path, axis.values[0]));
    }
    let Ok(model) = Model::from_toml_str_with(text, Some("fuzz.toml"), &parameters) else {
        return;
    };
    if let Ok(body) = PlanarBody::from_model(&model) {
        let _ = body.static_check();
    }
});
