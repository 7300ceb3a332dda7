//! Inputs that made a parser abort (found by the fuzz targets of `fuzz/`): each is now a typed
//! error naming what is wrong.

use nonsmooth_core::{ModelError, ParameterAxis};

/// `nonsmooth stability --grid` with N = 10^11 values on one axis (the `stability_model`
/// target, input `fuzz/regressions/stability_model/sweep_axis_exhausts_memory.toml`): the
/// values were stored before anything else and the process aborted out of memory.
#[test]
fn sweep_axis_with_too_many_values_is_rejected() {
    let input = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fuzz/regressions/stability_model/sweep_axis_exhausts_memory.toml"
    ))
    .expect("regression input exists");
    let text = input
        .lines()
        .find_map(|l| l.split_once("--grid ").map(|(_, axis)| axis.trim()))
        .expect("the input names its axis");
    assert_eq!(text, "materials.rough.friction=0.2:2:100000000000");
    match text.parse::<ParameterAxis>() {
        Err(ModelError::InvalidValue { location, reason }) => {
            assert_eq!(location.field, text);
            assert!(reason.contains("N = 100000000000 values"), "{reason}");
            assert!(reason.contains("(1000000)"), "{reason}");
        }
        other => panic!("expected InvalidValue, got {other:?}"),
    }
    let at_limit = format!("bodies.block.com.x=-0.1:0.1:{}", ParameterAxis::MAX_VALUES);
    let axis: ParameterAxis = at_limit.parse().expect("the largest axis is accepted");
    assert_eq!(axis.values.len(), ParameterAxis::MAX_VALUES);
    assert!((axis.values[0] + 0.1).abs() < 1e-15);
    assert!((axis.values[ParameterAxis::MAX_VALUES - 1] - 0.1).abs() < 1e-15);
}
