//! MJCF (MuJoCo XML) import: [`Model::from_mjcf_str`], [`Model::from_mjcf_file`], and
//! `.xml` files in [`Model::from_file`].
//!
//! One job per file: [`xml`] reads the XML (with `roxmltree`, keeping line numbers) and
//! expands `<include>`; [`parse`] resolves `<compiler>`, `<default>` classes and
//! orientations into an intermediate tree and reads the mesh assets; [`inertia`] computes
//! geom and body mass properties; [`build`] turns the tree into a [`Model`].
//!
//! # What is imported
//! - `<mujoco model>`, `<include file>` (relative to the including file, then to the main
//!   file; a cycle is an error naming the chain of files);
//! - `<compiler angle eulerseq meshdir assetdir autolimits inertiafromgeom
//!   inertiagrouprange>` (defaults: degrees, `xyz`, autolimits on, `auto`, groups 0–5),
//!   `settotalmass`, `boundmass`, `boundinertia`, `balanceinertia` (MuJoCo's order: per body
//!   the bounds then balancing, then one factor on all bodies), `fusestatic` (for us only
//!   its effect on `settotalmass`'s total: fixed bodies are fixed-joint bodies, the same
//!   mass matrix), `strippath`; `texturedir`, `discardvisual`, `usethread`, `saveinertial`,
//!   `fitaabb` are accepted without effect on the import; `coordinate="global"`,
//!   `alignfree="true"` and attributes outside MuJoCo 4.0's schema are errors (the table in
//!   docs/model-format.md lists each);
//! - mesh `inertia`: `exact` (the closed surface), `convex` (its hull), `legacy` (MuJoCo's
//!   default: the exact properties, with a warning for a non-convex mesh, where MuJoCo's
//!   legacy rule overestimates the volume); `shell` and geom `shellinertia` are errors;
//! - `<option gravity timestep>` (→ [`Model::gravity`], [`SimulationSettings::dt`]) and
//!   `<option><flag gravity="disable">` (gravity zero; other flags are listed as not
//!   imported);
//! - `<default>` classes, nested (a class inherits its parent's values attribute by
//!   attribute), selected by an element's `class`, else the nearest enclosing body's
//!   `childclass`, else `main`; for `joint`, `geom`, `mesh`, `motor` and `position` (the
//!   actuator shortcuts also read the class's `general` values, as they share MuJoCo's one
//!   actuator default);
//! - `<worldbody>`: bodies (`pos` and `quat`/`axisangle`/`euler`/`xyaxes`/`zaxis`,
//!   `childclass`), `<inertial>` (`diaginertia` rotated by its orientation, or
//!   `fullinertia`), joints (`hinge`, `slide`, `ball`, `free`, `<freejoint/>`; `pos`, `axis`,
//!   `range`, `limited`, `damping`, `armature`, `ref`, `stiffness` and `springref` of hinges
//!   and slides as a [`JointSpring`]), geoms (`plane`, `sphere`, `capsule`,
//!   `cylinder`, `box`, `ellipsoid`, `mesh`; `size`, `fromto`, `pos`, orientation, `mass`,
//!   `density`, `friction`, `condim`, `contype`, `conaffinity`, `group`); sites are ignored;
//! - `<asset><mesh name file scale>` (STL or OBJ, read by [`crate::io::mesh`]);
//! - `<actuator>`: `<motor joint gear ctrlrange ctrllimited forcerange forcelimited>` →
//!   [`ActuatorKind::Motor`], `<position … kp kv>` → [`ActuatorKind::Position`];
//! - `<contact><exclude body1 body2>` → [`Model::excluded_pairs`];
//! - `<frame pos … childclass>` (nested too): its bodies and geoms as if written in the
//!   enclosing body, their poses composed with the frame's.
//!
//! # Decisions where MJCF and [`Model`] differ
//! - **Joint anchors.** MuJoCo rotates a body about its joint's `pos` (the anchor, in the
//!   body frame); our joint frame is the child body frame at zero coordinates. So a body
//!   whose (last) joint has `pos = p ≠ 0` gets its frame at the anchor: the joint placement
//!   is the body pose ∘ translation(p), and its centre of mass, geoms and child bodies are
//!   shifted by −p (the body keeps its MJCF name; a warning lists these bodies). Orientation
//!   is unchanged, so MuJoCo's `xquat` and `xipos` compare directly, `xpos` after adding the
//!   body's rotated anchor.
//! - **Several joints in one body** become a chain: one massless joint-frame body
//!   `<body>/<joint>` per joint but the last, the real body on the last one, each joint frame
//!   at its anchor (placement = previous anchor → this anchor). This is MuJoCo's composition
//!   of joint motions in the body frame, in the same order, so `q`, `v` and the mass matrix
//!   are MuJoCo's.
//! - **Free joints** (top-level bodies only, as in MuJoCo) have identity placement, and the
//!   initial `q` is the body's pose (MuJoCo's `qpos0`); `v` = (world linear velocity, body
//!   angular velocity) as in MuJoCo. Ball joints start at the identity; hinge and slide
//!   joints at 0, i.e. at the pose written in the file: a non-zero `ref` (MuJoCo's
//!   coordinate at that pose) is dropped with a warning, so our coordinate is MuJoCo's
//!   minus `ref`.
//! - **Bodies without joints** are fixed to their parent ([`JointKind::Fixed`], joint named
//!   `<body>_fixed`); those welded to the world (the whole chain to it without joints, and
//!   mocap bodies) are merged into the world (their geoms become world colliders, a warning
//!   lists them); massless ones fixed to a moving body are merged into it.
//! - **Mass properties** are MuJoCo's: `<inertial>` if present (with
//!   `inertiafromgeom="auto"`), else the sum of the body's geoms whose `group` is in
//!   `inertiagrouprange` (all groups by default, visual geoms included), each with `mass` or
//!   `density` (default 1000) × volume and MuJoCo's solid formulas (a capsule as a cylinder
//!   plus two hemispheres, MuJoCo's own split; a mesh from its closed surface by signed
//!   tetrahedra), combined with the parallel-axis theorem. Mesh vertices stay in the geom
//!   frame as the file gives them (MuJoCo re-centres a mesh at its centroid and principal
//!   axes and moves the geom frame to match: the same geometry and the same mass
//!   properties).
//! - **Collision filtering.** `contype` → [`CollisionFilter::group`], `conaffinity` →
//!   [`CollisionFilter::mask`]. MuJoCo lets two geoms collide when
//!   `(contype_a & conaffinity_b) || (contype_b & conaffinity_a)`; ours needs both
//!   directions (`&&`). They agree for the default 1/1 and for symmetric set-ups; a warning
//!   lists the filter pairs of a model where they differ. Geoms with
//!   `contype = conaffinity = 0` (visual geoms) give mass but no collider (unless
//!   [`MjcfOptions::visual_geoms`]). Collider pairs MuJoCo never tests are excluded
//!   explicitly ([`Model::excluded_pairs`]): bodies welded together, a body and its parent
//!   (`filterparent`; through the joint-frame chains too), and `<exclude>` pairs.
//! - **Friction.** The first (sliding) `friction` value gives one material per distinct
//!   value, named `mjcf_friction_<μ>` (`condim="1"`: μ = 0); torsional and rolling friction
//!   are dropped. Two materials combine by our rule (geometric mean), not MuJoCo's maximum;
//!   contacts are rigid (`solref`/`solimp` are not imported).
//! - **Shapes.** A moving body's mesh collides through its convex hull (as URDF import
//!   does); an ellipsoid through the convex hull of 266 surface points (warning); a plane
//!   only on the world or a static body; `hfield` and `sdf` geoms are skipped (warning).
//! - **Actuators.** Joint transmissions on hinge and slide joints; only `gear[0]` is used.
//!   A motor's effort bounds are the intersection of `ctrlrange` and `forcerange` (τ = ctrl
//!   for a motor, our bounds clamp τ before the gear, as MuJoCo's `forcerange`); a position
//!   servo's are `forcerange` (its `ctrlrange`, a bound on the commanded position, is not
//!   enforced: warning). `limited`/`ctrllimited`/`forcelimited` follow `autolimits`.
//! - **Joint limits** of hinges are in degrees unless `angle="radian"`, as all angles; a
//!   ball joint's cone `range` and `stiffness`, joint `frictionloss`, `springdamper` and
//!   `actuatorfrcrange`, body `gravcomp` and the fluid forces of `<option density
//!   viscosity wind>` are dropped (warning).
//!
//! # Not imported
//! Tendons, equality constraints, sensors, keyframes, contact pairs, other actuator types
//! (`general`, `velocity`, `damper`, `muscle`, …) and non-joint transmissions, lights,
//! cameras, textures, materials, `<visual>`, `<statistic>`, `<size>`, `<custom>`,
//! `<extension>`, `<replicate>`, `<attach>`: one warning lists each element kind
//! with its count ([`Model::import_warnings`]). Inline meshes (`vertex`/`face`), global
//! coordinates (`coordinate="global"`) and primitives fitted to meshes are errors.
//! Inertias violating the triangle inequality (MuJoCo refuses them without
//! `balanceinertia`) are kept as given with a warning, as in URDF import.
//!
//! # Errors
//! Every error is a typed [`ModelError`] (mostly [`ModelError::Mjcf`]) whose [`Location`]
//! names the file, the 1-based line and the element and attribute, e.g.
//! `arm.xml:12: field \`geom[foot].type\``.

