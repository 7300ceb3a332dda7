//! Named model parameters: a dotted path into a model file, set to a number before the model
//! is built. This is how sweeps (`nonsmooth stability --grid`) vary a model without editing
//! its file.
//!
//! A path walks the TOML document: a table key (`model.gravity`), an element of an array of
//! tables by its `name` (`materials.floor.friction`, `bodies.block.com`) or by its index, and a
//! component of a numeric array by `x`/`y`/`z` or index (`bodies.block.com.x`,
//! `initial.q.block.1`). The last segment may name a key the file leaves out (an optional
//! field such as `restitution`); a missing vector is created as `[0, 0, 0]` before its
//! component is set (`bodies.block.com.x` on a body without `com`).

use std::fmt;
use std::str::FromStr;

use crate::error::{Location, ModelError};
use crate::model::Model;

/// A dotted path naming one number of a model file (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ParameterPath {
    segments: Vec<String>,
}

impl ParameterPath {
    /// The path's segments.
    pub fn segments(&self) -> &[String] {
        &self.segments
    }
}

impl fmt::Display for ParameterPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.segments.join("."))
    }
}

impl FromStr for ParameterPath {
    type Err = ModelError;

    fn from_str(s: &str) -> Result<Self, ModelError> {
        let segments: Vec<String> = s.trim().split('.').map(str::to_string).collect();
        if segments.iter().any(String::is_empty) {
            return Err(invalid(
                s,
                "a parameter path is non-empty segments joined by dots, e.g. materials.floor.friction",
            ));
        }
        Ok(ParameterPath { segments })
    }
}

/// One axis of a parameter sweep: a path and its values, written `PATH=LO:HI:N` (N evenly
/// spaced values from LO to HI, both included) or `PATH=V1,V2,…`.
#[derive(Debug, Clone, PartialEq)]
pub struct ParameterAxis {
    /// The parameter.
    pub path: ParameterPath,
    /// Its values, in sweep order.
    pub values: Vec<f64>,
}

impl ParameterAxis {
    /// The most values an axis may have (N of `PATH=LO:HI:N`). The values are stored when the
    /// axis is read, and every value is a model built (and, in a stability sweep, an SDP
    /// solved): a larger N is a typing error, which would otherwise exhaust the memory.
    pub const MAX_VALUES: usize = 1_000_000;
}

impl FromStr for ParameterAxis {
    type Err = ModelError;

    fn from_str(s: &str) -> Result<Self, ModelError> {
        let (path, spec) = s
            .split_once('=')
            .ok_or_else(|| invalid(s, "expected PATH=LO:HI:N or PATH=V1,V2,..."))?;
        let path: ParameterPath = path.parse()?;
        let number = |t: &str| -> Result<f64, ModelError> {
            t.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| invalid(s, &format!("`{t}` is not a finite number")))
        };
        let values = if spec.contains(':') {
            let parts: Vec<&str> = spec.split(':').collect();
            let [lo, hi, n] = parts.as_slice() else {
                return Err(invalid(s, "a range is LO:HI:N"));
            };
            let (lo, hi) = (number(lo)?, number(hi)?);
            let n: usize = n
                .trim()
                .parse()
                .ok()
                .filter(|n| *n >= 1)
                .ok_or_else(|| invalid(s, &format!("N = `{n}` is not a count ≥ 1")))?;
            if n > ParameterAxis::MAX_VALUES {
                return Err(invalid(
                    s,
                    &format!(
                        "N = {n} values is more than an axis may have ({})",
                        ParameterAxis::MAX_VALUES
                    ),
                ));
            }
            if n == 1 {
                vec![lo]
            } else {
                (0..n)
                    .map(|k| lo + (hi - lo) * k as f64 / (n - 1) as f64)
                    .collect()
            }
        } else {
            spec.split(',').map(number).collect::<Result<_, _>>()?
        };
        Ok(ParameterAxis { path, values })
    }
}

