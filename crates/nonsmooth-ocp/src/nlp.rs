//! Block-structured NLPs with exact sparse derivatives by forward-mode dual numbers.
//!
//! Every objective term and constraint group is a small dense function of a few variables
//! (a [`BlockFn`]); the global Jacobian and the Hessian of the Lagrangian are the sums of the
//! per-block dense derivatives scattered into the global index space. First derivatives use
//! dual numbers (`Dual64`), second derivatives hyper-dual numbers (`HyperDual64`, one
//! evaluation per lower-triangular pair; Fike & Alonso 2011), so the derivatives are exact to
//! rounding. The blocks of a large NLP (at least `PARALLEL_MIN_ENTRIES` Jacobian or Hessian
//! entries) are evaluated on rayon's thread pool, each into its own slice of the output, so
//! the values are the same bits with any number of threads (`RAYON_NUM_THREADS`), and the
//! pool's CPU time is charged to the calling thread's clock
//! ([`crate::ipopt::thread_cpu_seconds`]).

use num_dual::{Dual2SVec64, Dual64, DualNum, HyperDual64};
use rayon::prelude::*;

use crate::ipopt::{add_offloaded_cpu, own_thread_cpu_seconds, Nlp};
use crate::OcpError;

/// Scalar type usable by block functions (f64, dual and hyper-dual numbers).
pub trait Real: DualNum<Primitive = f64> + Copy + nalgebra::RealField {}

/// Largest Hessian group of [`BlockFn::hess_groups`] (the size of the vector-dual numbers).
pub const MAX_GROUP: usize = 16;
impl<T: DualNum<Primitive = f64> + Copy + nalgebra::RealField> Real for T {}

/// A small smooth vector function out = F(x) of a block's variables.
pub trait BlockFn {
    /// Evaluates the block at `x` (length = the block's variable count) into `out`.
    fn eval<T: Real>(&self, x: &[T], out: &mut [T]);
    /// Evaluation used for the second derivative ∂²F/∂x_i∂x_j (hyper-dual seeds on x_i and
    /// x_j): only that mixed second-order part of `out` must be right, so a block may drop
    /// terms that are affine in, or independent of, x_i or x_j. Defaults to [`BlockFn::eval`].
    fn eval_hess<T: Real>(&self, x: &[T], out: &mut [T], _i: usize, _j: usize) {
        self.eval(x, out)
    }
    /// True if the block is affine (its Hessian is skipped).
    fn is_linear(&self) -> bool {
        false
    }
    /// Evaluation used for the Jacobian column of local variable `i` (only the derivative
    /// with respect to variable `i` of the result is used, the value may differ from
    /// [`BlockFn::eval`]). Default: [`BlockFn::eval`]; a block can skip the parts that do not
    /// depend on variable `i`.
    fn eval_jac<T: Real>(&self, x: &[T], out: &mut [T], _i: usize) {
        self.eval(x, out)
    }
    /// Hessian groups: lists of at most [`MAX_GROUP`] local variable indices such that the
    /// second derivatives of the block are the sum over groups of the second derivatives of
    /// [`BlockFn::eval_group`] with respect to the group's variables. A grouped block's
    /// Hessian is computed with one second-order vector-dual evaluation per group instead of
    /// one hyper-dual evaluation per variable pair. `None` (default): pairwise.
    fn hess_groups(&self) -> Option<Vec<Vec<usize>>> {
        None
    }
    /// The part of the block attributed to Hessian group `group` (see
    /// [`BlockFn::hess_groups`]). Default: [`BlockFn::eval`].
    fn eval_group<T: Real>(&self, x: &[T], out: &mut [T], _group: usize) {
        self.eval(x, out)
    }
    /// The weighted sum Σ_k w_k F_k of the outputs of [`BlockFn::eval_group`] (w: the
    /// block's constraint multipliers, or the objective factor), when the block can form it
    /// more cheaply than its outputs one by one: the Hessian of the Lagrangian needs only
    /// this scalar, so one second-order vector-dual number replaces n_out of them. Default:
    /// `None` (the caller weights the outputs of [`BlockFn::eval_group`]).
    fn eval_group_weighted<T: Real>(&self, _x: &[T], _w: &[f64], _group: usize) -> Option<T> {
        None
    }
    /// Whether ∂²F/∂x_i∂x_j may be nonzero (i ≥ j, block-local indices); structurally zero
    /// pairs are left out of the Hessian.
    fn hess_pair(&self, _i: usize, _j: usize) -> bool {
        true
    }
}

