//! The planar rigid body of a model file, as the two-contact system of Várkonyi's SOS stability
//! paper.
//!
//! [`PlanarBody::from_model`] reads one free planar body, finds the contacts that touch at its
//! initial configuration (point, `points` or box-corner colliders of the body against world
//! plane colliders), takes friction and restitution from the pairs' materials, and maps the
//! geometry onto the dimensionless parameters of [`PlanarParams`]:
//!
//! - the slope: `cos α = −ĝ·n` for the plane's outward normal `n`; the downhill tangent
//!   `t = (ĝ − (ĝ·n) n)/sin α`;
//! - units: length = the body's radius of gyration `r = √(I/m)`, time = `√(r/g)`, mass = `m`,
//!   so that the body of the paper's Appendix has `m = 1`, `I = 1`, `g = 1`;
//! - contact `i` sits at `(l_i, −h)` in the slope frame of the centre of mass, contact 1 the
//!   uphill one (`l₁ < l₂`): `d = (l₂ − l₁)/2`, `offset = (l₁ + l₂)/2 − h tanα`.
//!
//! The construction's assumptions (docs/decisions/000-sos-stability.md, model) are checked in that
//! order and a violated one is a typed [`NotApplicable`]; a configuration that is not a static
//! equilibrium with the given friction is [`StabilityModelError::NotAnEquilibrium`], with the
//! static check's reason. [`certify_model`] then runs the multi-Lyapunov certificate
//! ([`crate::lyapunov::certify`]) and the falsification by simulation ([`crate::event_driven::falsify`]); a
//! trajectory that leaves is mapped back to the model's coordinates ([`PlanarBody::model_state`]).

use nalgebra::{DVector, Vector2};
use serde::Serialize;

use nonsmooth_core::geometry::{
    collider_world_poses, detect_contacts, ContactGeometry, PairContact,
};
use nonsmooth_core::{
    Body, Collider, ContactMaterial, Dimension, Joint, JointKind, Model, ModelError, Shape,
};

use crate::event_driven::{falsify, simulate_traced, EventKind, Falsification, SimOptions};
use crate::lyapunov::{certify, CertifyOptions, CertifyReport, Verdict};
use crate::planar::{not_applicable, ContactState, Mode, PlanarParams};
use crate::SosError;

/// An assumption of the construction (Várkonyi §II; docs/decisions/000-sos-stability.md, model)
/// that the model violates.
#[derive(Debug, Clone, PartialEq, Serialize, thiserror::Error)]
pub enum NotApplicable {
    /// The model is spatial.
    #[error(
        "the model is spatial: the construction is for a planar body (`dimension = \"planar\"`)"
    )]
    SpatialModel,
    /// Not exactly one moving body.
    #[error("the model has {0} bodies: the construction is for one free planar body")]
    BodyCount(usize),
    /// The body is not free in the plane.
    #[error("body `{body}` hangs on a {kind} joint: the construction needs a free body (a planar root joint)")]
    NotFree {
        /// The body.
        body: String,
        /// Its joint's kind.
        kind: String,
    },
    /// No gravity in the plane of motion.
    #[error("gravity has no component in the x-y plane: nothing presses the body on its contacts")]
    NoGravity,
    /// Not exactly two contacts at the initial configuration.
    #[error(
        "{} contact(s) touch at the initial configuration ({}): the construction is for exactly two (Várkonyi, l1 l2 < 0)",
        .contacts.len(), if .contacts.is_empty() { "none".to_string() } else { .contacts.join(", ") }
    )]
    ContactCount {
        /// The touching contacts, `collider/plane` (with the feature for boxes and point sets).
        contacts: Vec<String>,
    },
    /// A contact whose point moves over the body (a disk, capsule or cylinder rolls).
    #[error("collider `{collider}` is a {shape}: its contact point moves over the body as it rolls; the construction takes body-fixed contact points (point, points, box or convex-hull corners)")]
    RollingContact {
        /// The body's collider.
        collider: String,
        /// Its shape.
        shape: String,
    },
    /// A support that is not a plane.
    #[error("the support `{collider}` is a {shape}: the construction takes one straight support (a plane collider)")]
    SupportNotPlane {
        /// The world collider.
        collider: String,
        /// Its shape.
        shape: String,
    },
    /// The two contacts lie on different surfaces.
    #[error("the contacts lie on different surfaces (normals {n1:?} and {n2:?}): the construction takes both on one straight support")]
    TwoSurfaces {
        /// Normal at contact 1.
        n1: [f64; 2],
        /// Normal at contact 2.
        n2: [f64; 2],
    },
    /// The slope angle is outside `(0, π/2)`.
    #[error("the support is inclined {degrees:.6}° from horizontal: the construction needs a slope in (0°, 90°) (on flat ground nothing breaks the symmetry its V2 = y + P uses)")]
    SlopeOutOfRange {
        /// The angle between the support's normal and the upward vertical, degrees.
        degrees: f64,
    },
    /// Different restitution coefficients at the two contacts.
    #[error("restitution differs between the contacts ({e1} and {e2}): the construction takes one coefficient e")]
    UnequalRestitution {
        /// Contact 1's coefficient.
        e1: f64,
        /// Contact 2's coefficient.
        e2: f64,
    },
    /// A parameter outside the construction's domain (e.g. both contacts on one side).
    #[error("{0}")]
    Domain(String),
}

