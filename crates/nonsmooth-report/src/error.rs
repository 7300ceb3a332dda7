//! Errors of the reporting layer.

use thiserror::Error;

/// Failure to write an output or to run an experiment.
#[derive(Debug, Error)]
pub enum ReportError {
    #[error("cannot write `{path}`: {message}")]
    Io { path: String, message: String },
    #[error("plot `{title}`: {message}")]
    Plot { title: String, message: String },
    #[error("unknown experiment `{id}` (see `nonsmooth reproduce --list`)")]
    UnknownExperiment { id: String },
    #[error("experiment `{id}` failed: {message}")]
    Experiment { id: String, message: String },
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
