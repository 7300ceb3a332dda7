//! Conversion of the parsed file ([`FileModel`]) into a [`Model`]: name resolution,
//! topological sorting of the bodies, defaults and unit normalization. Field paths of errors
//! are file paths (`bodies[2].inertia`), turned into lines by the caller's locator.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use nalgebra::{
    DVector, Isometry3, Matrix3, Quaternion, Translation3, Unit, UnitQuaternion, Vector3,
};

use super::format::*;
use super::spans::FieldPath;
use super::validate::{inertia_warnings, validate_model, Locator, UNIT_TOL};
use crate::error::ModelError;
use crate::model::*;

fn p(root: &str) -> FieldPath {
    FieldPath::root().key(root)
}

pub(super) fn invalid(
    loc: &Locator<'_>,
    path: &FieldPath,
    reason: impl Into<String>,
) -> ModelError {
    ModelError::InvalidValue {
        location: loc(path),
        reason: reason.into(),
    }
}

/// A unit quaternion from `[w, x, y, z]`: kept bit for bit when already unit within
/// [`UNIT_TOL`] (so that files written by `to_toml_string` load back exactly), normalized
/// otherwise; a zero or non-finite norm is an error.
pub fn unit_quaternion(
    loc: &Locator<'_>,
    path: &FieldPath,
    q: [f64; 4],
) -> Result<UnitQuaternion<f64>, ModelError> {
    let quat = Quaternion::new(q[0], q[1], q[2], q[3]);
    let norm = quat.norm();
    if !norm.is_finite() || norm < 1e-12 {
        return Err(ModelError::UnnormalizableQuaternion {
            location: loc(path),
            norm,
        });
    }
    if (norm - 1.0).abs() <= UNIT_TOL {
        Ok(UnitQuaternion::new_unchecked(quat))
    } else {
        Ok(UnitQuaternion::from_quaternion(quat))
    }
}

/// A unit vector, with the same exactness rule as [`unit_quaternion`].
pub fn unit_vector(
    loc: &Locator<'_>,
    path: &FieldPath,
    v: [f64; 3],
) -> Result<Unit<Vector3<f64>>, ModelError> {
    let v = Vector3::from(v);
    let norm = v.norm();
    if !norm.is_finite() || norm < 1e-12 {
        return Err(invalid(loc, path, format!("direction has norm {norm}")));
    }
    if (norm - 1.0).abs() <= UNIT_TOL {
        Ok(Unit::new_unchecked(v))
    } else {
        Ok(Unit::new_normalize(v))
    }
}

pub(super) fn pose(
    loc: &Locator<'_>,
    path: &FieldPath,
    pose: &Option<FilePose>,
) -> Result<Isometry3<f64>, ModelError> {
    let Some(pose) = pose else {
        return Ok(Isometry3::identity());
    };
    let rotation = match (pose.rpy, pose.quat) {
        (Some(_), Some(_)) => {
            return Err(invalid(
                loc,
                &path.key("quat"),
                "give either `rpy` or `quat`, not both",
            ))
        }
        (Some(rpy), None) => UnitQuaternion::from_euler_angles(rpy[0], rpy[1], rpy[2]),
        (None, Some(q)) => unit_quaternion(loc, &path.key("quat"), q)?,
        (None, None) => UnitQuaternion::identity(),
    };
    let t = pose.xyz.unwrap_or([0.0; 3]);
    Ok(Isometry3::from_parts(
        Translation3::new(t[0], t[1], t[2]),
        rotation,
    ))
}

