//! The general narrow phase on `parry3d-f64`: every shape pair without a closed form (box–box,
//! anything with a capsule, cylinder, convex hull or triangle mesh). This module is the one
//! place where nalgebra values become parry's (glam) values and back.
//!
//! Contact manifolds come from parry's persistent dispatcher (several points per pair: a box
//! resting on a box gets its four corners), with the pair's margin as parry's prediction
//! distance so that speculative contacts are kept. The results are `f64`; in scalar-generic
//! code they enter as constants (no derivatives), which is why the closed forms stay where
//! inverse dynamics and optimal control differentiate them (sphere–plane, point–plane).
//!
//! In planar models the 3D manifold is projected on the x–y plane: normals lose their z
//! component, and points that coincide in x–y (the front and back corners of a box face)
//! are merged, keeping the deepest.

use std::sync::Arc;

use nalgebra::{Isometry3, Vector3};
use parry3d_f64::math::{Pose, Rotation, Vector};
use parry3d_f64::query::{ContactManifold, DefaultQueryDispatcher, PersistentQueryDispatcher};
use parry3d_f64::shape::{SharedShape, TriMesh};

use super::{ContactGeometry, FeatureContacts};
use crate::{Dimension, Shape};

fn to_vector(v: &Vector3<f64>) -> Vector {
    Vector::new(v.x, v.y, v.z)
}

fn from_vector(v: Vector) -> Vector3<f64> {
    Vector3::new(v.x, v.y, v.z)
}

fn to_pose(iso: &Isometry3<f64>) -> Pose {
    let q = iso.rotation.quaternion();
    Pose::from_parts(
        to_vector(&iso.translation.vector),
        Rotation::from_xyzw(q.i, q.j, q.k, q.w),
    )
}

/// The convex hull of a point set, with its parry shape built once.
#[derive(Clone)]
pub struct ConvexHull {
    points: Vec<Vector3<f64>>,
    shape: SharedShape,
}

impl ConvexHull {
    /// The hull of `points` (collider frame).
    ///
    /// # Errors
    /// A reason when the points are fewer than 4, not finite, or span no volume.
    pub fn new(points: Vec<Vector3<f64>>) -> Result<Self, String> {
        if points.len() < 4 {
            return Err(format!(
                "a convex hull needs at least 4 points, got {}",
                points.len()
            ));
        }
        if let Some(i) = points.iter().position(|p| !p.iter().all(|x| x.is_finite())) {
            return Err(format!("point {i} is not finite"));
        }
        let pts: Vec<Vector> = points.iter().map(to_vector).collect();
        let shape = SharedShape::convex_hull(&pts)
            .ok_or_else(|| "the points span no volume (coplanar or coincident)".to_string())?;
        Ok(ConvexHull { points, shape })
    }

    /// The points as given.
    pub fn points(&self) -> &[Vector3<f64>] {
        &self.points
    }

    /// Distance from the collider origin to the farthest point.
    pub fn bounding_radius(&self) -> f64 {
        self.points.iter().map(|p| p.norm()).fold(0.0, f64::max)
    }
}

impl std::fmt::Debug for ConvexHull {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConvexHull")
            .field("points", &self.points)
            .finish()
    }
}

impl PartialEq for ConvexHull {
    fn eq(&self, other: &Self) -> bool {
        self.points == other.points
    }
}

/// Where a mesh came from: the file as the model names it and the scale applied.
#[derive(Debug, Clone, PartialEq)]
pub struct MeshSource {
    /// Path as written in the model file (relative to the model file's directory).
    pub file: String,
    /// Per-axis scale applied to the file's vertices.
    pub scale: Vector3<f64>,
}

/// A triangle mesh (collider frame) with its parry `TriMesh` built once. A mesh on a moving
/// body collides through its convex hull ([`TriangleMesh::colliding_as_hull`], set by the
/// model loader): a triangle soup is a thin shell whose deep penetrations cannot be resolved.
#[derive(Clone)]
pub struct TriangleMesh {
    vertices: Vec<Vector3<f64>>,
    triangles: Vec<[u32; 3]>,
    source: Option<MeshSource>,
    shape: SharedShape,
    hull: Option<SharedShape>,
}

