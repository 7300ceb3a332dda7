//! Assembly and LU factorization of the generalized Jacobian `H = A + Σ_c J_cᵀ G_c J_c` of
//! the step's equations when some `G_c` is not symmetric (the Coulomb kinds).
//!
//! Small problems use a dense LU with partial pivoting (nalgebra). Larger ones use a
//! sparse LU without pivoting on the Cholesky structure of an AMD ordering (`sparse_lu.rs`)
//! and, where one of its pivots is not safely nonzero, faer's sparse LU (COLAMD column
//! ordering, partial pivoting by rows), measured at about three times the cost. The pattern of `H` is
//! that of `A` united with, for every constraint, the full `k × k` block over the `k`
//! velocities its Jacobian touches; the symbolic analysis depends only on that pattern, so
//! it is kept in a [`SemismoothWorkspace`] and reused by every Newton iteration and by
//! later problems with the same pattern (the time steps of a simulation while its contact
//! graph is unchanged).

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::sparse::linalg::lu::{factorize_symbolic_lu, LuRef, NumericLu, SymbolicLu};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Par};
use nalgebra::{DMatrix, Dyn, LU};

use super::hessian::{add_constraint_blocks, block, BlockScratch};
use super::pattern::{position, union_pattern};
use super::problem::{RegularizedContactProblem, SOLVER};
use super::sparse_lu::StaticLu;
use crate::status::SolverError;

/// The sparse LU analysis of one Jacobian pattern (full CSC, rows sorted per column).
pub(crate) struct LuAnalysis {
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    /// The LU without pivoting on the Cholesky structure (tried first).
    static_lu: StaticLu,
    /// faer's LU with partial pivoting, analysed where a static pivot first fails.
    pivoted: Option<PivotedLu>,
    /// Which factorization the last `factor` left: `true` the static one.
    static_ready: bool,
    /// Where the last problem's entries land in the pattern, and what they were computed
    /// for (the pattern of `A` and each constraint's support), so that a problem with the
    /// same structure reuses them without a search.
    positions: EntryPositions,
}

/// Position in the Jacobian's values of each stored entry of `A` (in `A`'s CSC order) and,
/// per constraint, of `H[support[a]][support[b]]` at `a·k + b`; with the structure they
/// belong to.
#[derive(Default)]
struct EntryPositions {
    a_ptr: Vec<usize>,
    a_idx: Vec<usize>,
    /// Concatenated supports, and where each constraint's starts (one more than there
    /// are constraints).
    supports: Vec<usize>,
    support_start: Vec<usize>,
    a_pos: Vec<usize>,
    con_pos: Vec<Vec<usize>>,
}

impl EntryPositions {
    /// Whether these positions were computed for the structure of `p`.
    fn fit(&self, p: &RegularizedContactProblem) -> bool {
        self.a_ptr == p.a.ptr
            && self.a_idx == p.a.idx
            && self.support_start.len() == p.cons.len() + 1
            && p.cons.iter().enumerate().all(|(ci, c)| {
                self.supports[self.support_start[ci]..self.support_start[ci + 1]] == c.support[..]
            })
    }

    /// Positions of the entries of `p` in the pattern `(col_ptr, row_idx)`.
    fn new(
        p: &RegularizedContactProblem,
        col_ptr: &[usize],
        row_idx: &[usize],
    ) -> Result<Self, SolverError> {
        let pos = |i: usize, j: usize| -> Result<usize, SolverError> {
            position(col_ptr, row_idx, i, j).ok_or_else(|| SolverError::Failed {
                solver: SOLVER,
                reason: format!("internal: Jacobian pattern lacks ({i}, {j})"),
            })
        };
        let n = p.n;
        let mut a_pos = Vec::with_capacity(p.a.idx.len());
        for j in 0..n {
            for k in p.a.ptr[j]..p.a.ptr[j + 1] {
                a_pos.push(pos(p.a.idx[k], j)?);
            }
        }
        let mut con_pos = Vec::with_capacity(p.cons.len());
        let mut supports = Vec::new();
        let mut support_start = Vec::with_capacity(p.cons.len() + 1);
        support_start.push(0);
        for c in &p.cons {
            let k = c.support.len();
            let mut v = Vec::with_capacity(k * k);
            for &ja in &c.support {
                for &jb in &c.support {
                    v.push(pos(ja, jb)?);
                }
            }
            con_pos.push(v);
            supports.extend_from_slice(&c.support);
            support_start.push(supports.len());
        }
        Ok(Self {
            a_ptr: p.a.ptr.clone(),
            a_idx: p.a.idx.clone(),
            supports,
            support_start,
            a_pos,
            con_pos,
        })
    }
}

