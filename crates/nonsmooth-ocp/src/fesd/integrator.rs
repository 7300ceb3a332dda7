//! FESD as an integrator ([`simulate`]): the fixed-mode (active-set) prediction
//! ([`solve_fixed_mode`], [`Mode`]), the homotopy for steps with a switch, and the
//! stage-point trajectory of a solved horizon ([`trajectory`]).

use std::sync::Arc;

use super::blocks::FesdBlock;
use super::build::build_nlp;
use super::complementarity::comp_residual;
use super::homotopy::homotopy;
use super::layout::{Clock, Horizon, Layout};
use super::options::FesdOptions;
use super::relaxed_nlp::NlpLog;
use super::tableau::{Dcs, Tableau};
use crate::ipopt::{solve, thread_cpu_seconds, IpoptOptions, IpoptSolution};
use crate::nlp::BlockNlp;
use crate::time_freezing::TimeFreezing;
use crate::OcpError;

/// Fixed-point sweeps of the collocation equations in the initial guess of
/// [`solve_fixed_mode`].
const PREDICT_SWEEPS: usize = 8;
/// Tolerance on the predicted switching functions' sign in [`solve_fixed_mode`].
const PREDICT_TOL: f64 = 1e-9;

/// Threshold of α at its bound when a solved step's last-stage mode is read off.
const MODE_ALPHA: f64 = 1e-7;

/// Side of one step-function component α_i of a fixed mode ([`solve_fixed_mode`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// α_i = 0 and λᵖ_i = 0 (c_i ≤ 0).
    Zero,
    /// α_i = 1 and λⁿ_i = 0 (c_i ≥ 0).
    One,
    /// α_i free, λᵖ_i = λⁿ_i = 0 (sliding on c_i = 0).
    Interior,
}

