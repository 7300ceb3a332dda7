//! SOS programs lowered to semidefinite programs (Parrilo 2003, §3–4; Lasserre/Putinar
//! positivstellensatz for the S-procedure, Putinar, Indiana Univ. Math. J. 42, 1993).
//!
//! Decision vector `z`: index 0 is the margin `ε`; then, in creation order, the coefficients
//! of free polynomials and the upper-triangle (column-major) entries of every Gram matrix.
//! A Gram block `Q` of basis `m(x)` represents `σ(x) = m(x)ᵀ Q m(x)`; its PSD constraint is
//! `svec(Q − ε D) ∈ S₊` where `D` is the identity without the constant monomial when the
//! block carries the margin, and `0` otherwise. Coefficient matching gives one equality per
//! monomial. With [`Margin::Maximize`] the program maximises `ε ≤ cap`; with
//! [`Margin::Feasibility`] `ε` is fixed to 0 and the program is a pure feasibility problem.

use std::time::Instant;

use nalgebra::DMatrix;
use nonsmooth_solvers::conic::{Cone, ConicOptions, ConicProblemBuilder};
use nonsmooth_solvers::SolverError;

use crate::poly::{degree, monomials, newton_prune, Affine, Monomial, Poly};
use crate::SosError;

/// How the margin `ε` is used.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Margin {
    /// Pure feasibility: `ε = 0`.
    Feasibility,
    /// Maximise `ε` subject to `ε ≤ cap`.
    Maximize {
        /// Upper bound on `ε` (keeps the program bounded).
        cap: f64,
    },
    /// Maximise `ε − w·Σ tr Q` over every Gram block `Q`, subject to `ε ≤ cap`: the trace
    /// term bounds the Gram matrices (an interior-point regularisation for programs whose
    /// optimal set is unbounded); the feasible set and the post-checks are unchanged.
    MaximizeRegularized {
        /// Upper bound on `ε`.
        cap: f64,
        /// Weight `w ≥ 0` of the trace term.
        trace_weight: f64,
    },
}

/// The form of the Putinar certificate `p = σ₀ + Σ σ_k g_k + Σ t_m h_m` of one condition
/// ([`SosProgram::require_nonneg_with_basis`]).
#[derive(Debug, Clone, PartialEq)]
pub struct CertificateForm {
    /// Half of the certificate's degree.
    pub half_degree: u32,
    /// Whether `σ₀` carries the margin `ε` (strict positivity) instead of a plain `≥ 0`.
    pub margin: bool,
    /// Basis of `σ₀` (a subset of the monomials of degree ≤ `half_degree`); `None`: all of
    /// them.
    pub sigma0_basis: Option<Vec<Monomial>>,
    /// Cap on the half-degree of the multipliers `σ_k`; `None`: none.
    pub multiplier_half_degree: Option<u32>,
}

/// One Gram block.
#[derive(Debug, Clone, PartialEq)]
pub struct GramBlock {
    /// Human-readable label (condition name and multiplier).
    pub label: String,
    /// Monomial basis `m(x)`.
    pub basis: Vec<Monomial>,
    /// Index of `Q₀₀` in `z`; entries follow in svec order.
    pub first: usize,
    /// Whether `Q − ε D ⪰ 0` (else `Q ⪰ 0`).
    pub margin: bool,
}

impl GramBlock {
    /// Side length of `Q`.
    pub fn size(&self) -> usize {
        self.basis.len()
    }

    /// `Q` read from a decision vector.
    pub fn matrix(&self, z: &[f64]) -> DMatrix<f64> {
        let n = self.size();
        let mut q = DMatrix::zeros(n, n);
        let mut k = self.first;
        for j in 0..n {
            for i in 0..=j {
                let v = z.get(k).copied().unwrap_or(0.0);
                q[(i, j)] = v;
                q[(j, i)] = v;
                k += 1;
            }
        }
        q
    }
}

