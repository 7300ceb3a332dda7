//! `nonsmooth inspect MODEL`: load, validate and describe a model.

use crate::CliError;
use clap::Args;
use nonsmooth_core::Model;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct InspectArgs {
    /// Model file (.toml, .urdf or MJCF .xml).
    pub model: PathBuf,
    /// --quiet (only validate: the exit code tells) / --json (the structure as JSON).
    #[command(flatten)]
    pub output: crate::progress::OutputFlags,
}

pub fn run(args: &InspectArgs) -> Result<ExitCode, CliError> {
    let model = Model::from_file(&args.model)?;
    if args.output.json {
        let bodies: Vec<serde_json::Value> = model
            .joints
            .iter()
            .zip(&model.bodies)
            .map(|(joint, body)| {
                serde_json::json!({
                    "name": body.name,
                    "mass": body.mass,
                    "joint": joint.name,
                    "joint_kind": format!("{:?}", joint.kind),
                    "parent": joint.parent.map(|p| model.bodies[p].name.clone()),
                })
            })
            .collect();
        let doc = serde_json::json!({
            "name": model.name,
            "dimension": format!("{:?}", model.dimension),
            "nq": model.nq(),
            "nv": model.nv(),
            "nu": model.nu(),
            "q_names": model.q_names(),
            "v_names": model.v_names(),
            "colliders": model.colliders.len(),
            "constraints": model.constraints.len(),
            "actuators": model.actuators.iter().map(|a| a.name.clone()).collect::<Vec<_>>(),
            "bodies": bodies,
        });
        outln!("{doc}");
        return Ok(ExitCode::SUCCESS);
    }
    if args.output.quiet {
        return Ok(ExitCode::SUCCESS);
    }
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
