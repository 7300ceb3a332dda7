//! The planar hopping robot of seed 002 Sec. 6 ("Capler", Gehring et al.): a point-mass
//! hip, a thigh and a shank, direct-drive hip and knee torques, one foot contact with
//! Coulomb friction μ = 0.8, and the OCP's path constraints (joint and height bounds, foot
//! and knee positions, three elliptic holes the foot must avoid).
//!
//! Coordinates q = (q_x, q_z, φ_hip, φ_knee) (nosnoc's order; the paper lists the knee
//! first). Angles are measured from the downward vertical: p_knee = p_hip + l_t(−sin φ_h,
//! −cos φ_h), p_foot = p_knee + l_s(−sin(φ_h + φ_k), −cos(φ_h + φ_k)). Inertial parameters
//! from nosnoc's `robot_model_parameters.m` (digest §3). The equations of motion come from
//! the Lagrangian M(q) = Σ m_i J_iᵀJ_i + I_t e_h e_hᵀ + I_s (e_h + e_k)(e_h + e_k)ᵀ,
//! M v̇ = −Σ m_i J_iᵀ(J̇_i v) + Σ m_i J_iᵀ(0, −g) + (0, 0, u_hip, u_knee) (the rotational
//! velocities φ̇_h and φ̇_h + φ̇_k are linear in v, so they add no velocity-product terms).

use crate::nlp::Real;
use crate::tf::Cls;

/// Parameters of the planar hopper.
#[derive(Debug, Clone, PartialEq)]
pub struct Hopper {
    /// Hip (main body) mass.
    pub m_hip: f64,
    /// Thigh mass.
    pub m_thigh: f64,
    /// Shank mass.
    pub m_shank: f64,
    /// Thigh length.
    pub l_thigh: f64,
    /// Shank length.
    pub l_shank: f64,
    /// Distance hip → thigh centre of mass.
    pub s_thigh: f64,
    /// Distance knee → shank centre of mass.
    pub s_shank: f64,
    /// Thigh rotational inertia.
    pub i_thigh: f64,
    /// Shank rotational inertia.
    pub i_shank: f64,
    /// Gravity.
    pub gravity: f64,
    /// Friction coefficient.
    pub mu: f64,
    /// Centres x_c of the elliptic holes ((p_fx − x_c)/a)² + (p_fz/b)² ≥ 1.
    pub holes: Vec<f64>,
    /// Semi-axes (a, b) of the holes.
    pub hole_axes: (f64, f64),
    /// Lower bound of the foot height p_foot,z in the path constraints (the paper: −0.005).
    /// The continuous time-freezing solution keeps p_foot,z ≥ 0, but the discrete one need
    /// not: with Radau IIA n_s = 1 every stance element in which the leg rotates ends with
    /// the foot lower than it started (f_c is convex in q; docs/optimal-control.md, sixth
    /// session), so a bound ≥ −0.005 makes an exact n_s = 1 push-off infeasible.
    pub foot_z_min: f64,
}

impl Default for Hopper {
    /// The paper's hopper (Sec. 6) with the holes at x_c = 0.5, 1.5, 2.5 of width 0.5 and
    /// depth 0.1, i.e. semi-axes (0.25, 0.1): the paper calls a_k = 0.5 "the width of the
    /// hole", and nosnoc's hopper example divides the width by two for the semi-axis (with
    /// semi-axis 0.5 the three ellipses would touch and leave only the isolated points
    /// x = 1, 2 to land on).
    fn default() -> Self {
        Self {
            m_hip: 3.975,
            m_thigh: 1.782,
            m_shank: 0.548,
            l_thigh: 0.2,
            l_shank: 0.2,
            s_thigh: 0.016,
            s_shank: 0.1,
            i_thigh: 0.001,
            i_shank: 0.0032,
            gravity: 9.81,
            mu: 0.8,
            holes: vec![0.5, 1.5, 2.5],
            hole_axes: (0.25, 0.1),
            foot_z_min: -0.005,
        }
    }
}

/// Number of path constraints before the holes (foot x, knee x, knee z, foot z).
const N_BASE_PATH: usize = 4;

