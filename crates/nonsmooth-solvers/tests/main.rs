//! The integration tests of `nonsmooth-solvers`, one test binary (one module per file, so that a
//! build links one executable per crate): `cargo test -p nonsmooth-solvers --test solvers MODULE::`
//! runs one file's tests.

mod conic_errors;
mod conic_qp;
mod conic_sdp;
mod conic_socp;
mod coulomb_newton;
mod lcp_cases;
mod lcp_random;
mod macmpec;
mod prop_status;
mod regularized_contact;
mod sensitivity;
