//! Torque-chatter detection shared by the locomotion and grasp runners (docs/locomotion.md,
//! "Fall and chatter detection"): a step counts as a reversal when some joint's torque rate
//! |Δu/Δt| exceeds the threshold with opposite signs on two consecutive steps.
//!
//! Decision (taken after the first measurements, docs/locomotion.md): a run
//! *chatters* when it has [`CHATTER_RUN_STEPS`] = 10 consecutive reversal steps: a sustained
//! oscillation, not the torque spike of a landing (one to a few steps). The share of
//! reversal steps is reported beside it; the report shows how the pass marks move at runs
//! of 5 and 20 steps ([`CHATTER_RUN_MARKS`]).

/// Consecutive reversal steps from which a run chatters.
pub const CHATTER_RUN_STEPS: usize = 10;

/// The run lengths at which the report shows the pass marks (the middle one is the
/// criterion).
pub const CHATTER_RUN_MARKS: [usize; 3] = [5, CHATTER_RUN_STEPS, 20];

use nalgebra::DVector;

/// Counts torque-rate reversals over a run.
#[derive(Debug, Clone)]
pub struct ChatterCounter {
    /// Rate threshold (N·m/s) above which a sign change counts.
    pub rate_threshold: f64,
    prev_torque: Option<DVector<f64>>,
    prev_rate: Option<DVector<f64>>,
    steps: usize,
    reversals: usize,
    run: usize,
    longest_run: usize,
}

impl ChatterCounter {
    /// A counter with the given rate threshold (N·m/s).
    pub fn new(rate_threshold: f64) -> Self {
        Self {
            rate_threshold,
            prev_torque: None,
            prev_rate: None,
            steps: 0,
            reversals: 0,
            run: 0,
            longest_run: 0,
        }
    }

    /// Records the torque `u` applied over a control step of `dt` seconds.
    pub fn observe(&mut self, u: &DVector<f64>, dt: f64) {
        self.steps += 1;
        if let Some(prev) = &self.prev_torque {
            let rate = (u - prev) / dt;
            if let Some(pr) = &self.prev_rate {
                let thr = self.rate_threshold;
                let reversed = rate
                    .iter()
                    .zip(pr.iter())
                    .any(|(a, b)| a.abs() > thr && b.abs() > thr && a * b < 0.0);
                if reversed {
                    self.reversals += 1;
                    self.run += 1;
                    self.longest_run = self.longest_run.max(self.run);
                } else {
                    self.run = 0;
                }
            }
            self.prev_rate = Some(rate);
        }
        self.prev_torque = Some(u.clone());
    }

    /// Reversals counted so far.
    pub fn reversals(&self) -> usize {
        self.reversals
    }

    /// The most consecutive steps with a reversal: a few for the torque spike of a landing, long
    /// runs for a sustained period-2 oscillation (the classical meaning of chatter).
    pub fn longest_run(&self) -> usize {
        self.longest_run
    }

    /// Whether the run chatters: `run_steps` consecutive reversal steps or more (the
    /// criterion is [`CHATTER_RUN_STEPS`]).
    pub fn chatters(&self, run_steps: usize) -> bool {
        self.longest_run >= run_steps
    }

    /// Reversals per observed step (0 before any step).
    pub fn fraction(&self) -> f64 {
        self.reversals as f64 / self.steps.max(1) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alternating_torque_chatters_and_a_ramp_does_not() {
        let mut c = ChatterCounter::new(500.0);
        for k in 0..10 {
            let u = if k % 2 == 0 { 1.0 } else { -1.0 };
            c.observe(&DVector::from_element(2, u), 1e-3);
        }
        assert_eq!(c.reversals(), 8);
        assert_eq!(c.longest_run(), 8);
        assert!(c.chatters(5) && c.chatters(8) && !c.chatters(CHATTER_RUN_STEPS));
        // two isolated spikes: runs of one and two reversal steps
        let mut spikes = ChatterCounter::new(500.0);
        for u in [0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, -1.0, 0.0, 0.0] {
            spikes.observe(&DVector::from_element(1, u), 1e-3);
        }
        assert_eq!(spikes.reversals(), 3);
        assert_eq!(spikes.longest_run(), 2);
        let mut r = ChatterCounter::new(500.0);
        for k in 0..10 {
            r.observe(&DVector::from_element(2, k as f64), 1e-3);
        }
        assert_eq!(r.reversals(), 0);
        assert_eq!(r.fraction(), 0.0);
    }
}
