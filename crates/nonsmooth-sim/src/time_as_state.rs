//! The time-as-state differential inclusion of Halm & Posa §4 (eqs. 43–53) as a
//! [`Stepper`]: the state `x̄ = [q; v; t]` is integrated in an impulse-and-time variable s,
//! one step of the stepper advancing s by `h`.
//!
//! - **Impact (D_C, eq. 49):** when an active contact (gap ≤ `margin`) is colliding, q and t
//!   are frozen and v takes one implicit step of the impact inclusion, the eq. (75) LCP with
//!   the per-contact cap `λ_n,max = h` (the normal-impulse rate has ‖λ_n‖₁ ≤ 1 per unit s).
//! - **Flow (D_S and sustained contact, eqs. 44–47):** otherwise a velocity-level
//!   time-stepping step (Anitescu–Potra / Stewart–Trinkle form): `M(v′ − v) = Δt f + J̄ᵀΛ`
//!   with `0 ≤ Λ_n ⊥ J_n v′ ≥ 0` on the active contacts and linearised Coulomb friction, then
//!   `q′ = q + Δt N(q) v′` and `t′ = t + Δt`. The time step follows the time-as-state rate
//!   `ṫ = 1/(1 + ‖λ_n‖₁)`: `Δt = h / (1 + ‖Λ_n‖₁/Δt₀)` from a first solve with `Δt₀ = h`.
//! - **Contact events:** if the flow step would carry an inactive contact below the gap
//!   `−margin`, Δt is shortened by secant steps on that gap so that the contact closes at
//!   gap ≈ 0; the next step then resolves the collision in the impact mode. This keeps
//!   impacts (Zeno sequences included) inside the inclusion instead of merging them into one
//!   inelastic time step.
//!
//! The inclusion advances in s, not in t: one sub-step of s-length [`TimeAsStateDi::s_step`]
//! advances t by at most that much (by 0 during impacts). Like every [`Stepper`], a step of
//! `h` advances physical time by exactly `h`: it takes as many sub-steps as it needs, so an
//! impact sequence, Zeno included, is resolved inside the step that reaches it, and returns
//! the point at `t + h` of the sub-step that crosses it (dense output; the sub-steps are not
//! shortened, so the run is the inclusion's own discretization). [`TimeAsStateDi::impacts`]
//! records each impact (the velocities before and after it).

use nalgebra::DVector;
use nonsmooth_core::dynamics::integrate_configuration;
use nonsmooth_core::{ContactSnapshot, Model, State};
use nonsmooth_impact::lcp::{build_ap_w, clean_round_off};
use nonsmooth_impact::{ImpactError, ImpactLcp, ImpactProblem, COLLIDING_TOL};
use nonsmooth_solvers::lcp::{lemke, Lcp, LemkeOptions};

use crate::error::SimError;
use crate::stepper::Stepper;

/// The stepper's name.
pub const TIME_AS_STATE_DI: &str = "time-as-state-di";

/// Most sub-steps one step may take (an impact sequence that does not end within them is
/// reported as [`SimError::Diverged`]).
pub const MAX_SUBSTEPS: usize = 1_000_000;

/// One impact resolved by the inclusion: a run of impact-mode sub-steps at one instant.
#[derive(Debug, Clone, PartialEq)]
pub struct ImpactRecord {
    /// Time of the impact (s).
    pub t: f64,
    /// Generalized velocity before the impact.
    pub v_before: DVector<f64>,
    /// Generalized velocity after it.
    pub v_after: DVector<f64>,
}

/// The time-as-state DI stepper (name `"time-as-state-di"`).
#[derive(Debug, Clone, PartialEq)]
pub struct TimeAsStateDi {
    /// Contacts with gap ≤ margin (in m) are active.
    pub margin: f64,
    /// Colliding tolerance on `J_n,i v` [m/s].
    pub colliding_tol: f64,
    /// s-length of one sub-step; `None`: the step's `h`.
    pub s_step: Option<f64>,
    /// Number of impact-mode sub-steps taken so far.
    pub impact_steps: usize,
    /// Accumulated s (Σ of the sub-steps' s-lengths).
    pub s: f64,
    /// The impacts resolved so far, in time order.
    pub impacts: Vec<ImpactRecord>,
    /// The state the last step returned and the flow sub-step (start, end) it lies on, when
    /// that sub-step crossed the end of the step.
    crossing: Option<(State, (State, State))>,
}

impl Default for TimeAsStateDi {
    fn default() -> Self {
        Self {
            margin: 1e-6,
            colliding_tol: COLLIDING_TOL,
            s_step: None,
            impact_steps: 0,
            s: 0.0,
            impacts: Vec::new(),
            crossing: None,
        }
    }
}

fn sim_err(e: ImpactError) -> SimError {
    match e {
        ImpactError::Solver(s) => SimError::Solver(s),
        other => SimError::Unsupported {
            stepper: TIME_AS_STATE_DI,
            reason: other.to_string(),
        },
    }
}

