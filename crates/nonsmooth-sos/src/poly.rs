//! Sparse multivariate polynomials whose coefficients are affine expressions in decision
//! variables (Parrilo, "Semidefinite programming relaxations for semialgebraic problems",
//! Math. Program. 2003, §3: the coefficients of an SOS program's polynomials are affine in
//! the unknowns).
//!
//! A [`Poly`] over `n` variables maps exponent vectors ([`Monomial`]) to [`Affine`]
//! coefficients `c₀ + Σ_k c_k z_k`. Numeric polynomials are those whose coefficients are
//! constants. Products are defined whenever at least one factor is numeric (the result stays
//! affine in `z`); a product of two non-numeric polynomials is an error.

use std::collections::BTreeMap;

use crate::SosError;

/// Exponent vector of a monomial `x₀^{a₀} ⋯ x_{n−1}^{a_{n−1}}`.
pub type Monomial = Vec<u32>;

/// Total degree of a monomial.
pub fn degree(m: &[u32]) -> u32 {
    m.iter().sum()
}

/// Affine expression `constant + Σ_k terms[k] · z_k` in decision variables `z`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Affine {
    /// Constant part.
    pub constant: f64,
    /// Sparse linear part: decision-variable index → coefficient.
    pub terms: BTreeMap<usize, f64>,
}

impl Affine {
    /// The constant `c`.
    pub fn constant(c: f64) -> Self {
        Self {
            constant: c,
            terms: BTreeMap::new(),
        }
    }

    /// The decision variable `z_k` times `c`.
    pub fn var(k: usize, c: f64) -> Self {
        let mut terms = BTreeMap::new();
        terms.insert(k, c);
        Self {
            constant: 0.0,
            terms,
        }
    }

    /// True when there is no linear part.
    pub fn is_constant(&self) -> bool {
        self.terms.is_empty()
    }

    /// True when the constant and every linear coefficient are zero.
    pub fn is_zero(&self) -> bool {
        self.constant == 0.0 && self.terms.values().all(|v| *v == 0.0)
    }

    /// `self += s · other`.
    pub fn add_scaled(&mut self, other: &Affine, s: f64) {
        self.constant += s * other.constant;
        for (k, v) in &other.terms {
            *self.terms.entry(*k).or_insert(0.0) += s * v;
        }
    }

    /// `s · self`.
    pub fn scaled(&self, s: f64) -> Affine {
        let mut r = Affine::default();
        r.add_scaled(self, s);
        r
    }

    /// Value at the decision vector `z` (missing indices read as 0).
    pub fn eval(&self, z: &[f64]) -> f64 {
        self.constant
            + self
                .terms
                .iter()
                .map(|(k, v)| v * z.get(*k).copied().unwrap_or(0.0))
                .sum::<f64>()
    }
}

/// Sparse multivariate polynomial in `nvars` variables with [`Affine`] coefficients.
#[derive(Debug, Clone, PartialEq)]
pub struct Poly {
    nvars: usize,
    terms: BTreeMap<Monomial, Affine>,
}

impl Poly {
    /// The zero polynomial in `nvars` variables.
    pub fn zero(nvars: usize) -> Self {
        Self {
            nvars,
            terms: BTreeMap::new(),
        }
    }

    /// The constant polynomial `c`.
    pub fn constant(nvars: usize, c: f64) -> Self {
        let mut p = Self::zero(nvars);
        p.add_term(vec![0; nvars], Affine::constant(c));
        p
    }

    /// The variable `x_k`. Errors if `k ≥ nvars`.
    pub fn var(nvars: usize, k: usize) -> Result<Self, SosError> {
        if k >= nvars {
            return Err(SosError::Dimension(format!(
                "variable index {k} out of range for {nvars} variables"
            )));
        }
        let mut m = vec![0; nvars];
        m[k] = 1;
        let mut p = Self::zero(nvars);
        p.add_term(m, Affine::constant(1.0));
        Ok(p)
    }

