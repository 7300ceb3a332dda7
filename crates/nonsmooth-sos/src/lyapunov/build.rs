//! Construction of the SOS program: the `V₂` template (or the PTT `V`), condition 1
//! (positivity, paper eq. 54), condition 2 (`−∇V₂·ẋ ≥ 0` in every consistent contact mode,
//! equalities eliminated by substitution), and conditions 3–4 (impacts and flight + impact,
//! split by the impulse pieces of paper eqs. 30–33), with the [`Kind`] of every condition in
//! registration order.

use super::flight::{flight_after_impact, flight_pre_impact};
use super::impacts::{closed_impacts, plain_impacts};
use super::sets::{ball, const_poly, lin};
use super::template::{template_monomials_of_degree, FLIGHT_MULTIPLIER_HALF_DEGREE};
use super::types::{FlightFormulation, Method};
use crate::planar::{ContactState, Mode, PlanarParams, TH, U, V, W, Y, Z};
use crate::poly::{degree, monomials, Monomial, Poly};
use crate::program::SosProgram;
use crate::SosError;

/// Physical description of a condition, for the Monte-Carlo test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Kind {
    Positivity,
    Flow(Mode, [f64; 3]),
    Impact(usize),
    FlightImpact(usize),
    FlightAfterImpact,
    FlightPreImpact,
    ImpactClosed,
    PositivityScaled,
}

/// Builds the SOS program for `p` and `method` with a `V₂` template of degree `v2_degree`
/// (3 or 4); returns it with the V polynomial (in the six state variables), the condition
/// kinds in registration order and the mode names.
pub(super) fn build(
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

    // 3. Impacts, and 4. flight + impact for e > 0. The Coulomb impulse set (model section of
    // docs/decisions/000-sos-stability.md)
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
