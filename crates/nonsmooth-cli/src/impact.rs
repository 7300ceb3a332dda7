//! `nonsmooth impact MODEL.toml --samples M --cap H --steps N --out DIR`: the set of
//! post-impact velocities of the model's initial state (Halm & Posa, Algorithm 2) and the
//! comparison impact laws on the same snapshot. Writes `samples.csv` (every accepted
//! post-impact velocity with its contact normal/tangential velocities), `laws.json`
//! (Anitescu–Potra solutions, sequential orders, Routh single-contact outcomes) and
//! `scatter.svg` (the set in the plane of the first two contact velocities, like the
//! paper's Figs. 9–11, 13, 14).

use crate::CliError;
use clap::Args;
use nalgebra::DVector;
use nonsmooth_core::{ContactSnapshot, Model};
use nonsmooth_impact::laws::{anitescu_potra, routh_single, sequential};
use nonsmooth_impact::sampling::{approximate, CapSampler, SimSettings};
use nonsmooth_impact::sets::{project_2d, ContactAxis};
use nonsmooth_impact::{ImpactError, ImpactProblem};
use nonsmooth_report::table::{write_csv, write_json};
use nonsmooth_report::{Figure, Series};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct ImpactArgs {
    /// Model file (.toml, .urdf or MJCF .xml); its initial state gives q and the pre-impact v.
    pub model: PathBuf,
    /// Number of samples M of Algorithm 2.
    #[arg(long, default_value_t = 16384)]
    pub samples: usize,
    /// Cap scale h of the random normal-impulse caps [N s].
    #[arg(long, default_value_t = 0.3)]
    pub cap: f64,
    /// Maximum number of LCP steps N per sample.
    #[arg(long, default_value_t = 10)]
    pub steps: usize,
    /// Contacts with gap ≤ margin take part in the impact (default: the model's margin).
    #[arg(long)]
    pub margin: Option<f64>,
    /// ε of Algorithm 2's final step (0: no extra step).
    #[arg(long, default_value_t = 0.0)]
    pub eps: f64,
    /// Seed of the scrambled Sobol caps.
    #[arg(long, default_value_t = 1)]
    pub seed: u32,
    /// Output directory (created if missing).
    #[arg(long, default_value = "out/impact")]
    pub out: PathBuf,
    /// --quiet (no summary) / --json (print laws.json on standard output).
    #[command(flatten)]
    pub output: crate::progress::OutputFlags,
}

fn err(e: ImpactError) -> CliError {
    CliError::Usage(format!("impact: {e}"))
}

#[derive(serde::Serialize)]
struct LawOutcome {
    law: String,
    v: Vec<f64>,
    normal_velocities: Vec<f64>,
    tangential_velocities: Vec<f64>,
    kinetic_energy: f64,
}

#[derive(serde::Serialize)]
struct LawsReport {
    pre_impact_v: Vec<f64>,
    contacts: usize,
    colliding: bool,
    notes: Vec<String>,
    ap_exhaustive: bool,
    outcomes: Vec<LawOutcome>,
    samples: usize,
    accepted: usize,
    mean_lcps_per_sample: f64,
    max_lcp_residual: f64,
}

fn outcome(p: &ImpactProblem, law: String, v: &DVector<f64>) -> LawOutcome {
    LawOutcome {
        law,
        v: v.iter().cloned().collect(),
        normal_velocities: p.normal_velocities(v).iter().cloned().collect(),
        tangential_velocities: p.tangential_velocities(v).iter().cloned().collect(),
        kinetic_energy: p.kinetic_energy(v),
    }
}

