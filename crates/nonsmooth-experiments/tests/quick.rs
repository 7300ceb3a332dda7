//! Every registered experiment, in its `--quick` form, passes its checks and writes its files,
//! and each of its checks can fail: moved outside its tolerance (the mutation test), its
//! metric fails the check.

use std::collections::BTreeMap;

use nonsmooth_report::ExperimentOutcome;

/// Moves each checked metric of `outcome` just outside its tolerance, on both sides, and
/// asserts that the check re-evaluated on those metrics fails (and the others do not
/// change). A check on a metric the run did not record fails here too.
fn assert_checks_can_fail(id: &str, outcome: &ExperimentOutcome) {
    for (i, check) in outcome.checks.iter().enumerate() {
        assert_eq!(
            outcome
                .metrics
                .get(&check.metric)
                .copied()
                .map(f64::to_bits),
            Some(check.value.to_bits()),
            "{id}: check {} does not read the recorded metric",
            check.metric
        );
        let step = check.tolerance.abs() * 1.5 + check.expected.abs() * 1e-9 + 1e-12;
        for moved in [check.expected + step, check.expected - step, f64::NAN] {
            let mut metrics: BTreeMap<String, f64> = outcome.metrics.clone();
            metrics.insert(check.metric.clone(), moved);
            let rechecked = outcome.rechecked(&metrics);
            assert!(
                !rechecked[i].passed,
                "{id}: check {} still passes with the metric moved to {moved}",
                check.metric
            );
            for (j, other) in rechecked.iter().enumerate() {
                if outcome.checks[j].metric != check.metric {
                    assert_eq!(
                        other.passed, outcome.checks[j].passed,
                        "{id}: {}",
                        other.metric
                    );
                }
            }
        }
    }
}

#[test]
fn every_experiment_passes_in_quick_mode() {
    let registry = nonsmooth_experiments::registry();
    let out = std::env::temp_dir().join(format!("nonsmooth-quick-{}", std::process::id()));
    let mut with_players = Vec::new();
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
        assert_checks_can_fail(exp.id, &outcome);
        assert!(out.join(exp.id).join("result.json").exists());
        for fig in &outcome.figures {
            assert!(
                out.join(exp.id).join(fig).exists(),
                "{}: missing {fig}",
                exp.id
            );
        }
        for player in &outcome.players {
            let page = std::fs::read_to_string(out.join(exp.id).join(player))
                .unwrap_or_else(|e| panic!("{}: player {player}: {e}", exp.id));
            assert!(page.contains("window.nonsmoothViewer"), "{}", exp.id);
            with_players.push(exp.id);
        }
    }
    // The experiments with motion embed a trajectory player.
    let mut moving = vec![
        "drumwright-incline",
        "drumwright-stack",
        "impact-zeno-wobble",
        "id-tracking",
        "id-tasks",
    ];
    if cfg!(feature = "ocp") {
        moving.push("tf-hopper-ocp");
    }
    for id in moving {
        assert!(with_players.contains(&id), "{id} has no player");
    }
    let _ = std::fs::remove_dir_all(&out);
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

/// The id lists that name a feature's experiments to a build without them are those the
/// feature's module registers.
#[test]
fn the_feature_id_lists_match_the_registered_experiments() {
    let registry = nonsmooth_experiments::registry();
    for (enabled, ids) in [
        (
            cfg!(feature = "ocp"),
            nonsmooth_experiments::OPTIMAL_CONTROL_IDS,
        ),
        (
            cfg!(feature = "stability"),
            nonsmooth_experiments::STABILITY_IDS,
        ),
    ] {
        for id in ids {
            assert_eq!(registry.get(id).is_some(), enabled, "{id}");
            assert_eq!(
                nonsmooth_experiments::feature_left_out(id).is_some(),
                !enabled,
                "{id}"
            );
        }
    }
    #[cfg(feature = "ocp")]
    {
        let ids: Vec<&str> = nonsmooth_experiments::optimal_control::experiments()
            .iter()
            .map(|e| e.id)
            .collect();
        assert_eq!(ids, nonsmooth_experiments::OPTIMAL_CONTROL_IDS);
    }
    #[cfg(feature = "stability")]
    {
        let ids: Vec<&str> = nonsmooth_experiments::stability::experiments()
            .iter()
            .map(|e| e.id)
            .collect();
        assert_eq!(ids, nonsmooth_experiments::STABILITY_IDS);
    }
    assert_eq!(
        nonsmooth_experiments::feature_left_out("foundation-free-fall"),
        None
    );
}
