//! Condition 3 of Theorem 2, impacts: `V₂(x⁻) − V₂(x⁺) ≥ 0` on the Kane–Levinson/Coulomb
//! impulse set of docs/decisions/000-sos-stability.md, model, and its three pieces (stick, slip +,
//! slip −) on which the impulses are linear in the pre-impact velocities (paper eqs. 30–33); for `e
//! > 0` only the impacts with both contacts closed (our formulation).

use super::sets::{ball, const_poly, lin, with_pairwise_products, SlopePosition};
use crate::planar::{PlanarParams, U, W};
use crate::poly::Poly;
use crate::program::SosProgram;
use crate::SosError;

/// Condition 3 (impacts, Theorem 2; docs/decisions/000-sos-stability.md, program): `V₂(x⁻) − V₂(x⁺)
/// ≥ 0` over `(θ, u, v, ω, Λ_T [, y])` with the unified Kane–Levinson/Coulomb impulse set of
/// docs/decisions/000-sos-stability.md, model (`Λ_N ≥ 0`, `Λ_Tσ̇⁺ ≤ 0`, `μ²Λ_N² ≥ Λ_T²`, `(μ²Λ_N² −
/// Λ_T²)σ̇⁺ = 0` through a free multiplier).
pub(super) fn plain_impacts(
    prog: &mut SosProgram,
    p: &PlanarParams,
    v2: &Poly,
    y: SlopePosition,
) -> Result<(), SosError> {
    let (l, h) = ([p.l(0), p.l(1)], p.h);
    for i in 0..2 {
        let j = 1 - i;
        let mu = p.mu(i);
        let n = 5 + y.extra();
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
            y.poly(n),
            th.scale(-li),
            th.clone(),
            u.clone(),
            v.clone(),
            w.clone(),
        ];
        let post = vec![
            y.poly(n),
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
pub(super) type Piece = (&'static str, Poly, Poly, Vec<Poly>);

/// The impulse pieces at contact `c` for pre-impact velocities `vel = (u, v, ω)` given as
/// polynomials in reduced variables: stick (`σ̇⁺ = 0`, `Λ_N ≥ 0`, `|Λ_T| ≤ μΛ_N`), slip ±
/// (`Λ_T = ∓μΛ_N`, `Λ_N ≥ 0`, `±σ̇⁺ ≥ 0`). A slip piece whose denominator `1 + l² ∓ μlh` is
/// not positive is dropped: there `Λ_N ≥ 0` with `γ̇⁻ ≤ 0` forces the identity map.
pub(super) fn impulse_pieces(
    p: &PlanarParams,
    c: usize,
    vel: &[Poly; 3],
) -> Result<Vec<Piece>, SosError> {
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
pub(super) fn apply_impulse(
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
///
/// [`flight_after_impact`]: super::flight::flight_after_impact
pub(super) fn closed_impacts(
    prog: &mut SosProgram,
    p: &PlanarParams,
    v2: &Poly,
) -> Result<(), SosError> {
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
            let mut ineqs = with_pairwise_products(lin_c)?;
            ineqs.push(ball(&pre, n)?);
            ineqs.retain(|g| g.max_abs_coefficient() > 1e-12);
            prog.require_nonneg(&label, &target, &ineqs, &[], 2, false)?;
        }
    }
    Ok(())
}