/// Errors of [`PlanarBody::from_model`] and [`certify_model`].
#[derive(Debug, thiserror::Error)]
pub enum StabilityModelError {
    /// The model is outside the construction's assumptions.
    #[error("not applicable: {0}")]
    NotApplicable(NotApplicable),
    /// The initial configuration is not a static equilibrium.
    #[error("the initial configuration is not an equilibrium: {0}")]
    NotAnEquilibrium(String),
    /// The model (or a parameter set on it) is invalid.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The SOS program failed to build.
    #[error(transparent)]
    Sos(#[from] SosError),
}

impl From<NotApplicable> for StabilityModelError {
    fn from(e: NotApplicable) -> Self {
        StabilityModelError::NotApplicable(e)
    }
}

/// One of the two contacts, in the model's units.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanarContact {
    /// `collider/plane` (with `[feature]` for box corners and point sets).
    pub name: String,
    /// World position of the contact point at the initial configuration (m).
    pub point: [f64; 2],
    /// Position along the slope from the centre of mass, + downhill (m).
    pub l: f64,
    /// Friction coefficient of the pair.
    pub friction: f64,
    /// Restitution coefficient of the pair (0 when the materials give none).
    pub restitution: f64,
}

/// The slope frame and units that map the model onto [`PlanarParams`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanarBody {
    /// The body's name.
    pub body: String,
    /// Dimensionless parameters of Várkonyi's model.
    pub params: PlanarParams,
    /// Contact 1 (uphill) and contact 2.
    pub contacts: [PlanarContact; 2],
    /// Slope angle α (degrees).
    pub slope_degrees: f64,
    /// Unit of length: the radius of gyration about the centre of mass (m).
    pub length_unit: f64,
    /// Unit of time `√(r/g)` (s).
    pub time_unit: f64,
    /// Mass (kg).
    pub mass: f64,
    /// |g| (m/s²).
    pub gravity: f64,
    /// Height of the centre of mass above the support (m).
    pub height: f64,
    /// Notes on what was ignored (e.g. a non-zero initial velocity).
    pub notes: Vec<String>,
    #[serde(skip)]
    frame: SlopeFrame,
}

/// World-frame data of the equilibrium, for [`PlanarBody::model_state`].
#[derive(Debug, Clone, PartialEq, Default)]
struct SlopeFrame {
    /// Centre of mass at the equilibrium (world).
    com: Vector2<f64>,
    /// Downhill unit tangent.
    tangent: Vector2<f64>,
    /// Outward unit normal of the support.
    normal: Vector2<f64>,
    /// `t × n` (±1): the sense of θ in the world.
    handedness: f64,
    /// Body angle in the world at the equilibrium.
    angle: f64,
    /// Centre of mass in the body frame (x, y).
    com_body: Vector2<f64>,
    /// Root joint placement: translation and angle.
    placement: (Vector2<f64>, f64),
}

