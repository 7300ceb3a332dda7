//! Bilinear interpolation of a [`HeightMap`] and its gradient.

use crate::scalar::lift;
use crate::{HeightMap, Scalar};
use nalgebra::Vector3;

/// Height and outward unit normal of a height field at one query location, in the
/// collider frame.
#[derive(Debug, Clone, PartialEq)]
pub struct HeightSample<T: Scalar> {
    /// Interpolated height h.
    pub height: T,
    /// Outward unit normal of the interpolated surface, collider frame:
    /// `(−h_x, −h_y, 1)/√(1 + h_x² + h_y²)` for a surface, `(−h', 1, 0)/√(1 + h'²)` for a
    /// planar profile.
    pub normal: Vector3<T>,
}

/// Cell index and local coordinate of `u` on a grid `u0 + i·du`, `i = 0..n`, or `None` when
/// `u` lies outside `[u0, u0 + (n − 1) du]` or the grid is degenerate.
fn locate<T: Scalar>(u: T, u0: f64, du: f64, n: usize) -> Option<(usize, T)> {
    if n < 2 || du.is_nan() || du <= 0.0 || !du.is_finite() || !u0.is_finite() {
        return None;
    }
    let s = (u - lift::<T>(u0)) / lift::<T>(du);
    let s_real: f64 = nalgebra::try_convert(s)?;
    let last = (n - 1) as f64;
    if !(0.0..=last).contains(&s_real) {
        return None;
    }
    let cell = (s_real.floor() as usize).min(n - 2);
    Some((cell, s - lift::<T>(cell as f64)))
}

/// Evaluates the bilinear height field z = h(x, y) at collider-frame `(x, y)` (standard
/// bilinear interpolation on the cell containing the point; gradient from differentiating the
/// bilinear patch). Returns `None` outside the grid's x–y extent, for rows of unequal or
/// too short length (fewer than 2×2 samples) and for non-positive spacings: such points are
/// treated as not in contact.
pub fn heightmap_surface_eval<T: Scalar>(map: &HeightMap, x: T, y: T) -> Option<HeightSample<T>> {
    let ny = map.heights.len();
    let nx = map.heights.first()?.len();
    if map.heights.iter().any(|row| row.len() != nx) {
        return None;
    }
    let (ix, s) = locate(x, map.x0, map.dx, nx)?;
    let (iy, r) = locate(y, map.y0, map.dy, ny)?;
    let h00 = lift::<T>(map.heights[iy][ix]);
    let h10 = lift::<T>(map.heights[iy][ix + 1]);
    let h01 = lift::<T>(map.heights[iy + 1][ix]);
    let h11 = lift::<T>(map.heights[iy + 1][ix + 1]);
    let one = T::one();
    let height =
        (one - s) * (one - r) * h00 + s * (one - r) * h10 + (one - s) * r * h01 + s * r * h11;
    let hx = ((one - r) * (h10 - h00) + r * (h11 - h01)) / lift::<T>(map.dx);
    let hy = ((one - s) * (h01 - h00) + s * (h11 - h10)) / lift::<T>(map.dy);
    let normal = Vector3::new(-hx, -hy, one) / (one + hx * hx + hy * hy).sqrt();
    Some(HeightSample { height, normal })
}

/// Evaluates the planar profile y = h(x) given by the first row of the map (linear
/// interpolation) at collider-frame `x`. Returns `None` outside `[x0, x0 + (n − 1) dx]`, for
/// fewer than 2 samples and for a non-positive spacing.
pub fn heightmap_profile_eval<T: Scalar>(map: &HeightMap, x: T) -> Option<HeightSample<T>> {
    let row = map.heights.first()?;
    let (ix, s) = locate(x, map.x0, map.dx, row.len())?;
    let h0 = lift::<T>(row[ix]);
    let h1 = lift::<T>(row[ix + 1]);
    let one = T::one();
    let height = (one - s) * h0 + s * h1;
    let slope = (h1 - h0) / lift::<T>(map.dx);
    let normal = Vector3::new(-slope, one, T::zero()) / (one + slope * slope).sqrt();
    Some(HeightSample { height, normal })
}
