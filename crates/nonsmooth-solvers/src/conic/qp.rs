//! Convenience front ends: quadratic programs and second-order-cone programs with dense
//! (nalgebra) data. Each lowers to a [`ConicProblem`] through [`ConicProblemBuilder`].

use nalgebra::{DMatrix, DVector};

use super::problem::{Cone, ConicProblem, ConicProblemBuilder};
use super::solve::{ConicOptions, ConicSolution};
use crate::status::SolverError;

/// Convex quadratic program (Nocedal & Wright, *Numerical Optimization*, ch. 16):
///
/// ```text
/// minimize ½ xᵀ P x + cᵀ x   s.t.  A_eq x = b_eq,  G x ≤ h,  lower ≤ x ≤ upper.
/// ```
///
/// Rows of the lowered problem (and so of `s` and `z` in the solution) come in this order:
/// equalities, inequalities, then one row per finite lower bound (`−x_j ≤ −l_j`) and one per
/// finite upper bound (`x_j ≤ u_j`), each by increasing `j`.
#[derive(Debug, Clone, PartialEq)]
pub struct Qp {
    /// Symmetric positive semidefinite `n × n` Hessian.
    pub p: DMatrix<f64>,
    /// Linear cost (length `n`).
    pub c: DVector<f64>,
    /// Equalities `(A_eq, b_eq)`.
    pub equalities: Option<(DMatrix<f64>, DVector<f64>)>,
    /// Inequalities `(G, h)` meaning `G x ≤ h`.
    pub inequalities: Option<(DMatrix<f64>, DVector<f64>)>,
    /// Bounds `(lower, upper)`; entries may be ∓∞.
    pub bounds: Option<(DVector<f64>, DVector<f64>)>,
}

impl Qp {
    /// Unconstrained QP `min ½xᵀPx + cᵀx`; add constraints with the `with_*` methods.
    pub fn new(p: DMatrix<f64>, c: DVector<f64>) -> Self {
        Self {
            p,
            c,
            equalities: None,
            inequalities: None,
            bounds: None,
        }
    }

    /// Linear program `min cᵀx` (`P = 0`).
    pub fn lp(c: DVector<f64>) -> Self {
        let n = c.len();
        Self::new(DMatrix::zeros(n, n), c)
    }

    /// Sets the equalities `A x = b`.
    pub fn with_equalities(mut self, a: DMatrix<f64>, b: DVector<f64>) -> Self {
        self.equalities = Some((a, b));
        self
    }

    /// Sets the inequalities `G x ≤ h`.
    pub fn with_inequalities(mut self, g: DMatrix<f64>, h: DVector<f64>) -> Self {
        self.inequalities = Some((g, h));
        self
    }

    /// Sets the bounds `lower ≤ x ≤ upper`.
    pub fn with_bounds(mut self, lower: DVector<f64>, upper: DVector<f64>) -> Self {
        self.bounds = Some((lower, upper));
        self
    }

    /// The builder holding this QP, to which further cones may be appended.
    pub fn builder(&self) -> Result<ConicProblemBuilder, SolverError> {
        let mut b = ConicProblemBuilder::new(self.c.len())
            .quadratic_dense(&self.p)?
            .linear(self.c.as_slice())?;
        if let Some((a, rhs)) = &self.equalities {
            b = b.equalities_dense(a, rhs.as_slice())?;
        }
        if let Some((g, h)) = &self.inequalities {
            b = b.inequalities_dense(g, h.as_slice())?;
        }
        if let Some((l, u)) = &self.bounds {
            b = b.bounds(l.as_slice(), u.as_slice())?;
        }
        Ok(b)
    }

    /// Lowers to the standard conic form (validating every dimension and value).
    pub fn to_problem(&self) -> Result<ConicProblem, SolverError> {
        self.builder()?.build()
    }

    /// Lowers and solves.
    pub fn solve(&self, options: &ConicOptions) -> Result<ConicSolution, SolverError> {
        self.to_problem()?.solve(options)
    }
}

/// One second-order-cone constraint of an [`Socp`].
#[derive(Debug, Clone, PartialEq)]
pub enum SocConstraint {
    /// `‖M x + m‖₂ ≤ cᵀx + d` (Lobo et al. 1998, eq. (1)).
    Affine {
        /// `k × n` matrix `M`.
        m: DMatrix<f64>,
        /// Offset `m` (length `k`).
        m0: DVector<f64>,
        /// Linear term `c` (length `n`).
        c: DVector<f64>,
        /// Offset `d`.
        d: f64,
    },
    /// Raw cone block `b − A x ∈ SOC(k)` (Clarabel's form, first entry the norm bound).
    Raw {
        /// `k × n` matrix `A`.
        a: DMatrix<f64>,
        /// Right-hand side `b` (length `k`).
        b: DVector<f64>,
    },
}

/// QP plus second-order-cone constraints (Lobo et al. 1998). Rows of the lowered problem:
/// those of [`Qp`], then each cone block in order (`k + 1` rows for an affine constraint with
/// `k`-row `M`, the first being `cᵀx + d`).
#[derive(Debug, Clone, PartialEq)]
pub struct Socp {
    /// Objective and linear constraints.
    pub qp: Qp,
    /// Second-order-cone constraints.
    pub cones: Vec<SocConstraint>,
}

impl Socp {
    /// SOCP with the given QP part and cones.
    pub fn new(qp: Qp, cones: Vec<SocConstraint>) -> Self {
        Self { qp, cones }
    }

    /// The builder holding this SOCP.
    pub fn builder(&self) -> Result<ConicProblemBuilder, SolverError> {
        let mut b = self.qp.builder()?;
        for c in &self.cones {
            b = match c {
                SocConstraint::Affine { m, m0, c, d } => {
                    b.soc_affine(m, m0.as_slice(), c.as_slice(), *d)?
                }
                SocConstraint::Raw { a, b: rhs } => {
                    b.constraint_dense(Cone::SecondOrder(a.nrows()), a, rhs.as_slice())?
                }
            };
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
