//! One set of defaults: what `nonsmooth simulate` does with no options is what the
//! `Simulator` (Rust and Python) does with the same file, and the default honours what the
//! model gives.

use std::path::{Path, PathBuf};
use std::process::Command;

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name)
}

fn simulate(args: &[&str], out: &Path) -> (serde_json::Value, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_nonsmooth"))
        .arg("simulate")
        .args(args)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(output.status.success(), "{stderr}");
    let summary = std::fs::read_to_string(out.join("summary.json")).unwrap();
    (serde_json::from_str(&summary).unwrap(), stderr)
}

/// The README's first command: no warning, the default applies the restitution e = 0.8 (each
/// apex of the ball's centre above its resting height 0.1 m is e² of the previous one).
#[test]
fn the_bouncing_sphere_bounces_with_its_restitution_under_the_default() {
    let out = std::env::temp_dir().join(format!("nonsmooth-ball-{}", std::process::id()));
    let model = example("bouncing_sphere.toml");
    let (summary, stderr) = simulate(
        &[model.to_str().unwrap(), "--dt", "1e-4", "--duration", "2"],
        &out,
    );
    assert!(!stderr.contains("warning"), "{stderr}");
    assert_eq!(summary["stepper"], "anitescu-potra", "{summary}");
    assert_eq!(summary["stepper_choice"]["source"], "default");
    assert!(summary["warnings"].as_array().unwrap().is_empty());
    let apexes: Vec<f64> = summary["apexes"][0]["heights"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h.as_f64().unwrap())
        .collect();
    assert!(apexes.len() >= 3, "{apexes:?}");
    assert!((apexes[0] - 1.0).abs() < 1e-12);
    for pair in apexes.windows(2).take(2) {
        let ratio = (pair[1] - 0.1) / (pair[0] - 0.1);
        assert!(
            (ratio - 0.64).abs() < 0.01,
            "apexes {apexes:?}: ratio {ratio}"
        );
    }
    let _ = std::fs::remove_dir_all(&out);
}

/// `examples/mjcf/quadruped.xml` (MJCF `timestep` 0.005): the CLI with no options and a
/// `Simulator` built with the same resolved settings, stepped without a command, end 1 s in
/// the same state.
#[test]
fn the_cli_and_the_simulator_take_the_same_settings_and_agree() {
    let out = std::env::temp_dir().join(format!("nonsmooth-quad-{}", std::process::id()));
    let path = example("mjcf/quadruped.xml");
    let (summary, _) = simulate(&[path.to_str().unwrap(), "--duration", "1"], &out);
    let model = nonsmooth_core::Model::from_file(&path).unwrap();
    let settings = nonsmooth_sim::RunSettings::resolve(&model, None, None, None);
    assert_eq!(settings.dt, 0.005);
    assert_eq!(summary["dt"], 0.005);
    assert_eq!(summary["stepper"], settings.stepper.name.as_str());
    let mut sim = nonsmooth_sim::Simulator::with_default_stepper(model, settings.dt).unwrap();
    // no command, as the CLI's run
    sim.step_n(200, &[]).unwrap();
    let q: Vec<f64> = summary["final_q"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    let v: Vec<f64> = summary["final_v"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert!((summary["final_t"].as_f64().unwrap() - sim.t()).abs() < 1e-12);
    let dq = sim
        .q()
        .iter()
        .zip(&q)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    let dv = sim
        .v()
        .iter()
        .zip(&v)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    // The run's last step is shortened to end at 1 s exactly (h differs from 5 ms by the
    // rounding of the accumulated time), and the contact solve stops at its tolerance: the
    // two agree to the solver's accuracy, not to the last bit.
    assert!(dq <= 1e-8 && dv <= 1e-6, "dq {dq:e}, dv {dv:e}");
    let _ = std::fs::remove_dir_all(&out);
}
