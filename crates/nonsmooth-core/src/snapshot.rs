//! [`ContactSnapshot`]: a mechanical system with its contacts frozen at a state (q, v, t).
//!
//! The snapshot gathers everything the capabilities of nonsmooth consume (see
//! docs/conventions.md): the equations of motion `M v̇ = f + Gᵀλ + Pᵀτ` with `q̇ = N(q) v`, and per
//! contact the gap φ, the normal and tangent Jacobian rows, their `J̇ v` terms and the
//! combined material. Bilateral constraint rows and joint-limit rows carry their own φ, row
//! and `J̇ v` term. All quantities are generic over [`Scalar`], so a snapshot built with dual
//! numbers carries exact derivatives of every entry.

use crate::dynamics::{
    bias_force, check_state, kinematics, mass_matrix, passive_force, point_jacobian, point_jdot_v,
    velocity_map, Kinematics,
};
use crate::error::{Location, ModelError};
use crate::geometry::{
    collider_world_poses, detect_contacts_within, tangent_basis, ContactMargins,
};
use crate::scalar::real_part as real;
use crate::scalar::{lift, lift3};
use crate::{BodyId, ComplianceLaw, ConstraintKind, Dimension, JointKind, Model, Scalar, State};
use nalgebra::{Cholesky, DMatrix, DVector, Matrix3xX, Point3, RowDVector, Vector3};

/// One unilateral contact between colliders A and B (all vectors in world axes): the one
/// contact representation of the toolkit. Its Jacobian rows `R` are stored densely
/// ([`DenseRows`], rows of length nv, in a [`ContactSnapshot`]) or per body ([`BodyRows`],
/// small blocks on the two bodies' coordinates, in a [`BlockSnapshot`]); everything else is
/// the same in both views.
///
/// Sign conventions: `normal` points from B toward A, φ ≥ 0 is separation, and a normal
/// impulse λ_n ≥ 0 enters the dynamics as `rows.normalᵀ λ_n`, pushing A away from B.
#[derive(Debug, Clone, PartialEq)]
pub struct Contact<T: Scalar, R = DenseRows<T>> {
    /// Index of collider A in [`Model::colliders`].
    pub collider_a: usize,
    /// Index of collider B in [`Model::colliders`].
    pub collider_b: usize,
    /// Body of collider A (`None` = world).
    pub body_a: Option<BodyId>,
    /// Body of collider B (`None` = world).
    pub body_b: Option<BodyId>,
    /// Feature of A (box corner, index in a point set, 0 otherwise); see
    /// [`PairContact::feature`](crate::geometry::PairContact::feature).
    pub feature: usize,
    /// Contact point: the midpoint of the witness points.
    pub point: Vector3<T>,
    /// Witness point on A.
    pub point_a: Vector3<T>,
    /// Witness point on B.
    pub point_b: Vector3<T>,
    /// Unit normal, from B toward A.
    pub normal: Vector3<T>,
    /// Unit tangents: one (`ẑ × n`) in planar models, two (Frisvad's basis) in spatial ones;
    /// see [`tangent_basis`].
    pub tangents: Vec<Vector3<T>>,
    /// Signed gap φ.
    pub gap: T,
    /// The Jacobian rows of the normal and the tangents.
    pub rows: R,
    /// `nᵀ (J̇_a v − J̇_b v)`: the velocity-product term of `φ̈ = normal_row · v̇ + …` for the
    /// material points at the witness points. The rotation of n and the motion of the
    /// witness points over the surfaces (rolling) are neglected, as in the usual
    /// acceleration-level contact formulation (e.g. Featherstone RBDA §11.3); the term is
    /// exact for a body-fixed point (point foot, box corner) against a fixed plane.
    pub normal_row_dot_v: T,
    /// `tᵢᵀ (J̇_a v − J̇_b v)` per tangent, with the same approximation.
    pub tangent_rows_dot_v: DVector<T>,
    /// Coulomb friction coefficient μ of the pair ([`Model::pair_material`]).
    pub friction: f64,
    /// Normal stiffness K where the pair is compliant; `None` = rigid.
    pub stiffness: Option<f64>,
    /// Normal damping B where the pair is compliant.
    pub damping: Option<f64>,
    /// Newton restitution coefficient where the pair has one.
    pub restitution: Option<f64>,
    /// Compliance law of the pair.
    pub law: ComplianceLaw,
}

/// The Jacobian rows of a [`Contact`] as rows of length nv (a [`ContactSnapshot`]'s view).
#[derive(Debug, Clone, PartialEq)]
pub struct DenseRows<T: Scalar> {
    /// Normal Jacobian row (length nv): `φ̇ = normal · v`, built as
    /// `nᵀ (J_a(p_a) − J_b(p_b))` with `J_x(p)` the world point Jacobian of the material point
    /// of body x at p.
    pub normal: DVector<T>,
    /// Tangent Jacobian rows (k × nv, k = number of tangents): `tᵢᵀ (J_a(p_a) − J_b(p_b))`,
    /// the relative sliding velocity of A over B along each tangent.
    pub tangents: DMatrix<T>,
}

/// The Jacobian rows of a [`Contact`] per body (a [`BlockSnapshot`]'s view): the same rows
/// as [`DenseRows`], restricted to the coordinates of the two bodies' root joints.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BodyRows {
    /// Rows `[nᵀ; t₁ᵀ; …] J_a(p_a)` on the velocity coordinates of `body_a`'s joint
    /// ((1 + k) × nv_a; empty for the world).
    pub a: DMatrix<f64>,
    /// Rows `−[nᵀ; t₁ᵀ; …] J_b(p_b)` on the velocity coordinates of `body_b`'s joint.
    pub b: DMatrix<f64>,
}

/// A contact of a [`BlockSnapshot`]: Jacobian rows stored per body.
pub type BlockContact = Contact<f64, BodyRows>;

