//! The problem file's parser: [`ModelProblem`] (the file format in its docs).

use super::{
    clock_spec, default_options, in_section, time_freezing, FesdSpec, Formulation, MpccSpec,
    StanceSpec, DEFAULT_CONTINUATION_SIGMA0, DEFAULT_GROWTH_BISECTIONS,
};
use crate::continuation::{ContinuationMode, ContinuationPlan};
use crate::fesd::{FesdOptions, Horizon, StateGuess, Tracking};
use crate::fesd_j::ImpulseOptions;
use crate::model_system::{EllipseObstacle, ModelSystem, PathTerm, PointBound};
use crate::smoothing::{Growth, SystemAt};
use crate::time_freezing::TimeFreezing;
use crate::OcpError;
use nalgebra::Vector3;
use nonsmooth_core::io::spans::{FieldPath, SpanIndex};
use nonsmooth_core::Model;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Default auxiliary normal acceleration a_n (m/s²) of a model problem.
pub const DEFAULT_A_N: f64 = 100.0;
/// Default largest speed of time.
pub const DEFAULT_S_MAX: f64 = 10.0;
/// The "no bound" value of the state bounds.
const NO_BOUND: f64 = 1e20;
/// The most finite elements (`N` × `n_fe`) a problem may have. Reading the file already
/// stores per-interval data, and each element is `n_s` collocation points of the NLP, each with
/// the state, algebraic and complementarity variables: far larger NLPs than IPOPT solves on
/// one machine; a larger `N` is a typing error that would otherwise exhaust the memory.
const MAX_FINITE_ELEMENTS: usize = 1_000_000;
/// The most simulation steps of the initial-guess rollout (`ocp.initial_guess`, `T / dt`
/// steps), so that a tiny `dt` or a huge `T` is an error instead of a run that never ends.
const MAX_GUESS_STEPS: f64 = 1e6;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Spec {
    ocp: OcpKeys,
    #[serde(default)]
    time_freezing: TfKeys,
    #[serde(default)]
    fesd: FesdSpec,
    #[serde(default)]
    mpcc: MpccSpec,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)]
struct OcpKeys {
    model: String,
    N: usize,
    T: f64,
    s_max: Option<f64>,
    controls: Option<Vec<String>>,
    #[serde(default)]
    clock: Option<String>,
    #[serde(default)]
    global_speed: bool,
    #[serde(default)]
    cost: CostKeys,
    #[serde(default)]
    initial: CoordinateValues<f64>,
    #[serde(default)]
    terminal: CoordinateValues<f64>,
    initial_guess: Option<GuessKeys>,
    #[serde(default)]
    path: PathKeys,
    continuation: Option<ContinuationTable>,
    formulation: Option<String>,
}

/// `[ocp.continuation]`: waypoints of one terminal coordinate and the plan's settings.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ContinuationTable {
    #[serde(default)]
    q: BTreeMap<String, Vec<f64>>,
    #[serde(default)]
    v: BTreeMap<String, Vec<f64>>,
    sigma0: Option<f64>,
    mode: Option<ContinuationMode>,
    #[serde(default)]
    local_speed: bool,
}

/// `[ocp.initial_guess]`: the NLP's start from a rollout of the model.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GuessKeys {
    simulate: bool,
    stepper: Option<String>,
    dt: Option<f64>,
    #[serde(default)]
    controls: BTreeMap<String, f64>,
}

/// `ocp.path.obstacle_growth`: the ellipses grown from the scales to full size in the
/// smoothing phase ([`Growth`]).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GrowthKeys {
    scales: Vec<f64>,
    factors: Vec<f64>,
    bisections: Option<usize>,
    close_stages: Option<bool>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct CostKeys {
    effort: Option<f64>,
    #[serde(default)]
    track: CoordinateValues<TrackKeys>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TrackKeys {
    target: f64,
    weight: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, bound(deserialize = "V: Deserialize<'de>"))]
struct CoordinateValues<V> {
    #[serde(default)]
    q: BTreeMap<String, V>,
    #[serde(default)]
    v: BTreeMap<String, V>,
}