impl TimeAsStateDi {
    /// A stepper with margin 1e-6 m, colliding tolerance 1e-8 m/s and sub-steps of the
    /// step's length.
    pub fn new() -> Self {
        Self::default()
    }

    /// The ratio `v⁺ᵢ / v⁻ᵢ` of velocity coordinate `i` across each recorded impact whose
    /// pre-impact `|v⁻ᵢ|` exceeds `min_speed` (e.g. the 0.7 per impact of the paper's Zeno
    /// wobble, §4.3).
    pub fn impact_ratios(&self, i: usize, min_speed: f64) -> Vec<f64> {
        self.impacts
            .iter()
            .filter(|r| r.v_before.get(i).is_some_and(|v| v.abs() > min_speed))
            .map(|r| r.v_after[i] / r.v_before[i])
            .collect()
    }

    /// The same stepper with sub-steps of s-length `s_step`.
    pub fn with_s_step(s_step: f64) -> Self {
        Self {
            s_step: Some(s_step),
            ..Self::default()
        }
    }

    /// Flow step of length `dt`: returns (v′, ‖Λ_n‖₁). The active contacts enter the
    /// Anitescu–Potra time-stepping LCP with the gap term `φ + Δt J_n v′ ≥ 0`.
    fn flow_velocity(
        &self,
        snap: &ContactSnapshot<f64>,
        dt: f64,
    ) -> Result<(DVector<f64>, f64), SimError> {
        let chol = nalgebra::Cholesky::new(snap.mass_matrix.clone()).ok_or_else(|| {
            SimError::Unsupported {
                stepper: TIME_AS_STATE_DI,
                reason: "mass matrix is not positive definite".into(),
            }
        })?;
        let v_free = &snap.v + chol.solve(&snap.forces) * dt;
        let gaps: Vec<f64> = snap
            .contacts
            .iter()
            .map(|c| c.gap)
            .filter(|g| *g <= self.margin)
            .collect();
        if gaps.is_empty() {
            return Ok((v_free, 0.0));
        }
        let p = ImpactProblem::from_snapshot(snap, self.margin)
            .and_then(|p| p.with_velocity(v_free.clone()))
            .map_err(sim_err)?;
        let w = build_ap_w(&p);
        let mut q = DVector::zeros(w.nrows());
        let jv = &p.jbar * &v_free;
        q.rows_mut(0, jv.len()).copy_from(&jv);
        for (i, g) in gaps.iter().enumerate() {
            q[i] += g / dt;
        }
        clean_round_off(&mut q);
        if q.iter().all(|x| *x >= 0.0) {
            return Ok((v_free, 0.0));
        }
        let lcp = Lcp::new(w, q).map_err(SimError::Solver)?;
        let sol = lemke(&lcp, &LemkeOptions::default()).map_err(SimError::Solver)?;
        let m = p.num_contacts();
        let nl = m + m * p.k;
        let lam = sol.z.rows(0, nl).into_owned();
        let v_new = &v_free + &p.minv_jbar_t * &lam;
        Ok((v_new, sol.z.rows(0, m).sum()))
    }

    /// The deepest newly closing contact at (q, v): a contact below the gap `−margin` that
    /// was not active at the start of the step (matched by collider pair and feature), with
    /// its gap and its gap at the start of the step estimated as `φ − Δt J_n v`.
    fn newly_closing(
        &self,
        model: &Model,
        q: &DVector<f64>,
        v: &DVector<f64>,
        t: f64,
        dt: f64,
        start_active: &[(usize, usize, usize)],
    ) -> Result<Option<(f64, f64)>, SimError> {
        let snap = ContactSnapshot::new(model, q, v, t)?;
        let mut worst: Option<(f64, f64)> = None;
        for c in &snap.contacts {
            let key = (c.collider_a, c.collider_b, c.feature);
            if c.gap < -self.margin && !start_active.contains(&key) {
                let g0 = c.gap - dt * c.rows.normal.dot(v);
                if worst.map(|w| c.gap < w.1).unwrap_or(true) {
                    worst = Some((g0, c.gap));
                }
            }
        }
        Ok(worst)
    }
}

