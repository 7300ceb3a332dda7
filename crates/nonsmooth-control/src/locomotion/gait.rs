//! Trot planner (paper §7.2: 0.3 s gait, 75 % duty, 1.5 cm step height, 0.2 m/s) and
//! leg inverse kinematics.

use nalgebra::{DVector, Vector3};

use crate::controllers::JointReference;
use crate::error::ControlError;

/// Geometry of one 3-DOF leg (hip roll about x, hip pitch about y, knee about y).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LegGeometry {
    /// Hip position in the trunk frame.
    pub hip: Vector3<f64>,
    /// Thigh length (hip pitch to knee).
    pub thigh: f64,
    /// Shank length (knee to foot).
    pub shank: f64,
}

/// Analytic IK of a leg: the foot position relative to the hip, in the trunk frame, gives
/// (roll, pitch, knee) with the knee bent backwards (knee ≤ 0), consistent with the model
/// convention `foot = Rx(roll)·Ry(pitch)·[(0,0,−l₁) + Ry(knee)(0,0,−l₂)]`.
///
/// # Errors
/// [`ControlError::InvalidInput`] when the point is out of reach or non-finite.
pub fn leg_ik(leg: &LegGeometry, foot_rel_hip: &Vector3<f64>) -> Result<[f64; 3], ControlError> {
    let p = foot_rel_hip;
    if p.iter().any(|x| !x.is_finite()) {
        return Err(ControlError::NonFinite {
            what: "foot target".into(),
        });
    }
    let d = (p.y * p.y + p.z * p.z).sqrt();
    let roll = p.y.atan2(-p.z);
    let (x, z) = (p.x, -d);
    let (l1, l2) = (leg.thigh, leg.shank);
    let dd = x * x + z * z;
    let c = (dd - l1 * l1 - l2 * l2) / (2.0 * l1 * l2);
    if !(-1.0..=1.0).contains(&c) {
        return Err(ControlError::InvalidInput(format!(
            "foot target {p:?} is out of reach"
        )));
    }
    let knee = -c.acos();
    // x = −l1 sin θ1 − l2 sin(θ1+θ2), z = −l1 cos θ1 − l2 cos(θ1+θ2).
    let (a, b) = (l1 + l2 * knee.cos(), l2 * knee.sin());
    // [x; z] = −[a sinθ1 + b cosθ1; a cosθ1 − b sinθ1]
    let pitch = (-x).atan2(-z) - b.atan2(a);
    Ok([roll, pitch, knee])
}

/// Trot planner in the trunk frame: stance feet move backwards at the commanded speed,
/// swing feet follow a quintic Hermite spline forwards (matching the stance feet's velocity
/// at lift-off and touchdown, zero acceleration there) and the
/// sextic height bump `64 h s³(1−s)³` (zero velocity and acceleration at lift-off and
/// touchdown); the speed and the step height ramp in smoothly over
/// [`GaitPlanner::ramp`] (see [`GaitPlanner::feet`]).
#[derive(Debug, Clone, PartialEq)]
pub struct GaitPlanner {
    /// Leg geometry, in actuator order.
    pub legs: Vec<LegGeometry>,
    /// Phase offset per leg (fraction of the cycle).
    pub offsets: Vec<f64>,
    /// Nominal foot height below the hips (standing, m).
    pub height: f64,
    /// Gait cycle (s).
    pub period: f64,
    /// Duty factor (fraction of the cycle in stance).
    pub duty: f64,
    /// Swing step height (m).
    pub step_height: f64,
    /// Forward speed (m/s).
    pub speed: f64,
    /// Ramp-in time (s).
    pub ramp: f64,
}

impl GaitPlanner {
    /// The paper's trot for the reference quadruped of `examples/id_quadruped.toml`:
    /// legs FL, FR, HL, HR with hips at (±0.10, ±0.06, 0), 0.1 m segments, diagonal pairs
    /// (FL, HR) and (FR, HL) half a cycle apart, 0.3 s cycle, the given duty factor,
    /// 1.5 cm step height, 0.2 m/s, 0.3 s ramp.
    pub fn trot(duty: f64) -> Self {
        let hips = [(0.1, 0.06), (0.1, -0.06), (-0.1, 0.06), (-0.1, -0.06)];
        Self {
            legs: hips
                .iter()
                .map(|&(x, y)| LegGeometry {
                    hip: Vector3::new(x, y, 0.0),
                    thigh: 0.1,
                    shank: 0.1,
                })
                .collect(),
            offsets: vec![0.0, 0.5, 0.5, 0.0],
            height: 0.2 * 0.6_f64.cos(),
            period: 0.3,
            duty,
            step_height: 0.015,
            speed: 0.2,
            ramp: 0.3,
        }
    }

    fn ramp_factor(&self, t: f64) -> f64 {
        if self.ramp <= 0.0 {
            return 1.0;
        }
        let s = (t / self.ramp).clamp(0.0, 1.0);
        s * s * (3.0 - 2.0 * s)
    }

    /// Whether leg `i` is planned in stance at time t.
    pub fn in_stance(&self, i: usize, t: f64) -> bool {
        let phase = (t / self.period + self.offsets.get(i).copied().unwrap_or(0.0)).rem_euclid(1.0);
        phase < self.duty || self.ramp_factor(t) == 0.0
    }

