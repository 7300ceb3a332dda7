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
//! T/N of physical time, see `docs/optimal-control.md`). Used by `nonsmooth ocp` and the
//! Python `solve_ocp`.

use crate::fesd::{FesdOptions, Horizon};
use crate::tf::{PointMass, TimeFreezing};
use crate::OcpError;
use serde::Deserialize;
use std::path::Path;
use std::sync::Arc;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelSpec {
    dim: usize,
    mass: f64,
    gravity: f64,
    mu: Option<f64>,
    a_n: f64,
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
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct FesdSpec {
    n_s: Option<usize>,
    n_fe: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProblemSpec {
    model: ModelSpec,
    ocp: OcpSpec,
    #[serde(default)]
    fesd: FesdSpec,
}

/// A parsed problem file: the time-freezing system, the horizon and the discretization.
pub struct OcpProblem {
    /// The time-freezing reformulation of the point mass.
    pub tf: Arc<TimeFreezing<PointMass>>,
    /// Horizon, bounds, terminal constraints and the control weight.
    pub horizon: Horizon,
    /// FESD and homotopy options (`n_s` default 2, `n_fe` default 3).
    pub options: FesdOptions,
    /// Physical horizon T.
    pub t_final: f64,
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
        let tf = Arc::new(TimeFreezing::new(pm, p.model.a_n).map_err(|e| bad(e.to_string()))?);
        let n = p.ocp.N;
        let dt = p.ocp.T / n as f64;
        let horizon = Horizon {
            y0: p.ocp.y0,
            lam0: None,
            n_steps: n,
            step_len: dt,
            u_bounds: vec![(p.ocp.u_lo, p.ocp.u_hi); n],
            s_bounds: (1.0, p.ocp.s_max),
            clock: Some(p.ocp.T),
            terminal: p.ocp.terminal,
            y_bounds: None,
            control_weight: dt,
        };
        let options = FesdOptions {
            n_s: p.fesd.n_s.unwrap_or(2),
            n_fe: p.fesd.n_fe.unwrap_or(3),
            ..FesdOptions::default()
        };
        Ok(Self {
            tf,
            horizon,
            options,
            t_final: p.ocp.T,
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
