//! Reusable per-body storage for the recursive algorithms, so that the hot paths
//! (CRBA, RNEA) allocate nothing once a workspace exists.

use nalgebra::{DVector, Matrix6, Vector6};

use super::joint::{motion_subspace, parent_to_child};
use super::spatial::{SpatialInertia, SpatialTransform};
use crate::model::Model;
use crate::scalar::Scalar;

/// Per-body quantities of the recursive algorithms (all stack-sized spatial types).
#[derive(Debug, Clone, Copy)]
pub(crate) struct BodyData<T: Scalar> {
    /// `λX_i`: transform from the parent body (or world) frame to body `i`.
    pub(crate) x: SpatialTransform<T>,
    /// Motion subspace `S_i` in body coordinates (first `nv_i` columns used).
    pub(crate) s: Matrix6<T>,
    /// Body spatial inertia about the body origin, body coordinates.
    pub(crate) inertia: SpatialInertia<T>,
    /// Composite inertia of the subtree (CRBA).
    pub(crate) composite: SpatialInertia<T>,
    /// Body spatial velocity (body coordinates).
    pub(crate) vel: Vector6<T>,
    /// Body spatial acceleration (body coordinates).
    pub(crate) acc: Vector6<T>,
    /// Body force (body coordinates).
    pub(crate) force: Vector6<T>,
}

impl<T: Scalar> BodyData<T> {
    fn zero() -> Self {
        BodyData {
            x: SpatialTransform::identity(),
            s: Matrix6::zeros(),
            inertia: SpatialInertia::zero(),
            composite: SpatialInertia::zero(),
            vel: Vector6::zeros(),
            acc: Vector6::zeros(),
            force: Vector6::zeros(),
        }
    }
}

/// Reusable buffers for [`super::mass_matrix_into`], [`super::bias_force_into`],
/// [`super::inverse_dynamics_into`] and [`super::mass_matrix_and_bias_into`]: one vector of
/// per-body records, allocated once and resized only when the body count changes.
#[derive(Debug, Clone)]
pub struct DynamicsWorkspace<T: Scalar> {
    pub(crate) bodies: Vec<BodyData<T>>,
}

impl<T: Scalar> DynamicsWorkspace<T> {
    /// A workspace sized for `model`.
    pub fn new(model: &Model) -> Self {
        DynamicsWorkspace {
            bodies: vec![BodyData::zero(); model.bodies.len()],
        }
    }

    /// Computes `λX_i`, `S_i` and the body inertias at `q` (resizing for `model` if
    /// needed).
    pub(crate) fn update(&mut self, model: &Model, q: &DVector<T>) {
        if self.bodies.len() != model.bodies.len() {
            self.bodies.resize(model.bodies.len(), BodyData::zero());
        }
        for ((data, joint), body) in self.bodies.iter_mut().zip(&model.joints).zip(&model.bodies) {
            let (x, rj) = parent_to_child(joint, q);
            data.x = x;
            data.s = motion_subspace(joint, &rj);
            data.inertia = SpatialInertia::from_com(body.mass, &body.com, &body.inertia);
        }
    }
}