impl TriangleMesh {
    /// A mesh of `vertices` and `triangles` (indices into `vertices`).
    ///
    /// # Errors
    /// A reason when the mesh is empty, has a non-finite vertex or an index out of range.
    pub fn new(
        vertices: Vec<Vector3<f64>>,
        triangles: Vec<[u32; 3]>,
        source: Option<MeshSource>,
    ) -> Result<Self, String> {
        if triangles.is_empty() {
            return Err("empty mesh (no triangles)".into());
        }
        if let Some(i) = vertices
            .iter()
            .position(|p| !p.iter().all(|x| x.is_finite()))
        {
            return Err(format!("vertex {i} is not finite"));
        }
        if let Some(t) = triangles
            .iter()
            .position(|t| t.iter().any(|&k| k as usize >= vertices.len()))
        {
            return Err(format!(
                "triangle {t} indexes a vertex beyond the {} vertices",
                vertices.len()
            ));
        }
        let pts: Vec<Vector> = vertices.iter().map(to_vector).collect();
        let mesh = TriMesh::new(pts, triangles.clone()).map_err(|e| format!("{e}"))?;
        Ok(TriangleMesh {
            vertices,
            triangles,
            source,
            shape: SharedShape(Arc::new(mesh)),
            hull: None,
        })
    }

    /// The same mesh colliding through the convex hull of its vertices (for a mesh on a
    /// moving body).
    ///
    /// # Errors
    /// A reason when the vertices span no volume.
    pub fn colliding_as_hull(mut self) -> Result<Self, String> {
        let pts: Vec<Vector> = self.vertices.iter().map(to_vector).collect();
        self.hull = Some(SharedShape::convex_hull(&pts).ok_or_else(|| {
            "its vertices span no volume, so it has no convex hull to collide through".to_string()
        })?);
        Ok(self)
    }

    /// Whether it collides through its convex hull.
    pub fn collides_as_hull(&self) -> bool {
        self.hull.is_some()
    }
    /// The vertices.
    pub fn vertices(&self) -> &[Vector3<f64>] {
        &self.vertices
    }

    /// The triangles.
    pub fn triangles(&self) -> &[[u32; 3]] {
        &self.triangles
    }

    /// The file it was read from, if any.
    pub fn source(&self) -> Option<&MeshSource> {
        self.source.as_ref()
    }

    /// Distance from the collider origin to the farthest vertex.
    pub fn bounding_radius(&self) -> f64 {
        self.vertices.iter().map(|p| p.norm()).fold(0.0, f64::max)
    }
}

impl std::fmt::Debug for TriangleMesh {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TriangleMesh")
            .field("vertices", &self.vertices.len())
            .field("triangles", &self.triangles.len())
            .field("source", &self.source)
            .field("as_hull", &self.hull.is_some())
            .finish()
    }
}

/// Equal geometry (the source file is not compared: a saved model holds its meshes inline).
impl PartialEq for TriangleMesh {
    fn eq(&self, other: &Self) -> bool {
        self.vertices == other.vertices
            && self.triangles == other.triangles
            && self.hull.is_some() == other.hull.is_some()
    }
}

/// The parry shape of a model shape and the pose of the parry shape in the collider frame
/// (parry's cylinder has its axis along y, ours along z). `None` for shapes parry does not
/// take here (height maps, point sets: each point is a zero-radius ball of its own).
fn parry_shape(shape: &Shape) -> Option<(SharedShape, Option<Pose>)> {
    let z_axis_to_y =
        || Pose::from_rotation(Rotation::from_rotation_x(std::f64::consts::FRAC_PI_2));
    Some(match shape {
        Shape::Sphere { radius } => (SharedShape::ball(*radius), None),
        Shape::Point => (SharedShape::ball(0.0), None),
        Shape::Box { half_extents: h } => (SharedShape::cuboid(h.x, h.y, h.z), None),
        Shape::Plane { normal } => (SharedShape::halfspace(to_vector(normal)), None),
        Shape::Capsule {
            radius,
            half_length,
        } => (SharedShape::capsule_z(*half_length, *radius), None),
        Shape::Cylinder {
            radius,
            half_length,
        } => (
            SharedShape::cylinder(*half_length, *radius),
            Some(z_axis_to_y()),
        ),
        Shape::Convex(hull) => (hull.shape.clone(), None),
        Shape::Mesh(mesh) => (
            mesh.hull.clone().unwrap_or_else(|| mesh.shape.clone()),
            None,
        ),
        Shape::Points { .. } | Shape::HeightMap(_) => return None,
    })
}