/// One scalar constraint row: a bilateral constraint component (φ = 0 enforced) or a
/// unilateral joint limit (φ ≥ 0 enforced).
#[derive(Debug, Clone, PartialEq)]
pub struct ConstraintRow<T: Scalar> {
    /// Name: `constraint.x` / `.y` / `.z` for point constraints, the constraint name for a
    /// distance constraint, `joint.lower` / `joint.upper` for limits.
    pub name: String,
    /// Constraint value φ.
    pub phi: T,
    /// Jacobian row (length nv): `φ̇ = row · v`.
    pub row: DVector<T>,
    /// Velocity-product term: `φ̈ = row · v̇ + row_dot_v`.
    pub row_dot_v: T,
    /// Stiffness K where soft; `None` = rigid.
    pub stiffness: Option<f64>,
    /// Damping B where soft.
    pub damping: Option<f64>,
}

/// A mechanical system frozen at the state (q, v, t). Equations of motion:
/// `M v̇ = f + Gᵀλ + Pᵀτ`, `q̇ = N(q) v`, with G stacking the contact, bilateral and limit rows.
#[derive(Debug, Clone, PartialEq)]
pub struct ContactSnapshot<T: Scalar> {
    /// Planar or spatial model.
    pub dimension: Dimension,
    /// Time t.
    pub t: T,
    /// Generalized coordinates q (length nq).
    pub q: DVector<T>,
    /// Generalized velocities v (length nv).
    pub v: DVector<T>,
    /// Joint-space inertia M(q) (nv × nv, symmetric positive definite for a valid model).
    pub mass_matrix: DMatrix<T>,
    /// Non-contact, non-actuated generalized forces `f = −bias + passive`: gravity, Coriolis
    /// and centrifugal terms, joint damping (length nv).
    pub forces: DVector<T>,
    /// Velocity map N(q) (nq × nv) with `q̇ = N(q) v`.
    pub velocity_map: DMatrix<T>,
    /// Actuation matrix Pᵀ (nv × nu) from [`Model::actuation_matrix`].
    pub actuation: DMatrix<T>,
    /// Unilateral contacts with gap φ ≤ [`Model::contact_margin`].
    pub contacts: Vec<Contact<T>>,
    /// Bilateral constraint rows from [`Model::constraints`], in model order (2 rows planar /
    /// 3 spatial per point constraint, 1 per distance constraint).
    pub bilateral: Vec<ConstraintRow<T>>,
    /// Unilateral joint-limit rows with φ ≤ [`Model::contact_margin`]: lower limit
    /// φ = q − lower, row = +e_i; upper limit φ = upper − q, row = −e_i (i the joint's
    /// velocity index).
    pub limits: Vec<ConstraintRow<T>>,
}

/// Checks length and finiteness of a generic vector.
fn check_vector<T: Scalar>(name: &str, x: &DVector<T>, expected: usize) -> Result<(), ModelError> {
    if x.len() != expected {
        return Err(ModelError::DimensionMismatch {
            location: Location::field(name),
            expected,
            got: x.len(),
        });
    }
    if let Some((i, val)) = x.iter().enumerate().find(|(_, x)| !x.is_finite()) {
        return Err(ModelError::NonFinite {
            location: Location::field(format!("{name}[{i}]")),
            value: real(*val),
        });
    }
    Ok(())
}

/// World position of a body-fixed anchor.
fn anchor_world<T: Scalar>(
    kin: &Kinematics<T>,
    body: Option<BodyId>,
    anchor: &Vector3<f64>,
) -> Vector3<T> {
    let a = lift3::<T>(anchor);
    match body {
        None => a,
        Some(b) => (kin.poses[b] * Point3::from(a)).coords,
    }
}

/// Relative point Jacobian `J_a(p_a) − J_b(p_b)` and relative `J̇ v`.
fn relative_jacobian<T: Scalar>(
    model: &Model,
    kin: &Kinematics<T>,
    body_a: Option<BodyId>,
    p_a: &Vector3<T>,
    body_b: Option<BodyId>,
    p_b: &Vector3<T>,
) -> (Matrix3xX<T>, Vector3<T>) {
    let jac = point_jacobian(model, kin, body_a, p_a) - point_jacobian(model, kin, body_b, p_b);
    let jdot_v = point_jdot_v(model, kin, body_a, p_a) - point_jdot_v(model, kin, body_b, p_b);
    (jac, jdot_v)
}

/// Checks that every body index named by the model exists (so that kinematic look-ups are
/// in range).
/// A finite but huge state (e.g. a position of 1e82 m, found by fuzzing) can overflow the
/// products of the dynamics; such a state is reported as an invalid `q`/`v` naming the first
/// non-finite output, never returned as a snapshot with infinities or NaN inside.
fn check_outputs_finite<T: Scalar>(
    q: &DVector<T>,
    v: &DVector<T>,
    mass: &DMatrix<T>,
    forces: &DVector<T>,
    contacts: &[Contact<T>],
) -> Result<(), ModelError> {
    let first_bad = |m: &DMatrix<T>| m.iter().position(|x| !x.is_finite());
    let culprit = if let Some(k) = first_bad(mass) {
        Some(format!(
            "mass_matrix[{}, {}]",
            k % mass.nrows(),
            k / mass.nrows()
        ))
    } else if let Some(k) = forces.iter().position(|x| !x.is_finite()) {
        Some(format!("forces[{k}]"))
    } else {
        contacts.iter().enumerate().find_map(|(i, c)| {
            let bad = !c.gap.is_finite()
                || c.rows.normal.iter().any(|x| !x.is_finite())
                || c.rows.tangents.iter().any(|x| !x.is_finite())
                || !c.normal_row_dot_v.is_finite();
            bad.then(|| format!("contacts[{i}]"))
        })
    };
    match culprit {
        None => Ok(()),
        Some(what) => {
            let qmax = q.iter().map(|x| real(*x).abs()).fold(0.0, f64::max);
            let vmax = v.iter().map(|x| real(*x).abs()).fold(0.0, f64::max);
            Err(ModelError::InvalidValue {
                location: Location::field("q"),
                reason: format!(
                    "the state overflows floating point ({what} is not finite; largest |q| = \
                     {qmax:.3e}, largest |v| = {vmax:.3e})"
                ),
            })
        }
    }
}

