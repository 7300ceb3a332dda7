//! Experiments of E. Drumwright, *An Unconditionally Stable First-Order Constraint Solver for
//! Multibody Systems* (2019); the reference values and decisions (A1–A11, D1–D10) are in
//! `docs/decisions/003-stable-constraint-solver.md`.
//!
//! - `drumwright-smd`: spectral radii of explicit, symplectic and implicit Euler on a
//!   spring–mass–damper (§3, Figs 1–3, acceptance A1), measured on the library's
//!   `penalty-explicit`, `penalty-symplectic`, `penalty-implicit` and `drumwright` steppers
//!   (`examples/drumwright_smd.toml`) and compared with the closed forms;
//! - `drumwright-pendulum`: the stiff pendulum in absolute coordinates (§4.4, Fig 4, A2, A3);
//! - `drumwright-joint-limit`: restitution of a stiff joint limit versus h (§5.4, Fig 6, A6);
//! - `drumwright-foundation`: a cube on a Winkler foundation of 100 / 900 elements under a
//!   circling 5 / 50 N load, against RK45 and BDF(1) baselines (§5.5, Fig 7, Tables 1–2, A8).
//!   Decisions: BDF(1) runs with MATLAB's default tolerances (rtol 1e-3, atol 1e-6), as the
//!   paper's `ode15s` "set to run in first-order"; the RK45 reference with rtol 1e-8,
//!   atol 1e-11 (the paper's errors go down to 2.7e-9). Each baseline run has a wall-time
//!   budget in full mode ([`BASELINE_BUDGET_S`], [`REFERENCE_BUDGET_S`]): the paper's
//!   baselines take up to 17 100 s on the stiff cases, so a run that exceeds its budget or
//!   whose integrator gives up is reported (`finished_bdf_*` / `finished_rk45_*` = 0, its time
//!   a lower bound) instead of stalling or aborting the experiment. When the reference stops
//!   early (the E = 1e11 cases: RK45 is stability-limited to steps of about 1e-5 s there), the
//!   error is measured at the last time the reference reached (`error_cb_<tag>_at_t`,
//!   `reference_t_<tag>`) and the Table 2 check applies to that.
//! - `drumwright-incline`: a box on a 15° incline with Hertz feet and Coulomb friction
//!   (§6.4, Fig 9, A9).

use crate::fail;
use crate::scenes::{sphere_stack, STACK_RADIUS};
use nalgebra::{DVector, Matrix2};
use nonsmooth_core::{Model, State};
use nonsmooth_report::{Experiment, ExperimentOutcome, Figure, ReportError, RunContext, Series};
use nonsmooth_sim::external_load::PointLoad;
use nonsmooth_sim::ode::{BdfStepper, Rk45Stepper};
use nonsmooth_sim::{Actuation, DrumwrightStepper, SimError, Simulator, Stepper};

/// One step of `scheme` from `state` through the Simulator's staged step, without its
/// recovery: these experiments measure each scheme on its own (its iteration map, its
/// failures, its wall time).
fn bare_step(
    scheme: &mut dyn Stepper,
    model: &Model,
    state: &State,
    input: &Actuation,
    h: f64,
) -> Result<State, SimError> {
    let mut sim = Simulator::borrowing(model, Box::new(scheme), h)?.without_recovery();
    sim.set_state(state.clone())?;
    sim.advance(input, h)?;
    Ok(sim.state().clone())
}

/// The actuation of the external load `load` at `state` (its generalized force at the
/// step's start, explicit as the paper's f in Drumwright 2019, eqs 36–39).
fn load_actuation(model: &Model, state: &State, load: &PointLoad) -> Result<Actuation, SimError> {
    Ok(Actuation::from_generalized_force(
        load.generalized(model, &state.q, state.t)?,
    ))
}

/// The experiments of Drumwright's constraint-solver paper.
pub fn experiments() -> Vec<Experiment> {
    vec![
        Experiment {
            id: "drumwright-smd",
            title: "Spring-mass-damper: spectral radii of explicit, symplectic and implicit Euler",
            paper: "Drumwright 2019, §3, Figs 1-3",
            run: smd,
        },
        Experiment {
            id: "drumwright-pendulum",
            title: "Stiff pendulum (k = 1e15) in absolute coordinates",
            paper: "Drumwright 2019, §4.4, Fig 4",
            run: pendulum,
        },
        Experiment {
            id: "drumwright-joint-limit",
            title: "Restitution of a stiff joint limit (k = 1e12) versus step size",
            paper: "Drumwright 2019, §5.4, Fig 6",
            run: joint_limit,
        },
        Experiment {
            id: "drumwright-stack",
            title: "Stacks of 1 to 100 stiff spheres (Hertz, E = 1e11)",
            paper: "Drumwright 2019, §6.5, Fig 10",
            run: stack,
        },
        Experiment {
            id: "drumwright-foundation",
            title: "Cube on a Winkler elastic foundation (100 / 900 elements, 5 / 50 N)",
            paper: "Drumwright 2019, §5.5, Fig 7, Tables 1-2",
            run: foundation,
        },
        Experiment {
            id: "drumwright-incline",
            title: "Box on a 15 degree incline: Hertz feet, Coulomb friction",
            paper: "Drumwright 2019, §6.4, Fig 9",
            run: incline,
        },
    ]
}

const SMD: &str = include_str!("../../../examples/drumwright_smd.toml");
const PENDULUM: &str = include_str!("../../../examples/drumwright_pendulum.toml");
const LIMIT: &str = include_str!("../../../examples/drumwright_joint_limit.toml");
const INCLINE: &str = include_str!("../../../examples/drumwright_incline.toml");
const FOUNDATION: &str = include_str!("../../../examples/drumwright_foundation.toml");

/// The stack model with `n` spheres ([`crate::scenes::sphere_stack`]).
pub fn stack_model(n: usize) -> Result<Model, ReportError> {
    sphere_stack(n).map_err(|e| fail("drumwright-stack", e))
}

fn load(src: &str, file: &str) -> Result<Model, ReportError> {
    Model::from_toml_str(src, Some(file)).map_err(|e| fail(file, e))
}

