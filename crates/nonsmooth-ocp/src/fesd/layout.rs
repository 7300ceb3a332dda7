//! Index layout of a FESD horizon NLP ([`Layout`], [`ElementIdx`]) and the horizon it
//! discretizes ([`Horizon`]; [`Clock`]: the stage clock constraints of Nurkanović et al. Sec. 5 or
//! only the final clock).

use super::state_guess::StateGuess;
use super::tableau::Dcs;

/// Variable indices of one finite element.
#[derive(Debug, Clone)]
pub struct ElementIdx {
    /// Element length h.
    pub h: usize,
    /// Start of the element's initial state y_n (y0 or the previous element's end state).
    pub y_start: usize,
    /// Start of each stage's Y.
    pub y: Vec<usize>,
    /// Start of the element's end state (the last stage for Radau IIA, a separate variable
    /// y_end = y_n + h s Σ bᵢ F(Yᵢ) for Gauss–Legendre).
    pub y_end: usize,
    /// Start of each stage's α.
    pub alpha: Vec<usize>,
    /// Start of λᵖ for j = 0..n_s (j = 0 is the previous element's end point), and
    /// j = n_s + 1 at the element's end point for Gauss–Legendre.
    pub lp: Vec<usize>,
    /// Start of λⁿ at the same points as `lp`.
    pub ln: Vec<usize>,
    /// Control interval of the element.
    pub step: usize,
}

/// Index layout of a FESD horizon NLP.
#[derive(Debug, Clone)]
pub struct Layout {
    /// n_y, n_c (n_θ for Stewart), n_u, n_s.
    pub dims: (usize, usize, usize, usize),
    /// Initial state variables.
    pub y0: usize,
    /// Controls per step.
    pub u: Vec<usize>,
    /// Speed of time per step.
    pub s: Vec<usize>,
    /// Elements in order.
    pub elems: Vec<ElementIdx>,
    /// First row of each element's complementarity block (n_c rows).
    pub comp_rows: Vec<usize>,
    /// Number of rows of each element's complementarity constraint (n_c, or
    /// [`comp_pair_rows`](super::comp_pair_rows) with [`MpccStrategy::per_pair`](crate::fesd::MpccStrategy::per_pair)).
    pub comp_row_len: usize,
    /// Soft terminal phase: (variable, target) of each terminal component, made hard once σ
    /// reaches [`MpccStrategy::soft_terminal_sigma`](crate::fesd::MpccStrategy::soft_terminal_sigma) (empty otherwise).
    pub terminal: Vec<(usize, f64)>,
    /// Collocation nodes c_j.
    pub c: Vec<f64>,
    /// Number of leading components with cross complementarity.
    pub n_cross: usize,
    /// The elastic slack variable (elastic mode only).
    pub elastic: Option<usize>,
    /// DCS representation: with [`Dcs::Stewart`], `alpha` holds θ and `lp` holds λ (both of
    /// width `dims.1` = n_θ) and `ln` holds μ (width 1).
    pub dcs: Dcs,
    /// The NLP has the smoothing rows of [`MpccStrategy::smoothing`](crate::fesd::MpccStrategy::smoothing).
    pub smoothing: bool,
}

/// A horizon to discretize: initial state, steps and bounds.
#[derive(Debug, Clone)]
pub struct Horizon {
    /// Initial state y(0) = (q, v, t).
    pub y0: Vec<f64>,
    /// Boundary multipliers (λᵖ, λⁿ) before the first element; default from c(y0).
    pub lam0: Option<(Vec<f64>, Vec<f64>)>,
    /// Number of control intervals N.
    pub n_steps: usize,
    /// Numerical length of each control interval T̃/N.
    pub step_len: f64,
    /// Control bounds per step (fix a control by lo = hi).
    pub u_bounds: Vec<(Vec<f64>, Vec<f64>)>,
    /// Speed-of-time bounds (1, 1) for simulation.
    pub s_bounds: (f64, f64),
    /// How the physical clock t is tied to the control grid.
    pub clock: Clock,
    /// One speed-of-time variable s for the whole horizon instead of one per control
    /// interval (nosnoc's `local_speed_of_time_variable = 0`, the setting of the authors'
    /// hopper code); only meaningful with [`Clock::Terminal`].
    pub global_speed: bool,
    /// Fixed components of the final state (index, value).
    pub terminal: Vec<(usize, f64)>,
    /// State bounds at all stage points (path constraints as bounds).
    pub y_bounds: Option<(Vec<f64>, Vec<f64>)>,
    /// Weight w of the control cost (0 for simulation): w Σ_k ‖u_k‖² with
    /// [`Clock::Stagewise`] (w = T/N makes it the physical-time integral, every interval
    /// lasting T/N), otherwise w Σ_k ‖u_k‖² (t_{k+1} − t_k) with the clock values at the
    /// interval ends (w = 1: the physical-time integral, whatever each interval lasts).
    pub control_weight: f64,
    /// Running tracking cost Σ_k Δt w (y_i(t_k) − target)² at the control-interval ends,
    /// Δt = T/N the nominal interval length (empty: none).
    pub tracking: Vec<Tracking>,
    /// Initial guess of the NLP from a state trajectory (`None`: y0 everywhere).
    pub initial_guess: Option<std::sync::Arc<StateGuess>>,
}

/// One term of [`Horizon::tracking`]: state component `index` tracked toward `target` with
/// weight `weight` (per second).
#[derive(Debug, Clone, PartialEq)]
pub struct Tracking {
    /// Index of the state component in y = (q, v, t).
    pub index: usize,
    /// Target value.
    pub target: f64,
    /// Weight w ≥ 0.
    pub weight: f64,
}

/// How the physical clock t (the last state of y) is tied to the control grid.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Clock {
    /// No clock constraint (simulation, where s = 1 is fixed).
    Free,
    /// Stage clock constraints t_k = k T/N at every control-interval end (Nurkanović et al.,
    /// Sec. 5: an equidistant control grid in physical time).
    Stagewise(f64),
    /// Only the final clock t(T̃) = T (nosnoc's `stagewise_clock_constraint = 0`, the
    /// setting of the authors' hopper code): the control intervals are equidistant in
    /// numerical time and last whatever physical time the solution gives them.
    Terminal(f64),
}
