//! Every registered experiment, in its `--quick` form, passes its checks and writes its files.

#[test]
fn every_experiment_passes_in_quick_mode() {
    let registry = nonsmooth_experiments::registry();
    let out = std::env::temp_dir().join(format!("nonsmooth-quick-{}", std::process::id()));
    for exp in registry.list() {
        let outcome = registry.run(exp.id, &out, true, &|_| {}).unwrap();
        for c in &outcome.checks {
            assert!(
                c.passed,
                "{}: {} = {} (expected {} ± {})",
                exp.id, c.metric, c.value, c.expected, c.tolerance
            );
        }
        assert!(!outcome.metrics.is_empty(), "{} has no metrics", exp.id);
        assert!(out.join(exp.id).join("result.json").exists());
        for fig in &outcome.figures {
            assert!(
                out.join(exp.id).join(fig).exists(),
                "{}: missing {fig}",
                exp.id
            );
        }
    }
}

#[test]
fn experiment_ids_are_unique_and_prefixed() {
    let registry = nonsmooth_experiments::registry();
    let ids: Vec<&str> = registry.list().iter().map(|e| e.id).collect();
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), ids.len());
    assert!(ids.contains(&"foundation-free-fall"));
}