/// (file, title, [(label, iteration matrix, h)]) of one SMD figure.
type FigureSpec = (
    &'static str,
    &'static str,
    Vec<(&'static str, Matrix2<f64>, f64)>,
);

/// (max drift, final state, drift samples, max |energy error|) of a pendulum run.
type PendulumRun = (f64, State, Vec<(f64, f64)>, f64);

/// Spectral radius of a real 2×2 matrix.
fn spectral_radius(a: &Matrix2<f64>) -> f64 {
    let tr = a.trace();
    let det = a.determinant();
    let disc = tr * tr / 4.0 - det;
    if disc >= 0.0 {
        let s = disc.sqrt();
        (tr / 2.0 + s).abs().max((tr / 2.0 - s).abs())
    } else {
        det.abs().sqrt()
    }
}

/// Iteration matrices of §3 (eqs 7–14) for m ẍ + b ẋ + k x = 0, y = (x, v).
fn explicit(m: f64, b: f64, k: f64, h: f64) -> Matrix2<f64> {
    Matrix2::new(1.0, h, -h * k / m, 1.0 - h * b / m)
}

fn symplectic(m: f64, b: f64, k: f64, h: f64) -> Matrix2<f64> {
    let a = 1.0 / (1.0 + h * b / m);
    Matrix2::new(1.0 - a * h * h * k / m, a * h, -a * h * k / m, a)
}

fn implicit(m: f64, b: f64, k: f64, h: f64) -> Matrix2<f64> {
    let d = 1.0 + h * b / m + h * h * k / m;
    Matrix2::new(1.0 + h * b / m, h, -h * k / m, 1.0) / d
}

/// x(t) of y ← A y from x₀ = 1, v₀ = 0 (the paper gives no initial condition; D7 of
/// docs/decisions/003-stable-constraint-solver.md).
fn trajectory(a: &Matrix2<f64>, h: f64, t_end: f64, every: usize) -> Vec<(f64, f64)> {
    let n = (t_end / h).round() as usize;
    let mut y = nalgebra::Vector2::new(1.0, 0.0);
    let mut out = vec![(0.0, 1.0)];
    for i in 1..=n {
        y = a * y;
        if i % every == 0 {
            out.push((i as f64 * h, y[0].clamp(-5.0, 5.0)));
        }
    }
    out
}

/// The SMD model with spring `k` and damper `b` (the soft constraint of
/// `examples/drumwright_smd.toml`).
fn smd_model(base: &Model, b: f64, k: f64) -> Model {
    let mut model = base.clone();
    model.constraints[0].stiffness = Some(k);
    model.constraints[0].damping = Some(b);
    model
}

/// The iteration matrix of the library stepper `stepper` on the SMD model: one step from
/// (x, v) = (1, 0) and one from (0, 1) give its columns (every scheme here is linear in the
/// state on this model; [`check_step_map_linearity`] checks it on a long run).
fn measured_step_map(model: &Model, stepper: &str, h: f64) -> Result<Matrix2<f64>, ReportError> {
    let id = "drumwright-smd";
    let mut scheme = nonsmooth_sim::stepper_by_name(stepper).map_err(|e| fail(id, e))?;
    let mut a = Matrix2::zeros();
    for (col, (x, v)) in [(1.0, 0.0), (0.0, 1.0)].into_iter().enumerate() {
        let state = State {
            q: DVector::from_element(1, x),
            v: DVector::from_element(1, v),
            t: 0.0,
        };
        let next = bare_step(scheme.as_mut(), model, &state, &Actuation::none(), h)
            .map_err(|e| fail(id, e))?;
        a[(0, col)] = next.q[0];
        a[(1, col)] = next.v[0];
    }
    Ok(a)
}

/// Largest relative deviation of `n` steps of `stepper` from x₀ = 1, v₀ = 0 from `Aⁿ y₀`
/// with the measured map `a`: zero for a scheme that is the linear map it was measured as.
fn check_step_map_linearity(
    model: &Model,
    stepper: &str,
    a: &Matrix2<f64>,
    h: f64,
    n: usize,
) -> Result<f64, ReportError> {
    let id = "drumwright-smd";
    let mut scheme = nonsmooth_sim::stepper_by_name(stepper).map_err(|e| fail(id, e))?;
    let mut state = State {
        q: DVector::from_element(1, 1.0),
        v: DVector::from_element(1, 0.0),
        t: 0.0,
    };
    let mut y = nalgebra::Vector2::new(1.0, 0.0);
    let mut worst: f64 = 0.0;
    for _ in 0..n {
        state = bare_step(scheme.as_mut(), model, &state, &Actuation::none(), h)
            .map_err(|e| fail(id, e))?;
        y = a * y;
        let scale = y.norm().max(1e-300);
        let got = nalgebra::Vector2::new(state.q[0], state.v[0]);
        worst = worst.max((got - y).norm() / scale);
    }
    Ok(worst)
}

/// Symplectic Euler as `penalty-symplectic` implements it (damping explicit):
/// v₁ = v₀ − (h/m)(k x₀ + b v₀), x₁ = x₀ + h v₁. Eqs 11–12 treat the damping implicitly
/// ([`symplectic`]); the two spectral radii agree to 1e-6 at k = 1e6 but differ at Fig. 2's
/// unstable k = 1e7 (7.874 here, 7.864 for eqs 11–12).
fn symplectic_explicit_damping(m: f64, b: f64, k: f64, h: f64) -> Matrix2<f64> {
    let d = 1.0 - h * b / m;
    Matrix2::new(1.0 - h * h * k / m, h * d, -h * k / m, d)
}

/// One case of the SMD experiment: the library stepper, its closed-form map, the
/// parameters and the paper's spectral radius (computed from eqs 7–14, A1 of
/// docs/decisions/003-stable-constraint-solver.md).
struct SmdCase {
    metric: &'static str,
    stepper: &'static str,
    closed_form: fn(f64, f64, f64, f64) -> Matrix2<f64>,
    b: f64,
    k: f64,
    h: f64,
    paper_rho: f64,
}

fn smd(ctx: &RunContext, out: &mut ExperimentOutcome) -> Result<(), ReportError> {
    let base = load(SMD, "examples/drumwright_smd.toml")?;
    let cases = smd_cases();
    let measured = smd_spectral_radii(ctx, out, &base, &cases)?;
    smd_drumwright_radii(out, &base)?;
    smd_stability_predicates(out);
    let implicit_euler = "penalty-implicit";
    let model = smd_model(&base, 0.0, 1e6);
    let l_stable = measured_step_map(&model, implicit_euler, 1e3)?;
    out.metric("rho_implicit_h1e3", spectral_radius(&l_stable));
    out.expect("rho_implicit_h1e3", 0.0, 1e-3, "L-stability, eqs 13-14");
    smd_figures(ctx, out, &cases, &measured)
}

/// The spring–mass–damper cases of Figs 1–3 (Drumwright 2019, §3): each scheme's stepper,
/// closed-form step map, parameters and the paper's spectral radius.
fn smd_cases() -> [SmdCase; 8] {
    let case = |metric, stepper, closed_form, b, k, h, paper_rho| SmdCase {
        metric,
        stepper,
        closed_form,
        b,
        k,
        h,
        paper_rho,
    };
    let explicit_euler = "penalty-explicit";
    let symplectic_euler = "penalty-symplectic";
    let implicit_euler = "penalty-implicit";
    [
        case(
            "rho_explicit_b1",
            explicit_euler,
            explicit,
            1.0,
            1e6,
            1e-5,
            1.000045,
        ),
        case(
            "rho_explicit_b10",
            explicit_euler,
            explicit,
            10.0,
            1e6,
            1e-5,
            1.0,
        ),
        case(
            "rho_explicit_b2e5",
            explicit_euler,
            explicit,
            2e5,
            1e6,
            1e-5,
            0.99995,
        ),
        case(
            "rho_explicit_b2_1e5",
            explicit_euler,
            explicit,
            2.1e5,
            1e6,
            1e-5,
            1.09995,
        ),
        case(
            "rho_symplectic_k1e6",
            symplectic_euler,
            symplectic_explicit_damping,
            1.0,
            1e6,
            1e-3,
            0.9995,
        ),
        case(
            "rho_symplectic_k1e7",
            symplectic_euler,
            symplectic_explicit_damping,
            1.0,
            1e7,
            1e-3,
            7.864,
        ),
        case(
            "rho_implicit_h1e-5",
            implicit_euler,
            implicit,
            0.0,
            1e6,
            1e-5,
            0.99995,
        ),
        case(
            "rho_implicit_h1e-2",
            implicit_euler,
            implicit,
            0.0,
            1e6,
            1e-2,
            0.0995,
        ),
    ]
}

/// The spectral radius of each library stepper's measured step map for each case, checked
/// against the paper's, and the measured maps against the schemes' closed forms; returns
/// the measured maps.
fn smd_spectral_radii(
    ctx: &RunContext,
    out: &mut ExperimentOutcome,
    base: &Model,
    cases: &[SmdCase],
) -> Result<Vec<Matrix2<f64>>, ReportError> {
    let m = 1.0;
    // The spectral radius of each library stepper's measured step map (not of a matrix
    // written here), checked against the paper's; the measured map against the scheme's
    // closed form.
    let mut measured = Vec::with_capacity(cases.len());
    let mut map_error: f64 = 0.0;
    let mut linearity: f64 = 0.0;
    for c in cases {
        (ctx.progress)(&format!("{}: {} steps", c.metric, c.stepper));
        let model = smd_model(base, c.b, c.k);
        let a = measured_step_map(&model, c.stepper, c.h)?;
        let closed = (c.closed_form)(m, c.b, c.k, c.h);
        map_error = map_error.max((a - closed).abs().max() / closed.abs().max().max(1.0));
        linearity = linearity.max(check_step_map_linearity(&model, c.stepper, &a, c.h, 200)?);
        out.metric(c.metric, spectral_radius(&a));
        // Eqs 11–12 damp implicitly, `penalty-symplectic` explicitly: at k = 1e7 its radius
        // (7.874) is 0.010 above that of eqs 11–12 (7.864; the closed form of each scheme is
        // checked to 1e-8 below); at the other parameters the schemes agree to 1e-6.
        let (tol, source) = if c.paper_rho > 2.0 {
            (
                0.015,
                "Drumwright 2019 §3, Fig 2, eqs 11-12 (explicit damping +0.010)",
            )
        } else {
            (1e-5, "Drumwright 2019 §3, Figs 1-3, eqs 7-14")
        };
        out.expect(c.metric, c.paper_rho, tol, source);
        measured.push(a);
    }
    out.metric("step_map_vs_closed_form", map_error);
    out.expect(
        "step_map_vs_closed_form",
        0.0,
        1e-8,
        "eqs 7-14 (closed-form maps)",
    );
    out.metric("step_map_linearity_200_steps", linearity);
    out.expect("step_map_linearity_200_steps", 0.0, 1e-6, "linear scheme");
    Ok(measured)
}

/// The Drumwright step on the spring as a soft constraint: implicit Euler in the constraint.
fn smd_drumwright_radii(out: &mut ExperimentOutcome, base: &Model) -> Result<(), ReportError> {
    let m = 1.0;
    // The paper's point, on the library's own stepper: with the spring as a soft constraint,
    // the Drumwright step is implicit Euler in the constraint (stable where symplectic Euler
    // explodes, k = 1e7, h = 1e-3) and L-stable (k = 1e6, h = 1e3).
    for (metric, k, h) in [
        ("rho_drumwright_k1e7_h1e-3", 1e7, 1e-3),
        ("rho_drumwright_k1e6_h1e3", 1e6, 1e3),
    ] {
        let model = smd_model(base, 1.0, k);
        let a = measured_step_map(&model, "drumwright", h)?;
        let expected = spectral_radius(&implicit(m, 1.0, k, h));
        out.metric(metric, spectral_radius(&a));
        out.expect(
            metric,
            expected,
            1e-6 * expected.max(1e-3),
            "implicit Euler, eqs 13-14",
        );
    }
    Ok(())
}

/// The stability predicates of eqs 7–12 against the spectral radius on a parameter sweep.
fn smd_stability_predicates(out: &mut ExperimentOutcome) {
    let m = 1.0;
    // Stability predicates against the spectral radius on a parameter sweep (A1).
    let mut mismatches = 0.0;
    for i in 0..40 {
        for j in 0..40 {
            let k = 10f64.powf(2.0 + 10.0 * i as f64 / 39.0);
            let b = 10f64.powf(-1.0 + 13.0 * j as f64 / 39.0);
            let h = 1e-4;
            let pred_e = h * k < b && b < 2.0 * m / h + h * k / 2.0;
            let rho_e = spectral_radius(&explicit(m, b, k, h));
            let pred_s = h * h * k < 4.0 * m + 2.0 * h * b;
            let rho_s = spectral_radius(&symplectic(m, b, k, h));
            let margin = 1e-9;
            if (rho_e < 1.0 - margin && !pred_e) || (rho_e > 1.0 + margin && pred_e) {
                mismatches += 1.0;
            }
            if (rho_s < 1.0 - margin && !pred_s) || (rho_s > 1.0 + margin && pred_s) {
                mismatches += 1.0;
            }
            if spectral_radius(&implicit(m, b, k, h)) >= 1.0 {
                mismatches += 1.0;
            }
        }
    }
    out.metric("stability_predicate_mismatches", mismatches);
    out.expect(
        "stability_predicate_mismatches",
        0.0,
        0.0,
        "§3, eqs 7-12 (Jury, A1)",
    );
}

/// The trajectories of Figs 1–3 from the measured step maps.
fn smd_figures(
    ctx: &RunContext,
    out: &mut ExperimentOutcome,
    cases: &[SmdCase],
    measured: &[Matrix2<f64>],
) -> Result<(), ReportError> {
    let t_end = if ctx.quick { 0.01 } else { 0.05 };
    let label = |i: usize, text: &'static str| (text, measured[i], cases[i].h);
    let figs: [FigureSpec; 3] = [
        (
            "smd_explicit.svg",
            "penalty-explicit (explicit Euler), k = 1e6, h = 1e-5 (Fig 1)",
            vec![
                label(0, "b = 1"),
                label(2, "b = 2e5"),
                label(3, "b = 2.1e5"),
            ],
        ),
        (
            "smd_symplectic.svg",
            "penalty-symplectic (symplectic Euler), b = 1, h = 1e-3 (Fig 2)",
            vec![label(4, "k = 1e6"), label(5, "k = 1e7")],
        ),
        (
            "smd_implicit.svg",
            "penalty-implicit (implicit Euler), k = 1e6, b = 0 (Fig 3)",
            vec![label(6, "h = 1e-5"), label(7, "h = 1e-2")],
        ),
    ];
    for (file, title, series) in figs {
        let mut fig = Figure::new(title, "t [s]", "x [m] (clamped to ±5)");
        for (name, a, h) in series {
            let every = ((t_end / h) / 2000.0).ceil().max(1.0) as usize;
            fig.series
                .push(Series::line(name, trajectory(&a, h, t_end, every)));
        }
        fig.write_svg(&ctx.path(file))?;
        out.figure(file);
    }
    Ok(())
}

/// Table 1 of Drumwright (2019, §5.5), wall times (s): (elements, load N, [CB, ode15s, ode45] at E
/// = 1e7, the same at E = 1e11).
const FOUNDATION_TABLE1: [(usize, f64, [f64; 3], [f64; 3]); 4] = [
    (100, 5.0, [0.331, 0.302, 28.0], [0.286, 0.189, 27.4]),
    (100, 50.0, [0.332, 9.55, 15.5], [0.396, 5550.0, 621.0]),
    (900, 5.0, [7.40, 4.75, 829.0], [8.23, 1.10, 17100.0]),
    (900, 50.0, [12.98, 27.3, 346.0], [26.00, 2.31, 17400.0]),
];

/// Table 1 beside this run as the baselines' cost relative to the constraint-based method's
/// (`log10_<bdf|rk45>_over_cb_<tag>`: the paper's hardware is unknown, so the ratios are
/// compared, in decades, agreeing within one), and a note naming the wall-time budgets and
/// the runs they cut short (their times, and ratios, are lower bounds).
fn foundation_table1(out: &mut ExperimentOutcome) {
    let mut cut = Vec::new();
    let rows = FOUNDATION_TABLE1
        .iter()
        .map(|&(elements, load, soft, stiff)| {
            let cells = [(1e7, soft), (1e11, stiff)]
                .into_iter()
                .flat_map(|(e, paper)| {
                    let tag = format!("{elements}_{load}N_{e:e}");
                    let cb = out.metrics.get(&format!("time_cb_{tag}")).copied();
                    let mut cells = Vec::new();
                    for (k, name) in [(1, "bdf"), (2, "rk45")] {
                        let metric = format!("log10_{name}_over_cb_{tag}");
                        let baseline = out.metrics.get(&format!("time_{name}_{tag}")).copied();
                        if let (Some(cb), Some(t)) = (cb, baseline) {
                            out.metric(&metric, (t / cb.max(1e-12)).log10());
                        }
                        if out.metrics.get(&format!("finished_{name}_{tag}")) == Some(&0.0) {
                            cut.push(format!("{name} {tag}"));
                        }
                        cells.push(Some((metric, (paper[k] / paper[0]).log10(), 1.0)));
                    }
                    cells
                })
                .collect();
            (format!("{load} N, {elements} elements"), cells)
        })
        .collect();
    out.paper_table(
        "table1",
        "Table 1 (paper §5.5): log10 of the baselines' wall time over the constraint-based \
         method's (ode15s ≈ BDF(1), ode45 ≈ RK45), agreeing within one decade",
        &["E = 1e7 BDF/CB", "RK45/CB", "E = 1e11 BDF/CB", "RK45/CB"],
        rows,
    );
    out.notes.push(format!(
        "Wall-time budgets of the full run: {BASELINE_BUDGET_S} s per BDF(1) baseline, \
         {REFERENCE_BUDGET_S} s per RK45 reference (the paper's baselines ran up to 17 100 s). \
         Runs stopped early (by their budget or a failure, each named in its own note), whose \
         times and Table 1 ratios are lower bounds: [{}].",
        cut.join(", ")
    ));
}

/// Table 2 of Drumwright (2019, §5.5) (error of the constraint-based method at h = 0.01 against the
/// reference after 1 s, and the two h = 1e-3 values of its note): (load N, elements, h,
/// [error at E = 1e7, error at E = 1e11]).
const FOUNDATION_TABLE2: [(f64, usize, f64, [f64; 2]); 5] = [
    (5.0, 100, 1e-2, [2.96e-5, 2.91e-7]),
    (5.0, 900, 1e-2, [1.98e-5, 2.71e-9]),
    (50.0, 100, 1e-2, [0.813, 0.814]),
    (50.0, 900, 1e-2, [1.0e-2, 1.0e-2]),
    (50.0, 100, 1e-3, [3.14e-3, 9.22e-5]),
];

/// Table 2 cell by cell beside this run's errors, compared in orders of magnitude
/// (`log10_error_cb_<tag>`, agreement within one decade: the paper's foundation extent,
/// element layout and g are not given, D7 of docs/decisions/003-stable-constraint-solver.md), and
/// every row checked: the constraint-based method is at least as accurate as the paper reports
/// (error ≤ the paper's; where the reference stopped before 1 s, the error at the last time it
/// reached, `error_cb_<tag>_at_t`, against the same bound). The table's cell of such a row is left
/// out (its error is at an earlier time).
fn foundation_table2(out: &mut ExperimentOutcome) {
    for &(load, elements, h, paper) in &FOUNDATION_TABLE2 {
        for (e, bound) in [1e7, 1e11].into_iter().zip(paper) {
            let mut tag = format!("{elements}_{load}N_{e:e}");
            if h != 1e-2 {
                tag.push_str("_h1e-3");
            }
            let metric = [format!("error_cb_{tag}"), format!("error_cb_{tag}_at_t")]
                .into_iter()
                .find(|m| out.metrics.contains_key(m));
            if let Some(metric) = metric {
                out.expect(
                    &metric,
                    0.0,
                    bound,
                    &format!("Table 2: no larger than the paper's error ({bound:e})"),
                );
            }
        }
    }
    let rows = FOUNDATION_TABLE2
        .iter()
        .map(|&(load, elements, h, paper)| {
            let cells = [1e7, 1e11]
                .iter()
                .zip(paper)
                .map(|(e, value)| {
                    let mut metric = format!("error_cb_{elements}_{load}N_{e:e}");
                    if h != 1e-2 {
                        metric.push_str("_h1e-3");
                    }
                    let log_metric = format!("log10_{metric}");
                    if let Some(err) = out.metrics.get(&metric).copied() {
                        out.metric(&log_metric, err.log10());
                    }
                    Some((log_metric, value.log10(), 1.0))
                })
                .collect();
            (format!("{load} N, {elements} elements, h = {h:e}"), cells)
        })
        .collect();
    out.paper_table(
        "table2",
        "Table 2 (paper §5.5): log10 of the error after 1 s against the reference",
        &["E = 1e7", "E = 1e11"],
        rows,
    );
}

/// Joint drift |φ| of the absolute-coordinates pendulum (anchor (−L, 0) in the body frame).
fn pin_drift(q: &DVector<f64>) -> f64 {
    let (x, y, th) = (q[0], q[1], q[2]);
    (x - th.cos()).hypot(y - th.sin())
}

fn energy(s: &State) -> f64 {
    0.5 * (s.v[0] * s.v[0] + s.v[1] * s.v[1]) + 0.5 * 0.01 * s.v[2] * s.v[2] + 9.81 * s.q[1]
}

/// Runs the pendulum for `t_end`, returning (max drift, final state, drift samples).
fn run_pendulum(model: &Model, h: f64, t_end: f64, id: &str) -> Result<PendulumRun, ReportError> {
    let mut st = DrumwrightStepper::default();
    let mut s = model.initial_state.clone();
    let n = (t_end / h).round() as usize;
    let every = (n / 1000).max(1);
    let mut max_drift: f64 = 0.0;
    let mut max_energy: f64 = 0.0;
    let e0 = energy(&s);
    let mut samples = Vec::new();
    for i in 1..=n {
        s = bare_step(&mut st, model, &s, &Actuation::none(), h).map_err(|e| fail(id, e))?;
        let d = pin_drift(&s.q);
        max_drift = max_drift.max(d);
        max_energy = max_energy.max((energy(&s) - e0).abs());
        if i % every == 0 {
            samples.push((s.t, d));
        }
    }
    Ok((max_drift, s, samples, max_energy))
}

fn pendulum(ctx: &RunContext, out: &mut ExperimentOutcome) -> Result<(), ReportError> {
    let id = "drumwright-pendulum";
    let model = load(PENDULUM, "examples/drumwright_pendulum.toml")?;
    let mut fig = Figure::new(
        "Joint drift |φ| (k = 1e15, b = 1, Fig 4)",
        "t [s]",
        "|φ| [m]",
    );
    fig.log_y = true;
    let mut drifts = Vec::new();
    for (name, h) in [
        ("max_drift_h1e-1", 0.1),
        ("max_drift_h1e-2", 1e-2),
        ("max_drift_h1e-3", 1e-3),
        ("max_drift_h1e-4", 1e-4),
    ] {
        (ctx.progress)(&format!("h = {h}"));
        let (d, _, samples, _) = run_pendulum(&model, h, 1.0, id)?;
        out.metric(name, d);
        drifts.push(d);
        fig.series.push(Series::line(
            format!("h = {h}"),
            samples
                .into_iter()
                .map(|(t, d)| (t, d.max(1e-14)))
                .collect(),
        ));
    }
    out.expect(
        "max_drift_h1e-1",
        0.15,
        0.15,
        "bounded for k = 1e15 (Drumwright 2019 §4.4, Fig 4; ours: 0.148)",
    );
    out.expect("max_drift_h1e-2", 9.8e-4, 1.5e-4, "§4.4, Fig 4 (A2)");
    out.expect("max_drift_h1e-3", 9.7e-6, 1.5e-6, "§4.4, Fig 4 (A2)");
    out.expect("max_drift_h1e-4", 9.7e-8, 1.5e-8, "§4.4, Fig 4 (A2)");
    out.metric("drift_ratio_per_decade", drifts[1] / drifts[2]);
    out.expect("drift_ratio_per_decade", 100.0, 30.0, "O(h²) drift (A2)");
    fig.write_svg(&ctx.path("pendulum_drift.svg"))?;
    out.figure("pendulum_drift.svg");
    // Global error at t = 1 s when halving h (first order, A2).
    let (h_ref, h1) = if ctx.quick {
        (1e-4, 1e-2)
    } else {
        (1e-5, 1e-2)
    };
    let (_, reference, _, _) = run_pendulum(&model, h_ref, 1.0, id)?;
    let (_, a, _, _) = run_pendulum(&model, h1, 1.0, id)?;
    let (_, b, _, _) = run_pendulum(&model, h1 / 2.0, 1.0, id)?;
    let ea = (&a.q - &reference.q).norm();
    let eb = (&b.q - &reference.q).norm();
    out.metric("global_error_h1e-2", ea);
    out.metric("global_error_ratio", ea / eb);
    out.expect("global_error_ratio", 2.0, 0.25, "first order (A2)");
    // Energy over 20 s at h = 1e-3 (A3, D8): bounded, O(h).
    let t_energy = if ctx.quick { 4.0 } else { 20.0 };
    let (_, _, _, e_drift) = run_pendulum(&model, 1e-3, t_energy, id)?;
    out.metric("energy_drift_20s_h1e-3", e_drift);
    out.expect("energy_drift_20s_h1e-3", 0.0, 0.02, "§4.4 (A3: ±0.015 J)");
    if ctx.quick {
        out.notes
            .push("quick: energy over 4 s, global-error reference h = 1e-4".into());
    }
    Ok(())
}

/// Coefficient of restitution of the limit at step h: the bob starts (3.3 h ω₀) above the
/// limit moving at the impact speed ω₀ = √(2 g L) of a fall from θ = π/2 (the free swing is
/// skipped; gravity acts throughout), and e = θ̇ after the impact / ω₀.
fn restitution(model: &Model, h: f64, id: &str) -> Result<(f64, Vec<(f64, f64)>), ReportError> {
    let w0 = (2.0_f64 * 9.81).sqrt();
    let mut st = DrumwrightStepper::default();
    let mut s = State {
        q: DVector::from_element(1, 3.3 * h * w0),
        v: DVector::from_element(1, -w0),
        t: 0.0,
    };
    let steps = (2e-5 / h).ceil() as usize + 20;
    let mut samples = vec![(0.0, s.q[0])];
    for _ in 0..steps {
        s = bare_step(&mut st, model, &s, &Actuation::none(), h).map_err(|e| fail(id, e))?;
        samples.push((s.t * 1e6, s.q[0]));
    }
    Ok((s.v[0] / w0, samples))
}

fn joint_limit(ctx: &RunContext, out: &mut ExperimentOutcome) -> Result<(), ReportError> {
    let id = "drumwright-joint-limit";
    let model = load(LIMIT, "examples/drumwright_joint_limit.toml")?;
    let mut fig = Figure::new(
        "Joint limit k = 1e12, b = 0: θ near the impact (Fig 6)",
        "t [µs]",
        "θ [rad]",
    );
    let cases = [
        ("restitution_h1e-5", 1e-5, 0.005, 0.01),
        ("restitution_h1e-6", 1e-6, 0.25, 0.1),
        ("restitution_h1e-7", 1e-7, 0.855, 0.06),
        ("restitution_h1e-8", 1e-8, 0.984, 0.02),
    ];
    for (name, h, expected, tol) in cases {
        (ctx.progress)(&format!("h = {h}"));
        let (e, samples) = restitution(&model, h, id)?;
        out.metric(name, e);
        out.expect(
            name,
            expected,
            tol,
            "Drumwright 2019 §5.4, Fig 6 (A6; speculative limit, D3)",
        );
        fig.series.push(Series::line(format!("h = {h}"), samples));
    }
    fig.write_svg(&ctx.path("joint_limit.svg"))?;
    out.figure("joint_limit.svg");
    Ok(())
}

fn incline(ctx: &RunContext, out: &mut ExperimentOutcome) -> Result<(), ReportError> {
    let id = "drumwright-incline";
    let base = load(INCLINE, "examples/drumwright_incline.toml")?;
    let h = 0.01;
    let steps = if ctx.quick { 30 } else { 100 };
    let g = 9.8;
    let slope = 15f64.to_radians();
    let mut fig = Figure::new(
        "Distance slid down a 15° incline (Fig 9)",
        "t [s]",
        "distance [m]",
    );
    let mut normal_per_foot = 0.0;
    let mut inflation: f64 = 0.0;
    let mut runs = Vec::new();
    for (name, mu) in [
        ("slide_mu0", 0.0),
        ("slide_mu0_125", 0.125),
        ("slide_mu0_25", 0.25),
        ("slide_mu0_375", 0.375),
    ] {
        (ctx.progress)(&format!("mu = {mu}"));
        let mut model = base.clone();
        for m in &mut model.materials {
            m.friction = mu;
        }
        let mut st = DrumwrightStepper::default();
        let mut s = model.initial_state.clone();
        let mut samples = vec![(0.0, 0.0)];
        let mut states = vec![s.clone()];
        // The impulses of the step from each recorded state, for the player's force arrows.
        let mut impulses = Vec::new();
        for _ in 0..steps {
            s = bare_step(&mut st, &model, &s, &Actuation::none(), h).map_err(|e| fail(id, e))?;
            samples.push((s.t, -s.q[0]));
            states.push(s.clone());
            impulses.push(nonsmooth_sim::StepImpulses::of_last_step(&st, &model, h));
            for c in &st.last.contacts {
                if c.spring_normal > 1e-3 {
                    inflation = inflation.max(c.normal / c.spring_normal - 1.0);
                }
            }
        }
        let slide = -s.q[0];
        impulses.push(None);
        let mut traj = nonsmooth_figures::viewer::trajectory_of(&model, "drumwright", &states);
        traj.impulses = impulses;
        runs.push(nonsmooth_figures::viewer::run(
            &model,
            &traj,
            format!("μ = {mu}"),
            String::new(),
            nonsmooth_report::viewer::MAX_FRAMES / 4,
        ));
        out.metric(name, slide);
        // Symplectic Euler from rest: x_n = a h² n(n+1)/2, a = g(sin15° − μ cos15°)₊.
        let a = (g * (slope.sin() - mu * slope.cos())).max(0.0);
        let n = steps as f64;
        let expected = a * h * h * n * (n + 1.0) / 2.0;
        let tol = if a == 0.0 { 1e-3 } else { 0.1 * expected };
        out.expect(
            name,
            expected,
            tol,
            "Drumwright 2019 §6.4, Fig 9 (A9: 1.281, 0.683, 0.086, 0 m at 1 s)",
        );
        fig.series.push(Series::line(format!("μ = {mu}"), samples));
        if mu == 0.25 {
            let sum: f64 = st.last.contacts.iter().map(|c| c.normal).sum();
            normal_per_foot = sum / 4.0;
        }
    }
    out.metric("normal_force_per_foot", normal_per_foot);
    out.expect("normal_force_per_foot", 2.37, 0.1, "9.8 cos 15° / 4 (A9)");
    out.metric("max_normal_inflation", inflation);
    out.expect(
        "max_normal_inflation",
        0.0,
        0.01,
        "λ_n ≤ 1.01 spring value (A9, D5 staged)",
    );
    if ctx.quick {
        out.notes
            .push(format!("quick: {steps} steps instead of 100"));
    }
    fig.write_svg(&ctx.path("incline.svg"))?;
    out.figure("incline.svg");
    // The four slides overlaid in the trajectory viewer (one colour per μ).
    let scene = nonsmooth_figures::viewer::overlay(
        &base,
        runs,
        "Box on a 15° incline, drumwright, h = 0.01 (Fig 9)".into(),
        Vec::new(),
    );
    nonsmooth_report::viewer::write_viewer_html(&ctx.path("viewer.html"), &scene)?;
    out.player("viewer.html");
    Ok(())
}

fn stack(ctx: &RunContext, out: &mut ExperimentOutcome) -> Result<(), ReportError> {
    let id = "drumwright-stack";
    let steps = if ctx.quick { 60 } else { 500 };
    let h = 0.01;
    let mut timing = Vec::new();
    let mut fig_time = Figure::new(
        "Seconds per step versus number of spheres (Fig 10)",
        "spheres",
        "seconds per step",
    );
    let mut fig_top = Figure::new("Height of the top sphere (N = 10)", "t [s]", "z [m]");
    for n in [1usize, 10, 25, 50, 100] {
        (ctx.progress)(&format!("N = {n}"));
        let model = stack_model(n)?;
        let mut st = DrumwrightStepper::default();
        let mut s = model.initial_state.clone();
        let mut failures = 0.0;
        let mut fallbacks = 0usize;
        let mut top = Vec::new();
        let mut states = vec![s.clone()];
        let mut impulses = Vec::new();
        let start = std::time::Instant::now();
        for _ in 0..steps {
            match bare_step(&mut st, &model, &s, &Actuation::none(), h) {
                Ok(next) => {
                    s = next;
                    fallbacks += st.last.fallbacks;
                    if n == 10 {
                        states.push(s.clone());
                        impulses.push(nonsmooth_sim::StepImpulses::of_last_step(&st, &model, h));
                    }
                }
                Err(e) => {
                    failures += 1.0;
                    out.notes.push(format!("{id}: N = {n}: {e}"));
                    break;
                }
            }
            top.push((s.t, s.q[7 * (n - 1) + 2]));
        }
        let per_step = start.elapsed().as_secs_f64() / steps as f64;
        let mut drift: f64 = 0.0;
        for i in 0..n {
            drift = drift.max(s.q[7 * i].hypot(s.q[7 * i + 1]));
        }
        let rest = STACK_RADIUS + 2.0 * STACK_RADIUS * (n - 1) as f64;
        let sink = rest - s.q[7 * (n - 1) + 2];
        out.metric(&format!("seconds_per_step_{n}"), per_step);
        out.metric(&format!("upright_{n}"), drift);
        out.metric(&format!("top_sink_{n}"), sink);
        out.metric(&format!("solver_failures_{n}"), failures);
        // Stage solves of the block fast path that fell back to Clarabel (the
        // specialized solvers failed their KKT checks).
        out.metric(&format!("fast_path_fallbacks_{n}"), fallbacks as f64);
        out.expect(
            &format!("upright_{n}"),
            0.0,
            1e-3,
            "stable upright stack (A11)",
        );
        out.expect(
            &format!("top_sink_{n}"),
            0.0,
            2e-3,
            "settles at the Hertz rest height",
        );
        out.expect(
            &format!("solver_failures_{n}"),
            0.0,
            0.0,
            "no failed solves (A11)",
        );
        if n > 1 {
            timing.push((n as f64, per_step));
        }
        if n == 10 {
            fig_top.series.push(Series::line("top sphere", top));
            let mut traj = nonsmooth_figures::viewer::trajectory_of(&model, "drumwright", &states);
            impulses.push(None);
            traj.impulses = impulses;
            let scene = nonsmooth_figures::viewer::scene(
                &model,
                &traj,
                "Stack of 10 stiff spheres, drumwright, h = 0.01 (Fig 10)".into(),
            );
            nonsmooth_report::viewer::write_viewer_html(&ctx.path("viewer.html"), &scene)?;
            out.player("viewer.html");
        }
    }
    // Least-squares slope of log(seconds per step) against log(N).
    let k = timing.len() as f64;
    let (sx, sy) = timing
        .iter()
        .fold((0.0, 0.0), |(a, b), (x, y)| (a + x.ln(), b + y.ln()));
    let (mx, my) = (sx / k, sy / k);
    let (num, den) = timing.iter().fold((0.0, 0.0), |(a, b), (x, y)| {
        (a + (x.ln() - mx) * (y.ln() - my), b + (x.ln() - mx).powi(2))
    });
    out.metric("scaling_exponent", num / den);
    fig_time
        .series
        .push(Series::scatter("drumwright (block fast path)", timing));
    fig_time.write_svg(&ctx.path("stack_timing.svg"))?;
    out.figure("stack_timing.svg");
    fig_top.write_svg(&ctx.path("stack_top.svg"))?;
    out.figure("stack_top.svg");
    if ctx.quick {
        out.notes
            .push(format!("quick: {steps} steps instead of 500"));
    }
    Ok(())
}

/// The foundation model of `examples/drumwright_foundation.toml` with an `n × n` element grid
/// and Young's modulus `e` (k_i = E · A_elem / depth, depth 1 m, face 1 × 1 m).
pub fn foundation_model(n: usize, e: f64) -> Result<Model, ReportError> {
    let id = "drumwright-foundation";
    let mut model = load(FOUNDATION, "examples/drumwright_foundation.toml")?;
    let area = 1.0 / (n * n) as f64;
    let soil = model
        .materials
        .iter()
        .position(|m| m.name == "soil")
        .ok_or_else(|| fail(id, "example file has no material \"soil\""))?;
    model.materials[soil].stiffness = Some(e * area);
    let col = model
        .colliders
        .iter_mut()
        .find(|c| c.name == "elements")
        .ok_or_else(|| fail(id, "example file has no collider \"elements\""))?;
    let mut points = Vec::with_capacity(n * n);
    for i in 0..n {
        for j in 0..n {
            let x = -0.5 + (i as f64 + 0.5) / n as f64;
            let y = -0.5 + (j as f64 + 0.5) / n as f64;
            points.push(nalgebra::Vector3::new(x, y, -0.5));
        }
    }
    col.shape = nonsmooth_core::Shape::Points { points };
    Ok(model)
}

/// The paper's load: `force` N downward at the body point (s/2)(cos 10t, sin 10t, 1).
pub fn foundation_load(force: f64) -> PointLoad {
    PointLoad {
        body: 0,
        force: nalgebra::Vector3::new(0.0, 0.0, -force),
        centre: nalgebra::Vector3::new(0.0, 0.0, 0.5),
        radius: 0.5,
        omega: 10.0,
    }
}

/// Wall-time budget (s) of one BDF(1) baseline run in full mode.
pub const BASELINE_BUDGET_S: f64 = 30.0;
/// Wall-time budget (s) of one RK45 reference run in full mode.
pub const REFERENCE_BUDGET_S: f64 = 120.0;

/// One timed run of a stepper over `[0, t_end]`.
struct TimedRun {
    /// The last state reached.
    state: State,
    /// Wall seconds spent (a lower bound when the run did not finish).
    seconds: f64,
    /// `None` when the run reached `t_end`; otherwise why it stopped (budget, integrator
    /// failure).
    stopped: Option<String>,
}

/// Runs a stepper to `t_end` with steps of `h` within `budget` wall seconds. A step error
/// stops the run and is returned in [`TimedRun::stopped`] (the caller decides whether that
/// is fatal).
fn run_loaded(
    model: &Model,
    t_end: f64,
    h: f64,
    budget: f64,
    mut step: impl FnMut(&State) -> Result<State, nonsmooth_sim::SimError>,
) -> TimedRun {
    let steps = (t_end / h).round() as usize;
    let mut s = model.initial_state.clone();
    let start = std::time::Instant::now();
    for _ in 0..steps {
        if start.elapsed().as_secs_f64() > budget {
            return TimedRun {
                state: s,
                seconds: start.elapsed().as_secs_f64(),
                stopped: Some(format!("wall-time budget of {budget} s exceeded")),
            };
        }
        match step(&s) {
            Ok(next) => s = next,
            Err(e) => {
                return TimedRun {
                    state: s,
                    seconds: start.elapsed().as_secs_f64(),
                    stopped: Some(e.to_string()),
                }
            }
        }
    }
    TimedRun {
        state: s,
        seconds: start.elapsed().as_secs_f64(),
        stopped: None,
    }
}

/// The drumwright run must finish: its failure fails the experiment.
fn require_finished(id: &str, run: TimedRun) -> Result<TimedRun, ReportError> {
    match &run.stopped {
        None => Ok(run),
        Some(why) => Err(fail(id, why)),
    }
}

fn foundation(ctx: &RunContext, out: &mut ExperimentOutcome) -> Result<(), ReportError> {
    let t_end = if ctx.quick { 0.1 } else { 1.0 };
    let h = 0.01;
    let elements: &[usize] = if ctx.quick { &[10] } else { &[10, 30] };
    let moduli: &[f64] = if ctx.quick { &[1e7] } else { &[1e7, 1e11] };
    let mut table = Vec::new();
    let mut cb_times = Vec::new();
    let mut references: Vec<(f64, State)> = Vec::new();
    let mut fig_pressure = Figure::new(
        "Element forces across the middle of the face at the end (Fig 7, 50 N)",
        "x [m]",
        "element force [N]",
    );
    for &n in elements {
        for &load in &[5.0, 50.0] {
            for &e in moduli {
                let case = FoundationCase { n, load, e };
                (ctx.progress)(&case.tag());
                let result = foundation_case(ctx, out, case, t_end, h)?;
                table.push(result.row);
                if !ctx.quick && n == 10 && load == 50.0 {
                    if let Some(reference) = result.reference {
                        references.push((e, reference));
                    }
                }
                if e == 1e7 && load == 50.0 {
                    cb_times.push(((n * n) as f64, result.seconds));
                    fig_pressure
                        .series
                        .push(Series::line(format!("{} elements", n * n), result.pressure));
                }
            }
        }
    }
    foundation_fine_step(out, &references, t_end)?;
    let outputs = FoundationOutputs {
        table,
        cb_times,
        fig_pressure,
        t_end,
    };
    foundation_outputs(ctx, out, outputs)
}

/// One case of the foundation grid (Drumwright 2019, §5.5): elements per side, load (N),
/// Young's modulus (Pa).
#[derive(Debug, Clone, Copy)]
struct FoundationCase {
    n: usize,
    load: f64,
    e: f64,
}

impl FoundationCase {
    /// The case's tag in metric names (`<elements>_<load>N_<E>`).
    fn tag(&self) -> String {
        format!("{}_{}N_{:e}", self.n * self.n, self.load, self.e)
    }
}

/// What one foundation case gives: its row of the tables' CSV, the Drumwright run's wall
/// time, the reference state at the end (when the reference run finished) and the element
/// forces across the middle of the face.
struct FoundationResult {
    row: Vec<f64>,
    seconds: f64,
    reference: Option<State>,
    pressure: Vec<(f64, f64)>,
}

/// One foundation case: the Drumwright run, the BDF(1) baseline (not with `--fast`) and the
/// RK45 reference, their wall times, the error against the reference and the stability
/// check.
fn foundation_case(
    ctx: &RunContext,
    out: &mut ExperimentOutcome,
    case: FoundationCase,
    t_end: f64,
    h: f64,
) -> Result<FoundationResult, ReportError> {
    let id = "drumwright-foundation";
    let FoundationCase { n, load, e } = case;
    let tag = case.tag();
    let budget = |full: f64| if ctx.quick { f64::INFINITY } else { full };
    let model = foundation_model(n, e)?;
    let pl = foundation_load(load);
    let mut cb = DrumwrightStepper::default();
    let mut cb_states: Vec<State> = Vec::new();
    let cb_run = require_finished(
        id,
        run_loaded(&model, t_end, h, f64::INFINITY, |s| {
            let next = bare_step(&mut cb, &model, s, &load_actuation(&model, s, &pl)?, h)?;
            cb_states.push(next.clone());
            Ok(next)
        }),
    )?;
    let mut bdf = BdfStepper::default().with_load(pl.clone());
    bdf.rtol = 1e-3;
    bdf.atol = 1e-6;
    // The BDF(1) baseline serves Table 1's timing only: `--fast` skips it.
    let bdf_run = (!ctx.fast).then(|| {
        run_loaded(&model, t_end, h, budget(BASELINE_BUDGET_S), |s| {
            bare_step(&mut bdf, &model, s, &Actuation::none(), h)
        })
    });
    let mut rk = Rk45Stepper::default().with_load(pl.clone());
    rk.rtol = 1e-8;
    rk.atol = 1e-11;
    let rk_run = run_loaded(&model, t_end, h, budget(REFERENCE_BUDGET_S), |s| {
        bare_step(&mut rk, &model, s, &Actuation::none(), h)
    });
    let t_bdf = bdf_run.as_ref().map_or(f64::NAN, |r| r.seconds);
    let (t_cb, t_rk) = (cb_run.seconds, rk_run.seconds);
    out.metric(&format!("time_cb_{tag}"), t_cb);
    if bdf_run.is_some() {
        out.metric(&format!("time_bdf_{tag}"), t_bdf);
    }
    out.metric(&format!("time_rk45_{tag}"), t_rk);
    let runs = [("bdf", bdf_run.as_ref()), ("rk45", Some(&rk_run))];
    for (name, run) in runs.into_iter().filter_map(|(n, r)| Some((n, r?))) {
        let done = run.stopped.is_none();
        out.metric(&format!("finished_{name}_{tag}"), f64::from(u8::from(done)));
        if let Some(why) = &run.stopped {
            out.notes.push(format!(
                "{name} on {tag} stopped at t = {:.4} s after {:.1} s of wall time: {why}",
                run.state.t, run.seconds
            ));
        }
    }
    let q_cb = &cb_run.state;
    // Error against the reference at t_end, or, when the reference stopped on
    // its budget, at the last time it reached (`error_cb_<tag>_at_t`).
    let at_ref = cb_states
        .iter()
        .find(|c| (c.t - rk_run.state.t).abs() < 1e-9 * (1.0 + c.t))
        .map(|c| (&c.q - &rk_run.state.q).norm());
    let (err, rel) = if rk_run.stopped.is_none() {
        let err = (&q_cb.q - &rk_run.state.q).norm();
        out.metric(&format!("error_cb_{tag}"), err);
        out.metric(&format!("rel_error_cb_{tag}"), err / rk_run.state.q.norm());
        (err, err / rk_run.state.q.norm())
    } else {
        if let Some(err) = at_ref {
            out.metric(&format!("error_cb_{tag}_at_t"), err);
            out.metric(&format!("reference_t_{tag}"), rk_run.state.t);
        }
        (f64::NAN, f64::NAN)
    };
    let stable = q_cb.q.iter().all(|x| x.is_finite()) && (q_cb.q[2] - 0.5).abs() < 0.05;
    out.metric(&format!("stable_{tag}"), if stable { 1.0 } else { 0.0 });
    out.expect(&format!("stable_{tag}"), 1.0, 0.0, "A8: no instability");
    let row = vec![
        (n * n) as f64,
        load,
        e,
        t_cb,
        t_bdf,
        t_rk,
        err,
        rel,
        if bdf_run.is_some() {
            bdf.internal_steps as f64
        } else {
            f64::NAN
        },
        rk.internal_steps as f64,
    ];
    let mid = n / 2;
    let mut pressure = Vec::new();
    for c in &cb.last.contacts {
        let (i, j) = (c.contact / n, c.contact % n);
        if j == mid {
            pressure.push((-0.5 + (i as f64 + 0.5) / n as f64, c.normal));
        }
    }
    pressure.sort_by(|a, b| a.0.total_cmp(&b.0));
    Ok(FoundationResult {
        row,
        seconds: t_cb,
        reference: rk_run.stopped.is_none().then(|| rk_run.state.clone()),
        pressure,
    })
}

/// The 100-element, 50 N cases at h = 1e-3 (Table 2 note), against the h = 1e-2 runs'
/// references.
fn foundation_fine_step(
    out: &mut ExperimentOutcome,
    references: &[(f64, State)],
    t_end: f64,
) -> Result<(), ReportError> {
    let id = "drumwright-foundation";
    for (e, reference) in references {
        let tag = format!("100_50N_{e:e}");
        let model = foundation_model(10, *e)?;
        let pl = foundation_load(50.0);
        let mut cb = DrumwrightStepper::default();
        let cb_run = require_finished(
            id,
            run_loaded(&model, t_end, 1e-3, f64::INFINITY, |s| {
                bare_step(&mut cb, &model, s, &load_actuation(&model, s, &pl)?, 1e-3)
            }),
        )?;
        out.metric(
            &format!("error_cb_{tag}_h1e-3"),
            (&cb_run.state.q - &reference.q).norm(),
        );
    }
    Ok(())
}

/// The foundation grid's collected outputs: the tables' rows, the Drumwright wall times at
/// 50 N and E = 1e7, the element-force figure, the simulated duration.
struct FoundationOutputs {
    table: Vec<Vec<f64>>,
    cb_times: Vec<(f64, f64)>,
    fig_pressure: Figure,
    t_end: f64,
}

/// Tables 1–2 (full mode), the timing exponent, the figures and the tables' CSV.
fn foundation_outputs(
    ctx: &RunContext,
    out: &mut ExperimentOutcome,
    outputs: FoundationOutputs,
) -> Result<(), ReportError> {
    let FoundationOutputs {
        table,
        cb_times,
        fig_pressure,
        t_end,
    } = outputs;
    let mut fig_time = Figure::new(
        "Wall time per run versus elements (Table 1)",
        "elements",
        "seconds",
    );
    if !ctx.quick {
        foundation_table1(out);
        foundation_table2(out);
    }
    if ctx.fast {
        out.notes.push(
            "--fast: the BDF(1) baselines were not run (they serve Table 1's timing only); \
             Table 1's BDF cells are 'not run'"
                .into(),
        );
    }
    if cb_times.len() == 2 {
        let (a, b) = (cb_times[0], cb_times[1]);
        out.metric("cb_time_exponent", (b.1 / a.1).ln() / (b.0 / a.0).ln());
    }
    fig_time
        .series
        .push(Series::scatter("drumwright (50 N, E = 1e7)", cb_times));
    fig_time.write_svg(&ctx.path("foundation_timing.svg"))?;
    out.figure("foundation_timing.svg");
    fig_pressure.write_svg(&ctx.path("foundation_pressure.svg"))?;
    out.figure("foundation_pressure.svg");
    let header: Vec<String> = [
        "elements",
        "load_N",
        "E",
        "time_cb",
        "time_bdf",
        "time_rk45",
        "error_cb",
        "rel_error_cb",
        "bdf_steps",
        "rk45_steps",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    nonsmooth_report::table::write_csv(&ctx.path("foundation_tables.csv"), &header, &table)?;
    out.file("foundation_tables.csv");
    if ctx.quick {
        out.notes.push(format!(
            "quick: 100 elements, E = 1e7, {t_end} s instead of all 8 cases over 1 s"
        ));
    }
    Ok(())
}
