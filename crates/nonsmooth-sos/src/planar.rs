//! The planar rigid body with two point contacts on a slope in the zero-order-dynamics (ZOD)
//! model of Várkonyi (§II and Appendix), in the sign convention of
//! docs/decisions/000-sos-stability.md (section "Model and sign convention"; the paper's own signs
//! are inconsistent). The comments below cite that section as "model".
//!
//! Units `m = 1`, radius of gyration 1, `g = 1`. State `x = (y, z, θ, u, v, ω)`: `y` along
//! the slope (+ downhill), `z` normal to it, `θ` counter-clockwise, `(u, v, ω)` velocities.
//! Contact `i` sits at body point `(l_i, −h)`; `γ_i = z + l_i θ`, `γ̇_i = v + l_i ω`, and the
//! common slip velocity is `σ̇ = u + h ω`. The example geometry puts the contacts at
//! `l₁ = h tanα − d` (uphill, friction `μ₁`) and `l₂ = h tanα + d`; a body read from a model
//! file ([`crate::model`]) may shift both by an `offset` (`l_{1,2} = h tanα + offset ∓ d`).

use serde::Serialize;

/// Index of `y` … `ω` in the state vector.
pub const Y: usize = 0;
/// Index of `z`.
pub const Z: usize = 1;
/// Index of `θ`.
pub const TH: usize = 2;
/// Index of `u`.
pub const U: usize = 3;
/// Index of `v`.
pub const V: usize = 4;
/// Index of `ω`.
pub const W: usize = 5;

/// Parameters of the example body (paper §IV; docs/decisions/000-sos-stability.md, model).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PlanarParams {
    /// Slope angle α (rad).
    pub alpha: f64,
    /// Friction coefficient of contact 1 (uphill).
    pub mu1: f64,
    /// Friction coefficient of contact 2 (downhill).
    pub mu2: f64,
    /// Half distance of the contacts, `d`.
    pub d: f64,
    /// Newton restitution coefficient `e` (both contacts).
    pub e: f64,
    /// Height `h` of the centre of mass above the contact line.
    pub h: f64,
    /// Shift of the contacts' midpoint along the slope (+ downhill) from the point under the
    /// centre of mass along gravity, `h tanα`: `l_{1,2} = h tanα + offset ∓ d`. 0 in the
    /// paper's example (docs/decisions/000-sos-stability.md, model); a body read from a model file
    /// may have any value.
    pub offset: f64,
}

/// Contact state letter of a mode (docs/decisions/000-sos-stability.md, model).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ContactState {
    /// Free (F): no force.
    Free,
    /// Stick (S).
    Stick,
    /// Positive slip (P): `σ̇ > 0`, `λ_t = −μλ`.
    Pos,
    /// Negative slip (N): `σ̇ < 0`, `λ_t = +μλ`.
    Neg,
}

impl ContactState {
    fn letter(self) -> char {
        match self {
            ContactState::Free => 'F',
            ContactState::Stick => 'S',
            ContactState::Pos => 'P',
            ContactState::Neg => 'N',
        }
    }
}

/// A contact mode: states of contact 1 and contact 2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Mode(pub ContactState, pub ContactState);

impl Mode {
    /// Two-letter name, contact 1 first (e.g. "PF").
    pub fn name(&self) -> String {
        format!("{}{}", self.0.letter(), self.1.letter())
    }

    /// The 10 kinematically possible modes (PN, NP, PS, SP, NS, SN are excluded because
    /// both contacts share `σ̇`).
    pub fn all() -> Vec<Mode> {
        use ContactState::*;
        vec![
            Mode(Free, Free),
            Mode(Pos, Free),
            Mode(Neg, Free),
            Mode(Stick, Free),
            Mode(Free, Pos),
            Mode(Free, Neg),
            Mode(Free, Stick),
            Mode(Pos, Pos),
            Mode(Neg, Neg),
            Mode(Stick, Stick),
        ]
    }
}