impl TimeAsStateDi {
    /// One sub-step of s-length `h` from `state`: an impact (q and t frozen) when an active
    /// contact is colliding, else a flow step. Returns the new state and whether it was an
    /// impact.
    fn substep(&mut self, model: &Model, state: &State, h: f64) -> Result<(State, bool), SimError> {
        self.s += h;
        let snap = ContactSnapshot::from_state(model, state)?;
        if snap.contacts.iter().any(|c| c.gap <= self.margin) {
            let p = ImpactProblem::from_snapshot(&snap, self.margin).map_err(sim_err)?;
            // Velocities the gap term of the flow step produces (|φ|/h ≤ margin/h) are not
            // impacts.
            if p.is_colliding(&state.v, self.colliding_tol.max(self.margin / h)) {
                // D_C: q and t frozen, one capped implicit step of the impact inclusion.
                let lcp = ImpactLcp::new(&p);
                let caps = vec![h; p.num_contacts()];
                let out = lcp.step(&p, &state.v, &caps).map_err(sim_err)?;
                self.impact_steps += 1;
                let next = State {
                    q: state.q.clone(),
                    v: out.v,
                    t: state.t,
                };
                return Ok((next, true));
            }
        }
        // Flow with the time-as-state rate ṫ = 1/(1 + ‖λ_n‖₁).
        let (_, impulse0) = self.flow_velocity(&snap, h)?;
        let mut dt = h / (1.0 + impulse0 / h);
        let start_active: Vec<(usize, usize, usize)> = snap
            .contacts
            .iter()
            .filter(|c| c.gap <= self.margin)
            .map(|c| (c.collider_a, c.collider_b, c.feature))
            .collect();
        let mut tries = 0;
        loop {
            let (v_new, _) = self.flow_velocity(&snap, dt)?;
            let q_new = integrate_configuration(model, &state.q, &v_new, dt);
            match self.newly_closing(model, &q_new, &v_new, state.t + dt, dt, &start_active)? {
                Some((g0, g1)) if tries < 8 && g0 > g1 => {
                    // Secant on the gap of the closing contact: g(0) = g0, g(dt) = g1.
                    let frac = (g0.max(0.0) / (g0 - g1)).clamp(1e-9, 1.0);
                    dt *= frac;
                    tries += 1;
                }
                _ => {
                    if v_new.iter().chain(q_new.iter()).any(|x| !x.is_finite()) {
                        return Err(SimError::Diverged {
                            t: state.t,
                            reason: "non-finite state".into(),
                        });
                    }
                    let next = State {
                        q: q_new,
                        v: v_new,
                        t: state.t + dt,
                    };
                    return Ok((next, false));
                }
            }
        }
    }

    /// The state at time `t` on the flow sub-step `segment` (start, end): the sub-step moves
    /// with its end velocity throughout, `q(t) = q₀ ⊕ (t − t₀) v₁`.
    fn on_segment(model: &Model, (start, end): &(State, State), t: f64) -> State {
        State {
            q: integrate_configuration(model, &start.q, &end.v, t - start.t),
            v: end.v.clone(),
            t,
        }
    }
}

impl Stepper for TimeAsStateDi {
    fn name(&self) -> &'static str {
        TIME_AS_STATE_DI
    }

    /// Sub-steps of s-length [`TimeAsStateDi::s_step`] until physical time reaches
    /// `t + step.h`; the impacts met on the way are resolved at their instant and recorded in
    /// [`TimeAsStateDi::impacts`]. The sub-steps are the inclusion's own: the one that
    /// crosses `t + h` is not shortened; the state returned is the point of its path at
    /// `t + h` (dense output), and the next step, started from that state, continues from the
    /// sub-step's end. A step started from any other state starts afresh.
    fn advance(&mut self, step: &crate::pipeline::Step<'_>) -> Result<State, SimError> {
        let (model, state, input, h) = (step.model, step.state, step.input, step.h);
        if !input.is_none() {
            return Err(SimError::Unsupported {
                stepper: TIME_AS_STATE_DI,
                reason: "actuator inputs are not part of the time-as-state inclusion; use a \
                         time-stepping scheme (e.g. `anitescu-potra`) for actuated models"
                    .into(),
            });
        }
        let ds = match self.s_step {
            Some(ds) if ds > 0.0 && ds.is_finite() => ds,
            Some(ds) => {
                return Err(SimError::InvalidOption {
                    option: "s_step",
                    reason: format!("must be positive and finite, got {ds}"),
                })
            }
            None => h,
        };
        let t_end = state.t + h;
        // Continue the sub-step that crossed the end of the last step when this step starts
        // where that one ended.
        let segment = self
            .crossing
            .take()
            .filter(|(returned, _)| returned == state)
            .map(|(_, segment)| segment);
        let mut s = match segment {
            Some(seg) if seg.1.t > t_end => {
                let out = Self::on_segment(model, &seg, t_end);
                self.crossing = Some((out.clone(), seg));
                return Ok(out);
            }
            Some(seg) => seg.1,
            None => state.clone(),
        };
        let mut impact_start: Option<(f64, DVector<f64>)> = None;
        for _ in 0..MAX_SUBSTEPS {
            if s.t >= t_end && impact_start.is_none() {
                return crate::pipeline::finish(TIME_AS_STATE_DI, step, s.q, s.v);
            }
            let (next, impact) = self.substep(model, &s, ds)?;
            if impact {
                impact_start.get_or_insert_with(|| (s.t, s.v.clone()));
                s = next;
                continue;
            }
            if let Some((t, v_before)) = impact_start.take() {
                self.impacts.push(ImpactRecord {
                    t,
                    v_before,
                    v_after: s.v.clone(),
                });
            }
            if next.t > t_end {
                let seg = (s, next);
                let out = Self::on_segment(model, &seg, t_end);
                self.crossing = Some((out.clone(), seg));
                return Ok(out);
            }
            s = next;
        }
        Err(SimError::Diverged {
            t: s.t,
            reason: format!(
                "the impact inclusion did not reach t = {t_end} within {MAX_SUBSTEPS} sub-steps"
            ),
        })
    }
}
