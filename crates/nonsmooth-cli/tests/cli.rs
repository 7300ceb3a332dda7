//! End-to-end tests of the `nonsmooth` binary on the example models.

use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_nonsmooth"))
}

/// Runs `cmd` and asserts that it succeeded (its stderr in the failure message).
fn run_ok(cmd: &mut Command) -> std::process::Output {
    let out = cmd.output().expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name)
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nonsmooth-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn simulate_bouncing_sphere_writes_parseable_csv_json_and_svg() {
    let out = scratch("ball");
    let status = bin()
        .args(["simulate"])
        .arg(example("bouncing_sphere.toml"))
        // the compliant law of the file (the default would be the rigid scheme that applies
        // the file's restitution)
        .args(["--stepper", "penalty-symplectic"])
        .args(["--dt", "1e-4", "--duration", "1.0", "--quiet", "--out"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let csv = std::fs::read_to_string(out.join("trajectory.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(header[0], "t");
    assert_eq!(header.len(), 1 + 7 + 6, "t + 7 q + 6 v columns");
    let z_col = header.iter().position(|h| h.ends_with(".z")).unwrap();
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').map(|x| x.parse::<f64>().unwrap()).collect())
        .collect();
    assert!(rows.iter().all(|r| r.len() == header.len()));
    let last = rows.last().unwrap();
    assert!((last[0] - 1.0).abs() < 1e-9, "final time {}", last[0]);
    // The sphere (r = 0.1 m) falls 0.9 m onto the compliant floor (K = 5e4 N/m in series,
    // m = 1 kg) and sinks at most v √(m/K) = √(2 g 0.9) · √(1/5e4) ≈ 1.88 cm into it.
    let bound = (2.0 * 9.81 * 0.9_f64).sqrt() * (1.0 / 5e4_f64).sqrt();
    let min_z = rows.iter().map(|r| r[z_col]).fold(f64::MAX, f64::min);
    assert!(
        min_z > 0.1 - bound && min_z < 0.1 - 0.5 * bound,
        "min z {min_z}"
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["steps"].as_u64(), Some(10_000));
    let svg = std::fs::read_to_string(out.join("trajectory.svg")).unwrap();
    assert!(svg.starts_with("<svg"));
    // one unit a panel, every line named after its coordinate, no tick reading -0
    for text in [
        "position [m]",
        "quaternion part (no unit)",
        "linear velocity [m/s]",
        "angular velocity [rad/s]",
        "ball.z",
        "ball.qw",
        "ball.vz",
    ] {
        assert!(svg.contains(text), "trajectory.svg lacks {text}");
    }
    assert!(!svg.contains(">-0<") && !svg.contains(">-0.0<"));
}

#[test]
fn bad_model_file_is_a_clear_error_not_a_panic() {
    let dir = scratch("bad");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.toml");
    std::fs::write(
        &path,
        "[model]\nname = \"x\"\n[[bodies]]\nname = \"b\"\nmass = -1.0\ninertia = [1.0, 1.0, 1.0]\n",
    )
    .unwrap();
    let out = bin().arg("inspect").arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.toml"), "{err}");
    assert!(err.contains("mass"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn reproduce_lists_and_runs_quick_experiments_into_a_report() {
    let list = bin().args(["reproduce", "--list"]).output().unwrap();
    assert!(list.status.success());
    let listed = String::from_utf8_lossy(&list.stdout);
    assert!(listed.contains("foundation-free-fall"));
    let out = scratch("repro");
    let status = bin()
        .args(["reproduce", "--all", "--quick", "--out"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("foundation-free-fall"));
    let result: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("foundation-free-fall/result.json")).unwrap(),
    )
    .unwrap();
    assert!(result["metrics"].is_object());
    assert_eq!(result["passed"].as_bool(), Some(true));
    let unknown = bin()
        .args(["reproduce", "no-such-experiment", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(unknown.status.code(), Some(2));
}

#[test]
fn simulate_takes_its_defaults_from_the_models_simulation_section() {
    let dir = scratch("settings");
    std::fs::create_dir_all(&dir).unwrap();
    let src = std::fs::read_to_string(example("bouncing_sphere.toml")).unwrap()
        + "\n[simulation]\nstepper = \"penalty-explicit\"\ndt = 1e-3\nduration = 0.05\n";
    let path = dir.join("ball.toml");
    std::fs::write(&path, src).unwrap();
    let out = dir.join("out");
    let status = bin()
        .arg("simulate")
        .arg(&path)
        .args(["--quiet", "--out"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["steps"].as_u64(), Some(50));
    assert_eq!(summary["stepper"].as_str(), Some("penalty-explicit"));
    let status = bin()
        .arg("simulate")
        .arg(&path)
        .args(["--quiet", "--dt", "1e-2", "--out"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(
        summary["steps"].as_u64(),
        Some(5),
        "flags override the file"
    );
}

#[test]
fn simulate_html_writes_an_offline_viewer_embedding_the_box() {
    let out = scratch("viewer");
    let status = bin()
        .arg("simulate")
        .arg(example("sliding_box.toml"))
        .args(["--html", "--duration", "0.2", "--stepper", "anitescu-potra"])
        .args(["--quiet", "--out"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let html = std::fs::read_to_string(out.join("viewer.html")).unwrap();
    assert!(!html.contains("http://") && !html.contains("https://"));
    let start = html.find(r#"id="nonsmooth-data">"#).unwrap() + r#"id="nonsmooth-data">"#.len();
    let len = html[start..].find("</script>").unwrap();
    let data: serde_json::Value = serde_json::from_str(&html[start..start + len]).unwrap();
    assert_eq!(data["planar"], false);
    assert_eq!(data["bodies"], serde_json::json!(["box"]));
    let shapes = data["shapes"].as_array().unwrap();
    let shape = shapes.iter().find(|s| s["name"] == "box_shape").unwrap();
    assert_eq!(shape["body"], 0);
    assert_eq!(shape["kind"]["type"], "box");
    assert_eq!(
        shape["kind"]["half_extents"],
        serde_json::json!([0.2, 0.15, 0.1])
    );
    let ground = shapes.iter().find(|s| s["name"] == "ground").unwrap();
    assert_eq!(ground["kind"]["type"], "plane");
    assert!(ground["body"].is_null());
    let runs = data["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["name"], "anitescu-potra");
    let times = runs[0]["times"].as_array().unwrap();
    let poses = runs[0]["poses"].as_array().unwrap();
    // Contact points from a snapshot of each state: the box rests on its four bottom
    // corners (gap ≈ 0, normal +z).
    let contacts = runs[0]["contacts"].as_array().unwrap();
    assert_eq!(contacts.len(), times.len());
    let last = contacts.last().unwrap().as_array().unwrap();
    assert_eq!(last.len(), 4, "{last:?}");
    for c in last {
        assert!(c["gap"].as_f64().unwrap().abs() < 1e-3, "{c}");
        assert!((c["normal"][2].as_f64().unwrap() - 1.0).abs() < 1e-6, "{c}");
        assert!(c["point"][2].as_f64().unwrap().abs() < 1e-3, "{c}");
        assert!(c.get("force").is_none(), "no step from the last state");
    }
    // The forces of the step from a state in the middle: the four corners carry the weight
    // (2 kg · 9.81 m/s²), friction (μ = 0.3) opposes the sliding along +x.
    let middle = contacts[contacts.len() / 2].as_array().unwrap();
    let sum = |j: usize| -> f64 { middle.iter().map(|c| c["force"][j].as_f64().unwrap()).sum() };
    assert!((sum(2) - 19.62).abs() < 0.2, "{middle:?}");
    assert!((sum(0) + 0.3 * 19.62).abs() < 0.3, "{middle:?}");
    assert_eq!(poses.len(), times.len());
    assert!((times.last().unwrap().as_f64().unwrap() - 0.2).abs() < 1e-9);
    // The box slides along +x from x = 0 at 2 m/s, slowed by friction (μ g ≈ 2.94 m/s²):
    // x(0.2 s) ≈ 0.4 − ½ · 2.94 · 0.04 ≈ 0.34 m.
    let x = |k: usize| poses[k][0][0].as_f64().unwrap();
    assert!(x(0).abs() < 1e-6);
    let x_end = x(poses.len() - 1);
    assert!(x_end > 0.2 && x_end < 0.4, "x(0.2 s) = {x_end}");
    assert_eq!(data["series_names"].as_array().unwrap().len(), 7);
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert!(summary["files"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f == "viewer.html"));
}

fn page_data(html: &str) -> serde_json::Value {
    let start = html.find(r#"id="nonsmooth-data">"#).unwrap() + r#"id="nonsmooth-data">"#.len();
    let len = html[start..].find("</script>").unwrap();
    serde_json::from_str(&html[start..start + len]).unwrap()
}

#[test]
fn simulate_stepper_all_compares_every_stepper_on_one_scene() {
    let out = scratch("all");
    let output = run_ok(
        bin()
            .arg("simulate")
            .arg(example("sliding_box.toml"))
            .args(["--stepper", "all", "--html", "--duration", "0.2", "--out"])
            .arg(&out),
    );
    let table = String::from_utf8_lossy(&output.stdout);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("comparison.json")).unwrap())
            .unwrap();
    let runs = json["runs"].as_array().unwrap();
    let names: Vec<&str> = runs
        .iter()
        .map(|r| r["stepper"].as_str().unwrap())
        .collect();
    for name in [
        "penalty-symplectic",
        "drumwright",
        "anitescu-potra",
        "qp-max-dissipation",
    ] {
        assert!(names.contains(&name), "{names:?}");
        assert!(table.contains(name), "{table}");
    }
    let run = |name: &str| runs.iter().find(|r| r["stepper"] == name).unwrap();
    // The penalty schemes need compliant contact: not applicable, with the reason, no files.
    let penalty = run("penalty-symplectic");
    assert_eq!(penalty["status"], "not applicable");
    assert!(
        penalty["detail"].as_str().unwrap().contains("rigid"),
        "{penalty}"
    );
    assert!(!out.join("penalty-symplectic").exists());
    let mut shown = Vec::new();
    for r in runs.iter().filter(|r| r["status"] == "completed") {
        let name = r["stepper"].as_str().unwrap();
        shown.push(name);
        assert_eq!(r["steps"], 200, "{r}");
        // The box slides, so friction takes kinetic energy: the drift is that loss, at most
        // the initial ½ · 2 kg · (2 m/s)² = 4 J.
        let drift = r["energy_drift_J"].as_f64().unwrap();
        assert!(drift > 0.0 && drift <= 4.0 + 1e-6, "{name}: {drift}");
        let pen = r["largest_penetration_m"].as_f64().unwrap();
        assert!((0.0..1e-2).contains(&pen), "{name}: {pen}");
        assert_eq!(r["recoveries"]["step_halving"], 0, "{r}");
        let csv = std::fs::read_to_string(out.join(name).join("trajectory.csv")).unwrap();
        assert_eq!(csv.lines().count(), 1 + 201, "{name}: header + 201 states");
    }
    for name in ["drumwright", "anitescu-potra", "qp-max-dissipation"] {
        assert!(
            shown.contains(&name),
            "{name} did not complete: {}",
            run(name)
        );
    }
    let csv = std::fs::read_to_string(out.join("comparison.csv")).unwrap();
    assert!(csv.starts_with("stepper,status,wall_time_s,steps,final_t_s,energy_drift_J,"));
    assert_eq!(csv.lines().count(), 1 + runs.len());
    // One page overlays the completed runs on one time axis; the others are named.
    let data = page_data(&std::fs::read_to_string(out.join("viewer.html")).unwrap());
    let page_runs: Vec<&str> = data["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(page_runs, shown);
    // Each run ends at its last recorded time, the duration asked for.
    for r in data["runs"].as_array().unwrap() {
        let t = r["times"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .as_f64()
            .unwrap();
        let end = run(r["name"].as_str().unwrap())["final_t"]
            .as_f64()
            .unwrap();
        assert_eq!(t, end);
        assert!((t - 0.2).abs() < 1e-9, "{}: {t}", r["name"]);
    }
    // Force arrows for the steppers that report their contact impulses.
    for r in data["runs"].as_array().unwrap() {
        let forces = r["contacts"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|f| f.as_array().unwrap())
            .filter(|c| c.get("force").is_some())
            .count();
        let reports = ["drumwright", "anitescu-potra", "qp-max-dissipation"]
            .contains(&r["name"].as_str().unwrap());
        assert_eq!(forces > 0, reports, "{}: {forces} forces", r["name"]);
    }
    let notes = data["notes"].as_array().unwrap();
    assert!(notes
        .iter()
        .any(|n| n.as_str().unwrap().contains("penalty-symplectic")));
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn simulate_stepper_all_rejects_bad_options_before_running_any_stepper() {
    let out = scratch("all-bad");
    let output = bin()
        .arg("simulate")
        .arg(example("sliding_box.toml"))
        .args([
            "--stepper",
            "all",
            "--record-every",
            "0",
            "--quiet",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("record_every"), "{stderr}");
    assert!(!out.join("comparison.json").exists());
    let _ = std::fs::remove_dir_all(&out);
}

/// The lines of a derivatives.jsonl, parsed.
fn derivatives_lines(dir: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join("derivatives.jsonl"))
        .expect("derivatives.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

#[test]
fn simulate_derivatives_writes_every_nth_steps_matrices() {
    let out = scratch("derivatives");
    let output = run_ok(
        bin()
            .arg("simulate")
            .arg(example("sliding_box.toml"))
            .args([
                "--duration",
                "0.05",
                "--derivatives",
                "--derivatives-every",
                "5",
            ])
            .arg("--out")
            .arg(&out),
    );
    // 50 steps of 1 ms: steps 0, 5, …, 45.
    let lines = derivatives_lines(&out);
    assert_eq!(lines.len(), 10);
    for (k, line) in lines.iter().enumerate() {
        assert_eq!(line["step"].as_u64(), Some(5 * k as u64));
        let t = line["t"].as_f64().expect("t");
        assert!((t - 5e-3 * k as f64).abs() < 1e-12, "t = {t}");
        let (nv, nu) = (line["nv"].as_u64(), line["nu"].as_u64());
        assert_eq!((nv, nu), (Some(6), Some(0)));
        assert_eq!(line["a"].as_array().map(Vec::len), Some(12 * 12));
        assert_eq!(line["b"].as_array().map(Vec::len), Some(0));
        assert!(line["a"]
            .as_array()
            .into_iter()
            .flatten()
            .all(|x| x.as_f64().is_some_and(f64::is_finite)));
        // drumwright's step problem, differentiated implicitly: four sliding corners
        assert_eq!(line["method"], "implicit");
        let contacts = line["contacts"].as_array().expect("contacts");
        assert!(!contacts.is_empty());
        for c in contacts {
            assert_eq!(c["mode"], "sliding", "{c}");
            assert!(c["collider_a"].is_string() && c["collider_b"].is_string());
        }
    }
    // A's rows of the position tangent: ∂x₁/∂vx₀ = h while sliding.
    let a = lines[3]["a"].as_array().expect("a");
    let dx_dvx = a[6].as_f64().expect("a number");
    assert!((dx_dvx - 1e-3).abs() < 1e-6, "∂x₁/∂vx₀ = {dx_dvx}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("derivatives of 10 steps") && stdout.contains("per derivatives call"),
        "{stdout}"
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["derivatives"]["written"].as_u64(), Some(10));
    assert!(summary["derivatives"]["mean_derivatives_s"].as_f64() > Some(0.0));
    assert!(summary["files"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f == "derivatives.jsonl"));
    let _ = std::fs::remove_dir_all(&out);

    // An actuated model under a scheme without a step problem: finite differences, and B
    // with the actuator's column (∂v₁/∂u = h / I for the free pendulum).
    let out = scratch("derivatives-pendulum");
    run_ok(
        bin()
            .arg("simulate")
            .arg(example("pendulum.toml"))
            .args(["--stepper", "anitescu-potra", "--duration", "0.003"])
            .args([
                "--derivatives",
                "--derivatives-every",
                "1",
                "--quiet",
                "--out",
            ])
            .arg(&out),
    );
    let lines = derivatives_lines(&out);
    assert_eq!(lines.len(), 3);
    let line = &lines[0];
    assert_eq!(line["method"], "finite-difference");
    assert_eq!(
        (line["nv"].as_u64(), line["nu"].as_u64()),
        (Some(1), Some(1))
    );
    let b = line["b"].as_array().expect("b");
    assert_eq!(b.len(), 2);
    let dv_du = b[1].as_f64().expect("a number");
    assert!(
        (dv_du - 1e-3 / (1.0 + 1e-4)).abs() < 1e-8,
        "∂v₁/∂u = {dv_du}"
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn simulate_derivatives_every_zero_is_a_clear_error() {
    let out = scratch("derivatives-zero");
    let output = bin()
        .arg("simulate")
        .arg(example("sliding_box.toml"))
        .args(["--derivatives", "--derivatives-every", "0", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--derivatives-every") && stderr.contains("at least 1"),
        "{stderr}"
    );
    assert!(!out.exists());
    // --stepper all has no single run to differentiate
    let output = bin()
        .arg("simulate")
        .arg(example("sliding_box.toml"))
        .args(["--stepper", "all", "--derivatives", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--derivatives"), "{stderr}");
    assert!(!out.join("comparison.json").exists());
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn every_subcommand_takes_the_same_quiet_and_json_flags() {
    let mut subcommands = vec![
        "simulate",
        "impact",
        "inverse",
        "inspect",
        "reproduce",
        "soak",
    ];
    if cfg!(feature = "ocp") {
        subcommands.push("ocp");
    }
    if cfg!(feature = "stability") {
        subcommands.push("stability");
    }
    for sub in subcommands {
        let out = bin().args([sub, "--help"]).output().expect("runs");
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(
            help.contains("--quiet") && help.contains("--json"),
            "`nonsmooth {sub}` lacks --quiet/--json:\n{help}"
        );
    }
}

#[cfg(feature = "ocp")]
#[test]
fn ocp_json_prints_the_summary_and_quiet_prints_nothing() {
    let out_dir = scratch("ocp-json");
    let json = run_ok(
        bin()
            .args([
                "ocp",
                example("ocp_particle.toml").to_str().unwrap(),
                "--json",
                "--out",
            ])
            .arg(&out_dir),
    );
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).expect("one JSON document");
    assert!(v["terminal_error"].as_f64().expect("terminal_error") < 1e-8);
    let quiet = bin()
        .args([
            "ocp",
            example("ocp_particle.toml").to_str().unwrap(),
            "--quiet",
            "--out",
        ])
        .arg(&out_dir)
        .output()
        .expect("runs");
    assert!(quiet.status.success() && quiet.stdout.is_empty());
}

/// A problem on a model file: outputs named after the model's coordinates and actuators, and
/// the optimal motion in the offline viewer; solved by the exact active-set method
/// (`--mpcc active-set`), whose verdict and counts land in `summary.json`.
#[cfg(feature = "ocp")]
#[test]
fn ocp_on_a_model_file_names_columns_and_writes_the_viewer() {
    let out_dir = scratch("ocp-model");
    run_ok(
        bin()
            .args([
                "ocp",
                example("ocp_particle.toml").to_str().unwrap(),
                "--quiet",
                "--mpcc",
                "active-set",
                "--out",
            ])
            .arg(&out_dir),
    );
    let read = |f: &str| std::fs::read_to_string(out_dir.join(f)).expect(f);
    let header = |f: &str| read(f).lines().next().unwrap_or_default().to_string();
    assert_eq!(header("trajectory_physical_time.csv"), "t,x.q,y.q,x.v,y.v");
    assert_eq!(header("controls.csv"), "t_start,s,force_x");
    let page = read("viewer.html");
    assert!(page.contains("particle: optimal motion"), "viewer title");
    let summary: serde_json::Value = serde_json::from_str(&read("summary.json")).expect("JSON");
    assert_eq!(summary["converged"], serde_json::Value::Bool(true));
    assert_eq!(summary["mpcc_method"], "active-set");
    assert_eq!(
        summary["b_stationary"],
        serde_json::Value::Bool(true),
        "{summary}"
    );
    assert_eq!(summary["comp_residual"].as_f64(), Some(0.0), "{summary}");
    assert!(
        summary["lpec_count"].as_u64().unwrap_or(0) >= 1,
        "{summary}"
    );
    let log: serde_json::Value = serde_json::from_str(&read("active_set.json")).expect("JSON");
    assert!(
        log["log"].as_array().is_some_and(|l| !l.is_empty()),
        "{log}"
    );
}

/// The particle example with the terminal x(T) = `target` reached through the continuation
/// `keys` (the `[ocp.continuation]` lines), written into `dir`.
#[cfg(feature = "ocp")]
fn particle_continuation(dir: &std::path::Path, target: f64, keys: &str) -> std::path::PathBuf {
    let model = example("particle.toml");
    let text = std::fs::read_to_string(example("ocp_particle.toml"))
        .expect("example")
        .replace(
            "model = \"particle.toml\"",
            &format!("model = {:?}", model.to_str().unwrap()),
        )
        .replace("q.x = 3.0", &format!("q.x = {target:?}"))
        .replace(
            "[ocp.terminal]",
            &format!("[ocp.continuation]\n{keys}\n[ocp.terminal]"),
        );
    assert!(text.contains(&format!("q.x = {target:?}")) && text.contains("continuation"));
    std::fs::create_dir_all(dir).expect("scratch dir");
    let file = dir.join("particle_continuation.toml");
    std::fs::write(&file, text).expect("problem file");
    file
}

#[cfg(feature = "ocp")]
#[test]
fn ocp_continuation_reports_each_waypoint_and_reaches_the_target() {
    for (name, mode) in [("homotopy", ""), ("active-set", "\nmode = \"active-set\"")] {
        let out_dir = scratch(&format!("ocp-continuation-{name}"));
        let file = particle_continuation(&out_dir, 4.0, &format!("q.x = [3.0, 3.5]{mode}"));
        let run = bin()
            .args(["ocp", file.to_str().unwrap(), "--json", "--out"])
            .arg(&out_dir)
            .output()
            .expect("runs");
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(run.status.success(), "{stderr}");
        let mut iterations = 0;
        for w in 1..=3 {
            let line = stderr
                .lines()
                .find(|l| l.starts_with(&format!("continuation waypoint {w}/3")))
                .unwrap_or_else(|| panic!("{name}: waypoint {w}: {stderr}"));
            let count = line
                .split(", ")
                .find_map(|f| f.strip_suffix(" IPOPT iterations"));
            iterations += count
                .and_then(|c| c.parse::<u64>().ok())
                .expect("iterations");
        }
        let v: serde_json::Value = serde_json::from_slice(&run.stdout).expect("one JSON document");
        assert!(v["terminal_error"].as_f64().expect("terminal_error") < 1e-8);
        assert!(v["comp_residual"].as_f64().expect("comp_residual") < 1e-9);
        // the summary counts the whole continuation
        assert_eq!(v["nlp_iterations"].as_u64(), Some(iterations), "{name}");
    }
}

#[cfg(feature = "ocp")]
#[test]
fn ocp_continuation_failure_names_the_waypoint_and_writes_the_iterate() {
    let out_dir = scratch("ocp-continuation-fail");
    // x(T) = 100 in T = 2 with |u| ≤ 10 is out of reach: the second waypoint fails
    let file = particle_continuation(&out_dir, 100.0, "q.x = [3.0]");
    let run = bin()
        .args(["ocp", file.to_str().unwrap(), "--out"])
        .arg(&out_dir)
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success());
    assert!(stderr.contains("continuation waypoint 1/2"), "{stderr}");
    assert!(
        stderr.contains("continuation waypoint 2/2 [(0, 100.0)"),
        "{stderr}"
    );
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out_dir.join("summary.json")).expect("summary written"),
    )
    .expect("json");
    assert_eq!(summary["converged"], serde_json::Value::Bool(false));
}

#[test]
fn walk_writes_the_run_its_summary_and_plots_and_names_bad_options() {
    let out = scratch("walk");
    let status = bin()
        .args([
            "walk",
            "--controller",
            "lcp_mu",
            "--terrain",
            "rigid_muinf",
            "--duration",
            "0.5",
            "--quiet",
            "--out",
        ])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["fell"].as_bool(), Some(false));
    assert_eq!(summary["steps"].as_u64(), Some(500));
    // ID(tᵢ)_LCP,μ walks: most of the planned distance, tracking to a few mrad.
    assert!(summary["progress"].as_f64().unwrap() > 0.7, "{summary}");
    assert!(summary["pos_err"].as_f64().unwrap() < 0.01, "{summary}");
    let csv = std::fs::read_to_string(out.join("run.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    assert_eq!(
        header.len(),
        5 + 12,
        "t, errors, Σf_N sensed/predicted, 12 torques"
    );
    // the torques by actuator name
    assert!(
        header[5..]
            .iter()
            .all(|h| h.starts_with("u:") && h.len() > 2),
        "{header:?}"
    );
    let torques = std::fs::read_to_string(out.join("torques.svg")).unwrap();
    assert!(torques.contains(&header[5][2..]) && torques.contains("torque [N·m]"));
    assert_eq!(csv.lines().count(), 1 + 500);
    for f in ["path.csv", "joint_error.svg", "torques.svg", "com_path.svg"] {
        assert!(out.join(f).exists(), "{f}");
    }
    let bad = bin()
        .args(["walk", "--terrain", "ice", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("ice") && err.contains("rigid_mu0_1"), "{err}");
    let cap = bin()
        .args(["walk", "--controller", "pid", "--friction-cap", "0.5"])
        .output()
        .unwrap();
    assert_eq!(cap.status.code(), Some(2));
}

#[cfg(feature = "stability")]
#[test]
fn stability_certifies_a_model_file_and_sweeps_named_parameters() {
    let out_dir = scratch("stability-model");
    let out = run_ok(
        bin()
            .args([
                "stability",
                example("stability_box_on_slope.toml").to_str().unwrap(),
                "--out",
            ])
            .arg(&out_dir),
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["outcome"]["outcome"], "certified", "{v}");
    assert!(out_dir.join("result.json").exists());
    // A sweep over two named parameters writes the map.
    let grid_dir = scratch("stability-grid");
    run_ok(
        bin()
            .args([
                "stability",
                example("stability_box_on_slope.toml").to_str().unwrap(),
                "--quiet",
                "--out",
            ])
            .arg(&grid_dir)
            .args([
                "--grid",
                "materials.rough.friction=0.1,1.0",
                "bodies.block.com.x=0,0.3",
            ]),
    );
    let csv = std::fs::read_to_string(grid_dir.join("grid.csv")).expect("grid.csv");
    assert_eq!(csv.lines().count(), 5, "{csv}");
    assert!(
        csv.contains("no equilibrium") && csv.contains("certified"),
        "{csv}"
    );
    assert!(grid_dir.join("grid.svg").exists());
    // Bad input: an unknown parameter, flags with a model, a model outside the construction.
    let bad = bin()
        .args([
            "stability",
            example("stability_box_on_slope.toml").to_str().unwrap(),
            "--grid",
            "materials.ice.friction=0:1:2",
        ])
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(!bad.status.success() && err.contains("ice"), "{err}");
    let bad = bin()
        .args([
            "stability",
            example("sos_fig2.toml").to_str().unwrap(),
            "--mu1",
            "1",
        ])
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(!bad.status.success() && err.contains("--mu1"), "{err}");
    let bad = bin()
        .args(["stability", example("quadruped.toml").to_str().unwrap()])
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        !bad.status.success() && err.contains("not applicable"),
        "{err}"
    );
}

/// A subcommand or experiment whose cargo feature is off stays listed and stops with exit
/// code 2 and an error naming the feature.
#[test]
fn a_left_out_feature_is_named_by_its_subcommand_and_experiments() {
    let help = bin().arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    for (feature, enabled, subcommand, experiment) in [
        ("ocp", cfg!(feature = "ocp"), "ocp", "tf-hopper-ocp"),
        (
            "stability",
            cfg!(feature = "stability"),
            "stability",
            "sos-fig2",
        ),
    ] {
        assert!(help.contains(&format!("  {subcommand} ")), "{help}");
        if enabled {
            continue;
        }
        let named = format!("cargo feature `{feature}`");
        let out = bin()
            .args([subcommand, "model.toml", "--json", "--out", "x"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(&named), "{stderr}");
        let out_dir = scratch(&format!("left-out-{feature}"));
        let out = bin()
            .args(["reproduce", experiment, "--out"])
            .arg(&out_dir)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(&named), "{stderr}");
        let _ = std::fs::remove_dir_all(&out_dir);
    }
}
