//! The `V₂ = y + P(z, θ, u, v, ω)` template of Theorem 2 (docs/decisions/000-sos-stability.md,
//! program: `P` cubic, 55 coefficients, or quartic, docs/decisions/000-sos-stability.md decision
//! 10) and the multiplier degree of the flight-then-impact conditions (condition 4).

use crate::poly::{monomials, Monomial};

/// The 55 monomials of degree 1–3 in `(z, θ, u, v, ω)` of the `V₂` template (Theorem 2;
/// docs/decisions/000-sos-stability.md, program).
pub fn template_monomials() -> Vec<Monomial> {
    monomials(5, 1, 3)
}

/// The monomials of degree 1–`degree` in `(z, θ, u, v, ω)` of a `V₂` template of total
/// degree `degree` (55 for the paper's cubic, 125 for the quartic of
/// [`CertifyOptions::v2_degree`](super::CertifyOptions::v2_degree) = 4).
pub fn template_monomials_of_degree(degree: u32) -> Vec<Monomial> {
    monomials(5, 1, degree)
}

/// Half-degree of the multipliers of the flight-then-impact conditions (our choice: degree-2
/// multipliers keep the SDP small; the full Putinar degree would be 4).
pub const FLIGHT_MULTIPLIER_HALF_DEGREE: u32 = 1;
