//! MJCF element tree → an intermediate description ([`MjModel`]): `<compiler>` settings
//! applied (angle units, Euler sequence, directories, automatic limits), default classes
//! resolved, orientations turned into quaternions, `fromto` turned into pose and size, mesh
//! assets read. Elements that are not imported are counted in [`MjModel::skipped`].

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use nalgebra::{Isometry3, Matrix3, Quaternion, Rotation3, Translation3, UnitQuaternion, Vector3};

use super::defaults::{numbers, Defaults, Resolved};
use super::xml::Element;
use crate::error::{Location, ModelError};
use crate::io::mesh::MeshData;

/// `<compiler inertiafromgeom>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InertiaFromGeom {
    /// Geoms give the mass properties of bodies without `<inertial>` (MuJoCo's default).
    Auto,
    /// Geoms always give the mass properties (`<inertial>` ignored).
    Always,
    /// Only `<inertial>` (bodies without one are massless).
    Never,
}

/// The `<compiler>` settings that matter to the import.
#[derive(Debug, Clone)]
pub(crate) struct Compiler {
    pub degree: bool,
    pub eulerseq: [u8; 3],
    pub meshdir: Option<String>,
    pub autolimits: bool,
    pub inertia_from_geom: InertiaFromGeom,
    pub inertia_group_range: (i64, i64),
    /// `settotalmass` (> 0), with where it is written.
    pub set_total_mass: Option<(f64, Src)>,
    /// `boundmass`: lower bound of every body's mass (0: none).
    pub bound_mass: f64,
    /// `boundinertia`: lower bound of every body's principal moments (0: none).
    pub bound_inertia: f64,
    /// `balanceinertia`: principal moments violating the triangle inequality set to their
    /// mean.
    pub balance_inertia: bool,
    /// `fusestatic`: bodies without joints fused into their parent (for us: only the
    /// world-welded bodies' masses leave `settotalmass`'s total, see `build`).
    pub fuse_static: bool,
    /// `strippath`: mesh file names reduced to their last component.
    pub strip_path: bool,
}

impl Default for Compiler {
    fn default() -> Self {
        Compiler {
            degree: true,
            eulerseq: *b"xyz",
            meshdir: None,
            autolimits: true,
            inertia_from_geom: InertiaFromGeom::Auto,
            inertia_group_range: (0, 5),
            set_total_mass: None,
            bound_mass: 0.0,
            bound_inertia: 0.0,
            balance_inertia: false,
            fuse_static: false,
            strip_path: false,
        }
    }
}

/// Where an intermediate item came from.
#[derive(Debug, Clone)]
pub(crate) struct Src {
    pub location: Location,
}

impl Src {
    fn of(el: &Element) -> Self {
        Src {
            location: el.loc(None),
        }
    }

