//! Forward steps of the same discrete contact models, used to check the right-inverse
//! property (check 1 of docs/decisions/004-inverse-dynamics.md): applying the ID torques u for one
//! step Δt must reproduce `P v⁺ = q̇_des`.

use nalgebra::DVector;

use crate::elimination::Elimination;
use crate::error::ControlError;
use crate::lcp::{coulomb_lcp_from, lemke_regularized, ppm};
use crate::problem::IdProblem;
use crate::{IdSolution, Variant};

/// Result of a forward step.
#[derive(Debug, Clone, PartialEq)]
pub struct ForwardStep {
    /// v⁺.
    pub v_plus: DVector<f64>,
    /// Normal impulses.
    pub normal_impulses: DVector<f64>,
}

/// The free velocity under torques u: `v⁻ + Δt M⁻¹(f_ext + Pᵀu)`.
pub fn driven_velocity(problem: &IdProblem, torques: &DVector<f64>) -> DVector<f64> {
    problem.free_velocity()
        + problem.mass_inverse() * (problem.actuation() * torques) * problem.dt()
}

fn check_len(problem: &IdProblem, torques: &DVector<f64>) -> Result<(), ControlError> {
    if torques.len() != problem.nu() {
        return Err(ControlError::DimensionMismatch {
            what: "torques",
            expected: problem.nu(),
            got: torques.len(),
        });
    }
    Ok(())
}

fn failed(stage: &'static str, reason: String) -> ControlError {
    ControlError::SolverFailed {
        variant: "forward",
        stage,
        status: None,
        residuals: Default::default(),
        reason,
    }
}

/// Forward Anitescu–Potra step (Stewart–Trinkle/AP time stepping with the k = 4 pyramid):
/// the LCP of [`crate::coulomb_lcp`] with no eliminated rows (`M̃⁻¹ = M⁻¹`, `v̂` = the driven
/// velocity), solved by Lemke.
///
/// # Errors
/// [`ControlError::SolverFailed`] when Lemke fails.
pub fn coulomb_step(
    problem: &IdProblem,
    torques: &DVector<f64>,
) -> Result<ForwardStep, ControlError> {
    check_len(problem, torques)?;
    let vf = driven_velocity(problem, torques);
    let elim = Elimination::build(problem, &vf, None, false)?;
    let (q, r) = coulomb_lcp_from(problem, &elim);
    let s = lemke_regularized(&q, &r, &Default::default())
        .map_err(|e| failed("forward coulomb lemke", e.to_string()))?;
    let n = problem.num_contacts();
    let rmat = crate::qp::contact_map(problem);
    let g = &rmat * s.z.rows(0, rmat.ncols());
    Ok(ForwardStep {
        v_plus: &elim.vhat + &elim.mt * g,
        normal_impulses: s.z.rows(0, n).into_owned(),
    })
}

/// Forward no-slip step (eqs 40–41 with u given): Algorithm 1 on the tangent rows alone,
/// then the normal LCP `N M̃⁻¹ Nᵀ` by PPM (Lemke fallback). v⁺ is unique.
///
/// # Errors
/// [`ControlError::SolverFailed`] when the LCP solve fails.
pub fn noslip_step(
    problem: &IdProblem,
    torques: &DVector<f64>,
) -> Result<ForwardStep, ControlError> {
    check_len(problem, torques)?;
    let vf = driven_velocity(problem, torques);
    let elim = Elimination::build(problem, &vf, None, true)?;
    let nmat = problem.normal_matrix();
    let r = &nmat * &elim.vhat + problem.gaps() / problem.dt();
    let z = match ppm(&nmat, &elim.mt, &r, None, 200) {
        Ok(o) => o.z,
        Err(_) => {
            let q = &nmat * &elim.mt * nmat.transpose();
            let q = (&q + q.transpose()) * 0.5;
            lemke_regularized(&q, &r, &Default::default())
                .map_err(|e| failed("forward no-slip lemke", e.to_string()))?
                .z
        }
    };
    Ok(ForwardStep {
        v_plus: &elim.vhat + &elim.mt * (nmat.transpose() * &z),
        normal_impulses: z,
    })
}

/// The step with the ID's own predicted impulses held fixed (the "torque-determining part
/// R z" of check 1 of docs/decisions/004-inverse-dynamics.md, used for the QP variants, whose
/// forward maximal-dissipation model is not solved here): `v⁺ = v⁻ + M⁻¹(Δt f_ext + Nᵀf_N + Tᵀf_T +
/// Δt Pᵀu)`.
pub fn step_with_impulses(problem: &IdProblem, sol: &IdSolution) -> DVector<f64> {
    let n = problem.num_contacts();
    let ntan = problem.ntan();
    let mut g = problem.normal_matrix().transpose() * &sol.normal_impulses;
    for j in 0..ntan {
        let tj = DVector::from_iterator(n, (0..n).map(|i| sol.tangent_impulses[i * ntan + j]));
        g += problem.tangent_matrix(j).transpose() * tj;
    }
    driven_velocity(problem, &sol.torques) + problem.mass_inverse() * g
}

/// Applies `sol.torques` in a forward step of the variant's own contact model and returns
/// v⁺: [`noslip_step`] for ID_LCP,∞, [`coulomb_step`] for ID_LCP,μ and
/// [`step_with_impulses`] for the QP variants.
///
/// # Errors
/// As the forward steps.
pub fn forward_step(
    problem: &IdProblem,
    variant: Variant,
    sol: &IdSolution,
) -> Result<DVector<f64>, ControlError> {
    match variant {
        Variant::LcpNoSlip => Ok(noslip_step(problem, &sol.torques)?.v_plus),
        Variant::LcpCoulomb => Ok(coulomb_step(problem, &sol.torques)?.v_plus),
        Variant::QpNoSlip | Variant::QpCoulomb | Variant::QpCoulombOneStage => {
            Ok(step_with_impulses(problem, sol))
        }
    }
}
