//! `nonsmooth ocp` with `formulation = "fesd-j"` (the default of a model with several
//! contacts): the problem solved by FESD-J ([`nonsmooth_ocp::fesd_j`]) and its outputs:
//! `trajectory_physical_time.csv` (the state at every element end and just after every
//! boundary's jump), `controls.csv`, `homotopy.json`, `summary.json` (formulation, outcome,
//! complementarity, terminal error, effort, time), `trajectory.svg` and `viewer.html`.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use nonsmooth_ocp::fesd_j::{solve, ImpulseSolution, Outcome};
use nonsmooth_ocp::problem::ModelProblem;
use nonsmooth_report::table::{write_csv, write_json};

use crate::ocp::OcpArgs;
use crate::CliError;

/// Solves `p` by FESD-J and writes its outputs to `args.out`; a problem that is not solved
/// (unreachable, stalled) writes its last point the same way and fails with the reason.
pub fn run(p: &ModelProblem, args: &OcpArgs) -> Result<ExitCode, CliError> {
    if args.start.is_some() || args.mpcc.is_some() {
        return Err(CliError::Usage(
            "--start and --mpcc apply to ocp.formulation = \"time-freezing\"; this problem is \
             solved by \"fesd-j\""
                .into(),
        ));
    }
    let quiet = args.output.quiet;
    let mut o = p.impulse_options.clone();
    o.verbose = o.verbose || !quiet;
    if !quiet {
        eprintln!("{}", p.fesd_j_settings());
    }
    let sys = Arc::new(p.tf.cls.clone());
    let s = solve(&sys, &p.horizon, p.t_final, &o).map_err(|e| CliError::Usage(e.to_string()))?;
    write_outputs(p, &s, &args.out)?;
    if !quiet {
        eprintln!(
            "{}: effort {:.6}, complementarity {:.2e}, terminal error {:.2e}, {} IPOPT iterations, {:.1} s",
            if s.outcome == Outcome::Solved {
                &s.detail
            } else {
                s.outcome.label()
            },
            s.objective,
            s.comp_residual,
            s.terminal_error,
            s.nlp_iterations,
            s.seconds
        );
    }
    if args.output.json {
        outln!("{}", summary(p, &s));
    }
    match s.outcome {
        Outcome::Solved => Ok(ExitCode::SUCCESS),
        _ => Err(CliError::Usage(format!(
            "{}; the last point was written to {}",
            s.detail,
            args.out.display()
        ))),
    }
}

fn summary(p: &ModelProblem, s: &ImpulseSolution) -> serde_json::Value {
    serde_json::json!({
        "formulation": p.formulation.label(),
        "formulation_chosen": p.formulation_chosen,
        "settings": p.fesd_j_settings(),
        "outcome": s.outcome.label(),
        "converged": s.outcome == Outcome::Solved,
        "detail": s.detail,
        "objective": s.objective,
        "comp_residual": s.comp_residual,
        "terminal_error": s.terminal_error,
        "max_impulse": s.max_impulse,
        "nlp_iterations": s.nlp_iterations,
        "nlps": s.log.len(),
        "wall_seconds": s.seconds,
        "controls": p.control_names,
    })
}

fn write_outputs(p: &ModelProblem, s: &ImpulseSolution, dir: &Path) -> Result<(), CliError> {
    let model = p.tf.cls.model();
    let (nq, nv) = (model.nq(), model.nv());
    let mut header = vec!["t".to_string()];
    header.extend(p.state_names.iter().take(nq + nv).cloned());
    let rows: Vec<Vec<f64>> = s
        .samples
        .iter()
        .map(|x| {
            std::iter::once(x.t)
                .chain(x.q.iter().copied())
                .chain(x.v.iter().copied())
                .collect()
        })
        .collect();
    write_csv(&dir.join("trajectory_physical_time.csv"), &header, &rows)?;
    let step = p.t_final / p.horizon.n_steps as f64;
    let mut ch = vec!["t_start".to_string()];
    ch.extend(p.control_names.iter().cloned());
    let crow: Vec<Vec<f64>> =
        s.u.iter()
            .enumerate()
            .map(|(k, u)| {
                std::iter::once(k as f64 * step)
                    .chain(u.iter().copied())
                    .collect()
            })
            .collect();
    write_csv(&dir.join("controls.csv"), &ch, &crow)?;
    write_json(&dir.join("homotopy.json"), &s.log)?;
    write_json(&dir.join("summary.json"), &summary(p, s))?;
    let q: Vec<Vec<f64>> = s.samples.iter().map(|x| x.q.clone()).collect();
    let v: Vec<Vec<f64>> = s.samples.iter().map(|x| x.v.clone()).collect();
    let t: Vec<f64> = s.samples.iter().map(|x| x.t).collect();
    nonsmooth_figures::time_series::trajectory_figure(
        model,
        "Optimal trajectory (FESD-J, physical time)",
        &t,
        &q,
        &v,
    )
    .write_svg(&dir.join("trajectory.svg"))?;
    // the viewer plays strictly increasing times: the state after each jump replaces the one
    // before it
    let mut states: Vec<nonsmooth_core::State> = vec![];
    for x in &s.samples {
        let state = nonsmooth_core::State {
            q: nalgebra::DVector::from_column_slice(&x.q),
            v: nalgebra::DVector::from_column_slice(&x.v),
            t: x.t,
        };
        match states.last_mut() {
            Some(last) if x.t <= last.t + 1e-12 => *last = state,
            _ => states.push(state),
        }
    }
    let traj = nonsmooth_figures::viewer::trajectory_of(model, "optimal control (fesd-j)", &states);
    let scene =
        nonsmooth_figures::viewer::scene(model, &traj, format!("{}: optimal motion", model.name));
    nonsmooth_report::viewer::write_viewer_html(&dir.join("viewer.html"), &scene)?;
    Ok(())
}
