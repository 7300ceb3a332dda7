//! What a stepper leaves out of a model, said before it runs: a material's restitution that
//! the scheme does not apply (its contacts end inelastic or follow the compliant law).

use crate::Stepper;
use nonsmooth_core::Model;

/// Warnings about `model` under `stepper`, one line each, naming the material.
pub fn model_warnings(model: &Model, stepper: &dyn Stepper) -> Vec<String> {
    if stepper.honours_restitution() {
        return Vec::new();
    }
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
