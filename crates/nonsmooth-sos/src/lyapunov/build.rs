//! Construction of the SOS program: the `V₂` template (or the PTT `V`), condition 1
//! (positivity, paper eq. 54), condition 2 (`−∇V₂·ẋ ≥ 0` in every consistent contact mode,
//! equalities eliminated by substitution), and conditions 3–4 (impacts and flight + impact,
//! split by the impulse pieces of paper eqs. 30–33), with the [`Kind`] of every condition in
//! registration order.

use super::flight::{flight_after_impact, flight_any_start, flight_pre_impact};
use super::impacts::{closed_impacts, plain_impacts};
use super::sets::{ball, const_poly, lin, SlopePosition};
use super::template::{template_monomials_of_degree, FLIGHT_MULTIPLIER_HALF_DEGREE};
use super::types::{FlightFormulation, Method};
use crate::planar::{ContactState, Mode, ModeDynamics, PlanarParams, U, V, W, Y};
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
    let mut prog = SosProgram::new();
    let ptt = method == Method::Ptt;
    let y = SlopePosition { reduced: ptt };
    let v2 = lyapunov_template(&mut prog, ptt, v2_degree)?;
    let mut kinds = vec![positivity(&mut prog, p, &v2, y)?];
    let mut names = Vec::new();
    for md in &flow_modes(p, ptt) {
        let Some((map, ineqs)) = mode_restriction(p, md.mode, y)? else {
            continue;
        };
        let target = lie_derivative(&v2, md.accel)?
            .scale(-1.0)
            .substitute(&map)?;
        let label = format!("mode {}", md.mode.name());
        prog.require_nonneg(&label, &target, &ineqs, &[], 2, false)?;
        kinds.push(Kind::Flow(md.mode, md.accel));
        names.push(md.mode.name());
    }
    // Half-degree of the flight-then-impact conditions: V₂ of degree d composed with the
    // ballistic flight (positions quadratic in the reduced variables) has degree 2d.
    let flight_half = v2_degree;
    impact_conditions(&mut prog, p, &v2, y, flight_form, flight_half, &mut kinds)?;
    Ok((prog, v2, kinds, names))
}

/// The unknown `V₂ = y + P` of the multi-V method, or the PTT baseline's general `V` of
/// degree 2–3 in all six states, as a free polynomial of `prog`.
fn lyapunov_template(prog: &mut SosProgram, ptt: bool, v2_degree: u32) -> Result<Poly, SosError> {
    if ptt {
        let basis = monomials(6, 2, 3);
        return Ok(prog.new_free_poly(6, &basis));
    }
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
    pp.add(&Poly::var(6, Y)?)
}

/// A condition's set in reduced variables: the state `(y, z, θ, u, v, ω)` as polynomials in
/// them, and the set's inequalities `g ≥ 0`.
type ReducedSet = (Vec<Poly>, Vec<Poly>);

/// The state `(y, z, θ, u, v, ω)` over the reduced variables `(z, θ, u, v, ω [, y])` of the
/// free (FF) set, with its constraints: both gaps `γ_i = z + l_iθ ≥ 0` and the unit ball.
fn free_set(p: &PlanarParams, y: SlopePosition) -> Result<ReducedSet, SosError> {
    let n = 5 + y.extra();
    let x = Poly::vars(n);
    let map = vec![
        y.poly(n),
        x[0].clone(),
        x[1].clone(),
        x[2].clone(),
        x[3].clone(),
        x[4].clone(),
    ];
    let g1 = lin(n, 0.0, &[(0, 1.0), (1, p.l(0))]);
    let g2 = lin(n, 0.0, &[(0, 1.0), (1, p.l(1))]);
    let b = ball(&map, n)?;
    Ok((map, vec![g1, g2, b]))
}

/// Condition 1, positivity (paper eq. 54): `P − u⁴ − v⁴ − ω⁴ ≥ 0` on the free set (`V ≥ 0`
/// with the margin for PTT; for `e > 0` the quartic's coefficient is the margin itself).
fn positivity(
    prog: &mut SosProgram,
    p: &PlanarParams,
    v2: &Poly,
    y: SlopePosition,
) -> Result<Kind, SosError> {
    let ptt = y.reduced;
    let n = 5 + y.extra();
    let x = Poly::vars(n);
    let (map, set) = free_set(p, y)?;
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
    prog.require_nonneg("positivity", &target, &set, &[], 2, !scaled)?;
    Ok(if scaled {
        Kind::PositivityScaled
    } else {
        Kind::Positivity
    })
}

