//! Generated scenes: models built in code for the experiments, the tests and the benchmarks.
//!
//! The sphere stack of the `drumwright-stack` experiment (Drumwright 2019, §6.5, Fig 10): the
//! header (materials, ground) of `examples/drumwright_stack.toml` followed by `n` copies of its
//! steel sphere (mass 0.1 kg, radius 5 cm), stacked on the z axis at rest with 2 mm gaps between
//! neighbours and above the ground.

use nonsmooth_core::{Model, ModelError};

const STACK: &str = include_str!("../../../examples/drumwright_stack.toml");

/// Sphere radius of the stack (m).
pub const STACK_RADIUS: f64 = 0.05;
/// Gap between neighbouring spheres and between the lowest sphere and the ground (m).
pub const STACK_GAP: f64 = 0.002;
/// Where errors in the generated stack model are reported.
const STACK_FILE: &str = "examples/drumwright_stack.toml (generated)";

/// The stack of `n` spheres (see the module docs). `n = 0` gives the ground alone.
pub fn sphere_stack(n: usize) -> Result<Model, ModelError> {
    stack_with_offsets(n, &vec![(0.0, 0.0); n])
}

/// The stack of `n` spheres with each sphere moved horizontally by a pseudo-random offset of
/// at most `max_offset` (m) in x and y (a fixed generator seeded by `seed`): a physically
/// unstable stack that topples.
pub fn toppling_stack(n: usize, max_offset: f64, seed: u64) -> Result<Model, ModelError> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut uniform = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    };
    let offsets: Vec<(f64, f64)> = (0..n)
        .map(|_| (max_offset * uniform(), max_offset * uniform()))
        .collect();
    stack_with_offsets(n, &offsets)
}

/// The stack with sphere i moved horizontally by `offsets[i]`.
fn stack_with_offsets(n: usize, offsets: &[(f64, f64)]) -> Result<Model, ModelError> {
    let head = &STACK[..STACK.find("[[bodies]]").unwrap_or(STACK.len())];
    let mut src = head.to_string();
    for i in 0..n {
        src.push_str(&format!(
            "[[bodies]]\nname = \"s{i}\"\nmass = 0.1\ninertia = {{ solid_sphere = {STACK_RADIUS} }}\n\n\
             [[colliders]]\nname = \"c{i}\"\nbody = \"s{i}\"\nshape = {{ sphere = {STACK_RADIUS} }}\n\
             material = \"steel\"\n\n"
        ));
    }
    src.push_str("[initial]\n");
    for (i, (x, y)) in offsets.iter().enumerate().take(n) {
        let z = STACK_GAP + STACK_RADIUS + i as f64 * (2.0 * STACK_RADIUS + STACK_GAP);
        src.push_str(&format!(
            "q.s{i} = [{x:?}, {y:?}, {z}, 1.0, 0.0, 0.0, 0.0]\n"
        ));
    }
    Model::from_toml_str(&src, Some(STACK_FILE))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stack_spheres_rest_with_the_stated_gaps() {
        let m = sphere_stack(3).expect("stack model");
        assert_eq!(m.bodies.len(), 3);
        let z: Vec<f64> = (0..3).map(|i| m.initial_state.q[7 * i + 2]).collect();
        assert!((z[0] - (STACK_GAP + STACK_RADIUS)).abs() < 1e-15);
        assert!((z[2] - z[1] - (2.0 * STACK_RADIUS + STACK_GAP)).abs() < 1e-15);
    }
}
