//! Mass properties of geoms (MuJoCo's `mjCGeom::GetVolume` / `SetInertia` formulas) and of
//! bodies built from their geoms (`inertiafromgeom`), with the parallel-axis theorem.

use nalgebra::{Matrix3, Vector3};

use super::parse::{GeomType, InertiaFromGeom, MjBody, MjGeom, MjMesh};
use crate::error::ModelError;

/// Mass, centre of mass and inertia about it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct MassProperties {
    pub mass: f64,
    pub com: Vector3<f64>,
    pub inertia: Matrix3<f64>,
}

impl MassProperties {
    pub fn zero() -> Self {
        MassProperties {
            mass: 0.0,
            com: Vector3::zeros(),
            inertia: Matrix3::zeros(),
        }
    }
}

/// Mass properties of one geom in its body's frame (before `inertiagrouprange` filtering).
pub(crate) fn geom_properties(g: &MjGeom, meshes: &[MjMesh]) -> Result<MassProperties, ModelError> {
    let s = g.size;
    let mut centre = Vector3::zeros();
    // Volume, and the inertia per unit mass in the geom frame.
    let (volume, unit_inertia) = match g.kind {
        GeomType::Sphere => {
            let r = s[0];
            (
                4.0 / 3.0 * std::f64::consts::PI * r.powi(3),
                Matrix3::identity() * 0.4 * r * r,
            )
        }
        GeomType::Capsule => {
            let (r, h) = (s[0], 2.0 * s[1]);
            let volume = std::f64::consts::PI * (r * r * h + 4.0 / 3.0 * r.powi(3));
            // Per unit mass: a cylinder and two hemispheres (MuJoCo's split).
            let sphere = 4.0 * r / (4.0 * r + 3.0 * h);
            let cylinder = 1.0 - sphere;
            let mut ixx = cylinder * (3.0 * r * r + h * h) / 12.0;
            let mut izz = cylinder * r * r / 2.0;
            let sphere_inertia = 2.0 * sphere * r * r / 5.0;
            ixx += sphere_inertia + sphere * h * (3.0 * r + 2.0 * h) / 8.0;
            izz += sphere_inertia;
            (volume, Matrix3::from_diagonal(&Vector3::new(ixx, ixx, izz)))
        }
        GeomType::Cylinder => {
            let (r, h) = (s[0], 2.0 * s[1]);
            let ixx = (3.0 * r * r + h * h) / 12.0;
            (
                std::f64::consts::PI * r * r * h,
                Matrix3::from_diagonal(&Vector3::new(ixx, ixx, r * r / 2.0)),
            )
        }
        GeomType::Ellipsoid => (
            4.0 / 3.0 * std::f64::consts::PI * s[0] * s[1] * s[2],
            Matrix3::from_diagonal(&Vector3::new(
                (s[1] * s[1] + s[2] * s[2]) / 5.0,
                (s[0] * s[0] + s[2] * s[2]) / 5.0,
                (s[0] * s[0] + s[1] * s[1]) / 5.0,
            )),
        ),
        GeomType::Box => (
            8.0 * s[0] * s[1] * s[2],
            Matrix3::from_diagonal(&Vector3::new(
                (s[1] * s[1] + s[2] * s[2]) / 3.0,
                (s[0] * s[0] + s[2] * s[2]) / 3.0,
                (s[0] * s[0] + s[1] * s[1]) / 3.0,
            )),
        ),
        GeomType::Mesh => {
            let mesh = &meshes[g.mesh.unwrap_or(0)];
            let (volume, com, inertia) = mesh.unit.ok_or_else(|| {
                g.src.error(
                    Some("mesh"),
                    format!(
                        "mesh `{}` encloses no positive volume (open or inward-oriented), \
                             so it has no mass properties: give the body an <inertial> or the \
                             geom mass=\"0\"",
                        mesh.name
                    ),
                )
            })?;
            centre = com;
            (volume, inertia)
        }
        GeomType::Plane | GeomType::Unsupported => (0.0, Matrix3::zeros()),
    };
    let mass = g.mass.unwrap_or(g.density * volume);
    let rot = g.pose.rotation.to_rotation_matrix();
    let r = rot.matrix();
    Ok(MassProperties {
        mass,
        com: g.pose.translation.vector + rot * centre,
        inertia: r * (unit_inertia * mass) * r.transpose(),
    })
}

/// Sums mass properties (parallel-axis theorem).
pub(crate) fn combine(parts: &[MassProperties]) -> MassProperties {
    let mass: f64 = parts.iter().map(|p| p.mass).sum();
    if mass <= 0.0 {
        return MassProperties::zero();
    }
    let com = parts.iter().map(|p| p.mass * p.com).sum::<Vector3<f64>>() / mass;
    let inertia = parts
        .iter()
        .map(|p| {
            let d = p.com - com;
            p.inertia + p.mass * (Matrix3::identity() * d.norm_squared() - d * d.transpose())
        })
        .sum();
    MassProperties { mass, com, inertia }
}

/// The mass properties of a body in its (MJCF) frame: from `<inertial>` or from its geoms,
/// per `inertiafromgeom` and `inertiagrouprange`.
pub(crate) fn body_properties(
    body: &MjBody,
    mode: InertiaFromGeom,
    groups: (i64, i64),
    meshes: &[MjMesh],
) -> Result<MassProperties, ModelError> {
    let from_geoms = match mode {
        InertiaFromGeom::Always => true,
        InertiaFromGeom::Never => false,
        InertiaFromGeom::Auto => body.inertial.is_none(),
    };
    if !from_geoms {
        return Ok(body
            .inertial
            .as_ref()
            .map_or(MassProperties::zero(), |i| MassProperties {
                mass: i.mass,
                com: i.com,
                inertia: i.inertia,
            }));
    }
    let parts = body
        .geoms
        .iter()
        .filter(|g| g.group >= groups.0 && g.group <= groups.1)
        .map(|g| geom_properties(g, meshes))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(combine(&parts))
}
