//! Lemke's complementary pivoting method (Cottle, Pang & Stone, *The Linear Complementarity
//! Problem*, §4.4) with a covering vector `d > 0` and the lexicographic minimum-ratio test
//! (the lexicographic degeneracy resolution of Ch. 4), which guarantees termination on
//! degenerate problems.
//!
//! The augmented system is `I w − M z − d z₀ = q` with all variables nonnegative. The
//! implementation keeps an explicit dense inverse `B⁻¹` of the current basis matrix
//! (column-major) and updates it by a rank-one product-form pivot in `O(n·k)` work, where `k`
//! is the number of columns of `B⁻¹` that are not unit vectors: while `wⱼ` is basic in row
//! `p`, column `j` of `B⁻¹` is exactly `e_p`, so only the columns of nonbasic `w` variables
//! (at most the number of basic `z` variables plus one) are stored densely and updated. The lexicographic test uses
//! the perturbation `q(ε) = q + (ε, ε², …, εⁿ)`, so the tie-breaking vector of basic row `i`
//! is `[x_B,i, (B⁻¹)ᵢ,:] / (B⁻¹ a)ᵢ`; rows of `B⁻¹` are only read when ratios tie. After
//! termination the basic solution is polished by iterative refinement with `B⁻¹` and
//! `w = M z + q` is recomputed from the returned `z`.

use nalgebra::{DMatrix, DVector};

use super::{inf_norm, Lcp, LcpSolution};
use crate::status::{SolveStatus, SolverError};

const SOLVER: &str = "lemke";
/// Marker of a dense (non-unit) column of `B⁻¹`.
const NONE: usize = usize::MAX;

/// Options of [`lemke`]. All tolerances are relative to the scale named in each field.
#[derive(Debug, Clone, PartialEq)]
pub struct LemkeOptions {
    /// Covering vector `d` (all entries > 0); `None` means all ones (Cottle–Pang–Stone §4.4).
    pub covering: Option<DVector<f64>>,
    /// Pivot tolerance: an entry `(B⁻¹ a)ᵢ` of the entering column is an admissible pivot
    /// only if it exceeds `pivot_tol · max_i |(B⁻¹ a)ᵢ|`. Default `1e-11`.
    pub pivot_tol: f64,
    /// Ratio tie tolerance: ratios `θᵢ ≤ θ_min + ratio_tie_tol · max(1, θ_min)` are treated as
    /// ties and broken by the lexicographic rule (the same tolerance, relative to the entries,
    /// decides equality inside the lexicographic comparison). Default `1e-9`.
    pub ratio_tie_tol: f64,
    /// Maximum number of pivots; `None` means `50 · (n + 1)`.
    pub max_pivots: Option<usize>,
    /// Use the lexicographic minimum-ratio test (default `true`). With `false`, ties are
    /// broken by the smallest row index, which can cycle on degenerate problems; this switch
    /// exists to compare the two rules.
    pub lexicographic: bool,
    /// Warm start: indices `i` guessed to have `zᵢ > 0` (e.g. the support of the previous
    /// time step's solution). The method then starts from the complementary basis with these
    /// `zᵢ` basic and the covering vector `d̃ = B·1`, so that `B⁻¹ d̃ = 1 > 0`; if the guess
    /// is already feasible no pivot is made. When the guessed basis is (numerically)
    /// singular, or the warm run ends in ray termination or at the pivot cap (with `d̃ ≯ 0`
    /// neither proves anything), the solve restarts cold. Default `None`.
    pub warm_start: Option<Vec<usize>>,
    /// Number of iterative-refinement steps with the final basis inverse (default 2).
    pub refine_steps: usize,
    /// A returned solution whose largest residual exceeds
    /// `accept_tol · (1 + ‖q‖∞)` is reported as [`SolveStatus::AlmostSolved`] instead of
    /// [`SolveStatus::Solved`]. Default `1e-9`.
    pub accept_tol: f64,
}

