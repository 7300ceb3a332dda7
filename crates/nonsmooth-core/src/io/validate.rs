//! Semantic checks of a [`Model`], shared by programmatically built models
//! ([`Model::validate`]) and model files (whose loader maps the model field paths used here
//! back to file paths and lines).

use std::collections::HashMap;

use nalgebra::{Isometry3, Matrix3, Unit, UnitQuaternion, Vector3};

use super::spans::FieldPath;
use crate::error::{Location, ModelError};
use crate::model::{
    Actuator, ActuatorKind, ConstraintKind, ContactMaterial, Dimension, Joint, JointKind,
    JointLimit, JointSpring, Model, Shape,
};

/// Tolerance on |‖q‖ − 1| for quaternions and axes that are accepted as unit as given.
pub const UNIT_TOL: f64 = 1e-9;

/// Maps a field path in model terms (e.g. `bodies[3].mass`) to a [`Location`].
pub type Locator<'a> = dyn Fn(&FieldPath) -> Location + 'a;

fn p(root: &str) -> FieldPath {
    FieldPath::root().key(root)
}

fn finite(loc: &Locator<'_>, path: &FieldPath, values: &[f64]) -> Result<(), ModelError> {
    for (i, &v) in values.iter().enumerate() {
        if !v.is_finite() {
            let path = if values.len() > 1 {
                path.idx(i)
            } else {
                path.clone()
            };
            return Err(ModelError::NonFinite {
                location: loc(&path),
                value: v,
            });
        }
    }
    Ok(())
}

fn invalid(loc: &Locator<'_>, path: &FieldPath, reason: impl Into<String>) -> ModelError {
    ModelError::InvalidValue {
        location: loc(path),
        reason: reason.into(),
    }
}

fn positive(loc: &Locator<'_>, path: &FieldPath, v: f64, what: &str) -> Result<(), ModelError> {
    finite(loc, path, &[v])?;
    if v > 0.0 {
        Ok(())
    } else {
        Err(invalid(loc, path, format!("{what} must be > 0, got {v}")))
    }
}

fn non_negative(loc: &Locator<'_>, path: &FieldPath, v: f64, what: &str) -> Result<(), ModelError> {
    finite(loc, path, &[v])?;
    if v >= 0.0 {
        Ok(())
    } else {
        Err(invalid(loc, path, format!("{what} must be ≥ 0, got {v}")))
    }
}

/// Checks that a quaternion / axis stored as unit really has unit norm.
fn unit_norm(loc: &Locator<'_>, path: &FieldPath, norm: f64) -> Result<(), ModelError> {
    if !norm.is_finite() || norm == 0.0 {
        return Err(ModelError::UnnormalizableQuaternion {
            location: loc(path),
            norm,
        });
    }
    if (norm - 1.0).abs() > UNIT_TOL {
        return Err(invalid(loc, path, format!("norm {norm} is not 1")));
    }
    Ok(())
}

fn pose(loc: &Locator<'_>, path: &FieldPath, iso: &Isometry3<f64>) -> Result<(), ModelError> {
    let t = iso.translation.vector;
    finite(loc, &path.key("xyz"), &[t.x, t.y, t.z])?;
    let q = iso.rotation.quaternion();
    finite(loc, &path.key("quat"), &[q.w, q.i, q.j, q.k])?;
    unit_norm(loc, &path.key("quat"), q.norm())
}

fn unit_vector(
    loc: &Locator<'_>,
    path: &FieldPath,
    v: &Unit<Vector3<f64>>,
) -> Result<(), ModelError> {
    finite(loc, path, &[v.x, v.y, v.z])?;
    let n = v.norm();
    if n == 0.0 || (n - 1.0).abs() > UNIT_TOL {
        return Err(invalid(
            loc,
            path,
            format!("must be a unit vector (norm {n})"),
        ));
    }
    Ok(())
}

/// Relative tolerance (of the largest principal moment) below which a principal moment
/// counts as zero, and by which the triangle inequality may be missed.
const INERTIA_TOL: f64 = 1e-9;

