//! Branch NLPs (BNLPs): the MPCC with one side of every pair fixed at zero.
//!
//! A branch is a `Vec<bool>` over the pairs: `true` fixes G_i = 0, `false` fixes H_i = 0.
//! Both sides of every pair keep G_i, H_i ≥ 0 as bounds of their variables, and the fixed
//! side's variable gets lower = upper bound = the value that zeroes it, so IPOPT (with
//! `bound_relax_factor = 0` and its default `fixed_variable_treatment = make_parameter`)
//! never moves it: the complementarity of a BNLP solution is exactly zero.

use super::{Mpcc, Pair, Side};
use crate::nlp::ipopt::{solve, IpoptError, IpoptOptions, IpoptSolution, Nlp};

/// The smooth NLP with the bounds of a branch (or only the sides' sign bounds).
pub struct BranchNlp<'a> {
    inner: &'a dyn Nlp,
    xl: Vec<f64>,
    xu: Vec<f64>,
}

/// The bounds of `pairs` on top of `nlp`'s: every side ≥ 0 and, with a `branch`, its chosen
/// side = 0, and every side of `extra` = 0 (the biactive sides of [`solve_branch`]). `Err`
/// names the first pair whose fixed value conflicts with the bounds (another pair's fix or
/// the NLP's own bounds).
pub fn branch_bounds(
    nlp: &dyn Nlp,
    pairs: &[Pair],
    branch: Option<&[bool]>,
    extra: &[Side],
) -> Result<(Vec<f64>, Vec<f64>), String> {
    let n = nlp.num_vars();
    let (mut xl, mut xu) = super::var_bounds(nlp);
    for p in pairs {
        for s in [p.g, p.h] {
            // offset + sign x ≥ 0
            if s.sign > 0.0 {
                xl[s.var] = xl[s.var].max(s.zero_at());
            } else {
                xu[s.var] = xu[s.var].min(s.zero_at());
            }
        }
    }
    if let Some(branch) = branch {
        for (i, (p, g_side)) in pairs.iter().zip(branch).enumerate() {
            let s = if *g_side { p.g } else { p.h };
            let z = s.zero_at();
            if z < xl[s.var] - 1e-14 || z > xu[s.var] + 1e-14 {
                return Err(format!(
                    "pair {i}: fixing {} = 0 needs x[{}] = {z}, outside [{}, {}]",
                    if *g_side { "G" } else { "H" },
                    s.var,
                    xl[s.var],
                    xu[s.var]
                ));
            }
            xl[s.var] = z;
            xu[s.var] = z;
        }
    }
    for s in extra {
        let z = s.zero_at();
        if z < xl[s.var] - 1e-14 || z > xu[s.var] + 1e-14 {
            return Err(format!(
                "fixing a biactive side needs x[{}] = {z}, outside [{}, {}]",
                s.var, xl[s.var], xu[s.var]
            ));
        }
        xl[s.var] = z;
        xu[s.var] = z;
    }
    for j in 0..n {
        if xl[j] > xu[j] {
            return Err(format!(
                "variable {j}: empty bounds [{}, {}] after the pairs' sign bounds",
                xl[j], xu[j]
            ));
        }
    }
    Ok((xl, xu))
}

impl<'a> BranchNlp<'a> {
    /// The BNLP of `branch` with the sides of `extra` also fixed at zero (or, with `None`,
    /// the NLP with the sides' sign bounds only).
    pub fn new(mpcc: &Mpcc<'a>, branch: Option<&[bool]>, extra: &[Side]) -> Result<Self, String> {
        let (xl, xu) = branch_bounds(mpcc.nlp, &mpcc.pairs, branch, extra)?;
        Ok(Self {
            inner: mpcc.nlp,
            xl,
            xu,
        })
    }

    /// `x` clamped into the branch's bounds (IPOPT needs the fixed variables at their value).
    pub fn clamp(&self, x: &[f64]) -> Vec<f64> {
        x.iter()
            .zip(self.xl.iter().zip(&self.xu))
            .map(|(v, (l, u))| v.clamp(*l, *u))
            .collect()
    }
}

impl Nlp for BranchNlp<'_> {
    fn num_vars(&self) -> usize {
        self.inner.num_vars()
    }
    fn num_cons(&self) -> usize {
        self.inner.num_cons()
    }
    fn var_bounds(&self, lo: &mut [f64], hi: &mut [f64]) {
        lo.copy_from_slice(&self.xl);
        hi.copy_from_slice(&self.xu);
    }
    fn con_bounds(&self, lo: &mut [f64], hi: &mut [f64]) {
        self.inner.con_bounds(lo, hi)
    }
    fn jacobian_structure(&self) -> Vec<(usize, usize)> {
        self.inner.jacobian_structure()
    }
    fn hessian_structure(&self) -> Vec<(usize, usize)> {
        self.inner.hessian_structure()
    }
    fn objective(&self, x: &[f64]) -> Option<f64> {
        self.inner.objective(x)
    }
    fn gradient(&self, x: &[f64], grad: &mut [f64]) -> bool {
        self.inner.gradient(x, grad)
    }
    fn constraints(&self, x: &[f64], g: &mut [f64]) -> bool {
        self.inner.constraints(x, g)
    }
    fn jacobian_values(&self, x: &[f64], vals: &mut [f64]) -> bool {
        self.inner.jacobian_values(x, vals)
    }
    fn hessian_values(&self, x: &[f64], obj_factor: f64, lambda: &[f64], vals: &mut [f64]) -> bool {
        self.inner.hessian_values(x, obj_factor, lambda, vals)
    }
}

/// The IPOPT options of a BNLP: the caller's, then `bound_relax_factor = 0` (exact bounds)
/// and the constraint tolerance of the caller's `tol`.
pub fn bnlp_options(base: &IpoptOptions) -> IpoptOptions {
    let mut o = base.clone();
    let tol = bnlp_tol(base);
    o.num.push(("bound_relax_factor".into(), 0.0));
    o.num.push(("constr_viol_tol".into(), tol.max(1e-12)));
    o.num
        .push(("acceptable_constr_viol_tol".into(), tol.max(1e-12)));
    o
}

/// Solves the BNLP of `branch` (with the sides of `extra` also fixed at zero) from `x0`
/// (clamped into its bounds). `Err` holds why: a conflicting branch or IPOPT's failure.
pub fn solve_branch(
    mpcc: &Mpcc<'_>,
    branch: &[bool],
    extra: &[Side],
    x0: &[f64],
    options: &IpoptOptions,
) -> Result<IpoptSolution, String> {
    let nlp = BranchNlp::new(mpcc, Some(branch), extra)?;
    let start = nlp.clamp(x0);
    match solve(&nlp, &start, None, &bnlp_options(options)) {
        Ok(s) => Ok(s),
        Err(IpoptError::NotConverged {
            status,
            constraint_violation,
            ..
        }) => Err(format!(
            "IPOPT {status:?} (constraint violation {constraint_violation:.1e})"
        )),
        Err(IpoptError::InvalidInput(m)) => Err(m),
    }
}

/// The `tol` of IPOPT options (1e-8 when absent).
pub(crate) fn bnlp_tol(o: &IpoptOptions) -> f64 {
    o.num
        .iter()
        .rev()
        .find(|(k, _)| k == "tol")
        .map_or(1e-8, |(_, v)| *v)
}
