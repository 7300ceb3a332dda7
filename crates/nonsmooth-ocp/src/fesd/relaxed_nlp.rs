//! The relaxed NLPs of the MPCC homotopy, its smoothing phase and its polish: their IPOPT
//! options, and the log entry of each solve.

use super::options::FesdOptions;
use crate::ipopt::{IpoptOptions, IpoptSolution, IpoptStatus};

/// One NLP of the homotopy.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct NlpLog {
    /// Relaxation σ.
    pub sigma: f64,
    /// Objective.
    pub objective: f64,
    /// Complementarity residual after the solve.
    pub comp_residual: f64,
    /// IPOPT iterations.
    pub iterations: usize,
    /// CPU seconds.
    pub cpu_seconds: f64,
    /// IPOPT status.
    pub status: IpoptStatus,
}

impl NlpLog {
    /// The entry of the NLP at relaxation `sigma` that ended at `sol` with complementarity
    /// residual `comp_residual`.
    pub(crate) fn of(sigma: f64, comp_residual: f64, sol: &IpoptSolution) -> Self {
        NlpLog {
            sigma,
            objective: sol.objective,
            comp_residual,
            iterations: sol.iterations,
            cpu_seconds: sol.cpu_seconds,
            status: sol.status,
        }
    }
}

/// IPOPT options of the homotopy's NLPs, the smoothing phase and the polish
/// ([`complementarity_nlp_options`] with the NLP settings and the time left before the
/// deadline, [`NlpSettings::time_limit`](super::NlpSettings::time_limit)).
pub(crate) fn relaxed_nlp_options(o: &FesdOptions, warm_mu: Option<f64>) -> IpoptOptions {
    complementarity_nlp_options(o.nlp.tol, o.nlp.max_iter, o.nlp.max_cpu_time(), warm_mu)
}

/// IPOPT options of a relaxed or polished complementarity NLP (time-freezing's and
/// FESD-J's): tolerance `tol` (also on the constraint violation), an acceptable stop at
/// 1e3 × that after 3 iterations, no bound relaxation, at most `max_cpu_time` seconds; with
/// `warm_mu` a warm start from the previous multipliers with that initial barrier parameter
/// and bound pushes of 1e-9.
pub(crate) fn complementarity_nlp_options(
    tol: f64,
    max_iter: i32,
    max_cpu_time: Option<f64>,
    warm_mu: Option<f64>,
) -> IpoptOptions {
    let mut opts = IpoptOptions::quiet(tol, max_iter);
    opts.num.push(("acceptable_tol".into(), 1e3 * tol));
    opts.int.push(("acceptable_iter".into(), 3));
    opts.num.push(("bound_relax_factor".into(), 0.0));
    opts.num.push(("constr_viol_tol".into(), tol));
    if let Some(seconds) = max_cpu_time {
        opts.num.push(("max_cpu_time".into(), seconds));
    }
    if let Some(mu) = warm_mu {
        opts.string
            .push(("warm_start_init_point".into(), "yes".into()));
        opts.num.push(("mu_init".into(), mu));
        opts.num.push(("warm_start_bound_push".into(), 1e-9));
        opts.num.push(("warm_start_mult_bound_push".into(), 1e-9));
    }
    opts
}