fn inertia(
    loc: &Locator<'_>,
    path: &FieldPath,
    spec: &InertiaSpec,
    mass: f64,
) -> Result<Matrix3<f64>, ModelError> {
    match spec {
        InertiaSpec::Diagonal(d) => Ok(Matrix3::from_diagonal(&Vector3::from(*d))),
        InertiaSpec::Full(rows) => Ok(Matrix3::from_fn(|r, c| rows[r][c])),
        InertiaSpec::Shape(s) => {
            let given = [
                s.solid_sphere.is_some(),
                s.hollow_sphere.is_some(),
                s.solid_box.is_some(),
                s.solid_cylinder.is_some(),
            ]
            .iter()
            .filter(|b| **b)
            .count();
            if given != 1 {
                return Err(invalid(
                    loc,
                    path,
                    "expected [ixx, iyy, izz], a 3×3 array, or a table with exactly one of \
                     solid_sphere, hollow_sphere, solid_box, solid_cylinder",
                ));
            }
            let check = |key: &str, idx: Option<usize>, v: f64| {
                let fp = match idx {
                    Some(i) => path.key(key).idx(i),
                    None => path.key(key),
                };
                if v > 0.0 {
                    Ok(())
                } else {
                    Err(invalid(loc, &fp, format!("dimension must be > 0, got {v}")))
                }
            };
            if let Some(r) = s.solid_sphere {
                check("solid_sphere", None, r)?;
                Ok(Matrix3::identity() * (0.4 * mass * r * r))
            } else if let Some(r) = s.hollow_sphere {
                check("hollow_sphere", None, r)?;
                Ok(Matrix3::identity() * (2.0 / 3.0 * mass * r * r))
            } else if let Some(h) = s.solid_box {
                for (i, &x) in h.iter().enumerate() {
                    check("solid_box", Some(i), x)?;
                }
                let (x2, y2, z2) = (h[0] * h[0], h[1] * h[1], h[2] * h[2]);
                Ok(Matrix3::from_diagonal(&Vector3::new(
                    mass / 3.0 * (y2 + z2),
                    mass / 3.0 * (x2 + z2),
                    mass / 3.0 * (x2 + y2),
                )))
            } else if let Some([r, l]) = s.solid_cylinder {
                check("solid_cylinder", Some(0), r)?;
                check("solid_cylinder", Some(1), l)?;
                let side = mass * (3.0 * r * r + l * l) / 12.0;
                Ok(Matrix3::from_diagonal(&Vector3::new(
                    side,
                    side,
                    0.5 * mass * r * r,
                )))
            } else {
                Err(invalid(loc, path, "empty inertia shape"))
            }
        }
    }
}

fn material(
    loc: &Locator<'_>,
    path: &FieldPath,
    m: &FileMaterial,
    default_name: Option<String>,
) -> Result<ContactMaterial, ModelError> {
    let name = match (&m.name, default_name) {
        (Some(n), _) => n.clone(),
        (None, Some(d)) => d,
        (None, None) => return Err(invalid(loc, &path.key("name"), "missing `name`")),
    };
    Ok(ContactMaterial {
        name,
        friction: m.friction.unwrap_or(0.5),
        restitution: m.restitution,
        stiffness: m.stiffness,
        damping: m.damping,
        law: m.law.unwrap_or_default(),
    })
}

/// Registers names, failing on duplicates.
fn name_map<'a>(
    loc: &Locator<'_>,
    root: &str,
    kind: &'static str,
    names: impl Iterator<Item = &'a str>,
) -> Result<HashMap<&'a str, usize>, ModelError> {
    let mut map = HashMap::new();
    for (i, name) in names.enumerate() {
        if map.insert(name, i).is_some() {
            return Err(ModelError::DuplicateName {
                location: loc(&p(root).idx(i).key("name")),
                kind,
                name: name.to_string(),
            });
        }
    }
    Ok(map)
}

fn lookup(
    loc: &Locator<'_>,
    path: &FieldPath,
    map: &HashMap<&str, usize>,
    kind: &'static str,
    name: &str,
) -> Result<usize, ModelError> {
    map.get(name)
        .copied()
        .ok_or_else(|| ModelError::UnknownName {
            location: loc(path),
            kind,
            name: name.to_string(),
        })
}

/// Topological order of a forest given by parent links (Kahn's algorithm, smallest index
/// first, so an already sorted list keeps its order). Bodies on or below a cycle are left
/// out.
pub fn topological_order(parent_of: &[Option<usize>]) -> Vec<usize> {
    let n = parent_of.len();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut heap = BinaryHeap::new();
    for (b, parent) in parent_of.iter().enumerate() {
        match parent {
            Some(p) if *p < n => children[*p].push(b),
            _ => heap.push(Reverse(b)),
        }
    }
    let mut order = Vec::with_capacity(n);
    while let Some(Reverse(b)) = heap.pop() {
        order.push(b);
        for &c in &children[b] {
            heap.push(Reverse(c));
        }
    }
    order
}

