//! A complementarity Lagrangian system (Nurkanović et al. eq. 3) read from a model file: the mass
//! matrix, bias and actuator forces from `nonsmooth-core`'s scalar-generic dynamics
//! (CRBA and RNEA, Featherstone RBDA ch. 5–6), evaluated with the NLP's dual numbers so that
//! the FESD derivatives are exact, and unilateral contacts of points of bodies against world
//! planes, each
//!
//! ```text
//! f_c,i(q) = nᵀ (p_i(q) − p₀) − r,   ∇f_c,i(q) = J_i(q)ᵀ n,   b_i(q) = J_i(q)ᵀ t,
//! M(q) v̇ = Pᵀ u + f_passive(q, v) − h(q, v)   (away from contact),
//! ```
//!
//! with p_i the contact point (a point's or sphere's origin, every point of a `points`
//! collider, every corner of a box), r the sphere's radius (0 otherwise), n the plane's
//! outward normal, t = n rotated by −90° about z (the planar tangent, +x on a ground with
//! normal +y), J_i the point Jacobian and Pᵀ the actuation matrix of the chosen motors.
//! Several contacts go through nosnoc's multi-contact time-freezing
//! ([`crate::time_freezing::TimeFreezing`], module docs). The reformulation needs q̇ = v: every joint
//! must be revolute, prismatic, planar or fixed (no quaternion coordinates).
//!
//! Limits of the construction (typed errors, [`ModelSystem::new`]): point contacts only
//! (a capsule, cylinder or mesh touches a plane along a line or a surface), at most
//! [`MAX_CONTACTS`] contact points, friction only in planar models (Nurkanović et al. Def. 6: the
//! tangential jump of the auxiliary dynamics is planar), motor actuators with effort bounds,
//! no joint limits and no bilateral constraints; with several contacts neither the elastic
//! auxiliary dynamics nor Stewart's reformulation (errors of `TimeFreezing::elastic` and of
//! the NLP's build).

mod taylor;

use crate::nlp::Real;
use crate::OcpError;
use nalgebra::{DVector, Vector3};
use nonsmooth_core::dynamics::{
    bias_force, kinematics, mass_matrix, passive_force, point_jacobian, point_position, Kinematics,
};
use nonsmooth_core::{ActuatorKind, Dimension, JointKind, Model, Shape};
use std::ops::Range;

/// The contact of a [`ModelSystem`]: a point of a body against a world plane.
#[derive(Debug, Clone, PartialEq)]
pub struct PlaneContact {
    /// Name of the body-side collider.
    pub collider: String,
    /// Index of the point on that collider (a box's corner; 0 for a point or sphere).
    pub corner: usize,
    /// Name of the plane collider.
    pub plane: String,
    /// Body carrying the point.
    pub body: usize,
    /// The point (the collider's origin) in the body frame.
    pub point: Vector3<f64>,
    /// Sphere radius (0 for a point).
    pub radius: f64,
    /// A point of the plane (world).
    pub plane_point: Vector3<f64>,
    /// Outward unit normal of the plane (world).
    pub normal: Vector3<f64>,
    /// Unit tangent in the motion plane (world), `(n_y, −n_x, 0)` normalized.
    pub tangent: Vector3<f64>,
    /// Coulomb friction coefficient of the pair.
    pub friction: f64,
}

/// A point of a body kept outside an axis-aligned ellipse of the motion plane (a hole of
/// the hopper's terrain): `((p_x − c_x)/a)² + ((p_y − c_y)/b)² ≥ 1` at every stage point.
#[derive(Debug, Clone, PartialEq)]
pub struct EllipseObstacle {
    /// Body carrying the point.
    pub body: usize,
    /// The point in the body frame.
    pub point: Vector3<f64>,
    /// Centre (c_x, c_y) in world coordinates.
    pub center: [f64; 2],
    /// Semi-axes (a, b) along world x and y, > 0.
    pub axes: [f64; 2],
}

/// One coordinate (world x or y) of a point of a body kept within bounds at every stage point
/// (the hopper's foot and knee bounds).
#[derive(Debug, Clone, PartialEq)]
pub struct PointBound {
    /// Body carrying the point.
    pub body: usize,
    /// The point in the body frame.
    pub point: Vector3<f64>,
    /// World axis: 0 for x, 1 for y.
    pub axis: usize,
    /// Lower and upper bound (m; ±1e20 for none).
    pub bounds: (f64, f64),
}

/// A path constraint of a [`ModelSystem`] ([`ModelSystem::path`](crate::model_system::ModelSystem::path)).
#[derive(Debug, Clone, PartialEq)]
pub enum PathTerm {
    /// A point kept outside an ellipse.
    OutsideEllipse(EllipseObstacle),
    /// A point's world coordinate within bounds.
    Point(PointBound),
}

impl PathTerm {
    fn point(&self) -> (usize, &Vector3<f64>) {
        match self {
            PathTerm::OutsideEllipse(e) => (e.body, &e.point),
            PathTerm::Point(p) => (p.body, &p.point),
        }
    }
}

/// The complementarity Lagrangian system of a [`Model`] (see the module docs).
#[derive(Debug, Clone)]
pub struct ModelSystem {
    model: Model,
    contacts: Vec<PlaneContact>,
    /// Per motor: (velocity index, gear).
    controls: Vec<(usize, f64)>,
    /// Controls affine in the physical clock ([`ModelSystem::with_clock_rates`]).
    clock_rates: bool,
    path: Vec<PathTerm>,
    /// Per coordinate: a translation (see [`translation_coordinates`]).
    translation: Vec<bool>,
    /// The other coordinates: the variables of the derivative evaluation of [`taylor`].
    shape_coords: Vec<usize>,
    /// Per contact: (k, ∂f_c/∂q_k) of the translation coordinates (constants).
    gap_slopes: Vec<Vec<(usize, f64)>>,
    /// Per path term: (k, world (x, y) of its point per unit q_k) of the translation
    /// coordinates (constants).
    path_slopes: Vec<Vec<(usize, [f64; 2])>>,
    /// Identity of this system's functions for the derivative cache of [`taylor`] (a new
    /// one whenever they change).
    id: usize,
}