/// Constant accelerations and contact forces of a mode (ZOD).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ModeDynamics {
    /// The mode.
    pub mode: Mode,
    /// `(u̇, v̇, ω̇)`.
    pub accel: [f64; 3],
    /// Normal forces `λ₁, λ₂`.
    pub normal: [f64; 2],
    /// Tangential forces `λ_t1, λ_t2`.
    pub tangential: [f64; 2],
    /// Smallest |denominator| met (near-Painlevé flag, docs/decisions/000-sos-stability.md, model).
    pub min_denominator: f64,
}

impl ModeDynamics {
    /// `γ̈_i` in this mode.
    pub fn gamma_ddot(&self, p: &PlanarParams, i: usize) -> f64 {
        self.accel[1] + p.l(i) * self.accel[2]
    }

    /// `σ̈` in this mode.
    pub fn sigma_ddot(&self, p: &PlanarParams) -> f64 {
        self.accel[0] + p.h * self.accel[2]
    }

    /// Whether the forces are admissible: `λ ≥ 0` and, for stick, `|λ_t| ≤ μλ`
    /// (SS: the friction cone of the sum, docs/decisions/000-sos-stability.md, model).
    pub fn forces_admissible(&self, p: &PlanarParams) -> bool {
        let tol = 1e-12;
        if self.normal.iter().any(|l| *l < -tol) {
            return false;
        }
        match self.mode {
            Mode(ContactState::Stick, ContactState::Stick) => {
                (self.tangential[0] + self.tangential[1]).abs()
                    <= p.mu1 * self.normal[0] + p.mu2 * self.normal[1] + tol
            }
            Mode(a, b) => {
                let mu = [p.mu1, p.mu2];
                [a, b].iter().enumerate().all(|(i, s)| {
                    *s != ContactState::Stick
                        || self.tangential[i].abs() <= mu[i] * self.normal[i] + tol
                })
            }
        }
    }
}

/// Why a parameter point is outside the method's domain (docs/decisions/000-sos-stability.md,
/// model: α ∈ (0, π/2), `l₁ < 0 < l₂` — for the example `d > h tanα` — μ ≥ 0, e ∈ [0, 1]).
pub fn not_applicable(p: &PlanarParams) -> Option<String> {
    let vals = [p.alpha, p.mu1, p.mu2, p.d, p.e, p.h, p.offset];
    if vals.iter().any(|v| !v.is_finite()) {
        return Some("non-finite parameter".into());
    }
    if !(p.alpha > 0.0 && p.alpha < std::f64::consts::FRAC_PI_2) {
        return Some(format!("alpha = {} is not in (0, pi/2)", p.alpha));
    }
    if p.mu1 < 0.0 || p.mu2 < 0.0 {
        return Some("negative friction coefficient".into());
    }
    if !(0.0..=1.0).contains(&p.e) {
        return Some(format!("restitution e = {} is not in [0, 1]", p.e));
    }
    if p.h <= 0.0 {
        return Some("h must be positive".into());
    }
    if p.d <= 0.0 {
        return Some(format!(
            "d = {} is not positive: the contacts coincide",
            p.d
        ));
    }
    if !(p.l(0) < 0.0 && p.l(1) > 0.0) {
        return Some(format!(
            "l1 = {:.6}, l2 = {:.6}: both contacts on one side of the gravity line through the \
             centre of mass (the construction needs l1 l2 < 0; for the example d > h tan(alpha) = {:.6})",
            p.l(0),
            p.l(1),
            p.h * p.alpha.tan()
        ));
    }
    None
}

impl PlanarParams {
    /// The paper's example with `h = 1`.
    pub fn new(alpha: f64, mu1: f64, mu2: f64, d: f64, e: f64) -> Self {
        Self {
            alpha,
            mu1,
            mu2,
            d,
            e,
            h: 1.0,
            offset: 0.0,
        }
    }

