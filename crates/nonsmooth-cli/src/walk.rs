//! `nonsmooth walk [MODEL.toml] --controller ID --terrain ID [--duration S] [--duty D]
//! [--friction-cap MU] [--time-of-contact] --out DIR`: one closed-loop trot of the quadruped
//! of Zapolsky & Drumwright (2017, §7) under one controller on one terrain, simulated by
//! nonsmooth's own steppers at 1 ms, as the `id-*` experiments of `nonsmooth reproduce` run
//! it (crate `nonsmooth-control`, `docs/locomotion.md`).
//!
//! Writes `run.csv` (per control step: tracking errors, sensed and predicted Σf_N, the
//! applied torques), `path.csv` (trunk and centre of mass every 10 steps), `summary.json`
//! (the metrics of Tables 3–6 for this run: errors, fall, chatter, travelled distance, torque
//! smoothness, force-prediction error) and the plots `joint_error.svg`, `torques.svg` and
//! `com_path.svg`. A fall is a result (reported in the summary), not an error.
//!
//! MODEL defaults to the reference quadruped `examples/id_quadruped.toml`; another model must
//! keep its floating trunk and the trot planner's leg geometry (hips at (±0.10, ±0.06) m,
//! 0.1 m segments, 12 actuated joints in the order FL, FR, HL, HR).

use crate::progress::{Log, OutputFlags};
use crate::CliError;
use clap::Args;
use nonsmooth_control::locomotion::{reference_quadruped, run_trot, LoopRecord, Terrain, TrotSpec};
use nonsmooth_core::Model;
use nonsmooth_report::table::{write_csv, write_json};
use nonsmooth_report::{Figure, Series};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

#[derive(Args)]
pub struct WalkArgs {
    /// Quadruped model file (default: the reference quadruped, examples/id_quadruped.toml).
    pub model: Option<PathBuf>,
    /// Controller: qp_mu, qp_inf, lcp_mu, lcp_inf, pid, delay1 or delay2.
    #[arg(long, default_value = "qp_mu")]
    pub controller: String,
    /// Terrain: rigid_mu0_1, rigid_muinf, compliant_mu0_1, compliant_muinf or heightmap_rigid.
    #[arg(long, default_value = "rigid_mu0_1")]
    pub terrain: String,
    /// Simulated time in s (the paper runs 30 s).
    #[arg(long, default_value_t = 3.0)]
    pub duration: f64,
    /// Duty factor of the trot (0.75: the paper's walk; 0.5: the two-foot gait).
    #[arg(long, default_value_t = 0.75)]
    pub duty: f64,
    /// Largest friction coefficient an ID(tᵢ) controller assumes (default: the authors' 1.5).
    #[arg(long)]
    pub friction_cap: Option<f64>,
    /// Split plant steps at the time of contact (landings as impacts at the contact instant).
    #[arg(long)]
    pub time_of_contact: bool,
    /// ID(tᵢ) controllers: desired accelerations from the velocity after the frictionless
    /// inelastic impact of the landing feet (no torque spent on landings).
    #[arg(long)]
    pub impact_consistent: bool,
    /// Output directory.
    #[arg(long, default_value = "walk-out")]
    pub out: PathBuf,
    #[command(flatten)]
    pub output: OutputFlags,
}

fn usage(e: impl std::fmt::Display) -> CliError {
    CliError::Usage(e.to_string())
}

fn load_model(path: Option<&Path>) -> Result<Model, CliError> {
    Ok(match path {
        Some(p) => Model::from_file(p)?,
        None => reference_quadruped()?,
    })
}