    /// A [`ModelError::Mjcf`] at the element, its field extended by `attr`.
    pub fn error(&self, attr: Option<&str>, message: impl Into<String>) -> ModelError {
        let mut location = self.location.clone();
        if let Some(a) = attr {
            location.field = format!("{}.{a}", location.field);
        }
        ModelError::Mjcf {
            location,
            message: message.into(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JointType {
    Hinge,
    Slide,
    Ball,
    Free,
}

#[derive(Debug, Clone)]
pub(crate) struct MjJoint {
    pub name: Option<String>,
    pub src: Src,
    pub kind: JointType,
    /// Anchor in the body frame.
    pub pos: Vector3<f64>,
    /// Unit axis in the body frame.
    pub axis: Vector3<f64>,
    /// Limit in rad or m (hinge/slide); `None` = not limited.
    pub range: Option<(f64, f64)>,
    pub damping: f64,
    pub armature: f64,
    pub reference: f64,
    /// Spring (`stiffness`, `springref` in MuJoCo's coordinate; hinge/slide only).
    pub spring: Option<(f64, f64)>,
    /// Attributes that are read but not imported (a free or ball joint's `stiffness`,
    /// `frictionloss`, a ball joint's `range`), for the warnings.
    pub dropped: Vec<&'static str>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GeomType {
    Plane,
    Sphere,
    Capsule,
    Cylinder,
    Box,
    Ellipsoid,
    Mesh,
    /// `hfield` and `sdf`: known to MuJoCo, skipped here.
    Unsupported,
}

#[derive(Debug, Clone)]
pub(crate) struct MjGeom {
    pub name: Option<String>,
    pub src: Src,
    pub kind: GeomType,
    pub type_name: String,
    /// Pose of the geom frame in the body frame.
    pub pose: Isometry3<f64>,
    pub size: [f64; 3],
    /// Index into [`MjModel::meshes`].
    pub mesh: Option<usize>,
    pub mass: Option<f64>,
    pub density: f64,
    pub friction: f64,
    pub condim: i64,
    pub contype: u32,
    pub conaffinity: u32,
    pub group: i64,
}

/// `<inertial>`: COM, mass and inertia about the COM in body axes.
#[derive(Debug, Clone)]
pub(crate) struct MjInertial {
    pub mass: f64,
    pub com: Vector3<f64>,
    pub inertia: Matrix3<f64>,
}

#[derive(Debug, Clone)]
pub(crate) struct MjBody {
    pub name: Option<String>,
    pub src: Src,
    /// Pose in the parent body frame.
    pub pose: Isometry3<f64>,
    pub joints: Vec<MjJoint>,
    pub inertial: Option<MjInertial>,
    pub geoms: Vec<MjGeom>,
    pub children: Vec<MjBody>,
    pub mocap: bool,
}

#[derive(Debug, Clone)]
pub(crate) struct MjMesh {
    pub name: String,
    /// The path as the model names it (meshdir joined), for [`crate::geometry::MeshSource`].
    pub file: String,
    pub scale: Vector3<f64>,
    pub data: MeshData,
    /// Volume, centroid and inertia per unit mass about it, by the mesh's `inertia` mode
    /// (`None`: no positive volume).
    pub unit: Option<(f64, Vector3<f64>, nalgebra::Matrix3<f64>)>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum ActuatorType {
    Motor,
    Position { kp: f64, kv: f64 },
}

#[derive(Debug, Clone)]
pub(crate) struct MjActuator {
    pub name: Option<String>,
    pub src: Src,
    pub kind: ActuatorType,
    pub joint: String,
    pub gear: f64,
    pub ctrlrange: Option<(f64, f64)>,
    pub forcerange: Option<(f64, f64)>,
}

#[derive(Debug, Clone)]
pub(crate) struct MjExclude {
    pub src: Src,
    pub body1: String,
    pub body2: String,
}

/// The parsed model.
#[derive(Debug, Clone)]
pub(crate) struct MjModel {
    pub name: String,
    pub compiler: Compiler,
    pub gravity: Vector3<f64>,
    /// `<option><flag gravity="disable"/>`: gravity is zero whatever `gravity` says.
    pub gravity_disabled: bool,
    pub timestep: Option<f64>,
    pub world_geoms: Vec<MjGeom>,
    pub bodies: Vec<MjBody>,
    pub meshes: Vec<MjMesh>,
    pub actuators: Vec<MjActuator>,
    pub excludes: Vec<MjExclude>,
    /// Element kinds left out, with their counts.
    pub skipped: BTreeMap<String, usize>,
    pub warnings: Vec<String>,
    /// Names used by other elements to refer to a body (`body`, `body1`, `body2`,
    /// `objname`, `refname` attributes anywhere, imported or not): MuJoCo's `fusestatic`
    /// leaves such bodies alone.
    pub referenced_bodies: HashSet<String>,
}

/// The values of the attributes by which MJCF elements refer to bodies, in the whole tree.
fn body_references(el: &Element, out: &mut HashSet<String>) {
    for a in &el.attrs {
        if matches!(
            a.name.as_str(),
            "body" | "body1" | "body2" | "objname" | "refname"
        ) {
            out.insert(a.value.clone());
        }
    }
    for c in &el.children {
        body_references(c, out);
    }
}

/// MuJoCo's minimal rotation taking +z to `z` (`mjuu_z2quat`): about `z_hat × z`, a half
/// turn about x when `z` points along −z.
pub(crate) fn z_to_quat(z: &Vector3<f64>) -> UnitQuaternion<f64> {
    let z = z.normalize();
    let cross = Vector3::z().cross(&z);
    let s = cross.norm();
    let axis = if s < 1e-14 { Vector3::x() } else { cross / s };
    let angle = s.atan2(z.z);
    let (sin, cos) = (0.5 * angle).sin_cos();
    UnitQuaternion::new_normalize(Quaternion::new(
        cos,
        axis.x * sin,
        axis.y * sin,
        axis.z * sin,
    ))
}

/// The orientation of an element from `quat`, `axisangle`, `euler`, `xyaxes` or `zaxis`
/// (at most one), identity if none.
fn orientation(r: &Resolved, compiler: &Compiler) -> Result<UnitQuaternion<f64>, ModelError> {
    let el = r.el;
    let given: Vec<&str> = ["quat", "axisangle", "euler", "xyaxes", "zaxis"]
        .into_iter()
        .filter(|a| el.attr(a).is_some())
        .collect();
    if given.len() > 1 {
        return Err(el.error(
            Some(given[1]),
            format!("more than one orientation given ({})", given.join(", ")),
        ));
    }
    let angle = |x: f64| if compiler.degree { x.to_radians() } else { x };
    let zero = |attr: &str| el.error(Some(attr), "cannot be normalized (zero vector)");
    if let Some(q) = r.vec_n("quat", 4)? {
        let q = Quaternion::new(q[0], q[1], q[2], q[3]);
        if q.norm() < 1e-14 {
            return Err(ModelError::UnnormalizableQuaternion {
                location: el.loc(Some("quat")),
                norm: q.norm(),
            });
        }
        return Ok(UnitQuaternion::new_normalize(q));
    }
    if let Some(a) = r.vec_n("axisangle", 4)? {
        let axis = Vector3::new(a[0], a[1], a[2]);
        if axis.norm() < 1e-14 {
            return Err(zero("axisangle"));
        }
        return Ok(UnitQuaternion::from_axis_angle(
            &nalgebra::Unit::new_normalize(axis),
            angle(a[3]),
        ));
    }
    if let Some(e) = r.vec3("euler")? {
        let mut q = UnitQuaternion::identity();
        for (i, &c) in compiler.eulerseq.iter().enumerate() {
            let axis = match c.to_ascii_lowercase() {
                b'x' => Vector3::x_axis(),
                b'y' => Vector3::y_axis(),
                _ => Vector3::z_axis(),
            };
            let rot = UnitQuaternion::from_axis_angle(&axis, angle(e[i]));
            // Lowercase: axes moving with the frame (post-multiply); uppercase: fixed axes.
            q = if c.is_ascii_lowercase() {
                q * rot
            } else {
                rot * q
            };
        }
        return Ok(q);
    }
    if let Some(a) = r.vec_n("xyaxes", 6)? {
        let x = Vector3::new(a[0], a[1], a[2]);
        let y = Vector3::new(a[3], a[4], a[5]);
        if x.norm() < 1e-14 {
            return Err(zero("xyaxes"));
        }
        let x = x.normalize();
        let y = y - x * x.dot(&y);
        if y.norm() < 1e-14 {
            return Err(el.error(Some("xyaxes"), "the two axes are parallel"));
        }
        let y = y.normalize();
        let z = x.cross(&y);
        let m = Matrix3::from_columns(&[x, y, z]);
        return Ok(UnitQuaternion::from_rotation_matrix(
            &Rotation3::from_matrix_unchecked(m),
        ));
    }
    if let Some(z) = r.vec3("zaxis")? {
        if z.norm() < 1e-14 {
            return Err(zero("zaxis"));
        }
        return Ok(z_to_quat(&z));
    }
    Ok(UnitQuaternion::identity())
}

fn pose(r: &Resolved, compiler: &Compiler) -> Result<Isometry3<f64>, ModelError> {
    let pos = r.vec3("pos")?.unwrap_or_else(Vector3::zeros);
    Ok(Isometry3::from_parts(
        Translation3::from(pos),
        orientation(r, compiler)?,
    ))
}

fn bool_attr(el: &Element, attr: &str) -> Result<Option<bool>, ModelError> {
    match el.attr(attr) {
        None => Ok(None),
        Some("true") => Ok(Some(true)),
        Some("false") => Ok(Some(false)),
        Some(v) => Err(el.error(Some(attr), format!("`{v}` is not true or false"))),
    }
}

fn resolve<'e>(
    defaults: &'e Defaults,
    el: &'e Element,
    class: usize,
    fallback: Option<&'e str>,
) -> Resolved<'e> {
    Resolved {
        el,
        defaults,
        class,
        tag: el.tag.as_str(),
        fallback_tag: fallback,
    }
}

struct Parser<'a> {
    defaults: Defaults,
    compiler: Compiler,
    main_dir: PathBuf,
    mesh_names: HashMap<String, usize>,
    model: &'a mut MjModel,
}

/// Parses the expanded element tree.
pub(crate) fn parse(root: &Element, file: Option<&str>) -> Result<MjModel, ModelError> {
    let main_dir = file
        .and_then(|f| Path::new(f).parent())
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let mut compiler = Compiler::default();
    for el in root.children.iter().filter(|c| c.tag == "compiler") {
        read_compiler(el, &mut compiler)?;
    }
    let mut model = MjModel {
        name: root.attr("model").unwrap_or("MuJoCo Model").to_string(),
        compiler: compiler.clone(),
        gravity: Vector3::new(0.0, 0.0, -9.81),
        gravity_disabled: false,
        timestep: None,
        world_geoms: Vec::new(),
        bodies: Vec::new(),
        meshes: Vec::new(),
        actuators: Vec::new(),
        excludes: Vec::new(),
        skipped: BTreeMap::new(),
        warnings: Vec::new(),
        referenced_bodies: HashSet::new(),
    };
    body_references(root, &mut model.referenced_bodies);
    let mut p = Parser {
        defaults: Defaults::collect(root)?,
        compiler,
        main_dir,
        mesh_names: HashMap::new(),
        model: &mut model,
    };
    // Sections in MuJoCo's order: assets before the bodies that use them.
    for el in root.children.iter().filter(|c| c.tag == "option") {
        p.read_option(el)?;
    }
    for el in root.children.iter().filter(|c| c.tag == "asset") {
        p.read_assets(el)?;
    }
    for el in &root.children {
        match el.tag.as_str() {
            "compiler" | "option" | "asset" | "default" | "worldbody" | "actuator" | "contact" => {}
            "visual" | "statistic" | "size" => p.skip(&el.tag),
            other if el.children.is_empty() => p.skip(other),
            other => {
                for c in &el.children {
                    p.skip(&format!("{other}/{}", c.tag));
                }
            }
        }
    }
    for el in root.children.iter().filter(|c| c.tag == "worldbody") {
        p.read_world(el)?;
    }
    for el in root.children.iter().filter(|c| c.tag == "actuator") {
        p.read_actuators(el)?;
    }
    for el in root.children.iter().filter(|c| c.tag == "contact") {
        p.read_contact(el)?;
    }
    Ok(model)
}

/// The `<compiler>` attributes of MuJoCo (4.0's schema), each honoured or refused: those
/// with no effect on the imported model (textures, threads, diagnostics) are accepted.
const COMPILER_ATTRIBUTES: &[&str] = &[
    "angle",
    "eulerseq",
    "meshdir",
    "assetdir",
    "texturedir",
    "autolimits",
    "inertiafromgeom",
    "inertiagrouprange",
    "coordinate",
    "settotalmass",
    "boundmass",
    "boundinertia",
    "balanceinertia",
    "fusestatic",
    "strippath",
    "discardvisual",
    "usethread",
    "saveinertial",
    "fitaabb",
    "alignfree",
];

fn read_compiler(el: &Element, c: &mut Compiler) -> Result<(), ModelError> {
    if let Some(a) = el
        .attrs
        .iter()
        .find(|a| !COMPILER_ATTRIBUTES.contains(&a.name.as_str()))
    {
        return Err(el.error(
            Some(&a.name),
            format!(
                "unknown <compiler> attribute `{}` (MuJoCo's schema rejects it too)",
                a.name
            ),
        ));
    }
    let number = |attr: &str| -> Result<Option<f64>, ModelError> {
        el.attr(attr)
            .map(|v| {
                let n = numbers(el, attr, v)?;
                match n.as_slice() {
                    [x] if x.is_finite() => Ok(*x),
                    _ => Err(el.error(Some(attr), format!("`{v}` is not one finite number"))),
                }
            })
            .transpose()
    };
    match el.attr("angle") {
        None => {}
        Some("degree") => c.degree = true,
        Some("radian") => c.degree = false,
        Some(v) => return Err(el.error(Some("angle"), format!("`{v}` is not degree or radian"))),
    }
    if let Some(seq) = el.attr("eulerseq") {
        let b = seq.as_bytes();
        if b.len() != 3 || !b.iter().all(|c| b"xyzXYZ".contains(c)) {
            return Err(el.error(
                Some("eulerseq"),
                format!("`{seq}` is not three of x, y, z, X, Y, Z"),
            ));
        }
        c.eulerseq = [b[0], b[1], b[2]];
    }
    if let Some(d) = el.attr("assetdir") {
        if c.meshdir.is_none() {
            c.meshdir = Some(d.to_string());
        }
    }
    if let Some(d) = el.attr("meshdir") {
        c.meshdir = Some(d.to_string());
    }
    if let Some(b) = bool_attr(el, "autolimits")? {
        c.autolimits = b;
    }
    match el.attr("inertiafromgeom") {
        None => {}
        Some("auto") => c.inertia_from_geom = InertiaFromGeom::Auto,
        Some("true") => c.inertia_from_geom = InertiaFromGeom::Always,
        Some("false") => c.inertia_from_geom = InertiaFromGeom::Never,
        Some(v) => {
            return Err(el.error(
                Some("inertiafromgeom"),
                format!("`{v}` is not true, false or auto"),
            ))
        }
    }
    if let Some(v) = el.attr("inertiagrouprange") {
        let n = numbers(el, "inertiagrouprange", v)?;
        if n.len() != 2 || n.iter().any(|x| x.fract() != 0.0) {
            return Err(el.error(Some("inertiagrouprange"), "expected two integers"));
        }
        c.inertia_group_range = (n[0] as i64, n[1] as i64);
    }
    if let Some(v) = el.attr("coordinate") {
        if v != "local" {
            return Err(el.error(
                Some("coordinate"),
                "only local coordinates are supported (as in MuJoCo ≥ 2.3)",
            ));
        }
    }
    // MuJoCo's default −1 (and any value ≤ 0) leaves the masses alone.
    if let Some(m) = number("settotalmass")? {
        c.set_total_mass = (m > 0.0).then(|| {
            (
                m,
                Src {
                    location: el.loc(Some("settotalmass")),
                },
            )
        });
    }
    for (attr, slot) in [
        ("boundmass", &mut c.bound_mass),
        ("boundinertia", &mut c.bound_inertia),
    ] {
        if let Some(v) = number(attr)? {
            if v < 0.0 {
                return Err(el.error(Some(attr), format!("must be ≥ 0, got {v}")));
            }
            *slot = v;
        }
    }
    for (attr, slot) in [
        ("balanceinertia", &mut c.balance_inertia),
        ("fusestatic", &mut c.fuse_static),
        ("strippath", &mut c.strip_path),
    ] {
        if let Some(b) = bool_attr(el, attr)? {
            *slot = b;
        }
    }
    // Accepted, no effect on the imported model: visual geoms give no colliders already and
    // MuJoCo keeps their mass (discardvisual), threads and saved inertials are the
    // compiler's business, mesh-fitted primitives are refused at the geom (fitaabb).
    for attr in ["discardvisual", "usethread", "saveinertial", "fitaabb"] {
        bool_attr(el, attr)?;
    }
    if bool_attr(el, "alignfree")? == Some(true) {
        return Err(el.error(
            Some("alignfree"),
            "alignfree=\"true\" (free bodies' frames moved to their inertial frames) is not \
             supported: the coordinates would differ from the file's frames",
        ));
    }
    Ok(())
}

impl Parser<'_> {
    fn skip(&mut self, tag: &str) {
        *self.model.skipped.entry(tag.to_string()).or_insert(0) += 1;
    }

    fn read_option(&mut self, el: &Element) -> Result<(), ModelError> {
        let r = resolve(&self.defaults, el, 0, None);
        if let Some(g) = r.vec3("gravity")? {
            self.model.gravity = g;
        }
        if let Some(dt) = r.num("timestep")? {
            if dt <= 0.0 {
                return Err(el.error(Some("timestep"), format!("must be positive, got {dt}")));
            }
            self.model.timestep = Some(dt);
        }
        // Fluid forces (MuJoCo's inertia-box and ellipsoid models) are not modelled.
        for attr in ["density", "viscosity", "wind"] {
            if r.nums(attr)?.is_some_and(|v| v.iter().any(|x| *x != 0.0)) {
                self.model.warnings.push(format!(
                    "{}: {attr} not imported: no fluid forces act on the bodies",
                    el.loc(Some(attr))
                ));
            }
        }
        for c in &el.children {
            // `<flag gravity="disable">` turns gravity off (the dm_control suite's finger and
            // fish); the flags that switch off contacts, constraints or other forces are
            // listed as not imported.
            if c.tag == "flag" {
                match c.attr("gravity") {
                    Some("disable") => self.model.gravity_disabled = true,
                    Some("enable") | None => {}
                    Some(other) => {
                        return Err(c.error(
                            Some("gravity"),
                            format!("must be `enable` or `disable`, got `{other}`"),
                        ))
                    }
                }
                if c.attrs.iter().all(|a| a.name == "gravity") {
                    continue;
                }
            }
            self.skip(&format!("option/{}", c.tag));
        }
        Ok(())
    }

    fn read_assets(&mut self, asset: &Element) -> Result<(), ModelError> {
        for el in &asset.children {
            if el.tag != "mesh" {
                self.skip(&el.tag);
                continue;
            }
            let class = self.defaults.class_of(el, 0)?;
            let r = resolve(&self.defaults, el, class, None);
            let Some(file) = el.attr("file") else {
                return Err(el.error(
                    Some("file"),
                    "a mesh without a `file` (inline vertices, plugins) is not supported",
                ));
            };
            let name = match el.attr("name") {
                Some(n) => n.to_string(),
                None => Path::new(file)
                    .file_stem()
                    .and_then(|s| s.to_str())
                    .unwrap_or(file)
                    .to_string(),
            };
            let scale = r
                .vec3("scale")?
                .unwrap_or_else(|| Vector3::new(1.0, 1.0, 1.0));
            // strippath: only the file name, as MuJoCo's compiler does.
            let file = if self.compiler.strip_path {
                Path::new(file)
                    .file_name()
                    .and_then(|n| n.to_str())
                    .unwrap_or(file)
            } else {
                file
            };
            let relative = match &self.compiler.meshdir {
                Some(dir) if !Path::new(file).is_absolute() => Path::new(dir).join(file),
                _ => PathBuf::from(file),
            };
            let path = if relative.is_absolute() {
                relative.clone()
            } else {
                self.main_dir.join(&relative)
            };
            let field = el.field(Some("file"));
            let data = crate::io::mesh::read_mesh_file(&path, scale, &field)
                .map_err(|e| el.error(Some("file"), format!("mesh `{name}`: {e}")))?;
            if self
                .mesh_names
                .insert(name.clone(), self.model.meshes.len())
                .is_some()
            {
                return Err(ModelError::DuplicateName {
                    location: el.loc(Some("name")),
                    kind: "mesh",
                    name,
                });
            }
            let exact = super::mesh_volume::mesh_unit_properties(&data.vertices, &data.triangles);
            let hull = || {
                let (v, t) = super::mesh_volume::convex_hull(&data.vertices);
                super::mesh_volume::mesh_unit_properties(&v, &t)
            };
            let unit = match r.keyword("inertia", &["legacy", "exact", "convex", "shell"])? {
                Some("exact") => exact,
                Some("convex") => hull(),
                Some("shell") => {
                    return Err(el.error(
                        Some("inertia"),
                        format!(
                            "mesh `{name}`: inertia=\"shell\" (mass on the surface) is not \
                             supported; use exact, convex or legacy"
                        ),
                    ))
                }
                // MuJoCo's default, `legacy`, equals `exact` on a closed convex mesh; on a
                // non-convex one it sums unsigned tetrahedra and overestimates the volume.
                _ => {
                    if let (Some(e), Some(h)) = (exact, hull()) {
                        if h.0 > e.0 * (1.0 + 1e-6) {
                            self.model.warnings.push(format!(
                                "{}: mesh `{name}` is not convex: where it gives mass, MuJoCo's \
                                 default (inertia=\"legacy\") overestimates its volume; \
                                 imported with the exact mass properties of the closed \
                                 surface (write inertia=\"exact\" to make MuJoCo agree)",
                                el.loc(None)
                            ));
                        }
                    }
                    exact
                }
            };
            self.model.meshes.push(MjMesh {
                name,
                file: relative.display().to_string(),
                scale,
                data,
                unit,
            });
        }
        Ok(())
    }

    fn read_world(&mut self, world: &Element) -> Result<(), ModelError> {
        let class = match world.attr("childclass") {
            Some(_) => {
                return Err(world.error(Some("childclass"), "<worldbody> cannot have a childclass"))
            }
            None => 0,
        };
        for el in &world.children {
            match el.tag.as_str() {
                "geom" => {
                    let g = self.read_geom(el, class)?;
                    self.model.world_geoms.push(g);
                }
                "body" => {
                    let b = self.read_body(el, class, true)?;
                    self.model.bodies.push(b);
                }
                "frame" => {
                    let (mut bodies, mut geoms) = (Vec::new(), Vec::new());
                    self.read_frame(el, class, true, &mut bodies, &mut geoms)?;
                    self.model.bodies.extend(bodies);
                    self.model.world_geoms.extend(geoms);
                }
                "site" => {}
                "joint" | "freejoint" | "inertial" => {
                    return Err(el.error(None, format!("<{}> cannot be in <worldbody>", el.tag)))
                }
                other => self.skip(other),
            }
        }
        Ok(())
    }

    /// `<frame pos … childclass>`: a coordinate frame without a body of its own (MuJoCo ≥ 3.1).
    /// Its bodies and geoms are read as if written in the enclosing body (or the world), their
    /// poses composed with the frame's; frames nest.
    fn read_frame(
        &mut self,
        el: &Element,
        inherited: usize,
        top_level: bool,
        bodies: &mut Vec<MjBody>,
        geoms: &mut Vec<MjGeom>,
    ) -> Result<(), ModelError> {
        let class = self.child_class(el, inherited)?;
        let frame = pose(&resolve(&self.defaults, el, 0, None), &self.compiler)?;
        let (mut inner_bodies, mut inner_geoms) = (Vec::new(), Vec::new());
        for c in &el.children {
            match c.tag.as_str() {
                "body" => inner_bodies.push(self.read_body(c, class, top_level)?),
                "geom" => inner_geoms.push(self.read_geom(c, class)?),
                "frame" => {
                    self.read_frame(c, class, top_level, &mut inner_bodies, &mut inner_geoms)?
                }
                "site" => {}
                "joint" | "freejoint" | "inertial" => {
                    return Err(c.error(None, format!("<{}> cannot be in a <frame>", c.tag)))
                }
                other => self.skip(other),
            }
        }
        for mut b in inner_bodies {
            b.pose = frame * b.pose;
            bodies.push(b);
        }
        for mut g in inner_geoms {
            g.pose = frame * g.pose;
            geoms.push(g);
        }
        Ok(())
    }

    /// The default class `el`'s children use: its `childclass`, else `inherited`.
    fn child_class(&self, el: &Element, inherited: usize) -> Result<usize, ModelError> {
        match el.attr("childclass") {
            Some(name) => {
                self.defaults
                    .names
                    .get(name)
                    .copied()
                    .ok_or_else(|| ModelError::UnknownName {
                        location: el.loc(Some("childclass")),
                        kind: "default class",
                        name: name.to_string(),
                    })
            }
            None => Ok(inherited),
        }
    }

    fn read_body(
        &mut self,
        el: &Element,
        inherited: usize,
        top_level: bool,
    ) -> Result<MjBody, ModelError> {
        let childclass = self.child_class(el, inherited)?;
        // A body's pose is its own (bodies take no defaults).
        let r = resolve(&self.defaults, el, 0, None);
        let pose = pose(&r, &self.compiler)?;
        let mocap = bool_attr(el, "mocap")?.unwrap_or(false);
        if let Some(g) = r.num("gravcomp")?.filter(|g| *g != 0.0) {
            self.model.warnings.push(format!(
                "{}: gravcomp = {g} not imported: gravity acts on the body in full",
                el.loc(Some("gravcomp"))
            ));
        }
        let mut body = MjBody {
            name: el.attr("name").map(str::to_string),
            src: Src::of(el),
            pose,
            joints: Vec::new(),
            inertial: None,
            geoms: Vec::new(),
            children: Vec::new(),
            mocap,
        };
        for c in &el.children {
            match c.tag.as_str() {
                "joint" | "freejoint" => {
                    let j = self.read_joint(c, childclass)?;
                    if j.kind == JointType::Free && !top_level {
                        return Err(c.error(
                            None,
                            "a free joint is only allowed on a top-level body (a child of \
                             <worldbody>), as in MuJoCo",
                        ));
                    }
                    body.joints.push(j);
                }
                "geom" => body.geoms.push(self.read_geom(c, childclass)?),
                "body" => body.children.push(self.read_body(c, childclass, false)?),
                "frame" => {
                    self.read_frame(c, childclass, false, &mut body.children, &mut body.geoms)?
                }
                "inertial" => {
                    if body.inertial.is_some() {
                        return Err(c.error(None, "a body has at most one <inertial>"));
                    }
                    body.inertial = Some(self.read_inertial(c)?);
                }
                "site" => {}
                other => self.skip(other),
            }
        }
        let free = body
            .joints
            .iter()
            .filter(|j| j.kind == JointType::Free)
            .count();
        if free > 0 && body.joints.len() > 1 {
            return Err(body
                .src
                .error(None, "a body with a free joint cannot have other joints"));
        }
        Ok(body)
    }

    fn read_inertial(&mut self, el: &Element) -> Result<MjInertial, ModelError> {
        let r = resolve(&self.defaults, el, 0, None);
        let Some(pos) = r.vec3("pos")? else {
            return Err(el.error(Some("pos"), "<inertial> needs `pos`"));
        };
        let Some(mass) = r.num("mass")? else {
            return Err(el.error(Some("mass"), "<inertial> needs `mass`"));
        };
        if mass < 0.0 {
            return Err(ModelError::NonPositiveMass {
                location: el.loc(Some("mass")),
                value: mass,
            });
        }
        let rot = orientation(&r, &self.compiler)?.to_rotation_matrix();
        let local = match (r.vec3("diaginertia")?, r.vec_n("fullinertia", 6)?) {
            (Some(_), Some(_)) => {
                return Err(el.error(
                    Some("fullinertia"),
                    "give either diaginertia or fullinertia, not both",
                ))
            }
            (Some(d), None) => Matrix3::from_diagonal(&d),
            (None, Some(f)) => {
                if el.attrs.iter().any(|a| {
                    ["quat", "axisangle", "euler", "xyaxes", "zaxis"].contains(&a.name.as_str())
                }) {
                    return Err(el.error(
                        Some("fullinertia"),
                        "fullinertia cannot be combined with an orientation",
                    ));
                }
                // (ixx, iyy, izz, ixy, ixz, iyz)
                Matrix3::new(f[0], f[3], f[4], f[3], f[1], f[5], f[4], f[5], f[2])
            }
            (None, None) => {
                return Err(el.error(
                    Some("diaginertia"),
                    "<inertial> needs diaginertia or fullinertia",
                ))
            }
        };
        Ok(MjInertial {
            mass,
            com: pos,
            inertia: rot.matrix() * local * rot.matrix().transpose(),
        })
    }

    fn read_joint(&mut self, el: &Element, inherited: usize) -> Result<MjJoint, ModelError> {
        let class = self.defaults.class_of(el, inherited)?;
        let r = resolve(&self.defaults, el, class, None);
        let kind = if el.tag == "freejoint" {
            JointType::Free
        } else {
            match r.keyword("type", &["hinge", "slide", "ball", "free"])? {
                None | Some("hinge") => JointType::Hinge,
                Some("slide") => JointType::Slide,
                Some("ball") => JointType::Ball,
                Some(_) => JointType::Free,
            }
        };
        let mut dropped = Vec::new();
        if kind == JointType::Free {
            return Ok(MjJoint {
                name: el.attr("name").map(str::to_string),
                src: Src::of(el),
                kind,
                pos: Vector3::zeros(),
                axis: Vector3::z(),
                range: None,
                damping: r.num("damping")?.unwrap_or(0.0),
                armature: r.num("armature")?.unwrap_or(0.0),
                reference: 0.0,
                spring: None,
                dropped,
            });
        }
        let pos = r.vec3("pos")?.unwrap_or_else(Vector3::zeros);
        let axis = r.vec3("axis")?.unwrap_or_else(Vector3::z);
        if axis.norm() < 1e-14 {
            return Err(el.error(Some("axis"), "the axis cannot be normalized (zero vector)"));
        }
        let angular = kind == JointType::Hinge;
        let scale = |x: f64| {
            if angular && self.compiler.degree {
                x.to_radians()
            } else {
                x
            }
        };
        let range_raw = r.vec_n("range", 2)?;
        let limited = r.limited("limited", range_raw.is_some(), self.compiler.autolimits)?;
        let range = if limited {
            let rr = range_raw.unwrap_or_else(|| vec![0.0, 0.0]);
            if rr[0] >= rr[1] {
                return Err(el.error(
                    Some("range"),
                    format!(
                        "a limited joint needs range lower < upper, got [{}, {}]",
                        rr[0], rr[1]
                    ),
                ));
            }
            if kind == JointType::Ball {
                dropped.push("range");
                None
            } else {
                Some((scale(rr[0]), scale(rr[1])))
            }
        } else {
            None
        };
        if r.num("frictionloss")?.is_some_and(|x| x != 0.0) {
            dropped.push("frictionloss");
        }
        // MuJoCo's joint-level actuator force clamp and its implicit spring-damper.
        if r.nums("actuatorfrcrange")?.is_some()
            && r.keyword("actuatorfrclimited", &["true", "false", "auto"])? != Some("false")
        {
            dropped.push("actuatorfrcrange");
        }
        if r.nums("springdamper")?
            .is_some_and(|v| v.iter().any(|x| *x != 0.0))
        {
            dropped.push("springdamper");
        }
        let stiffness = r.num("stiffness")?.unwrap_or(0.0);
        let spring = if stiffness == 0.0 {
            None
        } else if kind == JointType::Ball {
            dropped.push("stiffness");
            None
        } else {
            Some((stiffness, scale(r.num("springref")?.unwrap_or(0.0))))
        };
        let damping = r.num("damping")?.unwrap_or(0.0);
        let armature = r.num("armature")?.unwrap_or(0.0);
        for (attr, v) in [
            ("damping", damping),
            ("armature", armature),
            ("stiffness", stiffness),
        ] {
            if v < 0.0 {
                return Err(el.error(Some(attr), format!("must be ≥ 0, got {v}")));
            }
        }
        Ok(MjJoint {
            name: el.attr("name").map(str::to_string),
            src: Src::of(el),
            kind,
            pos,
            axis: axis.normalize(),
            range,
            damping,
            armature,
            reference: scale(r.num("ref")?.unwrap_or(0.0)),
            spring,
            dropped,
        })
    }

    fn read_geom(&mut self, el: &Element, inherited: usize) -> Result<MjGeom, ModelError> {
        let class = self.defaults.class_of(el, inherited)?;
        let r = resolve(&self.defaults, el, class, None);
        let type_name = r.get("type").unwrap_or("sphere").to_string();
        let kind = match type_name.as_str() {
            "plane" => GeomType::Plane,
            "sphere" => GeomType::Sphere,
            "capsule" => GeomType::Capsule,
            "cylinder" => GeomType::Cylinder,
            "box" => GeomType::Box,
            "ellipsoid" => GeomType::Ellipsoid,
            "mesh" => GeomType::Mesh,
            "hfield" | "sdf" => GeomType::Unsupported,
            other => {
                return Err(el.error(
                    Some("type"),
                    format!(
                        "unknown geom type `{other}` (expected plane, sphere, capsule, \
                         cylinder, box, ellipsoid, mesh, hfield or sdf)"
                    ),
                ))
            }
        };
        if r.keyword("shellinertia", &["true", "false"])? == Some("true") {
            return Err(el.error(
                Some("shellinertia"),
                "shellinertia=\"true\" (mass on the surface) is not supported",
            ));
        }
        if kind != GeomType::Mesh && r.get("mesh").is_some() {
            return Err(el.error(
                Some("mesh"),
                format!(
                    "a {type_name} geom fitted to a mesh is not supported: give its `size` (or \
                     make it type=\"mesh\")"
                ),
            ));
        }
        let size_given = r.nums("size")?;
        let mut size = [0.0; 3];
        for (i, s) in size_given.iter().flatten().take(3).enumerate() {
            size[i] = *s;
        }
        let mut pose = pose(&r, &self.compiler)?;
        if let Some(ft) = r.vec_n("fromto", 6)? {
            let (a, b) = (
                Vector3::new(ft[0], ft[1], ft[2]),
                Vector3::new(ft[3], ft[4], ft[5]),
            );
            let half = 0.5 * (b - a).norm();
            match kind {
                GeomType::Capsule | GeomType::Cylinder => size[1] = half,
                GeomType::Box | GeomType::Ellipsoid => size[2] = half,
                _ => {
                    return Err(el.error(
                        Some("fromto"),
                        format!("fromto is only allowed on capsule, cylinder, box and ellipsoid geoms, not {type_name}"),
                    ))
                }
            }
            if half < 1e-14 {
                return Err(el.error(Some("fromto"), "the two points coincide"));
            }
            pose = Isometry3::from_parts(Translation3::from(0.5 * (a + b)), z_to_quat(&(b - a)));
        }
        let needed = match kind {
            GeomType::Sphere => 1,
            GeomType::Capsule | GeomType::Cylinder => 2,
            GeomType::Box | GeomType::Ellipsoid => 3,
            _ => 0,
        };
        if let Some(i) = (0..needed).find(|&i| size[i] <= 0.0) {
            return Err(el.error(
                Some("size"),
                format!(
                    "a {type_name} geom needs {needed} positive size value(s); size[{i}] is {}",
                    size[i]
                ),
            ));
        }
        let mesh = if kind == GeomType::Mesh {
            let Some(name) = r.get("mesh") else {
                return Err(el.error(Some("mesh"), "a mesh geom needs a `mesh` attribute"));
            };
            Some(
                *self
                    .mesh_names
                    .get(name)
                    .ok_or_else(|| ModelError::UnknownName {
                        location: el.loc(Some("mesh")),
                        kind: "mesh",
                        name: name.to_string(),
                    })?,
            )
        } else {
            None
        };
        let mass = r.num("mass")?;
        let density = r.num("density")?.unwrap_or(1000.0);
        if mass.is_some_and(|m| m < 0.0) || density < 0.0 {
            return Err(el.error(
                Some(if mass.is_some() { "mass" } else { "density" }),
                "must be ≥ 0",
            ));
        }
        let friction = r
            .nums("friction")?
            .and_then(|f| f.first().copied())
            .unwrap_or(1.0);
        if friction < 0.0 {
            return Err(ModelError::NegativeFriction {
                location: el.loc(Some("friction")),
                value: friction,
            });
        }
        let bits = |attr: &str| -> Result<u32, ModelError> {
            match r.int(attr)? {
                None => Ok(1),
                Some(v) => u32::try_from(v)
                    .map_err(|_| el.error(Some(attr), format!("{v} is not a 32-bit mask"))),
            }
        };
        Ok(MjGeom {
            name: el.attr("name").map(str::to_string),
            src: Src::of(el),
            kind,
            type_name,
            pose,
            size,
            mesh,
            mass,
            density,
            friction,
            condim: r.int("condim")?.unwrap_or(3),
            contype: bits("contype")?,
            conaffinity: bits("conaffinity")?,
            group: r.int("group")?.unwrap_or(0),
        })
    }

    fn read_actuators(&mut self, section: &Element) -> Result<(), ModelError> {
        for el in &section.children {
            let tag = el.tag.as_str();
            if tag != "motor" && tag != "position" {
                self.skip(&format!("actuator/{tag}"));
                continue;
            }
            let Some(joint) = el.attr("joint") else {
                self.skip(&format!("actuator/{tag} (not on a joint)"));
                continue;
            };
            let class = self.defaults.class_of(el, 0)?;
            let r = resolve(&self.defaults, el, class, Some("general"));
            let gear = r
                .nums("gear")?
                .and_then(|g| g.first().copied())
                .unwrap_or(1.0);
            let range = |attr: &str, limited: &str| -> Result<Option<(f64, f64)>, ModelError> {
                let v = r.vec_n(attr, 2)?;
                if !r.limited(limited, v.is_some(), self.compiler.autolimits)? {
                    return Ok(None);
                }
                let v = v.unwrap_or_else(|| vec![0.0, 0.0]);
                if v[0] >= v[1] {
                    return Err(el.error(
                        Some(attr),
                        format!(
                            "a limited range needs lower < upper, got [{}, {}]",
                            v[0], v[1]
                        ),
                    ));
                }
                Ok(Some((v[0], v[1])))
            };
            let ctrlrange = range("ctrlrange", "ctrllimited")?;
            let forcerange = range("forcerange", "forcelimited")?;
            let kind = if tag == "motor" {
                ActuatorType::Motor
            } else {
                let kp = r.num("kp")?.unwrap_or(1.0);
                let kv = r.num("kv")?.unwrap_or(0.0);
                if kp <= 0.0 || kv < 0.0 {
                    return Err(el.error(
                        Some(if kp <= 0.0 { "kp" } else { "kv" }),
                        format!("needs kp > 0 and kv ≥ 0, got kp = {kp}, kv = {kv}"),
                    ));
                }
                if r.get("dampratio").is_some() {
                    self.model.warnings.push(format!(
                        "{}: `dampratio` is not imported (use kv)",
                        el.loc(Some("dampratio"))
                    ));
                }
                ActuatorType::Position { kp, kv }
            };
            self.model.actuators.push(MjActuator {
                name: el.attr("name").map(str::to_string),
                src: Src::of(el),
                kind,
                joint: joint.to_string(),
                gear,
                ctrlrange,
                forcerange,
            });
        }
        Ok(())
    }

    fn read_contact(&mut self, section: &Element) -> Result<(), ModelError> {
        for el in &section.children {
            if el.tag != "exclude" {
                self.skip(&format!("contact/{}", el.tag));
                continue;
            }
            let (Some(b1), Some(b2)) = (el.attr("body1"), el.attr("body2")) else {
                return Err(el.error(None, "<exclude> needs body1 and body2"));
            };
            self.model.excludes.push(MjExclude {
                src: Src::of(el),
                body1: b1.to_string(),
                body2: b2.to_string(),
            });
        }
        Ok(())
    }
}
