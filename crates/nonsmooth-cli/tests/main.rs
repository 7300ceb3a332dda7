//! The integration tests of `nonsmooth-cli`, one test binary (one module per file, so that a
//! build links one executable per crate): `cargo test -p nonsmooth-cli --test cli MODULE::`
//! runs one file's tests.

mod cli;
mod defaults;
mod doc_commands;
mod examples_default;
mod inspect;
mod soak;
