//! Assembly and Cholesky factorization of the Newton Hessian `H = A + Σ_c J_cᵀ G_c J_c`.
//!
//! Small problems use a dense Cholesky (nalgebra). Larger ones use faer's sparse
//! Cholesky: the pattern of `H` — the pattern of `A` united with, for every constraint,
//! the full `k × k` block over the `k` velocities its Jacobian touches, kept even where
//! `G_c = 0` — does not change between Newton iterations, so the fill-reducing ordering
//! (AMD) and the symbolic factorization are computed once per problem and only the
//! numeric factorization is repeated.

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::sparse::linalg::cholesky::LltRef;
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Par, Side};
use nalgebra::{Cholesky, DMatrix, Dyn};

use super::pattern::SparsePattern;
use super::problem::{RegularizedContactProblem, SOLVER};
use crate::status::SolverError;

/// `h + Σ_c J_cᵀ G_c J_c` over the active constraints, dense (`G_c` row-major at
/// `g_off[c]` in `g`).
pub(crate) fn add_constraint_blocks(
    mut h: DMatrix<f64>,
    p: &RegularizedContactProblem,
    g: &[f64],
    g_off: &[usize],
    active: &[bool],
    s: &mut BlockScratch,
) -> DMatrix<f64> {
    for (ci, c) in p.cons.iter().enumerate() {
        if !active[ci] {
            continue;
        }
        let k = c.support.len();
        block(c.rows, k, &c.jd, &g[g_off[ci]..], s);
        for (a, &ja) in c.support.iter().enumerate() {
            for (b, &jb) in c.support.iter().enumerate() {
                h[(ja, jb)] += s.m[a * k + b];
            }
        }
    }
    h
}

/// Factorization workspace for one solve.
pub(crate) enum HessianSolver<'p> {
    Dense {
        a: DMatrix<f64>,
        chol: Option<Cholesky<f64, Dyn>>,
    },
    Sparse {
        pat: &'p SparsePattern,
        h: Vec<f64>,
        l: Vec<f64>,
        mem: MemBuffer,
        ready: bool,
    },
}

/// Scratch for the per-constraint block `J_cᵀ G_c J_c`.
#[derive(Default)]
pub(crate) struct BlockScratch {
    pub(crate) t: Vec<f64>,
    pub(crate) m: Vec<f64>,
}

impl<'p> HessianSolver<'p> {
    pub(crate) fn new(
        p: &'p RegularizedContactProblem,
        dense_threshold: usize,
    ) -> Result<Self, SolverError> {
        if p.n <= dense_threshold {
            return Ok(HessianSolver::Dense {
                a: p.mass_dense(),
                chol: None,
            });
        }
        let pat = match p.pattern.get() {
            Some(pat) => pat,
            None => {
                let built =
                    SparsePattern::new(p.n, &p.a, p.cons.iter().map(|c| c.support.as_slice()))
                        .map_err(|reason| SolverError::Failed {
                            solver: SOLVER,
                            reason,
                        })?;
                // Another thread may have set it meanwhile; either value is the same.
                let _ = p.pattern.set(built);
                p.pattern.get().ok_or_else(|| SolverError::Failed {
                    solver: SOLVER,
                    reason: "internal: Hessian pattern not stored".into(),
                })?
            }
        };
        let req = StackReq::or(
            pat.symbolic
                .factorize_numeric_llt_scratch::<f64>(Par::Seq, Default::default()),
            pat.symbolic.solve_in_place_scratch::<f64>(1, Par::Seq),
        );
        let mem = MemBuffer::try_new(req).map_err(|_| SolverError::Failed {
            solver: SOLVER,
            reason: "out of memory for the sparse Cholesky workspace".into(),
        })?;
        Ok(HessianSolver::Sparse {
            pat,
            h: vec![0.0; pat.nnz()],
            l: vec![0.0; pat.factor_nnz()],
            mem,
            ready: false,
        })
    }

