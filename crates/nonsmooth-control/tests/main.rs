//! The integration tests of `nonsmooth-control`, one test binary (one module per file, so that a
//! build links one executable per crate): `cargo test -p nonsmooth-control --test control MODULE::`
//! runs one file's tests.

mod grasping;
mod identification;
mod ilqr;
mod locomotion;
mod prop_right_inverse;
mod qp_lemke;
mod quadruped;
mod warm_start;
