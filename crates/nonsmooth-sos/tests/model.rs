//! Stability certificates of bodies read from model files (`nonsmooth_sos::model`): the Fig. 2
//! body as a model file against the paper's parameters, a box on an inclined plane, and the
//! typed errors of models outside the construction.

use nonsmooth_core::{Model, ParameterPath};
use nonsmooth_sos::lyapunov::{certify, CertifyOptions, Verdict};
use nonsmooth_sos::model::{
    certify_model, ModelCertifyOptions, NotApplicable, Outcome, PlanarBody, StabilityModelError,
};
use nonsmooth_sos::planar::PlanarParams;

const FIG2: &str = include_str!("../../../examples/sos_fig2.toml");

fn fig2_model(mu1: f64, d: f64) -> Model {
    let t = 30f64.to_radians().tan();
    let set = |p: &str, v: f64| (p.parse::<ParameterPath>().expect("path"), v);
    Model::from_toml_str_with(
        FIG2,
        Some("sos_fig2.toml"),
        &[
            set("materials.uphill.friction", mu1),
            set("colliders.uphill_foot.pose.xyz.x", t - d),
            set("colliders.downhill_foot.pose.xyz.x", t + d),
        ],
    )
    .expect("fig2 model")
}

/// The verdict's category, shared by the flags form and the model form.
fn flags_category(p: &PlanarParams) -> &'static str {
    match certify(p, &CertifyOptions::default())
        .expect("solves")
        .verdict
    {
        Verdict::Certified => "certified",
        Verdict::NoCertificate(_) => "no certificate",
        Verdict::NotApplicable(_) => "not applicable",
        Verdict::NoEquilibrium => "no equilibrium",
        Verdict::Ambiguous(_) => "ambiguous",
    }
}

fn model_category(m: &Model) -> &'static str {
    let opts = ModelCertifyOptions {
        falsify_samples: 0,
        ..ModelCertifyOptions::default()
    };
    match certify_model(m, &opts) {
        Ok(c) => match c.outcome {
            Outcome::Certified => "certified",
            Outcome::NoCertificateFound(_) | Outcome::FalsifiedBySimulation(_) => "no certificate",
            Outcome::Ambiguous(_) => "ambiguous",
        },
        Err(StabilityModelError::NotApplicable(_)) => "not applicable",
        Err(StabilityModelError::NotAnEquilibrium(_)) => "no equilibrium",
        Err(e) => panic!("unexpected error {e}"),
    }
}

#[test]
fn fig2_model_file_gives_the_flags_verdicts() {
    let points = [(1.2, 1.0), (2.0, 2.0), (0.0, 0.8), (0.4, 0.4), (1.0, 1.6)];
    let mut categories = Vec::new();
    for (mu1, d) in points {
        let m = fig2_model(mu1, d);
        let body = PlanarBody::from_model(&m).expect("reads");
        let p = PlanarParams::new(30f64.to_radians(), mu1, 2.0, d, 0.0);
        let q = body.params;
        for (a, b) in [
            (p.alpha, q.alpha),
            (p.mu1, q.mu1),
            (p.mu2, q.mu2),
            (p.d, q.d),
            (p.h, q.h),
            (p.e, q.e),
            (p.offset, q.offset),
        ] {
            assert!((a - b).abs() < 1e-9, "({mu1}, {d}): {p:?} vs {q:?}");
        }
        let (flags, model) = (flags_category(&p), model_category(&m));
        assert_eq!(flags, model, "({mu1}, {d})");
        categories.push(model);
    }
    // The five points are not all of one kind.
    assert!(categories.contains(&"certified"), "{categories:?}");
    assert!(categories.contains(&"not applicable"), "{categories:?}");
}