/// Solves a FESD NLP with the mode `mode` (one [`Mode`] per switching function) fixed on
/// every stage point of every element: the multipliers and α on the fixed sides are fixed by
/// their bounds, which makes every complementarity product vanish identically, and the
/// remaining smooth NLP (collocation, algebraic equations, λ ≥ 0) is solved by IPOPT from
/// `x0`. The bounds λ ≥ 0 keep each switching function on its side, so a step that contains
/// a switch is infeasible for the fixed mode and returns an error with the failed attempt's
/// log entry (as does any IPOPT failure or a residual above `comp_tol`; `Err(None)` for a
/// mode of the wrong length); the caller then runs the homotopy. This is an active-set
/// prediction for the integrator: the accepted point is a solution of the FESD equations
/// with exact complementarity.
pub fn solve_fixed_mode(
    tf: &TimeFreezing,
    nlp: &mut BlockNlp<FesdBlock>,
    layout: &Layout,
    x0: &[f64],
    mode: &[Mode],
    o: &FesdOptions,
) -> Result<(IpoptSolution, NlpLog), Option<NlpLog>> {
    let (ny, nc, nu, ns) = layout.dims;
    if mode.len() != nc || layout.dcs == Dcs::Stewart {
        return Err(None);
    }
    let mut x = x0.to_vec();
    // initial guess: the collocation equations with the nominal element lengths solved by
    // fixed-point iteration in the fixed mode; a predicted sign change of a switching
    // function means the step has a switch (skip to the homotopy)
    let tab = Tableau::new(o.discretization.scheme, ns).map_err(|_| None)?;
    for e in &layout.elems {
        for j in 0..ns {
            for (i, m) in mode.iter().enumerate() {
                match m {
                    Mode::Zero => x[e.alpha[j] + i] = 0.0,
                    Mode::One => x[e.alpha[j] + i] = 1.0,
                    Mode::Interior => {}
                }
            }
        }
    }
    for e in &layout.elems {
        let (h, s) = (x[e.h], x[layout.s[e.step]]);
        let u = x[layout.u[e.step]..layout.u[e.step] + nu].to_vec();
        let yn = x[e.y_start..e.y_start + ny].to_vec();
        let alphas: Vec<Vec<f64>> = (0..ns)
            .map(|j| x[e.alpha[j]..e.alpha[j] + nc].to_vec())
            .collect();
        let mut ys = picard_element(tf, &tab.a, &yn, &alphas, h * s, &u);
        if !tab.stiffly_accurate {
            ys.push(end_state(tf, &tab.b, &yn, &ys, &alphas, h * s, &u));
        }
        for (j, yj) in ys.iter().enumerate() {
            if yj.iter().any(|v| !v.is_finite()) {
                return Err(None);
            }
            let yi = if j < ns { e.y[j] } else { e.y_end };
            x[yi..yi + ny].copy_from_slice(yj);
            let c = tf.switching(yj);
            for (i, m) in mode.iter().enumerate() {
                let wrong = match m {
                    Mode::Zero => c[i] > PREDICT_TOL,
                    Mode::One => c[i] < -PREDICT_TOL,
                    Mode::Interior => false,
                };
                if wrong {
                    return Err(None);
                }
                x[e.lp[j + 1] + i] = c[i].max(0.0);
                x[e.ln[j + 1] + i] = (-c[i]).max(0.0);
            }
        }
    }
    let saved = (nlp.xl.clone(), nlp.xu.clone());
    let mut fix = |idx: usize, val: f64, x: &mut Vec<f64>| {
        nlp.xl[idx] = val;
        nlp.xu[idx] = val;
        x[idx] = val;
    };
    for e in &layout.elems {
        for j in 0..e.lp.len() - 1 {
            for (i, m) in mode.iter().enumerate() {
                let (lp, ln) = (e.lp[j + 1] + i, e.ln[j + 1] + i);
                let ai = (j < ns).then(|| e.alpha[j] + i);
                match m {
                    Mode::Zero => {
                        if let Some(ai) = ai {
                            fix(ai, 0.0, &mut x);
                        }
                        fix(lp, 0.0, &mut x);
                    }
                    Mode::One => {
                        if let Some(ai) = ai {
                            fix(ai, 1.0, &mut x);
                        }
                        fix(ln, 0.0, &mut x);
                    }
                    Mode::Interior => {
                        fix(lp, 0.0, &mut x);
                        fix(ln, 0.0, &mut x);
                    }
                }
            }
        }
    }
    let mut opts = IpoptOptions::quiet(o.nlp.tol, o.nlp.max_iter.min(20));
    opts.num.push(("bound_relax_factor".into(), 0.0));
    opts.num.push(("constr_viol_tol".into(), o.nlp.tol));
    opts.num.push(("mu_init".into(), 1e-6));
    let out = solve(&*nlp, &x, None, &opts);
    nlp.xl = saved.0;
    nlp.xu = saved.1;
    let out = match out {
        Ok(s) => s,
        Err(OcpError::Ipopt { solution, .. }) => {
            return Err(Some(NlpLog {
                sigma: 0.0,
                objective: solution.objective,
                comp_residual: comp_residual(layout, &solution.x, o.discretization.fesd),
                iterations: solution.iterations,
                cpu_seconds: solution.cpu_seconds,
                status: solution.status,
            }))
        }
        Err(_) => return Err(None),
    };
    let comp = comp_residual(layout, &out.x, o.discretization.fesd);
    let entry = NlpLog {
        sigma: 0.0,
        objective: out.objective,
        comp_residual: comp,
        iterations: out.iterations,
        cpu_seconds: out.cpu_seconds,
        status: out.status,
    };
    if comp > o.mpcc.comp_tol || out.constraint_violation > 1e-8 {
        return Err(Some(entry));
    }
    Ok((out, entry))
}