fn rotate(a: f64, v: &Vector2<f64>) -> Vector2<f64> {
    let (s, c) = a.sin_cos();
    Vector2::new(c * v.x - s * v.y, s * v.x + c * v.y)
}

fn shape_name(shape: &Shape) -> &'static str {
    match shape {
        Shape::Sphere { .. } => "sphere (a disk in planar models)",
        other => other.kind(),
    }
}

/// A contact of the body that touches its support at the initial configuration.
struct Touching<'a> {
    /// `"collider[feature]/support"`.
    name: String,
    /// The body's collider.
    on_body: &'a Collider,
    /// The support's collider.
    support: &'a Collider,
    /// The contact geometry, the body's collider first.
    geometry: ContactGeometry<f64>,
    /// The pair's material.
    material: ContactMaterial,
}

/// The model's one body and its joint, when the model is planar and the body free (a root
/// planar joint).
fn free_planar_body(model: &Model) -> Result<(&Body, &Joint), StabilityModelError> {
    if model.dimension != Dimension::Planar {
        return Err(NotApplicable::SpatialModel.into());
    }
    if model.bodies.len() != 1 {
        return Err(NotApplicable::BodyCount(model.bodies.len()).into());
    }
    let (body, joint) = (&model.bodies[0], &model.joints[0]);
    if joint.kind != JointKind::Planar || joint.parent.is_some() {
        return Err(NotApplicable::NotFree {
            body: body.name.clone(),
            kind: format!("{:?}", joint.kind).to_lowercase(),
        }
        .into());
    }
    Ok((body, joint))
}

/// The two contacts of the body found within `tol`, checked: sliding contacts (no rolling
/// shapes) against planes, exactly two, none penetrating.
fn touching_contacts<'a>(
    model: &'a Model,
    found: &[PairContact<f64>],
    tol: f64,
) -> Result<Vec<Touching<'a>>, StabilityModelError> {
    let mut touching = Vec::new();
    for c in found {
        let (ca, cb) = (
            &model.colliders[c.collider_a],
            &model.colliders[c.collider_b],
        );
        let (on_body, support, geometry) = if ca.body.is_some() {
            (ca, cb, c.geometry.clone())
        } else {
            (cb, ca, c.geometry.flipped())
        };
        let feature = match on_body.shape {
            Shape::Box { .. } | Shape::Points { .. } => format!("[{}]", c.feature),
            _ => String::new(),
        };
        touching.push(Touching {
            name: format!("{}{}/{}", on_body.name, feature, support.name),
            on_body,
            support,
            geometry,
            material: model.pair_material(c.collider_a, c.collider_b),
        });
    }
    for Touching {
        on_body, support, ..
    } in &touching
    {
        if matches!(
            on_body.shape,
            Shape::Sphere { .. } | Shape::Capsule { .. } | Shape::Cylinder { .. }
        ) {
            return Err(NotApplicable::RollingContact {
                collider: on_body.name.clone(),
                shape: shape_name(&on_body.shape).into(),
            }
            .into());
        }
        if !matches!(support.shape, Shape::Plane { .. }) {
            return Err(NotApplicable::SupportNotPlane {
                collider: support.name.clone(),
                shape: shape_name(&support.shape).into(),
            }
            .into());
        }
    }
    if touching.len() != 2 {
        return Err(NotApplicable::ContactCount {
            contacts: touching.iter().map(|t| t.name.clone()).collect(),
        }
        .into());
    }
    for Touching { name, geometry, .. } in &touching {
        if geometry.gap < -tol {
            return Err(StabilityModelError::NotAnEquilibrium(format!(
                "contact {name} penetrates its support by {:.3e} m",
                -geometry.gap
            )));
        }
    }
    Ok(touching)
}

