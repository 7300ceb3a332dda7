//! The planar examples of Halm & Posa §6 built programmatically as [`ImpactProblem`]s.
//! Generalised coordinates are `[x, y, θ]` per free body unless stated; bodies have uniform
//! density; the tangent of a contact with unit normal `n` is `t = (n_y, −n_x)`.
//!
//! - [`rocking_block`] (E1, Fig. 9): 1 m × 2 m block, m = 1, μ = 1, dropped 1 cm flat;
//! - [`box_wall`] (E3, Fig. 11): unit square tilted 10°, sliding into a wall at 1 m/s;
//! - [`compass_gait`] (E2, Fig. 10; Remy 2017): legs 156° apart at heel strike, μ = 5;
//! - [`disks`] (E5, Fig. 14): three unit disks stacked, the top one falling at 1 m/s;
//! - [`ramone`] (E4, Fig. 13): the 5-link RAMone biped with the parameters of Remy's RAMone
//!   model as listed in the authors' `Results.m` (function `RAMone`): trunk 7.9026 kg,
//!   thigh 0.7887 kg, shank 0.510 kg, inertias 0.08 / 0.00221 / 0.00652 kg m², s1 = 0.137675,
//!   s2 = 0.019399, s3 = 0.2385 − 0.073265, l2 = 0.2, l3 = 0.2385, foot radius 0.0563/2 m.

use nalgebra::{DMatrix, DVector};

use crate::{ImpactError, ImpactProblem};

/// Gravity used for the drop velocities (m/s²).
pub const G: f64 = 9.81;

/// Normal and tangent Jacobian rows of a point at offset `r` (world frame, from the body's
/// reference point) of the free planar body whose coordinates start at `offset`, for the
/// unit normal `n` (velocity of the point projected on n and t = (n_y, −n_x)).
pub fn planar_point_rows(
    nv: usize,
    offset: usize,
    r: (f64, f64),
    n: (f64, f64),
) -> (DVector<f64>, DVector<f64>) {
    let t = (n.1, -n.0);
    let mut jn = DVector::zeros(nv);
    let mut jt = DVector::zeros(nv);
    jn[offset] = n.0;
    jn[offset + 1] = n.1;
    jn[offset + 2] = r.0 * n.1 - r.1 * n.0;
    jt[offset] = t.0;
    jt[offset + 1] = t.1;
    jt[offset + 2] = r.0 * t.1 - r.1 * t.0;
    (jn, jt)
}

fn assemble(
    mass: DMatrix<f64>,
    rows: Vec<(DVector<f64>, DVector<f64>)>,
    mu: f64,
    v: DVector<f64>,
) -> Result<ImpactProblem, ImpactError> {
    let nv = mass.nrows();
    let m = rows.len();
    let mut jn = DMatrix::zeros(m, nv);
    let mut jt = DMatrix::zeros(m, nv);
    for (i, (a, b)) in rows.iter().enumerate() {
        jn.set_row(i, &a.transpose());
        jt.set_row(i, &b.transpose());
    }
    ImpactProblem::new(mass, jn, jt, vec![mu; m], v)
}

/// Pre-impact speed after a drop of `height` metres: √(2 g height).
pub fn drop_speed(height: f64) -> f64 {
    (2.0 * G * height).sqrt()
}

/// E1 rocking block: width 1, height 2, m = 1, I = 5/12, μ = 1, corners A = (−0.5, −1) and
/// B = (0.5, −1) on the floor, `v⁻ = (0, −√(2 g 0.01), 0)`.
///
/// # Errors
/// Never for these constants (kept as `Result` for uniformity).
pub fn rocking_block() -> Result<ImpactProblem, ImpactError> {
    rocking_block_with(
        1.0,
        2.0,
        1.0,
        1.0,
        DVector::from_vec(vec![0.0, -drop_speed(0.01), 0.0]),
    )
}

