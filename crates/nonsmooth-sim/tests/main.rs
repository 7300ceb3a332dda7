//! The integration tests of `nonsmooth-sim`, one test binary (one module per file, so that a
//! build links one executable per crate): `cargo test -p nonsmooth-sim --test sim MODULE::`
//! runs one file's tests.

mod analytic;
mod anitescu_robust;
mod baselines;
mod depenetration;
mod derivatives;
mod determinism;
mod drumwright;
mod fast_path;
mod fast_solver;
mod geometry_scenes;
mod max_dissipation;
mod prop_steppers;
mod restitution;
mod simulator;
mod time_as_state;
mod toppling;
