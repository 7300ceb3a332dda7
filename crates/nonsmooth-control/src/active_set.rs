//! The QP stages of §6 in reduced (factored) form, solved from the previous call's active set
//! (the warm start of §4.6 applied to the QPs' KKT LCPs, as the paper's Fig. 19 timings do),
//! with Lemke on the dense KKT LCP as the cold start and the fallback.
//!
//! Every stage is a convex QP in the contact impulses x ≥ 0 (force units):
//!
//! ```text
//! min ½ xᵀ(FᵀF + ρI)x + lᵀx   s.t.  E x = e,  A x ≥ b,  x ≥ 0
//! ```
//!
//! with a thin factor `F` (p × nz, p ≤ the base DOF for Stage I, eqs 75–79: `H = Rᵀ M̃⁻¹ R =
//! FᵀF`; p = nu for Stage II, eq 102: `KᵀK`), so that the Hessian is never formed: a product
//! `Q x` costs O(p·nz). Its KKT conditions are the LCP
//!
//! ```text
//! 0 ≤ x ⟂ Q x + l − Eᵀν − Aᵀλ ≥ 0,   0 ≤ λ ⟂ A x − b ≥ 0,   E x = e
//! ```
//!
//! An *active set* `(S, W)` guesses which x are positive (S) and which rows of A hold with
//! equality (W). For that guess the KKT conditions are one linear system of size
//! |S| + rows(E) + |W| (the principal pivot of the KKT LCP on that basis):
//!
//! ```text
//! [ Q_SS   −E_Sᵀ  −A_WSᵀ ] [x_S]   [−l_S]
//! [ E_S      0      0    ] [ ν ] = [  e ]
//! [ A_WS     0      0    ] [λ_W]   [ b_W]
//! ```
//!
//! Duplicated or nearly duplicated contacts (rank-deficient N, the artificial contacts of
//! Fig. 19) make this system singular: Q_SS has rank ≤ p and duplicated rows of A are
//! dependent. It is therefore factorized with a proximal regularization (`+εI` on the primal
//! block, `−δI` on the multiplier block, ε and δ 1e-10 relative) and the regularization is
//! removed by iterative refinement against the unregularized system (proximal-point
//! iterations, which converge to a solution of the singular system when it is consistent).
//! The point is then checked: x_S ≥ 0, λ_W ≥ 0, the reduced gradient of every x outside S
//! ≥ 0 and every row of A outside W satisfied. A violated condition moves one index in or out
//! of (S, W) (Murty's least-index principal pivoting rule, the block form of the PPM of
//! Algorithm 2), up to an iteration cap. An accepted solution has its KKT residuals measured
//! on the unregularized problem (≤ 1e-8 relative, the acceptance test of the Lemke route);
//! anything else is reported to the caller, which falls back to Lemke and counts the
//! fallback.

use nalgebra::{DMatrix, DVector};
use nonsmooth_solvers::lcp::lcp_residuals;
use nonsmooth_solvers::{Residuals, SolveStatus};

/// Relative acceptance tolerance of a KKT point (that of the Lemke route,
/// [`crate::lcp::lemke_regularized`]).
pub(crate) const ACCEPT_TOL: f64 = 1e-8;

/// A convex QP `min ½xᵀ(FᵀF + ρI)x + lᵀx  s.t.  E x = e, A x ≥ b, x ≥ 0`.
pub(crate) struct ReducedQp {
    /// Thin factor F (p × nz) of the Hessian.
    pub fac: DMatrix<f64>,
    /// Diagonal term ρ ≥ 0.
    pub rho: f64,
    /// Linear term l (nz).
    pub lin: DVector<f64>,
    /// Equality rows E (re × nz) and right-hand side e.
    pub eq: DMatrix<f64>,
    /// Right-hand side of the equality rows.
    pub eq_rhs: DVector<f64>,
    /// Inequality rows A (ri × nz), A x ≥ b.
    pub ineq: DMatrix<f64>,
    /// Right-hand side of the inequality rows.
    pub ineq_rhs: DVector<f64>,
}

