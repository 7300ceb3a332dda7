//! OCP problem files (TOML) on the user's model file: the sections, keys and defaults of
//! [`ModelProblem`] (its docs show a whole file), and the option keys shared by every
//! problem file.
//!
//! The running cost is Σ_k (T/N)‖u_k‖² with stage clocks (the stage clock constraints make
//! every interval last T/N of physical time, see `docs/decisions/002-time-freezing.md`,
//! "Running cost"). Used by `nonsmooth ocp` and the Python `solve_ocp`. Optional `[ocp]`
//! keys: `clock = "terminal"` imposes only t(T̃) = T instead of the stage clock constraints
//! (the running cost is then Σ_k ‖u_k‖² (t_{k+1} − t_k), still the physical-time integral),
//! and `global_speed = true` (terminal clock only) uses one speed of time for the whole
//! horizon — the two settings of the authors' hopper code (nosnoc
//! `stagewise_clock_constraint = 0`, `local_speed_of_time_variable = 0`).
//! `formulation = "fesd-j"` solves the problem by FESD-J ([`crate::fesd_j`], [`Formulation`];
//! `"time-freezing"` is the default) with the `[fesd]` keys that apply to it.
//! `[ocp.continuation]` solves the problem for a series of waypoints of one terminal
//! coordinate from the trivial initialization ([`crate::continuation`]; `mode =
//! "active-set"`: [`ContinuationMode::ActiveSet`](crate::continuation::ContinuationMode::ActiveSet); `local_speed = true`:
//! [`ContinuationPlan::local_speed_after_first`](crate::continuation::ContinuationPlan::local_speed_after_first)).
//!
//! Optional `[fesd]` keys: `n_s` (default 1), `n_fe` (default 2), `scheme = "radau"`
//! (default) or `"gauss-legendre"`, `dcs = "step"` (default) or `"stewart"`, `n_homotopy`,
//! `sigma0`, `kappa` (σ ← κσ), `homotopy_retries`
//! ([`MpccStrategy::homotopy_retries`](crate::fesd::MpccStrategy::homotopy_retries)),
//! `max_iter` and `tol` (IPOPT, per NLP), `relaxation = "scholtes"`, `"penalty"` (ℓ1, the
//! default, [`MpccStrategy::penalty`](crate::fesd::MpccStrategy::penalty)) or `"elastic"`
//! ([`MpccStrategy::elastic`](crate::fesd::MpccStrategy::elastic)), `polish_tol`
//! ([`MpccStrategy::polish_tol`](crate::fesd::MpccStrategy::polish_tol)),
//! `unreachable_decades` (0 = off,
//! [`MpccStrategy::unreachable_decades`](crate::fesd::MpccStrategy::unreachable_decades)), `mu_adaptive`
//! ([`NlpSettings::mu_adaptive`](crate::fesd::NlpSettings::mu_adaptive)), `first_mu`
//! ([`NlpSettings::first_mu`](crate::fesd::NlpSettings::first_mu)), `time_limit` (wall
//! seconds of the whole run, [`NlpSettings::time_limit`](crate::fesd::NlpSettings::time_limit)),
//! the smoothing phase
//! `[fesd.smoothing]` ([`crate::smoothing::Smoothing`]), `path_at_stages = false` (path
//! constraints only at the control-interval ends), `cross_components`
//! ([`Discretization::cross_components`]: 1 = switch detection on the contact gap only),
//! `rho_sot` ([`Discretization::rho_sot`]), and the cut continuation `cut_schedule = [{ sigma
//! = 1.0 }, { sigma = 1.0, delta = 0.05 }, …]` (optional `delta`, `delta_v` per entry; see
//! [`MpccStrategy::cut_schedule`](crate::fesd::MpccStrategy::cut_schedule)).

mod model_file;
mod replay;

pub use model_file::{ModelProblem, DEFAULT_A_N, DEFAULT_S_MAX};
pub use replay::Replay;

use crate::fesd::{Clock, CutStep, Dcs, Discretization, FesdOptions, Scheme};
use crate::model_system::ModelSystem;
use crate::time_freezing::TimeFreezing;
use crate::OcpError;
use serde::Deserialize;
use std::sync::Arc;

/// `time_freezing.stance_stabilization = { rate = k, depth = δ }`: the Baumgarte-stabilized normal
/// switching function c₂ = nᵀv + k (f_c + δ) ([`crate::time_freezing::StanceStabilization`]).
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