/// One block: a function, its global variable indices and its rows (None for objective terms).
#[derive(Debug, Clone)]
pub struct Block<K> {
    /// The function.
    pub kind: K,
    /// Global variable indices (distinct).
    pub vars: Vec<usize>,
    /// Number of outputs.
    pub n_out: usize,
    /// First constraint row, or `None` for an objective term (then `n_out` = 1).
    pub row: Option<usize>,
}

/// An NLP assembled from blocks; implements [`Nlp`] for IPOPT.
#[derive(Debug, Clone)]
pub struct BlockNlp<K> {
    /// Variable lower bounds.
    pub xl: Vec<f64>,
    /// Variable upper bounds.
    pub xu: Vec<f64>,
    /// Constraint lower bounds.
    pub gl: Vec<f64>,
    /// Constraint upper bounds.
    pub gu: Vec<f64>,
    /// The blocks.
    pub blocks: Vec<Block<K>>,
}

impl<K> Default for BlockNlp<K> {
    fn default() -> Self {
        Self {
            xl: vec![],
            xu: vec![],
            gl: vec![],
            gu: vec![],
            blocks: vec![],
        }
    }
}

impl<K: BlockFn> BlockNlp<K> {
    /// Adds `count` variables with the given bounds; returns the first index.
    pub fn add_vars(&mut self, count: usize, lo: f64, hi: f64) -> usize {
        let start = self.xl.len();
        self.xl.extend(std::iter::repeat_n(lo, count));
        self.xu.extend(std::iter::repeat_n(hi, count));
        start
    }

    /// Adds a constraint block lo ≤ `F(x[vars])` ≤ hi; returns its first row.
    pub fn add_constraint(
        &mut self,
        kind: K,
        vars: Vec<usize>,
        lo: &[f64],
        hi: &[f64],
    ) -> Result<usize, OcpError> {
        self.check_vars(&vars)?;
        if lo.len() != hi.len() {
            return Err(OcpError::InvalidInput(
                "constraint bound lengths differ".into(),
            ));
        }
        let row = self.gl.len();
        self.gl.extend_from_slice(lo);
        self.gu.extend_from_slice(hi);
        self.blocks.push(Block {
            kind,
            vars,
            n_out: lo.len(),
            row: Some(row),
        });
        Ok(row)
    }

    /// Adds an objective term `F(x[vars])` (scalar).
    pub fn add_objective(&mut self, kind: K, vars: Vec<usize>) -> Result<(), OcpError> {
        self.check_vars(&vars)?;
        self.blocks.push(Block {
            kind,
            vars,
            n_out: 1,
            row: None,
        });
        Ok(())
    }

    fn check_vars(&self, vars: &[usize]) -> Result<(), OcpError> {
        for (i, v) in vars.iter().enumerate() {
            if *v >= self.xl.len() || vars[..i].contains(v) {
                return Err(OcpError::InvalidInput(format!(
                    "block variable {v} out of range or repeated"
                )));
            }
        }
        Ok(())
    }

