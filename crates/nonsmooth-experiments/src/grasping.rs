//! Zapolsky & Drumwright (2017), §§7–8 — the arm grasp tasks of Table 6 (paper §7.1
//! "Manipulator", §8.4.1, Appendix A rows "fixed base manipulator grasping a high / low
//! friction object"): the 11-DOF arm + hand of `examples/id_arm_hand_box.toml` carries a
//! free 1.3 kg box (lift ≈ 6.6 cm, then ≈ 8 cm sideways, 3 s) held by four fingertip
//! contacts, simulated by the Anitescu–Potra stepper at 1 ms with the fingertip friction
//! μ = ∞ (`grasp_highmu`, plant μ = 100) or μ = 1.0 (`grasp_lowmu`).
//!
//! Metrics (for the `id-tasks` experiment, which calls [`grasp_tasks`]):
//! - `pass_<ctrl>_grasp_highmu`, `pass_<ctrl>_grasp_lowmu` (1/0): no drop, no chatter, no
//!   failure;
//! - diagnostics `grasp_box_err_<ctrl>_<case>` (mean ‖box − planned box‖, m),
//!   `grasp_slip_<ctrl>_<case>` (largest slip in the palm frame, m),
//!   `grasp_dropped_<ctrl>_<case>` (1/0), `grasp_drop_time_<ctrl>_<case>` (s; the run's
//!   duration when not dropped), `grasp_chatter_<ctrl>_<case>` (fraction of steps with a
//!   torque reversal), `longest_reversal_run_<ctrl>_grasp_<case>` (most consecutive reversal
//!   steps; chatter from 10), `pass_run5_<ctrl>_grasp_<case>` and `pass_run20_…` (the marks
//!   at runs of 5 and 20 steps), `grasp_arm_err_<ctrl>_<case>` (rad), `grasp_mean_tau_<ctrl>_<case>`,
//!   `grasp_max_tau_<ctrl>_<case>`, `grasp_mean_dtau_<ctrl>_<case>`;
//! - diagnostics of an ideal no-slip plant (the paper's "μ = ∞ — no slip", where a contact
//!   transmits tangential force without a normal force; `GraspPlant::NoSlip`):
//!   `grasp_noslip_plant_pass_<ctrl>`, `grasp_noslip_plant_box_err_<ctrl>`,
//!   `grasp_noslip_plant_drop_time_<ctrl>`, `grasp_noslip_plant_chatter_<ctrl>`.
//!
//! Drop, chatter and the testbed's parameters: `nonsmooth_control::grasping` and
//! `docs/grasping.md`.

use nonsmooth_control::grasping::{
    arm_hand_box_model, grasp_model, run_grasp_task, run_grasp_task_with, GraspFriction,
    GraspOptions, GraspPlan, GraspPlant, GraspRecord,
};
use nonsmooth_report::{ExperimentOutcome, Figure, ReportError, RunContext, Series};

/// Simulated seconds in full mode (the paper's arm runs last 3 s).
pub const FULL_DURATION: f64 = 3.0;
/// Simulated seconds in quick mode (the hold and the start of the lift).
pub const QUICK_DURATION: f64 = 0.3;
/// Every this many control steps a point goes into the figures.
const PLOT_EVERY: usize = 10;

fn fail(err: impl std::fmt::Display) -> ReportError {
    ReportError::Experiment {
        id: "id-tasks".to_string(),
        message: format!("grasp testbed: {err}"),
    }
}

/// One run of the grasp tasks: controller id, friction case and what it recorded.
pub type GraspRun = (String, GraspFriction, GraspRecord);

/// Runs every controller of `controllers` on both friction cases (quick: 0.3 s, full: 3 s)
/// and returns the records, high μ first.
///
/// # Errors
/// [`ReportError::Experiment`] for an unknown controller id or a testbed error.
pub fn grasp_runs(
    quick: bool,
    controllers: &[&str],
    progress: &dyn Fn(&str),
) -> Result<Vec<GraspRun>, ReportError> {
    let model = arm_hand_box_model().map_err(fail)?;
    let plan = GraspPlan::lift_and_move(&model).map_err(fail)?;
    let duration = if quick { QUICK_DURATION } else { FULL_DURATION };
    let mut runs = Vec::new();
    for friction in GraspFriction::ALL {
        for ctrl in controllers {
            progress(&format!("{ctrl}: grasp_{}", friction.id()));
            let rec = run_grasp_task(ctrl, friction, &plan, duration).map_err(fail)?;
            runs.push((ctrl.to_string(), friction, rec));
        }
    }
    Ok(runs)
}