impl Default for LemkeOptions {
    fn default() -> Self {
        Self {
            covering: None,
            pivot_tol: 1e-11,
            ratio_tie_tol: 1e-9,
            max_pivots: None,
            lexicographic: true,
            warm_start: None,
            refine_steps: 2,
            accept_tol: 1e-9,
        }
    }
}

/// Solves the [`Lcp`] by Lemke's method with the lexicographic minimum-ratio test
/// (Cottle–Pang–Stone §4.4, with the lexicographic degeneracy resolution of Ch. 4).
///
/// If `q ≥ 0` the trivial solution `z = 0` is returned with 0 pivots. For copositive-plus
/// `M` (e.g. positive semidefinite) ray termination proves that the LCP has no solution
/// (Cottle–Pang–Stone §4.4); for P-matrices the method always finds the unique
/// solution. `LcpSolution::iterations` is the number of pivots.
///
/// # Errors
/// - [`SolverError::NoSolution`] on ray termination (reason mentions "ray termination");
/// - [`SolverError::Failed`] when the pivot cap is reached;
/// - [`SolverError::DimensionMismatch`] / [`SolverError::NonFinite`] /
///   [`SolverError::InvalidInput`] for a covering vector of the wrong length, non-finite, or
///   not strictly positive, or for non-positive/non-finite tolerances.
pub fn lemke(lcp: &Lcp, opts: &LemkeOptions) -> Result<LcpSolution, SolverError> {
    let n = lcp.n();
    check_options(n, opts)?;
    let q = lcp.q().as_slice();
    if q.iter().all(|&x| x >= 0.0) {
        return Ok(lcp.solution(DVector::zeros(n), SolveStatus::Solved, 0));
    }
    let max_pivots = opts.max_pivots.unwrap_or(50 * (n + 1));
    let warm = match &opts.warm_start {
        Some(support) => Tableau::new_warm(lcp, support)?,
        None => None,
    };
    let mut warm_pivots = 0;
    let mut solved = None;
    if let Some(mut t) = warm {
        if t.xb.iter().all(|&x| x >= 0.0) {
            solved = Some((t, 0));
        } else {
            match t.run(opts, max_pivots) {
                Ok(p) => solved = Some((t, p)),
                Err(SolverError::NoSolution { .. }) | Err(SolverError::Failed { .. }) => {
                    warm_pivots = t.pivots_done;
                }
                Err(e) => return Err(e),
            }
        }
    }
    let (mut t, pivots) = match solved {
        Some(s) => s,
        None => {
            let d: Vec<f64> = match &opts.covering {
                Some(d) => d.as_slice().to_vec(),
                None => vec![1.0; n],
            };
            let mut t = Tableau::new(lcp, d);
            let p = t.run(opts, max_pivots)?;
            (t, p)
        }
    };
    let z = t.polish(opts.refine_steps);
    let mut sol = lcp.solution(z, SolveStatus::Solved, pivots + warm_pivots);
    let scale = 1.0 + inf_norm(q);
    if sol.residuals.max() > opts.accept_tol * scale {
        sol.status = SolveStatus::AlmostSolved;
    }
    Ok(sol)
}

fn check_options(n: usize, opts: &LemkeOptions) -> Result<(), SolverError> {
    if let Some(d) = &opts.covering {
        if d.len() != n {
            return Err(SolverError::DimensionMismatch {
                solver: SOLVER,
                what: "length of covering vector d",
                expected: n,
                got: d.len(),
            });
        }
        if d.iter().any(|x| !x.is_finite()) {
            return Err(SolverError::NonFinite {
                solver: SOLVER,
                what: "covering vector d",
            });
        }
        if d.iter().any(|&x| x <= 0.0) {
            return Err(SolverError::InvalidInput {
                solver: SOLVER,
                reason: "covering vector d must be strictly positive".into(),
            });
        }
    }
    for (name, v) in [
        ("pivot_tol", opts.pivot_tol),
        ("ratio_tie_tol", opts.ratio_tie_tol),
        ("accept_tol", opts.accept_tol),
    ] {
        if !(v.is_finite() && v >= 0.0) {
            return Err(SolverError::InvalidInput {
                solver: SOLVER,
                reason: format!("{name} must be finite and nonnegative, got {v}"),
            });
        }
    }
    Ok(())
}