/// Stage states of one Radau IIA element of length `hs` (h times the speed of time) from
/// `yn` with fixed step-function values `alphas` per stage, by [`PREDICT_SWEEPS`] fixed-point
/// sweeps of the collocation equations (the initial guess of [`solve_fixed_mode`]).
fn picard_element(
    tf: &TimeFreezing,
    a: &[Vec<f64>],
    yn: &[f64],
    alphas: &[Vec<f64>],
    hs: f64,
    u: &[f64],
) -> Vec<Vec<f64>> {
    let ns = a.len();
    let mut ys: Vec<Vec<f64>> = vec![yn.to_vec(); ns];
    for _ in 0..PREDICT_SWEEPS {
        let f: Vec<Vec<f64>> = (0..ns).map(|l| tf.rhs(&ys[l], &alphas[l], u)).collect();
        for (j, yj) in ys.iter_mut().enumerate() {
            for (i, v) in yj.iter_mut().enumerate() {
                *v = yn[i] + hs * (0..ns).map(|l| a[j][l] * f[l][i]).sum::<f64>();
            }
        }
    }
    ys
}

/// End state y_n + h s Σ bᵢ F(Yᵢ) of a non-stiffly-accurate element from its stages.
fn end_state(
    tf: &TimeFreezing,
    b: &[f64],
    yn: &[f64],
    ys: &[Vec<f64>],
    alphas: &[Vec<f64>],
    hs: f64,
    u: &[f64],
) -> Vec<f64> {
    let f: Vec<Vec<f64>> = (0..b.len())
        .map(|l| tf.rhs(&ys[l], &alphas[l], u))
        .collect();
    (0..yn.len())
        .map(|i| yn[i] + hs * (0..b.len()).map(|l| b[l] * f[l][i]).sum::<f64>())
        .collect()
}

/// A fixed mode to predict with: the side of every switching function and α of the
/// interior components (½ without it).
#[derive(Debug, Clone, Copy)]
struct PredictedMode<'a> {
    /// The side of each component.
    sides: &'a [Mode],
    /// α of the interior components (the previous step's last stage).
    alpha: Option<&'a [f64]>,
}

/// Number of consecutive integrator steps (at most `max_steps`) over which the fixed-mode
/// prediction ([`picard_element`] on the nominal elements) keeps every switching function
/// on the side of `mode`.
fn predicted_run(
    tf: &TimeFreezing,
    y0: &[f64],
    mode: PredictedMode<'_>,
    step_len: f64,
    max_steps: usize,
    controls: &dyn Fn(usize) -> Vec<f64>,
    o: &FesdOptions,
) -> usize {
    let Ok(tab) = Tableau::new(o.discretization.scheme, o.discretization.n_s) else {
        return 0;
    };
    let PredictedMode { sides: mode, alpha } = mode;
    let al: Vec<f64> = mode
        .iter()
        .enumerate()
        .map(|(i, m)| match m {
            Mode::Zero => 0.0,
            Mode::One => 1.0,
            Mode::Interior => alpha.and_then(|a| a.get(i).copied()).unwrap_or(0.5),
        })
        .collect();
    let alphas = vec![al; o.discretization.n_s];
    let h = step_len / o.discretization.n_fe.max(1) as f64;
    let mut y = y0.to_vec();
    for k in 0..max_steps {
        let u = controls(k);
        for _ in 0..o.discretization.n_fe {
            let mut ys = picard_element(tf, &tab.a, &y, &alphas, h, &u);
            if !tab.stiffly_accurate {
                ys.push(end_state(tf, &tab.b, &y, &ys, &alphas, h, &u));
            }
            for yj in &ys {
                if yj.iter().any(|v| !v.is_finite()) {
                    return k;
                }
                let c = tf.switching(yj);
                let wrong = mode.iter().zip(&c).any(|(m, c)| match m {
                    Mode::Zero => *c > PREDICT_TOL,
                    Mode::One => *c < -PREDICT_TOL,
                    Mode::Interior => false,
                });
                if wrong {
                    return k;
                }
            }
            if let Some(last) = ys.last() {
                y = last.clone();
            }
        }
    }
    max_steps
}

