//! What the mesh targets check of one file's contents, shared by `stl_mesh` and `obj_mesh`.

use nalgebra::Vector3;
use nonsmooth_core::geometry::TriangleMesh;
use nonsmooth_core::io::mesh::{mesh_warnings, read_mesh_bytes, validate_mesh, MeshFormat};

/// Reads `bytes` as a mesh in `format`, at unit scale and mirrored (one negative scale
/// component). A mesh that reads must pass `validate_mesh`, give its warnings, and build the
/// collider a model file makes of it: the triangle mesh and its convex hull (or typed errors).
pub fn check(bytes: &[u8], format: MeshFormat) {
    for scale in [Vector3::new(1.0, 1.0, 1.0), Vector3::new(-2.0, 1.0, 0.5)] {
        let Ok(mesh) = read_mesh_bytes(bytes, format, scale, "fuzz", "mesh") else {
            continue;
        };
        assert!(
            validate_mesh(&mesh, None, "mesh").is_ok(),
            "a mesh that reads validates"
        );
        let _ = mesh_warnings(&mesh, "fuzz");
        if let Ok(collider) = TriangleMesh::new(mesh.vertices, mesh.triangles, None) {
            let _ = collider.colliding_as_hull();
        }
    }
}
