//! The parsed MJCF ([`MjModel`]) → [`Model`]: bodies in document (depth-first) order, joint
//! frames at the joint anchors, massless joint-frame bodies for bodies with several joints,
//! static bodies merged into the world, colliders, materials, actuators, collision
//! exclusions and the initial state (MuJoCo's `qpos0`).

use std::collections::{BTreeMap, HashSet};

use nalgebra::{Isometry3, Matrix3, Translation3, Unit, UnitQuaternion, Vector3};

use super::inertia::{body_properties, MassProperties};
use super::parse::{ActuatorType, Compiler, GeomType, JointType, MjBody, MjGeom, MjJoint, MjModel};
use super::MjcfOptions;
use crate::error::{Location, ModelError};
use crate::geometry::{ConvexHull, MeshSource, TriangleMesh};
use crate::io::spans::{FieldPath, Seg};
use crate::io::validate::validate_model;
use crate::model::*;

/// Where a built item came from, for validation errors.
#[derive(Default)]
struct Origins {
    bodies: Vec<Location>,
    joints: Vec<Location>,
    colliders: Vec<Location>,
    actuators: Vec<Location>,
}

/// MuJoCo's collision-filter identity of a collider: its (MJCF) weld body and that body's
/// parent's weld body (0 = world).
#[derive(Clone, Copy)]
struct Weld {
    body: usize,
    parent: usize,
}

struct Builder<'a> {
    mj: &'a MjModel,
    options: &'a MjcfOptions,
    model: Model,
    origins: Origins,
    warnings: Vec<String>,
    /// MJCF body index (depth-first, world = 0) → its weld body and parent weld body.
    welds: Vec<Weld>,
    /// Per collider: MJCF body index (0 = world).
    collider_mj_body: Vec<usize>,
    /// Per collider: contype, conaffinity.
    collider_bits: Vec<(u32, u32)>,
    joint_names: HashSet<String>,
    collider_names: HashSet<String>,
    static_bodies: Vec<String>,
    merged_bodies: Vec<String>,
    shifted: Vec<String>,
    visual_only: usize,
    friction_materials: BTreeMap<u64, usize>,
    /// `settotalmass`'s factor on every body's mass and inertia (1 without it).
    mass_scale: f64,
    /// Bodies whose inertia `balanceinertia` changed.
    balanced: Vec<String>,
}

/// The joints of an MJCF body, each with where it comes from in the file, and the anchor of
/// the last one in the body frame (where our body frame sits).
struct JointChain {
    /// The joints, in file order.
    joints: Vec<(Joint, Location)>,
    /// The last joint's anchor in the MJCF body frame (zero without joints).
    anchor: Vector3<f64>,
}

/// MuJoCo's per-body corrections of the compiled mass properties, in its order:
/// `boundmass` (mass ≥ bound), `boundinertia` (each principal moment ≥ bound), then
/// `balanceinertia` (moments violating the triangle inequality set to their mean). Returns
/// whether balancing changed the inertia.
fn corrected(mut p: MassProperties, c: &Compiler) -> (MassProperties, bool) {
    if p.mass < c.bound_mass {
        p.mass = c.bound_mass;
    }
    if c.bound_inertia > 0.0 {
        let eig = p.inertia.symmetric_eigen();
        if eig.eigenvalues.min() < c.bound_inertia {
            let clamped = eig.eigenvalues.map(|x| x.max(c.bound_inertia));
            let q = eig.eigenvectors;
            p.inertia = q * Matrix3::from_diagonal(&clamped) * q.transpose();
        }
    }
    let balanced = c.balance_inertia && crate::io::validate::balance_inertia(&mut p.inertia);
    (p, balanced)
}