    /// All variables `x₀ … x_{n−1}` as polynomials.
    pub fn vars(nvars: usize) -> Vec<Self> {
        (0..nvars)
            .map(|k| {
                let mut m = vec![0; nvars];
                m[k] = 1;
                let mut p = Self::zero(nvars);
                p.add_term(m, Affine::constant(1.0));
                p
            })
            .collect()
    }

    /// Numeric polynomial from `(coefficient, exponents)` pairs. Errors on a wrong exponent
    /// length or a non-finite coefficient.
    pub fn from_terms(nvars: usize, terms: &[(f64, &[u32])]) -> Result<Self, SosError> {
        let mut p = Self::zero(nvars);
        for (c, e) in terms {
            if e.len() != nvars {
                return Err(SosError::Dimension(format!(
                    "monomial with {} exponents in a polynomial of {nvars} variables",
                    e.len()
                )));
            }
            if !c.is_finite() {
                return Err(SosError::InvalidInput("non-finite coefficient".into()));
            }
            p.add_term(e.to_vec(), Affine::constant(*c));
        }
        Ok(p)
    }

    /// Number of variables.
    pub fn nvars(&self) -> usize {
        self.nvars
    }

    /// The terms (monomial → coefficient), zero coefficients removed.
    pub fn terms(&self) -> &BTreeMap<Monomial, Affine> {
        &self.terms
    }

    /// Adds `c · x^m` (the exponent vector must have `nvars` entries).
    pub fn add_term(&mut self, m: Monomial, c: Affine) {
        debug_assert_eq!(m.len(), self.nvars);
        let e = self.terms.entry(m.clone()).or_default();
        e.add_scaled(&c, 1.0);
        if e.is_zero() {
            self.terms.remove(&m);
        }
    }

    /// Total degree (0 for the zero polynomial).
    pub fn degree(&self) -> u32 {
        self.terms.keys().map(|m| degree(m)).max().unwrap_or(0)
    }

    /// Smallest total degree of a term (0 for the zero polynomial).
    pub fn min_degree(&self) -> u32 {
        self.terms.keys().map(|m| degree(m)).min().unwrap_or(0)
    }

    /// True when every coefficient is a constant.
    pub fn is_numeric(&self) -> bool {
        self.terms.values().all(Affine::is_constant)
    }

    fn check_same(&self, other: &Poly) -> Result<(), SosError> {
        if self.nvars != other.nvars {
            return Err(SosError::Dimension(format!(
                "polynomials in {} and {} variables",
                self.nvars, other.nvars
            )));
        }
        Ok(())
    }

    /// `self + s · other`.
    pub fn add_scaled(&self, other: &Poly, s: f64) -> Result<Poly, SosError> {
        self.check_same(other)?;
        let mut r = self.clone();
        for (m, c) in &other.terms {
            r.add_term(m.clone(), c.scaled(s));
        }
        Ok(r)
    }

    /// `self + other`.
    pub fn add(&self, other: &Poly) -> Result<Poly, SosError> {
        self.add_scaled(other, 1.0)
    }

    /// `self − other`.
    pub fn sub(&self, other: &Poly) -> Result<Poly, SosError> {
        self.add_scaled(other, -1.0)
    }

    /// `s · self`.
    pub fn scale(&self, s: f64) -> Poly {
        let mut r = Poly::zero(self.nvars);
        for (m, c) in &self.terms {
            r.add_term(m.clone(), c.scaled(s));
        }
        r
    }

