//! The exact MPCC method (`[mpcc] method = "active-set"`) on the FESD discretization:
//! the particle OCP of Nurkanović et al. Ex. 5 on its model file reaches exact complementarity with
//! a B-stationarity certificate and the homotopy's objective; the `[mpcc]` keys are checked.

use nonsmooth_ocp::fesd::{solve_ocp, MpccMethod};
use nonsmooth_ocp::problem::ModelProblem;
use std::path::{Path, PathBuf};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

fn particle(extra: &str) -> Result<ModelProblem, nonsmooth_ocp::OcpError> {
    let text = std::fs::read_to_string(examples().join("ocp_particle.toml")).unwrap();
    let source = examples().join("edited_problem.toml");
    ModelProblem::from_toml_str(
        &format!("{text}\n{extra}"),
        Some(&source.display().to_string()),
    )
}

#[test]
fn particle_ocp_is_exact_and_certified() {
    let homotopy = particle("").unwrap();
    assert_eq!(homotopy.options.mpcc.method, MpccMethod::Homotopy);
    let reference = solve_ocp(&homotopy.tf, &homotopy.horizon, &homotopy.options).unwrap();
    let p = particle("[mpcc]\nmethod = \"active-set\"\n").unwrap();
    let sol = solve_ocp(&p.tf, &p.horizon, &p.options).unwrap();
    let summary = sol.active_set.as_ref().expect("the active-set method ran");
    println!(
        "homotopy: objective {:.10}, comp {:.1e}; active set: objective {:.10}, comp {:.1e}, \
         {:?}, {} LPECs, {} BNLPs, phase I comp {:.1e}, {:.2} s",
        reference.objective,
        reference.comp_residual,
        sol.objective,
        sol.comp_residual,
        summary.verdict,
        summary.lpec_count,
        summary.bnlp_count,
        summary.phase_one_comp,
        summary.cpu_seconds
    );
    assert!(summary.verdict.is_b_stationary(), "{:?}", summary.verdict);
    assert!(sol.comp_residual <= 1e-12, "{}", sol.comp_residual);
    assert!(sol.terminal_error <= 1e-6, "{}", sol.terminal_error);
    assert!(
        sol.objective <= reference.objective + 1e-6,
        "{} against the homotopy's {}",
        sol.objective,
        reference.objective
    );
}

#[test]
fn mpcc_keys_are_checked() {
    let e = particle("[mpcc]\nmethod = \"exact\"\n").err().unwrap();
    assert!(
        e.to_string().contains("mpcc.") && e.to_string().contains("active-set"),
        "{e}"
    );
    let e = particle("[mpcc]\ntrust_region = -1.0\n").err().unwrap();
    assert!(e.to_string().contains("mpcc.trust_region"), "{e}");
    let e = particle("[mpcc]\ntrust_radius = 1.0\n").err().unwrap();
    assert!(e.to_string().contains("trust_radius"), "{e}");
}