fn check_body(model: &Model, body: Option<BodyId>, field: String) -> Result<(), ModelError> {
    match body {
        Some(b) if b >= model.bodies.len() => Err(ModelError::Topology {
            location: Location::field(field),
            reason: format!(
                "body index {b} out of range ({} bodies)",
                model.bodies.len()
            ),
        }),
        _ => Ok(()),
    }
}

impl<T: Scalar> ContactSnapshot<T> {
    /// Freezes `model` at (q, v, t): evaluates M, f, N, Pᵀ, detects contacts (φ ≤
    /// [`Model::contact_margin`]) and builds every constraint row.
    ///
    /// # Errors
    /// [`ModelError::DimensionMismatch`] if `q`/`v` have the wrong length,
    /// [`ModelError::NonFinite`] for NaN/∞ entries (checked on all scalars, the real part of
    /// dual numbers), whatever [`check_state`] rejects (e.g. an unnormalizable quaternion),
    /// [`ModelError::Topology`] for out-of-range body, material, actuator joint or dof
    /// indices, and
    /// [`ModelError::InvalidValue`] for a distance constraint whose anchors coincide (its
    /// direction is undefined).
    pub fn new(model: &Model, q: &DVector<T>, v: &DVector<T>, t: T) -> Result<Self, ModelError> {
        Self::with_contact_margins(
            model,
            q,
            v,
            t,
            &ContactMargins::uniform(model.contact_margin),
        )
    }

    /// [`ContactSnapshot::new`] with the contacts detected within `margins` instead of the
    /// model's [`Model::contact_margin`]: steppers widen it for fast colliders
    /// ([`ContactMargins::speculative`], resolved with this snapshot's own kinematics) so that
    /// no contact is stepped over. With a travel time `τ` ([`ContactMargins::travel_time`])
    /// the joint limits are speculative too: a limit row enters when its gap is at most the
    /// model's margin plus `τ |q̇ᵢ|`, the joint's travel over the step, so that no stop is
    /// stepped over either (without one, the model's margin alone).
    ///
    /// # Errors
    /// As [`ContactSnapshot::new`].
    pub fn with_contact_margins(
        model: &Model,
        q: &DVector<T>,
        v: &DVector<T>,
        t: T,
        margins: &ContactMargins,
    ) -> Result<Self, ModelError> {
        check_vector("q", q, model.nq())?;
        check_vector("v", v, model.nv())?;
        if !t.is_finite() {
            return Err(ModelError::NonFinite {
                location: Location::field("t"),
                value: real(t),
            });
        }
        check_state(model, &q.map(real), &v.map(real))?;
        if model.joints.len() != model.bodies.len() {
            return Err(ModelError::Topology {
                location: Location::field("joints"),
                reason: format!(
                    "{} joints for {} bodies (every body needs exactly one parent joint)",
                    model.joints.len(),
                    model.bodies.len()
                ),
            });
        }
        for (i, c) in model.colliders.iter().enumerate() {
            check_body(model, c.body, format!("colliders[{i}].body"))?;
            if c.material >= model.materials.len() {
                return Err(ModelError::Topology {
                    location: Location::field(format!("colliders[{i}].material")),
                    reason: format!(
                        "material index {} out of range ({} materials)",
                        c.material,
                        model.materials.len()
                    ),
                });
            }
        }
        for (i, c) in model.constraints.iter().enumerate() {
            let (ba, bb) = match &c.kind {
                ConstraintKind::Point { body_a, body_b, .. }
                | ConstraintKind::Distance { body_a, body_b, .. } => (*body_a, *body_b),
            };
            check_body(model, ba, format!("constraints[{i}].body_a"))?;
            check_body(model, bb, format!("constraints[{i}].body_b"))?;
        }
        for (i, a) in model.actuators.iter().enumerate() {
            let joint_nv = model.joints.get(a.joint).map(|j| j.kind.nv());
            if joint_nv.is_none_or(|n| a.dof >= n) {
                return Err(ModelError::Topology {
                    location: Location::field(format!("actuators[{i}]")),
                    reason: format!(
                        "actuator `{}` drives dof {} of joint {}, which does not exist",
                        a.name, a.dof, a.joint
                    ),
                });
            }
        }

        let kin = kinematics(model, q, v);
        let mass = mass_matrix(model, q);
        let forces = passive_force(model, q, v) - bias_force(model, q, v);
        let contacts = Self::build_contacts(model, &kin, &resolve_margins(model, margins, &kin))?;
        let bilateral = Self::build_bilateral(model, &kin, v)?;
        let limits = Self::build_limits(model, q, v, margins.travel_time);
        check_outputs_finite(q, v, &mass, &forces, &contacts)?;
        Ok(ContactSnapshot {
            dimension: model.dimension,
            t,
            q: q.clone(),
            v: v.clone(),
            mass_matrix: mass,
            forces,
            velocity_map: velocity_map(model, q),
            actuation: model.actuation_matrix().map(lift::<T>),
            contacts,
            bilateral,
            limits,
        })
    }