/// Where each model-level item came from in the file, to map validation paths back.
pub struct Provenance {
    /// `body_file[i]`: file index of model body i.
    pub body_file: Vec<usize>,
    /// `joint_file[i]`: file index of the explicit joint of model body i, if any.
    pub joint_file: Vec<Option<usize>>,
    /// Joint owning each q / v coordinate, and whether initial q / v were given by joint.
    pub q_owner: Vec<String>,
    /// Joint owning each v coordinate.
    pub v_owner: Vec<String>,
    /// Whether `initial.q` / `initial.v` were tables by joint name.
    pub q_by_joint: bool,
    /// See `q_by_joint`.
    pub v_by_joint: bool,
}

impl Provenance {
    /// Maps a model field path (as used by `validate_model`) to a file field path.
    pub fn to_file_path(&self, path: &FieldPath) -> FieldPath {
        use super::spans::Seg;
        let segs = &path.0;
        let key = |i: usize| match segs.get(i) {
            Some(Seg::Key(k)) => Some(k.as_str()),
            _ => None,
        };
        let index = |i: usize| match segs.get(i) {
            Some(Seg::Index(k)) => Some(*k),
            _ => None,
        };
        let rest = |from: usize| segs.get(from..).unwrap_or(&[]).to_vec();
        let mut out;
        match key(0) {
            Some("simulation") => {
                out = p("simulation");
                out.0.extend(rest(1));
            }
            Some("gravity" | "contact_margin" | "name" | "dimension") => {
                out = p("model");
                out.0.extend(rest(0));
            }
            Some("bodies") => match index(1).and_then(|i| self.body_file.get(i)) {
                Some(&f) => {
                    out = p("bodies").idx(f);
                    out.0.extend(rest(2));
                }
                None => out = p("bodies"),
            },
            Some("joints") => match index(1) {
                Some(i) => match (self.joint_file.get(i), self.body_file.get(i)) {
                    (Some(Some(j)), _) => {
                        out = p("joints").idx(*j);
                        out.0.extend(rest(2));
                    }
                    (_, Some(&b)) => out = p("bodies").idx(b),
                    _ => out = p("joints"),
                },
                None => out = p("joints"),
            },
            Some("pair_overrides") => {
                out = p("pairs");
                out.0.extend(rest(1));
            }
            Some("excluded_pairs") => {
                out = p("exclude");
                out.0.extend(rest(1));
            }
            Some("initial_state") => {
                out = p("initial");
                match (key(1), index(2)) {
                    (Some("q"), Some(k)) if self.q_by_joint => {
                        out = out.key("q");
                        if let Some(name) = self.q_owner.get(k) {
                            out = out.key(name);
                        }
                    }
                    (Some("v"), Some(k)) if self.v_by_joint => {
                        out = out.key("v");
                        if let Some(name) = self.v_owner.get(k) {
                            out = out.key(name);
                        }
                    }
                    _ => out.0.extend(rest(1)),
                }
            }
            _ => out = path.clone(),
        }
        out
    }
}