/// faer's sparse LU with partial pivoting: its symbolic analysis, numeric factors and
/// workspace.
pub(crate) struct PivotedLu {
    symbolic: SymbolicLu<usize>,
    numeric: NumericLu<usize, f64>,
    mem: MemBuffer,
}

impl PivotedLu {
    fn new(n: usize, col_ptr: &[usize], row_idx: &[usize]) -> Result<Self, SolverError> {
        let failed = |reason: String| SolverError::Failed {
            solver: SOLVER,
            reason,
        };
        let sym = SymbolicSparseColMatRef::new_checked(n, n, col_ptr, None, row_idx);
        let symbolic = factorize_symbolic_lu(sym, Default::default())
            .map_err(|e| failed(format!("symbolic LU factorization of the Jacobian: {e:?}")))?;
        let req = StackReq::or(
            symbolic.factorize_numeric_lu_scratch::<f64>(Par::Seq, Default::default()),
            symbolic.solve_in_place_scratch::<f64>(1, Par::Seq),
        );
        let mem = MemBuffer::try_new(req)
            .map_err(|_| failed("out of memory for the sparse LU workspace".into()))?;
        Ok(Self {
            symbolic,
            numeric: NumericLu::new(),
            mem,
        })
    }
}

/// What [`solve_semismooth`](super::solve_semismooth) keeps between solves: the symbolic
/// sparse LU analysis of the last Jacobian pattern, reused while the pattern (the mass
/// matrix and which velocities each constraint couples) is unchanged. Cloning gives an
/// empty workspace (the analysis is a cache).
#[derive(Default)]
pub struct SemismoothWorkspace {
    analysis: Option<LuAnalysis>,
    /// Symbolic analyses computed (a new pattern) and reused (the same pattern), over the
    /// workspace's life.
    analyses: (usize, usize),
}

impl SemismoothWorkspace {
    /// `(computed, reused)`: how many sparse solves needed a new symbolic LU analysis and
    /// how many reused the kept one.
    pub fn symbolic_analyses(&self) -> (usize, usize) {
        self.analyses
    }

    /// The pattern of the Jacobian of `p` and where its entries land; the symbolic
    /// analysis is redone only when the pattern differs from the kept one.
    fn analyze(&mut self, p: &RegularizedContactProblem) -> Result<(), SolverError> {
        let n = p.n;
        let supports = p.cons.iter().map(|c| c.support.as_slice());
        let (col_ptr, row_idx) = union_pattern(n, &p.a, supports, false);
        let positions = EntryPositions::new(p, &col_ptr, &row_idx)?;
        match self.analysis.as_mut() {
            Some(a) if a.col_ptr == col_ptr && a.row_idx == row_idx => {
                self.analyses.1 += 1;
                a.positions = positions;
            }
            _ => {
                let static_lu = StaticLu::new(n, &col_ptr, &row_idx)?;
                self.analysis = Some(LuAnalysis {
                    col_ptr,
                    row_idx,
                    static_lu,
                    pivoted: None,
                    static_ready: false,
                    positions,
                });
                self.analyses.0 += 1;
            }
        }
        Ok(())
    }
}

impl Clone for SemismoothWorkspace {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl std::fmt::Debug for SemismoothWorkspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SemismoothWorkspace")
            .field(
                "pattern_nnz",
                &self.analysis.as_ref().map(|a| a.row_idx.len()),
            )
            .field("symbolic_analyses", &self.analyses)
            .finish()
    }
}

/// Factorization of `H` for one solve.
pub(crate) enum JacobianSolver<'w> {
    Dense {
        a: DMatrix<f64>,
        lu: Option<LU<f64, Dyn, Dyn>>,
    },
    Sparse {
        analysis: &'w mut LuAnalysis,
        values: Vec<f64>,
        ready: bool,
    },
}

impl<'w> JacobianSolver<'w> {
    pub(crate) fn new(
        p: &RegularizedContactProblem,
        dense_threshold: usize,
        ws: &'w mut SemismoothWorkspace,
    ) -> Result<Self, SolverError> {
        if p.n <= dense_threshold {
            return Ok(JacobianSolver::Dense {
                a: p.mass_dense(),
                lu: None,
            });
        }
        if ws.analysis.as_ref().is_some_and(|a| a.positions.fit(p)) {
            ws.analyses.1 += 1;
        } else {
            ws.analyze(p)?;
        }
        let analysis = ws.analysis.as_mut().ok_or_else(|| SolverError::Failed {
            solver: SOLVER,
            reason: "internal: LU analysis not stored".into(),
        })?;
        let values = vec![0.0; analysis.row_idx.len()];
        Ok(JacobianSolver::Sparse {
            analysis,
            values,
            ready: false,
        })
    }