/// A 0.4 m × 0.2 m box of 2 kg on a plane inclined `slope_deg` (descending toward +x, or −x
/// when `mirrored`), resting on its two bottom corners, friction `mu` on both.
fn box_on_slope(slope_deg: f64, mu: f64, mirrored: bool) -> String {
    let a = slope_deg.to_radians();
    let s = if mirrored { -1.0 } else { 1.0 };
    // Surface tangent (downhill) and outward normal.
    let (t, n) = ([s * a.cos(), -a.sin()], [s * a.sin(), a.cos()]);
    let c = [0.3 * t[0] + 0.1 * n[0], 0.3 * t[1] + 0.1 * n[1]];
    format!(
        r#"
[model]
name = "box_on_slope"
dimension = "planar"
gravity = [0.0, -9.81, 0.0]

[[bodies]]
name = "block"
mass = 2.0
inertia = {{ solid_box = [0.2, 0.1, 0.05] }}

[[materials]]
name = "rough"
friction = {mu}

[[colliders]]
name = "slope"
shape = {{ plane = [{nx:?}, {ny:?}, 0.0] }}
material = "rough"

[[colliders]]
name = "block_shape"
body = "block"
shape = {{ box = [0.2, 0.1, 0.05] }}
material = "rough"

[initial]
q.block = [{cx:?}, {cy:?}, {th:?}]
"#,
        nx = n[0],
        ny = n[1],
        cx = c[0],
        cy = c[1],
        th = -s * a,
    )
}

#[test]
fn box_on_a_slope_is_certified_above_tan_and_slides_below() {
    // Slope 10° (tan = 0.176). The certificate needs friction well above tan α: on this box
    // (dimensionless d = 1.55, h = 0.77) μ ≥ 0.8 is certified, μ ≤ 0.6 is not (no
    // certificate found, which never means unstable).
    let slope: f64 = 10.0;
    let tan = slope.to_radians().tan();
    let above = Model::from_toml_str(&box_on_slope(slope, 1.0, false), None).expect("model");
    let body = PlanarBody::from_model(&above).expect("reads");
    assert!((body.slope_degrees - slope).abs() < 1e-9);
    assert!((body.height - 0.1).abs() < 1e-12);
    assert!((body.contacts[0].l + 0.2).abs() < 1e-12 && (body.contacts[1].l - 0.2).abs() < 1e-12);
    // The equilibrium maps back onto the model's initial coordinates.
    let (q, v) = body.model_state(&[0.0; 6]);
    for k in 0..3 {
        assert!((q[k] - above.initial_state.q[k]).abs() < 1e-12, "{q:?}");
        assert!(v[k].abs() < 1e-15);
    }
    // The mirrored slope is the same body.
    let mirrored = Model::from_toml_str(&box_on_slope(slope, 1.0, true), None).expect("model");
    let mb = PlanarBody::from_model(&mirrored).expect("reads");
    for (a, b) in [
        (body.params.d, mb.params.d),
        (body.params.h, mb.params.h),
        (body.params.offset, mb.params.offset),
        (body.params.alpha, mb.params.alpha),
    ] {
        assert!((a - b).abs() < 1e-12);
    }
    let cert = certify_model(&above, &ModelCertifyOptions::default()).expect("certifies");
    match &cert.outcome {
        Outcome::Certified => assert!(cert.trajectory.is_empty()),
        Outcome::FalsifiedBySimulation(_) => assert!(!cert.trajectory.is_empty()),
        other => panic!("friction 1.0 > tan 10° = {tan:.3}: {other:?}"),
    }
    // Below tan(slope): the static check says it slides.
    let below = Model::from_toml_str(&box_on_slope(slope, 0.15, false), None).expect("model");
    match certify_model(&below, &ModelCertifyOptions::default()) {
        Err(StabilityModelError::NotAnEquilibrium(reason)) => {
            assert!(reason.contains("friction too small"), "{reason}")
        }
        other => panic!("friction 0.15 < tan 10°: {other:?}"),
    }
    // Steeper than the box's tipping angle atan(0.2/0.1): it tips.
    let steep = Model::from_toml_str(&box_on_slope(70.0, 5.0, false), None).expect("model");
    match certify_model(&steep, &ModelCertifyOptions::default()) {
        Err(StabilityModelError::NotAnEquilibrium(reason)) => {
            assert!(reason.contains("tips"), "{reason}")
        }
        other => panic!("70° slope: {other:?}"),
    }
}

fn not_applicable(m: &Model) -> NotApplicable {
    match PlanarBody::from_model(m) {
        Err(StabilityModelError::NotApplicable(e)) => e,
        other => panic!("expected NotApplicable, got {other:?}"),
    }
}