/// A condition `p ≥ 0` on `{g ≥ 0, h = 0}` registered by [`SosProgram::require_nonneg`],
/// kept for post-checks.
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    /// Label.
    pub label: String,
    /// Target polynomial (affine in `z`).
    pub p: Poly,
    /// Inequality constraints `g_k ≥ 0` (numeric).
    pub ineqs: Vec<Poly>,
    /// Equality constraints `h_m = 0` (numeric).
    pub eqs: Vec<Poly>,
}

/// Solve outcome category.
#[derive(Debug, Clone, PartialEq)]
pub enum SosStatus {
    /// Solver converged and the post-check passed (`ε ≥ tol` in maximise mode).
    Certified,
    /// Solver converged but the margin is below tolerance or the post-check failed.
    NoCertificate(String),
    /// The solver proved infeasibility.
    Infeasible(String),
    /// Numerical failure or iteration limit.
    SolverFailed(String),
}

/// Post-check figures of a solution.
#[derive(Debug, Clone, PartialEq)]
pub struct PostCheck {
    /// Smallest eigenvalue over all Gram matrices (of `Q`, without the margin shift).
    pub min_gram_eigenvalue: f64,
    /// Largest eigenvalue over all Gram matrices (scale of the eigenvalue test).
    pub max_gram_eigenvalue: f64,
    /// Largest absolute residual of the coefficient-matching equalities.
    pub max_equality_residual: f64,
}

/// Solution of an SOS program.
#[derive(Debug, Clone, PartialEq)]
pub struct SosSolution {
    /// Outcome.
    pub status: SosStatus,
    /// Margin `ε` (0 in feasibility mode or on failure).
    pub epsilon: f64,
    /// Decision vector (empty on failure).
    pub z: Vec<f64>,
    /// Post-check figures (when a vector was returned).
    pub check: Option<PostCheck>,
    /// Wall-clock seconds of the conic solve.
    pub seconds: f64,
}

/// Sizes of the lowered SDP.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SdpSize {
    /// Decision variables.
    pub variables: usize,
    /// Coefficient-matching equalities.
    pub equalities: usize,
    /// Side lengths of the PSD blocks.
    pub psd_blocks: Vec<usize>,
}

/// An SOS program under construction.
#[derive(Debug, Clone)]
pub struct SosProgram {
    nz: usize,
    equalities: Vec<Affine>,
    blocks: Vec<GramBlock>,
    conditions: Vec<Condition>,
}

impl Default for SosProgram {
    fn default() -> Self {
        Self::new()
    }
}

impl SosProgram {
    /// Empty program (only the margin variable).
    pub fn new() -> Self {
        Self {
            nz: 1,
            equalities: Vec::new(),
            blocks: Vec::new(),
            conditions: Vec::new(),
        }
    }

    /// Number of decision variables so far.
    pub fn num_vars(&self) -> usize {
        self.nz
    }

    /// The Gram blocks.
    pub fn blocks(&self) -> &[GramBlock] {
        &self.blocks
    }

    /// The registered conditions.
    pub fn conditions(&self) -> &[Condition] {
        &self.conditions
    }

    /// Sizes of the SDP.
    pub fn size(&self) -> SdpSize {
        SdpSize {
            variables: self.nz,
            equalities: self.equalities.len(),
            psd_blocks: self.blocks.iter().map(GramBlock::size).collect(),
        }
    }

    /// A polynomial `Σ_b c_b x^b` with fresh free decision coefficients `c_b`.
    pub fn new_free_poly(&mut self, nvars: usize, basis: &[Monomial]) -> Poly {
        let mut p = Poly::zero(nvars);
        for m in basis {
            p.add_term(m.clone(), Affine::var(self.nz, 1.0));
            self.nz += 1;
        }
        p
    }

