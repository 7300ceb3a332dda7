//! What a simulation leaves out of a model, said before it runs: what its import left out
//! ([`Model::import_warnings`]), the collision geometry's
//! warnings ([`Model::geometry_warnings`]: pairs no narrow phase handles, meshes on moving
//! bodies, open meshes), colliders that start inside each other, and a material's
//! restitution that the stepper does not apply (its contacts end inelastic or follow the
//! compliant law).

use crate::stepper::Stepper;
use nonsmooth_core::Model;

/// Warnings about `model` under `stepper`, one line each, naming the colliders or the
/// material: [`load_warnings`], then [`stepper_warnings`].
pub fn model_warnings(model: &Model, stepper: &dyn Stepper) -> Vec<String> {
    let mut out = load_warnings(model);
    out.extend(stepper_warnings(model, stepper));
    out
}

/// What the model itself leaves out, whatever runs it (said when it is loaded): its import's
/// warnings, the collision geometry's, and colliders that start inside each other.
pub fn load_warnings(model: &Model) -> Vec<String> {
    let mut out = model.import_warnings.clone();
    out.extend(model.geometry_warnings());
    out.extend(penetration_warnings(model));
    out
}

/// What `stepper` leaves out of `model` (said when a run or a simulator chooses it): a
/// material's restitution the scheme does not apply.
pub fn stepper_warnings(model: &Model, stepper: &dyn Stepper) -> Vec<String> {
    if stepper.honours_restitution() {
        Vec::new()
    } else {
        restitution_warnings(model, stepper)
    }
}

/// Depth (m) beyond which a collider pair that starts inside each other is reported.
pub const PENETRATION_WARNING_DEPTH: f64 = 1e-3;

/// The collider pairs that start more than [`PENETRATION_WARNING_DEPTH`] inside each other at
/// the model's initial state, deepest first (a rigid stepper pushes them apart at up to
/// [`crate::MAX_DEPENETRATION_SPEED`], a compliant one with its springs).
fn penetration_warnings(model: &Model) -> Vec<String> {
    let state = &model.initial_state;
    // (colliders, gap) of every contact at the initial state: through the per-body view
    // where the model allows it (no dense matrix of size nv for a pile)
    let contacts: Vec<((usize, usize), f64)> =
        match nonsmooth_core::snapshot::BlockSnapshot::from_state(model, state) {
            Ok(Some(snap)) => snap
                .contacts
                .iter()
                .map(|c| ((c.collider_a, c.collider_b), c.gap))
                .collect(),
            _ => match nonsmooth_core::ContactSnapshot::<f64>::from_state(model, state) {
                Ok(snap) => snap
                    .contacts
                    .iter()
                    .map(|c| ((c.collider_a, c.collider_b), c.gap))
                    .collect(),
                Err(_) => return Vec::new(),
            },
        };
    let mut deepest: Vec<((usize, usize), f64)> = Vec::new();
    for (pair, gap) in contacts
        .into_iter()
        .filter(|(_, gap)| *gap < -PENETRATION_WARNING_DEPTH)
    {
        match deepest.iter_mut().find(|(p, _)| *p == pair) {
            Some((_, d)) => *d = d.min(gap),
            None => deepest.push((pair, gap)),
        }
    }
    deepest.sort_by(|a, b| a.1.total_cmp(&b.1));
    let name = |i: usize| model.colliders.get(i).map_or("?", |c| c.name.as_str());
    const SHOWN: usize = 5;
    let mut out: Vec<String> = deepest
        .iter()
        .take(SHOWN)
        .map(|((a, b), gap)| {
            format!(
                "colliders `{}` and `{}` start {:.3} m inside each other at t = {}: a rigid \
                 stepper pushes them apart at up to {} m/s (move the body or its pose to start \
                 in contact instead)",
                name(*a),
                name(*b),
                -gap,
                state.t,
                crate::free_motion::MAX_DEPENETRATION_SPEED
            )
        })
        .collect();
    if deepest.len() > SHOWN {
        out.push(format!(
            "{} more collider pairs start inside each other",
            deepest.len() - SHOWN
        ));
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