/// The slope of the two contacts' common support: its outward normal `n`, the downhill
/// tangent `t` and the angle `α` (`cos α = −ĝ·n`, `0 < α < π/2`).
fn slope(
    touching: &[Touching<'_>],
    ghat: &Vector2<f64>,
) -> Result<(Vector2<f64>, Vector2<f64>, f64), StabilityModelError> {
    // Normal from the support toward the body (the geometry's normal points B → A with
    // A the body's collider after the flip in `touching_contacts`).
    let normal_of = |i: usize| {
        let n = touching[i].geometry.normal;
        Vector2::new(n.x, n.y).normalize()
    };
    let (n1, n2) = (normal_of(0), normal_of(1));
    if (n1 - n2).norm() > 1e-9 {
        return Err(NotApplicable::TwoSurfaces {
            n1: [n1.x, n1.y],
            n2: [n2.x, n2.y],
        }
        .into());
    }
    let n = n1;
    let cos_alpha = (-ghat.dot(&n)).clamp(-1.0, 1.0);
    let alpha = cos_alpha.acos();
    if !(alpha > 1e-9 && alpha < std::f64::consts::FRAC_PI_2) {
        return Err(NotApplicable::SlopeOutOfRange {
            degrees: alpha.to_degrees(),
        }
        .into());
    }
    let t = (ghat - n * ghat.dot(&n)) / alpha.sin();
    Ok((n, t, alpha))
}

/// The two contacts in the slope frame of the centre of mass `com` (tangent `t`, normal
/// `n`), the uphill one first, and the height of the centre of mass above them (their mean
/// depth); the two restitution coefficients must agree.
fn slope_contacts(
    touching: &[Touching<'_>],
    com: &Vector2<f64>,
    t: &Vector2<f64>,
    n: &Vector2<f64>,
) -> Result<([PlanarContact; 2], f64), StabilityModelError> {
    let mut contacts: Vec<(PlanarContact, f64)> = touching
        .iter()
        .map(|c| {
            let p = Vector2::new(c.geometry.point_a.x, c.geometry.point_a.y);
            let r = p - com;
            (
                PlanarContact {
                    name: c.name.clone(),
                    point: [p.x, p.y],
                    l: r.dot(t),
                    friction: c.material.friction,
                    restitution: c.material.restitution.unwrap_or(0.0),
                },
                -r.dot(n),
            )
        })
        .collect();
    contacts.sort_by(|a, b| a.0.l.total_cmp(&b.0.l));
    let (e1, e2) = (contacts[0].0.restitution, contacts[1].0.restitution);
    if (e1 - e2).abs() > 1e-12 {
        return Err(NotApplicable::UnequalRestitution { e1, e2 }.into());
    }
    let height = 0.5 * (contacts[0].1 + contacts[1].1);
    let contacts: [PlanarContact; 2] = contacts
        .into_iter()
        .map(|c| c.0)
        .collect::<Vec<_>>()
        .try_into()
        .map_err(|found: Vec<PlanarContact>| NotApplicable::ContactCount {
            contacts: found.into_iter().map(|c| c.name).collect(),
        })?;
    Ok((contacts, height))
}

/// Static forces of the equilibrium (SS mode), in N.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StaticForces {
    /// Normal forces at contacts 1 and 2.
    pub normal: [f64; 2],
    /// Tangential force the support must supply (`m g sinα`, uphill).
    pub tangential_needed: f64,
    /// Largest tangential force friction can supply, `μ₁λ₁ + μ₂λ₂`.
    pub tangential_available: f64,
}

impl PlanarBody {
    /// Reads the body, its contacts and the slope from `model` at its initial configuration
    /// (see the module documentation). Contacts touch when their gap is within
    /// `10⁻⁶ r` (`r` the radius of gyration).
    ///
    /// # Errors
    /// [`StabilityModelError::NotApplicable`] naming the violated assumption,
    /// [`StabilityModelError::NotAnEquilibrium`] when a contact penetrates, and
    /// [`StabilityModelError::Model`] when the kinematics cannot be evaluated.
    pub fn from_model(model: &Model) -> Result<PlanarBody, StabilityModelError> {
        let (body, joint) = free_planar_body(model)?;
        let g3 = model.gravity;
        let g = Vector2::new(g3.x, g3.y);
        if g.norm() <= 0.0 || !g.norm().is_finite() {
            return Err(NotApplicable::NoGravity.into());
        }
        let ghat = g / g.norm();
        let radius = (body.inertia[(2, 2)] / body.mass).sqrt();
        let tol = 1e-6 * radius;

        let q0 = model.initial_state.q.clone();
        let v0 = model.initial_state.v.clone();
        let kin = nonsmooth_core::dynamics::kinematics(model, &q0, &DVector::zeros(model.nv()));
        let pose = kin.poses[0];
        let com3 = pose * nalgebra::Point3::from(body.com);
        let com = Vector2::new(com3.x, com3.y);
        let poses = collider_world_poses(model, &kin.poses)?;
        let touching = touching_contacts(model, &detect_contacts(model, &poses, tol)?, tol)?;
        let (n, t, alpha) = slope(&touching, &ghat)?;
        let handedness = (t.x * n.y - t.y * n.x).signum();
        let (contacts, height) = slope_contacts(&touching, &com, &t, &n)?;
        let (l1, l2) = (contacts[0].l / radius, contacts[1].l / radius);
        let h = height / radius;
        let params = PlanarParams {
            alpha,
            mu1: contacts[0].friction,
            mu2: contacts[1].friction,
            d: 0.5 * (l2 - l1),
            e: contacts[0].restitution,
            h,
            offset: 0.5 * (l1 + l2) - h * alpha.tan(),
        };
        let mut notes = Vec::new();
        if v0.amax() > 0.0 {
            notes.push(
                "the initial velocity is ignored: the certificate is about rest at the initial \
                 configuration"
                    .to_string(),
            );
        }
        let pl = &joint.placement;
        let placement_angle = pl.rotation.euler_angles().2;
        let body_angle = pose.rotation.euler_angles().2;
        Ok(PlanarBody {
            body: body.name.clone(),
            params,
            contacts,
            slope_degrees: alpha.to_degrees(),
            length_unit: radius,
            time_unit: (radius / g.norm()).sqrt(),
            mass: body.mass,
            gravity: g.norm(),
            height,
            notes,
            frame: SlopeFrame {
                com,
                tangent: t,
                normal: n,
                handedness,
                angle: body_angle,
                com_body: Vector2::new(body.com.x, body.com.y),
                placement: (
                    Vector2::new(pl.translation.vector.x, pl.translation.vector.y),
                    placement_angle,
                ),
            },
        })
    }

    /// The static forces of the equilibrium (mode SS), or why there is none: the weight's
    /// line of action outside the contacts (the body tips) or too little friction (it slides).
    ///
    /// # Errors
    /// [`StabilityModelError::NotAnEquilibrium`] with the reason.
    pub fn static_check(&self) -> Result<StaticForces, StabilityModelError> {
        let p = &self.params;
        let weight = self.mass * self.gravity;
        let md = p
            .mode_dynamics(Mode(ContactState::Stick, ContactState::Stick))
            .ok_or_else(|| {
                StabilityModelError::NotAnEquilibrium("the two contacts coincide".into())
            })?;
        let normal = [md.normal[0] * weight, md.normal[1] * weight];
        let forces = StaticForces {
            normal,
            tangential_needed: p.alpha.sin() * weight,
            tangential_available: p.mu1 * normal[0] + p.mu2 * normal[1],
        };
        for (k, c) in self.contacts.iter().enumerate() {
            if normal[k] < -1e-12 * weight {
                return Err(StabilityModelError::NotAnEquilibrium(format!(
                    "the weight's line of action passes outside the contacts: holding the body \
                     at rest needs a normal force of {:.6} N at contact {} (the body tips)",
                    normal[k], c.name
                )));
            }
        }
        if !p.equilibrium_exists() {
            return Err(StabilityModelError::NotAnEquilibrium(format!(
                "friction too small: holding the body at rest needs a tangential force of \
                 m g sin(alpha) = {:.6} N, the contacts give at most mu1 N1 + mu2 N2 = {:.6} N \
                 (mu1 = {}, mu2 = {}, tan(alpha) = {:.6}; the body slides)",
                forces.tangential_needed,
                forces.tangential_available,
                p.mu1,
                p.mu2,
                p.alpha.tan()
            )));
        }
        Ok(forces)
    }

    /// The model's coordinates `(q, v)` of the body's free planar joint for a dimensionless
    /// ZOD state `x = (y, z, θ, u, v, ω)` relative to the equilibrium, and the model time of a
    /// dimensionless time.
    pub fn model_state(&self, x: &[f64; 6]) -> ([f64; 3], [f64; 3]) {
        let f = &self.frame;
        let (len, time) = (self.length_unit, self.time_unit);
        let com = f.com + (f.tangent * x[0] + f.normal * x[1]) * len;
        let com_vel = (f.tangent * x[3] + f.normal * x[4]) * (len / time);
        let angle = f.angle + f.handedness * x[2];
        let omega = f.handedness * x[5] / time;
        let arm = rotate(angle, &f.com_body);
        let origin = com - arm;
        let origin_vel = com_vel - Vector2::new(-omega * arm.y, omega * arm.x);
        let (p, phi) = f.placement;
        let local = rotate(-phi, &(origin - p));
        let local_vel = rotate(-phi, &origin_vel);
        (
            [local.x, local.y, angle - phi],
            [local_vel.x, local_vel.y, omega],
        )
    }
}

/// Options of [`certify_model`].
#[derive(Debug, Clone, PartialEq)]
pub struct ModelCertifyOptions {
    /// The certificate search.
    pub certify: CertifyOptions,
    /// Perturbed simulations of the falsification test (0: none).
    pub falsify_samples: usize,
    /// Radius of the perturbations (dimensionless, units of the radius of gyration).
    pub falsify_radius: f64,
    /// A run leaves when its excursion exceeds this multiple of the radius.
    pub divergence_factor: f64,
    /// Seed of the perturbations.
    pub seed: u64,
}

impl Default for ModelCertifyOptions {
    fn default() -> Self {
        Self {
            certify: CertifyOptions::default(),
            falsify_samples: 100,
            falsify_radius: 1e-3,
            divergence_factor: 100.0,
            seed: 7,
        }
    }
}

/// What the certificate search and the simulation say about the equilibrium.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "outcome", content = "reason", rename_all = "kebab-case")]
pub enum Outcome {
    /// A multi-Lyapunov certificate was found and post-checked: Lyapunov stable.
    Certified,
    /// A non-static mode is consistent from rest (listed): the equilibrium is unstable
    /// (Várkonyi §III).
    Ambiguous(Vec<String>),
    /// A perturbed simulation left the neighbourhood (no certificate either): the trajectory
    /// is in [`ModelCertificate::trajectory`].
    FalsifiedBySimulation(String),
    /// No certificate found (why). This never means "unstable".
    NoCertificateFound(String),
}

impl Outcome {
    /// Short name: `certified`, `ambiguous`, `falsified-by-simulation`, `no-certificate-found`.
    pub fn name(&self) -> &'static str {
        match self {
            Outcome::Certified => "certified",
            Outcome::Ambiguous(_) => "ambiguous",
            Outcome::FalsifiedBySimulation(_) => "falsified-by-simulation",
            Outcome::NoCertificateFound(_) => "no-certificate-found",
        }
    }
}

