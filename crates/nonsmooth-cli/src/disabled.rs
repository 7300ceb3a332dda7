//! The subcommands whose cargo feature is off in this build (`ocp`, `stability`): they stay
//! listed in `nonsmooth --help`, take any arguments and answer with an error naming the
//! feature to enable.

use crate::CliError;
use clap::Args;
use std::ffi::OsString;
use std::process::ExitCode;

/// The arguments of a subcommand that this build leaves out: anything, unread.
#[derive(Args)]
pub struct DisabledArgs {
    /// The subcommand's arguments (not read: this build cannot run it).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        hide = true,
        num_args = 0..
    )]
    pub args: Vec<OsString>,
}

/// The error of subcommand `subcommand`, which the cargo feature `feature` brings.
pub fn run(subcommand: &str, feature: &'static str) -> Result<ExitCode, CliError> {
    Err(CliError::FeatureDisabled {
        what: format!("`nonsmooth {subcommand}`"),
        feature,
    })
}