    /// A fresh SOS polynomial `m(x)ᵀ Q m(x)`, `Q ⪰ 0` (or `Q − εD ⪰ 0` with `margin`).
    pub fn new_sos(
        &mut self,
        label: &str,
        nvars: usize,
        basis: Vec<Monomial>,
        margin: bool,
    ) -> Poly {
        let n = basis.len();
        let first = self.nz;
        let mut p = Poly::zero(nvars);
        let mut k = first;
        for j in 0..n {
            for i in 0..=j {
                let m: Monomial = basis[i].iter().zip(&basis[j]).map(|(a, b)| a + b).collect();
                let c = if i == j { 1.0 } else { 2.0 };
                p.add_term(m, Affine::var(k, c));
                k += 1;
            }
        }
        self.nz = k;
        self.blocks.push(GramBlock {
            label: label.to_string(),
            basis,
            first,
            margin,
        });
        p
    }

    /// Requires every coefficient of `p` to vanish.
    pub fn require_zero(&mut self, p: &Poly) {
        for c in p.terms().values() {
            if !c.is_zero() {
                self.equalities.push(c.clone());
            }
        }
    }

    /// Requires `p ≥ 0` on `{g_k ≥ 0, h_m = 0}` through the Putinar certificate
    /// `p = σ₀ + Σ σ_k g_k + Σ t_m h_m` of degree `2·half_degree`: `σ₀` on all monomials of
    /// degree ≤ `half_degree` (Newton-pruned when there are no constraints), `σ_k` on those
    /// of degree ≤ `⌊(2·half_degree − deg g_k)/2⌋`, `t_m` free of degree
    /// `2·half_degree − deg h_m`. With `margin`, `σ₀` carries the margin `ε` (strict
    /// positivity); otherwise the condition is a plain `≥ 0`.
    pub fn require_nonneg(
        &mut self,
        label: &str,
        p: &Poly,
        ineqs: &[Poly],
        eqs: &[Poly],
        half_degree: u32,
        margin: bool,
    ) -> Result<(), SosError> {
        let form = CertificateForm {
            half_degree,
            margin,
            sigma0_basis: None,
            multiplier_half_degree: None,
        };
        self.require_nonneg_with_basis(label, p, ineqs, eqs, form)
    }

