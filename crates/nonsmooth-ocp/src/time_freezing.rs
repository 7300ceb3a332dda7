//! Complementarity Lagrangian systems (CLS, Nurkanović et al. eq. 3/20) and their time-freezing
//! piecewise-smooth reformulation (Def. 2 frictionless, Def. 6 planar friction) written as
//! a step-function dynamic complementarity system (eq. 31).
//!
//! State y = (q, v, t) with the physical clock t; numerical time τ is the integration
//! variable. Switching functions c = (f_c(q), n(q)ᵀv[, b(q)ᵀv]); region vector fields
//! f₁ = (v, f_v, 1), f₂ = (0, M⁻¹(n a_n − b a_t), 0), f₃ = (0, M⁻¹(n a_n + b a_t), 0) with
//! a_t = μ a_n; Filippov weights θ(α) from the step representation with α ∈ [0, 1]^{n_c}:
//! θ₁ = α₁ + (1−α₁)α₂, θ₂ = (1−α₁)(1−α₂)α₃, θ₃ = (1−α₁)(1−α₂)(1−α₃) (eq. 32 corrected, see
//! docs/decisions/002-time-freezing.md; frictionless: θ₂ = (1−α₁)(1−α₂)).
//!
//! Several contacts (nosnoc's inelastic multi-contact time-freezing): the switching functions
//! are grouped, c = (f_c,1 … f_c,k, n₁ᵀv … n_kᵀv[, b₁ᵀv … b_kᵀv]); the free flight keeps
//! θ₀ = Π_i β_i with β_i = α_q,i + (1 − α_q,i) α_v,i, and every contact adds its own
//! auxiliary field weighted by (1 − α_q,i)(1 − α_v,i) (split by α_t,i into the two
//! frictional fields), y' = θ₀ f₁ + Σ_i θ_i f_aux,i: the auxiliary accelerations of
//! simultaneously active contacts add, and the clock stops while any contact is active. With
//! one contact this is the single-contact PSS above.

use crate::model_system::ModelSystem;
use crate::nlp::Real;

/// Elastic auxiliary dynamics (the time-freezing predecessor, Nurkanović et al. 2021, cited
/// as ref. 29 in the time-freezing paper; docs/decisions/002-time-freezing.md, errata and
/// conventions): inside the obstacle the normal coordinate ξ = f_c(q) follows the damped oscillator
/// ξ'' = −k ξ − c ξ' with the clock frozen, so a trajectory that enters with normal velocity ξ' =
/// −w leaves after half a period τ_j with ξ' = e w.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ElasticAux {
    /// Stiffness k = (π² + ln² e)/τ_j².
    pub k: f64,
    /// Damping c = −2 ln(e)/τ_j.
    pub c: f64,
}

impl ElasticAux {
    /// Stiffness and damping for the coefficient of restitution `e` ∈ (0, 1] and the
    /// (numerical-time) duration `tau_jump` of the impact.
    pub fn from_restitution(e: f64, tau_jump: f64) -> Result<Self, crate::OcpError> {
        if !(e > 0.0 && e <= 1.0 && tau_jump.is_finite() && tau_jump > 0.0) {
            return Err(crate::OcpError::InvalidInput(format!(
                "restitution {e} must be in (0, 1] and the impact duration {tau_jump} > 0"
            )));
        }
        let l = e.ln();
        Ok(Self {
            k: (std::f64::consts::PI.powi(2) + l * l) / (tau_jump * tau_jump),
            c: -2.0 * l / tau_jump,
        })
    }
}

/// The time-freezing PSS of a CLS with inelastic auxiliary dynamics (constant a_n) or, with
/// [`TimeFreezing::elastic`], elastic auxiliary dynamics with a coefficient of restitution.
#[derive(Debug, Clone)]
pub struct TimeFreezing {
    /// The system.
    pub cls: ModelSystem,
    /// Auxiliary normal acceleration a_n > 0 (inelastic auxiliary dynamics).
    pub a_n: f64,
    /// Elastic auxiliary dynamics instead of the inelastic ones: one switching function
    /// c = f_c(q), regions {c > 0} (f₁) and {c < 0} (the damped oscillator, clock frozen).
    pub elastic: Option<ElasticAux>,
    /// Positive scale factors of the switching functions (c_i ← s_i c_i; missing entries
    /// are 1). The regions, and so the PSS, do not change; only the magnitudes of the
    /// multipliers λᵖ, λⁿ = max(±c, 0) that enter the complementarity products do. A gap
    /// f_c of a few centimetres against velocities of metres per second otherwise leaves
    /// the gap's products far below the relaxation σ in the early homotopy NLPs.
    pub switch_scale: Vec<f64>,
    /// Baumgarte-stabilized normal switching function c₂ = nᵀv + k (f_c + δ) instead of
    /// c₂ = nᵀv (`None`, the paper's). See [`StanceStabilization`].
    pub stance: Option<StanceStabilization>,
}