fn invalid(text: &str, reason: &str) -> ModelError {
    ModelError::InvalidValue {
        location: Location::field(text.to_string()),
        reason: reason.to_string(),
    }
}

/// Component index of `x`/`y`/`z` or a decimal index.
fn component(seg: &str) -> Option<usize> {
    match seg {
        "x" => Some(0),
        "y" => Some(1),
        "z" => Some(2),
        _ => seg.parse().ok(),
    }
}

/// Sets the number at `path` in a parsed model file to `value`.
///
/// # Errors
/// [`ModelError::UnknownName`] when a segment names no key, element or component (the
/// location is the path so far), [`ModelError::InvalidValue`] when the path runs through a
/// number or names a non-numeric value.
pub fn set_parameter(
    doc: &mut toml::Table,
    path: &ParameterPath,
    value: f64,
) -> Result<(), ModelError> {
    set_parameter_in(doc, path, value, None)
}

/// [`set_parameter`] with the file named in the errors' locations.
fn set_parameter_in(
    doc: &mut toml::Table,
    path: &ParameterPath,
    value: f64,
    file: Option<&str>,
) -> Result<(), ModelError> {
    let segs = &path.segments;
    let at = |field: String| Location {
        file: file.map(str::to_string),
        line: None,
        field,
    };
    let unknown = |i: usize, kind: &'static str| ModelError::UnknownName {
        location: at(segs[..i].join(".")),
        kind,
        name: segs[i].clone(),
    };
    let last = segs.len() - 1;
    let (first, rest) = (&segs[0], &segs[1..]);
    if !doc.contains_key(first) {
        return Err(unknown(0, "model-file key"));
    }
    let mut node = doc
        .get_mut(first)
        .ok_or_else(|| unknown(0, "model-file key"))?;
    for (k, seg) in rest.iter().enumerate() {
        let i = k + 1;
        node = match node {
            toml::Value::Table(t) => {
                if !t.contains_key(seg) {
                    if i == last {
                        t.insert(seg.clone(), toml::Value::Float(value));
                        return Ok(());
                    }
                    if i + 1 == last && component(&segs[last]).is_some_and(|c| c < 3) {
                        t.insert(
                            seg.clone(),
                            toml::Value::Array(vec![toml::Value::Float(0.0); 3]),
                        );
                    } else {
                        return Err(unknown(i, "key"));
                    }
                }
                t.get_mut(seg).ok_or_else(|| unknown(i, "key"))?
            }
            toml::Value::Array(items) => {
                let by_name = items.iter().position(|item| {
                    item.get("name").and_then(toml::Value::as_str) == Some(seg.as_str())
                });
                let at = by_name
                    .or_else(|| component(seg).filter(|c| *c < items.len()))
                    .ok_or_else(|| unknown(i, "element (name or index)"))?;
                &mut items[at]
            }
            _ => {
                return Err(ModelError::InvalidValue {
                    location: at(segs[..i].join(".")),
                    reason: format!("is a single value: `{}` cannot go deeper", path),
                })
            }
        };
    }
    match node {
        toml::Value::Float(_) | toml::Value::Integer(_) => {
            *node = toml::Value::Float(value);
            Ok(())
        }
        _ => Err(ModelError::InvalidValue {
            location: at(path.to_string()),
            reason: "is not a number".into(),
        }),
    }
}