/// Runs every controller of `controllers` in the ideal no-slip plant
/// ([`GraspPlant::NoSlip`]; quick: 0.3 s, full: 3 s).
///
/// # Errors
/// As [`grasp_runs`].
pub fn noslip_plant_runs(
    quick: bool,
    controllers: &[&str],
    progress: &dyn Fn(&str),
) -> Result<Vec<(String, GraspRecord)>, ReportError> {
    let model = arm_hand_box_model().map_err(fail)?;
    let plan = GraspPlan::lift_and_move(&model).map_err(fail)?;
    let duration = if quick { QUICK_DURATION } else { FULL_DURATION };
    let mut runs = Vec::new();
    for ctrl in controllers {
        progress(&format!("{ctrl}: grasp in a no-slip plant"));
        let mut options = GraspOptions::new(duration);
        options.plant = GraspPlant::NoSlip;
        let rec = run_grasp_task_with(ctrl, GraspFriction::High, &plan, options).map_err(fail)?;
        runs.push((ctrl.to_string(), rec));
    }
    Ok(runs)
}

/// The diagnostics of one no-slip-plant run (names as in the module docs).
pub fn noslip_plant_metrics(ctrl: &str, rec: &GraspRecord) -> Vec<(String, f64)> {
    let end = rec.t.last().copied().unwrap_or(0.0);
    vec![
        (
            format!("grasp_noslip_plant_pass_{ctrl}"),
            if rec.passed() { 1.0 } else { 0.0 },
        ),
        (
            format!("grasp_noslip_plant_box_err_{ctrl}"),
            rec.mean_box_err(),
        ),
        (
            format!("grasp_noslip_plant_drop_time_{ctrl}"),
            rec.dropped.unwrap_or(end),
        ),
        (
            format!("grasp_noslip_plant_chatter_{ctrl}"),
            rec.chatter_fraction,
        ),
    ]
}

/// The metrics of one run (names as in the module docs).
pub fn run_metrics(ctrl: &str, friction: GraspFriction, rec: &GraspRecord) -> Vec<(String, f64)> {
    let key = format!("{ctrl}_{}", friction.id());
    let b = |x: bool| if x { 1.0 } else { 0.0 };
    let end = rec.t.last().copied().unwrap_or(0.0);
    vec![
        (
            format!("pass_{ctrl}_grasp_{}", friction.id()),
            b(rec.passed()),
        ),
        (format!("grasp_box_err_{key}"), rec.mean_box_err()),
        (format!("grasp_slip_{key}"), rec.max_slip()),
        (format!("grasp_dropped_{key}"), b(rec.dropped.is_some())),
        (format!("grasp_drop_time_{key}"), rec.dropped.unwrap_or(end)),
        (format!("grasp_chatter_{key}"), rec.chatter_fraction),
        (
            format!("longest_reversal_run_{ctrl}_grasp_{}", friction.id()),
            rec.longest_reversal_run as f64,
        ),
        (format!("grasp_arm_err_{key}"), rec.mean_arm_err()),
        (format!("grasp_mean_tau_{key}"), rec.mean_tau()),
        (format!("grasp_max_tau_{key}"), rec.max_tau()),
        (format!("grasp_mean_dtau_{key}"), rec.mean_dtau(1e-3)),
    ]
}

/// The grasp metrics for `controllers` (quick: 0.3 s runs; full: 3 s), named
/// `pass_<ctrl>_grasp_highmu`, `pass_<ctrl>_grasp_lowmu` and the diagnostics of the module
/// docs.
///
/// # Errors
/// As [`grasp_runs`].
pub fn grasp_task_metrics(
    quick: bool,
    controllers: &[&str],
) -> Result<Vec<(String, f64)>, ReportError> {
    let mut m: Vec<(String, f64)> = grasp_runs(quick, controllers, &|_| {})?
        .iter()
        .flat_map(|(c, f, r)| run_metrics(c, *f, r))
        .collect();
    for (c, r) in noslip_plant_runs(quick, controllers, &|_| {})? {
        m.extend(noslip_plant_metrics(&c, &r));
    }
    Ok(m)
}

