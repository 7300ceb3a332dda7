//! Parameter-plane sweeps in the style of the paper's Figs. 2 and 3: for each grid point the
//! multi-V certificate, optionally the PTT baseline, and the falsification by simulation.

use std::time::Instant;

use serde::Serialize;

use crate::lyapunov::{certify, CertifyOptions, CertifyReport, Method, Verdict};
use crate::planar::PlanarParams;
use crate::sim::{falsify, Falsification, SimOptions};
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
    /// Certified points with `d ≤ h tanα` (must be 0).
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

/// Runs the sweep.
pub fn sweep(spec: &GridSpec, progress: &dyn Fn(&str)) -> Result<GridResult, SosError> {
    let mut points = Vec::new();
    let mut sdp_secs = 0.0;
    let mut sdp_count = 0usize;
    for &d in &spec.d {
        for &mu in &spec.mu {
            let p = spec.params(mu, d);
            let t0 = Instant::now();
            let multi_v = certify(&p, &CertifyOptions::default())?;
            if multi_v.size.is_some() {
                sdp_secs += t0.elapsed().as_secs_f64();
                sdp_count += 1;
            }
            let ptt = if spec.ptt && multi_v.size.is_some() {
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
            let simulation = (spec.sim_samples > 0
                && crate::planar::not_applicable(&p).is_none()
                && p.equilibrium_exists())
            .then(|| {
                falsify(
                    &p,
                    spec.sim_samples,
                    spec.sim_radius,
                    spec.divergence_factor,
                    7,
                    &SimOptions::default(),
                )
            });
            let gp = GridPoint {
                mu,
                d,
                multi_v,
                ptt,
                simulation,
            };
            progress(&format!("mu={mu:.3} d={d:.3}: {}", gp.category()));
            points.push(gp);
        }
    }
    let tan = spec.alpha.tan();
    let cert: Vec<&GridPoint> = points.iter().filter(|p| p.multi_v.certified()).collect();
    Ok(GridResult {
        certified_points: cert.len(),
        certified_in_ambiguous: cert
            .iter()
            .filter(|g| g.multi_v.params.is_ambiguous())
            .count(),
        certified_with_d_le_tan_alpha: cert.iter().filter(|g| g.d <= tan).count(),
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
