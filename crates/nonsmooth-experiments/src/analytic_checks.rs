//! Foundation experiments: analytic checks of the model → snapshot → stepper path and of the
//! LCP solvers, run on the example model files.
//!
//! - `foundation-free-fall`: a projectile integrated with symplectic Euler against its
//!   discrete closed form and the continuous parabola (first-order convergence);
//! - `foundation-pendulum-period`: the small-angle period of a physical pendulum,
//!   T = 2π √(I_O / (m g d));
//! - `foundation-bouncing-sphere`: the coefficient of restitution of a linear spring–damper
//!   contact, e = exp(−ζπ/√(1 − ζ²)) with ζ = B / (2√(K m));
//! - `foundation-lcp`: Lemke with the lexicographic rule against the brute-force enumerator on
//!   random P-matrix LCPs (unique solutions), and its residuals up to n = 200.

use crate::fail;
use nalgebra::{DMatrix, DVector};
use nonsmooth_core::Model;
use nonsmooth_report::{Experiment, ExperimentOutcome, Figure, ReportError, RunContext, Series};
use nonsmooth_sim::{simulate, PenaltyIntegrator, PenaltyStepper, SimOptions, Trajectory};
use nonsmooth_solvers::lcp::{enumerate_all, lemke, Lcp, LemkeOptions};
use rand::{Rng, SeedableRng};

/// The foundation's experiments.
pub fn experiments() -> Vec<Experiment> {
    vec![
        Experiment {
            id: "foundation-free-fall",
            title: "Projectile: symplectic Euler vs closed forms",
            paper: "foundation (analytic)",
            run: free_fall,
        },
        Experiment {
            id: "foundation-pendulum-period",
            title: "Small-angle period of a physical pendulum",
            paper: "foundation (analytic)",
            run: pendulum_period,
        },
        Experiment {
            id: "foundation-bouncing-sphere",
            title: "Restitution of a linear spring-damper contact",
            paper: "foundation (analytic)",
            run: bouncing_sphere,
        },
        Experiment {
            id: "foundation-lcp",
            title: "Lemke (lexicographic) vs enumeration on random LCPs",
            paper: "foundation (Cottle-Pang-Stone §4.4)",
            run: lcp_agreement,
        },
    ]
}

const BOUNCING_SPHERE: &str = include_str!("../../../examples/bouncing_sphere.toml");
const PENDULUM: &str = include_str!("../../../examples/pendulum.toml");

fn load(src: &str, file: &str) -> Result<Model, ReportError> {
    Model::from_toml_str(src, Some(file)).map_err(|e| fail(file, e))
}

fn run_symplectic(
    model: &Model,
    dt: f64,
    duration: f64,
    id: &str,
) -> Result<Trajectory, ReportError> {
    let mut stepper = PenaltyStepper::new(PenaltyIntegrator::SymplecticEuler);
    let options = SimOptions {
        dt,
        duration,
        record_every: 1,
    };
    simulate(
        model,
        &mut stepper,
        &model.initial_state,
        &options,
        &mut |_, _| {},
    )
    .map_err(|e| fail(id, e))
}

fn free_fall(ctx: &RunContext, out: &mut ExperimentOutcome) -> Result<(), ReportError> {
    let id = "foundation-free-fall";
    let mut model = load(BOUNCING_SPHERE, "examples/bouncing_sphere.toml")?;
    let v0 = [1.0, 0.0, 3.0];
    for (k, v) in v0.iter().enumerate() {
        model.initial_state.v[k] = *v;
    }
    let g = model.gravity;
    let x0 = model.initial_state.q.fixed_rows::<3>(0).into_owned();
    let duration = 0.5;
    let mut max_errors = Vec::new();
    let steps: &[f64] = if ctx.quick {
        &[1e-3, 5e-4]
    } else {
        &[1e-3, 5e-4, 2.5e-4]
    };
    let mut discrete_error: f64 = 0.0;
    let mut fig = Figure::new("Projectile: height over time", "t [s]", "z [m]");
    for (i, &h) in steps.iter().enumerate() {
        (ctx.progress)(&format!("h = {h}"));
        let traj = run_symplectic(&model, h, duration, id)?;
        let mut err_cont: f64 = 0.0;
        for (n, (t, q)) in traj.t.iter().zip(&traj.q).enumerate() {
            let nf = n as f64;
            for k in 0..3 {
                let discrete = x0[k] + nf * h * v0[k] + h * h * g[k] * nf * (nf + 1.0) / 2.0;
                let exact = x0[k] + v0[k] * t + 0.5 * g[k] * t * t;
                discrete_error = discrete_error.max((q[k] - discrete).abs());
                err_cont = err_cont.max((q[k] - exact).abs());
            }
        }
        max_errors.push(err_cont);
        if i == 0 {
            fig.series.push(Series::line(
                format!("symplectic Euler, h = {h}"),
                traj.t
                    .iter()
                    .zip(&traj.q)
                    .map(|(t, q)| (*t, q[2]))
                    .collect(),
            ));
            fig.series.push(Series::line(
                "analytic z(t)",
                traj.t
                    .iter()
                    .map(|t| (*t, x0[2] + v0[2] * t + 0.5 * g[2] * t * t))
                    .collect(),
            ));
        }
    }
    out.metric("discrete_closed_form_error", discrete_error);
    out.metric("analytic_error_h1e-3", max_errors[0]);
    out.metric("convergence_ratio", max_errors[0] / max_errors[1]);
    out.expect(
        "discrete_closed_form_error",
        0.0,
        1e-10,
        "closed form of symplectic Euler",
    );
    // Symplectic Euler on constant gravity errs by ½|g| h t: 2.4525e-3 m at t = 0.5 s, h = 1e-3.
    out.expect(
        "analytic_error_h1e-3",
        0.5 * g.norm() * 1e-3 * duration,
        1e-9,
        "analytic",
    );
    out.expect("convergence_ratio", 2.0, 1e-6, "first order");
    fig.write_svg(&ctx.path("projectile.svg"))?;
    out.figure("projectile.svg");
    Ok(())
}

