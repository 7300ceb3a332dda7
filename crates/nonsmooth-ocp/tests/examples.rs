//! Every OCP problem file in `examples/` (the files users copy) parses into a problem.

use nonsmooth_ocp::problem::ModelProblem;

#[test]
fn every_ocp_example_file_parses() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("examples directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|x| x == "toml")
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("ocp_"))
        })
        .collect();
    files.sort();
    assert!(files.len() >= 10, "{files:?}");
    for f in &files {
        if let Err(e) = ModelProblem::from_file(f) {
            panic!("{}: {e}", f.display());
        }
    }
    let holes6 = dir.join("ocp_hopper_holes6.toml");
    let h = ModelProblem::from_file(&holes6).unwrap_or_else(|e| panic!("{e}"));
    let g = h.growth.as_ref().expect("hole growth");
    assert_eq!(
        (
            h.options.discretization.n_fe,
            g.factors.len(),
            g.close_stages
        ),
        (6, 2, false)
    );
}

/// A wall-time budget (`[fesd] time_limit`) ends a run at its last point with the reason:
/// the pushed box (about 30 s) with half a second.
#[test]
fn a_run_past_its_time_limit_ends_with_its_last_point_and_says_so() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let source = dir.join("ocp_box_push.toml");
    let text = std::fs::read_to_string(&source).expect("example");
    assert!(
        !text.contains("[fesd]"),
        "the example's [fesd] table would repeat"
    );
    let text = text + "\n[fesd]\ntime_limit = 0.5\n";
    let p = ModelProblem::from_toml_str(&text, Some(&source.display().to_string()))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(p.options.nlp.time_limit, Some(0.5));
    let clock = std::time::Instant::now();
    let run = nonsmooth_ocp::run::run(&nonsmooth_ocp::run::Problem::of(&p), None, &mut |_, _| {})
        .unwrap_or_else(|f| panic!("{f}"));
    let seconds = clock.elapsed().as_secs_f64();
    assert!(!run.solved());
    assert_eq!(run.time_limit_reached, Some(0.5));
    assert!(!run.solution.x.is_empty() && run.solution.x.iter().all(|v| v.is_finite()));
    assert!(seconds < 10.0, "{seconds} s");
    assert!(ModelProblem::from_toml_str(
        &text.replace("time_limit = 0.5", "time_limit = -1.0"),
        Some(&source.display().to_string())
    )
    .is_err());
}