fn time_freezing(
    cls: ModelSystem,
    a_n: f64,
    stance: Option<&StanceSpec>,
    bad: &dyn Fn(String) -> OcpError,
) -> Result<Arc<TimeFreezing>, OcpError> {
    let mut tf = TimeFreezing::new(cls, a_n).map_err(|e| in_section("model.", e, bad))?;
    if let Some(st) = stance {
        tf = tf
            .with_stance_stabilization(st.rate, st.depth)
            .map_err(|e| in_section("model.", e, bad))?;
    }
    Ok(Arc::new(tf))
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
    cross_components: Option<usize>,
    rho_sot: Option<f64>,
    tol: Option<f64>,
    sigma0: Option<f64>,
    kappa: Option<f64>,
    homotopy_retries: Option<usize>,
    max_iter: Option<i32>,
    relaxation: Option<String>,
    polish_tol: Option<f64>,
    unreachable_decades: Option<f64>,
    mu_adaptive: Option<bool>,
    first_mu: Option<f64>,
    time_limit: Option<f64>,
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

/// The formulation of a problem file's optimal control problem (`[ocp] formulation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Formulation {
    /// Time-freezing with FESD and the MPCC homotopy ([`crate::fesd`]): the papers'
    /// problems, the default with one contact.
    TimeFreezing,
    /// FESD-J ([`crate::fesd_j`]): impulses and state jumps at element boundaries, no
    /// auxiliary dynamics; the default with several contacts.
    FesdJ,
}

impl Formulation {
    /// The default of a problem file without `ocp.formulation`: FESD-J for a model with
    /// several contacts whose file uses no key of time-freezing alone (`fits_fesd_j`),
    /// time-freezing otherwise (one contact: the papers' problems). On generated
    /// several-contact problems FESD-J solves more than time-freezing does
    /// (docs/optimal-control.md, "Which formulation").
    pub fn default_for(n_contacts: usize, fits_fesd_j: bool) -> Self {
        if n_contacts > 1 && fits_fesd_j {
            Formulation::FesdJ
        } else {
            Formulation::TimeFreezing
        }
    }

    /// `"time-freezing"` or `"fesd-j"`.
    pub fn from_name(name: &str) -> Result<Self, String> {
        match name {
            "time-freezing" => Ok(Formulation::TimeFreezing),
            "fesd-j" => Ok(Formulation::FesdJ),
            other => Err(format!(
                "must be \"time-freezing\" or \"fesd-j\", got \"{other}\""
            )),
        }
    }

    /// The name of [`Formulation::from_name`].
    pub fn label(self) -> &'static str {
        match self {
            Formulation::TimeFreezing => "time-freezing",
            Formulation::FesdJ => "fesd-j",
        }
    }
}

impl ModelProblem {
    /// Why the formulation is the one it is, for the run's first line: empty when the file
    /// chose it, else which default applied.
    pub fn formulation_reason(&self) -> &'static str {
        match (self.formulation_chosen, self.formulation) {
            (true, _) => "",
            (false, Formulation::FesdJ) => " (the default with several contacts)",
            (false, Formulation::TimeFreezing) if self.tf.cls.n_contacts() <= 1 => {
                " (the default with one contact)"
            }
            (false, Formulation::TimeFreezing) => {
                " (the default: the file uses keys of time-freezing alone)"
            }
        }
    }

    /// The first line of a FESD-J run: the formulation (and whether the file or the model
    /// chose it), the discretization and the homotopy.
    pub fn fesd_j_settings(&self) -> String {
        let (p, o) = (self, &self.impulse_options);
        let contacts = p.tf.cls.n_contacts();
        format!(
            "formulation fesd-j{}: {} control intervals × {} finite elements, semi-implicit, \
             impulses at element boundaries; {} contacts{}; {} homotopy from σ = {:e} by κ = {}, \
             at most {} NLPs per phase",
            p.formulation_reason(),
            p.horizon.n_steps,
            o.n_fe,
            contacts,
            if p.tf.cls.friction().is_some() {
                " with Coulomb friction"
            } else {
                ""
            },
            if o.penalty { "penalty" } else { "scholtes" },
            o.sigma0,
            o.kappa,
            o.n_homotopy
        )
    }
}

