//! Spatial (6D) vector algebra after Featherstone, *Rigid Body Dynamics Algorithms* (RBDA),
//! chapter 2.
//!
//! Motion vectors are `[ω; v]` (angular; linear) and force vectors `[n; f]` (moment; force),
//! both as [`Vector6`]. Everything lives on the stack (nalgebra static types).

use nalgebra::{Isometry3, Matrix3, Matrix6, Vector3, Vector6};

use crate::scalar::{lift, lift3, lift33, Scalar};

/// Angular part (first three components) of a spatial vector.
#[inline]
pub fn angular<T: Scalar>(m: &Vector6<T>) -> Vector3<T> {
    Vector3::new(m[0], m[1], m[2])
}

/// Linear part (last three components) of a spatial vector.
#[inline]
pub fn linear<T: Scalar>(m: &Vector6<T>) -> Vector3<T> {
    Vector3::new(m[3], m[4], m[5])
}

/// Stacks an angular and a linear part into a spatial vector `[a; b]`.
#[inline]
pub fn spatial<T: Scalar>(a: &Vector3<T>, b: &Vector3<T>) -> Vector6<T> {
    Vector6::new(a[0], a[1], a[2], b[0], b[1], b[2])
}

/// The skew-symmetric matrix `x×` with `x× y = x × y` (RBDA eq. 2.23).
#[inline]
pub fn skew<T: Scalar>(x: &Vector3<T>) -> Matrix3<T> {
    let z = T::zero();
    Matrix3::new(z, -x[2], x[1], x[2], z, -x[0], -x[1], x[0], z)
}

/// The motion cross-product matrix `crm(v) = v×` (RBDA eq. 2.31).
pub fn crm<T: Scalar>(v: &Vector6<T>) -> Matrix6<T> {
    let w = skew(&angular(v));
    let u = skew(&linear(v));
    let mut m = Matrix6::zeros();
    m.fixed_view_mut::<3, 3>(0, 0).copy_from(&w);
    m.fixed_view_mut::<3, 3>(3, 0).copy_from(&u);
    m.fixed_view_mut::<3, 3>(3, 3).copy_from(&w);
    m
}

/// The force cross-product matrix `crf(v) = v×* = −crm(v)ᵀ` (RBDA eq. 2.32).
pub fn crf<T: Scalar>(v: &Vector6<T>) -> Matrix6<T> {
    -crm(v).transpose()
}

/// `v ×m m`: spatial cross product of two motion vectors (RBDA eq. 2.31), without forming
/// the 6×6 matrix.
#[inline]
pub fn cross_motion<T: Scalar>(v: &Vector6<T>, m: &Vector6<T>) -> Vector6<T> {
    let (w, u) = (angular(v), linear(v));
    let (a, b) = (angular(m), linear(m));
    spatial(&w.cross(&a), &(w.cross(&b) + u.cross(&a)))
}

/// `v ×f f`: spatial cross product of a motion vector with a force vector (RBDA eq. 2.32).
#[inline]
pub fn cross_force<T: Scalar>(v: &Vector6<T>, f: &Vector6<T>) -> Vector6<T> {
    let (w, u) = (angular(v), linear(v));
    let (n, g) = (angular(f), linear(f));
    spatial(&(w.cross(&n) + u.cross(&g)), &w.cross(&g))
}

/// A Plücker coordinate transform `B_X_A` from frame A to frame B (RBDA §2.8, eq. 2.24),
/// stored compactly as the rotation `E` (A coordinates → B coordinates) and the position `r`
/// of B's origin in A coordinates: `B_X_A = [E 0; −E r× E]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpatialTransform<T: Scalar> {
    /// Rotation taking A coordinates to B coordinates.
    pub rot: Matrix3<T>,
    /// Origin of B expressed in A coordinates.
    pub trans: Vector3<T>,
}

impl<T: Scalar> SpatialTransform<T> {
    /// The identity transform.
    pub fn identity() -> Self {
        SpatialTransform {
            rot: Matrix3::identity(),
            trans: Vector3::zeros(),
        }
    }

    /// `B_X_A` from the pose of frame B in frame A (`p_A = R p_B + t`): `E = Rᵀ`, `r = t`.
    pub fn from_pose(rotation: &Matrix3<T>, translation: &Vector3<T>) -> Self {
        SpatialTransform {
            rot: rotation.transpose(),
            trans: *translation,
        }
    }

    /// `B_X_A` from an `f64` isometry giving the pose of B in A, lifted to `T`.
    pub fn from_isometry(iso: &Isometry3<f64>) -> Self {
        let r = iso.rotation.to_rotation_matrix().into_inner();
        Self::from_pose(&lift33(&r), &lift3(&iso.translation.vector))
    }

    /// `B_X_A` from a generic isometry giving the pose of B in A.
    pub fn from_isometry_generic(iso: &Isometry3<T>) -> Self {
        let r = iso.rotation.to_rotation_matrix().into_inner();
        Self::from_pose(&r, &iso.translation.vector)
    }

    /// Transforms a motion vector from A to B coordinates: `[E ω; E (v − r × ω)]`
    /// (RBDA Table 2.5).
    #[inline]
    pub fn apply_motion(&self, m: &Vector6<T>) -> Vector6<T> {
        let w = angular(m);
        let v = linear(m);
        spatial(&(self.rot * w), &(self.rot * (v - self.trans.cross(&w))))
    }

    /// Transforms a force vector from A to B coordinates (`B_X_A^* f`):
    /// `[E (n − r × f); E f]` (RBDA Table 2.5).
    #[inline]
    pub fn apply_force(&self, f: &Vector6<T>) -> Vector6<T> {
        let n = angular(f);
        let g = linear(f);
        spatial(&(self.rot * (n - self.trans.cross(&g))), &(self.rot * g))
    }

