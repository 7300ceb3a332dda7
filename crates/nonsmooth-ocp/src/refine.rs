//! Mesh refinement of a FESD point: every finite element of a coarse horizon NLP split into
//! `r` equal sub-elements of a finer one (N_FE → r·N_FE per control interval), so that a
//! homotopy stalled on the coarse mesh can be continued on the fine one.
//!
//! Why: FESD detects switches on element boundaries only, so an interval with more switches
//! than elements (on the hopper, a touchdown with tangential velocity: flight | flight |
//! frozen slip | frozen stick) has no exact solution on a coarse mesh, while the relaxed
//! NLPs of that mesh may already have found the motion. The time-freezing paper is silent on
//! refinement. (On the hopper with holes the refined stall point stalls again in the same
//! range of complementarity, docs/optimal-control.md, "Limitations"; on the particle the
//! refined solution is exact at once.)
//!
//! The carried point, for a Radau IIA tableau (stiffly accurate, nodes 0 < c₁ < … < c_{n_s} = 1):
//! - **states**: the coarse element's collocation polynomial, the Lagrange interpolant of
//!   (0, y_start), (c_j, Y_j), evaluated at the fine stage nodes (m + c_j)/r of sub-element
//!   m; the fine element boundaries therefore lie on the coarse polynomial, and the coarse
//!   end state stays the fine end state;
//! - **α, λᵖ, λⁿ** at a fine stage node t: the coarse stage values of the first coarse
//!   node c_i ≥ t (the stage whose collocation interval (c_{i−1}, c_i] holds t). Each fine
//!   element's stage values are thus a subset of its coarse element's, and every
//!   complementarity product of the fine point (cross complementarity included) is one of
//!   the coarse point's: the fine point's complementarity residual (the largest product)
//!   is at most the coarse one's (test
//!   `a_coarse_solution_refined_restarts_the_homotopy_on_the_fine_mesh`); the Scholtes
//!   rows' per-element sums of cross products can grow, since one coarse product may enter
//!   several fine pairs;
//! - **h** = h_coarse / r, within the fine bounds (1 ± γ_h) h̄/r exactly when h_coarse is
//!   within the coarse ones; controls, speeds of time, y₀ and the elastic slack copied.
//!
//! The collocation equations of the fine elements then hold to the interpolation error of
//! the coarse polynomial where α is constant on the coarse element (zero where the flow is
//! polynomial of degree ≤ n_s); where α switches inside a coarse element the slopes mix the
//! regions' fields and the violation can be large, so the first NLP of the continued
//! homotopy needs some relaxation σ₀.

use std::sync::Arc;

use crate::fesd::{build, copy_interval_vars, Dcs, FesdOptions, Horizon, Layout};
use crate::time_freezing::TimeFreezing;
use crate::OcpError;

/// The refinement factor r = fine elements / coarse elements when `to` is `from` with every
/// element split into r, `None` when the two layouts are not so related (other dimensions,
/// intervals, tableau or step representation, or a non-stiffly-accurate tableau).
pub fn refinement_factor(from: &Layout, to: &Layout) -> Option<usize> {
    let radau = |l: &Layout| {
        l.dcs == Dcs::Step
            && l.c.last().is_some_and(|c| (c - 1.0).abs() < 1e-14)
            && l.elems.iter().all(|e| e.y.last() == Some(&e.y_end))
    };
    let (nf, nt) = (from.elems.len(), to.elems.len());
    let related = from.dims == to.dims
        && from.c == to.c
        && radau(from)
        && radau(to)
        && from.u.len() == to.u.len()
        && from.s.len() == to.s.len()
        && from.elastic.is_some() == to.elastic.is_some()
        && nf > 0
        && nt.is_multiple_of(nf);
    if !related {
        return None;
    }
    let r = nt / nf;
    let same_intervals = from
        .elems
        .iter()
        .enumerate()
        .all(|(i, e)| (0..r).all(|m| to.elems[i * r + m].step == e.step));
    same_intervals.then_some(r)
}

/// Lagrange basis weights of the nodes `nodes` at `t`.
fn lagrange_weights(nodes: &[f64], t: f64) -> Vec<f64> {
    (0..nodes.len())
        .map(|i| {
            nodes
                .iter()
                .enumerate()
                .filter(|(k, _)| *k != i)
                .map(|(_, tk)| (t - tk) / (nodes[i] - tk))
                .product()
        })
        .collect()
}