/// Whether the general narrow phase takes this pair.
pub(crate) fn handles(a: &Shape, b: &Shape) -> bool {
    let general = |s: &Shape| !matches!(s, Shape::HeightMap(_));
    let zero_volume = |s: &Shape| matches!(s, Shape::Point | Shape::Points { .. });
    let unbounded = |s: &Shape| matches!(s, Shape::Plane { .. });
    general(a)
        && general(b)
        && !(zero_volume(a) && zero_volume(b))
        && !(unbounded(a) && unbounded(b))
}

/// Contacts of A and B (world poses) within `prediction` of touching, from parry's contact
/// manifolds; the same conventions as the closed forms (normal from B toward A, witness
/// points on each, gap φ). `None` when the pair is not one parry takes ([`handles`]).
pub(crate) fn contacts(
    dimension: Dimension,
    shape_a: &Shape,
    pose_a: &Isometry3<f64>,
    shape_b: &Shape,
    pose_b: &Isometry3<f64>,
    prediction: f64,
) -> Option<FeatureContacts<f64>> {
    if !handles(shape_a, shape_b) {
        return None;
    }
    if let Shape::Points { points } = shape_a {
        let mut out = Vec::new();
        for (k, p) in points.iter().enumerate() {
            let at = pose_a * Isometry3::translation(p.x, p.y, p.z);
            let found = contacts(dimension, &Shape::Point, &at, shape_b, pose_b, prediction)?;
            out.extend(found.into_iter().map(|(_, g)| (k, g)));
        }
        return Some(out);
    }
    let (ga, off_a) = parry_shape(shape_a)?;
    let (gb, off_b) = parry_shape(shape_b)?;
    let pa = off_a.map_or(to_pose(pose_a), |o| to_pose(pose_a) * o);
    let pb = off_b.map_or(to_pose(pose_b), |o| to_pose(pose_b) * o);
    let pos12 = pa.inv_mul(&pb);
    let mut manifolds: Vec<ContactManifold<(), ()>> = Vec::new();
    let mut workspace = None;
    DefaultQueryDispatcher
        .contact_manifolds(
            &pos12,
            ga.as_ref(),
            gb.as_ref(),
            prediction.max(0.0),
            &mut manifolds,
            &mut workspace,
        )
        .ok()?;
    let mut out: FeatureContacts<f64> = Vec::new();
    for m in &manifolds {
        let sub1 = m.subshape_pos1().copied().unwrap_or(Pose::identity());
        let sub2 = m.subshape_pos2().copied().unwrap_or(Pose::identity());
        let frame1 = pa * sub1;
        let frame2 = pb * sub2;
        // parry's normal points out of shape 1 (A) toward B; ours from B toward A.
        let n = -from_vector(frame1.transform_vector(m.local_n1));
        for tc in &m.points {
            let point_a = from_vector(frame1.transform_point(tc.local_p1));
            let point_b = from_vector(frame2.transform_point(tc.local_p2));
            out.push((
                out.len(),
                ContactGeometry {
                    gap: tc.dist,
                    point_a,
                    point_b,
                    normal: n,
                },
            ));
        }
    }
    // Two boxes with parallel faces (a box resting on a box): parry's clipping may drop the
    // points of an edge that coincides with an edge of the other face, leaving the face
    // contact on one edge; the face-face clipping gives every corner.
    if let (Shape::Box { half_extents: ha }, Shape::Box { half_extents: hb }) = (shape_a, shape_b) {
        if dimension == Dimension::Spatial && (1..4).contains(&out.len()) {
            let normal = out[0].1.normal;
            if let Some(faces) = super::box_faces::parallel_face_contacts(
                ha, pose_a, hb, pose_b, &normal, prediction,
            ) {
                if faces.len() > out.len() {
                    out = faces.into_iter().enumerate().collect();
                }
            }
        }
    }
    Some(merge_coincident(out, dimension == Dimension::Planar))
}