    /// Transforms a motion vector from B back to A coordinates (`A_X_B m = B_X_A⁻¹ m`):
    /// `[Eᵀ ω; Eᵀ v + r × Eᵀ ω]`.
    #[inline]
    pub fn inv_apply_motion(&self, m: &Vector6<T>) -> Vector6<T> {
        let w = self.rot.tr_mul(&angular(m));
        let v = self.rot.tr_mul(&linear(m));
        spatial(&w, &(v + self.trans.cross(&w)))
    }

    /// Transforms a force vector from B back to A coordinates (`B_X_Aᵀ f = A_X_B^* f`):
    /// `[Eᵀ n + r × Eᵀ f; Eᵀ f]`.
    #[inline]
    pub fn inv_apply_force(&self, f: &Vector6<T>) -> Vector6<T> {
        let n = self.rot.tr_mul(&angular(f));
        let g = self.rot.tr_mul(&linear(f));
        spatial(&(n + self.trans.cross(&g)), &g)
    }

    /// Composition `C_X_A = self ∘ a_to_b` where `self = C_X_B` and `a_to_b = B_X_A`.
    #[inline]
    pub fn compose(&self, a_to_b: &SpatialTransform<T>) -> SpatialTransform<T> {
        SpatialTransform {
            rot: self.rot * a_to_b.rot,
            trans: a_to_b.trans + a_to_b.rot.tr_mul(&self.trans),
        }
    }

    /// The 6×6 Plücker matrix `[E 0; −E r× E]` (RBDA eq. 2.24).
    pub fn to_matrix(&self) -> Matrix6<T> {
        let mut m = Matrix6::zeros();
        m.fixed_view_mut::<3, 3>(0, 0).copy_from(&self.rot);
        m.fixed_view_mut::<3, 3>(3, 3).copy_from(&self.rot);
        m.fixed_view_mut::<3, 3>(3, 0)
            .copy_from(&(-(self.rot * skew(&self.trans))));
        m
    }
}

/// A rigid-body spatial inertia about a frame's origin (RBDA eq. 2.63), stored as the mass
/// `m`, the first moment `h = m c` and the rotational inertia `Ī_O` about the origin:
/// `I = [Ī_O, h×; h×ᵀ, m 1]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpatialInertia<T: Scalar> {
    /// Mass.
    pub mass: T,
    /// First moment of mass `h = m c` (c: centre of mass).
    pub h: Vector3<T>,
    /// Rotational inertia about the frame origin.
    pub inertia: Matrix3<T>,
}

impl<T: Scalar> SpatialInertia<T> {
    /// The zero inertia.
    pub fn zero() -> Self {
        SpatialInertia {
            mass: T::zero(),
            h: Vector3::zeros(),
            inertia: Matrix3::zeros(),
        }
    }

    /// From mass, centre of mass and rotational inertia about the centre of mass, all in the
    /// frame's coordinates (RBDA eq. 2.63: `Ī_O = Ī_C + m c× c×ᵀ`).
    pub fn from_com(mass: f64, com: &Vector3<f64>, inertia_com: &Matrix3<f64>) -> Self {
        let m: T = lift(mass);
        let c = lift3::<T>(com);
        let cx = skew(&c);
        SpatialInertia {
            mass: m,
            h: c * m,
            inertia: lift33::<T>(inertia_com) + cx * cx.transpose() * m,
        }
    }

    /// The force `I m` produced by a motion vector: `[Ī_O ω + h × v; m v − h × ω]`.
    #[inline]
    pub fn mul_motion(&self, m: &Vector6<T>) -> Vector6<T> {
        let w = angular(m);
        let v = linear(m);
        spatial(
            &(self.inertia * w + self.h.cross(&v)),
            &(v * self.mass - self.h.cross(&w)),
        )
    }

    /// Expresses this inertia (given in B coordinates) in A coordinates, `B_X_Aᵀ I B_X_A`
    /// (RBDA Table 2.8, "Xᵀ I X" for rigid-body inertias), where `x = B_X_A`.
    pub fn transform_to_parent(&self, x: &SpatialTransform<T>) -> SpatialInertia<T> {
        let y = x.rot.tr_mul(&self.h);
        let rx = skew(&x.trans);
        let yx = skew(&y);
        let h = y + x.trans * self.mass;
        let inertia = x.rot.tr_mul(&self.inertia) * x.rot - rx * yx - skew(&h) * rx;
        SpatialInertia {
            mass: self.mass,
            h,
            inertia,
        }
    }

    /// Sum of two inertias expressed in the same frame.
    #[inline]
    pub fn add(&self, other: &SpatialInertia<T>) -> SpatialInertia<T> {
        SpatialInertia {
            mass: self.mass + other.mass,
            h: self.h + other.h,
            inertia: self.inertia + other.inertia,
        }
    }

    /// The 6×6 matrix `[Ī_O, h×; h×ᵀ, m 1]` (RBDA eq. 2.63).
    pub fn to_matrix(&self) -> Matrix6<T> {
        let hx = skew(&self.h);
        let mut m = Matrix6::zeros();
        m.fixed_view_mut::<3, 3>(0, 0).copy_from(&self.inertia);
        m.fixed_view_mut::<3, 3>(0, 3).copy_from(&hx);
        m.fixed_view_mut::<3, 3>(3, 0).copy_from(&hx.transpose());
        m.fixed_view_mut::<3, 3>(3, 3)
            .copy_from(&(Matrix3::identity() * self.mass));
        m
    }
}
