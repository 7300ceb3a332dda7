//! Penalty (spring–damper) time stepping: every contact, joint limit and bilateral constraint
//! is a compliant element whose force depends on the state at the start of the step, and the
//! equations of motion `M v̇ = f + Gᵀλ(q, v)` are integrated with explicit or semi-implicit
//! (symplectic) Euler. These are the classical baselines of Drumwright, *An Unconditionally
//! Stable First-Order Constraint Solver for Multibody Systems* (2019), §3 (eqs 7–12): cheap per
//! step, but only conditionally stable (for a mass–spring–damper, explicit: h k < b < 2m/h +
//! h k/2; symplectic with the damping implicit as in eqs 11–12: h² k < 4m + 2hb; symplectic
//! as implemented here, damping explicit: h² k < 4m − 2hb and hb < 2m).
//!
//! Decision: rigid elements (no stiffness in the model) cannot be represented by a penalty
//! method, so they are a typed [`SimError::Unsupported`] naming the element, not silently
//! given an arbitrary stiffness.

use crate::contact_law::{normal_force, regularized_coulomb};
use crate::error::SimError;
use crate::pipeline::Step;
use crate::stepper::Stepper;
use nalgebra::DVector;
use nonsmooth_core::snapshot::ContactSnapshot;
use nonsmooth_core::{Model, State};

/// Which Euler variant integrates (q, v).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PenaltyIntegrator {
    /// v₁ = v₀ + h M⁻¹ F(q₀, v₀); q₁ = q₀ + h N(q₀) v₀.
    ExplicitEuler,
    /// v₁ = v₀ + h M⁻¹ F(q₀, v₀); q₁ = q₀ + h N(q₀) v₁ (`penalty-symplectic`). Unlike
    /// Drumwright's eqs 11–12, which evaluate the damping force at v₁ (implicitly), the
    /// damping is explicit here: the whole force `F` is evaluated at the start of the step, so
    /// any force law (Hertz, friction, joint limits) enters the same way and no linear solve is
    /// needed. The two variants differ little where both are stable (spectral radius 0.9995 for
    /// k = 1e6, b = 1, h = 1e-3, to 1e-6) and not at all for b = 0; at Fig. 2's unstable
    /// k = 1e7 the radius is 7.874 here against 7.864 for eqs 11–12 (experiment
    /// `drumwright-smd`).
    SymplecticEuler,
}

/// A penalty-contact stepper.
#[derive(Debug, Clone)]
pub struct PenaltyStepper {
    /// Explicit or semi-implicit (symplectic) Euler.
    pub integrator: PenaltyIntegrator,
    /// Regularization speed of Coulomb friction (m/s): below it friction is viscous.
    pub friction_regularization: f64,
    /// External load added to the right-hand side (used by the ODE baselines).
    pub(crate) load: Option<crate::external_load::PointLoad>,
    /// Actuation of the current step (the ODE baselines read it in their right-hand side).
    pub(crate) input: crate::actuation::Actuation,
}

impl PenaltyStepper {
    /// A stepper with friction regularization speed 10⁻⁴ m/s.
    pub fn new(integrator: PenaltyIntegrator) -> Self {
        PenaltyStepper {
            integrator,
            friction_regularization: 1e-4,
            load: None,
            input: crate::actuation::Actuation::none(),
        }
    }

    fn label(&self) -> &'static str {
        match self.integrator {
            PenaltyIntegrator::ExplicitEuler => "penalty-explicit",
            PenaltyIntegrator::SymplecticEuler => "penalty-symplectic",
        }
    }

    /// Total generalized constraint force Gᵀλ of all compliant elements at the snapshot.
    pub fn constraint_force(
        &self,
        model: &Model,
        snap: &ContactSnapshot<f64>,
    ) -> Result<DVector<f64>, SimError> {
        let v = &snap.v;
        let mut total = DVector::zeros(v.len());
        for c in &snap.contacts {
            let phi_dot = c.rows.normal.dot(v);
            if c.gap >= 0.0 {
                continue;
            }
            let stiffness = c.stiffness.ok_or_else(|| SimError::Unsupported {
                stepper: self.label(),
                reason: format!(
                    "contact between colliders `{}` and `{}` is rigid; give their materials a \
                     `stiffness` or choose a rigid-contact stepper",
                    model.colliders[c.collider_a].name, model.colliders[c.collider_b].name
                ),
            })?;
            let lambda_n = normal_force(c.law, stiffness, c.damping.unwrap_or(0.0), c.gap, phi_dot);
            total.axpy(lambda_n, &c.rows.normal, 1.0);
            if c.friction > 0.0 && lambda_n > 0.0 {
                let slip: Vec<f64> = (0..c.rows.tangents.nrows())
                    .map(|k| c.rows.tangents.row(k).transpose().dot(v))
                    .collect();
                let lambda_t =
                    regularized_coulomb(c.friction, lambda_n, &slip, self.friction_regularization);
                for (k, l) in lambda_t.iter().enumerate() {
                    total += c.rows.tangents.row(k).transpose() * *l;
                }
            }
        }
        for row in &snap.bilateral {
            let k = row.stiffness.ok_or_else(|| SimError::Unsupported {
                stepper: self.label(),
                reason: format!(
                    "bilateral constraint `{}` is rigid; give it a `stiffness`",
                    row.name
                ),
            })?;
            let lambda = -k * row.phi - row.damping.unwrap_or(0.0) * row.row.dot(v);
            total.axpy(lambda, &row.row, 1.0);
        }
        for row in &snap.limits {
            if row.phi >= 0.0 {
                continue;
            }
            let k = row.stiffness.ok_or_else(|| SimError::Unsupported {
                stepper: self.label(),
                reason: format!("joint limit `{}` is rigid; give it a `stiffness`", row.name),
            })?;
            let lambda = normal_force(
                nonsmooth_core::ComplianceLaw::Linear,
                k,
                row.damping.unwrap_or(0.0),
                row.phi,
                row.row.dot(v),
            );
            total.axpy(lambda, &row.row, 1.0);
        }
        Ok(total)
    }
}

impl Stepper for PenaltyStepper {
    fn name(&self) -> &'static str {
        self.label()
    }

    fn advance(&mut self, step: &Step<'_>) -> Result<State, SimError> {
        let (model, state, h) = (step.model, step.state, step.h);
        let snap = ContactSnapshot::from_state(model, state)?;
        let mut force = &snap.forces + self.constraint_force(model, &snap)?;
        let mut mass = snap.mass_matrix.clone();
        step.input
            .apply_implicit(&mut mass, &mut force, &state.q, &state.v, h);
        let chol = crate::free_motion::factor_mass(&mass, state.t)?;
        let vdot = chol.solve(&force);
        let v1 = &state.v + vdot * h;
        let q1 = match self.integrator {
            PenaltyIntegrator::ExplicitEuler => crate::pipeline::integrate(step, &state.v),
            PenaltyIntegrator::SymplecticEuler => crate::pipeline::integrate(step, &v1),
        };
        crate::pipeline::finish(self.label(), step, q1, v1)
    }
}
