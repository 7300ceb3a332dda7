//! `nonsmooth inspect MODEL`: load, validate and describe a model: its bodies (mass, centre
//! of mass, inertia), joints (kind, parent, axis, limits, damping, springs), colliders with
//! their shapes and materials, contact materials, pair overrides and excluded pairs,
//! constraints, actuators, the initial state by coordinate name, the simulation settings, the
//! default stepper with its reason and the warnings a simulation would print. `--json`
//! prints the same as one JSON document.

use crate::CliError;
use clap::Args;
use nalgebra::{Matrix3, Vector3};
use nonsmooth_core::{
    ActuatorKind, ComplianceLaw, ConstraintKind, ContactMaterial, JointKind, Model, Shape,
};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct InspectArgs {
    /// Model file (.toml, .urdf or MJCF .xml).
    pub model: PathBuf,
    /// --quiet (only validate: the exit code tells) / --json (the structure as JSON).
    #[command(flatten)]
    pub output: crate::progress::OutputFlags,
}

/// The step size the default stepper is chosen at: the model's `[simulation] dt`, else
/// `nonsmooth simulate`'s default.
const DEFAULT_DT: f64 = 1e-3;

/// The stepper `nonsmooth simulate MODEL` runs without `--stepper`, and the warnings it
/// prints before running (the import's, the geometry's, and what that stepper leaves out).
struct Defaults {
    dt: f64,
    choice: nonsmooth_sim::StepperChoice,
    warnings: Vec<String>,
}

fn defaults(model: &Model) -> Defaults {
    let dt = model.simulation.dt.unwrap_or(DEFAULT_DT);
    let choice = nonsmooth_sim::choose_stepper(model, None, dt);
    let warnings = match nonsmooth_sim::stepper_by_name(&choice.name) {
        Ok(stepper) => nonsmooth_sim::model_warnings(model, stepper.as_ref()),
        Err(e) => {
            let mut w = model.import_warnings.clone();
            w.push(format!("stepper `{}`: {e}", choice.name));
            w
        }
    };
    Defaults {
        dt,
        choice,
        warnings,
    }
}

