//! Shared test fixtures: the examples directory and short hopper problems on the model file
//! `examples/hopper.toml` (Nurkanović et al. Sec. 6).
#![allow(dead_code)]

use nonsmooth_ocp::model_system::ModelSystem;
use nonsmooth_ocp::problem::ModelProblem;
use std::path::PathBuf;

/// The repository's `examples/` directory.
pub fn examples() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples"))
}

/// A hopper problem's settings ([`hopper_text`]).
pub struct HopperSpec {
    /// Control intervals N.
    pub n: usize,
    /// Physical horizon T.
    pub t: f64,
    /// Terminal hip x.
    pub target_x: f64,
    /// Largest speed of time.
    pub s_max: f64,
    /// Centres of the elliptic holes (semi-axes 0.25 × 0.1).
    pub holes: Vec<f64>,
    /// The authors' clock: terminal clock and one speed of time.
    pub terminal_clock: bool,
    /// Stance stabilization (rate, depth); start and target then rest `depth` lower.
    pub stance: Option<(f64, f64)>,
    /// Lines added to `[fesd]` (after the hopper's settings, which they override).
    pub fesd: String,
}

impl Default for HopperSpec {
    fn default() -> Self {
        Self {
            n: 4,
            t: 2.5,
            target_x: 0.0,
            s_max: 5.0,
            holes: vec![0.5, 1.5, 2.5],
            terminal_clock: false,
            stance: None,
            fesd: String::new(),
        }
    }
}

/// The text of a hopper problem with the bounds, point bounds and holes of
/// `examples/ocp_hopper.toml` and its homotopy settings (n_s = 3, N_FE = 3, cross
/// complementarity on the gap, ρ_sot = 100, Scholtes with κ = 0.1, tol 1e-8).
pub fn hopper_text(spec: &HopperSpec) -> String {
    let depth = spec.stance.map_or(0.0, |s| s.1);
    let z = 0.4 - depth;
    let mut s = format!(
        "[ocp]\nmodel = \"hopper.toml\"\nN = {}\nT = {}\ns_max = {}\n",
        spec.n, spec.t, spec.s_max
    );
    if spec.terminal_clock {
        s += "clock = \"terminal\"\nglobal_speed = true\n";
    }
    s += &format!("[ocp.initial]\nq.base_z = {z}\n");
    s += &format!(
        "[ocp.terminal]\nq.base_x = {}\nq.base_z = {z}\nq.hip_joint = 0.0\nq.knee_joint = 0.0\n",
        spec.target_x
    );
    s += "[ocp.path]\nq.base_x = [-0.05, inf]\nq.base_z = [0.2, 0.55]\n\
          q.hip_joint = [-1.1780972450961724, 1.1780972450961724]\n\
          q.knee_joint = [-1.5707963267948966, 1.5707963267948966]\n\
          [[ocp.path.point]]\nbody = \"shank\"\npoint = [0.0, -0.2, 0.0]\nx = [-0.05, inf]\n\
          [[ocp.path.point]]\nbody = \"thigh\"\npoint = [0.0, -0.2, 0.0]\nx = [-0.05, inf]\n\
          y = [0.05, inf]\n\
          [[ocp.path.point]]\nbody = \"shank\"\npoint = [0.0, -0.2, 0.0]\ny = [-0.005, 0.2]\n";
    for c in &spec.holes {
        s += &format!(
            "[[ocp.path.outside_ellipse]]\nbody = \"shank\"\npoint = [0.0, -0.2, 0.0]\n\
             center = [{c}, 0.0]\naxes = [0.25, 0.1]\n"
        );
    }
    s += "[time_freezing]\na_n = 200.0\n";
    if let Some((rate, depth)) = spec.stance {
        s += &format!("stance_stabilization = {{ rate = {rate}, depth = {depth} }}\n");
    }
    s += "[fesd]\nn_s = 3\nn_fe = 3\ncross_components = 1\nrho_sot = 100.0\n\
          relaxation = \"scholtes\"\nkappa = 0.1\nn_homotopy = 40\nhomotopy_retries = 2\n\
          tol = 1e-8\nmax_iter = 3000\n";
    // later keys of a TOML table may not repeat earlier ones: the overrides replace them
    for line in spec.fesd.lines() {
        let key = line.split('=').next().unwrap_or("").trim();
        let pattern = format!("\n{key} = ");
        if let Some(at) = s.rfind(&pattern) {
            let end = s[at + 1..].find('\n').map_or(s.len(), |e| at + 1 + e);
            s.replace_range(at + 1..end, line);
        } else {
            s += line;
            s += "\n";
        }
    }
    s
}

