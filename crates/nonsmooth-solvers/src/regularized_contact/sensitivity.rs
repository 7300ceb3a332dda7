//! Derivatives of the solution of the step's equations with respect to the problem's data,
//! by the implicit function theorem at a solution.
//!
//! The solution `v` satisfies `F(v; θ) = A (v − v*) − Jᵀ γ(v; θ) = 0` (`semismooth.rs`), so
//! where `F` is differentiable
//!
//! ```text
//! ∂v/∂θ = −H⁻¹ ∂F/∂θ,   H = A + Jᵀ G J,   G_c = (∂Γ_c/∂y) R_c⁻¹,
//! ```
//!
//! `H` the element of the generalized Jacobian that the Newton iteration factors, here
//! factored once at the solution and reused for every right-hand side (S. Dirkse and
//! M. Ferris's sensitivity of complementarity problems; for contact, T. Howell et al.,
//! "Dojo: a differentiable physics engine for robotics", 2022, §IV, with the interior-point
//! system replaced by this Jacobian). With `y_c = −R_c⁻¹ (J_c v − v̂_c)`:
//!
//! - free velocity: `∂F/∂v* = −A`, so `∂v/∂v* = H⁻¹ A`;
//! - bias velocity of constraint `c`: `∂γ_c/∂v̂_c = G_c`, so `∂v/∂v̂_c = H⁻¹ J_cᵀ G_c`;
//! - friction coefficient `μ` of a cone or Coulomb constraint (or the radius of a disk or
//!   interval): `∂v/∂μ = H⁻¹ J_cᵀ ∂Γ_c/∂μ` at fixed `y`, nonzero on a sliding contact only:
//!   Coulomb kinds `∂γ_t/∂μ = y_n t̂` (`γ_t = μ y_n t̂`, `coulomb.rs`); cones, with
//!   `a = R_t/R_n`, `γ_n = (y_n + μ a y_r)/(1 + μ² a)` and `γ_t = μ γ_n t̂`
//!   (`projection.rs`); disks `∂γ_t/∂ρ = t̂`.
//!
//! The impulses follow from the velocity: `dγ_c = −G_c (J_c dv − dv̂_c) + ∂Γ_c/∂θ`.
//!
//! Exact where no constraint sits on a kink of its map (a change of mode: separation,
//! stiction, sliding); on a kink the derivative is that of the region named first in the
//! map's documentation, one of the one-sided derivatives. [`Sensitivity::modes`] gives each
//! constraint's mode, so that a caller can tell.

use nalgebra::{DMatrix, DVector};

use super::hessian::BlockScratch;
use super::jacobian::{JacobianSolver, SemismoothWorkspace};
use super::problem::{ConstraintKind, RegularizedContactProblem, SOLVER};
use super::projection::project;
use super::region::Region;
use crate::status::SolverError;

/// The mode of one constraint at a solution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConstraintMode {
    /// No impulse (a separating contact, an inactive unilateral row).
    Separated,
    /// The impulse inside its set: a sticking contact, an active unilateral row, any
    /// bilateral row, friction below its bound.
    Sticking,
    /// The impulse on the boundary of a friction set: a sliding contact.
    Sliding,
}

impl ConstraintMode {
    /// The mode's name: `"separated"`, `"sticking"` or `"sliding"`.
    pub fn label(self) -> &'static str {
        match self {
            ConstraintMode::Separated => "separated",
            ConstraintMode::Sticking => "sticking",
            ConstraintMode::Sliding => "sliding",
        }
    }
}

impl From<Region> for ConstraintMode {
    fn from(r: Region) -> Self {
        match r {
            Region::Separated => ConstraintMode::Separated,
            Region::Inside => ConstraintMode::Sticking,
            Region::Sliding => ConstraintMode::Sliding,
        }
    }
}

/// The linearization of a problem's equations at a point `v` (normally its solution),
/// factored once: derivatives of the solution with respect to the free velocity, the bias
/// velocities and the friction coefficients (module documentation).
pub struct Sensitivity<'a> {
    p: &'a RegularizedContactProblem,
    jac: JacobianSolver<'a>,
    /// Per constraint: `y_c`, the `G_c` block (row-major) and the mode.
    y: Vec<f64>,
    gamma: Vec<f64>,
    v: DVector<f64>,
    g: Vec<f64>,
    g_off: Vec<usize>,
    modes: Vec<ConstraintMode>,
}

