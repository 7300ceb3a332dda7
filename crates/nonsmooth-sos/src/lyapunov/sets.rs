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