impl<V> Default for CoordinateValues<V> {
    fn default() -> Self {
        Self {
            q: BTreeMap::new(),
            v: BTreeMap::new(),
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct PathKeys {
    #[serde(default)]
    q: BTreeMap<String, (f64, f64)>,
    #[serde(default)]
    v: BTreeMap<String, (f64, f64)>,
    #[serde(default)]
    outside_ellipse: Vec<EllipseKeys>,
    #[serde(default)]
    point: Vec<PointKeys>,
    obstacle_growth: Option<GrowthKeys>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PointKeys {
    body: String,
    #[serde(default)]
    point: [f64; 3],
    x: Option<(f64, f64)>,
    y: Option<(f64, f64)>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EllipseKeys {
    body: String,
    #[serde(default)]
    point: [f64; 3],
    center: [f64; 2],
    axes: [f64; 2],
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct TfKeys {
    a_n: Option<f64>,
    contact: Option<(String, String)>,
    contacts: Option<Vec<(String, String)>>,
    stance_stabilization: Option<StanceSpec>,
}

/// A parsed problem file: optimal control of the user's own model by time-freezing
/// ([`crate::model_system::ModelSystem`]).
///
/// ```toml
/// [ocp]
/// model = "ball_on_ground.toml"  # relative to this file (TOML, URDF or MJCF)
/// N = 15                         # control intervals
/// T = 1.5                        # physical horizon (s)
/// s_max = 10.0                   # speed of time s ∈ [1, s_max] (default 10)
/// controls = ["thrust"]          # optional: the model's motors, default all; each needs
///                                #   effort_limit (the control bounds)
/// [ocp.cost]
/// effort = 1.0                   # weight of ∫ ‖u‖² dt (default 1)
/// track.q.y = { target = 0.3, weight = 10.0 }   # + Σ_k (T/N) w (y(t_k) − target)²
/// [ocp.initial]                  # optional: starts that differ from the model's [initial]
/// q.y = 0.3
/// [ocp.initial_guess]            # optional: start the NLP from a rollout of the model
/// simulate = true                #   through a rigid stepper (zero controls by default)
/// stepper = "anitescu-potra"     #   the default; dt = a tenth of an element (≤ 1 ms)
/// controls = { thrust = 0.5 }    #   constant efforts by actuator name
/// [ocp.terminal]                 # final values of named coordinates
/// q.x = 3.0                      #   a joint's name for a one-coordinate joint, or the
/// v.x = 0.0                      #   coordinate's full name, quoted (q."base.x")
/// [ocp.path]                     # bounds at every stage point
/// q.y = [0.0, 2.0]               # (inf for no bound: [-0.05, inf])
/// obstacle_growth = { scales = [0.0, 0.5], factors = [1.0, 0.1] }  # optional, with
///                                #   [fesd.smoothing]: the ellipses grown in the smoothing
///                                #   phase ([`crate::smoothing::Growth`])
/// [[ocp.path.point]]             # a point of a body within bounds (world x and/or y)
/// body = "shank"
/// point = [0.0, -0.2, 0.0]
/// x = [-0.05, 1e20]
/// [[ocp.path.outside_ellipse]]   # a point of a body kept outside an ellipse (holes)
/// body = "foot"
/// point = [0.0, 0.0, 0.0]
/// center = [0.5, 0.0]
/// axes = [0.1, 0.05]
/// [ocp.continuation]             # optional: waypoints of one terminal coordinate
/// q.x = [1.0, 2.0]               #   solved in turn, then the file's own target
/// sigma0 = 1e-2                  #   σ₀ of the warm solves; mode = "active-set";
///                                #   local_speed = true
/// [time_freezing]
/// a_n = 50.0                     # auxiliary normal acceleration (m/s², default 100)
/// contact = ["ball_shape", "ground"]  # optional: one pair (default: every body collider
///                                #   against every world plane), or several:
///                                #   contacts = [["box", "ground"], ["foot", "ground"]]
/// stance_stabilization = { rate = 100.0, depth = 1e-3 }  # optional
/// [fesd]                         # the module docs' keys (n_s default 2, n_fe 3)
/// [mpcc]                         # method = "active-set" and its settings
/// ```
///
/// The initial state is the model's `[initial]` at t = 0 with the `[ocp.initial]` changes,
/// the clock stagewise unless `ocp.clock = "terminal"`.
pub struct ModelProblem {
    /// The time-freezing reformulation of the model.
    pub tf: Arc<TimeFreezing>,
    /// Horizon: initial state from the model, control bounds from the actuators' effort
    /// limits, terminal constraints and state bounds from the file.
    pub horizon: Horizon,
    /// FESD and homotopy options (`n_s` default 2, `n_fe` default 3).
    pub options: FesdOptions,
    /// Physical horizon T.
    pub t_final: f64,
    /// The model file, as resolved.
    pub model_path: PathBuf,
    /// Names of the state y = (q, v, t).
    pub state_names: Vec<String>,
    /// Names of the controls (actuators).
    pub control_names: Vec<String>,
    /// Continuation in one terminal coordinate (`[ocp.continuation]`), `None` for a direct
    /// solve.
    pub continuation: Option<ContinuationPlan>,
    /// Obstacle growth in the smoothing phase (`ocp.path.obstacle_growth`), `None` for a
    /// direct solve.
    pub growth: Option<Growth>,
    /// The formulation (`ocp.formulation`, or [`Formulation::default_for`] the model).
    pub formulation: Formulation,
    /// Whether the file chose the formulation (else it is the default).
    pub formulation_chosen: bool,
    /// The options of [`Formulation::FesdJ`]: `n_fe`, `sigma0`, `kappa`, `n_homotopy`,
    /// `max_iter` and `tol` of `[fesd]`, the others at their defaults.
    pub impulse_options: ImpulseOptions,
}

/// Where a key sits: "source:line: ocp.terminal.q.x".
struct Locator<'a> {
    name: &'a str,
    spans: Option<SpanIndex>,
}

impl Locator<'_> {
    fn err(&self, path: &[&str], msg: String) -> OcpError {
        let mut fp = FieldPath::root();
        for k in path {
            fp = fp.key(k);
        }
        let line = self.spans.as_ref().and_then(|s| s.line_of(&fp));
        let at = match line {
            Some(l) => format!("{}:{l}", self.name),
            None => self.name.to_string(),
        };
        OcpError::InvalidInput(format!("{at}: {}: {msg}", path.join(".")))
    }
}

/// The index of coordinate `name` among `names` (`"joint.suffix"`), also accepting a
/// joint's own name when the joint has exactly one such coordinate.
fn coordinate(names: &[String], name: &str) -> Option<usize> {
    if let Some(i) = names.iter().position(|n| n == name) {
        return Some(i);
    }
    let prefix = format!("{name}.");
    let hits: Vec<usize> = (0..names.len())
        .filter(|&i| names[i].starts_with(&prefix))
        .collect();
    (hits.len() == 1).then(|| hits[0])
}

impl ModelProblem {
    /// Parses a model problem from TOML text; `source` names the file in errors and is the
    /// base of the relative model path (the working directory without it).
    ///
    /// # Errors
    /// [`OcpError::InvalidInput`] naming the file, line and key: a malformed file, unknown
    /// keys, a model that cannot be read, a coordinate, body, collider or actuator the model
    /// lacks, an actuator without effort limits, a terminal value outside its path bounds,
    /// `N = 0`, `T ≤ 0`, non-finite numbers, and the limits of
    /// [`ModelSystem::new`].
    pub fn from_toml_str(text: &str, source: Option<&str>) -> Result<Self, OcpError> {
        Self::parse(text, source, None)
    }

    /// [`ModelProblem::from_toml_str`] with the model given instead of read from the file
    /// that `ocp.model` names (a model built in code, or embedded in a program); `ocp.model`
    /// is then only a label.
    ///
    /// # Errors
    /// As [`ModelProblem::from_toml_str`].
    pub fn with_model(text: &str, source: Option<&str>, model: Model) -> Result<Self, OcpError> {
        Self::parse(text, source, Some(model))
    }

    /// Parses the problem file `text` (named `source`) with the model `given` or the one
    /// `ocp.model` names, section by section in the order of their checks.
    fn parse(text: &str, source: Option<&str>, given: Option<Model>) -> Result<Self, OcpError> {
        let name = source.unwrap_or("<problem>");
        let bad = |msg: String| OcpError::InvalidInput(format!("{name}: {msg}"));
        if toml::from_str::<toml::Table>(text).is_ok_and(|t| t.contains_key("model")) {
            return Err(bad(
                "a problem file names its model file in [ocp] (model = \"particle.toml\"); the \
                 [model] section of the built-in point mass and hopper is gone: \
                 examples/ocp_particle.toml and examples/ocp_hopper.toml are their model-file \
                 forms"
                    .into(),
            ));
        }
        let spec: Spec = toml::from_str(text).map_err(|e| bad(e.to_string()))?;
        let at = Locator {
            name,
            spans: SpanIndex::parse(text).ok(),
        };
        let ocp = &spec.ocp;
        let (s_max, effort) = check_horizon_keys(ocp, &at)?;
        let base = source
            .and_then(|s| Path::new(s).parent())
            .unwrap_or(Path::new(""));
        let model_path = base.join(&ocp.model);
        let model = match given {
            Some(m) => m,
            None => Model::from_file(&model_path).map_err(|e| {
                at.err(
                    &["ocp", "model"],
                    format!("cannot load {}: {e}", model_path.display()),
                )
            })?,
        };
        let Controls {
            names: control_names,
            lo,
            hi,
        } = controls(ocp, &model, &at)?;
        let coords = Coordinates {
            q: model.q_names(),
            v: model.v_names(),
            at: &at,
        };
        let y_bounds = state_bounds(ocp, &coords)?;
        let terminal = terminal_values(ocp, &coords, &y_bounds)?;
        let tracking = tracking_terms(ocp, &coords)?;
        let path = body_path_terms(ocp, &model, &at)?;
        let ContactPairs {
            pairs,
            key: contact_key,
        } = contact_pairs(&spec.time_freezing, &at)?;
        let y0 = initial_state(ocp, &model, &coords)?;
        let tf_err = |path: &[&str], e: OcpError| match e {
            OcpError::InvalidInput(m) => at.err(path, m),
            other => other,
        };
        let system = ModelSystem::new(model, pairs.as_deref(), &control_names)
            .map_err(|e| tf_err(&["time_freezing", contact_key], e))?
            .with_path(path)
            .map_err(|e| tf_err(&["ocp", "path"], e))?;
        let a_n = spec.time_freezing.a_n.unwrap_or(DEFAULT_A_N);
        let stance = spec.time_freezing.stance_stabilization;
        let growth = match &ocp.path.obstacle_growth {
            None => None,
            Some(g) => Some(obstacle_growth(g, &system, a_n, stance, &at)?),
        };
        let tf = time_freezing(system, a_n, stance.as_ref(), &|m| {
            at.err(&["time_freezing"], m)
        })?;
        let n = ocp.N;
        let (clock, weight) = clock_spec(ocp.clock.as_deref(), ocp.global_speed, ocp.T, n, &bad)?;
        let mut horizon = Horizon {
            y0,
            lam0: None,
            n_steps: n,
            step_len: ocp.T / n as f64,
            u_bounds: vec![(lo, hi); n],
            s_bounds: (1.0, s_max),
            clock,
            global_speed: ocp.global_speed,
            terminal,
            y_bounds: y_bounds.bounded.then_some((y_bounds.lo, y_bounds.hi)),
            control_weight: weight * effort,
            tracking,
            initial_guess: None,
        };
        let options = spec.mpcc.apply(
            spec.fesd
                .apply(model_defaults(&tf, default_options()), &bad)?,
            &bad,
        )?;
        let n_fe = options.discretization.n_fe;
        let elements = n
            .checked_mul(n_fe)
            .filter(|&e| e <= MAX_FINITE_ELEMENTS)
            .ok_or_else(|| {
                at.err(
                    &["fesd", "n_fe"],
                    format!(
                        "N × n_fe = {n} × {n_fe} finite elements is more than a problem may have \
                     ({MAX_FINITE_ELEMENTS})"
                    ),
                )
            })?;
        let element = ocp.T / elements as f64;
        horizon.initial_guess = rollout(
            ocp.initial_guess.as_ref(),
            tf.cls.model(),
            &horizon.y0,
            (ocp.T, element),
            &control_names,
            &at,
        )?
        .map(Arc::new);
        let continuation = match &ocp.continuation {
            None => None,
            Some(c) => Some(continuation_plan(c, ocp, &horizon, &coords)?),
        };
        if growth.is_some() && options.mpcc.smoothing.is_none() {
            return Err(at.err(
                &["ocp", "path", "obstacle_growth"],
                "needs the smoothing phase ([fesd.smoothing])".into(),
            ));
        }
        if growth.is_some() && continuation.is_some() {
            return Err(at.err(
                &["ocp", "continuation"],
                "cannot be combined with ocp.path.obstacle_growth".into(),
            ));
        }
        let time_freezing_only = ocp.continuation.is_some()
            || ocp.initial_guess.is_some()
            || !horizon.tracking.is_empty()
            || growth.is_some()
            || spec.mpcc.method.is_some()
            || spec.fesd.impulse_options().is_err();
        let (formulation, formulation_chosen) = match ocp.formulation.as_deref() {
            None => (
                Formulation::default_for(tf.cls.n_contacts(), !time_freezing_only),
                false,
            ),
            Some(name) => (
                Formulation::from_name(name).map_err(|m| at.err(&["ocp", "formulation"], m))?,
                true,
            ),
        };
        if formulation == Formulation::FesdJ {
            for (key, used) in [
                ("continuation", ocp.continuation.is_some()),
                ("initial_guess", ocp.initial_guess.is_some()),
                ("tracking", !horizon.tracking.is_empty()),
                ("path.obstacle_growth", growth.is_some()),
            ] {
                if used {
                    return Err(at.err(
                        &["ocp", key],
                        "is not supported by formulation \"fesd-j\" (set ocp.formulation = \"time-freezing\")"
                            .into(),
                    ));
                }
            }
        }
        let impulse_options = if formulation == Formulation::FesdJ {
            if spec.mpcc.method.is_some() {
                return Err(at.err(
                    &["mpcc", "method"],
                    "applies to ocp.formulation = \"time-freezing\"".into(),
                ));
            }
            spec.fesd
                .impulse_options()
                .map_err(|e| in_section("fesd.", e, &bad))?
        } else {
            ImpulseOptions::default()
        };
        let state_names = coords
            .q
            .iter()
            .chain(coords.v.iter())
            .cloned()
            .chain(["t".to_string()])
            .collect();
        Ok(Self {
            tf,
            horizon,
            options,
            t_final: ocp.T,
            model_path,
            state_names,
            control_names,
            continuation,
            growth,
            formulation,
            formulation_chosen,
            impulse_options,
        })
    }

    /// Reads and parses a model problem file.
    ///
    /// # Errors
    /// [`OcpError::InvalidInput`] when the file cannot be read, or as
    /// [`ModelProblem::from_toml_str`].
    pub fn from_file(path: &Path) -> Result<Self, OcpError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| OcpError::InvalidInput(format!("{}: {e}", path.display())))?;
        Self::from_toml_str(&text, Some(&path.display().to_string()))
    }
}

/// The model's coordinate names, for the keys `q.NAME` and `v.NAME` of the problem file.
struct Coordinates<'a> {
    /// Names of q.
    q: Vec<String>,
    /// Names of v.
    v: Vec<String>,
    /// Where the keys sit, for errors.
    at: &'a Locator<'a>,
}

impl Coordinates<'_> {
    /// Length of the state y = (q, v, t).
    fn ny(&self) -> usize {
        self.q.len() + self.v.len() + 1
    }