/// Working state of Lemke's method. Variable indices: `wᵢ → i`, `zᵢ → n + i`, `z₀ → 2n`.
struct Tableau<'a> {
    lcp: &'a Lcp,
    n: usize,
    d: Vec<f64>,
    /// Basis inverse, column-major `n × n`.
    binv: Vec<f64>,
    /// `unit[j] = p`: column `j` of `B⁻¹` is the unit vector `e_p` (`NONE`: a dense column).
    unit: Vec<usize>,
    /// Basic variable of each row.
    basis: Vec<usize>,
    /// Values of the basic variables.
    xb: Vec<f64>,
    /// Entering column `B⁻¹ a` (scratch).
    col: Vec<f64>,
    /// Candidate rows of the ratio test (scratch).
    cand: Vec<usize>,
    /// `B₀⁻¹ (−d)`: the column of `z₀` in the starting basis (`−d` for the cold start).
    z0_col: Vec<f64>,
    /// Pivots made so far.
    pivots_done: usize,
}

impl<'a> Tableau<'a> {
    fn new(lcp: &'a Lcp, d: Vec<f64>) -> Self {
        let n = lcp.n();
        let mut binv = vec![0.0; n * n];
        for i in 0..n {
            binv[i * n + i] = 1.0;
        }
        Self {
            lcp,
            n,
            binv,
            unit: (0..n).collect(),
            basis: (0..n).collect(),
            xb: lcp.q().as_slice().to_vec(),
            col: vec![0.0; n],
            cand: Vec::with_capacity(n),
            z0_col: d.iter().map(|&x| -x).collect(),
            d,
            pivots_done: 0,
        }
    }

    /// Starting state for a warm start from the complementary basis with `zᵢ` basic for
    /// `i ∈ support` (row `i` holds `zᵢ` or `wᵢ`) and covering vector `d̃ = B·1`. Returns
    /// `Ok(None)` when that basis is numerically singular (smallest LU pivot below `1e-12 ·`
    /// largest).
    fn new_warm(lcp: &'a Lcp, support: &[usize]) -> Result<Option<Self>, SolverError> {
        let n = lcp.n();
        let mut in_s = vec![false; n];
        for &i in support {
            if i >= n {
                return Err(SolverError::InvalidInput {
                    solver: SOLVER,
                    reason: format!("warm-start index {i} out of range for n = {n}"),
                });
            }
            in_s[i] = true;
        }
        let m = lcp.m();
        let b = DMatrix::from_fn(n, n, |i, j| {
            if in_s[j] {
                -m[(i, j)]
            } else if i == j {
                1.0
            } else {
                0.0
            }
        });
        let lu = b.clone().lu();
        let diag = lu.u().diagonal();
        let dmax = diag.amax();
        let dmin = diag.iter().fold(f64::INFINITY, |a, &x| a.min(x.abs()));
        if dmax <= 0.0 || dmin <= 1e-12 * dmax {
            return Ok(None);
        }
        let Some(binv) = lu.try_inverse() else {
            return Ok(None);
        };
        let mut binv: Vec<f64> = binv.as_slice().to_vec();
        let mut unit = vec![NONE; n];
        for j in (0..n).filter(|&j| !in_s[j]) {
            let bj = &mut binv[j * n..(j + 1) * n];
            bj.iter_mut().for_each(|x| *x = 0.0);
            bj[j] = 1.0;
            unit[j] = j;
        }
        let d: Vec<f64> = (0..n).map(|i| b.row(i).sum()).collect();
        let q = lcp.q().as_slice();
        let mut xb = vec![0.0; n];
        for (j, &qj) in q.iter().enumerate() {
            for (x, &bij) in xb.iter_mut().zip(&binv[j * n..(j + 1) * n]) {
                *x += bij * qj;
            }
        }
        let basis = (0..n).map(|i| if in_s[i] { n + i } else { i }).collect();
        Ok(Some(Self {
            lcp,
            n,
            d,
            binv,
            unit,
            basis,
            xb,
            col: vec![0.0; n],
            cand: Vec::with_capacity(n),
            z0_col: vec![-1.0; n],
            pivots_done: 0,
        }))
    }

