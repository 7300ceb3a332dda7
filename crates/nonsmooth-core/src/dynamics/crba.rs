//! The composite-rigid-body algorithm for the joint-space mass matrix (Featherstone RBDA
//! §6.2, Table 6.2), plus each joint's armature on its diagonal entries.

use nalgebra::{DMatrix, DVector, Vector6};

use super::workspace::DynamicsWorkspace;
use crate::model::Model;
use crate::scalar::{lift, Scalar};

/// CRBA on a workspace whose joint data is already up to date (RBDA Table 6.2).
pub(crate) fn crba_from_workspace<T: Scalar>(
    model: &Model,
    ws: &mut DynamicsWorkspace<T>,
    m: &mut DMatrix<T>,
) {
    let nv = model.nv();
    if m.nrows() != nv || m.ncols() != nv {
        *m = DMatrix::zeros(nv, nv);
    } else {
        m.fill(T::zero());
    }
    let nb = model.bodies.len();
    for b in ws.bodies.iter_mut() {
        b.composite = b.inertia;
    }
    for i in (0..nb).rev() {
        if let Some(p) = model.joints[i].parent {
            let moved = ws.bodies[i].composite.transform_to_parent(&ws.bodies[i].x);
            ws.bodies[p].composite = ws.bodies[p].composite.add(&moved);
        }
    }
    let mut f = [Vector6::<T>::zeros(); 6];
    for i in 0..nb {
        let ji = &model.joints[i];
        let ni = ji.kind.nv();
        if ni == 0 {
            continue;
        }
        let vi = ji.v_index;
        let data = &ws.bodies[i];
        for (k, fk) in f.iter_mut().enumerate().take(ni) {
            *fk = data.composite.mul_motion(&data.s.column(k).into_owned());
        }
        let armature: T = lift(ji.armature);
        for k in 0..ni {
            for (l, fl) in f.iter().enumerate().take(ni) {
                m[(vi + k, vi + l)] = data.s.column(k).dot(fl);
            }
            m[(vi + k, vi + k)] += armature;
        }
        let mut j = i;
        while let Some(p) = model.joints[j].parent {
            for fk in f.iter_mut().take(ni) {
                *fk = ws.bodies[j].x.inv_apply_force(fk);
            }
            j = p;
            let jj = &model.joints[j];
            let vj = jj.v_index;
            for l in 0..jj.kind.nv() {
                let sl = ws.bodies[j].s.column(l);
                for (k, fk) in f.iter().enumerate().take(ni) {
                    let val = sl.dot(fk);
                    m[(vi + k, vj + l)] = val;
                    m[(vj + l, vi + k)] = val;
                }
            }
        }
    }
}

/// Joint-space mass matrix `M(q)` into `m` (resized if needed) using a reusable workspace
/// (CRBA, RBDA Table 6.2).
///
/// # Panics
/// If `q.len() != model.nq()`.
pub fn mass_matrix_into<T: Scalar>(
    model: &Model,
    q: &DVector<T>,
    ws: &mut DynamicsWorkspace<T>,
    m: &mut DMatrix<T>,
) {
    ws.update(model, q);
    crba_from_workspace(model, ws, m);
}

/// Joint-space mass matrix `M(q)` (nv × nv, symmetric positive definite for a valid model)
/// by the composite-rigid-body algorithm (RBDA §6.2, Table 6.2).
///
/// # Panics
/// If `q.len() != model.nq()` (validate with [`super::check_state`]).
pub fn mass_matrix<T: Scalar>(model: &Model, q: &DVector<T>) -> DMatrix<T> {
    let mut ws = DynamicsWorkspace::new(model);
    let mut m = DMatrix::zeros(model.nv(), model.nv());
    mass_matrix_into(model, q, &mut ws, &mut m);
    m
}