    /// As [`SosProgram::require_nonneg`], with the certificate's `form`: optionally an
    /// explicit monomial basis for `σ₀` (a subset of the monomials of degree ≤
    /// `half_degree`). A smaller basis keeps the certificate sound (any solution is still an
    /// identity `p = σ₀ + Σσ_k g_k + Σt_m h_m`) and only makes it more conservative; it is
    /// how the degree-6 flight-then-impact condition of Várkonyi is kept tractable.
    /// `multiplier_half_degree` caps the half-degree of the `σ_k` bases the same way (also
    /// sound, also only more conservative).
    pub fn require_nonneg_with_basis(
        &mut self,
        label: &str,
        p: &Poly,
        ineqs: &[Poly],
        eqs: &[Poly],
        form: CertificateForm,
    ) -> Result<(), SosError> {
        let CertificateForm {
            half_degree,
            margin,
            sigma0_basis,
            multiplier_half_degree,
        } = form;
        let n = p.nvars();
        if let Some(b) = &sigma0_basis {
            if b.iter().any(|m| m.len() != n || degree(m) > half_degree) {
                return Err(SosError::InvalidInput(format!(
                    "{label}: σ0 basis monomials must have {n} exponents and degree ≤ {half_degree}"
                )));
            }
        }
        for g in ineqs.iter().chain(eqs) {
            if g.nvars() != n || !g.is_numeric() {
                return Err(SosError::InvalidInput(format!(
                    "{label}: constraint polynomials must be numeric in {n} variables"
                )));
            }
        }
        // Round-off left by the polynomial arithmetic (cancellations at 10⁻¹⁶ relative)
        // is removed first, so that the facial reductions below see the exact structure.
        let p = &p.chop(CHOP_REL);
        let ineqs: Vec<Poly> = ineqs
            .iter()
            .map(|g| g.chop(CHOP_REL))
            .filter(|g| !g.terms().is_empty())
            .collect();
        let ineqs = &ineqs[..];
        let full = 2 * half_degree;
        let mut basis = sigma0_basis.unwrap_or_else(|| monomials(n, 0, half_degree));
        if ineqs.is_empty() && eqs.is_empty() && p.is_numeric() {
            basis = newton_prune(p, &basis);
        }
        // Facial reduction: when p(0) = 0 structurally and every g_k(0) ≥ 0, h_m(0) = 0, the
        // constant coefficient identity forces σ₀(0) = 0 and σ_k(0) = 0 for g_k(0) > 0, so
        // the constant monomial is dropped from those bases (keeps the SDP strictly
        // feasible, which interior-point methods need).
        let zero_m = vec![0u32; n];
        let origin = vec![0.0; n];
        let p_vanishes = !p.terms().contains_key(&zero_m)
            && ineqs
                .iter()
                .all(|g| g.eval(&origin).is_ok_and(|v| v >= 0.0))
            && eqs.iter().all(|h| h.eval(&origin).is_ok_and(|v| v == 0.0));
        if p_vanishes {
            basis.retain(|m| degree(m) > 0);
        }
        // Multiplier bases, and the largest degree their products σ_k g_k (and t_m h_m)
        // reach.
        let mut mult = Vec::new();
        let mut mult_degree = 0;
        for (k, g) in ineqs.iter().enumerate() {
            let dg = g.degree();
            if dg > full {
                continue;
            }
            let hd = ((full - dg) / 2).min(multiplier_half_degree.unwrap_or(u32::MAX));
            let mut gb = monomials(n, 0, hd);
            if p_vanishes && g.eval(&origin)? > 0.0 {
                gb.retain(|m| degree(m) > 0);
            }
            if let Some(top) = gb.iter().map(|m| degree(m)).max() {
                mult_degree = mult_degree.max(2 * top + dg);
            }
            mult.push((k, g, gb));
        }
        if eqs.iter().any(|h| h.degree() <= full) {
            mult_degree = full;
        }
        basis = prune_top_degree(p, basis, half_degree, mult_degree);
        let mut rest = p.sub(&self.new_sos(&format!("{label}: σ0"), n, basis, margin))?;
        for (k, g, gb) in mult {
            let s = self.new_sos(&format!("{label}: σ{}", k + 1), n, gb, false);
            rest = rest.sub(&s.mul(g)?)?;
        }
        for h in eqs {
            let dh = h.degree();
            if dh > full {
                continue;
            }
            let t = self.new_free_poly(n, &monomials(n, 0, full - dh));
            rest = rest.sub(&t.mul(h)?)?;
        }
        self.require_zero(&rest);
        self.conditions.push(Condition {
            label: label.to_string(),
            p: p.clone(),
            ineqs: ineqs.to_vec(),
            eqs: eqs.to_vec(),
        });
        Ok(())
    }

    /// Lowers to Clarabel's conic form and solves; then post-checks (minimum Gram eigenvalue
    /// ≥ −`tol`·max(1, largest Gram eigenvalue), equality residual ≤ `tol`·max(1 + scale,
    /// ‖z‖∞), and `ε ≥ tol` in maximise mode).
    pub fn solve(&self, margin: Margin, tol: f64) -> Result<SosSolution, SosError> {
        self.solve_with(margin, tol, &Self::default_solver_options())
    }

    /// The Clarabel options of [`SosProgram::solve`]: gap and feasibility tolerances 10⁻⁹,
    /// 400 iterations.
    pub fn default_solver_options() -> ConicOptions {
        ConicOptions {
            max_iter: 400,
            eps_abs: 1e-9,
            eps_rel: 1e-9,
            ..ConicOptions::default()
        }
    }

