//! A sweep grid too large to store (the product of axes each within
//! [`ParameterAxis::MAX_VALUES`], found with the `stability_model` fuzz target's axes) is a
//! typed error naming the axes before anything is allocated or solved.

use nonsmooth_core::{ModelError, ParameterAxis};
use nonsmooth_sos::model::{ModelCertifyOptions, StabilityModelError};
use nonsmooth_sos::model_grid::{grid_points, sweep_model};

fn axes(words: &[&str]) -> Vec<ParameterAxis> {
    words
        .iter()
        .map(|w| w.parse().expect("a valid axis"))
        .collect()
}

#[test]
fn grid_points_is_the_product_of_the_axis_lengths() {
    let a = axes(&[
        "materials.rough.friction=0.2:2:10",
        "bodies.block.com.x=-0.1:0.1:5",
    ]);
    assert_eq!(grid_points(&a).expect("a small grid"), 50);
    assert_eq!(grid_points(&[]).expect("no axis: one point"), 1);
}

#[test]
fn grid_with_too_many_points_is_rejected() {
    let a = axes(&[
        "materials.rough.friction=0:1:1000",
        "bodies.block.com.x=0:1:1000",
        "bodies.block.mass=1:2:1000",
    ]);
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/stability_box_on_slope.toml"
    ))
    .expect("example exists");
    for result in [
        grid_points(&a).map(|_| ()),
        sweep_model(&src, None, &a, &ModelCertifyOptions::default(), &|_| {}).map(|_| ()),
    ] {
        match result {
            Err(StabilityModelError::Model(ModelError::InvalidValue { location, reason })) => {
                assert_eq!(
                    location.field,
                    "materials.rough.friction bodies.block.com.x bodies.block.mass"
                );
                assert!(reason.contains("1000 × 1000 × 1000 points"), "{reason}");
                assert!(reason.contains("(1000000)"), "{reason}");
            }
            Err(e) => panic!("expected InvalidValue, got {e}"),
            Ok(()) => panic!("a 10^9-point grid is rejected"),
        }
    }
}
