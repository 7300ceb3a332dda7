//! What the contact geometry of a model will not do, said before it runs: collider pairs that
//! no narrow phase handles, meshes on moving bodies (they collide through their convex hull)
//! and meshes that are open or non-manifold.

use super::{broad_phase::may_touch, detect::pair_supported};
use crate::io::mesh::{mesh_warnings, MeshData};
use crate::{Model, Shape};

impl Model {
    /// Warnings about the model's collision geometry, one line each, naming the colliders:
    /// pairs that may touch (different bodies, not excluded or filtered) but that no narrow
    /// phase handles (a height map with a capsule, cylinder, hull or mesh; two point sets
    /// never touch by definition and are not listed), meshes on moving bodies, and open or
    /// non-manifold meshes.
    pub fn geometry_warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        let n = self.colliders.len();
        for i in 0..n {
            for j in (i + 1)..n {
                let (a, b) = (&self.colliders[i], &self.colliders[j]);
                let zero_volume = |s: &Shape| matches!(s, Shape::Point | Shape::Points { .. });
                if !may_touch(self, i, j)
                    || (zero_volume(&a.shape) && zero_volume(&b.shape))
                    || pair_supported(&a.shape, &b.shape)
                {
                    continue;
                }
                out.push(format!(
                    "colliders `{}` ({}) and `{}` ({}) never touch: no narrow phase handles a \
                     {} with a {} (exclude the pair, or filter it with group/mask, to silence \
                     this)",
                    a.name,
                    a.shape.kind(),
                    b.name,
                    b.shape.kind(),
                    a.shape.kind(),
                    b.shape.kind()
                ));
            }
        }
        for c in &self.colliders {
            let Shape::Mesh(mesh) = &c.shape else {
                continue;
            };
            let source = mesh.source().map_or_else(
                || format!("mesh of collider `{}`", c.name),
                |s| s.file.clone(),
            );
            if c.body.is_some() {
                out.push(if mesh.collides_as_hull() {
                    format!(
                        "collider `{}`: a mesh on a moving body collides through its convex \
                         hull ({source}); give a convex decomposition as several `convex` \
                         colliders for a concave part",
                        c.name
                    )
                } else {
                    format!(
                        "collider `{}`: a mesh on a moving body collides as a thin triangle \
                         shell ({source}); deep penetrations are not resolved",
                        c.name
                    )
                });
            }
            let data = MeshData {
                vertices: mesh.vertices().to_vec(),
                triangles: mesh.triangles().to_vec(),
            };
            out.extend(
                mesh_warnings(&data, &source)
                    .into_iter()
                    .map(|w| format!("collider `{}`: {w}", c.name)),
            );
        }
        out
    }
}