    fn build_contacts(
        model: &Model,
        kin: &Kinematics<T>,
        margins: &ContactMargins,
    ) -> Result<Vec<Contact<T>>, ModelError> {
        let poses = collider_world_poses(model, &kin.poses)?;
        let found = detect_contacts_within(model, &poses, margins)?;
        let mut contacts = Vec::with_capacity(found.len());
        for pc in found {
            let g = pc.geometry;
            let body_a = model.colliders[pc.collider_a].body;
            let body_b = model.colliders[pc.collider_b].body;
            let (jac, jdot_v) =
                relative_jacobian(model, kin, body_a, &g.point_a, body_b, &g.point_b);
            let tangents = tangent_basis(model.dimension, &g.normal);
            let normal_row = (g.normal.transpose() * &jac).transpose();
            let mut tangent_rows = DMatrix::zeros(tangents.len(), jac.ncols());
            let mut tangent_rows_dot_v = DVector::zeros(tangents.len());
            for (k, t) in tangents.iter().enumerate() {
                let row: RowDVector<T> = t.transpose() * &jac;
                tangent_rows.set_row(k, &row);
                tangent_rows_dot_v[k] = t.dot(&jdot_v);
            }
            let material = model.pair_material(pc.collider_a, pc.collider_b);
            contacts.push(Contact {
                collider_a: pc.collider_a,
                collider_b: pc.collider_b,
                body_a,
                body_b,
                feature: pc.feature,
                point: g.midpoint(),
                point_a: g.point_a,
                point_b: g.point_b,
                normal: g.normal,
                tangents,
                gap: g.gap,
                rows: DenseRows {
                    normal: normal_row,
                    tangents: tangent_rows,
                },
                normal_row_dot_v: g.normal.dot(&jdot_v),
                tangent_rows_dot_v,
                friction: material.friction,
                stiffness: material.stiffness,
                damping: material.damping,
                restitution: material.restitution,
                law: material.law,
            });
        }
        Ok(contacts)
    }

    fn build_bilateral(
        model: &Model,
        kin: &Kinematics<T>,
        v: &DVector<T>,
    ) -> Result<Vec<ConstraintRow<T>>, ModelError> {
        let mut rows = Vec::new();
        for (i, c) in model.constraints.iter().enumerate() {
            match &c.kind {
                ConstraintKind::Point {
                    body_a,
                    anchor_a,
                    body_b,
                    anchor_b,
                } => {
                    let p_a = anchor_world(kin, *body_a, anchor_a);
                    let p_b = anchor_world(kin, *body_b, anchor_b);
                    let (jac, jdot_v) = relative_jacobian(model, kin, *body_a, &p_a, *body_b, &p_b);
                    let phi = p_a - p_b;
                    let axes: &[(usize, &str)] = match model.dimension {
                        Dimension::Planar => &[(0, "x"), (1, "y")],
                        Dimension::Spatial => &[(0, "x"), (1, "y"), (2, "z")],
                    };
                    for &(k, axis) in axes {
                        rows.push(ConstraintRow {
                            name: format!("{}.{axis}", c.name),
                            phi: phi[k],
                            row: jac.row(k).transpose(),
                            row_dot_v: jdot_v[k],
                            stiffness: c.stiffness,
                            damping: c.damping,
                        });
                    }
                }
                ConstraintKind::Distance {
                    body_a,
                    anchor_a,
                    body_b,
                    anchor_b,
                    length,
                } => {
                    let p_a = anchor_world(kin, *body_a, anchor_a);
                    let p_b = anchor_world(kin, *body_b, anchor_b);
                    let (jac, jdot_v) = relative_jacobian(model, kin, *body_a, &p_a, *body_b, &p_b);
                    let d = p_a - p_b;
                    let dist = d.norm();
                    let dist_real = real(dist);
                    if dist_real.is_nan() || dist_real <= 0.0 {
                        return Err(ModelError::InvalidValue {
                            location: Location::field(format!("constraints[{i}]")),
                            reason: format!(
                                "distance constraint `{}` has coincident anchors; its direction is undefined",
                                c.name
                            ),
                        });
                    }
                    let e = d / dist;
                    let row = (e.transpose() * &jac).transpose();
                    // d/dt (eᵀ J v) = eᵀ J̇ v + ėᵀ ḋ with ḋ = J v and ė = (I − e eᵀ) ḋ / |d|.
                    let d_dot = &jac * v;
                    let d_dot_perp = d_dot - e * e.dot(&d_dot);
                    let rotation_term = d_dot_perp.norm_squared() / dist;
                    rows.push(ConstraintRow {
                        name: c.name.clone(),
                        phi: dist - lift::<T>(*length),
                        row,
                        row_dot_v: e.dot(&jdot_v) + rotation_term,
                        stiffness: c.stiffness,
                        damping: c.damping,
                    });
                }
            }
        }
        Ok(rows)
    }

    /// The limit rows with gap φ ≤ margin + `travel_time`·|q̇ᵢ| (speculative for a positive
    /// travel time, like the contacts of [`velocity_margins`]).
    fn build_limits(
        model: &Model,
        q: &DVector<T>,
        v: &DVector<T>,
        travel_time: f64,
    ) -> Vec<ConstraintRow<T>> {
        let nv = v.len();
        let mut rows = Vec::new();
        for j in &model.joints {
            let Some(limit) = j.limit else { continue };
            if !matches!(j.kind, JointKind::Revolute | JointKind::Prismatic) {
                continue;
            }
            let qi = q[j.q_index];
            let margin = lift::<T>(model.contact_margin + travel_time * real(v[j.v_index]).abs());
            for (suffix, phi, sign) in [
                ("lower", qi - lift::<T>(limit.lower), T::one()),
                ("upper", lift::<T>(limit.upper) - qi, -T::one()),
            ] {
                if phi <= margin {
                    let mut row = DVector::zeros(nv);
                    row[j.v_index] = sign;
                    rows.push(ConstraintRow {
                        name: format!("{}.{suffix}", j.name),
                        phi,
                        row,
                        row_dot_v: T::zero(),
                        stiffness: limit.stiffness,
                        damping: limit.damping,
                    });
                }
            }
        }
        rows
    }
}

impl ContactSnapshot<f64> {
    /// [`ContactSnapshot::new`] at a [`State`].
    ///
    /// # Errors
    /// As [`ContactSnapshot::new`].
    pub fn from_state(model: &Model, state: &State) -> Result<Self, ModelError> {
        ContactSnapshot::new(model, &state.q, &state.v, state.t)
    }
}

impl<T: Scalar> ContactSnapshot<T> {
    /// Number of velocity coordinates nv.
    pub fn nv(&self) -> usize {
        self.v.len()
    }

    /// Number of contacts.
    pub fn num_contacts(&self) -> usize {
        self.contacts.len()
    }

    /// Gaps φ of all contacts (length nc).
    pub fn gaps(&self) -> DVector<T> {
        DVector::from_iterator(self.contacts.len(), self.contacts.iter().map(|c| c.gap))
    }