/// Checks a rotational inertia: finite, symmetric and positive semidefinite (no negative
/// principal moment). A singular inertia, or one whose principal moments violate the
/// triangle inequality, passes (see [`inertia_defect`]): the dynamics stay computable as
/// long as the mass matrix is positive definite, which [`validate_model`] checks.
pub fn check_inertia(
    loc: &Locator<'_>,
    path: &FieldPath,
    inertia: &Matrix3<f64>,
) -> Result<(), ModelError> {
    finite(loc, path, inertia.as_slice())?;
    let scale = inertia.abs().max().max(f64::MIN_POSITIVE);
    let asym = (inertia - inertia.transpose()).abs().max();
    let err = |reason: String| ModelError::InertiaNotPositiveDefinite {
        location: loc(path),
        reason,
    };
    if asym > 1e-9 * scale {
        return Err(err(format!("not symmetric (asymmetry {asym:e})")));
    }
    let eig = inertia.symmetric_eigenvalues();
    if eig.min() < -INERTIA_TOL * scale {
        return Err(err(format!(
            "eigenvalues ({}, {}, {}): a principal moment is negative",
            eig[0], eig[1], eig[2]
        )));
    }
    Ok(())
}

/// What keeps an inertia from being that of a rigid body with volume: zero, singular (a rod
/// or a point mass), a negative principal moment (refused by [`check_inertia`]), or
/// principal moments I₁ ≤ I₂ ≤ I₃ with
/// I₁ + I₂ < I₃, which no mass distribution has (Featherstone RBDA §2.13). `None` for a
/// physically realizable, positive definite inertia.
pub fn inertia_defect(inertia: &Matrix3<f64>) -> Option<String> {
    let mut eig: Vec<f64> = inertia.symmetric_eigenvalues().iter().copied().collect();
    eig.sort_by(f64::total_cmp);
    let (a, b, c) = (eig[0], eig[1], eig[2]);
    if c <= 0.0 {
        return Some("zero inertia".into());
    }
    if inertia_is_singular(inertia) {
        return Some(format!(
            "singular inertia (principal moments ({a}, {b}, {c}))"
        ));
    }
    if inertia_is_negative(inertia) {
        return Some(format!(
            "principal moments ({a}, {b}, {c}): one is negative"
        ));
    }
    if a + b < c - INERTIA_TOL * c {
        return Some(format!(
            "principal moments ({a}, {b}, {c}) violate the triangle inequality I₁ + I₂ ≥ I₃"
        ));
    }
    None
}

/// Whether `inertia` is zero or has a principal moment that vanishes (to [`INERTIA_TOL`] of
/// the largest): a point mass or a rod. A clearly negative moment is not "singular" (it is
/// refused by [`check_inertia`]).
pub fn inertia_is_singular(inertia: &Matrix3<f64>) -> bool {
    let eig = inertia.symmetric_eigenvalues();
    let c = eig.max();
    c <= 0.0 && eig.min() >= -f64::MIN_POSITIVE || c > 0.0 && eig.min().abs() <= INERTIA_TOL * c
}

/// Whether `inertia` has a principal moment below zero by more than [`INERTIA_TOL`] of its
/// largest entry (what [`check_inertia`] refuses).
pub fn inertia_is_negative(inertia: &Matrix3<f64>) -> bool {
    let scale = inertia.abs().max().max(f64::MIN_POSITIVE);
    inertia.symmetric_eigenvalues().min() < -INERTIA_TOL * scale
}

/// `inertia` with its principal moments set to their mean where they violate the triangle
/// inequality (MuJoCo's `<compiler balanceinertia="true">`); otherwise unchanged. Returns
/// whether it changed.
pub fn balance_inertia(inertia: &mut Matrix3<f64>) -> bool {
    let violates = inertia_defect(inertia).is_some_and(|d| d.contains("triangle"));
    if violates {
        *inertia = Matrix3::identity() * (inertia.trace() / 3.0);
    }
    violates
}

/// One warning per body whose inertia has an [`inertia_defect`] (massless joint frames
/// excepted), `noun` naming the body as the source format does (`body`, `link`).
/// `repair` is appended to triangle-inequality warnings (how the format repairs them).
pub fn inertia_warnings(model: &Model, noun: &str, repair: &str) -> Vec<String> {
    model
        .bodies
        .iter()
        .filter(|b| !(b.mass == 0.0 && b.inertia == Matrix3::zeros()))
        .filter_map(|b| {
            inertia_defect(&b.inertia).map(|d| {
                let hint = if d.contains("triangle") { repair } else { "" };
                format!(
                    "{noun} `{}`: {d}; kept as given (the mass matrix of the model is \
                     positive definite){hint}",
                    b.name
                )
            })
        })
        .collect()
}