/// One instant of a trajectory that leaves, in the model's coordinates.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrajectorySample {
    /// Time (s).
    pub t: f64,
    /// Coordinates of the body's planar joint `(x, y, θ)`.
    pub q: [f64; 3],
    /// Velocities `(vx, vy, ω)`.
    pub v: [f64; 3],
    /// What happened: `impact at <contact>` or `end of mode XY`.
    pub event: String,
}

/// Result of [`certify_model`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelCertificate {
    /// The body as read from the model.
    pub body: PlanarBody,
    /// The static forces of the equilibrium.
    pub static_forces: StaticForces,
    /// The verdict.
    pub outcome: Outcome,
    /// The certificate search (ε, SDP size, timings, Monte-Carlo check).
    pub report: CertifyReport,
    /// The falsification test, when run.
    pub falsification: Option<Falsification>,
    /// The first trajectory that left, in the model's coordinates (empty when none).
    pub trajectory: Vec<TrajectorySample>,
}

/// Certifies the equilibrium of the model's initial configuration: reads the body
/// ([`PlanarBody::from_model`]), checks the static equilibrium first
/// ([`PlanarBody::static_check`]), then searches the multi-Lyapunov certificate and runs the
/// falsification by simulation.
///
/// # Errors
/// [`StabilityModelError::NotApplicable`] (also for parameters outside the construction's
/// domain, such as both contacts on one side of the centre of mass),
/// [`StabilityModelError::NotAnEquilibrium`], and SOS build errors.
pub fn certify_model(
    model: &Model,
    opts: &ModelCertifyOptions,
) -> Result<ModelCertificate, StabilityModelError> {
    let body = PlanarBody::from_model(model)?;
    certify_body(body, opts)
}

