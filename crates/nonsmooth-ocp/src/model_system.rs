//! A complementarity Lagrangian system (seed 002 eq. 3) read from a model file: the mass
//! matrix, bias and actuator forces from `nonsmooth-core`'s scalar-generic dynamics
//! (CRBA and RNEA, Featherstone RBDA ch. 5–6), evaluated with the NLP's dual numbers so that
//! the FESD derivatives are exact, and one unilateral contact of a point or sphere of a body
//! against a world plane:
//!
//! ```text
//! f_c(q) = nᵀ (p(q) − p₀) − r,   ∇f_c(q) = J_p(q)ᵀ n,   b(q) = J_p(q)ᵀ t,
//! M(q) v̇ = Pᵀ u + f_passive(v) − h(q, v)   (away from contact),
//! ```
//!
//! with p the contact point (the collider's origin on its body), r the sphere's radius
//! (0 for a point), n the plane's outward normal, t = n rotated by −90° about z (the
//! planar tangent, +x on a ground with normal +y), J_p the point Jacobian and Pᵀ the
//! actuation matrix of the chosen motors. The time-freezing reformulation
//! ([`crate::tf::TimeFreezing`]) then needs q̇ = v: every joint must be revolute, prismatic,
//! planar or fixed (no quaternion coordinates).
//!
//! Limits of the construction (typed errors, [`ModelSystem::new`]): one contact (nosnoc's
//! multi-contact time-freezing is not implemented here: a model with several candidate
//! pairs must name one), a point or sphere against a plane (a box touches a plane at
//! several corners), friction only in planar models (seed 002 Def. 6: the tangential jump
//! of the auxiliary dynamics is planar), motor actuators with effort bounds, no joint
//! limits and no bilateral constraints.

use crate::nlp::Real;
use crate::tf::Cls;
use crate::OcpError;
use nalgebra::{DVector, Vector3};
use nonsmooth_core::dynamics::{
    bias_force, kinematics, mass_matrix, passive_force, point_jacobian, point_position,
};
use nonsmooth_core::{ActuatorKind, Dimension, JointKind, Model, Shape};