pub fn run(args: &InspectArgs) -> Result<ExitCode, CliError> {
    let model = Model::from_file(&args.model)?;
    if args.output.quiet && !args.output.json {
        return Ok(ExitCode::SUCCESS);
    }
    let defaults = defaults(&model);
    if args.output.json {
        outln!("{}", to_json(&model, &defaults));
    } else {
        for line in describe(&model, &defaults) {
            outln!("{line}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A number as a person reads it: at most 6 significant digits, no trailing zeros, `0` for
/// a negative zero.
fn num(x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    if !x.is_finite() {
        return format!("{x}");
    }
    let a = x.abs();
    let text = if (1e-4..1e7).contains(&a) {
        let decimals = (5 - a.log10().floor() as i32).max(0) as usize;
        let t = format!("{x:.decimals$}");
        if t.contains('.') {
            t.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            t
        }
    } else {
        let t = format!("{x:.5e}");
        match t.split_once('e') {
            Some((mantissa, exponent)) if mantissa.contains('.') => format!(
                "{}e{exponent}",
                mantissa.trim_end_matches('0').trim_end_matches('.')
            ),
            _ => t,
        }
    };
    if text == "-0" {
        "0".into()
    } else {
        text
    }
}

fn vec3(v: &Vector3<f64>) -> String {
    format!("({}, {}, {})", num(v.x), num(v.y), num(v.z))
}

/// The inertia about the centre of mass: its diagonal when it is diagonal in body axes, else
/// its principal moments (ascending); `true` when diagonal.
fn inertia_moments(i: &Matrix3<f64>) -> ([f64; 3], bool) {
    let scale = i.diagonal().amax().max(f64::MIN_POSITIVE);
    let off = [i[(0, 1)], i[(0, 2)], i[(1, 2)]]
        .iter()
        .fold(0.0_f64, |m, x| m.max(x.abs()));
    if off <= 1e-12 * scale {
        return ([i[(0, 0)], i[(1, 1)], i[(2, 2)]], true);
    }
    let sym = 0.5 * (i + i.transpose());
    let mut e: Vec<f64> = sym.symmetric_eigenvalues().iter().copied().collect();
    e.sort_by(f64::total_cmp);
    ([e[0], e[1], e[2]], false)
}

fn body_name(model: &Model, b: Option<usize>) -> String {
    b.and_then(|b| model.bodies.get(b))
        .map_or_else(|| "world".to_string(), |b| b.name.clone())
}

fn kind_name(kind: JointKind) -> &'static str {
    match kind {
        JointKind::Revolute => "revolute",
        JointKind::Prismatic => "prismatic",
        JointKind::Fixed => "fixed",
        JointKind::Floating => "floating",
        JointKind::Planar => "planar",
        JointKind::Ball => "ball",
    }
}

fn law_name(law: ComplianceLaw) -> &'static str {
    match law {
        ComplianceLaw::Linear => "linear",
        ComplianceLaw::Hertz => "hertz",
        ComplianceLaw::HuntCrossley => "hunt-crossley",
    }
}

/// A shape in words with its dimensions (m).
fn shape_text(shape: &Shape) -> String {
    match shape {
        Shape::Sphere { radius } => format!("sphere r = {} m", num(*radius)),
        Shape::Box { half_extents } => format!("box half-extents {} m", vec3(half_extents)),
        Shape::Plane { normal } => format!("plane normal {}", vec3(normal)),
        Shape::Point => "point".into(),
        Shape::Points { points } => format!("{} points", points.len()),
        Shape::HeightMap(h) => format!(
            "heightmap {} × {} cells of {} × {} m from ({}, {})",
            h.heights.first().map_or(0, |r| r.len()),
            h.heights.len(),
            num(h.dx),
            num(h.dy),
            num(h.x0),
            num(h.y0)
        ),
        Shape::Capsule {
            radius,
            half_length,
        } => format!(
            "capsule r = {} m, half-length {} m",
            num(*radius),
            num(*half_length)
        ),
        Shape::Cylinder {
            radius,
            half_length,
        } => format!(
            "cylinder r = {} m, half-length {} m",
            num(*radius),
            num(*half_length)
        ),
        Shape::Convex(hull) => format!("convex hull of {} points", hull.points().len()),
        Shape::Mesh(mesh) => format!(
            "mesh of {} triangles{}",
            mesh.triangles().len(),
            mesh.source()
                .map(|s| format!(" from {}", s.file))
                .unwrap_or_default()
        ),
    }
}

fn shape_json(shape: &Shape) -> Value {
    let kind = shape.kind();
    match shape {
        Shape::Sphere { radius } => json!({ "kind": kind, "radius": radius }),
        Shape::Box { half_extents } => {
            json!({ "kind": kind, "half_extents": half_extents.as_slice() })
        }
        Shape::Plane { normal } => json!({ "kind": kind, "normal": normal.as_slice() }),
        Shape::Point => json!({ "kind": kind }),
        Shape::Points { points } => json!({
            "kind": kind,
            "points": points.iter().map(|p| p.as_slice().to_vec()).collect::<Vec<_>>(),
        }),
        Shape::HeightMap(h) => json!({
            "kind": kind,
            "x0": h.x0, "y0": h.y0, "dx": h.dx, "dy": h.dy,
            "rows": h.heights.len(),
            "columns": h.heights.first().map_or(0, |r| r.len()),
        }),
        Shape::Capsule {
            radius,
            half_length,
        }
        | Shape::Cylinder {
            radius,
            half_length,
        } => json!({ "kind": kind, "radius": radius, "half_length": half_length }),
        Shape::Convex(hull) => json!({ "kind": kind, "points": hull.points().len() }),
        Shape::Mesh(mesh) => json!({
            "kind": kind,
            "vertices": mesh.vertices().len(),
            "triangles": mesh.triangles().len(),
            "file": mesh.source().map(|s| s.file.clone()),
            "scale": mesh.source().map(|s| s.scale.as_slice().to_vec()),
        }),
    }
}

/// A material's contact law in words: friction, restitution, rigid or compliant (K, B, law).
fn material_text(m: &ContactMaterial) -> String {
    let mut parts = vec![format!("μ = {}", num(m.friction))];
    if let Some(e) = m.restitution {
        parts.push(format!("restitution {}", num(e)));
    }
    match m.stiffness {
        Some(k) => parts.push(format!(
            "compliant: K = {}, B = {}, {} law",
            num(k),
            num(m.damping.unwrap_or(0.0)),
            law_name(m.law)
        )),
        None => parts.push("rigid".into()),
    }
    parts.join(", ")
}

fn material_json(m: &ContactMaterial) -> Value {
    json!({
        "name": m.name,
        "friction": m.friction,
        "restitution": m.restitution,
        "stiffness": m.stiffness,
        "damping": m.damping,
        "law": law_name(m.law),
        "compliant": m.stiffness.is_some(),
    })
}

fn material_name(model: &Model, i: usize) -> String {
    model
        .materials
        .get(i)
        .map_or_else(|| format!("#{i}"), |m| m.name.clone())
}

fn collider_name(model: &Model, i: usize) -> String {
    model
        .colliders
        .get(i)
        .map_or_else(|| format!("#{i}"), |c| c.name.clone())
}

fn joint_name(model: &Model, j: usize) -> String {
    model
        .joints
        .get(j)
        .map_or_else(|| format!("#{j}"), |j| j.name.clone())
}

/// The name of actuator `a`'s driven coordinate (`Model::v_names`).
fn actuated_coordinate(model: &Model, v_names: &[String], joint: usize, dof: usize) -> String {
    model
        .joints
        .get(joint)
        .and_then(|j| v_names.get(j.v_index + dof))
        .cloned()
        .unwrap_or_default()
}

/// The joint's details after its kind: axis, limit, damping, spring, armature.
fn joint_details(j: &nonsmooth_core::Joint) -> Vec<String> {
    let mut d = Vec::new();
    let unit = match j.kind {
        JointKind::Prismatic => "m",
        _ => "rad",
    };
    if matches!(j.kind, JointKind::Revolute | JointKind::Prismatic) {
        d.push(format!("axis {}", vec3(&j.axis)));
    }
    if let Some(l) = &j.limit {
        let mut s = format!("limit [{}, {}] {unit}", num(l.lower), num(l.upper));
        match (l.stiffness, l.damping) {
            (Some(k), b) => s.push_str(&format!(
                " (compliant: K = {}, B = {})",
                num(k),
                num(b.unwrap_or(0.0))
            )),
            (None, _) => s.push_str(" (rigid)"),
        }
        d.push(s);
    }
    if j.damping != 0.0 {
        d.push(format!("damping {}", num(j.damping)));
    }
    if let Some(s) = &j.spring {
        d.push(format!(
            "spring k = {} about {} {unit}",
            num(s.stiffness),
            num(s.reference)
        ));
    }
    if j.armature != 0.0 {
        d.push(format!("armature {}", num(j.armature)));
    }
    let t = j.placement.translation.vector;
    if t.norm() > 0.0 {
        d.push(format!("at {} m", vec3(&t)));
    }
    d
}

/// The human-readable description, one line each.
fn describe(model: &Model, defaults: &Defaults) -> Vec<String> {
    let mut out = Vec::new();
    out.push(format!(
        "model `{}` ({:?}): {} bodies, nq = {}, nv = {}, nu = {}, {} colliders, {} constraints",
        model.name,
        model.dimension,
        model.bodies.len(),
        model.nq(),
        model.nv(),
        model.nu(),
        model.colliders.len(),
        model.constraints.len()
    ));
    out.push(format!(
        "gravity {} m/s², contact margin {} m",
        vec3(&model.gravity),
        num(model.contact_margin)
    ));
    let s = &model.simulation;
    if s.stepper.is_some() || s.dt.is_some() || s.duration.is_some() {
        let mut settings = Vec::new();
        if let Some(name) = &s.stepper {
            settings.push(format!("stepper {name}"));
        }
        if let Some(dt) = s.dt {
            settings.push(format!("dt = {} s", num(dt)));
        }
        if let Some(d) = s.duration {
            settings.push(format!("duration {} s", num(d)));
        }
        out.push(format!("simulation settings: {}", settings.join(", ")));
    }
    out.push(format!(
        "default stepper: {} at dt = {} s ({})",
        defaults.choice.describe(),
        num(defaults.dt),
        if s.dt.is_some() {
            "the model file's step"
        } else {
            "`nonsmooth simulate`'s default step"
        }
    ));

    out.push(format!("bodies ({}):", model.bodies.len()));
    for (joint, body) in model.joints.iter().zip(&model.bodies) {
        let (moments, diagonal) = inertia_moments(&body.inertia);
        let moments = format!(
            "({}, {}, {}) kg·m²",
            num(moments[0]),
            num(moments[1]),
            num(moments[2])
        );
        let inertia = if diagonal {
            format!("I = diag{moments}")
        } else {
            format!("principal moments of I {moments}")
        };
        let com = if body.com.norm() > 0.0 {
            format!(", com {} m", vec3(&body.com))
        } else {
            String::new()
        };
        out.push(format!(
            "  body `{}` (m = {} kg, {inertia}{com}) ← {:?} joint `{}` ← `{}`",
            body.name,
            num(body.mass),
            joint.kind,
            joint.name,
            body_name(model, joint.parent)
        ));
    }

    let q_names = model.q_names();
    let v_names = model.v_names();
    out.push(format!("joints ({}):", model.joints.len()));
    for j in &model.joints {
        let coords = q_names
            .get(j.q_index..j.q_index + j.kind.nq())
            .unwrap_or(&[]);
        let mut line = format!(
            "  joint `{}` {} `{}` → `{}`",
            j.name,
            kind_name(j.kind),
            body_name(model, j.parent),
            body_name(model, Some(j.child))
        );
        let details = joint_details(j);
        if !details.is_empty() {
            line.push_str(&format!(", {}", details.join(", ")));
        }
        if !coords.is_empty() {
            line.push_str(&format!("; q: {}", coords.join(", ")));
        }
        out.push(line);
    }

    out.push(format!("colliders ({}):", model.colliders.len()));
    for c in &model.colliders {
        let mut line = format!(
            "  collider `{}` on `{}`: {}, material `{}`",
            c.name,
            body_name(model, c.body),
            shape_text(&c.shape),
            material_name(model, c.material)
        );
        let t = c.pose.translation.vector;
        if t.norm() > 0.0 {
            line.push_str(&format!(", at {} m", vec3(&t)));
        }
        if c.filter != nonsmooth_core::CollisionFilter::default() {
            line.push_str(&format!(
                ", group {:#x} mask {:#x}",
                c.filter.group, c.filter.mask
            ));
        }
        out.push(line);
    }

    out.push(format!("materials ({}):", model.materials.len()));
    for (i, m) in model.materials.iter().enumerate() {
        let used = model.colliders.iter().filter(|c| c.material == i).count();
        out.push(format!(
            "  material `{}`: {} ({used} collider{})",
            m.name,
            material_text(m),
            if used == 1 { "" } else { "s" }
        ));
    }
    if !model.pair_overrides.is_empty() {
        out.push(format!("pair materials ({}):", model.pair_overrides.len()));
        for o in &model.pair_overrides {
            out.push(format!(
                "  `{}` with `{}`: {}",
                collider_name(model, o.collider_a),
                collider_name(model, o.collider_b),
                material_text(&o.material)
            ));
        }
    }
    if !model.excluded_pairs.is_empty() {
        let pairs: Vec<String> = model
            .excluded_pairs
            .iter()
            .map(|(a, b)| {
                format!(
                    "`{}`–`{}`",
                    collider_name(model, *a),
                    collider_name(model, *b)
                )
            })
            .collect();
        out.push(format!(
            "excluded pairs ({}): {}",
            pairs.len(),
            pairs.join(", ")
        ));
    }

    if !model.constraints.is_empty() {
        out.push(format!("constraints ({}):", model.constraints.len()));
        for c in &model.constraints {
            let what = match &c.kind {
                ConstraintKind::Point { body_a, body_b, .. } => format!(
                    "point `{}` = `{}`",
                    body_name(model, *body_a),
                    body_name(model, *body_b)
                ),
                ConstraintKind::Distance {
                    body_a,
                    body_b,
                    length,
                    ..
                } => format!(
                    "distance `{}`–`{}` = {} m",
                    body_name(model, *body_a),
                    body_name(model, *body_b),
                    num(*length)
                ),
            };
            let soft = match c.stiffness {
                Some(k) => format!(
                    " (soft: K = {}, B = {})",
                    num(k),
                    num(c.damping.unwrap_or(0.0))
                ),
                None => String::new(),
            };
            out.push(format!("  constraint `{}`: {what}{soft}", c.name));
        }
    }

    out.push(format!("actuators ({}):", model.actuators.len()));
    for a in &model.actuators {
        let mut line = format!(
            "  actuator `{}` on joint `{}` ({}), gear {}",
            a.name,
            joint_name(model, a.joint),
            actuated_coordinate(model, &v_names, a.joint, a.dof),
            num(a.gear)
        );
        if let Some((lo, hi)) = a.effort_limit {
            line.push_str(&format!(", effort [{}, {}]", num(lo), num(hi)));
        }
        match a.kind {
            ActuatorKind::Motor => line.push_str(", motor"),
            ActuatorKind::Position { kp, kv } => line.push_str(&format!(
                ", position servo kp = {}, kv = {}",
                num(kp),
                num(kv)
            )),
        }
        out.push(line);
    }

    let state = &model.initial_state;
    out.push(format!("initial state (t = {} s):", num(state.t)));
    let pairs = |names: &[String], values: &[f64]| -> String {
        names
            .iter()
            .zip(values)
            .map(|(n, x)| format!("{n} = {}", num(*x)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    out.push(format!("  q: {}", pairs(&q_names, state.q.as_slice())));
    out.push(format!("  v: {}", pairs(&v_names, state.v.as_slice())));

    out.push(format!(
        "warnings ({}, as `nonsmooth simulate` with the default stepper says them):",
        defaults.warnings.len()
    ));
    for w in &defaults.warnings {
        out.push(format!("  - {w}"));
    }
    out
}

/// The JSON document of `--json`: the keys of earlier versions (`name`, `dimension`, `nq`,
/// `nv`, `nu`, `q_names`, `v_names`, `colliders` and `constraints` as counts, `actuators`
/// as names, `bodies`), and the details beside them.
fn to_json(model: &Model, defaults: &Defaults) -> Value {
    let q_names = model.q_names();
    let v_names = model.v_names();
    let bodies: Vec<Value> = model
        .joints
        .iter()
        .zip(&model.bodies)
        .map(|(joint, body)| {
            let (moments, diagonal) = inertia_moments(&body.inertia);
            let rows: Vec<Vec<f64>> = (0..3)
                .map(|r| (0..3).map(|c| body.inertia[(r, c)]).collect())
                .collect();
            json!({
                "name": body.name,
                "mass": body.mass,
                "joint": joint.name,
                "joint_kind": format!("{:?}", joint.kind),
                "parent": joint.parent.map(|p| body_name(model, Some(p))),
                "com": body.com.as_slice(),
                "inertia": rows,
                "inertia_diagonal": diagonal,
                "principal_inertia": if diagonal {
                    let mut m = moments;
                    m.sort_by(f64::total_cmp);
                    m
                } else {
                    moments
                },
            })
        })
        .collect();
    let joints: Vec<Value> = model
        .joints
        .iter()
        .map(|j| {
            json!({
                "name": j.name,
                "kind": kind_name(j.kind),
                "parent": body_name(model, j.parent),
                "child": body_name(model, Some(j.child)),
                "axis": matches!(j.kind, JointKind::Revolute | JointKind::Prismatic)
                    .then(|| j.axis.as_slice().to_vec()),
                "placement": {
                    "xyz": j.placement.translation.vector.as_slice(),
                    "quaternion_wxyz": [
                        j.placement.rotation.w,
                        j.placement.rotation.i,
                        j.placement.rotation.j,
                        j.placement.rotation.k,
                    ],
                },
                "limit": j.limit.map(|l| json!({
                    "lower": l.lower,
                    "upper": l.upper,
                    "stiffness": l.stiffness,
                    "damping": l.damping,
                })),
                "damping": j.damping,
                "spring": j.spring.map(|s| json!({
                    "stiffness": s.stiffness,
                    "reference": s.reference,
                })),
                "armature": j.armature,
                "q_names": q_names.get(j.q_index..j.q_index + j.kind.nq()).unwrap_or(&[]),
                "v_names": v_names.get(j.v_index..j.v_index + j.kind.nv()).unwrap_or(&[]),
            })
        })
        .collect();
    let colliders: Vec<Value> = model
        .colliders
        .iter()
        .map(|c| {
            json!({
                "name": c.name,
                "body": body_name(model, c.body),
                "shape": shape_json(&c.shape),
                "material": material_name(model, c.material),
                "xyz": c.pose.translation.vector.as_slice(),
                "group": c.filter.group,
                "mask": c.filter.mask,
            })
        })
        .collect();
    let actuators: Vec<Value> = model
        .actuators
        .iter()
        .map(|a| {
            let (kind, kp, kv) = match a.kind {
                ActuatorKind::Motor => ("motor", None, None),
                ActuatorKind::Position { kp, kv } => ("position", Some(kp), Some(kv)),
            };
            json!({
                "name": a.name,
                "joint": joint_name(model, a.joint),
                "dof": a.dof,
                "coordinate": actuated_coordinate(model, &v_names, a.joint, a.dof),
                "gear": a.gear,
                "effort_limit": a.effort_limit.map(|(lo, hi)| [lo, hi]),
                "kind": kind,
                "kp": kp,
                "kv": kv,
            })
        })
        .collect();
    let constraints: Vec<Value> = model
        .constraints
        .iter()
        .map(|c| {
            let kind = match &c.kind {
                ConstraintKind::Point {
                    body_a,
                    anchor_a,
                    body_b,
                    anchor_b,
                } => json!({
                    "kind": "point",
                    "body_a": body_name(model, *body_a),
                    "anchor_a": anchor_a.as_slice(),
                    "body_b": body_name(model, *body_b),
                    "anchor_b": anchor_b.as_slice(),
                }),
                ConstraintKind::Distance {
                    body_a,
                    anchor_a,
                    body_b,
                    anchor_b,
                    length,
                } => json!({
                    "kind": "distance",
                    "body_a": body_name(model, *body_a),
                    "anchor_a": anchor_a.as_slice(),
                    "body_b": body_name(model, *body_b),
                    "anchor_b": anchor_b.as_slice(),
                    "length": length,
                }),
            };
            json!({
                "name": c.name,
                "geometry": kind,
                "stiffness": c.stiffness,
                "damping": c.damping,
            })
        })
        .collect();
    let named = |names: &[String], values: &[f64]| -> Vec<Value> {
        names
            .iter()
            .zip(values)
            .map(|(n, x)| json!({ "name": n, "value": x }))
            .collect()
    };
    let state = &model.initial_state;
    json!({
        "name": model.name,
        "dimension": format!("{:?}", model.dimension),
        "nq": model.nq(),
        "nv": model.nv(),
        "nu": model.nu(),
        "q_names": q_names,
        "v_names": v_names,
        "colliders": model.colliders.len(),
        "constraints": model.constraints.len(),
        "actuators": model.actuators.iter().map(|a| a.name.clone()).collect::<Vec<_>>(),
        "bodies": bodies,
        "gravity": model.gravity.as_slice(),
        "contact_margin": model.contact_margin,
        "joints": joints,
        "collider_details": colliders,
        "materials": model.materials.iter().map(material_json).collect::<Vec<_>>(),
        "pair_materials": model.pair_overrides.iter().map(|o| json!({
            "collider_a": collider_name(model, o.collider_a),
            "collider_b": collider_name(model, o.collider_b),
            "material": material_json(&o.material),
        })).collect::<Vec<_>>(),
        "excluded_pairs": model.excluded_pairs.iter().map(|(a, b)| {
            [collider_name(model, *a), collider_name(model, *b)]
        }).collect::<Vec<_>>(),
        "constraint_details": constraints,
        "actuator_details": actuators,
        "initial_state": {
            "t": state.t,
            "q": named(&q_names, state.q.as_slice()),
            "v": named(&v_names, state.v.as_slice()),
        },
        "simulation": {
            "stepper": model.simulation.stepper,
            "dt": model.simulation.dt,
            "duration": model.simulation.duration,
        },
        "default_stepper": {
            "name": defaults.choice.name,
            "source": defaults.choice.source,
            "reason": defaults.choice.reason,
            "dt": defaults.dt,
            "description": defaults.choice.describe(),
        },
        "import_warnings": model.import_warnings,
        "warnings": defaults.warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_short_and_never_minus_zero() {
        assert_eq!(num(-0.0), "0");
        assert_eq!(num(0.30000000000000004), "0.3");
        assert_eq!(num(9.81), "9.81");
        assert_eq!(num(-9.81), "-9.81");
        assert_eq!(num(1e5), "100000");
        assert_eq!(num(2.5e-7), "2.5e-7");
        assert_eq!(num(-3e9), "-3e9");
        assert_eq!(num(1.0 / 3.0), "0.333333");
    }

    #[test]
    fn inertia_is_shown_diagonal_or_by_principal_moments() {
        let (m, diagonal) = inertia_moments(&Matrix3::from_diagonal(&Vector3::new(1.0, 2.0, 3.0)));
        assert!(diagonal);
        assert_eq!(m, [1.0, 2.0, 3.0]);
        // diag(1, 3) rotated by 45° about z: off-diagonal ±1 in body axes, moments 1 and 3
        let i = Matrix3::new(2.0, 1.0, 0.0, 1.0, 2.0, 0.0, 0.0, 0.0, 5.0);
        let (m, diagonal) = inertia_moments(&i);
        assert!(!diagonal);
        for (got, want) in m.iter().zip([1.0, 3.0, 5.0]) {
            assert!((got - want).abs() < 1e-12, "{m:?}");
        }
    }
}
