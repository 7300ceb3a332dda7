//! Lyapunov certificates for the planar two-contact body (digest §3).
//!
//! **Multi-V (Várkonyi, Theorem 2).** `V₁` = mechanical energy (fixed), `V₂ = y + P(z, θ, u,
//! v, ω)` with `P` cubic (55 unknown coefficients). Conditions, each on the ball `|x| ≤ 1`:
//! 1. positivity (eq. 54): `P − u⁴ − v⁴ − ω⁴ ≥ 0` on `{γ₁ ≥ 0, γ₂ ≥ 0}`;
//! 2. every consistent contact mode (PF, NF, FP, FN, SF, FS, PP, NN): `−∇V₂·ẋ ≥ 0` on the
//!    mode's set, equalities eliminated by substitution (stick additionally uses `σ̇ = 0`,
//!    which is sound);
//! 3. (`e = 0`) impacts at each contact: `V₂(x⁻) − V₂(x⁺) ≥ 0` over `(θ, u, v, ω, Λ_T)` on
//!    the digest's Kane–Levinson/Coulomb set `{Λ_N ≥ 0, Λ_Tσ̇⁺ ≤ 0, μ²Λ_N² ≥ Λ_T²,
//!    (μ²Λ_N² − Λ_T²)σ̇⁺ = 0}` (the flight conditions below use its three pieces instead:
//!    stick, slip +, slip −, on each of which the impulses are linear in the pre-impact
//!    velocities, paper eqs. 30–33);
//! 4. for `e > 0`, **our formulation** of the paper's (empty in the source) "free flight then
//!    impact" condition (digest §3 item 4; docs/decisions/000-sos-stability.md decision 7), the
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
//! states (the impact through [`PlanarParams::impact`]), independent of the substitutions.

use std::time::Instant;

use rand::{Rng, SeedableRng};
use serde::Serialize;

use crate::planar::{not_applicable, ContactState, Mode, PlanarParams, TH, U, V, W, Y, Z};
use crate::poly::{degree, monomials, Monomial, Poly};
use crate::program::{Margin, SdpSize, SosProgram, SosStatus};
use crate::SosError;

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
    /// Flights from any state with `γ_k = 0` at a contact `k` (digest §3 item 4, restricted
    /// to flights that can recur).
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

/// Options of [`certify`].
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
    /// Total degree of the `V₂` template (multi-V only): 3 (digest §3, the paper's cubic
    /// `P`, 55 coefficients) or 4 (adds the 70 quartic monomials of `(z, θ, u, v, ω)`; the
    /// flight-then-impact targets become degree 8 and their `σ₀` bases the 69 monomials of
    /// degree 1–4 in 4 variables; docs/decisions/000-sos-stability.md decision 10). Other
    /// values are an error.
    pub v2_degree: u32,
    /// While Clarabel stops with a numerical failure (not an infeasibility certificate), the
    /// program is solved again with the objective `ε − w·Σ tr Q`
    /// ([`Margin::MaximizeRegularized`], docs/decisions/000-sos-stability.md decision 12) for
    /// each weight `w` of this list in turn; empty disables the retries.
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

/// Result of [`certify`].
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

/// Physical description of a condition, for the Monte-Carlo test.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Positivity,
    Flow(Mode, [f64; 3]),
    Impact(usize),
    FlightImpact(usize),
    FlightAfterImpact,
    FlightPreImpact,
    ImpactClosed,
    PositivityScaled,
}

fn const_poly(n: usize, c: f64) -> Poly {
    Poly::constant(n, c)
}

/// Linear combination `c + Σ a_k x_k` over `n` reduced variables.
fn lin(n: usize, c: f64, a: &[(usize, f64)]) -> Poly {
    let mut p = const_poly(n, c);
    let xs = Poly::vars(n);
    for (k, v) in a {
        p = p.add_scaled(&xs[*k], *v).unwrap_or_else(|_| Poly::zero(n));
    }
    p
}

fn ball(map: &[Poly], n: usize) -> Result<Poly, SosError> {
    let mut b = const_poly(n, 1.0);
    for m in &map[1..] {
        b = b.sub(&m.mul(m)?)?;
    }
    Ok(b)
}

/// The 55 monomials of degree 1–3 in `(z, θ, u, v, ω)` of the `V₂` template (digest §3).
pub fn template_monomials() -> Vec<Monomial> {
    monomials(5, 1, 3)
}

/// The monomials of degree 1–`degree` in `(z, θ, u, v, ω)` of a `V₂` template of total
/// degree `degree` (55 for the paper's cubic, 125 for the quartic of
/// [`CertifyOptions::v2_degree`] = 4).
pub fn template_monomials_of_degree(degree: u32) -> Vec<Monomial> {
    monomials(5, 1, degree)
}

/// Half-degree of the multipliers of the flight-then-impact conditions (our choice: degree-2
/// multipliers keep the SDP small; the full Putinar degree would be 4).
pub const FLIGHT_MULTIPLIER_HALF_DEGREE: u32 = 1;

/// Condition 3 (impacts, digest §3): `V₂(x⁻) − V₂(x⁺) ≥ 0` over `(θ, u, v, ω, Λ_T [, y])`
/// with the unified Kane–Levinson/Coulomb impulse set of digest §2 (`Λ_N ≥ 0`,
/// `Λ_Tσ̇⁺ ≤ 0`, `μ²Λ_N² ≥ Λ_T²`, `(μ²Λ_N² − Λ_T²)σ̇⁺ = 0` through a free multiplier).
fn plain_impacts(
    prog: &mut SosProgram,
    p: &PlanarParams,
    v2: &Poly,
    ey: usize,
    yv: &dyn Fn(usize) -> Poly,
) -> Result<(), SosError> {
    let (l, h) = ([p.l(0), p.l(1)], p.h);
    for i in 0..2 {
        let j = 1 - i;
        let mu = p.mu(i);
        let n = 5 + ey;
        let x = Poly::vars(n);
        let (th, u, v, w, lt) = (&x[0], &x[1], &x[2], &x[3], &x[4]);
        let li = l[i];
        // Λ_N = (−(1+e)(v + l ω) − l h Λ_T)/(1 + l²)
        let ln = lin(
            n,
            0.0,
            &[
                (2, -(1.0 + p.e) / (1.0 + li * li)),
                (3, -(1.0 + p.e) * li / (1.0 + li * li)),
                (4, -li * h / (1.0 + li * li)),
            ],
        );
        let pre = vec![
            yv(n),
            th.scale(-li),
            th.clone(),
            u.clone(),
            v.clone(),
            w.clone(),
        ];
        let post = vec![
            yv(n),
            th.scale(-li),
            th.clone(),
            u.add(lt)?,
            v.add(&ln)?,
            w.add(&ln.scale(li))?.add(&lt.scale(h))?,
        ];
        let sdp = post[U].add(&post[W].scale(h))?;
        let coul = ln.mul(&ln)?.scale(mu * mu).sub(&lt.mul(lt)?)?;
        let ineqs = vec![
            lin(n, 0.0, &[(2, -1.0), (3, -li)]),
            lin(n, 0.0, &[(0, l[j] - li)]),
            ln.clone(),
            lt.mul(&sdp)?.scale(-1.0),
            coul.clone(),
            ball(&pre, n)?,
        ];
        let eqs = vec![coul.mul(&sdp)?];
        let target = v2.substitute(&pre)?.sub(&v2.substitute(&post)?)?;
        let label = format!("impact {}", i + 1);
        prog.require_nonneg(&label, &target, &ineqs, &eqs, 2, false)?;
    }
    Ok(())
}