/// Builds the model (not yet validated) and its provenance.
/// A mesh collider from its file (relative to the model file's directory) or inline data.
fn mesh_shape(
    loc: &Locator<'_>,
    path: &FieldPath,
    m: &FileMesh,
) -> Result<crate::geometry::TriangleMesh, ModelError> {
    use crate::geometry::{MeshSource, TriangleMesh};
    let scale = match &m.scale {
        None => Vector3::new(1.0, 1.0, 1.0),
        Some(FileScale::Uniform(s)) => Vector3::new(*s, *s, *s),
        Some(FileScale::PerAxis(s)) => Vector3::from(*s),
    };
    if !scale.iter().all(|s| s.is_finite() && *s > 0.0) {
        return Err(invalid(
            loc,
            &path.key("scale"),
            "the scale must be finite and > 0",
        ));
    }
    let (vertices, triangles, source) = match (&m.file, &m.vertices, &m.triangles) {
        (Some(file), None, None) => {
            let model_file = loc(&FieldPath::root()).file;
            let dir = model_file
                .as_deref()
                .and_then(|f| std::path::Path::new(f).parent())
                .map(std::path::Path::to_path_buf)
                .unwrap_or_default();
            let data = super::mesh::read_mesh_file(&dir.join(file), scale, &path.to_string())?;
            (
                data.vertices,
                data.triangles,
                Some(MeshSource {
                    file: file.clone(),
                    scale,
                }),
            )
        }
        (None, Some(v), Some(t)) => (
            v.iter()
                .map(|x| Vector3::from(*x).component_mul(&scale))
                .collect(),
            t.clone(),
            None,
        ),
        _ => {
            return Err(invalid(
                loc,
                path,
                "a mesh is `{ file = \"part.stl\" }` (STL or OBJ, optional `scale`) or \
                 `{ vertices = [...], triangles = [...] }`",
            ))
        }
    };
    TriangleMesh::new(vertices, triangles, source).map_err(|r| invalid(loc, path, r))
}