/// Times of upward zero crossings of `signal`, by linear interpolation.
fn upward_crossings(t: &[f64], signal: &[f64]) -> Vec<f64> {
    let mut out = Vec::new();
    for i in 1..signal.len() {
        if signal[i - 1] < 0.0 && signal[i] >= 0.0 {
            let s = signal[i - 1] / (signal[i - 1] - signal[i]);
            out.push(t[i - 1] + s * (t[i] - t[i - 1]));
        }
    }
    out
}

fn pendulum_period(ctx: &RunContext, out: &mut ExperimentOutcome) -> Result<(), ReportError> {
    let id = "foundation-pendulum-period";
    let mut model = load(PENDULUM, "examples/pendulum.toml")?;
    let amplitude = 0.01;
    model.initial_state.q[0] = amplitude;
    let body = &model.bodies[0];
    let d = body.com.norm();
    let inertia_pivot = body.inertia[(2, 2)] + body.mass * d * d;
    let g = model.gravity.norm();
    let analytic = 2.0 * std::f64::consts::PI * (inertia_pivot / (body.mass * g * d)).sqrt();
    let (h, periods) = if ctx.quick { (1e-3, 3.0) } else { (1e-4, 10.0) };
    (ctx.progress)(&format!("h = {h}, {periods} periods"));
    let traj = run_symplectic(&model, h, periods * analytic + 0.1, id)?;
    let theta: Vec<f64> = traj.q.iter().map(|q| q[0]).collect();
    let crossings = upward_crossings(&traj.t, &theta);
    if crossings.len() < 2 {
        return Err(fail(id, "fewer than two upward zero crossings"));
    }
    let measured = (crossings[crossings.len() - 1] - crossings[0]) / (crossings.len() - 1) as f64;
    let amplitude_measured = theta.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
    out.metric("period", measured);
    out.metric("period_analytic", analytic);
    out.metric(
        "period_relative_error",
        (measured - analytic).abs() / analytic,
    );
    out.metric(
        "amplitude_drift",
        (amplitude_measured - amplitude).abs() / amplitude,
    );
    out.expect("period", analytic, 1e-3 * analytic, "T = 2π√(I_O/(m g d))");
    out.expect("period_relative_error", 0.0, 1e-3, "small-angle theory");
    out.expect("amplitude_drift", 0.0, 0.01, "symplectic: no energy drift");
    let fig = Figure::new("Pendulum angle", "t [s]", "θ [rad]").with(Series::line(
        "θ (symplectic Euler)",
        traj.t.iter().copied().zip(theta.iter().copied()).collect(),
    ));
    fig.write_svg(&ctx.path("pendulum.svg"))?;
    out.figure("pendulum.svg");
    Ok(())
}