    /// Hessian entries of a grouped block (see [`BlockFn::hess_groups`]) into `vals`, in the
    /// order of the Hessian structure.
    fn grouped_hessian<const N: usize>(
        b: &Block<K>,
        x: &[f64],
        w: &[f64],
        groups: &[Vec<usize>],
        skip: bool,
        vals: &mut [f64],
    ) {
        let nv = b.vars.len();
        let mut pos = vec![usize::MAX; nv * nv];
        let mut end = 0;
        for i in 0..nv {
            for j in (0..=i).filter(|&j| b.kind.hess_pair(i, j)) {
                pos[i * nv + j] = end;
                vals[end] = 0.0;
                end += 1;
            }
        }
        if skip {
            return;
        }
        let base: Vec<Dual2SVec64<N>> = Self::gather(x, &b.vars);
        let mut out = vec![Dual2SVec64::<N>::from(0.0); b.n_out];
        for (gi, g) in groups.iter().enumerate() {
            let mut xb = base.clone();
            for (a, &v) in g.iter().enumerate() {
                xb[v] = xb[v].derivative(a);
            }
            let mut h = [[0.0; N]; N];
            let mut add = |o: &Dual2SVec64<N>, wr: f64| {
                if let Some(m) = &o.v2.0 {
                    for (r, row) in h.iter_mut().enumerate().take(g.len()) {
                        for (c, e) in row.iter_mut().enumerate().take(r + 1) {
                            *e += wr * m[(r, c)];
                        }
                    }
                }
            };
            if let Some(o) = b.kind.eval_group_weighted(&xb, w, gi) {
                add(&o, 1.0);
            } else {
                b.kind.eval_group(&xb, &mut out, gi);
                for (o, wr) in out.iter().zip(w) {
                    add(o, *wr);
                }
            }
            for a in 0..g.len() {
                for c in 0..=a {
                    let (i, j) = (g[a].max(g[c]), g[a].min(g[c]));
                    let p = pos[i * nv + j];
                    if p != usize::MAX {
                        vals[p] += h[a][c];
                    }
                }
            }
        }
    }

    /// The Jacobian entries of constraint block `b` (row-major, `n_out × vars`) into `out`.
    fn block_jacobian(b: &Block<K>, x: &[f64], out: &mut [f64]) {
        let nv = b.vars.len();
        let mut xb: Vec<Dual64> = Self::gather(x, &b.vars);
        let mut res = vec![Dual64::from(0.0); b.n_out];
        for i in 0..nv {
            xb[i].eps = 1.0;
            b.kind.eval_jac(&xb, &mut res, i);
            xb[i].eps = 0.0;
            for (r, o) in res.iter().enumerate() {
                out[r * nv + i] = o.eps;
            }
        }
    }

    /// Number of Hessian entries of block `b` (its structurally nonzero lower-triangle pairs,
    /// in the order of [`Nlp::hessian_structure`]).
    fn hessian_len(b: &Block<K>) -> usize {
        (0..b.vars.len())
            .map(|i| (0..=i).filter(|&j| b.kind.hess_pair(i, j)).count())
            .sum()
    }

    /// The Hessian entries of block `b`, its outputs weighted by `w` (the block's
    /// constraint multipliers or the objective factor), into `out`.
    fn block_hessian(b: &Block<K>, x: &[f64], w: &[f64], out: &mut [f64]) {
        let skip = w.iter().all(|w| *w == 0.0);
        if let Some(groups) = b.kind.hess_groups() {
            let largest = groups.iter().map(Vec::len).max().unwrap_or(0);
            if largest <= 4 {
                Self::grouped_hessian::<4>(b, x, w, &groups, skip, out);
                return;
            } else if largest <= 8 {
                Self::grouped_hessian::<8>(b, x, w, &groups, skip, out);
                return;
            } else if largest <= MAX_GROUP {
                Self::grouped_hessian::<MAX_GROUP>(b, x, w, &groups, skip, out);
                return;
            }
        }
        let nv = b.vars.len();
        let mut k = 0;
        let mut xb: Vec<HyperDual64> = Self::gather(x, &b.vars);
        let mut res = vec![HyperDual64::from(0.0); b.n_out];
        for i in 0..nv {
            for j in (0..=i).filter(|&j| b.kind.hess_pair(i, j)) {
                if skip {
                    out[k] = 0.0;
                    k += 1;
                    continue;
                }
                xb[i].eps1 = 1.0;
                xb[j].eps2 = 1.0;
                b.kind.eval_hess(&xb, &mut res, i, j);
                xb[i].eps1 = 0.0;
                xb[j].eps2 = 0.0;
                out[k] = res.iter().zip(w).map(|(o, w)| o.eps1eps2 * w).sum();
                k += 1;
            }
        }
    }

