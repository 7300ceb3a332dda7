//! Closed-form contact primitives (world frame). A is always the first shape named, B the
//! second; the normal points from B toward A (see the module docs of
//! [`geometry`](crate::geometry)).

use super::heightmap::{heightmap_profile_eval, heightmap_surface_eval};
use super::ContactGeometry;
use crate::scalar::lift;
use crate::{Dimension, HeightMap, Scalar};
use nalgebra::{Isometry3, Point3, Vector3};

/// Point `p` (A) against the plane through `origin` with outward unit normal `n` (B):
/// φ = nᵀ(p − origin), `p_a = p`, `p_b = p − φ n` (orthogonal projection on the plane).
pub fn point_plane<T: Scalar>(
    p: &Vector3<T>,
    origin: &Vector3<T>,
    n: &Vector3<T>,
) -> ContactGeometry<T> {
    let gap = n.dot(&(p - origin));
    ContactGeometry {
        gap,
        point_a: *p,
        point_b: p - n * gap,
        normal: *n,
    }
}

/// Sphere (A, centre `c`, radius `r`) against the plane through `origin` with outward unit
/// normal `n` (B): φ = nᵀ(c − origin) − r, `p_a = c − r n`, `p_b = c − (φ + r) n`.
pub fn sphere_plane<T: Scalar>(
    c: &Vector3<T>,
    r: T,
    origin: &Vector3<T>,
    n: &Vector3<T>,
) -> ContactGeometry<T> {
    let centre_gap = n.dot(&(c - origin));
    ContactGeometry {
        gap: centre_gap - r,
        point_a: c - n * r,
        point_b: c - n * centre_gap,
        normal: *n,
    }
}

/// Fallback normal for coincident centres: ŷ in planar models (the "up" of a planar model
/// with gravity (0, −g, 0)), ẑ in spatial ones.
fn fallback_normal<T: Scalar>(dimension: Dimension) -> Vector3<T> {
    match dimension {
        Dimension::Planar => Vector3::y(),
        Dimension::Spatial => Vector3::z(),
    }
}

/// Sphere A (centre `c_a`, radius `r_a`) against sphere B (`c_b`, `r_b`) (disks in planar
/// models): `n = (c_a − c_b)/|c_a − c_b|`, φ = |c_a − c_b| − r_a − r_b, `p_a = c_a − r_a n`,
/// `p_b = c_b + r_b n`. For coincident centres the normal is ŷ (planar) or ẑ (spatial).
pub fn sphere_sphere<T: Scalar>(
    dimension: Dimension,
    c_a: &Vector3<T>,
    r_a: T,
    c_b: &Vector3<T>,
    r_b: T,
) -> ContactGeometry<T> {
    let d = c_a - c_b;
    let dist = d.norm();
    let normal = if dist > T::zero() {
        d / dist
    } else {
        fallback_normal(dimension)
    };
    ContactGeometry {
        gap: dist - r_a - r_b,
        point_a: c_a - normal * r_a,
        point_b: c_b + normal * r_b,
        normal,
    }
}

/// Point `p` (A) against sphere B (centre `c`, radius `r`): `n = (p − c)/|p − c|`,
/// φ = |p − c| − r, `p_b = c + r n`. Coincident point and centre use the fallback normal of
/// [`sphere_sphere`].
pub fn point_sphere<T: Scalar>(
    dimension: Dimension,
    p: &Vector3<T>,
    c: &Vector3<T>,
    r: T,
) -> ContactGeometry<T> {
    sphere_sphere(dimension, p, T::zero(), c, r)
}

/// World positions of the corners of a box with pose `pose` and half-extents `h`: 4 corners
/// `(±h_x, ±h_y, 0)` in planar models, 8 corners `(±h_x, ±h_y, ±h_z)` in spatial ones.
/// Corner `k` has sign −/+ on x for bit 0 of `k`, on y for bit 1 and on z for bit 2.
pub fn box_corners<T: Scalar>(
    dimension: Dimension,
    pose: &Isometry3<T>,
    h: &Vector3<f64>,
) -> Vec<Vector3<T>> {
    let count = match dimension {
        Dimension::Planar => 4,
        Dimension::Spatial => 8,
    };
    (0..count)
        .map(|k: usize| {
            let sign = |bit: usize| if k & (1 << bit) != 0 { 1.0 } else { -1.0 };
            let z = match dimension {
                Dimension::Planar => 0.0,
                Dimension::Spatial => sign(2) * h.z,
            };
            let local = Point3::new(lift::<T>(sign(0) * h.x), lift(sign(1) * h.y), lift(z));
            (pose * local).coords
        })
        .collect()
}

/// Box A against the plane (`origin`, unit normal `n`) B: every corner of
/// [`box_corners`] is its own point–plane contact ([`point_plane`]), returned with its corner
/// index. All corners are returned; the caller filters by gap.
pub fn box_plane<T: Scalar>(
    dimension: Dimension,
    pose: &Isometry3<T>,
    h: &Vector3<f64>,
    origin: &Vector3<T>,
    n: &Vector3<T>,
) -> Vec<(usize, ContactGeometry<T>)> {
    box_corners(dimension, pose, h)
        .iter()
        .enumerate()
        .map(|(k, c)| (k, point_plane(c, origin, n)))
        .collect()
}

