//! Every model file shipped in `examples/` (TOML, URDF, MJCF; problem files of `nonsmooth ocp`
//! left out) runs one second under `nonsmooth simulate FILE` with no stepper named: the
//! default follows the model. The folder is globbed, so a new example is covered without
//! editing this test.

use std::path::{Path, PathBuf};
use std::process::Command;

fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// Model files under `dir`, recursively: `.urdf`, `.xml` and `.toml` files that are not
/// optimal-control problem files (an `[ocp]` table).
fn model_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("examples/ is readable")
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            model_files(&path, out);
            continue;
        }
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        match ext {
            "urdf" | "xml" => out.push(path),
            "toml" => {
                let text = std::fs::read_to_string(&path).expect("readable");
                let table: toml::Table = text.parse().expect("examples are valid TOML");
                if !table.contains_key("ocp") {
                    out.push(path);
                }
            }
            _ => {}
        }
    }
}

#[test]
fn every_example_model_runs_one_second_under_the_default_stepper() {
    let mut files = Vec::new();
    model_files(&examples_dir(), &mut files);
    assert!(files.len() >= 25, "found only {} model files", files.len());
    let scratch =
        std::env::temp_dir().join(format!("nonsmooth-examples-default-{}", std::process::id()));
    let mut failures = Vec::new();
    for (k, file) in files.iter().enumerate() {
        let out_dir = scratch.join(k.to_string());
        let out = Command::new(env!("CARGO_BIN_EXE_nonsmooth"))
            .arg("simulate")
            .arg(file)
            .args(["--duration", "1", "--quiet", "--out"])
            .arg(&out_dir)
            .env_remove("ROS_PACKAGE_PATH")
            .output()
            .expect("the binary runs");
        if !out.status.success() {
            failures.push(format!(
                "{}: {}",
                file.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
            continue;
        }
        let summary: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(out_dir.join("summary.json")).expect("summary.json"),
        )
        .expect("summary.json parses");
        let t = summary["final_t"].as_f64().expect("final_t");
        assert!(
            (t - summary["duration"].as_f64().unwrap_or(f64::NAN)).abs() < 1e-9 + 1e-9 * t,
            "{}: ended at t = {t}",
            file.display()
        );
        let finite = summary["final_q"]
            .as_array()
            .expect("final_q")
            .iter()
            .chain(summary["final_v"].as_array().expect("final_v"))
            .all(|x| x.as_f64().is_some_and(f64::is_finite));
        assert!(finite, "{}: non-finite final state", file.display());
    }
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(
        failures.is_empty(),
        "{} of {} example models failed under the default stepper:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}