/// A `width × height` block of mass `mass` standing flat on the floor (contacts A = left,
/// B = right corner) with pre-impact velocity `v`.
///
/// # Errors
/// [`ImpactError`] for invalid data (e.g. non-positive mass gives a singular M).
pub fn rocking_block_with(
    width: f64,
    height: f64,
    mass: f64,
    mu: f64,
    v: DVector<f64>,
) -> Result<ImpactProblem, ImpactError> {
    let inertia = mass * (width * width + height * height) / 12.0;
    let mm = DMatrix::from_diagonal(&DVector::from_vec(vec![mass, mass, inertia]));
    let n = (0.0, 1.0);
    let rows = vec![
        planar_point_rows(3, 0, (-width / 2.0, -height / 2.0), n),
        planar_point_rows(3, 0, (width / 2.0, -height / 2.0), n),
    ];
    assemble(mm, rows, mu, v)
}

/// E3 box and wall: unit square, m = 1, I = 1/6, μ = 1, tilted 10°; corner A on the floor
/// (normal +y), corner B on the wall x = 0 (normal −x); `v⁻ = (1, 0, 0)`.
///
/// # Errors
/// Never for these constants.
pub fn box_wall() -> Result<ImpactProblem, ImpactError> {
    let half_diag = 0.5_f64.sqrt();
    let tilt = 10f64.to_radians();
    let a_ang = -std::f64::consts::FRAC_PI_4 - tilt;
    let b_ang = std::f64::consts::FRAC_PI_4 - tilt;
    let r_a = (half_diag * a_ang.cos(), half_diag * a_ang.sin());
    let r_b = (half_diag * b_ang.cos(), half_diag * b_ang.sin());
    let mm = DMatrix::from_diagonal(&DVector::from_vec(vec![1.0, 1.0, 1.0 / 6.0]));
    let rows = vec![
        planar_point_rows(3, 0, r_a, (0.0, 1.0)),
        planar_point_rows(3, 0, r_b, (-1.0, 0.0)),
    ];
    assemble(mm, rows, 1.0, DVector::from_vec(vec![1.0, 0.0, 0.0]))
}

/// E2 compass gait (Remy 2017; paper Fig. 4): q = [x_hip, y_hip, φ_lead, φ_trail] with
/// massless legs of length 1, point masses 1 at 0.5 from the hip, φ_lead = −78°,
/// φ_trail = +78°, μ = 5, `v⁻ = (−0.05198, −0.24454, 0.25, 0.25)` (leading foot A hits at
/// (0, −0.4891), trailing foot B at rest). Feet at hip + (sin φ, −cos φ).
///
/// # Errors
/// Never for these constants.
pub fn compass_gait() -> Result<ImpactProblem, ImpactError> {
    let phi = 78f64.to_radians();
    let rate = 0.25;
    let v = DVector::from_vec(vec![-phi.cos() * rate, -phi.sin() * rate, rate, rate]);
    compass_gait_with(-phi, phi, 5.0, v)
}

/// Compass gait at leg angles (φ_lead, φ_trail) with velocity v (see [`compass_gait`]).
///
/// # Errors
/// [`ImpactError`] for invalid data.
pub fn compass_gait_with(
    phi_l: f64,
    phi_t: f64,
    mu: f64,
    v: DVector<f64>,
) -> Result<ImpactProblem, ImpactError> {
    let (sl, cl) = phi_l.sin_cos();
    let (st, ct) = phi_t.sin_cos();
    let mm = DMatrix::from_row_slice(
        4,
        4,
        &[
            2.0,
            0.0,
            0.5 * cl,
            0.5 * ct, //
            0.0,
            2.0,
            0.5 * sl,
            0.5 * st, //
            0.5 * cl,
            0.5 * sl,
            0.25,
            0.0, //
            0.5 * ct,
            0.5 * st,
            0.0,
            0.25,
        ],
    );
    let jn = DMatrix::from_row_slice(2, 4, &[0.0, 1.0, sl, 0.0, 0.0, 1.0, 0.0, st]);
    let jt = DMatrix::from_row_slice(2, 4, &[1.0, 0.0, cl, 0.0, 1.0, 0.0, 0.0, ct]);
    ImpactProblem::new(mm, jn, jt, vec![mu; 2], v)
}