/// The total mass `settotalmass` scales to: every MJCF body's (corrected) mass, except the
/// bodies welded to the world when `fusestatic` fuses them into it (MuJoCo 4.0: their mass
/// leaves the model; a body another element refers to by name is not fused). Bodies fused
/// into a moving parent keep their mass in the total.
fn total_mass(mj: &MjModel, bodies: &[MjBody], welded: bool) -> Result<f64, ModelError> {
    let c = &mj.compiler;
    let mut total = 0.0;
    for b in bodies {
        let world_welded = welded && b.joints.is_empty() && !b.mocap;
        let referenced = b
            .name
            .as_ref()
            .is_some_and(|n| mj.referenced_bodies.contains(n));
        if !(c.fuse_static && world_welded && !referenced) {
            let props = body_properties(b, c.inertia_from_geom, c.inertia_group_range, &mj.meshes)?;
            total += corrected(props, c).0.mass;
        }
        total += total_mass(mj, &b.children, world_welded)?;
    }
    Ok(total)
}

fn unique(names: &mut HashSet<String>, base: String) -> String {
    let mut name = base.clone();
    let mut k = 1;
    while names.contains(&name) {
        name = format!("{base}_{k}");
        k += 1;
    }
    names.insert(name.clone());
    name
}

pub(crate) fn build(mj: &MjModel, options: &MjcfOptions) -> Result<Model, ModelError> {
    let mut model = Model::new(mj.name.clone(), Dimension::Spatial);
    model.gravity = if mj.gravity_disabled {
        Vector3::zeros()
    } else {
        mj.gravity
    };
    model.simulation.dt = mj.timestep;
    let mut b = Builder {
        mj,
        options,
        model,
        origins: Origins::default(),
        warnings: mj.warnings.clone(),
        welds: vec![Weld { body: 0, parent: 0 }],
        collider_mj_body: Vec::new(),
        collider_bits: Vec::new(),
        joint_names: HashSet::new(),
        collider_names: HashSet::new(),
        static_bodies: Vec::new(),
        merged_bodies: Vec::new(),
        shifted: Vec::new(),
        visual_only: 0,
        friction_materials: BTreeMap::new(),
        mass_scale: 1.0,
        balanced: Vec::new(),
    };
    if let Some((target, src)) = &mj.compiler.set_total_mass {
        let total = total_mass(mj, &mj.bodies, true)?;
        if total <= 0.0 {
            return Err(src.error(
                None,
                format!("settotalmass = {target}: the bodies have no mass to scale"),
            ));
        }
        b.mass_scale = target / total;
    }
    for (k, g) in mj.world_geoms.iter().enumerate() {
        b.add_collider(g, None, &Isometry3::identity(), 0, "world", k)?;
    }
    for body in &mj.bodies {
        b.visit(body, None, Isometry3::identity(), 0)?;
    }
    b.add_actuators()?;
    b.add_exclusions()?;
    b.finish_warnings();
    if !b.balanced.is_empty() {
        let list = b.balanced.join(", ");
        b.warnings.push(format!(
            "balanceinertia: the principal moments of {list} violated the triangle inequality \
             and were set to their mean"
        ));
    }
    let Builder {
        mut model,
        origins,
        warnings,
        ..
    } = b;
    model.import_warnings = warnings;
    model.assign_coordinate_offsets();
    let map = |path: &FieldPath| -> Location {
        let fallback = Location::field(path.to_string());
        let list = match path.0.first() {
            Some(Seg::Key(k)) if k == "bodies" => &origins.bodies,
            Some(Seg::Key(k)) if k == "joints" => &origins.joints,
            Some(Seg::Key(k)) if k == "colliders" => &origins.colliders,
            Some(Seg::Key(k)) if k == "actuators" => &origins.actuators,
            _ => return fallback,
        };
        match path.0.get(1) {
            Some(Seg::Index(i)) => list.get(*i).cloned().map_or(fallback, |mut l| {
                let rest = FieldPath(path.0[2..].to_vec()).to_string();
                if !rest.is_empty() {
                    l.field = format!("{} ({rest})", l.field);
                }
                l
            }),
            _ => fallback,
        }
    };
    validate_model(&model, &map)?;
    let inertia_warnings = crate::io::validate::inertia_warnings(
        &model,
        "body",
        " (MuJoCo refuses it; <compiler balanceinertia=\"true\"> repairs it)",
    );
    model.import_warnings.extend(inertia_warnings);
    Ok(model)
}

