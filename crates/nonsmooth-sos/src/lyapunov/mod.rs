//! Lyapunov certificates for the planar two-contact body (Theorem 2;
//! docs/decisions/000-sos-stability.md, program).
//!
//! **Multi-V (Várkonyi, Theorem 2).** `V₁` = mechanical energy (fixed), `V₂ = y + P(z, θ, u,
//! v, ω)` with `P` cubic (55 unknown coefficients). Conditions, each on the ball `|x| ≤ 1`:
//! 1. positivity (eq. 54): `P − u⁴ − v⁴ − ω⁴ ≥ 0` on `{γ₁ ≥ 0, γ₂ ≥ 0}`;
//! 2. every consistent contact mode (PF, NF, FP, FN, SF, FS, PP, NN): `−∇V₂·ẋ ≥ 0` on the
//!    mode's set, equalities eliminated by substitution (stick additionally uses `σ̇ = 0`,
//!    which is sound);
//! 3. (`e = 0`) impacts at each contact: `V₂(x⁻) − V₂(x⁺) ≥ 0` over `(θ, u, v, ω, Λ_T)` on
//!    the Kane–Levinson/Coulomb set of docs/decisions/000-sos-stability.md `{Λ_N ≥ 0, Λ_Tσ̇⁺ ≤ 0,
//!    μ²Λ_N² ≥ Λ_T², (μ²Λ_N² − Λ_T²)σ̇⁺ = 0}` (the flight conditions below use its three pieces
//!    instead: stick, slip +, slip −, on each of which the impulses are linear in the pre-impact
//!    velocities, paper eqs. 30–33);
//! 4. for `e > 0`, **our formulation** of the paper's (empty in the source) "free flight then
//!    impact" condition (docs/decisions/000-sos-stability.md decision 7), the
//!    default [`FlightFormulation::PreImpact`]: `V₂` is compared at successive pre-impact
//!    states, `V₂(w) − V₂(Φ_Δ(M_k(w))) ≥ 0` for every pre-impact state `w` at a contact `k` and
//!    the ballistic flight `Φ_Δ` from the post-impact state to the next pre-impact state
//!    (`Δ = 0` included, which covers the impacts not followed by a flight, so item 3 is not
//!    imposed separately for `e > 0`). Split by the impulse piece at `k`; degree 6 in 4 reduced
//!    variables (σ₀ on the 34 monomials of degree 1–3, 14–24 after the exact top-degree
//!    reduction of [`crate::program`]) with degree-2 multipliers; 12 conditions. Sampling `V₂`
//!    after the impacts instead (the paper's wording; [`FlightFormulation::AfterImpact`],
//!    [`FlightFormulation::AnyStart`]) is jointly infeasible on the Fig. 3 points: a micro-hop
//!    cycle measured from post-impact to post-impact carries only `(1 + e)/2` of the slip
//!    mode's friction.
//!
//! `y` is cyclic, so it is eliminated (`y = 0` is the worst case for the ball).
//!
//! **PTT baseline** (Posa, Tobenkin & Tedrake, IEEE TAC 2016): one polynomial `V` of degree
//! 2–3 in all six states, positive (with the margin) on the admissible ball and
//! non-increasing in every consistent mode including free flight and at every impact.
//!
//! Every returned certificate is post-checked: SDP post-check (Gram eigenvalues, equality
//! residual, margin) and a Monte-Carlo sign test of every condition evaluated on physical
//! states (the impact through
//! [`PlanarParams::impact`](crate::planar::PlanarParams::impact)), independent of the
//! substitutions.

mod build;
mod flight;
mod impacts;
mod sets;
mod solve;
mod template;
mod types;
mod verify;

#[cfg(test)]
mod tests;

pub use solve::certify;
pub use template::{
    template_monomials, template_monomials_of_degree, FLIGHT_MULTIPLIER_HALF_DEGREE,
};
pub use types::{CertifyOptions, CertifyReport, FlightFormulation, Method, Verdict};
pub use verify::monte_carlo_check;