/// E5 disk stack: three disks (R = 1, m = 1, I = 0.5) at (0, 1), (2, 1), (1, 1 + √3);
/// contacts: floor–disk 0, floor–disk 1, disk 0–top, disk 1–top, disk 0–disk 1; μ = √3;
/// the top disk falls at 1 m/s. Coordinates [x, y, θ] × 3.
///
/// # Errors
/// Never for these constants.
pub fn disks() -> Result<ImpactProblem, ImpactError> {
    let r = 1.0;
    let centers: [(f64, f64); 3] = [(0.0, 1.0), (2.0, 1.0), (1.0, 1.0 + 3f64.sqrt())];
    let nv = 9;
    let mut mass = DMatrix::zeros(nv, nv);
    for b in 0..3 {
        mass[(3 * b, 3 * b)] = 1.0;
        mass[(3 * b + 1, 3 * b + 1)] = 1.0;
        mass[(3 * b + 2, 3 * b + 2)] = 0.5;
    }
    let mut rows = vec![
        planar_point_rows(nv, 0, (0.0, -r), (0.0, 1.0)),
        planar_point_rows(nv, 3, (0.0, -r), (0.0, 1.0)),
    ];
    // Pair contacts: normal n from body a to body b; the separation rate is
    // n·(v_b + ω_b × r_b) − n·(v_a + ω_a × r_a) with r_a = R n, r_b = −R n.
    for &(a, b) in &[(0usize, 2usize), (1, 2), (0, 1)] {
        let (ca, cb) = (centers[a], centers[b]);
        let d = ((cb.0 - ca.0).powi(2) + (cb.1 - ca.1).powi(2)).sqrt();
        let n = ((cb.0 - ca.0) / d, (cb.1 - ca.1) / d);
        let (na, ta) = planar_point_rows(nv, 3 * a, (r * n.0, r * n.1), n);
        let (nb, tb) = planar_point_rows(nv, 3 * b, (-r * n.0, -r * n.1), n);
        rows.push((nb - na, tb - ta));
    }
    let mut v = DVector::zeros(nv);
    v[7] = -1.0;
    assemble(mass, rows, 3f64.sqrt(), v)
}

/// Parameters of the RAMone biped (Remy's model as listed in the authors' `Results.m`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RamoneParams {
    /// Trunk, thigh, shank masses in kg.
    pub masses: [f64; 3],
    /// Trunk, thigh, shank inertias [kg m²].
    pub inertias: [f64; 3],
    /// Hip axis to pitch axis s1, hip to thigh COM s2, knee to shank COM s3 in m.
    pub s: [f64; 3],
    /// Thigh and shank lengths l2, l3 in m.
    pub lengths: [f64; 2],
    /// Foot radius in m.
    pub foot_radius: f64,
}

impl Default for RamoneParams {
    fn default() -> Self {
        Self {
            masses: [7.9026, 0.7887, 0.510],
            inertias: [0.08, 0.00221, 0.00652],
            s: [0.137675, 0.019399, 0.2385 - 0.073265],
            lengths: [0.2, 0.2385],
            foot_radius: 0.0563 / 2.0,
        }
    }
}