impl std::fmt::Debug for Sensitivity<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sensitivity")
            .field("n", &self.p.n)
            .field("modes", &self.modes)
            .finish()
    }
}

/// Linearizes `problem`'s equations at `v` and factors `H` (dense below
/// `dense_threshold` velocities, else sparse with the analysis kept in `workspace`).
///
/// Errors: `v` of the wrong length or not finite ([`SolverError::DimensionMismatch`],
/// [`SolverError::NonFinite`]); `H` singular at `v` ([`SolverError::Failed`]).
pub fn sensitivity<'a>(
    problem: &'a RegularizedContactProblem,
    v: &DVector<f64>,
    dense_threshold: usize,
    workspace: &'a mut SemismoothWorkspace,
) -> Result<Sensitivity<'a>, SolverError> {
    let p = problem;
    if v.len() != p.n {
        return Err(SolverError::DimensionMismatch {
            solver: SOLVER,
            what: "v",
            expected: p.n,
            got: v.len(),
        });
    }
    if !v.iter().all(|x| x.is_finite()) {
        return Err(SolverError::NonFinite {
            solver: SOLVER,
            what: "v",
        });
    }
    let mut y = vec![0.0; p.m_rows];
    let mut gamma = vec![0.0; p.m_rows];
    let mut g_off = Vec::with_capacity(p.cons.len());
    let mut len = 0;
    for c in &p.cons {
        g_off.push(len);
        len += c.rows * c.rows;
    }
    let mut g = vec![0.0; len];
    let mut active = vec![false; p.cons.len()];
    let mut modes = Vec::with_capacity(p.cons.len());
    let mut vc = [0.0; 3];
    for (ci, c) in p.cons.iter().enumerate() {
        let rr = c.row..c.row + c.rows;
        c.apply(v.as_slice(), &mut vc[..c.rows]);
        for (k, i) in rr.clone().enumerate() {
            y[i] = -(vc[k] - p.v_hat[i]) / p.r[i];
        }
        let go = g_off[ci];
        let region = project(
            c.kind,
            &y[rr.clone()],
            &p.r[rr.clone()],
            &mut gamma[rr],
            Some(&mut g[go..go + c.rows * c.rows]),
        );
        active[ci] = region != Region::Separated;
        modes.push(ConstraintMode::from(region));
    }
    let mut jac = JacobianSolver::new(p, dense_threshold, workspace)?;
    if !jac.factor(p, &g, &g_off, &active, &mut BlockScratch::default()) {
        return Err(SolverError::Failed {
            solver: SOLVER,
            reason: "the linearization H = A + JᵀGJ is singular at this point".into(),
        });
    }
    Ok(Sensitivity {
        p,
        jac,
        y,
        gamma,
        v: v.clone(),
        g,
        g_off,
        modes,
    })
}

