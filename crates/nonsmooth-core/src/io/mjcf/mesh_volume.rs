//! Volume properties of a triangle mesh (a mesh geom's volume, centroid and inertia per unit
//! density; the convex hull MuJoCo's `inertia="convex"` measures instead), used by the
//! parser (a mesh's volume check) and by the mass properties of geoms.

use nalgebra::{Matrix3, Vector3};

/// Volume, centroid and inertia per unit density about the centroid of a closed,
/// outward-oriented triangle mesh (signed tetrahedra from the origin; Tonon 2004 / Mirtich
/// 1996 in closed form). `None` when its volume is not positive.
pub(crate) fn mesh_unit_properties(
    vertices: &[Vector3<f64>],
    triangles: &[[u32; 3]],
) -> Option<(f64, Vector3<f64>, Matrix3<f64>)> {
    let mut volume = 0.0;
    let mut first = Vector3::zeros();
    // Second moments ∫ x_i x_j dV.
    let mut second = Matrix3::zeros();
    for t in triangles {
        let (a, b, c) = (
            vertices[t[0] as usize],
            vertices[t[1] as usize],
            vertices[t[2] as usize],
        );
        let v = a.dot(&b.cross(&c)) / 6.0;
        volume += v;
        first += v * (a + b + c) / 4.0;
        // ∫ over the tetrahedron (0, a, b, c) of x xᵀ = v/20 (Σ p pᵀ + (Σ p)(Σ p)ᵀ).
        let s = a + b + c;
        second += v / 20.0
            * (a * a.transpose() + b * b.transpose() + c * c.transpose() + s * s.transpose());
    }
    if volume <= 0.0 || !volume.is_finite() {
        return None;
    }
    let com = first / volume;
    // Inertia about the origin: tr(S) I − S; then shift to the centroid.
    let about_origin = Matrix3::identity() * second.trace() - second;
    let inertia =
        about_origin - volume * (Matrix3::identity() * com.norm_squared() - com * com.transpose());
    Some((volume, com, inertia / volume))
}

/// The convex hull of `points` as an outward-oriented triangle mesh (empty when degenerate).
pub(crate) fn convex_hull(points: &[Vector3<f64>]) -> (Vec<Vector3<f64>>, Vec<[u32; 3]>) {
    if points.len() < 4 || points.iter().any(|p| !p.iter().all(|x| x.is_finite())) {
        return (Vec::new(), Vec::new());
    }
    let pts: Vec<parry3d_f64::math::Vector> = points
        .iter()
        .map(|p| parry3d_f64::math::Vector::new(p.x, p.y, p.z))
        .collect();
    parry3d_f64::shape::SharedShape::convex_hull(&pts)
        .and_then(|shape| shape.as_convex_polyhedron().map(|hull| hull.to_trimesh()))
        .map_or((Vec::new(), Vec::new()), |(v, t)| {
            (
                v.into_iter().map(|p| Vector3::new(p.x, p.y, p.z)).collect(),
                t,
            )
        })
}