    /// The index in y = (q, v, t) of coordinate `key` of `kind` ("q" or "v") named in
    /// `ocp.section`.
    fn index(&self, section: &str, kind: &str, key: &str) -> Result<usize, OcpError> {
        let (names, offset) = if kind == "q" {
            (&self.q, 0)
        } else {
            (&self.v, self.q.len())
        };
        coordinate(names, key).map(|i| i + offset).ok_or_else(|| {
            self.at.err(
                &["ocp", section, kind, key],
                format!(
                    "the model has no coordinate \"{key}\" in {kind} (coordinates: {})",
                    names.join(", ")
                ),
            )
        })
    }

    /// [`Coordinates::index`] of a coordinate given the value `value` in `ocp.section`,
    /// which must be finite.
    fn index_of_value(
        &self,
        section: &str,
        kind: &str,
        key: &str,
        value: f64,
    ) -> Result<usize, OcpError> {
        let i = self.index(section, kind, key)?;
        if !value.is_finite() {
            return Err(self
                .at
                .err(&["ocp", section, kind, key], "is not finite".into()));
        }
        Ok(i)
    }
}

/// The options that follow the model, before the file's `[fesd]` keys: with several
/// contacts, a larger IPOPT iteration budget (the constant below, with its measurement) and cross complementarity (switch
/// detection) on the contact gaps only — the leading switching functions: in flight the
/// normal and tangential velocities of the corners that do not touch change sign where no
/// element boundary is needed. With one contact every switching function keeps its switch
/// detection (a braking ball's slip–stick switch gets its boundary).
fn model_defaults(tf: &TimeFreezing, mut o: FesdOptions) -> FesdOptions {
    let contacts = tf.cls.n_contacts();
    if contacts > 1 {
        o.discretization.cross_components = contacts.min(tf.nc());
        o.nlp.max_iter = SEVERAL_CONTACTS_MAX_ITER;
    }
    o
}