impl Model {
    /// Parses a model from TOML text after setting named parameters
    /// ([`set_parameter`]); `file` names the source in error messages. Errors of the
    /// modified model name the field; their line numbers refer to the rewritten text.
    ///
    /// # Errors
    /// As [`Model::from_toml_str`] and [`set_parameter`].
    pub fn from_toml_str_with(
        src: &str,
        file: Option<&str>,
        parameters: &[(ParameterPath, f64)],
    ) -> Result<Model, ModelError> {
        if parameters.is_empty() {
            return Model::from_toml_str(src, file);
        }
        let mut doc: toml::Table =
            src.parse()
                .map_err(|e: toml::de::Error| ModelError::Syntax {
                    location: Location {
                        file: file.map(str::to_string),
                        line: None,
                        field: String::new(),
                    },
                    message: e.message().to_string(),
                })?;
        for (path, value) in parameters {
            set_parameter_in(&mut doc, path, *value, file)?;
        }
        let text = toml::to_string(&doc).map_err(|e| ModelError::Syntax {
            location: Location::field(""),
            message: format!("cannot serialize the modified model: {e}"),
        })?;
        Model::from_toml_str(&text, file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = r#"
[model]
name = "t"
dimension = "planar"
gravity = [0.0, -9.81, 0.0]

[[bodies]]
name = "block"
mass = 1.0
inertia = [1.0, 1.0, 1.0]

[[materials]]
name = "floor"
friction = 0.5

[[colliders]]
name = "floor"
shape = { plane = [0.0, 1.0, 0.0] }
material = "floor"

[initial]
q.block = [0.0, 1.0, 0.0]
"#;

    fn set(path: &str, v: f64) -> Result<Model, ModelError> {
        let p: ParameterPath = path.parse()?;
        Model::from_toml_str_with(SRC, Some("t.toml"), &[(p, v)])
    }

    #[test]
    fn sets_named_elements_components_and_missing_vectors() {
        let m = set("materials.floor.friction", 1.5).unwrap();
        assert_eq!(
            m.materials
                .iter()
                .find(|x| x.name == "floor")
                .unwrap()
                .friction,
            1.5
        );
        let m = set("bodies.block.com.x", 0.25).unwrap();
        assert_eq!(m.bodies[0].com.x, 0.25);
        let m = set("initial.q.block.1", 2.0).unwrap();
        assert_eq!(m.initial_state.q[1], 2.0);
        let m = set("model.gravity.y", -1.0).unwrap();
        assert_eq!(m.gravity.y, -1.0);
        let m = set("materials.floor.restitution", 0.3).unwrap();
        assert_eq!(
            m.materials
                .iter()
                .find(|x| x.name == "floor")
                .unwrap()
                .restitution,
            Some(0.3)
        );
    }

    #[test]
    fn unknown_segments_and_non_numbers_are_named() {
        let e = set("materials.ice.friction", 0.1).unwrap_err().to_string();
        assert!(e.contains("ice") && e.contains("materials"), "{e}");
        let e = set("bodies.block.mass.x", 0.1).unwrap_err().to_string();
        assert!(e.contains("bodies.block.mass"), "{e}");
        let e = set("model.name", 0.1).unwrap_err().to_string();
        assert!(
            e.contains("model.name") && e.contains("not a number"),
            "{e}"
        );
        let e = set("nothing.here", 0.1).unwrap_err().to_string();
        assert!(e.contains("nothing"), "{e}");
        // A value the model rejects is the model's usual error.
        let e = set("materials.floor.friction", -1.0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("friction"), "{e}");
    }

    #[test]
    fn axes_parse_ranges_and_lists() {
        let a: ParameterAxis = "materials.floor.friction=0:2:21".parse().unwrap();
        assert_eq!(a.values.len(), 21);
        assert!((a.values[20] - 2.0).abs() < 1e-15 && (a.values[1] - 0.1).abs() < 1e-15);
        let a: ParameterAxis = "bodies.block.com.x=-0.5,0,0.5".parse().unwrap();
        assert_eq!(a.values, vec![-0.5, 0.0, 0.5]);
        assert!("x=1:2".parse::<ParameterAxis>().is_err());
        assert!("x=1:2:0".parse::<ParameterAxis>().is_err());
        assert!("x=a,b".parse::<ParameterAxis>().is_err());
        assert!("friction".parse::<ParameterAxis>().is_err());
        assert!("a..b=1".parse::<ParameterAxis>().is_err());
    }
}
