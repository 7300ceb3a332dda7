//! Figures of optimal-control solutions, drawn with `nonsmooth-report`: the hopper's frame
//! strip (seed 002 Fig. 7), shared by `nonsmooth ocp` and the `tf-hopper-ocp` experiment.

use crate::fesd::OcpSolution;
use crate::hopper::Hopper;
use nonsmooth_report::{Figure, Series};

/// The hopper's animation frame strip (seed 002 Fig. 7): the leg (hip, knee, foot) at the
/// `n` control-interval boundaries of `sol` over the ground and the elliptic holes.
pub fn hopper_frame_strip(hop: &Hopper, target_x: f64, n: usize, sol: &OcpSolution) -> Figure {
    let mut fig = Figure::new("Hopper OCP: frame strip (Fig. 7)", "x [m]", "z [m]");
    // wide, with the ground drawn on past the course: the legend (one entry per frame) sits
    // in the upper right corner, beyond the last frame
    fig.size = (1300, 520);
    let x_hi = hop
        .holes
        .iter()
        .fold(target_x, |m, xc| m.max(xc + hop.hole_axes.0))
        + 1.0;
    let ground: Vec<(f64, f64)> = (0..=400)
        .map(|i| {
            let x = -0.2 + (x_hi + 0.2) * i as f64 / 400.0;
            let depth = hop
                .holes
                .iter()
                .map(|xc| {
                    let d = (x - xc) / hop.hole_axes.0;
                    if d.abs() < 1.0 {
                        -hop.hole_axes.1 * (1.0 - d * d).sqrt()
                    } else {
                        0.0
                    }
                })
                .fold(0.0, f64::min);
            (x, depth)
        })
        .collect();
    fig = fig.with(Series::line("ground and holes", ground));
    let per_step = sol.traj.y.len().saturating_sub(1) / n.max(1);
    for y in sol.traj.y.iter().step_by(per_step.max(1)) {
        let (kn, ft) = (hop.knee(y), hop.foot(y));
        fig = fig.with(Series::line(
            format!("t = {:.2}", y[y.len() - 1]),
            vec![(y[0], y[1]), (kn[0], kn[1]), (ft[0], ft[1])],
        ));
    }
    fig
}