/// Per coordinate, whether it is a translation: the coordinate of a prismatic joint with only
/// prismatic or fixed joints between it and the world. Moving it translates its subtree
/// rigidly along a constant world axis, so M(q), the gravity force, the contact Jacobian and
/// the point Jacobians do not depend on it, h(q, v) depends neither on it nor on its velocity
/// (Galilean invariance), and the gap and every point are affine in it with constant slopes.
/// The derivative evaluation of [`taylor`] therefore runs over the other coordinates only.
fn translation_coordinates(model: &Model) -> Vec<bool> {
    let mut out = vec![false; model.nq()];
    for joint in model
        .joints
        .iter()
        .filter(|j| j.kind == JointKind::Prismatic)
    {
        let mut parent = joint.parent;
        let mut translation = true;
        while let Some(body) = parent {
            let above = &model.joints[body];
            if !matches!(above.kind, JointKind::Prismatic | JointKind::Fixed) {
                translation = false;
                break;
            }
            parent = above.parent;
        }
        out[joint.q_index] = translation;
    }
    out
}

/// Most contact points of a [`ModelSystem`]: the free-flight weight of the multi-contact
/// time-freezing PSS is a product over the contacts, and every contact adds 2 (3 with
/// friction) switching functions per stage point.
pub const MAX_CONTACTS: usize = 8;

/// The contact points of a body-side collider: (body, point in the body frame, radius) of a
/// point or sphere, of every point of a `points` collider, of every corner of a box (4 in
/// the x–y plane of a planar model, 8 in a spatial one); `None` for other shapes or a
/// collider of the world.
fn contact_points(model: &Model, collider: usize) -> Option<Vec<(usize, Vector3<f64>, f64)>> {
    let c = &model.colliders[collider];
    let body = c.body?;
    let at = |p: Vector3<f64>| c.pose.transform_point(&p.into()).coords;
    match &c.shape {
        Shape::Sphere { radius } => Some(vec![(body, at(Vector3::zeros()), *radius)]),
        Shape::Point => Some(vec![(body, at(Vector3::zeros()), 0.0)]),
        Shape::Points { points } => Some(points.iter().map(|p| (body, at(*p), 0.0)).collect()),
        Shape::Box { half_extents: h } => {
            let zs: &[f64] = if model.dimension == Dimension::Planar {
                &[0.0]
            } else {
                &[-1.0, 1.0]
            };
            let mut out = Vec::new();
            for &sz in zs {
                for (sx, sy) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
                    let p = Vector3::new(sx * h.x, sy * h.y, sz * h.z);
                    out.push((body, at(p), 0.0));
                }
            }
            Some(out)
        }
        _ => None,
    }
}

/// Whether collider `i` is a world plane.
fn is_world_plane(model: &Model, i: usize) -> bool {
    let c = &model.colliders[i];
    c.body.is_none() && matches!(c.shape, Shape::Plane { .. })
}

/// An input error naming the model.
fn model_error(model: &Model, m: String) -> OcpError {
    OcpError::InvalidInput(format!("model \"{}\": {m}", model.name))
}

/// Checks the limits of the time-freezing construction on the model's joints and
/// constraints: q̇ = v (no floating or ball joints), no joint limits, no bilateral
/// constraints.
fn check_supported(model: &Model) -> Result<(), OcpError> {
    let bad = |m: String| model_error(model, m);
    for j in &model.joints {
        if matches!(j.kind, JointKind::Floating | JointKind::Ball) {
            return Err(bad(format!(
                "joint \"{}\" is {}: time-freezing needs q̇ = v (revolute, prismatic, \
                 planar or fixed joints; give a free body in a planar model a planar joint)",
                j.name,
                format!("{:?}", j.kind).to_lowercase()
            )));
        }
        if j.limit.is_some() {
            return Err(bad(format!(
                "joint \"{}\" has a limit: joint limits are not supported by the \
                 time-freezing construction (one contact); bound the coordinate with \
                 [ocp.path] instead",
                j.name
            )));
        }
    }
    if let Some(c) = model.constraints.first() {
        return Err(bad(format!(
            "constraint \"{}\": bilateral constraints are not supported by time-freezing",
            c.name
        )));
    }
    Ok(())
}

/// The (body collider, world plane) pairs in contact: the named `pairs`, or every pair of a
/// body collider with a world plane that the collision filters allow.
fn contact_pairs(
    model: &Model,
    pairs: Option<&[(&str, &str)]>,
) -> Result<Vec<(usize, usize)>, OcpError> {
    let bad = |m: String| model_error(model, m);
    let index = |name: &str| {
        model
            .colliders
            .iter()
            .position(|c| c.name == name)
            .ok_or_else(|| bad(format!("no collider named \"{name}\"")))
    };
    let chosen: Vec<(usize, usize)> = match pairs {
        Some(list) => {
            let mut out = Vec::with_capacity(list.len());
            for &(a, b) in list {
                let (ia, ib) = (index(a)?, index(b)?);
                if !is_world_plane(model, ib) {
                    return Err(bad(format!(
                        "collider \"{b}\" is not a world plane (the contact's second collider)"
                    )));
                }
                out.push((ia, ib));
            }
            out
        }
        None => {
            let planes: Vec<usize> = (0..model.colliders.len())
                .filter(|&i| is_world_plane(model, i))
                .collect();
            (0..model.colliders.len())
                .filter(|&i| model.colliders[i].body.is_some())
                .flat_map(|a| planes.iter().map(move |&p| (a, p)))
                .filter(|&(a, p)| {
                    model.colliders[a].filter.allows(&model.colliders[p].filter)
                        && !model
                            .excluded_pairs
                            .iter()
                            .any(|&(x, y)| (x, y) == (a, p) || (y, x) == (a, p))
                })
                .collect()
        }
    };
    if chosen.is_empty() {
        return Err(bad(
            "no contact: time-freezing needs a collider of a body (point, sphere, points or \
             box) and a world plane"
                .into(),
        ));
    }
    Ok(chosen)
}

