//! Options and results of the certificate search: the method (Várkonyi's multiple Lyapunov
//! functions, Theorem 2, or the PTT baseline), the formulation of the flight-then-impact
//! condition for `e > 0` (docs/decisions/000-sos-stability.md decision 7), the options of
//! [`certify`](super::certify) and its verdict and report.

use serde::Serialize;

use crate::planar::PlanarParams;
use crate::poly::Poly;
use crate::program::SdpSize;

/// Which Lyapunov method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Method {
    /// Várkonyi's multiple Lyapunov functions (Theorem 2).
    MultiV,
    /// Posa–Tobenkin–Tedrake single monotone Lyapunov function.
    Ptt,
}

/// Formulation of the free-flight-then-impact condition for `e > 0`
/// (docs/decisions/000-sos-stability.md, decision 7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum FlightFormulation {
    /// Flights from any state with `γ_k = 0` at a contact `k` (item 4 of the program in
    /// docs/decisions/000-sos-stability.md, restricted to flights that can recur).
    AnyStart,
    /// Flights from the post-impact state of an impact at `k` (the only flights that recur
    /// in the ZOD with φ = 0), previous impact included in the condition: `V₂` compared at
    /// successive post-impact states (jointly infeasible on the Fig. 3 grid).
    AfterImpact,
    /// `V₂` compared at successive **pre-impact** states: impact at `k`, then the flight to
    /// the next pre-impact state (the default; docs/decisions/000-sos-stability.md
    /// decision 7).
    PreImpact,
}

/// Options of [`certify`](super::certify).
#[derive(Debug, Clone, PartialEq)]
pub struct CertifyOptions {
    /// Method.
    pub method: Method,
    /// Upper bound on the margin ε.
    pub margin_cap: f64,
    /// Acceptance tolerance (margin, Gram eigenvalues, residuals).
    pub tol: f64,
    /// Monte-Carlo samples per condition.
    pub mc_samples: usize,
    /// Seed of the Monte-Carlo test.
    pub seed: u64,
    /// Free-flight condition for `e > 0`.
    pub flight: FlightFormulation,
    /// Total degree of the `V₂` template (multi-V only): 3 (docs/decisions/000-sos-stability.md,
    /// program; the paper's cubic `P`, 55 coefficients) or 4 (adds the 70 quartic monomials of `(z,
    /// θ, u, v, ω)`; the flight-then-impact targets become degree 8 and their `σ₀` bases the 69
    /// monomials of degree 1–4 in 4 variables; docs/decisions/000-sos-stability.md decision 10).
    /// Other values are an error.
    pub v2_degree: u32,
    /// While Clarabel stops with a numerical failure (not an infeasibility certificate), the
    /// program is solved again with the objective `ε − w·Σ tr Q`
    /// ([`Margin::MaximizeRegularized`], docs/decisions/000-sos-stability.md decision 12) for
    /// each weight `w` of this list in turn; empty disables the retries.
    ///
    /// [`Margin::MaximizeRegularized`]: crate::program::Margin::MaximizeRegularized
    pub retry_trace_weights: Vec<f64>,
}

impl Default for CertifyOptions {
    fn default() -> Self {
        Self {
            method: Method::MultiV,
            margin_cap: 1e-2,
            tol: 1e-7,
            mc_samples: 2000,
            seed: 1,
            flight: FlightFormulation::PreImpact,
            v2_degree: 3,
            retry_trace_weights: vec![1e-6, 1e-4, 1e-2],
        }
    }
}

/// Verdict of the certificate search.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Verdict {
    /// Parameters outside the method's domain.
    NotApplicable(String),
    /// No static equilibrium exists.
    NoEquilibrium,
    /// The equilibrium is ambiguous (always unstable); lists the consistent modes from rest.
    Ambiguous(Vec<String>),
    /// Certified stable.
    Certified,
    /// No certificate (reason, e.g. solver status or post-check failure). Never "unstable".
    NoCertificate(String),
}

/// Result of [`certify`](super::certify).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CertifyReport {
    /// Parameters.
    pub params: PlanarParams,
    /// Method.
    pub method: Method,
    /// Verdict.
    pub verdict: Verdict,
    /// Margin ε (0 when not solved).
    pub epsilon: f64,
    /// SDP sizes (None when no SDP was built).
    pub size: Option<SdpSize>,
    /// Modes whose conditions were imposed.
    pub modes: Vec<String>,
    /// Seconds to build the SDP.
    pub build_seconds: f64,
    /// Seconds in the conic solver.
    pub solve_seconds: f64,
    /// Smallest value of any condition over the Monte-Carlo samples (scaled by the
    /// condition's coefficient size); NaN when not run.
    pub mc_min: f64,
    /// Coefficients of the found `V` as (exponents over (y,z,θ,u,v,ω), value).
    #[serde(skip)]
    pub v: Option<Poly>,
}

impl CertifyReport {
    /// True for [`Verdict::Certified`].
    pub fn certified(&self) -> bool {
        self.verdict == Verdict::Certified
    }
}
