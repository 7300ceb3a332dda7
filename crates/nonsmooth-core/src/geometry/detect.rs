//! The exhaustive collider-pair dispatcher.

use super::primitives::{
    box_heightmap, box_plane, point_heightmap, point_plane, point_sphere, sphere_box,
    sphere_heightmap, sphere_plane, sphere_sphere,
};
use super::{lift_isometry, ContactGeometry};
use crate::error::{Location, ModelError};
use crate::scalar::{lift, lift3, real_part};
use crate::{Dimension, Model, Scalar, Shape};
use nalgebra::{Isometry3, Point3, Vector3};

/// Contacts of one shape pair: `(feature of A, geometry)`.
pub type FeatureContacts<T> = Vec<(usize, ContactGeometry<T>)>;

/// One contact found by [`detect_contacts`] between colliders `collider_a` (A) and
/// `collider_b` (B); the geometry's normal points from B toward A.
#[derive(Debug, Clone, PartialEq)]
pub struct PairContact<T: Scalar> {
    /// Index of collider A in [`Model::colliders`].
    pub collider_a: usize,
    /// Index of collider B in [`Model::colliders`].
    pub collider_b: usize,
    /// Feature of A that touches: the box corner index (see
    /// [`box_corners`](super::box_corners)), the index in a `Points` set, 0 otherwise.
    pub feature: usize,
    /// Gap, witness points and normal.
    pub geometry: ContactGeometry<T>,
}

/// World poses of all colliders given the world poses of the bodies
/// (`X_collider = X_body · collider.pose`, or `collider.pose` for world colliders).
///
/// # Errors
/// [`ModelError::Topology`] when a collider names a body without a pose.
pub fn collider_world_poses<T: Scalar>(
    model: &Model,
    body_poses: &[Isometry3<T>],
) -> Result<Vec<Isometry3<T>>, ModelError> {
    model
        .colliders
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let local = lift_isometry::<T>(&c.pose);
            match c.body {
                None => Ok(local),
                Some(b) => {
                    body_poses
                        .get(b)
                        .map(|x| x * local)
                        .ok_or_else(|| ModelError::Topology {
                            location: Location::field(format!("colliders[{i}].body")),
                            reason: format!(
                            "collider `{}` is attached to body {b}, but only {} bodies have a pose",
                            c.name,
                            body_poses.len()
                        ),
                        })
                }
            }
        })
        .collect()
}

/// Role of a shape in a pair: the shape of lower rank is A, the other B (ties: the first
/// collider is A). Points 0, sphere 1, box, capsule, cylinder and convex hull 2, plane,
/// heightmap and mesh 3.
pub(crate) fn rank(shape: &Shape) -> u8 {
    match shape {
        Shape::Point | Shape::Points { .. } => 0,
        Shape::Sphere { .. } => 1,
        Shape::Box { .. } | Shape::Capsule { .. } | Shape::Cylinder { .. } | Shape::Convex(_) => 2,
        Shape::Plane { .. } | Shape::HeightMap(_) | Shape::Mesh(_) => 3,
    }
}

/// Whether [`pair_contacts`] takes the pair (in either order): the closed forms, and every
/// pair of the general narrow phase (parry) except two zero-volume shapes (points) and two
/// unbounded ones (planes). Height maps pair only with points, spheres and boxes.
pub fn pair_supported(a: &Shape, b: &Shape) -> bool {
    let (a, b) = if rank(b) < rank(a) { (b, a) } else { (a, b) };
    closed_form(a, b) || super::parry::handles(a, b)
}

/// The pairs with a closed form (A first in rank order).
fn closed_form(a: &Shape, b: &Shape) -> bool {
    use Shape::*;
    matches!(
        (a, b),
        (
            Sphere { .. },
            Plane { .. } | Box { .. } | Sphere { .. } | HeightMap(_)
        ) | (Box { .. }, Plane { .. } | HeightMap(_))
            | (
                Point | Points { .. },
                Plane { .. } | Sphere { .. } | Box { .. } | HeightMap(_)
            )
    )
}