impl FesdSpec {
    /// The FESD-J options of the keys that apply to it (`n_fe`, `sigma0`, `kappa`,
    /// `n_homotopy`, `max_iter`, `tol`, `time_limit`); the keys of time-freezing's discretization
    /// (`n_s` ≠ 1, `scheme`, `dcs`, `smoothing`, `cut_schedule`, `relaxation`) are errors
    /// naming the key.
    fn impulse_options(&self) -> Result<crate::fesd_j::ImpulseOptions, OcpError> {
        for (key, set) in [
            ("n_s", self.n_s.is_some_and(|n| n != 1)),
            ("scheme", self.scheme.is_some()),
            ("dcs", self.dcs.is_some()),
            ("smoothing", self.smoothing.is_some()),
            ("cut_schedule", self.cut_schedule.is_some()),
            ("relaxation", self.relaxation.is_some()),
        ] {
            if set {
                return Err(OcpError::InvalidInput(format!(
                    "{key} applies to ocp.formulation = \"time-freezing\" (FESD-J uses one \
                     semi-implicit stage and Scholtes' relaxation)"
                )));
            }
        }
        let mut b = crate::fesd_j::ImpulseOptions::builder();
        if let Some(n) = self.n_fe {
            b = b.n_fe(n);
        }
        if let Some(s) = self.sigma0 {
            b = b.sigma0(s);
        }
        if let Some(k) = self.kappa {
            b = b.kappa(k);
        }
        if let Some(n) = self.n_homotopy {
            b = b.n_homotopy(n);
        }
        if let Some(i) = self.max_iter {
            b = b.max_iter(i);
        }
        if let Some(t) = self.tol {
            b = b.tol(t);
        }
        if let Some(t) = self.time_limit {
            b = b.time_limit(t);
        }
        b.build()
    }

    /// Applies the optional keys to `o` through the option groups' builders, whose rules
    /// ([`Discretization::validate`], [`MpccStrategy::validate`](crate::fesd::MpccStrategy::validate), [`NlpSettings::validate`](crate::fesd::NlpSettings::validate))
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
        if let Some(c) = self.cross_components {
            d = d.cross_components(c);
        }
        if let Some(r) = self.rho_sot {
            d = d.rho_sot(r);
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
        if let Some(d) = self.unreachable_decades {
            m = m.unreachable_decades(d);
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
        if let Some(t) = self.tol {
            n = n.tol(t);
        }
        if let Some(t) = self.time_limit {
            n = n.time_limit(t);
        }
        Ok(FesdOptions {
            discretization: d.build().map_err(fesd)?,
            mpcc: m.build().map_err(fesd)?,
            nlp: n.build().map_err(fesd)?,
        })
    }
}

/// Collocation stages of a problem file that does not set `n_s`: Radau IIA with one stage
/// (implicit Euler, first order). A landing 2 ms after a control-interval boundary
/// (`examples/ocp_ball_late_landing.toml`) converges to exact complementarity with one stage
/// and stalls at 3.5e-3 with two (the two-stage collocation polynomial of the element that
/// holds the switch runs the clock backwards, and the penalty homotopy keeps the auxiliary
/// dynamics on there); so do the pushed box of `examples/ocp_box_push.toml` and a box
/// pivoted onto its side. Files that need the higher order set `n_s = 2` or 3 (the papers'
/// examples do).
pub const DEFAULT_N_S: usize = 1;

/// Finite elements per control interval of a problem file that does not set `n_fe`. With
/// one stage: the late landing converges with 2 and stalls with 3 or 4 (7.2e-3, 6.6e-3);
/// the pushed box converges with 2 and ends its first NLP at the iteration limit with 3.
pub const DEFAULT_N_FE: usize = 2;

/// The options of a problem file before its `[fesd]` keys: Radau IIA with n_s =
/// [`DEFAULT_N_S`], N_FE = [`DEFAULT_N_FE`], the other fields at their defaults ([`FesdOptions::default`]).
pub fn default_options() -> FesdOptions {
    // valid by construction (checked in tests/error_messages.rs)
    FesdOptions {
        discretization: Discretization {
            n_s: DEFAULT_N_S,
            n_fe: DEFAULT_N_FE,
            ..Discretization::default()
        },
        ..FesdOptions::default()
    }
}

/// The discretization and homotopy of a run, as its summary states them (`settings` of
/// `summary.json` and of Python's `solve_ocp`; the line `nonsmooth ocp` prints first).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunSettings {
    /// Control intervals N.
    pub intervals: usize,
    /// Collocation scheme.
    pub scheme: String,
    /// Collocation stages n_s.
    pub n_s: usize,
    /// Finite elements per control interval.
    pub n_fe: usize,
    /// Contacts of the model.
    pub contacts: usize,
    /// Switching functions n_c.
    pub switching_functions: usize,
    /// Switching functions with cross complementarity (switch detection).
    pub cross_components: usize,
    /// `"penalty"`, `"scholtes"` or `"elastic"`.
    pub relaxation: String,
    /// First relaxation σ₀.
    pub sigma0: f64,
    /// σ ← κσ.
    pub kappa: f64,
    /// Most NLPs of the homotopy.
    pub n_homotopy: usize,
    /// `"homotopy"`, or `"active-set"` (the homotopy as phase I of the exact method).
    pub mpcc_method: String,
}

