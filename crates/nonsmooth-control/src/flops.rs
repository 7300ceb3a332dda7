//! Flop count of the Stage-I setup of ID_QP (paper §6.2.3, Table 1, after Hunger 2007),
//! with erratum E13: the `F X⁻¹ Fᵀ` row is `2m(nk)² − mnk` (printed as `2mnk² − mnk`).
//! With that correction the rows sum to the paper's totals, 77,729 (m = 18, nq = 16, n = 4,
//! k = 4) and 62,109 (nq = 12).

/// Sum of the rows of Table 1 (corrected) for `m` DOF, `nq` actuated DOF, `n` contacts and
/// `k` friction-pyramid edges.
pub fn table1_flops(m: usize, nq: usize, n: usize, k: usize) -> f64 {
    let (m, nq, n, k) = (m as f64, nq as f64, n as f64, k as f64);
    let ldl = m.powi(3) / 3.0 + m * m * nq + m * m + m * nq * nq + 2.0 * m * nq - 7.0 * m / 3.0
        + nq.powi(3) / 3.0
        + nq * nq
        - 7.0 * nq / 3.0
        + 1.0;
    let xinv_nt = m + 2.0 * m * m * n + nq + 4.0 * m * n * nq + 2.0 * n * nq * nq;
    let xinv_ft = m + 2.0 * k * m * m * n + nq + 4.0 * k * m * n * nq + 2.0 * k * n * nq * nq;
    let nxn = 2.0 * m * n * n - m * n;
    let fxn = 2.0 * m * n * n * k - m * n;
    let fxf = 2.0 * m * (n * k).powi(2) - m * n * k;
    let kappa = 2.0 * m * m - m;
    let xinv_kappa = 2.0 * (m + nq).powi(2);
    let n_kappa = m * n - m;
    let f_kappa = m * n * k - m;
    let tau = 2.0 * (m + nq).powi(2);
    ldl + xinv_nt + xinv_ft + nxn + fxn + fxf + kappa + xinv_kappa + n_kappa + f_kappa + tau
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corrected_table1_reproduces_the_paper_totals() {
        assert!((table1_flops(18, 16, 4, 4) - 77_729.0).abs() < 1e-6);
        assert!((table1_flops(18, 12, 4, 4) - 62_109.0).abs() < 1e-6);
    }
}
