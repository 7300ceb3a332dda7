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

/// Builds the model (not yet validated) and its provenance, in the stages of the file: the
/// header, the body tree with its joints, the contact items (materials, colliders, pairs,
/// exclusions), constraints, actuators, then the initial state.
pub fn build(fm: &FileModel, loc: &Locator<'_>) -> Result<(Model, Provenance), ModelError> {
    check_format_version(fm, loc)?;
    let dimension = fm.model.dimension.unwrap_or_default();
    let tree = BodyTree::new(fm, loc)?;
    let (bodies, joints) = tree.bodies_and_joints(fm, loc, dimension)?;
    let contact = ContactItems::new(fm, loc, &tree)?;
    let constraints = constraints(fm, loc, &tree)?;
    let actuators = actuators(fm, loc, &joints)?;
    let mut model = Model {
        name: fm.model.name.clone(),
        dimension,
        gravity: gravity(fm, dimension),
        bodies,
        joints,
        colliders: contact.colliders,
        materials: contact.materials,
        pair_overrides: contact.pair_overrides,
        excluded_pairs: contact.excluded_pairs,
        constraints,
        actuators,
        initial_state: State {
            q: DVector::zeros(0),
            v: DVector::zeros(0),
            t: 0.0,
        },
        contact_margin: fm.model.contact_margin.unwrap_or(0.0),
        simulation: simulation_settings(fm),
        import_warnings: Vec::new(),
    };
    model.assign_coordinate_offsets();
    let initial = initial_state(fm, loc, &model)?;
    model.initial_state = initial.state;
    let provenance = Provenance {
        joint_file: tree.order.iter().map(|&f| tree.joint_of[f]).collect(),
        body_file: tree.order,
        q_owner: initial.q_owner,
        v_owner: initial.v_owner,
        q_by_joint: initial.q_by_joint,
        v_by_joint: initial.v_by_joint,
    };
    Ok((model, provenance))
}

/// Refuses a `model.format` this version cannot read (0, or newer than [`FORMAT_VERSION`]).
fn check_format_version(fm: &FileModel, loc: &Locator<'_>) -> Result<(), ModelError> {
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
    Ok(())
}

/// `model.gravity`, by default 9.81 m/s² along −z (spatial) or −y (planar).
fn gravity(fm: &FileModel, dimension: Dimension) -> Vector3<f64> {
    fm.model
        .gravity
        .map(Vector3::from)
        .unwrap_or(match dimension {
            Dimension::Spatial => Vector3::new(0.0, 0.0, -9.81),
            Dimension::Planar => Vector3::new(0.0, -9.81, 0.0),
        })
}

/// The `[simulation]` table, or the default settings.
fn simulation_settings(fm: &FileModel) -> SimulationSettings {
    fm.simulation
        .as_ref()
        .map(|s| SimulationSettings {
            stepper: s.stepper.clone(),
            dt: s.dt,
            duration: s.duration,
        })
        .unwrap_or_default()
}

/// The body tree of a model file: each body's parent joint and parent body (file indices)
/// and the model order of the bodies (parents first).
struct BodyTree<'f> {
    /// File index of each body, by name.
    body_names: HashMap<&'f str, usize>,
    /// `joint_of[f]`: the file joint whose child is file body f (`None`: a root body).
    joint_of: Vec<Option<usize>>,
    /// `parent_of[f]`: the file body that file body f hangs from (`None`: the world).
    parent_of: Vec<Option<usize>>,
    /// `order[m]`: the file index of model body m.
    order: Vec<usize>,
    /// `model_index[f]`: the model index of file body f.
    model_index: Vec<usize>,
}

