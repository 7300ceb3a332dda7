//! The soak command with the short budget CI affords (the full 10⁶-step soak is
//! `nonsmooth soak`, see docs/testing.md): both scenarios stay finite, gain no energy, and
//! the stack, which settles within the budget, does not drift.

use std::process::Command;

#[test]
fn short_soak_passes_and_writes_its_report() {
    let out = std::env::temp_dir().join(format!("nonsmooth-soak-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let output = Command::new(env!("CARGO_BIN_EXE_nonsmooth"))
        .args(["soak", "--steps", "400", "--quiet", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("soak.json")).unwrap()).unwrap();
    let runs = json["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for run in runs {
        assert_eq!(run["pass"], true, "{run}");
        assert!(run["failure"].is_null());
        // every check is named with its value and limit
        let checks = run["checks"].as_array().unwrap();
        let names: Vec<&str> = checks.iter().map(|c| c["name"].as_str().unwrap()).collect();
        assert_eq!(
            names,
            ["energy_rise", "drift_after_settling", "rss_growth"],
            "{run}"
        );
        assert!(checks
            .iter()
            .all(|c| c["limit"].as_f64().unwrap() > 0.0 && c["pass"] == true));
        assert!(
            run["max_energy_rise"].as_f64().unwrap()
                <= 1e-6 * (1.0 + run["initial_energy"].as_f64().unwrap().abs())
        );
    }
    // 400 steps of 0.01 s: the stack settles at 2 s, so the drift check ran.
    assert!(runs[0]["drift_after_settling"].as_f64().unwrap() <= 1e-3);
    assert!(out.join("soak_stack.svg").exists() && out.join("soak_quadruped.svg").exists());
    let _ = std::fs::remove_dir_all(&out);
}
