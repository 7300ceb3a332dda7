//! `nonsmooth inspect` shows the whole model: every collider with its shape and material,
//! every material's law, every actuator, the initial state by coordinate name and the
//! default stepper with its reason, in the text and in `--json`.

use nonsmooth_core::Model;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name)
}

/// `nonsmooth inspect FILE ARGS…`'s standard output (the command must succeed).
fn inspect(file: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_nonsmooth"))
        .arg("inspect")
        .arg(file)
        .args(args)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// The names in `doc[key][*].name`.
fn names(doc: &Value, key: &str) -> Vec<String> {
    doc[key]
        .as_array()
        .unwrap_or_else(|| panic!("`{key}` is not an array: {doc}"))
        .iter()
        .map(|x| x["name"].as_str().expect("name").to_string())
        .collect()
}

/// Checks the text and the JSON of `file` against the model it loads to.
fn shows_the_whole_model(file: &Path) {
    let model = Model::from_file(file).expect("loads");
    assert!(!model.colliders.is_empty() && !model.actuators.is_empty());
    let text = inspect(file, &[]);
    for c in &model.colliders {
        let material = &model.materials[c.material].name;
        let line = text
            .lines()
            .find(|l| l.contains(&format!("collider `{}`", c.name)))
            .unwrap_or_else(|| panic!("collider {} missing:\n{text}", c.name));
        assert!(
            line.contains(c.shape.kind()) && line.contains(&format!("material `{material}`")),
            "{line}"
        );
    }
    for m in &model.materials {
        let line = text
            .lines()
            .find(|l| l.contains(&format!("material `{}`:", m.name)))
            .unwrap_or_else(|| panic!("material {} missing:\n{text}", m.name));
        assert!(line.contains("μ = "), "{line}");
        assert_eq!(
            line.contains("compliant: K = "),
            m.stiffness.is_some(),
            "{line}"
        );
    }
    for a in &model.actuators {
        let joint = &model.joints[a.joint].name;
        assert!(
            text.contains(&format!("actuator `{}` on joint `{joint}`", a.name)),
            "actuator {} missing:\n{text}",
            a.name
        );
    }
    let dt = model.simulation.dt.unwrap_or(1e-3);
    let choice = nonsmooth_sim::choose_stepper(&model, None, dt);
    assert!(
        text.contains(&format!("default stepper: {}", choice.describe())),
        "{text}"
    );
    // the initial state by coordinate name
    let q_line = text.lines().find(|l| l.starts_with("  q: ")).expect("q");
    for name in model.q_names() {
        assert!(q_line.contains(&format!("{name} = ")), "{name}: {q_line}");
    }

    let doc: Value = serde_json::from_str(&inspect(file, &["--json"])).expect("one JSON document");
    // the keys of earlier versions keep their meaning
    assert_eq!(doc["nq"].as_u64(), Some(model.nq() as u64));
    assert_eq!(
        doc["colliders"].as_u64(),
        Some(model.colliders.len() as u64)
    );
    assert_eq!(
        doc["actuators"].as_array().map(|a| a.len()),
        Some(model.nu())
    );
    assert_eq!(names(&doc, "bodies").len(), model.bodies.len());
    // and the details beside them
    let colliders = &doc["collider_details"];
    for (i, c) in model.colliders.iter().enumerate() {
        assert_eq!(colliders[i]["name"].as_str(), Some(c.name.as_str()));
        assert_eq!(colliders[i]["shape"]["kind"].as_str(), Some(c.shape.kind()));
        assert_eq!(
            colliders[i]["material"].as_str(),
            Some(model.materials[c.material].name.as_str())
        );
    }
    let materials: Vec<String> = model.materials.iter().map(|m| m.name.clone()).collect();
    assert_eq!(names(&doc, "materials"), materials);
    for (i, m) in model.materials.iter().enumerate() {
        assert_eq!(doc["materials"][i]["friction"].as_f64(), Some(m.friction));
    }
    let actuators: Vec<String> = model.actuators.iter().map(|a| a.name.clone()).collect();
    assert_eq!(names(&doc, "actuator_details"), actuators);
    for (i, a) in model.actuators.iter().enumerate() {
        assert_eq!(
            doc["actuator_details"][i]["joint"].as_str(),
            Some(model.joints[a.joint].name.as_str())
        );
        assert_eq!(doc["actuator_details"][i]["gear"].as_f64(), Some(a.gear));
    }
    assert_eq!(names(&doc, "joints").len(), model.joints.len());
    assert_eq!(
        doc["default_stepper"]["name"].as_str(),
        Some(choice.name.as_str())
    );
    assert_eq!(
        doc["default_stepper"]["reason"].as_str(),
        Some(choice.reason.as_str())
    );
    let q = doc["initial_state"]["q"].as_array().expect("q");
    assert_eq!(q.len(), model.nq());
    for (entry, (name, value)) in q
        .iter()
        .zip(model.q_names().iter().zip(model.initial_state.q.iter()))
    {
        assert_eq!(entry["name"].as_str(), Some(name.as_str()));
        assert_eq!(entry["value"].as_f64(), Some(*value));
    }
    assert!(doc["warnings"].is_array() && doc["import_warnings"].is_array());
}

#[test]
fn inspect_shows_the_quadruped_model_file_whole() {
    shows_the_whole_model(&example("quadruped.toml"));
}

#[test]
fn inspect_shows_the_mjcf_quadruped_whole_with_its_servos() {
    let file = example("mjcf/quadruped.xml");
    shows_the_whole_model(&file);
    // MJCF's position servos keep their gains, its motors their gear
    let text = inspect(&file, &[]);
    assert!(
        text.lines()
            .any(|l| l.contains("actuator `fl_hip_servo`") && l.contains("kp = 60")),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.contains("actuator `fl_knee_motor`") && l.contains("gear 20")),
        "{text}"
    );
}
