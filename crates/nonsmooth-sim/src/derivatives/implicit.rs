//! Implicit differentiation of a step problem at its solution (module documentation of
//! [`super`]).

use nalgebra::{DMatrix, DVector};
use nonsmooth_core::dynamics::integrate_configuration;
use nonsmooth_core::State;
use nonsmooth_solvers::regularized_contact::{
    sensitivity, solve_semismooth, RegularizedContactOptions, SemismoothWorkspace,
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
    for (col, &d) in dirs.iter().enumerate() {
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