/// IPOPT iterations per NLP with several contacts: the pushed box's relaxed NLPs take 360 to
/// 800 iterations (the default 300 ends its first NLP short).
const SEVERAL_CONTACTS_MAX_ITER: i32 = 1500;

/// Checks `N`, `T`, `s_max` and `cost.effort` of `[ocp]`; returns `s_max` and the effort
/// weight with their defaults.
fn check_horizon_keys(ocp: &OcpKeys, at: &Locator) -> Result<(f64, f64), OcpError> {
    if ocp.N == 0 {
        return Err(at.err(&["ocp", "N"], "must be positive".into()));
    }
    if ocp.N > MAX_FINITE_ELEMENTS {
        return Err(at.err(
            &["ocp", "N"],
            format!(
                "{} control intervals is more than a problem may have ({MAX_FINITE_ELEMENTS} \
                 finite elements)",
                ocp.N
            ),
        ));
    }
    if !(ocp.T.is_finite() && ocp.T > 0.0) {
        return Err(at.err(&["ocp", "T"], format!("must be positive, got {}", ocp.T)));
    }
    let s_max = ocp.s_max.unwrap_or(DEFAULT_S_MAX);
    if !(s_max.is_finite() && s_max >= 1.0) {
        return Err(at.err(&["ocp", "s_max"], format!("must be ≥ 1, got {s_max}")));
    }
    let effort = ocp.cost.effort.unwrap_or(1.0);
    if !(effort.is_finite() && effort >= 0.0) {
        return Err(at.err(
            &["ocp", "cost", "effort"],
            format!("must be ≥ 0, got {effort}"),
        ));
    }
    Ok((s_max, effort))
}

