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
    /// The file is not valid TOML/XML or does not match the format.
    #[error("{location}: malformed model file: {message}")]
    Syntax {
        /// Where.
        location: Location,
        /// The parser's message.
        message: String,
    },
    /// A reference to a body, joint, collider or material that does not exist.
    #[error("{location}: unknown {kind} `{name}`")]
    UnknownName {
        /// Where.
        location: Location,
        /// What kind of name (`body`, `joint`, ...).
        kind: &'static str,
        /// The name that was not found.
        name: String,
    },
    /// Two items of the same kind share a name.
    #[error("{location}: duplicate {kind} name `{name}`")]
    DuplicateName {
        /// Where the second one is.
        location: Location,
        /// What kind of name.
        kind: &'static str,
        /// The repeated name.
        name: String,
    },
    /// A NaN or infinite number.
    #[error("{location}: value {value} is not finite")]
    NonFinite {
        /// Where.
        location: Location,
        /// The offending value.
        value: f64,
    },
    /// A body mass ≤ 0.
    #[error("{location}: mass must be positive, got {value}")]
    NonPositiveMass {
        /// Where.
        location: Location,
        /// The offending mass.
        value: f64,
    },
    /// A rotational inertia that is not symmetric positive semidefinite.
    #[error(
        "{location}: inertia must be symmetric with non-negative principal moments ({reason})"
    )]
    InertiaNotPositiveDefinite {
        /// Where.
        location: Location,
        /// Which check failed.
        reason: String,
    },
    /// The joint-space mass matrix is singular at the initial configuration: a joint moves a
    /// body (with what hangs from it) that has no mass or inertia along that motion, so no
    /// acceleration can be computed.
    #[error("{location}: the dynamics cannot be computed: joint `{joint}` {reason}")]
    SingularMassMatrix {
        /// Where (the joint).
        location: Location,
        /// The joint whose motion carries no inertia.
        joint: String,
        /// The joint's child body and the numbers.
        reason: String,
    },
    /// A negative friction coefficient.
    #[error("{location}: friction coefficient must be ≥ 0, got {value}")]
    NegativeFriction {
        /// Where.
        location: Location,
        /// The offending coefficient.
        value: f64,
    },
    /// A quaternion of (near) zero norm.
    #[error("{location}: quaternion cannot be normalized (norm {norm})")]
    UnnormalizableQuaternion {
        /// Where.
        location: Location,
        /// Its norm.
        norm: f64,
    },
    /// A value outside its allowed range (or a state that overflows).
    #[error("{location}: invalid value: {reason}")]
    InvalidValue {
        /// Where.
        location: Location,
        /// What is wrong with it.
        reason: String,
    },
    /// A vector or matrix of the wrong size.
    #[error("{location}: wrong dimension: expected {expected}, got {got}")]
    DimensionMismatch {
        /// Where.
        location: Location,
        /// The required size.
        expected: usize,
        /// The size given.
        got: usize,
    },
    /// The joints do not form a tree rooted at the world (cycles, missing parents).
    #[error("{location}: kinematic structure: {reason}")]
    Topology {
        /// Where.
        location: Location,
        /// What is wrong with the structure.
        reason: String,
    },
    /// A URDF element that cannot be imported.
    #[error("{location}: URDF: {message}")]
    Urdf {
        /// Where.
        location: Location,
        /// What could not be imported.
        message: String,
    },
    /// An MJCF (MuJoCo XML) element or attribute that cannot be imported.
    #[error("{location}: MJCF: {message}")]
    Mjcf {
        /// Where (file, line, element and attribute).
        location: Location,
        /// What could not be imported.
        message: String,
    },
    /// The model file cannot be read.
    #[error("cannot read `{path}`: {message}")]
    Io {
        /// The path.
        path: String,
        /// The operating system's message.
        message: String,
    },
}
