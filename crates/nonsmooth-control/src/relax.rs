//! The §4.5 consistency relaxation (eqs 46–51) with erratum E8: the friction impulses are
//! variables and every tangent row (not only N) is constrained.
//!
//! Variables x = [v⁺ (m); f (force units, (k+1)n); u (nu)]:
//!
//! ```text
//! min ½‖P v⁺ − q̇_des‖² + ε/2 (‖f‖² + ‖u‖²)
//! s.t. M v⁺ − Δt R f − Δt Pᵀ u = M v*,   N v⁺ ≥ −φ/Δt + δ,   f ≥ 0,
//!      μᵢ f_N,i ≥ Σ f_F,i (Coulomb variants),   S v⁺ = T v⁺ = 0 (ID_LCP,∞)
//! ```
//!
//! with ε = 1e-12 (uniqueness; the solve is repeated with ε = 1e-9 and then 1e-6 when the
//! interior point does not converge on the nearly singular Hessian; any ε gives a realizable
//! target, ε only picks among the closest ones) and a margin δ = 1e-9·(1 + ‖q̇_des‖∞) so that the re-solve
//! at the realized target is strictly feasible. Returns the realizable target P v⁺.

use nalgebra::{DMatrix, DVector};
use nonsmooth_solvers::conic::Qp;

use crate::error::ControlError;
use crate::problem::IdProblem;
use crate::qp::{contact_map, friction_rows};
use crate::{IdOptions, Variant};

pub(crate) fn relax(
    problem: &IdProblem,
    qdes: &DVector<f64>,
    opts: &IdOptions,
) -> Result<DVector<f64>, ControlError> {
    let variant = opts.variant;
    let (m, nu, n) = (problem.nv(), problem.nu(), problem.num_contacts());
    let dt = problem.dt();
    let rmat = contact_map(problem);
    let nz = rmat.ncols();
    let nx = m + nz + nu;
    let p = problem.selection();
    let mut hess = DMatrix::zeros(nx, nx);
    hess.view_mut((0, 0), (m, m))
        .copy_from(&(p.transpose() * p));
    let mut lin = DVector::zeros(nx);
    lin.rows_mut(0, m).copy_from(&(-(p.transpose() * qdes)));
    // Equalities: dynamics (+ no-slip rows).
    let noslip = variant == Variant::LcpNoSlip;
    let ntan = problem.ntan();
    let neq = m + if noslip { n * ntan } else { 0 };
    let mut aeq = DMatrix::zeros(neq, nx);
    aeq.view_mut((0, 0), (m, m))
        .copy_from(problem.mass_matrix());
    aeq.view_mut((0, m), (m, nz)).copy_from(&(-&rmat * dt));
    aeq.view_mut((0, m + nz), (m, nu))
        .copy_from(&(-problem.actuation() * dt));
    let mut beq = DVector::zeros(neq);
    beq.rows_mut(0, m)
        .copy_from(&(problem.mass_matrix() * problem.free_velocity()));
    if noslip {
        for (i, c) in problem.contacts().iter().enumerate() {
            for j in 0..ntan {
                aeq.view_mut((m + i * ntan + j, 0), (1, m))
                    .copy_from(&c.tangent_rows.row(j));
            }
        }
    }
    let coulomb = variant.coulomb();
    let nin = n + nz + if coulomb { n } else { 0 };
    let mut g = DMatrix::zeros(nin, nx);
    let mut h = DVector::zeros(nin);
    let delta = 1e-9 * (1.0 + qdes.amax());
    g.view_mut((0, 0), (n, m))
        .copy_from(&(-problem.normal_matrix()));
    h.rows_mut(0, n)
        .copy_from(&(problem.gaps() / dt).map(|x| x - delta));
    g.view_mut((n, m), (nz, nz))
        .copy_from(&(-DMatrix::<f64>::identity(nz, nz)));
    if coulomb {
        g.view_mut((n + nz, m), (n, nz))
            .copy_from(&friction_rows(problem));
    }
    let mut last_error = String::new();
    for eps in [1e-12, 1e-9, 1e-6] {
        for i in m..nx {
            hess[(i, i)] = eps;
        }
        let qp = Qp::new(hess.clone(), lin.clone())
            .with_equalities(aeq.clone(), beq.clone())
            .with_inequalities(g.clone(), h.clone());
        match qp.solve(&opts.conic) {
            Ok(sol) => {
                let v = sol.x.rows(0, m).into_owned();
                return Ok(p * v);
            }
            Err(e) => last_error = e.to_string(),
        }
    }
    Err(ControlError::SolverFailed {
        variant: variant.name(),
        stage: "relaxation (§4.5)",
        status: None,
        residuals: Default::default(),
        reason: last_error,
    })
}