/// The active set of a QP solution: positive variables and active inequality rows.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct ActiveSet {
    /// Indices of x that are basic (free to be positive).
    pub basic: Vec<usize>,
    /// Indices of the rows of A held with equality.
    pub active: Vec<usize>,
}

/// A KKT point of a [`ReducedQp`].
#[derive(Debug, Clone)]
pub(crate) struct QpPoint {
    /// The primal solution x.
    pub x: DVector<f64>,
    /// The active set that produced it (for the next call's warm start).
    pub set: ActiveSet,
    /// KKT residuals on the unregularized problem.
    pub residuals: Residuals,
    /// Principal pivots (linear solves) or Lemke pivots.
    pub iterations: usize,
}

impl ReducedQp {
    fn nz(&self) -> usize {
        self.lin.len()
    }

    /// Q x = Fᵀ(F x) + ρ x.
    fn hess_mul(&self, x: &DVector<f64>) -> DVector<f64> {
        self.fac.tr_mul(&(&self.fac * x)) + x * self.rho
    }

    /// The scale of the data vector of the KKT LCP (`1 + ‖[l; b; e]‖∞`).
    pub fn scale(&self) -> f64 {
        1.0 + self
            .lin
            .amax()
            .max(self.ineq_rhs.amax())
            .max(self.eq_rhs.amax())
    }

    /// The KKT residuals of `(x, ν, λ)` (λ over all rows of A): the LCP residuals of
    /// `z = [x; λ]`, `w = [Qx + l − Eᵀν − Aᵀλ; Ax − b]`, with ‖Ex − e‖∞ added to the primal
    /// residual.
    fn residuals(&self, x: &DVector<f64>, nu: &DVector<f64>, lam: &DVector<f64>) -> Residuals {
        let g = self.gradient(x, nu, lam);
        let slack = &self.ineq * x - &self.ineq_rhs;
        let nz = self.nz();
        let ri = self.ineq.nrows();
        let mut z = DVector::zeros(nz + ri);
        let mut w = DVector::zeros(nz + ri);
        z.rows_mut(0, nz).copy_from(x);
        z.rows_mut(nz, ri).copy_from(lam);
        w.rows_mut(0, nz).copy_from(&g);
        w.rows_mut(nz, ri).copy_from(&slack);
        let mut r = lcp_residuals(&z, &w);
        if self.eq.nrows() > 0 {
            r.primal = r.primal.max((&self.eq * x - &self.eq_rhs).amax());
        }
        r
    }

    fn gradient(&self, x: &DVector<f64>, nu: &DVector<f64>, lam: &DVector<f64>) -> DVector<f64> {
        let mut g = self.hess_mul(x) + &self.lin;
        if self.eq.nrows() > 0 {
            g -= self.eq.tr_mul(nu);
        }
        if self.ineq.nrows() > 0 {
            g -= self.ineq.tr_mul(lam);
        }
        g
    }

    /// Principal pivoting from `start` (see the module docs): at most `max_iter` linear
    /// solves. `Err(reason)` when the cap is reached, a system is singular beyond the
    /// regularization, or the final residuals exceed [`ACCEPT_TOL`].
    pub fn solve_from(&self, start: &ActiveSet, max_iter: usize) -> Result<QpPoint, String> {
        let mut set = self.normalized_start(start)?;
        let scales = self.pivot_scales();
        for iter in 1..=max_iter {
            let (k, rhs) = self.basis_system(&set);
            let sol = solve_basis(&k, &rhs, &scales, set.basic.len(), iter)?;
            let (x, nu, lam) = self.scatter_basis_solution(&set, &sol);
            match self.most_violated_pair(&set, &x, &nu, &lam, &scales) {
                None => return self.accept_point(x, &nu, lam, set, iter, &scales),
                Some(pair) => pivot(&mut set, pair),
            }
        }
        Err(format!("no KKT point after {max_iter} principal pivots"))
    }