/// E4 RAMone at heel strike: q = [x, y, Φ, α_l, β_l, α_t, β_t] with Φ = 16°, α_l = −70°,
/// α_t = 70°, β_l = −2°, β_t solved so both feet touch; velocity `(−J_t,B,Φ, −J_n,B,Φ, 1, 0…)`
/// so that the trailing foot B is stationary; μ = 1e5. Segment angles are absolute
/// `Φ`, `Φ+α`, `Φ+α+β`; a point at local `(0, −d)` of a segment at angle ψ sits at
/// `(d sin ψ, −d cos ψ)`. Contacts are the lowest points of the round feet (A leading,
/// B trailing).
///
/// # Errors
/// Never for these constants.
pub fn ramone() -> Result<ImpactProblem, ImpactError> {
    let p = RamoneParams::default();
    let th = 16f64.to_radians();
    let a_l = -70f64.to_radians();
    let b_l = -2f64.to_radians();
    let a_t = 70f64.to_radians();
    let [s1, s2, s3] = p.s;
    let [l2, l3] = p.lengths;
    let leg_ht = l3 * (th + a_l + b_l).cos() + l2 * (th + a_l).cos();
    let y0 = leg_ht + s1 * th.cos() + p.foot_radius;
    let back_knee = leg_ht - l2 * (th + a_t).cos();
    let g_t = (back_knee / l3).asin();
    let b_t = -a_t - th + g_t - std::f64::consts::FRAC_PI_2;
    let q = [0.0, y0, th, a_l, b_l, a_t, b_t];
    let nv = 7;
    let at = |psi: f64, d: f64| (d * psi.sin(), -d * psi.cos());
    // Point positions (world) and the Jacobian of a material point: base translation plus,
    // for each angle coordinate in its chain, ẑ × (p − pivot).
    let base = (q[0], q[1]);
    let hip = {
        let o = at(th, s1);
        (base.0 + o.0, base.1 + o.1)
    };
    let mut mass = DMatrix::zeros(nv, nv);
    let point_jac = |pnt: (f64, f64), chain: &[(usize, (f64, f64))]| {
        let mut j = DMatrix::zeros(2, nv);
        j[(0, 0)] = 1.0;
        j[(1, 1)] = 1.0;
        for &(c, piv) in chain {
            j[(0, c)] += -(pnt.1 - piv.1);
            j[(1, c)] += pnt.0 - piv.0;
        }
        j
    };
    // Trunk.
    let jt = point_jac(base, &[(2, base)]);
    mass += jt.transpose() * &jt * p.masses[0];
    mass[(2, 2)] += p.inertias[0];
    let mut contacts = Vec::new();
    for (ia, ib, a, b) in [(3usize, 4usize, a_l, b_l), (5, 6, a_t, b_t)] {
        let thigh_ang = th + a;
        let shank_ang = thigh_ang + b;
        let knee = {
            let o = at(thigh_ang, l2);
            (hip.0 + o.0, hip.1 + o.1)
        };
        let thigh_com = {
            let o = at(thigh_ang, s2);
            (hip.0 + o.0, hip.1 + o.1)
        };
        let shank_com = {
            let o = at(shank_ang, s3);
            (knee.0 + o.0, knee.1 + o.1)
        };
        let foot = {
            let o = at(shank_ang, l3);
            (knee.0 + o.0, knee.1 + o.1 - p.foot_radius)
        };
        let chain_thigh = [(2, base), (ia, hip)];
        let chain_shank = [(2, base), (ia, hip), (ib, knee)];
        let j = point_jac(thigh_com, &chain_thigh);
        mass += j.transpose() * &j * p.masses[1];
        let j = point_jac(shank_com, &chain_shank);
        mass += j.transpose() * &j * p.masses[2];
        let mut wt = DVector::zeros(nv);
        wt[2] = 1.0;
        wt[ia] = 1.0;
        mass += &wt * wt.transpose() * p.inertias[1];
        wt[ib] = 1.0;
        mass += &wt * wt.transpose() * p.inertias[2];
        let j = point_jac(foot, &chain_shank);
        contacts.push((j.row(1).transpose(), j.row(0).transpose()));
    }
    // Trailing foot B stationary: v = (−J_t,B[Φ], −J_n,B[Φ], 1, 0, 0, 0, 0).
    let (jn_b, jt_b) = &contacts[1];
    let mut v = DVector::zeros(nv);
    v[0] = -jt_b[2];
    v[1] = -jn_b[2];
    v[2] = 1.0;
    assemble(mass, contacts, 1e5, v)
}