/// One piece of the Kane–Levinson/Coulomb impulse set at contact `c` (paper eqs. 30–33):
/// name, `Λ_N`, `Λ_T` (linear in the pre-impact velocities) and the piece's constraints
/// (`≥ 0`).
type Piece = (&'static str, Poly, Poly, Vec<Poly>);

/// The impulse pieces at contact `c` for pre-impact velocities `vel = (u, v, ω)` given as
/// polynomials in reduced variables: stick (`σ̇⁺ = 0`, `Λ_N ≥ 0`, `|Λ_T| ≤ μΛ_N`), slip ±
/// (`Λ_T = ∓μΛ_N`, `Λ_N ≥ 0`, `±σ̇⁺ ≥ 0`). A slip piece whose denominator `1 + l² ∓ μlh` is
/// not positive is dropped: there `Λ_N ≥ 0` with `γ̇⁻ ≤ 0` forces the identity map.
fn impulse_pieces(p: &PlanarParams, c: usize, vel: &[Poly; 3]) -> Result<Vec<Piece>, SosError> {
    let (lc, h, mu, e1) = (p.l(c), p.h, p.mu(c), 1.0 + p.e);
    let gdot = vel[1].add(&vel[2].scale(lc))?;
    let sdot = vel[0].add(&vel[2].scale(h))?;
    let mut out: Vec<Piece> = Vec::new();
    let (a, b, cc) = (1.0 + lc * lc, lc * h, 1.0 + h * h);
    let det = a * cc - b * b;
    let r1 = gdot.scale(-e1);
    let r2 = sdot.scale(-1.0);
    let ln = r1.scale(cc / det).add(&r2.scale(-b / det))?;
    let lt = r2.scale(a / det).add(&r1.scale(-b / det))?;
    let cons = vec![ln.clone(), ln.scale(mu).sub(&lt)?, ln.scale(mu).add(&lt)?];
    out.push(("stick", ln, lt, cons));
    for (name, s) in [("slip+", 1.0), ("slip-", -1.0)] {
        let den = 1.0 + lc * lc - s * mu * lc * h;
        if den <= 1e-9 {
            continue;
        }
        let ln = gdot.scale(-e1 / den);
        let lt = ln.scale(-s * mu);
        let post_sd = sdot
            .add(&lt)?
            .add(&ln.scale(lc).add(&lt.scale(h))?.scale(h))?;
        out.push((name, ln.clone(), lt, vec![ln, post_sd.scale(s)]));
    }
    Ok(out)
}

/// Post-impact velocities `(u + Λ_T, v + Λ_N, ω + l_cΛ_N + hΛ_T)`.
fn apply_impulse(
    p: &PlanarParams,
    c: usize,
    vel: &[Poly; 3],
    ln: &Poly,
    lt: &Poly,
) -> Result<[Poly; 3], SosError> {
    Ok([
        vel[0].add(lt)?,
        vel[1].add(ln)?,
        vel[2].add(&ln.scale(p.l(c)))?.add(&lt.scale(p.h))?,
    ])
}

/// Condition 3 for `e > 0`, **our formulation**: the plain impact `V₂(x⁻) − V₂(x⁺) ≥ 0` is
/// only needed for impacts that are not preceded by a free flight (those are covered by
/// [`flight_after_impact`]). Before such an impact at `i` the other contact `j` is closed:
/// either it was active in a one-contact mode (`γ_j = γ̇_j = 0`) or it has just had an
/// impact (`γ_j = 0`, `γ̇_j = −eγ̇_j⁻ ≥ 0`). With `γ_i = γ_j = 0`, `z = θ = 0`, so the
/// condition is imposed over `(u, v, ω)` on `{γ̇_i ≤ 0, γ̇_j ≥ 0}`, split by impulse piece.
fn closed_impacts(prog: &mut SosProgram, p: &PlanarParams, v2: &Poly) -> Result<(), SosError> {
    let n = 3;
    let x = Poly::vars(n);
    let vel = [x[0].clone(), x[1].clone(), x[2].clone()];
    let z0 = const_poly(n, 0.0);
    let pre = vec![
        z0.clone(),
        z0.clone(),
        z0.clone(),
        x[0].clone(),
        x[1].clone(),
        x[2].clone(),
    ];
    let v_pre = v2.substitute(&pre)?;
    for i in 0..2 {
        let j = 1 - i;
        let gi = vel[1].add(&vel[2].scale(p.l(i)))?;
        let gj = vel[1].add(&vel[2].scale(p.l(j)))?;
        for (name, ln, lt, cons) in impulse_pieces(p, i, &vel)? {
            let label = format!("impact {} both closed ({name})", i + 1);
            let pv = apply_impulse(p, i, &vel, &ln, &lt)?;
            let post = vec![
                z0.clone(),
                z0.clone(),
                z0.clone(),
                pv[0].clone(),
                pv[1].clone(),
                pv[2].clone(),
            ];
            let target = v_pre.sub(&v2.substitute(&post)?)?;
            let mut lin_c = vec![gi.scale(-1.0), gj.clone()];
            lin_c.extend(cons);
            let mut ineqs = lin_c.clone();
            for a in 0..lin_c.len() {
                for b in a + 1..lin_c.len() {
                    ineqs.push(lin_c[a].mul(&lin_c[b])?);
                }
            }
            ineqs.push(ball(&pre, n)?);
            ineqs.retain(|g| g.max_abs_coefficient() > 1e-12);
            prog.require_nonneg(&label, &target, &ineqs, &[], 2, false)?;
        }
    }
    Ok(())
}

/// Pre-impact velocity `w = (u, v, ω)` of a flight case in the variables of
/// [`flight_after_impact`]: `k = i`: `(θ, u, g, ω)` with `g = −γ̇_k(w)`, `v = −g − l_kω`;
/// `k ≠ i`: `(u, v, ω, Δ)`.
fn flight_pre_velocity(l: [f64; 2], k: usize, i: usize, x: &[Poly]) -> Result<[Poly; 3], SosError> {
    Ok(if k == i {
        [
            x[1].clone(),
            x[2].add(&x[3].scale(l[k]))?.scale(-1.0),
            x[3].clone(),
        ]
    } else {
        [x[0].clone(), x[1].clone(), x[2].clone()]
    })
}

/// The ballistic flight from the post-impact velocity `v0` at contact `k` to the landing at
/// contact `i`, in the variables of [`flight_after_impact`].
struct BallisticFlight {
    /// Configuration `(0, z₀, θ₀)` of the flight's start (the impact at `k`, `γ_k = 0`).
    start_q: [Poly; 3],
    /// Flight duration `Δ` (`2γ̇_k(x₀)/cosα` for `k = i`, the variable `x₃` otherwise).
    dl: Poly,
    /// `Δ²`.
    d2: Poly,
    /// `γ̇_k(x₀)` and `γ̇_i(x₀)`.
    gk0: Poly,
    gi0: Poly,
    /// The state `x⁻ = Φ_Δ(x₀)` at the landing, in the six state variables.
    landing: [Poly; 6],
}

/// Builds [`BallisticFlight`] (free flight under gravity tilted by `α`).
fn ballistic_flight(
    p: &PlanarParams,
    k: usize,
    i: usize,
    x: &[Poly],
    v0: &[Poly],
) -> Result<BallisticFlight, SosError> {
    let l = [p.l(0), p.l(1)];
    let (sa, ca) = (p.alpha.sin(), p.alpha.cos());
    let n = x.len();
    let gk0 = v0[1].add(&v0[2].scale(l[k]))?;
    let gi0 = v0[1].add(&v0[2].scale(l[i]))?;
    let (th0, dl) = if k == i {
        (x[0].clone(), gk0.scale(2.0 / ca))
    } else {
        let dl = x[3].clone();
        let th = gi0
            .mul(&dl)?
            .sub(&dl.mul(&dl)?.scale(0.5 * ca))?
            .scale(1.0 / (l[k] - l[i]));
        (th, dl)
    };
    let z0 = th0.scale(-l[k]);
    let d2 = dl.mul(&dl)?;
    let landing = [
        v0[0].mul(&dl)?.add(&d2.scale(0.5 * sa))?,
        z0.add(&v0[1].mul(&dl)?)?.sub(&d2.scale(0.5 * ca))?,
        th0.add(&v0[2].mul(&dl)?)?,
        v0[0].add(&dl.scale(sa))?,
        v0[1].sub(&dl.scale(ca))?,
        v0[2].clone(),
    ];
    Ok(BallisticFlight {
        start_q: [const_poly(n, 0.0), z0, th0],
        dl,
        d2,
        gk0,
        gi0,
        landing,
    })
}

/// Registers `target ≥ 0` on the semialgebraic set of one flight case: the linear
/// constraints `lin_c` (plus the case's own: for `k = i` `γ_o ≥ 0` at the start and at the
/// landing; for `k ≠ i` `Δ ≥ 0`, `γ_k(x⁻) ≥ 0`, `γ̇_i(x⁻) ≤ 0`, `γ_i(x₀) ≥ 0`), their
/// pairwise products, and the unit ball on the pre-impact state `w` (its velocity part for
/// `k ≠ i`, where `θ` is a derived quantity: a superset, hence sound).
#[allow(clippy::too_many_arguments)]
fn require_flight_case(
    prog: &mut SosProgram,
    p: &PlanarParams,
    (k, i): (usize, usize),
    x: &[Poly],
    wv: &[Poly; 3],
    fl: &BallisticFlight,
    mut lin_c: Vec<Poly>,
    label: &str,
    target: &Poly,
    (half, mult_half_degree): (u32, u32),
) -> Result<(), SosError> {
    let l = [p.l(0), p.l(1)];
    let ca = p.alpha.cos();
    let n = x.len();
    let o = 1 - k;
    let mut other = Vec::new();
    let mut bl = const_poly(n, 1.0);
    for c in wv {
        bl = bl.sub(&c.mul(c)?)?;
    }
    if k == i {
        // γ_o(w) = (l_o − l_k)θ ≥ 0; γ_o(x⁻) ≥ 0 (quadratic; with concavity of γ_o in
        // flight, contact o does not land first).
        lin_c.push(x[0].scale(l[o] - l[k]));
        other.push(fl.landing[Z].add(&fl.landing[TH].scale(l[o]))?);
        bl = bl.sub(&x[0].mul(&x[0])?.scale(1.0 + l[k] * l[k]))?;
    } else {
        // Δ ≥ 0; γ_k(x⁻) ≥ 0 ⇔ γ̇_k(x₀) − ½cosαΔ ≥ 0 (Δ > 0);
        // γ̇_i(x⁻) ≤ 0; γ_i(x₀) ≥ 0 (quadratic).
        lin_c.push(fl.dl.clone());
        lin_c.push(fl.gk0.sub(&fl.dl.scale(0.5 * ca))?);
        lin_c.push(fl.gi0.sub(&fl.dl.scale(ca))?.scale(-1.0));
        other.push(fl.d2.scale(0.5 * ca).sub(&fl.gi0.mul(&fl.dl)?)?);
    }
    let mut ineqs = lin_c.clone();
    for a in 0..lin_c.len() {
        for b in a + 1..lin_c.len() {
            ineqs.push(lin_c[a].mul(&lin_c[b])?);
        }
    }
    ineqs.extend(other);
    ineqs.push(bl);
    ineqs.retain(|g| g.max_abs_coefficient() > 1e-12);
    prog.require_nonneg_with_basis(
        label,
        target,
        &ineqs,
        &[],
        half,
        false,
        Some(monomials(n, 1, half)),
        Some(mult_half_degree),
    )
}

/// Condition 4, **our formulation** for `e > 0`: every free flight that can recur starts at
/// the post-impact state `x₀ = M_k(w)` of an impact at a contact `k` (in the ZOD with
/// φ = 0 a contact with `γ_k = γ̇_k = 0` never lifts off, because `γ̈_k = −cosα < 0` in FF,
/// so flights start only after impacts). We require `V₂(x₀) − V₂(M_i(x⁻)) ≥ 0` where
/// `x⁻ = Φ_Δ(x₀)` is the ballistic flight ending with the impact at contact `i`. Variables:
/// `k = i`: `w = (θ, u, v, ω)` and `Δ = 2γ̇_k(x₀)/cosα = −2eγ̇_k(w)/cosα`;
/// `k ≠ i`: `(u, v, ω, Δ)` of `w`, with `θ` from `γ_i(x⁻) = 0`, i.e.
/// `(l_i − l_k)θ = −γ̇_i(x₀)Δ + ½cosαΔ²`. Split by the impulse pieces of both impacts.
fn flight_after_impact(
    prog: &mut SosProgram,
    p: &PlanarParams,
    v2: &Poly,
    mult_half_degree: u32,
    half: u32,
) -> Result<(), SosError> {
    let l = [p.l(0), p.l(1)];
    let x = Poly::vars(4);
    for k in 0..2 {
        for i in 0..2 {
            let wv = flight_pre_velocity(l, k, i, &x)?;
            let gk_w = wv[1].add(&wv[2].scale(l[k]))?;
            for (nk, lnk, ltk, consk) in impulse_pieces(p, k, &wv)? {
                let v0 = apply_impulse(p, k, &wv, &lnk, &ltk)?;
                let fl = ballistic_flight(p, k, i, &x, &v0)?;
                let [q0, q1, q2] = fl.start_q.clone();
                let v_start =
                    v2.substitute(&[q0, q1, q2, v0[0].clone(), v0[1].clone(), v0[2].clone()])?;
                let [xm0, xm1, xm2, xm3, xm4, xm5] = fl.landing.clone();
                let mvel = [xm3, xm4, xm5];
                for (ni, lni, lti, consi) in impulse_pieces(p, i, &mvel)? {
                    let label = format!(
                        "flight after impact {} then impact {} ({nk}, {ni})",
                        k + 1,
                        i + 1
                    );
                    let pv = apply_impulse(p, i, &mvel, &lni, &lti)?;
                    let xp = vec![
                        xm0.clone(),
                        xm1.clone(),
                        xm2.clone(),
                        pv[0].clone(),
                        pv[1].clone(),
                        pv[2].clone(),
                    ];
                    let mut target = v_start.sub(&v2.substitute(&xp)?)?;
                    if k == i {
                        // At g = 0 both impulses vanish and Δ = 0, so the target vanishes on
                        // the hyperplane g = 0: divide by g ≥ 0 exactly (closed-form facial
                        // reduction; the undivided SOS program has no strictly feasible
                        // point because σ₀ would have to vanish on that hyperplane).
                        // Not divisible for a stick second impact after a slip first one
                        // (there the set, not the polynomial, forces σ̇ = 0 at g = 0).
                        if let Ok(t) = target.div_var(2, 1e-9) {
                            target = t;
                        }
                    }
                    let mut lin_c = vec![gk_w.scale(-1.0)];
                    lin_c.extend(consk.iter().cloned());
                    lin_c.extend(consi);
                    require_flight_case(
                        prog,
                        p,
                        (k, i),
                        &x,
                        &wv,
                        &fl,
                        lin_c,
                        &label,
                        &target,
                        (half, mult_half_degree),
                    )?;
                }
            }
        }
    }
    Ok(())
}

/// Condition 3–4 for `e > 0`, **our formulation** `FlightFormulation::PreImpact` (the default;
/// docs/decisions/000-sos-stability.md decision 7): the values of `V₂` are compared at
/// successive **pre-impact** states. For every pre-impact state `w` at a contact `k`
/// (`γ_k(w) = 0`, `γ̇_k(w) ≤ 0`, `γ_o(w) ≥ 0`, `|w| ≤ 1`) followed by the ballistic flight from
/// `x₀ = M_k(w)` to the next pre-impact state `x⁻ = Φ_Δ(x₀)` at the contact `i` that lands
/// first, `V₂(w) − V₂(x⁻) ≥ 0`. The flight may have `Δ = 0` (the post-impact state is itself a
/// pre-impact state of the other contact, or the other contact stays closed with `γ̇_o(x₀) = 0`
/// and a one-contact mode follows), so this condition also contains every impact that is not
/// followed by a flight; the plain-impact conditions are then not needed. Variables as in
/// [`flight_after_impact`]; split by the impulse piece of the impact at `k` only (3 pieces
/// instead of 9 piece pairs), degree 6, no impulse at the landing.
fn flight_pre_impact(
    prog: &mut SosProgram,
    p: &PlanarParams,
    v2: &Poly,
    mult_half_degree: u32,
    half: u32,
) -> Result<(), SosError> {
    let l = [p.l(0), p.l(1)];
    let x = Poly::vars(4);
    for k in 0..2 {
        for i in 0..2 {
            let wv = flight_pre_velocity(l, k, i, &x)?;
            let gk_w = wv[1].add(&wv[2].scale(l[k]))?;
            for (nk, lnk, ltk, consk) in impulse_pieces(p, k, &wv)? {
                let label = format!("pre-impact {} flight to impact {} ({nk})", k + 1, i + 1);
                let v0 = apply_impulse(p, k, &wv, &lnk, &ltk)?;
                let fl = ballistic_flight(p, k, i, &x, &v0)?;
                let [q0, q1, q2] = fl.start_q.clone();
                let w_state = [q0, q1, q2, wv[0].clone(), wv[1].clone(), wv[2].clone()];
                let mut target = v2.substitute(&w_state)?.sub(&v2.substitute(&fl.landing)?)?;
                if k == i {
                    // For the slip pieces the impulse and Δ vanish at g = 0, and so does the
                    // target: divide by g ≥ 0 exactly (closed-form facial reduction). The
                    // stick piece is not divisible (its set forces σ̇ = 0 at g = 0).
                    if let Ok(t) = target.div_var(2, 1e-9) {
                        target = t;
                    }
                }
                let mut lin_c = vec![gk_w.scale(-1.0)];
                lin_c.extend(consk.iter().cloned());
                require_flight_case(
                    prog,
                    p,
                    (k, i),
                    &x,
                    &wv,
                    &fl,
                    lin_c,
                    &label,
                    &target,
                    (half, mult_half_degree),
                )?;
            }
        }
    }
    Ok(())
}

/// Builds the SOS program for `p` and `method` with a `V₂` template of degree `v2_degree`
/// (3 or 4); returns it with the V polynomial (in the six state variables), the condition
/// kinds in registration order and the mode names.
fn build(
    p: &PlanarParams,
    method: Method,
    flight_form: FlightFormulation,
    v2_degree: u32,
) -> Result<(SosProgram, Poly, Vec<Kind>, Vec<String>), SosError> {
    if !(3..=4).contains(&v2_degree) {
        return Err(SosError::InvalidInput(format!(
            "V2 template degree {v2_degree}: only 3 and 4 are supported"
        )));
    }
    // Half-degree of the flight-then-impact conditions: V₂ of degree d composed with the
    // ballistic flight (positions quadratic in the reduced variables) has degree 2d.
    let flight_half = v2_degree;
    let mut prog = SosProgram::new();
    let ptt = method == Method::Ptt;
    let v2 = if ptt {
        let basis = monomials(6, 2, 3);
        prog.new_free_poly(6, &basis)
    } else {
        // The 55 monomials of degree 1–3 in (z, θ, u, v, ω), less u, v, ω: positivity
        // (condition 1) forces their coefficients to 0 because the velocities are sign-free
        // on its set, so they are removed (facial reduction).
        let basis: Vec<Monomial> = template_monomials_of_degree(v2_degree)
            .into_iter()
            .filter(|m| !(degree(m) == 1 && m[0] == 0 && m[1] == 0))
            .map(|m| {
                let mut e = vec![0];
                e.extend(m);
                e
            })
            .collect();
        let pp = prog.new_free_poly(6, &basis);
        pp.add(&Poly::var(6, Y)?)?
    };
    let mut kinds = Vec::new();
    let mut names = Vec::new();
    // Extra reduced variable for y in the PTT baseline (y is not cyclic for a general V).
    let ey = usize::from(ptt);
    let yv = |n: usize| -> Poly {
        if ptt {
            lin(n, 0.0, &[(n - 1, 1.0)])
        } else {
            const_poly(n, 0.0)
        }
    };
    let (l, h) = ([p.l(0), p.l(1)], p.h);
    let (sa, ca) = (p.alpha.sin(), p.alpha.cos());

    // 1. Positivity.
    {
        let n = 5 + ey;
        let x = Poly::vars(n);
        let map = vec![
            yv(n),
            x[0].clone(),
            x[1].clone(),
            x[2].clone(),
            x[3].clone(),
            x[4].clone(),
        ];
        let vr = v2.substitute(&map)?;
        // e > 0, our formulation: P − ε(u⁴ + v⁴ + ω⁴) ≥ 0 with the margin ε itself as the
        // coefficient of the quartic (the appendix proof of condition 3a works with any
        // positive coefficient), so the normalisation of V₂ by the y coefficient does not
        // force P ≥ u⁴ + v⁴ + ω⁴.
        let scaled = !ptt && p.e > 0.0;
        let target = if ptt {
            vr
        } else if scaled {
            let mut quartic = Poly::zero(n);
            for k in 2..5 {
                let mut m = vec![0; n];
                m[k] = 4;
                quartic.add_term(m, crate::poly::Affine::var(0, 1.0));
            }
            vr.sub(&quartic)?
        } else {
            let mut t = vr;
            for xk in &x[2..5] {
                t = t.sub(&xk.pow(4)?)?;
            }
            t
        };
        let g1 = lin(n, 0.0, &[(0, 1.0), (1, l[0])]);
        let g2 = lin(n, 0.0, &[(0, 1.0), (1, l[1])]);
        let b = ball(&map, n)?;
        prog.require_nonneg("positivity", &target, &[g1, g2, b], &[], 2, !scaled)?;
        kinds.push(if scaled {
            Kind::PositivityScaled
        } else {
            Kind::Positivity
        });
    }

    // 2. Modes.
    let mut modes = p.consistent_modes();
    if ptt {
        if let Some(ff) = p.mode_dynamics(Mode(ContactState::Free, ContactState::Free)) {
            modes.push(ff);
        }
    }
    for md in &modes {
        // dV/dt as a polynomial in the full state.
        let xs = Poly::vars(6);
        let f = [
            xs[U].clone(),
            xs[V].clone(),
            xs[W].clone(),
            const_poly(6, md.accel[0]),
            const_poly(6, md.accel[1]),
            const_poly(6, md.accel[2]),
        ];
        let mut dv = Poly::zero(6);
        for (k, fk) in f.iter().enumerate() {
            dv = dv.add(&v2.diff(k)?.mul(fk)?)?;
        }
        let target_full = dv.scale(-1.0);
        let Mode(a, b) = md.mode;
        let (map, ineqs): (Vec<Poly>, Vec<Poly>) = match (a, b) {
            (ContactState::Free, ContactState::Free) => {
                let n = 5 + ey;
                let x = Poly::vars(n);
                let map = vec![
                    yv(n),
                    x[0].clone(),
                    x[1].clone(),
                    x[2].clone(),
                    x[3].clone(),
                    x[4].clone(),
                ];
                let g1 = lin(n, 0.0, &[(0, 1.0), (1, l[0])]);
                let g2 = lin(n, 0.0, &[(0, 1.0), (1, l[1])]);
                let bl = ball(&map, n)?;
                (map, vec![g1, g2, bl])
            }
            (ContactState::Stick, ContactState::Stick) => continue,
            (s1, s2) if s1 == s2 => {
                // PP / NN: z = θ = v = ω = 0, reduced (u).
                let s = if s1 == ContactState::Pos { 1.0 } else { -1.0 };
                let n = 1 + ey;
                let z0 = const_poly(n, 0.0);
                let map = vec![
                    yv(n),
                    z0.clone(),
                    z0.clone(),
                    lin(n, 0.0, &[(0, 1.0)]),
                    z0.clone(),
                    z0,
                ];
                let bl = ball(&map, n)?;
                (map, vec![lin(n, 0.0, &[(0, s)]), bl])
            }
            (s1, s2) => {
                let (i, st) = if s2 == ContactState::Free {
                    (0, s1)
                } else {
                    (1, s2)
                };
                let j = 1 - i;
                if st == ContactState::Stick {
                    // reduced (θ, ω): z = −lθ, v = −lω, u = −hω.
                    let n = 2 + ey;
                    let map = vec![
                        yv(n),
                        lin(n, 0.0, &[(0, -l[i])]),
                        lin(n, 0.0, &[(0, 1.0)]),
                        lin(n, 0.0, &[(1, -h)]),
                        lin(n, 0.0, &[(1, -l[i])]),
                        lin(n, 0.0, &[(1, 1.0)]),
                    ];
                    let gj = lin(n, 0.0, &[(0, l[j] - l[i])]);
                    let bl = ball(&map, n)?;
                    (map, vec![gj, bl])
                } else {
                    let s = if st == ContactState::Pos { 1.0 } else { -1.0 };
                    // reduced (θ, u, ω).
                    let n = 3 + ey;
                    let map = vec![
                        yv(n),
                        lin(n, 0.0, &[(0, -l[i])]),
                        lin(n, 0.0, &[(0, 1.0)]),
                        lin(n, 0.0, &[(1, 1.0)]),
                        lin(n, 0.0, &[(2, -l[i])]),
                        lin(n, 0.0, &[(2, 1.0)]),
                    ];
                    let gj = lin(n, 0.0, &[(0, l[j] - l[i])]);
                    let gs = lin(n, 0.0, &[(1, s), (2, s * h)]);
                    let bl = ball(&map, n)?;
                    (map, vec![gj, gs, bl])
                }
            }
        };
        let target = target_full.substitute(&map)?;
        let label = format!("mode {}", md.mode.name());
        prog.require_nonneg(&label, &target, &ineqs, &[], 2, false)?;
        kinds.push(Kind::Flow(md.mode, md.accel));
        names.push(md.mode.name());
    }

    // 3. Impacts, and 4. flight + impact for e > 0. The Coulomb impulse set of digest §2
    // ({Λ_N ≥ 0, Λ_Tσ̇⁺ ≤ 0, μ²Λ_N² ≥ Λ_T², (μ²Λ_N² − Λ_T²)σ̇⁺ = 0}) is exactly the union of
    // three pieces on which the impulses are linear in the pre-impact velocities (paper eqs.
    // 30–33): stick (σ̇⁺ = 0, |Λ_T| ≤ μΛ_N), slip + (Λ_T = −μΛ_N, σ̇⁺ ≥ 0) and slip −
    // (Λ_T = μΛ_N, σ̇⁺ ≤ 0). Each piece gets its own condition with linear constraints only.
    let phases: &[bool] = if p.e > 0.0 && !ptt {
        &[false, true]
    } else {
        &[false]
    };
    for &flight in phases {
        if !flight {
            if p.e > 0.0 && !ptt && flight_form == FlightFormulation::PreImpact {
                // Impacts not followed by a flight are the Δ = 0 face of the pre-impact
                // flight conditions.
            } else if p.e > 0.0 && !ptt {
                closed_impacts(&mut prog, p, &v2)?;
                kinds.push(Kind::ImpactClosed);
            } else {
                plain_impacts(&mut prog, p, &v2, ey, &yv)?;
                kinds.push(Kind::Impact(0));
                kinds.push(Kind::Impact(1));
            }
            continue;
        }
        if flight_form == FlightFormulation::PreImpact {
            flight_pre_impact(
                &mut prog,
                p,
                &v2,
                FLIGHT_MULTIPLIER_HALF_DEGREE,
                flight_half,
            )?;
            kinds.push(Kind::FlightPreImpact);
            continue;
        }
        if flight_form == FlightFormulation::AfterImpact {
            flight_after_impact(
                &mut prog,
                p,
                &v2,
                FLIGHT_MULTIPLIER_HALF_DEGREE,
                flight_half,
            )?;
            kinds.push(Kind::FlightAfterImpact);
            continue;
        }
        for i in 0..2 {
            let j = 1 - i;
            let mu = p.mu(i);
            // reduced: (θ, u, v, ω [, Δ] [, y])
            let n = 4 + usize::from(flight) + ey;
            let x = Poly::vars(n);
            let (th, u, v, w) = (&x[0], &x[1], &x[2], &x[3]);
            let li = l[i];
            let e1 = 1.0 + p.e;
            let gdot = lin(n, 0.0, &[(2, 1.0), (3, li)]);
            let pre = vec![
                yv(n),
                th.scale(-li),
                th.clone(),
                u.clone(),
                v.clone(),
                w.clone(),
            ];
            // (name, Λ_N, Λ_T, extra constraints)
            let mut pieces: Vec<(&str, Poly, Poly, Vec<Poly>)> = Vec::new();
            {
                // Stick: a Λ_N + b Λ_T = −(1+e)γ̇⁻, b Λ_N + c Λ_T = −σ̇⁻.
                let (a, b, c) = (1.0 + li * li, li * h, 1.0 + h * h);
                let det = a * c - b * b;
                let r1 = gdot.scale(-e1);
                let r2 = lin(n, 0.0, &[(1, -1.0), (3, -h)]);
                let ln = r1.scale(c / det).add(&r2.scale(-b / det))?;
                let lt = r2.scale(a / det).add(&r1.scale(-b / det))?;
                let cons = vec![ln.clone(), ln.scale(mu).sub(&lt)?, ln.scale(mu).add(&lt)?];
                pieces.push(("stick", ln, lt, cons));
            }
            for (name, s) in [("slip+", 1.0), ("slip-", -1.0)] {
                let den = 1.0 + li * li - s * mu * li * h;
                // den ≤ 0: Λ_N ≥ 0 with γ̇⁻ ≤ 0 forces γ̇⁻ = 0 and Λ_N = 0, the identity map,
                // for which every condition holds trivially; the piece is dropped.
                if den <= 1e-9 {
                    continue;
                }
                let ln = gdot.scale(-e1 / den);
                let lt = ln.scale(-s * mu);
                let post_sd = u
                    .add(&lt)?
                    .add(&w.add(&ln.scale(li))?.add(&lt.scale(h))?.scale(h))?;
                pieces.push((name, ln.clone(), lt, vec![ln, post_sd.scale(s)]));
            }
            for (name, ln, lt, cons) in pieces {
                let post = vec![
                    yv(n),
                    th.scale(-li),
                    th.clone(),
                    u.add(&lt)?,
                    v.add(&ln)?,
                    w.add(&ln.scale(li))?.add(&lt.scale(h))?,
                ];
                let mut ineqs = vec![gdot.scale(-1.0), lin(n, 0.0, &[(0, l[j] - li)])];
                ineqs.extend(cons);
                // Pairwise products of the linear constraints (Schmüdgen-type products, sound):
                // they restore what the quadratic Coulomb constraints `μ²Λ_N² − Λ_T² ≥ 0` and
                // `−Λ_Tσ̇⁺ ≥ 0` of the unsplit description provided.
                let linear = ineqs.len();
                for a in 0..linear {
                    for b in a + 1..linear {
                        let prod = ineqs[a].mul(&ineqs[b])?;
                        ineqs.push(prod);
                    }
                }
                ineqs.push(ball(&pre, n)?);
                let v_post = v2.substitute(&post)?;
                if !flight {
                    let target = v2.substitute(&pre)?.sub(&v_post)?;
                    prog.require_nonneg(
                        &format!("impact {} ({name})", i + 1),
                        &target,
                        &ineqs,
                        &[],
                        2,
                        false,
                    )?;
                } else {
                    let dl = &x[4];
                    let d2 = dl.mul(dl)?;
                    let start = vec![
                        yv(n).sub(&u.mul(dl)?)?.add(&d2.scale(0.5 * sa))?,
                        th.scale(-li).sub(&v.mul(dl)?)?.add(&d2.scale(-0.5 * ca))?,
                        th.sub(&w.mul(dl)?)?,
                        u.add(&dl.scale(-sa))?,
                        v.add(&dl.scale(ca))?,
                        w.clone(),
                    ];
                    for lk in l {
                        ineqs.push(start[Z].add(&start[TH].scale(lk))?);
                    }
                    ineqs.push(dl.clone());
                    // Explicit bound Δ ≤ 2(1 + |l_i|)/cosα, implied by γ_i(start) ≥ 0 and the
                    // ball (|γ̇_i⁻| ≤ (1 + |l_i|)|x⁻|); it makes the set visibly compact.
                    let dmax = 2.0 * (1.0 + li.abs()) / ca;
                    ineqs.push(lin(n, dmax, &[(4, -1.0)]));
                    let target = v2.substitute(&start)?.sub(&v_post)?;
                    // Every flight that can recur starts at a contact k with γ_k = 0 (after an
                    // impact with e > 0 or a lift-off from a one-contact mode); only the first
                    // flight from the initial perturbation can start elsewhere, and it is
                    // finite, as the paper argues for FF when e = 0. Splitting on k removes one
                    // variable exactly:
                    // k ≠ i: (l_k − l_i)θ = (v + l_k ω)Δ + ½cosα Δ², so θ is eliminated;
                    // k = i: Δ = −2γ̇_i⁻/cosα (the Δ = 0 root is the plain impact).
                    for (k, &lk) in l.iter().enumerate() {
                        let y4 = Poly::vars(4);
                        let map: Vec<Poly> = if k != i {
                            // reduced (u, v, ω, Δ)
                            let q = y4[1]
                                .add(&y4[2].scale(lk))?
                                .mul(&y4[3])?
                                .add(&y4[3].mul(&y4[3])?.scale(0.5 * ca))?
                                .scale(1.0 / (lk - li));
                            vec![
                                q,
                                y4[0].clone(),
                                y4[1].clone(),
                                y4[2].clone(),
                                y4[3].clone(),
                            ]
                        } else {
                            // reduced (θ, u, v, ω)
                            let dl = lin(4, 0.0, &[(2, -2.0 / ca), (3, -2.0 * li / ca)]);
                            vec![
                                y4[0].clone(),
                                y4[1].clone(),
                                y4[2].clone(),
                                y4[3].clone(),
                                dl,
                            ]
                        };
                        let label = format!(
                            "flight from contact {} then impact {} ({name})",
                            k + 1,
                            i + 1
                        );
                        let t = target.substitute(&map)?;
                        let mut g4 = Vec::new();
                        for g in &ineqs {
                            let gs = g.substitute(&map)?;
                            if gs.max_abs_coefficient() > 1e-12 {
                                g4.push(gs);
                            }
                        }
                        prog.require_nonneg_with_basis(
                            &label,
                            &t,
                            &g4,
                            &[],
                            flight_half,
                            false,
                            Some(monomials(4, 1, flight_half)),
                            Some(FLIGHT_MULTIPLIER_HALF_DEGREE),
                        )?;
                    }
                }
            }
            kinds.push(if flight {
                Kind::FlightImpact(i)
            } else {
                Kind::Impact(i)
            });
        }
    }
    Ok((prog, v2, kinds, names))
}

/// Searches a Lyapunov certificate for the equilibrium of `p`. Ambiguous points, points
/// without equilibrium and points outside the domain are returned without solving.
pub fn certify(p: &PlanarParams, opts: &CertifyOptions) -> Result<CertifyReport, SosError> {
    let mut rep = CertifyReport {
        params: *p,
        method: opts.method,
        verdict: Verdict::NoCertificate(String::new()),
        epsilon: 0.0,
        size: None,
        modes: Vec::new(),
        build_seconds: 0.0,
        solve_seconds: 0.0,
        mc_min: f64::NAN,
        v: None,
    };
    if let Some(r) = not_applicable(p) {
        rep.verdict = Verdict::NotApplicable(r);
        return Ok(rep);
    }
    if !p.equilibrium_exists() {
        rep.verdict = Verdict::NoEquilibrium;
        return Ok(rep);
    }
    let amb = p.ambiguous_modes();
    if !amb.is_empty() {
        rep.verdict = Verdict::Ambiguous(amb.iter().map(Mode::name).collect());
        return Ok(rep);
    }
    let t0 = Instant::now();
    let (prog, v2, kinds, names) = build(p, opts.method, opts.flight, opts.v2_degree)?;
    rep.build_seconds = t0.elapsed().as_secs_f64();
    rep.size = Some(prog.size());
    rep.modes = names;
    let mut sol = prog.solve(
        Margin::Maximize {
            cap: opts.margin_cap,
        },
        opts.tol,
    )?;
    let mut solve_seconds = sol.seconds;
    for &trace_weight in &opts.retry_trace_weights {
        if !matches!(sol.status, SosStatus::SolverFailed(_)) {
            break;
        }
        sol = prog.solve(
            Margin::MaximizeRegularized {
                cap: opts.margin_cap,
                trace_weight,
            },
            opts.tol,
        )?;
        solve_seconds += sol.seconds;
    }
    rep.solve_seconds = solve_seconds;
    rep.epsilon = sol.epsilon;
    match sol.status {
        SosStatus::Certified => {
            let v = v2.evaluate_coefficients(&sol.z);
            let mc = monte_carlo(
                p,
                opts.method,
                &v,
                sol.epsilon,
                &kinds,
                opts.mc_samples,
                opts.seed,
            )?;
            rep.mc_min = mc;
            rep.verdict = if mc >= -1e-6 {
                Verdict::Certified
            } else {
                Verdict::NoCertificate(format!("Monte-Carlo sign test failed (min {mc:.3e})"))
            };
            rep.v = Some(v);
        }
        SosStatus::NoCertificate(r) => rep.verdict = Verdict::NoCertificate(r),
        SosStatus::Infeasible(r) => {
            rep.verdict = Verdict::NoCertificate(format!("infeasible SDP: {r}"))
        }
        SosStatus::SolverFailed(r) => {
            rep.verdict = Verdict::NoCertificate(format!("solver status: {r}"))
        }
    }
    Ok(rep)
}

/// The ballistic (FF) flight from `x0` to the first touchdown: returns the pre-impact state
/// and the landing contact, `None` when no contact lands.
fn ballistic_to_impact(p: &PlanarParams, x0: &[f64; 6]) -> Option<([f64; 6], usize)> {
    let ca = p.alpha.cos();
    let a = p.a_ff();
    let mut best: Option<(f64, usize)> = None;
    for c in 0..2 {
        let (g0, gd0) = (p.gamma(x0, c), p.gamma_dot(x0, c));
        if g0 < -1e-12 {
            return None;
        }
        // Largest root of g0 + gd0 t − ½ cosα t² = 0.
        let t = (gd0 + (gd0 * gd0 + 2.0 * ca * g0.max(0.0)).sqrt()) / ca;
        if best.is_none_or(|(tb, _)| t < tb) {
            best = Some((t, c));
        }
    }
    let (t, i) = best?;
    let mut xm = *x0;
    xm[Y] += x0[U] * t + 0.5 * a[0] * t * t;
    xm[Z] += x0[V] * t + 0.5 * a[1] * t * t;
    xm[TH] += x0[W] * t;
    xm[U] += a[0] * t;
    xm[V] += a[1] * t;
    Some((xm, i))
}

fn sample_ball<R: Rng>(rng: &mut R, n: usize, r: f64) -> Vec<f64> {
    loop {
        let x: Vec<f64> = (0..n).map(|_| rng.gen_range(-r..r)).collect();
        if x.iter().map(|a| a * a).sum::<f64>() <= r * r {
            return x;
        }
    }
}

fn norm2(x: &[f64; 6]) -> f64 {
    x[1..].iter().map(|a| a * a).sum()
}

/// Monte-Carlo sign test of every condition on physical states (digest §6 test 8). Returns
/// the smallest condition value found (conditions are scaled by their samples' sizes only
/// through the ball, i.e. not at all).
pub fn monte_carlo_check(
    p: &PlanarParams,
    method: Method,
    v: &Poly,
    samples: usize,
    seed: u64,
) -> Result<f64, SosError> {
    let (_, _, kinds, _) = build(
        p,
        method,
        CertifyOptions::default().flight,
        CertifyOptions::default().v2_degree,
    )?;
    monte_carlo(p, method, v, 0.0, &kinds, samples, seed)
}

fn monte_carlo(
    p: &PlanarParams,
    method: Method,
    v: &Poly,
    quartic_weight: f64,
    kinds: &[Kind],
    samples: usize,
    seed: u64,
) -> Result<f64, SosError> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut worst = f64::INFINITY;
    let dv: Vec<Poly> = (0..6).map(|k| v.diff(k)).collect::<Result<_, _>>()?;
    let ptt = method == Method::Ptt;
    let l = [p.l(0), p.l(1)];
    for kind in kinds {
        let mut done = 0;
        let mut tries = 0;
        while done < samples && tries < samples * 50 {
            tries += 1;
            let s = sample_ball(&mut rng, 7, 1.0);
            let mut x = [0.0; 6];
            x.copy_from_slice(&s[..6]);
            if !ptt {
                x[Y] = 0.0;
            }
            let val = match *kind {
                Kind::PositivityScaled => {
                    if p.gamma(&x, 0) < 0.0 || p.gamma(&x, 1) < 0.0 || norm2(&x) > 1.0 {
                        continue;
                    }
                    v.eval(&x)?
                        - x[Y]
                        - quartic_weight * (x[U].powi(4) + x[V].powi(4) + x[W].powi(4))
                }
                Kind::Positivity => {
                    if p.gamma(&x, 0) < 0.0 || p.gamma(&x, 1) < 0.0 || norm2(&x) > 1.0 {
                        continue;
                    }
                    let pv = v.eval(&x)?
                        - if ptt {
                            0.0
                        } else {
                            x[U].powi(4) + x[V].powi(4) + x[W].powi(4)
                        };
                    // V₂ − y = P for the multi-V form.
                    pv - if ptt { 0.0 } else { x[Y] }
                }
                Kind::Flow(mode, acc) => {
                    let Mode(a, b) = mode;
                    let active: Vec<usize> = [a, b]
                        .iter()
                        .enumerate()
                        .filter(|(_, st)| **st != ContactState::Free)
                        .map(|(k, _)| k)
                        .collect();
                    match active.len() {
                        1 => {
                            let i = active[0];
                            x[Z] = -l[i] * x[TH];
                            x[V] = -l[i] * x[W];
                            if [a, b].contains(&ContactState::Stick) {
                                x[U] = -p.h * x[W];
                            }
                        }
                        2 => {
                            x[Z] = 0.0;
                            x[TH] = 0.0;
                            x[V] = 0.0;
                            x[W] = 0.0;
                        }
                        _ => {}
                    }
                    let sd = p.sigma_dot(&x);
                    let ok_slip = match (a, b) {
                        (ContactState::Pos, _) | (_, ContactState::Pos) => sd >= 0.0,
                        (ContactState::Neg, _) | (_, ContactState::Neg) => sd <= 0.0,
                        _ => true,
                    };
                    if !ok_slip
                        || p.gamma(&x, 0) < -1e-12
                        || p.gamma(&x, 1) < -1e-12
                        || norm2(&x) > 1.0
                    {
                        continue;
                    }
                    let f = [x[U], x[V], x[W], acc[0], acc[1], acc[2]];
                    let mut d = 0.0;
                    for k in 0..6 {
                        d += dv[k].eval(&x)? * f[k];
                    }
                    -d
                }
                Kind::ImpactClosed => {
                    // Both contacts closed; the other contact not approaching.
                    let i = rng.gen_range(0..2usize);
                    x[Z] = 0.0;
                    x[TH] = 0.0;
                    if p.gamma_dot(&x, 1 - i) < 0.0 || norm2(&x) > 1.0 {
                        continue;
                    }
                    let Some((xp, _, _)) = p.impact(&x, i) else {
                        continue;
                    };
                    v.eval(&x)? - v.eval(&xp)?
                }
                Kind::FlightAfterImpact => {
                    // A previous impact at k from w, the ballistic flight from x₀ = M_k(w) to
                    // the next impact (whichever contact lands first), and that impact.
                    let k = rng.gen_range(0..2usize);
                    x[Z] = -l[k] * x[TH];
                    if p.gamma(&x, 1 - k) < 0.0 || norm2(&x) > 1.0 {
                        continue;
                    }
                    let Some((x0, _, _)) = p.impact(&x, k) else {
                        continue;
                    };
                    let Some((xm, i)) = ballistic_to_impact(p, &x0) else {
                        continue;
                    };
                    let Some((xp, _, _)) = p.impact(&xm, i) else {
                        continue;
                    };
                    v.eval(&x0)? - v.eval(&xp)?
                }
                Kind::FlightPreImpact => {
                    // A pre-impact state w at k, the impact, and the ballistic flight from
                    // M_k(w) to the next pre-impact state (whichever contact lands first).
                    let k = rng.gen_range(0..2usize);
                    x[Z] = -l[k] * x[TH];
                    if p.gamma(&x, 1 - k) < 0.0 || norm2(&x) > 1.0 {
                        continue;
                    }
                    let Some((x0, _, _)) = p.impact(&x, k) else {
                        continue;
                    };
                    let Some((xm, _)) = ballistic_to_impact(p, &x0) else {
                        continue;
                    };
                    v.eval(&x)? - v.eval(&xm)?
                }
                Kind::Impact(i) | Kind::FlightImpact(i) => {
                    x[Z] = -l[i] * x[TH];
                    if p.gamma(&x, 1 - i) < 0.0 || norm2(&x) > 1.0 {
                        continue;
                    }
                    let Some((xp, _, _)) = p.impact(&x, i) else {
                        continue;
                    };
                    if let Kind::FlightImpact(_) = kind {
                        // Flights that start at a contact k with γ_k = 0 (see `build`).
                        let a = p.a_ff();
                        let ca = p.alpha.cos();
                        let k = rng.gen_range(0..2usize);
                        let gd = p.gamma_dot(&x, i);
                        let dl = if k == i {
                            -2.0 * gd / ca
                        } else {
                            let dmax = 2.0 * (1.0 + l[i].abs()) / ca;
                            let dl = rng.gen_range(0.0..=dmax);
                            x[TH] =
                                ((x[V] + l[k] * x[W]) * dl + 0.5 * ca * dl * dl) / (l[k] - l[i]);
                            x[Z] = -l[i] * x[TH];
                            dl
                        };
                        if dl < 0.0 || p.gamma(&x, 1 - i) < 0.0 || norm2(&x) > 1.0 {
                            continue;
                        }
                        let Some((xp, _, _)) = p.impact(&x, i) else {
                            continue;
                        };
                        let mut x0 = x;
                        x0[Y] = x[Y] - x[U] * dl + 0.5 * a[0] * dl * dl;
                        x0[Z] = x[Z] - x[V] * dl + 0.5 * a[1] * dl * dl;
                        x0[TH] = x[TH] - x[W] * dl;
                        x0[U] = x[U] - a[0] * dl;
                        x0[V] = x[V] - a[1] * dl;
                        if p.gamma(&x0, 0) < -1e-9 || p.gamma(&x0, 1) < -1e-9 {
                            continue;
                        }
                        v.eval(&x0)? - v.eval(&xp)?
                    } else {
                        v.eval(&x)? - v.eval(&xp)?
                    }
                }
            };
            done += 1;
            worst = worst.min(val);
        }
    }
    Ok(worst)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks one physical flight sample against its condition: the target polynomial at
    /// the reduced variables equals `want` (the physical drop of `V`; for `k = i` possibly
    /// divided by `g = −γ̇_k(w)`), and the sample lies in the condition's semialgebraic set.
    fn check_flight_sample(
        p: &PlanarParams,
        cond: &crate::program::Condition,
        z: &[f64],
        (k, i): (usize, usize),
        (w, x0, xm): (&[f64; 6], &[f64; 6], &[f64; 6]),
        want: f64,
        name: &str,
    ) -> Result<(), SosError> {
        let t = cond.p.evaluate_coefficients(z);
        let g = -p.gamma_dot(w, k);
        let red: Vec<f64> = if k == i {
            vec![w[TH], w[U], g, w[W]]
        } else {
            let dl = (xm[U] - x0[U]) / p.alpha.sin();
            vec![w[U], w[V], w[W], dl]
        };
        let got = t.eval(&red)?;
        let ok = (got - want).abs() < 1e-8 * (1.0 + want.abs())
            || (k == i && (got * g - want).abs() < 1e-8 * (1.0 + want.abs()));
        assert!(ok, "{name}: polynomial {got} vs physics {want} (g = {g})");
        for gk in &cond.ineqs {
            let val = gk.eval(&red)?;
            assert!(
                val >= -1e-9,
                "{name}: constraint {val} < 0 at a physical state"
            );
        }
        Ok(())
    }

    #[test]
    fn template_and_gram_sizes() -> Result<(), SosError> {
        let p = PlanarParams::new(30f64.to_radians(), 0.5, 2.0, 1.0, 0.0);
        let (prog, v2, kinds, _) = build(&p, Method::MultiV, FlightFormulation::AnyStart, 3)?;
        // 55 template coefficients, 3 of them forced to 0, + y.
        assert_eq!(template_monomials().len(), 55);
        assert_eq!(v2.terms().len(), 53);
        let size = prog.size();
        // Digest §3 sizes less the constant monomial, which facial reduction removes from
        // σ₀ and from the ball multiplier (the conditions vanish at the equilibrium):
        // positivity σ0: 21 → 20, multipliers on γ₁, γ₂: 6, ball: 6 → 5.
        assert_eq!(&size.psd_blocks[..4], &[20, 6, 6, 5]);
        // single-slip modes: 3 vars → 10 → 9; impact: 5 vars → 21 → 20.
        assert!(size.psd_blocks.contains(&9) && size.psd_blocks.contains(&20));
        assert_eq!(kinds.len(), 1 + p.consistent_modes().len() + 2);
        let q = PlanarParams { e: 0.1, ..p };
        let (prog, _, _, _) = build(&q, Method::MultiV, FlightFormulation::AnyStart, 3)?;
        // flight then impact: 4 reduced vars, σ₀ basis of degree 1–3: 34.
        assert!(prog.size().psd_blocks.contains(&34));
        Ok(())
    }

    #[test]
    fn flight_after_impact_program_shape() -> Result<(), SosError> {
        let p = PlanarParams::new(20f64.to_radians(), 1.0, 1.0, 1.0, 0.1);
        let (prog, _, kinds, _) = build(&p, Method::MultiV, FlightFormulation::AfterImpact, 3)?;
        let labels: Vec<&str> = prog.conditions().iter().map(|c| c.label.as_str()).collect();
        // 2 × 2 contact pairs × 3 × 3 impulse pieces (no slip piece is dropped at μ = 1).
        assert_eq!(
            labels
                .iter()
                .filter(|l| l.starts_with("flight after"))
                .count(),
            36
        );
        // Plain impacts only with both contacts closed: 2 contacts × 3 pieces.
        assert_eq!(
            labels.iter().filter(|l| l.contains("both closed")).count(),
            6
        );
        assert!(!labels.iter().any(|l| l.starts_with("flight from")));
        assert!(kinds.contains(&Kind::FlightAfterImpact));
        assert!(kinds.contains(&Kind::PositivityScaled));
        // Flight conditions: 4 reduced variables, σ₀ on (a top-degree-pruned subset of) the
        // 34 monomials of degree 1–3.
        let blocks = prog.size().psd_blocks;
        assert!(blocks.iter().all(|b| *b <= 34), "{blocks:?}");
        assert!(
            blocks.iter().filter(|b| **b > 9).count() >= 36,
            "{blocks:?}"
        );
        Ok(())
    }

    /// The polynomial pre-impact flight targets agree with the physical event chain
    /// (impact at `k`, ballistic flight to the next pre-impact state) for a random numeric
    /// `V`, and every physical sample lies in its condition's semialgebraic set.
    #[test]
    fn pre_impact_targets_match_physics() -> Result<(), SosError> {
        let p = PlanarParams::new(20f64.to_radians(), 0.8, 0.8, 1.0, 0.3);
        let (prog, v2, kinds, _) = build(&p, Method::MultiV, FlightFormulation::PreImpact, 3)?;
        assert!(kinds.contains(&Kind::FlightPreImpact));
        let labels: Vec<&str> = prog.conditions().iter().map(|c| c.label.as_str()).collect();
        // 2 × 2 contact pairs × 3 impulse pieces; no plain-impact conditions.
        assert_eq!(
            labels
                .iter()
                .filter(|l| l.starts_with("pre-impact"))
                .count(),
            12
        );
        assert!(!labels
            .iter()
            .any(|l| l.contains("impact") && !l.starts_with("pre-impact")));
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let z: Vec<f64> = (0..prog.num_vars())
            .map(|_| rng.gen_range(-1.0..1.0))
            .collect();
        let v = v2.evaluate_coefficients(&z);
        let l = [p.l(0), p.l(1)];
        let mut checked = [0usize; 2];
        for _ in 0..8000 {
            let s = sample_ball(&mut rng, 6, 0.5);
            let mut w = [0.0; 6];
            w.copy_from_slice(&s);
            w[Y] = 0.0;
            let k = usize::from(rng.gen_bool(0.5));
            w[Z] = -l[k] * w[TH];
            if p.gamma(&w, 1 - k) < 0.0 {
                continue;
            }
            let Some((x0, ln, lt)) = p.impact(&w, k) else {
                continue;
            };
            let Some((xm, i)) = ballistic_to_impact(&p, &x0) else {
                continue;
            };
            let tol = 1e-9 * (1.0 + ln.abs());
            let piece = if (lt - p.mu(k) * ln).abs() < tol && ln > 1e-12 {
                "slip-"
            } else if (lt + p.mu(k) * ln).abs() < tol && ln > 1e-12 {
                "slip+"
            } else {
                "stick"
            };
            let name = format!("pre-impact {} flight to impact {} ({piece})", k + 1, i + 1);
            let Some(cond) = prog.conditions().iter().find(|c| c.label == name) else {
                continue;
            };
            let want = v.eval(&w)? - v.eval(&xm)?;
            check_flight_sample(&p, cond, &z, (k, i), (&w, &x0, &xm), want, &name)?;
            checked[usize::from(k != i)] += 1;
        }
        assert!(
            checked[0] > 100 && checked[1] > 40,
            "too few samples checked: {checked:?}"
        );
        Ok(())
    }

    /// The polynomial flight-after-impact targets agree with the physical event chain
    /// (impact, ballistic flight, impact) for a random numeric `V`: for every sampled
    /// previous pre-impact state, the target of the piece pair that the physical impacts
    /// pick equals `V(x₀) − V(x₁⁺)` (divided by `g` for the same-contact hop).
    #[test]
    fn flight_after_impact_targets_match_physics() -> Result<(), SosError> {
        let p = PlanarParams::new(20f64.to_radians(), 0.8, 0.8, 1.0, 0.3);
        let (prog, v2, _, _) = build(&p, Method::MultiV, FlightFormulation::AfterImpact, 3)?;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let z: Vec<f64> = (0..prog.num_vars())
            .map(|_| rng.gen_range(-1.0..1.0))
            .collect();
        let v = v2.evaluate_coefficients(&z);
        let l = [p.l(0), p.l(1)];
        let piece = |x: &[f64; 6], c: usize, lt: f64, ln: f64| -> &'static str {
            let _ = x;
            if (lt - p.mu(c) * ln).abs() < 1e-9 * (1.0 + ln.abs()) && ln > 1e-12 {
                "slip-"
            } else if (lt + p.mu(c) * ln).abs() < 1e-9 * (1.0 + ln.abs()) && ln > 1e-12 {
                "slip+"
            } else {
                "stick"
            }
        };
        let mut checked = 0;
        for _ in 0..4000 {
            let s = sample_ball(&mut rng, 6, 0.5);
            let mut w = [0.0; 6];
            w.copy_from_slice(&s);
            w[Y] = 0.0;
            let k = usize::from(rng.gen_bool(0.5));
            w[Z] = -l[k] * w[TH];
            if p.gamma(&w, 1 - k) < 0.0 {
                continue;
            }
            let Some((x0, ln0, lt0)) = p.impact(&w, k) else {
                continue;
            };
            let Some((xm, i)) = ballistic_to_impact(&p, &x0) else {
                continue;
            };
            let Some((xp, ln1, lt1)) = p.impact(&xm, i) else {
                continue;
            };
            let (a, b) = (piece(&w, k, lt0, ln0), piece(&xm, i, lt1, ln1));
            // Ambiguous piece labels at stick/slip boundaries are skipped.
            let name = format!(
                "flight after impact {} then impact {} ({a}, {b})",
                k + 1,
                i + 1
            );
            let Some(cond) = prog.conditions().iter().find(|c| c.label == name) else {
                continue;
            };
            let want = v.eval(&x0)? - v.eval(&xp)?;
            check_flight_sample(&p, cond, &z, (k, i), (&w, &x0, &xm), want, &name)?;
            checked += 1;
        }
        assert!(checked > 200, "only {checked} samples checked");
        Ok(())
    }
}