/// Contacts between two shapes with world poses, A = (`shape_a`, `pose_a`) and
/// B = (`shape_b`, `pose_b`), returned as `(feature of A, geometry)` without any gap filter.
///
/// Closed forms (A first, scalar-generic, exact derivatives): Sphere–Plane, Sphere–Sphere,
/// Sphere–Box, Sphere–HeightMap, Box–Plane, Box–HeightMap, Point–Plane, Point–Sphere,
/// Point–Box, Point–HeightMap, and Points–Plane/Sphere/Box/HeightMap (each point its own
/// contact). Every other pair with a capsule, cylinder, convex hull, mesh or two boxes goes
/// to the general narrow phase on parry (f64; its contacts enter generic code as constants),
/// which reports the contacts within `prediction` of touching (the closed forms report every
/// feature; callers filter by gap). `None` for the pairs nothing handles ([`pair_supported`]:
/// two points, two planes, a height map with a capsule, cylinder, hull or mesh) and for a
/// supported pair given in the reverse order (A must come first in the order points,
/// sphere, box/capsule/cylinder/convex, plane/heightmap/mesh); [`detect_contacts`] puts every
/// pair in this order itself.
pub fn pair_contacts<T: Scalar>(
    dimension: Dimension,
    shape_a: &Shape,
    pose_a: &Isometry3<T>,
    shape_b: &Shape,
    pose_b: &Isometry3<T>,
    prediction: f64,
) -> Option<FeatureContacts<T>> {
    if !closed_form(shape_a, shape_b) {
        if rank(shape_b) < rank(shape_a) {
            return None;
        }
        let found = super::parry::contacts(
            dimension,
            shape_a,
            &real_isometry(pose_a),
            shape_b,
            &real_isometry(pose_b),
            prediction,
        )?;
        return Some(
            found
                .into_iter()
                .map(|(k, g)| {
                    (
                        k,
                        ContactGeometry {
                            gap: lift(g.gap),
                            point_a: lift3(&g.point_a),
                            point_b: lift3(&g.point_b),
                            normal: lift3(&g.normal),
                        },
                    )
                })
                .collect(),
        );
    }
    let origin_a = pose_a.translation.vector;
    let origin_b = pose_b.translation.vector;
    match (shape_a, shape_b) {
        (Shape::Sphere { radius }, Shape::Plane { normal }) => {
            let n = pose_b.rotation * lift3::<T>(normal);
            Some(vec![(
                0,
                sphere_plane(&origin_a, lift(*radius), &origin_b, &n),
            )])
        }
        (Shape::Sphere { radius }, Shape::Box { half_extents }) => Some(vec![(
            0,
            sphere_box(dimension, &origin_a, lift(*radius), pose_b, half_extents),
        )]),
        (Shape::Sphere { radius: ra }, Shape::Sphere { radius: rb }) => Some(vec![(
            0,
            sphere_sphere(dimension, &origin_a, lift(*ra), &origin_b, lift(*rb)),
        )]),
        (Shape::Sphere { radius }, Shape::HeightMap(map)) => Some(
            sphere_heightmap(dimension, &origin_a, lift(*radius), map, pose_b)
                .map(|g| vec![(0, g)])
                .unwrap_or_default(),
        ),
        (Shape::Box { half_extents }, Shape::Plane { normal }) => {
            let n = pose_b.rotation * lift3::<T>(normal);
            Some(box_plane(dimension, pose_a, half_extents, &origin_b, &n))
        }
        (Shape::Box { half_extents }, Shape::HeightMap(map)) => {
            Some(box_heightmap(dimension, pose_a, half_extents, map, pose_b))
        }
        (Shape::Point | Shape::Points { .. }, _) => {
            let points: Vec<Vector3<T>> = match shape_a {
                Shape::Points { points } => points
                    .iter()
                    .map(|p| (pose_a * Point3::from(lift3::<T>(p))).coords)
                    .collect(),
                _ => vec![origin_a],
            };
            let one = |p: &Vector3<T>| -> Option<Option<ContactGeometry<T>>> {
                match shape_b {
                    Shape::Plane { normal } => {
                        let n = pose_b.rotation * lift3::<T>(normal);
                        Some(Some(point_plane(p, &origin_b, &n)))
                    }
                    Shape::Sphere { radius } => {
                        Some(Some(point_sphere(dimension, p, &origin_b, lift(*radius))))
                    }
                    Shape::Box { half_extents } => Some(Some(sphere_box(
                        dimension,
                        p,
                        T::zero(),
                        pose_b,
                        half_extents,
                    ))),
                    Shape::HeightMap(map) => Some(point_heightmap(dimension, p, map, pose_b)),
                    _ => None,
                }
            };
            let mut out = Vec::with_capacity(points.len());
            for (k, p) in points.iter().enumerate() {
                if let Some(g) = one(p)? {
                    out.push((k, g));
                }
            }
            Some(out)
        }
        _ => None,
    }
}

/// [`pair_contacts`] for two colliders in either order: returns `(first_is_a, contacts)`
/// where `first_is_a` tells whether the first argument plays A (see [`rank`]).
fn pair_contacts_any_order<T: Scalar>(
    dimension: Dimension,
    shape_1: &Shape,
    pose_1: &Isometry3<T>,
    shape_2: &Shape,
    pose_2: &Isometry3<T>,
    prediction: f64,
) -> Option<(bool, FeatureContacts<T>)> {
    if rank(shape_2) < rank(shape_1) {
        pair_contacts(dimension, shape_2, pose_2, shape_1, pose_1, prediction).map(|c| (false, c))
    } else {
        pair_contacts(dimension, shape_1, pose_1, shape_2, pose_2, prediction).map(|c| (true, c))
    }
}

