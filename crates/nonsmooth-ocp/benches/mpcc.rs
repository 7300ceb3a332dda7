//! The relaxation homotopy against the exact active-set method (LPECs by HiGHS, branch NLPs by
//! IPOPT): CPU seconds, objective, complementarity and the LPEC / branch-NLP counts of
//!
//! - the MacMPEC problems of `nonsmooth_solvers::mpcc::macmpec` (homotopy: the Scholtes
//!   relaxation G·H ≤ σ, σ = 1 … 1e-11 by factors of 10, each NLP warm-started from the
//!   last);
//! - the particle OCP of Nurkanović et al. Ex. 5 on its model file (`examples/ocp_particle.toml`);
//! - the hopper of `tf-hopper-ocp --quick` (4 intervals, one hole, the start pose as target).
//!
//! The hopper over its three holes takes ≈ 20 minutes of homotopy: `nonsmooth reproduce
//! tf-hopper-ocp` runs the active-set method from the homotopy's point and writes both
//! methods to its `methods.csv`. Run with `cargo bench -p nonsmooth-ocp --bench mpcc`.

use nonsmooth_ocp::fesd::{solve_ocp, MpccMethod, OcpSolution};
use nonsmooth_ocp::ipopt::thread_cpu_seconds;
use nonsmooth_ocp::problem::ModelProblem;
use nonsmooth_solvers::mpcc::macmpec::cases;
use nonsmooth_solvers::mpcc::relaxed::ScholtesNlp;
use nonsmooth_solvers::mpcc::{solve, ActiveSetSettings, Mpcc};
use nonsmooth_solvers::nlp::ipopt::{solve as ipopt_solve, IpoptOptions, Nlp};
use std::path::Path;

fn line(problem: &str, method: &str, objective: f64, comp: f64, counts: &str, cpu: f64) {
    println!("{problem:<22} {method:<11} {objective:>16.9} {comp:>10.1e} {counts:>14} {cpu:>9.3}");
}

fn macmpec() {
    for case in cases() {
        let mpcc = Mpcc {
            nlp: &case.nlp,
            pairs: case.pairs.clone(),
        };
        let t0 = thread_cpu_seconds();
        let mut options = IpoptOptions::quiet(1e-10, 3000);
        options.num.push(("bound_relax_factor".into(), 0.0));
        let mut x = case.x0.clone();
        for k in 0..12 {
            let Ok(relaxed) = ScholtesNlp::new(&mpcc, 10f64.powi(-k)) else {
                break;
            };
            match ipopt_solve(&relaxed, &relaxed.clamp(&x), None, &options) {
                Ok(s) => x = s.x,
                Err(_) => break,
            }
        }
        let f = case.nlp.objective(&x).unwrap_or(f64::NAN);
        line(
            case.name,
            "homotopy",
            f,
            mpcc.comp_residual(&x),
            "-",
            thread_cpu_seconds() - t0,
        );
        match solve(&mpcc, &case.x0, &ActiveSetSettings::default()) {
            Ok(s) => line(
                case.name,
                "active-set",
                s.solution.objective,
                s.comp_residual,
                &format!(
                    "{}/{} {}",
                    s.lpec_count,
                    s.bnlp_count,
                    if s.verdict.is_b_stationary() {
                        "B"
                    } else {
                        "-"
                    }
                ),
                s.cpu_seconds,
            ),
            Err(e) => println!("{:<22} active-set  failed: {e}", case.name),
        }
    }
}

fn report(problem: &str, method: MpccMethod, sol: Result<OcpSolution, nonsmooth_ocp::OcpError>) {
    let name = match method {
        MpccMethod::Homotopy => "homotopy",
        MpccMethod::ActiveSet => "active-set",
    };
    match sol {
        Ok(s) => {
            let counts = s.active_set.as_ref().map_or("-".to_string(), |a| {
                format!(
                    "{}/{} {}",
                    a.lpec_count,
                    a.bnlp_count,
                    if a.verdict.is_b_stationary() {
                        "B"
                    } else {
                        "-"
                    }
                )
            });
            line(
                problem,
                name,
                s.objective,
                s.comp_residual,
                &counts,
                s.cpu_seconds,
            );
        }
        Err(e) => println!("{problem:<22} {name:<11} failed: {e}"),
    }
}

fn examples() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

fn particle() {
    for method in [MpccMethod::Homotopy, MpccMethod::ActiveSet] {
        let Ok(mut p) = ModelProblem::from_file(&examples().join("ocp_particle.toml")) else {
            println!("particle problem file unreadable");
            return;
        };
        p.options.mpcc.method = method;
        report(
            "particle OCP (Ex. 5)",
            method,
            solve_ocp(&p.tf, &p.horizon, &p.options),
        );
    }
}

/// The hopper of `tf-hopper-ocp --quick` on `examples/hopper.toml`: 4 intervals, one hole,
/// the start pose as target, N_FE = 2, n_s = 1, Scholtes homotopy with polish
/// (`examples/ocp_hopper.toml` cut short).
fn hopper_quick() {
    let Ok(text) = std::fs::read_to_string(examples().join("ocp_hopper.toml")) else {
        println!("hopper problem file unreadable");
        return;
    };
    let hole = "[[ocp.path.outside_ellipse]]";
    let parts: Vec<&str> = text.split(hole).collect();
    let (Some(first), Some(last)) = (parts.get(1), parts.last()) else {
        println!("hopper problem file without holes");
        return;
    };
    let rest = last.find("[time_freezing]").map_or("", |at| &last[at..]);
    let text = format!("{}{hole}{first}{rest}", parts[0])
        .replace("\nN = 20\n", "\nN = 4\n")
        .replace("q.base_x = 3.0", "q.base_x = 0.0")
        .replace("n_s = 3\nn_fe = 3", "n_s = 1\nn_fe = 2");
    let source = examples().join("ocp_hopper.toml").display().to_string();
    let p = match ModelProblem::from_toml_str(&text, Some(&source)) {
        Ok(p) => p,
        Err(e) => {
            println!("hopper problem: {e}");
            return;
        }
    };
    for method in [MpccMethod::Homotopy, MpccMethod::ActiveSet] {
        let mut o = p.options.clone();
        o.mpcc.method = method;
        report("hopper (quick)", method, solve_ocp(&p.tf, &p.horizon, &o));
    }
}

fn main() {
    println!(
        "{:<22} {:<11} {:>16} {:>10} {:>14} {:>9}",
        "problem", "method", "objective", "comp", "LPEC/BNLP", "CPU s"
    );
    macmpec();
    particle();
    hopper_quick();
}