    /// Contact offset `l_i` (`i ∈ {0, 1}` for contacts 1, 2).
    pub fn l(&self, i: usize) -> f64 {
        let t = self.h * self.alpha.tan() + self.offset;
        if i == 0 {
            t - self.d
        } else {
            t + self.d
        }
    }

    /// Friction coefficient of contact `i ∈ {0, 1}`.
    pub fn mu(&self, i: usize) -> f64 {
        if i == 0 {
            self.mu1
        } else {
            self.mu2
        }
    }

    /// Free-flight acceleration `(sinα, −cosα, 0)`.
    pub fn a_ff(&self) -> [f64; 3] {
        [self.alpha.sin(), -self.alpha.cos(), 0.0]
    }

    /// `γ_i(x)`.
    pub fn gamma(&self, x: &[f64; 6], i: usize) -> f64 {
        x[Z] + self.l(i) * x[TH]
    }

    /// `γ̇_i(x)`.
    pub fn gamma_dot(&self, x: &[f64; 6], i: usize) -> f64 {
        x[V] + self.l(i) * x[W]
    }

    /// `σ̇(x)`.
    pub fn sigma_dot(&self, x: &[f64; 6]) -> f64 {
        x[U] + self.h * x[W]
    }

    /// Mechanical energy `V₁ = ½(u² + v² + ω²) + z cosα − y sinα`
    /// (docs/decisions/000-sos-stability.md, model).
    pub fn energy(&self, x: &[f64; 6]) -> f64 {
        0.5 * (x[U] * x[U] + x[V] * x[V] + x[W] * x[W]) + x[Z] * self.alpha.cos()
            - x[Y] * self.alpha.sin()
    }

    /// Accelerations and forces of `mode` (paper Appendix; docs/decisions/000-sos-stability.md,
    /// model). `None` when the linear system is singular. Admissibility is checked separately
    /// ([`ModeDynamics::forces_admissible`]).
    pub fn mode_dynamics(&self, mode: Mode) -> Option<ModeDynamics> {
        use ContactState::*;
        let (sa, ca, h) = (self.alpha.sin(), self.alpha.cos(), self.h);
        let slip_sign = |s: ContactState| if s == Pos { 1.0 } else { -1.0 };
        let single = |i: usize, st: ContactState| -> Option<ModeDynamics> {
            let l = self.l(i);
            let mu = self.mu(i);
            let mut normal = [0.0; 2];
            let mut tang = [0.0; 2];
            match st {
                Pos | Neg => {
                    let s = slip_sign(st);
                    let den = 1.0 + l * l - s * mu * l * h;
                    if den.abs() < 1e-14 {
                        return None;
                    }
                    let lam = ca / den;
                    normal[i] = lam;
                    tang[i] = -s * mu * lam;
                    Some(ModeDynamics {
                        mode,
                        accel: [sa - s * mu * lam, -ca + lam, (l - s * mu * h) * lam],
                        normal,
                        tangential: tang,
                        min_denominator: den.abs(),
                    })
                }
                Stick => {
                    let (a, b, c) = (1.0 + l * l, l * h, 1.0 + h * h);
                    let det = a * c - b * b;
                    let lam = (c * ca + b * sa) / det;
                    let lt = (-b * ca - a * sa) / det;
                    normal[i] = lam;
                    tang[i] = lt;
                    Some(ModeDynamics {
                        mode,
                        accel: [sa + lt, -ca + lam, l * lam + h * lt],
                        normal,
                        tangential: tang,
                        min_denominator: det.abs(),
                    })
                }
                Free => None,
            }
        };
        match mode {
            Mode(Free, Free) => Some(ModeDynamics {
                mode,
                accel: self.a_ff(),
                normal: [0.0; 2],
                tangential: [0.0; 2],
                min_denominator: f64::INFINITY,
            }),
            Mode(st, Free) => single(0, st),
            Mode(Free, st) => single(1, st),
            Mode(Stick, Stick) => {
                // Static: λ₁ + λ₂ = cosα, l₁λ₁ + l₂λ₂ = h sinα, Σλ_t = −sinα.
                let (l1, l2) = (self.l(0), self.l(1));
                let det = l2 - l1;
                if det.abs() < 1e-14 {
                    return None;
                }
                let lam2 = (h * sa - l1 * ca) / det;
                let lam1 = ca - lam2;
                let tot = self.mu1 * lam1 + self.mu2 * lam2;
                let tangential = if tot > 0.0 {
                    [-sa * self.mu1 * lam1 / tot, -sa * self.mu2 * lam2 / tot]
                } else {
                    [-0.5 * sa, -0.5 * sa]
                };
                Some(ModeDynamics {
                    mode,
                    accel: [0.0; 3],
                    normal: [lam1, lam2],
                    tangential,
                    min_denominator: det.abs(),
                })
            }
            Mode(a, b) if a == b && (a == Pos || a == Neg) => {
                let s = slip_sign(a);
                let l = [self.l(0), self.l(1)];
                let mu = [self.mu1, self.mu2];
                let p = |i: usize, k: usize| 1.0 + l[i] * l[k] - s * mu[k] * h * l[i];
                let (p00, p01, p10, p11) = (p(0, 0), p(0, 1), p(1, 0), p(1, 1));
                let det = p00 * p11 - p01 * p10;
                if det.abs() < 1e-14 {
                    return None;
                }
                let lam1 = (p11 * ca - p01 * ca) / det;
                let lam2 = (p00 * ca - p10 * ca) / det;
                let lam = [lam1, lam2];
                let du = sa - s * (mu[0] * lam1 + mu[1] * lam2);
                let dv = -ca + lam1 + lam2;
                let dw: f64 = (0..2).map(|k| (l[k] - s * mu[k] * h) * lam[k]).sum();
                Some(ModeDynamics {
                    mode,
                    accel: [du, dv, dw],
                    normal: lam,
                    tangential: [-s * mu[0] * lam1, -s * mu[1] * lam2],
                    min_denominator: det.abs(),
                })
            }
            _ => None,
        }
    }