    /// Distance the trunk has travelled at time t under the ramped speed
    /// `speed · r(t)` (r the smoothstep ramp): `speed · T (u³ − u⁴/2)` during the ramp
    /// (u = t/T), `speed (T/2 + t − T)` after it, 0 before t = 0.
    pub fn odometer(&self, t: f64) -> f64 {
        if t <= 0.0 {
            return 0.0;
        }
        if self.ramp <= 0.0 || t >= self.ramp {
            return self.speed * (0.5 * self.ramp.max(0.0) + t - self.ramp.max(0.0));
        }
        let u = t / self.ramp;
        self.speed * self.ramp * (u * u * u - 0.5 * u * u * u * u)
    }

    /// Touchdown position (x in the trunk frame) of a foot landing at time t: half the
    /// stride the trunk covers during the following stance phase at the ramped speed;
    /// 0 (under the hip, the initial pose) for touchdowns at t ≤ 0.
    fn touchdown_x(&self, t: f64) -> f64 {
        if t <= 1e-9 {
            return 0.0;
        }
        let stance = self.period * self.duty;
        0.5 * (self.odometer(t + stance) - self.odometer(t))
    }

    /// Planned foot positions relative to the hips (trunk frame) at time t.
    ///
    /// A stance foot stays fixed on the ground while the trunk advances, so every stance
    /// foot moves backwards in the trunk frame by the same distance (the odometer): the
    /// plan is kinematically consistent with non-slipping feet also while the speed ramps
    /// in. A swing foot moves from its lift-off point to the next touchdown point along a
    /// quintic Hermite spline in x whose end velocities equal the stance feet's and whose
    /// end accelerations are zero, and the bump `64 h s³(1−s)³` in height (zero velocity
    /// and acceleration at the ends), so the joint velocities are continuous and the
    /// accelerations nearly so. In steady state the
    /// feet land at +stride/2 and lift off at −stride/2 (stride = speed · period · duty).
    pub fn feet(&self, t: f64) -> Vec<Vector3<f64>> {
        let r = self.ramp_factor(t);
        let stance = self.period * self.duty;
        self.legs
            .iter()
            .zip(&self.offsets)
            .map(|(_, off)| {
                let cycles = t / self.period + off;
                let phase = cycles.rem_euclid(1.0);
                let t0 = t - phase * self.period; // start of the current cycle (touchdown)
                let (x, z) = if phase < self.duty {
                    let td = t0.max(0.0);
                    let x_td = self.touchdown_x(t0);
                    (x_td - (self.odometer(t) - self.odometer(td)), 0.0)
                } else {
                    let x_lo = if t0 + stance <= 0.0 {
                        0.0
                    } else {
                        let x_td = self.touchdown_x(t0);
                        x_td - (self.odometer(t0 + stance) - self.odometer(t0.max(0.0)))
                    };
                    let x_next = self.touchdown_x(t0 + self.period);
                    let s = (phase - self.duty) / (1.0 - self.duty);
                    let c = 1.0 - s;
                    // Quintic Hermite: positions x_lo → x_next, end slopes equal to the
                    // stance feet's (−speed·r·T_swing), zero end accelerations.
                    let t_sw = (1.0 - self.duty) * self.period;
                    let m0 = -self.speed * self.ramp_factor(t0 + stance) * t_sw;
                    let m1 = -self.speed * self.ramp_factor(t0 + self.period) * t_sw;
                    let (s2, s3) = (s * s, s * s * s);
                    let (s4, s5) = (s3 * s, s3 * s2);
                    let h0 = 1.0 - 10.0 * s3 + 15.0 * s4 - 6.0 * s5;
                    let h1 = s - 6.0 * s3 + 8.0 * s4 - 3.0 * s5;
                    let h4 = -4.0 * s3 + 7.0 * s4 - 3.0 * s5;
                    let h5 = 10.0 * s3 - 15.0 * s4 + 6.0 * s5;
                    (
                        x_lo * h0 + m0 * h1 + m1 * h4 + x_next * h5,
                        64.0 * self.step_height * s3 * c * c * c,
                    )
                };
                Vector3::new(x, 0.0, -self.height + r * z)
            })
            .collect()
    }

    /// Joint positions (actuator order: roll, pitch, knee per leg) at time t.
    ///
    /// # Errors
    /// As [`leg_ik`].
    pub fn joints(&self, t: f64) -> Result<DVector<f64>, ControlError> {
        let feet = self.feet(t);
        let mut q = Vec::with_capacity(3 * feet.len());
        for (leg, f) in self.legs.iter().zip(&feet) {
            q.extend_from_slice(&leg_ik(leg, f)?);
        }
        Ok(DVector::from_vec(q))
    }

    /// The joint reference at time t: IK positions, velocities and accelerations by
    /// central differences of the IK (step 10⁻⁴ s), and the swing flags of each leg's three
    /// joints.
    ///
    /// # Errors
    /// As [`leg_ik`].
    pub fn reference(&self, t: f64) -> Result<JointReference, ControlError> {
        let e = 1e-4;
        let q0 = self.joints(t)?;
        let qm = self.joints(t - e)?;
        let qp = self.joints(t + e)?;
        let qd = (&qp - &qm) / (2.0 * e);
        let qdd = (&qp - &q0 * 2.0 + &qm) / (e * e);
        let swing = (0..self.legs.len())
            .flat_map(|i| [!self.in_stance(i, t); 3])
            .collect();
        Ok(JointReference {
            q: q0,
            qd,
            qdd,
            swing,
        })
    }
}
