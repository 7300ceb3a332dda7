//! Fuzz target: Lemke, PGS and the enumerator on arbitrary (including non-finite and
//! degenerate) LCPs. No panic and no hang; a returned solution must carry residuals equal to
//! those recomputed from it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nalgebra::{DMatrix, DVector};
use nonsmooth_solvers::lcp::{
    enumerate_all, lcp_residuals, lemke, pgs, Lcp, LemkeOptions, PgsOptions,
};

fuzz_target!(|data: (u8, Vec<f64>)| {
    let (n, values) = data;
    let n = (n % 9) as usize;
    if values.len() < n * n + n {
        return;
    }
    let m = DMatrix::from_row_slice(n, n, &values[..n * n]);
    let q = DVector::from_row_slice(&values[n * n..n * n + n]);
    let Ok(lcp) = Lcp::new(m, q) else { return };
    let check = |z: &DVector<f64>, w: &DVector<f64>, reported: f64| {
        let r = lcp_residuals(z, w).max();
        assert!(
            r == reported || (r - reported).abs() <= 1e-9 * (1.0 + r.abs()),
            "{r} vs {reported}"
        );
    };
    if let Ok(sol) = lemke(&lcp, &LemkeOptions::default()) {
        check(&sol.z, &sol.w, sol.residuals.max());
    }
    let opts = PgsOptions {
        max_iterations: 200,
        ..PgsOptions::default()
    };
    if let Ok(sol) = pgs(&lcp, &opts) {
        check(&sol.z, &sol.w, sol.residuals.max());
    }
    if let Ok(all) = enumerate_all(&lcp, 1e-9) {
        for sol in all {
            check(&sol.z, &sol.w, sol.residuals.max());
        }
    }
});