impl Hopper {
    /// Knee position (x, z).
    pub fn knee<T: Real>(&self, q: &[T]) -> [T; 2] {
        [
            q[0] - q[2].sin() * self.l_thigh,
            q[1] - q[2].cos() * self.l_thigh,
        ]
    }
    /// Foot position (x, z).
    pub fn foot<T: Real>(&self, q: &[T]) -> [T; 2] {
        let k = self.knee(q);
        let a2 = q[2] + q[3];
        [
            k[0] - a2.sin() * self.l_shank,
            k[1] - a2.cos() * self.l_shank,
        ]
    }
    /// Hole constraint values ((p_fx − x_c)/a)² + (p_fz/b)² (≥ 1 outside the holes).
    pub fn hole_values(&self, q: &[f64]) -> Vec<f64> {
        let f = self.foot(q);
        self.holes
            .iter()
            .map(|xc| ((f[0] - xc) / self.hole_axes.0).powi(2) + (f[1] / self.hole_axes.1).powi(2))
            .collect()
    }
    /// The same hopper with the holes' semi-axes scaled by `scale` (no holes for
    /// `scale` ≤ 0): the stages of the hole growth ([`crate::smoothing::Growth`]).
    pub fn with_hole_scale(&self, scale: f64) -> Self {
        if scale > 0.0 {
            Self {
                hole_axes: (self.hole_axes.0 * scale, self.hole_axes.1 * scale),
                ..self.clone()
            }
        } else {
            Self {
                holes: vec![],
                ..self.clone()
            }
        }
    }
    /// Mass matrix M(q) (row-major 4 × 4).
    pub fn mass_matrix<T: Real>(&self, q: &[T]) -> [[T; 4]; 4] {
        let zero = T::from(0.0);
        let (a1, a2) = (q[2], q[2] + q[3]);
        let (s1, c1, s2, c2) = (a1.sin(), a1.cos(), a2.sin(), a2.cos());
        // Jacobians (2 × 4) of the thigh and shank centres of mass
        let jt = [
            [T::from(1.0), zero, -c1 * self.s_thigh, zero],
            [zero, T::from(1.0), s1 * self.s_thigh, zero],
        ];
        let js = [
            [
                T::from(1.0),
                zero,
                -c1 * self.l_thigh - c2 * self.s_shank,
                -c2 * self.s_shank,
            ],
            [
                zero,
                T::from(1.0),
                s1 * self.l_thigh + s2 * self.s_shank,
                s2 * self.s_shank,
            ],
        ];
        let mut m = [[zero; 4]; 4];
        m[0][0] = T::from(self.m_hip);
        m[1][1] = T::from(self.m_hip);
        for (mass, j) in [(self.m_thigh, &jt), (self.m_shank, &js)] {
            for r in 0..4 {
                for c in 0..4 {
                    m[r][c] += (j[0][r] * j[0][c] + j[1][r] * j[1][c]) * mass;
                }
            }
        }
        let (it, is) = (self.i_thigh, self.i_shank);
        m[2][2] += T::from(it + is);
        m[2][3] += T::from(is);
        m[3][2] += T::from(is);
        m[3][3] += T::from(is);
        m
    }
    /// Non-contact generalized force −Σ m_i J_iᵀ(J̇_i v + (0, g)) + (0, 0, u_hip, u_knee).
    fn forces<T: Real>(&self, q: &[T], v: &[T], u: &[T]) -> [T; 4] {
        let zero = T::from(0.0);
        let g = self.gravity;
        let (a1, a2) = (q[2], q[2] + q[3]);
        let (s1, c1, s2, c2) = (a1.sin(), a1.cos(), a2.sin(), a2.cos());
        let (w1, w2) = (v[2], v[2] + v[3]);
        let (w1s, w2s) = (w1 * w1, w2 * w2);
        // centripetal accelerations J̇ v of the centres of mass
        let at = [s1 * w1s * self.s_thigh, c1 * w1s * self.s_thigh];
        let as_ = [
            s1 * w1s * self.l_thigh + s2 * w2s * self.s_shank,
            c1 * w1s * self.l_thigh + c2 * w2s * self.s_shank,
        ];
        let jt = [
            [zero, zero, -c1 * self.s_thigh, zero],
            [zero, zero, s1 * self.s_thigh, zero],
        ];
        let js = [
            [
                zero,
                zero,
                -c1 * self.l_thigh - c2 * self.s_shank,
                -c2 * self.s_shank,
            ],
            [
                zero,
                zero,
                s1 * self.l_thigh + s2 * self.s_shank,
                s2 * self.s_shank,
            ],
        ];
        let mtot = self.m_hip + self.m_thigh + self.m_shank;
        let mut f = [zero, T::from(-mtot * g), u[0], u[1]];
        for (mass, j, a) in [(self.m_thigh, &jt, at), (self.m_shank, &js, as_)] {
            // rows 0, 1 of J are the identity for x, z (added to f[0], f[1])
            let fx = -a[0] * mass;
            let fz = (-a[1] - g) * mass;
            f[0] += fx;
            f[1] += -a[1] * mass;
            for r in 2..4 {
                f[r] += j[0][r] * fx + j[1][r] * fz;
            }
        }
        f
    }
}

