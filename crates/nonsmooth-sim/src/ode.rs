//! Integrators of the penalty-contact ODE `ẏ = F(y)`, `y = (q, v)`,
//! `F = (N(q) v, M⁻¹(f + Σ Gᵀλ(q, v)))` with the compliant force laws of
//! [`PenaltyStepper::constraint_force`]: the baselines of Table 1 of
//! Drumwright, *An Unconditionally Stable First-Order Constraint Solver for Multibody Systems*
//! (2019).
//!
//! - [`Rk45Stepper`] (`rk45`): adaptive Dormand–Prince 5(4) with FSAL and the standard
//!   step-size controller (Hairer, Nørsett & Wanner, *Solving ODEs I*, §II.4–5), the analogue
//!   of MATLAB's `ode45`;
//! - [`BdfStepper`] (`bdf`): variable-step BDF of order 1 (backward Euler) with simplified
//!   Newton iterations, a finite-difference Jacobian that is reused across steps until Newton
//!   converges slowly, and local-error control from the predictor–corrector difference
//!   (Hairer & Wanner, *Solving ODEs II*, §IV.8 and §V.5), the analogue of `ode15s` with
//!   `MaxOrder = 1`;
//! - [`ImplicitEulerStepper`] (`penalty-implicit`): one backward-Euler step of the given h
//!   per call, solved by full Newton with a finite-difference Jacobian.
//!
//! Each `step(h)` integrates exactly over [t, t + h] (adaptive methods take as many internal
//! steps as they need). Floating-joint quaternions are re-normalized after each internal
//! step.

use crate::error::SimError;
use crate::penalty::{PenaltyIntegrator, PenaltyStepper};
use crate::stepper::Stepper;
use nalgebra::{DMatrix, DVector};
use nonsmooth_core::snapshot::ContactSnapshot;
use nonsmooth_core::{Model, State};

/// The penalty ODE of a model.
fn rhs(
    model: &Model,
    law: &PenaltyStepper,
    y: &DVector<f64>,
    t: f64,
) -> Result<DVector<f64>, SimError> {
    let nq = model.nq();
    let nv = model.nv();
    let q = y.rows(0, nq).into_owned();
    let v = y.rows(nq, nv).into_owned();
    if !y.iter().all(|x| x.is_finite()) {
        return Err(SimError::Diverged {
            t,
            reason: "non-finite state inside the integrator".into(),
        });
    }
    let snap = ContactSnapshot::new(model, &q, &v, t)?;
    let mut force = &snap.forces + law.constraint_force(model, &snap)?;
    if let Some(load) = &law.load {
        force += load.generalized(model, &q, t)?;
    }
    if !law.input.is_none() {
        force += law.input.generalized_force(&q, &v);
    }
    let a = crate::free_motion::factor_mass(&snap.mass_matrix, t)?.solve(&force);
    let qdot = &snap.velocity_map * &v;
    let mut out = DVector::zeros(nq + nv);
    out.rows_mut(0, nq).copy_from(&qdot);
    out.rows_mut(nq, nv).copy_from(&a);
    Ok(out)
}

fn normalize(model: &Model, y: &mut DVector<f64>) {
    for j in &model.joints {
        if let Some(offset) = j.kind.quaternion_offset() {
            let mut quat = y.fixed_rows_mut::<4>(j.q_index + offset);
            let n = quat.norm();
            if n > 1e-300 {
                quat /= n;
            }
        }
    }
}

fn pack(s: &State) -> DVector<f64> {
    let mut y = DVector::zeros(s.q.len() + s.v.len());
    y.rows_mut(0, s.q.len()).copy_from(&s.q);
    y.rows_mut(s.q.len(), s.v.len()).copy_from(&s.v);
    y
}

/// The finish stage ([`crate::pipeline::finish`]) of `stepper` from the state vector `y` at
/// the end of the step.
fn finish(
    stepper: &str,
    step: &crate::pipeline::Step<'_>,
    y: &DVector<f64>,
) -> Result<State, SimError> {
    let (nq, nv) = (step.model.nq(), step.model.nv());
    crate::pipeline::finish(
        stepper,
        step,
        y.rows(0, nq).into_owned(),
        y.rows(nq, nv).into_owned(),
    )
}

