//! What the inverse-dynamics testbeds' experiments (locomotion, grasping) share: the report
//! player's frame count and the pass marks of a cell at the other chatter run lengths.

use nonsmooth_control::controllers::{CHATTER_RUN_MARKS, CHATTER_RUN_STEPS};
use nonsmooth_report::ExperimentOutcome;

/// Frames per controller in the report's walk player (of 300 recorded states in full mode).
pub(crate) const PLAYER_FRAMES: usize = 100;

/// The pass marks a cell would get at the other chatter run lengths of
/// [`CHATTER_RUN_MARKS`] (`pass_run5_<key>`, `pass_run20_<key>`; `pass_<key>` is the
/// criterion's): no other failure and a longest reversal run below the length.
pub(crate) fn record_pass_marks(
    out: &mut ExperimentOutcome,
    key: &str,
    failed_otherwise: bool,
    longest_reversal_run: usize,
) {
    for run in CHATTER_RUN_MARKS {
        if run != CHATTER_RUN_STEPS {
            let pass = !failed_otherwise && longest_reversal_run < run;
            out.metric(&format!("pass_run{run}_{key}"), f64::from(u8::from(pass)));
        }
    }
}
