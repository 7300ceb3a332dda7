//! Reading URDF text into `urdf_rs`'s types, element by element with a position-tracking XML
//! parser (`roxmltree`), accepting what urdfdom (the ROS reference parser, which Pinocchio
//! uses) accepts:
//! - elements are found by name wherever they stand among their siblings (top-level
//!   `<material>` definitions between links, `<inertial>` after `<visual>`, …); where urdfdom
//!   reads only the first (`<inertial>`, `<origin>`, `<geometry>`, `<limit>`, …), so does this
//!   reader;
//! - elements urdfdom does not read are skipped: `<gazebo>`, `<transmission>`,
//!   `<ros2_control>`, comments, elements in another XML namespace (`xacro:`), unknown
//!   elements and attributes. Prefixes used without a declaration (TinyXML, urdfdom's XML
//!   parser, does not check namespaces) are declared before parsing;
//! - every number urdfdom reads is checked here, and a malformed one is a
//!   [`ModelError::Urdf`] naming the file, the line of the attribute, the element and the
//!   attribute, with a hint where the text is an unexpanded xacro `$(…)` or `${…}`; so are a
//!   missing required element or attribute and an unknown joint type or geometry;
//! - where urdfdom only logs (a malformed material colour, a `<texture>` without a file),
//!   the material is kept without it: materials are drawn, never simulated;
//! - the URDF version of `<robot version>` selects the rules of `urdf_rs` for versions 1.1
//!   (`quat_xyzw` in `<origin>`) and 1.2 (omitted `<limit>` bounds are infinite; negative
//!   efforts or velocities, upper < lower and non-positive shape dimensions are errors);
//!   version 1.0 leaves omitted limit values at 0, as urdfdom does.
//!
//! `<gazebo>` blocks that set contact friction or stiffness (`mu1`, `mu2`, `kp`, `kd`) get
//! one warning: those values do not reach the model.

use std::borrow::Cow;
use std::collections::HashMap;

use nalgebra::{Quaternion, UnitQuaternion};
use roxmltree::Node;

use crate::error::{Location, ModelError};

/// A URDF document read into `urdf_rs`'s types, with the lines of its links and joints and
/// the warnings of the reading.
pub(super) struct UrdfDocument {
    /// The robot.
    pub robot: urdf_rs::Robot,
    /// Where its links and joints are written.
    pub lines: ElementLines,
    /// What the reading left out that matters to the model.
    pub warnings: Vec<String>,
}

/// The 1-based line of the first `<link>` and `<joint>` element of each name.
#[derive(Debug, Default)]
pub(super) struct ElementLines {
    links: HashMap<String, usize>,
    joints: HashMap<String, usize>,
}

impl ElementLines {
    /// The line of the first `<tag name="name">` (`tag` is `link` or `joint`).
    pub fn line(&self, tag: &str, name: &str) -> Option<usize> {
        match tag {
            "link" => self.links.get(name).copied(),
            "joint" => self.joints.get(name).copied(),
            _ => None,
        }
    }
}

/// Reads URDF text (from `file`, named in errors).
pub(super) fn read(src: &str, file: Option<&str>) -> Result<UrdfDocument, ModelError> {
    let text = with_declared_prefixes(src, file)?;
    let doc = parse_xml(&text, file)?;
    let root = doc.root_element();
    let line_starts = crate::io::spans::line_starts(&text);
    let mut reader = Reader {
        doc: std::marker::PhantomData,
        line_starts: &line_starts,
        file,
        namespace: root.tag_name().namespace(),
        version: (1, 0),
    };
    if root.tag_name().name() != "robot" {
        return Err(reader.error(
            root,
            None,
            "robot",
            format_args!("the root element must be <robot>"),
        ));
    }
    reader.version = urdf_version(root.attribute("version"));
    reader.robot(root)
}

/// A [`ModelError::Urdf`] for text that is not well-formed XML, at the line of the error.
fn xml_error(file: Option<&str>, e: &roxmltree::Error) -> ModelError {
    ModelError::Urdf {
        location: Location {
            file: file.map(str::to_string),
            line: Some(e.pos().row as usize),
            field: "robot".into(),
        },
        message: format!("malformed XML: {e}"),
    }
}

