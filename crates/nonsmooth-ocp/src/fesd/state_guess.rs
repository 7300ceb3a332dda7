//! A state trajectory to start a FESD NLP from ([`StateGuess`]: e.g. a rollout of the model
//! through a rigid time stepper), held by the horizon it discretizes
//! ([`super::layout::Horizon::initial_guess`]) and read by [`super::initial_guess`].

use crate::OcpError;

/// A state trajectory sampled at increasing physical times, with the controls of each
/// control interval.
#[derive(Debug, Clone, PartialEq)]
pub struct StateGuess {
    /// Sample times (increasing, from 0).
    pub t: Vec<f64>,
    /// The state (q, v) at each sample time (without the clock).
    pub y: Vec<Vec<f64>>,
    /// The controls of each control interval, the last one for the intervals after it
    /// (empty: zero, within the bounds).
    pub u: Vec<Vec<f64>>,
}

impl StateGuess {
    /// The state (q, v) at physical time `t`, linearly interpolated between the samples
    /// (held at the ends).
    pub fn at(&self, t: f64) -> Vec<f64> {
        let k = self.t.partition_point(|s| *s <= t);
        match k {
            0 => self.y[0].clone(),
            k if k >= self.t.len() => self.y[self.t.len() - 1].clone(),
            k => {
                let (t0, t1) = (self.t[k - 1], self.t[k]);
                let w = if t1 > t0 { (t - t0) / (t1 - t0) } else { 0.0 };
                self.y[k - 1]
                    .iter()
                    .zip(&self.y[k])
                    .map(|(a, b)| a + w * (b - a))
                    .collect()
            }
        }
    }

    /// Checks the samples against a system with `n` state entries (q, v).
    ///
    /// # Errors
    /// [`OcpError::InvalidInput`] for no samples, a length mismatch, non-finite values or
    /// decreasing times.
    pub fn validate(&self, n: usize) -> Result<(), OcpError> {
        let bad = |m: String| Err(OcpError::InvalidInput(format!("initial guess: {m}")));
        if self.t.is_empty() || self.t.len() != self.y.len() {
            return bad(format!(
                "{} sample times for {} states (at least one of each, as many)",
                self.t.len(),
                self.y.len()
            ));
        }
        if let Some(i) = self.y.iter().position(|y| y.len() != n) {
            return bad(format!(
                "state {i} has {} entries, the system {n}",
                self.y[i].len()
            ));
        }
        let finite = self
            .t
            .iter()
            .chain(self.y.iter().flatten())
            .all(|v| v.is_finite());
        if !finite || self.t.windows(2).any(|w| w[1] < w[0]) {
            return bad("times must increase and every value be finite".into());
        }
        Ok(())
    }
}