/// [`certify_model`] for a body already read.
///
/// # Errors
/// As [`certify_model`].
pub fn certify_body(
    body: PlanarBody,
    opts: &ModelCertifyOptions,
) -> Result<ModelCertificate, StabilityModelError> {
    if let Some(reason) = not_applicable(&body.params) {
        return Err(NotApplicable::Domain(reason).into());
    }
    let static_forces = body.static_check()?;
    let report = certify(&body.params, &opts.certify)?;
    let falsification = (opts.falsify_samples > 0).then(|| {
        falsify(
            &body.params,
            opts.falsify_samples,
            opts.falsify_radius,
            opts.divergence_factor,
            opts.seed,
            &SimOptions::default(),
        )
    });
    let leaving = falsification
        .as_ref()
        .and_then(|f| f.first_diverged_start.map(|x| (f, x)));
    let trajectory = leaving
        .map(|(_, x0)| replay(&body, &x0))
        .unwrap_or_default();
    let outcome = match (&report.verdict, leaving) {
        (Verdict::Certified, None) => Outcome::Certified,
        (Verdict::Certified, Some((f, _))) => Outcome::NoCertificateFound(format!(
            "the certificate is contradicted by {} of {} perturbed simulations: rejected",
            f.diverged, f.samples
        )),
        (Verdict::Ambiguous(modes), _) => Outcome::Ambiguous(modes.clone()),
        (_, Some((f, _))) => Outcome::FalsifiedBySimulation(format!(
            "{} of {} perturbed simulations (radius {:.1e} r) left beyond {}× the radius",
            f.diverged, f.samples, f.radius, opts.divergence_factor
        )),
        (Verdict::NoCertificate(reason), None) => Outcome::NoCertificateFound(reason.clone()),
        (Verdict::NotApplicable(reason), None) => {
            return Err(NotApplicable::Domain(reason.clone()).into())
        }
        (Verdict::NoEquilibrium, None) => {
            return Err(StabilityModelError::NotAnEquilibrium(
                "no static equilibrium with the given friction".into(),
            ))
        }
    };
    Ok(ModelCertificate {
        body,
        static_forces,
        outcome,
        report,
        falsification,
        trajectory,
    })
}

/// The ZOD trajectory from `x0`, at its events, in the model's coordinates.
fn replay(body: &PlanarBody, x0: &[f64; 6]) -> Vec<TrajectorySample> {
    let (_, events) = simulate_traced(&body.params, x0, &SimOptions::default());
    let start = std::iter::once((0.0, *x0, "start".to_string()));
    let rest = events.into_iter().map(|e| {
        let what = match e.kind {
            EventKind::PreImpact(i) => format!("impact at {}", body.contacts[i].name),
            EventKind::SegmentEnd(mode) => format!("end of mode {}", mode.name()),
        };
        (e.t, e.state, what)
    });
    start
        .chain(rest)
        .map(|(t, x, event)| {
            let (q, v) = body.model_state(&x);
            TrajectorySample {
                t: t * body.time_unit,
                q,
                v,
                event,
            }
        })
        .collect()
}
