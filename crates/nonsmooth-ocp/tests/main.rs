//! The integration tests of `nonsmooth-ocp`, one test binary (one module per file, so that a
//! build links one executable per crate): `cargo test -p nonsmooth-ocp --test ocp MODULE::`
//! runs one file's tests.

mod active_set;
mod common;
mod derivatives;
mod error_messages;
mod examples;
mod fesd_j;
mod fuzz_regressions;
mod hopper;
mod hs071;
mod model_file;
mod multi_contact;
mod ocp;
mod order;
mod sim;
