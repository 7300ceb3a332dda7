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
    pub chol: MassSolver,
    pub v_free: DVector<f64>,
}

/// Solves with the mass matrix through its block-diagonal structure: the velocity
/// coordinates split into the connected components of M's sparsity pattern (one per free
/// body or articulated tree), each factored by Cholesky on its own. A pile of N free bodies
/// then costs N small solves instead of one dense factor of size 6N, whose triangular solves
/// with the contact Jacobian's columns dominated a step of the rigid steppers.
pub(crate) struct MassSolver {
    /// Per component: its velocity indices (increasing) and the Cholesky factor of its block.
    blocks: Vec<(Vec<usize>, Cholesky<f64, Dyn>)>,
    nv: usize,
}

impl MassSolver {
    /// The components of `mass` and their factors; a block that is not positive definite is
    /// a [`SimError::Diverged`] at `t`.
    pub(crate) fn new(mass: &DMatrix<f64>, t: f64) -> Result<Self, SimError> {
        let nv = mass.nrows();
        // union-find over the nonzero off-diagonal entries
        let mut parent: Vec<usize> = (0..nv).collect();
        fn root(parent: &mut [usize], mut i: usize) -> usize {
            while parent[i] != i {
                parent[i] = parent[parent[i]];
                i = parent[i];
            }
            i
        }
        for i in 0..nv {
            for j in 0..i {
                if mass[(i, j)] != 0.0 || mass[(j, i)] != 0.0 {
                    let (a, b) = (root(&mut parent, i), root(&mut parent, j));
                    if a != b {
                        parent[a.max(b)] = a.min(b);
                    }
                }
            }
        }
        let mut members: Vec<Vec<usize>> = vec![Vec::new(); nv];
        for i in 0..nv {
            let r = root(&mut parent, i);
            members[r].push(i);
        }
        let mut blocks = Vec::new();
        for idx in members.into_iter().filter(|m| !m.is_empty()) {
            let block = DMatrix::from_fn(idx.len(), idx.len(), |a, b| mass[(idx[a], idx[b])]);
            blocks.push((idx, factor_mass(&block, t)?));
        }
        Ok(Self { blocks, nv })
    }

    /// `M⁻¹ J` and the Delassus matrix `Jᵀ M⁻¹ J` for a matrix `J` with one row per velocity
    /// coordinate, block by block: each block solves and multiplies only the columns of `J`
    /// that touch it (a contact's columns touch the one or two bodies of the contact), so a
    /// pile's Delassus matrix costs O(contacts) small products instead of a dense
    /// `n_v × n_i²` one.
    pub(crate) fn delassus(&self, j: &DMatrix<f64>) -> (DMatrix<f64>, DMatrix<f64>) {
        let ni = j.ncols();
        let mut minv_j = DMatrix::zeros(self.nv, ni);
        let mut d = DMatrix::zeros(ni, ni);
        for (idx, chol) in &self.blocks {
            let cols: Vec<usize> = (0..ni)
                .filter(|&c| idx.iter().any(|&i| j[(i, c)] != 0.0))
                .collect();
            if cols.is_empty() {
                continue;
            }
            let sub = DMatrix::from_fn(idx.len(), cols.len(), |a, k| j[(idx[a], cols[k])]);
            let x = chol.solve(&sub);
            for (a, &i) in idx.iter().enumerate() {
                for (k, &c) in cols.iter().enumerate() {
                    minv_j[(i, c)] = x[(a, k)];
                }
            }
            let g = sub.transpose() * &x;
            for (a, &ca) in cols.iter().enumerate() {
                for (b, &cb) in cols.iter().enumerate() {
                    d[(ca, cb)] += g[(a, b)];
                }
            }
        }
        (minv_j, d)
    }

    /// `M⁻¹ b` for a vector.
    pub(crate) fn solve_vector(&self, b: &DVector<f64>) -> DVector<f64> {
        let mut out = DVector::zeros(self.nv);
        for (idx, chol) in &self.blocks {
            let sub = DVector::from_fn(idx.len(), |a, _| b[idx[a]]);
            let x = chol.solve(&sub);
            for (a, &i) in idx.iter().enumerate() {
                out[i] = x[a];
            }
        }
        out
    }
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
    let chol = MassSolver::new(&snap.mass_matrix, state.t)?;
    let v_free = &state.v + chol.solve_vector(&snap.forces) * h;
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