/// Cholesky factor L (M = L Lᵀ) of a symmetric positive definite 4 × 4 matrix (generic
/// scalar).
#[allow(clippy::needless_range_loop)]
fn cholesky<T: Real>(m: &[[T; 4]; 4]) -> [[T; 4]; 4] {
    let zero = T::from(0.0);
    let mut l = [[zero; 4]; 4];
    for i in 0..4 {
        for j in 0..=i {
            let mut s = m[i][j];
            for k in 0..j {
                s -= l[i][k] * l[j][k];
            }
            if i == j {
                l[i][i] = s.sqrt();
            } else {
                l[i][j] = s / l[j][j];
            }
        }
    }
    l
}

/// Solves L Lᵀ x = r with the Cholesky factor of [`cholesky`].
#[allow(clippy::needless_range_loop)]
fn chol_solve<T: Real>(l: &[[T; 4]; 4], r: &[T]) -> Vec<T> {
    let zero = T::from(0.0);
    let mut y = [zero; 4];
    for i in 0..4 {
        let mut s = r[i];
        for k in 0..i {
            s -= l[i][k] * y[k];
        }
        y[i] = s / l[i][i];
    }
    let mut x = vec![zero; 4];
    for i in (0..4).rev() {
        let mut s = y[i];
        for k in i + 1..4 {
            s -= l[k][i] * x[k];
        }
        x[i] = s / l[i][i];
    }
    x
}

/// Solves the symmetric positive definite system M x = r by Cholesky (generic scalar).
fn spd_solve<T: Real>(m: &[[T; 4]; 4], r: &[T]) -> Vec<T> {
    chol_solve(&cholesky(m), r)
}

impl Cls for Hopper {
    fn nq(&self) -> usize {
        4
    }
    fn nu(&self) -> usize {
        2
    }
    fn friction(&self) -> Option<f64> {
        Some(self.mu)
    }
    fn minv<T: Real>(&self, q: &[T], r: &[T]) -> Vec<T> {
        spd_solve(&self.mass_matrix(q), r)
    }
    fn f_v<T: Real>(&self, q: &[T], v: &[T], _t: T, u: &[T]) -> Vec<T> {
        let f = self.forces(q, v, u);
        spd_solve(&self.mass_matrix(q), &f)
    }
    fn accelerations<T: Real>(
        &self,
        q: &[T],
        v: &[T],
        _t: T,
        u: &[T],
        rs: &[Vec<T>],
    ) -> (Vec<T>, Vec<Vec<T>>) {
        let l = cholesky(&self.mass_matrix(q));
        let f = self.forces(q, v, u);
        (
            chol_solve(&l, &f),
            rs.iter().map(|r| chol_solve(&l, r)).collect(),
        )
    }
    fn f_c<T: Real>(&self, q: &[T]) -> T {
        self.foot(q)[1]
    }
    fn normal<T: Real>(&self, q: &[T]) -> Vec<T> {
        let a2 = q[2] + q[3];
        let s2 = a2.sin() * self.l_shank;
        vec![
            T::from(0.0),
            T::from(1.0),
            q[2].sin() * self.l_thigh + s2,
            s2,
        ]
    }
    fn tangent<T: Real>(&self, q: &[T]) -> Vec<T> {
        let a2 = q[2] + q[3];
        let c2 = a2.cos() * self.l_shank;
        vec![
            T::from(1.0),
            T::from(0.0),
            -q[2].cos() * self.l_thigh - c2,
            -c2,
        ]
    }
    fn n_path(&self) -> usize {
        N_BASE_PATH + self.holes.len()
    }
    fn path<T: Real>(&self, q: &[T]) -> Vec<T> {
        let (k, f) = (self.knee(q), self.foot(q));
        let mut g = vec![f[0], k[0], k[1], f[1]];
        for xc in &self.holes {
            let dx = (f[0] - *xc) / self.hole_axes.0;
            let dz = f[1] / self.hole_axes.1;
            g.push(dx * dx + dz * dz);
        }
        g
    }
    fn path_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        let mut lo = vec![-0.05, -0.05, 0.05, self.foot_z_min];
        let mut hi = vec![1e20, 1e20, 1e20, 0.2];
        lo.extend(std::iter::repeat_n(1.0, self.holes.len()));
        hi.extend(std::iter::repeat_n(1e20, self.holes.len()));
        (lo, hi)
    }
}

