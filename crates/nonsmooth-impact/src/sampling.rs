//! Algorithms 1 (`Sim`) and 2 (`Approximate`) of Halm & Posa §5, the Theorem 8 termination
//! bound and the Theorem 9 sample count.
//!
//! Algorithm 1 walks `v ← f_q(v, λ_n,max)` with caps `λ_n,max ~ h·U[0,1]^m` while v is
//! colliding and at most N steps were taken; Algorithm 2 repeats it for M samples, adds one
//! step with cap `ε/(3ψ)` on every contact (`ψ = σ_max(M⁻¹J̄ᵀ)·m·(1 + max μ) + 1`) and drops
//! outputs still in C(q). Caps come either from a seeded ChaCha stream per sample or from an
//! Owen-scrambled Sobol sequence of dimension m·N (one point per trajectory, as in the
//! authors' runs). Samples are processed in parallel with rayon; the output order is the
//! sample order, so results are reproducible for a given seed.

use nalgebra::DVector;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::{ImpactError, ImpactLcp, ImpactProblem, COLLIDING_TOL};

/// Where the random caps come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CapSampler {
    /// i.i.d. uniform caps from a ChaCha8 stream per sample (seed, stream = sample index).
    Uniform {
        /// Seed.
        seed: u64,
    },
    /// Owen-scrambled Sobol points of dimension m·N (Burley 2020, `sobol_burley`); one point
    /// per trajectory. Dimensions beyond 256 fall back to uniform.
    Sobol {
        /// Scrambling seed.
        seed: u32,
    },
}

/// Settings of Algorithm 1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SimSettings {
    /// Cap scale h: caps are drawn from `h·U[0,1]^m`.
    pub cap: f64,
    /// Maximum number of steps N.
    pub max_steps: usize,
    /// Colliding tolerance: the loop runs while `min J_n v < −colliding_tol`.
    pub colliding_tol: f64,
    /// Largest accepted LCP residual.
    pub residual_tol: f64,
}

impl SimSettings {
    /// Settings with cap `h`, `n` steps and the default tolerances (1e-8, 1e-9).
    pub fn new(cap: f64, max_steps: usize) -> Self {
        Self {
            cap,
            max_steps,
            colliding_tol: COLLIDING_TOL,
            residual_tol: 1e-9,
        }
    }

    fn check(&self) -> Result<(), ImpactError> {
        if !(self.cap.is_finite() && self.cap > 0.0) {
            return Err(ImpactError::InvalidOption {
                what: "cap h",
                reason: format!("must be finite and > 0, got {}", self.cap),
            });
        }
        if self.max_steps == 0 {
            return Err(ImpactError::InvalidOption {
                what: "max_steps N",
                reason: "must be >= 1".into(),
            });
        }
        Ok(())
    }
}

/// One trajectory of Algorithm 1.
#[derive(Debug, Clone, PartialEq)]
pub struct SimSample {
    /// Final velocity.
    pub v: DVector<f64>,
    /// Number of LCP solves of the random walk (the extra ε step of Algorithm 2 excluded).
    pub lcps: usize,
    /// Whether the walk ended outside C(q) (before or at N steps).
    pub terminated: bool,
    /// Largest LCP residual met.
    pub max_residual: f64,
    /// Whether the kinetic energy never increased by more than 1e-12 along the walk.
    pub energy_monotone: bool,
}

impl SimSample {
    /// Accepted: terminated and all residuals within tolerance.
    pub fn accepted(&self, residual_tol: f64) -> bool {
        self.terminated && self.max_residual <= residual_tol
    }
}