/// Writes `grasp_viewer.html`, the report's player of the low-friction grasp: every
/// controller's run overlaid (thinned to [`crate::testbed::PLAYER_FRAMES`] frames each).
fn grasp_player(
    ctx: &RunContext,
    runs: &[GraspRun],
    out: &mut ExperimentOutcome,
) -> Result<(), ReportError> {
    let friction = GraspFriction::Low;
    let model = grasp_model(&arm_hand_box_model().map_err(fail)?, friction);
    let shown: Vec<nonsmooth_report::viewer::ViewerRun> = runs
        .iter()
        .filter(|(_, f, rec)| *f == friction && !rec.states.is_empty())
        .map(|(ctrl, _, rec)| {
            let mut traj =
                nonsmooth_figures::viewer::trajectory_of(&model, "anitescu-potra", &rec.states);
            traj.impulses = rec.impulses.clone();
            let status = match (&rec.failure, rec.dropped) {
                (Some(r), _) => format!("failed: {r}"),
                (None, Some(t)) => format!("dropped the box at t = {t:.3} s"),
                (None, None) => String::new(),
            };
            nonsmooth_figures::viewer::run(
                &model,
                &traj,
                ctrl.clone(),
                status,
                crate::testbed::PLAYER_FRAMES,
            )
        })
        .collect();
    if shown.is_empty() {
        return Ok(());
    }
    let scene = nonsmooth_figures::viewer::overlay(
        &model,
        shown,
        "Arm grasp, fingertip μ = 1.0 (grasp_lowmu): every controller".into(),
        Vec::new(),
    );
    nonsmooth_report::viewer::write_viewer_html(&ctx.path("grasp_viewer.html"), &scene)?;
    out.player("grasp_viewer.html");
    Ok(())
}