/// The OCP horizon of seed 002 Sec. 6: start q₀ = (0, 0.4, 0, 0), v₀ = 0, t₀ = 0; terminal
/// q(T) = (`target_x`, 0.4, 0, 0); |u_i| ≤ `u_max`; state bounds −0.05 ≤ q_x,
/// 0.2 ≤ q_z ≤ 0.55, |φ_hip| ≤ 3π/8, |φ_knee| ≤ π/2 at every stage point; speed of time
/// s ∈ [1, `s_max`]; stage clock constraints t_k = kT/N; running cost Σ_k (T/N) uᵀu.
/// The numerical horizon equals the physical one (T̃ = T).
pub fn horizon(
    n_steps: usize,
    t_end: f64,
    target_x: f64,
    u_max: f64,
    s_max: f64,
) -> crate::fesd::Horizon {
    use std::f64::consts::PI;
    let inf = 1e20;
    let mut lo = vec![-0.05, 0.2, -3.0 * PI / 8.0, -PI / 2.0];
    let mut hi = vec![inf, 0.55, 3.0 * PI / 8.0, PI / 2.0];
    lo.extend([-inf; 5]);
    hi.extend([inf; 5]);
    crate::fesd::Horizon {
        y0: vec![0.0, 0.4, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        lam0: None,
        n_steps,
        step_len: t_end / n_steps as f64,
        u_bounds: vec![(vec![-u_max; 2], vec![u_max; 2]); n_steps],
        s_bounds: (1.0, s_max),
        clock: crate::fesd::Clock::Stagewise(t_end),
        global_speed: false,
        terminal: vec![(0, target_x), (1, 0.4), (2, 0.0), (3, 0.0)],
        y_bounds: Some((lo, hi)),
        control_weight: t_end / n_steps as f64,
    }
}

/// Lowers the initial and the target base height of a [`horizon`] by `depth`, the
/// penetration δ at which a stabilized stance rests ([`crate::tf::StanceStabilization`]):
/// with c₂ = nᵀv + k (f_c + δ) the standing pose of q₀ = (0, 0.4, 0, 0) is not at rest (the
/// foot sinks to −δ), so the paper's start and target poses are taken δ lower.
pub fn rest_on_stabilized_ground(hz: &mut crate::fesd::Horizon, depth: f64) {
    hz.y0[1] -= depth;
    hz.terminal
        .iter_mut()
        .filter(|(k, _)| *k == 1)
        .for_each(|(_, v)| *v -= depth);
}

/// The FESD and homotopy options of the hopper at the paper's settings (Sec. 6: Radau IIA
/// n_s = 3, N_FE = 3) with our homotopy choices (docs/optimal-control.md): Scholtes
/// relaxation with κ = 0.1 over at most 40 NLPs, cross complementarity on the gap only,
/// IPOPT tolerance 1e-8 and 3000 iterations, and the speed-of-time penalty ρ_sot = 100.
pub fn paper_options() -> crate::fesd::FesdOptions {
    crate::fesd::FesdOptions {
        n_s: 3,
        n_fe: 3,
        penalty: false,
        kappa: 0.1,
        n_homotopy: 40,
        cross_components: 1,
        ipopt_tol: 1e-8,
        max_iter: 3000,
        rho_sot: 100.0,
        homotopy_retries: 2,
        ..crate::fesd::FesdOptions::default()
    }
}

/// Smallest hole clearance over the states `ys`: min over the holes' ellipse values − 1
/// ([`Hopper::hole_values`]; ≥ 0 outside every hole), `None` without holes or states.
pub fn min_hole_clearance(hop: &Hopper, ys: &[Vec<f64>]) -> Option<f64> {
    let min = ys
        .iter()
        .flat_map(|y| hop.hole_values(y))
        .map(|v| v - 1.0)
        .fold(f64::INFINITY, f64::min);
    min.is_finite().then_some(min)
}

/// Number of flight phases (maximal runs of stage points with the foot above `tol`).
pub fn hop_count(hop: &Hopper, ys: &[Vec<f64>], tol: f64) -> usize {
    let mut count = 0;
    let mut flying = false;
    for y in ys {
        let up = hop.foot(y)[1] > tol;
        if up && !flying {
            count += 1;
        }
        flying = up;
    }
    count
}

/// A kinematic hopping gait, the non-trivial initial guess of the hopper OCP
/// ([`hop_guess`]): the foot stands at x = 0, hops `hops` times by equal strides L to the
/// target and stands there again. Every flight lasts `flight` seconds of physical time and
/// every intermediate stance `stance` seconds; the first stance is static until its last
/// `push` seconds, the last one static after its first `push` seconds. In flight the hip
/// follows the ballistic parabola (vertical take-off speed g·`flight`/2, horizontal speed
/// (L − 2`offset`)/`flight`) and the foot swings along x = x₀ + L(3s² − 2s³),
/// z = `swing_height`·sin²(πs) (s the flight fraction; the foot leaves and touches the
/// ground at rest, so no impact is needed), clearing holes of depth
/// < `swing_height` centred between the footholds; in stance the foot is fixed and the
/// hip moves by cubic Hermite arcs that match the flight's velocities, from `offset`
/// behind to `offset` ahead of the foot. Take-off and landing happen at hip-to-foot
/// distance `reach`. Joint angles by planar two-link inverse kinematics (knee forward),
/// velocities by central differences. Purely kinematic: dynamics, impacts and the clock
/// are left to the NLP.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct HopGait {
    /// Number of hops.
    pub hops: usize,
    /// Flight duration per hop.
    pub flight: f64,
    /// Duration of each stance between two hops.
    pub stance: f64,
    /// Duration of the first push-off and of the last landing.
    pub push: f64,
    /// Apex height of the foot's swing.
    pub swing_height: f64,
    /// Hip-to-foot distance at take-off and landing.
    pub reach: f64,
    /// Horizontal hip-to-foot offset at take-off and landing.
    pub offset: f64,
}