/// Weighted RMS norm of `e` with tolerances `atol + rtol·max(|a|, |b|)`.
fn err_norm(e: &DVector<f64>, a: &DVector<f64>, b: &DVector<f64>, atol: f64, rtol: f64) -> f64 {
    let n = e.len().max(1) as f64;
    let s: f64 = (0..e.len())
        .map(|i| {
            let sc = atol + rtol * a[i].abs().max(b[i].abs());
            (e[i] / sc).powi(2)
        })
        .sum();
    (s / n).sqrt()
}

/// Forward-difference Jacobian of the penalty ODE.
fn jacobian(
    model: &Model,
    law: &PenaltyStepper,
    y: &DVector<f64>,
    f0: &DVector<f64>,
    t: f64,
) -> Result<DMatrix<f64>, SimError> {
    let n = y.len();
    let mut j = DMatrix::zeros(n, n);
    for k in 0..n {
        let dk = 1e-7 * (1.0 + y[k].abs());
        let mut yp = y.clone();
        yp[k] += dk;
        let fp = rhs(model, law, &yp, t)?;
        j.set_column(k, &((fp - f0) / dk));
    }
    Ok(j)
}

/// Adaptive Dormand–Prince 5(4) (`ode45` analogue).
#[derive(Debug, Clone)]
pub struct Rk45Stepper {
    /// Relative tolerance.
    pub rtol: f64,
    /// Absolute tolerance.
    pub atol: f64,
    /// Internal steps taken so far.
    pub internal_steps: usize,
    /// Right-hand-side evaluations so far.
    pub evaluations: usize,
    law: PenaltyStepper,
    h_next: Option<f64>,
}

impl Default for Rk45Stepper {
    fn default() -> Self {
        Rk45Stepper {
            rtol: 1e-6,
            atol: 1e-9,
            internal_steps: 0,
            evaluations: 0,
            law: PenaltyStepper::new(PenaltyIntegrator::SymplecticEuler),
            h_next: None,
        }
    }
}

impl Rk45Stepper {
    /// Adds a time-dependent external load to the right-hand side.
    pub fn with_load(mut self, load: crate::external_load::PointLoad) -> Self {
        self.law.load = Some(load);
        self
    }
}

impl BdfStepper {
    /// Adds a time-dependent external load to the right-hand side.
    pub fn with_load(mut self, load: crate::external_load::PointLoad) -> Self {
        self.law.load = Some(load);
        self
    }
}

// Dormand–Prince coefficients (Hairer–Nørsett–Wanner, Table II.5.2).
const C: [f64; 7] = [0.0, 0.2, 0.3, 0.8, 8.0 / 9.0, 1.0, 1.0];
const A: [[f64; 6]; 7] = [
    [0.0; 6],
    [0.2, 0.0, 0.0, 0.0, 0.0, 0.0],
    [3.0 / 40.0, 9.0 / 40.0, 0.0, 0.0, 0.0, 0.0],
    [44.0 / 45.0, -56.0 / 15.0, 32.0 / 9.0, 0.0, 0.0, 0.0],
    [
        19372.0 / 6561.0,
        -25360.0 / 2187.0,
        64448.0 / 6561.0,
        -212.0 / 729.0,
        0.0,
        0.0,
    ],
    [
        9017.0 / 3168.0,
        -355.0 / 33.0,
        46732.0 / 5247.0,
        49.0 / 176.0,
        -5103.0 / 18656.0,
        0.0,
    ],
    [
        35.0 / 384.0,
        0.0,
        500.0 / 1113.0,
        125.0 / 192.0,
        -2187.0 / 6784.0,
        11.0 / 84.0,
    ],
];
const E: [f64; 7] = [
    71.0 / 57600.0,
    0.0,
    -71.0 / 16695.0,
    71.0 / 1920.0,
    -17253.0 / 339200.0,
    22.0 / 525.0,
    -1.0 / 40.0,
];