/// The contact points of the collider pairs `chosen` ([`contact_points`]) with their plane's
/// normal, tangent and friction; at most [`MAX_CONTACTS`], frictionless in a spatial model.
fn plane_contacts(
    model: &Model,
    chosen: Vec<(usize, usize)>,
) -> Result<Vec<PlaneContact>, OcpError> {
    let bad = |m: String| model_error(model, m);
    let mut contacts = Vec::new();
    for (ci, pi) in chosen {
        let collider = &model.colliders[ci];
        let Some(points) = contact_points(model, ci) else {
            return Err(bad(format!(
                "collider \"{}\" touches a plane along a line or a surface: the \
                 time-freezing construction takes point contacts (points, spheres, box \
                 corners)",
                collider.name
            )));
        };
        let plane = &model.colliders[pi];
        let Shape::Plane { normal } = &plane.shape else {
            return Err(bad(format!("collider \"{}\" is not a plane", plane.name)));
        };
        let n = plane.pose.rotation * normal.into_inner();
        let mut tangent = Vector3::new(n.y, -n.x, 0.0);
        if tangent.norm() < 1e-12 {
            tangent = Vector3::x();
        }
        tangent.normalize_mut();
        let friction = model.pair_material(ci, pi).friction;
        if friction > 0.0 && model.dimension == Dimension::Spatial {
            return Err(bad(format!(
                "the pair {}–{} has friction μ = {friction} in a spatial model: frictional \
                 time-freezing is planar (Nurkanović et al. Def. 6); use a planar model or μ = 0",
                collider.name, plane.name
            )));
        }
        for (corner, (body, point, radius)) in points.into_iter().enumerate() {
            contacts.push(PlaneContact {
                collider: collider.name.clone(),
                corner,
                plane: plane.name.clone(),
                body,
                point,
                radius,
                plane_point: plane.pose.translation.vector,
                normal: n,
                tangent,
                friction,
            });
        }
    }
    if contacts.len() > MAX_CONTACTS {
        return Err(bad(format!(
            "{} contact points: the multi-contact time-freezing construction here takes at \
             most {MAX_CONTACTS} (its free-flight weight is a product over the contacts); \
             name the pairs with time_freezing.contacts",
            contacts.len()
        )));
    }
    Ok(contacts)
}

/// The motors `controls` (actuator names, in control order) as (velocity index, gear).
fn motor_controls(model: &Model, controls: &[String]) -> Result<Vec<(usize, f64)>, OcpError> {
    let mut mapped = Vec::with_capacity(controls.len());
    for name in controls {
        let Some(a) = model.actuators.iter().find(|a| &a.name == name) else {
            return Err(model_error(model, format!("no actuator named \"{name}\"")));
        };
        if a.kind != ActuatorKind::Motor {
            return Err(model_error(
                model,
                format!("actuator \"{name}\" is a position servo: OCP controls are motor efforts"),
            ));
        }
        mapped.push((model.joints[a.joint].v_index + a.dof, a.gear));
    }
    Ok(mapped)
}

impl ModelSystem {
    /// The system of `model` with the contacts of the collider `pairs` (body side, plane;
    /// `None`: every pair of a body collider with a world plane that the collision filters
    /// allow) and the motors `controls` (actuator names, in control order). A point or sphere
    /// is one contact point, a `points` collider one per point, a box one per corner (4 in a
    /// planar model, 8 in a spatial one).
    ///
    /// # Errors
    /// [`OcpError::InvalidInput`] naming the model, joint, collider or actuator for the
    /// limits of the module docs: quaternion joints, joint limits, bilateral constraints,
    /// no contact, a body shape without point contacts (capsule, cylinder, mesh), more than
    /// [`MAX_CONTACTS`] contact points, friction in a spatial model, an unknown or non-motor
    /// actuator.
    pub fn new(
        model: Model,
        pairs: Option<&[(&str, &str)]>,
        controls: &[String],
    ) -> Result<Self, OcpError> {
        check_supported(&model)?;
        let chosen = contact_pairs(&model, pairs)?;
        let contacts = plane_contacts(&model, chosen)?;
        let mapped = motor_controls(&model, controls)?;
        let translation = translation_coordinates(&model);
        let shape_coords = (0..translation.len())
            .filter(|&k| !translation[k])
            .collect();
        let mut sys = Self {
            model,
            contacts,
            controls: mapped,
            clock_rates: false,
            path: Vec::new(),
            translation,
            shape_coords,
            gap_slopes: Vec::new(),
            path_slopes: Vec::new(),
            id: taylor::fresh_id(),
        };
        sys.gap_slopes = sys
            .contacts
            .iter()
            .map(|c| {
                sys.translation_slopes(c.body, &c.point)
                    .into_iter()
                    .map(|(k, d)| (k, d.dot(&c.normal)))
                    .collect()
            })
            .collect();
        Ok(sys)
    }

    /// (k, world displacement of `point` of `body` per unit q_k) of the translation
    /// coordinates that move the body (constant: the columns of the point Jacobian).
    fn translation_slopes(&self, body: usize, point: &Vector3<f64>) -> Vec<(usize, Vector3<f64>)> {
        let nq = self.model.nq();
        let kin = kinematics(&self.model, &DVector::zeros(nq), &DVector::zeros(nq));
        let p = point_position(&kin, Some(body), point);
        let jac = point_jacobian(&self.model, &kin, Some(body), &p);
        (0..nq)
            .filter(|&k| self.translation[k] && jac.column(k).norm() > 0.0)
            .map(|k| (k, jac.column(k).into_owned()))
            .collect()
    }