#[test]
fn models_outside_the_construction_are_typed_errors() {
    // One contact: the downhill foot lifted.
    let lifted = Model::from_toml_str_with(
        FIG2,
        None,
        &[(
            "colliders.downhill_foot.pose.xyz.y".parse().expect("path"),
            -0.9,
        )],
    )
    .expect("model");
    match not_applicable(&lifted) {
        NotApplicable::ContactCount { contacts } => assert_eq!(contacts.len(), 1),
        other => panic!("{other:?}"),
    }
    // Three contacts: a third foot between the two.
    let three = FIG2.replacen(
        "\n[[pairs]]",
        "\n[[colliders]]\nname = \"middle_foot\"\nbody = \"body\"\nshape = \"point\"\npose = { xyz = [0.5, -1.0, 0.0] }\n\n[[pairs]]",
        1,
    );
    let three = Model::from_toml_str(&three, None).expect("model");
    match not_applicable(&three) {
        NotApplicable::ContactCount { contacts } => {
            assert_eq!(contacts.len(), 3);
            assert!(contacts.iter().any(|c| c.contains("middle_foot")));
        }
        other => panic!("{other:?}"),
    }
    // A spatial body.
    let spatial = Model::from_toml_str(
        include_str!("../../../examples/drumwright_incline.toml"),
        None,
    )
    .expect("model");
    assert_eq!(not_applicable(&spatial), NotApplicable::SpatialModel);
    // A rolling disk.
    let disk = Model::from_toml_str(
        r#"
[model]
name = "disk"
dimension = "planar"
gravity = [1.0, -9.0, 0.0]
[[bodies]]
name = "disk"
mass = 1.0
inertia = { solid_sphere = 0.1 }
[[colliders]]
name = "floor"
shape = { plane = [0.0, 1.0, 0.0] }
[[colliders]]
name = "rim"
body = "disk"
shape = { sphere = 0.1 }
[initial]
q.disk = [0.0, 0.1, 0.0]
"#,
        None,
    )
    .expect("model");
    assert!(matches!(
        not_applicable(&disk),
        NotApplicable::RollingContact { .. }
    ));
    // Flat ground.
    let flat = FIG2.replace(
        "gravity = [0.49999999999999994, -0.8660254037844387, 0.0]",
        "gravity = [0.0, -1.0, 0.0]",
    );
    assert_ne!(flat, FIG2, "the example's gravity line changed");
    let flat = Model::from_toml_str(&flat, None).expect("model");
    assert!(matches!(
        not_applicable(&flat),
        NotApplicable::SlopeOutOfRange { .. }
    ));
    // Not an equilibrium: no friction on a slope.
    let frictionless = Model::from_toml_str_with(
        FIG2,
        None,
        &[
            ("materials.uphill.friction".parse().expect("path"), 0.0),
            ("materials.downhill.friction".parse().expect("path"), 0.0),
        ],
    )
    .expect("model");
    match certify_model(&frictionless, &ModelCertifyOptions::default()) {
        Err(StabilityModelError::NotAnEquilibrium(r)) => assert!(r.contains("friction"), "{r}"),
        other => panic!("{other:?}"),
    }
    // Both contacts on one side of the centre of mass (d < h tan α).
    match certify_model(&fig2_model(1.0, 0.3), &ModelCertifyOptions::default()) {
        Err(StabilityModelError::NotApplicable(NotApplicable::Domain(r))) => {
            assert!(r.contains("l1 l2 < 0"), "{r}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_perturbed_run_that_leaves_is_written_in_the_models_coordinates() {
    // Fig. 2 at μ₁ = 0, d = 0.6 (just above h tan 30° = 0.577): no certificate, and every
    // perturbed run slides away.
    let m = fig2_model(0.0, 0.6);
    let cert = certify_model(&m, &ModelCertifyOptions::default()).expect("runs");
    assert_eq!(
        cert.outcome.name(),
        "falsified-by-simulation",
        "{:?}",
        cert.outcome
    );
    let traj = &cert.trajectory;
    assert!(traj.len() > 2);
    let q0 = &m.initial_state.q;
    let first = &traj[0];
    assert_eq!(first.event, "start");
    for k in 0..3 {
        assert!((first.q[k] - q0[k]).abs() < 2e-3, "{first:?}");
    }
    assert!(traj.windows(2).all(|w| w[1].t >= w[0].t));
    // It leaves: the last sample is far from the start, downhill (+x in this file).
    let last = traj.last().expect("samples");
    let dist = ((last.q[0] - q0[0]).powi(2) + (last.q[1] - q0[1]).powi(2)).sqrt();
    assert!(dist > 0.1, "{last:?}");
}