    /// Smallest contact gap, `None` without contacts.
    pub fn minimal_gap(&self) -> Option<T> {
        self.contacts
            .iter()
            .map(|c| c.gap)
            .reduce(|a, b| if b < a { b } else { a })
    }

    /// Normal Jacobian N_c (nc × nv): row i is `contacts[i].rows.normal`.
    pub fn normal_jacobian(&self) -> DMatrix<T> {
        let mut g = DMatrix::zeros(self.contacts.len(), self.nv());
        for (i, c) in self.contacts.iter().enumerate() {
            g.set_row(i, &c.rows.normal.transpose());
        }
        g
    }

    /// Tangent Jacobian (Σ kᵢ × nv): the tangent rows of contact 0, then contact 1, …
    /// (k = 1 planar, 2 spatial per contact).
    pub fn tangent_jacobian(&self) -> DMatrix<T> {
        let rows: usize = self.contacts.iter().map(|c| c.rows.tangents.nrows()).sum();
        let mut g = DMatrix::zeros(rows, self.nv());
        let mut r = 0;
        for c in &self.contacts {
            let k = c.rows.tangents.nrows();
            g.rows_mut(r, k).copy_from(&c.rows.tangents);
            r += k;
        }
        g
    }

    /// Bilateral constraint Jacobian (n_bilateral × nv), rows in the order of
    /// [`ContactSnapshot::bilateral`].
    pub fn bilateral_jacobian(&self) -> DMatrix<T> {
        Self::stack_rows(&self.bilateral, self.nv())
    }

    /// Joint-limit Jacobian (n_limits × nv), rows in the order of
    /// [`ContactSnapshot::limits`].
    pub fn limit_jacobian(&self) -> DMatrix<T> {
        Self::stack_rows(&self.limits, self.nv())
    }

    fn stack_rows(rows: &[ConstraintRow<T>], nv: usize) -> DMatrix<T> {
        let mut g = DMatrix::zeros(rows.len(), nv);
        for (i, r) in rows.iter().enumerate() {
            g.set_row(i, &r.row.transpose());
        }
        g
    }

    /// Delassus operator `W = G M⁻¹ Gᵀ` for a constraint Jacobian G (m × nv), computed with a
    /// Cholesky factorization of M (M = L Lᵀ, W = (L⁻¹Gᵀ)ᵀ(L⁻¹Gᵀ), symmetric by
    /// construction).
    ///
    /// # Errors
    /// [`ModelError::DimensionMismatch`] if G does not have nv columns,
    /// [`ModelError::InvalidValue`] if M is not positive definite.
    pub fn delassus(&self, g: &DMatrix<T>) -> Result<DMatrix<T>, ModelError> {
        if g.ncols() != self.nv() {
            return Err(ModelError::DimensionMismatch {
                location: Location::field("G (columns)"),
                expected: self.nv(),
                got: g.ncols(),
            });
        }
        let chol =
            Cholesky::new(self.mass_matrix.clone()).ok_or_else(|| ModelError::InvalidValue {
                location: Location::field("mass_matrix"),
                reason: "the mass matrix is not positive definite (Cholesky failed)".into(),
            })?;
        let l = chol.l();
        let mut y = g.transpose();
        if !l.solve_lower_triangular_mut(&mut y) {
            return Err(ModelError::InvalidValue {
                location: Location::field("mass_matrix"),
                reason: "singular Cholesky factor".into(),
            });
        }
        Ok(y.transpose() * y)
    }
}

/// Mass-matrix block and generalized force of one root joint of a [`BlockSnapshot`].
#[derive(Debug, Clone, PartialEq)]
pub struct MassBlock {
    /// The joint's body (equal to the joint index).
    pub body: BodyId,
    /// First velocity coordinate of the joint.
    pub v_index: usize,
    /// Diagonal block `M_jj = Sᵀ I S` (nv_j × nv_j; RBDA §6.2 with no descendants).
    pub mass: DMatrix<f64>,
    /// `f_j = passive − bias` on the joint's coordinates (RNEA, RBDA Table 5.1).
    pub force: DVector<f64>,
}

/// A sparse (per-body block) view of a [`ContactSnapshot`] for models in which every joint
/// is a root joint (parent = world) and which have no bilateral constraints and no joint
/// limits: the mass matrix is then block diagonal and each contact row touches at most two
/// joints, so everything is stored in O(bodies + contacts) memory. Contacts are found with
/// a sweep-and-prune broad phase on the colliders' bounding spheres (unbounded planes and
/// height maps are paired with every collider) and are returned in the same order, with the
/// same values, as [`ContactSnapshot::contacts`].
#[derive(Debug, Clone, PartialEq)]
pub struct BlockSnapshot {
    /// Planar or spatial model.
    pub dimension: Dimension,
    /// Time t.
    pub t: f64,
    /// Number of velocity coordinates nv.
    pub nv: usize,
    /// One block per joint with velocity coordinates, in joint order.
    pub blocks: Vec<MassBlock>,
    /// For each body, the index of its block in `blocks` (`None` for joints without
    /// velocity coordinates).
    pub block_of_body: Vec<Option<usize>>,
    /// Unilateral contacts with gap φ ≤ [`Model::contact_margin`].
    pub contacts: Vec<BlockContact>,
}

/// Motion-subspace columns of one body in world axes: (nv, angular parts ω_k, linear
/// parts u_k).
type BodyColumns = (usize, [Vector3<f64>; 6], [Vector3<f64>; 6]);

/// [`Model::pair_material`] of colliders `a`, `b`, memoized in `cache` per ordered pair of
/// material indices for pairs without an override (the combination
/// [`crate::ContactMaterial::combine`] depends only on the two materials).
fn pair_material_cached(
    model: &Model,
    a: usize,
    b: usize,
    cache: &mut Vec<((usize, usize), crate::ContactMaterial)>,
) -> crate::ContactMaterial {
    let (lo, hi) = (a.min(b), a.max(b));
    let overridden = model
        .pair_overrides
        .iter()
        .any(|o| o.collider_a.min(o.collider_b) == lo && o.collider_a.max(o.collider_b) == hi);
    if overridden {
        return model.pair_material(a, b);
    }
    let key = (model.colliders[a].material, model.colliders[b].material);
    if let Some((_, m)) = cache.iter().find(|(k, _)| *k == key) {
        return m.clone();
    }
    let m = model.pair_material(a, b);
    cache.push((key, m.clone()));
    m
}