/// The mass matrix at the initial configuration must be positive definite, or no
/// acceleration can be computed. An LDLᵀ factorization without pivoting finds the first
/// velocity coordinate whose motion carries no inertia beyond what the earlier coordinates
/// already account for: its joint and body are named in the error. The matrix is factored
/// per group of coordinates it couples (one kinematic tree each), so that a model of many
/// free bodies is checked in time linear in their number.
fn check_mass_matrix(model: &Model, loc: &Locator<'_>) -> Result<(), ModelError> {
    let nv = model.nv();
    if nv == 0 {
        return Ok(());
    }
    let m = crate::dynamics::crba::mass_matrix::<f64>(model, &model.initial_state.q);
    let largest = (0..nv).map(|k| m[(k, k)].abs()).fold(0.0, f64::max);
    let scale = largest.max(f64::MIN_POSITIVE);
    for group in coupled_groups(&m) {
        let g = group.len();
        let mut l = nalgebra::DMatrix::<f64>::zeros(g, g);
        let mut d = vec![0.0; g];
        for a in 0..g {
            let k = group[a];
            let dk = m[(k, k)] - (0..a).map(|b| l[(a, b)] * l[(a, b)] * d[b]).sum::<f64>();
            if dk.is_nan() || dk <= 1e-12 * scale {
                let ji = model
                    .joints
                    .iter()
                    .position(|j| (j.v_index..j.v_index + j.kind.nv()).contains(&k))
                    .unwrap_or(0);
                let joint = &model.joints[ji];
                let body = model
                    .bodies
                    .get(joint.child)
                    .map_or(String::new(), |b| b.name.clone());
                return Err(ModelError::SingularMassMatrix {
                    location: loc(&p("joints").idx(ji)),
                    joint: joint.name.clone(),
                    reason: format!(
                        "moves body `{body}` (with what hangs from it) with no mass or inertia \
                         along that motion (mass-matrix pivot {dk:e} at velocity coordinate {} \
                         of the joint, largest diagonal entry {largest:e})",
                        k - joint.v_index
                    ),
                });
            }
            d[a] = dk;
            for c in a + 1..g {
                let s: f64 = (0..a).map(|b| l[(c, b)] * l[(a, b)] * d[b]).sum();
                l[(c, a)] = (m[(group[c], k)] - s) / dk;
            }
        }
    }
    Ok(())
}

/// The groups of coordinates that a symmetric matrix couples (the connected components of
/// its pattern), each in increasing order, groups ordered by their first coordinate.
fn coupled_groups(m: &nalgebra::DMatrix<f64>) -> Vec<Vec<usize>> {
    let n = m.nrows();
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    for j in 0..n {
        for i in j + 1..n {
            if m[(i, j)] != 0.0 || m[(j, i)] != 0.0 {
                let (a, b) = (root(&mut parent, i), root(&mut parent, j));
                if a != b {
                    parent[a.max(b)] = a.min(b);
                }
            }
        }
    }
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut slot = vec![usize::MAX; n];
    for i in 0..n {
        let r = root(&mut parent, i);
        if slot[r] == usize::MAX {
            slot[r] = groups.len();
            groups.push(Vec::new());
        }
        groups[slot[r]].push(i);
    }
    groups
}

/// Checks a contact material at `path`.
pub fn check_material(
    loc: &Locator<'_>,
    path: &FieldPath,
    m: &ContactMaterial,
) -> Result<(), ModelError> {
    finite(loc, &path.key("friction"), &[m.friction])?;
    if m.friction < 0.0 {
        return Err(ModelError::NegativeFriction {
            location: loc(&path.key("friction")),
            value: m.friction,
        });
    }
    if let Some(e) = m.restitution {
        finite(loc, &path.key("restitution"), &[e])?;
        if !(0.0..=1.0).contains(&e) {
            return Err(invalid(
                loc,
                &path.key("restitution"),
                format!("restitution must lie in [0, 1], got {e}"),
            ));
        }
    }
    if let Some(k) = m.stiffness {
        positive(loc, &path.key("stiffness"), k, "stiffness")?;
    }
    if let Some(b) = m.damping {
        non_negative(loc, &path.key("damping"), b, "damping")?;
    }
    Ok(())
}