impl Default for HopGait {
    /// Three hops of 0.25 s flight and 0.125 s stance, 0.3 s push-off and landing, swing
    /// apex 0.12 m, reach 0.39 m, offset 0.2 m (chosen to respect the knee bound
    /// |φ_knee| ≤ π/2 and q_z ≤ 0.55 of the paper's OCP at its stage points; on the
    /// paper's grid, T/N/N_FE = 1/24 s, every lift-off and touchdown is an element
    /// boundary).
    fn default() -> Self {
        Self {
            hops: 3,
            flight: 0.25,
            stance: 0.125,
            push: 0.3,
            swing_height: 0.12,
            reach: 0.39,
            offset: 0.2,
        }
    }
}

/// Cubic Hermite interpolation from (p0, m0) to (p1, m1) over a duration `dur`, at `tau`.
fn hermite(p0: f64, m0: f64, p1: f64, m1: f64, dur: f64, tau: f64) -> f64 {
    let s = (tau / dur).clamp(0.0, 1.0);
    let (s2, s3) = (s * s, s * s * s);
    (2.0 * s3 - 3.0 * s2 + 1.0) * p0
        + (s3 - 2.0 * s2 + s) * dur * m0
        + (-2.0 * s3 + 3.0 * s2) * p1
        + (s3 - s2) * dur * m1
}

