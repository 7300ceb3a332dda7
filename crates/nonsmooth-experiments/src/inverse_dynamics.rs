//! Zapolsky & Drumwright, *Inverse Dynamics with Rigid Contact and Friction* (2017; errata,
//! choices and acceptance checks in docs/decisions/004-inverse-dynamics.md), on the 4.80 kg
//! reference quadruped `examples/id_quadruped.toml`:
//!
//! - `id-statics`: standing on 4 feet with q̈_des = 0: predicted Σf_N (paper: 47.09 N for
//!   4.80 kg) and the torque jump over 100 identical consecutive calls per variant;
//! - `id-chatter`: the indeterminate 4-contact stance, Stage I alone (Lemke vertex, contact
//!   order rotated every step as after solver restarts) vs Stage I + II: ratio of max|Δu/Δt|;
//! - `id-right-inverse`: torques applied in a forward step of the same contact model
//!   reproduce q̇_des (relative error ≤ 1e-8);
//! - `id-timing`: median µs per call of a warm control loop against the number of contacts
//!   (feet contacts duplicated, as the paper's "artificially increased" contacts, Fig. 19,
//!   and jittered by up to 0.1 mm at 32 contacts), every variant: the log–log slopes (LCP,∞
//!   about linear, ≤ 1.5; the QP variants ≤ 2, no faster than the paper's dense-LCP curves),
//!   the 1 kHz claim at 32 contacts for the QP variants (median ≤ 1000 µs), no warm-start
//!   fallback, and the machine's load in the notes.

use std::time::Instant;

use crate::fail;
use nalgebra::{DVector, Vector3};
use nonsmooth_control::forward::forward_step;
use nonsmooth_control::{
    ContactSpec, Desired, IdOptions, IdProblem, IdStats, InverseDynamics, Variant,
};
use nonsmooth_core::{ContactSnapshot, Model};
use nonsmooth_report::{Experiment, ExperimentOutcome, Figure, ReportError, RunContext, Series};
use rand::{Rng, SeedableRng};

/// The experiments of Zapolsky & Drumwright.
pub fn experiments() -> Vec<Experiment> {
    vec![
        Experiment {
            id: "id-statics",
            title: "Inverse dynamics: quadruped standing on 4 feet",
            paper: "Zapolsky & Drumwright, inverse dynamics with rigid contact (§8, Table 5)",
            run: statics,
        },
        Experiment {
            id: "id-chatter",
            title: "Inverse dynamics: Stage I vs Stage I + II torque chatter",
            paper: "Zapolsky & Drumwright (§6.2.4, Figs. 6, 15)",
            run: chatter,
        },
        Experiment {
            id: "id-right-inverse",
            title: "Inverse dynamics: right-inverse property of every variant",
            paper: "Zapolsky & Drumwright (§3, right-inverse check)",
            run: right_inverse,
        },
        Experiment {
            id: "id-timing",
            title: "Inverse dynamics: time per call vs number of contacts",
            paper: "Zapolsky & Drumwright (§8.4.2, Fig. 19)",
            run: timing,
        },
    ]
}

const QUADRUPED: &str = include_str!("../../../examples/id_quadruped.toml");
const DT: f64 = 1e-3;
/// Mass of the paper's robot (47.0882 N / 9.81 m/s²) and of our model.
const PAPER_MASS: f64 = 4.80;
const PAPER_FORCE: f64 = 47.09;

fn quadruped(id: &str) -> Result<Model, ReportError> {
    Model::from_toml_str(QUADRUPED, Some("examples/id_quadruped.toml")).map_err(|e| fail(id, e))
}

fn standing(model: &Model, id: &str) -> Result<IdProblem, ReportError> {
    let s = &model.initial_state;
    IdProblem::from_state(model, &s.q, &s.v, DT).map_err(|e| fail(id, e))
}

fn total_mass(model: &Model) -> f64 {
    model.bodies.iter().map(|b| b.mass).sum()
}