impl RunSettings {
    /// The settings of solving `hz` on `tf` with `o`.
    pub fn of(tf: &TimeFreezing, hz: &crate::fesd::Horizon, o: &FesdOptions) -> Self {
        let (d, m) = (&o.discretization, &o.mpcc);
        let nc = tf.nc();
        Self {
            intervals: hz.n_steps,
            scheme: match d.scheme {
                Scheme::RadauIIA => "radau".into(),
                Scheme::GaussLegendre => "gauss-legendre".into(),
            },
            n_s: d.n_s,
            n_fe: d.n_fe,
            contacts: tf.cls.n_contacts(),
            switching_functions: nc,
            cross_components: d.cross_components.min(nc),
            relaxation: if m.penalty {
                "penalty"
            } else if m.elastic {
                "elastic"
            } else {
                "scholtes"
            }
            .into(),
            sigma0: m.sigma0,
            kappa: m.kappa,
            n_homotopy: m.n_homotopy,
            mpcc_method: match m.method {
                crate::fesd::MpccMethod::Homotopy => "homotopy",
                crate::fesd::MpccMethod::ActiveSet => "active-set",
            }
            .into(),
        }
    }
}

impl std::fmt::Display for RunSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        write!(
            f,
            "{} control intervals × {} finite elements, {} n_s = {}; {} contact{}, switch \
             detection on {} of {} switching functions; {} homotopy from σ = {:e} by κ = {}, \
             at most {} NLPs{}",
            self.intervals,
            self.n_fe,
            self.scheme,
            self.n_s,
            self.contacts,
            plural(self.contacts),
            self.cross_components,
            self.switching_functions,
            self.relaxation,
            self.sigma0,
            self.kappa,
            self.n_homotopy,
            if self.mpcc_method == "active-set" {
                ", then the active-set method"
            } else {
                ""
            }
        )
    }
}

/// σ₀ of the warm-started solves of a continuation plan when the file does not set it.
pub const DEFAULT_CONTINUATION_SIGMA0: f64 = 1e-2;

