//! The complementarity products of a FESD point: the residual ([`comp_residual`]) and the
//! located products ([`comp_products`]).

use super::layout::Layout;
use super::tableau::{comp_pair, Dcs};

/// Largest single complementarity product (all cross pairs when `cross`).
pub fn comp_residual(layout: &Layout, x: &[f64], cross: bool) -> f64 {
    let mut r: f64 = 0.0;
    visit_comp_products(layout, x, cross, &mut |p| r = r.max(p.value));
    r
}

/// One complementarity product of the FESD NLP ([`comp_products`]).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct CompProduct {
    /// Element index over the horizon (`layout.elems`).
    pub element: usize,
    /// Control interval of the element.
    pub interval: usize,
    /// Stage whose α enters the product (0..n_s).
    pub stage: usize,
    /// Multiplier point (0 = the previous element's end point, 1..=n_s the stages).
    pub point: usize,
    /// Switching function i.
    pub switch: usize,
    /// `"alpha*lambda_n"` (α_i λⁿ_i), `"(1-alpha)*lambda_p"` ((1 − α_i) λᵖ_i) or, for
    /// Stewart's reformulation, `"theta*lambda"`.
    pub side: &'static str,
    /// |product|.
    pub value: f64,
}

/// Every complementarity product that [`comp_residual`] bounds (cross complementarity when
/// `cross`, stage-wise otherwise), with where it sits, so that a stalled homotopy can say
/// which elements and switching functions hold its residual.
pub fn comp_products(layout: &Layout, x: &[f64], cross: bool) -> Vec<CompProduct> {
    let mut out = vec![];
    visit_comp_products(layout, x, cross, &mut |p| out.push(p));
    out
}

/// Calls `visit` with every product of [`comp_products`] without collecting them (the
/// homotopy evaluates [`comp_residual`] after every NLP and every integrator step).
fn visit_comp_products(
    layout: &Layout,
    x: &[f64],
    cross: bool,
    visit: &mut dyn FnMut(CompProduct),
) {
    visit_pairs(layout, cross, &mut |p| {
        let a = x[p.alpha];
        let first = if p.one_minus { 1.0 - a } else { a };
        visit(CompProduct {
            element: p.element,
            interval: p.interval,
            stage: p.stage,
            point: p.point,
            switch: p.switch,
            side: p.side,
            value: (first * x[p.lambda]).abs(),
        });
    });
}

/// One complementarity pair of the FESD MPCC: where it sits and its variables,
/// (α or 1 − α) ⊥ λ.
struct PairAt {
    element: usize,
    interval: usize,
    stage: usize,
    point: usize,
    switch: usize,
    side: &'static str,
    alpha: usize,
    one_minus: bool,
    lambda: usize,
}

/// Calls `visit` with every complementarity pair (cross pairs when `cross`, stage-wise
/// otherwise): α_{j'} ⊥ λⁿ_j and (1 − α_{j'}) ⊥ λᵖ_j, or θ ⊥ λ for Stewart's reformulation.
fn visit_pairs(layout: &Layout, cross: bool, visit: &mut dyn FnMut(PairAt)) {
    let (_, nc, _, ns) = layout.dims;
    for (element, e) in layout.elems.iter().enumerate() {
        for stage in 0..ns {
            for point in 0..e.lp.len() {
                for switch in 0..nc {
                    if !comp_pair(cross && switch < layout.n_cross, stage, point, ns) {
                        continue;
                    }
                    let at = |side, one_minus, lambda: usize| PairAt {
                        element,
                        interval: e.step,
                        stage,
                        point,
                        switch,
                        side,
                        alpha: e.alpha[stage] + switch,
                        one_minus,
                        lambda: lambda + switch,
                    };
                    if layout.dcs == Dcs::Stewart {
                        visit(at("theta*lambda", false, e.lp[point]));
                        continue;
                    }
                    visit(at("alpha*lambda_n", false, e.ln[point]));
                    visit(at("(1-alpha)*lambda_p", true, e.lp[point]));
                }
            }
        }
    }
}

/// The complementarity pairs of the FESD MPCC for the active-set method
/// ([`nonsmooth_solvers::mpcc`]): G = α (or 1 − α, or Stewart's θ), H = λ.
pub fn mpcc_pairs(layout: &Layout, cross: bool) -> Vec<nonsmooth_solvers::mpcc::Pair> {
    use nonsmooth_solvers::mpcc::{Pair, Side};
    let mut out = vec![];
    visit_pairs(layout, cross, &mut |p| {
        out.push(Pair {
            g: if p.one_minus {
                Side::one_minus(p.alpha)
            } else {
                Side::var(p.alpha)
            },
            h: Side::var(p.lambda),
        });
    });
    out
}
