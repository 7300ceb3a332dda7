//! The contact of two boxes whose faces are parallel (a box resting on a box): the incident
//! face clipped against the reference face (the face-face case of the separating-axis box
//! test; R. Smith's `dBoxBox` in ODE, E. Catto's Box2D manifold in 3D).
//!
//! The reference face is the face of one box whose outward normal is the contact normal,
//! the incident face the face of the other box most opposed to it; the incident face's
//! corners are clipped by the reference face's four side planes (Sutherland–Hodgman) and
//! every clipped point within the prediction distance above the reference face is a contact,
//! its gap the signed height above that face. Used where parry's manifold has fewer than
//! four points for two boxes with parallel faces: its clipping drops the points of an edge
//! that coincides with an edge of the other face (a tower of equal cubes).

use nalgebra::{Isometry3, Vector3};

use super::ContactGeometry;

/// Faces whose normals make a smaller angle than this (radians) count as parallel.
const PARALLEL: f64 = 1e-3;

/// The contacts of box A (half extents `half_a`, pose `pose_a`) and box B when a face of
/// each is parallel to the contact normal `normal` (unit, from B toward A), else `None`.
pub(crate) fn parallel_face_contacts(
    half_a: &Vector3<f64>,
    pose_a: &Isometry3<f64>,
    half_b: &Vector3<f64>,
    pose_b: &Isometry3<f64>,
    normal: &Vector3<f64>,
    prediction: f64,
) -> Option<Vec<ContactGeometry<f64>>> {
    // The face of each box along the normal: A's facing B (outward −normal), B's facing A.
    let (axis_a, sign_a) = facing_axis(pose_a, &-normal)?;
    let (axis_b, sign_b) = facing_axis(pose_b, normal)?;
    // The reference face is B's (outward normal `n_ref` toward A); A's face is incident.
    let n_ref = pose_b.rotation * (Vector3::ith(axis_b, 1.0) * sign_b);
    let center_ref = pose_b.translation.vector + n_ref * half_b[axis_b];
    let (u, v) = ((axis_b + 1) % 3, (axis_b + 2) % 3);
    let side = [
        (pose_b.rotation * Vector3::ith(u, 1.0), half_b[u]),
        (pose_b.rotation * Vector3::ith(v, 1.0), half_b[v]),
    ];
    let mut polygon = face_corners(half_a, pose_a, axis_a, sign_a).to_vec();
    for (dir, half) in side {
        for s in [1.0, -1.0] {
            // Keep the points with s·dir·(p − centre) ≤ half.
            let d = dir * s;
            polygon = clip(&polygon, |p| half - d.dot(&(p - center_ref)));
        }
    }
    let scale = half_a.amax().max(half_b.amax());
    let contacts: Vec<ContactGeometry<f64>> = corners_only(polygon, scale)
        .into_iter()
        .filter_map(|p| {
            let gap = n_ref.dot(&(p - center_ref));
            (gap <= prediction).then(|| ContactGeometry {
                gap,
                point_a: p,
                point_b: p - n_ref * gap,
                normal: n_ref,
            })
        })
        .collect();
    Some(contacts)
}

/// The axis and sign of the face of the box at `pose` whose outward normal is within
/// [`PARALLEL`] of `dir`, if there is one.
fn facing_axis(pose: &Isometry3<f64>, dir: &Vector3<f64>) -> Option<(usize, f64)> {
    let local = pose.rotation.inverse() * dir;
    let (axis, value) = (0..3)
        .map(|k| (k, local[k]))
        .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))?;
    (value.abs() >= PARALLEL.cos()).then_some((axis, value.signum()))
}