/// The contact margins that keep every contact in view over a step of `h` at the
/// velocities of `kin`: `margins.base` for every pair, plus for each collider on a body the
/// distance its fastest point can travel in one step, `h (|v_b| + |ω_b| r_c)`, with `r_c` the
/// distance from the body's frame origin to the farthest point of the collider (its offset
/// plus its bounding radius; unbounded shapes on moving bodies count the origin's speed only),
/// added to `margins.extra`. Two colliders approaching each other then cannot close a gap
/// larger than their pair margin within the step (speculative contacts). Snapshots apply it
/// themselves to margins built by [`ContactMargins::speculative`].
pub fn velocity_margins<T: Scalar>(
    model: &Model,
    margins: &ContactMargins,
    kin: &Kinematics<T>,
    h: f64,
) -> ContactMargins {
    let extra = model
        .colliders
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let own = margins.extra(i);
            let Some(b) = c.body.filter(|&b| b < kin.poses.len()) else {
                return own;
            };
            let reach = c.pose.translation.vector.norm()
                + crate::geometry::bounding_radius(&c.shape).unwrap_or(0.0);
            let speed =
                real(kin.linear_velocity[b].norm()) + real(kin.angular_velocity[b].norm()) * reach;
            own + h * speed
        })
        .collect();
    ContactMargins {
        base: margins.base,
        extra,
        travel_time: 0.0,
    }
}

/// `margins` as a snapshot at the kinematics `kin` uses them: with their travel time
/// ([`ContactMargins::travel_time`]) turned into per-collider margins.
fn resolve_margins<'a, T: Scalar>(
    model: &Model,
    margins: &'a ContactMargins,
    kin: &Kinematics<T>,
) -> std::borrow::Cow<'a, ContactMargins> {
    if margins.travel_time > 0.0 {
        std::borrow::Cow::Owned(velocity_margins(model, margins, kin, margins.travel_time))
    } else {
        std::borrow::Cow::Borrowed(margins)
    }
}

impl BlockSnapshot {
    /// The block view at (q, v, t), or `Ok(None)` when the model does not qualify (a joint
    /// with a parent, a bilateral constraint or a joint limit).
    ///
    /// # Errors
    /// As [`ContactSnapshot::new`] for invalid states and indices.
    pub fn new(
        model: &Model,
        q: &DVector<f64>,
        v: &DVector<f64>,
        t: f64,
    ) -> Result<Option<Self>, ModelError> {
        let margins = ContactMargins::uniform(model.contact_margin);
        Self::with_contact_margins(model, q, v, t, &margins)
    }

    /// [`BlockSnapshot::new`] with the contacts detected within `margins` (see
    /// [`ContactSnapshot::with_contact_margins`]).
    ///
    /// # Errors
    /// As [`BlockSnapshot::new`].
    pub fn with_contact_margins(
        model: &Model,
        q: &DVector<f64>,
        v: &DVector<f64>,
        t: f64,
        margins: &ContactMargins,
    ) -> Result<Option<Self>, ModelError> {
        let mut out = BlockSnapshot {
            dimension: model.dimension,
            t,
            nv: 0,
            blocks: Vec::new(),
            block_of_body: Vec::new(),
            contacts: Vec::new(),
        };
        Ok(out
            .update_with_contact_margins(model, q, v, t, margins)?
            .then_some(out))
    }

    /// Recomputes the block view in place at (q, v, t), reusing the storage of its mass
    /// blocks and contact Jacobian blocks (the same values as [`BlockSnapshot::new`]).
    /// Returns `Ok(false)` when the model does not qualify; after `Ok(false)` or an error
    /// the contents are unspecified.
    ///
    /// # Errors
    /// As [`BlockSnapshot::new`].
    pub fn update(
        &mut self,
        model: &Model,
        q: &DVector<f64>,
        v: &DVector<f64>,
        t: f64,
    ) -> Result<bool, ModelError> {
        let margins = ContactMargins::uniform(model.contact_margin);
        self.update_with_contact_margins(model, q, v, t, &margins)
    }

    /// [`BlockSnapshot::update`] with the contacts detected within `margins` instead of the
    /// model's [`Model::contact_margin`] (see [`ContactSnapshot::with_contact_margins`]).
    ///
    /// # Errors
    /// As [`BlockSnapshot::new`].
    pub fn update_with_contact_margins(
        &mut self,
        model: &Model,
        q: &DVector<f64>,
        v: &DVector<f64>,
        t: f64,
        margins: &ContactMargins,
    ) -> Result<bool, ModelError> {
        use crate::dynamics::rnea::rnea_from_workspace;
        use crate::dynamics::DynamicsWorkspace;
        check_vector("q", q, model.nq())?;
        check_vector("v", v, model.nv())?;
        if !t.is_finite() {
            return Err(ModelError::NonFinite {
                location: Location::field("t"),
                value: t,
            });
        }
        if !has_block_structure(model) {
            return Ok(false);
        }
        check_state(model, q, v)?;
        check_collider_indices(model)?;
        let kin = kinematics(model, q, v);
        let mut ws = DynamicsWorkspace::<f64>::new(model);
        ws.update(model, q);
        let mut bias = DVector::zeros(model.nv());
        rnea_from_workspace(model, v, None, &mut ws, &mut bias);
        self.fill_mass_blocks(model, q, v, &bias, &ws);
        check_blocks_finite(&self.blocks)?;
        let poses = collider_world_poses(model, &kin.poses)?;
        let margins = resolve_margins(model, margins, &kin);
        BodyRowBuilder::new(model, &kin, &ws).fill_contacts(
            &poses,
            &margins,
            &mut self.contacts,
        )?;
        self.dimension = model.dimension;
        self.t = t;
        self.nv = model.nv();
        Ok(true)
    }