fn cap_value(sampler: CapSampler, sample: usize, dim: usize, rng: &mut Option<ChaCha8Rng>) -> f64 {
    match sampler {
        CapSampler::Sobol { seed } if dim < 256 && sample < u32::MAX as usize => {
            sobol_burley::sample(sample as u32, dim as u32, seed) as f64
        }
        _ => {
            let r = rng.get_or_insert_with(|| {
                let s = match sampler {
                    CapSampler::Uniform { seed } => seed,
                    CapSampler::Sobol { seed } => seed as u64,
                };
                let mut r = ChaCha8Rng::seed_from_u64(s);
                r.set_stream(sample as u64);
                r
            });
            r.gen::<f64>()
        }
    }
}

/// Algorithm 1, Sim(h, x₀, N), for sample index `sample` of `sampler`.
///
/// # Errors
/// Invalid settings, or a failed LCP solve.
pub fn sim(
    p: &ImpactProblem,
    lcp: &ImpactLcp,
    settings: &SimSettings,
    sampler: CapSampler,
    sample: usize,
) -> Result<SimSample, ImpactError> {
    settings.check()?;
    let m = p.num_contacts();
    let mut v = p.v.clone();
    let mut rng = None;
    let mut caps = vec![0.0; m];
    let mut lcps = 0;
    let mut max_residual: f64 = 0.0;
    let mut energy_monotone = true;
    let mut k_prev = p.kinetic_energy(&v);
    while p.is_colliding(&v, settings.colliding_tol) && lcps < settings.max_steps {
        for (i, c) in caps.iter_mut().enumerate() {
            *c = settings.cap * cap_value(sampler, sample, lcps * m + i, &mut rng);
        }
        let out = lcp.step(p, &v, &caps)?;
        max_residual = max_residual.max(out.residual);
        v = out.v;
        let k_now = p.kinetic_energy(&v);
        if k_now > k_prev + 1e-12 {
            energy_monotone = false;
        }
        k_prev = k_now;
        lcps += 1;
    }
    Ok(SimSample {
        terminated: !p.is_colliding(&v, settings.colliding_tol),
        v,
        lcps,
        max_residual,
        energy_monotone,
    })
}

/// ψ of Algorithm 2: `σ_max(M⁻¹J̄ᵀ)·m·(1 + max μ_i) + 1`.
pub fn psi(p: &ImpactProblem) -> f64 {
    let mu_max = p.mu.iter().cloned().fold(0.0, f64::max);
    p.sigma_max_minv_jbar_t() * p.num_contacts() as f64 * (1.0 + mu_max) + 1.0
}

/// Result of Algorithm 2.
#[derive(Debug, Clone, PartialEq)]
pub struct ApproxResult {
    /// Accepted post-impact velocities (outside C(q), residuals within tolerance), in
    /// sample order.
    pub outputs: Vec<DVector<f64>>,
    /// Every trajectory of Algorithm 1 (accepted or not), in sample order.
    pub samples: Vec<SimSample>,
    /// Number of rejected samples.
    pub rejected: usize,
    /// Mean number of random-walk LCP solves per sample.
    pub mean_lcps: f64,
    /// Largest LCP residual over all samples (including the ε steps).
    pub max_residual: f64,
    /// Whether kinetic energy never increased in any sample (1e-12 slack).
    pub all_energy_monotone: bool,
}

/// One sample of Algorithm 2: the walk, its kept output and its largest residual.
type SampleResult = (SimSample, Option<DVector<f64>>, f64);

