//! The integration tests of `nonsmooth-impact`, one test binary (one module per file, so that a
//! build links one executable per crate): `cargo test -p nonsmooth-impact --test impact MODULE::`
//! runs one file's tests.

mod acceptance;
mod determinism;
mod toml_models;
