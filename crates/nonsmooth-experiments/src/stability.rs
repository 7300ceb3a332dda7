//! Seed 000 (Várkonyi, SOS Lyapunov stability of a rigid body with two frictional contacts;
//! digest `shared/notes/seed-000-sos-lyapunov.md`):
//!
//! - `sos-basics`: the SOS → SDP layer on Parrilo's quartic (SOS), the Motzkin polynomial
//!   (not SOS) and the S-procedure proof of `1 − x⁴ ≥ 0` on `1 − x² ≥ 0` (digest §6 test 7);
//! - `sos-fig2`: α = 30°, e = 0, μ₂ = 2, grid over μ₁ ∈ [0, 2] × d ∈ (0, 2] (Fig. 2);
//! - `sos-fig3`: α = 20°, e = 0.1, μ₁ = μ₂ = μ (Fig. 3), with our formulation of the
//!   free-flight-then-impact condition (`V₂` compared at successive pre-impact states;
//!   docs/decisions/000-sos-stability.md decision 7; digest §3 item 4).
//!
//! Each grid point gets the multi-V certificate (Theorem 2), the PTT single-V baseline and a
//! falsification by simulation of the ZOD hybrid model (random perturbations of radius
//! 10⁻³, divergence = excursion above 100× the radius).

use crate::fail;
use nonsmooth_report::{Experiment, ExperimentOutcome, ReportError, RunContext};
use nonsmooth_sos::figures::grid_figure;
use nonsmooth_sos::grid::{linspace, sweep, GridResult, GridSpec};
use nonsmooth_sos::program::{Margin, SosProgram, SosStatus};
use nonsmooth_sos::{is_sos, Poly};

/// The seed-000 experiments.
pub fn experiments() -> Vec<Experiment> {
    vec![
        Experiment {
            id: "sos-basics",
            title: "SOS to SDP: Parrilo quartic, Motzkin, S-procedure",
            paper: "seed 000 (digest §6 test 7)",
            run: basics,
        },
        Experiment {
            id: "sos-fig2",
            title: "Multi-Lyapunov SOS certificates, alpha = 30 deg, e = 0, mu2 = 2 (Fig. 2)",
            paper: "seed 000, Fig. 2",
            run: fig2,
        },
        Experiment {
            id: "sos-fig3",
            title: "Multi-Lyapunov SOS certificates, alpha = 20 deg, e = 0.1, mu1 = mu2 (Fig. 3)",
            paper: "seed 000, Fig. 3",
            run: fig3,
        },
    ]
}

fn basics(_ctx: &RunContext, out: &mut ExperimentOutcome) -> Result<(), ReportError> {
    let id = "sos-basics";
    let parrilo = Poly::from_terms(
        2,
        &[
            (2.0, &[4, 0]),
            (2.0, &[3, 1]),
            (-1.0, &[2, 2]),
            (5.0, &[0, 4]),
        ],
    )
    .map_err(|e| fail(id, e))?;
    let motzkin = Poly::from_terms(
        2,
        &[
            (1.0, &[4, 2]),
            (1.0, &[2, 4]),
            (-3.0, &[2, 2]),
            (1.0, &[0, 0]),
        ],
    )
    .map_err(|e| fail(id, e))?;
    let p = Poly::from_terms(1, &[(1.0, &[0]), (-1.0, &[4])]).map_err(|e| fail(id, e))?;
    let g = Poly::from_terms(1, &[(1.0, &[0]), (-1.0, &[2])]).map_err(|e| fail(id, e))?;
    let mut prog = SosProgram::new();
    prog.require_nonneg("1-x^4 on 1-x^2>=0", &p, &[g], &[], 2, false)
        .map_err(|e| fail(id, e))?;
    let s = prog
        .solve(Margin::Feasibility, 1e-6)
        .map_err(|e| fail(id, e))?;
    let b = |v: bool| if v { 1.0 } else { 0.0 };
    out.metric(
        "parrilo_feasible",
        b(is_sos(&parrilo).map_err(|e| fail(id, e))?),
    );
    out.metric(
        "motzkin_feasible",
        b(is_sos(&motzkin).map_err(|e| fail(id, e))?),
    );
    out.metric("sprocedure_feasible", b(s.status == SosStatus::Certified));
    out.expect("parrilo_feasible", 1.0, 0.0, "Parrilo 2003, Example 3.5");
    out.expect(
        "motzkin_feasible",
        0.0,
        0.0,
        "Motzkin polynomial is not SOS",
    );
    out.expect("sprocedure_feasible", 1.0, 0.0, "1-x^4 = (1+x^2)(1-x^2)");
    Ok(())
}

