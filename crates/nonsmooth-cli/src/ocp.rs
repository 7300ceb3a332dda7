//! `nonsmooth ocp PROBLEM.toml --out DIR`: optimal control of a model file's system through
//! impacts by time-freezing, FESD and an MPCC homotopy over IPOPT, or, with
//! `[ocp] formulation = "fesd-j"` (the default of a model with several contacts), by FESD-J
//! (`ocp_impulse`).
//!
//! Problem files: see `nonsmooth_ocp::problem`, `examples/ocp_ball_brake.toml` and
//! `examples/ocp_hopper.toml` (`[ocp] model = "hopper.toml"`). Outputs: trajectory CSVs in
//! numerical and physical time, controls CSV, homotopy log and summary JSON, plots
//! (trajectory, controls), the offline trajectory viewer `viewer.html`, the motion's
//! metrics `motion.json` and, for a planar model, the animation frame strip `frames.svg` and the NLP's
//! primal point `point.json` (`{"variables": n, "x": [...]}`, rewritten after every
//! converged NLP while the run goes on, so an interrupted run leaves its last converged
//! point), from which `--start` runs the homotopy again (e.g. another σ₀ or κ after a long
//! smoothing phase). When the homotopy
//! stalls or IPOPT fails, the last iterate is written the same way (summary with
//! `"converged": false`) and the command fails with the typed error's message.

use crate::CliError;
use clap::Args;
use nonsmooth_figures::optimal_control::{frame_strip, obstacle_outline};
use nonsmooth_figures::time_series::{
    actuator_quantity, panels, trajectory_figure, Quantity, Signal, MAX_PANELS_PER_COLUMN,
};
use nonsmooth_ocp::fesd::{comp_products, CompProduct, FesdOptions, Horizon, Layout, OcpSolution};
use nonsmooth_ocp::model_system::ModelSystem;
use nonsmooth_ocp::problem::{Formulation, ModelProblem};
use nonsmooth_ocp::run::{Problem, Run};
use nonsmooth_ocp::time_freezing::physical_time_states;
use nonsmooth_ocp::OcpError;
use nonsmooth_report::staircase;
use nonsmooth_report::table::{write_csv, write_csv_cells, write_json};
use nonsmooth_report::{Figure, PanelFigure, Series};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `nonsmooth ocp`.
#[derive(Args, Clone)]
pub struct OcpArgs {
    /// Problem file (TOML).
    pub problem: PathBuf,
    /// Output directory.
    #[arg(long, default_value = "ocp-out")]
    pub out: PathBuf,
    /// Start the MPCC homotopy from this point (a `point.json` that an earlier run of the
    /// same problem wrote, converged or not, or stopped: it holds the last converged NLP's
    /// point during a run), skipping the smoothing phase and model growth; the problem
    /// file's `[fesd]` homotopy settings (σ₀, κ, N_homotopy) apply. A point of the same
    /// problem with fewer elements per interval (`n_fe` a divisor of the file's) is first
    /// refined onto the file's mesh. With the active-set method the point is phase I's
    /// result: it is projected onto a branch at once, without a homotopy.
    #[arg(long)]
    pub start: Option<PathBuf>,
    /// The MPCC method, overriding the problem file's `[mpcc] method`: `homotopy` (the
    /// relaxation homotopy) or `active-set` (the homotopy as phase I, then the active-set
    /// method with LPECs: exact complementarity and a B-stationarity verdict, written to
    /// `summary.json` and `active_set.json`).
    #[arg(long, value_parser = ["homotopy", "active-set"])]
    pub mpcc: Option<String>,
    /// --quiet (no summary line) / --json (print summary.json on standard output).
    #[command(flatten)]
    pub output: crate::progress::OutputFlags,
}