/// Parses the XML of a URDF document (a DTD allowed, as TinyXML allows it).
fn parse_xml<'i>(text: &'i str, file: Option<&str>) -> Result<roxmltree::Document<'i>, ModelError> {
    let options = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..roxmltree::ParsingOptions::default()
    };
    roxmltree::Document::parse_with_options(text, options).map_err(|e| xml_error(file, &e))
}

/// `src` with a declaration on the root `<robot` start tag for every namespace prefix it
/// uses without declaring it (`<xacro:property>` in a file that lost its `xmlns:xacro`):
/// TinyXML reads such files, `roxmltree` refuses them. The declarations go on the line of
/// the start tag, so every line number stays.
fn with_declared_prefixes<'s>(
    src: &'s str,
    file: Option<&str>,
) -> Result<Cow<'s, str>, ModelError> {
    let mut text = Cow::Borrowed(src);
    let mut declared: Vec<String> = Vec::new();
    loop {
        let options = roxmltree::ParsingOptions {
            allow_dtd: true,
            ..roxmltree::ParsingOptions::default()
        };
        let prefix = match roxmltree::Document::parse_with_options(&text, options) {
            Err(roxmltree::Error::UnknownNamespace(prefix, _)) => prefix,
            // Other errors are reported by the parse that follows.
            _ => return Ok(text),
        };
        let Some(at) = robot_start_tag_end(&text) else {
            return Ok(text);
        };
        if declared.contains(&prefix) {
            return Err(ModelError::Urdf {
                location: Location {
                    file: file.map(str::to_string),
                    line: None,
                    field: "robot".into(),
                },
                message: format!("namespace prefix `{prefix}` cannot be declared"),
            });
        }
        let mut owned = text.into_owned();
        owned.insert_str(at, &format!(" xmlns:{prefix}=\"urn:undeclared:{prefix}\""));
        declared.push(prefix);
        text = Cow::Owned(owned);
    }
}

/// The byte offset just after `<robot` in the root start tag, where attributes may go.
fn robot_start_tag_end(text: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(pos) = text[from..].find("<robot") {
        let end = from + pos + "<robot".len();
        if text[end..].starts_with([' ', '\t', '\r', '\n', '>', '/']) {
            return Some(end);
        }
        from = end;
    }
    None
}

/// `major.minor` of `<robot version>`; missing or malformed is 1.0 (as urdfdom and
/// `urdf_rs` read it).
fn urdf_version(attr: Option<&str>) -> (u32, u32) {
    attr.and_then(|v| {
        let (major, minor) = v.trim().split_once('.')?;
        Some((major.parse().ok()?, minor.parse().ok()?))
    })
    .unwrap_or((1, 0))
}

/// The hint added to a malformed number that is an unexpanded xacro argument or expression.
fn xacro_hint(value: &str) -> &'static str {
    if value.contains("$(") {
        " (an unexpanded xacro argument? Run xacro on the file first)"
    } else if value.contains("${") {
        " (an unexpanded xacro expression? Run xacro on the file first)"
    } else {
        ""
    }
}

/// Parses one number as urdfdom does, surrounding blanks allowed; NaN is refused.
fn parse_number(token: &str) -> Option<f64> {
    token.trim().parse::<f64>().ok().filter(|v| !v.is_nan())
}

/// The roll, pitch and yaw of the quaternion (x, y, z, w) (normalized; zero is the identity,
/// as `urdf_rs` reads it).
fn rpy_of_quaternion([x, y, z, w]: [f64; 4]) -> [f64; 3] {
    let q = Quaternion::new(w, x, y, z);
    if q.norm() == 0.0 {
        return [0.0; 3];
    }
    let (roll, pitch, yaw) = UnitQuaternion::from_quaternion(q).euler_angles();
    [roll, pitch, yaw]
}

/// Reads the elements of one parsed document.
struct Reader<'a, 'i> {
    /// The document read (its nodes are `Node<'a, 'i>`).
    doc: std::marker::PhantomData<&'a roxmltree::Document<'i>>,
    /// The byte offsets where the document's lines start (a line is found by binary search:
    /// `roxmltree`'s `text_pos_at` scans the text from its start at every call).
    line_starts: &'a [usize],
    file: Option<&'a str>,
    /// The namespace of `<robot>` (a default `xmlns`, else none): URDF elements are in it.
    namespace: Option<&'a str>,
    /// The URDF version, (major, minor).
    version: (u32, u32),
}