    /// Sets the path constraints on points of bodies ([`ModelSystem::path`](crate::model_system::ModelSystem::path), in this order).
    ///
    /// # Errors
    /// [`OcpError::InvalidInput`] naming the term's index for a body out of range,
    /// non-positive or non-finite semi-axes, an axis other than 0 or 1, or bounds that are
    /// NaN or not ordered.
    pub fn with_path(mut self, path: Vec<PathTerm>) -> Result<Self, OcpError> {
        for (k, term) in path.iter().enumerate() {
            let bad = |m: String| Err(OcpError::InvalidInput(format!("path term {k}: {m}")));
            let (body, _) = term.point();
            if body >= self.model.bodies.len() {
                return bad(format!("body index {body} out of range"));
            }
            match term {
                PathTerm::OutsideEllipse(o) => {
                    if !o.axes.iter().all(|a| a.is_finite() && *a > 0.0)
                        || !o.center.iter().all(|c| c.is_finite())
                    {
                        return bad(format!(
                            "semi-axes {:?} must be positive and the centre {:?} finite",
                            o.axes, o.center
                        ));
                    }
                }
                PathTerm::Point(p) => {
                    if p.axis > 1 {
                        return bad(format!("axis {} is not 0 (x) or 1 (y)", p.axis));
                    }
                    if p.bounds.0.is_nan() || p.bounds.1.is_nan() || p.bounds.0 > p.bounds.1 {
                        return bad(format!("bounds {:?} are not ordered", p.bounds));
                    }
                }
            }
        }
        self.path_slopes = path
            .iter()
            .map(|term| {
                let (body, point) = term.point();
                self.translation_slopes(body, point)
                    .into_iter()
                    .map(|(k, d)| (k, [d.x, d.y]))
                    .collect()
            })
            .collect();
        self.path = path;
        self.id = taylor::fresh_id();
        Ok(self)
    }

    /// The same system with the semi-axes of every [`PathTerm::OutsideEllipse`] scaled by
    /// `scale`, the ellipses left out for `scale ≤ 0`: the stages of an obstacle growth
    /// ([`crate::smoothing::Growth`]; the other path terms are kept).
    ///
    /// # Errors
    /// [`OcpError::InvalidInput`] for a scale that is not finite.
    pub fn with_obstacle_scale(&self, scale: f64) -> Result<Self, OcpError> {
        if !scale.is_finite() {
            return Err(OcpError::InvalidInput(format!(
                "obstacle scale {scale} is not finite"
            )));
        }
        let path = self
            .path
            .iter()
            .filter_map(|term| match term {
                PathTerm::OutsideEllipse(_) if scale <= 0.0 => None,
                PathTerm::OutsideEllipse(e) => Some(PathTerm::OutsideEllipse(EllipseObstacle {
                    axes: [e.axes[0] * scale, e.axes[1] * scale],
                    ..e.clone()
                })),
                other => Some(other.clone()),
            })
            .collect();
        self.clone().with_path(path)
    }

    /// The smallest obstacle clearance over the states `ys` (each starting with q): the
    /// least ellipse value − 1 of the [`PathTerm::OutsideEllipse`] terms (≥ 0 outside every
    /// ellipse), `None` without ellipses or states.
    pub fn min_obstacle_clearance(&self, ys: &[Vec<f64>]) -> Option<f64> {
        let nq = self.model.nq();
        let min = ys
            .iter()
            .flat_map(|y| {
                let values = self.path::<f64>(&y[..nq]);
                self.path
                    .iter()
                    .zip(values)
                    .filter(|(term, _)| matches!(term, PathTerm::OutsideEllipse(_)))
                    .map(|(_, v)| v - 1.0)
                    .collect::<Vec<_>>()
            })
            .fold(f64::INFINITY, f64::min);
        min.is_finite().then_some(min)
    }

    /// The number of flight phases over the states `ys` (each starting with q): maximal runs
    /// of consecutive states with every contact gap f_c,i(q) above `tol`.
    pub fn flight_phases(&self, ys: &[Vec<f64>], tol: f64) -> usize {
        let nq = self.model.nq();
        let mut count = 0;
        let mut flying = false;
        for y in ys {
            let (gaps, _, _) = self.contact_frames::<f64>(&y[..nq]);
            let up = gaps.iter().all(|g| *g > tol);
            if up && !flying {
                count += 1;
            }
            flying = up;
        }
        count
    }

    /// World (x, y) of the first contact point at the coordinates q (the foot of a hopper).
    pub fn contact_point(&self, q: &[f64]) -> [f64; 2] {
        let nq = self.model.nq();
        let kin = kinematics(
            &self.model,
            &DVector::from_column_slice(&q[..nq]),
            &DVector::zeros(nq),
        );
        let c = &self.contacts[0];
        let p = point_position(&kin, Some(c.body), &c.point);
        [p.x, p.y]
    }

    /// The same system with motor efforts affine in the physical clock t: the control vector
    /// is (u, r), twice the motors, and motor i exerts u_i + r_i t (times its gear). Constant
    /// controls per step then reproduce an input that grows with physical time, which the
    /// frozen phases of time-freezing must not advance (Nurkanović et al. Ex. 3: u₂ = 2g(t − 1) is
    /// u = −2g, r = 2g).
    pub fn with_clock_rates(mut self) -> Self {
        self.clock_rates = true;
        self.id = taylor::fresh_id();
        self
    }

    /// The motor efforts at the clock t: u itself, or u_i + r_i t with clock rates.
    fn efforts<T: Real>(&self, t: T, u: &[T]) -> Vec<T> {
        let n = self.controls.len();
        if self.clock_rates {
            (0..n).map(|i| u[i] + u[n + i] * t).collect()
        } else {
            u[..n.min(u.len())].to_vec()
        }
    }