/// One contact per position (the deepest): parry's face clipping reports a corner once per
/// face that holds it. In planar models normals are projected on the x–y plane and positions
/// compared in x–y (the front and back corners of a box face are one planar contact).
fn merge_coincident(found: FeatureContacts<f64>, planar: bool) -> FeatureContacts<f64> {
    let mut kept: Vec<ContactGeometry<f64>> = Vec::new();
    for (_, mut g) in found {
        if planar {
            g.normal.z = 0.0;
            let norm = g.normal.norm();
            if norm < 1e-9 {
                continue;
            }
            g.normal /= norm;
            g.point_a.z = 0.0;
            g.point_b.z = 0.0;
        }
        let tol = 1e-9 * (1.0 + g.point_a.norm());
        match kept
            .iter_mut()
            .find(|k| (k.point_a - g.point_a).norm() <= tol)
        {
            Some(k) if g.gap < k.gap => *k = g,
            Some(_) => {}
            None => kept.push(g),
        }
    }
    kept.into_iter().enumerate().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{Translation3, UnitQuaternion};

    fn at(x: f64, y: f64, z: f64) -> Isometry3<f64> {
        Isometry3::from_parts(Translation3::new(x, y, z), UnitQuaternion::identity())
    }

    #[test]
    fn box_on_box_gives_four_corners_and_planar_two() {
        let b = Shape::Box {
            half_extents: Vector3::new(0.05, 0.05, 0.05),
        };
        let found = contacts(
            Dimension::Spatial,
            &b,
            &at(0.0, 0.0, 0.1),
            &b,
            &at(0.0, 0.0, 0.0),
            1e-3,
        )
        .expect("handled");
        assert_eq!(found.len(), 4, "{found:?}");
        for (_, g) in &found {
            assert!(g.gap.abs() < 1e-9, "{g:?}");
            assert!((g.normal - Vector3::z()).norm() < 1e-9, "{g:?}");
            assert!((g.point_a.z - 0.05).abs() < 1e-9);
        }
        // Planar: a box of a planar model rests on a box on two corners (y up).
        let found = contacts(
            Dimension::Planar,
            &b,
            &at(0.0, 0.1, 0.0),
            &b,
            &at(0.0, 0.0, 0.0),
            1e-3,
        )
        .expect("handled");
        assert_eq!(found.len(), 2, "{found:?}");
        for (_, g) in &found {
            assert!((g.normal - Vector3::y()).norm() < 1e-9);
            assert_eq!(g.point_a.z, 0.0);
        }
    }

    /// Equal cubes stacked with coincident edges, their poses perturbed at the rounding
    /// level (a state of a tilted tower at rest): every corner of the face contact.
    #[test]
    fn cube_on_equal_cube_keeps_every_corner() {
        let b = Shape::Box {
            half_extents: Vector3::new(0.05, 0.05, 0.05),
        };
        let pose = |x: f64, y: f64, z: f64, q: [f64; 4]| {
            Isometry3::from_parts(
                Translation3::new(x, y, z),
                UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(q[0], q[1], q[2], q[3])),
            )
        };
        let below = pose(
            6.947567521287114e-18,
            1.613139098791729e-18,
            0.15,
            [
                1.0,
                -1.0700223363749149e-17,
                -7.549516567451064e-17,
                -5.1764148523147923e-17,
            ],
        );
        let above = pose(
            -1.1188966420050425e-18,
            1.5682714133646628e-18,
            0.25,
            [
                1.0,
                -3.3636534240651187e-18,
                -3.344546861683284e-17,
                8.604228440844965e-18,
            ],
        );
        let found = contacts(Dimension::Spatial, &b, &above, &b, &below, 1e-3).expect("handled");
        assert_eq!(found.len(), 4, "{found:?}");
        let mut corners: Vec<(i32, i32)> = found
            .iter()
            .map(|(_, g)| {
                assert!(g.gap.abs() < 1e-9, "{g:?}");
                assert!((g.normal - Vector3::z()).norm() < 1e-9, "{g:?}");
                (
                    (g.point_a.x * 20.0).round() as i32,
                    (g.point_a.y * 20.0).round() as i32,
                )
            })
            .collect();
        corners.sort_unstable();
        assert_eq!(corners, vec![(-1, -1), (-1, 1), (1, -1), (1, 1)]);
    }

    /// Generated variations of a cube on an equal cube: positions and orientations perturbed
    /// by 1e-17 to 1e-9 (the rounding of a tower at rest and beyond), each gets the four
    /// corners of the face contact.
    #[test]
    fn cubes_on_equal_cubes_with_perturbed_poses_keep_every_corner() {
        let b = Shape::Box {
            half_extents: Vector3::new(0.05, 0.05, 0.05),
        };
        let mut state = 0x2545F4914F6CDD1Du64;
        let mut rnd = move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        };
        let mut perturbed = |scale: f64, z: f64| {
            let mut r = || rnd() * scale;
            Isometry3::from_parts(
                Translation3::new(r(), r(), z + r()),
                UnitQuaternion::from_euler_angles(r(), r(), r()),
            )
        };
        let cases = 400;
        for case in 0..cases {
            let scale = 10f64.powi(-17 + case % 9);
            let below = perturbed(scale, 0.15);
            let above = perturbed(scale, 0.25);
            let found =
                contacts(Dimension::Spatial, &b, &above, &b, &below, 1e-3).expect("handled");
            assert_eq!(found.len(), 4, "case {case} (scale {scale:e}): {found:?}");
            for (_, g) in &found {
                assert!(g.gap.abs() < 1e-8, "case {case}: {g:?}");
            }
        }
    }

    #[test]
    fn capsule_on_plane_touches_at_both_ends() {
        let cap = Shape::Capsule {
            radius: 0.05,
            half_length: 0.2,
        };
        let plane = Shape::Plane {
            normal: nalgebra::Unit::new_normalize(Vector3::z()),
        };
        // Axis along x: rotate the capsule's z axis onto x.
        let pose = Isometry3::from_parts(
            Translation3::new(0.0, 0.0, 0.05),
            UnitQuaternion::from_euler_angles(0.0, std::f64::consts::FRAC_PI_2, 0.0),
        );
        let found = contacts(
            Dimension::Spatial,
            &cap,
            &pose,
            &plane,
            &at(0.0, 0.0, 0.0),
            1e-3,
        )
        .expect("handled");
        assert_eq!(found.len(), 2, "{found:?}");
        let xs: Vec<f64> = found.iter().map(|(_, g)| g.point_a.x).collect();
        assert!(
            xs.iter().any(|x| (x - 0.2).abs() < 1e-9) && xs.iter().any(|x| (x + 0.2).abs() < 1e-9),
            "{xs:?}"
        );
        // Lifted by 1 cm: outside a 1 mm prediction, inside a 2 cm one with gap 0.01.
        let up = Isometry3::from_parts(Translation3::new(0.0, 0.0, 0.06), pose.rotation);
        assert!(contacts(
            Dimension::Spatial,
            &cap,
            &up,
            &plane,
            &at(0.0, 0.0, 0.0),
            1e-3
        )
        .expect("handled")
        .is_empty());
        let found = contacts(
            Dimension::Spatial,
            &cap,
            &up,
            &plane,
            &at(0.0, 0.0, 0.0),
            2e-2,
        )
        .expect("handled");
        assert!(
            found.iter().all(|(_, g)| (g.gap - 0.01).abs() < 1e-9),
            "{found:?}"
        );
    }

    #[test]
    fn convex_cube_and_mesh_cube_match_the_box() {
        let corners: Vec<Vector3<f64>> = (0..8)
            .map(|k| {
                Vector3::new(
                    if k & 1 == 0 { -0.5 } else { 0.5 },
                    if k & 2 == 0 { -0.5 } else { 0.5 },
                    if k & 4 == 0 { -0.5 } else { 0.5 },
                )
            })
            .collect();
        let hull = Shape::Convex(ConvexHull::new(corners.clone()).expect("hull"));
        let tris = vec![
            [0, 2, 1],
            [1, 2, 3],
            [4, 5, 6],
            [5, 7, 6],
            [0, 1, 4],
            [1, 5, 4],
            [2, 6, 3],
            [3, 6, 7],
            [0, 4, 2],
            [2, 4, 6],
            [1, 3, 5],
            [3, 7, 5],
        ];
        let mesh = Shape::Mesh(TriangleMesh::new(corners, tris, None).expect("mesh"));
        let ball = Shape::Sphere { radius: 0.1 };
        for ground in [&hull, &mesh] {
            let found = contacts(
                Dimension::Spatial,
                &ball,
                &at(0.1, 0.0, 0.59),
                ground,
                &at(0.0, 0.0, 0.0),
                1e-2,
            )
            .expect("handled");
            assert!(!found.is_empty(), "{ground:?}");
            let (_, g) = &found[0];
            assert!((g.gap + 0.01).abs() < 1e-9, "{g:?}");
            assert!((g.normal - Vector3::z()).norm() < 1e-9, "{g:?}");
        }
        assert!(ConvexHull::new(vec![Vector3::zeros(); 3]).is_err());
        assert!(TriangleMesh::new(vec![Vector3::zeros()], vec![[0, 0, 1]], None).is_err());
    }
}