pub fn run(args: &ImpactArgs) -> Result<ExitCode, CliError> {
    let model = Model::from_file(&args.model)?;
    let snap = ContactSnapshot::from_state(&model, &model.initial_state)?;
    let margin = args.margin.unwrap_or(model.contact_margin.max(1e-9));
    let p = ImpactProblem::from_snapshot(&snap, margin).map_err(err)?;
    std::fs::create_dir_all(&args.out)
        .map_err(|e| nonsmooth_report::ReportError::io(&args.out, e))?;
    let mut notes = p.notes.clone();
    let m = p.num_contacts();
    let colliding = p.pre_impact_colliding();
    let mut outcomes = Vec::new();
    let mut ap_exhaustive = false;
    let mut accepted = Vec::new();
    let (mut mean_lcps, mut max_res) = (0.0, 0.0);
    if !colliding {
        notes.push(
            "the pre-impact velocity is not colliding: the post-impact velocity is v- itself"
                .into(),
        );
        outcomes.push(outcome(&p, "no impact".into(), &p.v));
        accepted.push(p.v.clone());
    } else {
        let ap = anitescu_potra(&p).map_err(err)?;
        ap_exhaustive = ap.exhaustive;
        for (i, s) in ap.solutions.iter().enumerate() {
            outcomes.push(outcome(&p, format!("anitescu-potra #{i}"), &s.v));
        }
        if m >= 2 {
            let fwd: Vec<usize> = (0..m).collect();
            let rev: Vec<usize> = (0..m).rev().collect();
            for order in [fwd, rev] {
                let s = sequential(&p, &order, 10, 2.2e-6).map_err(err)?;
                outcomes.push(outcome(&p, format!("sequential {order:?}"), &s.v));
            }
        }
        for i in 0..m {
            let v = routh_single(&p, i, 200).map_err(err)?;
            outcomes.push(outcome(&p, format!("routh single contact {i}"), &v));
        }
        let res = approximate(
            &p,
            &SimSettings::new(args.cap, args.steps),
            args.eps,
            args.samples,
            CapSampler::Sobol { seed: args.seed },
        )
        .map_err(err)?;
        mean_lcps = res.mean_lcps;
        max_res = res.max_residual;
        accepted = res.outputs;
    }
    // the model's velocity coordinates by name (`block.vx`, …), then each contact's normal
    // and tangential velocities
    let nv = p.nv();
    let v_names = model.v_names();
    let mut header: Vec<String> = if v_names.len() == nv {
        v_names
    } else {
        (0..nv).map(|i| format!("v{i}")).collect()
    };
    header.extend((0..m).map(|i| format!("vn{i}")));
    header.extend((0..p.jt.nrows()).map(|i| format!("vt{i}")));
    let rows: Vec<Vec<f64>> = accepted
        .iter()
        .map(|v| {
            let mut r: Vec<f64> = v.iter().cloned().collect();
            r.extend(p.normal_velocities(v).iter());
            r.extend(p.tangential_velocities(v).iter());
            r
        })
        .collect();
    write_csv(&args.out.join("samples.csv"), &header, &rows)?;
    let report = LawsReport {
        pre_impact_v: p.v.iter().cloned().collect(),
        contacts: m,
        colliding,
        notes: notes.clone(),
        ap_exhaustive,
        outcomes,
        samples: args.samples,
        accepted: accepted.len(),
        mean_lcps_per_sample: mean_lcps,
        max_lcp_residual: max_res,
    };
    write_json(&args.out.join("laws.json"), &report)?;
    let (ax, ay, lx, ly) = if m >= 2 {
        (
            ContactAxis::Normal(0),
            ContactAxis::Normal(1),
            "J_n0 v+ [m/s]",
            "J_n1 v+ [m/s]",
        )
    } else {
        (
            ContactAxis::Tangent(0),
            ContactAxis::Normal(0),
            "J_t0 v+ [m/s]",
            "J_n0 v+ [m/s]",
        )
    };
    let stride = (accepted.len() / 20_000).max(1);
    let thinned: Vec<DVector<f64>> = accepted.iter().step_by(stride).cloned().collect();
    let mut fig = Figure::new("Post-impact contact velocities", lx, ly).with(Series::scatter(
        "set-valued model",
        project_2d(&p, &thinned, ax, ay),
    ));
    let laws: Vec<DVector<f64>> = report
        .outcomes
        .iter()
        .map(|o| DVector::from_vec(o.v.clone()))
        .collect();
    fig.series.push(Series::scatter(
        "comparison laws",
        project_2d(&p, &laws, ax, ay),
    ));
    fig.write_svg(&args.out.join("scatter.svg"))?;
    if args.output.json {
        outln!(
            "{}",
            serde_json::to_string(&report).map_err(|e| CliError::Usage(e.to_string()))?
        );
        return Ok(ExitCode::SUCCESS);
    }
    if args.output.quiet {
        return Ok(ExitCode::SUCCESS);
    }
    for n in &notes {
        outln!("note: {n}");
    }
    outln!(
        "{} contacts, {} of {} samples accepted, {:.3} LCPs per sample; wrote {}",
        m,
        accepted.len(),
        args.samples,
        mean_lcps,
        args.out.display()
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impact_command_writes_samples_laws_and_scatter() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let out = std::env::temp_dir().join(format!("nonsmooth-impact-cli-{}", std::process::id()));
        let args = ImpactArgs {
            model: root.join("examples/impact_rocking_block.toml"),
            samples: 256,
            cap: 0.3,
            steps: 10,
            margin: None,
            eps: 0.0,
            seed: 1,
            out: out.clone(),
            output: crate::progress::OutputFlags {
                quiet: true,
                json: false,
            },
        };
        run(&args).unwrap();
        let csv = std::fs::read_to_string(out.join("samples.csv")).unwrap();
        assert_eq!(csv.lines().count(), 257);
        // columns: the block's velocity coordinates by name, then 2 normal and 2 tangential
        // contact velocities
        let model = Model::from_file(&args.model).unwrap();
        let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
        let mut expected = model.v_names();
        expected.extend(["vn0", "vn1", "vt0", "vt1"].map(String::from));
        assert_eq!(header, expected);
        assert!(header.iter().all(|h| !h.starts_with("v0")));
        let laws: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("laws.json")).unwrap()).unwrap();
        assert_eq!(laws["contacts"], 2);
        // AP gives rest for the rocking block.
        let v = laws["outcomes"][0]["v"].as_array().unwrap();
        assert!(v.iter().all(|x| x.as_f64().unwrap().abs() < 1e-9));
        assert!(out.join("scatter.svg").exists());
    }
}
