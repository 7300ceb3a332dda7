//! Lyapunov certificates for the planar two-contact body (digest §3).
//!
//! **Multi-V (Várkonyi, Theorem 2).** `V₁` = mechanical energy (fixed), `V₂ = y + P(z, θ, u,
//! v, ω)` with `P` cubic (55 unknown coefficients). Conditions, each on the ball `|x| ≤ 1`:
//! 1. positivity (eq. 54): `P − u⁴ − v⁴ − ω⁴ ≥ 0` on `{γ₁ ≥ 0, γ₂ ≥ 0}`;
//! 2. every consistent contact mode (PF, NF, FP, FN, SF, FS, PP, NN): `−∇V₂·ẋ ≥ 0` on the
//!    mode's set, equalities eliminated by substitution (stick additionally uses `σ̇ = 0`,
//!    which is sound);
//! 3. impacts at each contact: `V₂(x⁻) − V₂(x⁺) ≥ 0` over `(θ, u, v, ω)`, one condition
//!    per piece of the Kane–Levinson/Coulomb impulse set (stick, slip +, slip −; on each the
//!    impulses are linear in the pre-impact velocities, paper eqs. 30–33), which is exactly
//!    the digest's set `{Λ_N ≥ 0, Λ_Tσ̇⁺ ≤ 0, μ²Λ_N² ≥ Λ_T², (μ²Λ_N² − Λ_T²)σ̇⁺ = 0}`;
//! 4. for `e > 0`, **our formulation** of the paper's (empty in the source) "free flight then
//!    impact" condition (digest §3 item 4): `V₂(M(x⁻)) ≤ V₂(x(t − Δ))` for the ballistic
//!    back-propagation `x(t − Δ)`, `Δ ≥ 0`, with `γ₁, γ₂ ≥ 0` at the flight start (enough
//!    because `γ_i` is concave in free flight). Restricted to flights that start at a
//!    contact `k` with `γ_k = 0` (the only flights that can recur), which eliminates one
//!    variable exactly; split by the impulse piece (stick, slip ±) as in item 3; degree 6 in
//!    4 reduced variables (Gram side 34) with degree-2 multipliers.
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
}

impl Default for CertifyOptions {
    fn default() -> Self {
        Self {
            method: Method::MultiV,
            margin_cap: 1e-2,
            tol: 1e-7,
            mc_samples: 2000,
            seed: 1,
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
        prog.require_nonneg(
            &format!("impact {}", i + 1),
            &target,
            &ineqs,
            &eqs,
            2,
            false,
        )?;
    }
    Ok(())
}

/// Builds the SOS program for `p` and `method`; returns it with the V polynomial (in the six
/// state variables) and the condition kinds, in registration order.
fn build(
    p: &PlanarParams,
    method: Method,
) -> Result<(SosProgram, Poly, Vec<Kind>, Vec<String>), SosError> {
    let mut prog = SosProgram::new();
    let ptt = method == Method::Ptt;
    let v2 = if ptt {
        let basis = monomials(6, 2, 3);
        prog.new_free_poly(6, &basis)
    } else {
        // The 55 monomials of degree 1–3 in (z, θ, u, v, ω), less u, v, ω: positivity
        // (condition 1) forces their coefficients to 0 because the velocities are sign-free
        // on its set, so they are removed (facial reduction).
        let basis: Vec<Monomial> = template_monomials()
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
        let target = if ptt {
            vr
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
        prog.require_nonneg("positivity", &target, &[g1, g2, b], &[], 2, true)?;
        kinds.push(Kind::Positivity);
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
        prog.require_nonneg(
            &format!("mode {}", md.mode.name()),
            &target,
            &ineqs,
            &[],
            2,
            false,
        )?;
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
            plain_impacts(&mut prog, p, &v2, ey, &yv)?;
            kinds.push(Kind::Impact(0));
            kinds.push(Kind::Impact(1));
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
                        let t = target.substitute(&map)?;
                        let mut g4 = Vec::new();
                        for g in &ineqs {
                            let gs = g.substitute(&map)?;
                            if gs.max_abs_coefficient() > 1e-12 {
                                g4.push(gs);
                            }
                        }
                        prog.require_nonneg_with_basis(
                            &format!(
                                "flight from contact {} then impact {} ({name})",
                                k + 1,
                                i + 1
                            ),
                            &t,
                            &g4,
                            &[],
                            3,
                            false,
                            Some(monomials(4, 1, 3)),
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
    let (prog, v2, kinds, names) = build(p, opts.method)?;
    rep.build_seconds = t0.elapsed().as_secs_f64();
    rep.size = Some(prog.size());
    rep.modes = names;
    let sol = prog.solve(
        Margin::Maximize {
            cap: opts.margin_cap,
        },
        opts.tol,
    )?;
    rep.solve_seconds = sol.seconds;
    rep.epsilon = sol.epsilon;
    match sol.status {
        SosStatus::Certified => {
            let v = v2.evaluate_coefficients(&sol.z);
            let mc = monte_carlo(p, opts.method, &v, &kinds, opts.mc_samples, opts.seed)?;
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
    let (_, _, kinds, _) = build(p, method)?;
    monte_carlo(p, method, v, &kinds, samples, seed)
}

fn monte_carlo(
    p: &PlanarParams,
    method: Method,
    v: &Poly,
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

    #[test]
    fn template_and_gram_sizes() -> Result<(), SosError> {
        let p = PlanarParams::new(30f64.to_radians(), 0.5, 2.0, 1.0, 0.0);
        let (prog, v2, kinds, _) = build(&p, Method::MultiV)?;
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
        let (prog, _, _, _) = build(&q, Method::MultiV)?;
        // flight then impact: 4 reduced vars, σ₀ basis of degree 1–3: 34.
        assert!(prog.size().psd_blocks.contains(&34));
        Ok(())
    }
}
