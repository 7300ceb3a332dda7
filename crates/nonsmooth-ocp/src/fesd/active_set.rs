//! The exact MPCC method on the FESD NLP ([`MpccMethod::ActiveSet`]): the relaxation
//! homotopy as phase I, then the active-set method with LPECs of
//! [`nonsmooth_solvers::mpcc`] (Nurkanović & Leyffer 2025, MPECopt) on the MPCC whose smooth
//! part is the FESD NLP without its complementarity rows and penalties and whose pairs are
//! the cross-complementarity pairs α_{j'} ⊥ λⁿ_j, (1 − α_{j'}) ⊥ λᵖ_j (θ ⊥ λ for Stewart's
//! reformulation; [`mpcc_pairs`]).
//!
//! The returned point has exactly zero complementarity (the fixed sides are variable bounds
//! that IPOPT never moves) and a verdict: B-stationary for the MPCC linearized at the point
//! (the LPEC's optimum is 0), or the reason why not. FESD's cross complementarity shares
//! each α between several pairs, so MPCC-LICQ fails: the certificate is the linearized
//! statement, no more.
//!
//! [`MpccMethod::ActiveSet`]: super::MpccMethod::ActiveSet

use nonsmooth_solvers::mpcc::{self, ActiveSetSettings, Mpcc, MpccError, MpccSolution};
pub use nonsmooth_solvers::mpcc::{ActiveSetLog, Verdict};

use super::blocks::FesdBlock;
use super::complementarity::mpcc_pairs;
use super::layout::Layout;
use super::options::{FesdOptions, CUT_OFF};
use crate::ipopt::{IpoptOptions, IpoptSolution};
use crate::nlp::BlockNlp;
use crate::OcpError;

/// What the active-set method did, reported with the solution.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ActiveSetSummary {
    /// B-stationary (certified) or the reason why not.
    pub verdict: Verdict,
    /// LPECs solved (the projection included).
    pub lpec_count: usize,
    /// Branch NLPs solved.
    pub bnlp_count: usize,
    /// Complementarity residual of phase I's (the homotopy's) point.
    pub phase_one_comp: f64,
    /// CPU seconds of the active-set phases (the homotopy excluded).
    pub cpu_seconds: f64,
    /// Every LPEC and BNLP.
    pub log: Vec<ActiveSetLog>,
}

impl ActiveSetSummary {
    /// 1 for a B-stationarity certificate, 0 otherwise.
    pub fn b_stationary(&self) -> f64 {
        f64::from(u8::from(self.verdict.is_b_stationary()))
    }
}

/// Turns `p` into the smooth part of the FESD MPCC: its complementarity rows lifted, every
/// penalty of the homotopy off (ℓ1 and elastic weights 0, the elastic slack fixed at 0, soft
/// terminal off and the terminal constraint hard), flight cuts and smoothing rows inactive.
pub fn make_smooth_part(p: &mut BlockNlp<FesdBlock>, layout: &Layout) {
    for r in &layout.comp_rows {
        for i in 0..layout.comp_row_len {
            p.gl[r + i] = -1e20;
            p.gu[r + i] = 1e20;
        }
    }
    if let Some(e) = layout.elastic {
        p.xl[e] = 0.0;
        p.xu[e] = 0.0;
    }
    for (i, v) in &layout.terminal {
        p.xl[*i] = *v;
        p.xu[*i] = *v;
    }
    for b in p.blocks.iter_mut() {
        match (&mut b.kind, b.row) {
            (FesdBlock::Comp { weight, .. }, None)
            | (FesdBlock::StewartComp { weight, .. }, None)
            | (FesdBlock::Elastic { weight }, _)
            | (FesdBlock::Terminal { weight, .. }, _)
            | (FesdBlock::LambdaSum { weight }, _) => *weight = 0.0,
            (FesdBlock::FlightCut { delta, .. }, _) => *delta = CUT_OFF,
            (FesdBlock::Smoothing { widths }, Some(row)) => {
                for i in 0..widths.len() {
                    p.gl[row + i] = -1e20;
                    p.gu[row + i] = 1e20;
                }
            }
            _ => {}
        }
    }
}

/// The solver settings of the FESD options: the active-set options and, for the branch
/// NLPs, IPOPT with the homotopy's tolerance and iteration limit (both within the time left
/// before the run's deadline).
pub fn settings(o: &FesdOptions) -> ActiveSetSettings {
    let a = &o.mpcc.active_set;
    let mut bnlp = IpoptOptions::quiet(o.nlp.tol, o.nlp.max_iter);
    if o.nlp.mu_adaptive {
        bnlp.string.push(("mu_strategy".into(), "adaptive".into()));
    }
    // the run's deadline bounds the phase and each of its NLPs
    let left = o.nlp.max_cpu_time();
    if let Some(seconds) = left {
        bnlp.num.push(("max_cpu_time".into(), seconds));
    }
    let mut s = ActiveSetSettings {
        trust_region: a.trust_region,
        trust_region_min: a.trust_region_min,
        max_iterations: a.max_lpecs,
        time_limit: left.map_or(a.time_limit, |l| l.min(a.time_limit)),
        active_tol: a.active_tol,
        bnlp,
        verbose: o.nlp.verbose,
        ..ActiveSetSettings::default()
    };
    s.lpec.time_limit = a.lpec_time_limit;
    s
}

/// Runs the active-set method from the homotopy's (relaxed) point `x_relaxed` (and, when
/// known, the homotopy's point before it, `x_previous`) on the MPCC of `nlp` (turned into its
/// smooth part, [`make_smooth_part`]), whose complementarity residual there is
/// `phase_one_comp`. Returns the last BNLP's
/// solution (on `nlp`'s variables, exactly complementary) and the summary.
///
/// # Errors
/// [`OcpError::ActiveSet`] with the last feasible branch point (or the relaxed point when
/// no branch was feasible) when an LPEC fails, no branch NLP is feasible or the time limit is
/// reached.
pub fn solve_active_set(
    nlp: &mut BlockNlp<FesdBlock>,
    layout: &Layout,
    x_relaxed: &[f64],
    x_previous: Option<&[f64]>,
    phase_one_comp: f64,
    o: &FesdOptions,
) -> Result<(IpoptSolution, ActiveSetSummary), OcpError> {
    make_smooth_part(nlp, layout);
    let problem = Mpcc {
        nlp: &*nlp,
        pairs: mpcc_pairs(layout, o.discretization.fesd),
    };
    let s = settings(o);
    match mpcc::solve_from_relaxed(&problem, x_relaxed, x_previous, &s) {
        Ok(MpccSolution {
            solution,
            verdict,
            lpec_count,
            bnlp_count,
            log,
            cpu_seconds,
            ..
        }) => Ok((
            solution,
            ActiveSetSummary {
                verdict,
                lpec_count,
                bnlp_count,
                phase_one_comp,
                cpu_seconds,
                log,
            },
        )),
        Err(e) => {
            let x = e.last_point().map(<[f64]>::to_vec).unwrap_or_default();
            let message = e.to_string();
            Err(match e {
                MpccError::InvalidInput(m) => OcpError::InvalidInput(m),
                _ => OcpError::ActiveSet { message, x },
            })
        }
    }
}