/// Runs the subcommand: solves the problem file ([`nonsmooth_ocp::run::run`]) and writes the
/// outputs; on a failure with a last iterate that iterate is written and the typed error is
/// the command's failure.
pub fn run(args: &OcpArgs) -> Result<ExitCode, CliError> {
    let usage = |e: OcpError| CliError::Usage(e.to_string());
    let p = ModelProblem::from_file(&args.problem).map_err(usage)?;
    std::fs::create_dir_all(&args.out)
        .map_err(|e| CliError::Usage(format!("{}: {e}", args.out.display())))?;
    if p.formulation == Formulation::FesdJ {
        return crate::ocp_impulse::run(&p, args);
    }
    let quiet = args.output.quiet;
    let plan = p.continuation.as_ref();
    // progress: one line per NLP (smoothing phase, homotopy, polish) on standard error;
    // point.json holds the last converged NLP point while the run goes on (without a
    // continuation plan, whose waypoints are other problems)
    let o = &{
        let mut o = p.options.clone();
        if let Some(m) = &args.mpcc {
            o.mpcc.method = nonsmooth_ocp::fesd::MpccMethod::from_name(m).map_err(usage)?;
        }
        o.nlp.verbose = o.nlp.verbose || !quiet;
        o.nlp.checkpoint = plan.is_none().then(|| args.out.join("point.json"));
        o
    };
    let problem = Problem {
        options: o,
        ..Problem::of(&p)
    };
    let settings = problem.settings();
    if !quiet {
        eprintln!(
            "formulation time-freezing{}: {settings}",
            p.formulation_reason()
        );
    }
    let progress = &mut |w: usize, sol: &OcpSolution| {
        if !quiet {
            eprintln!(
                "continuation waypoint {}/{}: objective {:.6}, complementarity {:.2e}, {} IPOPT iterations, {:.1} s CPU",
                w + 1,
                plan.map_or(1, |p| p.waypoints.len()),
                sol.objective,
                sol.comp_residual,
                sol.nlp_iterations,
                sol.cpu_seconds
            );
        }
    };
    let start = args.start.as_deref().map(read_point).transpose()?;
    let outcome = nonsmooth_ocp::run::run(&problem, start.as_deref(), progress)
        .map_err(|f| CliError::Usage(f.to_string()))?;
    let names = Names {
        state: p.state_names.clone(),
        controls: p.control_names.clone(),
    };
    let sol = &outcome.solution;
    write_outputs(&p, &names, &settings, &outcome, args)?;
    model_viewer(&p.tf.cls, sol, &args.out)?;
    motion_figures(&p.tf.cls, &p.horizon, sol, &args.out)?;
    let products = write_complementarity(&sol.layout, &sol.x, o, &args.out)?;
    match &outcome.failure {
        None => Ok(ExitCode::SUCCESS),
        Some(failure) => {
            let proved = matches!(failure.error, OcpError::ProvedUnreachable { .. });
            if !quiet && !proved {
                for p in products.iter().take(5) {
                    eprintln!(
                        "complementarity {:.3e} at interval {}, element {}, stage {}, point {}, switching function {} ({})",
                        p.value, p.interval, p.element, p.stage, p.point, p.switch, p.side
                    );
                }
            }
            let budget = outcome.time_limit_reached.map_or(String::new(), |t| {
                format!(" (the wall-time budget of {t} s, [fesd] time_limit, ran out)")
            });
            Err(CliError::Usage(format!(
                "{failure}{budget}; the last iterate was written to {}",
                args.out.display()
            )))
        }
    }
}

/// `viewer.html`: the optimal motion of a model-file problem in the offline trajectory viewer
/// (the stage points in physical time; frozen impact phases collapse to their end), with the
/// outlines of the `outside_ellipse` obstacles.
fn model_viewer(sys: &ModelSystem, sol: &OcpSolution, dir: &Path) -> Result<(), CliError> {
    use nonsmooth_report::viewer::{ViewerShape, ViewerShapeKind, IDENTITY_POSE};
    let model = sys.model();
    let states = physical_time_states(model.nq(), model.nv(), &sol.traj.y);
    let traj = nonsmooth_figures::viewer::trajectory_of(model, "optimal control", &states);
    let mut scene =
        nonsmooth_figures::viewer::scene(model, &traj, format!("{}: optimal motion", model.name));
    let outline = obstacle_outline(sys);
    if !outline.is_empty() {
        scene.shapes.push(ViewerShape {
            name: "obstacles".into(),
            body: None,
            offset: IDENTITY_POSE,
            kind: ViewerShapeKind::Points { points: outline },
        });
    }
    nonsmooth_report::viewer::write_viewer_html(&dir.join("viewer.html"), &scene)?;
    Ok(())
}