    /// `start` with its indices checked against the QP's sizes, sorted and deduplicated.
    fn normalized_start(&self, start: &ActiveSet) -> Result<ActiveSet, String> {
        let nz = self.nz();
        let ri = self.ineq.nrows();
        if start.basic.iter().any(|&j| j >= nz) || start.active.iter().any(|&i| i >= ri) {
            return Err("warm-start indices out of range".into());
        }
        let mut set = start.clone();
        set.basic.sort_unstable();
        set.basic.dedup();
        set.active.sort_unstable();
        set.active.dedup();
        Ok(set)
    }

    /// The tolerances and unit conversions of the pivoting, from the QP's scales.
    fn pivot_scales(&self) -> PivotScales {
        let nz = self.nz();
        let ri = self.ineq.nrows();
        let re = self.eq.nrows();
        let scale = self.scale();
        let tol = 1e-11 * scale;
        // Scales of the regularization: the largest Hessian diagonal and the largest squared
        // constraint row norm divided by it (the Schur complement's scale).
        let qdiag = (0..nz)
            .map(|j| self.fac.column(j).norm_squared() + self.rho)
            .fold(0.0_f64, f64::max)
            .max(1e-300);
        let arow = (0..ri)
            .map(|i| self.ineq.row(i).norm_squared())
            .chain((0..re).map(|i| self.eq.row(i).norm_squared()))
            .fold(0.0_f64, f64::max);
        // Violations in gradient units: x by the Hessian's scale, λ by the rows' scale,
        // slacks by their ratio.
        let anorm = arow.sqrt().max(1e-300);
        let (xs, ls, ss) = (qdiag, anorm, qdiag / anorm);
        let eps = 1e-10 * qdiag;
        let delta = 1e-10 * (arow / qdiag).max(1e-300);
        PivotScales {
            scale,
            tol,
            xs,
            ls,
            ss,
            eps,
            delta,
        }
    }

    /// The unregularized KKT matrix of the basis `set` and its right-hand side.
    fn basis_system(&self, set: &ActiveSet) -> (DMatrix<f64>, DVector<f64>) {
        let re = self.eq.nrows();
        let (s, a) = (set.basic.len(), set.active.len());
        let dim = s + re + a;
        let mut k = DMatrix::zeros(dim, dim);
        let fs = DMatrix::from_fn(self.fac.nrows(), s, |r, c| self.fac[(r, set.basic[c])]);
        let qss = fs.tr_mul(&fs);
        k.view_mut((0, 0), (s, s)).copy_from(&qss);
        for c in 0..s {
            k[(c, c)] += self.rho;
            let j = set.basic[c];
            for r in 0..re {
                let v = self.eq[(r, j)];
                k[(s + r, c)] = v;
                k[(c, s + r)] = -v;
            }
            for (r, &i) in set.active.iter().enumerate() {
                let v = self.ineq[(i, j)];
                k[(s + re + r, c)] = v;
                k[(c, s + re + r)] = -v;
            }
        }
        let mut rhs = DVector::zeros(dim);
        for (c, &j) in set.basic.iter().enumerate() {
            rhs[c] = -self.lin[j];
        }
        rhs.rows_mut(s, re).copy_from(&self.eq_rhs);
        for (r, &i) in set.active.iter().enumerate() {
            rhs[s + re + r] = self.ineq_rhs[i];
        }
        (k, rhs)
    }

    /// The basis solution `[x_S; ν; λ_A]` spread to the full `(x, ν, λ)`.
    fn scatter_basis_solution(
        &self,
        set: &ActiveSet,
        sol: &DVector<f64>,
    ) -> (DVector<f64>, DVector<f64>, DVector<f64>) {
        let re = self.eq.nrows();
        let s = set.basic.len();
        let mut x = DVector::zeros(self.nz());
        for (c, &j) in set.basic.iter().enumerate() {
            x[j] = sol[c];
        }
        let nu = sol.rows(s, re).into_owned();
        let mut lam = DVector::zeros(self.ineq.nrows());
        for (r, &i) in set.active.iter().enumerate() {
            lam[i] = sol[s + re + r];
        }
        (x, nu, lam)
    }

