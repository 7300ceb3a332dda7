//! The grasp testbed's ID(tᵢ) controller: the paper's inverse dynamics (§§4–6) with the
//! grasp's two free choices made explicit — the squeeze (the internal fingertip force that
//! the contact model leaves free or sets to its minimum) and, for the QP variants, the box
//! motion Stage I aims at (carried by the hand instead of braked to rest).

use nalgebra::DVector;
use nonsmooth_core::ContactSnapshot;

use crate::controllers::{check_reference, AccelerationGains, ControlInput, Controller};
use crate::error::ControlError;
use crate::{ContactRow, Desired, IdOptions, IdProblem, IdSolution, InverseDynamics, Variant};

/// Fingertip preload (N per active fingertip contact) that the grasp controllers apply as a
/// known internal force on top of the contact forces they solve for ([`GraspId`]).
///
/// It makes the no-slip predictions realizable in the μ = 100 plant with a wide margin: the
/// largest tangential fingertip force the no-slip controllers predict while carrying the box
/// is about half the box weight on each of two fingertips, 6.4 N, which at μ = 100 needs
/// 0.064 N of normal force. It is deliberately below the static squeeze at μ = 1,
/// m g / (4 μ) = 3.18 N: the preload alone holds 4 · 1 N = 4 N of the 12.7 N weight, so the
/// low-friction task still tests the squeeze the controller plans (`docs/grasping.md`).
pub const GRASP_PRELOAD: f64 = 1.0;

/// ID(tᵢ) of one [`Variant`] for the grasp: joint PD folded into θ̈_des
/// ([`AccelerationGains`]), the active fingertip–box contacts (gap ≤
/// [`GraspId::active_gap`]) with μ capped at [`GraspId::friction_cap`], and two grasp terms:
///
/// - **Preload** ([`GraspId::preload`], N per contact): a normal force `f_p` at every
///   active contact is treated as known (it enters f_ext as `Σᵢ nᵢ f_p`), and the ID solves
///   for the contact impulses on top of it; the fingers' torques then include the squeeze.
///   The contact model leaves the internal force of a grasp free (no slip: any internal
///   force is admissible; QP: Stage II picks the least squeeze) or zero (normal
///   complementarity with the fingers held still). The predicted friction cone applies to
///   the solved part only, so the preload is a margin the controller does not rely on.
/// - **Carried box** ([`GraspId::carry_box`], QP variants): Stage I minimizes
///   `½ (v⁺ − c)ᵀ M (v⁺ − c)` instead of `½ v⁺ᵀ M v⁺`, where `c` is zero on the arm and on
///   the box is the velocity at which the fingertips' planned motion (`P v⁺ = q̇_des`)
///   carries the box without slip (least squares over the contacts' normal and tangent
///   rows). M is block diagonal between the arm and the free box, so this is the box's
///   kinetic energy relative to the hand: the minimum is the box carried, where the
///   paper's objective (the kinetic energy in the world frame) makes the box's optimal
///   motion "at rest" and the fingertips slide along it as soon as the hand moves.
///   Implemented exactly by a change of variables `w = v − c` (c constant over the step):
///   the dynamics and `P w⁺ = q̇_des` are unchanged (P c = 0), the non-penetration rows
///   `N v⁺ ≥ −φ/Δt` become `N w⁺ ≥ −(φ + Δt N c)/Δt`, and the QP has no tangential
///   velocity rows.
///
/// With both off it is the paper's controller (the same as
/// [`crate::controllers::IdController`] with the grasp's contact set).
#[derive(Debug, Clone)]
pub struct GraspId {
    name: String,
    id: InverseDynamics,
    /// Feedback gains accumulated into θ̈_des.
    pub gains: AccelerationGains,
    /// Largest μ the controller assumes (1.5, the authors' Pacer cap).
    pub friction_cap: f64,
    /// Contacts with a gap above this (m) are left out (0.1 mm).
    pub active_gap: f64,
    /// Fingertip preload (N per active contact).
    pub preload: f64,
    /// Aim Stage I of the QP variants at the box carried by the hand.
    pub carry_box: bool,
    /// Number of failed solves (the previous torques were held).
    pub failures: usize,
    last: Option<DVector<f64>>,
    solution: Option<(IdProblem, IdSolution)>,
}

impl GraspId {
    /// The paper's ID(tᵢ) of `variant` on the grasp (no preload, world-frame Stage I).
    pub fn paper(name: &str, variant: Variant) -> Self {
        Self {
            name: name.to_string(),
            id: InverseDynamics::new(IdOptions::new(variant)),
            gains: AccelerationGains::default(),
            friction_cap: 1.5,
            active_gap: 1e-4,
            preload: 0.0,
            carry_box: false,
            failures: 0,
            last: None,
            solution: None,
        }
    }

    /// The testbed's ID(tᵢ) of `variant`: [`GRASP_PRELOAD`] and the carried-box Stage I.
    pub fn new(name: &str, variant: Variant) -> Self {
        Self {
            preload: GRASP_PRELOAD,
            carry_box: true,
            ..Self::paper(name, variant)
        }
    }

    /// The variant.
    pub fn variant(&self) -> Variant {
        self.id.options().variant
    }