/// Column names of the outputs: the state y = (q, v, t) and the controls.
struct Names {
    state: Vec<String>,
    controls: Vec<String>,
}

/// Writes `complementarity.csv`: every complementarity product above the tolerance
/// `o.comp_tol`, largest first, with its interval, element, stage, multiplier point,
/// switching function and side ([`comp_products`]); returns them.
fn write_complementarity(
    layout: &Layout,
    x: &[f64],
    o: &FesdOptions,
    dir: &Path,
) -> Result<Vec<CompProduct>, CliError> {
    let mut products: Vec<CompProduct> = comp_products(layout, x, o.discretization.fesd)
        .into_iter()
        .filter(|p| p.value > o.mpcc.comp_tol)
        .collect();
    products.sort_by(|a, b| b.value.total_cmp(&a.value));
    let header = [
        "value", "interval", "element", "stage", "point", "switch", "side",
    ]
    .map(String::from);
    let rows: Vec<Vec<String>> = products
        .iter()
        .map(|p| {
            vec![
                format!("{:e}", p.value),
                p.interval.to_string(),
                p.element.to_string(),
                p.stage.to_string(),
                p.point.to_string(),
                p.switch.to_string(),
                p.side.to_string(),
            ]
        })
        .collect();
    write_csv_cells(&dir.join("complementarity.csv"), &header, &rows)?;
    Ok(products)
}

/// The optimal trajectory in physical time (`rows`: t, then the state's columns `header[1..]`):
/// the model's coordinates and velocities in panels of one unit each
/// ([`trajectory_figure`]), or every column on one axis where the state is not the model's
/// (q, v).
fn trajectory_plot(
    model: &nonsmooth_core::Model,
    header: &[String],
    rows: &[Vec<f64>],
) -> PanelFigure {
    let title = "Optimal trajectory (physical time)";
    let (nq, nv) = (model.nq(), model.nv());
    if header.len() == 1 + nq + nv {
        let t: Vec<f64> = rows.iter().map(|r| r[0]).collect();
        let q: Vec<Vec<f64>> = rows.iter().map(|r| r[1..1 + nq].to_vec()).collect();
        let v: Vec<Vec<f64>> = rows.iter().map(|r| r[1 + nq..].to_vec()).collect();
        return trajectory_figure(model, title, &t, &q, &v);
    }
    let mut fig = Figure::new(title, "t [s]", "state");
    for (i, name) in header.iter().enumerate().skip(1) {
        fig = fig.with(Series::line(
            name.clone(),
            rows.iter().map(|r| (r[0], r[i])).collect(),
        ));
    }
    PanelFigure::new(title).with_column(vec![fig])
}

/// The controls (the first and every further one that is not identically zero), named after
/// their actuators, in panels of forces (N) and torques (N·m), and the speed of time s in a
/// panel of its own; piecewise constant over the control intervals.
fn controls_plot(model: &nonsmooth_core::Model, names: &Names, sol: &OcpSolution) -> PanelFigure {
    let mut signals = Vec::new();
    for (i, name) in names.controls.iter().enumerate() {
        if i == 0 || sol.u.iter().any(|u| u.get(i).is_some_and(|x| *x != 0.0)) {
            let actuator = model.actuators.iter().position(|a| &a.name == name);
            let quantity = actuator.map_or(
                Quantity {
                    name: "control",
                    unit: "",
                },
                |a| actuator_quantity(model, a),
            );
            // grouped (and the panel titled) by the driven joint, as `nonsmooth walk`'s torques
            let group = actuator
                .and_then(|a| model.joints.get(model.actuators[a].joint))
                .map_or_else(|| name.clone(), |j| j.name.clone());
            signals.push(Signal {
                name: name.clone(),
                group,
                quantity,
                points: staircase(
                    &sol.interval_clock,
                    sol.u.iter().map(|u| u.get(i).copied().unwrap_or(f64::NAN)),
                ),
            });
        }
    }
    signals.push(Signal {
        name: "s".into(),
        group: "s".into(),
        quantity: Quantity {
            name: "speed of time",
            unit: "",
        },
        points: staircase(&sol.interval_clock, sol.s.iter().copied()),
    });
    let p = panels(signals, "t [s]", MAX_PANELS_PER_COLUMN);
    PanelFigure::new("Controls and speed of time").with_column(p.figures)
}