/// Point `p` (A, world) against a height field B with world pose `map_pose`.
///
/// Spatial: in the map frame, with `h`, `n = (−h_x, −h_y, 1)/√(1 + |∇h|²)` interpolated at
/// the point's (x, y) (bilinear), the gap is the **first-order** distance to the tangent
/// plane of the surface below the point: φ = (z − h)·n_z; `p_b = p − φ n`. It is exact for
/// a planar patch and agrees with the Euclidean distance to first order in φ otherwise.
/// Planar: the profile y = h(x) of the first row, φ = (y − h)·n_y with
/// `n = (−h', 1, 0)/√(1 + h'²)`. Points outside the grid extent give `None` (no contact).
pub fn point_heightmap<T: Scalar>(
    dimension: Dimension,
    p: &Vector3<T>,
    map: &HeightMap,
    map_pose: &Isometry3<T>,
) -> Option<ContactGeometry<T>> {
    let (local_gap, n_local) = heightmap_gap(dimension, p, map, map_pose)?;
    let n = map_pose.rotation * n_local;
    Some(ContactGeometry {
        gap: local_gap,
        point_a: *p,
        point_b: p - n * local_gap,
        normal: n,
    })
}

/// First-order gap of the world point `p` above the height field, and the local normal.
fn heightmap_gap<T: Scalar>(
    dimension: Dimension,
    p: &Vector3<T>,
    map: &HeightMap,
    map_pose: &Isometry3<T>,
) -> Option<(T, Vector3<T>)> {
    let local = map_pose.inverse_transform_point(&Point3::from(*p));
    match dimension {
        Dimension::Planar => {
            let s = heightmap_profile_eval(map, local.x)?;
            Some(((local.y - s.height) * s.normal.y, s.normal))
        }
        Dimension::Spatial => {
            let s = heightmap_surface_eval(map, local.x, local.y)?;
            Some(((local.z - s.height) * s.normal.z, s.normal))
        }
    }
}

/// Sphere A (centre `c`, radius `r`) against a height field B: the first-order centre gap
/// `φ_c` of [`point_heightmap`] evaluated at the centre, φ = φ_c − r, `p_a = c − r n`,
/// `p_b = c − φ_c n`. Exact on planar patches; `None` when the centre is outside the grid.
pub fn sphere_heightmap<T: Scalar>(
    dimension: Dimension,
    c: &Vector3<T>,
    r: T,
    map: &HeightMap,
    map_pose: &Isometry3<T>,
) -> Option<ContactGeometry<T>> {
    let (centre_gap, n_local) = heightmap_gap(dimension, c, map, map_pose)?;
    let n = map_pose.rotation * n_local;
    Some(ContactGeometry {
        gap: centre_gap - r,
        point_a: c - n * r,
        point_b: c - n * centre_gap,
        normal: n,
    })
}

/// Box A against a height field B: each corner of [`box_corners`] that lies over the grid is
/// its own [`point_heightmap`] contact, returned with its corner index.
pub fn box_heightmap<T: Scalar>(
    dimension: Dimension,
    pose: &Isometry3<T>,
    h: &Vector3<f64>,
    map: &HeightMap,
    map_pose: &Isometry3<T>,
) -> Vec<(usize, ContactGeometry<T>)> {
    box_corners(dimension, pose, h)
        .iter()
        .enumerate()
        .filter_map(|(k, c)| point_heightmap(dimension, c, map, map_pose).map(|g| (k, g)))
        .collect()
}

/// Sphere A (centre `c`, radius `r`; `r = 0` for a point) against box B with world pose
/// `box_pose` and half-extents `h` (Ericson, *Real-Time Collision Detection*, §5.1.3,
/// closest point on an oriented box).
///
/// In the box frame the centre is clamped to the box. Centre outside the box: `p_b` is the
/// clamped point, `n = (c − p_b)/|c − p_b|`, φ = |c − p_b| − r. Centre inside: the face of
/// least penetration depth `d = h_i − |c_i|` is chosen (lowest axis index on ties),
/// `n = sign(c_i) e_i` (`+e_i` for `c_i = 0`), φ = −d − r, `p_b` the centre projected on that
/// face. In both cases `p_a = c − r n`. In planar models only the x and y extents count (the
/// box is a rectangle in the x–y plane; z is not clamped).
pub fn sphere_box<T: Scalar>(
    dimension: Dimension,
    c: &Vector3<T>,
    r: T,
    box_pose: &Isometry3<T>,
    h: &Vector3<f64>,
) -> ContactGeometry<T> {
    let local = box_pose.inverse_transform_point(&Point3::from(*c)).coords;
    let axes = match dimension {
        Dimension::Planar => 2,
        Dimension::Spatial => 3,
    };
    let half = Vector3::new(lift::<T>(h.x), lift(h.y), lift(h.z));
    let mut clamped = local;
    for i in 0..axes {
        clamped[i] = local[i].clamp(-half[i], half[i]);
    }
    let offset = local - clamped;
    let dist = offset.norm();
    let (n_local, p_local, centre_gap) = if dist > T::zero() {
        (offset / dist, clamped, dist)
    } else {
        let mut best = 0;
        for i in 1..axes {
            if half[i] - local[i].abs() < half[best] - local[best].abs() {
                best = i;
            }
        }
        let sign = if local[best] < T::zero() {
            -T::one()
        } else {
            T::one()
        };
        let mut n = Vector3::zeros();
        n[best] = sign;
        let mut p = local;
        p[best] = sign * half[best];
        (n, p, local[best].abs() - half[best])
    };
    let n = box_pose.rotation * n_local;
    ContactGeometry {
        gap: centre_gap - r,
        point_a: c - n * r,
        point_b: (box_pose * Point3::from(p_local)).coords,
        normal: n,
    }
}
