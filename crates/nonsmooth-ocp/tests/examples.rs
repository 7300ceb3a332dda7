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
