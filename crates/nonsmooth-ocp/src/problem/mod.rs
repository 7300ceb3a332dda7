//! OCP problem files (TOML) for a point mass through inelastic impacts (seed 002, Ex. 5):
//!
//! ```toml
//! [model]            # dim (1 or 2), mass, gravity, a_n (auxiliary normal acceleration),
//! dim = 2            # mu (optional: Coulomb friction of the auxiliary dynamics)
//! mass = 1.0
//! gravity = 9.81
//! a_n = 9.81
//! [ocp]              # N control intervals over physical time T, speed of time s ∈ [1, s_max],
//! N = 20             # y0 = (q, v, t), control bounds, terminal = [[state index, value], …]
//! T = 2.0
//! s_max = 10.0
//! y0 = [0.0, 1.0, 0.0, 0.0, 0.0]
//! u_lo = [-10.0, 0.0, 0.0]
//! u_hi = [10.0, 0.0, 0.0]
//! terminal = [[0, 3.0], [1, 0.0], [2, 0.0], [3, 0.0]]
//! [fesd]             # optional: Radau IIA stages and finite elements per interval
//! n_s = 2
//! n_fe = 3
//! ```
//!
//! The running cost is Σ_k (T/N)‖u_k‖² (the stage clock constraints make every interval last
//! T/N of physical time, see `docs/decisions/002-time-freezing.md`, "Running cost"). Used by
//! `nonsmooth ocp` and the Python `solve_ocp`. Optional `[ocp]` keys of both models:
//! `clock = "terminal"` imposes only t(T̃) = T instead of the stage clock constraints (the
//! running cost is then Σ_k ‖u_k‖² (t_{k+1} − t_k), still the physical-time integral), and
//! `global_speed = true` (terminal clock only) uses one speed of time for the whole
//! horizon — the two settings of the authors' hopper code (nosnoc `stagewise_clock_constraint = 0`,
//! `local_speed_of_time_variable = 0`). `continuation = [x₁, x₂, …]` solves the problem for
//! the terminal q_x = x₁ from the trivial initialization, then x₂, … and finally the file's
//! own target, each warm-started from the previous solution with σ₀ =
//! `continuation_sigma0` (default 1e-2; [`crate::continuation`]);
//! `continuation_mode = "active-set"` solves each further waypoint on the previous
//! solution's active set instead ([`ContinuationMode::ActiveSet`]), and
//! `continuation_local_speed = true` (with `global_speed = true`) gives every interval its
//! own speed of time after the first waypoint
//! ([`ContinuationPlan::local_speed_after_first`]).
//!
//! Optional `[fesd]` keys of both models: `scheme = "radau"` (default) or
//! `"gauss-legendre"`, `dcs = "step"` (default) or `"stewart"`, `n_homotopy`, `sigma0`,
//! `kappa` (σ ← κσ), `homotopy_retries` ([`MpccStrategy::homotopy_retries`](crate::fesd::MpccStrategy::homotopy_retries)), `max_iter`
//! (IPOPT, per NLP), `relaxation = "scholtes"`, `"penalty"` (ℓ1, [`MpccStrategy::penalty`](crate::fesd::MpccStrategy::penalty))
//! or `"elastic"` ([`MpccStrategy::elastic`](crate::fesd::MpccStrategy::elastic); default: the model's), `polish_tol`
//! ([`MpccStrategy::polish_tol`](crate::fesd::MpccStrategy::polish_tol)), `mu_adaptive` ([`NlpSettings::mu_adaptive`](crate::fesd::NlpSettings::mu_adaptive)), `first_mu`
//! ([`NlpSettings::first_mu`](crate::fesd::NlpSettings::first_mu)), the smoothing phase `[fesd.smoothing]`
//! ([`crate::smoothing::Smoothing`]),
//! `path_at_stages = false` (path constraints only at the control-interval ends), and the cut
//! continuation `cut_schedule = [{ sigma = 1.0 }, { sigma = 1.0, delta = 0.05 }, …]`
//! (optional `delta`, `delta_v` per entry; see [`MpccStrategy::cut_schedule`](crate::fesd::MpccStrategy::cut_schedule)).
//!
//! The hopper of Sec. 6 ([`HopperProblem`], read by [`Problem::from_file`]) selects its model
//! with `kind = "hopper"`:
//!
//! ```toml
//! [model]            # a_n, optional: mu, holes (centres), hole_axes (a, b),
//! kind = "hopper"    #   stance_stabilization = { rate = 10.0, depth = 1e-3 }
//! a_n = 200.0
//! holes = [0.5, 1.5, 2.5]
//! [ocp]              # N, T, target_x, u_max, s_max (see `hopper::horizon`; with a stance
//!                    #   stabilization, start and target base heights are δ lower)
//! N = 20
//! T = 2.5
//! target_x = 3.0
//! u_max = 60.0
//! s_max = 5.0
//! [fesd]             # n_s (default 3), n_fe (default 3), …
//! ```
//!
//! With the smoothing phase (`[fesd.smoothing]`) a hopper may grow its holes inside the
//! phase: `hole_growth = { scales = [0.0, 0.25, 0.5, 0.75], factors = [3.0, 1.0, 0.3, 0.1] }`
//! in `[model]` runs the phase first on the hopper with its holes' semi-axes scaled by each
//! entry of `scales` (0 = no holes; each in [0, 1), increasing), then on the file's own
//! holes, every phase after the first with the width factors `factors`
//! ([`crate::smoothing::solve_ocp_with_growth`]). A stage whose phase fails is halved
//! (a stage at the midpoint scale is inserted before it) up to `bisections` times in all
//! (optional key, default [`DEFAULT_GROWTH_BISECTIONS`]); `close_stages = false` leaves out
//! the hard-terminal NLP at the end of every stage's phase but the last (default true).

mod model_file;

pub use model_file::{ModelProblem, DEFAULT_A_N, DEFAULT_S_MAX};

use crate::continuation::{ContinuationMode, ContinuationPlan};
use crate::fesd::{Clock, CutStep, Dcs, Discretization, FesdOptions, Horizon, Scheme};
#[cfg(doc)]
use crate::fesd::{MpccStrategy, NlpSettings};
use crate::hopper::{self, Hopper};
use crate::smoothing::{Growth, SystemAt};
use crate::tf::{PointMass, TimeFreezing};
use crate::OcpError;
use serde::Deserialize;
use std::path::Path;
use std::sync::Arc;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelSpec {
    #[serde(default)]
    kind: Option<String>,
    dim: usize,
    mass: f64,
    gravity: f64,
    mu: Option<f64>,
    a_n: f64,
    stance_stabilization: Option<StanceSpec>,
}

