//! Nonlinear programming: `ipopt` (feature `ipopt`), a safe wrapper over IPOPT's C interface
//! for smooth NLPs with sparse first and second derivatives (Wächter & Biegler 2006), and
//! [`cpu_clock`], the CPU clock its solve times are measured with.
//!
//! Decision: IPOPT is an optional layer. Only the optimal-control crate enables the feature,
//! so a program built on the simulation crates alone links neither libipopt nor its linear
//! algebra (`ldd` on such a binary lists neither).

pub mod cpu_clock;
#[cfg(feature = "ipopt")]
pub mod ipopt;