impl HopGait {
    /// Hip (x, z), foot (x, z) and whether the foot is in stance at physical time `t` of a
    /// horizon of length `t_end` from x = 0 to `target_x`, starting and ending at hip
    /// height `z0` above the foot.
    pub fn pose(
        &self,
        hop: &Hopper,
        t_end: f64,
        target_x: f64,
        z0: f64,
        t: f64,
    ) -> ([f64; 4], bool) {
        let nh = self.hops.max(1);
        let n = nh as f64;
        let (tf, ts) = (self.flight, self.stance);
        let rest = (t_end - n * tf - (n - 1.0) * ts).max(1e-3);
        let t0 = rest / 2.0;
        let push = self.push.clamp(1e-3, t0);
        let stride = target_x / n;
        let dx = self.offset.min(0.9 * self.reach);
        let vx = (stride - 2.0 * dx) / tf;
        let zto = (self.reach * self.reach - dx * dx).sqrt();
        let w = hop.gravity * tf / 2.0;
        if t <= t0 {
            let tau = t - (t0 - push);
            if tau <= 0.0 {
                return ([0.0, z0, 0.0, 0.0], true);
            }
            let x = hermite(0.0, 0.0, dx, vx, push, tau);
            let z = hermite(z0, 0.0, zto, w, push, tau);
            return ([x, z, 0.0, 0.0], true);
        }
        for i in 0..nh {
            let a = t0 + i as f64 * (tf + ts);
            let foot0 = i as f64 * stride;
            if t <= a + tf {
                let tau = t - a;
                let s = tau / tf;
                let x = foot0 + dx + vx * tau;
                let z = zto + w * tau - hop.gravity * tau * tau / 2.0;
                let fx = foot0 + stride * (3.0 * s * s - 2.0 * s * s * s);
                let fz = self.swing_height * (std::f64::consts::PI * s).sin().powi(2);
                return ([x, z, fx, fz], false);
            }
            let foot1 = foot0 + stride;
            let tau = t - a - tf;
            if i + 1 < nh {
                if tau <= ts {
                    let x = hermite(foot1 - dx, vx, foot1 + dx, vx, ts, tau);
                    let z = hermite(zto, -w, zto, w, ts, tau);
                    return ([x, z, foot1, 0.0], true);
                }
            } else {
                let x = hermite(foot1 - dx, vx, foot1, 0.0, push, tau);
                let z = hermite(zto, -w, z0, 0.0, push, tau);
                return ([x, z, foot1, 0.0], true);
            }
        }
        ([target_x, z0, target_x, 0.0], true)
    }

    /// Generalized coordinates q = (q_x, q_z, φ_hip, φ_knee) at time `t` by two-link inverse
    /// kinematics (knee forward; the hip-to-foot distance is clamped into the reachable
    /// annulus).
    pub fn q(&self, hop: &Hopper, t_end: f64, target_x: f64, z0: f64, t: f64) -> ([f64; 4], bool) {
        let (p, stance) = self.pose(hop, t_end, target_x, z0, t);
        let (lt, ls) = (hop.l_thigh, hop.l_shank);
        let (rx, rz) = (p[2] - p[0], p[3] - p[1]);
        let d = (rx * rx + rz * rz)
            .sqrt()
            .clamp((lt - ls).abs() + 1e-3, lt + ls);
        let psi = (-rx).atan2(-rz);
        let beta = ((lt * lt + d * d - ls * ls) / (2.0 * lt * d))
            .clamp(-1.0, 1.0)
            .acos();
        let knee = ((lt * lt + ls * ls - d * d) / (2.0 * lt * ls))
            .clamp(-1.0, 1.0)
            .acos();
        (
            [p[0], p[1], psi - beta, std::f64::consts::PI - knee],
            stance,
        )
    }
}

