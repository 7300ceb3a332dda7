//! Conic solvers.