/// Stabilization of the contact (stance) sliding mode of the inelastic time-freezing PSS.
///
/// In the sliding mode on c₂ = nᵀv = 0 (standing, Thm 4 of the time-freezing paper) the gap f_c is
/// kept at 0 only at velocity level. A FESD discretization enforces nᵀv = 0 at the stage points,
/// so f_c drifts by the discretization error, up or down depending on the motion. An exact
/// (complementarity-satisfying) stance needs α₁ = 0 and so f_c ≤ 0 at every stance stage
/// point; an upward drift of 10⁻⁵–10⁻⁴ m (measured on the hopper at n_s = 2) leaves no
/// exact discrete stance and the homotopy's polish infeasible. With
/// c₂ = nᵀv + k (f_c + δ) the sliding mode keeps nᵀv = −k (f_c + δ), which pulls the foot
/// to the slight penetration f_c = −δ with rate k and absorbs the drift. The impact still
/// starts at f_c = 0 and the frozen jump ends at nᵀv = −k δ (a residual sinking speed of
/// k δ that decays while standing); away from the ground (f_c > 0, α₁ = 1) c₂ plays no
/// role. This changes the model by the penetration δ: a decision of this crate, off by
/// default.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StanceStabilization {
    /// Rate k > 0 (1/s).
    pub rate: f64,
    /// Target penetration δ ≥ 0 (m).
    pub depth: f64,
}

