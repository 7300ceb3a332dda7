//! Post-processing of outcome sets (Halm & Posa §6, Figs. 9–14): projection of post-impact
//! velocities onto contact normal / tangential velocities, the 2-D convex hull (Andrew's
//! monotone chain, de Berg et al., *Computational Geometry*, §1.1), the Hausdorff distance
//! between finite sets, and an ε-net coverage check.

use nalgebra::DVector;

use crate::ImpactProblem;

/// Which contact velocity a coordinate of a projection is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContactAxis {
    /// Normal velocity `J_n,i v` of contact i.
    Normal(usize),
    /// Tangential velocity `J_t,r v` of tangent row r (planar: row i is contact i).
    Tangent(usize),
}

/// Projects velocities onto the chosen contact-velocity axes (rows of `J_n` / `J_t`).
/// Axes out of range give NaN coordinates.
pub fn project(p: &ImpactProblem, vs: &[DVector<f64>], axes: &[ContactAxis]) -> Vec<Vec<f64>> {
    vs.iter()
        .map(|v| {
            axes.iter()
                .map(|a| match *a {
                    ContactAxis::Normal(i) if i < p.jn.nrows() => p.jn.row(i).dot(&v.transpose()),
                    ContactAxis::Tangent(r) if r < p.jt.nrows() => p.jt.row(r).dot(&v.transpose()),
                    _ => f64::NAN,
                })
                .collect()
        })
        .collect()
}

/// Projects velocities onto two contact-velocity axes as plane points.
pub fn project_2d(
    p: &ImpactProblem,
    vs: &[DVector<f64>],
    x: ContactAxis,
    y: ContactAxis,
) -> Vec<(f64, f64)> {
    project(p, vs, &[x, y])
        .into_iter()
        .map(|c| (c[0], c[1]))
        .collect()
}

fn cross(o: (f64, f64), a: (f64, f64), b: (f64, f64)) -> f64 {
    (a.0 - o.0) * (b.1 - o.1) - (a.1 - o.1) * (b.0 - o.0)
}

/// Convex hull of plane points (Andrew's monotone chain), counter-clockwise, without
/// repeated or collinear points. Non-finite points are ignored.
pub fn convex_hull_2d(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut pts: Vec<(f64, f64)> = points
        .iter()
        .cloned()
        .filter(|p| p.0.is_finite() && p.1.is_finite())
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    pts.dedup();
    if pts.len() < 3 {
        return pts;
    }
    let mut hull: Vec<(f64, f64)> = Vec::with_capacity(2 * pts.len());
    for &p in &pts {
        while hull.len() >= 2 && cross(hull[hull.len() - 2], hull[hull.len() - 1], p) <= 0.0 {
            hull.pop();
        }
        hull.push(p);
    }
    let lower = hull.len() + 1;
    for &p in pts.iter().rev().skip(1) {
        while hull.len() >= lower && cross(hull[hull.len() - 2], hull[hull.len() - 1], p) <= 0.0 {
            hull.pop();
        }
        hull.push(p);
    }
    hull.pop();
    hull
}

fn dist(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y) * (x - y))
        .sum::<f64>()
        .sqrt()
}

/// Distance from a point to a finite set (∞ for an empty set).
pub fn distance_to_set(x: &[f64], set: &[Vec<f64>]) -> f64 {
    set.iter().map(|y| dist(x, y)).fold(f64::INFINITY, f64::min)
}

/// Directed Hausdorff distance `sup_{a∈A} inf_{b∈B} ‖a − b‖` (0 for empty A).
pub fn directed_hausdorff(a: &[Vec<f64>], b: &[Vec<f64>]) -> f64 {
    a.iter().map(|x| distance_to_set(x, b)).fold(0.0, f64::max)
}

/// Hausdorff distance `max(d(A→B), d(B→A))` between finite sets (Euclidean).
pub fn hausdorff(a: &[Vec<f64>], b: &[Vec<f64>]) -> f64 {
    directed_hausdorff(a, b).max(directed_hausdorff(b, a))
}

/// ε-net coverage: the fraction of `targets` that lie within `eps` of some point of `net`
/// (1.0 means `net` is an ε-net of `targets`; 1.0 for empty targets).
pub fn eps_net_coverage(net: &[Vec<f64>], targets: &[Vec<f64>], eps: f64) -> f64 {
    if targets.is_empty() {
        return 1.0;
    }
    let hit = targets
        .iter()
        .filter(|t| distance_to_set(t, net) <= eps)
        .count();
    hit as f64 / targets.len() as f64
}

/// Largest gap in the coverage of the segment `[lo, hi]` by the sorted `values` (values
/// outside the segment are ignored); `hi − lo` when no value is inside.
pub fn max_gap_on_segment(values: &[f64], lo: f64, hi: f64) -> f64 {
    let mut v: Vec<f64> = values
        .iter()
        .cloned()
        .filter(|x| x.is_finite() && *x >= lo && *x <= hi)
        .collect();
    v.sort_by(f64::total_cmp);
    let mut prev = lo;
    let mut gap: f64 = 0.0;
    for x in v {
        gap = gap.max(x - prev);
        prev = x;
    }
    gap.max(hi - prev)
}
