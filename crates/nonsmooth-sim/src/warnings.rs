//! What a simulation leaves out of a model, said before it runs: what its import left out
//! ([`Model::import_warnings`]), the collision geometry's
//! warnings ([`Model::geometry_warnings`]: pairs no narrow phase handles, meshes on moving
//! bodies, open meshes) and a material's restitution that the stepper does not apply (its
//! contacts end inelastic or follow the compliant law).

use crate::Stepper;
use nonsmooth_core::Model;

/// Warnings about `model` under `stepper`, one line each, naming the colliders or the
/// material.
pub fn model_warnings(model: &Model, stepper: &dyn Stepper) -> Vec<String> {
    let mut out = model.import_warnings.clone();
    out.extend(model.geometry_warnings());
    if !stepper.honours_restitution() {
        out.extend(restitution_warnings(model, stepper));
    }
    out
}

/// The materials whose restitution `stepper` ignores.
fn restitution_warnings(model: &Model, stepper: &dyn Stepper) -> Vec<String> {
    let materials = model
        .materials
        .iter()
        .map(|m| (m.name.clone(), m.restitution))
        .chain(model.pair_overrides.iter().map(|p| {
            (
                format!(
                    "{} (pair {} / {})",
                    p.material.name,
                    model.colliders[p.collider_a].name,
                    model.colliders[p.collider_b].name
                ),
                p.material.restitution,
            )
        }));
    materials
        .filter_map(|(name, e)| {
            e.filter(|e| *e > 0.0).map(|e| {
                format!(
                    "stepper `{}` ignores the restitution e = {e} of material `{name}`: its \
                     impacts are inelastic (or follow the compliant law); use `anitescu-potra` \
                     for Newton restitution",
                    stepper.name()
                )
            })
        })
        .collect()
}