    /// As [`SosProgram::solve`] with explicit Clarabel options (tolerances, iteration and
    /// time limits, log). The post-checks are the same, so looser solver tolerances can only
    /// turn a certificate into "no certificate", never the reverse.
    pub fn solve_with(
        &self,
        margin: Margin,
        tol: f64,
        solver: &ConicOptions,
    ) -> Result<SosSolution, SosError> {
        let n = self.nz;
        let mut b = ConicProblemBuilder::new(n);
        match margin {
            Margin::Feasibility => {
                b = b.constraint_triplets(Cone::Zero(1), &[(0, 0, 1.0)], &[0.0])?;
            }
            Margin::Maximize { cap }
            | Margin::MaximizeRegularized {
                cap,
                trace_weight: _,
            } => {
                if !(cap.is_finite() && cap > 0.0) {
                    return Err(SosError::InvalidInput("margin cap must be positive".into()));
                }
                let mut c = vec![0.0; n];
                c[0] = -1.0;
                if let Margin::MaximizeRegularized { trace_weight, .. } = margin {
                    if !(trace_weight.is_finite() && trace_weight >= 0.0) {
                        return Err(SosError::InvalidInput(
                            "trace weight must be finite and nonnegative".into(),
                        ));
                    }
                    for blk in &self.blocks {
                        let mut k = blk.first;
                        for j in 0..blk.size() {
                            // svec order: the diagonal entry of column j is the last one.
                            k += j;
                            c[k] += trace_weight;
                            k += 1;
                        }
                    }
                }
                b = b.linear(&c)?;
                b = b.constraint_triplets(Cone::Nonnegative(1), &[(0, 0, 1.0)], &[cap])?;
            }
        }
        let mut trip = Vec::new();
        let mut rhs = Vec::with_capacity(self.equalities.len());
        for (r, e) in self.equalities.iter().enumerate() {
            for (k, v) in &e.terms {
                if *v != 0.0 {
                    trip.push((r, *k, *v));
                }
            }
            rhs.push(-e.constant);
        }
        if !rhs.is_empty() {
            b = b.constraint_triplets(Cone::Zero(rhs.len()), &trip, &rhs)?;
        }
        for blk in &self.blocks {
            let m = blk.size();
            let mut t = Vec::new();
            let mut k = 0;
            for j in 0..m {
                for i in 0..=j {
                    let s = if i == j {
                        1.0
                    } else {
                        std::f64::consts::SQRT_2
                    };
                    t.push((k, blk.first + k, -s));
                    if i == j && blk.margin && degree(&blk.basis[i]) > 0 {
                        t.push((k, 0, 1.0));
                    }
                    k += 1;
                }
            }
            b = b.constraint_triplets(Cone::PsdTriangle(m), &t, &vec![0.0; k])?;
        }
        let problem = b.build()?;
        let start = Instant::now();
        let res = problem.solve(solver);
        let seconds = start.elapsed().as_secs_f64();
        let sol = match res {
            Ok(s) => s,
            Err(e) => {
                let status = match &e {
                    SolverError::PrimalInfeasible { .. } | SolverError::DualInfeasible { .. } => {
                        SosStatus::Infeasible(e.to_string())
                    }
                    _ => SosStatus::SolverFailed(e.to_string()),
                };
                return Ok(SosSolution {
                    status,
                    epsilon: 0.0,
                    z: Vec::new(),
                    check: None,
                    seconds,
                });
            }
        };
        let z: Vec<f64> = sol.x.iter().copied().collect();
        let check = self.post_check(&z);
        let epsilon = z[0];
        let scale = 1.0
            + self
                .equalities
                .iter()
                .map(|e| e.constant.abs())
                .fold(0.0, f64::max);
        // Residual test relative to the size of the solution (same reason as below).
        let zmax = z.iter().fold(0.0f64, |a, b| a.max(b.abs()));
        // Eigenvalue test relative to the Gram scale: interior-point iterates stop at a
        // relative accuracy, so a block with eigenvalues of size λ_max can show −tol·λ_max.
        let eig_tol = tol * check.max_gram_eigenvalue.max(1.0);
        let status = if check.min_gram_eigenvalue < -eig_tol {
            SosStatus::NoCertificate(format!(
                "Gram matrix eigenvalue {:.3e} < 0",
                check.min_gram_eigenvalue
            ))
        } else if check.max_equality_residual > tol * scale.max(zmax) {
            SosStatus::NoCertificate(format!(
                "coefficient residual {:.3e}",
                check.max_equality_residual
            ))
        } else if !matches!(margin, Margin::Feasibility) && epsilon < tol {
            SosStatus::NoCertificate(format!("margin ε = {epsilon:.3e} below {tol:.1e}"))
        } else {
            SosStatus::Certified
        };
        Ok(SosSolution {
            status,
            epsilon,
            z,
            check: Some(check),
            seconds,
        })
    }