    /// The most violated complementarity pair of `(x, ν, λ)` under `set`, if any.
    fn most_violated_pair(
        &self,
        set: &ActiveSet,
        x: &DVector<f64>,
        nu: &DVector<f64>,
        lam: &DVector<f64>,
        scales: &PivotScales,
    ) -> Option<ViolatedPair> {
        let g = self.gradient(x, nu, lam);
        let slack = &self.ineq * x - &self.ineq_rhs;
        // Violated complementarity conditions (x_j, g_j) and (λ_i, slack_i), each
        // measured in gradient units.
        let mut viol: Vec<(f64, bool, usize, bool)> = Vec::new();
        for j in 0..self.nz() {
            let basic = set.basic.binary_search(&j).is_ok();
            let v = if basic { -x[j] * scales.xs } else { -g[j] };
            if v > scales.tol {
                viol.push((v, false, j, basic));
            }
        }
        for i in 0..self.ineq.nrows() {
            let act = set.active.binary_search(&i).is_ok();
            let v = if act {
                -lam[i] * scales.ls
            } else {
                -slack[i] * scales.ss
            };
            if v > scales.tol {
                viol.push((v, true, i, act));
            }
        }
        // Murty-type single principal pivot on the most violated pair.
        viol.iter()
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|&(_, row, index, inside)| ViolatedPair { row, index, inside })
    }

    /// The KKT point of a basis without violations (clipped to x, λ ≥ 0), or `Err` when its
    /// residuals exceed [`ACCEPT_TOL`].
    fn accept_point(
        &self,
        x: DVector<f64>,
        nu: &DVector<f64>,
        lam: DVector<f64>,
        set: ActiveSet,
        iter: usize,
        scales: &PivotScales,
    ) -> Result<QpPoint, String> {
        let x = x.map(|v| v.max(0.0));
        let lam = lam.map(|v| v.max(0.0));
        let residuals = self.residuals(&x, nu, &lam);
        if residuals.max() > ACCEPT_TOL * scales.scale {
            return Err(format!(
                "KKT residuals {:e} above tolerance after {iter} pivots",
                residuals.max()
            ));
        }
        Ok(QpPoint {
            x,
            set,
            residuals,
            iterations: iter,
        })
    }

    /// The dense KKT LCP of the QP (equalities split into two inequalities with multipliers
    /// ν⁺, ν⁻ ≥ 0), unknowns `[x; λ; ν⁺; ν⁻]`:
    ///
    /// ```text
    /// LCP( [[Q, −Aᵀ, −Eᵀ, Eᵀ], [A, 0, 0, 0], [E, 0, 0, 0], [−E, 0, 0, 0]],  [l; −b; −e; e] )
    /// ```
    ///
    /// whose matrix is positive semidefinite, so Lemke's method solves it whenever the QP is
    /// feasible (Cottle, Pang & Stone §4.4).
    pub fn kkt_lcp(&self) -> (DMatrix<f64>, DVector<f64>) {
        let nz = self.nz();
        let ri = self.ineq.nrows();
        let re = self.eq.nrows();
        let size = nz + ri + 2 * re;
        let mut mat = DMatrix::zeros(size, size);
        let mut q = DVector::zeros(size);
        let mut hess = self.fac.tr_mul(&self.fac);
        for j in 0..nz {
            hess[(j, j)] += self.rho;
        }
        mat.view_mut((0, 0), (nz, nz)).copy_from(&hess);
        q.rows_mut(0, nz).copy_from(&self.lin);
        let (a_i, a_ep, a_em) = (nz, nz + ri, nz + ri + re);
        for j in 0..nz {
            for i in 0..ri {
                let v = self.ineq[(i, j)];
                mat[(j, a_i + i)] = -v;
                mat[(a_i + i, j)] = v;
            }
            for i in 0..re {
                let v = self.eq[(i, j)];
                mat[(j, a_ep + i)] = -v;
                mat[(j, a_em + i)] = v;
                mat[(a_ep + i, j)] = v;
                mat[(a_em + i, j)] = -v;
            }
        }
        q.rows_mut(a_i, ri).copy_from(&(-&self.ineq_rhs));
        q.rows_mut(a_ep, re).copy_from(&(-&self.eq_rhs));
        q.rows_mut(a_em, re).copy_from(&self.eq_rhs);
        (mat, q)
    }

    /// Reads a KKT LCP solution `z = [x; λ; ν⁺; ν⁻]` back: the point, its active set and its
    /// residuals on the QP.
    pub fn read_kkt(&self, z: &DVector<f64>, iterations: usize) -> QpPoint {
        let nz = self.nz();
        let ri = self.ineq.nrows();
        let re = self.eq.nrows();
        let x = z.rows(0, nz).map(|v| v.max(0.0));
        let lam = z.rows(nz, ri).map(|v| v.max(0.0));
        let nu = z.rows(nz + ri, re) - z.rows(nz + ri + re, re);
        let residuals = self.residuals(&x, &nu, &lam);
        let set = ActiveSet {
            basic: (0..nz).filter(|&j| x[j] > 0.0).collect(),
            active: (0..ri).filter(|&i| lam[i] > 0.0).collect(),
        };
        QpPoint {
            x,
            set,
            residuals,
            iterations,
        }
    }
}

