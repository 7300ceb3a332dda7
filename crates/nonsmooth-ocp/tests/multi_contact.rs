//! Several contacts by nosnoc's multi-contact time-freezing: a planar box (4 corner contacts)
//! dropped flat onto the ground lands on both lower corners at once at t = √(2h/g) and rests
//! there, level, without penetrating; several contacts refuse Stewart's reformulation.

use std::sync::Arc;

use nonsmooth_ocp::fesd::{simulate, FesdOptions};
use nonsmooth_ocp::model_system::ModelSystem;
use nonsmooth_ocp::time_freezing::TimeFreezing;

/// A 1 kg box of half-extents 0.2 × 0.1 on a planar joint, its lower face 0.5 m above a
/// frictionless ground (`mu` replaces the friction if given).
fn dropped_box(mu: Option<f64>) -> ModelSystem {
    let text = r#"
[model]
name = "box_drop"
dimension = "planar"
gravity = [0.0, -9.81, 0.0]

[[materials]]
name = "ground"
friction = 0.0

[[colliders]]
name = "floor"
shape = { plane = [0.0, 1.0, 0.0] }
material = "ground"

[[bodies]]
name = "box"
mass = 1.0
inertia = { solid_box = [0.2, 0.1, 0.1] }

[[joints]]
name = "base"
kind = "planar"
parent = "world"
child = "box"

[[colliders]]
name = "shell"
body = "box"
shape = { box = [0.2, 0.1, 0.1] }
material = "ground"

[initial]
q.base = [0.0, 0.6, 0.0]
"#
    .replace(
        "friction = 0.0",
        &format!("friction = {}", mu.unwrap_or(0.0)),
    );
    let model = nonsmooth_core::Model::from_toml_str(&text, Some("box_drop.toml"))
        .unwrap_or_else(|e| panic!("{e}"));
    ModelSystem::new(model, None, &[]).expect("box system")
}

#[test]
fn a_box_dropped_flat_lands_on_two_corners_and_rests_level() {
    for mu in [None, Some(0.5)] {
        let sys = dropped_box(mu);
        assert_eq!(sys.n_contacts(), 4);
        let a_n = 100.0;
        let tf = Arc::new(TimeFreezing::new(sys, a_n).unwrap());
        // switch detection on the gaps only (the leading 4 switching functions): the upper
        // corners' normal velocities change sign in flight where no element boundary is
        // needed (θ₀ = 1 there)
        let o = {
            let mut o = FesdOptions::default();
            o.discretization.n_s = 2;
            o.discretization.cross_components = 4;
            o
        };
        let (steps, step) = (10, 0.1);
        let y0 = [0.0, 0.6, 0.0, 0.0, 0.0, 0.0, 0.0];
        let r = simulate(&tf, &y0, step, steps, &|_| vec![], &o)
            .unwrap_or_else(|e| panic!("μ = {mu:?}: {e}"));
        let y = r.traj.y.last().unwrap();
        eprintln!(
            "μ = {mu:?}: end {y:?}, complementarity {:.1e}, {} NLPs",
            r.comp_residual, r.nlp_count
        );
        assert!(r.comp_residual <= 1e-9, "{}", r.comp_residual);
        // at rest, level, on the ground; x unchanged (no horizontal force)
        assert!((y[1] - 0.1).abs() < 1e-6, "height {}", y[1]);
        assert!(y[0].abs() < 1e-9 && y[2].abs() < 1e-9, "{y:?}");
        assert!(y[3..6].iter().all(|v| v.abs() < 1e-6), "{y:?}");
        // the impact at t = √(2 · 0.5 / g) is on an element boundary and freezes the clock
        let t_impact = (1.0 / 9.81_f64).sqrt();
        let hit = r
            .boundaries
            .iter()
            .map(|b| (b - t_impact).abs())
            .fold(f64::INFINITY, f64::min);
        assert!(hit < 1e-6, "impact missed by {hit}");
        assert!(y[6] < steps as f64 * step - 1e-3, "clock {}", y[6]);
        // no corner below the ground beyond the tolerance at any stage point
        let lowest = r
            .traj
            .y
            .iter()
            .map(|y| y[1] - 0.1)
            .fold(f64::INFINITY, f64::min);
        assert!(lowest > -1e-6, "penetration {lowest}");
    }
}

#[test]
fn stewart_is_refused_for_several_contacts() {
    let tf = Arc::new(TimeFreezing::new(dropped_box(None), 100.0).unwrap());
    let mut o = FesdOptions::default();
    o.discretization.dcs = nonsmooth_ocp::fesd::Dcs::Stewart;
    let y0 = [0.0, 0.6, 0.0, 0.0, 0.0, 0.0, 0.0];
    let e = simulate(&tf, &y0, 0.1, 1, &|_| vec![], &o).unwrap_err();
    assert!(
        e.to_string()
            .contains("dcs = \"stewart\" takes one contact"),
        "{e}"
    );
}