    /// Runs the pivots until `z₀` leaves the basis; returns the number of pivots.
    fn run(&mut self, opts: &LemkeOptions, max_pivots: usize) -> Result<usize, SolverError> {
        let n = self.n;
        let z0 = 2 * n;
        // Initial pivot: z₀ enters with column −d; the leaving row is the lexicographic
        // minimum of [qᵢ, eᵢ] / dᵢ (the most negative qᵢ/dᵢ). Only rows with qᵢ < 0 are
        // candidates: the ratio-tie tolerance is absolute when |min qᵢ/dᵢ| < 1, and a row
        // with qᵢ ≥ 0 chosen by the tie-break would start the path from a basis that is not
        // the primary ray's (with z₀ = 0 it can end at once in a spurious ray termination).
        self.col.copy_from_slice(&self.z0_col);
        self.cand.clear();
        let xb = &self.xb;
        self.cand.extend((0..n).filter(|&i| xb[i] < 0.0));
        if self.cand.is_empty() {
            self.cand.extend(0..n);
        }
        let denom: Vec<f64> = self.z0_col.iter().map(|&x| -x).collect();
        let r = self.select(&denom, opts, usize::MAX);
        self.pivot(r);
        let mut leaving = self.basis[r];
        self.basis[r] = z0;
        let mut pivots = 1;
        loop {
            self.pivots_done = pivots;
            if pivots >= max_pivots {
                return Err(SolverError::Failed {
                    solver: SOLVER,
                    reason: format!("pivot cap of {max_pivots} reached without termination"),
                });
            }
            let entering = if leaving < n {
                leaving + n
            } else {
                leaving - n
            };
            self.entering_column(entering);
            let cmax = inf_norm(&self.col);
            let thr = opts.pivot_tol * cmax;
            self.cand.clear();
            for (i, &c) in self.col.iter().enumerate() {
                if c > thr && c > 0.0 {
                    self.cand.push(i);
                }
            }
            if self.cand.is_empty() {
                return Err(SolverError::NoSolution {
                    solver: SOLVER,
                    reason: format!(
                        "ray termination after {pivots} pivots (entering variable {} has no \
                         blocking row); for copositive-plus M this proves the LCP infeasible",
                        var_name(entering, n)
                    ),
                });
            }
            let z0_row = self
                .basis
                .iter()
                .position(|&v| v == z0)
                .unwrap_or(usize::MAX);
            let col = std::mem::take(&mut self.col);
            let r = self.select(&col, opts, z0_row);
            self.col = col;
            self.pivot(r);
            leaving = self.basis[r];
            self.basis[r] = entering;
            if entering < n {
                // wₖ basic in row r ⇒ column k of B⁻¹ is exactly e_r.
                let bk = &mut self.binv[entering * n..(entering + 1) * n];
                bk.iter_mut().for_each(|b| *b = 0.0);
                bk[r] = 1.0;
                self.unit[entering] = r;
            }
            pivots += 1;
            if leaving == z0 {
                return Ok(pivots);
            }
        }
    }