/// The mode of the smooth motion leaving `y0` under the controls `u`, for the first step
/// of the integrator's active-set prediction: α_i = 1 where c_i(y0) > 0, 0 where c_i(y0) < 0;
/// a switching function that vanishes at y0 takes the sign it has after a short explicit
/// step of the provisional mode. `None` when that sign is still undetermined (e.g. at rest
/// on the ground: the homotopy decides).
pub fn initial_mode(tf: &TimeFreezing, y0: &[f64], u: &[f64]) -> Option<Vec<Mode>> {
    let c = tf.switching(y0);
    let alpha: Vec<f64> = c
        .iter()
        .map(|c| if *c >= 0.0 { 1.0 } else { 0.0 })
        .collect();
    let f = tf.rhs(y0, &alpha, u);
    let eps = 1e-6;
    let y1: Vec<f64> = y0.iter().zip(&f).map(|(y, f)| y + eps * f).collect();
    let c1 = tf.switching(&y1);
    c.iter()
        .zip(&c1)
        .map(|(c, c1)| {
            let v = if c.abs() > PREDICT_TOL { *c } else { *c1 };
            if v.abs() <= PREDICT_TOL * eps {
                None
            } else if v > 0.0 {
                Some(Mode::One)
            } else {
                Some(Mode::Zero)
            }
        })
        .collect()
}

/// A discrete trajectory: numerical times and states at element starts and stage points.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trajectory {
    /// Numerical time τ.
    pub tau: Vec<f64>,
    /// States y = (q, v, t).
    pub y: Vec<Vec<f64>>,
    /// Filippov weight θ₁ at stage points (NaN at the initial point).
    pub theta1: Vec<f64>,
}

/// θ₁ of one stage's switching variables (α or Stewart's θ).
fn theta1(tf: &TimeFreezing, layout: &Layout, w: &[f64]) -> f64 {
    if layout.dcs == Dcs::Stewart {
        tf.stewart_fields(w)[0]
    } else {
        tf.theta(w)[0]
    }
}

/// Extracts the stage-point trajectory of a solved horizon starting at τ₀.
pub fn trajectory(tf: &TimeFreezing, layout: &Layout, x: &[f64], tau0: f64) -> Trajectory {
    let (ny, nc, _, ns) = layout.dims;
    let mut tr = Trajectory::default();
    tr.tau.push(tau0);
    tr.y.push(x[layout.y0..layout.y0 + ny].to_vec());
    tr.theta1.push(f64::NAN);
    let mut tau = tau0;
    for e in &layout.elems {
        let h = x[e.h];
        for j in 0..ns {
            tr.tau.push(tau + layout.c[j] * h);
            tr.y.push(x[e.y[j]..e.y[j] + ny].to_vec());
            tr.theta1
                .push(theta1(tf, layout, &x[e.alpha[j]..e.alpha[j] + nc]));
        }
        if e.y_end != e.y[ns - 1] {
            // Gauss–Legendre: the end point, with the last stage's θ₁
            tr.tau.push(tau + h);
            tr.y.push(x[e.y_end..e.y_end + ny].to_vec());
            tr.theta1.push(theta1(
                tf,
                layout,
                &x[e.alpha[ns - 1]..e.alpha[ns - 1] + nc],
            ));
        }
        tau += h;
    }
    tr
}

/// Result of a FESD simulation.
#[derive(Debug, Clone)]
pub struct SimResult {
    /// Stage-point trajectory.
    pub traj: Trajectory,
    /// Element boundaries (numerical times) in order.
    pub boundaries: Vec<f64>,
    /// Total IPOPT iterations.
    pub nlp_iterations: usize,
    /// Number of NLPs solved.
    pub nlp_count: usize,
    /// CPU seconds of the whole simulation.
    pub cpu_seconds: f64,
    /// Largest complementarity residual over the steps.
    pub comp_residual: f64,
}

impl SimResult {
    /// Appends the trajectory and element boundaries of the solved horizon `x` (layout
    /// `layout`) that starts at step `k` (its first point, already there, skipped after
    /// the first step).
    fn append(&mut self, tf: &TimeFreezing, layout: &Layout, x: &[f64], k: usize, step_len: f64) {
        let tr = trajectory(tf, layout, x, k as f64 * step_len);
        let skip = usize::from(k > 0);
        self.traj.tau.extend_from_slice(&tr.tau[skip..]);
        self.traj.y.extend(tr.y[skip..].iter().cloned());
        self.traj.theta1.extend_from_slice(&tr.theta1[skip..]);
        let mut tau = k as f64 * step_len;
        for e in &layout.elems {
            tau += x[e.h];
            self.boundaries.push(tau);
        }
    }
}

