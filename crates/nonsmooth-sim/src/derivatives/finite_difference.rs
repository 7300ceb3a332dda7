//! Derivatives of a step by central differences of whole steps, for schemes without a
//! step problem (module documentation of [`super`]).

use nalgebra::{DMatrix, DVector};
use nonsmooth_core::State;

use super::{
    tangent, Columns, DerivativeMethod, Direction, Inputs, Parameter, STEP_DIFFERENCE_STEP,
};
use crate::error::SimError;
use crate::stepper::Stepper;

/// The state the stepper reaches from `x`.
fn step_from(stepper: &mut dyn Stepper, x: &Inputs<'_>) -> Result<State, SimError> {
    let input = x.actuation()?;
    stepper.step_actuated(&x.model, &x.state, &input, x.h)
}

/// The columns of the derivatives along `dirs` by central differences of steps (one-sided
/// where a parameter must stay positive).
///
/// # Errors
/// The steps' own errors.
pub(super) fn derivatives(
    stepper: &mut dyn Stepper,
    x: &Inputs<'_>,
    dirs: &[Direction],
    parameters: &[Parameter],
) -> Result<Columns, SimError> {
    let next = step_from(stepper, x)?;
    let model = &*x.model;
    let nv = model.nv();
    let mut jacobian = DMatrix::zeros(2 * nv, dirs.len());
    let mut one_sided = Vec::new();
    for (col, &d) in dirs.iter().enumerate() {
        let s = x.step_size(d, parameters, STEP_DIFFERENCE_STEP)?;
        let plus = step_from(stepper, &x.moved(d, s, parameters)?)?;
        let (minus, width) = if x.admits(d, -s, parameters) {
            (step_from(stepper, &x.moved(d, -s, parameters)?)?, 2.0 * s)
        } else {
            one_sided.push(d);
            (next.clone(), s)
        };
        let dq = tangent::to_tangent(model, &next.q, &(&plus.q - &minus.q)) / width;
        let dv: DVector<f64> = (&plus.v - &minus.v) / width;
        jacobian.view_mut((0, col), (nv, 1)).copy_from(&dq);
        jacobian.view_mut((nv, col), (nv, 1)).copy_from(&dv);
    }
    Ok(Columns {
        jacobian,
        next,
        constraints: Vec::new(),
        method: DerivativeMethod::FiniteDifference,
        one_sided,
    })
}