    /// The modes whose (constant) contact forces are admissible, excluding FF and SS: the
    /// modes whose Lyapunov conditions enter Theorem 2 (item 2 of the program in
    /// docs/decisions/000-sos-stability.md).
    pub fn consistent_modes(&self) -> Vec<ModeDynamics> {
        Mode::all()
            .into_iter()
            .filter(|m| {
                *m != Mode(ContactState::Free, ContactState::Free)
                    && *m != Mode(ContactState::Stick, ContactState::Stick)
            })
            .filter_map(|m| self.mode_dynamics(m))
            .filter(|md| md.forces_admissible(self))
            .collect()
    }

    /// Whether a static equilibrium (SS) exists: `μ₁ + μ₂ ≥ 2 tanα` for the symmetric
    /// example (general test: the SS friction cone of the summed forces).
    pub fn equilibrium_exists(&self) -> bool {
        self.mode_dynamics(Mode(ContactState::Stick, ContactState::Stick))
            .is_some_and(|md| md.forces_admissible(self))
    }

    /// Whether the equilibrium is ambiguous: a non-static mode is consistent from rest
    /// (admissible forces, non-negative `γ̈` of every lifting contact, and slip acceleration
    /// in the slip direction). For the example this is "PF consistent" (eqs. 57–58).
    pub fn ambiguous_modes(&self) -> Vec<Mode> {
        let tol = 1e-12;
        self.consistent_modes()
            .into_iter()
            .filter(|md| {
                let Mode(a, b) = md.mode;
                let lifts_ok = [a, b]
                    .iter()
                    .enumerate()
                    .all(|(i, s)| *s != ContactState::Free || md.gamma_ddot(self, i) > tol);
                let sdd = md.sigma_ddot(self);
                let slip_ok = match (a, b) {
                    (ContactState::Pos, _) | (_, ContactState::Pos) => sdd > tol,
                    (ContactState::Neg, _) | (_, ContactState::Neg) => sdd < -tol,
                    _ => true,
                };
                lifts_ok && slip_ok
            })
            .map(|md| md.mode)
            .collect()
    }

