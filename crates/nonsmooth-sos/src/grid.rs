//! Parameter-plane sweeps in the style of the paper's Figs. 2 and 3: for each grid point the
//! multi-V certificate, optionally the PTT baseline, and the falsification by simulation.

use std::time::Instant;

use serde::Serialize;

use crate::event_driven::{falsify, Falsification, SimOptions};
use crate::lyapunov::{certify, CertifyOptions, CertifyReport, Method, Verdict};
use crate::planar::PlanarParams;
use crate::SosError;

/// A sweep over `μ × d`.
#[derive(Debug, Clone, PartialEq)]
pub struct GridSpec {
    /// Slope angle (rad).
    pub alpha: f64,
    /// Fixed `μ₂`; `None` means `μ₁ = μ₂ = μ` (Fig. 3).
    pub mu2: Option<f64>,
    /// Restitution.
    pub e: f64,
    /// Values of `μ₁` (or `μ`).
    pub mu: Vec<f64>,
    /// Values of `d`.
    pub d: Vec<f64>,
    /// Also run the PTT baseline.
    pub ptt: bool,
    /// Simulated perturbations per point (0: none).
    pub sim_samples: usize,
    /// Perturbation radius.
    pub sim_radius: f64,
    /// Divergence threshold as a multiple of the radius.
    pub divergence_factor: f64,
}

/// One grid point.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GridPoint {
    /// μ₁ (or μ).
    pub mu: f64,
    /// d.
    pub d: f64,
    /// Multi-V result.
    pub multi_v: CertifyReport,
    /// PTT result, when run.
    pub ptt: Option<CertifyReport>,
    /// Simulation, when run.
    pub simulation: Option<Falsification>,
}

impl GridPoint {
    /// Short category for plots: "ambiguous", "no equilibrium", "not applicable",
    /// "certified" or "no certificate".
    pub fn category(&self) -> &'static str {
        match self.multi_v.verdict {
            Verdict::Ambiguous(_) => "ambiguous",
            Verdict::NoEquilibrium => "no equilibrium",
            Verdict::NotApplicable(_) => "not applicable",
            Verdict::Certified => "certified",
            Verdict::NoCertificate(_) => "no certificate",
        }
    }

    /// Whether the simulation diverged.
    pub fn diverged(&self) -> bool {
        self.simulation
            .as_ref()
            .is_some_and(Falsification::any_diverged)
    }
}

/// Sweep results and the summary metrics of the `sos-fig2` / `sos-fig3` entries.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GridResult {
    /// Points, `d` outer, `μ` inner.
    pub points: Vec<GridPoint>,
    /// Certified points (multi-V).
    pub certified_points: usize,
    /// Certified points that are ambiguous (must be 0).
    pub certified_in_ambiguous: usize,
    /// Certified points with `d ≤ h tanα` (for shifted contacts: `l₁ ≥ 0`; must be 0).
    pub certified_with_d_le_tan_alpha: usize,
    /// Certified points whose simulation diverged (must be 0).
    pub certified_but_diverged_in_simulation: usize,
    /// Points certified by the PTT baseline.
    pub ptt_certified_points: usize,
    /// Mean seconds (build + solve) per point where an SDP was solved.
    pub seconds_per_point: f64,
}

impl GridSpec {
    /// Parameters of one point.
    pub fn params(&self, mu: f64, d: f64) -> PlanarParams {
        PlanarParams::new(self.alpha, mu, self.mu2.unwrap_or(mu), d, self.e)
    }
}

/// What a sweep runs at each point besides the multi-V certificate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SweepSettings {
    /// Also run the PTT baseline.
    pub ptt: bool,
    /// Simulated perturbations per point (0: none).
    pub sim_samples: usize,
    /// Perturbation radius.
    pub sim_radius: f64,
    /// Divergence threshold as a multiple of the radius.
    pub divergence_factor: f64,
}

/// One point of a sweep: its coordinates in the `μ × d` plane and its parameters (from
/// [`GridSpec::params`], or read from a model file).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GridCase {
    /// μ₁ (or μ).
    pub mu: f64,
    /// d.
    pub d: f64,
    /// The body.
    pub params: PlanarParams,
}

