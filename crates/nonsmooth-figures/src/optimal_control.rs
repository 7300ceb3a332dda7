//! Pictures of optimal-control solutions: the frame strip of a planar model's motion
//! (Nurkanović et al. Fig. 7) and the obstacles' outlines for the trajectory viewer, shared by
//! `nonsmooth ocp` and the `tf-hopper-ocp` experiment.

use nalgebra::{DVector, Vector3};
use nonsmooth_core::dynamics::{kinematics, point_position};
use nonsmooth_core::JointKind;
use nonsmooth_ocp::fesd::OcpSolution;
use nonsmooth_ocp::model_system::{ModelSystem, PathTerm};
use nonsmooth_report::{Figure, Series};

/// The frame strip of a planar model's optimal motion (Nurkanović et al. Fig. 7): the model's
/// skeleton at the `n` control-interval boundaries of `sol` over the contact plane, with the
/// obstacles of the path constraints ([`PathTerm::OutsideEllipse`]) cut into the ground.
///
/// The skeleton joins the origins of bodies linked by revolute or fixed joints (prismatic
/// joints are not links), and each body to the contact points it carries; `x_end` extends the
/// drawn ground (e.g. to the target).
pub fn frame_strip(sys: &ModelSystem, x_end: f64, n: usize, sol: &OcpSolution) -> Figure {
    let model = sys.model();
    let mut fig = Figure::new(
        format!("{}: frame strip (Fig. 7)", model.name),
        "x [m]",
        "y [m]",
    );
    // wide, with the ground drawn on past the course: the legend (one entry per frame) sits
    // in the upper right corner, beyond the last frame
    fig.size = (1300, 520);
    let ellipses: Vec<_> = sys
        .path_terms()
        .iter()
        .filter_map(|t| match t {
            PathTerm::OutsideEllipse(e) => Some(e),
            PathTerm::Point(_) => None,
        })
        .collect();
    let ground_y = sys.contact().plane_point.y;
    let x_hi = ellipses
        .iter()
        .fold(x_end, |m, e| m.max(e.center[0] + e.axes[0]))
        + 1.0;
    let ground: Vec<(f64, f64)> = (0..=400)
        .map(|i| {
            let x = -0.2 + (x_hi + 0.2) * i as f64 / 400.0;
            let y = ellipses
                .iter()
                .map(|e| {
                    let d = (x - e.center[0]) / e.axes[0];
                    if d.abs() < 1.0 {
                        e.center[1] - e.axes[1] * (1.0 - d * d).sqrt()
                    } else {
                        ground_y
                    }
                })
                .fold(ground_y, f64::min);
            (x, y)
        })
        .collect();
    fig = fig.with(Series::line("ground and obstacles", ground));
    let nq = model.nq();
    let per_step = sol.traj.y.len().saturating_sub(1) / n.max(1);
    for y in sol.traj.y.iter().step_by(per_step.max(1)) {
        let q = DVector::from_column_slice(&y[..nq]);
        let kin = kinematics(model, &q, &DVector::zeros(nq));
        let origin = |b: usize| point_position(&kin, Some(b), &Vector3::zeros());
        let mut points = Vec::new();
        // depth-first walk of the linked bodies, returning to the parent after each child
        let roots: Vec<usize> = (0..model.bodies.len())
            .filter(|&b| !is_link(model, b))
            .collect();
        for root in roots {
            walk(model, sys, &kin, root, &origin, &mut points);
        }
        fig = fig.with(Series::line(format!("t = {:.2}", y[y.len() - 1]), points));
    }
    fig
}

/// Whether body `b` hangs from a parent body by a revolute or fixed joint (a drawn link).
fn is_link(model: &nonsmooth_core::Model, b: usize) -> bool {
    let j = &model.joints[b];
    j.parent.is_some() && matches!(j.kind, JointKind::Revolute | JointKind::Fixed)
}

/// Appends the skeleton below body `b`: its origin, each linked child's skeleton and back,
/// and each contact point that `b` carries and back.
fn walk(
    model: &nonsmooth_core::Model,
    sys: &ModelSystem,
    kin: &nonsmooth_core::dynamics::Kinematics<f64>,
    b: usize,
    origin: &dyn Fn(usize) -> Vector3<f64>,
    points: &mut Vec<(f64, f64)>,
) {
    let here = origin(b);
    points.push((here.x, here.y));
    for child in (0..model.bodies.len()).filter(|&c| is_link(model, c)) {
        if model.joints[child].parent == Some(b) {
            walk(model, sys, kin, child, origin, points);
            points.push((here.x, here.y));
        }
    }
    for c in sys.contacts().iter().filter(|c| c.body == b) {
        let p = point_position(kin, Some(b), &c.point);
        points.push((p.x, p.y));
        points.push((here.x, here.y));
    }
}

/// Points along the lower half of every [`PathTerm::OutsideEllipse`] obstacle of `sys`
/// (world x, y, 0), 17 per ellipse: the holes' outlines for a picture.
pub fn obstacle_outline(sys: &ModelSystem) -> Vec<[f64; 3]> {
    sys.path_terms()
        .iter()
        .filter_map(|t| match t {
            PathTerm::OutsideEllipse(e) => Some(e),
            PathTerm::Point(_) => None,
        })
        .flat_map(|e| {
            (0..=16).map(move |k| {
                let phi = std::f64::consts::PI * (1.0 + k as f64 / 16.0);
                [
                    e.center[0] + e.axes[0] * phi.cos(),
                    e.center[1] + e.axes[1] * phi.sin(),
                    0.0,
                ]
            })
        })
        .collect()
}