impl Stepper for Rk45Stepper {
    fn name(&self) -> &'static str {
        "rk45"
    }

    fn advance(&mut self, step: &crate::pipeline::Step<'_>) -> Result<State, SimError> {
        let (model, state, input, h) = (step.model, step.state, step.input, step.h);
        self.law.input = input.clone();
        let mut y = pack(state);
        let mut t = state.t;
        let t_end = state.t + h;
        let mut dt = self.h_next.unwrap_or(h).min(h);
        let mut k0 = rhs(model, &self.law, &y, t)?;
        self.evaluations += 1;
        let mut rejections = 0usize;
        while t < t_end - 1e-14 * t_end.abs().max(1.0) {
            dt = dt.min(t_end - t);
            let mut k: Vec<DVector<f64>> = vec![k0.clone()];
            let mut stage_failed = false;
            for s in 1..7 {
                let mut ys = y.clone();
                for (j, kj) in k.iter().enumerate() {
                    if A[s][j] != 0.0 {
                        ys.axpy(dt * A[s][j], kj, 1.0);
                    }
                }
                self.evaluations += 1;
                match rhs(model, &self.law, &ys, t + C[s] * dt) {
                    Ok(ks) => k.push(ks),
                    // A trial step far too large for a stiff contact throws a stage state off
                    // the state manifold (non-finite values, a degenerate quaternion): that is a
                    // rejected step, not a diverged simulation.
                    Err(SimError::Diverged { .. }) | Err(SimError::Model(_)) => {
                        stage_failed = true;
                        break;
                    }
                    Err(e) => return Err(e),
                }
            }
            if stage_failed {
                rejections += 1;
                if rejections > 60 || dt < 1e-14 * h {
                    return Err(SimError::Diverged {
                        t,
                        reason: format!(
                            "rk45: step size underflow after failed stages (dt = {dt:e})"
                        ),
                    });
                }
                dt *= 0.2;
                continue;
            }
            let mut y_new = y.clone();
            let mut err = DVector::zeros(y.len());
            for (s, ks) in k.iter().enumerate() {
                if s < 6 && A[6][s] != 0.0 {
                    y_new.axpy(dt * A[6][s], ks, 1.0);
                }
                if E[s] != 0.0 {
                    err.axpy(dt * E[s], ks, 1.0);
                }
            }
            let en = err_norm(&err, &y, &y_new, self.atol, self.rtol);
            if en <= 1.0 {
                t += dt;
                y = y_new;
                normalize(model, &mut y);
                k0 = k.swap_remove(6);
                self.internal_steps += 1;
                rejections = 0;
            } else {
                rejections += 1;
                if rejections > 60 || dt < 1e-14 * h {
                    return Err(SimError::Diverged {
                        t,
                        reason: format!("rk45: step size underflow (dt = {dt:e})"),
                    });
                }
            }
            let factor = if !en.is_finite() {
                0.2
            } else if en == 0.0 {
                5.0
            } else {
                0.9 * en.powf(-0.2)
            };
            dt *= factor.clamp(0.2, 5.0);
        }
        self.h_next = Some(dt);
        finish("rk45", step, &y)
    }
}

/// Variable-step BDF of order 1 with Jacobian reuse (`ode15s`, `MaxOrder = 1`, analogue).
#[derive(Debug, Clone)]
pub struct BdfStepper {
    /// Relative tolerance.
    pub rtol: f64,
    /// Absolute tolerance.
    pub atol: f64,
    /// Maximum BDF order; only order 1 is implemented (a larger value is an error).
    pub max_order: usize,
    /// Internal steps taken so far.
    pub internal_steps: usize,
    /// Jacobian evaluations so far.
    pub jacobians: usize,
    law: PenaltyStepper,
    h_next: Option<f64>,
    jac: Option<DMatrix<f64>>,
}

impl Default for BdfStepper {
    fn default() -> Self {
        BdfStepper {
            rtol: 1e-6,
            atol: 1e-9,
            max_order: 1,
            internal_steps: 0,
            jacobians: 0,
            law: PenaltyStepper::new(PenaltyIntegrator::SymplecticEuler),
            h_next: None,
            jac: None,
        }
    }
}