/// Reads a start point written by [`write_outputs`] (`point.json`).
fn read_point(file: &Path) -> Result<Vec<f64>, CliError> {
    let bad = |why: String| CliError::Usage(format!("{}: {why}", file.display()));
    let text = std::fs::read_to_string(file).map_err(|e| bad(e.to_string()))?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    let entries = value
        .get("x")
        .and_then(|x| x.as_array())
        .ok_or_else(|| bad("no array field `x`".into()))?;
    entries
        .iter()
        .enumerate()
        .map(|(i, v)| {
            v.as_f64()
                .ok_or_else(|| bad(format!("x[{i}] is not a number ({v})")))
        })
        .collect()
}

/// For a planar model, the frame strip of the motion (`frames.svg`, the figure of
/// `tf-hopper-ocp`); for every model the motion's metrics (`motion.json`: the number of
/// flight phases, contact gap above 1 mm, as `tf-hopper-ocp` counts hops, and
/// [`ModelSystem::min_obstacle_clearance`] over the stage points, null without obstacles).
fn motion_figures(
    sys: &ModelSystem,
    hz: &Horizon,
    sol: &OcpSolution,
    dir: &Path,
) -> Result<(), CliError> {
    if sys.model().dimension == nonsmooth_core::Dimension::Planar {
        // the ground drawn past the farthest x the first contact point reaches
        let nq = sys.model().nq();
        let x_end = sol
            .traj
            .y
            .iter()
            .map(|y| sys.contact_point(&y[..nq])[0])
            .fold(0.0, f64::max);
        frame_strip(sys, x_end, hz.n_steps, sol).write_svg(&dir.join("frames.svg"))?;
    }
    let metrics = serde_json::json!({
        "flight_phases": sys.flight_phases(&sol.traj.y, 1e-3),
        "min_obstacle_clearance": sys.min_obstacle_clearance(&sol.traj.y),
    });
    write_json(&dir.join("motion.json"), &metrics)?;
    Ok(())
}

