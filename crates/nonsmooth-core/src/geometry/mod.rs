//! Contact geometry: closed-form contact primitives, the general narrow phase on parry
//! (`parry` module: box–box, capsules, cylinders, convex hulls, meshes) and the collider-pair
//! dispatcher.
//!
//! Every routine is generic over [`Scalar`], so the same closed forms give
//! `f64` values for simulation and exact derivatives with dual numbers. Model parameters
//! (radii, half-extents, heights, collider poses) are `f64` and lifted with
//! [`lift`].
//!
//! # Conventions
//! For a pair (A, B) every primitive returns a [`ContactGeometry`] with
//! - the unit normal `n`, pointing **from B toward A** (the direction in which A must move to
//!   separate);
//! - the signed gap `φ` (≥ 0 separated, < 0 penetrating), measured along `n`;
//! - witness points `p_a` on A and `p_b` on B (world frame) with `p_a − p_b = φ n` for every
//!   primitive (exactly for the closed forms, by construction for the first-order heightmap
//!   gap).
//!
//! In planar models ([`Dimension::Planar`](crate::Dimension)) everything lives in the world
//! x–y plane: normals have zero z component, a box contributes its 4 corners (±hx, ±hy, 0)
//! and a heightmap is the profile y = h(x) given by its first row. The contact tangents are
//! built by [`tangent_basis`].

mod box_faces;
mod broad_phase;
mod detect;
mod heightmap;
mod parry;
mod primitives;
mod warnings;

pub use broad_phase::{bounding_radius, candidate_pairs, may_touch};
pub(crate) use detect::rank;
pub use detect::{
    collider_world_poses, detect_contacts, detect_contacts_within, pair_contacts, pair_supported,
    ContactMargins, FeatureContacts, PairContact,
};
pub use heightmap::{heightmap_profile_eval, heightmap_surface_eval, HeightSample};
pub use parry::{ConvexHull, MeshSource, TriangleMesh};
pub use primitives::{
    box_corners, box_heightmap, box_plane, point_heightmap, point_plane, point_sphere, sphere_box,
    sphere_heightmap, sphere_plane, sphere_sphere,
};

use crate::scalar::lift;
use crate::{Dimension, Scalar};
use nalgebra::{Isometry3, Quaternion, Translation3, UnitQuaternion, Vector3};

/// The geometric description of one contact between A and B (world frame).
#[derive(Debug, Clone, PartialEq)]
pub struct ContactGeometry<T: Scalar> {
    /// Signed gap φ along the normal: φ ≥ 0 separated, φ < 0 penetration depth.
    pub gap: T,
    /// Witness point on A (world frame).
    pub point_a: Vector3<T>,
    /// Witness point on B (world frame).
    pub point_b: Vector3<T>,
    /// Unit normal pointing from B toward A.
    pub normal: Vector3<T>,
}

impl<T: Scalar> ContactGeometry<T> {
    /// The contact point reported to solvers: the midpoint of the two witness points.
    pub fn midpoint(&self) -> Vector3<T> {
        (self.point_a + self.point_b) * lift::<T>(0.5)
    }

    /// The same contact seen from the other side: A and B swapped, normal negated.
    pub fn flipped(&self) -> Self {
        ContactGeometry {
            gap: self.gap,
            point_a: self.point_b,
            point_b: self.point_a,
            normal: -self.normal,
        }
    }
}

/// Tangent directions of a contact with unit normal `n`.
///
/// - Planar: one tangent `t = ẑ × n = (−n_y, n_x, 0)` (a counter-clockwise quarter turn of n
///   in the x–y plane), so `(t, n)` are orthonormal whenever `n` lies in the plane.
/// - Spatial: two tangents `(t₁, t₂)` from Frisvad's closed form ("Building an orthonormal
///   basis from a 3D unit vector without normalization", J. Graphics Tools 16(3), 2012):
///   with `a = 1/(1 + n_z)` and `b = −n_x n_y a`,
///   `t₁ = (1 − n_x² a, b, −n_x)`, `t₂ = (b, 1 − n_y² a, −n_y)`. The frame `(t₁, t₂, n)` is
///   right-handed and orthonormal and a smooth (hence dual-number friendly) function of `n`
///   on the whole sphere except at `n = −ẑ`, where it is singular and loses precision nearby.
///   For `n_z < −0.999` the lower-hemisphere branch of Duff et al. ("Building an orthonormal
///   basis, revisited", JCGT 6(1), 2017) is used instead: with `a = 1/(1 − n_z)`,
///   `b = n_x n_y a`, `t₁ = (1 − n_x² a, −b, n_x)`, `t₂ = (b, n_y² a − 1, −n_y)`, also
///   right-handed. The basis is thus continuous everywhere except across the small circle
///   `n_z = −0.999` around `−ẑ` (never crossed by upward-facing ground contacts or horizontal
///   wall normals). For `n = ẑ` it gives `t₁ = x̂`, `t₂ = ŷ`.
pub fn tangent_basis<T: Scalar>(dimension: Dimension, n: &Vector3<T>) -> Vec<Vector3<T>> {
    match dimension {
        Dimension::Planar => vec![Vector3::new(-n.y, n.x, T::zero())],
        Dimension::Spatial => {
            let (t1, t2) = frisvad_basis(n);
            vec![t1, t2]
        }
    }
}

/// Frisvad's orthonormal basis (see [`tangent_basis`]).
fn frisvad_basis<T: Scalar>(n: &Vector3<T>) -> (Vector3<T>, Vector3<T>) {
    let one = T::one();
    if n.z < lift::<T>(-0.999) {
        let a = one / (one - n.z);
        let b = n.x * n.y * a;
        return (
            Vector3::new(one - n.x * n.x * a, -b, n.x),
            Vector3::new(b, n.y * n.y * a - one, -n.y),
        );
    }
    let a = one / (one + n.z);
    let b = -n.x * n.y * a;
    (
        Vector3::new(one - n.x * n.x * a, b, -n.x),
        Vector3::new(b, one - n.y * n.y * a, -n.y),
    )
}

/// Lifts an `f64` isometry (a model parameter) into the scalar type `T`.
pub fn lift_isometry<T: Scalar>(iso: &Isometry3<f64>) -> Isometry3<T> {
    let t = iso.translation.vector;
    let r = iso.rotation.quaternion();
    Isometry3::from_parts(
        Translation3::new(lift(t.x), lift(t.y), lift(t.z)),
        UnitQuaternion::new_unchecked(Quaternion::new(lift(r.w), lift(r.i), lift(r.j), lift(r.k))),
    )
}