    fn gather<T: Real>(x: &[f64], vars: &[usize]) -> Vec<T> {
        vars.iter().map(|&v| T::from(x[v])).collect()
    }

    /// Evaluates every block at `x` with plain floats: (objective, constraint values).
    pub fn eval_all(&self, x: &[f64]) -> (f64, Vec<f64>) {
        let mut g = vec![0.0; self.gl.len()];
        let mut f = 0.0;
        for b in &self.blocks {
            let xb: Vec<f64> = Self::gather(x, &b.vars);
            let mut out = vec![0.0; b.n_out];
            b.kind.eval(&xb, &mut out);
            match b.row {
                Some(r) => g[r..r + b.n_out].copy_from_slice(&out),
                None => f += out[0],
            }
        }
        (f, g)
    }
}

impl<K: BlockFn + Sync> Nlp for BlockNlp<K> {
    fn num_vars(&self) -> usize {
        self.xl.len()
    }
    fn num_cons(&self) -> usize {
        self.gl.len()
    }
    fn var_bounds(&self, lo: &mut [f64], hi: &mut [f64]) {
        lo.copy_from_slice(&self.xl);
        hi.copy_from_slice(&self.xu);
    }
    fn con_bounds(&self, lo: &mut [f64], hi: &mut [f64]) {
        lo.copy_from_slice(&self.gl);
        hi.copy_from_slice(&self.gu);
    }
    fn jacobian_structure(&self) -> Vec<(usize, usize)> {
        let mut s = vec![];
        for b in &self.blocks {
            if let Some(r) = b.row {
                for i in 0..b.n_out {
                    for &v in &b.vars {
                        s.push((r + i, v));
                    }
                }
            }
        }
        s
    }
    fn hessian_structure(&self) -> Vec<(usize, usize)> {
        let mut s = vec![];
        for b in self.blocks.iter().filter(|b| !b.kind.is_linear()) {
            for i in 0..b.vars.len() {
                for j in (0..=i).filter(|&j| b.kind.hess_pair(i, j)) {
                    let (a, c) = (b.vars[i], b.vars[j]);
                    s.push((a.max(c), a.min(c)));
                }
            }
        }
        s
    }
    fn objective(&self, x: &[f64]) -> Option<f64> {
        let mut f = 0.0;
        let mut out = [0.0];
        for b in self.blocks.iter().filter(|b| b.row.is_none()) {
            let xb: Vec<f64> = Self::gather(x, &b.vars);
            b.kind.eval(&xb, &mut out);
            f += out[0];
        }
        f.is_finite().then_some(f)
    }
    fn gradient(&self, x: &[f64], grad: &mut [f64]) -> bool {
        grad.iter_mut().for_each(|g| *g = 0.0);
        let mut out = [Dual64::from(0.0)];
        for b in self.blocks.iter().filter(|b| b.row.is_none()) {
            let mut xb: Vec<Dual64> = Self::gather(x, &b.vars);
            for i in 0..xb.len() {
                xb[i].eps = 1.0;
                b.kind.eval(&xb, &mut out);
                xb[i].eps = 0.0;
                grad[b.vars[i]] += out[0].eps;
            }
        }
        grad.iter().all(|g| g.is_finite())
    }
    fn constraints(&self, x: &[f64], g: &mut [f64]) -> bool {
        for b in &self.blocks {
            if let Some(r) = b.row {
                let xb: Vec<f64> = Self::gather(x, &b.vars);
                b.kind.eval(&xb, &mut g[r..r + b.n_out]);
            }
        }
        g.iter().all(|v| v.is_finite())
    }
    fn jacobian_values(&self, x: &[f64], vals: &mut [f64]) -> bool {
        let rows: Vec<&Block<K>> = self.blocks.iter().filter(|b| b.row.is_some()).collect();
        let chunks = split_into(vals, rows.iter().map(|b| b.vars.len() * b.n_out));
        for_each_block(&rows, chunks, |b, out| Self::block_jacobian(b, x, out));
        vals.iter().all(|v| v.is_finite())
    }
    fn hessian_values(&self, x: &[f64], obj_factor: f64, lambda: &[f64], vals: &mut [f64]) -> bool {
        let nonlinear: Vec<&Block<K>> =
            self.blocks.iter().filter(|b| !b.kind.is_linear()).collect();
        let chunks = split_into(vals, nonlinear.iter().map(|b| Self::hessian_len(b)));
        for_each_block(&nonlinear, chunks, |b, out| {
            let w: Vec<f64> = match b.row {
                Some(r) => lambda[r..r + b.n_out].to_vec(),
                None => vec![obj_factor],
            };
            Self::block_hessian(b, x, &w, out)
        });
        vals.iter().all(|v| v.is_finite())
    }
}

