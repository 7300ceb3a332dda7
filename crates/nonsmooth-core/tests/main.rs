//! The integration tests of `nonsmooth-core`, one test binary (one module per file, so that a
//! build links one executable per crate): `cargo test -p nonsmooth-core --test core MODULE::`
//! runs one file's tests.
//! `urdf_package_env.rs` is a binary of its own: it sets an environment variable, which
//! threads of other tests would race with.

mod dynamics_analytic;
mod dynamics_ball_armature;
mod dynamics_dual;
mod dynamics_jacobian;
mod dynamics_mass_matrix;
mod dynamics_rnea;
mod dynamics_spatial;
mod fuzz_regressions;
mod geometry_primitives;
mod io_errors;
mod io_examples;
mod io_roundtrip;
mod joint_spring;
mod mjcf_compiler;
mod mjcf_import;
mod peer_robots;
mod prop_snapshot;
mod snapshot_basic;
#[path = "dynamics_support.rs"]
mod support;
mod urdf_import;
mod urdf_inertia;
mod urdf_ros_files;