fn check_shape(
    loc: &Locator<'_>,
    path: &FieldPath,
    shape: &Shape,
    is_world: bool,
) -> Result<(), ModelError> {
    match shape {
        Shape::Sphere { radius } => positive(loc, &path.key("sphere"), *radius, "radius"),
        Shape::Box { half_extents } => {
            let pb = path.key("box");
            for i in 0..3 {
                positive(loc, &pb.idx(i), half_extents[i], "half extent")?;
            }
            Ok(())
        }
        Shape::Plane { normal } => unit_vector(loc, &path.key("plane"), normal),
        Shape::Point => Ok(()),
        Shape::Points { points } => {
            let pp = path.key("points");
            for (i, pt) in points.iter().enumerate() {
                finite(loc, &pp.idx(i), pt.as_slice())?;
            }
            Ok(())
        }
        Shape::HeightMap(h) => {
            let ph = path.key("heightmap");
            if !is_world {
                return Err(invalid(
                    loc,
                    &ph,
                    "height maps must be attached to the world",
                ));
            }
            finite(loc, &ph.key("x0"), &[h.x0])?;
            finite(loc, &ph.key("y0"), &[h.y0])?;
            positive(loc, &ph.key("dx"), h.dx, "grid spacing")?;
            positive(loc, &ph.key("dy"), h.dy, "grid spacing")?;
            let ph_h = ph.key("heights");
            let ncol = h.heights.first().map_or(0, |r| r.len());
            if ncol < 2 {
                return Err(invalid(
                    loc,
                    &ph_h,
                    "a height map needs at least one row of ≥ 2 samples",
                ));
            }
            for (iy, row) in h.heights.iter().enumerate() {
                if row.len() != ncol {
                    return Err(ModelError::DimensionMismatch {
                        location: loc(&ph_h.idx(iy)),
                        expected: ncol,
                        got: row.len(),
                    });
                }
                finite(loc, &ph_h.idx(iy), row)?;
            }
            Ok(())
        }
        Shape::Capsule {
            radius,
            half_length,
        }
        | Shape::Cylinder {
            radius,
            half_length,
        } => {
            let pk = path.key(shape.kind());
            positive(loc, &pk.key("radius"), *radius, "radius")?;
            positive(loc, &pk.key("half_length"), *half_length, "half length")
        }
        // Checked when built (ConvexHull::new, TriangleMesh::new): finite, non-degenerate.
        Shape::Convex(_) | Shape::Mesh(_) => Ok(()),
    }
}

fn unique_names<'n>(
    loc: &Locator<'_>,
    root: &str,
    kind: &'static str,
    names: impl Iterator<Item = &'n str>,
) -> Result<(), ModelError> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (i, name) in names.enumerate() {
        if name.is_empty() {
            return Err(invalid(loc, &p(root).idx(i).key("name"), "empty name"));
        }
        if seen.insert(name, i).is_some() {
            return Err(ModelError::DuplicateName {
                location: loc(&p(root).idx(i).key("name")),
                kind,
                name: name.to_string(),
            });
        }
    }
    Ok(())
}

fn body_ref(
    loc: &Locator<'_>,
    path: &FieldPath,
    body: Option<usize>,
    nbodies: usize,
) -> Result<(), ModelError> {
    match body {
        Some(b) if b >= nbodies => Err(ModelError::UnknownName {
            location: loc(path),
            kind: "body",
            name: format!("#{b}"),
        }),
        _ => Ok(()),
    }
}