impl<'f> BodyTree<'f> {
    /// Resolves the names of bodies and joints and sorts the bodies topologically.
    fn new(fm: &'f FileModel, loc: &Locator<'_>) -> Result<Self, ModelError> {
        let body_names = name_map(
            loc,
            "bodies",
            "body",
            fm.bodies.iter().map(|b| b.name.as_str()),
        )?;
        check_world_not_a_body(fm, loc)?;
        let joint_names = name_map(
            loc,
            "joints",
            "joint",
            fm.joints.iter().map(|j| j.name.as_str()),
        )?;
        let nb = fm.bodies.len();
        let mut tree = BodyTree {
            body_names,
            joint_of: vec![None; nb],
            parent_of: vec![None; nb],
            order: Vec::new(),
            model_index: vec![0; nb],
        };
        for (j, fj) in fm.joints.iter().enumerate() {
            tree.connect(fm, loc, j, fj)?;
        }
        check_root_joint_names(fm, loc, &tree.joint_of, &joint_names)?;
        tree.order = topological_order(&tree.parent_of);
        if tree.order.len() < nb {
            return Err(tree.cycle_error(fm, loc));
        }
        for (m, &f) in tree.order.iter().enumerate() {
            tree.model_index[f] = m;
        }
        Ok(tree)
    }

    /// Enters file joint `j` into the joint graph: its child body (not the world) gets it
    /// as its one parent joint, and its parent body (another body, or the world).
    fn connect(
        &mut self,
        fm: &FileModel,
        loc: &Locator<'_>,
        j: usize,
        fj: &FileJoint,
    ) -> Result<(), ModelError> {
        let pj = p("joints").idx(j);
        if fj.child == "world" {
            return Err(ModelError::Topology {
                location: loc(&pj.key("child")),
                reason: "the world cannot be the child of a joint".into(),
            });
        }
        let child = lookup(loc, &pj.key("child"), &self.body_names, "body", &fj.child)?;
        let parent = if fj.parent == "world" {
            None
        } else {
            Some(lookup(
                loc,
                &pj.key("parent"),
                &self.body_names,
                "body",
                &fj.parent,
            )?)
        };
        if let Some(prev) = self.joint_of[child] {
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
        self.joint_of[child] = Some(j);
        self.parent_of[child] = parent;
        Ok(())
    }

    /// The error for a joint graph with a cycle (the topological order misses bodies),
    /// naming the bodies of the cycle.
    fn cycle_error(&self, fm: &FileModel, loc: &Locator<'_>) -> ModelError {
        let (joint_of, parent_of) = (&self.joint_of, &self.parent_of);
        let nb = fm.bodies.len();
        let mut placed = vec![false; nb];
        for &b in &self.order {
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
        ModelError::Topology {
            location: loc(&p("joints").idx(j).key("parent")),
            reason: format!(
                "the joint graph has a cycle: {} (each body is the child of its successor)",
                cycle.join(" ← ")
            ),
        }
    }

    /// The model body named `name` at `path` (`None` for `world`).
    fn body_ref(
        &self,
        loc: &Locator<'_>,
        path: &FieldPath,
        name: &str,
    ) -> Result<Option<BodyId>, ModelError> {
        if name == "world" {
            Ok(None)
        } else {
            Ok(Some(
                self.model_index[lookup(loc, path, &self.body_names, "body", name)?],
            ))
        }
    }

    /// The bodies and their parent joints in model order; a body without a joint in the
    /// file gets a floating (spatial) or planar (planar) root joint named after it.
    fn bodies_and_joints(
        &self,
        fm: &FileModel,
        loc: &Locator<'_>,
        dimension: Dimension,
    ) -> Result<(Vec<Body>, Vec<Joint>), ModelError> {
        let mut bodies = Vec::with_capacity(self.order.len());
        let mut joints = Vec::with_capacity(self.order.len());
        for (m, &f) in self.order.iter().enumerate() {
            let fb = &fm.bodies[f];
            bodies.push(body(loc, f, fb)?);
            let joint = match self.joint_of[f] {
                Some(j) => {
                    let parent = self.parent_of[f].map(|pf| self.model_index[pf]);
                    file_joint(loc, j, &fm.joints[j], parent, m)?
                }
                None => default_root_joint(&fb.name, dimension, m),
            };
            joints.push(joint);
        }
        Ok((bodies, joints))
    }
}

/// Refuses a body named `world` (the name of the fixed frame).
fn check_world_not_a_body(fm: &FileModel, loc: &Locator<'_>) -> Result<(), ModelError> {
    for (i, b) in fm.bodies.iter().enumerate() {
        if b.name == "world" {
            return Err(invalid(
                loc,
                &p("bodies").idx(i).key("name"),
                "`world` is reserved for the fixed frame",
            ));
        }
    }
    Ok(())
}

/// Refuses a body without a parent joint whose name a file joint already has (its default
/// root joint takes the body's name).
fn check_root_joint_names(
    fm: &FileModel,
    loc: &Locator<'_>,
    joint_of: &[Option<usize>],
    joint_names: &HashMap<&str, usize>,
) -> Result<(), ModelError> {
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
    Ok(())
}

/// The model body of file body `f`.
fn body(loc: &Locator<'_>, f: usize, fb: &FileBody) -> Result<Body, ModelError> {
    let pb = p("bodies").idx(f);
    Ok(Body {
        name: fb.name.clone(),
        mass: fb.mass,
        com: Vector3::from(fb.com.unwrap_or([0.0; 3])),
        inertia: inertia(loc, &pb.key("inertia"), &fb.inertia, fb.mass)?,
    })
}

/// The model joint of file joint `j`, moving model body `child` relative to `parent`.
fn file_joint(
    loc: &Locator<'_>,
    j: usize,
    fj: &FileJoint,
    parent: Option<BodyId>,
    child: BodyId,
) -> Result<Joint, ModelError> {
    let pj = p("joints").idx(j);
    Ok(Joint {
        name: fj.name.clone(),
        kind: fj.kind,
        parent,
        child,
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
    })
}

/// The joint of a body that has none in the file: floating (spatial) or planar (planar), to
/// the world, named after the body.
fn default_root_joint(body_name: &str, dimension: Dimension, child: BodyId) -> Joint {
    let kind = match dimension {
        Dimension::Spatial => JointKind::Floating,
        Dimension::Planar => JointKind::Planar,
    };
    Joint {
        child,
        ..Joint::new(body_name.to_string(), kind, None)
    }
}

/// The contact materials of a model file by name, with the `default` material added the
/// first time a collider names none (unless the file defines one).
struct Materials<'f> {
    /// The materials, in file order, then `default` where added.
    list: Vec<ContactMaterial>,
    /// Index in `list` of each material, by name.
    names: HashMap<&'f str, usize>,
}

impl<'f> Materials<'f> {
    /// The `[[materials]]` of the file (names checked after the values, as written).
    fn new(fm: &'f FileModel, loc: &Locator<'_>) -> Result<Self, ModelError> {
        let mut list = Vec::with_capacity(fm.materials.len() + 1);
        for (i, m) in fm.materials.iter().enumerate() {
            list.push(material(loc, &p("materials").idx(i), m, None)?);
        }
        let names = name_map(
            loc,
            "materials",
            "material",
            fm.materials.iter().map(|m| m.name.as_deref().unwrap_or("")),
        )?;
        Ok(Materials { list, names })
    }

