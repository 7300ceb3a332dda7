//! Problem files that made the parser abort, overflow or run without end (found by the
//! `ocp_problem` fuzz target, inputs in `fuzz/regressions/ocp_problem/`): each is now a typed
//! error naming the key, and is read at once.

use nonsmooth_ocp::problem::ModelProblem;
use nonsmooth_ocp::OcpError;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Parses the regression input `name` as if it were a file in `examples/` (so that its model
/// path resolves to the shipped model), in under a second; its error message.
fn error_of(name: &str) -> String {
    let path = repository().join("fuzz/regressions/ocp_problem").join(name);
    let text = std::fs::read_to_string(&path).expect("regression input exists");
    let source = repository().join("examples").join(name);
    let start = Instant::now();
    let result = ModelProblem::from_toml_str(&text, Some(&source.display().to_string()));
    assert!(
        start.elapsed() < Duration::from_secs(1),
        "{name}: read in {:?}",
        start.elapsed()
    );
    match result {
        Err(OcpError::InvalidInput(m)) => m,
        Err(e) => panic!("{name}: not an input error: {e}"),
        Ok(_) => panic!("{name}: parsed"),
    }
}

#[test]
fn too_many_control_intervals_name_ocp_n() {
    let m = error_of("control_intervals_exhaust_memory.toml");
    assert!(
        m.contains("control_intervals_exhaust_memory.toml:5: ocp.N:"),
        "{m}"
    );
    assert!(m.contains("100000000000 control intervals"), "{m}");
    assert!(m.contains("1000000 finite elements"), "{m}");
}

#[test]
fn overflowing_finite_element_count_names_fesd_n_fe() {
    let m = error_of("finite_elements_overflow.toml");
    assert!(
        m.contains("finite_elements_overflow.toml:20: fesd.n_fe:"),
        "{m}"
    );
    assert!(m.contains("3 × 9223372036854775807 finite elements"), "{m}");
}

#[test]
fn too_many_finite_elements_name_fesd_n_fe() {
    let path = repository().join("examples/ocp_particle.toml");
    let text = std::fs::read_to_string(&path)
        .expect("example exists")
        .replace("n_fe = 3", "n_fe = 50001");
    let m = match ModelProblem::from_toml_str(&text, Some(&path.display().to_string())) {
        Err(OcpError::InvalidInput(m)) => m,
        _ => panic!("20 × 50001 finite elements are rejected"),
    };
    assert!(m.contains("fesd.n_fe:"), "{m}");
    assert!(m.contains("20 × 50001 finite elements"), "{m}");
}

#[test]
fn endless_rollout_names_initial_guess_dt() {
    let m = error_of("rollout_never_ends.toml");
    assert!(
        m.contains("rollout_never_ends.toml:19: ocp.initial_guess.dt:"),
        "{m}"
    );
    assert!(
        m.contains("2.000e9 steps of dt = 0.000000001 s over T = 2 s"),
        "{m}"
    );
}