/// Validates every part of `model`; field paths are in model terms and passed to `loc`.
/// The sections are checked in order (settings, bodies, joints, contact items,
/// constraints, actuators, initial state, mass matrix); the first error is returned.
pub fn validate_model(model: &Model, loc: &Locator<'_>) -> Result<(), ModelError> {
    check_settings(model, loc)?;
    check_bodies(model, loc)?;
    let (nq, nv) = check_joints(model, loc)?;
    check_colliders(model, loc)?;
    check_pairs(model, loc)?;
    check_constraints(model, loc)?;
    check_actuators(model, loc)?;
    check_initial_state(model, loc, nq, nv)?;
    check_mass_matrix(model, loc)
}

/// Gravity, contact margin and the simulation settings.
fn check_settings(model: &Model, loc: &Locator<'_>) -> Result<(), ModelError> {
    finite(loc, &p("gravity"), model.gravity.as_slice())?;
    non_negative(
        loc,
        &p("contact_margin"),
        model.contact_margin,
        "contact margin",
    )?;
    if let Some(dt) = model.simulation.dt {
        positive(loc, &p("simulation").key("dt"), dt, "step size")?;
    }
    if let Some(duration) = model.simulation.duration {
        non_negative(loc, &p("simulation").key("duration"), duration, "duration")?;
    }
    Ok(())
}

/// Body names, masses, centres of mass and inertias.
fn check_bodies(model: &Model, loc: &Locator<'_>) -> Result<(), ModelError> {
    unique_names(
        loc,
        "bodies",
        "body",
        model.bodies.iter().map(|b| b.name.as_str()),
    )?;
    for (i, body) in model.bodies.iter().enumerate() {
        let pb = p("bodies").idx(i);
        if body.name == "world" {
            return Err(invalid(loc, &pb.key("name"), "`world` is reserved"));
        }
        finite(loc, &pb.key("mass"), &[body.mass])?;
        // A massless body is a joint frame between two joints (MJCF bodies with several
        // joints import as a chain of them): allowed with zero inertia when another body
        // hangs from it, so that the mass matrix stays positive definite.
        let carries_a_body = model.joints.iter().any(|j| j.parent == Some(i));
        let joint_frame = body.mass == 0.0 && body.inertia == Matrix3::zeros() && carries_a_body;
        if body.mass <= 0.0 && !joint_frame {
            return Err(ModelError::NonPositiveMass {
                location: loc(&pb.key("mass")),
                value: body.mass,
            });
        }
        finite(loc, &pb.key("com"), body.com.as_slice())?;
        if !joint_frame {
            check_inertia(loc, &pb.key("inertia"), &body.inertia)?;
        }
    }
    Ok(())
}

/// The joints and the tree they form: one joint per body, in topological order, with
/// consecutive coordinate offsets. Returns the numbers of coordinates (nq, nv).
fn check_joints(model: &Model, loc: &Locator<'_>) -> Result<(usize, usize), ModelError> {
    let nb = model.bodies.len();
    if model.joints.len() != nb {
        return Err(ModelError::Topology {
            location: loc(&p("joints")),
            reason: format!(
                "{} joints for {} bodies (every body needs exactly one parent joint)",
                model.joints.len(),
                nb
            ),
        });
    }
    unique_names(
        loc,
        "joints",
        "joint",
        model.joints.iter().map(|j| j.name.as_str()),
    )?;
    let (mut iq, mut iv) = (0, 0);
    for (i, joint) in model.joints.iter().enumerate() {
        let pj = p("joints").idx(i);
        check_joint_place(loc, &pj, i, joint, (iq, iv))?;
        iq += joint.kind.nq();
        iv += joint.kind.nv();
        pose(loc, &pj.key("placement"), &joint.placement)?;
        unit_vector(loc, &pj.key("axis"), &joint.axis)?;
        non_negative(loc, &pj.key("damping"), joint.damping, "joint damping")?;
        non_negative(loc, &pj.key("armature"), joint.armature, "joint armature")?;
        if let Some(spring) = &joint.spring {
            check_spring(loc, &pj.key("spring"), joint.kind, spring)?;
        }
        if let Some(limit) = &joint.limit {
            check_limit(loc, &pj.key("limit"), joint.kind, limit)?;
        }
        if model.dimension == Dimension::Planar {
            check_planar_joint(loc, &pj, joint)?;
        }
    }
    Ok((iq, iv))
}

