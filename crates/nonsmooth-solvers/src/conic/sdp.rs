//! Semidefinite constraints (feature `sdp`): linear matrix inequalities lowered onto
//! Clarabel's PSD triangle cone.
//!
//! A matrix variable is stored in the svec layout of Clarabel's PSD triangle cone
//! ([`super::svec`](mod@super::svec)).

use nalgebra::DMatrix;

use super::problem::{
    check_finite, check_len, Cone, ConicProblem, ConicProblemBuilder, SOLVER, SYMMETRY_TOL,
};
use super::qp::Qp;
use super::solve::{ConicOptions, ConicSolution};
use super::svec::svec;
use crate::status::SolverError;

/// Linear matrix inequality `F₀ + Σᵢ xᵢ Fᵢ ⪰ 0` with symmetric `Fᵢ` (Vandenberghe & Boyd 1996,
/// eq. (1)). `f.len()` must equal the number of variables.
#[derive(Debug, Clone, PartialEq)]
pub struct Lmi {
    /// Constant term `F₀`.
    pub f0: DMatrix<f64>,
    /// Coefficient matrices `F₁ … F_n`.
    pub f: Vec<DMatrix<f64>>,
}

fn check_symmetric(m: &DMatrix<f64>, what: &'static str) -> Result<(), SolverError> {
    check_finite(m.as_slice(), what)?;
    let scale = 1.0 + m.amax();
    for j in 0..m.ncols() {
        for i in 0..j {
            if (m[(i, j)] - m[(j, i)]).abs() > SYMMETRY_TOL * scale {
                return Err(SolverError::InvalidInput {
                    solver: SOLVER,
                    reason: format!("{what} is not symmetric at ({i}, {j})"),
                });
            }
        }
    }
    Ok(())
}

impl ConicProblemBuilder {
    /// Appends the LMI `F₀ + Σᵢ xᵢ Fᵢ ⪰ 0` as a PSD-triangle block
    /// `s = svec(F₀ + Σ xᵢ Fᵢ) = b − A x`, i.e. `b = svec F₀`, column `i` of `A` = `−svec Fᵢ`.
    pub fn lmi(self, lmi: &Lmi) -> Result<Self, SolverError> {
        let k = lmi.f0.nrows();
        check_len(k, lmi.f0.ncols(), "columns of LMI F0")?;
        check_len(
            self.num_vars(),
            lmi.f.len(),
            "number of LMI coefficient matrices",
        )?;
        check_symmetric(&lmi.f0, "LMI F0")?;
        let mut t = Vec::new();
        for (col, fi) in lmi.f.iter().enumerate() {
            check_len(k, fi.nrows(), "rows of LMI coefficient matrix")?;
            check_len(k, fi.ncols(), "columns of LMI coefficient matrix")?;
            check_symmetric(fi, "LMI coefficient matrix")?;
            for (row, v) in svec(fi).iter().enumerate() {
                if *v != 0.0 {
                    t.push((row, col, -v));
                }
            }
        }
        self.constraint_triplets(Cone::PsdTriangle(k), &t, svec(&lmi.f0).as_slice())
    }
}

/// QP plus linear matrix inequalities: `min ½xᵀPx + cᵀx` s.t. the [`Qp`] constraints and
/// `F₀ʲ + Σᵢ xᵢ Fᵢʲ ⪰ 0` for every LMI `j`. Rows of the lowered problem: those of the QP,
/// then one PSD-triangle block per LMI (the svec layout, [`super::svec`](mod@super::svec)).
#[derive(Debug, Clone, PartialEq)]
pub struct Sdp {
    /// Objective and linear constraints.
    pub qp: Qp,
    /// Semidefinite constraints.
    pub lmis: Vec<Lmi>,
}

impl Sdp {
    /// SDP with the given QP part and LMIs.
    pub fn new(qp: Qp, lmis: Vec<Lmi>) -> Self {
        Self { qp, lmis }
    }

    /// The builder holding this SDP.
    pub fn builder(&self) -> Result<ConicProblemBuilder, SolverError> {
        let mut b = self.qp.builder()?;
        for l in &self.lmis {
            b = b.lmi(l)?;
        }
        Ok(b)
    }

    /// Lowers to the standard conic form.
    pub fn to_problem(&self) -> Result<ConicProblem, SolverError> {
        self.builder()?.build()
    }

    /// Lowers and solves.
    pub fn solve(&self, options: &ConicOptions) -> Result<ConicSolution, SolverError> {
        self.to_problem()?.solve(options)
    }
}