    /// Assembles `H = A + Σ_c J_cᵀ G_c J_c` and factors it; `false` when the factorization
    /// finds `H` singular. `g` holds each constraint's `G_c` (row-major) at `g_off[c]`;
    /// constraints with `active[c] == false` have `G_c = 0`.
    pub(crate) fn factor(
        &mut self,
        p: &RegularizedContactProblem,
        g: &[f64],
        g_off: &[usize],
        active: &[bool],
        s: &mut BlockScratch,
    ) -> bool {
        match self {
            JacobianSolver::Dense { a, lu } => {
                let h = add_constraint_blocks(a.clone(), p, g, g_off, active, s);
                let f = h.lu();
                let ok = f.is_invertible();
                *lu = Some(f);
                ok
            }
            JacobianSolver::Sparse {
                analysis,
                values,
                ready,
            } => {
                *ready = false;
                values.fill(0.0);
                let EntryPositions { a_pos, con_pos, .. } = &analysis.positions;
                for (q, &x) in a_pos.iter().zip(&p.a.val) {
                    values[*q] += x;
                }
                for (ci, c) in p.cons.iter().enumerate() {
                    if !active[ci] {
                        continue;
                    }
                    let k = c.support.len();
                    block(c.rows, k, &c.jd, &g[g_off[ci]..], s);
                    for (q, &x) in con_pos[ci].iter().zip(&s.m[..k * k]) {
                        values[*q] += x;
                    }
                }
                let n = p.n;
                let LuAnalysis {
                    col_ptr,
                    row_idx,
                    static_lu,
                    pivoted,
                    static_ready,
                    ..
                } = &mut **analysis;
                *static_ready = static_lu.factor(col_ptr, row_idx, values);
                if *static_ready {
                    *ready = true;
                    return true;
                }
                if pivoted.is_none() {
                    *pivoted = PivotedLu::new(n, col_ptr, row_idx).ok();
                }
                let Some(lu) = pivoted else {
                    return false;
                };
                let sym = SymbolicSparseColMatRef::new_checked(n, n, col_ptr, None, row_idx);
                let mat = SparseColMatRef::new(sym, values);
                *ready = lu
                    .symbolic
                    .factorize_numeric_lu(
                        &mut lu.numeric,
                        mat,
                        Par::Seq,
                        MemStack::new(&mut lu.mem),
                        Default::default(),
                    )
                    .is_ok();
                *ready
            }
        }
    }

    /// Solves `H x = rhs` in place with the last factorization.
    pub(crate) fn solve(&mut self, rhs: &mut [f64]) -> Result<(), SolverError> {
        let missing = || SolverError::Failed {
            solver: SOLVER,
            reason: "internal: Jacobian solve before factorization".into(),
        };
        match self {
            JacobianSolver::Dense { lu, .. } => {
                let lu = lu.as_ref().ok_or_else(missing)?;
                let mut x = nalgebra::DVectorViewMut::from_slice(rhs, rhs.len());
                if !lu.solve_mut(&mut x) {
                    rhs.fill(f64::NAN);
                }
                Ok(())
            }
            JacobianSolver::Sparse {
                analysis,
                ready,
                values,
                ..
            } => {
                if !*ready {
                    return Err(missing());
                }
                if analysis.static_ready {
                    // One step of iterative refinement against H's stored values.
                    let b = rhs.to_vec();
                    analysis.static_lu.solve(rhs);
                    let mut r = b;
                    for j in 0..rhs.len() {
                        let xj = rhs[j];
                        for q in analysis.col_ptr[j]..analysis.col_ptr[j + 1] {
                            r[analysis.row_idx[q]] -= values[q] * xj;
                        }
                    }
                    analysis.static_lu.solve(&mut r);
                    for (x, c) in rhs.iter_mut().zip(&r) {
                        *x += c;
                    }
                    return Ok(());
                }
                let n = rhs.len();
                let Some(piv) = analysis.pivoted.as_mut() else {
                    return Err(missing());
                };
                let lu = LuRef::<usize, f64>::new_unchecked(&piv.symbolic, &piv.numeric);
                lu.solve_in_place_with_conj(
                    Conj::No,
                    MatMut::from_column_major_slice_mut(rhs, n, 1),
                    Par::Seq,
                    MemStack::new(&mut piv.mem),
                );
                Ok(())
            }
        }
    }
}