/// Joint `i` (at `pj`) in the tree: child body `i`, a parent before it, and its coordinates
/// starting at `offsets` (q, v).
fn check_joint_place(
    loc: &Locator<'_>,
    pj: &FieldPath,
    i: usize,
    joint: &Joint,
    offsets: (usize, usize),
) -> Result<(), ModelError> {
    let (iq, iv) = offsets;
    if joint.child != i {
        return Err(ModelError::Topology {
            location: loc(&pj.key("child")),
            reason: format!("joints[{i}] must have child body {i}, not {}", joint.child),
        });
    }
    if let Some(parent) = joint.parent {
        if parent >= i {
            return Err(ModelError::Topology {
                location: loc(&pj.key("parent")),
                reason: format!(
                    "parent body {parent} of body {i} must come before it (bodies in \
                     topological order; a cycle or a forward reference)"
                ),
            });
        }
    }
    if joint.q_index != iq || joint.v_index != iv {
        return Err(invalid(
            loc,
            pj,
            format!(
                "coordinate offsets (q {}, v {}) should be (q {iq}, v {iv}); call \
                 Model::assign_coordinate_offsets",
                joint.q_index, joint.v_index
            ),
        ));
    }
    Ok(())
}

/// A joint spring (at `ps`): on a revolute or prismatic joint, stiffness ≥ 0, finite rest.
fn check_spring(
    loc: &Locator<'_>,
    ps: &FieldPath,
    kind: JointKind,
    spring: &JointSpring,
) -> Result<(), ModelError> {
    if !matches!(kind, JointKind::Revolute | JointKind::Prismatic) {
        return Err(invalid(
            loc,
            ps,
            "springs apply to revolute and prismatic joints only",
        ));
    }
    non_negative(
        loc,
        &ps.key("stiffness"),
        spring.stiffness,
        "spring stiffness",
    )?;
    finite(loc, &ps.key("reference"), &[spring.reference])
}

/// A joint limit (at `pl`): on a revolute or prismatic joint, lower ≤ upper, and its
/// optional stiffness > 0 and damping ≥ 0.
fn check_limit(
    loc: &Locator<'_>,
    pl: &FieldPath,
    kind: JointKind,
    limit: &JointLimit,
) -> Result<(), ModelError> {
    if !matches!(kind, JointKind::Revolute | JointKind::Prismatic) {
        return Err(invalid(
            loc,
            pl,
            "limits apply to revolute and prismatic joints only",
        ));
    }
    finite(loc, &pl.key("lower"), &[limit.lower])?;
    finite(loc, &pl.key("upper"), &[limit.upper])?;
    if limit.lower > limit.upper {
        return Err(invalid(
            loc,
            &pl.key("upper"),
            format!("upper {} < lower {}", limit.upper, limit.lower),
        ));
    }
    if let Some(k) = limit.stiffness {
        positive(loc, &pl.key("stiffness"), k, "stiffness")?;
    }
    if let Some(b) = limit.damping {
        non_negative(loc, &pl.key("damping"), b, "damping")?;
    }
    Ok(())
}

/// Materials and colliders: names, body and material references, poses and shapes.
fn check_colliders(model: &Model, loc: &Locator<'_>) -> Result<(), ModelError> {
    unique_names(
        loc,
        "materials",
        "material",
        model.materials.iter().map(|m| m.name.as_str()),
    )?;
    for (i, m) in model.materials.iter().enumerate() {
        check_material(loc, &p("materials").idx(i), m)?;
    }
    unique_names(
        loc,
        "colliders",
        "collider",
        model.colliders.iter().map(|c| c.name.as_str()),
    )?;
    for (i, c) in model.colliders.iter().enumerate() {
        let pc = p("colliders").idx(i);
        body_ref(loc, &pc.key("body"), c.body, model.bodies.len())?;
        pose(loc, &pc.key("pose"), &c.pose)?;
        check_shape(loc, &pc.key("shape"), &c.shape, c.body.is_none())?;
        if c.material >= model.materials.len() {
            return Err(ModelError::UnknownName {
                location: loc(&pc.key("material")),
                kind: "material",
                name: format!("#{}", c.material),
            });
        }
    }
    Ok(())
}