/// The side of a step-function component with value `a` at a solved stage.
fn mode_of(a: f64) -> Mode {
    if a <= MODE_ALPHA {
        Mode::Zero
    } else if a >= 1.0 - MODE_ALPHA {
        Mode::One
    } else {
        Mode::Interior
    }
}

/// The horizon of `m` integrator steps from step `k` (`(k, m)`) at state `y` with the
/// boundary multipliers `lam0`: controls fixed to `controls(i)`, s = 1, no clock, bounds
/// or costs.
fn fixed_control_horizon(
    y: &[f64],
    lam0: Option<(Vec<f64>, Vec<f64>)>,
    (k, m): (usize, usize),
    step_len: f64,
    controls: &dyn Fn(usize) -> Vec<f64>,
) -> Horizon {
    Horizon {
        y0: y.to_vec(),
        lam0,
        n_steps: m,
        step_len,
        u_bounds: (k..k + m)
            .map(|i| {
                let u = controls(i);
                (u.clone(), u)
            })
            .collect(),
        s_bounds: (1.0, 1.0),
        clock: Clock::Free,
        global_speed: false,
        terminal: vec![],
        y_bounds: None,
        control_weight: 0.0,
        tracking: vec![],
        initial_guess: None,
    }
}

/// State guess: the explicit Euler prediction y0 + τ F(y0, α, u) at every stage point of
/// `layout` (α from `x0`), with the multipliers λᵖ = max(c, 0), λⁿ = max(−c, 0) of the
/// predicted state.
fn euler_guess(tf: &TimeFreezing, layout: &Layout, x0: &mut [f64], y: &[f64], u: &[f64]) {
    let (ny, nc) = (layout.dims.0, layout.dims.1);
    let mut tau = 0.0;
    for e in &layout.elems {
        let h = x0[e.h];
        for j in 0..layout.dims.3 {
            let al = x0[e.alpha[j]..e.alpha[j] + nc].to_vec();
            let f = tf.rhs(y, &al, u);
            let yj: Vec<f64> = (0..ny)
                .map(|i| y[i] + (tau + layout.c[j] * h) * f[i])
                .collect();
            let c = tf.switching(&yj);
            x0[e.y[j]..e.y[j] + ny].copy_from_slice(&yj);
            for i in 0..nc {
                x0[e.lp[j + 1] + i] = c[i].max(0.0);
                x0[e.ln[j + 1] + i] = (-c[i]).max(0.0);
            }
        }
        tau += h;
    }
}

/// Prints the outcome of the fixed-mode solve of steps `k..k + m` (verbose mode).
fn report_fixed_mode(fixed: &Result<(IpoptSolution, NlpLog), Option<NlpLog>>, k: usize, m: usize) {
    match fixed {
        Ok((_, e)) => eprintln!(
            "steps {k}..{}: fixed mode, {} iterations, {:.4} s",
            k + m,
            e.iterations,
            e.cpu_seconds
        ),
        Err(Some(e)) => eprintln!(
            "step {k}: fixed mode rejected ({:?}, complementarity {:.1e}, {} iterations)",
            e.status, e.comp_residual, e.iterations
        ),
        Err(None) => eprintln!("step {k}: homotopy"),
    }
}

