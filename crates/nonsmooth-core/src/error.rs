//! Errors of `nonsmooth-core`: every message names where the problem is (file, line, field)
//! and why.

use thiserror::Error;

/// Where in a model source a problem was found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Location {
    /// Source file, if the model came from one.
    pub file: Option<String>,
    /// 1-based line number, where known.
    pub line: Option<usize>,
    /// Dotted path of the offending field, e.g. `bodies[2].mass` or `joints.knee.axis`.
    pub field: String,
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.file, self.line) {
            (Some(file), Some(line)) => write!(f, "{file}:{line}: field `{}`", self.field),
            (Some(file), None) => write!(f, "{file}: field `{}`", self.field),
            (None, Some(line)) => write!(f, "line {line}: field `{}`", self.field),
            (None, None) => write!(f, "field `{}`", self.field),
        }
    }
}

impl Location {
    /// A location that only names a field.
    pub fn field(field: impl Into<String>) -> Self {
        Location {
            file: None,
            line: None,
            field: field.into(),
        }
    }
}

/// Everything that can be wrong with a model, a state or a model file.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum ModelError {
    #[error("{location}: malformed model file: {message}")]
    Syntax { location: Location, message: String },
    #[error("{location}: unknown {kind} `{name}`")]
    UnknownName {
        location: Location,
        kind: &'static str,
        name: String,
    },
    #[error("{location}: duplicate {kind} name `{name}`")]
    DuplicateName {
        location: Location,
        kind: &'static str,
        name: String,
    },
    #[error("{location}: value {value} is not finite")]
    NonFinite { location: Location, value: f64 },
    #[error("{location}: mass must be positive, got {value}")]
    NonPositiveMass { location: Location, value: f64 },
    #[error("{location}: inertia must be symmetric positive definite ({reason})")]
    InertiaNotPositiveDefinite { location: Location, reason: String },
    #[error("{location}: friction coefficient must be ≥ 0, got {value}")]
    NegativeFriction { location: Location, value: f64 },
    #[error("{location}: quaternion cannot be normalized (norm {norm})")]
    UnnormalizableQuaternion { location: Location, norm: f64 },
    #[error("{location}: invalid value: {reason}")]
    InvalidValue { location: Location, reason: String },
    #[error("{location}: wrong dimension: expected {expected}, got {got}")]
    DimensionMismatch {
        location: Location,
        expected: usize,
        got: usize,
    },
    #[error("{location}: kinematic structure: {reason}")]
    Topology { location: Location, reason: String },
    #[error("{location}: URDF: {message}")]
    Urdf { location: Location, message: String },
    #[error("cannot read `{path}`: {message}")]
    Io { path: String, message: String },
}