fn statics(ctx: &RunContext, out: &mut ExperimentOutcome) -> Result<(), ReportError> {
    let id = "id-statics";
    let model = quadruped(id)?;
    let p = standing(&model, id)?;
    let mass = total_mass(&model);
    let mg = mass * model.gravity.norm();
    let zero = Desired::Acceleration(DVector::zeros(model.nu()));
    let mut loads = Vec::new();
    for variant in Variant::ALL {
        (ctx.progress)(variant.name());
        let mut ctl = InverseDynamics::new(IdOptions::new(variant));
        let mut prev: Option<DVector<f64>> = None;
        let mut jump: f64 = 0.0;
        let mut first = None;
        for _ in 0..100 {
            let sol = ctl.solve(&p, &zero).map_err(|e| fail(id, e))?;
            if let Some(u) = &prev {
                jump = jump.max((&sol.torques - u).amax());
            }
            prev = Some(sol.torques.clone());
            first.get_or_insert(sol);
        }
        let sol = first.ok_or_else(|| fail(id, "no solution"))?;
        let total = sol.normal_forces.sum();
        out.metric(&format!("total_normal_force_{}", variant.snake()), total);
        out.metric(&format!("torque_jump_100_steps_{}", variant.snake()), jump);
        out.expect(
            &format!("torque_jump_100_steps_{}", variant.snake()),
            0.0,
            1e-6,
            "check 4 of docs/decisions/004-inverse-dynamics.md (Δu at roundoff level)",
        );
        loads.push((variant, sol.normal_forces.clone()));
        if variant == Variant::LcpCoulomb {
            // Scale the paper's 47.09 N (4.80 kg) to this model's mass.
            out.metric("total_normal_force", total * PAPER_MASS / mass);
            out.metric("normal_force_ratio", total / mg);
        }
    }
    out.metric("model_mass_kg", mass);
    out.expect(
        "total_normal_force",
        PAPER_FORCE,
        0.005 * PAPER_FORCE,
        "paper §8 (47.0882 N at rest), ±0.5 %",
    );
    out.expect("normal_force_ratio", 1.0, 0.005, "Σf_N = m g at rest");
    for variant in Variant::ALL {
        let name = format!("total_normal_force_{}", variant.snake());
        out.expect(&name, mg, 1e-4 * mg, "Σf_N = m g at rest");
    }
    let mut fig = Figure::new(
        "Predicted normal force per foot (standing)",
        "foot index",
        "f_N [N]",
    );
    for (variant, f) in &loads {
        fig.series.push(Series::scatter(
            variant.name(),
            f.iter().enumerate().map(|(i, x)| (i as f64, *x)).collect(),
        ));
    }
    fig.write_svg(&ctx.path("foot_forces.svg"))?;
    out.figure("foot_forces.svg");
    Ok(())
}

fn chatter(ctx: &RunContext, out: &mut ExperimentOutcome) -> Result<(), ReportError> {
    let id = "id-chatter";
    let model = quadruped(id)?;
    let p0 = standing(&model, id)?;
    let steps = if ctx.quick { 20 } else { 200 };
    let nu = model.nu();
    let mut series = Vec::new();
    let mut rates = Vec::new();
    for stage_two in [false, true] {
        let mut opts = IdOptions::new(Variant::QpCoulomb);
        opts.stage_two = stage_two;
        opts.stage_one_lemke = true;
        let mut ctl = InverseDynamics::new(opts);
        let mut prev: Option<DVector<f64>> = None;
        let mut max_rate: f64 = 0.0;
        let mut pts = Vec::new();
        for k in 0..steps {
            // A slowly varying desired motion (a gentle sway) and the contact order rotated
            // every step, as after solver restarts with a re-detected contact set.
            let t = k as f64 * DT;
            let a = DVector::from_fn(nu, |i, _| {
                0.2 * (2.0 * std::f64::consts::PI * t + i as f64).sin()
            });
            let mut rows: Vec<_> = p0.contacts().to_vec();
            let len = rows.len();
            rows.rotate_left(k % len);
            let p = p0.with_contact_rows(rows).map_err(|e| fail(id, e))?;
            let sol = ctl
                .solve(&p, &Desired::Acceleration(a))
                .map_err(|e| fail(id, e))?;
            if let Some(u) = &prev {
                max_rate = max_rate.max((&sol.torques - u).amax() / DT);
            }
            pts.push((t, sol.torques[2]));
            prev = Some(sol.torques);
        }
        rates.push(max_rate);
        series.push(Series::line(
            if stage_two {
                "Stage I + II"
            } else {
                "Stage I only (Lemke)"
            },
            pts,
        ));
    }
    out.metric("max_torque_rate_stage1", rates[0]);
    out.metric("max_torque_rate_stage12", rates[1]);
    let ratio = rates[0] / rates[1].max(1e-300);
    out.metric("chatter_ratio", ratio);
    // Paper: five orders of magnitude (checked on log10 to ±1: Stage II's remaining rate is
    // at the QP solver's tolerance, which sets the ratio's last digits).
    out.metric("chatter_orders_of_magnitude", ratio.log10());
    out.expect(
        "chatter_orders_of_magnitude",
        5.0,
        1.0,
        "paper §6.2.4, Figs. 6 and 15: five orders of magnitude (1e4–1e6×)",
    );
    let mut fig = Figure::new("Knee torque (front left): chatter", "t [s]", "u [N m]");
    fig.series = series;
    fig.write_svg(&ctx.path("chatter.svg"))?;
    out.figure("chatter.svg");
    Ok(())
}

