//! Conditions 3–4 for `e > 0`, **our formulation** of the paper's "free flight then impact"
//! condition (docs/decisions/000-sos-stability.md decision 7): the
//! ballistic flight between two impacts, composed with the impulse pieces of paper
//! eqs. 30–33, for [`FlightFormulation::AfterImpact`](super::FlightFormulation::AfterImpact),
//! [`FlightFormulation::PreImpact`](super::FlightFormulation::PreImpact) and
//! [`FlightFormulation::AnyStart`](super::FlightFormulation::AnyStart).

use super::impacts::{apply_impulse, impulse_pieces};
use super::sets::{ball, const_poly, lin, with_pairwise_products};
use crate::planar::{PlanarParams, TH, Z};
use crate::poly::{monomials, Poly};
use crate::program::{CertificateForm, SosProgram};
use crate::SosError;

/// Pre-impact velocity `w = (u, v, ω)` of a flight case in the variables of
/// [`flight_after_impact`]: `k = i`: `(θ, u, g, ω)` with `g = −γ̇_k(w)`, `v = −g − l_kω`;
/// `k ≠ i`: `(u, v, ω, Δ)`.
pub(super) fn flight_pre_velocity(
    l: [f64; 2],
    k: usize,
    i: usize,
    x: &[Poly],
) -> Result<[Poly; 3], SosError> {
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
pub(super) struct BallisticFlight {
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
pub(super) fn ballistic_flight(
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

/// One flight case of [`flight_after_impact`] and [`flight_pre_impact`]: the impact at `k`,
/// the ballistic flight and the landing at `i`.
#[derive(Clone, Copy)]
pub(super) struct FlightCase<'a> {
    /// Contact of the impact before the flight.
    k: usize,
    /// Contact of the landing.
    i: usize,
    /// The case's reduced variables.
    x: &'a [Poly],
    /// Pre-impact velocity `w = (u, v, ω)` ([`flight_pre_velocity`]).
    wv: &'a [Poly; 3],
    /// The flight ([`ballistic_flight`]).
    fl: &'a BallisticFlight,
}

/// Registers `target ≥ 0` on the semialgebraic set of one flight case: the linear
/// constraints `lin_c` (plus the case's own: for `k = i` `γ_o ≥ 0` at the start and at the
/// landing; for `k ≠ i` `Δ ≥ 0`, `γ_k(x⁻) ≥ 0`, `γ̇_i(x⁻) ≤ 0`, `γ_i(x₀) ≥ 0`), their
/// pairwise products, and the unit ball on the pre-impact state `w` (its velocity part for
/// `k ≠ i`, where `θ` is a derived quantity: a superset, hence sound).
pub(super) fn require_flight_case(
    prog: &mut SosProgram,
    p: &PlanarParams,
    case: &FlightCase<'_>,
    mut lin_c: Vec<Poly>,
    label: &str,
    target: &Poly,
    (half, mult_half_degree): (u32, u32),
) -> Result<(), SosError> {
    let FlightCase { k, i, x, wv, fl } = *case;
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
    let mut ineqs = with_pairwise_products(lin_c)?;
    ineqs.extend(other);
    ineqs.push(bl);
    ineqs.retain(|g| g.max_abs_coefficient() > 1e-12);
    let form = CertificateForm {
        half_degree: half,
        margin: false,
        sigma0_basis: Some(monomials(n, 1, half)),
        multiplier_half_degree: Some(mult_half_degree),
    };
    prog.require_nonneg_with_basis(label, target, &ineqs, &[], form)
}

/// One impulse piece of the impact at `k` of a flight case of [`flight_after_impact`] and
/// [`flight_pre_impact`].
struct FlightPiece<'a> {
    /// The flight case.
    case: FlightCase<'a>,
    /// The piece's name.
    name: &'static str,
    /// The post-impact velocity `M_k(w)`.
    v0: &'a [Poly; 3],
    /// The case's linear constraints so far: `γ̇_k(w) ≤ 0` and the piece's.
    lin_c: Vec<Poly>,
}

/// Calls `f` on every flight case (impact at `k`, landing at `i`) and impulse piece of the
/// impact at `k` (paper eqs. 30–33), in the variables of [`flight_pre_velocity`].
fn for_each_flight_piece(
    p: &PlanarParams,
    mut f: impl FnMut(FlightPiece<'_>) -> Result<(), SosError>,
) -> Result<(), SosError> {
    let l = [p.l(0), p.l(1)];
    let x = Poly::vars(4);
    for k in 0..2 {
        for i in 0..2 {
            let wv = flight_pre_velocity(l, k, i, &x)?;
            let gk_w = wv[1].add(&wv[2].scale(l[k]))?;
            for (name, lnk, ltk, consk) in impulse_pieces(p, k, &wv)? {
                let v0 = apply_impulse(p, k, &wv, &lnk, &ltk)?;
                let fl = ballistic_flight(p, k, i, &x, &v0)?;
                let mut lin_c = vec![gk_w.scale(-1.0)];
                lin_c.extend(consk);
                let case = FlightCase {
                    k,
                    i,
                    x: &x,
                    wv: &wv,
                    fl: &fl,
                };
                f(FlightPiece {
                    case,
                    name,
                    v0: &v0,
                    lin_c,
                })?;
            }
        }
    }
    Ok(())
}

/// Condition 4, **our formulation** for `e > 0`: every free flight that can recur starts at
/// the post-impact state `x₀ = M_k(w)` of an impact at a contact `k` (in the ZOD with
/// φ = 0 a contact with `γ_k = γ̇_k = 0` never lifts off, because `γ̈_k = −cosα < 0` in FF,
/// so flights start only after impacts). We require `V₂(x₀) − V₂(M_i(x⁻)) ≥ 0` where
/// `x⁻ = Φ_Δ(x₀)` is the ballistic flight ending with the impact at contact `i`. Variables:
/// `k = i`: `w = (θ, u, v, ω)` and `Δ = 2γ̇_k(x₀)/cosα = −2eγ̇_k(w)/cosα`;
/// `k ≠ i`: `(u, v, ω, Δ)` of `w`, with `θ` from `γ_i(x⁻) = 0`, i.e.
/// `(l_i − l_k)θ = −γ̇_i(x₀)Δ + ½cosαΔ²`. Split by the impulse pieces of both impacts.
pub(super) fn flight_after_impact(
    prog: &mut SosProgram,
    p: &PlanarParams,
    v2: &Poly,
    mult_half_degree: u32,
    half: u32,
) -> Result<(), SosError> {
    for_each_flight_piece(p, |piece: FlightPiece<'_>| {
        let FlightCase { k, i, fl, .. } = piece.case;
        let v0 = piece.v0;
        let [q0, q1, q2] = fl.start_q.clone();
        let v_start = v2.substitute(&[q0, q1, q2, v0[0].clone(), v0[1].clone(), v0[2].clone()])?;
        let [xm0, xm1, xm2, xm3, xm4, xm5] = fl.landing.clone();
        let mvel = [xm3, xm4, xm5];
        for (ni, lni, lti, consi) in impulse_pieces(p, i, &mvel)? {
            let label = format!(
                "flight after impact {} then impact {} ({}, {ni})",
                k + 1,
                i + 1,
                piece.name
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
            let mut lin_c = piece.lin_c.clone();
            lin_c.extend(consi);
            require_flight_case(
                prog,
                p,
                &piece.case,
                lin_c,
                &label,
                &target,
                (half, mult_half_degree),
            )?;
        }
        Ok(())
    })
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
pub(super) fn flight_pre_impact(
    prog: &mut SosProgram,
    p: &PlanarParams,
    v2: &Poly,
    mult_half_degree: u32,
    half: u32,
) -> Result<(), SosError> {
    for_each_flight_piece(p, |piece: FlightPiece<'_>| {
        let FlightCase { k, i, wv, fl, .. } = piece.case;
        let label = format!(
            "pre-impact {} flight to impact {} ({})",
            k + 1,
            i + 1,
            piece.name
        );
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
        require_flight_case(
            prog,
            p,
            &piece.case,
            piece.lin_c,
            &label,
            &target,
            (half, mult_half_degree),
        )
    })
}

/// Condition 4 for `e > 0` in [`FlightFormulation::AnyStart`](super::FlightFormulation::AnyStart)
/// (item 4 of the program in docs/decisions/000-sos-stability.md): `V₂(x₀) − V₂(M_i(x⁻)) ≥ 0`
/// for a flight of duration `Δ` from any start `x₀` with `γ_k(x₀) = 0`, ending with the
/// impact at `i` from `x⁻`. Variables `(θ, u, v, ω, Δ)` of `x⁻`, split by the impulse
/// pieces of paper eqs. 30–33 at `i` and by `k` ([`any_start_reduction`]).
pub(super) fn flight_any_start(
    prog: &mut SosProgram,
    p: &PlanarParams,
    v2: &Poly,
    mult_half_degree: u32,
    half: u32,
) -> Result<(), SosError> {
    let l = [p.l(0), p.l(1)];
    let (sa, ca) = (p.alpha.sin(), p.alpha.cos());
    for i in 0..2 {
        let j = 1 - i;
        // reduced: (θ, u, v, ω, Δ)
        let n = 5;
        let x = Poly::vars(n);
        let (th, u, v, w, dl) = (&x[0], &x[1], &x[2], &x[3], &x[4]);
        let li = l[i];
        let gdot = lin(n, 0.0, &[(2, 1.0), (3, li)]);
        let vel = [u.clone(), v.clone(), w.clone()];
        let pre = vec![
            const_poly(n, 0.0),
            th.scale(-li),
            th.clone(),
            u.clone(),
            v.clone(),
            w.clone(),
        ];
        for (name, ln, lt, cons) in impulse_pieces(p, i, &vel)? {
            let [pu, pv, pw] = apply_impulse(p, i, &vel, &ln, &lt)?;
            let post = vec![const_poly(n, 0.0), th.scale(-li), th.clone(), pu, pv, pw];
            let mut lin_c = vec![gdot.scale(-1.0), lin(n, 0.0, &[(0, l[j] - li)])];
            lin_c.extend(cons);
            let mut ineqs = with_pairwise_products(lin_c)?;
            ineqs.push(ball(&pre, n)?);
            let v_post = v2.substitute(&post)?;
            let d2 = dl.mul(dl)?;
            let start = vec![
                const_poly(n, 0.0)
                    .sub(&u.mul(dl)?)?
                    .add(&d2.scale(0.5 * sa))?,
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
            for k in 0..2 {
                let map = any_start_reduction(p, k, i)?;
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
                let form = CertificateForm {
                    half_degree: half,
                    margin: false,
                    sigma0_basis: Some(monomials(4, 1, half)),
                    multiplier_half_degree: Some(mult_half_degree),
                };
                prog.require_nonneg_with_basis(&label, &t, &g4, &[], form)?;
            }
        }
    }
    Ok(())
}

/// The variables `(θ, u, v, ω, Δ)` of [`flight_any_start`] over four reduced ones for a
/// flight from contact `k` to the impact at `i`. Every flight that can recur starts at a
/// contact `k` with `γ_k = 0` (after an impact with `e > 0` or a lift-off from a one-contact
/// mode); only the first flight from the initial perturbation can start elsewhere, and it
/// is finite, as the paper argues for FF when `e = 0`. Splitting on `k` removes one variable
/// exactly: `k ≠ i`: `(l_k − l_i)θ = (v + l_k ω)Δ + ½cosα Δ²`, so `θ` is eliminated
/// (reduced `(u, v, ω, Δ)`); `k = i`: `Δ = −2γ̇_i⁻/cosα` (reduced `(θ, u, v, ω)`; the `Δ = 0`
/// root is the plain impact).
fn any_start_reduction(p: &PlanarParams, k: usize, i: usize) -> Result<Vec<Poly>, SosError> {
    let (lk, li, ca) = (p.l(k), p.l(i), p.alpha.cos());
    let y4 = Poly::vars(4);
    Ok(if k != i {
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
        let dl = lin(4, 0.0, &[(2, -2.0 / ca), (3, -2.0 * li / ca)]);
        vec![
            y4[0].clone(),
            y4[1].clone(),
            y4[2].clone(),
            y4[3].clone(),
            dl,
        ]
    })
}