/// Zeno wobble (paper §4.3, Figs. 7–8): the block of [`rocking_block`] rocking on one corner.
/// Angular-velocity ratio of each corner-to-corner impact,
/// `(I − m r² cos 2α)/(I + m r²)` with `α = atan(h/w)`, `r = ½√(w² + h²)` (0.7 for 1 × 2).
pub fn zeno_restitution(width: f64, height: f64, mass: f64) -> f64 {
    let inertia = mass * (width * width + height * height) / 12.0;
    let r2 = (width * width + height * height) / 4.0;
    let alpha = (height / width).atan();
    (inertia - mass * r2 * (2.0 * alpha).cos()) / (inertia + mass * r2)
}

/// Apex angle of the wobble started at θ = 0 with rate `omega0` about a corner:
/// `θ* = asin((I + m r²)ω₀²/(2 m g r) + sin α) − α` (the authors' code; the paper prints a
/// minus sign).
pub fn zeno_apex_angle(width: f64, height: f64, mass: f64, omega0: f64) -> f64 {
    let inertia = mass * (width * width + height * height) / 12.0;
    let r = 0.5 * (width * width + height * height).sqrt();
    let alpha = (height / width).atan();
    let ia = inertia + mass * r * r;
    (ia * omega0 * omega0 / (2.0 * mass * G * r) + alpha.sin()).asin() - alpha
}

/// Duration of one rocking half-cycle about a corner, from θ = 0 at rate ω back to θ = 0:
/// the pendulum `(I + m r²) θ̈ = −m g r cos(α + θ)` integrated by classical RK4 with a step
/// proportional to ω, the return crossing located by linear interpolation.
pub fn zeno_half_cycle_time(width: f64, height: f64, mass: f64, omega: f64) -> f64 {
    let inertia = mass * (width * width + height * height) / 12.0;
    let r = 0.5 * (width * width + height * height).sqrt();
    let alpha = (height / width).atan();
    let ia = inertia + mass * r * r;
    let acc = |th: f64| -mass * G * r * (alpha + th).cos() / ia;
    let dt = 2e-4 * omega.abs().max(1e-12);
    let (mut th, mut w, mut t) = (0.0_f64, omega.abs(), 0.0);
    for _ in 0..10_000_000 {
        let (k1x, k1v) = (w, acc(th));
        let (k2x, k2v) = (w + 0.5 * dt * k1v, acc(th + 0.5 * dt * k1x));
        let (k3x, k3v) = (w + 0.5 * dt * k2v, acc(th + 0.5 * dt * k2x));
        let (k4x, k4v) = (w + dt * k3v, acc(th + dt * k3x));
        let th_n = th + dt / 6.0 * (k1x + 2.0 * k2x + 2.0 * k3x + k4x);
        let w_n = w + dt / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v);
        if th_n < 0.0 && t > 0.0 {
            return t + dt * th / (th - th_n);
        }
        th = th_n;
        w = w_n;
        t += dt;
    }
    t
}

/// Accumulation time of the Zeno wobble started at rate `omega0`: `Σ_k T(e^k ω₀)` with `e`
/// from [`zeno_restitution`] and `T` from [`zeno_half_cycle_time`], summed until the terms
/// fall below 1e-12 s (the tail is geometric since T(ω) is linear for small ω).
pub fn zeno_rest_time(width: f64, height: f64, mass: f64, omega0: f64) -> f64 {
    let e = zeno_restitution(width, height, mass);
    let mut omega = omega0;
    let mut total = 0.0;
    for _ in 0..200 {
        let t = zeno_half_cycle_time(width, height, mass, omega);
        if t < 1e-6 {
            // Geometric tail of the linear regime T ∝ ω.
            total += t * e / (1.0 - e);
            break;
        }
        total += t;
        omega *= e;
    }
    total
}
