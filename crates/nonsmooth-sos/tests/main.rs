//! The integration tests of `nonsmooth-sos`, one test binary (one module per file, so that a
//! build links one executable per crate): `cargo test -p nonsmooth-sos --test sos MODULE::`
//! runs one file's tests.

mod certify;
mod error_messages;
mod fuzz_regressions;
mod model;
