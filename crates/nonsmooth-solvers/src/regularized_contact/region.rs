//! Which piece of its impulse map a constraint's trial impulse `y` fell in.

/// Which piece of the projection a constraint's `y` fell in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Region {
    /// `y ∈ F`: `γ = y`, `G = R⁻¹` (stiction; an active unilateral row; any bilateral row).
    Inside,
    /// `y` in the polar cone: `γ = 0`, `G = 0` (separation).
    Separated,
    /// Projection onto the boundary of a friction cone (sliding).
    Sliding,
}