fn report_grid(
    id: &str,
    ctx: &RunContext,
    out: &mut ExperimentOutcome,
    spec: &GridSpec,
    axis: &str,
    require_nonempty: bool,
) -> Result<(), ReportError> {
    let res: GridResult = sweep(spec, ctx.progress).map_err(|e| fail(id, e))?;
    let n = res.points.len() as f64;
    out.metric("certified_points", res.certified_points as f64);
    out.metric("certified_in_ambiguous", res.certified_in_ambiguous as f64);
    out.metric(
        "certified_with_d_le_tan_alpha",
        res.certified_with_d_le_tan_alpha as f64,
    );
    out.metric(
        "certified_but_diverged_in_simulation",
        res.certified_but_diverged_in_simulation as f64,
    );
    out.metric("ptt_certified_points", res.ptt_certified_points as f64);
    out.metric("seconds_per_point", res.seconds_per_point);
    out.expect(
        "certified_in_ambiguous",
        0.0,
        0.0,
        "ambiguous equilibria are unstable",
    );
    out.expect(
        "certified_with_d_le_tan_alpha",
        0.0,
        0.0,
        "method needs l1 l2 < 0 (digest §2)",
    );
    out.expect(
        "certified_but_diverged_in_simulation",
        0.0,
        0.0,
        "a certificate must not be contradicted by simulation",
    );
    if require_nonempty {
        // 1 ≤ certified ≤ N, and the single-V baseline certifies fewer points.
        out.expect(
            "certified_points",
            (1.0 + n) / 2.0,
            (n - 1.0) / 2.0,
            "paper: a significant portion of the stable region is certified",
        );
        let c = res.certified_points as f64;
        out.expect(
            "ptt_certified_points",
            (c - 1.0) / 2.0,
            ((c - 1.0) / 2.0).max(0.0),
            "PTT single V certifies fewer points (paper §I)",
        );
    }
    let fig = grid_figure(&res, &format!("{id}: SOS certificates ({axis} x d)"), axis);
    fig.write_svg(&ctx.path("grid.svg"))?;
    out.figure("grid.svg");
    nonsmooth_report::table::write_json(&ctx.path("grid.json"), &res)?;
    out.file("grid.json");
    Ok(())
}

fn fig2(ctx: &RunContext, out: &mut ExperimentOutcome) -> Result<(), ReportError> {
    let (mu, d) = if ctx.quick {
        (vec![0.0, 1.0, 2.0], vec![0.5, 1.0, 1.5])
    } else {
        (linspace(0.0, 2.0, 11), linspace(0.2, 2.0, 10))
    };
    let spec = GridSpec {
        alpha: 30f64.to_radians(),
        mu2: Some(2.0),
        e: 0.0,
        mu,
        d,
        ptt: true,
        sim_samples: if ctx.quick { 10 } else { 100 },
        sim_radius: 1e-3,
        divergence_factor: 100.0,
    };
    report_grid("sos-fig2", ctx, out, &spec, "mu1", true)
}

fn fig3(ctx: &RunContext, out: &mut ExperimentOutcome) -> Result<(), ReportError> {
    // The e > 0 program carries the degree-6 pre-impact flight conditions (12 σ₀ blocks of
    // side 14–24 after the exact reductions of docs/decisions/000-sos-stability.md decisions
    // 7 and 11): a few seconds per point with Clarabel. Quick mode sweeps one certifiable
    // point, (1.3, 0.8), and three that need no SDP (no equilibrium, outside the domain) and
    // checks the exclusions; full mode a 5 × 5 grid over the stable region (a few minutes).
    let (mu, d) = if ctx.quick {
        (vec![0.2, 1.3], vec![0.2, 0.8])
    } else {
        (linspace(0.6, 2.0, 5), linspace(0.8, 2.0, 5))
    };
    let spec = GridSpec {
        alpha: 20f64.to_radians(),
        mu2: None,
        e: 0.1,
        mu,
        d,
        ptt: true,
        sim_samples: if ctx.quick { 5 } else { 50 },
        sim_radius: 1e-3,
        divergence_factor: 100.0,
    };
    report_grid("sos-fig3", ctx, out, &spec, "mu", true)
}