impl<'a, 'i> Reader<'a, 'i> {
    /// The 1-based line of byte `pos`.
    fn line(&self, pos: usize) -> usize {
        crate::io::spans::offset_to_line(self.line_starts, pos)
    }

    /// Whether `n` is a URDF element (not text, a comment or an element of another
    /// namespace).
    fn is_urdf(&self, n: &Node<'a, 'i>) -> bool {
        n.is_element() && n.tag_name().namespace() == self.namespace
    }

    /// The URDF children of `n` called `tag`.
    fn children<'t>(
        &self,
        n: Node<'a, 'i>,
        tag: &'t str,
    ) -> impl Iterator<Item = Node<'a, 'i>> + use<'_, 'a, 'i, 't> {
        n.children()
            .filter(move |c| self.is_urdf(c) && c.tag_name().name() == tag)
    }

    /// The first URDF child of `n` called `tag` (urdfdom reads only that one).
    fn child(&self, n: Node<'a, 'i>, tag: &str) -> Option<Node<'a, 'i>> {
        self.children(n, tag).next()
    }

    /// A [`ModelError::Urdf`] at element `n` (or at its attribute `attr`, on that
    /// attribute's line): `field` is the element's dotted path, `attr` is appended.
    fn error(
        &self,
        n: Node<'a, 'i>,
        attr: Option<&str>,
        field: &str,
        message: std::fmt::Arguments<'_>,
    ) -> ModelError {
        let tag = n.tag_name().name();
        let (line, what, field) = match attr {
            Some(a) => (
                n.attribute_node(a)
                    .map_or(n.range().start, |x| x.range_value().start),
                format!("<{tag}> attribute `{a}`"),
                format!("{field}.{a}"),
            ),
            None => (n.range().start, format!("<{tag}>"), field.to_string()),
        };
        ModelError::Urdf {
            location: Location {
                file: self.file.map(str::to_string),
                line: Some(self.line(line)),
                field,
            },
            message: format!("{what}: {message}"),
        }
    }

    /// The required child `tag` of `n`.
    fn required_child(
        &self,
        n: Node<'a, 'i>,
        tag: &str,
        field: &str,
    ) -> Result<Node<'a, 'i>, ModelError> {
        self.child(n, tag)
            .ok_or_else(|| self.error(n, None, field, format_args!("missing element <{tag}>")))
    }

    /// The required attribute `attr` of `n`.
    fn required_text(
        &self,
        n: Node<'a, 'i>,
        attr: &str,
        field: &str,
    ) -> Result<&'a str, ModelError> {
        n.attribute(attr)
            .ok_or_else(|| self.error(n, None, field, format_args!("missing attribute `{attr}`")))
    }

    /// The number in attribute `attr` of `n`, if given.
    fn number(&self, n: Node<'a, 'i>, attr: &str, field: &str) -> Result<Option<f64>, ModelError> {
        let Some(value) = n.attribute(attr) else {
            return Ok(None);
        };
        parse_number(value).map(Some).ok_or_else(|| {
            self.error(
                n,
                Some(attr),
                field,
                format_args!("invalid number `{value}`{}", xacro_hint(value)),
            )
        })
    }

    /// The number in the required attribute `attr` of `n`.
    fn required_number(&self, n: Node<'a, 'i>, attr: &str, field: &str) -> Result<f64, ModelError> {
        self.required_text(n, attr, field)?;
        self.number(n, attr, field).map(|v| v.unwrap_or_default())
    }

    /// The `N` blank-separated numbers of attribute `attr` of `n`, if given.
    fn numbers<const N: usize>(
        &self,
        n: Node<'a, 'i>,
        attr: &str,
        field: &str,
    ) -> Result<Option<[f64; N]>, ModelError> {
        let Some(value) = n.attribute(attr) else {
            return Ok(None);
        };
        let mut out = [0.0; N];
        let mut count = 0;
        for token in value.split_whitespace() {
            let Some(v) = parse_number(token) else {
                return Err(self.error(
                    n,
                    Some(attr),
                    field,
                    format_args!("invalid number `{token}` in `{value}`{}", xacro_hint(value)),
                ));
            };
            if count < N {
                out[count] = v;
            }
            count += 1;
        }
        if count != N {
            return Err(self.error(
                n,
                Some(attr),
                field,
                format_args!("expected {N} numbers, found {count} in `{value}`"),
            ));
        }
        Ok(Some(out))
    }

    /// The required `N` numbers of attribute `attr` of `n`.
    fn required_numbers<const N: usize>(
        &self,
        n: Node<'a, 'i>,
        attr: &str,
        field: &str,
    ) -> Result<[f64; N], ModelError> {
        self.required_text(n, attr, field)?;
        self.numbers::<N>(n, attr, field)
            .map(|v| v.unwrap_or([0.0; N]))
    }

    /// The `name` of element `n`, the `index`-th of its kind (its field `kind[index]`
    /// where it has none).
    fn name(&self, n: Node<'a, 'i>, kind: &str, index: usize) -> Result<&'a str, ModelError> {
        self.required_text(n, "name", &format!("{kind}[{index}]"))
    }

    /// The robot of the root element `root`.
    fn robot(&self, root: Node<'a, 'i>) -> Result<UrdfDocument, ModelError> {
        let mut robot = urdf_rs::Robot {
            name: root.attribute("name").unwrap_or_default().to_string(),
            version: root.attribute("version").map(str::to_string),
            links: Vec::new(),
            joints: Vec::new(),
            materials: Vec::new(),
        };
        let mut lines = ElementLines::default();
        let mut gazebo_contacts = Vec::new();
        for n in root.children().filter(|c| self.is_urdf(c)) {
            let line = self.line(n.range().start);
            match n.tag_name().name() {
                "link" => {
                    let link = self.link(n, robot.links.len())?;
                    lines.links.entry(link.name.clone()).or_insert(line);
                    robot.links.push(link);
                }
                "joint" => {
                    let joint = self.joint(n, robot.joints.len())?;
                    lines.joints.entry(joint.name.clone()).or_insert(line);
                    robot.joints.push(joint);
                }
                "material" => {
                    let name = n.attribute("name").unwrap_or_default();
                    let material = self.material(n);
                    if !robot.materials.iter().any(|m| m.name == name) {
                        robot.materials.push(material);
                    }
                }
                "gazebo" if sets_contact_parameters(n) => {
                    gazebo_contacts.push(n.attribute("reference").unwrap_or("the robot"));
                }
                _ => {}
            }
        }
        let mut warnings = Vec::new();
        if !gazebo_contacts.is_empty() {
            warnings.push(format!(
                "<gazebo> contact parameters (mu1, mu2, kp, kd) are not read (for {}): the \
                 colliders get the default material, or the `material` of a model file's \
                 [[robots]] entry",
                gazebo_contacts.join(", ")
            ));
        }
        Ok(UrdfDocument {
            robot,
            lines,
            warnings,
        })
    }

    /// The `index`-th `<link>`.
    fn link(&self, n: Node<'a, 'i>, index: usize) -> Result<urdf_rs::Link, ModelError> {
        let name = self.name(n, "links", index)?;
        let field = format!("links.{name}");
        let visual = self
            .children(n, "visual")
            .enumerate()
            .map(|(k, v)| self.visual(v, &format!("{field}.visual[{k}]")))
            .collect::<Result<_, _>>()?;
        let collision = self
            .children(n, "collision")
            .enumerate()
            .map(|(k, c)| self.collision(c, &format!("{field}.collision[{k}]")))
            .collect::<Result<_, _>>()?;
        Ok(urdf_rs::Link {
            name: name.to_string(),
            inertial: self.inertial(n, &field)?,
            visual,
            collision,
        })
    }

    /// The `<origin>` of `n` (identity when absent).
    fn origin(&self, n: Node<'a, 'i>, field: &str) -> Result<urdf_rs::Pose, ModelError> {
        let Some(o) = self.child(n, "origin") else {
            return Ok(urdf_rs::Pose::default());
        };
        let field = format!("{field}.origin");
        let xyz = self.numbers::<3>(o, "xyz", &field)?.unwrap_or_default();
        let mut rpy = self.numbers::<3>(o, "rpy", &field)?.unwrap_or_default();
        if self.version >= (1, 1) {
            if let Some(q) = self.numbers::<4>(o, "quat_xyzw", &field)? {
                if o.has_attribute("rpy") {
                    return Err(self.error(
                        o,
                        Some("quat_xyzw"),
                        &field,
                        format_args!("give either `rpy` or `quat_xyzw`, not both"),
                    ));
                }
                rpy = rpy_of_quaternion(q);
            }
        }
        Ok(urdf_rs::Pose {
            xyz: urdf_rs::Vec3(xyz),
            rpy: urdf_rs::Vec3(rpy),
        })
    }

    /// The `<inertial>` of link `n` (no mass when absent).
    fn inertial(&self, n: Node<'a, 'i>, field: &str) -> Result<urdf_rs::Inertial, ModelError> {
        let Some(i) = self.child(n, "inertial") else {
            return Ok(urdf_rs::Inertial::default());
        };
        let field = format!("{field}.inertial");
        let mass = self.required_child(i, "mass", &field)?;
        let inertia = self.required_child(i, "inertia", &field)?;
        let inertia_field = format!("{field}.inertia");
        let entry = |attr: &str| self.required_number(inertia, attr, &inertia_field);
        Ok(urdf_rs::Inertial {
            origin: self.origin(i, &field)?,
            mass: urdf_rs::Mass {
                value: self.required_number(mass, "value", &format!("{field}.mass"))?,
            },
            inertia: urdf_rs::Inertia {
                ixx: entry("ixx")?,
                ixy: entry("ixy")?,
                ixz: entry("ixz")?,
                iyy: entry("iyy")?,
                iyz: entry("iyz")?,
                izz: entry("izz")?,
            },
        })
    }

    /// A `<visual>`.
    fn visual(&self, n: Node<'a, 'i>, field: &str) -> Result<urdf_rs::Visual, ModelError> {
        Ok(urdf_rs::Visual {
            name: n.attribute("name").map(str::to_string),
            origin: self.origin(n, field)?,
            geometry: self.geometry(n, field)?,
            material: self.child(n, "material").map(|m| self.material(m)),
        })
    }

    /// A `<collision>`.
    fn collision(&self, n: Node<'a, 'i>, field: &str) -> Result<urdf_rs::Collision, ModelError> {
        Ok(urdf_rs::Collision {
            name: n.attribute("name").map(str::to_string),
            origin: self.origin(n, field)?,
            geometry: self.geometry(n, field)?,
        })
    }

    /// The shape of the `<geometry>` of `n`: its first element.
    fn geometry(&self, n: Node<'a, 'i>, field: &str) -> Result<urdf_rs::Geometry, ModelError> {
        let g = self.required_child(n, "geometry", field)?;
        let field = format!("{field}.geometry");
        let shape = g.children().find(|c| self.is_urdf(c)).ok_or_else(|| {
            self.error(
                g,
                None,
                &field,
                format_args!("no shape (sphere, box, cylinder, capsule or mesh)"),
            )
        })?;
        let tag = shape.tag_name().name();
        let field = format!("{field}.{tag}");
        let size = |attr: &str| -> Result<f64, ModelError> {
            let v = self.required_number(shape, attr, &field)?;
            self.check_dimension(shape, attr, &field, &[v])?;
            Ok(v)
        };
        Ok(match tag {
            "sphere" => urdf_rs::Geometry::Sphere {
                radius: size("radius")?,
            },
            "box" => {
                let v = self.required_numbers::<3>(shape, "size", &field)?;
                self.check_dimension(shape, "size", &field, &v)?;
                urdf_rs::Geometry::Box {
                    size: urdf_rs::Vec3(v),
                }
            }
            "cylinder" => urdf_rs::Geometry::Cylinder {
                radius: size("radius")?,
                length: size("length")?,
            },
            "capsule" => urdf_rs::Geometry::Capsule {
                radius: size("radius")?,
                length: size("length")?,
            },
            "mesh" => urdf_rs::Geometry::Mesh {
                filename: self.required_text(shape, "filename", &field)?.to_string(),
                scale: self
                    .numbers::<3>(shape, "scale", &field)?
                    .map(urdf_rs::Vec3),
            },
            other => {
                return Err(self.error(
                    shape,
                    None,
                    &field,
                    format_args!(
                        "unknown geometry `{other}` (expected sphere, box, cylinder, capsule \
                         or mesh)"
                    ),
                ))
            }
        })
    }

    /// From URDF 1.2 on, shape dimensions must be positive and finite (earlier versions
    /// leave them to the model's validation).
    fn check_dimension(
        &self,
        n: Node<'a, 'i>,
        attr: &str,
        field: &str,
        values: &[f64],
    ) -> Result<(), ModelError> {
        if self.version >= (1, 2) && values.iter().any(|v| !(v.is_finite() && *v > 0.0)) {
            let value = n.attribute(attr).unwrap_or_default();
            return Err(self.error(
                n,
                Some(attr),
                field,
                format_args!("must be positive and finite (URDF 1.2), got `{value}`"),
            ));
        }
        Ok(())
    }

    /// A `<material>` (a definition or a reference by name). Its colour and texture are
    /// optional and a malformed colour is dropped, as urdfdom only logs it.
    fn material(&self, n: Node<'a, 'i>) -> urdf_rs::Material {
        let color = self
            .child(n, "color")
            .and_then(|c| c.attribute("rgba"))
            .and_then(|rgba| {
                let v: Vec<f64> = rgba.split_whitespace().map_while(parse_number).collect();
                <[f64; 4]>::try_from(v).ok()
            })
            .map(|rgba| urdf_rs::Color {
                rgba: urdf_rs::Vec4(rgba),
            });
        let texture = self
            .child(n, "texture")
            .and_then(|t| t.attribute("filename"))
            .map(|f| urdf_rs::Texture {
                filename: f.to_string(),
            });
        urdf_rs::Material {
            name: n.attribute("name").unwrap_or_default().to_string(),
            color,
            texture,
        }
    }

    /// The `index`-th `<joint>`.
    fn joint(&self, n: Node<'a, 'i>, index: usize) -> Result<urdf_rs::Joint, ModelError> {
        use urdf_rs::JointType as T;
        let name = self.name(n, "joints", index)?;
        let field = format!("joints.{name}");
        let kind = self.required_text(n, "type", &field)?;
        let joint_type = match kind.trim() {
            "revolute" => T::Revolute,
            "continuous" => T::Continuous,
            "prismatic" => T::Prismatic,
            "fixed" => T::Fixed,
            "floating" => T::Floating,
            "planar" => T::Planar,
            "spherical" => T::Spherical,
            other => {
                return Err(self.error(
                    n,
                    Some("type"),
                    &field,
                    format_args!(
                        "unknown joint type `{other}` (expected revolute, continuous, \
                         prismatic, fixed, floating or planar){}",
                        xacro_hint(other)
                    ),
                ))
            }
        };
        let link_of = |tag: &str| -> Result<urdf_rs::LinkName, ModelError> {
            let e = self.required_child(n, tag, &field)?;
            let link = self.required_text(e, "link", &format!("{field}.{tag}"))?;
            Ok(urdf_rs::LinkName {
                link: link.to_string(),
            })
        };
        let axis = match self.child(n, "axis") {
            Some(a) => urdf_rs::Axis {
                xyz: urdf_rs::Vec3(
                    self.numbers::<3>(a, "xyz", &format!("{field}.axis"))?
                        .unwrap_or([1.0, 0.0, 0.0]),
                ),
            },
            None => urdf_rs::Axis::default(),
        };
        Ok(urdf_rs::Joint {
            name: name.to_string(),
            joint_type,
            origin: self.origin(n, &field)?,
            parent: link_of("parent")?,
            child: link_of("child")?,
            axis,
            limit: self.limit(n, &field)?,
            calibration: self.calibration(n, &field)?,
            dynamics: self.dynamics(n, &field)?,
            mimic: self.mimic(n, &field)?,
            safety_controller: self.safety_controller(n, &field)?,
        })
    }

    /// The `<limit>` of joint `n`: omitted values are 0 before URDF 1.2 (as urdfdom reads
    /// them), unlimited from 1.2 on (where negative efforts, velocities and accelerations
    /// and upper < lower are errors).
    fn limit(&self, n: Node<'a, 'i>, field: &str) -> Result<urdf_rs::JointLimit, ModelError> {
        let Some(l) = self.child(n, "limit") else {
            return Ok(urdf_rs::JointLimit::default());
        };
        let field = format!("{field}.limit");
        let get = |attr: &str| self.number(l, attr, &field);
        let (lower, upper, effort, velocity) = (
            get("lower")?,
            get("upper")?,
            get("effort")?,
            get("velocity")?,
        );
        if self.version < (1, 2) {
            return Ok(urdf_rs::JointLimit {
                lower: lower.unwrap_or(0.0),
                upper: upper.unwrap_or(0.0),
                effort: effort.unwrap_or(0.0),
                velocity: velocity.unwrap_or(0.0),
                ..urdf_rs::JointLimit::default()
            });
        }
        let (acceleration, deceleration, jerk) =
            (get("acceleration")?, get("deceleration")?, get("jerk")?);
        if let (Some(lo), Some(up)) = (lower, upper) {
            if up < lo {
                return Err(self.error(
                    l,
                    Some("upper"),
                    &field,
                    format_args!("{up} is below `lower` = {lo}"),
                ));
            }
        }
        for (attr, value) in [
            ("effort", effort),
            ("velocity", velocity),
            ("acceleration", acceleration),
            ("deceleration", deceleration),
            ("jerk", jerk),
        ] {
            if value.is_some_and(|v| v < 0.0) {
                return Err(self.error(
                    l,
                    Some(attr),
                    &field,
                    format_args!("must not be negative (URDF 1.2)"),
                ));
            }
        }
        let acceleration = acceleration.unwrap_or(f64::INFINITY);
        Ok(urdf_rs::JointLimit {
            lower: lower.unwrap_or(f64::NEG_INFINITY),
            upper: upper.unwrap_or(f64::INFINITY),
            effort: effort.unwrap_or(f64::INFINITY),
            velocity: velocity.unwrap_or(f64::INFINITY),
            acceleration,
            deceleration: deceleration.unwrap_or(acceleration),
            jerk: jerk.unwrap_or(f64::INFINITY),
        })
    }

    /// The `<dynamics>` of joint `n` (damping and friction, 0 where omitted).
    fn dynamics(
        &self,
        n: Node<'a, 'i>,
        field: &str,
    ) -> Result<Option<urdf_rs::Dynamics>, ModelError> {
        let Some(d) = self.child(n, "dynamics") else {
            return Ok(None);
        };
        let field = format!("{field}.dynamics");
        Ok(Some(urdf_rs::Dynamics {
            damping: self.number(d, "damping", &field)?.unwrap_or(0.0),
            friction: self.number(d, "friction", &field)?.unwrap_or(0.0),
        }))
    }

    /// The `<mimic>` of joint `n` (read to be reported: the coupling is not enforced).
    fn mimic(&self, n: Node<'a, 'i>, field: &str) -> Result<Option<urdf_rs::Mimic>, ModelError> {
        let Some(m) = self.child(n, "mimic") else {
            return Ok(None);
        };
        let field = format!("{field}.mimic");
        Ok(Some(urdf_rs::Mimic {
            joint: m.attribute("joint").unwrap_or_default().to_string(),
            multiplier: self.number(m, "multiplier", &field)?,
            offset: self.number(m, "offset", &field)?,
        }))
    }

    /// The `<calibration>` of joint `n` (not used by the model; its numbers are checked as
    /// urdfdom checks them).
    fn calibration(
        &self,
        n: Node<'a, 'i>,
        field: &str,
    ) -> Result<Option<urdf_rs::Calibration>, ModelError> {
        let Some(c) = self.child(n, "calibration") else {
            return Ok(None);
        };
        let field = format!("{field}.calibration");
        Ok(Some(urdf_rs::Calibration {
            rising: self.number(c, "rising", &field)?,
            falling: self.number(c, "falling", &field)?,
        }))
    }

    /// The `<safety_controller>` of joint `n` (not used by the model: a controller's soft
    /// limits; its numbers are checked as urdfdom checks them).
    fn safety_controller(
        &self,
        n: Node<'a, 'i>,
        field: &str,
    ) -> Result<Option<urdf_rs::SafetyController>, ModelError> {
        let Some(s) = self.child(n, "safety_controller") else {
            return Ok(None);
        };
        let field = format!("{field}.safety_controller");
        let get = |attr: &str| -> Result<f64, ModelError> {
            Ok(self.number(s, attr, &field)?.unwrap_or(0.0))
        };
        Ok(Some(urdf_rs::SafetyController {
            soft_lower_limit: get("soft_lower_limit")?,
            soft_upper_limit: get("soft_upper_limit")?,
            k_position: get("k_position")?,
            k_velocity: get("k_velocity")?,
        }))
    }
}

/// Whether a `<gazebo>` block sets contact friction or stiffness.
fn sets_contact_parameters(n: Node<'_, '_>) -> bool {
    n.descendants()
        .any(|d| d.is_element() && matches!(d.tag_name().name(), "mu1" | "mu2" | "kp" | "kd"))
}