/// `model.stance_stabilization = { rate = k, depth = δ }`: the Baumgarte-stabilized normal
/// switching function c₂ = nᵀv + k (f_c + δ) ([`crate::tf::StanceStabilization`]).
#[derive(Deserialize, Clone, Copy)]
#[serde(deny_unknown_fields)]
struct StanceSpec {
    rate: f64,
    depth: f64,
}

/// An input error of a library call, named under the file section `section` (e.g.
/// "model."); other errors pass through.
fn in_section(section: &str, e: OcpError, bad: &dyn Fn(String) -> OcpError) -> OcpError {
    match e {
        OcpError::InvalidInput(m) => bad(format!("{section}{m}")),
        other => other,
    }
}

/// The plan of `ocp.continuation` (waypoints of the terminal q_x),
/// `ocp.continuation_sigma0` (default 1e-2) and `ocp.continuation_mode` (`"homotopy"`, the
/// default, or `"active-set"`); `None` without waypoints.
fn continuation_spec(
    keys: ContinuationKeys,
    terminal: &[(usize, f64)],
    global_speed: bool,
    bad: &dyn Fn(String) -> OcpError,
) -> Result<Option<ContinuationPlan>, OcpError> {
    let needs = |key: &str| Err(bad(format!("ocp.{key} needs ocp.continuation waypoints")));
    if keys.values.is_empty() {
        return match keys {
            ContinuationKeys {
                sigma0: Some(_), ..
            } => needs("continuation_sigma0"),
            ContinuationKeys { mode: Some(_), .. } => needs("continuation_mode"),
            ContinuationKeys {
                local_speed: true, ..
            } => needs("continuation_local_speed"),
            _ => Ok(None),
        };
    }
    if keys.local_speed && !global_speed {
        return Err(bad(
            "ocp.continuation_local_speed needs ocp.global_speed = true (the speed of time is already per interval)".into(),
        ));
    }
    ContinuationPlan::in_component(terminal, 0, keys.values, keys.sigma0.unwrap_or(1e-2))
        .map(|plan| {
            Some(ContinuationPlan {
                local_speed_after_first: keys.local_speed,
                ..plan.with_mode(keys.mode.unwrap_or_default())
            })
        })
        .map_err(|e| in_section("ocp.", e, bad))
}

/// The `ocp.continuation*` keys of a problem file.
struct ContinuationKeys<'a> {
    values: &'a [f64],
    sigma0: Option<f64>,
    mode: Option<ContinuationMode>,
    local_speed: bool,
}

/// The time-freezing system of `cls` with the file's a_n and optional stance stabilization.
fn time_freezing<C: crate::tf::Cls>(
    cls: C,
    a_n: f64,
    stance: Option<&StanceSpec>,
    bad: &dyn Fn(String) -> OcpError,
) -> Result<Arc<TimeFreezing<C>>, OcpError> {
    let mut tf = TimeFreezing::new(cls, a_n).map_err(|e| in_section("model.", e, bad))?;
    if let Some(st) = stance {
        tf = tf
            .with_stance_stabilization(st.rate, st.depth)
            .map_err(|e| in_section("model.", e, bad))?;
    }
    Ok(Arc::new(tf))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)]
struct OcpSpec {
    N: usize,
    T: f64,
    s_max: f64,
    y0: Vec<f64>,
    u_lo: Vec<f64>,
    u_hi: Vec<f64>,
    terminal: Vec<(usize, f64)>,
    #[serde(default)]
    clock: Option<String>,
    #[serde(default)]
    global_speed: bool,
    #[serde(default)]
    continuation: Vec<f64>,
    continuation_sigma0: Option<f64>,
    continuation_mode: Option<ContinuationMode>,
    #[serde(default)]
    continuation_local_speed: bool,
}

/// The horizon's clock (`ocp.clock`: `"stagewise"`, the default, or `"terminal"`), whether
/// one speed of time serves all intervals (`ocp.global_speed`, terminal clock only), and
/// the control weight that makes the running cost the physical-time integral of ‖u‖².
fn clock_spec(
    clock: Option<&str>,
    global_speed: bool,
    t_final: f64,
    n: usize,
    bad: &dyn Fn(String) -> OcpError,
) -> Result<(Clock, f64), OcpError> {
    match clock {
        None | Some("stagewise") if global_speed => Err(bad(
            "ocp.global_speed = true needs ocp.clock = \"terminal\"".into(),
        )),
        None | Some("stagewise") => Ok((Clock::Stagewise(t_final), t_final / n as f64)),
        Some("terminal") => Ok((Clock::Terminal(t_final), 1.0)),
        Some(other) => Err(bad(format!(
            "ocp.clock must be \"stagewise\" or \"terminal\", got \"{other}\""
        ))),
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct FesdSpec {
    n_s: Option<usize>,
    n_fe: Option<usize>,
    scheme: Option<String>,
    dcs: Option<String>,
    n_homotopy: Option<usize>,
    cut_schedule: Option<Vec<CutSpec>>,
    path_at_stages: Option<bool>,
    sigma0: Option<f64>,
    kappa: Option<f64>,
    homotopy_retries: Option<usize>,
    max_iter: Option<i32>,
    relaxation: Option<String>,
    polish_tol: Option<f64>,
    mu_adaptive: Option<bool>,
    first_mu: Option<f64>,
    smoothing: Option<crate::smoothing::Smoothing>,
}

/// The optional `[mpcc]` table of every problem file: `method = "homotopy"` (default) or
/// `"active-set"` ([`MpccMethod`](crate::fesd::MpccMethod)) and the active-set method's
/// settings ([`ActiveSetOptions`](crate::fesd::ActiveSetOptions)): `phase_one_tol`,
/// `trust_region`, `trust_region_min`, `max_lpecs`, `time_limit` (CPU seconds),
/// `lpec_time_limit` (seconds per LPEC), `active_tol`.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct MpccSpec {
    method: Option<String>,
    phase_one_tol: Option<f64>,
    trust_region: Option<f64>,
    trust_region_min: Option<f64>,
    max_lpecs: Option<usize>,
    time_limit: Option<f64>,
    lpec_time_limit: Option<f64>,
    active_tol: Option<f64>,
}

impl MpccSpec {
    /// Applies the keys to `o`; errors name the key under `mpcc.`.
    pub(crate) fn apply(
        &self,
        mut o: FesdOptions,
        bad: &dyn Fn(String) -> OcpError,
    ) -> Result<FesdOptions, OcpError> {
        let section = |e: OcpError| in_section("mpcc.", e, bad);
        if let Some(m) = &self.method {
            o.mpcc.method = crate::fesd::MpccMethod::from_name(m).map_err(section)?;
        }
        let a = &mut o.mpcc.active_set;
        let set = |target: &mut f64, value: Option<f64>| {
            if let Some(v) = value {
                *target = v;
            }
        };
        set(&mut a.phase_one_tol, self.phase_one_tol);
        set(&mut a.trust_region, self.trust_region);
        set(&mut a.trust_region_min, self.trust_region_min);
        set(&mut a.time_limit, self.time_limit);
        set(&mut a.lpec_time_limit, self.lpec_time_limit);
        set(&mut a.active_tol, self.active_tol);
        if let Some(n) = self.max_lpecs {
            a.max_lpecs = n;
        }
        a.validate_named("").map_err(section)?;
        Ok(o)
    }
}

/// One `[[fesd.cut_schedule]]` entry ([`MpccStrategy::cut_schedule`](crate::fesd::MpccStrategy::cut_schedule)).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CutSpec {
    sigma: f64,
    delta: Option<f64>,
    delta_v: Option<f64>,
}