    /// Minimum-ratio test over `self.cand` with ratios `xbᵢ / denomᵢ` (`denomᵢ > 0`).
    /// Ties within tolerance: the row of `z₀` wins if present (terminates at once), otherwise
    /// the lexicographic minimum of `(B⁻¹)ᵢ,: / denomᵢ` (or the smallest index).
    fn select(&self, denom: &[f64], opts: &LemkeOptions, z0_row: usize) -> usize {
        let mut theta = f64::INFINITY;
        let mut best = self.cand[0];
        for &i in &self.cand {
            let t = self.xb[i] / denom[i];
            if t < theta {
                theta = t;
                best = i;
            }
        }
        let lim = theta + opts.ratio_tie_tol * theta.abs().max(1.0);
        let mut ties = self
            .cand
            .iter()
            .copied()
            .filter(|&i| self.xb[i] / denom[i] <= lim);
        let first = ties.next().unwrap_or(best);
        let mut rest: Vec<usize> = ties.collect();
        if rest.is_empty() {
            return best;
        }
        rest.insert(0, first);
        if rest.contains(&z0_row) {
            return z0_row;
        }
        if !opts.lexicographic {
            return rest[0];
        }
        let n = self.n;
        let tol = opts.ratio_tie_tol;
        for j in 0..n {
            let colj = &self.binv[j * n..(j + 1) * n];
            let mut vmin = f64::INFINITY;
            let mut vmax = f64::NEG_INFINITY;
            for &i in &rest {
                let v = colj[i] / denom[i];
                vmin = vmin.min(v);
                vmax = vmax.max(v);
            }
            let lim = vmin + tol * vmin.abs().max(vmax.abs()).max(1e-300);
            if vmax <= lim {
                continue;
            }
            rest.retain(|&i| colj[i] / denom[i] <= lim);
            if rest.len() == 1 {
                break;
            }
        }
        rest[0]
    }

    /// `col = B⁻¹ a` for the column `a` of `[I, −M, −d]` belonging to `var`.
    fn entering_column(&mut self, var: usize) {
        let n = self.n;
        let col = &mut self.col;
        if var < n {
            col.copy_from_slice(&self.binv[var * n..(var + 1) * n]);
            return;
        }
        col.iter_mut().for_each(|c| *c = 0.0);
        let (a, sign): (&[f64], f64) = if var < 2 * n {
            let k = var - n;
            let m = self.lcp.m().as_slice();
            (&m[k * n..(k + 1) * n], -1.0)
        } else {
            (&self.d, -1.0)
        };
        for (j, &aj) in a.iter().enumerate() {
            if aj == 0.0 {
                continue;
            }
            let s = sign * aj;
            let p = self.unit[j];
            if p != NONE {
                col[p] += s;
            } else {
                let bj = &self.binv[j * n..(j + 1) * n];
                for (c, &b) in col.iter_mut().zip(bj) {
                    *c += s * b;
                }
            }
        }
    }

    /// Pivots on row `r` with the entering column in `self.col`: updates `x_B` and `B⁻¹`.
    fn pivot(&mut self, r: usize) {
        let n = self.n;
        let cr = self.col[r];
        let theta = self.xb[r] / cr;
        for (i, (x, &c)) in self.xb.iter_mut().zip(&self.col).enumerate() {
            if i == r {
                *x = theta;
            } else {
                *x -= theta * c;
            }
        }
        // B⁻¹ ← B⁻¹ − u vᵀ with u = col − e_r, v = (row r of B⁻¹) / col_r.
        self.col[r] = cr - 1.0;
        let u = &self.col;
        for j in 0..n {
            if self.unit[j] != NONE && self.unit[j] != r {
                continue;
            }
            let bj = &mut self.binv[j * n..(j + 1) * n];
            let v = bj[r] / cr;
            if v == 0.0 {
                continue;
            }
            self.unit[j] = NONE;
            for (b, &ui) in bj.iter_mut().zip(u) {
                *b -= ui * v;
            }
        }
        self.col[r] = cr;
    }