    /// Writes one [`MassBlock`] per joint with velocity coordinates into `blocks` (their
    /// storage reused): `M_jj = Sᵀ I S` (RBDA §6.2 with no descendants) and
    /// `f_j = −damping v − bias − spring` at (q, v), `bias` from RNEA and `ws` updated at q;
    /// and the block of each body into `block_of_body`.
    fn fill_mass_blocks(
        &mut self,
        model: &Model,
        q: &DVector<f64>,
        v: &DVector<f64>,
        bias: &DVector<f64>,
        ws: &crate::dynamics::DynamicsWorkspace<f64>,
    ) {
        let (blocks, block_of_body) = (&mut self.blocks, &mut self.block_of_body);
        block_of_body.clear();
        block_of_body.resize(model.bodies.len(), None);
        let mut nblocks = 0;
        for (i, j) in model.joints.iter().enumerate() {
            let n = j.kind.nv();
            if n == 0 {
                continue;
            }
            let data = &ws.bodies[i];
            if nblocks == blocks.len() {
                blocks.push(MassBlock {
                    body: i,
                    v_index: j.v_index,
                    mass: DMatrix::zeros(n, n),
                    force: DVector::zeros(n),
                });
            }
            let blk = &mut blocks[nblocks];
            nblocks += 1;
            blk.body = i;
            blk.v_index = j.v_index;
            if blk.mass.nrows() != n || blk.mass.ncols() != n {
                blk.mass = DMatrix::zeros(n, n);
            }
            if blk.force.len() != n {
                blk.force = DVector::zeros(n);
            }
            let m = &mut blk.mass;
            for l in 0..n {
                let fl = data.inertia.mul_motion(&data.s.column(l).into_owned());
                for k in 0..n {
                    m[(k, l)] = data.s.column(k).dot(&fl);
                }
            }
            for k in 0..n {
                blk.force[k] = -j.damping * v[j.v_index + k] - bias[j.v_index + k];
            }
            if let Some(s) = &j.spring {
                blk.force[0] -= s.stiffness * (q[j.q_index] - s.reference);
            }
            block_of_body[i] = Some(nblocks - 1);
        }
        blocks.truncate(nblocks);
    }

    /// [`BlockSnapshot::new`] at a [`State`].
    ///
    /// # Errors
    /// As [`BlockSnapshot::new`].
    pub fn from_state(model: &Model, state: &State) -> Result<Option<Self>, ModelError> {
        BlockSnapshot::new(model, &state.q, &state.v, state.t)
    }
}

/// Whether `model` has the structure of a [`BlockSnapshot`]: one root joint per body (in
/// body order), no joint limits and no bilateral constraints.
fn has_block_structure(model: &Model) -> bool {
    model.joints.len() == model.bodies.len()
        && model.constraints.is_empty()
        && !model
            .joints
            .iter()
            .enumerate()
            .any(|(i, j)| j.parent.is_some() || j.limit.is_some() || j.child != i)
}

/// Checks the body and material index of every collider.
fn check_collider_indices(model: &Model) -> Result<(), ModelError> {
    for (i, c) in model.colliders.iter().enumerate() {
        if c.body.is_some_and(|b| b >= model.bodies.len()) {
            check_body(model, c.body, format!("colliders[{i}].body"))?;
        }
        if c.material >= model.materials.len() {
            return Err(ModelError::Topology {
                location: Location::field(format!("colliders[{i}].material")),
                reason: format!(
                    "material index {} out of range ({} materials)",
                    c.material,
                    model.materials.len()
                ),
            });
        }
    }
    Ok(())
}

/// Refuses mass blocks with a non-finite entry (a state that overflows floating point),
/// naming the first one (counted over the blocks' masses and forces in order).
fn check_blocks_finite(blocks: &[MassBlock]) -> Result<(), ModelError> {
    let mut offset = 0;
    for b in blocks {
        let (m, f) = (b.mass.as_slice(), b.force.as_slice());
        if let Some(k) = m.iter().chain(f).position(|x| !x.is_finite()) {
            return Err(ModelError::InvalidValue {
                location: Location::field("q"),
                reason: format!(
                    "the state overflows floating point (block entry {} is not finite)",
                    offset + k
                ),
            });
        }
        offset += m.len() + f.len();
    }
    Ok(())
}

/// Builds the per-body Jacobian rows of contacts: the columns (ω_k, u_k) in world axes of
/// each joint's motion subspace, the body spatial velocity S v rotated into world axes
/// (RBDA ch. 4), once per body.
struct BodyRowBuilder<'a> {
    /// The model.
    model: &'a Model,
    /// Its kinematics at the snapshot's state.
    kin: &'a Kinematics<f64>,
    /// Motion-subspace columns of each body.
    columns: Vec<BodyColumns>,
}

impl<'a> BodyRowBuilder<'a> {
    /// The columns of every body at the kinematics `kin` (`ws` updated at the same q).
    fn new(
        model: &'a Model,
        kin: &'a Kinematics<f64>,
        ws: &crate::dynamics::DynamicsWorkspace<f64>,
    ) -> Self {
        let columns = (0..model.bodies.len())
            .map(|b| {
                let r = kin.poses[b].rotation;
                let s = &ws.bodies[b].s;
                let n = model.joints[b].kind.nv().min(6);
                let mut om = [Vector3::zeros(); 6];
                let mut u = [Vector3::zeros(); 6];
                for k in 0..n {
                    om[k] = r * Vector3::new(s[(0, k)], s[(1, k)], s[(2, k)]);
                    u[k] = r * Vector3::new(s[(3, k)], s[(4, k)], s[(5, k)]);
                }
                (n, om, u)
            })
            .collect();
        BodyRowBuilder {
            model,
            kin,
            columns,
        }
    }