    /// True when some non-static mode is consistent from rest (always unstable).
    pub fn is_ambiguous(&self) -> bool {
        !self.ambiguous_modes().is_empty()
    }

    /// Closed-form ambiguity region (eqs. 57–58): for the example `d < h tanα` and
    /// `μ₁ < tanα − d/h`, i.e. `l₁ > 0` and `μ₁ < l₁/h` (the form used here, which holds for
    /// any `offset`).
    pub fn ambiguous_closed_form(&self) -> bool {
        let l1 = self.l(0);
        l1 > 0.0 && self.mu1 < l1 / self.h
    }

    /// Normal impulse of the unified impact form at contact `i` for a given tangential
    /// impulse `Λ_T`: `Λ_N = (−(1+e)γ̇_i⁻ − l_i h Λ_T)/(1 + l_i²)`
    /// (docs/decisions/000-sos-stability.md, model).
    pub fn impact_normal(&self, x: &[f64; 6], i: usize, lt: f64) -> f64 {
        let l = self.l(i);
        (-(1.0 + self.e) * self.gamma_dot(x, i) - l * self.h * lt) / (1.0 + l * l)
    }

    /// Post-impact state for impulses `(Λ_N, Λ_T)` at contact `i`.
    pub fn apply_impulse(&self, x: &[f64; 6], i: usize, ln: f64, lt: f64) -> [f64; 6] {
        let mut y = *x;
        y[U] += lt;
        y[V] += ln;
        y[W] += self.l(i) * ln + self.h * lt;
        y
    }