    /// The generalized force `Pᵀ τ(t, u)` of the controls `u` at the physical clock `t`
    /// (length n_v).
    pub fn control_force(&self, t: f64, u: &[f64]) -> DVector<f64> {
        let mut f = DVector::zeros(self.model.nv());
        self.add_controls(f.as_mut_slice(), &self.efforts(t, u));
        f
    }

    /// Per motor: (velocity index, gear) of `Pᵀ`; `None` with clock rates (the efforts
    /// then depend on the clock as well).
    pub(crate) fn motors(&self) -> Option<&[(usize, f64)]> {
        (!self.clock_rates).then_some(self.controls.as_slice())
    }

    /// The path constraints ([`ModelSystem::path`](crate::model_system::ModelSystem::path), in this order).
    pub fn path_terms(&self) -> &[PathTerm] {
        &self.path
    }

    /// The model.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The first contact.
    pub fn contact(&self) -> &PlaneContact {
        &self.contacts[0]
    }

    /// Every contact point, in the order of the switching functions.
    pub fn contacts(&self) -> &[PlaneContact] {
        &self.contacts
    }

    /// Generalized force `Pᵀ u + f_passive(v) − h(q, v)` (RNEA with gravity).
    fn forces<T: Real>(&self, q: &DVector<T>, v: &DVector<T>, u: &[T]) -> DVector<T> {
        let mut f = passive_force(&self.model, q, v) - bias_force(&self.model, q, v);
        self.add_controls(f.as_mut_slice(), u);
        f
    }

    /// Adds the actuator forces `Pᵀ u` to the generalized force `f`.
    fn add_controls<T: Real>(&self, f: &mut [T], u: &[T]) {
        for (&(k, gear), &uk) in self.controls.iter().zip(u) {
            f[k] += uk * T::from(gear);
        }
    }

    /// The Cholesky factor of M(q) (CRBA, RBDA §6.2); a singular M (massless chain) leaves
    /// the identity so that the NLP evaluation stays finite (the model's validation rejects
    /// such models before).
    fn factor<T: Real>(&self, q: &DVector<T>) -> Option<nalgebra::Cholesky<T, nalgebra::Dyn>> {
        mass_matrix(&self.model, q).cholesky()
    }
}

/// `M⁻¹ r` with the factor, or r itself when M could not be factored.
fn solve<T: Real>(chol: &Option<nalgebra::Cholesky<T, nalgebra::Dyn>>, r: DVector<T>) -> Vec<T> {
    match chol {
        Some(c) => c.solve(&r).as_slice().to_vec(),
        None => r.as_slice().to_vec(),
    }
}

impl ModelSystem {
    /// The inner variables of the q-terms: the coordinates that are not translations (see
    /// [`translation_coordinates`]), gathered from the full q.
    fn shape_of<T: Real>(&self, q: &[T]) -> Vec<T> {
        self.shape_coords.iter().map(|&k| q[k]).collect()
    }

    /// The full coordinate vector of the shape coordinates `z`, translations at zero.
    fn expand<T: Real>(&self, z: &[T]) -> DVector<T> {
        let mut q = DVector::from_element(self.translation.len(), T::from(0.0));
        for (&k, &x) in self.shape_coords.iter().zip(z) {
            q[k] = x;
        }
        q
    }

    /// The functions of the shape coordinates z alone (translations at zero), in the order
    /// of [`ModelSystem::ranges`]: f_c, n, b, M⁻¹ (row major) and the world (x, y) of every
    /// path term's point, computed directly at the scalar `T`.
    pub(crate) fn q_terms<T: Real>(&self, z: &[T]) -> Vec<T> {
        let q = self.expand(z);
        let nq = q.len();
        let kin = kinematics(&self.model, &q, &DVector::zeros(nq));
        let [.., path] = self.ranges();
        let mut out = self.contact_frames_at(&kin, true);
        out.reserve(path.end - out.len());
        out.extend(self.minv_entries(&q));
        out.extend(self.path_points_at(&kin));
        out
    }

    /// `−h(q, v)` (RNEA with gravity) of the shape coordinates and their velocities
    /// z = (q_s, v_s), translations and their velocities at zero, computed directly at the
    /// scalar `T`.
    pub(crate) fn bias_terms<T: Real>(&self, z: &[T]) -> Vec<T> {
        let ns = self.shape_coords.len();
        let (q, v) = (self.expand(&z[..ns]), self.expand(&z[ns..]));
        (-bias_force(&self.model, &q, &v)).as_slice().to_vec()
    }

    /// The free acceleration `M⁻¹ (Pᵀ u + f_passive − h)` of the variables (q, v, u),
    /// computed directly at the scalar `T`.
    pub(crate) fn free_acceleration<T: Real>(&self, z: &[T]) -> Vec<T> {
        let nq = self.model.nq();
        let qd = DVector::from_column_slice(&z[..nq]);
        let vd = DVector::from_column_slice(&z[nq..2 * nq]);
        let chol = self.factor(&qd);
        solve(&chol, self.forces(&qd, &vd, &z[2 * nq..]))
    }

    /// The entries of M(q)⁻¹, row major (the identity when M cannot be factored, so that an
    /// NLP evaluation stays finite).
    fn minv_entries<T: Real>(&self, q: &DVector<T>) -> Vec<T> {
        let nq = q.len();
        let m = self
            .factor(q)
            .map(|c| c.inverse())
            .unwrap_or_else(|| nalgebra::DMatrix::identity(nq, nq));
        (0..nq * nq).map(|k| m[(k / nq, k % nq)]).collect()
    }