    /// Minimum Gram eigenvalue and equality residual at `z`.
    pub fn post_check(&self, z: &[f64]) -> PostCheck {
        let (min_gram_eigenvalue, max_gram_eigenvalue) = self
            .blocks
            .iter()
            .map(|b| {
                let ev = b.matrix(z).symmetric_eigenvalues();
                (ev.min(), ev.max())
            })
            .fold((f64::INFINITY, 0.0f64), |(lo, hi), (a, b)| {
                (lo.min(a), hi.max(b))
            });
        let max_equality_residual = self
            .equalities
            .iter()
            .map(|e| e.eval(z).abs())
            .fold(0.0, f64::max);
        PostCheck {
            min_gram_eigenvalue: if min_gram_eigenvalue.is_finite() {
                min_gram_eigenvalue
            } else {
                0.0
            },
            max_gram_eigenvalue,
            max_equality_residual,
        }
    }
}

/// Relative size under which coefficients of targets and constraints are treated as
/// round-off ([`Poly::chop`]).
pub const CHOP_REL: f64 = 1e-12;

/// Top-degree facial reduction of a `σ₀` basis. When every multiplier product `σ_k g_k`
/// has degree at most `mult_degree < 2t`, the degree-`2t` part of the identity
/// `p = σ₀ + Σσ_k g_k` reads `p_{2t} = m_tᵀ Q_tt m_t`, with `m_t` the basis monomials of
/// degree `t` and `Q_tt ⪰ 0` the corresponding Gram block. If `p_{2t} = 0`, then
/// `Q_tt = 0` (a PSD form vanishing identically), hence every degree-`t` row of `Q` vanishes
/// and the degree-`t` monomials are dropped (then the same test is repeated at `t − 1`);
/// otherwise the degree-`t` monomials outside the Newton box of `p_{2t}` are dropped
/// ([`newton_prune`], Reznick 1978). Both reductions are exact (they remove only entries
/// that are zero in every feasible Gram matrix), so they keep the program equivalent and
/// restore strict feasibility of the reduced SDP.
fn prune_top_degree(
    p: &Poly,
    mut basis: Vec<Monomial>,
    half_degree: u32,
    mult_degree: u32,
) -> Vec<Monomial> {
    let mut top = half_degree;
    while top > 0 && 2 * top > mult_degree {
        let mut part = Poly::zero(p.nvars());
        for (m, c) in p.terms() {
            if degree(m) == 2 * top {
                part.add_term(m.clone(), c.clone());
            }
        }
        if part.terms().is_empty() {
            basis.retain(|m| degree(m) != top);
            top -= 1;
            continue;
        }
        let top_basis: Vec<Monomial> = basis.iter().filter(|m| degree(m) == top).cloned().collect();
        let kept = newton_prune(&part, &top_basis);
        basis.retain(|m| degree(m) != top || kept.contains(m));
        break;
    }
    basis
}