/// Stages that an obstacle growth may insert by bisection when a stage fails (problem files:
/// `ocp.path.obstacle_growth.bisections`): each failing phase costs up to `max_iter` IPOPT
/// iterations, so a few.
pub const DEFAULT_GROWTH_BISECTIONS: usize = 3;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::continuation::ContinuationMode;

    /// A short hopper problem on `examples/hopper.toml`: `ocp` goes into `[ocp]`, `rest` after
    /// the problem's own sections (e.g. `[fesd]` keys).
    fn hopper_problem(ocp: &str, rest: &str) -> String {
        format!(
            "[ocp]\nmodel = \"hopper.toml\"\nN = 4\nT = 2.5\ns_max = 5.0\n{ocp}\
             [ocp.terminal]\nq.base_x = 0.3\nq.base_z = 0.4\nq.hip_joint = 0.0\nq.knee_joint = 0.0\n\
             [ocp.path]\nq.base_z = [0.2, 0.55]\n\
             [[ocp.path.outside_ellipse]]\nbody = \"shank\"\npoint = [0.0, -0.2, 0.0]\n\
             center = [0.5, 0.0]\naxes = [0.25, 0.1]\n\
             [[ocp.path.outside_ellipse]]\nbody = \"shank\"\npoint = [0.0, -0.2, 0.0]\n\
             center = [1.5, 0.0]\naxes = [0.25, 0.1]\n\
             [time_freezing]\na_n = 200.0\n{rest}"
        )
    }

    /// Parses a problem as if it were the file `examples/<name>` (the model path resolves to
    /// `examples/hopper.toml`).
    fn parse(text: &str, name: &str) -> Result<ModelProblem, OcpError> {
        let source = format!("{}/../../examples/{name}", env!("CARGO_MANIFEST_DIR"));
        ModelProblem::from_toml_str(text, Some(&source))
    }

    #[test]
    fn fesd_keys_set_the_discretization_and_the_cut_schedule() {
        let text = hopper_problem(
            "",
            "[fesd]\nn_s = 1\nn_fe = 2\nscheme = \"gauss-legendre\"\ncross_components = 1\n\
             rho_sot = 100.0\ntol = 1e-8\n",
        );
        let h = parse(&text, "p.toml").expect("parsed");
        assert_eq!(h.horizon.n_steps, 4);
        let d = &h.options.discretization;
        assert_eq!(d.scheme, Scheme::GaussLegendre);
        assert_eq!((d.n_s, d.n_fe, d.cross_components), (1, 2, 1));
        assert_eq!((d.rho_sot, h.options.nlp.tol), (100.0, 1e-8));
        let e = parse(&text.replace("gauss-legendre", "euler"), "p.toml");
        assert!(matches!(e, Err(OcpError::InvalidInput(m)) if m.contains("fesd.scheme")));
        let e = parse(&text.replace("tol = 1e-8", "tol = 0.0"), "p.toml");
        assert!(matches!(e, Err(OcpError::InvalidInput(m)) if m.contains("fesd.tol")));
        // the cut continuation: entries in order, omitted thresholds inactive
        let cut = format!(
            "{text}cut_schedule = [{{ sigma = 1.0 }}, {{ sigma = 0.1, delta = 0.05, delta_v = 0.5 }}]\n"
        );
        let h = parse(&cut, "p.toml").expect("cut schedule parsed");
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
        let e = parse(&cut.replace("delta = 0.05", "delta = -1.0"), "p.toml");
        assert!(matches!(e, Err(OcpError::InvalidInput(m)) if m.contains("cut_schedule")));
    }

    #[test]
    fn smoothing_keys_give_the_smoothing_phase() {
        let text = hopper_problem(
            "",
            "[fesd]\nsigma0 = 1e-4\nmax_iter = 3000\n\
             [fesd.smoothing]\nwidths = [0.001, 0.05, 0.05]\nfactors = [100.0, 1.0, 0.1]\n",
        );
        let h = parse(&text, "p.toml").expect("parsed");
        let sm = h.options.mpcc.smoothing.expect("smoothing");
        assert_eq!(sm.factors, vec![100.0, 1.0, 0.1]);
        assert_eq!((sm.lambda_weight, sm.terminal_weight), (1e-3, 100.0));
        assert!(sm.cross_sigmas.is_empty());
        assert_eq!(
            (h.options.mpcc.sigma0, h.options.nlp.max_iter),
            (1e-4, 3000)
        );
        let e = parse(&text.replace("[100.0, 1.0, 0.1]", "[-1.0]"), "p.toml");
        assert!(
            matches!(&e, Err(OcpError::InvalidInput(m)) if m.contains("fesd.smoothing.factors") && m.contains("p.toml")),
            "{:?}",
            e.err()
        );
        let e = parse(&text.replace("sigma0 = 1e-4", "sigma0 = 0.0"), "p.toml");
        assert!(matches!(e, Err(OcpError::InvalidInput(m)) if m.contains("fesd.sigma0")));
        let h = parse(
            &text.replace("sigma0 = 1e-4", "kappa = 0.3\nhomotopy_retries = 2"),
            "p.toml",
        )
        .expect("kappa parsed");
        assert_eq!(
            (h.options.mpcc.kappa, h.options.mpcc.homotopy_retries),
            (0.3, 2)
        );
        let e = parse(&text.replace("sigma0 = 1e-4", "kappa = 1.0"), "p.toml");
        assert!(matches!(e, Err(OcpError::InvalidInput(m)) if m.contains("fesd.kappa")));
    }

    /// `relaxation`, `polish_tol` and `mu_adaptive` set the homotopy's end-game options; the
    /// default relaxation is the ℓ1 penalty, and bad values are named.
    #[test]
    fn end_game_keys_set_the_relaxation_and_polish() {
        let with = |extra: &str| parse(&hopper_problem("", &format!("[fesd]\n{extra}")), "p.toml");
        let h = with("").expect("parsed");
        assert_eq!(
            (h.options.mpcc.penalty, h.options.mpcc.elastic),
            (true, false)
        );
        assert!(!h.options.nlp.mu_adaptive);
        for (name, want) in [
            ("penalty", (true, false)),
            ("elastic", (false, true)),
            ("scholtes", (false, false)),
        ] {
            let h = with(&format!("relaxation = \"{name}\"\n")).expect(name);
            assert_eq!(
                (h.options.mpcc.penalty, h.options.mpcc.elastic),
                want,
                "{name}"
            );
        }
        let h = with("polish_tol = 1e-2\nmu_adaptive = true\nfirst_mu = 1e-6\n").expect("parsed");
        assert_eq!(
            (h.options.mpcc.polish_tol, h.options.nlp.mu_adaptive),
            (1e-2, true)
        );
        assert_eq!(h.options.nlp.first_mu, Some(1e-6));
        let e = with("first_mu = 0.0\n");
        assert!(matches!(e, Err(OcpError::InvalidInput(m)) if m.contains("fesd.first_mu")));
        let e = with("relaxation = \"smooth\"\n");
        assert!(
            matches!(e, Err(OcpError::InvalidInput(m)) if m.contains("fesd.relaxation") && m.contains("smooth"))
        );
        let e = with("polish_tol = -1.0\n");
        assert!(matches!(e, Err(OcpError::InvalidInput(m)) if m.contains("fesd.polish_tol")));
    }

    /// `ocp.path.obstacle_growth` grows the ellipses of the path constraints in the smoothing
    /// phase: no ellipse at scale 0, scaled semi-axes above; bad keys are named with the file.
    #[test]
    fn obstacle_growth_keys_give_the_grown_stages() {
        let growth = "obstacle_growth = { scales = [0.0, 0.5], factors = [3.0, 0.1] }\n";
        let smoothing = "[fesd.smoothing]\nwidths = [0.001, 0.05, 0.05]\nfactors = [100.0, 0.1]\n";
        let text = hopper_problem("", smoothing).replace(
            "[ocp.path]\nq.base_z = [0.2, 0.55]\n",
            &format!("[ocp.path]\nq.base_z = [0.2, 0.55]\n{growth}"),
        );
        let h = parse(&text, "g.toml").expect("parsed");
        let g = h.growth.expect("growth");
        assert_eq!(g.factors, vec![3.0, 0.1]);
        assert_eq!(g.scales, vec![0.0, 0.5]);
        assert_eq!(g.bisections, DEFAULT_GROWTH_BISECTIONS);
        assert!(g.close_stages);
        let axes = |sys: &crate::model_system::ModelSystem| -> Vec<[f64; 2]> {
            sys.path_terms()
                .iter()
                .filter_map(|t| match t {
                    crate::model_system::PathTerm::OutsideEllipse(e) => Some(e.axes),
                    crate::model_system::PathTerm::Point(_) => None,
                })
                .collect()
        };
        assert!(axes(&g.stage(0).unwrap().cls).is_empty());
        assert_eq!(axes(&g.stage(1).unwrap().cls), vec![[0.125, 0.05]; 2]);
        let midway = (g.system)(0.75).unwrap();
        assert!((axes(&midway.cls)[0][0] - 0.1875).abs() < 1e-15);
        assert_eq!(axes(&h.tf.cls), vec![[0.25, 0.1]; 2]);
        let none = text.replace(
            "factors = [3.0, 0.1] }",
            "factors = [3.0, 0.1], bisections = 0 }",
        );
        assert_eq!(
            parse(&none, "g.toml").unwrap().growth.unwrap().bisections,
            0
        );
        for (from, to) in [
            ("scales = [0.0, 0.5]", "scales = [0.5, 0.2]"),
            ("scales = [0.0, 0.5]", "scales = [1.0]"),
            ("factors = [3.0, 0.1]", "factors = []"),
            (smoothing, ""),
        ] {
            let e = parse(&text.replace(from, to), "g.toml");
            assert!(
                matches!(&e, Err(OcpError::InvalidInput(m)) if m.contains("ocp.path.obstacle_growth") && m.contains("g.toml")),
                "{to}: {:?}",
                e.err()
            );
        }
        let both = text.replace(
            "[ocp.terminal]",
            "[ocp.continuation]\nq.base_x = [0.0]\n[ocp.terminal]",
        );
        let e = parse(&both, "g.toml");
        assert!(matches!(e, Err(OcpError::InvalidInput(m)) if m.contains("cannot be combined")));
    }

    #[test]
    fn clock_keys_select_the_terminal_clock_and_one_speed() {
        let h = parse(&hopper_problem("", ""), "p.toml").expect("parsed");
        assert_eq!(h.horizon.clock, Clock::Stagewise(2.5));
        assert!(!h.horizon.global_speed);
        assert_eq!(h.horizon.control_weight, 2.5 / 4.0);
        let terminal = hopper_problem("clock = \"terminal\"\nglobal_speed = true\n", "");
        let h = parse(&terminal, "p.toml").expect("terminal clock parsed");
        assert_eq!(h.horizon.clock, Clock::Terminal(2.5));
        assert!(h.horizon.global_speed);
        assert_eq!(h.horizon.control_weight, 1.0);
        assert!(h.options.discretization.path_at_stages);
        let ends = format!("{terminal}[fesd]\npath_at_stages = false\n");
        let h = parse(&ends, "p.toml").expect("path_at_stages parsed");
        assert!(!h.options.discretization.path_at_stages);
        // one speed of time under stage clocks, and unknown clock names, are named errors
        let e = parse(&hopper_problem("global_speed = true\n", ""), "p.toml");
        assert!(matches!(e, Err(OcpError::InvalidInput(m)) if m.contains("ocp.global_speed")));
        let e = parse(&hopper_problem("clock = \"physical\"\n", ""), "p.toml");
        assert!(matches!(e, Err(OcpError::InvalidInput(m)) if m.contains("ocp.clock")));
    }

    /// `time_freezing.stance_stabilization` builds c₂ = nᵀv + k (f_c + δ); `[ocp.initial]`
    /// moves the start (here δ lower, where the stabilized stance rests).
    #[test]
    fn stance_stabilization_and_initial_keys() {
        let text = hopper_problem("", "stance_stabilization = { rate = 10.0, depth = 1e-3 }\n")
            .replace(
                "[ocp.terminal]",
                "[ocp.initial]\nq.base_z = 0.399\n[ocp.terminal]",
            );
        let h = parse(&text, "h.toml").expect("parsed");
        let st = h.tf.stance.expect("stabilization set");
        assert_eq!((st.rate, st.depth), (10.0, 1e-3));
        assert_eq!(h.horizon.y0[1], 0.399);
        let e = parse(&text.replace("rate = 10.0", "rate = -1.0"), "h.toml");
        assert!(
            matches!(&e, Err(OcpError::InvalidInput(m)) if m.contains("h.toml") && m.contains("stance stabilization rate -1")),
            "{:?}",
            e.err()
        );
        let e = parse(
            &text.replace("q.base_z = 0.399", "q.base_y = 0.399"),
            "h.toml",
        );
        assert!(
            matches!(&e, Err(OcpError::InvalidInput(m)) if m.contains("ocp.initial.q.base_y")),
            "{:?}",
            e.err()
        );
    }

    #[test]
    fn continuation_keys_give_waypoints_ending_at_the_target() {
        let text = hopper_problem("", "");
        assert!(parse(&text, "c.toml").unwrap().continuation.is_none());
        let with = |keys: &str| {
            parse(
                &text.replace(
                    "[ocp.terminal]",
                    &format!("[ocp.continuation]\n{keys}[ocp.terminal]"),
                ),
                "c.toml",
            )
        };
        let h = with("q.base_x = [0.0, 0.1]\nsigma0 = 1e-3\n").expect("continuation parsed");
        let plan = h.continuation.expect("plan");
        assert_eq!(plan.warm_sigma0, 1e-3);
        assert_eq!(plan.mode, ContinuationMode::Homotopy);
        let xs: Vec<f64> = plan.waypoints.iter().map(|w| w[0].1).collect();
        assert_eq!(xs, [0.0, 0.1, 0.3]);
        assert!(plan
            .waypoints
            .iter()
            .all(|w| w[1..] == h.horizon.terminal[1..]));
        let e = with("q.base_x = [0.1]\nsigma0 = 0.0\n");
        assert!(matches!(e, Err(OcpError::InvalidInput(m)) if m.contains("ocp.continuation")));
        let h = with("q.base_x = [0.1]\nmode = \"active-set\"\n").expect("mode parsed");
        assert_eq!(
            h.continuation.map(|p| p.mode),
            Some(ContinuationMode::ActiveSet)
        );
        let e = with("sigma0 = 1e-3\n");
        assert!(
            matches!(&e, Err(OcpError::InvalidInput(m)) if m.contains("exactly one coordinate")),
            "{:?}",
            e.err()
        );
        let e = with("q.base_x = [0.1]\nlocal_speed = true\n");
        assert!(
            matches!(e, Err(OcpError::InvalidInput(m)) if m.contains("ocp.continuation.local_speed"))
        );
        let e = with("q.base_x = [0.1]\nmode = \"bisect\"\n");
        assert!(matches!(e, Err(OcpError::InvalidInput(m)) if m.contains("bisect")));
        let e = with("q.knee = [0.1]\n");
        assert!(
            matches!(&e, Err(OcpError::InvalidInput(m)) if m.contains("ocp.continuation.q.knee")),
            "{:?}",
            e.err()
        );
    }

    /// `time_freezing.contacts` names several pairs (a box: one contact per corner);
    /// `contact` and `contacts` together, or an unknown collider, are named errors.
    #[test]
    fn contacts_key_names_several_pairs() {
        let model_text = "[model]\nname = \"box\"\ndimension = \"planar\"\n\
            [[colliders]]\nname = \"floor\"\nshape = { plane = [0.0, 1.0, 0.0] }\n\
            [[bodies]]\nname = \"box\"\nmass = 1.0\ninertia = { solid_box = [0.2, 0.1, 0.1] }\n\
            [[joints]]\nname = \"base\"\nkind = \"planar\"\nparent = \"world\"\nchild = \"box\"\n\
            [[colliders]]\nname = \"shell\"\nbody = \"box\"\nshape = { box = [0.2, 0.1, 0.1] }\n\
            [initial]\nq.base = [0.0, 0.6, 0.0]\n";
        let model = nonsmooth_core::Model::from_toml_str(model_text, None).unwrap();
        let problem = |tf: &str| {
            format!(
                "[ocp]\nmodel = \"box.toml\"\nN = 2\nT = 0.5\n[time_freezing]\n{tf}[fesd]\ncross_components = 4\n"
            )
        };
        let p = ModelProblem::with_model(
            &problem("contacts = [[\"shell\", \"floor\"]]\n"),
            Some("b.toml"),
            model.clone(),
        )
        .unwrap();
        assert_eq!(p.tf.cls.n_contacts(), 4);
        // the default material has friction (μ = 0.5): 3 switching functions per corner
        assert_eq!(p.tf.nc(), 12);
        // switch detection on the gaps by default with several contacts, the file's key wins
        let plain = "[ocp]\nmodel = \"box.toml\"\nN = 2\nT = 0.5\n";
        let d = ModelProblem::with_model(plain, Some("b.toml"), model.clone()).unwrap();
        assert_eq!(d.options.discretization.cross_components, 4);
        let settings = RunSettings::of(&d.tf, &d.horizon, &d.options);
        assert_eq!(
            (
                settings.contacts,
                settings.switching_functions,
                settings.cross_components
            ),
            (4, 12, 4)
        );
        assert!(
            settings.to_string().contains("switch detection on 4 of 12"),
            "{settings}"
        );
        let all = format!("{plain}[fesd]\ncross_components = 12\n");
        let a = ModelProblem::with_model(&all, Some("b.toml"), model.clone()).unwrap();
        assert_eq!(a.options.discretization.cross_components, 12);
        let both =
            problem("contact = [\"shell\", \"floor\"]\ncontacts = [[\"shell\", \"floor\"]]\n");
        let e = ModelProblem::with_model(&both, Some("b.toml"), model.clone()).err();
        assert!(
            matches!(&e, Some(OcpError::InvalidInput(m)) if m.contains("time_freezing.contacts") && m.contains("not both")),
            "{e:?}"
        );
        let unknown = problem("contacts = [[\"lid\", \"floor\"]]\n");
        let e = ModelProblem::with_model(&unknown, Some("b.toml"), model).err();
        assert!(
            matches!(&e, Some(OcpError::InvalidInput(m)) if m.contains("time_freezing.contacts") && m.contains("lid")),
            "{e:?}"
        );
    }

    #[test]
    fn every_ocp_example_parses() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples");
        let mut n = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with("ocp_") && name.ends_with(".toml") {
                ModelProblem::from_file(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
                n += 1;
            }
        }
        assert!(n >= 4, "{n} OCP examples");
    }
}