/// (y₁, F(y₁), Newton iterations).
type NewtonResult = (DVector<f64>, DVector<f64>, usize);

impl BdfStepper {
    /// Newton solve of `y₁ = y₀ + dt F(y₁)` from the predictor `y₁ = y₀ + dt F(y₀)`, with
    /// the iteration matrix `I − dt J` of the stored Jacobian `J`. Returns (y₁, F(y₁),
    /// iterations) or `None` if it diverges.
    fn newton(
        &self,
        model: &Model,
        y0: &DVector<f64>,
        pred: &DVector<f64>,
        dt: f64,
        t1: f64,
        max_iter: usize,
    ) -> Result<Option<NewtonResult>, SimError> {
        let law = &self.law;
        let empty = DMatrix::zeros(0, 0);
        let jac = self.jac.as_ref().unwrap_or(&empty);
        let n = y0.len();
        let iter = DMatrix::identity(n, n) - jac * dt;
        let Some(inv) = iter.try_inverse() else {
            return Ok(None);
        };
        let mut y = pred.clone();
        let mut prev = f64::INFINITY;
        for it in 1..=max_iter {
            let f = match rhs(model, law, &y, t1) {
                Ok(f) => f,
                Err(SimError::Diverged { .. }) | Err(SimError::Model(_)) => return Ok(None),
                Err(e) => return Err(e),
            };
            let res = &y - y0 - &f * dt;
            let delta = -(&inv * &res);
            y += &delta;
            let size = err_norm(&delta, &y, y0, 1e-12, 1e-10);
            if size < 1.0 {
                let f1 = rhs(model, law, &y, t1)?;
                return Ok(Some((y, f1, it)));
            }
            if size > 2.0 * prev {
                return Ok(None);
            }
            prev = size;
        }
        Ok(None)
    }
}

impl Stepper for BdfStepper {
    fn name(&self) -> &'static str {
        "bdf"
    }

    fn advance(&mut self, step: &crate::pipeline::Step<'_>) -> Result<State, SimError> {
        let (model, state, input, h) = (step.model, step.state, step.input, step.h);
        self.law.input = input.clone();
        if self.max_order != 1 {
            return Err(SimError::InvalidOption {
                option: "max_order",
                reason: format!("only BDF order 1 is implemented, got {}", self.max_order),
            });
        }
        let mut y = pack(state);
        let mut t = state.t;
        let t_end = state.t + h;
        let mut dt = self.h_next.unwrap_or(h).min(h);
        let mut f0 = rhs(model, &self.law, &y, t)?;
        let mut failures = 0usize;
        while t < t_end - 1e-14 * t_end.abs().max(1.0) {
            dt = dt.min(t_end - t);
            if self.jac.as_ref().is_none_or(|j| j.nrows() != y.len()) {
                self.jac = Some(jacobian(model, &self.law, &y, &f0, t)?);
                self.jacobians += 1;
            }
            let pred = &y + &f0 * dt;
            let solved = self.newton(model, &y, &pred, dt, t + dt, 4)?;
            let Some((y1, f1, iters)) = solved else {
                // Slow or failed Newton: refresh the Jacobian, then shrink the step.
                failures += 1;
                self.jac = Some(jacobian(model, &self.law, &y, &f0, t)?);
                self.jacobians += 1;
                if failures.is_multiple_of(2) {
                    dt *= 0.25;
                }
                if failures > 60 {
                    return Err(SimError::Diverged {
                        t,
                        reason: "bdf: Newton iterations do not converge".into(),
                    });
                }
                continue;
            };
            // Local error of backward Euler ≈ ½ (y₁ − predictor).
            let err = (&y1 - &pred) * 0.5;
            let en = err_norm(&err, &y, &y1, self.atol, self.rtol);
            if en <= 1.0 {
                t += dt;
                y = y1;
                normalize(model, &mut y);
                f0 = f1;
                self.internal_steps += 1;
                failures = 0;
                if iters > 2 {
                    self.jac = None;
                }
            } else {
                failures += 1;
                if failures > 60 {
                    return Err(SimError::Diverged {
                        t,
                        reason: "bdf: step size underflow".into(),
                    });
                }
            }
            let factor = if en == 0.0 { 4.0 } else { 0.9 / en.sqrt() };
            dt *= factor.clamp(0.2, 4.0);
        }
        self.h_next = Some(dt);
        finish("bdf", step, &y)
    }
}

