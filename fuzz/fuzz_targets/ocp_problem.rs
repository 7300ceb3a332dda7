//! Fuzz target: the problem files of `nonsmooth ocp` (`ModelProblem`), parsed and validated
//! but never solved. Any text must give a problem or a typed error, never a panic.
//!
//! A problem file names its model file (`[ocp] model = "hopper.toml"`); the target never reads
//! files: it gives the parser the shipped example model of that name (the models the example
//! problems use), or the particle when the name is none of them.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nonsmooth_core::Model;
use nonsmooth_ocp::problem::ModelProblem;
use std::sync::OnceLock;

const MODELS: [(&str, &str); 5] = [
    (
        "particle.toml",
        include_str!("../../examples/particle.toml"),
    ),
    ("hopper.toml", include_str!("../../examples/hopper.toml")),
    (
        "ball_on_ground.toml",
        include_str!("../../examples/ball_on_ground.toml"),
    ),
    (
        "ball_on_slope.toml",
        include_str!("../../examples/ball_on_slope.toml"),
    ),
    (
        "box_on_ground.toml",
        include_str!("../../examples/box_on_ground.toml"),
    ),
];

fn models() -> &'static Vec<(&'static str, Model)> {
    static CELL: OnceLock<Vec<(&'static str, Model)>> = OnceLock::new();
    CELL.get_or_init(|| {
        MODELS
            .iter()
            .filter_map(|(name, src)| Some((*name, Model::from_toml_str(src, Some(name)).ok()?)))
            .collect()
    })
}

/// The model file the problem names in `[ocp] model`, if the text is TOML and names one.
fn model_name(text: &str) -> Option<String> {
    let table: toml::Table = text.parse().ok()?;
    Some(table.get("ocp")?.get("model")?.as_str()?.to_string())
}

fuzz_target!(|text: &str| {
    let models = models();
    let Some((_, fallback)) = models.first() else {
        return;
    };
    let named = model_name(text);
    let model = models
        .iter()
        .find(|(name, _)| named.as_deref() == Some(*name))
        .map_or(fallback, |(_, m)| m);
    let _ = ModelProblem::with_model(text, Some("fuzz/ocp.toml"), model.clone());
});