/// The controls of `ocp.controls`: actuator names and effort bounds.
struct Controls {
    /// The actuators' names, in control order.
    names: Vec<String>,
    /// Lower effort bounds.
    lo: Vec<f64>,
    /// Upper effort bounds.
    hi: Vec<f64>,
}

/// `ocp.controls`: the named (default: every) actuator with its effort bounds.
fn controls(ocp: &OcpKeys, model: &Model, at: &Locator) -> Result<Controls, OcpError> {
    let control_names: Vec<String> = match &ocp.controls {
        Some(c) => c.clone(),
        None => model.actuators.iter().map(|a| a.name.clone()).collect(),
    };
    let mut lo = Vec::with_capacity(control_names.len());
    let mut hi = Vec::with_capacity(control_names.len());
    for c in &control_names {
        let Some(a) = model.actuators.iter().find(|a| &a.name == c) else {
            return Err(at.err(
                &["ocp", "controls"],
                format!(
                    "the model has no actuator \"{c}\" (actuators: {})",
                    model
                        .actuators
                        .iter()
                        .map(|a| a.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        };
        let Some((l, h)) = a.effort_limit else {
            return Err(at.err(
                &["ocp", "controls"],
                format!("actuator \"{c}\" has no effort_limit: an OCP control needs bounds"),
            ));
        };
        lo.push(l);
        hi.push(h);
    }
    Ok(Controls {
        names: control_names,
        lo,
        hi,
    })
}

/// The state bounds of `ocp.path.q` and `ocp.path.v`.
struct StateBounds {
    /// Lower bounds of y.
    lo: Vec<f64>,
    /// Upper bounds of y.
    hi: Vec<f64>,
    /// Whether any bound is set.
    bounded: bool,
}

/// The state bounds of `ocp.path.q` and `ocp.path.v` ([`NO_BOUND`] where none is set).
fn state_bounds(ocp: &OcpKeys, coords: &Coordinates) -> Result<StateBounds, OcpError> {
    let ny = coords.ny();
    let mut y_lo = vec![-NO_BOUND; ny];
    let mut y_hi = vec![NO_BOUND; ny];
    let mut bounded = false;
    for (kind, map) in [("q", &ocp.path.q), ("v", &ocp.path.v)] {
        for (key, &(l, h)) in map {
            let i = coords.index("path", kind, key)?;
            if l.is_nan() || h.is_nan() || l > h || l == f64::INFINITY || h == f64::NEG_INFINITY {
                return Err(coords.at.err(
                    &["ocp", "path", kind, key],
                    format!("bounds [{l}, {h}] must be ordered (lower ≤ upper, inf for none)"),
                ));
            }
            y_lo[i] = l.max(-NO_BOUND);
            y_hi[i] = h.min(NO_BOUND);
            bounded = true;
        }
    }
    Ok(StateBounds {
        lo: y_lo,
        hi: y_hi,
        bounded,
    })
}

/// `[ocp.terminal]`: (index, value) of the fixed final coordinates, checked against the
/// state bounds.
fn terminal_values(
    ocp: &OcpKeys,
    coords: &Coordinates,
    bounds: &StateBounds,
) -> Result<Vec<(usize, f64)>, OcpError> {
    let (y_lo, y_hi) = (&bounds.lo, &bounds.hi);
    let mut terminal = Vec::new();
    for (kind, map) in [("q", &ocp.terminal.q), ("v", &ocp.terminal.v)] {
        for (key, &value) in map {
            let i = coords.index_of_value("terminal", kind, key, value)?;
            if value < y_lo[i] || value > y_hi[i] {
                return Err(coords.at.err(
                    &["ocp", "terminal", kind, key],
                    format!(
                        "{value} lies outside its bounds [{}, {}] (ocp.path.{kind}.{key})",
                        y_lo[i], y_hi[i]
                    ),
                ));
            }
            terminal.push((i, value));
        }
    }
    Ok(terminal)
}

/// `ocp.cost.track`: the running tracking cost's terms.
fn tracking_terms(ocp: &OcpKeys, coords: &Coordinates) -> Result<Vec<Tracking>, OcpError> {
    let mut tracking = Vec::new();
    for (kind, map) in [("q", &ocp.cost.track.q), ("v", &ocp.cost.track.v)] {
        for (key, t) in map {
            let index = coords.index("cost", kind, key).map_err(|_| {
                coords.at.err(
                    &["ocp", "cost", "track", kind, key],
                    format!("the model has no coordinate \"{key}\" in {kind}"),
                )
            })?;
            if !(t.target.is_finite() && t.weight.is_finite() && t.weight >= 0.0) {
                return Err(coords.at.err(
                    &["ocp", "cost", "track", kind, key],
                    "needs a finite target and a finite weight ≥ 0".into(),
                ));
            }
            tracking.push(Tracking {
                index,
                target: t.target,
                weight: t.weight,
            });
        }
    }
    Ok(tracking)
}

/// The path constraints on points of bodies: `ocp.path.point` bounds, then
/// `ocp.path.outside_ellipse` obstacles.
fn body_path_terms(ocp: &OcpKeys, model: &Model, at: &Locator) -> Result<Vec<PathTerm>, OcpError> {
    let body_of = |list: &str, k: usize, name: &str| {
        model.body_index(name).ok_or_else(|| {
            at.err(
                &["ocp", "path", list],
                format!("entry {k}: the model has no body \"{name}\""),
            )
        })
    };
    let mut path = Vec::new();
    for (k, p) in ocp.path.point.iter().enumerate() {
        let body = body_of("point", k, &p.body)?;
        for (axis, b) in [p.x, p.y].into_iter().enumerate() {
            if let Some(bounds) = b {
                path.push(PathTerm::Point(PointBound {
                    body,
                    point: Vector3::from(p.point),
                    axis,
                    bounds,
                }));
            }
        }
    }
    for (k, e) in ocp.path.outside_ellipse.iter().enumerate() {
        path.push(PathTerm::OutsideEllipse(EllipseObstacle {
            body: body_of("outside_ellipse", k, &e.body)?,
            point: Vector3::from(e.point),
            center: e.center,
            axes: e.axes,
        }));
    }
    Ok(path)
}

/// The contacts of `[time_freezing]`.
struct ContactPairs<'t> {
    /// The (body side, plane) collider pairs; `None`: every body collider against every
    /// world plane.
    pairs: Option<Vec<(&'t str, &'t str)>>,
    /// The key that named them (`contact` or `contacts`), for errors.
    key: &'static str,
}

/// The contacts of `[time_freezing]`: `contact` (one pair) or `contacts` (a list).
fn contact_pairs<'t>(tfk: &'t TfKeys, at: &Locator) -> Result<ContactPairs<'t>, OcpError> {
    let pairs = match (&tfk.contact, &tfk.contacts) {
        (Some(_), Some(_)) => {
            return Err(at.err(
                &["time_freezing", "contacts"],
                "give either contact (one pair) or contacts (a list of pairs), not both".into(),
            ))
        }
        (Some((a, b)), None) => Some(vec![(a.as_str(), b.as_str())]),
        (None, Some(list)) => Some(list.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect()),
        (None, None) => None,
    };
    let contact_key = if tfk.contacts.is_some() {
        "contacts"
    } else {
        "contact"
    };
    Ok(ContactPairs {
        pairs,
        key: contact_key,
    })
}

/// Default rigid stepper of `[ocp.initial_guess]`.
const DEFAULT_GUESS_STEPPER: &str = "anitescu-potra";

/// `[ocp.initial_guess] simulate = true`: the model run from `y0` over the horizon `t_final`
/// through a rigid stepper (`stepper`, default `anitescu-potra`; step `dt`, default a tenth
/// of a finite element, at most 1 ms) under constant controls (`controls`, by actuator
/// name; default zero), sampled at every step. `None` without the table or with
/// `simulate = false`.
fn rollout(
    keys: Option<&GuessKeys>,
    model: &Model,
    y0: &[f64],
    (t_final, element): (f64, f64),
    control_names: &[String],
    at: &Locator,
) -> Result<Option<StateGuess>, OcpError> {
    let Some(g) = keys.filter(|g| g.simulate) else {
        return Ok(None);
    };
    fn key(k: &str) -> [&str; 3] {
        ["ocp", "initial_guess", k]
    }
    let dt = g.dt.unwrap_or((element / 10.0).min(1e-3));
    if !(dt.is_finite() && dt > 0.0) {
        return Err(at.err(&key("dt"), format!("must be positive, got {dt}")));
    }
    let mut u_model = vec![0.0; model.actuators.len()];
    let mut u_ocp = vec![0.0; control_names.len()];
    for (name, &value) in &g.controls {
        let Some(a) = model.actuators.iter().position(|a| &a.name == name) else {
            return Err(at.err(
                &key("controls"),
                format!("the model has no actuator \"{name}\""),
            ));
        };
        u_model[a] = value;
        if let Some(c) = control_names.iter().position(|c| c == name) {
            u_ocp[c] = value;
        }
    }
    let stepper = g.stepper.as_deref().unwrap_or(DEFAULT_GUESS_STEPPER);
    let sim_err = |e: nonsmooth_sim::SimError| at.err(&key("simulate"), e.to_string());
    let mut sim = nonsmooth_sim::Simulator::new(model.clone(), stepper, dt)
        .map_err(|e| at.err(&key("stepper"), e.to_string()))?;
    let nq = model.nq();
    sim.reset_to(&y0[..nq], &y0[nq..y0.len() - 1])
        .map_err(sim_err)?;
    let steps = (t_final / dt).ceil();
    if steps.is_nan() || steps > MAX_GUESS_STEPS {
        return Err(at.err(
            &key("dt"),
            format!(
                "the rollout would take {steps:.3e} steps of dt = {dt} s over T = {t_final} s, \
                 more than {MAX_GUESS_STEPS:.0e}: set a larger dt"
            ),
        ));
    }
    let steps = steps as usize;
    let mut guess = StateGuess {
        t: vec![0.0],
        y: vec![y0[..y0.len() - 1].to_vec()],
        u: vec![],
    };
    for _ in 0..steps {
        sim.step(&u_model).map_err(sim_err)?;
        guess.t.push(sim.t());
        guess
            .y
            .push(sim.q().iter().chain(sim.v().iter()).copied().collect());
    }
    guess.u = vec![u_ocp];
    Ok(Some(guess))
}

/// The initial state y(0) = (q, v, 0): the model's `[initial]` with the `[ocp.initial]`
/// changes.
fn initial_state(ocp: &OcpKeys, model: &Model, coords: &Coordinates) -> Result<Vec<f64>, OcpError> {
    let mut y0: Vec<f64> = model
        .initial_state
        .q
        .iter()
        .chain(model.initial_state.v.iter())
        .copied()
        .chain([0.0])
        .collect();
    for (kind, map) in [("q", &ocp.initial.q), ("v", &ocp.initial.v)] {
        for (key, &value) in map {
            let i = coords.index_of_value("initial", kind, key, value)?;
            y0[i] = value;
        }
    }
    Ok(y0)
}

/// `ocp.path.obstacle_growth`: the [`Growth`] of the ellipses of `system`, every stage's
/// system checked.
fn obstacle_growth(
    g: &GrowthKeys,
    system: &ModelSystem,
    a_n: f64,
    stance: Option<StanceSpec>,
    at: &Locator,
) -> Result<Growth, OcpError> {
    let here = |e: OcpError| match e {
        OcpError::InvalidInput(m) => at.err(&["ocp", "path", "obstacle_growth"], m),
        other => other,
    };
    let base = system.clone();
    let plain = |m: String| OcpError::InvalidInput(m);
    let at_scale: SystemAt = Arc::new(move |s| {
        time_freezing(base.with_obstacle_scale(s)?, a_n, stance.as_ref(), &plain)
    });
    let growth = Growth {
        scales: g.scales.clone(),
        system: at_scale,
        factors: g.factors.clone(),
        bisections: g.bisections.unwrap_or(DEFAULT_GROWTH_BISECTIONS),
        close_stages: g.close_stages.unwrap_or(true),
    };
    growth.validate().map_err(here)?;
    for k in 0..growth.scales.len() {
        growth.stage(k).map_err(here)?;
    }
    Ok(growth)
}

/// `[ocp.continuation]` `c`: the plan through the waypoints of its one coordinate toward
/// the terminal values of `horizon`.
fn continuation_plan(
    c: &ContinuationTable,
    ocp: &OcpKeys,
    horizon: &Horizon,
    coords: &Coordinates,
) -> Result<ContinuationPlan, OcpError> {
    let at = coords.at;
    let keys: Vec<(&str, &String, &Vec<f64>)> =
        c.q.iter()
            .map(|(k, v)| ("q", k, v))
            .chain(c.v.iter().map(|(k, v)| ("v", k, v)))
            .collect();
    let [(kind, key, values)] = keys.as_slice() else {
        return Err(at.err(
            &["ocp", "continuation"],
            format!(
                "needs the waypoints of exactly one coordinate (e.g. q.x = [0.5, 1.0]), got {}",
                keys.len()
            ),
        ));
    };
    let i = coords.index("continuation", kind, key)?;
    let plan = ContinuationPlan::in_component(
        &horizon.terminal,
        i,
        values,
        c.sigma0.unwrap_or(DEFAULT_CONTINUATION_SIGMA0),
    )
    .map_err(|e| match e {
        OcpError::InvalidInput(m) => at.err(&["ocp", "continuation", kind, key], m),
        other => other,
    })?;
    if c.local_speed && !ocp.global_speed {
        return Err(at.err(
            &["ocp", "continuation", "local_speed"],
            "needs ocp.global_speed = true (the speed of time is already per interval)".into(),
        ));
    }
    Ok(ContinuationPlan {
        local_speed_after_first: c.local_speed,
        ..plan.with_mode(c.mode.unwrap_or_default())
    })
}