/// Integrates the time-freezing system with fixed controls `controls(k)` on `n_steps` steps
/// of numerical length `step_len`, one homotopy per step (FESD as an integrator). The
/// system's path constraints ([`ModelSystem::path`](crate::model_system::ModelSystem::path)) are not imposed.
pub fn simulate(
    tf: &Arc<TimeFreezing>,
    y0: &[f64],
    step_len: f64,
    n_steps: usize,
    controls: &dyn Fn(usize) -> Vec<f64>,
    o: &FesdOptions,
) -> Result<SimResult, OcpError> {
    let start = thread_cpu_seconds();
    let ny = tf.ny();
    let mut y = y0.to_vec();
    let mut lam: Option<(Vec<f64>, Vec<f64>)> = None;
    let mut alpha_prev: Option<Vec<f64>> = None;
    let mut mode_prev: Option<Vec<Mode>> = None;
    let mut out = SimResult {
        traj: Trajectory::default(),
        boundaries: vec![0.0],
        nlp_iterations: 0,
        nlp_count: 0,
        cpu_seconds: 0.0,
        comp_residual: 0.0,
    };
    let mut k = 0;
    let mut chunk_failed = false;
    while k < n_steps {
        let u = controls(k);
        let u_k = u.clone();
        if k == 0 {
            mode_prev = initial_mode(tf, &y, &u_k);
        }
        // a run of steps that the fixed-mode prediction keeps in the current mode is solved
        // as one NLP
        let mode_predict = o.mpcc.mode_predict && o.discretization.dcs == Dcs::Step;
        let m = match (&mode_prev, mode_predict && !chunk_failed) {
            (Some(mode), true) => predicted_run(
                tf,
                &y,
                PredictedMode {
                    sides: mode,
                    alpha: alpha_prev.as_deref(),
                },
                step_len,
                n_steps - k,
                &|i| controls(k + i),
                o,
            )
            .max(1),
            _ => 1,
        };
        chunk_failed = false;
        let hz = fixed_control_horizon(&y, lam.clone(), (k, m), step_len, controls);
        let (mut nlp, layout, mut x0) = build_nlp(tf, &hz, o, false)?;
        // warm start of the mode: every α from the previous step's last stage
        if let Some(a) = &alpha_prev {
            for e in &layout.elems {
                for &j in &e.alpha {
                    x0[j..j + a.len()].copy_from_slice(a);
                }
            }
        }
        if o.mpcc.predict && o.discretization.dcs == Dcs::Step {
            euler_guess(tf, &layout, &mut x0, &y, &u_k);
        }
        let fixed = match &mode_prev {
            Some(m) if mode_predict => solve_fixed_mode(tf, &mut nlp, &layout, &x0, m, o),
            _ => Err(None),
        };
        if o.nlp.verbose {
            report_fixed_mode(&fixed, k, m);
        }
        let (sol, log) = match fixed {
            Ok((sol, entry)) => (sol, vec![entry]),
            Err(failed) if m > 1 => {
                // retry the first step alone
                if let Some(f) = failed {
                    out.nlp_iterations += f.iterations;
                    out.nlp_count += 1;
                }
                chunk_failed = true;
                continue;
            }
            Err(failed) => {
                let (sol, mut log) = homotopy(&mut nlp, &layout, x0, o)?;
                if let Some(f) = failed {
                    log.insert(0, f);
                }
                (sol, log)
            }
        };
        out.nlp_iterations += log.iter().map(|l| l.iterations).sum::<usize>();
        out.nlp_count += log.len();
        out.comp_residual =
            out.comp_residual
                .max(comp_residual(&layout, &sol.x, o.discretization.fesd));
        out.append(tf, &layout, &sol.x, k, step_len);
        let last = layout
            .elems
            .last()
            .ok_or_else(|| OcpError::InvalidInput("empty step".into()))?;
        y = sol.x[last.y_end..last.y_end + ny].to_vec();
        let a_last = last.alpha[layout.dims.3 - 1];
        let alpha_last = &sol.x[a_last..a_last + layout.dims.1];
        mode_prev = Some(alpha_last.iter().map(|&a| mode_of(a)).collect());
        alpha_prev = Some(alpha_last.iter().map(|a| a.clamp(0.01, 0.99)).collect());
        // boundary multipliers from c(y) exactly (λᵖ = max(c, 0), λⁿ = max(−c, 0)): the
        // relaxed values would carry the previous step's residual into this step
        lam = None;
        k += m;
    }
    out.cpu_seconds = thread_cpu_seconds() - start;
    Ok(out)
}
