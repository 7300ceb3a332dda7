//! Polynomial building blocks of the semialgebraic sets on which the conditions are imposed:
//! constants, linear forms in the reduced variables (gaps `γ_i = z + l_iθ`, their rates, slip
//! velocities) and the unit ball `|x| ≤ 1` of every condition of Theorem 2
//! (docs/decisions/000-sos-stability.md, program).

use crate::poly::Poly;
use crate::SosError;

pub(super) fn const_poly(n: usize, c: f64) -> Poly {
    Poly::constant(n, c)
}

/// Linear combination `c + Σ a_k x_k` over `n` reduced variables.
pub(super) fn lin(n: usize, c: f64, a: &[(usize, f64)]) -> Poly {
    let mut p = const_poly(n, c);
    let xs = Poly::vars(n);
    for (k, v) in a {
        p = p.add_scaled(&xs[*k], *v).unwrap_or_else(|_| Poly::zero(n));
    }
    p
}

pub(super) fn ball(map: &[Poly], n: usize) -> Result<Poly, SosError> {
    let mut b = const_poly(n, 1.0);
    for m in &map[1..] {
        b = b.sub(&m.mul(m)?)?;
    }
    Ok(b)
}

/// The position `y` along the slope in the reduced variables of a condition: `y` is cyclic
/// in `V₂ = y + P`, so it is eliminated (`y = 0`); in the PTT baseline (a general `V`, in
/// which `y` is not cyclic) it is the last reduced variable.
#[derive(Debug, Clone, Copy)]
pub(super) struct SlopePosition {
    /// Whether `y` is a reduced variable (the PTT baseline).
    pub(super) reduced: bool,
}

impl SlopePosition {
    /// Number of reduced variables `y` adds (0 or 1).
    pub(super) fn extra(self) -> usize {
        usize::from(self.reduced)
    }

    /// `y` as a polynomial in `n` reduced variables.
    pub(super) fn poly(self, n: usize) -> Poly {
        if self.reduced {
            lin(n, 0.0, &[(n - 1, 1.0)])
        } else {
            const_poly(n, 0.0)
        }
    }
}

/// The linear constraints `lin_c` followed by their pairwise products (Schmüdgen-type
/// products, sound): they restore what the quadratic Coulomb constraints `μ²Λ_N² − Λ_T² ≥ 0`
/// and `−Λ_Tσ̇⁺ ≥ 0` of the unsplit impulse set (paper eqs. 30–33) provided.
pub(super) fn with_pairwise_products(lin_c: Vec<Poly>) -> Result<Vec<Poly>, SosError> {
    let mut ineqs = lin_c.clone();
    for a in 0..lin_c.len() {
        for b in a + 1..lin_c.len() {
            ineqs.push(lin_c[a].mul(&lin_c[b])?);
        }
    }
    Ok(ineqs)
}