    /// Rows `sign · dirsᵀ J(p)` of `body` written into `m` (its storage reused when the
    /// shape is unchanged; empty for the world).
    fn rows_into(
        &self,
        m: &mut DMatrix<f64>,
        body: Option<BodyId>,
        p: &Vector3<f64>,
        dirs: &[Vector3<f64>],
        sign: f64,
    ) {
        let Some(b) = body else {
            if m.nrows() != 0 || m.ncols() != 0 {
                *m = DMatrix::zeros(0, 0);
            }
            return;
        };
        let (n, om, u) = &self.columns[b];
        let r = p - self.kin.poses[b].translation.vector;
        if m.nrows() != dirs.len() || m.ncols() != *n {
            *m = DMatrix::zeros(dirs.len(), *n);
        }
        for k in 0..*n {
            let col = u[k] + om[k].cross(&r);
            for (a, d) in dirs.iter().enumerate() {
                m[(a, k)] = sign * d.dot(&col);
            }
        }
    }

    /// Detects the contacts of the candidate pairs (broad phase on `poses` within
    /// `margins`) and writes them into `contacts` (their storage reused), in the order of
    /// [`ContactSnapshot::contacts`].
    fn fill_contacts(
        &self,
        poses: &[nalgebra::Isometry3<f64>],
        margins: &ContactMargins,
        contacts: &mut Vec<BlockContact>,
    ) -> Result<(), ModelError> {
        let model = self.model;
        let pairs = crate::geometry::candidate_pairs(model, poses, margins);
        let mut ncontacts = 0;
        let mut materials = Vec::new();
        for (i, j) in pairs {
            let (ci, cj) = (&model.colliders[i], &model.colliders[j]);
            let (a, b) = if crate::geometry::rank(&cj.shape) < crate::geometry::rank(&ci.shape) {
                (j, i)
            } else {
                (i, j)
            };
            let Some(found) = crate::geometry::pair_contacts(
                model.dimension,
                &model.colliders[a].shape,
                &poses[a],
                &model.colliders[b].shape,
                &poses[b],
                margins.pair(a, b),
            ) else {
                continue;
            };
            for (feature, g) in found
                .into_iter()
                .filter(|(_, g)| g.gap <= margins.pair(a, b))
            {
                if ncontacts == contacts.len() {
                    contacts.push(empty_block_contact());
                }
                let contact = &mut contacts[ncontacts];
                let material = pair_material_cached(model, a, b, &mut materials);
                self.write_contact(contact, (a, b), feature, &g, &material);
                check_contact_finite(contact, ncontacts)?;
                ncontacts += 1;
            }
        }
        contacts.truncate(ncontacts);
        Ok(())
    }

    /// Writes the contact `g` between colliders `pair` (A, B), on feature `feature` of A,
    /// with the pair's `material`, into `contact`.
    fn write_contact(
        &self,
        contact: &mut BlockContact,
        pair: (usize, usize),
        feature: usize,
        g: &crate::geometry::ContactGeometry<f64>,
        material: &crate::ContactMaterial,
    ) {
        let (a, b) = pair;
        let body_a = self.model.colliders[a].body;
        let body_b = self.model.colliders[b].body;
        let tangents = tangent_basis(self.model.dimension, &g.normal);
        let mut dir_store = [g.normal; 3];
        let nd = 1 + tangents.len().min(2);
        for (d, t) in dir_store[1..nd].iter_mut().zip(&tangents) {
            *d = *t;
        }
        let dirs = &dir_store[..nd];
        let jdot_v = point_jdot_v(self.model, self.kin, body_a, &g.point_a)
            - point_jdot_v(self.model, self.kin, body_b, &g.point_b);
        contact.collider_a = a;
        contact.collider_b = b;
        contact.body_a = body_a;
        contact.body_b = body_b;
        contact.feature = feature;
        contact.point = g.midpoint();
        contact.point_a = g.point_a;
        contact.point_b = g.point_b;
        contact.gap = g.gap;
        contact.normal = g.normal;
        self.rows_into(&mut contact.rows.a, body_a, &g.point_a, dirs, 1.0);
        self.rows_into(&mut contact.rows.b, body_b, &g.point_b, dirs, -1.0);
        contact.normal_row_dot_v = g.normal.dot(&jdot_v);
        if contact.tangent_rows_dot_v.len() != tangents.len() {
            contact.tangent_rows_dot_v = DVector::zeros(tangents.len());
        }
        for (x, t) in contact.tangent_rows_dot_v.iter_mut().zip(&tangents) {
            *x = t.dot(&jdot_v);
        }
        contact.tangents = tangents;
        contact.friction = material.friction;
        contact.stiffness = material.stiffness;
        contact.damping = material.damping;
        contact.restitution = material.restitution;
        contact.law = material.law;
    }
}

/// Storage for one more contact of a [`BlockSnapshot`] (every field is then written by
/// [`BodyRowBuilder::write_contact`]).
fn empty_block_contact() -> BlockContact {
    BlockContact {
        collider_a: 0,
        collider_b: 0,
        body_a: None,
        body_b: None,
        feature: 0,
        point: Vector3::zeros(),
        point_a: Vector3::zeros(),
        point_b: Vector3::zeros(),
        gap: 0.0,
        normal: Vector3::zeros(),
        tangents: Vec::new(),
        rows: BodyRows::default(),
        normal_row_dot_v: 0.0,
        tangent_rows_dot_v: DVector::zeros(0),
        friction: 0.0,
        stiffness: None,
        damping: None,
        restitution: None,
        law: ComplianceLaw::default(),
    }
}

/// Refuses contact `index` when its gap or rows are not finite (a state that overflows
/// floating point).
fn check_contact_finite(contact: &BlockContact, index: usize) -> Result<(), ModelError> {
    let bad = !contact.gap.is_finite()
        || !contact.rows.a.as_slice().iter().all(|x| x.is_finite())
        || !contact.rows.b.as_slice().iter().all(|x| x.is_finite());
    if bad {
        return Err(ModelError::InvalidValue {
            location: Location::field("q"),
            reason: format!("the state overflows floating point (contacts[{index}] is not finite)"),
        });
    }
    Ok(())
}