    /// The contact frames from the kinematics, grouped: every contact's gap f_c,i (at
    /// translations zero), then every normal n_i, then (if `tangent`) every tangent b_i.
    fn contact_frames_at<T: Real>(&self, kin: &Kinematics<T>, tangent: bool) -> Vec<T> {
        let k = self.contacts.len();
        let nq = self.model.nq();
        let mut gaps = Vec::with_capacity(k);
        let mut normals = Vec::with_capacity(k * nq);
        let mut tangents = Vec::with_capacity(if tangent { k * nq } else { 0 });
        for c in &self.contacts {
            let p = point_position(kin, Some(c.body), &c.point.map(T::from));
            gaps.push(
                (p - c.plane_point.map(T::from)).dot(&c.normal.map(T::from)) - T::from(c.radius),
            );
            let jac = point_jacobian(&self.model, kin, Some(c.body), &p);
            let row = |d: &Vector3<f64>| {
                let d = d.map(T::from);
                (0..jac.ncols())
                    .map(|k| jac.column(k).dot(&d))
                    .collect::<Vec<T>>()
            };
            normals.extend(row(&c.normal));
            if tangent {
                tangents.extend(row(&c.tangent));
            }
        }
        gaps.extend(normals);
        gaps.extend(tangents);
        gaps
    }

    /// World (x, y) of every path term's point from the kinematics.
    fn path_points_at<T: Real>(&self, kin: &Kinematics<T>) -> Vec<T> {
        self.path
            .iter()
            .flat_map(|term| {
                let (body, point) = term.point();
                let p = point_position(kin, Some(body), &point.map(T::from));
                [p.x, p.y]
            })
            .collect()
    }

    /// The entries `outputs` of the q-terms ([`ModelSystem::q_terms`]) at the full q: by the
    /// second-order Taylor composition of [`taylor`] when the model is small enough, else
    /// directly, computing only the asked group.
    fn q_outputs<T: Real>(&self, q: &[T], outputs: Range<usize>) -> Vec<T> {
        let z = self.shape_of(q);
        if let Some(out) = taylor::q_terms(self, &z, outputs.clone()) {
            return out;
        }
        let qz = self.expand(&z);
        let [_, _, tangent, minv, path] = self.ranges();
        if outputs.end <= tangent.end {
            let kin = kinematics(&self.model, &qz, &DVector::zeros(qz.len()));
            let all = self.contact_frames_at(&kin, outputs.end > tangent.start);
            all[outputs].to_vec()
        } else if outputs == minv {
            self.minv_entries(&qz)
        } else if outputs == path {
            let kin = kinematics(&self.model, &qz, &DVector::zeros(qz.len()));
            self.path_points_at(&kin)
        } else {
            self.q_terms(&z)[outputs].to_vec()
        }
    }

    /// Contact `i`'s gap: f_c,i at translations zero plus the translations' exact linear part.
    fn gap<T: Real>(&self, i: usize, gap_at_zero: T, q: &[T]) -> T {
        self.gap_slopes[i]
            .iter()
            .fold(gap_at_zero, |g, &(k, s)| g + q[k] * T::from(s))
    }

    /// Index ranges of the q-terms: (gaps, normals, tangents, M⁻¹, path points), the
    /// contact groups holding every contact in order.
    fn ranges(&self) -> [Range<usize>; 5] {
        let nq = self.model.nq();
        let k = self.contacts.len();
        let m0 = k + 2 * k * nq;
        [
            0..k,
            k..k + k * nq,
            k + k * nq..m0,
            m0..m0 + nq * nq,
            m0 + nq * nq..m0 + nq * nq + 2 * self.path.len(),
        ]
    }

    /// `M(q)⁻¹ r` with the M⁻¹ entries `minv` (row major).
    fn apply_minv<T: Real>(minv: &[T], nq: usize, r: &[T]) -> Vec<T> {
        (0..nq)
            .map(|i| (0..nq).fold(T::from(0.0), |s, j| s + minv[i * nq + j] * r[j]))
            .collect()
    }
}

