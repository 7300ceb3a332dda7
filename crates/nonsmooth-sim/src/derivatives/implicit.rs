//! Implicit differentiation of a step problem at its solution (module documentation of
//! [`super`]).

use nalgebra::{DMatrix, DVector};
use nonsmooth_core::dynamics::{bias_force, integrate_configuration, mass_matrix, passive_force};
use nonsmooth_core::State;
use nonsmooth_solvers::regularized_contact::{
    sensitivity, solve_semismooth, RegularizedContactOptions, SemismoothWorkspace, Sensitivity,
};
use nonsmooth_solvers::SolveStatus;

use super::{
    tangent, Columns, ConstraintState, DerivativeMethod, Direction, Inputs, Parameter, StepProblem,
    DATA_DIFFERENCE_STEP,
};
use crate::error::SimError;
use crate::stepper::Stepper;

/// The step problem of the step from `x` (with the constraints of `like` where given);
/// `None` when the stepper has none.
fn problem_at(
    stepper: &dyn Stepper,
    x: &Inputs<'_>,
    like: Option<&StepProblem>,
) -> Result<Option<StepProblem>, SimError> {
    let input = x.actuation()?;
    let step = crate::pipeline::prepare(&x.model, &x.state, &input, x.h)?;
    stepper.step_problem(&step, like)
}

/// The step problem of the step from `x` when it has the structure (constraints,
/// contacts) of `nominal`.
fn problem_like(
    stepper: &dyn Stepper,
    x: &Inputs<'_>,
    nominal: &StepProblem,
) -> Result<Option<StepProblem>, SimError> {
    Ok(problem_at(stepper, x, Some(nominal))?.filter(|p| {
        p.problem.same_structure(&nominal.problem) && p.constraints == nominal.constraints
    }))
}

/// The columns of the derivatives along `dirs` by implicit differentiation; `None` when
/// the stepper has no step problem, its solve does not converge, or the contact set
/// changes on both sides of a direction (the caller then uses finite differences).
///
/// # Errors
/// The step's own errors (a state the snapshot refuses, a malformed command).
pub(super) fn derivatives(
    stepper: &mut dyn Stepper,
    x: &Inputs<'_>,
    dirs: &[Direction],
    parameters: &[Parameter],
) -> Result<Option<Columns>, SimError> {
    let stepper: &dyn Stepper = stepper;
    let Some(nominal) = problem_at(stepper, x, None)? else {
        return Ok(None);
    };
    let problem = &nominal.problem;
    let options = RegularizedContactOptions {
        rel_tolerance: 1e-13,
        ..RegularizedContactOptions::default()
    };
    let mut workspace = SemismoothWorkspace::default();
    let solution = solve_semismooth(problem, &[&x.state.v], &options, &mut workspace)?;
    if !matches!(
        solution.status,
        SolveStatus::Solved | SolveStatus::AlmostSolved
    ) {
        return Ok(None);
    }
    let v1 = solution.v;
    let mut sens = match sensitivity(problem, &v1, options.dense_threshold, &mut workspace) {
        Ok(sens) => sens,
        Err(_) => return Ok(None),
    };
    let n = problem.num_velocities();
    let mut rhs = DMatrix::zeros(n, dirs.len());
    let mut one_sided = Vec::new();
    let momentum = momentum_columns(stepper, x, dirs, parameters, &nominal, &sens)?;
    for (col, &d) in dirs.iter().enumerate() {
        if let Some(df) = momentum.as_ref().and_then(|m| m[col].as_ref()) {
            rhs.set_column(col, &(-df));
            continue;
        }
        let s = x.step_size(d, parameters, DATA_DIFFERENCE_STEP)?;
        let side = |sign: f64| -> Result<Option<StepProblem>, SimError> {
            if !x.admits(d, sign * s, parameters) {
                return Ok(None);
            }
            problem_like(stepper, &x.moved(d, sign * s, parameters)?, &nominal)
        };
        // A forward difference of the data (truncation O(ε), far below the accuracy the
        // derivatives need); the backward one where the contact set changes ahead.
        let df = match side(1.0)? {
            Some(p) => sens.equations_wrt_data(&p.problem, problem, s)?,
            None => match side(-1.0)? {
                Some(m) => {
                    one_sided.push(d);
                    sens.equations_wrt_data(problem, &m.problem, s)?
                }
                None => return Ok(None),
            },
        };
        rhs.set_column(col, &(-df));
    }
    let dv = sens.solve(&rhs)?;
    let constraints = nominal
        .constraints
        .iter()
        .zip(sens.modes())
        .map(|(source, &mode)| ConstraintState {
            source: source.clone(),
            mode,
        })
        .collect();
    let (model, q, h) = (&*x.model, &x.state.q, x.h);
    let nv = model.nv();
    let mut jacobian = DMatrix::zeros(2 * nv, dirs.len());
    for (col, &d) in dirs.iter().enumerate() {
        let dv_col = dv.column(col).into_owned();
        let dq0 = match d {
            Direction::Position(k) => {
                let mut e = DVector::zeros(nv);
                e[k] = 1.0;
                Some(e)
            }
            _ => None,
        };
        let dq1 = tangent::next_configuration_tangent(model, q, &v1, h, dq0.as_ref(), &dv_col);
        jacobian.view_mut((0, col), (nv, 1)).copy_from(&dq1);
        jacobian.view_mut((nv, col), (nv, 1)).copy_from(&dv_col);
    }
    let next = State {
        q: integrate_configuration(model, q, &v1, h),
        v: v1,
        t: x.state.t + h,
    };
    Ok(Some(Columns {
        jacobian,
        next,
        constraints,
        method: DerivativeMethod::Implicit,
        one_sided,
    }))
}