/// Pair overrides (two different colliders, a valid material) and excluded pairs (two
/// colliders, smaller index first).
fn check_pairs(model: &Model, loc: &Locator<'_>) -> Result<(), ModelError> {
    let nc = model.colliders.len();
    for (i, o) in model.pair_overrides.iter().enumerate() {
        let po = p("pair_overrides").idx(i);
        for (key, c) in [("a", o.collider_a), ("b", o.collider_b)] {
            if c >= nc {
                return Err(ModelError::UnknownName {
                    location: loc(&po.key(key)),
                    kind: "collider",
                    name: format!("#{c}"),
                });
            }
        }
        if o.collider_a == o.collider_b {
            return Err(invalid(
                loc,
                &po.key("b"),
                "a pair needs two different colliders",
            ));
        }
        check_material(loc, &po.key("material"), &o.material)?;
    }
    for (i, &(a, b)) in model.excluded_pairs.iter().enumerate() {
        let pe = p("excluded_pairs").idx(i);
        if a >= nc || b >= nc {
            return Err(ModelError::UnknownName {
                location: loc(&pe),
                kind: "collider",
                name: format!("#{}", a.max(b)),
            });
        }
        if a >= b {
            return Err(invalid(
                loc,
                &pe,
                format!("excluded pair ({a}, {b}) must list two colliders, smaller index first"),
            ));
        }
    }
    Ok(())
}

/// Bilateral constraints: names, two different bodies, finite anchors, length ≥ 0, and
/// optional stiffness > 0 and damping ≥ 0.
fn check_constraints(model: &Model, loc: &Locator<'_>) -> Result<(), ModelError> {
    let nb = model.bodies.len();
    unique_names(
        loc,
        "constraints",
        "constraint",
        model.constraints.iter().map(|c| c.name.as_str()),
    )?;
    for (i, c) in model.constraints.iter().enumerate() {
        let pc = p("constraints").idx(i);
        let (ba, aa, bb, ab) = match &c.kind {
            ConstraintKind::Point {
                body_a,
                anchor_a,
                body_b,
                anchor_b,
            } => (body_a, anchor_a, body_b, anchor_b),
            ConstraintKind::Distance {
                body_a,
                anchor_a,
                body_b,
                anchor_b,
                length,
            } => {
                non_negative(loc, &pc.key("length"), *length, "length")?;
                (body_a, anchor_a, body_b, anchor_b)
            }
        };
        body_ref(loc, &pc.key("body_a"), *ba, nb)?;
        body_ref(loc, &pc.key("body_b"), *bb, nb)?;
        if ba == bb {
            return Err(invalid(
                loc,
                &pc.key("body_b"),
                "a constraint must connect two different bodies",
            ));
        }
        finite(loc, &pc.key("anchor_a"), aa.as_slice())?;
        finite(loc, &pc.key("anchor_b"), ab.as_slice())?;
        if let Some(k) = c.stiffness {
            positive(loc, &pc.key("stiffness"), k, "stiffness")?;
        }
        if let Some(b) = c.damping {
            non_negative(loc, &pc.key("damping"), b, "damping")?;
        }
    }
    Ok(())
}

/// Actuators: names, then each one ([`check_actuator`]).
fn check_actuators(model: &Model, loc: &Locator<'_>) -> Result<(), ModelError> {
    unique_names(
        loc,
        "actuators",
        "actuator",
        model.actuators.iter().map(|a| a.name.as_str()),
    )?;
    for (i, a) in model.actuators.iter().enumerate() {
        check_actuator(model, loc, &p("actuators").idx(i), a)?;
    }
    Ok(())
}