impl GridSpec {
    /// The points of the grid, `d` outer, `μ` inner.
    pub fn cases(&self) -> Vec<GridCase> {
        self.d
            .iter()
            .flat_map(|&d| {
                self.mu.iter().map(move |&mu| GridCase {
                    mu,
                    d,
                    params: self.params(mu, d),
                })
            })
            .collect()
    }

    /// The per-point settings.
    pub fn settings(&self) -> SweepSettings {
        SweepSettings {
            ptt: self.ptt,
            sim_samples: self.sim_samples,
            sim_radius: self.sim_radius,
            divergence_factor: self.divergence_factor,
        }
    }
}

/// Runs the sweep.
pub fn sweep(spec: &GridSpec, progress: &dyn Fn(&str)) -> Result<GridResult, SosError> {
    sweep_cases(&spec.cases(), &spec.settings(), progress)
}

/// One point: the certificate, the baseline and the simulation; returns the point and the
/// seconds spent in the SDP (`None` when no SDP was built).
fn run_case(c: &GridCase, s: &SweepSettings) -> Result<(GridPoint, Option<f64>), SosError> {
    let p = c.params;
    let t0 = Instant::now();
    let multi_v = certify(&p, &CertifyOptions::default())?;
    let sdp_seconds = multi_v.size.is_some().then(|| t0.elapsed().as_secs_f64());
    let ptt = if s.ptt && multi_v.size.is_some() {
        Some(certify(
            &p,
            &CertifyOptions {
                method: Method::Ptt,
                ..CertifyOptions::default()
            },
        )?)
    } else {
        None
    };
    let simulation = (s.sim_samples > 0
        && crate::planar::not_applicable(&p).is_none()
        && p.equilibrium_exists())
    .then(|| {
        falsify(
            &p,
            s.sim_samples,
            s.sim_radius,
            s.divergence_factor,
            7,
            &SimOptions::default(),
        )
    });
    Ok((
        GridPoint {
            mu: c.mu,
            d: c.d,
            multi_v,
            ptt,
            simulation,
        },
        sdp_seconds,
    ))
}

/// Runs `cases` on all cores (results in input order, progress lines as points finish).
pub fn sweep_cases(
    cases: &[GridCase],
    settings: &SweepSettings,
    progress: &dyn Fn(&str),
) -> Result<GridResult, SosError> {
    let outcomes = crate::parallel::map_with_progress(
        cases,
        |c| {
            let r = run_case(c, settings);
            let line = match &r {
                Ok((gp, _)) => format!("mu={:.3} d={:.3}: {}", c.mu, c.d, gp.category()),
                Err(e) => format!("mu={:.3} d={:.3}: error {e}", c.mu, c.d),
            };
            (r, line)
        },
        progress,
    );
    let mut points = Vec::with_capacity(cases.len());
    let (mut sdp_secs, mut sdp_count) = (0.0, 0usize);
    for r in outcomes {
        let (gp, secs) = r?;
        if let Some(s) = secs {
            sdp_secs += s;
            sdp_count += 1;
        }
        points.push(gp);
    }
    let cert: Vec<&GridPoint> = points.iter().filter(|p| p.multi_v.certified()).collect();
    Ok(GridResult {
        certified_points: cert.len(),
        certified_in_ambiguous: cert
            .iter()
            .filter(|g| g.multi_v.params.is_ambiguous())
            .count(),
        certified_with_d_le_tan_alpha: cert.iter().filter(|g| g.multi_v.params.l(0) >= 0.0).count(),
        certified_but_diverged_in_simulation: cert.iter().filter(|g| g.diverged()).count(),
        ptt_certified_points: points
            .iter()
            .filter(|g| g.ptt.as_ref().is_some_and(CertifyReport::certified))
            .count(),
        seconds_per_point: if sdp_count > 0 {
            sdp_secs / sdp_count as f64
        } else {
            0.0
        },
        points,
    })
}

/// Evenly spaced values `lo, …, hi` (`n ≥ 2`), or `[lo]` for `n ≤ 1`.
pub fn linspace(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    if n <= 1 {
        return vec![lo];
    }
    (0..n)
        .map(|k| lo + (hi - lo) * k as f64 / (n - 1) as f64)
        .collect()
}