    /// Kane–Levinson impact with Coulomb impulses at contact `i`
    /// (docs/decisions/000-sos-stability.md, model and paper eqs. 30–33): tries stick, then
    /// positive and negative post-impact slip, and returns the consistent candidate `(x⁺, Λ_N,
    /// Λ_T)`. `None` if `γ̇_i⁻ ≥ 0` or no candidate is consistent.
    pub fn impact(&self, x: &[f64; 6], i: usize) -> Option<([f64; 6], f64, f64)> {
        let gd = self.gamma_dot(x, i);
        if gd >= 0.0 {
            return None;
        }
        let (l, h, mu, e) = (self.l(i), self.h, self.mu(i), self.e);
        let tol = 1e-10 * (1.0 + gd.abs());
        // Stick: γ̇⁺ = −eγ̇⁻ and σ̇⁺ = 0.
        let (a, b, c) = (1.0 + l * l, l * h, 1.0 + h * h);
        let det = a * c - b * b;
        let r1 = -(1.0 + e) * gd;
        let r2 = -self.sigma_dot(x);
        let ln = (c * r1 - b * r2) / det;
        let lt = (a * r2 - b * r1) / det;
        if ln >= -tol && lt.abs() <= mu * ln + tol {
            return Some((self.apply_impulse(x, i, ln, lt), ln, lt));
        }
        for s in [1.0, -1.0] {
            let den = 1.0 + l * l - s * mu * l * h;
            if den.abs() < 1e-14 {
                continue;
            }
            let ln = r1 / den;
            let lt = -s * mu * ln;
            let xp = self.apply_impulse(x, i, ln, lt);
            if ln >= -tol && s * self.sigma_dot(&xp) >= -tol {
                return Some((xp, ln, lt));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p30(mu1: f64, d: f64) -> PlanarParams {
        PlanarParams::new(30f64.to_radians(), mu1, 2.0, d, 0.0)
    }

    fn md(p: &PlanarParams, m: &str) -> ModeDynamics {
        let mode = Mode::all()
            .into_iter()
            .find(|x| x.name() == m)
            .unwrap_or(Mode(ContactState::Free, ContactState::Free));
        p.mode_dynamics(mode)
            .unwrap_or_else(|| panic!("mode {m} undefined"))
    }

    #[test]
    fn acceptance_test1_pf_ambiguous() {
        let p = p30(0.1, 0.3);
        let pf = md(&p, "PF");
        assert!((pf.normal[0] - 0.8254).abs() < 1e-4);
        assert!((pf.accel[0] - 0.4175).abs() < 1e-4);
        assert!((pf.accel[1] + 0.0406).abs() < 1e-4);
        assert!((pf.accel[2] - 0.1464).abs() < 1e-4);
        assert!((pf.gamma_ddot(&p, 1) - 0.0878).abs() < 1e-4);
        assert!((pf.sigma_ddot(&p) - 0.5638).abs() < 1e-4);
        assert!(p.is_ambiguous());
        let nn = md(&p, "NN");
        assert!((nn.normal[0] - 0.9967).abs() < 1e-4);
        assert!((nn.normal[1] + 0.1307).abs() < 1e-4);
        assert!(!nn.forces_admissible(&p));
    }

    #[test]
    fn acceptance_test2_not_ambiguous() {
        let p = p30(0.5, 0.3);
        let pf = md(&p, "PF");
        assert!((pf.normal[0] - 0.9230).abs() < 1e-4);
        assert!((pf.gamma_ddot(&p, 1) + 0.1233).abs() < 1e-4);
        assert!((pf.sigma_ddot(&p) + 0.1670).abs() < 1e-4);
        assert!(!p.is_ambiguous());
        assert!((md(&p, "FP").normal[1] - 57.570).abs() < 1e-2);
    }

    #[test]
    fn acceptance_test3_forces() {
        let p = p30(0.5, 1.0);
        let sf = md(&p, "SF");
        assert!((sf.normal[0] - 0.6980).abs() < 1e-4 && (sf.tangential[0] + 0.1025).abs() < 1e-4);
        assert!(sf.forces_admissible(&p));
        let fs = md(&p, "FS");
        assert!((fs.normal[1] - 0.5617).abs() < 1e-4 && (fs.tangential[1] + 0.6930).abs() < 1e-4);
        assert!(fs.forces_admissible(&p));
        assert!((md(&p, "FP").normal[1] - 2.5981).abs() < 1e-4);
        assert!((md(&p, "FN").normal[1] - 0.1304).abs() < 1e-4);
        let pp = md(&p, "PP");
        assert!((pp.normal[0] + 0.7321).abs() < 1e-4 && (pp.normal[1] - 1.5981).abs() < 1e-4);
        let nn = md(&p, "NN");
        assert!((nn.normal[0] - 0.8852).abs() < 1e-4 && (nn.normal[1] + 0.0191).abs() < 1e-4);
        assert!(!pp.forces_admissible(&p) && !nn.forces_admissible(&p));
        let names: Vec<String> = p.consistent_modes().iter().map(|m| m.mode.name()).collect();
        assert!(!names.contains(&"PP".to_string()) && names.contains(&"SF".to_string()));
        // Continuity of the forces in μ₁.
        let q = p30(0.5 + 1e-7, 1.0);
        assert!((md(&q, "SF").normal[0] - sf.normal[0]).abs() < 1e-6);
    }

    #[test]
    fn acceptance_test4_predicates_on_grid() {
        for i in 0..=20 {
            for j in 1..=20 {
                let p = p30(2.0 * f64::from(i) / 20.0, 2.0 * f64::from(j) / 20.0);
                assert_eq!(p.is_ambiguous(), p.ambiguous_closed_form(), "{p:?}");
                let pf_ok = p.ambiguous_modes().iter().any(|m| m.name() == "PF");
                assert_eq!(p.is_ambiguous(), pf_ok);
                assert_eq!(p.equilibrium_exists(), p.mu1 + p.mu2 >= 2.0 * p.alpha.tan());
            }
        }
        let q = PlanarParams::new(20f64.to_radians(), 0.36, 0.36, 1.0, 0.1);
        assert!(!q.equilibrium_exists());
        let q = PlanarParams::new(20f64.to_radians(), 0.364, 0.364, 1.0, 0.1);
        assert!(q.equilibrium_exists());
        assert!((20f64.to_radians().tan() - 0.36397).abs() < 1e-5);
    }

    #[test]
    fn closed_form_ambiguity_holds_for_shifted_contacts() {
        for k in 0..=8 {
            let offset = -0.4 + 0.1 * f64::from(k);
            for i in 0..=20 {
                for j in 1..=20 {
                    let mut p = p30(2.0 * f64::from(i) / 20.0, 2.0 * f64::from(j) / 20.0);
                    p.offset = offset;
                    if not_applicable(&p).is_some() || !p.equilibrium_exists() {
                        continue;
                    }
                    assert_eq!(p.is_ambiguous(), p.ambiguous_closed_form(), "{p:?}");
                }
            }
        }
    }

    #[test]
    fn acceptance_test5_energy_and_impacts() {
        use rand::{Rng, SeedableRng};
        let p = p30(0.5, 1.0);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        for _ in 0..200 {
            let x: [f64; 6] = std::array::from_fn(|_| rng.gen_range(-1.0..1.0));
            // FF: dV1/dt = u sinα·(−1)·… computed from the state derivative.
            for m in ["FF", "PF", "NF", "FP", "FN"] {
                let d = md(&p, m);
                let dv1 = x[U] * d.accel[0]
                    + x[V] * d.accel[1]
                    + x[W] * d.accel[2]
                    + x[V] * p.alpha.cos()
                    - x[U] * p.alpha.sin();
                if m == "FF" {
                    assert!(dv1.abs() < 1e-12);
                    continue;
                }
                // Restrict to the mode's manifold: γ̇_i = 0 → v = −l_i ω.
                let i = if m.starts_with('F') { 1 } else { 0 };
                let mut y = x;
                y[V] = -p.l(i) * y[W];
                let dv1 = y[U] * d.accel[0]
                    + y[V] * d.accel[1]
                    + y[W] * d.accel[2]
                    + y[V] * p.alpha.cos()
                    - y[U] * p.alpha.sin();
                let lam = d.normal[i];
                let mu = p.mu(i);
                let sd = p.sigma_dot(&y);
                let s = if m.contains('P') { 1.0 } else { -1.0 };
                // −μλ sσ̇ = −μλ|σ̇| on the mode's half space sσ̇ ≥ 0.
                assert!((dv1 + mu * lam * s * sd).abs() < 1e-12);
            }
            for e in [0.0, 0.1, 0.7] {
                let q = PlanarParams { e, ..p };
                for i in 0..2 {
                    if q.gamma_dot(&x, i) >= 0.0 {
                        continue;
                    }
                    let (xp, ln, lt) = q.impact(&x, i).unwrap_or_else(|| panic!("no candidate"));
                    assert!((q.gamma_dot(&xp, i) + e * q.gamma_dot(&x, i)).abs() < 1e-10);
                    assert!(ln >= -1e-12 && lt.abs() <= q.mu(i) * ln + 1e-10);
                    assert!(lt * q.sigma_dot(&xp) <= 1e-10);
                }
            }
        }
    }

    #[test]
    fn not_applicable_reasons() {
        assert!(not_applicable(&p30(0.5, 0.3)).is_some());
        assert!(not_applicable(&p30(0.5, 1.0)).is_none());
        assert!(not_applicable(&p30(-0.5, 1.0)).is_some());
        assert!(not_applicable(&PlanarParams::new(1.7, 0.5, 2.0, 1.0, 0.0)).is_some());
    }
}