/// The complementarity Lagrangian system (Nurkanović et al. eq. 3) that time-freezing reformulates.
impl ModelSystem {
    /// Number of generalized coordinates n_q (= n_v: no quaternion joints).
    pub fn nq(&self) -> usize {
        self.model.nq()
    }
    /// Number of controls n_u: the motors, twice with [`ModelSystem::with_clock_rates`].
    pub fn nu(&self) -> usize {
        self.controls.len() * if self.clock_rates { 2 } else { 1 }
    }
    /// Whether any contact has Coulomb friction (planar friction with tangents b_i): the
    /// largest coefficient μ, or `None` without friction.
    pub fn friction(&self) -> Option<f64> {
        let mu = self.contacts.iter().map(|c| c.friction).fold(0.0, f64::max);
        (mu > 0.0).then_some(mu)
    }
    /// The friction coefficient μ_i of every contact (0 for a frictionless one).
    pub fn frictions(&self) -> Vec<f64> {
        self.contacts.iter().map(|c| c.friction).collect()
    }
    /// Number of contact points.
    pub fn n_contacts(&self) -> usize {
        self.contacts.len()
    }
    /// M(q)⁻¹ r.
    pub fn minv<T: Real>(&self, q: &[T], r: &[T]) -> Vec<T> {
        let [_, _, _, minv, _] = self.ranges();
        Self::apply_minv(&self.q_outputs(q, minv), q.len(), r)
    }
    /// f_v(q, v, t, u) = M⁻¹ (Pᵀ τ(t, u) + f_passive − h): the acceleration of all non-contact
    /// forces (Nurkanović et al. eq. 3).
    pub fn f_v<T: Real>(&self, q: &[T], v: &[T], t: T, u: &[T]) -> Vec<T> {
        self.accelerations(q, v, t, u, &[]).0
    }
    /// f_v(q, v, t, u) and M(q)⁻¹ r for each r of `rs` in one call (M factored once).
    pub fn accelerations<T: Real>(
        &self,
        q: &[T],
        v: &[T],
        t: T,
        u: &[T],
        rs: &[Vec<T>],
    ) -> (Vec<T>, Vec<Vec<T>>) {
        let u = &self.efforts(t, u);
        let z: Vec<T> = self
            .shape_of(q)
            .into_iter()
            .chain(self.shape_of(v))
            .collect();
        let Some(mut f) = taylor::bias_terms(self, &z) else {
            // large models and plain values: CRBA, RNEA and the Cholesky solves directly
            let z: Vec<T> = q.iter().chain(v).chain(u).copied().collect();
            let free = self.free_acceleration(&z);
            let qd = DVector::from_column_slice(q);
            let chol = self.factor(&qd);
            let rs = rs
                .iter()
                .map(|r| solve(&chol, DVector::from_column_slice(r)))
                .collect();
            return (free, rs);
        };
        // the passive force is linear in (q, v): added in the NLP's scalars
        let passive = passive_force(
            &self.model,
            &DVector::from_column_slice(q),
            &DVector::from_column_slice(v),
        );
        for (fk, pk) in f.iter_mut().zip(passive.iter()) {
            *fk += *pk;
        }
        self.add_controls(&mut f, u);
        let [_, _, _, range, _] = self.ranges();
        let minv = self.q_outputs(q, range);
        let nq = q.len();
        (
            Self::apply_minv(&minv, nq, &f),
            rs.iter().map(|r| Self::apply_minv(&minv, nq, r)).collect(),
        )
    }
    /// Gap function f_c(q) of the first contact (≥ 0 feasible; every contact's:
    /// [`ModelSystem::contact_frames`]).
    pub fn f_c<T: Real>(&self, q: &[T]) -> T {
        self.gap(0, self.q_outputs(q, 0..1)[0], q)
    }
    /// The first contact's normal n(q) = ∇f_c(q).
    pub fn normal<T: Real>(&self, q: &[T]) -> Vec<T> {
        let [_, normal, ..] = self.ranges();
        self.q_outputs(q, normal.start..normal.start + q.len())
    }
    /// The first contact's tangent b(q) = J_p(q)ᵀ t (used only with friction).
    pub fn tangent<T: Real>(&self, q: &[T]) -> Vec<T> {
        let [_, _, tangent, ..] = self.ranges();
        self.q_outputs(q, tangent.start..tangent.start + q.len())
    }
    /// The first contact's geometry at q in one pass: (f_c(q), n(q), b(q)), b empty without
    /// friction.
    pub fn contact_frame<T: Real>(&self, q: &[T]) -> (T, Vec<T>, Vec<T>) {
        let (gaps, normals, tangents) = self.contact_frames(q);
        let b = tangents.into_iter().next().unwrap_or_default();
        let n = normals.into_iter().next().unwrap_or_default();
        (gaps[0], n, b)
    }
    /// Every contact's geometry at q in one pass: the gaps f_c,i(q), the normals
    /// n_i(q) = ∇f_c,i(q) and the tangents b_i(q) (none without friction).
    #[allow(clippy::type_complexity)]
    pub fn contact_frames<T: Real>(&self, q: &[T]) -> (Vec<T>, Vec<Vec<T>>, Vec<Vec<T>>) {
        let nq = q.len();
        let k = self.contacts.len();
        let friction = self.friction().is_some();
        let [_, normal, tangent, ..] = self.ranges();
        let terms = self.q_outputs(q, 0..if friction { tangent.end } else { normal.end });
        let gaps = (0..k).map(|i| self.gap(i, terms[i], q)).collect();
        let rows = |range: Range<usize>| -> Vec<Vec<T>> {
            (0..k)
                .map(|i| terms[range.start + i * nq..range.start + (i + 1) * nq].to_vec())
                .collect()
        };
        let tangents = if friction { rows(tangent) } else { Vec::new() };
        (gaps, rows(normal), tangents)
    }
    /// Number of path constraints g(q) imposed at every stage point of an OCP.
    pub fn n_path(&self) -> usize {
        self.path.len()
    }
    /// Path constraints g(q) (length [`ModelSystem::n_path`]) within
    /// [`ModelSystem::path_bounds`] at every stage point of an OCP (Nurkanović et al. eq. 33); the
    /// integrator (`fesd::simulate`) does not impose them.
    pub fn path<T: Real>(&self, q: &[T]) -> Vec<T> {
        let [.., path] = self.ranges();
        let points = self.q_outputs(q, path);
        self.path
            .iter()
            .zip(&self.path_slopes)
            .enumerate()
            .map(|(k, (term, slopes))| {
                let (mut x, mut y) = (points[2 * k], points[2 * k + 1]);
                for &(j, [sx, sy]) in slopes {
                    x += q[j] * T::from(sx);
                    y += q[j] * T::from(sy);
                }
                match term {
                    PathTerm::OutsideEllipse(o) => {
                        let dx = (x - T::from(o.center[0])) / T::from(o.axes[0]);
                        let dy = (y - T::from(o.center[1])) / T::from(o.axes[1]);
                        dx * dx + dy * dy
                    }
                    PathTerm::Point(b) => {
                        if b.axis == 0 {
                            x
                        } else {
                            y
                        }
                    }
                }
            })
            .collect()
    }
    /// Lower and upper bounds of the path constraints.
    pub fn path_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        self.path
            .iter()
            .map(|term| match term {
                PathTerm::OutsideEllipse(_) => (1.0, 1e20),
                PathTerm::Point(b) => b.bounds,
            })
            .unzip()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time_freezing::TimeFreezing;

