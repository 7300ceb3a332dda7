//! LCP solvers.