/// The contact modes of condition 2: every consistent mode, and free flight in the PTT
/// baseline.
fn flow_modes(p: &PlanarParams, ptt: bool) -> Vec<ModeDynamics> {
    let mut modes = p.consistent_modes();
    if ptt {
        if let Some(ff) = p.mode_dynamics(Mode(ContactState::Free, ContactState::Free)) {
            modes.push(ff);
        }
    }
    modes
}

/// `dV/dt = ∇V·ẋ` in the mode with accelerations `accel`, as a polynomial in the full state.
fn lie_derivative(v: &Poly, accel: [f64; 3]) -> Result<Poly, SosError> {
    let xs = Poly::vars(6);
    let f = [
        xs[U].clone(),
        xs[V].clone(),
        xs[W].clone(),
        const_poly(6, accel[0]),
        const_poly(6, accel[1]),
        const_poly(6, accel[2]),
    ];
    let mut dv = Poly::zero(6);
    for (k, fk) in f.iter().enumerate() {
        dv = dv.add(&v.diff(k)?.mul(fk)?)?;
    }
    Ok(dv)
}

/// The set of a contact mode in reduced variables: the state over them (the mode's
/// equalities eliminated) and its inequalities; `None` for SS (no motion).
fn mode_restriction(
    p: &PlanarParams,
    mode: Mode,
    y: SlopePosition,
) -> Result<Option<ReducedSet>, SosError> {
    let (l, h) = ([p.l(0), p.l(1)], p.h);
    let ey = y.extra();
    let Mode(a, b) = mode;
    Ok(Some(match (a, b) {
        (ContactState::Free, ContactState::Free) => free_set(p, y)?,
        (ContactState::Stick, ContactState::Stick) => return Ok(None),
        (s1, s2) if s1 == s2 => {
            // PP / NN: z = θ = v = ω = 0, reduced (u).
            let s = if s1 == ContactState::Pos { 1.0 } else { -1.0 };
            let n = 1 + ey;
            let z0 = const_poly(n, 0.0);
            let map = vec![
                y.poly(n),
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
                    y.poly(n),
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
                    y.poly(n),
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
    }))
}

/// Conditions 3 (impacts) and, for `e > 0`, 4 (flight + impact) in `flight_form`. The
/// Coulomb impulse set (model section of docs/decisions/000-sos-stability.md)
/// ({Λ_N ≥ 0, Λ_Tσ̇⁺ ≤ 0, μ²Λ_N² ≥ Λ_T², (μ²Λ_N² − Λ_T²)σ̇⁺ = 0}) is exactly the union of
/// three pieces on which the impulses are linear in the pre-impact velocities (paper eqs.
/// 30–33): stick (σ̇⁺ = 0, |Λ_T| ≤ μΛ_N), slip + (Λ_T = −μΛ_N, σ̇⁺ ≥ 0) and slip −
/// (Λ_T = μΛ_N, σ̇⁺ ≤ 0). The flight conditions give each piece its own condition with
/// linear constraints only.
fn impact_conditions(
    prog: &mut SosProgram,
    p: &PlanarParams,
    v2: &Poly,
    y: SlopePosition,
    flight_form: FlightFormulation,
    flight_half: u32,
    kinds: &mut Vec<Kind>,
) -> Result<(), SosError> {
    let flights = p.e > 0.0 && !y.reduced;
    if !flights {
        plain_impacts(prog, p, v2, y)?;
        kinds.extend([Kind::Impact(0), Kind::Impact(1)]);
        return Ok(());
    }
    // Impacts not followed by a flight are the Δ = 0 face of the pre-impact flight
    // conditions; the other formulations state them with both contacts closed.
    if flight_form != FlightFormulation::PreImpact {
        closed_impacts(prog, p, v2)?;
        kinds.push(Kind::ImpactClosed);
    }
    let mult_half = FLIGHT_MULTIPLIER_HALF_DEGREE;
    match flight_form {
        FlightFormulation::PreImpact => {
            flight_pre_impact(prog, p, v2, mult_half, flight_half)?;
            kinds.push(Kind::FlightPreImpact);
        }
        FlightFormulation::AfterImpact => {
            flight_after_impact(prog, p, v2, mult_half, flight_half)?;
            kinds.push(Kind::FlightAfterImpact);
        }
        FlightFormulation::AnyStart => {
            flight_any_start(prog, p, v2, mult_half, flight_half)?;
            kinds.extend([Kind::FlightImpact(0), Kind::FlightImpact(1)]);
        }
    }
    Ok(())
}