/// Below this many entries a derivative array is filled on the calling thread: the blocks of
/// small NLPs take microseconds, less than handing them to the thread pool.
const PARALLEL_MIN_ENTRIES: usize = 4096;

/// Splits `vals` into consecutive chunks of the given lengths (the blocks' shares of a
/// derivative array).
fn split_into(vals: &mut [f64], lens: impl Iterator<Item = usize>) -> Vec<&mut [f64]> {
    let mut chunks = vec![];
    let mut rest = vals;
    for n in lens {
        let (head, tail) = rest.split_at_mut(n);
        chunks.push(head);
        rest = tail;
    }
    chunks
}

/// Runs `f` on every block with its own chunk of the output, on the thread pool when the
/// output is large and the pool has more than one thread. Each block's entries are computed
/// by the same arithmetic either way, so the result does not depend on the number of
/// threads. The pool's CPU time is charged to the calling thread
/// ([`crate::ipopt::thread_cpu_seconds`]), so a solve's reported CPU time includes it.
fn for_each_block<K: Sync, F>(blocks: &[&Block<K>], chunks: Vec<&mut [f64]>, f: F)
where
    F: Fn(&Block<K>, &mut [f64]) + Sync,
{
    let entries: usize = chunks.iter().map(|c| c.len()).sum();
    if entries < PARALLEL_MIN_ENTRIES || rayon::current_num_threads() < 2 {
        for (b, out) in blocks.iter().zip(chunks) {
            f(b, out);
        }
        return;
    }
    // a few runs of consecutive blocks per thread, each timed once (the thread CPU clock is
    // a system call, too slow to read around every block)
    let mut work: Vec<(&Block<K>, &mut [f64])> = blocks.iter().copied().zip(chunks).collect();
    let run = work.len().div_ceil(4 * rayon::current_num_threads()).max(1);
    // a caller that is itself a pool thread may run some runs; its own clock counts those
    let caller = std::thread::current().id();
    let pool_cpu: f64 = work
        .par_chunks_mut(run)
        .map(|items| {
            let start = own_thread_cpu_seconds();
            for (b, out) in items.iter_mut() {
                f(b, out);
            }
            if std::thread::current().id() == caller {
                0.0
            } else {
                own_thread_cpu_seconds() - start
            }
        })
        .sum();
    add_offloaded_cpu(pool_cpu);
}
