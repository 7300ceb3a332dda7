//! Errors of the reporting layer.

use thiserror::Error;

/// Failure to write an output or to run an experiment.
#[derive(Debug, Error)]
pub enum ReportError {
    /// A file or directory could not be written.
    #[error("cannot write `{path}`: {message}")]
    Io {
        /// The path.
        path: String,
        /// The operating system's message.
        message: String,
    },
    /// A figure could not be drawn.
    #[error("plot `{title}`: {message}")]
    Plot {
        /// The figure's title.
        title: String,
        /// What went wrong.
        message: String,
    },
    /// No experiment is registered under this id.
    #[error("unknown experiment `{id}` (see `nonsmooth reproduce --list`)")]
    UnknownExperiment {
        /// The id asked for.
        id: String,
    },
    /// An experiment returned an error.
    #[error("experiment `{id}` failed: {message}")]
    Experiment {
        /// The experiment's id.
        id: String,
        /// Its error message.
        message: String,
    },
    /// Inconsistent input data (e.g. a trajectory viewer scene whose lengths disagree).
    #[error("invalid {what}: {message}")]
    Invalid {
        /// What was being written.
        what: String,
        /// What is inconsistent.
        message: String,
    },
}

impl ReportError {
    /// An I/O error on `path`.
    pub fn io(path: &std::path::Path, err: impl std::fmt::Display) -> Self {
        ReportError::Io {
            path: path.display().to_string(),
            message: err.to_string(),
        }
    }
}