fn right_inverse(ctx: &RunContext, out: &mut ExperimentOutcome) -> Result<(), ReportError> {
    let id = "id-right-inverse";
    let model = quadruped(id)?;
    let s = &model.initial_state;
    let trials = if ctx.quick { 3 } else { 50 };
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2024);
    let mut overall: f64 = 0.0;
    let mut errs = [0.0_f64; Variant::ALL.len()];
    let mut relaxed = 0usize;
    for _ in 0..trials {
        let v = DVector::from_fn(model.nv(), |_, _| rng.gen_range(-0.05..0.05));
        let p = IdProblem::from_state(&model, &s.q, &v, DT).map_err(|e| fail(id, e))?;
        let a = DVector::from_fn(model.nu(), |_, _| rng.gen_range(-2.0..2.0));
        for (k, variant) in Variant::ALL.into_iter().enumerate() {
            let sol = InverseDynamics::new(IdOptions::new(variant))
                .solve(&p, &Desired::Acceleration(a.clone()))
                .map_err(|e| fail(id, e))?;
            if sol.relaxation.is_some() {
                relaxed += 1;
            }
            let vp = forward_step(&p, variant, &sol).map_err(|e| fail(id, e))?;
            let err = (p.selection() * vp - &sol.desired_velocity).amax()
                / (1.0 + sol.desired_velocity.amax());
            errs[k] = errs[k].max(err);
            overall = overall.max(err);
        }
    }
    for (k, variant) in Variant::ALL.into_iter().enumerate() {
        let name = format!("max_velocity_error_{}", variant.snake());
        out.metric(&name, errs[k]);
        out.expect(&name, 0.0, 1e-8, "right-inverse check 1 (relative)");
    }
    out.metric("max_velocity_error", overall);
    out.metric("relaxed_calls", relaxed as f64);
    out.expect(
        "max_velocity_error",
        0.0,
        1e-8,
        "check 1 of docs/decisions/004-inverse-dynamics.md (relative)",
    );
    out.notes.push(
        "Forward models: lcp-noslip — no-slip LCP (Algorithm 1 on the tangent rows, PPM); \
         lcp-coulomb — Anitescu–Potra LCP by Lemke; qp-* — the dynamics with the predicted \
         impulses R z (right-inverse check). Random accelerations are inconsistent with no slip \
         (E7), so lcp-noslip relaxes them (§4.5) and reproduces the realized target."
            .into(),
    );
    Ok(())
}

/// The quadruped's feet repeated up to `count`, each copy moved in the ground plane by a
/// deterministic offset of at most 0.1 mm ("jittered" contacts: nearly dependent rows of N).
fn jittered(model: &Model, count: usize, id: &str) -> Result<IdProblem, ReportError> {
    let s = &model.initial_state;
    let snap = ContactSnapshot::new(model, &s.q, &s.v, 0.0).map_err(|e| fail(id, e))?;
    if snap.contacts.is_empty() {
        return Err(fail(id, "the quadruped does not touch the ground"));
    }
    let mut specs = Vec::with_capacity(count);
    for i in 0..count {
        let c = &snap.contacts[i % snap.contacts.len()];
        let k = (i / snap.contacts.len()) as f64;
        let body = c
            .body_b
            .or(c.body_a)
            .ok_or_else(|| fail(id, "a foot contact without a robot body"))?;
        specs.push(ContactSpec {
            body,
            point: c.point + Vector3::new((1.7 * k).sin(), (2.3 * k).cos(), 0.0) * 1e-4,
            normal: c.normal,
            friction: c.friction,
            gap: c.gap,
        });
    }
    IdProblem::with_contacts(model, &s.q, &s.v, &specs, DT).map_err(|e| fail(id, e))
}

/// Median µs per call of `reps` consecutive calls of one (warm) controller, after one call
/// outside the timing; the controller's route counters are returned with it.
fn median_us(
    variant: Variant,
    p: &IdProblem,
    des: &Desired,
    reps: usize,
    id: &str,
) -> Result<(f64, IdStats), ReportError> {
    let mut ctl = InverseDynamics::new(IdOptions::new(variant));
    ctl.solve(p, des).map_err(|e| fail(id, e))?;
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps {
        let start = Instant::now();
        ctl.solve(p, des).map_err(|e| fail(id, e))?;
        times.push(start.elapsed().as_secs_f64() * 1e6);
    }
    times.sort_by(f64::total_cmp);
    Ok((times[times.len() / 2], ctl.stats()))
}

/// Least-squares slope of `ln y` against `ln x`.
fn log_log_slope(pts: &[(f64, f64)]) -> f64 {
    let k = pts.len() as f64;
    let lx: Vec<(f64, f64)> = pts.iter().map(|p| (p.0.ln(), p.1.ln())).collect();
    let mx = lx.iter().map(|p| p.0).sum::<f64>() / k;
    let my = lx.iter().map(|p| p.1).sum::<f64>() / k;
    let sxy: f64 = lx.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = lx.iter().map(|p| (p.0 - mx).powi(2)).sum();
    sxy / sxx
}

