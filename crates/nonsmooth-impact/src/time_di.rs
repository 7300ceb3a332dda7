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
//! Each `step(model, state, h)` advances t by at most h (by 0 during impacts), so a run of n
//! steps covers s = n·h and `state.t` reports the physical time.

use nalgebra::DVector;
use nonsmooth_core::dynamics::integrate_configuration;
use nonsmooth_core::{ContactSnapshot, Model, State};
use nonsmooth_sim::{SimError, Stepper};

use crate::lcp::{build_ap_w, clean_round_off};
use crate::{ImpactError, ImpactLcp, ImpactProblem, COLLIDING_TOL};
use nonsmooth_solvers::lcp::{lemke, Lcp, LemkeOptions};

/// The time-as-state DI stepper (name `"time-as-state-di"`).
#[derive(Debug, Clone, PartialEq)]
pub struct TimeAsStateDi {
    /// Contacts with gap ≤ margin (in m) are active.
    pub margin: f64,
    /// Colliding tolerance on `J_n,i v` [m/s].
    pub colliding_tol: f64,
    /// Number of impact-mode steps taken so far.
    pub impact_steps: usize,
    /// Accumulated s (Σ h over all steps).
    pub s: f64,
}

impl Default for TimeAsStateDi {
    fn default() -> Self {
        Self {
            margin: 1e-6,
            colliding_tol: COLLIDING_TOL,
            impact_steps: 0,
            s: 0.0,
        }
    }
}

fn sim_err(e: ImpactError) -> SimError {
    match e {
        ImpactError::Solver(s) => SimError::Solver(s),
        other => SimError::Unsupported {
            stepper: "time-as-state-di",
            reason: other.to_string(),
        },
    }
}

impl TimeAsStateDi {
    /// A stepper with margin 1e-6 m and colliding tolerance 1e-8 m/s.
    pub fn new() -> Self {
        Self::default()
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
                stepper: "time-as-state-di",
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
                let g0 = c.gap - dt * c.normal_row.dot(v);
                if worst.map(|w| c.gap < w.1).unwrap_or(true) {
                    worst = Some((g0, c.gap));
                }
            }
        }
        Ok(worst)
    }
}

impl Stepper for TimeAsStateDi {
    fn name(&self) -> &'static str {
        "time-as-state-di"
    }

    /// `step.h` is the step of the time-as-state variable s, not of physical time: the
    /// returned state's `t` advances by at most `h` (and not at all in an impact step), so the
    /// [`nonsmooth_sim::Simulator`] refuses this scheme.
    fn advance(&mut self, step: &nonsmooth_sim::Step<'_>) -> Result<State, SimError> {
        let (model, state, input, h) = (step.model, step.state, step.input, step.h);
        if !input.is_none() {
            return Err(SimError::Unsupported {
                stepper: crate::steppers::TIME_AS_STATE_DI,
                reason: "actuator inputs are not part of the time-as-state inclusion; use a \
                         time-stepping scheme (e.g. `anitescu-potra`) for actuated models"
                    .into(),
            });
        }
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
                return Ok(State {
                    q: state.q.clone(),
                    v: out.v,
                    t: state.t,
                });
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
                    return Ok(State {
                        q: q_new,
                        v: v_new,
                        t: state.t + dt,
                    });
                }
            }
        }
    }
}

/// Result of [`zeno_wobble_run`].
#[derive(Debug, Clone, PartialEq)]
pub struct ZenoRun {
    /// Apex angle of the first half-cycle in rad.
    pub apex_angle: f64,
    /// Angular-velocity ratios across the resolved impacts (|ω| > 0.05 before impact).
    pub ratios: Vec<f64>,
    /// Time at which the block is flat and at rest (|θ| < 1e-4, ‖v‖∞ < 1e-3) in s.
    pub rest_time: Option<f64>,
    /// Accumulated s at rest.
    pub s: f64,
    /// (t, θ, θ̇) samples every `record_every` steps.
    pub trace: Vec<(f64, f64, f64)>,
    /// The initial state, then the states of `trace` (physical time `t`), for the
    /// trajectory viewer.
    pub states: Vec<State>,
    /// Failed steps recovered by smaller steps ([`nonsmooth_sim::step_with_recovery`]).
    pub recoveries: nonsmooth_sim::Recoveries,
}

/// Runs the Zeno wobble (paper §4.3) of the block in `model` (planar, q = [x, y, θ]) with the
/// time-as-state stepper from `state` with DI step `h`, for at most `max_steps` steps.
///
/// # Errors
/// Stepper failures.
pub fn zeno_wobble_run(
    model: &Model,
    state: &State,
    h: f64,
    max_steps: usize,
    record_every: usize,
) -> Result<ZenoRun, SimError> {
    let mut stepper = TimeAsStateDi::new();
    let mut state = state.clone();
    let mut run = ZenoRun {
        apex_angle: 0.0,
        ratios: Vec::new(),
        rest_time: None,
        s: 0.0,
        trace: Vec::new(),
        states: vec![state.clone()],
        recoveries: nonsmooth_sim::Recoveries::default(),
    };
    if state.q.len() < 3 || state.v.len() < 3 {
        return Err(SimError::Unsupported {
            stepper: "time-as-state-di",
            reason: "the Zeno wobble needs a planar body with q = [x, y, θ]".into(),
        });
    }
    let mut w_pre: Option<f64> = None;
    for i in 0..max_steps {
        let before = stepper.impact_steps;
        let prev = state.clone();
        state = nonsmooth_sim::step_with_recovery(
            &mut stepper,
            model,
            &state,
            &nonsmooth_sim::Actuation::none(),
            h,
            &mut run.recoveries,
        )?;
        let impact = stepper.impact_steps > before;
        if run.ratios.is_empty() {
            run.apex_angle = run.apex_angle.max(state.q[2].abs());
        }
        match (impact, w_pre) {
            (true, None) => w_pre = Some(prev.v[2]),
            (false, Some(w0)) => {
                if w0.abs() > 0.05 {
                    run.ratios.push(prev.v[2] / w0);
                }
                w_pre = None;
            }
            _ => {}
        }
        if i % record_every.max(1) == 0 {
            run.trace.push((state.t, state.q[2], state.v[2]));
            run.states.push(state.clone());
        }
        if state.q[2].abs() < 1e-4 && state.v.amax() < 1e-3 {
            run.rest_time = Some(state.t);
            break;
        }
    }
    run.s = stepper.s;
    Ok(run)
}