/// Runs the grasp tasks for `controllers`, records their metrics in `out`, writes the
/// figures `grasp_box_height_highmu.svg`, `grasp_box_height_lowmu.svg` (box height over
/// time per controller, with the plan) and `grasp_box_error_highmu.svg`,
/// `grasp_box_error_lowmu.svg` (‖box − planned box‖ over time), adds a note per
/// dropped, chattering or failed run, and records the no-slip-plant diagnostics.
///
/// # Errors
/// As [`grasp_runs`]; [`ReportError`] when a figure cannot be written.
pub fn grasp_tasks(
    ctx: &RunContext,
    controllers: &[&str],
    out: &mut ExperimentOutcome,
) -> Result<(), ReportError> {
    let runs = grasp_runs(ctx.quick, controllers, ctx.progress)?;
    grasp_player(ctx, &runs, out)?;
    for friction in GraspFriction::ALL {
        let label = match friction {
            GraspFriction::High => "μ = ∞ (plant μ = 100)",
            GraspFriction::Low => "μ = 1.0",
        };
        let mut height = Figure::new(
            format!("Grasped box height, {label}"),
            "t [s]",
            "box centre z [m]",
        );
        let mut error = Figure::new(
            format!("Box position error, {label}"),
            "t [s]",
            "‖box − planned box‖ [m]",
        );
        let mut plan_added = false;
        for (ctrl, f, rec) in runs.iter().filter(|(_, f, _)| *f == friction) {
            for (name, value) in run_metrics(ctrl, *f, rec) {
                out.metric(&name, value);
            }
            crate::testbed::record_pass_marks(
                out,
                &format!("{ctrl}_grasp_{}", friction.id()),
                rec.dropped.is_some() || rec.failure.is_some(),
                rec.longest_reversal_run,
            );
            let pick = |y: &dyn Fn(usize) -> f64| -> Vec<(f64, f64)> {
                (0..rec.t.len())
                    .step_by(PLOT_EVERY)
                    .map(|k| (rec.t[k], y(k)))
                    .collect()
            };
            if !plan_added {
                height
                    .series
                    .push(Series::line("plan", pick(&|k| rec.box_des[k].z)));
                plan_added = true;
            }
            height
                .series
                .push(Series::line(ctrl.as_str(), pick(&|k| rec.box_pos[k].z)));
            error
                .series
                .push(Series::line(ctrl.as_str(), pick(&|k| rec.box_err[k])));
            let key = format!("{ctrl}_grasp_{}", friction.id());
            if let Some(t) = rec.dropped {
                out.notes.push(format!(
                    "{key}: box dropped at t = {t:.3} s (slip > 1 cm in the palm frame)"
                ));
            }
            if rec.chattered {
                out.notes.push(format!(
                    "{key}: torque chatter, {} consecutive reversal steps ({:.1} % of the steps \
                     reversed)",
                    rec.longest_reversal_run,
                    100.0 * rec.chatter_fraction
                ));
            }
            if let Some(r) = &rec.failure {
                out.notes
                    .push(format!("{key}: run ended by a failure: {r}"));
            }
        }
        for (name, fig) in [
            (format!("grasp_box_height_{}.svg", friction.id()), &height),
            (format!("grasp_box_error_{}.svg", friction.id()), &error),
        ] {
            fig.write_svg(&ctx.path(&name))?;
            out.figure(&name);
        }
    }
    for (ctrl, rec) in noslip_plant_runs(ctx.quick, controllers, ctx.progress)? {
        for (name, value) in noslip_plant_metrics(&ctrl, &rec) {
            out.metric(&name, value);
        }
    }
    if controllers.contains(&"qp_mu") {
        out.expect(
            "pass_qp_mu_grasp_lowmu",
            1.0,
            0.0,
            "Table 6: QP,μ passes the low-friction grasp (PASS†)",
        );
    }
    out.notes.push(
        "Grasp tasks (docs/grasping.md): pass = the box does not slip more than 1 cm in the \
         palm frame, no torque chatter (locomotion definition), no solver failure. \
         grasp_highmu = fingertip μ = ∞ (plant μ = 100), grasp_lowmu = μ = 1.0. The ID(tᵢ) \
         controllers apply a 1 N fingertip preload and (QP variants) aim Stage I at the box \
         carried by the hand (GraspId). Paper (Table 6): high μ LCP,∞ PASS, QP,∞ PASS†, \
         LCP,μ FAIL (chatter), QP,μ PASS; low μ FAIL, FAIL, FAIL (chatter), PASS†."
            .into(),
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_grasp_metrics_are_named_by_contract_and_figures_are_written() {
        let dir = std::env::temp_dir().join(format!("nonsmooth_grasp_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ctx = RunContext {
            out_dir: dir.clone(),
            quick: true,
            fast: false,
            progress: &|_| {},
        };
        let mut out = ExperimentOutcome::default();
        grasp_tasks(&ctx, &["qp_mu", "lcp_inf"], &mut out).unwrap();
        for c in ["qp_mu", "lcp_inf"] {
            for case in ["highmu", "lowmu"] {
                let pass = out.metrics[&format!("pass_{c}_grasp_{case}")];
                assert!(pass == 0.0 || pass == 1.0);
                assert!(out.metrics[&format!("grasp_box_err_{c}_{case}")].is_finite());
            }
        }
        // ID_QP,μ holds the box through the hold and the start of the lift at both μ;
        // ID_LCP,∞ holds it at μ = ∞ (with the preload) and loses it at μ = 1, where its
        // no-slip prediction is not realizable (docs/grasping.md).
        assert_eq!(out.metrics["pass_qp_mu_grasp_highmu"], 1.0);
        assert_eq!(out.metrics["pass_qp_mu_grasp_lowmu"], 1.0);
        assert_eq!(out.metrics["pass_lcp_inf_grasp_highmu"], 1.0);
        assert_eq!(out.metrics["pass_lcp_inf_grasp_lowmu"], 0.0);
        assert_eq!(out.figures.len(), 4);
        for f in &out.figures {
            assert!(dir.join(f).exists(), "{f}");
        }
        assert!(out.metrics.contains_key("grasp_noslip_plant_pass_qp_mu"));
        let flat = grasp_task_metrics(true, &["pid"]).unwrap();
        assert!(flat.iter().any(|(n, _)| n == "pass_pid_grasp_lowmu"));
        assert!(flat.iter().any(|(n, _)| n == "grasp_noslip_plant_pass_pid"));
        std::fs::remove_dir_all(&dir).ok();
    }
}