/// The tolerances and unit conversions of principal pivoting ([`ReducedQp::solve_from`]).
struct PivotScales {
    /// The scale of the KKT LCP's data ([`ReducedQp::scale`]).
    scale: f64,
    /// The violation threshold in gradient units.
    tol: f64,
    /// Converts an x violation to gradient units (the largest Hessian diagonal).
    xs: f64,
    /// Converts a λ violation to gradient units (the largest constraint row norm).
    ls: f64,
    /// Converts a slack violation to gradient units (their ratio).
    ss: f64,
    /// The regularization of the basis' Hessian block.
    eps: f64,
    /// The regularization of the basis' constraint block.
    delta: f64,
}

/// A violated complementarity pair: a variable x_j (`row` false) or an inequality row
/// (`row` true), and whether it is `inside` the basis now.
struct ViolatedPair {
    /// An inequality row (λ_i, slack_i) rather than a variable (x_j, g_j).
    row: bool,
    /// Its index.
    index: usize,
    /// Whether it is in the basis (basic variable, active row) now.
    inside: bool,
}

/// Solves the basis system `k sol = rhs` through the LU factor of its regularization
/// (`eps` on the first `s` diagonals, `delta` on the rest) with up to four steps of
/// iterative refinement on the unregularized `k`.
fn solve_basis(
    k: &DMatrix<f64>,
    rhs: &DVector<f64>,
    scales: &PivotScales,
    s: usize,
    iter: usize,
) -> Result<DVector<f64>, String> {
    let dim = k.nrows();
    let mut kreg = k.clone();
    for c in 0..s {
        kreg[(c, c)] += scales.eps;
    }
    for r in s..dim {
        kreg[(r, r)] += scales.delta;
    }
    // (nalgebra's LU solve does not take an empty system.)
    let lu = (dim > 0).then(|| kreg.lu());
    let mut sol = match &lu {
        Some(lu) => lu
            .solve(rhs)
            .ok_or_else(|| format!("singular basis at pivot {iter}"))?,
        None => DVector::zeros(0),
    };
    for _ in 0..4 {
        let Some(lu) = &lu else { break };
        let res = rhs - k * &sol;
        if res.amax() <= 1e-14 * scales.scale {
            break;
        }
        match lu.solve(&res) {
            Some(d) => sol += d,
            None => break,
        }
    }
    if sol.iter().any(|v| !v.is_finite()) {
        return Err(format!("non-finite basis solution at pivot {iter}"));
    }
    Ok(sol)
}

/// One principal pivot: `pair` leaves the basis if it is inside, else enters it.
fn pivot(set: &mut ActiveSet, pair: ViolatedPair) {
    let v = if pair.row {
        &mut set.active
    } else {
        &mut set.basic
    };
    if pair.inside {
        v.retain(|&t| t != pair.index);
    } else if let Err(pos) = v.binary_search(&pair.index) {
        v.insert(pos, pair.index);
    }
}

