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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::collider_world_poses;
    use crate::Model;

    const SRC: &str = r#"
[model]
name = "filters"
dimension = "spatial"

[[bodies]]
name = "upper"
mass = 1.0
inertia = [0.01, 0.01, 0.01]

[[bodies]]
name = "lower"
mass = 1.0
inertia = [0.01, 0.01, 0.01]

[[bodies]]
name = "free"
mass = 1.0
inertia = [0.01, 0.01, 0.01]

[[joints]]
name = "hip"
kind = "revolute"
parent = "world"
child = "upper"
placement = { xyz = [0.0, 0.0, 0.5] }

[[joints]]
name = "knee"
kind = "revolute"
parent = "upper"
child = "lower"

[[colliders]]
name = "ground"
shape = { plane = [0.0, 0.0, 1.0] }

[[colliders]]
name = "upper_shape"
body = "upper"
shape = { sphere = 0.1 }

[[colliders]]
name = "lower_shape"
body = "lower"
shape = { sphere = 0.1 }

[[colliders]]
name = "free_shape"
body = "free"
shape = { sphere = 0.1 }
group = 2
mask = 2

[initial]
q.free = [0.0, 0.0, 0.5, 1.0, 0.0, 0.0, 0.0]
"#;

    /// World poses of the colliders at the model's initial state.
    fn initial_poses(model: &Model) -> Vec<Isometry3<f64>> {
        let s = &model.initial_state;
        let kin = crate::dynamics::kinematics(model, &s.q, &s.v);
        collider_world_poses(model, &kin.poses).unwrap()
    }

    #[test]
    fn jointed_parent_child_and_filtered_pairs_are_left_out() {
        let model = Model::from_toml_str(SRC, None).unwrap();
        // upper (0) and lower (1) are parent and child: never a pair; upper and the ground
        // (world) still are; `free` (group 2, mask 2) touches neither group-1 collider.
        assert!(!may_touch(&model, 1, 2));
        assert!(may_touch(&model, 0, 1));
        assert!(!may_touch(&model, 2, 3) && !may_touch(&model, 0, 3));
        let poses = initial_poses(&model);
        let pairs = candidate_pairs(&model, &poses, &ContactMargins::uniform(1.0));
        assert!(
            pairs.contains(&(0, 1)) && pairs.contains(&(0, 2)),
            "{pairs:?}"
        );
        assert!(
            !pairs.contains(&(1, 2)) && !pairs.iter().any(|p| p.1 == 3),
            "{pairs:?}"
        );
    }

    #[test]
    fn far_apart_colliders_are_not_candidates() {
        let spheres: String = (0..50)
            .map(|k| {
                format!(
                    "\n[[bodies]]\nname = \"s{k}\"\nmass = 1.0\ninertia = [0.01, 0.01, 0.01]\n\n[[colliders]]\nname = \"c{k}\"\nbody = \"s{k}\"\nshape = {{ sphere = 0.1 }}\n"
                )
            })
            .collect();
        let init: String = (0..50)
            .map(|k| {
                format!(
                    "q.s{k} = [{}, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0]\n",
                    k as f64 * 0.19
                )
            })
            .collect();
        let src = format!(
            "[model]\nname = \"row\"\ndimension = \"spatial\"\n{spheres}\n[initial]\n{init}"
        );
        let model = Model::from_toml_str(&src, None).unwrap();
        let poses = initial_poses(&model);
        let pairs = candidate_pairs(&model, &poses, &ContactMargins::uniform(0.0));
        // Only neighbours overlap (0.19 apart, radii 0.1): 49 pairs, not 1225.
        assert_eq!(pairs.len(), 49);
        assert!(pairs.iter().all(|&(i, j)| j == i + 1));
    }
}