impl Sensitivity<'_> {
    /// The mode of each constraint, in constraint order.
    pub fn modes(&self) -> &[ConstraintMode] {
        &self.modes
    }

    /// `H⁻¹ b` for each column `b` of `rhs` (`n` rows).
    pub fn solve(&mut self, rhs: &DMatrix<f64>) -> Result<DMatrix<f64>, SolverError> {
        let n = self.p.n;
        if rhs.nrows() != n {
            return Err(SolverError::DimensionMismatch {
                solver: SOLVER,
                what: "right-hand side rows",
                expected: n,
                got: rhs.nrows(),
            });
        }
        let mut out = rhs.clone();
        for mut col in out.column_iter_mut() {
            let mut x: Vec<f64> = col.iter().copied().collect();
            self.jac.solve(&mut x)?;
            col.copy_from_slice(&x);
        }
        Ok(out)
    }

    /// `∂v/∂v* = H⁻¹ A` (`n × n`).
    pub fn wrt_free_velocity(&mut self) -> Result<DMatrix<f64>, SolverError> {
        let a = self.p.mass_dense();
        self.solve(&a)
    }

    /// `∂v/∂v̂_c = H⁻¹ J_cᵀ G_c` (`n × rows of c`); `None` for a constraint out of range.
    pub fn wrt_bias_velocity(&mut self, c: usize) -> Result<Option<DMatrix<f64>>, SolverError> {
        let Some(con) = self.p.cons.get(c) else {
            return Ok(None);
        };
        let (k, go, n) = (con.rows, self.g_off[c], self.p.n);
        let mut rhs = DMatrix::zeros(n, k);
        let mut col = vec![0.0; k];
        for j in 0..k {
            for (i, x) in col.iter_mut().enumerate() {
                *x = self.g[go + i * k + j];
            }
            let mut out = vec![0.0; n];
            con.apply_transpose_add(&col, &mut out);
            rhs.set_column(j, &DVector::from_vec(out));
        }
        self.solve(&rhs).map(Some)
    }

    /// `∂v/∂μ_c = H⁻¹ J_cᵀ ∂Γ_c/∂μ` for a cone or Coulomb constraint (`∂/∂ρ` of the radius of
    /// a disk or interval); `None` for a constraint without a friction parameter or out of
    /// range. Zero unless the constraint slides.
    pub fn wrt_friction(&mut self, c: usize) -> Result<Option<DVector<f64>>, SolverError> {
        let Some(con) = self.p.cons.get(c) else {
            return Ok(None);
        };
        let Some(dgamma) = self.impulse_wrt_friction(c) else {
            return Ok(None);
        };
        let mut rhs = vec![0.0; self.p.n];
        con.apply_transpose_add(&dgamma, &mut rhs);
        let out = self.solve(&DMatrix::from_column_slice(self.p.n, 1, &rhs))?;
        Ok(Some(out.column(0).into_owned()))
    }

    /// The derivative of the equations `F(v; d)` at the fixed point `v` along a change of
    /// the problem's data `d` (mass, free velocity, Jacobian, bias velocities,
    /// regularization, friction parameters) given by two problems of the same structure,
    /// `(d₊ − d₋)/width` (a difference of the data alone; the maps `Γ_c` are
    /// linearized at this point, not evaluated at the perturbed data):
    ///
    /// ```text
    /// dF = dA (v − v*) − A dv* − dJᵀ γ − Jᵀ (Ĝ dy + ∂Γ/∂μ dμ),
    /// dy = −R⁻¹ (dJ v − dv̂) − R⁻¹ dR y,   Ĝ = ∂Γ/∂y = G R.
    /// ```
    ///
    /// Then `∂v/∂d = −H⁻¹ dF` ([`Sensitivity::solve`]). Errors: a problem whose structure
    /// differs from this one's ([`SolverError::InvalidInput`]).
    pub fn equations_wrt_data(
        &self,
        plus: &RegularizedContactProblem,
        minus: &RegularizedContactProblem,
        width: f64,
    ) -> Result<DVector<f64>, SolverError> {
        let p = self.p;
        if !(p.same_structure(plus) && p.same_structure(minus)) {
            return Err(SolverError::InvalidInput {
                solver: SOLVER,
                reason: "the perturbed problems differ in structure from the linearized one".into(),
            });
        }
        let n = p.n;
        let v = self.v.as_slice();
        let e: Vec<f64> = (0..n).map(|i| v[i] - p.v_star[i]).collect();
        let (mut ap, mut am) = (vec![0.0; n], vec![0.0; n]);
        plus.a.mul_into(&e, &mut ap);
        minus.a.mul_into(&e, &mut am);
        let dvs: Vec<f64> = (0..n)
            .map(|i| (plus.v_star[i] - minus.v_star[i]) / width)
            .collect();
        let mut adv = vec![0.0; n];
        p.a.mul_into(&dvs, &mut adv);
        let mut df: Vec<f64> = (0..n).map(|i| (ap[i] - am[i]) / width - adv[i]).collect();
        let mut jtg = vec![0.0; n];
        let mut jtg_minus = vec![0.0; n];
        let (mut vp, mut vm) = ([0.0; 3], [0.0; 3]);
        let mut dgamma = [0.0; 3];
        for (ci, c) in p.cons.iter().enumerate() {
            let (cp, cm) = (&plus.cons[ci], &minus.cons[ci]);
            let rr = c.row..c.row + c.rows;
            let gamma = &self.gamma[rr.clone()];
            cp.apply_transpose_add(gamma, &mut jtg);
            cm.apply_transpose_add(gamma, &mut jtg_minus);
            cp.apply(v, &mut vp[..c.rows]);
            cm.apply(v, &mut vm[..c.rows]);
            let mut ry = [0.0; 3];
            for (k, i) in rr.clone().enumerate() {
                let dv_c = (vp[k] - vm[k]) / width;
                let dv_hat = (plus.v_hat[i] - minus.v_hat[i]) / width;
                let dr = (plus.r[i] - minus.r[i]) / width;
                let dy = -(dv_c - dv_hat) / p.r[i] - dr * self.y[i] / p.r[i];
                ry[k] = p.r[i] * dy;
            }
            let (k, go) = (c.rows, self.g_off[ci]);
            for a in 0..k {
                dgamma[a] = (0..k).map(|b| self.g[go + a * k + b] * ry[b]).sum();
            }
            let dmu = (friction_parameter(cp.kind) - friction_parameter(cm.kind)) / width;
            if dmu != 0.0 {
                if let Some(d) = self.impulse_wrt_friction(ci) {
                    for a in 0..k {
                        dgamma[a] += d[a] * dmu;
                    }
                }
            }
            let mut out = vec![0.0; n];
            c.apply_transpose_add(&dgamma[..k], &mut out);
            for i in 0..n {
                df[i] -= out[i];
            }
        }
        for i in 0..n {
            df[i] -= (jtg[i] - jtg_minus[i]) / width;
        }
        Ok(DVector::from_vec(df))
    }

    /// `∂Γ_c/∂μ` at fixed `y_c` (the map's own dependence on its friction parameter).
    fn impulse_wrt_friction(&self, c: usize) -> Option<Vec<f64>> {
        let con = &self.p.cons[c];
        let rr = con.row..con.row + con.rows;
        let (y, r) = (&self.y[rr.clone()], &self.p.r[rr]);
        let k = con.rows;
        let mut d = vec![0.0; k];
        let sliding = self.modes[c] == ConstraintMode::Sliding;
        match con.kind {
            ConstraintKind::Coulomb { .. } | ConstraintKind::PlanarCoulomb { .. } => {
                if sliding {
                    let t = k - 1;
                    let yr = y[..t].iter().map(|x| x * x).sum::<f64>().sqrt();
                    for i in 0..t {
                        d[i] = y[t] * y[i] / yr;
                    }
                }
            }
            ConstraintKind::Cone { mu } | ConstraintKind::Planar { mu } => {
                if sliding {
                    let t = k - 1;
                    let yr = y[..t].iter().map(|x| x * x).sum::<f64>().sqrt();
                    let a = r[0] / r[t];
                    let den = 1.0 + mu * mu * a;
                    let gn = (y[t] + mu * a * yr) / den;
                    let dgn = (a * yr * den - (y[t] + mu * a * yr) * 2.0 * mu * a) / (den * den);
                    d[t] = dgn;
                    for i in 0..t {
                        d[i] = (gn + mu * dgn) * y[i] / yr;
                    }
                }
            }
            ConstraintKind::Disk { .. } | ConstraintKind::Interval { .. } => {
                if sliding {
                    let yr = y.iter().map(|x| x * x).sum::<f64>().sqrt();
                    for i in 0..k {
                        d[i] = y[i] / yr;
                    }
                }
            }
            ConstraintKind::Unilateral | ConstraintKind::Bilateral => return None,
        }
        Some(d)
    }
}

/// The friction parameter of a kind (`μ`, or the radius of a disk or interval); 0 for
/// kinds without one.
fn friction_parameter(kind: ConstraintKind) -> f64 {
    match kind {
        ConstraintKind::Cone { mu }
        | ConstraintKind::Planar { mu }
        | ConstraintKind::Coulomb { mu }
        | ConstraintKind::PlanarCoulomb { mu } => mu,
        ConstraintKind::Disk { radius } | ConstraintKind::Interval { radius } => radius,
        ConstraintKind::Unilateral | ConstraintKind::Bilateral => 0.0,
    }
}
