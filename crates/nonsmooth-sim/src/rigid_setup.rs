//! The start of a velocity-level rigid-contact step, shared by the `anitescu-potra` and
//! `qp-max-dissipation` steppers: the contact snapshot (no bilateral rows: neither
//! formulation eliminates joints), the Cholesky factor of M and the free velocity
//! `v_free = v + h M⁻¹ f`; and the mass-matrix factorization every explicit-force stepper
//! (penalty, ODE baselines) shares.

use nalgebra::{Cholesky, DMatrix, DVector, Dyn};
use nonsmooth_core::geometry::ContactMargins;
use nonsmooth_core::{ContactSnapshot, Model, State};

use crate::SimError;
use nonsmooth_core::dynamics::check_state;

/// Snapshot, mass factor and free velocity at the start of a step.
pub(crate) struct FreeMotion {
    pub snap: ContactSnapshot<f64>,
    pub chol: Cholesky<f64, Dyn>,
    pub v_free: DVector<f64>,
}

/// Checks the state, builds the snapshot (with `speculative`, contacts within the velocity
/// margins of [`nonsmooth_core::snapshot::velocity_margins`], so that fast bodies meet their
/// contacts before passing through; else within the model's margin), adds the actuation `input` to its M and f (servos implicitly,
/// [`crate::actuation`]), rejects bilateral constraints for `stepper` and factors M; a mass
/// matrix that is not positive definite is a [`SimError::Diverged`].
pub(crate) fn free_motion(
    model: &Model,
    state: &State,
    input: &crate::Actuation,
    h: f64,
    stepper: &'static str,
    speculative: bool,
) -> Result<FreeMotion, SimError> {
    check_state(model, &state.q, &state.v)?;
    let margins = if speculative {
        ContactMargins::speculative(model.contact_margin, h)
    } else {
        ContactMargins::uniform(model.contact_margin)
    };
    let mut snap =
        ContactSnapshot::with_contact_margins(model, &state.q, &state.v, state.t, &margins)?;
    input.apply_implicit(
        &mut snap.mass_matrix,
        &mut snap.forces,
        &state.q,
        &state.v,
        h,
    );
    if !snap.bilateral.is_empty() {
        return Err(SimError::Unsupported {
            stepper,
            reason: "bilateral constraints are not supported by this formulation".into(),
        });
    }
    let chol = factor_mass(&snap.mass_matrix, state.t)?;
    let v_free = &state.v + chol.solve(&snap.forces) * h;
    Ok(FreeMotion { snap, chol, v_free })
}

/// The Cholesky factor of the mass matrix at time `t`; a matrix that is not positive
/// definite (a state off the model's manifold) is a [`SimError::Diverged`] at `t`.
pub(crate) fn factor_mass(mass: &DMatrix<f64>, t: f64) -> Result<Cholesky<f64, Dyn>, SimError> {
    mass.clone().cholesky().ok_or_else(|| SimError::Diverged {
        t,
        reason: "mass matrix is not positive definite".into(),
    })
}