    /// Product. Errors if both factors have decision variables (the result would not be
    /// affine in them) or the variable counts differ.
    pub fn mul(&self, other: &Poly) -> Result<Poly, SosError> {
        self.check_same(other)?;
        let (num, gen) = if other.is_numeric() {
            (other, self)
        } else if self.is_numeric() {
            (self, other)
        } else {
            return Err(SosError::InvalidInput(
                "product of two polynomials with decision-variable coefficients".into(),
            ));
        };
        let mut r = Poly::zero(self.nvars);
        for (ma, ca) in &gen.terms {
            for (mb, cb) in &num.terms {
                let m: Monomial = ma.iter().zip(mb).map(|(a, b)| a + b).collect();
                r.add_term(m, ca.scaled(cb.constant));
            }
        }
        Ok(r)
    }

    /// `self^k` for a numeric polynomial.
    pub fn pow(&self, k: u32) -> Result<Poly, SosError> {
        let mut r = Poly::constant(self.nvars, 1.0);
        for _ in 0..k {
            r = r.mul(self)?;
        }
        Ok(r)
    }

    /// Partial derivative `∂/∂x_k`.
    pub fn diff(&self, k: usize) -> Result<Poly, SosError> {
        if k >= self.nvars {
            return Err(SosError::Dimension(format!("no variable {k}")));
        }
        let mut r = Poly::zero(self.nvars);
        for (m, c) in &self.terms {
            if m[k] > 0 {
                let mut m2 = m.clone();
                m2[k] -= 1;
                r.add_term(m2, c.scaled(f64::from(m[k])));
            }
        }
        Ok(r)
    }

    /// Substitutes `x_k ↦ map[k]` (numeric polynomials in a common set of `n'` variables);
    /// covers affine maps (degree-1 `map`) and polynomial maps. Powers are cached per
    /// variable.
    pub fn substitute(&self, map: &[Poly]) -> Result<Poly, SosError> {
        if map.len() != self.nvars {
            return Err(SosError::Dimension(format!(
                "substitution of {} polynomials into {} variables",
                map.len(),
                self.nvars
            )));
        }
        let n2 = map.first().map_or(0, Poly::nvars);
        for p in map {
            if p.nvars != n2 || !p.is_numeric() {
                return Err(SosError::InvalidInput(
                    "substitution map must be numeric polynomials in one variable set".into(),
                ));
            }
        }
        let mut powers: Vec<Vec<Poly>> = map
            .iter()
            .map(|p| vec![Poly::constant(n2, 1.0), p.clone()])
            .collect();
        let mut r = Poly::zero(n2);
        for (m, c) in &self.terms {
            let mut t = Poly::constant(n2, 1.0);
            for (k, &e) in m.iter().enumerate() {
                if e == 0 {
                    continue;
                }
                while powers[k].len() <= e as usize {
                    let last = powers[k].last().cloned().unwrap_or_else(|| Poly::zero(n2));
                    let next = last.mul(&map[k])?;
                    powers[k].push(next);
                }
                t = t.mul(&powers[k][e as usize])?;
            }
            for (mt, ct) in &t.terms {
                r.add_term(mt.clone(), c.scaled(ct.constant));
            }
        }
        Ok(r)
    }

    /// Replaces every coefficient by its value at the decision vector `z`.
    pub fn evaluate_coefficients(&self, z: &[f64]) -> Poly {
        let mut r = Poly::zero(self.nvars);
        for (m, c) in &self.terms {
            r.add_term(m.clone(), Affine::constant(c.eval(z)));
        }
        r
    }

    /// Value at `x` of a numeric polynomial (decision variables read as 0). Errors on a
    /// wrong length.
    pub fn eval(&self, x: &[f64]) -> Result<f64, SosError> {
        if x.len() != self.nvars {
            return Err(SosError::Dimension(format!(
                "point of length {} for {} variables",
                x.len(),
                self.nvars
            )));
        }
        Ok(self
            .terms
            .iter()
            .map(|(m, c)| {
                m.iter()
                    .zip(x)
                    .fold(c.constant, |acc, (e, xi)| acc * xi.powi(*e as i32))
            })
            .sum())
    }

