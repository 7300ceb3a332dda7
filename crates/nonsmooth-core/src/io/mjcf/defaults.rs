//! MJCF default classes (`<default class=…>`, nested, with `childclass`) and the attribute
//! look-up of an element through its class chain ([`Resolved`]).

use std::collections::HashMap;

use nalgebra::Vector3;

use super::xml::Element;
use crate::error::ModelError;

/// One default class: its parent and, per element tag, the attributes it sets.
#[derive(Debug, Clone)]
pub(super) struct DefaultClass {
    pub(super) parent: Option<usize>,
    pub(super) elements: HashMap<String, HashMap<String, String>>,
}

/// The default classes; index 0 is `main`.
#[derive(Debug, Clone)]
pub(super) struct Defaults {
    pub(super) classes: Vec<DefaultClass>,
    pub(super) names: HashMap<String, usize>,
}

impl Defaults {
    pub(super) fn collect(root: &Element) -> Result<Defaults, ModelError> {
        let mut d = Defaults {
            classes: vec![DefaultClass {
                parent: None,
                elements: HashMap::new(),
            }],
            names: HashMap::from([("main".to_string(), 0)]),
        };
        for el in root.children.iter().filter(|c| c.tag == "default") {
            let class = match el.attr("class") {
                None | Some("main") => 0,
                Some(name) => d.add(el, name, Some(0))?,
            };
            d.fill(el, class)?;
        }
        Ok(d)
    }

    pub(super) fn add(
        &mut self,
        el: &Element,
        name: &str,
        parent: Option<usize>,
    ) -> Result<usize, ModelError> {
        if self.names.contains_key(name) {
            return Err(ModelError::DuplicateName {
                location: el.loc(Some("class")),
                kind: "default class",
                name: name.to_string(),
            });
        }
        self.classes.push(DefaultClass {
            parent,
            elements: HashMap::new(),
        });
        let id = self.classes.len() - 1;
        self.names.insert(name.to_string(), id);
        Ok(id)
    }

    pub(super) fn fill(&mut self, el: &Element, class: usize) -> Result<(), ModelError> {
        for child in &el.children {
            if child.tag == "default" {
                let Some(name) = child.attr("class") else {
                    return Err(child.error(
                        Some("class"),
                        "a nested <default> needs a `class` attribute",
                    ));
                };
                let id = self.add(child, name, Some(class))?;
                self.fill(child, id)?;
            } else {
                let entry = self.classes[class]
                    .elements
                    .entry(child.tag.clone())
                    .or_default();
                for a in &child.attrs {
                    entry.insert(a.name.clone(), a.value.clone());
                }
            }
        }
        Ok(())
    }

    pub(super) fn class_of(&self, el: &Element, inherited: usize) -> Result<usize, ModelError> {
        match el.attr("class") {
            Some(name) => self
                .names
                .get(name)
                .copied()
                .ok_or_else(|| ModelError::UnknownName {
                    location: el.loc(Some("class")),
                    kind: "default class",
                    name: name.to_string(),
                }),
            None => Ok(inherited),
        }
    }

    /// The value of `attr` of `tag` in `class` or its ancestors (also looked up under
    /// `fallback_tag` at each level, for the actuator shortcuts sharing `general`'s).
    pub(super) fn lookup(
        &self,
        class: usize,
        tag: &str,
        fallback_tag: Option<&str>,
        attr: &str,
    ) -> Option<&str> {
        let mut c = Some(class);
        while let Some(i) = c {
            let cls = &self.classes[i];
            for t in std::iter::once(tag).chain(fallback_tag) {
                if let Some(v) = cls.elements.get(t).and_then(|e| e.get(attr)) {
                    return Some(v);
                }
            }
            c = cls.parent;
        }
        None
    }
}

/// An element with its default class: attribute look-ups fall back to the class chain.
pub(super) struct Resolved<'a> {
    pub(super) el: &'a Element,
    pub(super) defaults: &'a Defaults,
    pub(super) class: usize,
    pub(super) tag: &'a str,
    pub(super) fallback_tag: Option<&'a str>,
}

impl<'a> Resolved<'a> {
    pub(super) fn get(&self, attr: &str) -> Option<&'a str> {
        self.el.attr(attr).or_else(|| {
            self.defaults
                .lookup(self.class, self.tag, self.fallback_tag, attr)
        })
    }

    pub(super) fn nums(&self, attr: &str) -> Result<Option<Vec<f64>>, ModelError> {
        self.get(attr)
            .map(|v| numbers(self.el, attr, v))
            .transpose()
    }

    pub(super) fn vec_n(&self, attr: &str, n: usize) -> Result<Option<Vec<f64>>, ModelError> {
        match self.nums(attr)? {
            Some(v) if v.len() != n => Err(self
                .el
                .error(Some(attr), format!("expected {n} numbers, got {}", v.len()))),
            other => Ok(other),
        }
    }

    pub(super) fn vec3(&self, attr: &str) -> Result<Option<Vector3<f64>>, ModelError> {
        Ok(self.vec_n(attr, 3)?.map(|v| Vector3::new(v[0], v[1], v[2])))
    }

    pub(super) fn num(&self, attr: &str) -> Result<Option<f64>, ModelError> {
        Ok(self.vec_n(attr, 1)?.map(|v| v[0]))
    }

    pub(super) fn int(&self, attr: &str) -> Result<Option<i64>, ModelError> {
        self.get(attr)
            .map(|v| {
                v.trim().parse::<i64>().map_err(|_| {
                    self.el
                        .error(Some(attr), format!("`{v}` is not an integer"))
                })
            })
            .transpose()
    }

    pub(super) fn keyword(
        &self,
        attr: &str,
        allowed: &[&str],
    ) -> Result<Option<&'a str>, ModelError> {
        match self.get(attr) {
            Some(v) if !allowed.contains(&v) => Err(self.el.error(
                Some(attr),
                format!("`{v}` is not one of {}", allowed.join(", ")),
            )),
            other => Ok(other),
        }
    }

    /// MuJoCo's `limited`-style attribute: true, false, or auto (decided by `has_range`).
    pub(super) fn limited(
        &self,
        attr: &str,
        has_range: bool,
        autolimits: bool,
    ) -> Result<bool, ModelError> {
        Ok(match self.keyword(attr, &["true", "false", "auto"])? {
            Some("true") => true,
            Some("false") => false,
            Some(_) => {
                if !autolimits {
                    return Err(self
                        .el
                        .error(Some(attr), "`auto` needs <compiler autolimits=\"true\">"));
                }
                has_range
            }
            None => autolimits && has_range,
        })
    }
}

/// The numbers of attribute `attr` (whitespace-separated).
pub(super) fn numbers(el: &Element, attr: &str, value: &str) -> Result<Vec<f64>, ModelError> {
    value
        .split_whitespace()
        .map(|t| {
            let x: f64 = t.parse().map_err(|_| {
                el.error(
                    Some(attr),
                    format!("`{t}` is not a number (in \"{value}\")"),
                )
            })?;
            if x.is_finite() {
                Ok(x)
            } else {
                Err(ModelError::NonFinite {
                    location: el.loc(Some(attr)),
                    value: x,
                })
            }
        })
        .collect()
}