/// Carries the primal point `x` of the NLP with layout `from` to the NLP with layout `to`,
/// whose elements split each of `from`'s into [`refinement_factor`] equal parts (see the
/// module docs for what each variable receives); `x_to` is `to`'s initial guess, whose
/// entries the refinement does not set are kept.
///
/// # Errors
/// [`OcpError::InvalidInput`] when the layouts are not a refinement of one another.
pub fn refine_point(
    from: &Layout,
    x: &[f64],
    to: &Layout,
    mut x_to: Vec<f64>,
) -> Result<Vec<f64>, OcpError> {
    let r = refinement_factor(from, to).ok_or_else(|| {
        OcpError::InvalidInput(
            "refine_point: the fine NLP does not split each element of the coarse one \
             (Radau IIA, step representation, the same horizon and tableau)"
                .into(),
        )
    })?;
    let (ny, nc, _, ns) = from.dims;
    copy_interval_vars(from, x, to, &mut x_to);
    let copy = |x_to: &mut Vec<f64>, a: usize, b: usize, n: usize| {
        x_to[b..b + n].copy_from_slice(&x[a..a + n])
    };
    if let (Some(a), Some(b)) = (from.elastic, to.elastic) {
        copy(&mut x_to, a, b, 1);
    }
    let mut nodes = vec![0.0];
    nodes.extend_from_slice(&from.c);
    // per fine stage (sub-element m, stage j): the interpolation weights of its node
    // t = (m + c_j)/r and the coarse stage that owns t; the same for every element
    let stages: Vec<(usize, usize, Vec<f64>, usize)> = (0..r)
        .flat_map(|m| from.c.iter().enumerate().map(move |(j, cj)| (m, j, cj)))
        .map(|(m, j, cj)| {
            let t = (m as f64 + cj) / r as f64;
            let owner = from
                .c
                .iter()
                .position(|c| *c >= t - 1e-12)
                .unwrap_or(ns - 1);
            (m, j, lagrange_weights(&nodes, t), owner)
        })
        .collect();
    for (i, coarse) in from.elems.iter().enumerate() {
        let mut points = vec![coarse.y_start];
        points.extend_from_slice(&coarse.y);
        for (m, j, w, owner) in &stages {
            let fine = &to.elems[i * r + m];
            x_to[fine.h] = x[coarse.h] / r as f64;
            for comp in 0..ny {
                x_to[fine.y[*j] + comp] =
                    points.iter().zip(w).map(|(p, wi)| wi * x[p + comp]).sum();
            }
            copy(&mut x_to, coarse.alpha[*owner], fine.alpha[*j], nc);
            copy(&mut x_to, coarse.lp[owner + 1], fine.lp[j + 1], nc);
            copy(&mut x_to, coarse.ln[owner + 1], fine.ln[j + 1], nc);
        }
    }
    Ok(x_to)
}

/// A start point for the NLP of `hz` with N_FE = `o.n_fe` (layout `to`, initial guess
/// `x_to`) from a point `x` of the same problem on a coarser mesh: the N_FE = d NLP for the
/// divisors d of `o.n_fe` (largest first) whose variable count is `x.len()`, refined by
/// [`refine_point`]. `None` when no coarser mesh has that many variables.
///
/// # Errors
/// [`build`]'s errors for the coarse NLP.
pub fn from_coarser_mesh(
    tf: &Arc<TimeFreezing>,
    hz: &Horizon,
    o: &FesdOptions,
    x: &[f64],
    to: &Layout,
    x_to: Vec<f64>,
) -> Result<Option<Vec<f64>>, OcpError> {
    for d in (1..o.discretization.n_fe)
        .rev()
        .filter(|d| o.discretization.n_fe.is_multiple_of(*d))
    {
        let coarse = {
            let mut o = o.clone();
            o.discretization.n_fe = d;
            o
        };
        let (_, from, fresh) = build(tf, hz, &coarse)?;
        if fresh.len() == x.len() {
            return refine_point(&from, x, to, x_to).map(Some);
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::lagrange_weights;

    #[test]
    fn lagrange_weights_reproduce_a_cubic() {
        let nodes = [0.0, 0.155, 0.645, 1.0];
        let f = |t: f64| 2.0 - t + 3.0 * t * t - 0.5 * t * t * t;
        for t in [0.1, 0.3, 0.5, 0.9] {
            let w = lagrange_weights(&nodes, t);
            let v: f64 = nodes.iter().zip(&w).map(|(n, wi)| wi * f(*n)).sum();
            assert!((v - f(t)).abs() < 1e-13, "t = {t}: {v} vs {}", f(t));
        }
    }
}