pub fn run(args: &WalkArgs) -> Result<ExitCode, CliError> {
    let model = load_model(args.model.as_deref())?;
    let spec = TrotSpec {
        controller: args.controller.clone(),
        terrain: args.terrain.clone(),
        duration: args.duration,
        duty: args.duty,
        friction_cap: args.friction_cap,
        time_of_contact: args.time_of_contact,
        impact_consistent: args.impact_consistent,
    };
    let log = Log::new(1, "walk", args.output.quiet || args.output.json);
    log.start(&format!(
        "{} on {} for {} s",
        args.controller, args.terrain, args.duration
    ));
    let start = Instant::now();
    let run = run_trot(&model, &spec).map_err(usage)?;
    let wall = start.elapsed().as_secs_f64();
    log.advance();
    log.finish();
    std::fs::create_dir_all(&args.out)
        .map_err(|e| usage(format!("{}: {e}", args.out.display())))?;
    let rec = &run.record;
    let dt = run.options.dt;
    let summary = summary(args, &run.terrain, rec, dt, wall);
    write_outputs(&args.out, &model, rec)?;
    write_json(&args.out.join("summary.json"), &summary)?;
    if args.output.json {
        outln!("{summary}");
    } else if !args.output.quiet {
        outln!(
            "{} on {}: {} after {:.2} s simulated, position error {:.4} rad, travelled {:.3} m of {:.3} m, chatter {:.3}, {:.2} s wall → {}",
            args.controller,
            run.terrain.id,
            match rec.fell {
                Some(t) => format!("fell at {t:.3} s"),
                None => "walked".into(),
            },
            rec.t.last().map_or(0.0, |t| t + dt),
            rec.mean_pos_err(),
            rec.travel,
            rec.planned_travel,
            rec.chatter_fraction,
            wall,
            args.out.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn summary(
    args: &WalkArgs,
    terrain: &Terrain,
    rec: &LoopRecord,
    dt: f64,
    wall: f64,
) -> serde_json::Value {
    let force = rec.force_error();
    serde_json::json!({
        "controller": args.controller,
        "terrain": terrain.id,
        "stepper": terrain.stepper(),
        "friction": terrain.friction,
        "duration": args.duration,
        "duty": args.duty,
        "friction_cap": args.friction_cap,
        "time_of_contact": args.time_of_contact,
        "impact_consistent": args.impact_consistent,
        "dt": dt,
        "steps": rec.t.len(),
        "pos_err": rec.mean_pos_err(),
        "vel_err": rec.mean_vel_err(),
        "fell": rec.fell.is_some(),
        "fell_at": rec.fell,
        "fall_reason": rec.fall_reason,
        "chatter_fraction": rec.chatter_fraction,
        "chattered": rec.chattered,
        "longest_reversal_run": rec.longest_reversal_run,
        "travel": rec.travel,
        "planned_travel": rec.planned_travel,
        "progress": rec.progress(),
        "mean_dtau": rec.mean_dtau(dt),
        "mean_tau": rec.mean_tau(),
        "force_err_abs": force.map(|f| f.0),
        "force_err_rel": force.map(|f| f.1),
        "wall_seconds": wall,
        "files": ["run.csv", "path.csv", "summary.json", "joint_error.svg", "torques.svg", "com_path.svg"],
    })
}

fn write_outputs(out: &Path, model: &Model, rec: &LoopRecord) -> Result<(), CliError> {
    let nu = rec.torques.first().map_or(0, |u| u.len());
    let mut header: Vec<String> = [
        "t",
        "pos_err",
        "vel_err",
        "sensed_normal",
        "predicted_normal",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // the torques by actuator name (`u:<actuator>`)
    header.extend((0..nu).map(|j| match model.actuators.get(j) {
        Some(a) => format!("u:{}", a.name),
        None => format!("u{j}"),
    }));
    let rows: Vec<Vec<f64>> = (0..rec.torques.len())
        .map(|k| {
            let mut row = vec![
                rec.t[k],
                rec.pos_err[k],
                rec.vel_err[k],
                rec.sensed_normal[k],
                rec.predicted_normal[k].unwrap_or(f64::NAN),
            ];
            row.extend(rec.torques[k].iter());
            row
        })
        .collect();
    write_csv(&out.join("run.csv"), &header, &rows)?;
    let path_header: Vec<String> = [
        "t", "trunk_x", "trunk_y", "trunk_z", "com_x", "com_y", "com_z",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let path_rows: Vec<Vec<f64>> = rec
        .frames
        .iter()
        .zip(&rec.com)
        .map(|((t, trunk, _), (_, com))| vec![*t, trunk.x, trunk.y, trunk.z, com.x, com.y, com.z])
        .collect();
    write_csv(&out.join("path.csv"), &path_header, &path_rows)?;
    let t = rec.t.iter().take(rec.torques.len()).copied();
    let mut err = Figure::new("Mean joint position error", "t [s]", "|θ − θ_des| [rad]");
    err.series.push(Series::line(
        "position",
        t.clone().zip(rec.pos_err.iter().copied()).collect(),
    ));
    err.write_svg(&out.join("joint_error.svg"))?;
    let times: Vec<f64> = t.collect();
    nonsmooth_figures::time_series::actuator_figure(
        model,
        "Applied torques",
        &times,
        &rec.torques,
        nu,
    )
    .write_svg(&out.join("torques.svg"))?;
    let mut com = Figure::new("Centre-of-mass path", "x [m]", "y [m]");
    com.series.push(Series::line(
        "CoM",
        rec.com.iter().map(|(_, c)| (c.x, c.y)).collect(),
    ));
    com.write_svg(&out.join("com_path.svg"))?;
    Ok(())
}