pub fn build(fm: &FileModel, loc: &Locator<'_>) -> Result<(Model, Provenance), ModelError> {
    if let Some(version) = fm.model.format {
        if version == 0 || version > FORMAT_VERSION {
            return Err(invalid(
                loc,
                &p("model").key("format"),
                format!(
                    "the file is written for model format {version}; this nonsmooth reads \
                     formats 1 to {FORMAT_VERSION} (a newer file needs a newer nonsmooth)"
                ),
            ));
        }
    }
    let dimension = fm.model.dimension.unwrap_or_default();
    let gravity = fm
        .model
        .gravity
        .map(Vector3::from)
        .unwrap_or(match dimension {
            Dimension::Spatial => Vector3::new(0.0, 0.0, -9.81),
            Dimension::Planar => Vector3::new(0.0, -9.81, 0.0),
        });

    // Bodies (file order).
    let body_names = name_map(
        loc,
        "bodies",
        "body",
        fm.bodies.iter().map(|b| b.name.as_str()),
    )?;
    for (i, b) in fm.bodies.iter().enumerate() {
        if b.name == "world" {
            return Err(invalid(
                loc,
                &p("bodies").idx(i).key("name"),
                "`world` is reserved for the fixed frame",
            ));
        }
    }
    let nb = fm.bodies.len();
    let joint_names = name_map(
        loc,
        "joints",
        "joint",
        fm.joints.iter().map(|j| j.name.as_str()),
    )?;

    // The joint graph: one parent joint per body.
    let mut joint_of: Vec<Option<usize>> = vec![None; nb];
    let mut parent_of: Vec<Option<usize>> = vec![None; nb];
    for (j, fj) in fm.joints.iter().enumerate() {
        let pj = p("joints").idx(j);
        if fj.child == "world" {
            return Err(ModelError::Topology {
                location: loc(&pj.key("child")),
                reason: "the world cannot be the child of a joint".into(),
            });
        }
        let child = lookup(loc, &pj.key("child"), &body_names, "body", &fj.child)?;
        let parent = if fj.parent == "world" {
            None
        } else {
            Some(lookup(
                loc,
                &pj.key("parent"),
                &body_names,
                "body",
                &fj.parent,
            )?)
        };
        if let Some(prev) = joint_of[child] {
            return Err(ModelError::Topology {
                location: loc(&pj.key("child")),
                reason: format!(
                    "body `{}` has more than one parent joint (`{}` and `{}`)",
                    fj.child, fm.joints[prev].name, fj.name
                ),
            });
        }
        if parent == Some(child) {
            return Err(ModelError::Topology {
                location: loc(&pj.key("parent")),
                reason: format!("joint `{}` connects body `{}` to itself", fj.name, fj.child),
            });
        }
        joint_of[child] = Some(j);
        parent_of[child] = parent;
    }
    for (b, fb) in fm.bodies.iter().enumerate() {
        if joint_of[b].is_none() && joint_names.contains_key(fb.name.as_str()) {
            return Err(ModelError::DuplicateName {
                location: loc(&p("bodies").idx(b).key("name")),
                kind: "joint",
                name: format!(
                    "{} (the default root joint of body `{}` takes the body's name)",
                    fb.name, fb.name
                ),
            });
        }
    }

    let order = topological_order(&parent_of);
    if order.len() < nb {
        let mut placed = vec![false; nb];
        for &b in &order {
            placed[b] = true;
        }
        let first = (0..nb).find(|&b| !placed[b]).unwrap_or(0);
        // Walk up from `first` until a body repeats: that is the cycle.
        let mut seen = vec![false; nb];
        let mut b = first;
        while !seen[b] {
            seen[b] = true;
            b = parent_of[b].unwrap_or(b);
        }
        let mut cycle = vec![fm.bodies[b].name.clone()];
        let mut c = parent_of[b].unwrap_or(b);
        while c != b {
            cycle.push(fm.bodies[c].name.clone());
            c = parent_of[c].unwrap_or(b);
        }
        cycle.push(fm.bodies[b].name.clone());
        let j = joint_of[b].unwrap_or(0);
        return Err(ModelError::Topology {
            location: loc(&p("joints").idx(j).key("parent")),
            reason: format!(
                "the joint graph has a cycle: {} (each body is the child of its successor)",
                cycle.join(" ← ")
            ),
        });
    }
    let mut model_index = vec![0; nb];
    for (m, &f) in order.iter().enumerate() {
        model_index[f] = m;
    }
    let body_ref = |path: &FieldPath, name: &str| -> Result<Option<BodyId>, ModelError> {
        if name == "world" {
            Ok(None)
        } else {
            Ok(Some(
                model_index[lookup(loc, path, &body_names, "body", name)?],
            ))
        }
    };

    let mut bodies = Vec::with_capacity(nb);
    let mut joints = Vec::with_capacity(nb);
    for (m, &f) in order.iter().enumerate() {
        let fb = &fm.bodies[f];
        let pb = p("bodies").idx(f);
        bodies.push(Body {
            name: fb.name.clone(),
            mass: fb.mass,
            com: Vector3::from(fb.com.unwrap_or([0.0; 3])),
            inertia: inertia(loc, &pb.key("inertia"), &fb.inertia, fb.mass)?,
        });
        let joint = match joint_of[f] {
            Some(j) => {
                let fj = &fm.joints[j];
                let pj = p("joints").idx(j);
                Joint {
                    name: fj.name.clone(),
                    kind: fj.kind,
                    parent: parent_of[f].map(|pf| model_index[pf]),
                    child: m,
                    placement: pose(loc, &pj.key("placement"), &fj.placement)?,
                    axis: unit_vector(loc, &pj.key("axis"), fj.axis.unwrap_or([0.0, 0.0, 1.0]))?,
                    limit: fj.limit.as_ref().map(|l| JointLimit {
                        lower: l.lower,
                        upper: l.upper,
                        stiffness: l.stiffness,
                        damping: l.damping,
                    }),
                    damping: fj.damping.unwrap_or(0.0),
                    spring: fj.spring.as_ref().map(|s| JointSpring {
                        stiffness: s.stiffness,
                        reference: s.reference,
                    }),
                    armature: fj.armature.unwrap_or(0.0),
                    q_index: 0,
                    v_index: 0,
                }
            }
            None => {
                let kind = match dimension {
                    Dimension::Spatial => JointKind::Floating,
                    Dimension::Planar => JointKind::Planar,
                };
                Joint {
                    child: m,
                    ..Joint::new(fb.name.clone(), kind, None)
                }
            }
        };
        joints.push(joint);
    }

    // Materials and colliders.
    let mut materials = Vec::with_capacity(fm.materials.len() + 1);
    for (i, m) in fm.materials.iter().enumerate() {
        materials.push(material(loc, &p("materials").idx(i), m, None)?);
    }
    let mut material_names = name_map(
        loc,
        "materials",
        "material",
        fm.materials.iter().map(|m| m.name.as_deref().unwrap_or("")),
    )?;
    let default_name: &'static str = "default";
    let collider_names = name_map(
        loc,
        "colliders",
        "collider",
        fm.colliders.iter().map(|c| c.name.as_str()),
    )?;
    let mut colliders = Vec::with_capacity(fm.colliders.len());
    for (i, fc) in fm.colliders.iter().enumerate() {
        let pc = p("colliders").idx(i);
        let body = body_ref(&pc.key("body"), fc.body.as_deref().unwrap_or("world"))?;
        let material = match &fc.material {
            Some(name) => lookup(loc, &pc.key("material"), &material_names, "material", name)?,
            None => match material_names.get(default_name) {
                Some(&k) => k,
                None => {
                    materials.push(ContactMaterial::default_material());
                    material_names.insert(default_name, materials.len() - 1);
                    materials.len() - 1
                }
            },
        };
        let ps = pc.key("shape");
        let shape = match &fc.shape {
            FileShape::Sphere(r) => Shape::Sphere { radius: *r },
            FileShape::Box(h) => Shape::Box {
                half_extents: Vector3::from(*h),
            },
            FileShape::Plane(n) => Shape::Plane {
                normal: unit_vector(loc, &ps.key("plane"), *n)?,
            },
            FileShape::Point => Shape::Point,
            FileShape::Points(pts) => Shape::Points {
                points: pts.iter().map(|x| Vector3::from(*x)).collect(),
            },
            FileShape::Heightmap(h) => Shape::HeightMap(HeightMap {
                x0: h.x0,
                y0: h.y0,
                dx: h.dx,
                dy: h.dy,
                heights: h.heights.clone(),
            }),
            FileShape::Capsule(r) => Shape::Capsule {
                radius: r.radius,
                half_length: r.half_length,
            },
            FileShape::Cylinder(r) => Shape::Cylinder {
                radius: r.radius,
                half_length: r.half_length,
            },
            FileShape::Convex(pts) => Shape::Convex(
                crate::geometry::ConvexHull::new(pts.iter().map(|x| Vector3::from(*x)).collect())
                    .map_err(|r| invalid(loc, &ps.key("convex"), r))?,
            ),
            FileShape::Mesh(m) => {
                let mesh = mesh_shape(loc, &ps.key("mesh"), m)?;
                Shape::Mesh(if body.is_some() {
                    mesh.colliding_as_hull()
                        .map_err(|r| invalid(loc, &ps.key("mesh"), r))?
                } else {
                    mesh
                })
            }
        };
        colliders.push(Collider {
            name: fc.name.clone(),
            body,
            pose: pose(loc, &pc.key("pose"), &fc.pose)?,
            shape,
            material,
            filter: CollisionFilter {
                group: fc.group.unwrap_or(1),
                mask: fc.mask.unwrap_or(u32::MAX),
            },
        });
    }
    let mut pair_overrides = Vec::with_capacity(fm.pairs.len());
    for (i, fp) in fm.pairs.iter().enumerate() {
        let pp = p("pairs").idx(i);
        let a = lookup(loc, &pp.key("a"), &collider_names, "collider", &fp.a)?;
        let b = lookup(loc, &pp.key("b"), &collider_names, "collider", &fp.b)?;
        let material = match &fp.material {
            PairMaterial::Name(name) => materials
                [lookup(loc, &pp.key("material"), &material_names, "material", name)?]
            .clone(),
            PairMaterial::Inline(m) => material(
                loc,
                &pp.key("material"),
                m,
                Some(format!("{}+{}", fp.a, fp.b)),
            )?,
        };
        pair_overrides.push(PairOverride {
            collider_a: a,
            collider_b: b,
            material,
        });
    }
    let mut excluded_pairs = Vec::with_capacity(fm.exclude.len());
    for (i, [a, b]) in fm.exclude.iter().enumerate() {
        let pe = p("exclude").idx(i);
        let ia = lookup(loc, &pe.idx(0), &collider_names, "collider", a)?;
        let ib = lookup(loc, &pe.idx(1), &collider_names, "collider", b)?;
        if ia == ib {
            return Err(invalid(
                loc,
                &pe,
                "an excluded pair needs two different colliders",
            ));
        }
        excluded_pairs.push((ia.min(ib), ia.max(ib)));
    }

    // Constraints.
    name_map(
        loc,
        "constraints",
        "constraint",
        fm.constraints.iter().map(|c| c.name.as_str()),
    )?;
    let mut constraints = Vec::with_capacity(fm.constraints.len());
    for (i, fc) in fm.constraints.iter().enumerate() {
        let pc = p("constraints").idx(i);
        let body_a = body_ref(&pc.key("body_a"), fc.body_a.as_deref().unwrap_or("world"))?;
        let body_b = body_ref(&pc.key("body_b"), fc.body_b.as_deref().unwrap_or("world"))?;
        let anchor_a = Vector3::from(fc.anchor_a.unwrap_or([0.0; 3]));
        let anchor_b = Vector3::from(fc.anchor_b.unwrap_or([0.0; 3]));
        let kind = match (fc.kind, fc.length) {
            (FileConstraintKind::Point, None) => ConstraintKind::Point {
                body_a,
                anchor_a,
                body_b,
                anchor_b,
            },
            (FileConstraintKind::Point, Some(_)) => {
                return Err(invalid(
                    loc,
                    &pc.key("length"),
                    "`length` applies to distance constraints only",
                ))
            }
            (FileConstraintKind::Distance, Some(length)) => ConstraintKind::Distance {
                body_a,
                anchor_a,
                body_b,
                anchor_b,
                length,
            },
            (FileConstraintKind::Distance, None) => {
                return Err(invalid(
                    loc,
                    &pc.key("length"),
                    "distance constraints need a `length`",
                ))
            }
        };
        constraints.push(Constraint {
            name: fc.name.clone(),
            kind,
            stiffness: fc.stiffness,
            damping: fc.damping,
        });
    }

    // Actuators (joint names resolve to model joint indices).
    let joint_name_list: Vec<String> = joints.iter().map(|j| j.name.clone()).collect();
    let model_joint_names: HashMap<&str, usize> = joint_name_list
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    name_map(
        loc,
        "actuators",
        "actuator",
        fm.actuators.iter().map(|a| a.name.as_str()),
    )?;
    let mut actuators = Vec::with_capacity(fm.actuators.len());
    for (i, fa) in fm.actuators.iter().enumerate() {
        let pa = p("actuators").idx(i);
        let kind = match fa.kind.unwrap_or(FileActuatorKind::Motor) {
            FileActuatorKind::Motor => {
                for (key, value) in [("kp", fa.kp), ("kv", fa.kv)] {
                    if value.is_some() {
                        return Err(invalid(
                            loc,
                            &pa.key(key),
                            format!("`{key}` is a gain of `position` actuators; this one is a motor (add kind = \"position\")"),
                        ));
                    }
                }
                ActuatorKind::Motor
            }
            FileActuatorKind::Position => ActuatorKind::Position {
                kp: fa.kp.ok_or_else(|| {
                    invalid(
                        loc,
                        &pa.key("kp"),
                        "a `position` actuator needs its gain `kp`",
                    )
                })?,
                kv: fa.kv.unwrap_or(0.0),
            },
        };
        actuators.push(Actuator {
            name: fa.name.clone(),
            joint: lookup(
                loc,
                &pa.key("joint"),
                &model_joint_names,
                "joint",
                &fa.joint,
            )?,
            dof: fa.dof.unwrap_or(0),
            gear: fa.gear.unwrap_or(1.0),
            effort_limit: fa.effort_limit.map(|[lo, hi]| (lo, hi)),
            kind,
        });
    }

    let mut model = Model {
        name: fm.model.name.clone(),
        dimension,
        gravity,
        bodies,
        joints,
        colliders,
        materials,
        pair_overrides,
        excluded_pairs,
        constraints,
        actuators,
        initial_state: State {
            q: DVector::zeros(0),
            v: DVector::zeros(0),
            t: 0.0,
        },
        contact_margin: fm.model.contact_margin.unwrap_or(0.0),
        simulation: fm
            .simulation
            .as_ref()
            .map(|s| SimulationSettings {
                stepper: s.stepper.clone(),
                dt: s.dt,
                duration: s.duration,
            })
            .unwrap_or_default(),
        import_warnings: Vec::new(),
    };
    model.assign_coordinate_offsets();

    // Initial state.
    let mut q = DVector::zeros(model.nq());
    let mut q_owner = Vec::with_capacity(model.nq());
    let mut v_owner = Vec::with_capacity(model.nv());
    for j in &model.joints {
        if let Some(offset) = j.kind.quaternion_offset() {
            q[j.q_index + offset] = 1.0;
        }
        q_owner.extend(std::iter::repeat_n(j.name.clone(), j.kind.nq()));
        v_owner.extend(std::iter::repeat_n(j.name.clone(), j.kind.nv()));
    }
    let mut v = DVector::zeros(model.nv());
    let initial = fm.initial.clone().unwrap_or_default();
    let pi = p("initial");
    let fill = |target: &mut DVector<f64>,
                coords: &Option<Coords>,
                key: &str,
                is_q: bool|
     -> Result<bool, ModelError> {
        let pk = pi.key(key);
        match coords {
            None => Ok(false),
            Some(Coords::Flat(values)) => {
                if values.len() != target.len() {
                    return Err(ModelError::DimensionMismatch {
                        location: loc(&pk),
                        expected: target.len(),
                        got: values.len(),
                    });
                }
                target.copy_from_slice(values);
                Ok(false)
            }
            Some(Coords::ByJoint(map)) => {
                for (name, values) in map {
                    let pn = pk.key(name);
                    let ji = lookup(loc, &pn, &model_joint_names, "joint", name)?;
                    let joint = &model.joints[ji];
                    let (start, len) = if is_q {
                        (joint.q_index, joint.kind.nq())
                    } else {
                        (joint.v_index, joint.kind.nv())
                    };
                    let values: Vec<f64> = match values {
                        JointCoords::Scalar(x) => vec![*x],
                        JointCoords::Vector(xs) => xs.clone(),
                    };
                    if values.len() != len {
                        return Err(ModelError::DimensionMismatch {
                            location: loc(&pn),
                            expected: len,
                            got: values.len(),
                        });
                    }
                    target.rows_mut(start, len).copy_from_slice(&values);
                }
                Ok(true)
            }
        }
    };
    let q_by_joint = fill(&mut q, &initial.q, "q", true)?;
    let v_by_joint = fill(&mut v, &initial.v, "v", false)?;
    for j in &model.joints {
        if let Some(offset) = j.kind.quaternion_offset() {
            let k = j.q_index + offset;
            let path = if q_by_joint {
                pi.key("q").key(&j.name)
            } else {
                pi.key("q").idx(k)
            };
            let uq = unit_quaternion(loc, &path, [q[k], q[k + 1], q[k + 2], q[k + 3]])?;
            let c = uq.quaternion().coords; // (i, j, k, w)
            q[k] = c[3];
            q[k + 1] = c[0];
            q[k + 2] = c[1];
            q[k + 3] = c[2];
        }
    }
    model.initial_state = State {
        q,
        v,
        t: initial.t.unwrap_or(0.0),
    };
    let joint_file = order.iter().map(|&f| joint_of[f]).collect();
    let provenance = Provenance {
        body_file: order,
        joint_file,
        q_owner,
        v_owner,
        q_by_joint,
        v_by_joint,
    };
    Ok((model, provenance))
}

/// Builds and validates; validation errors are mapped back to file paths.
pub fn build_and_validate(fm: &FileModel, loc: &Locator<'_>) -> Result<Model, ModelError> {
    let (mut model, prov) = build(fm, loc)?;
    let mapped = |path: &FieldPath| loc(&prov.to_file_path(path));
    validate_model(&model, &mapped)?;
    model.import_warnings = inertia_warnings(&model, "body", "");
    Ok(model)
}