    const BALL: &str = r#"
[model]
name = "ball"
dimension = "planar"

[[materials]]
name = "rough"
friction = 0.3

[[colliders]]
name = "ground"
shape = { plane = [0.0, 1.0, 0.0] }
material = "rough"

[[bodies]]
name = "carriage"
mass = 0.0
inertia = [0.0, 0.0, 0.0]

[[joints]]
name = "x"
kind = "prismatic"
parent = "world"
child = "carriage"
axis = [1.0, 0.0, 0.0]

[[bodies]]
name = "ball"
mass = 2.0
inertia = { solid_sphere = 0.1 }

[[joints]]
name = "y"
kind = "prismatic"
parent = "carriage"
child = "ball"
axis = [0.0, 1.0, 0.0]

[[colliders]]
name = "ball_shape"
body = "ball"
shape = { sphere = 0.1 }
material = "rough"

[[actuators]]
name = "thrust"
joint = "x"
effort_limit = [-1.0, 1.0]

[initial]
q.x = 0.0
q.y = 0.5
"#;

    #[test]
    fn ball_system_has_the_closed_form_dynamics() {
        let model = Model::from_toml_str(BALL, None).unwrap();
        let sys = ModelSystem::new(model, None, &["thrust".into()]).unwrap();
        assert_eq!((sys.nq(), sys.nu()), (2, 1));
        assert_eq!(sys.friction(), Some(0.3));
        let q = [0.3_f64, 0.25];
        assert!((sys.f_c::<f64>(&q) - 0.15).abs() < 1e-14);
        assert_eq!(sys.normal(&q), vec![0.0, 1.0]);
        assert_eq!(sys.tangent(&q), vec![1.0, 0.0]);
        let a: Vec<f64> = sys.f_v(&q, &[1.0, -2.0], 0.0, &[0.5]);
        assert!(
            (a[0] - 0.25).abs() < 1e-12 && (a[1] + 9.81).abs() < 1e-12,
            "{a:?}"
        );
        let m = mass_matrix(sys.model(), &DVector::from_column_slice(&q));
        assert!((m[(0, 0)] - 2.0).abs() < 1e-12 && (m[(1, 1)] - 2.0).abs() < 1e-12);
        let x: Vec<f64> = sys.minv(&q, &[2.0, 4.0]);
        assert!(
            (x[0] - 1.0).abs() < 1e-12 && (x[1] - 2.0).abs() < 1e-12,
            "{x:?}"
        );
    }

    #[test]
    fn limits_of_the_construction_are_typed_errors() {
        let model = Model::from_toml_str(BALL, None).unwrap();
        let e = ModelSystem::new(model.clone(), None, &["jet".into()]).unwrap_err();
        assert!(e.to_string().contains("no actuator named \"jet\""), "{e}");
        let e = ModelSystem::new(model.clone(), Some(&[("ball_shape", "ball_shape")]), &[])
            .unwrap_err();
        assert!(e.to_string().contains("not a world plane"), "{e}");
        let no_ground = BALL.replace(
            "[[colliders]]\nname = \"ground\"\nshape = { plane = [0.0, 1.0, 0.0] }\nmaterial = \"rough\"\n",
            "",
        );
        let m = Model::from_toml_str(&no_ground, None).unwrap();
        let e = ModelSystem::new(m, None, &[]).unwrap_err();
        assert!(e.to_string().contains("no contact"), "{e}");
        let capsule = BALL.replace(
            "shape = { sphere = 0.1 }",
            "shape = { capsule = { radius = 0.1, half_length = 0.2 } }",
        );
        let m = Model::from_toml_str(&capsule, None).unwrap();
        let e = ModelSystem::new(m, None, &[]).unwrap_err();
        assert!(e.to_string().contains("point contacts"), "{e}");
        let e = TimeFreezing::elastic(box_system(), 0.5, 0.1).unwrap_err();
        assert!(e.to_string().contains("one contact"), "{e}");
    }

    /// The ball's body carrying a box of half-extents 0.2 × 0.1 instead of the sphere.
    fn box_system() -> ModelSystem {
        let boxed = BALL.replace(
            "shape = { sphere = 0.1 }",
            "shape = { box = [0.2, 0.1, 0.1] }",
        );
        let m = Model::from_toml_str(&boxed, None).unwrap();
        ModelSystem::new(m, None, &["thrust".into()]).unwrap()
    }

    /// A box touches a plane at its 4 corners (planar model): one contact each, with the
    /// corner's gap, normal and tangent; the time-freezing PSS then has 3 switching functions
    /// per corner and the free flight weight is the product over the corners.
    #[test]
    fn box_corners_are_contacts() {
        let sys = box_system();
        assert_eq!(sys.n_contacts(), 4);
        let q = [0.3_f64, 0.25];
        let (gaps, normals, tangents) = sys.contact_frames(&q);
        let mut sorted = gaps.clone();
        sorted.sort_by(f64::total_cmp);
        assert!((sorted[0] - 0.15).abs() < 1e-14 && (sorted[3] - 0.35).abs() < 1e-14);
        assert!(normals.iter().all(|n| n == &vec![0.0, 1.0]));
        assert!(tangents.iter().all(|b| b == &vec![1.0, 0.0]));
        let tf = TimeFreezing::new(sys, 10.0).unwrap();
        assert_eq!((tf.nc(), tf.nf()), (12, 9));
        // α: gaps 1, normals 0.5, tangents 0.25 → β_i = 1, free flight only
        let mut a = vec![1.0; 4];
        a.extend([0.5; 4]);
        a.extend([0.25; 4]);
        let th = tf.theta(&a);
        assert_eq!(th[0], 1.0);
        assert!(th[1..].iter().all(|t| *t == 0.0));
        // one corner in contact (α_q = α_v = 0): its two frictional fields share (1 − 0)
        a[2] = 0.0;
        a[6] = 0.0;
        let th = tf.theta(&a);
        assert_eq!(th[0], 0.0);
        assert_eq!((th[5], th[6]), (0.25, 0.75));
        // dcs = "stewart" is refused for several contacts
        assert!(!tf.stewart_applies());
    }
}