/// The real part of an isometry (the value of a dual-number pose).
fn real_isometry<T: Scalar>(iso: &Isometry3<T>) -> Isometry3<f64> {
    let t = iso.translation.vector.map(real_part);
    let q = iso.rotation.quaternion();
    Isometry3::from_parts(
        nalgebra::Translation3::from(t),
        nalgebra::UnitQuaternion::new_unchecked(nalgebra::Quaternion::new(
            real_part(q.w),
            real_part(q.i),
            real_part(q.j),
            real_part(q.k),
        )),
    )
}

/// Contact detection margins: collider pair (i, j) is a contact when its gap is at most
/// `base + extra[i] + extra[j]` (an empty `extra` adds nothing). Steppers widen the margin of
/// fast colliders by the distance they can travel in one step
/// ([`ContactMargins::speculative`]), so that no contact is stepped over.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ContactMargins {
    /// Margin of every pair (m), the model's [`Model::contact_margin`].
    pub base: f64,
    /// Extra margin per collider (m), or empty.
    pub extra: Vec<f64>,
    /// A snapshot built with these margins adds to `extra` the distance each collider travels
    /// in this time (s) at the snapshot's velocities
    /// ([`crate::snapshot::velocity_margins`]), and keeps the joint-limit rows a joint can
    /// reach in this time at its velocity; 0 adds nothing.
    pub travel_time: f64,
}

impl ContactMargins {
    /// The same margin for every pair.
    pub fn uniform(base: f64) -> Self {
        ContactMargins {
            base,
            ..Default::default()
        }
    }

    /// `base` for every pair, widened by the distance each collider travels in a step of `h`
    /// at the velocities of the snapshot that uses them (speculative contacts).
    pub fn speculative(base: f64, h: f64) -> Self {
        ContactMargins {
            base,
            travel_time: h,
            ..Default::default()
        }
    }

    /// Extra margin of collider `i`.
    pub fn extra(&self, i: usize) -> f64 {
        self.extra.get(i).copied().unwrap_or(0.0)
    }

    /// Margin of the pair (i, j).
    pub fn pair(&self, i: usize, j: usize) -> f64 {
        self.base + self.extra(i) + self.extra(j)
    }
}

/// Enumerates every collider pair of `model` and returns the contacts with gap φ ≤ `margin`,
/// ordered by (first collider index, second collider index, feature).
///
/// Skipped pairs: colliders on the same body, two world colliders, pairs listed in
/// [`Model::excluded_pairs`] (in either order), and the unsupported shape combinations listed
/// at [`pair_contacts`]. `collider_poses` are world poses, e.g. from
/// [`collider_world_poses`].
///
/// Candidate pairs come from the broad phase ([`super::broad_phase::candidate_pairs`]:
/// sweep and prune, jointed parent–child pairs and filtered pairs left out).
///
/// # Errors
/// [`ModelError::DimensionMismatch`] when `collider_poses` does not have one pose per collider.
pub fn detect_contacts<T: Scalar>(
    model: &Model,
    collider_poses: &[Isometry3<T>],
    margin: T,
) -> Result<Vec<PairContact<T>>, ModelError> {
    detect_pairs(
        model,
        collider_poses,
        &ContactMargins::uniform(real_part(margin)),
    )
}

/// [`detect_contacts`] with a margin per pair ([`ContactMargins`]).
///
/// # Errors
/// As [`detect_contacts`].
pub fn detect_contacts_within<T: Scalar>(
    model: &Model,
    collider_poses: &[Isometry3<T>],
    margins: &ContactMargins,
) -> Result<Vec<PairContact<T>>, ModelError> {
    detect_pairs(model, collider_poses, margins)
}

/// The pair loop of [`detect_contacts`] with the margin of pair (i, j) from `margin`.
fn detect_pairs<T: Scalar>(
    model: &Model,
    collider_poses: &[Isometry3<T>],
    margins: &ContactMargins,
) -> Result<Vec<PairContact<T>>, ModelError> {
    let n = model.colliders.len();
    if collider_poses.len() != n {
        return Err(ModelError::DimensionMismatch {
            location: Location::field("collider_poses"),
            expected: n,
            got: collider_poses.len(),
        });
    }
    let real_poses: Vec<Isometry3<f64>> = collider_poses.iter().map(real_isometry).collect();
    let mut out = Vec::new();
    for (i, j) in super::broad_phase::candidate_pairs(model, &real_poses, margins) {
        let (ci, cj) = (&model.colliders[i], &model.colliders[j]);
        let margin = margins.pair(i, j);
        let Some((i_is_a, contacts)) = pair_contacts_any_order(
            model.dimension,
            &ci.shape,
            &collider_poses[i],
            &cj.shape,
            &collider_poses[j],
            margin,
        ) else {
            continue;
        };
        let (a, b) = if i_is_a { (i, j) } else { (j, i) };
        let bound: T = lift(margin);
        out.extend(contacts.into_iter().filter(|(_, g)| g.gap <= bound).map(
            |(feature, geometry)| PairContact {
                collider_a: a,
                collider_b: b,
                feature,
                geometry,
            },
        ));
    }
    Ok(out)
}
