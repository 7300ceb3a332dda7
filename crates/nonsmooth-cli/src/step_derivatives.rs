//! `nonsmooth simulate MODEL --derivatives [--derivatives-every N]`: the derivatives
//! `A = ∂(q₁, v₁)/∂(q₀, v₀)` and `B = ∂(q₁, v₁)/∂u` of every N-th step of the run
//! ([`nonsmooth_sim::Simulator::derivatives`]), one JSON line per step in
//! `derivatives.jsonl`.
//!
//! The run loop of `simulate` ([`nonsmooth_sim::run_simulation`]) does not expose its
//! states step by step, so the derivatives come from a second pass over the same run: a
//! [`Simulator`] with a fresh stepper of the same scheme, from the model's initial state,
//! taking the run's steps (same step sizes, no actuation) and differentiating the step from
//! each selected state before taking it. Each step and each derivatives call is timed. A
//! derivatives call solves the step's problem (or perturbed steps) with the pass's stepper,
//! which leaves its warm start where that solve ended: the pass's states agree with the
//! run's within the solver's tolerance, not bit for bit. Each step is differentiated as a
//! step of `dt` (a run's shorter last step too).
//!
//! The run applies no actuation. For motors that is the zero command, at which the
//! derivatives are taken (`B` has one column per actuator). A position servo under no
//! command applies no force, which no command of the servo reproduces; a model with servos
//! is differentiated without its actuators (the same steps; `B` then has no columns, and
//! each line says `"command": "none"`).

use crate::CliError;
use nonsmooth_core::{ActuatorKind, Model};
use nonsmooth_sim::derivatives::{ConstraintSource, StepDerivatives};
use nonsmooth_sim::{
    Actuation, DerivativeMethod, DerivativeOptions, SimError, SimOptions, Simulator,
};
use std::io::Write;
use std::num::NonZeroUsize;
use std::path::Path;
use std::time::Instant;

/// The file the derivatives are written to, in the output directory.
pub const FILE_NAME: &str = "derivatives.jsonl";

/// Parses `--derivatives-every`: a whole number of steps, at least 1.
pub fn parse_every(text: &str) -> Result<NonZeroUsize, String> {
    let n: usize = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a whole number of steps"))?;
    NonZeroUsize::new(n).ok_or_else(|| {
        "must be at least 1 (1 differentiates every step, N every N-th step)".to_string()
    })
}

/// What the derivatives pass wrote and how long its parts took.
#[derive(Debug, Clone)]
pub struct DerivativesReport {
    /// Lines written (steps differentiated).
    pub written: usize,
    /// Every how many steps one was differentiated.
    pub every: usize,
    /// Mean wall time of one derivatives call (s).
    pub mean_derivatives_s: f64,
    /// Mean wall time of one step of the pass (s).
    pub mean_step_s: f64,
    /// How many of the written derivatives were computed implicitly.
    pub implicit: usize,
    /// How many were computed by finite differences (no step problem at that step).
    pub finite_difference: usize,
    /// `"zero"` (derivatives at the zero command) or `"none"` (the model's position servos
    /// left out, as the run leaves them without force).
    pub command: &'static str,
}

impl DerivativesReport {
    /// The report as the `derivatives` entry of summary.json.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "file": FILE_NAME,
            "written": self.written,
            "every": self.every,
            "mean_derivatives_s": self.mean_derivatives_s,
            "mean_step_s": self.mean_step_s,
            "implicit": self.implicit,
            "finite_difference": self.finite_difference,
            "command": self.command,
        })
    }

    /// One line for the printed summary.
    pub fn describe(&self) -> String {
        let methods = match (self.implicit, self.finite_difference) {
            (_, 0) => "implicit".to_string(),
            (0, _) => "finite differences".to_string(),
            (i, f) => format!("{i} implicit, {f} by finite differences"),
        };
        let ratio = if self.mean_step_s > 0.0 {
            format!(" (×{:.1})", self.mean_derivatives_s / self.mean_step_s)
        } else {
            String::new()
        };
        format!(
            "wrote the derivatives of {} steps (every {}, {methods}) → {FILE_NAME}: \
             {:.3} ms per derivatives call vs {:.3} ms per step{ratio}",
            self.written,
            self.every,
            self.mean_derivatives_s * 1e3,
            self.mean_step_s * 1e3,
        )
    }
}