/// Writes the CSVs, the homotopy log, the summary and the plots of a (partial) solution of a
/// problem on `model`.
fn write_outputs(
    p: &ModelProblem,
    names: &Names,
    settings: &nonsmooth_ocp::problem::RunSettings,
    outcome: &Run,
    args: &OcpArgs,
) -> Result<(), CliError> {
    let sol = &outcome.solution;
    let (ny, n) = (names.state.len(), settings.intervals);
    let mut header = vec!["tau".to_string()];
    header.extend(names.state.iter().cloned());
    let rows: Vec<Vec<f64>> = sol
        .traj
        .tau
        .iter()
        .zip(&sol.traj.y)
        .map(|(t, y)| std::iter::once(*t).chain(y.iter().copied()).collect())
        .collect();
    write_csv(
        &args.out.join("trajectory_numerical_time.csv"),
        &header,
        &rows,
    )?;
    // physical time: keep the points where the clock advances (frozen intervals collapse)
    let mut phys = vec![];
    let mut last_t = f64::NEG_INFINITY;
    for y in &sol.traj.y {
        if y[ny - 1] > last_t + 1e-12 {
            last_t = y[ny - 1];
            phys.push(
                std::iter::once(y[ny - 1])
                    .chain(y[..ny - 1].iter().copied())
                    .collect(),
            );
        }
    }
    let mut ph = header.clone();
    ph[0] = "t".into();
    ph.pop();
    write_csv(&args.out.join("trajectory_physical_time.csv"), &ph, &phys)?;
    let mut ch = vec!["t_start".to_string(), "s".to_string()];
    ch.extend(names.controls.iter().cloned());
    let crow: Vec<Vec<f64>> = (0..n)
        .map(|k| {
            [sol.interval_clock[k], sol.s[k]]
                .into_iter()
                .chain(sol.u[k].iter().copied())
                .collect()
        })
        .collect();
    write_csv(&args.out.join("controls.csv"), &ch, &crow)?;
    write_json(&args.out.join("homotopy.json"), &sol.log)?;
    let mut summary = serde_json::json!({
        "formulation": "time-freezing",
        "formulation_chosen": p.formulation_chosen,
        "objective": sol.objective,
        "terminal_error": sol.terminal_error,
        "comp_residual": sol.comp_residual,
        "nlp_iterations": sol.nlp_iterations,
        "cpu_seconds": sol.cpu_seconds,
        "converged": outcome.solved(),
        "outcome": outcome.outcome(),
        "time_limit_reached": outcome.time_limit_reached.is_some(),
        "mpcc_method": settings.mpcc_method,
        "settings": settings,
    });
    if let Some(OcpError::Unreachable { detail, .. }) = outcome.failure.as_ref().map(|f| &f.error) {
        summary["binding"] = serde_json::to_value(&detail.binding)
            .map_err(|e| CliError::Usage(format!("summary: {e}")))?;
    }
    if let Some(a) = &sol.active_set {
        summary["b_stationary"] = serde_json::json!(a.verdict.is_b_stationary());
        summary["verdict"] = serde_json::to_value(&a.verdict)
            .map_err(|e| CliError::Usage(format!("summary: {e}")))?;
        summary["lpec_count"] = serde_json::json!(a.lpec_count);
        summary["bnlp_count"] = serde_json::json!(a.bnlp_count);
        summary["phase_one_comp"] = serde_json::json!(a.phase_one_comp);
        write_json(&args.out.join("active_set.json"), a)?;
    }
    write_json(&args.out.join("summary.json"), &summary)?;
    let point = serde_json::json!({ "variables": sol.x.len(), "x": sol.x });
    write_json(&args.out.join("point.json"), &point)?;
    trajectory_plot(p.tf.cls.model(), &ph, &phys).write_svg(&args.out.join("trajectory.svg"))?;
    controls_plot(p.tf.cls.model(), names, sol).write_svg(&args.out.join("controls.svg"))?;
    if args.output.json {
        outln!("{summary}");
    } else if !args.output.quiet {
        outln!(
            "objective {:.6}, terminal error {:.2e}, complementarity {:.2e}, {} IPOPT iterations, {:.3} s",
            sol.objective,
            sol.terminal_error,
            sol.comp_residual,
            sol.nlp_iterations,
            sol.cpu_seconds
        );
        if let Some(a) = &sol.active_set {
            outln!(
                "active set: {}, {} LPECs, {} branch NLPs (phase I ended at complementarity {:.2e})",
                a.verdict,
                a.lpec_count,
                a.bnlp_count,
                a.phase_one_comp
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hopper problem cut short (one relaxed NLP, which cannot reach the complementarity
    /// tolerance) fails with the typed error's message and still writes every output, the
    /// summary saying `converged: false` and `homotopy.json` the log of the NLPs solved.
    #[test]
    fn stalled_hopper_writes_the_partial_solution() {
        let dir = std::env::temp_dir().join(format!("nonsmooth-ocp-cli-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let examples = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples");
        let text = std::fs::read_to_string(format!("{examples}/ocp_hopper.toml"))
            .unwrap()
            .replace("\nN = 20\n", "\nN = 2\n")
            .replace("q.base_x = 3.0", "q.base_x = 0.0")
            .replace("center = [1.5, 0.0]", "center = [0.5, 0.0]")
            .replace("center = [2.5, 0.0]", "center = [0.5, 0.0]")
            .replace("n_s = 3\nn_fe = 3", "n_s = 1\nn_fe = 1")
            .replace("n_homotopy = 40", "n_homotopy = 1");
        std::fs::copy(format!("{examples}/hopper.toml"), dir.join("hopper.toml")).unwrap();
        let problem = dir.join("problem.toml");
        std::fs::write(&problem, &text).unwrap();
        let args = OcpArgs {
            problem,
            out: dir.join("out"),
            start: None,
            mpcc: None,
            output: crate::progress::OutputFlags {
                quiet: true,
                json: false,
            },
        };
        let err = run(&args).err().unwrap().to_string();
        assert!(err.contains("homotopy stalled"), "{err}");
        for f in [
            "trajectory_numerical_time.csv",
            "trajectory_physical_time.csv",
            "controls.csv",
            "homotopy.json",
            "summary.json",
            "trajectory.svg",
            "controls.svg",
            "frames.svg",
            "motion.json",
            "viewer.html",
            "point.json",
            "complementarity.csv",
        ] {
            assert!(args.out.join(f).exists(), "{f} missing");
        }
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(args.out.join("summary.json")).unwrap())
                .unwrap();
        assert_eq!(summary["converged"], serde_json::Value::Bool(false));
        assert!(summary["comp_residual"].as_f64().unwrap() > 1e-9);
        let motion: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(args.out.join("motion.json")).unwrap())
                .unwrap();
        assert!(motion["flight_phases"].is_u64(), "{motion}");
        assert!(motion["min_obstacle_clearance"].is_f64(), "{motion}");
        // The log of the NLPs solved before the stall (here the one relaxed NLP) is kept.
        let log: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(args.out.join("homotopy.json")).unwrap())
                .unwrap();
        assert_eq!(log.as_array().map(Vec::len), Some(1), "{log}");
        resuming_from_the_written_point_finishes_the_homotopy(&args, &text);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Writes `text` as `dir/NAME.toml`, runs it with `--start point` into `dir/NAME` and
    /// checks that the homotopy converged (complementarity ≤ comp_tol).
    fn resume_converges(
        dir: &Path,
        name: &str,
        text: &str,
        point: &Path,
        like: &OcpArgs,
    ) -> OcpArgs {
        let problem = dir.join(format!("{name}.toml"));
        std::fs::write(&problem, text).unwrap();
        let args = OcpArgs {
            problem,
            out: dir.join(name),
            mpcc: None,
            start: Some(point.to_path_buf()),
            output: like.output,
        };
        run(&args).unwrap();
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(args.out.join("summary.json")).unwrap())
                .unwrap();
        assert_eq!(summary["converged"], serde_json::Value::Bool(true));
        assert!(
            summary["comp_residual"].as_f64().unwrap() <= 1e-9,
            "{summary}"
        );
        args
    }

    /// `--start` from the stalled run's `point.json`, with the full homotopy, converges; the
    /// same point given to the problem with two elements per interval (one before) is refined
    /// onto that mesh and converges there too, its written point the finer NLP's length; a
    /// start point of the wrong length or with a non-number is refused with the file's name
    /// and what is wrong.
    fn resuming_from_the_written_point_finishes_the_homotopy(stalled: &OcpArgs, text: &str) {
        let dir = stalled.out.parent().unwrap();
        let point = stalled.out.join("point.json");
        let full = text.replace("\nn_homotopy = 1", "");
        let args = resume_converges(dir, "resumed", &full, &point, stalled);
        let fine = full.replace("\nn_fe = 1", "\nn_fe = 2");
        let refined = resume_converges(dir, "refined", &fine, &point, stalled);
        let length = |p: &Path| read_point(p).unwrap().len();
        assert!(
            length(&refined.out.join("point.json")) > length(&point),
            "the refined NLP has more variables"
        );
        for (content, why) in [
            (r#"{"x": [0.0, 1.0, 2.0]}"#, "3 entries"),
            (r#"{"x": [0.0, "a"]}"#, "x[1] is not a number"),
            (r#"{"y": []}"#, "no array field `x`"),
        ] {
            let bad = dir.join("bad_point.json");
            std::fs::write(&bad, content).unwrap();
            let args = OcpArgs {
                mpcc: None,
                start: Some(bad),
                ..args.clone()
            };
            let err = run(&args).err().unwrap().to_string();
            assert!(err.contains(why), "{err}");
        }
    }
}