/// Backward Euler on the penalty ODE with full Newton (`penalty-implicit`).
///
/// Where Newton does not converge within [`max_newton`](Self::max_newton) iterations (the
/// regularized Coulomb law is very steep around zero slip, e.g. a spinning sphere resting on
/// the ground), the step fails with [`SimError::Diverged`], and the time loop's one recovery
/// ([`crate::recovery`], in every [`crate::simulator::Simulator`]) retries it as
/// backward-Euler half steps.
#[derive(Debug, Clone)]
pub struct ImplicitEulerStepper {
    /// Newton iteration limit per step.
    pub max_newton: usize,
    law: PenaltyStepper,
}

impl Default for ImplicitEulerStepper {
    fn default() -> Self {
        ImplicitEulerStepper {
            max_newton: 20,
            law: PenaltyStepper::new(PenaltyIntegrator::SymplecticEuler),
        }
    }
}

impl Stepper for ImplicitEulerStepper {
    fn name(&self) -> &'static str {
        "penalty-implicit"
    }

    fn advance(&mut self, step: &crate::pipeline::Step<'_>) -> Result<State, SimError> {
        let (model, state, input, h) = (step.model, step.state, step.input, step.h);
        self.law.input = input.clone();
        let next = self.newton_step(model, state, h)?;
        crate::pipeline::finish(self.name(), step, next.q, next.v)
    }
}

impl ImplicitEulerStepper {
    /// One backward-Euler step of size `h` by full Newton from the explicit predictor.
    fn newton_step(&self, model: &Model, state: &State, h: f64) -> Result<State, SimError> {
        let y0 = pack(state);
        let t1 = state.t + h;
        let f0 = rhs(model, &self.law, &y0, state.t)?;
        let residual = |y: &DVector<f64>| -> Result<(DVector<f64>, DVector<f64>), SimError> {
            let f = rhs(model, &self.law, y, t1)?;
            Ok((y - &y0 - &f * h, f))
        };
        let mut y = &y0 + &f0 * h;
        let (mut res, mut f) = residual(&y)?;
        for _ in 0..self.max_newton {
            let j = jacobian(model, &self.law, &y, &f, t1)?;
            let n = y.len();
            let delta = (DMatrix::identity(n, n) - j * h)
                .lu()
                .solve(&(-&res))
                .ok_or_else(|| SimError::Diverged {
                    t: t1,
                    reason: "penalty-implicit: singular Newton matrix".into(),
                })?;
            // Backtracking on ‖G(y)‖₂ with sufficient decrease (Armijo, c = 1e-4): the contact
            // and friction laws are only piecewise smooth, and full Newton steps across a kink
            // (the edge of the friction law's viscous band) can cycle between two points
            // whose residuals differ by round-off.
            let mut alpha = 1.0;
            let norm = res.norm();
            let (mut y_new, (mut res_new, mut f_new));
            loop {
                y_new = &y + &delta * alpha;
                (res_new, f_new) = residual(&y_new)?;
                if res_new.norm() <= (1.0 - 1e-4 * alpha) * norm || alpha < 1e-3 {
                    break;
                }
                alpha *= 0.5;
            }
            y = y_new;
            res = res_new;
            f = f_new;
            if err_norm(&(&delta * alpha), &y, &y0, 1e-12, 1e-10) < 1.0
                || err_norm(&res, &y, &y0, 1e-12, 1e-10) < 1e-2
            {
                normalize(model, &mut y);
                return Ok(State {
                    q: y.rows(0, model.nq()).into_owned(),
                    v: y.rows(model.nq(), model.nv()).into_owned(),
                    t: t1,
                });
            }
        }
        Err(SimError::Diverged {
            t: t1,
            reason: format!(
                "penalty-implicit: Newton did not converge in {} iterations",
                self.max_newton
            ),
        })
    }
}