    /// The (original-coordinate) problem and solution of the last successful call: the
    /// solution's impulses and forces include the preload and its v⁺ the carried-box shift.
    pub fn last_solution(&self) -> Option<(&IdProblem, &IdSolution)> {
        self.solution.as_ref().map(|(p, s)| (p, s))
    }

    /// Solves one step for the desired motion of the actuated DOF at `snapshot`.
    ///
    /// # Errors
    /// [`ControlError`] from the problem construction or the solve.
    pub fn solve(
        &mut self,
        snapshot: &ContactSnapshot<f64>,
        desired: &Desired,
        dt: f64,
    ) -> Result<(IdProblem, IdSolution), ControlError> {
        let base = IdProblem::from_snapshot(snapshot, dt)?;
        let rows: Vec<ContactRow> = base
            .contacts()
            .iter()
            .filter(|c| c.gap <= self.active_gap)
            .cloned()
            .map(|mut c| {
                c.friction = c.friction.min(self.friction_cap);
                c
            })
            .collect();
        let problem = base.with_contact_rows(rows)?;
        let qdes = problem.desired_velocity(desired)?;
        let carry = self.carry_box
            && matches!(self.variant(), Variant::QpCoulomb | Variant::QpNoSlip)
            && problem.num_contacts() > 0;
        let c = if carry {
            carried_velocity(&problem, &qdes)?
        } else {
            DVector::zeros(problem.nv())
        };
        let mut forces = problem.forces().clone();
        for row in problem.contacts() {
            forces += &row.normal_row * self.preload;
        }
        let shifted_rows = problem
            .contacts()
            .iter()
            .map(|row| ContactRow {
                gap: row.gap + dt * row.normal_row.dot(&c),
                ..row.clone()
            })
            .collect();
        let shifted = IdProblem::from_parts(
            problem.mass_matrix().clone(),
            forces,
            problem.actuation().clone(),
            problem.velocity() - &c,
            shifted_rows,
            dt,
        )?;
        let mut sol = self.id.solve(&shifted, &Desired::Velocity(qdes))?;
        sol.v_plus += &c;
        let preload_impulse = self.preload * dt;
        sol.normal_impulses.add_scalar_mut(preload_impulse);
        sol.normal_forces.add_scalar_mut(self.preload);
        Ok((problem, sol))
    }
}

/// The box velocity at which the arm's next velocity carries it without slip: with `c` zero
/// on the actuated DOF and `v_a = Pᵀ q̇_des`, the least-squares solution (minimum norm on
/// directions no contact row sees) of `G (v_a + c) = 0` over the unactuated DOF, G the
/// stacked normal and tangent rows of the contacts.
fn carried_velocity(
    problem: &IdProblem,
    qdes: &DVector<f64>,
) -> Result<DVector<f64>, ControlError> {
    let nv = problem.nv();
    let act = problem.actuation();
    let va = act * qdes;
    let free: Vec<usize> = (0..nv)
        .filter(|&i| act.row(i).iter().all(|x| *x == 0.0))
        .collect();
    let ntan = problem.ntan();
    let nrows = problem.num_contacts() * (1 + ntan);
    let mut g = nalgebra::DMatrix::zeros(nrows, free.len());
    let mut rhs = DVector::zeros(nrows);
    let mut r = 0;
    for row in problem.contacts() {
        let mut put = |x: DVector<f64>| {
            for (k, &i) in free.iter().enumerate() {
                g[(r, k)] = x[i];
            }
            rhs[r] = -x.dot(&va);
            r += 1;
        };
        put(row.normal_row.clone());
        for j in 0..ntan {
            put(row.tangent_rows.row(j).transpose());
        }
    }
    let svd = g.svd(true, true);
    let tol = 1e-9 * svd.singular_values.max();
    let x = svd
        .solve(&rhs, tol)
        .map_err(|e| ControlError::InvalidInput(format!("carried box velocity: {e}")))?;
    let mut c = DVector::zeros(nv);
    for (k, &i) in free.iter().enumerate() {
        c[i] = x[k];
    }
    Ok(c)
}

impl Controller for GraspId {
    fn name(&self) -> &str {
        &self.name
    }

    fn control(&mut self, input: &ControlInput<'_>) -> Result<DVector<f64>, ControlError> {
        check_reference(input.model, input.reference)?;
        let qdd = self.gains.desired_acceleration(input.model, input);
        match self.solve(input.snapshot, &Desired::Acceleration(qdd), input.dt) {
            Ok((problem, sol)) => {
                let u = sol.torques.clone();
                self.last = Some(u.clone());
                self.solution = Some((problem, sol));
                Ok(u)
            }
            Err(e) => {
                self.failures += 1;
                self.solution = None;
                self.id.reset();
                match &self.last {
                    Some(u) => Ok(u.clone()),
                    None => Err(e),
                }
            }
        }
    }

    fn predicted_normal_force(&self) -> Option<f64> {
        self.solution.as_ref().map(|(_, s)| s.normal_forces.sum())
    }

    fn reset(&mut self) {
        self.id.reset();
        self.last = None;
        self.solution = None;
        self.failures = 0;
    }
}