/// The contact of a [`ModelSystem`]: a point of a body against a world plane.
#[derive(Debug, Clone, PartialEq)]
pub struct PlaneContact {
    /// Name of the body-side collider.
    pub collider: String,
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

/// A path constraint of a [`ModelSystem`] ([`Cls::path`]).
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

/// A [`Cls`] built from a [`Model`] (see the module docs).
#[derive(Debug, Clone)]
pub struct ModelSystem {
    model: Model,
    contact: PlaneContact,
    /// Per control: (velocity index, gear).
    controls: Vec<(usize, f64)>,
    path: Vec<PathTerm>,
}

/// The body-side collider of a candidate pair: (body, point in the body frame, radius).
fn contact_point(model: &Model, collider: usize) -> Option<(usize, Vector3<f64>, f64)> {
    let c = &model.colliders[collider];
    let body = c.body?;
    let origin = c.pose.translation.vector;
    match &c.shape {
        Shape::Sphere { radius } => Some((body, origin, *radius)),
        Shape::Point => Some((body, origin, 0.0)),
        Shape::Points { points } if points.len() == 1 => {
            Some((body, c.pose.transform_point(&points[0].into()).coords, 0.0))
        }
        _ => None,
    }
}

/// Whether collider `i` is a world plane.
fn is_world_plane(model: &Model, i: usize) -> bool {
    let c = &model.colliders[i];
    c.body.is_none() && matches!(c.shape, Shape::Plane { .. })
}

impl ModelSystem {
    /// The system of `model` with the contact between the colliders `pair` (body side, plane;
    /// `None`: the model's only pair of a body collider with a world plane) and the motors
    /// `controls` (actuator names, in control order).
    ///
    /// # Errors
    /// [`OcpError::InvalidInput`] naming the model, joint, collider or actuator for the
    /// limits of the module docs: quaternion joints, joint limits, bilateral constraints,
    /// no contact or several without a choice, a body shape other than a point or sphere,
    /// friction in a spatial model, an unknown or non-motor actuator.
    pub fn new(
        model: Model,
        pair: Option<(&str, &str)>,
        controls: &[String],
    ) -> Result<Self, OcpError> {
        let bad = |m: String| OcpError::InvalidInput(format!("model \"{}\": {m}", model.name));
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
        let index = |name: &str| {
            model
                .colliders
                .iter()
                .position(|c| c.name == name)
                .ok_or_else(|| bad(format!("no collider named \"{name}\"")))
        };
        let (ci, pi) = match pair {
            Some((a, b)) => {
                let (ia, ib) = (index(a)?, index(b)?);
                if !is_world_plane(&model, ib) {
                    return Err(bad(format!(
                        "collider \"{b}\" is not a world plane (the contact's second collider)"
                    )));
                }
                (ia, ib)
            }
            None => {
                let planes: Vec<usize> = (0..model.colliders.len())
                    .filter(|&i| is_world_plane(&model, i))
                    .collect();
                let bodies: Vec<usize> = (0..model.colliders.len())
                    .filter(|&i| model.colliders[i].body.is_some())
                    .collect();
                let pairs: Vec<(usize, usize)> = bodies
                    .iter()
                    .flat_map(|&a| planes.iter().map(move |&p| (a, p)))
                    .filter(|&(a, p)| {
                        model.colliders[a].filter.allows(&model.colliders[p].filter)
                            && !model
                                .excluded_pairs
                                .iter()
                                .any(|&(x, y)| (x, y) == (a, p) || (y, x) == (a, p))
                    })
                    .collect();
                match pairs.as_slice() {
                    [] => {
                        return Err(bad(
                            "no contact: time-freezing needs a collider of a body (point or \
                             sphere) and a world plane"
                                .into(),
                        ))
                    }
                    [one] => *one,
                    several => {
                        let names: Vec<String> = several
                            .iter()
                            .map(|&(a, p)| {
                                format!("{}–{}", model.colliders[a].name, model.colliders[p].name)
                            })
                            .collect();
                        return Err(bad(format!(
                            "{} candidate contacts ({}): the time-freezing construction here \
                             takes one contact; name it with time_freezing.contact = \
                             [\"collider\", \"plane\"]",
                            several.len(),
                            names.join(", ")
                        )));
                    }
                }
            }
        };
        let collider = &model.colliders[ci];
        let Some((body, point, radius)) = contact_point(&model, ci) else {
            return Err(bad(format!(
                "collider \"{}\" is not a point or sphere on a body: a box or mesh touches a \
                 plane at several points, and the time-freezing construction here takes one",
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
                 time-freezing is planar (seed 002 Def. 6); use a planar model or μ = 0",
                collider.name, plane.name
            )));
        }
        let mut mapped = Vec::with_capacity(controls.len());
        for name in controls {
            let Some(a) = model.actuators.iter().find(|a| &a.name == name) else {
                return Err(bad(format!("no actuator named \"{name}\"")));
            };
            if a.kind != ActuatorKind::Motor {
                return Err(bad(format!(
                    "actuator \"{name}\" is a position servo: OCP controls are motor efforts"
                )));
            }
            mapped.push((model.joints[a.joint].v_index + a.dof, a.gear));
        }
        let contact = PlaneContact {
            collider: collider.name.clone(),
            plane: plane.name.clone(),
            body,
            point,
            radius,
            plane_point: plane.pose.translation.vector,
            normal: n,
            tangent,
            friction,
        };
        Ok(Self {
            model,
            contact,
            controls: mapped,
            path: Vec::new(),
        })
    }