fn bouncing_sphere(ctx: &RunContext, out: &mut ExperimentOutcome) -> Result<(), ReportError> {
    let id = "foundation-bouncing-sphere";
    let model = load(BOUNCING_SPHERE, "examples/bouncing_sphere.toml")?;
    let material = model.pair_material(0, 1);
    let (k, b) = (
        material
            .stiffness
            .ok_or_else(|| fail(id, "rigid contact"))?,
        material.damping.unwrap_or(0.0),
    );
    let m = model.bodies[0].mass;
    let zeta = b / (2.0 * (k * m).sqrt());
    let analytic = (-zeta * std::f64::consts::PI / (1.0 - zeta * zeta).sqrt()).exp();
    let h = if ctx.quick { 1e-4 } else { 2e-5 };
    (ctx.progress)(&format!("h = {h}"));
    let traj = run_symplectic(&model, h, 1.2, id)?;
    let vz: Vec<f64> = traj.v.iter().map(|v| v[2]).collect();
    let z: Vec<f64> = traj.q.iter().map(|q| q[2]).collect();
    let radius = 0.1;
    // Velocities when the sphere first touches (z = r, falling) and first leaves (z = r, rising).
    let touch = (1..z.len()).find(|&i| z[i - 1] > radius && z[i] <= radius);
    let leave =
        touch.and_then(|t0| (t0 + 1..z.len()).find(|&i| z[i - 1] < radius && z[i] >= radius));
    let (Some(i0), Some(i1)) = (touch, leave) else {
        return Err(fail(id, "the sphere did not complete a bounce"));
    };
    let restitution = -vz[i1] / vz[i0];
    let max_penetration = z.iter().fold(0.0_f64, |p, zi| p.max(radius - zi));
    out.metric("restitution", restitution);
    out.metric("restitution_analytic", analytic);
    out.metric("max_penetration", max_penetration);
    out.metric("impact_speed", -vz[i0]);
    // Undamped estimate of the penetration v √(m/K); damping only lowers it.
    out.metric("penetration_bound", -vz[i0] * (m / k).sqrt());
    out.expect("restitution", analytic, 0.02, "e = exp(−ζπ/√(1−ζ²))");
    out.expect(
        "max_penetration",
        0.5 * (-vz[i0] * (m / k).sqrt()),
        0.5 * (-vz[i0] * (m / k).sqrt()),
        "0 < d ≤ v√(m/K)",
    );
    let fig = Figure::new("Bouncing sphere: height of the centre", "t [s]", "z [m]").with(
        Series::line("z", traj.t.iter().copied().zip(z.iter().copied()).collect()),
    );
    fig.write_svg(&ctx.path("bounce.svg"))?;
    out.figure("bounce.svg");
    Ok(())
}

fn random_p_matrix(rng: &mut impl Rng, n: usize) -> DMatrix<f64> {
    let s = DMatrix::from_fn(n, n, |_, _| rng.gen_range(-1.0..1.0));
    let d = DMatrix::from_diagonal(&DVector::from_fn(n, |_, _| rng.gen_range(0.5..2.0)));
    // D + S − Sᵀ: positive definite symmetric part, hence a P-matrix.
    &d + &s - s.transpose()
}

fn lcp_agreement(ctx: &RunContext, out: &mut ExperimentOutcome) -> Result<(), ReportError> {
    let id = "foundation-lcp";
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let trials = if ctx.quick { 40 } else { 400 };
    let mut max_disagreement: f64 = 0.0;
    let mut max_residual: f64 = 0.0;
    let opts = LemkeOptions::default();
    for trial in 0..trials {
        let n = 1 + trial % 8;
        let m = random_p_matrix(&mut rng, n);
        let q = DVector::from_fn(n, |_, _| rng.gen_range(-1.0..1.0));
        let lcp = Lcp::new(m, q).map_err(|e| fail(id, e))?;
        let sol = lemke(&lcp, &opts).map_err(|e| fail(id, e))?;
        let all = enumerate_all(&lcp, 1e-9).map_err(|e| fail(id, e))?;
        if all.len() != 1 {
            return Err(fail(
                id,
                format!("P-matrix LCP with {} solutions", all.len()),
            ));
        }
        max_disagreement = max_disagreement.max((&sol.z - &all[0].z).amax());
        max_residual = max_residual.max(sol.residuals.max());
    }
    (ctx.progress)("sizes 10..200");
    let mut sizes = Vec::new();
    for &n in &[10usize, 50, 100, 200] {
        let m = random_p_matrix(&mut rng, n);
        let q = DVector::from_fn(n, |_, _| rng.gen_range(-1.0..1.0));
        let lcp = Lcp::new(m, q).map_err(|e| fail(id, e))?;
        let sol = lemke(&lcp, &opts).map_err(|e| fail(id, e))?;
        max_residual = max_residual.max(sol.residuals.max());
        sizes.push((n as f64, sol.iterations as f64));
    }
    out.metric("max_disagreement_vs_enumeration", max_disagreement);
    out.metric("max_residual", max_residual);
    out.metric("pivots_n200", sizes[3].1);
    out.expect(
        "max_disagreement_vs_enumeration",
        0.0,
        1e-8,
        "unique solution of a P-matrix LCP",
    );
    out.expect("max_residual", 0.0, 1e-9, "complementarity");
    let fig = Figure::new("Lemke pivots vs LCP size (P-matrices)", "n", "pivots")
        .with(Series::line("pivots", sizes));
    fig.write_svg(&ctx.path("pivots.svg"))?;
    out.figure("pivots.svg");
    Ok(())
}
