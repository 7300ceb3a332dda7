//! Conditions 3–4 for `e > 0`, **our formulation** of the paper's "free flight then impact"
//! condition (docs/decisions/000-sos-stability.md decision 7): the
//! ballistic flight between two impacts, composed with the impulse pieces of paper
//! eqs. 30–33, for [`FlightFormulation::AfterImpact`](super::FlightFormulation::AfterImpact)
//! and [`FlightFormulation::PreImpact`](super::FlightFormulation::PreImpact).

use super::impacts::{apply_impulse, impulse_pieces};
use super::sets::const_poly;
use crate::planar::{PlanarParams, TH, Z};
use crate::poly::{monomials, Poly};
use crate::program::SosProgram;
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

/// Registers `target ≥ 0` on the semialgebraic set of one flight case: the linear
/// constraints `lin_c` (plus the case's own: for `k = i` `γ_o ≥ 0` at the start and at the
/// landing; for `k ≠ i` `Δ ≥ 0`, `γ_k(x⁻) ≥ 0`, `γ̇_i(x⁻) ≤ 0`, `γ_i(x₀) ≥ 0`), their
/// pairwise products, and the unit ball on the pre-impact state `w` (its velocity part for
/// `k ≠ i`, where `θ` is a derived quantity: a superset, hence sound).
#[allow(clippy::too_many_arguments)]
pub(super) fn require_flight_case(
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
pub(super) fn flight_after_impact(
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
pub(super) fn flight_pre_impact(
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