    /// Sets the path constraints on points of bodies ([`Cls::path`], in this order).
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
                    if !(p.bounds.0 <= p.bounds.1) {
                        return bad(format!("bounds {:?} are not ordered", p.bounds));
                    }
                }
            }
        }
        self.path = path;
        Ok(self)
    }

    /// The model.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The contact.
    pub fn contact(&self) -> &PlaneContact {
        &self.contact
    }

    /// The world position of `point` of `body` at q.
    fn world_point<T: Real>(&self, q: &[T], body: usize, point: &Vector3<f64>) -> Vector3<T> {
        let q = DVector::from_column_slice(q);
        let kin = kinematics(&self.model, &q, &DVector::zeros(q.len()));
        point_position(&kin, Some(body), &point.map(T::from))
    }

    /// `J_p(q)ᵀ d` for the contact point and a world direction d.
    fn contact_row<T: Real>(&self, q: &[T], d: &Vector3<f64>) -> Vec<T> {
        let q = DVector::from_column_slice(q);
        let kin = kinematics(&self.model, &q, &DVector::zeros(q.len()));
        let c = &self.contact;
        let p = point_position(&kin, Some(c.body), &c.point.map(T::from));
        let jac = point_jacobian(&self.model, &kin, Some(c.body), &p);
        let d = d.map(T::from);
        (0..jac.ncols()).map(|k| jac.column(k).dot(&d)).collect()
    }

    /// Generalized force `Pᵀ u + f_passive(v) − h(q, v)` (RNEA with gravity).
    fn forces<T: Real>(&self, q: &DVector<T>, v: &DVector<T>, u: &[T]) -> DVector<T> {
        let mut f = passive_force(&self.model, v) - bias_force(&self.model, q, v);
        for (&(k, gear), &uk) in self.controls.iter().zip(u) {
            f[k] += uk * T::from(gear);
        }
        f
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

impl Cls for ModelSystem {
    fn nq(&self) -> usize {
        self.model.nq()
    }
    fn nu(&self) -> usize {
        self.controls.len()
    }
    fn friction(&self) -> Option<f64> {
        (self.contact.friction > 0.0).then_some(self.contact.friction)
    }
    fn minv<T: Real>(&self, q: &[T], r: &[T]) -> Vec<T> {
        let chol = self.factor(&DVector::from_column_slice(q));
        solve(&chol, DVector::from_column_slice(r))
    }
    fn f_v<T: Real>(&self, q: &[T], v: &[T], t: T, u: &[T]) -> Vec<T> {
        self.accelerations(q, v, t, u, &[]).0
    }
    fn accelerations<T: Real>(
        &self,
        q: &[T],
        v: &[T],
        _t: T,
        u: &[T],
        rs: &[Vec<T>],
    ) -> (Vec<T>, Vec<Vec<T>>) {
        let qd = DVector::from_column_slice(q);
        let vd = DVector::from_column_slice(v);
        let chol = self.factor(&qd);
        let f = self.forces(&qd, &vd, u);
        (
            solve(&chol, f),
            rs.iter()
                .map(|r| solve(&chol, DVector::from_column_slice(r)))
                .collect(),
        )
    }
    fn f_c<T: Real>(&self, q: &[T]) -> T {
        let c = &self.contact;
        let p = self.world_point(q, c.body, &c.point);
        (p - c.plane_point.map(T::from)).dot(&c.normal.map(T::from)) - T::from(c.radius)
    }
    fn normal<T: Real>(&self, q: &[T]) -> Vec<T> {
        self.contact_row(q, &self.contact.normal)
    }
    fn tangent<T: Real>(&self, q: &[T]) -> Vec<T> {
        self.contact_row(q, &self.contact.tangent)
    }
    fn contact_frame<T: Real>(&self, q: &[T]) -> (T, Vec<T>, Vec<T>) {
        let c = &self.contact;
        let qd = DVector::from_column_slice(q);
        let kin = kinematics(&self.model, &qd, &DVector::zeros(q.len()));
        let p = point_position(&kin, Some(c.body), &c.point.map(T::from));
        let gap = (p - c.plane_point.map(T::from)).dot(&c.normal.map(T::from)) - T::from(c.radius);
        let jac = point_jacobian(&self.model, &kin, Some(c.body), &p);
        let row = |d: &Vector3<f64>| {
            let d = d.map(T::from);
            (0..jac.ncols())
                .map(|k| jac.column(k).dot(&d))
                .collect::<Vec<T>>()
        };
        let b = if self.friction().is_some() {
            row(&c.tangent)
        } else {
            Vec::new()
        };
        (gap, row(&c.normal), b)
    }
    fn n_path(&self) -> usize {
        self.path.len()
    }
    fn path<T: Real>(&self, q: &[T]) -> Vec<T> {
        if self.path.is_empty() {
            return Vec::new();
        }
        let qd = DVector::from_column_slice(q);
        let kin = kinematics(&self.model, &qd, &DVector::zeros(q.len()));
        self.path
            .iter()
            .map(|term| {
                let (body, point) = term.point();
                let p = point_position(&kin, Some(body), &point.map(T::from));
                match term {
                    PathTerm::OutsideEllipse(o) => {
                        let dx = (p.x - T::from(o.center[0])) / T::from(o.axes[0]);
                        let dy = (p.y - T::from(o.center[1])) / T::from(o.axes[1]);
                        dx * dx + dy * dy
                    }
                    PathTerm::Point(b) => p[b.axis],
                }
            })
            .collect()
    }
    fn path_bounds(&self) -> (Vec<f64>, Vec<f64>) {
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
        let e =
            ModelSystem::new(model.clone(), Some(("ball_shape", "ball_shape")), &[]).unwrap_err();
        assert!(e.to_string().contains("not a world plane"), "{e}");
        let no_ground = BALL.replace(
            "[[colliders]]\nname = \"ground\"\nshape = { plane = [0.0, 1.0, 0.0] }\nmaterial = \"rough\"\n",
            "",
        );
        let m = Model::from_toml_str(&no_ground, None).unwrap();
        let e = ModelSystem::new(m, None, &[]).unwrap_err();
        assert!(e.to_string().contains("no contact"), "{e}");
        let boxed = BALL.replace(
            "shape = { sphere = 0.1 }",
            "shape = { box = [0.1, 0.1, 0.1] }",
        );
        let m = Model::from_toml_str(&boxed, None).unwrap();
        let e = ModelSystem::new(m, None, &[]).unwrap_err();
        assert!(e.to_string().contains("several points"), "{e}");
    }
}