/// The four corners (world frame, in order around the face) of the face of the box at
/// `pose` with outward normal `sign` along `axis`.
fn face_corners(
    half: &Vector3<f64>,
    pose: &Isometry3<f64>,
    axis: usize,
    sign: f64,
) -> [Vector3<f64>; 4] {
    let (u, v) = ((axis + 1) % 3, (axis + 2) % 3);
    [(1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0), (1.0, -1.0)]
        .map(|(a, b)| {
            let mut p = Vector3::zeros();
            p[axis] = sign * half[axis];
            p[u] = a * half[u];
            p[v] = b * half[v];
            pose * nalgebra::Point3::from(p)
        })
        .map(|p| p.coords)
}

/// The polygon without the points that lie on the segment of their neighbours (clipping
/// along an edge that coincides with a side plane to rounding adds such points): its
/// corners, which carry the contact.
fn corners_only(mut polygon: Vec<Vector3<f64>>, scale: f64) -> Vec<Vector3<f64>> {
    let tol = 1e-9 * scale * scale;
    let mut i = 0;
    while polygon.len() > 2 && i < polygon.len() {
        let n = polygon.len();
        let (prev, p, next) = (polygon[(i + n - 1) % n], polygon[i], polygon[(i + 1) % n]);
        if (p - prev).cross(&(next - p)).norm() <= tol {
            polygon.remove(i);
            i = 0;
        } else {
            i += 1;
        }
    }
    polygon
}

/// Sutherland–Hodgman: the part of the closed polygon where `inside(p) ≥ 0`.
fn clip(polygon: &[Vector3<f64>], inside: impl Fn(&Vector3<f64>) -> f64) -> Vec<Vector3<f64>> {
    let mut out = Vec::with_capacity(polygon.len() + 2);
    for (i, p) in polygon.iter().enumerate() {
        let q = &polygon[(i + 1) % polygon.len()];
        let (dp, dq) = (inside(p), inside(q));
        if dp >= 0.0 {
            out.push(*p);
        }
        if (dp >= 0.0) != (dq >= 0.0) {
            out.push(p + (q - p) * (dp / (dp - dq)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{Translation3, UnitQuaternion};

    fn pose(x: f64, y: f64, z: f64, yaw: f64, roll: f64) -> Isometry3<f64> {
        Isometry3::from_parts(
            Translation3::new(x, y, z),
            UnitQuaternion::from_euler_angles(roll, 0.0, yaw),
        )
    }

    /// A cube on a larger box, shifted and turned slightly: four corners at the right
    /// heights; turned 45°: the eight points of the octagon where the squares overlap;
    /// tilted by 0.1 rad: no parallel faces.
    #[test]
    fn parallel_faces_give_the_overlap_of_the_faces() {
        let (ha, hb) = (Vector3::new(0.05, 0.05, 0.05), Vector3::new(0.2, 0.2, 0.05));
        let below = pose(0.0, 0.0, 0.0, 0.0, 0.0);
        let z = Vector3::z();
        let above = pose(0.01, -0.02, 0.0999, 1e-4, 0.0);
        let c = parallel_face_contacts(&ha, &above, &hb, &below, &z, 1e-3).expect("parallel");
        assert_eq!(c.len(), 4);
        for g in &c {
            assert!((g.gap + 1e-4).abs() < 1e-12, "{g:?}");
            assert!((g.point_b.z - 0.05).abs() < 1e-12);
            assert!((g.point_a - g.point_b - z * g.gap).norm() < 1e-12);
        }
        // Equal squares, one turned 45°: an octagon.
        let eq = Vector3::new(0.05, 0.05, 0.05);
        let turned = pose(0.0, 0.0, 0.1, std::f64::consts::FRAC_PI_4, 0.0);
        let c = parallel_face_contacts(&eq, &turned, &eq, &below, &z, 1e-3).expect("parallel");
        assert_eq!(c.len(), 8);
        for g in &c {
            assert!(g.point_a.x.abs() <= 0.05 + 1e-12 && g.point_a.y.abs() <= 0.05 + 1e-12);
        }
        let tilted = pose(0.0, 0.0, 0.1, 0.0, 0.1);
        assert!(parallel_face_contacts(&eq, &tilted, &eq, &below, &z, 1e-3).is_none());
    }
}