impl FesdSpec {
    /// Applies the optional keys to `o` through the option groups' builders, whose rules
    /// ([`Discretization::validate`], [`MpccStrategy::validate`], [`NlpSettings::validate`])
    /// name the key under `fesd.` (`n_s`/`n_fe` defaults are the caller's).
    fn apply(
        &self,
        o: FesdOptions,
        bad: &dyn Fn(String) -> OcpError,
    ) -> Result<FesdOptions, OcpError> {
        let fesd = |e: OcpError| in_section("fesd.", e, bad);
        let mut d = o.discretization.to_builder();
        if let Some(n) = self.n_s {
            d = d.n_s(n);
        }
        if let Some(n) = self.n_fe {
            d = d.n_fe(n);
        }
        if let Some(p) = self.path_at_stages {
            d = d.path_at_stages(p);
        }
        d = d.scheme(match self.scheme.as_deref() {
            None | Some("radau") | Some("radau-iia") => Scheme::RadauIIA,
            Some("gauss-legendre") => Scheme::GaussLegendre,
            Some(other) => {
                return Err(bad(format!(
                    "fesd.scheme must be \"radau\" or \"gauss-legendre\", got \"{other}\""
                )))
            }
        });
        d = d.dcs(match self.dcs.as_deref() {
            None | Some("step") => Dcs::Step,
            Some("stewart") => Dcs::Stewart,
            Some(other) => {
                return Err(bad(format!(
                    "fesd.dcs must be \"step\" or \"stewart\", got \"{other}\""
                )))
            }
        });
        let mut m = o.mpcc.to_builder();
        if let Some(n) = self.n_homotopy {
            m = m.n_homotopy(n);
        }
        if let Some(s) = self.sigma0 {
            m = m.sigma0(s);
        }
        if let Some(k) = self.kappa {
            m = m.kappa(k);
        }
        if let Some(r) = self.homotopy_retries {
            m = m.homotopy_retries(r);
        }
        if let Some(r) = self.relaxation.as_deref() {
            let (penalty, elastic) = match r {
                "scholtes" => (false, false),
                "penalty" => (true, false),
                "elastic" => (false, true),
                other => {
                    return Err(bad(format!(
                        "fesd.relaxation must be \"scholtes\", \"penalty\" or \"elastic\", got \"{other}\""
                    )))
                }
            };
            m = m.penalty(penalty).elastic(elastic);
        }
        if let Some(t) = self.polish_tol {
            m = m.polish_tol(t);
        }
        m = m.smoothing(self.smoothing.clone());
        if let Some(c) = &self.cut_schedule {
            m = m.cut_schedule(
                c.iter()
                    .map(|c| CutStep {
                        sigma: c.sigma,
                        delta: c.delta,
                        delta_v: c.delta_v,
                    })
                    .collect(),
            );
        }
        let mut n = o.nlp.to_builder();
        if let Some(a) = self.mu_adaptive {
            n = n.mu_adaptive(a);
        }
        if let Some(mu) = self.first_mu {
            n = n.first_mu(mu);
        }
        if let Some(i) = self.max_iter {
            n = n.max_iter(i);
        }
        Ok(FesdOptions {
            discretization: d.build().map_err(fesd)?,
            mpcc: m.build().map_err(fesd)?,
            nlp: n.build().map_err(fesd)?,
        })
    }
}

