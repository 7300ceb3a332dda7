//! Scalar-generic multibody dynamics of kinematic trees after Featherstone, *Rigid Body
//! Dynamics Algorithms* (RBDA, Springer 2008): spatial algebra (ch. 2), joint models (ch. 4),
//! forward kinematics and the recursive Newton–Euler algorithm (ch. 5), the
//! composite-rigid-body algorithm (ch. 6), point and frame Jacobians, the centre of mass and
//! its Jacobian, and configuration-space
//! helpers for the floating-base convention of [`crate::model`].
//!
//! Every routine is generic over [`crate::Scalar`] (e.g. `f64` or `num_dual::Dual64`), so the
//! same code gives values and exact derivatives. The equations of motion read
//! `M(q) v̇ + h(q, v) = τ + f_passive` with `h` from [`bias_force`] (gravity included).
//!
//! Functions returning plain values assume `q`, `v` sized for the model (validate untrusted
//! states with [`check_state`]); [`forward_dynamics`] and [`normalize_configuration`] check
//! and return typed errors. Hot paths have allocation-free `*_into` variants working on a
//! [`DynamicsWorkspace`].

pub mod com;
pub mod configuration;
pub mod crba;
pub mod jacobian;
pub mod joint;
pub mod kinematics;
pub mod rnea;
pub mod spatial;
pub mod workspace;

pub use com::{body_com_positions, center_of_mass, com_jacobian, total_mass};
pub use configuration::{
    check_state, configuration_rate, integrate_configuration, neutral_configuration,
    normalize_configuration, quaternion_rate_rows, velocity_map,
};
pub use crba::{mass_matrix, mass_matrix_into};
pub use jacobian::{frame_jacobian, frame_jdot_v, point_jacobian, point_jdot_v};
pub use kinematics::{kinematics, point_position, Kinematics};
pub use rnea::{
    bias_force, bias_force_into, body_spatial_inertia, forward_dynamics, inverse_dynamics,
    inverse_dynamics_into, kinetic_energy, mass_matrix_and_bias_into, passive_force,
    potential_energy,
};
pub use spatial::{SpatialInertia, SpatialTransform};
pub use workspace::DynamicsWorkspace;