    /// Exact division by the variable `x_k`: `self = x_k · q`. Terms free of `x_k` must
    /// vanish up to `tol` (relative to the largest coefficient, constant or linear);
    /// otherwise an error is returned. Dropped terms are rounding noise of exact
    /// cancellations (e.g. a target that vanishes on the hyperplane `x_k = 0`).
    pub fn div_var(&self, k: usize, tol: f64) -> Result<Poly, SosError> {
        if k >= self.nvars {
            return Err(SosError::Dimension(format!("no variable {k}")));
        }
        let size = |c: &Affine| {
            c.terms
                .values()
                .fold(c.constant.abs(), |a, v| a.max(v.abs()))
        };
        let scale = self.terms.values().map(size).fold(0.0, f64::max).max(1.0);
        let mut r = Poly::zero(self.nvars);
        for (m, c) in &self.terms {
            if m[k] == 0 {
                if size(c) > tol * scale {
                    return Err(SosError::InvalidInput(format!(
                        "polynomial is not divisible by x_{k} (term {m:?})"
                    )));
                }
                continue;
            }
            let mut m2 = m.clone();
            m2[k] -= 1;
            r.add_term(m2, c.clone());
        }
        Ok(r)
    }

    /// Removes round-off: every constant coefficient with `|c| ≤ rel · max|c|` and every
    /// coefficient of a decision variable `z_k` with `|c| ≤ rel · max_m |c_{m,k}|` (the
    /// largest coefficient of the same `z_k` over all monomials) is set to zero, and
    /// monomials left with a zero coefficient are dropped. Cancellations in polynomial
    /// arithmetic leave entries of order 10⁻¹⁶ relative; they would otherwise keep Gram
    /// monomials alive (or add near-empty equality rows) that exact arithmetic removes.
    pub fn chop(&self, rel: f64) -> Poly {
        let cmax = self
            .terms
            .values()
            .map(|c| c.constant.abs())
            .fold(0.0, f64::max);
        let mut vmax: BTreeMap<usize, f64> = BTreeMap::new();
        for c in self.terms.values() {
            for (k, v) in &c.terms {
                let e = vmax.entry(*k).or_insert(0.0);
                *e = e.max(v.abs());
            }
        }
        let mut out = Poly::zero(self.nvars);
        for (m, c) in &self.terms {
            let mut a = Affine::default();
            if c.constant.abs() > rel * cmax {
                a.constant = c.constant;
            }
            for (k, v) in &c.terms {
                if v.abs() > rel * vmax.get(k).copied().unwrap_or(0.0) {
                    a.terms.insert(*k, *v);
                }
            }
            if !a.is_zero() {
                out.terms.insert(m.clone(), a);
            }
        }
        out
    }

    /// Largest absolute constant coefficient (for scaling residuals).
    pub fn max_abs_coefficient(&self) -> f64 {
        self.terms
            .values()
            .map(|c| c.constant.abs())
            .fold(0.0, f64::max)
    }
}

/// All monomials in `nvars` variables of total degree `lo ..= hi`, in graded lexicographic
/// order (by degree, then lexicographically with `x₀` most significant).
pub fn monomials(nvars: usize, lo: u32, hi: u32) -> Vec<Monomial> {
    let mut out = Vec::new();
    for d in lo..=hi {
        let mut cur = vec![0u32; nvars];
        fill(&mut out, &mut cur, 0, d);
    }
    out
}

fn fill(out: &mut Vec<Monomial>, cur: &mut Monomial, k: usize, left: u32) {
    if cur.is_empty() {
        if left == 0 {
            out.push(Vec::new());
        }
        return;
    }
    if k + 1 == cur.len() {
        cur[k] = left;
        out.push(cur.clone());
        cur[k] = 0;
        return;
    }
    for e in (0..=left).rev() {
        cur[k] = e;
        fill(out, cur, k + 1, left - e);
    }
    cur[k] = 0;
}

