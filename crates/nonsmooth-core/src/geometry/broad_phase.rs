//! The broad phase: which collider pairs the narrow phase looks at. One place for every
//! snapshot (the dense [`crate::ContactSnapshot`] and the block view).
//!
//! A pair is a candidate when
//! - its colliders are on different bodies (world colliders never pair with each other),
//! - it is not in [`crate::Model::excluded_pairs`],
//! - its bodies are not parent and child of one joint (MuJoCo's `filterparent`; a body and
//!   the world are never filtered this way, so a jointed link still touches the ground),
//! - the colliders' [`crate::CollisionFilter`]s allow it,
//! - and their bounding spheres, each grown by its pair margin, overlap: sweep and prune
//!   along the axis of largest spread of the bounded colliders' centres, so that scenes of
//!   hundreds of bodies never loop over all pairs. Unbounded colliders (planes, height maps)
//!   pair with every collider that passes the other rules.

use nalgebra::Isometry3;

use super::ContactMargins;
use crate::{Model, Shape};

/// Bounding radius of a shape about its collider origin (`None` = unbounded).
pub fn bounding_radius(shape: &Shape) -> Option<f64> {
    match shape {
        Shape::Sphere { radius } => Some(*radius),
        Shape::Box { half_extents } => Some(half_extents.norm()),
        Shape::Point => Some(0.0),
        Shape::Points { points } => Some(points.iter().map(|p| p.norm()).fold(0.0, f64::max)),
        Shape::Capsule {
            radius,
            half_length,
        } => Some(radius + half_length),
        Shape::Cylinder {
            radius,
            half_length,
        } => Some(radius.hypot(*half_length)),
        Shape::Convex(hull) => Some(hull.bounding_radius()),
        Shape::Mesh(mesh) => Some(mesh.bounding_radius()),
        Shape::Plane { .. } | Shape::HeightMap(_) => None,
    }
}

/// Whether colliders `i` and `j` may ever touch (every rule but the distance).
pub fn may_touch(model: &Model, i: usize, j: usize) -> bool {
    let (ci, cj) = (&model.colliders[i], &model.colliders[j]);
    if ci.body == cj.body {
        return false;
    }
    if model
        .excluded_pairs
        .iter()
        .any(|&(a, b)| (a == i && b == j) || (a == j && b == i))
    {
        return false;
    }
    if let (Some(a), Some(b)) = (ci.body, cj.body) {
        let parent = |x: usize| model.joints.get(x).and_then(|jt| jt.parent);
        if parent(a) == Some(b) || parent(b) == Some(a) {
            return false;
        }
    }
    ci.filter.allows(&cj.filter)
}

/// The candidate pairs `(i, j)`, `i < j`, sorted, for colliders at world `poses` with the
/// contact `margins` (see the module documentation).
pub fn candidate_pairs(
    model: &Model,
    poses: &[Isometry3<f64>],
    margins: &ContactMargins,
) -> Vec<(usize, usize)> {
    let nc = model.colliders.len().min(poses.len());
    let radius: Vec<Option<f64>> = model.colliders[..nc]
        .iter()
        .map(|c| bounding_radius(&c.shape))
        .collect();
    let bounded: Vec<usize> = (0..nc).filter(|&i| radius[i].is_some()).collect();
    let mut axis = 0;
    let mut best = -1.0;
    for a in 0..3 {
        let (lo, hi) = bounded
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &i| {
                let x = poses[i].translation.vector[a];
                (lo.min(x), hi.max(x))
            });
        if hi - lo > best {
            best = hi - lo;
            axis = a;
        }
    }
    let slack = |x: f64| x + 1e-9 * (1.0 + x.abs());
    // Each collider's bounding radius grown by its extra margin.
    let grown = |i: usize| radius[i].unwrap_or(0.0) + margins.extra(i);
    let lower = |i: usize| poses[i].translation.vector[axis] - grown(i);
    let mut order = bounded;
    order.sort_by(|&a, &b| lower(a).total_cmp(&lower(b)));
    let mut pairs = Vec::new();
    for (k, &i) in order.iter().enumerate() {
        let ri = grown(i);
        let ci = poses[i].translation.vector;
        let reach = slack(ci[axis] + ri + margins.base);
        for &j in &order[k + 1..] {
            if lower(j) > reach {
                break;
            }
            let d = (poses[j].translation.vector - ci).norm();
            if d <= slack(ri + grown(j) + margins.base) {
                pairs.push((i.min(j), i.max(j)));
            }
        }
    }
    for (i, ri) in radius.iter().enumerate() {
        if ri.is_none() {
            for (j, rj) in radius.iter().enumerate() {
                if j != i && (rj.is_some() || j > i) {
                    pairs.push((i.min(j), i.max(j)));
                }
            }
        }
    }
    pairs.sort_unstable();
    pairs.dedup();
    pairs.retain(|&(i, j)| may_touch(model, i, j));
    pairs
}
