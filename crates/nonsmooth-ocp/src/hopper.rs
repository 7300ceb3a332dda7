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
    /// the foot lower than it started (f_c is convex in q; docs/optimal-control.md,
    /// "Limitations"), so a bound ≥ −0.005 makes an exact n_s = 1 push-off infeasible.
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
        tracking: vec![],
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
/// n_s = 3, N_FE = 3) with our homotopy choices (docs/decisions/002-time-freezing.md): Scholtes
/// relaxation with κ = 0.1 over at most 40 NLPs, cross complementarity on the gap only,
/// IPOPT tolerance 1e-8 and 3000 iterations, and the speed-of-time penalty ρ_sot = 100.
pub fn paper_options() -> crate::fesd::FesdOptions {
    use crate::fesd::{Discretization, FesdOptions, MpccStrategy, NlpSettings};
    // valid by construction (checked in tests/error_messages.rs)
    FesdOptions {
        discretization: Discretization {
            n_s: 3,
            n_fe: 3,
            cross_components: 1,
            rho_sot: 100.0,
            ..Discretization::default()
        },
        mpcc: MpccStrategy {
            penalty: false,
            kappa: 0.1,
            n_homotopy: 40,
            homotopy_retries: 2,
            ..MpccStrategy::default()
        },
        nlp: NlpSettings {
            tol: 1e-8,
            max_iter: 3000,
            ..NlpSettings::default()
        },
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