    /// The material named at `path`.
    fn named(&self, loc: &Locator<'_>, path: &FieldPath, name: &str) -> Result<usize, ModelError> {
        lookup(loc, path, &self.names, "material", name)
    }

    /// The material named `default`, added on first use when the file has none.
    fn default_index(&mut self) -> usize {
        const DEFAULT: &str = "default";
        match self.names.get(DEFAULT) {
            Some(&k) => k,
            None => {
                self.list.push(ContactMaterial::default_material());
                self.names.insert(DEFAULT, self.list.len() - 1);
                self.list.len() - 1
            }
        }
    }
}

/// The contact part of a model: materials, colliders, pair overrides and excluded pairs.
struct ContactItems {
    /// The contact materials.
    materials: Vec<ContactMaterial>,
    /// The colliders.
    colliders: Vec<Collider>,
    /// The per-pair materials.
    pair_overrides: Vec<PairOverride>,
    /// The pairs that never collide, smaller collider index first.
    excluded_pairs: Vec<(usize, usize)>,
}

impl ContactItems {
    /// Materials, colliders, `[[pairs]]` and `exclude` of the file, in that order.
    fn new(fm: &FileModel, loc: &Locator<'_>, tree: &BodyTree<'_>) -> Result<Self, ModelError> {
        let mut materials = Materials::new(fm, loc)?;
        let collider_names = name_map(
            loc,
            "colliders",
            "collider",
            fm.colliders.iter().map(|c| c.name.as_str()),
        )?;
        let mut colliders = Vec::with_capacity(fm.colliders.len());
        for (i, fc) in fm.colliders.iter().enumerate() {
            colliders.push(collider(loc, i, fc, tree, &mut materials)?);
        }
        let pair_overrides = pair_overrides(fm, loc, &collider_names, &materials)?;
        let excluded_pairs = excluded_pairs(fm, loc, &collider_names)?;
        Ok(ContactItems {
            materials: materials.list,
            colliders,
            pair_overrides,
            excluded_pairs,
        })
    }
}

/// The model collider of file collider `i`.
fn collider(
    loc: &Locator<'_>,
    i: usize,
    fc: &FileCollider,
    tree: &BodyTree<'_>,
    materials: &mut Materials<'_>,
) -> Result<Collider, ModelError> {
    let pc = p("colliders").idx(i);
    let body = tree.body_ref(loc, &pc.key("body"), fc.body.as_deref().unwrap_or("world"))?;
    let material = match &fc.material {
        Some(name) => materials.named(loc, &pc.key("material"), name)?,
        None => materials.default_index(),
    };
    let shape = collider_shape(loc, &pc.key("shape"), &fc.shape, body.is_some())?;
    Ok(Collider {
        name: fc.name.clone(),
        body,
        pose: pose(loc, &pc.key("pose"), &fc.pose)?,
        shape,
        material,
        filter: CollisionFilter {
            group: fc.group.unwrap_or(1),
            mask: fc.mask.unwrap_or(u32::MAX),
        },
    })
}

/// The shape of a collider (`path` is its `shape` field); a mesh on a body collides as its
/// convex hull.
fn collider_shape(
    loc: &Locator<'_>,
    path: &FieldPath,
    shape: &FileShape,
    on_body: bool,
) -> Result<Shape, ModelError> {
    Ok(match shape {
        FileShape::Sphere(r) => Shape::Sphere { radius: *r },
        FileShape::Box(h) => Shape::Box {
            half_extents: Vector3::from(*h),
        },
        FileShape::Plane(n) => Shape::Plane {
            normal: unit_vector(loc, &path.key("plane"), *n)?,
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
                .map_err(|r| invalid(loc, &path.key("convex"), r))?,
        ),
        FileShape::Mesh(m) => {
            let mesh = mesh_shape(loc, &path.key("mesh"), m)?;
            Shape::Mesh(if on_body {
                mesh.colliding_as_hull()
                    .map_err(|r| invalid(loc, &path.key("mesh"), r))?
            } else {
                mesh
            })
        }
    })
}

/// The `[[pairs]]`: a material (by name or inline) for a pair of colliders.
fn pair_overrides(
    fm: &FileModel,
    loc: &Locator<'_>,
    collider_names: &HashMap<&str, usize>,
    materials: &Materials<'_>,
) -> Result<Vec<PairOverride>, ModelError> {
    let mut pair_overrides = Vec::with_capacity(fm.pairs.len());
    for (i, fp) in fm.pairs.iter().enumerate() {
        let pp = p("pairs").idx(i);
        let a = lookup(loc, &pp.key("a"), collider_names, "collider", &fp.a)?;
        let b = lookup(loc, &pp.key("b"), collider_names, "collider", &fp.b)?;
        let material = match &fp.material {
            PairMaterial::Name(name) => {
                materials.list[materials.named(loc, &pp.key("material"), name)?].clone()
            }
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
    Ok(pair_overrides)
}

/// The `exclude` list: pairs of two different colliders, smaller index first.
fn excluded_pairs(
    fm: &FileModel,
    loc: &Locator<'_>,
    collider_names: &HashMap<&str, usize>,
) -> Result<Vec<(usize, usize)>, ModelError> {
    let mut excluded_pairs = Vec::with_capacity(fm.exclude.len());
    for (i, [a, b]) in fm.exclude.iter().enumerate() {
        let pe = p("exclude").idx(i);
        let ia = lookup(loc, &pe.idx(0), collider_names, "collider", a)?;
        let ib = lookup(loc, &pe.idx(1), collider_names, "collider", b)?;
        if ia == ib {
            return Err(invalid(
                loc,
                &pe,
                "an excluded pair needs two different colliders",
            ));
        }
        excluded_pairs.push((ia.min(ib), ia.max(ib)));
    }
    Ok(excluded_pairs)
}

/// The `[[constraints]]`.
fn constraints(
    fm: &FileModel,
    loc: &Locator<'_>,
    tree: &BodyTree<'_>,
) -> Result<Vec<Constraint>, ModelError> {
    name_map(
        loc,
        "constraints",
        "constraint",
        fm.constraints.iter().map(|c| c.name.as_str()),
    )?;
    let mut constraints = Vec::with_capacity(fm.constraints.len());
    for (i, fc) in fm.constraints.iter().enumerate() {
        constraints.push(constraint(loc, i, fc, tree)?);
    }
    Ok(constraints)
}

/// The model constraint of file constraint `i`: a point constraint, or a distance
/// constraint with its `length`.
fn constraint(
    loc: &Locator<'_>,
    i: usize,
    fc: &FileConstraint,
    tree: &BodyTree<'_>,
) -> Result<Constraint, ModelError> {
    let pc = p("constraints").idx(i);
    let body_a = tree.body_ref(
        loc,
        &pc.key("body_a"),
        fc.body_a.as_deref().unwrap_or("world"),
    )?;
    let body_b = tree.body_ref(
        loc,
        &pc.key("body_b"),
        fc.body_b.as_deref().unwrap_or("world"),
    )?;
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
    Ok(Constraint {
        name: fc.name.clone(),
        kind,
        stiffness: fc.stiffness,
        damping: fc.damping,
    })
}

/// Model joint index of each joint, by name.
fn joint_index(joints: &[Joint]) -> HashMap<&str, usize> {
    joints
        .iter()
        .enumerate()
        .map(|(i, j)| (j.name.as_str(), i))
        .collect()
}

/// The `[[actuators]]` (their joint names resolve to model joint indices).
fn actuators(
    fm: &FileModel,
    loc: &Locator<'_>,
    joints: &[Joint],
) -> Result<Vec<Actuator>, ModelError> {
    let joint_index = joint_index(joints);
    name_map(
        loc,
        "actuators",
        "actuator",
        fm.actuators.iter().map(|a| a.name.as_str()),
    )?;
    let mut actuators = Vec::with_capacity(fm.actuators.len());
    for (i, fa) in fm.actuators.iter().enumerate() {
        let pa = p("actuators").idx(i);
        let kind = actuator_kind(loc, &pa, fa)?;
        actuators.push(Actuator {
            name: fa.name.clone(),
            joint: lookup(loc, &pa.key("joint"), &joint_index, "joint", &fa.joint)?,
            dof: fa.dof.unwrap_or(0),
            gear: fa.gear.unwrap_or(1.0),
            effort_limit: fa.effort_limit.map(|[lo, hi]| (lo, hi)),
            kind,
        });
    }
    Ok(actuators)
}

/// The kind of an actuator (at `pa`): a motor (no gains), or a position servo with its
/// gain `kp` (and `kv`, 0 by default).
fn actuator_kind(
    loc: &Locator<'_>,
    pa: &FieldPath,
    fa: &FileActuator,
) -> Result<ActuatorKind, ModelError> {
    Ok(match fa.kind.unwrap_or(FileActuatorKind::Motor) {
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
    })
}

/// The initial state of a model file and how its coordinates were given.
struct InitialState {
    /// The state (q at the neutral configuration where not given, v zero).
    state: State,
    /// Joint owning each q coordinate.
    q_owner: Vec<String>,
    /// Joint owning each v coordinate.
    v_owner: Vec<String>,
    /// Whether `initial.q` was a table by joint name.
    q_by_joint: bool,
    /// Whether `initial.v` was a table by joint name.
    v_by_joint: bool,
}

/// The coordinates of the initial state: positions q or velocities v.
#[derive(Clone, Copy)]
enum Coordinates {
    /// Positions.
    Q,
    /// Velocities.
    V,
}

impl Coordinates {
    /// The key of these coordinates in `[initial]`.
    fn key(self) -> &'static str {
        match self {
            Coordinates::Q => "q",
            Coordinates::V => "v",
        }
    }

    /// The first index and the number of these coordinates of `joint`.
    fn span(self, joint: &Joint) -> (usize, usize) {
        match self {
            Coordinates::Q => (joint.q_index, joint.kind.nq()),
            Coordinates::V => (joint.v_index, joint.kind.nv()),
        }
    }
}

/// The `[initial]` table: q and v (flat, or by joint name) over the neutral configuration
/// (unit quaternions, zero elsewhere), quaternions normalized, and t.
fn initial_state(
    fm: &FileModel,
    loc: &Locator<'_>,
    model: &Model,
) -> Result<InitialState, ModelError> {
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
    let q_by_joint = fill_coordinates(loc, model, &mut q, &initial.q, Coordinates::Q)?;
    let v_by_joint = fill_coordinates(loc, model, &mut v, &initial.v, Coordinates::V)?;
    normalize_quaternions(loc, model, &mut q, q_by_joint)?;
    Ok(InitialState {
        state: State {
            q,
            v,
            t: initial.t.unwrap_or(0.0),
        },
        q_owner,
        v_owner,
        q_by_joint,
        v_by_joint,
    })
}

/// Writes the coordinates `given` (flat or by joint name) into `target`; returns whether
/// they were given by joint name.
fn fill_coordinates(
    loc: &Locator<'_>,
    model: &Model,
    target: &mut DVector<f64>,
    given: &Option<Coords>,
    which: Coordinates,
) -> Result<bool, ModelError> {
    let pk = p("initial").key(which.key());
    match given {
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
            let joint_index = joint_index(&model.joints);
            for (name, values) in map {
                let pn = pk.key(name);
                let ji = lookup(loc, &pn, &joint_index, "joint", name)?;
                let (start, len) = which.span(&model.joints[ji]);
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
}

/// Normalizes the quaternions of `q` (stored `[w, x, y, z]`), failing on a zero one.
fn normalize_quaternions(
    loc: &Locator<'_>,
    model: &Model,
    q: &mut DVector<f64>,
    q_by_joint: bool,
) -> Result<(), ModelError> {
    let pq = p("initial").key("q");
    for j in &model.joints {
        if let Some(offset) = j.kind.quaternion_offset() {
            let k = j.q_index + offset;
            let path = if q_by_joint {
                pq.key(&j.name)
            } else {
                pq.idx(k)
            };
            let uq = unit_quaternion(loc, &path, [q[k], q[k + 1], q[k + 2], q[k + 3]])?;
            let c = uq.quaternion().coords; // (i, j, k, w)
            q[k] = c[3];
            q[k + 1] = c[0];
            q[k + 2] = c[1];
            q[k + 3] = c[2];
        }
    }
    Ok(())
}

/// Builds and validates; validation errors are mapped back to file paths.
pub fn build_and_validate(fm: &FileModel, loc: &Locator<'_>) -> Result<Model, ModelError> {
    let (mut model, prov) = build(fm, loc)?;
    let mapped = |path: &FieldPath| loc(&prov.to_file_path(path));
    validate_model(&model, &mapped)?;
    model.import_warnings = inertia_warnings(&model, "body", "");
    Ok(model)
}