    /// Extracts `z` from the final complementary basis after `steps` iterative-refinement
    /// steps `x_B ← x_B + B⁻¹ (q − B x_B)`; tiny negative values are clipped to 0.
    fn polish(&mut self, steps: usize) -> DVector<f64> {
        let n = self.n;
        let m = self.lcp.m();
        let q = self.lcp.q();
        let mut z = DVector::zeros(n);
        let mut wb = DVector::zeros(n);
        let mut res = DVector::zeros(n);
        for _ in 0..steps {
            self.split(&mut z, &mut wb);
            // B x_B = w_B − M z (z₀ is nonbasic).
            res.copy_from(q);
            res.gemv(1.0, m, &z, 1.0);
            res -= &wb;
            if inf_norm(res.as_slice()) == 0.0 {
                break;
            }
            self.col.iter_mut().for_each(|c| *c = 0.0);
            for (j, &rj) in res.iter().enumerate() {
                if rj == 0.0 {
                    continue;
                }
                let p = self.unit[j];
                if p != NONE {
                    self.col[p] += rj;
                } else {
                    let bj = &self.binv[j * n..(j + 1) * n];
                    for (c, &b) in self.col.iter_mut().zip(bj) {
                        *c += rj * b;
                    }
                }
            }
            for (x, &c) in self.xb.iter_mut().zip(&self.col) {
                *x += c;
            }
        }
        self.split(&mut z, &mut wb);
        z.iter_mut().for_each(|x| *x = x.max(0.0));
        z
    }

    /// Splits the basic values into `z` and `w` (nonbasic entries 0).
    fn split(&self, z: &mut DVector<f64>, w: &mut DVector<f64>) {
        let n = self.n;
        z.fill(0.0);
        w.fill(0.0);
        for (r, &v) in self.basis.iter().enumerate() {
            if v < n {
                w[v] = self.xb[r];
            } else if v < 2 * n {
                z[v - n] = self.xb[r];
            }
        }
    }
}

fn var_name(v: usize, n: usize) -> String {
    if v < n {
        format!("w{}", v + 1)
    } else if v < 2 * n {
        format!("z{}", v - n + 1)
    } else {
        "z0".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::DMatrix;

    #[test]
    fn two_by_two_known_solution() {
        // M = [[2,1],[1,2]], q = [-5,-6]: both z positive, z = M⁻¹(−q) = (4/3, 7/3).
        let m = DMatrix::from_row_slice(2, 2, &[2.0, 1.0, 1.0, 2.0]);
        let q = DVector::from_vec(vec![-5.0, -6.0]);
        let lcp = Lcp::new(m, q).unwrap();
        let s = lemke(&lcp, &LemkeOptions::default()).unwrap();
        assert!((s.z[0] - 4.0 / 3.0).abs() < 1e-12);
        assert!((s.z[1] - 7.0 / 3.0).abs() < 1e-12);
        assert!(s.residuals.max() < 1e-12);
        assert_eq!(s.status, SolveStatus::Solved);
    }

    #[test]
    fn round_off_negative_q_does_not_start_from_a_zero_row() {
        // A friction-like LCP (β row: Delassus 1 and E = 1; γ row: −Eᵀ) whose β row of q is
        // round-off negative and whose γ row is 0. Within the absolute tie tolerance both rows
        // tie on the first ratio test and the lexicographic rule prefers row 2 (q = 0); a
        // first pivot there starts from a basis off the primary ray and the next entering
        // column (γ) has no blocking row: spurious ray termination. Only rows with qᵢ < 0 may
        // leave first.
        let m = DMatrix::from_row_slice(2, 2, &[1.0, 1.0, -1.0, 0.0]);
        let q = DVector::from_vec(vec![-1.66e-23, 0.0]);
        let lcp = Lcp::new(m, q).unwrap();
        let s = lemke(&lcp, &LemkeOptions::default()).unwrap();
        assert!(s.residuals.max() < 1e-20, "{:?}", s.residuals);
        assert_eq!(s.status, SolveStatus::Solved);
    }

    #[test]
    fn trivial_when_q_nonnegative() {
        let lcp = Lcp::new(
            DMatrix::identity(3, 3),
            DVector::from_vec(vec![0.0, 1.0, 2.0]),
        )
        .unwrap();
        let s = lemke(&lcp, &LemkeOptions::default()).unwrap();
        assert_eq!(s.iterations, 0);
        assert_eq!(s.z, DVector::zeros(3));
        assert_eq!(s.w, DVector::from_vec(vec![0.0, 1.0, 2.0]));
    }
}