/// The model the derivatives are taken on and the command they are taken at: `model`
/// itself at the zero command when it has no position servo, else `model` without its
/// actuators (see the module documentation).
fn differentiated_model(model: &Model) -> (Model, &'static str) {
    let has_servo = model
        .actuators
        .iter()
        .any(|a| matches!(a.kind, ActuatorKind::Position { .. }));
    if has_servo {
        let mut without = model.clone();
        without.actuators.clear();
        (without, "none")
    } else {
        (model.clone(), "zero")
    }
}

/// The entries of a matrix, row after row.
fn row_major(m: &nalgebra::DMatrix<f64>) -> Vec<f64> {
    (0..m.nrows())
        .flat_map(|i| (0..m.ncols()).map(move |j| m[(i, j)]))
        .collect()
}

/// The JSON line of the derivatives `d` of step `step` (0-based: the step from the state
/// after `step` steps) taken at time `t`.
fn line(
    model: &Model,
    step: usize,
    t: f64,
    d: &StepDerivatives,
    command: &str,
) -> serde_json::Value {
    let name = |i: usize| {
        model
            .colliders
            .get(i)
            .map(|c| c.name.clone())
            .unwrap_or_default()
    };
    let mut contacts = Vec::new();
    let mut rows = Vec::new();
    for c in &d.constraints {
        match &c.source {
            ConstraintSource::Contact {
                collider_a,
                collider_b,
                feature,
            } => contacts.push(serde_json::json!({
                "collider_a": name(*collider_a),
                "collider_b": name(*collider_b),
                "feature": feature,
                "mode": c.mode.label(),
            })),
            ConstraintSource::Row { name } => rows.push(serde_json::json!({
                "name": name,
                "mode": c.mode.label(),
            })),
        }
    }
    serde_json::json!({
        "step": step,
        "t": t,
        "nv": model.nv(),
        "nu": d.b.ncols(),
        "a": row_major(&d.a),
        "b": row_major(&d.b),
        "method": d.method.label(),
        "command": command,
        "contacts": contacts,
        "rows": rows,
    })
}

/// Runs the derivatives pass of a run of `model` under the stepper `stepper_name` with
/// `options` (`steps` steps) and writes [`FILE_NAME`] into `out`.
///
/// # Errors
/// [`CliError::Derivatives`] naming the step whose derivatives or step failed, and I/O
/// errors of the file.
pub fn write(
    model: &Model,
    stepper_name: &str,
    options: &SimOptions,
    steps: usize,
    every: NonZeroUsize,
    out: &Path,
) -> Result<DerivativesReport, CliError> {
    let every = every.get();
    let (differentiated, command) = differentiated_model(model);
    let stepper = nonsmooth_sim::stepper_by_name(stepper_name)?;
    let mut sim = Simulator::borrowing(&differentiated, stepper, options.dt)?;
    sim.set_state(model.initial_state.clone())?;
    let path = out.join(FILE_NAME);
    let io_error = |e: std::io::Error| nonsmooth_report::ReportError::io(&path, e);
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).map_err(io_error)?);
    let mut report = DerivativesReport {
        written: 0,
        every,
        mean_derivatives_s: 0.0,
        mean_step_s: 0.0,
        implicit: 0,
        finite_difference: 0,
        command,
    };
    let (mut derivatives_s, mut steps_s) = (0.0, 0.0);
    let end = model.initial_state.t + options.duration;
    let failed = |step: usize, t: f64, source: SimError| CliError::Derivatives {
        step,
        t,
        source: Box::new(source),
    };
    let no_command = DerivativeOptions::default();
    for i in 0..steps {
        // the step sizes of the run loop: dt, the last one up to the end
        let h = if i + 1 == steps {
            (end - sim.t()).max(options.dt * 1e-9)
        } else {
            options.dt
        }
        .min(options.dt);
        if i % every == 0 {
            let start = Instant::now();
            let d = sim
                .derivatives(&[], &no_command)
                .map_err(|e| failed(i, sim.t(), e))?;
            derivatives_s += start.elapsed().as_secs_f64();
            match d.method {
                DerivativeMethod::Implicit => report.implicit += 1,
                _ => report.finite_difference += 1,
            }
            let text = line(&differentiated, i, sim.t(), &d, command);
            writeln!(file, "{text}").map_err(io_error)?;
            report.written += 1;
        }
        let start = Instant::now();
        sim.advance(&Actuation::none(), h)
            .map_err(|e| failed(i, sim.t(), e))?;
        steps_s += start.elapsed().as_secs_f64();
    }
    file.flush().map_err(io_error)?;
    report.mean_derivatives_s = derivatives_s / report.written.max(1) as f64;
    report.mean_step_s = steps_s / steps.max(1) as f64;
    Ok(report)
}
