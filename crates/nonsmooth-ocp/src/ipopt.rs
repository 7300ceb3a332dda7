//! IPOPT for the optimal-control NLPs: the NLP layer of `nonsmooth-solvers` (feature
//! `ipopt`, [`nonsmooth_solvers::nlp::ipopt`]) with its errors as [`OcpError`].

pub use nonsmooth_solvers::nlp::cpu_clock::{
    add_offloaded_cpu, own_thread_cpu_seconds, thread_cpu_seconds,
};
pub use nonsmooth_solvers::nlp::ipopt::{
    interval_violation, IpoptError, IpoptOptions, IpoptSolution, IpoptStatus, Nlp,
    MUMPS_PIVOT_ORDER,
};

use crate::OcpError;

/// [`nonsmooth_solvers::nlp::ipopt::solve`] with a non-converged solve as [`OcpError::Ipopt`]
/// (carrying the last iterate) and invalid input as [`OcpError::InvalidInput`].
pub fn solve(
    nlp: &dyn Nlp,
    x0: &[f64],
    warm: Option<&IpoptSolution>,
    options: &IpoptOptions,
) -> Result<IpoptSolution, OcpError> {
    nonsmooth_solvers::nlp::ipopt::solve(nlp, x0, warm, options).map_err(OcpError::from)
}

impl From<IpoptError> for OcpError {
    fn from(e: IpoptError) -> Self {
        match e {
            IpoptError::InvalidInput(message) => OcpError::InvalidInput(message),
            IpoptError::NotConverged {
                status,
                constraint_violation,
                solution,
            } => OcpError::Ipopt {
                status,
                constraint_violation,
                solution,
            },
        }
    }
}