/// Whether a direction moves the free motion's momentum only (a velocity or a command).
fn moves_momentum(d: Direction) -> bool {
    matches!(d, Direction::Velocity(_) | Direction::Command(_))
}

/// The momentum of the free motion, `p = M̃ v₀ + h f̃(q₀, v₀, u)`: the mass matrix and the
/// passive, bias and actuation forces with the servos implicit over the step, as a step
/// applies them (`mass` is `M(q₀)`).
fn free_momentum(x: &Inputs<'_>, mass: &DMatrix<f64>) -> Result<DVector<f64>, SimError> {
    let (model, q, v) = (&*x.model, &x.state.q, &x.state.v);
    let mut p = mass * v;
    let mut f = passive_force(model, q, v) - bias_force(model, q, v);
    // the servos' implicit terms add to M's diagonal: M̃ v = M v + Σ d_i v_i e_i
    x.actuation()?
        .apply_implicit_with(|i, d| p[i] += d * v[i], &mut f, q, v, x.h);
    Ok(p + f * x.h)
}

/// `∂F/∂x` along the momentum directions (velocities and commands) without assembling a
/// problem per direction, as MuJoCo's finite differences skip the position stage for them.
/// A step problem whose free velocity is `v* = A⁻¹ p` and whose other data depend on the
/// configuration alone has `∂F/∂x = −∂p/∂x` along them; `p` is differenced instead of the
/// problem. The premise is checked on one problem assembled along a combination of all of
/// them: where it fails (compliant contacts whose damping reads the normal velocity,
/// bilateral rows' `Ġv`, a contact set that changes) the result is `None` and each
/// direction is assembled. Entry `k` is the column of `dirs[k]`, `None` for the others.
fn momentum_columns(
    stepper: &dyn Stepper,
    x: &Inputs<'_>,
    dirs: &[Direction],
    parameters: &[Parameter],
    nominal: &StepProblem,
    sens: &Sensitivity<'_>,
) -> Result<Option<Vec<Option<DVector<f64>>>>, SimError> {
    if !dirs.iter().any(|&d| moves_momentum(d)) {
        return Ok(None);
    }
    let mass = mass_matrix(&x.model, &x.state.q);
    let p0 = free_momentum(x, &mass)?;
    let mut columns = vec![None; dirs.len()];
    let mut combined = x.clone();
    let mut predicted = DVector::zeros(p0.len());
    for (col, &d) in dirs.iter().enumerate() {
        if !moves_momentum(d) {
            continue;
        }
        let s = x.step_size(d, parameters, DATA_DIFFERENCE_STEP)?;
        let dp = (free_momentum(&x.moved(d, s, parameters)?, &mass)? - &p0) / s;
        // Distinct weights, so that no error of one direction cancels another's.
        let weight = s * (1.0 + col as f64 / dirs.len() as f64);
        match d {
            Direction::Velocity(k) => combined.state.v[k] += weight,
            Direction::Command(k) => combined.u[k] += weight,
            _ => unreachable!("a momentum direction"),
        }
        predicted -= &dp * weight;
        columns[col] = Some(-dp);
    }
    let Some(moved) = problem_like(stepper, &combined, nominal)? else {
        return Ok(None);
    };
    let assembled = sens.equations_wrt_data(&moved.problem, &nominal.problem, 1.0)?;
    let scale = assembled.amax().max(predicted.amax());
    let agrees = (&assembled - &predicted).amax() <= MOMENTUM_AGREEMENT * scale;
    Ok(agrees.then_some(columns))
}

/// How closely (relative to the larger) the problem assembled along the combined momentum
/// direction must agree with the momentum's prediction: far above the rounding of the
/// differences (`10⁻¹⁶/ε`, ε = 1e-7) and their truncation, far below any neglected
/// dependence that matters at the derivatives' accuracy.
const MOMENTUM_AGREEMENT: f64 = 1e-6;
