//! The entry point [`certify`]: screening (domain, equilibrium, ambiguity), construction and
//! solution of the SOS program (margin maximisation, with the trace-regularised retries of
//! docs/decisions/000-sos-stability.md decision 12) and extraction of the certificate `V`,
//! accepted only after the Monte-Carlo post-check.

use std::time::Instant;

use super::build::build;
use super::types::{CertifyOptions, CertifyReport, Verdict};
use super::verify::monte_carlo;
use crate::planar::{not_applicable, Mode, PlanarParams};
use crate::program::{Margin, SosStatus};
use crate::SosError;

/// Searches a Lyapunov certificate for the equilibrium of `p`. Ambiguous points, points
/// without equilibrium and points outside the domain are returned without solving.
pub fn certify(p: &PlanarParams, opts: &CertifyOptions) -> Result<CertifyReport, SosError> {
    let mut rep = CertifyReport {
        params: *p,
        method: opts.method,
        verdict: Verdict::NoCertificate(String::new()),
        epsilon: 0.0,
        size: None,
        modes: Vec::new(),
        build_seconds: 0.0,
        solve_seconds: 0.0,
        mc_min: f64::NAN,
        v: None,
    };
    if let Some(r) = not_applicable(p) {
        rep.verdict = Verdict::NotApplicable(r);
        return Ok(rep);
    }
    if !p.equilibrium_exists() {
        rep.verdict = Verdict::NoEquilibrium;
        return Ok(rep);
    }
    let amb = p.ambiguous_modes();
    if !amb.is_empty() {
        rep.verdict = Verdict::Ambiguous(amb.iter().map(Mode::name).collect());
        return Ok(rep);
    }
    let t0 = Instant::now();
    let (prog, v2, kinds, names) = build(p, opts.method, opts.flight, opts.v2_degree)?;
    rep.build_seconds = t0.elapsed().as_secs_f64();
    rep.size = Some(prog.size());
    rep.modes = names;
    let mut sol = prog.solve(
        Margin::Maximize {
            cap: opts.margin_cap,
        },
        opts.tol,
    )?;
    let mut solve_seconds = sol.seconds;
    for &trace_weight in &opts.retry_trace_weights {
        if !matches!(sol.status, SosStatus::SolverFailed(_)) {
            break;
        }
        sol = prog.solve(
            Margin::MaximizeRegularized {
                cap: opts.margin_cap,
                trace_weight,
            },
            opts.tol,
        )?;
        solve_seconds += sol.seconds;
    }
    rep.solve_seconds = solve_seconds;
    rep.epsilon = sol.epsilon;
    match sol.status {
        SosStatus::Certified => {
            let v = v2.evaluate_coefficients(&sol.z);
            let mc = monte_carlo(
                p,
                opts.method,
                &v,
                sol.epsilon,
                &kinds,
                opts.mc_samples,
                opts.seed,
            )?;
            rep.mc_min = mc;
            rep.verdict = if mc >= -1e-6 {
                Verdict::Certified
            } else {
                Verdict::NoCertificate(format!("Monte-Carlo sign test failed (min {mc:.3e})"))
            };
            rep.v = Some(v);
        }
        SosStatus::NoCertificate(r) => rep.verdict = Verdict::NoCertificate(r),
        SosStatus::Infeasible(r) => {
            rep.verdict = Verdict::NoCertificate(format!("infeasible SDP: {r}"))
        }
        SosStatus::SolverFailed(r) => {
            rep.verdict = Verdict::NoCertificate(format!("solver status: {r}"))
        }
    }
    Ok(rep)
}