/// The hopper problem of `spec`, parsed as a file in `examples/`.
pub fn hopper_problem(spec: &HopperSpec) -> ModelProblem {
    parse_in_examples(&hopper_text(spec))
}

/// A problem text parsed as a file in `examples/` (its model path resolves there).
pub fn parse_in_examples(text: &str) -> ModelProblem {
    let source = examples().join("test_problem.toml");
    ModelProblem::from_toml_str(text, Some(&source.display().to_string()))
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The hopper of `examples/hopper.toml` with its two motors, without path constraints.
pub fn hopper_system() -> ModelSystem {
    let model = nonsmooth_core::Model::from_file(examples().join("hopper.toml")).expect("model");
    ModelSystem::new(model, None, &["hip".into(), "knee".into()]).expect("system")
}

/// Gravity of the example models (m/s²).
pub const G: f64 = 9.81;

/// A model file of `examples/` with `edits` (text replacements) applied.
pub fn example_model(file: &str, edits: &[(&str, &str)]) -> nonsmooth_core::Model {
    let path = examples().join(file);
    let mut text = std::fs::read_to_string(&path).expect("example model");
    for (from, to) in edits {
        assert!(text.contains(from), "{file} has no `{from}`");
        text = text.replace(from, to);
    }
    nonsmooth_core::Model::from_toml_str(&text, Some(&path.display().to_string()))
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The guiding particle of Nurkanović et al. Ex. 1–5 (`examples/particle.toml`, 1 kg, frictionless
/// unless `mu`) with the horizontal force only (one control).
pub fn particle(mu: Option<f64>) -> ModelSystem {
    particle_with(mu, &["force_x"])
}

/// The particle with the motors `controls` (`"force_x"`, `"force_y"`).
pub fn particle_with(mu: Option<f64>, controls: &[&str]) -> ModelSystem {
    let friction = format!("friction = {}", mu.unwrap_or(0.0));
    let model = example_model("particle.toml", &[("friction = 0.0", &friction)]);
    let names: Vec<String> = controls.iter().map(|c| c.to_string()).collect();
    ModelSystem::new(model, None, &names).expect("particle system")
}

/// The particle of Ex. 1–4 driven by a horizontal and a vertical force affine in the
/// physical clock: controls (u_x, u_y, r_x, r_y), efforts u + r t
/// ([`ModelSystem::with_clock_rates`]).
pub fn guided_particle(mu: Option<f64>) -> ModelSystem {
    particle_with(mu, &["force_x", "force_y"]).with_clock_rates()
}

/// The 1 kg point of `examples/falling_point.toml` on its vertical slide, no controls.
pub fn falling_point() -> ModelSystem {
    let model = example_model("falling_point.toml", &[]);
    ModelSystem::new(model, None, &[]).expect("falling point")
}

/// The spring-loaded mass of `examples/spring_mass.toml` (ω = 2, spring rest at −1, no
/// gravity, no controls).
pub fn spring_mass() -> ModelSystem {
    let model = example_model("spring_mass.toml", &[]);
    ModelSystem::new(model, None, &[]).expect("spring-mass system")
}

/// Exact time-freezing state (q, v, t) of [`spring_mass`] (q̈ = −ω² (q − q_rest)) at
/// numerical time τ from q(0) = q0 > 0, v(0) = 0 with auxiliary acceleration a_n: cosine
/// fall, frozen jump of length |v⁻|/a_n, then resting on the ground with
/// dt/dτ = a_n/(a_n + ω²|q_rest|) (Nurkanović et al. Thm 4 with D = 1).
pub fn spring_mass_exact(q0: f64, a_n: f64, tau: f64) -> [f64; 3] {
    let (w, r) = (2.0_f64, -1.0_f64);
    let amp = q0 - r;
    let t_imp = (-r / amp).acos() / w;
    if tau <= t_imp {
        return [r + amp * (w * tau).cos(), -amp * w * (w * tau).sin(), tau];
    }
    let v_imp = -amp * w * (w * t_imp).sin();
    let tau_jump = -v_imp / a_n;
    if tau <= t_imp + tau_jump {
        return [0.0, v_imp + a_n * (tau - t_imp), t_imp];
    }
    let gamma = a_n / (a_n + w * w * r.abs());
    [0.0, 0.0, t_imp + gamma * (tau - t_imp - tau_jump)]
}