/// The status reported for an accepted [`QpPoint`].
pub(crate) fn status_of(p: &QpPoint, scale: f64) -> SolveStatus {
    if p.residuals.max() <= 1e-9 * scale {
        SolveStatus::Solved
    } else {
        SolveStatus::AlmostSolved
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// min ½‖x₁ + x₂ − 1‖² (F = [1 1], duplicated columns, rank 1) s.t. x ≥ 0: the optimal
    /// face is the segment x₁ + x₂ = 1; a warm start with both variables basic (singular
    /// Q_SS) is handled by the regularization and lands on the face.
    #[test]
    fn duplicated_columns_are_solved_from_a_singular_basis() {
        let qp = ReducedQp {
            fac: DMatrix::from_row_slice(1, 2, &[1.0, 1.0]),
            rho: 0.0,
            lin: DVector::from_vec(vec![-1.0, -1.0]),
            eq: DMatrix::zeros(0, 2),
            eq_rhs: DVector::zeros(0),
            ineq: DMatrix::zeros(0, 2),
            ineq_rhs: DVector::zeros(0),
        };
        let start = ActiveSet {
            basic: vec![0, 1],
            active: vec![],
        };
        let p = qp.solve_from(&start, 10).unwrap();
        assert!((p.x.sum() - 1.0).abs() < 1e-9, "{}", p.x);
        assert!(p.residuals.max() < 1e-9);
        // The same from an empty set (one pivot brings x₀ in).
        let p = qp.solve_from(&ActiveSet::default(), 10).unwrap();
        assert!((p.x.sum() - 1.0).abs() < 1e-9, "{}", p.x);
    }

    /// Duplicated inequality rows in the active set and an equality row; the answer matches
    /// the dense KKT LCP read back by `read_kkt`.
    #[test]
    fn duplicated_active_rows_and_equalities() {
        // min ½(1 + 10⁻³)‖x‖² + 0.1 x₃ s.t. x₁ + x₂ ≥ 1 (twice), x₂ − x₃ = 0.
        let qp = ReducedQp {
            fac: DMatrix::identity(3, 3),
            rho: 1e-3,
            lin: DVector::from_vec(vec![0.0, 0.0, 0.1]),
            eq: DMatrix::from_row_slice(1, 3, &[0.0, 1.0, -1.0]),
            eq_rhs: DVector::zeros(1),
            ineq: DMatrix::from_row_slice(2, 3, &[1.0, 1.0, 0.0, 1.0, 1.0, 0.0]),
            ineq_rhs: DVector::from_vec(vec![1.0, 1.0]),
        };
        let start = ActiveSet {
            basic: vec![0, 1, 2],
            active: vec![0, 1],
        };
        let p = qp.solve_from(&start, 20).unwrap();
        assert!(p.residuals.max() < 1e-9, "{:?}", p.residuals);
        assert!((p.x[0] + p.x[1] - 1.0).abs() < 1e-9);
        assert!((p.x[1] - p.x[2]).abs() < 1e-9);
        let cold = qp.solve_from(&ActiveSet::default(), 20).unwrap();
        assert!((&cold.x - &p.x).amax() < 1e-8, "{} vs {}", cold.x, p.x);
    }

    /// An iteration cap that is too small is an error, never an accepted point.
    #[test]
    fn the_cap_is_reported() {
        let qp = ReducedQp {
            fac: DMatrix::identity(3, 3),
            rho: 0.0,
            lin: DVector::from_vec(vec![-1.0, -2.0, -3.0]),
            eq: DMatrix::zeros(0, 3),
            eq_rhs: DVector::zeros(0),
            ineq: DMatrix::zeros(0, 3),
            ineq_rhs: DVector::zeros(0),
        };
        assert!(qp.solve_from(&ActiveSet::default(), 2).is_err());
        let p = qp.solve_from(&ActiveSet::default(), 4).unwrap();
        assert!((p.x - DVector::from_vec(vec![1.0, 2.0, 3.0])).amax() < 1e-12);
    }
}
