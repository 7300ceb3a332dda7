//! `nonsmooth inspect MODEL`: load, validate and describe a model.

use crate::CliError;
use clap::Args;
use nonsmooth_core::Model;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct InspectArgs {
    /// Model file (.toml or .urdf).
    pub model: PathBuf,
}

pub fn run(args: &InspectArgs) -> Result<ExitCode, CliError> {
    let model = Model::from_file(&args.model)?;
    outln!(
        "model `{}` ({:?}): {} bodies, nq = {}, nv = {}, nu = {}, {} colliders, {} constraints",
        model.name,
        model.dimension,
        model.bodies.len(),
        model.nq(),
        model.nv(),
        model.nu(),
        model.colliders.len(),
        model.constraints.len()
    );
    for (joint, body) in model.joints.iter().zip(&model.bodies) {
        let parent = joint
            .parent
            .map(|p| model.bodies[p].name.as_str())
            .unwrap_or("world");
        outln!(
            "  body `{}` (m = {} kg) ← {:?} joint `{}` ← `{}`",
            body.name,
            body.mass,
            joint.kind,
            joint.name,
            parent
        );
    }
    Ok(ExitCode::SUCCESS)
}