impl TimeFreezing {
    /// Builds the reformulation; a_n must be positive and finite.
    pub fn new(cls: ModelSystem, a_n: f64) -> Result<Self, crate::OcpError> {
        if !(a_n.is_finite() && a_n > 0.0) {
            return Err(crate::OcpError::InvalidInput(format!(
                "a_n = {a_n} must be > 0"
            )));
        }
        Ok(Self {
            cls,
            a_n,
            elastic: None,
            switch_scale: vec![],
            stance: None,
        })
    }
    /// Builds the elastic reformulation with coefficient of restitution `e` and impact
    /// duration `tau_jump` (frictionless systems only).
    pub fn elastic(cls: ModelSystem, e: f64, tau_jump: f64) -> Result<Self, crate::OcpError> {
        if cls.n_contacts() > 1 {
            return Err(crate::OcpError::InvalidInput(format!(
                "the elastic auxiliary dynamics take one contact, the system has {}",
                cls.n_contacts()
            )));
        }
        if cls.friction().is_some() {
            return Err(crate::OcpError::InvalidInput(
                "the elastic auxiliary dynamics are frictionless".into(),
            ));
        }
        Ok(Self {
            cls,
            a_n: 1.0,
            elastic: Some(ElasticAux::from_restitution(e, tau_jump)?),
            switch_scale: vec![],
            stance: None,
        })
    }
    /// Dimension of y = (q, v, t).
    pub fn ny(&self) -> usize {
        2 * self.cls.nq() + 1
    }
    /// Number of switching functions n_c: 2 per contact, 3 with friction (1 for the elastic
    /// auxiliary dynamics).
    pub fn nc(&self) -> usize {
        if self.elastic.is_some() {
            1
        } else if self.cls.friction().is_some() {
            3 * self.cls.n_contacts()
        } else {
            2 * self.cls.n_contacts()
        }
    }
    /// Number of vector fields: the free flight and 1 (2 with friction) auxiliary field per
    /// contact.
    pub fn nf(&self) -> usize {
        if self.elastic.is_some() {
            2
        } else if self.cls.friction().is_some() {
            1 + 2 * self.cls.n_contacts()
        } else {
            1 + self.cls.n_contacts()
        }
    }
    /// Switching functions c(y), grouped by kind over the contacts (module docs).
    pub fn switching<T: Real>(&self, y: &[T]) -> Vec<T> {
        let nq = self.cls.nq();
        let (q, v) = (&y[..nq], &y[nq..2 * nq]);
        let dot = |a: &[T], b: &[T]| a.iter().zip(b).fold(T::from(0.0), |s, (a, b)| s + *a * *b);
        let mut c = if self.elastic.is_some() {
            vec![self.cls.f_c(q)]
        } else {
            let (gaps, normals, tangents) = self.cls.contact_frames(q);
            let mut c = gaps.clone();
            for (n, gap) in normals.iter().zip(&gaps) {
                let mut normal = dot(n, v);
                if let Some(st) = self.stance {
                    normal += (*gap + T::from(st.depth)) * T::from(st.rate);
                }
                c.push(normal);
            }
            c.extend(tangents.iter().map(|b| dot(b, v)));
            c
        };
        for (c, k) in c.iter_mut().zip(&self.switch_scale) {
            *c *= *k;
        }
        c
    }
    /// Sets [`TimeFreezing::switch_scale`]; every factor must be positive and finite.
    pub fn with_switch_scale(mut self, scale: Vec<f64>) -> Result<Self, crate::OcpError> {
        if scale.iter().any(|k| !(k.is_finite() && *k > 0.0)) {
            return Err(crate::OcpError::InvalidInput(format!(
                "switching-function scales {scale:?} must be positive"
            )));
        }
        self.switch_scale = scale;
        Ok(self)
    }
    /// Sets [`TimeFreezing::stance`]; rate and depth must be finite, rate > 0, depth ≥ 0,
    /// and the auxiliary dynamics inelastic.
    pub fn with_stance_stabilization(
        mut self,
        rate: f64,
        depth: f64,
    ) -> Result<Self, crate::OcpError> {
        if self.elastic.is_some() {
            return Err(crate::OcpError::InvalidInput(
                "stance stabilization needs the inelastic auxiliary dynamics".into(),
            ));
        }
        if !(rate.is_finite() && rate > 0.0 && depth.is_finite() && depth >= 0.0) {
            return Err(crate::OcpError::InvalidInput(format!(
                "stance stabilization rate {rate} must be > 0 and depth {depth} >= 0"
            )));
        }
        self.stance = Some(StanceStabilization { rate, depth });
        Ok(self)
    }
    /// Filippov weights θ(α) of the step representation: θ₀ of the free flight, then per
    /// contact its auxiliary field's weight (frictionless) or its two frictional fields'
    /// (module docs).
    pub fn theta<T: Real>(&self, a: &[T]) -> Vec<T> {
        let one = T::from(1.0);
        if self.elastic.is_some() {
            return vec![a[0], one - a[0]];
        }
        let k = self.cls.n_contacts();
        let friction = self.cls.friction().is_some();
        let mut th = vec![one];
        for i in 0..k {
            let (aq, av) = (a[i], a[k + i]);
            th[0] *= aq + (one - aq) * av;
            let rest = (one - aq) * (one - av);
            if friction {
                let at = a[2 * k + i];
                th.push(rest * at);
                th.push(rest * (one - at));
            } else {
                th.push(rest);
            }
        }
        th
    }
    /// Number of Stewart regions 2^{n_c}: one per sign vector S ∈ {±1}^{n_c} of the
    /// switching functions (Stewart's reformulation of the DCS, time-freezing paper §4 / FESD
    /// paper).
    pub fn n_stewart(&self) -> usize {
        1 << self.nc()
    }
    /// Whether Stewart's reformulation applies: one contact (its field map is the
    /// single-contact PSS; several contacts would need 2^{n_c} regions of mixed fields).
    pub fn stewart_applies(&self) -> bool {
        self.elastic.is_some() || self.cls.n_contacts() == 1
    }
    /// Vector field of Stewart region `r` (bit k of r set ⇔ S_k = +1, i.e. c_k > 0): f₁
    /// where c₁ > 0 or c₂ > 0 (the union region of the time-freezing PSS), otherwise f₂
    /// (frictionless) or f₂/f₃ by the sign of c₃ (friction); elastic: f₁ iff c₁ > 0.
    pub fn stewart_field(&self, r: usize) -> usize {
        if self.elastic.is_some() {
            return usize::from(r & 1 == 0);
        }
        if r & 0b11 != 0 {
            0
        } else if self.cls.friction().is_none() || r & 0b100 != 0 {
            1
        } else {
            2
        }
    }
    /// Stewart's indicator functions g_r(y) = −S_rᵀ c(y): the smallest one belongs to the
    /// region that contains y.
    pub fn stewart_g<T: Real>(&self, y: &[T]) -> Vec<T> {
        let c = self.switching(y);
        (0..self.n_stewart())
            .map(|r| {
                c.iter().enumerate().fold(T::from(0.0), |s, (k, ck)| {
                    if r >> k & 1 == 1 {
                        s - *ck
                    } else {
                        s + *ck
                    }
                })
            })
            .collect()
    }
    /// Field weights (θ₁, θ₂[, θ₃]) from Stewart's region multipliers θ_r (sum per field).
    pub fn stewart_fields<T: Real>(&self, th: &[T]) -> Vec<T> {
        let mut w = vec![T::from(0.0); self.nf()];
        for (r, t) in th.iter().enumerate() {
            let f = self.stewart_field(r);
            w[f] += *t;
        }
        w
    }
    /// y' = Σ θ_r f_{field(r)} with Stewart's multipliers θ (length [`Self::n_stewart`]).
    pub fn rhs_stewart<T: Real>(&self, y: &[T], th: &[T], u: &[T]) -> Vec<T> {
        self.rhs_weights(y, self.stewart_fields(th), u)
    }
    /// The convex combination y' = Σ θᵢ(α) fᵢ(y, u) (without the speed of time).
    pub fn rhs<T: Real>(&self, y: &[T], alpha: &[T], u: &[T]) -> Vec<T> {
        self.rhs_weights(y, self.theta(alpha), u)
    }
    /// y' = Σ θᵢ fᵢ(y, u) for given field weights θ.
    pub fn rhs_weights<T: Real>(&self, y: &[T], th: Vec<T>, u: &[T]) -> Vec<T> {
        let nq = self.cls.nq();
        let (q, v, t) = (&y[..nq], &y[nq..2 * nq], y[2 * nq]);
        let an = T::from(self.a_n);
        let mut out = vec![T::from(0.0); self.ny()];
        if let Some(el) = self.elastic {
            // f₁ = (v, f_v, 1); f₂ = (v, M⁻¹ n (−k ξ − c ξ')/D, 0) with ξ = f_c, ξ' = nᵀv,
            // D = nᵀM⁻¹n (the normal coordinate follows the damped oscillator)
            let (xi, n, _) = self.cls.contact_frame(q);
            let xid = n.iter().zip(v).fold(T::from(0.0), |s, (n, v)| s + *n * *v);
            let (fv, a) = self.cls.accelerations(q, v, t, u, std::slice::from_ref(&n));
            let d = n
                .iter()
                .zip(&a[0])
                .fold(T::from(0.0), |s, (n, a)| s + *n * *a);
            let lam = (xi * (-el.k) - xid * el.c) / d;
            for i in 0..nq {
                out[i] = v[i];
                out[nq + i] = th[0] * fv[i] + th[1] * a[0][i] * lam;
            }
            out[2 * nq] = th[0];
            return out;
        }
        for i in 0..nq {
            out[i] = th[0] * v[i];
        }
        // the auxiliary forces, in the order of θ: n_i a_n (frictionless) or
        // n_i a_n ∓ b_i μ_i a_n per contact
        let (_, normals, tangents) = self.cls.contact_frames(q);
        let mus = self.cls.frictions();
        let mut pushes: Vec<Vec<T>> = Vec::with_capacity(th.len() - 1);
        for (i, n) in normals.iter().enumerate() {
            if tangents.is_empty() {
                pushes.push(n.iter().map(|n| *n * an).collect());
            } else {
                let at = an * mus[i];
                let b = &tangents[i];
                pushes.push(n.iter().zip(b).map(|(n, b)| *n * an - *b * at).collect());
                pushes.push(n.iter().zip(b).map(|(n, b)| *n * an + *b * at).collect());
            }
        }
        let (fv, a) = self.cls.accelerations(q, v, t, u, &pushes);
        for i in 0..nq {
            out[nq + i] = a
                .iter()
                .zip(&th[1..])
                .fold(th[0] * fv[i], |s, (a, w)| s + *w * a[i]);
        }
        out[2 * nq] = th[0];
        out
    }
}

/// The stage points `ys` (each (q, v, t)) as states in physical time for a model with `nq`
/// coordinates and `nv` velocities: a frozen impact phase (the clock not advancing)
/// collapses to its end.
pub fn physical_time_states(nq: usize, nv: usize, ys: &[Vec<f64>]) -> Vec<nonsmooth_core::State> {
    let mut states: Vec<nonsmooth_core::State> = Vec::new();
    for y in ys.iter().filter(|y| y.len() > nq + nv) {
        let t = y[nq + nv];
        if states.last().is_some_and(|s| t <= s.t + 1e-12) {
            continue;
        }
        states.push(nonsmooth_core::State {
            q: nalgebra::DVector::from_column_slice(&y[..nq]),
            v: nalgebra::DVector::from_column_slice(&y[nq..nq + nv]),
            t,
        });
    }
    states
}