/// Algorithm 2, Approximate(h, x₀, ε, N, M): `samples` runs of [`sim`] (in parallel), each
/// followed by one step with cap `ε/(3ψ)` on every contact when `eps > 0`; outputs still in
/// C(q) (or with residual above tolerance) are dropped.
///
/// # Errors
/// Invalid settings (`samples = 0`, ε < 0), or a failed LCP solve.
pub fn approximate(
    p: &ImpactProblem,
    settings: &SimSettings,
    eps: f64,
    samples: usize,
    sampler: CapSampler,
) -> Result<ApproxResult, ImpactError> {
    settings.check()?;
    if samples == 0 {
        return Err(ImpactError::InvalidOption {
            what: "samples M",
            reason: "must be >= 1".into(),
        });
    }
    if !(eps.is_finite() && eps >= 0.0) {
        return Err(ImpactError::InvalidOption {
            what: "eps",
            reason: format!("must be finite and >= 0, got {eps}"),
        });
    }
    let lcp = ImpactLcp::new(p);
    let m = p.num_contacts();
    let eps_cap = if eps > 0.0 { eps / (3.0 * psi(p)) } else { 0.0 };
    let results: Result<Vec<SampleResult>, ImpactError> = (0..samples)
        .into_par_iter()
        .map(|j| {
            let s = sim(p, &lcp, settings, sampler, j)?;
            let mut v = s.v.clone();
            let mut res = s.max_residual;
            if eps_cap > 0.0 {
                let out = lcp.step(p, &v, &vec![eps_cap; m])?;
                res = res.max(out.residual);
                v = out.v;
            }
            let keep = !p.is_colliding(&v, settings.colliding_tol) && res <= settings.residual_tol;
            Ok((s, keep.then_some(v), res))
        })
        .collect();
    let results = results?;
    let mut outputs = Vec::new();
    let mut all_samples = Vec::with_capacity(samples);
    let mut rejected = 0;
    let mut lcps = 0usize;
    let mut max_residual: f64 = 0.0;
    let mut mono = true;
    for (s, v, r) in results {
        lcps += s.lcps;
        max_residual = max_residual.max(r);
        mono &= s.energy_monotone;
        match v {
            Some(v) => outputs.push(v),
            None => rejected += 1,
        }
        all_samples.push(s);
    }
    Ok(ApproxResult {
        outputs,
        samples: all_samples,
        rejected,
        mean_lcps: lcps as f64 / samples as f64,
        max_residual,
        all_energy_monotone: mono,
    })
}

/// The Theorem 8 termination bound.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TerminationBound {
    /// `c = 4⌈(m+1)‖r‖₂ / (h√σ)⌉`.
    pub c: f64,
    /// `c⌈‖v₀‖_M⌉ + k`: number of LCP solves exceeded with probability at most `probability`.
    pub steps: f64,
    /// `exp(−k/(m+1)²)`.
    pub probability: f64,
}

/// Theorem 8: with M ⪰ σI and `r` with `r·M⁻¹J̄ᵀλ̄ ≥ ‖λ_n‖₁` on the linearised friction cone,
/// the number Z of LCP solves of Algorithm 1 (N = ∞) obeys
/// `P(Z > c⌈‖v₀‖_M⌉ + k) ≤ exp(−k/(m+1)²)`, `c = 4⌈(m+1)‖r‖₂/(h√σ)⌉`.
///
/// # Errors
/// [`ImpactError::InvalidOption`] for non-positive h, σ or negative inputs.
pub fn termination_bound(
    m: usize,
    r_norm: f64,
    h: f64,
    sigma: f64,
    v0_m_norm: f64,
    k: u64,
) -> Result<TerminationBound, ImpactError> {
    if !(h > 0.0 && sigma > 0.0 && r_norm >= 0.0 && v0_m_norm >= 0.0) || m == 0 {
        return Err(ImpactError::InvalidOption {
            what: "termination_bound inputs",
            reason: "need m >= 1, h > 0, sigma > 0, r_norm >= 0, |v0|_M >= 0".into(),
        });
    }
    let mp1 = (m + 1) as f64;
    let c = 4.0 * (mp1 * r_norm / (h * sigma.sqrt())).ceil();
    Ok(TerminationBound {
        c,
        steps: c * v0_m_norm.ceil() + k as f64,
        probability: (-(k as f64) / (mp1 * mp1)).exp(),
    })
}