/// Half-degree Newton-polytope pruning of a Gram basis for a polynomial `p` to be written as
/// `mᵀQm` (Reznick, "Extremal PSD forms with few terms", Duke Math. J. 1978: the exponents of
/// `m` lie in ½·New(p)). We use the outer box-and-degree relaxation of ½·New(p): keep `m` when
/// `min_k ≤ 2 m_k ≤ max_k` for every variable `k` (extreme exponents of `x_k` in `p`) and
/// `min deg p ≤ 2|m| ≤ deg p`. This is a superset of the exact Newton pruning, hence safe.
pub fn newton_prune(p: &Poly, basis: &[Monomial]) -> Vec<Monomial> {
    let n = p.nvars();
    if p.terms().is_empty() {
        return Vec::new();
    }
    let mut maxe = vec![0u32; n];
    let mut mine = vec![u32::MAX; n];
    for m in p.terms().keys() {
        for k in 0..n {
            maxe[k] = maxe[k].max(m[k]);
            mine[k] = mine[k].min(m[k]);
        }
    }
    let (dlo, dhi) = (p.min_degree(), p.degree());
    basis
        .iter()
        .filter(|m| {
            let d2 = 2 * degree(m);
            d2 >= dlo
                && d2 <= dhi
                && m.iter()
                    .enumerate()
                    .all(|(k, e)| 2 * e <= maxe[k] && 2 * e >= mine[k])
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monomial_counts_match_binomials() {
        // C(5+3,3) = 56 monomials of degree ≤ 3 in 5 variables; 55 without the constant.
        assert_eq!(monomials(5, 1, 3).len(), 55);
        assert_eq!(monomials(5, 0, 2).len(), 21);
        assert_eq!(monomials(6, 0, 3).len(), 84);
        assert_eq!(monomials(3, 0, 2).len(), 10);
        assert_eq!(monomials(1, 0, 1).len(), 2);
    }

    #[test]
    fn exact_division_by_a_variable() -> Result<(), SosError> {
        let x = Poly::vars(2);
        // p = x y² + 2 x² = x (y² + 2x)
        let p = x[0]
            .mul(&x[1])?
            .mul(&x[1])?
            .add(&x[0].mul(&x[0])?.scale(2.0))?;
        let q = p.div_var(0, 1e-12)?;
        assert_eq!(q.eval(&[3.0, 5.0])?, 31.0);
        assert_eq!(q.degree(), 2);
        // y² + x is not divisible by x.
        let r = x[1].mul(&x[1])?.add(&x[0])?;
        assert!(r.div_var(0, 1e-12).is_err());
        assert!(r.div_var(2, 1e-12).is_err());
        Ok(())
    }

    #[test]
    fn arithmetic_diff_substitute() -> Result<(), SosError> {
        let x = Poly::vars(2);
        // p = x² y + 3
        let p = x[0].mul(&x[0])?.mul(&x[1])?.add(&Poly::constant(2, 3.0))?;
        assert_eq!(p.eval(&[2.0, 5.0])?, 23.0);
        let dx = p.diff(0)?;
        assert_eq!(dx.eval(&[2.0, 5.0])?, 20.0);
        // substitute x ↦ t + 1, y ↦ t² (one variable t)
        let t = Poly::vars(1);
        let map = vec![t[0].add(&Poly::constant(1, 1.0))?, t[0].mul(&t[0])?];
        let q = p.substitute(&map)?;
        for tv in [-1.5, 0.0, 0.7, 2.0] {
            let direct: f64 = (tv + 1.0) * (tv + 1.0) * tv * tv + 3.0;
            assert!((q.eval(&[tv])? - direct).abs() < 1e-12);
        }
        Ok(())
    }

    #[test]
    fn bilinear_product_is_rejected() {
        let mut a = Poly::zero(1);
        a.add_term(vec![1], Affine::var(0, 1.0));
        assert!(a.mul(&a).is_err());
    }
}
