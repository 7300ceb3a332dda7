//! Inputs that made a parser abort (found by the fuzz targets of `fuzz/`): each is now a typed
//! error naming what is wrong.

use nonsmooth_core::io::MjcfOptions;
use nonsmooth_core::{Model, ModelError, ParameterAxis, UrdfOptions};
use std::time::{Duration, Instant};

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

/// `n` bodies with a hinge each (none when `welded`), all on one line (as a minified file is),
/// nested in a chain or side by side; the last one with a geom of unknown type when
/// `bad_last`.
fn one_line_mjcf(n: usize, nested: bool, welded: bool, bad_last: bool) -> String {
    let mut s = String::from("<mujoco><worldbody>");
    let joint = if welded {
        ""
    } else {
        "<joint type=\"hinge\"/>"
    };
    for i in 0..n {
        let kind = if bad_last && i + 1 == n {
            "blob"
        } else {
            "sphere"
        };
        s += &format!(
            "<body name=\"b{i}\" pos=\"0 0 0.1\">{joint}<geom type=\"{kind}\" size=\"0.05\"/>"
        );
        if !nested {
            s += "</body>";
        }
    }
    if nested {
        s += &"</body>".repeat(n);
    }
    s + "</worldbody></mujoco>"
}

/// `n` links in a chain of fixed joints, all on one line.
fn one_line_urdf(n: usize) -> String {
    let mut s = String::from("<robot name=\"chain\"><link name=\"l0\"/>");
    for i in 1..n {
        s += &format!(
            "<link name=\"l{i}\"><inertial><mass value=\"1\"/><inertia ixx=\"1\" iyy=\"1\" \
             izz=\"1\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\
             <joint name=\"j{i}\" type=\"fixed\"><parent link=\"l{}\"/><child link=\"l{i}\"/>\
             </joint>",
            i - 1
        );
    }
    s + "</robot>"
}

/// Large one-line MJCF and URDF files (found with the `mjcf_model` and `urdf_model` targets'
/// per-input time limit: 1000 bodies took 8 s, 4000 links more than 5 minutes, in the
/// instrumented build): every element's line was found by scanning the text from its start.
/// Now they read in linear time. (Nothing moves: the check of the mass matrix is a dense
/// factorization, cubic in the degrees of freedom.)
#[test]
fn large_one_line_xml_models_read_in_linear_time() {
    let n = 10_000;
    let start = Instant::now();
    let mjcf = Model::from_mjcf_str(
        &one_line_mjcf(n, false, true, false),
        None,
        &MjcfOptions::default(),
    )
    .expect("the bodies import");
    assert_eq!(mjcf.nv(), 0);
    let urdf = Model::from_urdf_str(&one_line_urdf(n), None, &UrdfOptions::default())
        .expect("the chain imports");
    assert_eq!(urdf.nv(), 0);
    let elapsed = start.elapsed();
    assert!(elapsed < Duration::from_secs(5), "read in {elapsed:?}");
    // Errors still name the line: 1 on a one-line file, the element's line otherwise.
    let text = one_line_mjcf(3, false, false, true);
    let (line, _) = mjcf_error(&text);
    assert_eq!(line, Some(1));
    let (line, _) = mjcf_error(&text.replace("<body", "\n<body"));
    assert_eq!(line, Some(4));
}

/// The line and message of the MJCF error of `text`.
fn mjcf_error(text: &str) -> (Option<usize>, String) {
    match Model::from_mjcf_str(text, None, &MjcfOptions::default()) {
        Err(ModelError::Mjcf { location, message }) => (location.line, message),
        other => panic!("expected an MJCF error, got {other:?}"),
    }
}

/// Bodies nested 1000 deep (found with the `mjcf_model` target): the recursive reader
/// overflowed the stack of a 2 MiB thread and the process aborted. Elements nested deeper
/// than 200 are now a typed error, found without recursion.
#[test]
fn deeply_nested_mjcf_is_rejected_not_a_stack_overflow() {
    // <mujoco> 1, <worldbody> 2, bodies from 3, each body's joint and geom one deeper.
    let deepest_read = one_line_mjcf(197, true, false, false);
    let model = Model::from_mjcf_str(&deepest_read, None, &MjcfOptions::default())
        .expect("elements 200 deep are read");
    assert_eq!(model.nv(), 197);
    for n in [198, 1000, 100_000] {
        let (line, message) = mjcf_error(&one_line_mjcf(n, true, false, false));
        assert_eq!(line, Some(1));
        assert!(message.contains("nested more than 200 deep"), "{message}");
    }
}