impl Builder<'_> {
    /// Adds MJCF body `body` whose parent frame is `offset` in our body `parent` (the world
    /// frame if `None`), `mj_parent` its parent's MJCF index. A body welded to the world
    /// gives its geoms to the world, a massless body welded to a moving one is merged into
    /// it, any other becomes a chain of bodies, one per joint ([`Builder::add_joint_chain`]).
    fn visit(
        &mut self,
        body: &MjBody,
        parent: Option<BodyId>,
        offset: Isometry3<f64>,
        mj_parent: usize,
    ) -> Result<(), ModelError> {
        let mj_index = self.welds.len();
        // Unnamed bodies are named by their depth-first MJCF index.
        let name = body
            .name
            .clone()
            .unwrap_or_else(|| format!("body{mj_index}"));
        let weld = self.push_weld(body, mj_parent);
        let frame = offset * body.pose;
        if body.mocap {
            self.warnings.push(format!(
                "{}: mocap body `{name}` imported as a static body",
                body.src.location
            ));
        }
        if weld == 0 || body.mocap {
            // Welded to the world: its geoms are world colliders, its children hang from the
            // world.
            self.static_bodies.push(name.clone());
            return self.add_contents(body, None, frame, mj_index, &name);
        }
        let props = self.mass_properties(body, &name)?;
        if body.joints.is_empty() && props.mass == 0.0 && props.inertia == Matrix3::zeros() {
            // A massless body fixed to a moving one: merged into it.
            self.merged_bodies.push(name.clone());
            return self.add_contents(body, parent, frame, mj_index, &name);
        }
        let chain = self.joint_chain(body, &name, frame, parent);
        if chain.anchor != Vector3::zeros() {
            self.shifted.push(name.clone());
        }
        let last = Body {
            name: name.clone(),
            mass: props.mass,
            com: props.com - chain.anchor,
            inertia: props.inertia,
        };
        let current = self.add_joint_chain(body, last, frame, parent, chain.joints)?;
        let inner = Isometry3::from_parts(
            Translation3::from(-chain.anchor),
            UnitQuaternion::identity(),
        );
        self.add_contents(body, current, inner, mj_index, &name)
    }

    /// Records the weld body of the MJCF body `body` (its own when it has joints, else its
    /// parent's) and its parent's; returns its weld body.
    fn push_weld(&mut self, body: &MjBody, mj_parent: usize) -> usize {
        let mj_index = self.welds.len();
        let parent_weld = self.welds[mj_parent].body;
        let weld = if body.joints.is_empty() {
            parent_weld
        } else {
            mj_index
        };
        self.welds.push(Weld {
            body: weld,
            parent: parent_weld,
        });
        weld
    }

    /// Adds the geoms of `body` as colliders on `on`, placed by `frame`, and visits its
    /// children hanging from `on` at `frame`.
    fn add_contents(
        &mut self,
        body: &MjBody,
        on: Option<BodyId>,
        frame: Isometry3<f64>,
        mj_index: usize,
        name: &str,
    ) -> Result<(), ModelError> {
        for (k, g) in body.geoms.iter().enumerate() {
            self.add_collider(g, on, &frame, mj_index, name, k)?;
        }
        for c in &body.children {
            self.visit(c, on, frame, mj_index)?;
        }
        Ok(())
    }

    /// The compiled mass properties of `body` (named `name`): corrected as MuJoCo does
    /// ([`corrected`]) and scaled by `settotalmass`.
    fn mass_properties(&mut self, body: &MjBody, name: &str) -> Result<MassProperties, ModelError> {
        let (mut props, balanced) = corrected(
            body_properties(
                body,
                self.mj.compiler.inertia_from_geom,
                self.mj.compiler.inertia_group_range,
                &self.mj.meshes,
            )?,
            &self.mj.compiler,
        );
        if balanced {
            self.balanced.push(name.to_string());
        }
        props.mass *= self.mass_scale;
        props.inertia *= self.mass_scale;
        Ok(props)
    }

    /// The joints of `body` (named `name`, its frame `frame` in `parent`), one per MJCF
    /// joint (a fixed one where it has none): the first placed at its anchor in `frame`, each
    /// next one at its anchor relative to the previous.
    fn joint_chain(
        &mut self,
        body: &MjBody,
        name: &str,
        frame: Isometry3<f64>,
        parent: Option<BodyId>,
    ) -> JointChain {
        let mut joints: Vec<(Joint, Location)> = Vec::new();
        let mut anchor = Vector3::zeros();
        if body.joints.is_empty() {
            let jname = unique(&mut self.joint_names, format!("{name}_fixed"));
            joints.push((
                Joint::new(jname, JointKind::Fixed, parent).with_placement(frame),
                body.src.location.clone(),
            ));
        }
        for (k, j) in body.joints.iter().enumerate() {
            let base = j.name.clone().unwrap_or_else(|| format!("{name}_joint{k}"));
            let jname = unique(&mut self.joint_names, base);
            let placement = if k == 0 {
                if j.kind == JointType::Free {
                    Isometry3::identity()
                } else {
                    frame * Translation3::from(j.pos)
                }
            } else {
                Isometry3::from_parts(
                    Translation3::from(j.pos - anchor),
                    UnitQuaternion::identity(),
                )
            };
            anchor = j.pos;
            joints.push((
                self.joint(j, jname, placement, parent),
                j.src.location.clone(),
            ));
        }
        JointChain { joints, anchor }
    }

    /// Our joint of MJCF joint `j`, named `name`, at `placement` in `parent`; warns about a
    /// nonzero `ref` and the attributes not imported.
    fn joint(
        &mut self,
        j: &MjJoint,
        name: String,
        placement: Isometry3<f64>,
        parent: Option<BodyId>,
    ) -> Joint {
        let kind = match j.kind {
            JointType::Hinge => JointKind::Revolute,
            JointType::Slide => JointKind::Prismatic,
            JointType::Ball => JointKind::Ball,
            JointType::Free => JointKind::Floating,
        };
        let mut joint = Joint::new(name, kind, parent).with_placement(placement);
        if matches!(kind, JointKind::Revolute | JointKind::Prismatic) {
            joint.axis = Unit::new_normalize(j.axis);
        }
        joint.limit = j.range.map(|(lower, upper)| JointLimit {
            lower,
            upper,
            stiffness: None,
            damping: None,
        });
        joint.damping = j.damping;
        joint.armature = j.armature;
        // our coordinate is MuJoCo's minus ref: the spring's rest moves with it
        joint.spring = j.spring.map(|(stiffness, springref)| JointSpring {
            stiffness,
            reference: springref - j.reference,
        });
        if j.reference != 0.0 {
            self.warnings.push(format!(
                "{}: joint `{}` has ref = {}: our coordinate is MuJoCo's minus ref \
                 (zero at the pose written in the file)",
                j.src.location, joint.name, j.reference
            ));
        }
        if !j.dropped.is_empty() {
            self.warnings.push(format!(
                "{}: joint `{}`: {} not imported",
                j.src.location,
                joint.name,
                j.dropped.join(", ")
            ));
        }
        joint
    }

    /// Adds the bodies of a joint chain to the model, hanging from `parent`: a massless
    /// joint-frame body per joint but the last, which carries `last`. Returns the last body.
    fn add_joint_chain(
        &mut self,
        body: &MjBody,
        last: Body,
        frame: Isometry3<f64>,
        parent: Option<BodyId>,
        mut joints: Vec<(Joint, Location)>,
    ) -> Result<Option<BodyId>, ModelError> {
        let Some((last_joint, last_loc)) = joints.pop() else {
            return Ok(parent);
        };
        let mut current = parent;
        for (mut joint, loc) in joints {
            joint.parent = current;
            let joint_frame = Body {
                name: format!("{}/{}", last.name, joint.name),
                mass: 0.0,
                com: Vector3::zeros(),
                inertia: Matrix3::zeros(),
            };
            current = Some(self.add_chain_body(body, joint_frame, joint, loc, frame)?);
        }
        let mut joint = last_joint;
        joint.parent = current;
        Ok(Some(
            self.add_chain_body(body, last, joint, last_loc, frame)?,
        ))
    }

    /// Adds body `b` of MJCF body `body` on `joint` (from `loc`); a free joint's initial q
    /// is the body's `frame`.
    fn add_chain_body(
        &mut self,
        body: &MjBody,
        b: Body,
        joint: Joint,
        loc: Location,
        frame: Isometry3<f64>,
    ) -> Result<BodyId, ModelError> {
        let is_free = joint.kind == JointKind::Floating;
        let id = self.model.add_body(b, joint)?;
        self.origins.bodies.push(body.src.location.clone());
        self.origins.joints.push(loc);
        if is_free {
            let q = &mut self.model.initial_state.q;
            let start = q.len() - 7;
            let (t, r) = (frame.translation.vector, frame.rotation);
            for (i, x) in [t.x, t.y, t.z, r.w, r.i, r.j, r.k].into_iter().enumerate() {
                q[start + i] = x;
            }
        }
        Ok(id)
    }

    fn material(&mut self, friction: f64) -> usize {
        let key = friction.to_bits();
        if let Some(&m) = self.friction_materials.get(&key) {
            return m;
        }
        self.model.materials.push(ContactMaterial {
            name: format!("mjcf_friction_{friction}"),
            friction,
            ..ContactMaterial::default_material()
        });
        let m = self.model.materials.len() - 1;
        self.friction_materials.insert(key, m);
        m
    }

    /// Adds geom `g` (the `k`-th of MJCF body `owner`) as a collider on `body` placed by
    /// `frame ∘` its own pose.
    fn add_collider(
        &mut self,
        g: &MjGeom,
        body: Option<BodyId>,
        frame: &Isometry3<f64>,
        mj_body: usize,
        owner: &str,
        k: usize,
    ) -> Result<(), ModelError> {
        if g.contype == 0 && g.conaffinity == 0 && !self.options.visual_geoms {
            self.visual_only += 1;
            return Ok(());
        }
        let s = g.size;
        let moving = body.is_some();
        let shape = match g.kind {
            GeomType::Sphere => Shape::Sphere { radius: s[0] },
            GeomType::Box => Shape::Box {
                half_extents: Vector3::new(s[0], s[1], s[2]),
            },
            GeomType::Capsule => Shape::Capsule {
                radius: s[0],
                half_length: s[1],
            },
            GeomType::Cylinder => Shape::Cylinder {
                radius: s[0],
                half_length: s[1],
            },
            GeomType::Plane => {
                if moving {
                    return Err(g.src.error(
                        Some("type"),
                        "a plane geom must belong to the world or a static body (MuJoCo's rule)",
                    ));
                }
                Shape::Plane {
                    normal: Vector3::z_axis(),
                }
            }
            GeomType::Ellipsoid => {
                // The convex hull of points on the surface (a 12 × 24 latitude-longitude grid).
                let mut pts = vec![Vector3::new(0.0, 0.0, s[2]), Vector3::new(0.0, 0.0, -s[2])];
                for i in 1..12 {
                    let th = std::f64::consts::PI * i as f64 / 12.0;
                    for j in 0..24 {
                        let ph = 2.0 * std::f64::consts::PI * j as f64 / 24.0;
                        pts.push(Vector3::new(
                            s[0] * th.sin() * ph.cos(),
                            s[1] * th.sin() * ph.sin(),
                            s[2] * th.cos(),
                        ));
                    }
                }
                self.warnings.push(format!(
                    "{}: ellipsoid geom approximated by the convex hull of 266 surface points",
                    g.src.location
                ));
                Shape::Convex(ConvexHull::new(pts).map_err(|m| g.src.error(Some("size"), m))?)
            }
            GeomType::Mesh => {
                let mesh = &self.mj.meshes[g.mesh.unwrap_or(0)];
                let tm = TriangleMesh::new(
                    mesh.data.vertices.clone(),
                    mesh.data.triangles.clone(),
                    Some(MeshSource {
                        file: mesh.file.clone(),
                        scale: mesh.scale,
                    }),
                )
                .and_then(|m| if moving { m.colliding_as_hull() } else { Ok(m) })
                .map_err(|m| {
                    g.src
                        .error(Some("mesh"), format!("mesh `{}`: {m}", mesh.name))
                })?;
                Shape::Mesh(tm)
            }
            GeomType::Unsupported => {
                self.warnings.push(format!(
                    "{}: {} geom skipped (not supported)",
                    g.src.location, g.type_name
                ));
                return Ok(());
            }
        };
        let base = g.name.clone().unwrap_or_else(|| format!("{owner}_geom{k}"));
        let name = unique(&mut self.collider_names, base);
        // condim 1: frictionless contacts.
        let friction = if g.condim == 1 { 0.0 } else { g.friction };
        let material = self.material(friction);
        self.model.colliders.push(Collider {
            name,
            body,
            pose: frame * g.pose,
            shape,
            material,
            filter: CollisionFilter {
                group: g.contype,
                mask: g.conaffinity,
            },
        });
        self.origins.colliders.push(g.src.location.clone());
        self.collider_mj_body.push(mj_body);
        self.collider_bits.push((g.contype, g.conaffinity));
        Ok(())
    }

    fn add_actuators(&mut self) -> Result<(), ModelError> {
        if !self.options.actuators {
            return Ok(());
        }
        let mut names = HashSet::new();
        let mut dropped_ctrl = Vec::new();
        for a in &self.mj.actuators {
            let Some(joint) = self.model.joint_index(&a.joint) else {
                return Err(ModelError::UnknownName {
                    location: Location {
                        field: format!("{}.joint", a.src.location.field),
                        ..a.src.location.clone()
                    },
                    kind: "joint",
                    name: a.joint.clone(),
                });
            };
            let kind = self.model.joints[joint].kind;
            let base = a
                .name
                .clone()
                .unwrap_or_else(|| format!("{}_actuator", a.joint));
            if !matches!(kind, JointKind::Revolute | JointKind::Prismatic) {
                self.warnings.push(format!(
                    "{}: actuator `{base}` on a {kind:?} joint skipped (only hinge and slide \
                     joints are actuated)",
                    a.src.location
                ));
                continue;
            }
            let name = unique(&mut names, base);
            let intersect = |x: Option<(f64, f64)>, y: Option<(f64, f64)>| match (x, y) {
                (Some(x), Some(y)) => Some((x.0.max(y.0), x.1.min(y.1))),
                (x, y) => x.or(y),
            };
            let (actuator_kind, effort_limit) = match a.kind {
                // τ = ctrl: clamped by ctrlrange and forcerange.
                ActuatorType::Motor => (ActuatorKind::Motor, intersect(a.ctrlrange, a.forcerange)),
                ActuatorType::Position { kp, kv } => {
                    if a.ctrlrange.is_some() {
                        dropped_ctrl.push(name.clone());
                    }
                    (ActuatorKind::Position { kp, kv }, a.forcerange)
                }
            };
            if let Some((lo, hi)) = effort_limit {
                if lo > hi {
                    return Err(a.src.error(
                        Some("forcerange"),
                        format!("ctrlrange and forcerange do not overlap ([{lo}, {hi}])"),
                    ));
                }
            }
            self.model.actuators.push(Actuator {
                name,
                joint,
                dof: 0,
                gear: a.gear,
                effort_limit,
                kind: actuator_kind,
            });
            self.origins.actuators.push(a.src.location.clone());
        }
        if !dropped_ctrl.is_empty() {
            self.warnings.push(format!(
                "the ctrlrange of position actuators is not enforced (commands are not \
                 clamped; forcerange is): {}",
                dropped_ctrl.join(", ")
            ));
        }
        Ok(())
    }

    /// Collision exclusions where MuJoCo filters a pair our rules would not: bodies welded
    /// together, bodies whose weld bodies are parent and child (`filterparent`), and
    /// `<contact><exclude>`.
    fn add_exclusions(&mut self) -> Result<(), ModelError> {
        let mut excluded_bodies: HashSet<(usize, usize)> = HashSet::new();
        // Body name → MJCF index, rebuilt from the traversal order.
        let mut names = Vec::new();
        fn collect<'b>(b: &'b MjBody, out: &mut Vec<Option<&'b str>>) {
            out.push(b.name.as_deref());
            for c in &b.children {
                collect(c, out);
            }
        }
        names.push(Some("world"));
        for b in &self.mj.bodies {
            collect(b, &mut names);
        }
        for e in &self.mj.excludes {
            let find = |n: &str, attr: &str| {
                names
                    .iter()
                    .position(|x| *x == Some(n))
                    .ok_or_else(|| ModelError::UnknownName {
                        location: Location {
                            field: format!("{}.{attr}", e.src.location.field),
                            ..e.src.location.clone()
                        },
                        kind: "body",
                        name: n.to_string(),
                    })
            };
            let (a, b) = (find(&e.body1, "body1")?, find(&e.body2, "body2")?);
            excluded_bodies.insert((a.min(b), a.max(b)));
        }
        let nc = self.model.colliders.len();
        let mut pairs = Vec::new();
        for i in 0..nc {
            for j in i + 1..nc {
                let (ci, cj) = (&self.model.colliders[i], &self.model.colliders[j]);
                if ci.body == cj.body {
                    continue;
                }
                if let (Some(a), Some(b)) = (ci.body, cj.body) {
                    let parent = |x: usize| self.model.joints[x].parent;
                    if parent(a) == Some(b) || parent(b) == Some(a) {
                        continue;
                    }
                }
                let (bi, bj) = (self.collider_mj_body[i], self.collider_mj_body[j]);
                let (wi, wj) = (self.welds[bi], self.welds[bj]);
                let filtered = wi.body == wj.body
                    || (wi.body != 0
                        && wj.body != 0
                        && (wi.body == wj.parent || wj.body == wi.parent))
                    || excluded_bodies.contains(&(bi.min(bj), bi.max(bj)));
                if filtered {
                    pairs.push((i, j));
                }
            }
        }
        self.model.excluded_pairs = pairs;
        Ok(())
    }

    fn finish_warnings(&mut self) {
        let mj = self.mj;
        if !mj.skipped.is_empty() {
            let list: Vec<String> = mj
                .skipped
                .iter()
                .map(|(k, n)| format!("<{k}> ×{n}"))
                .collect();
            self.warnings
                .push(format!("MJCF elements not imported: {}", list.join(", ")));
        }
        if !self.static_bodies.is_empty() {
            self.warnings.push(format!(
                "bodies without joints fixed to the world merged into it (their geoms are world \
                 colliders): {}",
                self.static_bodies.join(", ")
            ));
        }
        if !self.merged_bodies.is_empty() {
            self.warnings.push(format!(
                "massless bodies without joints merged into their parent: {}",
                self.merged_bodies.join(", ")
            ));
        }
        if !self.shifted.is_empty() {
            self.warnings.push(format!(
                "body frames moved to the joint anchor (joint pos ≠ 0; COM, geoms and children \
                 shifted to match): {}",
                self.shifted.join(", ")
            ));
        }
        if self.visual_only > 0 {
            self.warnings.push(format!(
                "{} visual-only geom(s) (contype = conaffinity = 0) give mass but no collider",
                self.visual_only
            ));
        }
        // Pairs of filters MuJoCo's rule (either direction) lets collide but ours (both
        // directions) does not.
        let bits: HashSet<(u32, u32)> = self.collider_bits.iter().copied().collect();
        let bits: Vec<(u32, u32)> = bits.into_iter().collect();
        let mut differ = Vec::new();
        for (i, a) in bits.iter().enumerate() {
            for b in &bits[i..] {
                let mujoco = a.0 & b.1 != 0 || b.0 & a.1 != 0;
                let ours = a.0 & b.1 != 0 && b.0 & a.1 != 0;
                if mujoco != ours {
                    differ.push(format!(
                        "(contype {}, conaffinity {}) with (contype {}, conaffinity {})",
                        a.0, a.1, b.0, b.1
                    ));
                }
            }
        }
        if !differ.is_empty() {
            differ.sort();
            self.warnings.push(format!(
                "collision filters: these geom pairs collide in MuJoCo (one direction of \
                 contype & conaffinity suffices) but not here (both directions needed): {}",
                differ.join("; ")
            ));
        }
    }
}