    /// Assembles `H = A + Σ_c J_cᵀ G_c J_c` and factors it. `g` holds each constraint's
    /// `G_c` (row-major) at `g_off[c]`; constraints with `active[c] == false` have `G_c = 0`.
    pub(crate) fn factor(
        &mut self,
        p: &RegularizedContactProblem,
        g: &[f64],
        g_off: &[usize],
        active: &[bool],
        s: &mut BlockScratch,
    ) -> Result<(), SolverError> {
        match self {
            HessianSolver::Dense { a, chol } => {
                let h = add_constraint_blocks(a.clone(), p, g, g_off, active, s);
                *chol = Some(Cholesky::new(h).ok_or_else(not_pd)?);
                Ok(())
            }
            HessianSolver::Sparse {
                pat,
                h,
                l,
                mem,
                ready,
            } => {
                *ready = false;
                h.copy_from_slice(&pat.base);
                for (ci, c) in p.cons.iter().enumerate() {
                    if !active[ci] {
                        continue;
                    }
                    let k = c.support.len();
                    block(c.rows, k, &c.jd, &g[g_off[ci]..], s);
                    let mut q = 0;
                    for b in 0..k {
                        for a_ in b..k {
                            h[pat.con_pos[ci][q]] += s.m[a_ * k + b];
                            q += 1;
                        }
                    }
                }
                let n = p.n;
                let sym =
                    SymbolicSparseColMatRef::new_checked(n, n, &pat.col_ptr, None, &pat.row_idx);
                let mat = SparseColMatRef::new(sym, h);
                pat.symbolic
                    .factorize_numeric_llt::<f64>(
                        l,
                        mat,
                        Side::Lower,
                        Default::default(),
                        Par::Seq,
                        MemStack::new(mem),
                        Default::default(),
                    )
                    .map_err(|_| not_pd())?;
                *ready = true;
                Ok(())
            }
        }
    }

    /// Solves `H x = rhs` in place with the last factorization.
    pub(crate) fn solve(&mut self, rhs: &mut [f64]) -> Result<(), SolverError> {
        let missing = || SolverError::Failed {
            solver: SOLVER,
            reason: "internal: Hessian solve before factorization".into(),
        };
        match self {
            HessianSolver::Dense { chol, .. } => {
                let chol = chol.as_ref().ok_or_else(missing)?;
                let mut x = nalgebra::DVectorViewMut::from_slice(rhs, rhs.len());
                chol.solve_mut(&mut x);
                Ok(())
            }
            HessianSolver::Sparse {
                pat, l, mem, ready, ..
            } => {
                if !*ready {
                    return Err(missing());
                }
                let n = rhs.len();
                let llt = LltRef::<usize, f64>::new(&pat.symbolic, l);
                llt.solve_in_place_with_conj(
                    Conj::No,
                    MatMut::from_column_major_slice_mut(rhs, n, 1),
                    Par::Seq,
                    MemStack::new(mem),
                );
                Ok(())
            }
        }
    }
}

fn not_pd() -> SolverError {
    SolverError::Failed {
        solver: SOLVER,
        reason: "Cholesky factorization of the Hessian A + JᵀGJ failed: A is not positive \
                 definite"
            .into(),
    }
}

/// `s.m = J_cᵀ G_c J_c` (`k × k`, row-major) for a `rows × k` row-major `jd` and a
/// `rows × rows` row-major `g`.
pub(crate) fn block(rows: usize, k: usize, jd: &[f64], g: &[f64], s: &mut BlockScratch) {
    s.t.clear();
    s.t.resize(rows * k, 0.0);
    s.m.clear();
    s.m.resize(k * k, 0.0);
    // t = G J
    for i in 0..rows {
        for j in 0..rows {
            let gij = g[i * rows + j];
            if gij == 0.0 {
                continue;
            }
            for a in 0..k {
                s.t[i * k + a] += gij * jd[j * k + a];
            }
        }
    }
    // m = Jᵀ t
    for i in 0..rows {
        for a in 0..k {
            let ja = jd[i * k + a];
            if ja == 0.0 {
                continue;
            }
            for b in 0..k {
                s.m[a * k + b] += ja * s.t[i * k + b];
            }
        }
    }
}