/// An actuator (at `pa`): an existing joint and coordinate, a finite gear, position gains
/// (on a revolute or prismatic joint, nonzero gear) and an ordered effort range.
fn check_actuator(
    model: &Model,
    loc: &Locator<'_>,
    pa: &FieldPath,
    a: &Actuator,
) -> Result<(), ModelError> {
    let Some(joint) = model.joints.get(a.joint) else {
        return Err(ModelError::UnknownName {
            location: loc(&pa.key("joint")),
            kind: "joint",
            name: format!("#{}", a.joint),
        });
    };
    if a.dof >= joint.kind.nv() {
        return Err(invalid(
            loc,
            &pa.key("dof"),
            format!(
                "joint `{}` has {} velocity coordinates, dof {} is out of range",
                joint.name,
                joint.kind.nv(),
                a.dof
            ),
        ));
    }
    finite(loc, &pa.key("gear"), &[a.gear])?;
    if let ActuatorKind::Position { kp, kv } = a.kind {
        positive(loc, &pa.key("kp"), kp, "kp")?;
        non_negative(loc, &pa.key("kv"), kv, "kv")?;
        if !matches!(joint.kind, JointKind::Revolute | JointKind::Prismatic) {
            return Err(invalid(
                loc,
                &pa.key("kind"),
                format!(
                    "a `position` actuator needs a revolute or prismatic joint; `{}` is {:?}",
                    joint.name, joint.kind
                ),
            ));
        }
        if a.gear == 0.0 {
            return Err(invalid(
                loc,
                &pa.key("gear"),
                "a `position` actuator needs a nonzero gear",
            ));
        }
    }
    if let Some((lo, hi)) = a.effort_limit {
        finite(loc, &pa.key("effort_limit"), &[lo, hi])?;
        if lo > hi {
            return Err(invalid(
                loc,
                &pa.key("effort_limit"),
                format!("min {lo} > max {hi}"),
            ));
        }
    }
    Ok(())
}

/// The initial state: finite t, q of length `nq` and v of length `nv` with finite entries,
/// unit quaternions.
fn check_initial_state(
    model: &Model,
    loc: &Locator<'_>,
    nq: usize,
    nv: usize,
) -> Result<(), ModelError> {
    let s = &model.initial_state;
    let ps = p("initial_state");
    finite(loc, &ps.key("t"), &[s.t])?;
    if s.q.len() != nq {
        return Err(ModelError::DimensionMismatch {
            location: loc(&ps.key("q")),
            expected: nq,
            got: s.q.len(),
        });
    }
    if s.v.len() != nv {
        return Err(ModelError::DimensionMismatch {
            location: loc(&ps.key("v")),
            expected: nv,
            got: s.v.len(),
        });
    }
    for (k, &x) in s.q.iter().enumerate() {
        finite(loc, &ps.key("q").idx(k), &[x])?;
    }
    for (k, &x) in s.v.iter().enumerate() {
        finite(loc, &ps.key("v").idx(k), &[x])?;
    }
    for joint in &model.joints {
        if let Some(offset) = joint.kind.quaternion_offset() {
            let qi = joint.q_index + offset;
            let norm = s.q.rows(qi, 4).norm();
            unit_norm(loc, &ps.key("q").idx(qi), norm)?;
        }
    }
    Ok(())
}

/// Planar models: revolute axes along ±z, prismatic axes in the x–y plane, joint frames
/// rotated about z only, no floating joints.
fn check_planar_joint(
    loc: &Locator<'_>,
    pj: &FieldPath,
    joint: &crate::model::Joint,
) -> Result<(), ModelError> {
    const TOL: f64 = 1e-9;
    match joint.kind {
        JointKind::Floating | JointKind::Ball => {
            return Err(invalid(
                loc,
                &pj.key("kind"),
                "floating and ball joints are not allowed in planar models (use planar or \
                 revolute)",
            ))
        }
        JointKind::Revolute if joint.axis.x.abs() > TOL || joint.axis.y.abs() > TOL => {
            return Err(invalid(
                loc,
                &pj.key("axis"),
                "revolute axes of planar models must be ±z",
            ))
        }
        JointKind::Prismatic if joint.axis.z.abs() > TOL => {
            return Err(invalid(
                loc,
                &pj.key("axis"),
                "prismatic axes of planar models must lie in the x–y plane",
            ))
        }
        _ => {}
    }
    let r: &UnitQuaternion<f64> = &joint.placement.rotation;
    if r.i.abs() > TOL || r.j.abs() > TOL {
        return Err(invalid(
            loc,
            &pj.key("placement"),
            "joint frames of planar models may only rotate about z",
        ));
    }
    if joint.placement.translation.vector.z.abs() > TOL {
        return Err(invalid(
            loc,
            &pj.key("placement"),
            "joint frames of planar models must lie in the plane z = 0",
        ));
    }
    Ok(())
}
