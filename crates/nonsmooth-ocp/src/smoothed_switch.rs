//! The smoothed switch of the smoothing phase ([`crate::smoothing`]): its options
//! ([`Smoothing`]: the widths, their factors and weights) and the smoothed Heaviside step
//! α = H_w(c) = ½(1 + tanh(c / w)) that replaces the step function of a switching function.

use crate::nlp::Real;
use crate::OcpError;

/// Options of the smoothing phase ([`MpccStrategy::smoothing`](crate::fesd::MpccStrategy::smoothing); problem files:
/// `[fesd.smoothing]`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Smoothing {
    /// Base width w_i per switching function (units of c_i: the gap in m, velocities in
    /// m/s for the hopper).
    pub widths: Vec<f64>,
    /// Width factors of the phase's NLPs, in order (e.g. 1, 0.3, 0.1, …).
    pub factors: Vec<f64>,
    /// Weight ε of the linear multiplier cost ε Σ (λᵖ + λⁿ) during the phase.
    #[serde(default = "default_lambda_weight")]
    pub lambda_weight: f64,
    /// Relaxations σ of the phase's closing NLPs (empty = none): at the last width, with
    /// the smoothing rows still on, the complementarity rows (Scholtes ≤ σ, or the ℓ1
    /// penalty with ρ = 1/σ) are switched on again. α is pinned to H_w(c) there, so the
    /// only way to lower the *cross* products (a switch inside an element, which the
    /// smoothing does not see) is to move the element boundaries onto the switches — the
    /// FESD step-size adaptation — without re-opening the relaxed set of α.
    #[serde(default)]
    pub cross_sigmas: Vec<f64>,
    /// Weight w of the soft terminal w Σ (y_i(T̃) − target_i)² during the phase.
    #[serde(default = "default_terminal_weight")]
    pub terminal_weight: f64,
    /// IPOPT iteration limit of the phase's NLPs (`None`: [`NlpSettings::max_iter`](crate::fesd::NlpSettings::max_iter), the
    /// limit of every homotopy NLP).
    #[serde(default)]
    pub max_iter: Option<i32>,
}

fn default_lambda_weight() -> f64 {
    1e-3
}

fn default_terminal_weight() -> f64 {
    100.0
}

impl Smoothing {
    /// Checks widths (one positive finite value per switching function), factors (positive,
    /// finite, at least one) and the multiplier weight (positive, finite).
    pub fn validate(&self, n_c: usize) -> Result<(), OcpError> {
        let bad = |v: &f64| !(v.is_finite() && *v > 0.0);
        if self.widths.len() != n_c || self.widths.iter().any(bad) {
            return Err(OcpError::InvalidInput(format!(
                "smoothing.widths must hold {n_c} positive finite values (one per switching function), got {:?}",
                self.widths
            )));
        }
        if self.factors.is_empty() || self.factors.iter().any(bad) {
            return Err(OcpError::InvalidInput(format!(
                "smoothing.factors must be a nonempty list of positive finite values, got {:?}",
                self.factors
            )));
        }
        if bad(&self.terminal_weight) || self.cross_sigmas.iter().any(bad) {
            return Err(OcpError::InvalidInput(format!(
                "smoothing.terminal_weight and smoothing.cross_sigmas must be positive and finite, got {} and {:?}",
                self.terminal_weight, self.cross_sigmas
            )));
        }
        if let Some(m) = self.max_iter.filter(|m| *m <= 0) {
            return Err(OcpError::InvalidInput(format!(
                "smoothing.max_iter must be positive, got {m}"
            )));
        }
        if bad(&self.lambda_weight) {
            return Err(OcpError::InvalidInput(format!(
                "smoothing.lambda_weight must be positive and finite, got {}",
                self.lambda_weight
            )));
        }
        Ok(())
    }
}

/// |c/w| beyond which H_w(c) is taken as exactly 0 or 1 (tanh(20) = 1 − 8e-18), which
/// also keeps the dual numbers' tanh away from overflow.
const SATURATION: f64 = 20.0;

/// The smoothed Heaviside function H_w(c) = ½(1 + tanh(c / w)).
pub fn heaviside<T: Real>(c: T, width: f64) -> T {
    let z = c / width;
    if z.re() > SATURATION {
        T::from(1.0)
    } else if z.re() < -SATURATION {
        T::from(0.0)
    } else {
        (z.tanh() + 1.0) * 0.5
    }
}