/// Writes the kinematic gait `gait` into the primal point `x` of the hopper OCP NLP built by
/// [`crate::fesd::build`] for `hz` (`layout` its layout): every stage state (q and v of the
/// gait at the stage's nominal time, clock t = τ), element lengths h̄, α and the multipliers
/// consistent with the gait's contact phase (flight: α₁ = 1, α₂,₃ = the side of c(y),
/// λᵖ − λⁿ = c(y);
/// stance, a sliding mode: α₁ = 0, α₂ = 1/s, α₃ = ½, λ = 0), speed of time s_k = 1 + 0.3 ×
/// (stance fraction of the interval) and u = 0. Step representation only.
pub fn hop_guess(
    tf: &crate::tf::TimeFreezing<Hopper>,
    hz: &crate::fesd::Horizon,
    layout: &crate::fesd::Layout,
    gait: &HopGait,
    x: &mut [f64],
) -> Result<(), crate::OcpError> {
    let hop = &tf.cls;
    let (ny, nc, nu, ns) = layout.dims;
    if layout.dcs != crate::fesd::Dcs::Step || ny != 9 || nc != 3 {
        return Err(crate::OcpError::InvalidInput(
            "the hop guess needs the step representation of the hopper".into(),
        ));
    }
    let (t_end, target) = end_time_and_target_x(hz);
    let z0 = hz.y0[1];
    if !(gait.flight > 0.0 && gait.stance >= 0.0 && gait.reach > 0.0)
        || gait.hops as f64 * gait.flight + (gait.hops.max(1) as f64 - 1.0) * gait.stance >= t_end
    {
        return Err(crate::OcpError::InvalidInput(
            "the hop gait does not fit into the horizon".into(),
        ));
    }
    let state = |t: f64| -> (Vec<f64>, bool) {
        let eps = 1e-6;
        let (q, stance) = gait.q(hop, t_end, target, z0, t);
        let (qa, _) = gait.q(hop, t_end, target, z0, (t - eps).max(0.0));
        let (qb, _) = gait.q(hop, t_end, target, z0, (t + eps).min(t_end));
        let dt = (t + eps).min(t_end) - (t - eps).max(0.0);
        let mut y: Vec<f64> = q.to_vec();
        y.extend((0..4).map(|i| (qb[i] - qa[i]) / dt));
        y.push(t);
        (y, stance)
    };
    let n_fe = layout.elems.len() / hz.n_steps.max(1);
    let hbar = hz.step_len / n_fe.max(1) as f64;
    for (k, (&iu, &is)) in layout.u.iter().zip(&layout.s).enumerate() {
        let samples = 20;
        let frac = (0..samples)
            .filter(|m| {
                let t = hz.step_len * (k as f64 + (*m as f64 + 0.5) / samples as f64);
                gait.pose(hop, t_end, target, z0, t).1
            })
            .count() as f64
            / samples as f64;
        x[is] = (1.0 + 0.3 * frac).clamp(hz.s_bounds.0, hz.s_bounds.1);
        for i in 0..nu {
            x[iu + i] = 0.0;
        }
    }
    for (n, e) in layout.elems.iter().enumerate() {
        let t0 = hz.step_len * e.step as f64 + hbar * (n % n_fe.max(1)) as f64;
        x[e.h] = hbar;
        let s = x[layout.s[e.step]];
        let mut points: Vec<(usize, Option<usize>, f64)> =
            e.y.iter()
                .enumerate()
                .map(|(j, &iy)| (iy, Some(j), t0 + layout.c[j] * hbar))
                .collect();
        if e.y_end != e.y[ns - 1] {
            points.push((e.y_end, None, t0 + hbar));
        }
        for (m, (iy, j, t)) in points.into_iter().enumerate() {
            let (y, stance) = state(t);
            x[iy..iy + ny].copy_from_slice(&y);
            let c = tf.switching(&y);
            let (lp, ln) = (e.lp[m + 1], e.ln[m + 1]);
            for i in 0..nc {
                let (p, q) = if stance {
                    (0.0, 0.0)
                } else {
                    (c[i].max(0.0), (-c[i]).max(0.0))
                };
                x[lp + i] = p;
                x[ln + i] = q;
            }
            if let Some(j) = j {
                let a = e.alpha[j];
                if stance {
                    x[a] = 0.0;
                    x[a + 1] = (1.0 / s).clamp(0.0, 1.0);
                    x[a + 2] = 0.5;
                } else {
                    for i in 0..nc {
                        x[a + i] = if i == 0 || c[i] > 0.0 { 1.0 } else { 0.0 };
                    }
                }
            }
        }
    }
    Ok(())
}