/// Convenience: is the numeric polynomial `p` SOS (feasibility, Newton-pruned basis of
/// degree `⌈deg p / 2⌉`)?
pub fn is_sos(p: &Poly) -> Result<bool, SosError> {
    let mut prog = SosProgram::new();
    let hd = p.degree().div_ceil(2);
    prog.require_nonneg("sos", p, &[], &[], hd, false)?;
    let s = prog.solve(Margin::Feasibility, 1e-6)?;
    Ok(s.status == SosStatus::Certified)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parrilo_quartic_is_sos() -> Result<(), SosError> {
        // 2x⁴ + 2x³y − x²y² + 5y⁴ (Parrilo 2003, Example 3.5).
        let p = Poly::from_terms(
            2,
            &[
                (2.0, &[4, 0]),
                (2.0, &[3, 1]),
                (-1.0, &[2, 2]),
                (5.0, &[0, 4]),
            ],
        )?;
        assert!(is_sos(&p)?);
        Ok(())
    }

    #[test]
    fn motzkin_is_not_sos() -> Result<(), SosError> {
        let p = Poly::from_terms(
            2,
            &[
                (1.0, &[4, 2]),
                (1.0, &[2, 4]),
                (-3.0, &[2, 2]),
                (1.0, &[0, 0]),
            ],
        )?;
        assert!(!is_sos(&p)?);
        Ok(())
    }

    #[test]
    fn top_degree_pruning_is_exact() -> Result<(), SosError> {
        // x² ≥ 0 on x ≥ 0 with half-degree 2 and a constant multiplier: the multiplier
        // product has degree 1, the target has no degree-4 part, so the x² monomial (whose
        // Gram entry must vanish) is dropped from σ₀ and only x remains.
        let p = Poly::from_terms(1, &[(1.0, &[2])])?;
        let g = Poly::from_terms(1, &[(1.0, &[1])])?;
        let mut prog = SosProgram::new();
        let form = CertificateForm {
            half_degree: 2,
            margin: false,
            sigma0_basis: None,
            multiplier_half_degree: Some(0),
        };
        prog.require_nonneg_with_basis("x^2", &p, std::slice::from_ref(&g), &[], form)?;
        assert_eq!(prog.blocks()[0].basis, vec![vec![1u32]]);
        let s = prog.solve(Margin::Feasibility, 1e-6)?;
        assert_eq!(s.status, SosStatus::Certified);
        // Newton box of the top part: x⁴ + y² with half-degree 2 keeps x² but drops xy and y².
        let q = Poly::from_terms(2, &[(1.0, &[4, 0]), (1.0, &[0, 2])])?;
        let kept = prune_top_degree(&q, monomials(2, 1, 2), 2, 0);
        assert_eq!(kept, vec![vec![1, 0], vec![0, 1], vec![2, 0]]);
        Ok(())
    }

    #[test]
    fn s_procedure_proves_one_minus_x4() -> Result<(), SosError> {
        let p = Poly::from_terms(1, &[(1.0, &[0]), (-1.0, &[4])])?;
        let g = Poly::from_terms(1, &[(1.0, &[0]), (-1.0, &[2])])?;
        let mut prog = SosProgram::new();
        prog.require_nonneg("1-x^4", &p, std::slice::from_ref(&g), &[], 2, false)?;
        let s = prog.solve(Margin::Feasibility, 1e-6)?;
        assert_eq!(s.status, SosStatus::Certified);
        // Without the constraint 1 − x⁴ is not globally nonnegative.
        let mut prog = SosProgram::new();
        prog.require_nonneg("1-x^4 global", &p, &[], &[], 2, false)?;
        let s = prog.solve(Margin::Feasibility, 1e-6)?;
        assert_ne!(s.status, SosStatus::Certified);
        Ok(())
    }
}