/// Bound of the 1 kHz claim (µs per call).
const KHZ_US: f64 = 1000.0;
/// Bound of the QP variants' growth exponent (module docs of `id-timing`).
const QP_EXPONENT_MAX: f64 = 2.0;

fn timing(ctx: &RunContext, out: &mut ExperimentOutcome) -> Result<(), ReportError> {
    let id = "id-timing";
    let model = quadruped(id)?;
    let p = standing(&model, id)?;
    let counts = [4usize, 8, 16, 32, 64];
    let zero = Desired::Acceleration(DVector::zeros(model.nu()));
    let load = std::fs::read_to_string("/proc/loadavg").ok();
    let mut fig = Figure::new(
        "Inverse dynamics: median time per call vs contacts (cf. Fig. 19)",
        "contacts",
        "µs per call",
    );
    fig.log_y = true;
    let reps = if ctx.quick { 41 } else { 401 };
    let pj = jittered(&model, 32, id)?;
    for variant in Variant::ALL {
        (ctx.progress)(variant.name());
        let mut pts = Vec::new();
        let mut warm_fallbacks = 0;
        for &n in &counts {
            let pn = p.with_contacts_cycled(n).map_err(|e| fail(id, e))?;
            let reps = if n > 32 { reps / 2 + 1 } else { reps };
            let (us, stats) = median_us(variant, &pn, &zero, reps, id)?;
            warm_fallbacks += stats.warm_fallbacks;
            out.metric(&format!("us_per_call_{}_{}", variant.snake(), n), us);
            pts.push((n as f64, us));
        }
        let exponent = log_log_slope(&pts);
        out.metric(&format!("scaling_exponent_{}", variant.snake()), exponent);
        fig.series.push(Series::line(variant.name(), pts));
        if variant.is_qp() {
            let (us, stats) = median_us(variant, &pj, &zero, reps, id)?;
            warm_fallbacks += stats.warm_fallbacks;
            out.metric(&format!("us_per_call_{}_32_jittered", variant.snake()), us);
            out.metric(
                &format!("warm_fallbacks_{}", variant.snake()),
                warm_fallbacks as f64,
            );
        }
    }
    // Ratios of times and medians of many calls: they hold on a loaded machine. The paper's
    // LCP,∞ grows linearly in the contacts (Fig. 19); ours grows sublinearly over 4–64
    // contacts (the fixed cost of the multibody terms dominates at few contacts).
    out.expect(
        "scaling_exponent_lcp_noslip",
        0.9,
        0.6,
        "Fig. 19: LCP,∞ time grows about linearly in the contacts (log–log slope ≤ 1.5)",
    );
    for variant in Variant::ALL.into_iter().filter(|v| v.is_qp()) {
        let v = variant.snake();
        out.expect(
            &format!("scaling_exponent_{v}"),
            QP_EXPONENT_MAX / 2.0,
            QP_EXPONENT_MAX / 2.0,
            "Fig. 19: the QP variants' curves (warm-started dense LCPs) grow at least \
             quadratically; ours no faster (log–log slope over 4–64 contacts in [0, 2])",
        );
        for case in ["32", "32_jittered"] {
            out.expect(
                &format!("us_per_call_{v}_{case}"),
                KHZ_US / 2.0,
                KHZ_US / 2.0,
                "Fig. 19 / §8.4.2: QP variants at 1 kHz up to about 30 contacts (median \
                 µs per call of a warm control loop, ≤ 1000)",
            );
        }
        out.expect(
            &format!("warm_fallbacks_{v}"),
            0.0,
            0.5,
            "our target: duplicated and jittered contacts stay on the warm path (no fallback)",
        );
    }
    match load.as_deref().and_then(|l| l.split_whitespace().next()) {
        Some(one) => {
            if let Ok(x) = one.parse::<f64>() {
                out.metric("load_average_1min", x);
            }
            out.notes.push(format!(
                "Machine load during the run (/proc/loadavg at its start): {}; {} CPU(s). \
                 Times are medians of {reps} consecutive calls of one controller (warm \
                 starts, §4.6) on the quadruped with its feet contacts duplicated (and, for \
                 `_32_jittered`, moved by up to 0.1 mm).",
                load.as_deref().unwrap_or("").trim(),
                std::thread::available_parallelism().map_or(0, |n| n.get())
            ));
        }
        None => out
            .notes
            .push("Machine load unknown (no /proc/loadavg on this system).".into()),
    }
    fig.write_svg(&ctx.path("timing.svg"))?;
    out.figure("timing.svg");
    Ok(())
}
