//! The Scholtes relaxation of an MPCC (Scholtes 2001): the smooth NLP with the sides' sign
//! bounds and one row G_i(x) H_i(x) ≤ σ per pair, the generic phase I of
//! [`super::active_set::solve`].

use super::branch::BranchNlp;
use super::{Mpcc, Pair};
use crate::nlp::ipopt::Nlp;

/// The relaxed NLP: the rows of the MPCC's NLP, then one row G_i H_i ≤ σ per pair.
pub struct ScholtesNlp<'a> {
    base: BranchNlp<'a>,
    inner: &'a dyn Nlp,
    pairs: Vec<Pair>,
    /// The relaxation σ (> 0).
    pub sigma: f64,
    m: usize,
    n_jac: usize,
    n_hess: usize,
}

impl<'a> ScholtesNlp<'a> {
    /// The relaxation of `mpcc` at σ.
    pub fn new(mpcc: &Mpcc<'a>, sigma: f64) -> Result<Self, String> {
        Ok(Self {
            base: BranchNlp::new(mpcc, None, &[])?,
            inner: mpcc.nlp,
            pairs: mpcc.pairs.clone(),
            sigma,
            m: mpcc.nlp.num_cons(),
            n_jac: mpcc.nlp.jacobian_structure().len(),
            n_hess: mpcc.nlp.hessian_structure().len(),
        })
    }

    /// `x` clamped into the sides' sign bounds and the NLP's bounds.
    pub fn clamp(&self, x: &[f64]) -> Vec<f64> {
        self.base.clamp(x)
    }
}

impl Nlp for ScholtesNlp<'_> {
    fn num_vars(&self) -> usize {
        self.inner.num_vars()
    }
    fn num_cons(&self) -> usize {
        self.m + self.pairs.len()
    }
    fn var_bounds(&self, lo: &mut [f64], hi: &mut [f64]) {
        self.base.var_bounds(lo, hi)
    }
    fn con_bounds(&self, lo: &mut [f64], hi: &mut [f64]) {
        self.inner.con_bounds(&mut lo[..self.m], &mut hi[..self.m]);
        lo[self.m..].fill(-1e20);
        hi[self.m..].fill(self.sigma);
    }
    fn jacobian_structure(&self) -> Vec<(usize, usize)> {
        let mut s = self.inner.jacobian_structure();
        for (i, p) in self.pairs.iter().enumerate() {
            s.push((self.m + i, p.g.var));
            s.push((self.m + i, p.h.var));
        }
        s
    }
    fn hessian_structure(&self) -> Vec<(usize, usize)> {
        let mut s = self.inner.hessian_structure();
        for p in &self.pairs {
            s.push((p.g.var.max(p.h.var), p.g.var.min(p.h.var)));
        }
        s
    }
    fn objective(&self, x: &[f64]) -> Option<f64> {
        self.inner.objective(x)
    }
    fn gradient(&self, x: &[f64], grad: &mut [f64]) -> bool {
        self.inner.gradient(x, grad)
    }
    fn constraints(&self, x: &[f64], g: &mut [f64]) -> bool {
        if !self.inner.constraints(x, &mut g[..self.m]) {
            return false;
        }
        for (i, p) in self.pairs.iter().enumerate() {
            g[self.m + i] = p.g.value(x) * p.h.value(x);
        }
        true
    }
    fn jacobian_values(&self, x: &[f64], vals: &mut [f64]) -> bool {
        if !self.inner.jacobian_values(x, &mut vals[..self.n_jac]) {
            return false;
        }
        for (i, p) in self.pairs.iter().enumerate() {
            vals[self.n_jac + 2 * i] = p.g.sign * p.h.value(x);
            vals[self.n_jac + 2 * i + 1] = p.h.sign * p.g.value(x);
        }
        true
    }
    fn hessian_values(&self, x: &[f64], obj_factor: f64, lambda: &[f64], vals: &mut [f64]) -> bool {
        if !self
            .inner
            .hessian_values(x, obj_factor, &lambda[..self.m], &mut vals[..self.n_hess])
        {
            return false;
        }
        for (i, p) in self.pairs.iter().enumerate() {
            vals[self.n_hess + i] = lambda[self.m + i] * p.g.sign * p.h.sign;
        }
        true
    }
}