/// Fixes the gait's contact schedule in the NLP's bounds (the gap's side only): in every
/// element whose midpoint lies in a flight phase of `gait`, α₁ = 1 at its stages and
/// λⁿ₁ = 0 at all its points (c₁ ≥ 0); in every stance element α₁ = 0 and λᵖ₁ = 0
/// (c₁ ≤ 0). A flight/stance boundary point thus has c₁ = 0 (touchdown and lift-off on
/// element boundaries, whose lengths stay free). All products of the gap vanish
/// identically; the other switching functions keep their (relaxed) complementarity. A
/// solution of the restricted MPCC is a feasible point of the full one with that contact
/// sequence. Step representation only.
pub fn fix_contact_schedule<K>(
    hz: &crate::fesd::Horizon,
    layout: &crate::fesd::Layout,
    gait: &HopGait,
    hop: &Hopper,
    nlp: &mut crate::nlp::BlockNlp<K>,
) {
    let (t_end, target) = end_time_and_target_x(hz);
    let n_fe = (layout.elems.len() / hz.n_steps.max(1)).max(1);
    let hbar = hz.step_len / n_fe as f64;
    for (n, e) in layout.elems.iter().enumerate() {
        let mid = hz.step_len * e.step as f64 + hbar * ((n % n_fe) as f64 + 0.5);
        let stance = gait.pose(hop, t_end, target, hz.y0[1], mid).1;
        let (a, lam) = if stance { (0.0, &e.lp) } else { (1.0, &e.ln) };
        for &ia in &e.alpha {
            nlp.xl[ia] = a;
            nlp.xu[ia] = a;
        }
        for &il in lam {
            nlp.xl[il] = 0.0;
            nlp.xu[il] = 0.0;
        }
    }
}

/// Solves the hopper OCP from the kinematic gait [`hop_guess`] instead of the trivial
/// initialization (build, guess, [`crate::fesd::homotopy`], [`crate::fesd::extract_ocp`]);
/// with `fix_contacts` the gait's contact schedule is imposed ([`fix_contact_schedule`]).
pub fn solve_from_gait(
    tf: &std::sync::Arc<crate::tf::TimeFreezing<Hopper>>,
    hz: &crate::fesd::Horizon,
    o: &crate::fesd::FesdOptions,
    gait: &HopGait,
    fix_contacts: bool,
) -> Result<crate::fesd::OcpSolution, crate::OcpError> {
    let start = crate::ipopt::thread_cpu_seconds();
    let (mut nlp, layout, mut x0) = crate::fesd::build(tf, hz, o)?;
    hop_guess(tf, hz, &layout, gait, &mut x0)?;
    if fix_contacts {
        fix_contact_schedule(hz, &layout, gait, &tf.cls, &mut nlp);
        for (v, (l, u)) in x0.iter_mut().zip(nlp.xl.iter().zip(&nlp.xu)) {
            *v = v.clamp(*l, *u);
        }
    }
    let mut out = crate::fesd::solve_built(tf, hz, o, nlp, &layout, x0)?;
    out.cpu_seconds = crate::ipopt::thread_cpu_seconds() - start;
    Ok(out)
}

/// The horizon's physical end time N·h and its terminal base position q_x (0 when the
/// horizon has no terminal constraint on q_x).
fn end_time_and_target_x(hz: &crate::fesd::Horizon) -> (f64, f64) {
    let target = hz
        .terminal
        .iter()
        .find(|(i, _)| *i == 0)
        .map_or(0.0, |(_, v)| *v);
    (hz.step_len * hz.n_steps as f64, target)
}