/// The vector `r(q)` of Theorem 8 with the smallest 2-norm: `r·M⁻¹J̄ᵀλ̄ ≥ ‖λ_n‖₁` on the
/// linearised friction cone (Lemma 6). The cone of contact i is generated by the vertices
/// `λ_n,i = 1, λ_D,i ∈ {0, μ_i e_j}`, so the condition is `G r ≥ 1` for the rows
/// `g = M⁻¹(J_n,iᵀ + μ_i J_D,ijᵀ)` (and `μ_i = 0` vertices). The minimum-norm r solves the
/// QP `min ½‖r‖² s.t. G r ≥ 1`, whose KKT system is the LCP
/// `0 ≤ α ⊥ G Gᵀ α − 1 ≥ 0`, `r = Gᵀα` (PSD, solved by Lemke).
///
/// # Errors
/// [`ImpactError::Solver`] on ray termination: no such r exists (Theorem 8 does not apply).
pub fn theorem8_r(p: &ImpactProblem) -> Result<DVector<f64>, ImpactError> {
    let m = p.num_contacts();
    let k = p.k;
    let nv = p.nv();
    let mut rows: Vec<DVector<f64>> = Vec::with_capacity(m * (k + 1));
    for i in 0..m {
        let gn = p.minv_jbar_t.column(i).into_owned();
        rows.push(gn.clone());
        for j in 0..k {
            let gd = p.minv_jbar_t.column(m + i * k + j).into_owned();
            rows.push(&gn + gd * p.mu[i]);
        }
    }
    let g = nalgebra::DMatrix::from_fn(rows.len(), nv, |a, b| rows[a][b]);
    let ggt = &g * g.transpose();
    let q = DVector::from_element(rows.len(), -1.0);
    let lcp = nonsmooth_solvers::lcp::Lcp::new(ggt, q)?;
    let sol =
        nonsmooth_solvers::lcp::lemke(&lcp, &nonsmooth_solvers::lcp::LemkeOptions::default())?;
    Ok(g.transpose() * sol.z)
}

/// Theorem 9 (with Lemma 1): the number of samples M that makes the Algorithm 2 outputs an
/// ε-net of the post-impact set with probability ≥ 1 − δ, `M ≥ ln(δΩ)/ln(1−Ω)` with
/// `Ω = ⌈h L^N √(N m) / ε⌉^{−N m}`. Returned as `log10(M)` because the bound is astronomically
/// large for every practical case (the paper chooses 2^14–2^20 empirically).
///
/// # Errors
/// [`ImpactError::InvalidOption`] for δ ∉ (0,1), non-positive h, L, ε, or N·m = 0.
pub fn theorem9_log10_samples(
    h: f64,
    lipschitz: f64,
    steps: usize,
    m: usize,
    eps: f64,
    delta: f64,
) -> Result<f64, ImpactError> {
    if !(h > 0.0 && lipschitz > 0.0 && eps > 0.0 && delta > 0.0 && delta < 1.0) || steps * m == 0 {
        return Err(ImpactError::InvalidOption {
            what: "theorem9 inputs",
            reason: "need h, L, eps > 0, 0 < delta < 1, N m >= 1".into(),
        });
    }
    let n = (steps * m) as f64;
    // ln of the grid count per axis: ⌈h L^N √n / ε⌉ (in logs to avoid overflow).
    let ln_arg = h.ln() + steps as f64 * lipschitz.ln() + 0.5 * n.ln() - eps.ln();
    let ln_cells = if ln_arg < 30.0 {
        ln_arg.exp().ceil().max(1.0).ln()
    } else {
        ln_arg
    };
    let ln_omega = -n * ln_cells;
    // ln(1 − Ω) ≈ −Ω for tiny Ω; M = ln(δΩ)/ln(1−Ω).
    let omega = ln_omega.exp();
    let numerator = delta.ln() + ln_omega; // ln(δΩ) < 0
    let log10_m = if omega > 1e-12 {
        (numerator / (1.0 - omega).ln()).log10()
    } else {
        (-numerator).log10() - ln_omega / std::f64::consts::LN_10
    };
    Ok(log10_m)
}