/// The options of a point-mass problem file before its `[fesd]` keys: Radau IIA with
/// n_s = 2, N_FE = 3, the other fields at their defaults ([`FesdOptions::default`]).
pub fn point_mass_options() -> FesdOptions {
    // valid by construction (checked in tests/error_messages.rs)
    FesdOptions {
        discretization: Discretization {
            n_s: 2,
            n_fe: 3,
            ..Discretization::default()
        },
        ..FesdOptions::default()
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProblemSpec {
    model: ModelSpec,
    ocp: OcpSpec,
    #[serde(default)]
    fesd: FesdSpec,
    #[serde(default)]
    mpcc: MpccSpec,
}

/// A parsed problem file: the time-freezing system, the horizon and the discretization.
pub struct OcpProblem {
    /// The time-freezing reformulation of the point mass.
    pub tf: Arc<TimeFreezing<PointMass>>,
    /// Horizon, bounds, terminal constraints and the control weight.
    pub horizon: Horizon,
    /// FESD and homotopy options ([`point_mass_options`]: `n_s` default 2, `n_fe` default 3).
    pub options: FesdOptions,
    /// Physical horizon T.
    pub t_final: f64,
    /// Continuation in the terminal q_x (`ocp.continuation`), `None` for a direct solve.
    pub continuation: Option<ContinuationPlan>,
}

impl OcpProblem {
    /// Parses a problem from TOML text; `source` names the file in error messages.
    ///
    /// # Errors
    /// [`OcpError::InvalidInput`] naming the source, and the line and field for TOML errors,
    /// for malformed files, unknown fields, `dim` ∉ {1, 2}, `N = 0`, `T ≤ 0` or non-finite
    /// numbers, and the time-freezing system's own checks.
    pub fn from_toml_str(text: &str, source: Option<&str>) -> Result<Self, OcpError> {
        let name = source.unwrap_or("<problem>");
        let bad = |msg: String| OcpError::InvalidInput(format!("{name}: {msg}"));
        let p: ProblemSpec = toml::from_str(text).map_err(|e| bad(e.to_string()))?;
        if let Some(kind) = p.model.kind.as_deref().filter(|k| *k != "point-mass") {
            return Err(bad(format!(
                "model.kind = \"{kind}\" is not a point mass (use Problem::from_toml_str)"
            )));
        }
        if p.model.dim != 1 && p.model.dim != 2 {
            return Err(bad(format!(
                "model.dim must be 1 or 2, got {}",
                p.model.dim
            )));
        }
        if p.ocp.N == 0 {
            return Err(bad("ocp.N must be positive".into()));
        }
        if !(p.ocp.T.is_finite() && p.ocp.T > 0.0) {
            return Err(bad(format!("ocp.T must be positive, got {}", p.ocp.T)));
        }
        if !(p.ocp.s_max.is_finite() && p.ocp.s_max >= 1.0) {
            return Err(bad(format!("ocp.s_max must be ≥ 1, got {}", p.ocp.s_max)));
        }
        let finite = |field: &str, v: &[f64]| {
            if v.iter().all(|x| x.is_finite()) {
                Ok(())
            } else {
                Err(bad(format!("{field} has a non-finite entry")))
            }
        };
        finite("ocp.y0", &p.ocp.y0)?;
        finite("ocp.u_lo", &p.ocp.u_lo)?;
        finite("ocp.u_hi", &p.ocp.u_hi)?;
        let pm = PointMass {
            dim: p.model.dim,
            mass: p.model.mass,
            gravity: p.model.gravity,
            mu: p.model.mu,
        };
        let tf = time_freezing(pm, p.model.a_n, p.model.stance_stabilization.as_ref(), &bad)?;
        let n = p.ocp.N;
        let dt = p.ocp.T / n as f64;
        let (clock, control_weight) =
            clock_spec(p.ocp.clock.as_deref(), p.ocp.global_speed, p.ocp.T, n, &bad)?;
        let horizon = Horizon {
            y0: p.ocp.y0,
            lam0: None,
            n_steps: n,
            step_len: dt,
            u_bounds: vec![(p.ocp.u_lo, p.ocp.u_hi); n],
            s_bounds: (1.0, p.ocp.s_max),
            clock,
            global_speed: p.ocp.global_speed,
            terminal: p.ocp.terminal,
            y_bounds: None,
            control_weight,
            tracking: vec![],
        };
        let continuation = continuation_spec(
            ContinuationKeys {
                values: &p.ocp.continuation,
                sigma0: p.ocp.continuation_sigma0,
                mode: p.ocp.continuation_mode,
                local_speed: p.ocp.continuation_local_speed,
            },
            &horizon.terminal,
            horizon.global_speed,
            &bad,
        )?;
        let options = p
            .mpcc
            .apply(p.fesd.apply(point_mass_options(), &bad)?, &bad)?;
        Ok(Self {
            tf,
            horizon,
            options,
            t_final: p.ocp.T,
            continuation,
        })
    }

    /// Reads and parses a problem file.
    ///
    /// # Errors
    /// [`OcpError::InvalidInput`] when the file cannot be read, or as
    /// [`OcpProblem::from_toml_str`].
    pub fn from_file(path: &Path) -> Result<Self, OcpError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| OcpError::InvalidInput(format!("{}: {e}", path.display())))?;
        Self::from_toml_str(&text, Some(&path.display().to_string()))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HopperModelSpec {
    kind: String,
    a_n: f64,
    mu: Option<f64>,
    holes: Option<Vec<f64>>,
    hole_axes: Option<(f64, f64)>,
    stance_stabilization: Option<StanceSpec>,
    hole_growth: Option<HoleGrowthSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HoleGrowthSpec {
    scales: Vec<f64>,
    factors: Vec<f64>,
    bisections: Option<usize>,
    close_stages: Option<bool>,
}

/// Stages that a hole growth may insert by bisection when a stage fails (problem files:
/// `model.hole_growth.bisections`): each failing phase costs up to `max_iter` IPOPT
/// iterations, so a few.
pub const DEFAULT_GROWTH_BISECTIONS: usize = 3;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)]
struct HopperOcpSpec {
    N: usize,
    T: f64,
    target_x: f64,
    u_max: f64,
    s_max: f64,
    #[serde(default)]
    clock: Option<String>,
    #[serde(default)]
    global_speed: bool,
    #[serde(default)]
    continuation: Vec<f64>,
    continuation_sigma0: Option<f64>,
    continuation_mode: Option<ContinuationMode>,
    #[serde(default)]
    continuation_local_speed: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HopperSpec {
    model: HopperModelSpec,
    ocp: HopperOcpSpec,
    #[serde(default)]
    fesd: FesdSpec,
    #[serde(default)]
    mpcc: MpccSpec,
}

#[derive(Deserialize)]
struct KindProbe {
    model: KindOnly,
}

#[derive(Deserialize)]
struct KindOnly {
    kind: Option<String>,
}

/// A parsed hopper problem file (`kind = "hopper"`, seed 002 Sec. 6).
pub struct HopperProblem {
    /// The time-freezing reformulation of the hopper (friction, holes as path constraints).
    pub tf: Arc<TimeFreezing<Hopper>>,
    /// The horizon of [`hopper::horizon`].
    pub horizon: Horizon,
    /// FESD and homotopy options: [`hopper::paper_options`] (Scholtes relaxation, cross
    /// complementarity on the gap only, ρ_sot = 100, IPOPT tol 1e-8), `n_s`/`n_fe` default 3,
    /// changed by the file's `[fesd]` keys.
    pub options: FesdOptions,
    /// Physical horizon T.
    pub t_final: f64,
    /// Target hip position x.
    pub target_x: f64,
    /// Continuation in the target x (`ocp.continuation`), `None` for a direct solve.
    pub continuation: Option<ContinuationPlan>,
    /// Hole growth in the smoothing phase (`model.hole_growth`), `None` for a direct solve.
    pub growth: Option<Growth<Hopper>>,
}

impl HopperProblem {
    /// Parses a hopper problem from TOML text.
    ///
    /// # Errors
    /// [`OcpError::InvalidInput`] naming the source for malformed files, unknown fields,
    /// `kind` other than `"hopper"`, `N = 0`, non-positive or non-finite `T`, `u_max`,
    /// `s_max < 1`, and the time-freezing system's own checks.
    pub fn from_toml_str(text: &str, source: Option<&str>) -> Result<Self, OcpError> {
        let name = source.unwrap_or("<problem>");
        let bad = |msg: String| OcpError::InvalidInput(format!("{name}: {msg}"));
        let p: HopperSpec = toml::from_str(text).map_err(|e| bad(e.to_string()))?;
        if p.model.kind != "hopper" {
            return Err(bad(format!(
                "model.kind must be \"hopper\", got \"{}\"",
                p.model.kind
            )));
        }
        let o = &p.ocp;
        if o.N == 0 {
            return Err(bad("ocp.N must be positive".into()));
        }
        for (field, v) in [("ocp.T", o.T), ("ocp.u_max", o.u_max)] {
            if !(v.is_finite() && v > 0.0) {
                return Err(bad(format!("{field} must be positive, got {v}")));
            }
        }
        if !(o.s_max.is_finite() && o.s_max >= 1.0) {
            return Err(bad(format!("ocp.s_max must be ≥ 1, got {}", o.s_max)));
        }
        if !o.target_x.is_finite() {
            return Err(bad("ocp.target_x must be finite".into()));
        }
        let mut hop = Hopper::default();
        if let Some(mu) = p.model.mu {
            hop.mu = mu;
        }
        if let Some(h) = p.model.holes {
            hop.holes = h;
        }
        if let Some(ax) = p.model.hole_axes {
            if !(ax.0 > 0.0 && ax.1 > 0.0) {
                return Err(bad("model.hole_axes must be positive".into()));
            }
            hop.hole_axes = ax;
        }
        if hop.holes.iter().any(|x| !x.is_finite()) || !(hop.mu.is_finite() && hop.mu >= 0.0) {
            return Err(bad(
                "model.holes and model.mu must be finite (mu ≥ 0)".into()
            ));
        }
        let stance = p.model.stance_stabilization.as_ref();
        let growth = match &p.model.hole_growth {
            None => None,
            Some(g) => {
                let (base, a_n) = (hop.clone(), p.model.a_n);
                let stance = stance.copied();
                let system: SystemAt<Hopper> = Arc::new(move |s| {
                    let plain = |m: String| OcpError::InvalidInput(m);
                    time_freezing(base.with_hole_scale(s), a_n, stance.as_ref(), &plain)
                });
                let growth = Growth {
                    scales: g.scales.clone(),
                    system,
                    factors: g.factors.clone(),
                    bisections: g.bisections.unwrap_or(DEFAULT_GROWTH_BISECTIONS),
                    close_stages: g.close_stages.unwrap_or(true),
                };
                growth
                    .validate()
                    .map_err(|e| in_section("model.hole_", e, &bad))?;
                for k in 0..growth.scales.len() {
                    growth.stage(k).map_err(|e| in_section("model.", e, &bad))?;
                }
                Some(growth)
            }
        };
        let tf = time_freezing(hop, p.model.a_n, stance, &bad)?;
        let mut horizon = hopper::horizon(o.N, o.T, o.target_x, o.u_max, o.s_max);
        (horizon.clock, horizon.control_weight) =
            clock_spec(o.clock.as_deref(), o.global_speed, o.T, o.N, &bad)?;
        horizon.global_speed = o.global_speed;
        if let Some(st) = tf.stance {
            hopper::rest_on_stabilized_ground(&mut horizon, st.depth);
        }
        let options = p
            .mpcc
            .apply(p.fesd.apply(hopper::paper_options(), &bad)?, &bad)?;
        let continuation = continuation_spec(
            ContinuationKeys {
                values: &o.continuation,
                sigma0: o.continuation_sigma0,
                mode: o.continuation_mode,
                local_speed: o.continuation_local_speed,
            },
            &horizon.terminal,
            horizon.global_speed,
            &bad,
        )?;
        if growth.is_some() && options.mpcc.smoothing.is_none() {
            return Err(bad(
                "model.hole_growth needs the smoothing phase ([fesd.smoothing])".into(),
            ));
        }
        if growth.is_some() && continuation.is_some() {
            return Err(bad(
                "model.hole_growth and ocp.continuation cannot be combined".into(),
            ));
        }
        Ok(Self {
            tf,
            horizon,
            options,
            t_final: o.T,
            target_x: o.target_x,
            continuation,
            growth,
        })
    }
}

/// A problem file: on a model file (`[ocp] model = "…"`, [`ModelProblem`]) or on one of the
/// built-in models, selected by `[model] kind` (`"point-mass"`, the default, or `"hopper"`).
pub enum Problem {
    /// The point mass ([`OcpProblem`]).
    PointMass(OcpProblem),
    /// The hopper ([`HopperProblem`]).
    Hopper(HopperProblem),
    /// A model file ([`ModelProblem`]).
    Model(Box<ModelProblem>),
}

impl Problem {
    /// Parses a problem of either model from TOML text.
    ///
    /// # Errors
    /// As [`OcpProblem::from_toml_str`] / [`HopperProblem::from_toml_str`] /
    /// [`ModelProblem::from_toml_str`], and for an unknown `model.kind`.
    pub fn from_toml_str(text: &str, source: Option<&str>) -> Result<Self, OcpError> {
        let name = source.unwrap_or("<problem>");
        let value: toml::Table =
            toml::from_str(text).map_err(|e| OcpError::InvalidInput(format!("{name}: {e}")))?;
        let on_model_file = value
            .get("ocp")
            .and_then(|o| o.get("model"))
            .is_some_and(|m| m.is_str());
        if on_model_file {
            return Ok(Self::Model(Box::new(ModelProblem::from_toml_str(
                text, source,
            )?)));
        }
        let probe: KindProbe =
            toml::from_str(text).map_err(|e| OcpError::InvalidInput(format!("{name}: {e}")))?;
        match probe.model.kind.as_deref() {
            None | Some("point-mass") => {
                Ok(Self::PointMass(OcpProblem::from_toml_str(text, source)?))
            }
            Some("hopper") => Ok(Self::Hopper(HopperProblem::from_toml_str(text, source)?)),
            Some(other) => Err(OcpError::InvalidInput(format!(
                "{name}: model.kind must be \"point-mass\" or \"hopper\", got \"{other}\""
            ))),
        }
    }

    /// Names of the state y = (q, v, t) and of the controls: the model's coordinates and
    /// actuators for a problem on a model file, `q1 … v1 … t` and `u1 …` for the built-in
    /// models.
    pub fn names(&self) -> (Vec<String>, Vec<String>) {
        use crate::tf::Cls;
        let numbered = |ny: usize, nu: usize| {
            let nq = (ny - 1) / 2;
            let mut state: Vec<String> = (0..nq).map(|i| format!("q{}", i + 1)).collect();
            state.extend((0..nq).map(|i| format!("v{}", i + 1)));
            state.push("t".into());
            (state, (0..nu).map(|i| format!("u{}", i + 1)).collect())
        };
        match self {
            Self::PointMass(p) => numbered(p.tf.ny(), p.tf.cls.nu()),
            Self::Hopper(p) => numbered(p.tf.ny(), p.tf.cls.nu()),
            Self::Model(p) => (p.state_names.clone(), p.control_names.clone()),
        }
    }

    /// Reads and parses a problem file of either model.
    ///
    /// # Errors
    /// [`OcpError::InvalidInput`] when the file cannot be read, or as
    /// [`Problem::from_toml_str`].
    pub fn from_file(path: &Path) -> Result<Self, OcpError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| OcpError::InvalidInput(format!("{}: {e}", path.display())))?;
        Self::from_toml_str(&text, Some(&path.display().to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hopper_file_selects_the_hopper() {
        let text = "[model]\nkind = \"hopper\"\na_n = 200.0\nholes = [0.5]\n\
                    [ocp]\nN = 4\nT = 2.5\ntarget_x = 0.0\nu_max = 60.0\ns_max = 5.0\n\
                    [fesd]\nn_s = 1\nn_fe = 2\nscheme = \"gauss-legendre\"\n";
        let Ok(Problem::Hopper(h)) = Problem::from_toml_str(text, None) else {
            panic!("not parsed as a hopper");
        };
        assert_eq!(h.horizon.n_steps, 4);
        assert_eq!(h.tf.cls.holes, vec![0.5]);
        assert_eq!(h.options.discretization.scheme, Scheme::GaussLegendre);
        assert_eq!(
            (
                h.options.discretization.n_s,
                h.options.discretization.n_fe,
                h.options.discretization.cross_components
            ),
            (1, 2, 1)
        );
        // the point-mass constructor refuses a hopper file; bad kinds and keys are named
        assert!(OcpProblem::from_toml_str(text, None).is_err());
        let e = Problem::from_toml_str(&text.replace("\"hopper\"", "\"robot\""), None);
        assert!(matches!(e, Err(OcpError::InvalidInput(m)) if m.contains("robot")));
        let e = Problem::from_toml_str(&text.replace("gauss-legendre", "euler"), None);
        assert!(matches!(e, Err(OcpError::InvalidInput(m)) if m.contains("fesd.scheme")));
        // the cut continuation: entries in order, omitted thresholds inactive
        let cut = format!(
            "{text}cut_schedule = [{{ sigma = 1.0 }}, {{ sigma = 0.1, delta = 0.05, delta_v = 0.5 }}]\n"
        );
        let Ok(Problem::Hopper(h)) = Problem::from_toml_str(&cut, None) else {
            panic!("cut schedule not parsed");
        };
        assert_eq!(
            h.options.mpcc.cut_schedule,
            vec![
                CutStep {
                    sigma: 1.0,
                    delta: None,
                    delta_v: None
                },
                CutStep {
                    sigma: 0.1,
                    delta: Some(0.05),
                    delta_v: Some(0.5)
                }
            ]
        );
        let e = Problem::from_toml_str(&cut.replace("delta = 0.05", "delta = -1.0"), None);
        assert!(matches!(e, Err(OcpError::InvalidInput(m)) if m.contains("cut_schedule")));
    }

    #[test]
    fn smoothing_keys_give_the_smoothing_phase() {
        let text = "[model]\nkind = \"hopper\"\na_n = 200.0\n\
                    [ocp]\nN = 4\nT = 2.5\ntarget_x = 0.0\nu_max = 60.0\ns_max = 5.0\n\
                    [fesd]\nsigma0 = 1e-4\nmax_iter = 3000\n\
                    [fesd.smoothing]\nwidths = [0.001, 0.05, 0.05]\nfactors = [100.0, 1.0, 0.1]\n";
        let Ok(Problem::Hopper(h)) = Problem::from_toml_str(text, None) else {
            panic!("not parsed");
        };
        let sm = h.options.mpcc.smoothing.expect("smoothing");
        assert_eq!(sm.factors, vec![100.0, 1.0, 0.1]);
        assert_eq!((sm.lambda_weight, sm.terminal_weight), (1e-3, 100.0));
        assert!(sm.cross_sigmas.is_empty());
        assert_eq!(
            (h.options.mpcc.sigma0, h.options.nlp.max_iter),
            (1e-4, 3000)
        );
        let e =
            Problem::from_toml_str(&text.replace("[100.0, 1.0, 0.1]", "[-1.0]"), Some("p.toml"));
        assert!(
            matches!(&e, Err(OcpError::InvalidInput(m)) if m.contains("fesd.smoothing.factors") && m.contains("p.toml")),
            "{:?}",
            e.err()
        );
        let e = Problem::from_toml_str(&text.replace("sigma0 = 1e-4", "sigma0 = 0.0"), None);
        assert!(matches!(e, Err(OcpError::InvalidInput(m)) if m.contains("fesd.sigma0")));
        let kappa = text.replace("sigma0 = 1e-4", "kappa = 0.3");
        let Ok(Problem::Hopper(h)) = Problem::from_toml_str(&kappa, None) else {
            panic!("kappa not parsed");
        };
        assert_eq!(h.options.mpcc.kappa, 0.3);
        assert_eq!(h.options.mpcc.homotopy_retries, 2);
        let retries = text.replace("sigma0 = 1e-4", "homotopy_retries = 0");
        let Ok(Problem::Hopper(h)) = Problem::from_toml_str(&retries, None) else {
            panic!("homotopy_retries not parsed");
        };
        assert_eq!(h.options.mpcc.homotopy_retries, 0);
        let e = Problem::from_toml_str(&text.replace("sigma0 = 1e-4", "kappa = 1.0"), None);
        assert!(matches!(e, Err(OcpError::InvalidInput(m)) if m.contains("fesd.kappa")));
    }

    /// `relaxation`, `polish_tol` and `mu_adaptive` set the homotopy's end-game options;
    /// the hopper's default relaxation is Scholtes (the paper's), and bad values are named.
    #[test]
    fn end_game_keys_set_the_relaxation_and_polish() {
        let text = "[model]\nkind = \"hopper\"\na_n = 200.0\n\
                    [ocp]\nN = 4\nT = 2.5\ntarget_x = 0.0\nu_max = 60.0\ns_max = 5.0\n\
                    [fesd]\nmax_iter = 3000\n";
        let parse = |extra: &str| Problem::from_toml_str(&format!("{text}{extra}"), None);
        let Ok(Problem::Hopper(h)) = parse("") else {
            panic!("not parsed");
        };
        assert_eq!(
            (h.options.mpcc.penalty, h.options.mpcc.elastic),
            (false, false)
        );
        assert!(!h.options.nlp.mu_adaptive);
        for (name, want) in [
            ("penalty", (true, false)),
            ("elastic", (false, true)),
            ("scholtes", (false, false)),
        ] {
            let Ok(Problem::Hopper(h)) = parse(&format!("relaxation = \"{name}\"\n")) else {
                panic!("{name} not parsed");
            };
            assert_eq!(
                (h.options.mpcc.penalty, h.options.mpcc.elastic),
                want,
                "{name}"
            );
        }
        let Ok(Problem::Hopper(h)) =
            parse("polish_tol = 1e-2\nmu_adaptive = true\nfirst_mu = 1e-6\n")
        else {
            panic!("polish_tol not parsed");
        };
        assert_eq!(
            (h.options.mpcc.polish_tol, h.options.nlp.mu_adaptive),
            (1e-2, true)
        );
        assert_eq!(h.options.nlp.first_mu, Some(1e-6));
        let e = parse("first_mu = 0.0\n");
        assert!(matches!(e, Err(OcpError::InvalidInput(m)) if m.contains("fesd.first_mu")));
        let e = parse("relaxation = \"smooth\"\n");
        assert!(
            matches!(e, Err(OcpError::InvalidInput(m)) if m.contains("fesd.relaxation") && m.contains("smooth"))
        );
        let e = parse("polish_tol = -1.0\n");
        assert!(matches!(e, Err(OcpError::InvalidInput(m)) if m.contains("fesd.polish_tol")));
    }

    #[test]
    fn hole_growth_keys_give_the_grown_stages() {
        let text = "[model]\nkind = \"hopper\"\na_n = 200.0\nholes = [0.5, 1.5]\n\
                    hole_growth = { scales = [0.0, 0.5], factors = [3.0, 0.1] }\n\
                    [ocp]\nN = 4\nT = 2.5\ntarget_x = 0.0\nu_max = 60.0\ns_max = 5.0\n\
                    [fesd.smoothing]\nwidths = [0.001, 0.05, 0.05]\nfactors = [100.0, 0.1]\n";
        let Ok(Problem::Hopper(h)) = Problem::from_toml_str(text, None) else {
            panic!("not parsed");
        };
        let g = h.growth.expect("growth");
        assert_eq!(g.factors, vec![3.0, 0.1]);
        assert_eq!(g.scales, vec![0.0, 0.5]);
        assert_eq!(g.bisections, DEFAULT_GROWTH_BISECTIONS);
        assert!(g.close_stages);
        assert!(g.stage(0).unwrap().cls.holes.is_empty());
        assert_eq!(g.stage(1).unwrap().cls.holes, vec![0.5, 1.5]);
        assert_eq!(g.stage(1).unwrap().cls.hole_axes, (0.125, 0.05));
        let midway = (g.system)(0.75).unwrap();
        assert!((midway.cls.hole_axes.0 - 0.1875).abs() < 1e-15);
        let none = text.replace(
            "factors = [3.0, 0.1] }",
            "factors = [3.0, 0.1], bisections = 0 }",
        );
        let Ok(Problem::Hopper(h)) = Problem::from_toml_str(&none, None) else {
            panic!("not parsed");
        };
        assert_eq!(h.growth.expect("growth").bisections, 0);
        assert_eq!(h.tf.cls.hole_axes, (0.25, 0.1));
        for (from, to, field) in [
            (
                "scales = [0.0, 0.5]",
                "scales = [0.5, 0.2]",
                "model.hole_growth.scales",
            ),
            (
                "scales = [0.0, 0.5]",
                "scales = [1.0]",
                "model.hole_growth.scales",
            ),
            (
                "factors = [3.0, 0.1]",
                "factors = []",
                "model.hole_growth.factors",
            ),
            (
                "[fesd.smoothing]\nwidths = [0.001, 0.05, 0.05]\nfactors = [100.0, 0.1]\n",
                "",
                "[fesd.smoothing]",
            ),
        ] {
            let e = Problem::from_toml_str(&text.replace(from, to), Some("g.toml"));
            assert!(
                matches!(&e, Err(OcpError::InvalidInput(m)) if m.contains(field) && m.contains("g.toml")),
                "{to}: {:?}",
                e.err()
            );
        }
        let both = text.replace("s_max = 5.0\n", "s_max = 5.0\ncontinuation = [0.0]\n");
        let e = Problem::from_toml_str(&both, None);
        assert!(matches!(e, Err(OcpError::InvalidInput(m)) if m.contains("cannot be combined")));
    }

    #[test]
    fn clock_keys_select_the_terminal_clock_and_one_speed() {
        let text = "[model]\nkind = \"hopper\"\na_n = 200.0\n\
                    [ocp]\nN = 4\nT = 2.5\ntarget_x = 0.0\nu_max = 60.0\ns_max = 5.0\n";
        let Ok(Problem::Hopper(h)) = Problem::from_toml_str(text, None) else {
            panic!("not parsed");
        };
        assert_eq!(h.horizon.clock, Clock::Stagewise(2.5));
        assert!(!h.horizon.global_speed);
        assert_eq!(h.horizon.control_weight, 2.5 / 4.0);
        let terminal = format!("{text}clock = \"terminal\"\nglobal_speed = true\n");
        let Ok(Problem::Hopper(h)) = Problem::from_toml_str(&terminal, None) else {
            panic!("terminal clock not parsed");
        };
        assert_eq!(h.horizon.clock, Clock::Terminal(2.5));
        assert!(h.horizon.global_speed);
        assert_eq!(h.horizon.control_weight, 1.0);
        assert!(h.options.discretization.path_at_stages);
        let ends = format!("{terminal}[fesd]\npath_at_stages = false\n");
        let Ok(Problem::Hopper(h)) = Problem::from_toml_str(&ends, None) else {
            panic!("path_at_stages not parsed");
        };
        assert!(!h.options.discretization.path_at_stages);
        // one speed of time under stage clocks, and unknown clock names, are named errors
        let e = Problem::from_toml_str(&format!("{text}global_speed = true\n"), None);
        assert!(matches!(e, Err(OcpError::InvalidInput(m)) if m.contains("ocp.global_speed")));
        let e = Problem::from_toml_str(&format!("{text}clock = \"physical\"\n"), None);
        assert!(matches!(e, Err(OcpError::InvalidInput(m)) if m.contains("ocp.clock")));
        let particle = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/ocp_particle.toml"
        ))
        .unwrap()
        .replace("[ocp]\n", "[ocp]\nclock = \"terminal\"\n");
        let p = OcpProblem::from_toml_str(&particle, None).unwrap();
        assert_eq!(p.horizon.clock, Clock::Terminal(p.t_final));
    }

    #[test]
    fn stance_stabilization_key_builds_the_stabilized_switching_function() {
        let text = "[model]\nkind = \"hopper\"\na_n = 200.0\n\
                    stance_stabilization = { rate = 10.0, depth = 1e-3 }\n\
                    [ocp]\nN = 4\nT = 2.5\ntarget_x = 0.0\nu_max = 60.0\ns_max = 5.0\n";
        let Ok(Problem::Hopper(h)) = Problem::from_toml_str(text, None) else {
            panic!("not parsed");
        };
        let st = h.tf.stance.expect("stabilization set");
        assert_eq!((st.rate, st.depth), (10.0, 1e-3));
        // start and target rest δ lower, where the stabilized stance is at rest
        assert!((h.horizon.y0[1] - 0.399).abs() < 1e-15);
        assert!(h.horizon.terminal.contains(&(1, 0.4 - 1e-3)));
        let e = Problem::from_toml_str(&text.replace("rate = 10.0", "rate = -1.0"), Some("h.toml"));
        assert!(
            matches!(&e, Err(OcpError::InvalidInput(m)) if m.starts_with("h.toml: model.stance stabilization rate -1")),
            "{:?}",
            e.err()
        );
        let particle = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/ocp_particle.toml"
        ))
        .unwrap();
        assert!(OcpProblem::from_toml_str(&particle, None)
            .unwrap()
            .tf
            .stance
            .is_none());
        let stab = particle.replacen(
            "[model]\n",
            "[model]\nstance_stabilization = { rate = 5.0, depth = 0.0 }\n",
            1,
        );
        let p = OcpProblem::from_toml_str(&stab, None).unwrap();
        assert_eq!(p.tf.stance.map(|s| s.rate), Some(5.0));
    }

    #[test]
    fn continuation_keys_give_waypoints_ending_at_the_target() {
        let text = "[model]\nkind = \"hopper\"\na_n = 200.0\n\
                    [ocp]\nN = 4\nT = 2.5\ntarget_x = 0.3\nu_max = 60.0\ns_max = 5.0\n";
        let Ok(Problem::Hopper(h)) = Problem::from_toml_str(text, None) else {
            panic!("not parsed");
        };
        assert!(h.continuation.is_none());
        let cont = format!("{text}continuation = [0.0, 0.1]\ncontinuation_sigma0 = 1e-3\n");
        let Ok(Problem::Hopper(h)) = Problem::from_toml_str(&cont, None) else {
            panic!("continuation not parsed");
        };
        let plan = h.continuation.expect("plan");
        assert_eq!(plan.warm_sigma0, 1e-3);
        let xs: Vec<f64> = plan.waypoints.iter().map(|w| w[0].1).collect();
        assert_eq!(xs, [0.0, 0.1, 0.3]);
        assert!(plan
            .waypoints
            .iter()
            .all(|w| w[1..] == h.horizon.terminal[1..]));
        let e = Problem::from_toml_str(&format!("{text}continuation_sigma0 = 1e-3\n"), None);
        assert!(
            matches!(e, Err(OcpError::InvalidInput(m)) if m.contains("ocp.continuation_sigma0"))
        );
        let e = Problem::from_toml_str(
            &format!("{text}continuation = [0.1]\ncontinuation_sigma0 = 0.0\n"),
            None,
        );
        assert!(matches!(e, Err(OcpError::InvalidInput(m)) if m.contains("ocp.continuation")));
        assert_eq!(plan.mode, ContinuationMode::Homotopy);
        let active = format!("{cont}continuation_mode = \"active-set\"\n");
        let Ok(Problem::Hopper(h)) = Problem::from_toml_str(&active, None) else {
            panic!("continuation_mode not parsed");
        };
        assert_eq!(
            h.continuation.map(|p| p.mode),
            Some(ContinuationMode::ActiveSet)
        );
        let e =
            Problem::from_toml_str(&format!("{text}continuation_mode = \"active-set\"\n"), None);
        assert!(matches!(e, Err(OcpError::InvalidInput(m)) if m.contains("ocp.continuation_mode")));
        let e = Problem::from_toml_str(&format!("{cont}continuation_local_speed = true\n"), None);
        assert!(
            matches!(e, Err(OcpError::InvalidInput(m)) if m.contains("ocp.continuation_local_speed"))
        );
        let local = format!(
            "{cont}global_speed = true\nclock = \"terminal\"\ncontinuation_local_speed = true\n"
        );
        let Ok(Problem::Hopper(h)) = Problem::from_toml_str(&local, None) else {
            panic!("continuation_local_speed not parsed");
        };
        assert!(h.continuation.is_some_and(|p| p.local_speed_after_first));
        let e = Problem::from_toml_str(&format!("{cont}continuation_mode = \"bisect\"\n"), None);
        assert!(matches!(e, Err(OcpError::InvalidInput(m)) if m.contains("continuation_mode")));
    }

    #[test]
    fn every_ocp_example_parses() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples");
        let mut n = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with("ocp_") && name.ends_with(".toml") {
                Problem::from_file(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
                n += 1;
            }
        }
        assert!(n >= 4, "{n} OCP examples");
    }

    #[test]
    fn point_mass_file_is_unchanged() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/ocp_particle.toml"
        ))
        .unwrap();
        let Ok(Problem::PointMass(p)) = Problem::from_toml_str(&text, None) else {
            panic!("not parsed as a point mass");
        };
        let q = OcpProblem::from_toml_str(&text, None).unwrap();
        assert_eq!(p.options, q.options);
        assert_eq!(
            (
                p.options.discretization.n_s,
                p.options.discretization.scheme,
                p.options.discretization.dcs
            ),
            (2, Scheme::RadauIIA, Dcs::Step)
        );
    }
}