mod build;
mod defaults;
mod inertia;
mod mesh_volume;
mod parse;
mod xml;

use std::path::Path;

use crate::error::ModelError;
use crate::model::*;

/// Options of [`Model::from_mjcf_str`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MjcfOptions {
    /// Import `<motor>` and `<position>` actuators (default `true`).
    pub actuators: bool,
    /// Make colliders of visual-only geoms (`contype = conaffinity = 0`) too (default
    /// `false`: they only give mass).
    pub visual_geoms: bool,
}

impl Default for MjcfOptions {
    fn default() -> Self {
        MjcfOptions {
            actuators: true,
            visual_geoms: false,
        }
    }
}

impl Model {
    /// Imports an MJCF (MuJoCo XML) model (what is imported and how: the module docs of
    /// `io::mjcf`). `file` names the source in errors and is the base of relative paths
    /// (includes, meshes); without it they are relative to the current directory.
    pub fn from_mjcf_str(
        src: &str,
        file: Option<&str>,
        options: &MjcfOptions,
    ) -> Result<Model, ModelError> {
        let root = xml::load(src, file)?;
        let parsed = parse::parse(&root, file)?;
        build::build(&parsed, options)
    }

    /// Reads and imports an MJCF file with explicit [`MjcfOptions`].
    pub fn from_mjcf_file(
        path: impl AsRef<Path>,
        options: &MjcfOptions,
    ) -> Result<Model, ModelError> {
        let (name, src) = super::read_text(path.as_ref())?;
        Model::from_mjcf_str(&src, Some(&name), options)
    }
}
