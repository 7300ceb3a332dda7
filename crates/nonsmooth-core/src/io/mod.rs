//! Model files: the TOML model format (reference: `docs/model-format.md`), URDF and MJCF
//! (MuJoCo XML) import, and [`Model::validate`] for models built in code.
//!
//! Every error is a typed [`ModelError`] whose [`Location`] names the file, the 1-based line
//! and the dotted field path (e.g. `bodies[2].inertia`). Line numbers of semantic errors
//! come from the byte spans `toml` reports for every value ([`spans`]).

pub mod format;
mod load;
pub mod mesh;
mod mjcf;
pub mod parameters;
mod robots;
mod save;
pub mod spans;
mod urdf;
mod validate;

use std::path::Path;

pub use mjcf::MjcfOptions;
pub use parameters::{set_parameter, ParameterAxis, ParameterPath};
pub use urdf::UrdfOptions;
pub use validate::UNIT_TOL;

use crate::error::{Location, ModelError};
use crate::model::Model;
use spans::{FieldPath, SpanIndex};

/// The text of a model file and the name its errors give it (`ModelError::Io` when it
/// cannot be read).
pub(crate) fn read_text(path: &Path) -> Result<(String, String), ModelError> {
    let name = path.display().to_string();
    let src = std::fs::read_to_string(path).map_err(|e| ModelError::Io {
        path: name.clone(),
        message: e.to_string(),
    })?;
    Ok((name, src))
}

/// Turns a `toml` error into [`ModelError::Syntax`] with line and (where the document parsed)
/// the field path of the offending value.
fn syntax_error(
    src: &str,
    file: Option<&str>,
    err: &toml::de::Error,
    index: Option<&SpanIndex>,
) -> ModelError {
    let starts = spans::line_starts(src);
    let offset = err.span().map(|s| s.start);
    let line = offset.map(|o| spans::offset_to_line(&starts, o));
    let mut message = err.message().trim().to_string();
    let mut field = match (index, offset) {
        (Some(index), Some(o)) => index.path_at(o),
        _ => FieldPath::root(),
    };
    // Name the field serde complains about, when the message quotes it.
    for prefix in ["missing field `", "unknown field `"] {
        if let Some(rest) = message.strip_prefix(prefix) {
            if let Some(end) = rest.find('`') {
                let key = &rest[..end];
                if field.0.last() != Some(&spans::Seg::Key(key.to_string())) {
                    field = field.key(key);
                }
            }
        }
    }
    let mut field = field.to_string();
    if field.is_empty() {
        // The document did not parse: name the key (or table header) on the offending line.
        if let Some(l) = line {
            let text = src.lines().nth(l - 1).unwrap_or("").trim();
            field = if text.starts_with('[') {
                text.trim_matches(|c| c == '[' || c == ']')
                    .trim()
                    .to_string()
            } else {
                text.split('=').next().unwrap_or("").trim().to_string()
            };
        }
    }
    if message.contains("untagged enum InertiaSpec") {
        message = "expected [ixx, iyy, izz], a 3×3 array [[..], [..], [..]] or a shape \
                   helper such as { solid_sphere = r } / { solid_box = [hx, hy, hz] }"
            .into();
    } else if message.contains("untagged enum PairMaterial") {
        message = "expected a material name or an inline material table".into();
    } else if message.contains("untagged enum") {
        message = "expected a number, an array of numbers, or a table of them by joint name".into();
    }
    ModelError::Syntax {
        location: Location {
            file: file.map(str::to_string),
            line,
            field,
        },
        message,
    }
}

impl Model {
    /// Parses a model from TOML text (format: `docs/model-format.md`). `file` is only used
    /// in error messages. Bodies may appear in any order: they are sorted topologically
    /// (parents first, file order otherwise kept); bodies without a joint entry get a
    /// default root joint named after the body (floating in spatial models, planar in planar
    /// ones). The result is validated ([`Model::validate`]).
    pub fn from_toml_str(src: &str, file: Option<&str>) -> Result<Model, ModelError> {
        let index = SpanIndex::parse(src).map_err(|e| syntax_error(src, file, &e, None))?;
        if let Some((path, line, value)) = index.first_non_finite() {
            return Err(ModelError::NonFinite {
                location: Location {
                    file: file.map(str::to_string),
                    line: Some(line),
                    field: path.to_string(),
                },
                value,
            });
        }
        let fm: format::FileModel =
            toml::from_str(src).map_err(|e| syntax_error(src, file, &e, Some(&index)))?;
        let locate = |path: &FieldPath| Location {
            file: file.map(str::to_string),
            line: index.line_of(path),
            field: path.to_string(),
        };
        let mut model = load::build_and_validate(&fm, &locate)?;
        if !fm.robots.is_empty() {
            robots::attach_robots(&mut model, &fm.robots, file, &locate)?;
        }
        Ok(model)
    }

    /// Loads a model file, dispatching on the extension: `.toml` (this crate's format),
    /// `.urdf` (imported with [`UrdfOptions::default`]) or `.xml` (MJCF, imported with
    /// [`MjcfOptions::default`]).
    pub fn from_file(path: impl AsRef<Path>) -> Result<Model, ModelError> {
        let path = path.as_ref();
        let (name, src) = read_text(path)?;
        match path.extension().and_then(|e| e.to_str()) {
            Some(ext) if ext.eq_ignore_ascii_case("toml") => {
                Model::from_toml_str(&src, Some(&name))
            }
            Some(ext) if ext.eq_ignore_ascii_case("urdf") => {
                Model::from_urdf_str(&src, Some(&name), &UrdfOptions::default())
            }
            Some(ext) if ext.eq_ignore_ascii_case("xml") => {
                Model::from_mjcf_str(&src, Some(&name), &MjcfOptions::default())
            }
            _ => Err(ModelError::Io {
                path: name,
                message: "unknown model file extension (expected .toml, .urdf or .xml)".into(),
            }),
        }
    }

    /// Imports a URDF file with explicit [`UrdfOptions`] (e.g. a floating base).
    pub fn from_urdf_file(
        path: impl AsRef<Path>,
        options: &UrdfOptions,
    ) -> Result<Model, ModelError> {
        let path = path.as_ref();
        let (name, src) = read_text(path)?;
        Model::from_urdf_str(&src, Some(&name), options)
    }

    /// Writes the model in the TOML format; [`Model::from_toml_str`] of the result gives a
    /// model equal to `self`. The model is validated first.
    pub fn to_toml_string(&self) -> Result<String, ModelError> {
        self.validate()?;
        toml::to_string(&save::to_file(self)).map_err(|e| ModelError::Syntax {
            location: Location::field(""),
            message: format!("cannot serialize: {e}"),
        })
    }

    /// Checks every invariant of a model, whether loaded or built in code: unique non-empty
    /// names; bodies in topological order with `joints[i].child == i` and consistent
    /// coordinate offsets; positive masses (zero only for joint frames that carry a body);
    /// symmetric inertias without negative principal moments (singular ones, and ones that
    /// violate the triangle inequality, pass: loaders warn about them); finite numbers
    /// everywhere; unit quaternions and axes; μ ≥ 0, restitution in [0, 1], positive
    /// stiffnesses, non-negative damping, radii and half extents > 0; valid indices; initial
    /// state of length nq / nv with unit quaternions; planar models restricted to motions in
    /// the x–y plane; a positive definite mass matrix at the initial configuration
    /// ([`ModelError::SingularMassMatrix`] names the first joint whose motion has no inertia).
    pub fn validate(&self) -> Result<(), ModelError> {
        validate::validate_model(self, &|p: &FieldPath| Location::field(p.to_string()))
    }
}
