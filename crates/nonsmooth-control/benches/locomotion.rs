//! Wall time of one simulated second of the closed-loop quadruped trot (1 ms steps, rigid
//! ground, Anitescu–Potra stepping) per controller. Target (issue 7): a 30 s run in under
//! 60 s of wall time, i.e. under 2 s per simulated second. Each controller runs on the rigid
//! terrain it walks without falling (a fall would stop the run early and make the figure a
//! lower bound): μ = 0.1 for qp_mu, lcp_mu, pid, delay1 and delay2, μ = ∞ for the no-slip
//! variants qp_inf and lcp_inf, which fall at μ = 0.1 (docs/locomotion.md).

use criterion::{criterion_group, criterion_main, Criterion};
use nonsmooth_control::controllers::controller_by_id;
use nonsmooth_control::locomotion::{
    run_closed_loop, terrain_model, GaitPlanner, LoopOptions, TERRAINS,
};
use nonsmooth_core::Model;

fn bench(c: &mut Criterion) {
    let model = Model::from_toml_str(
        include_str!("../../../examples/id_quadruped.toml"),
        Some("id_quadruped.toml"),
    )
    .expect("reference quadruped parses");
    let planner = GaitPlanner::trot(0.75);
    let mut group = c.benchmark_group("quadruped_1s_sim");
    group.sample_size(10);
    for id in [
        "qp_mu", "qp_inf", "lcp_mu", "lcp_inf", "pid", "delay1", "delay2",
    ] {
        let terrain = if id.ends_with("_inf") {
            TERRAINS[1]
        } else {
            TERRAINS[0]
        };
        let m = terrain_model(&model, &terrain);
        let options = LoopOptions::new(1.0, terrain.stepper());
        group.bench_function(format!("{id}_{}", terrain.id), |b| {
            b.iter(|| {
                let mut ctl = controller_by_id(id, terrain.rigid).expect("known controller");
                run_closed_loop(&m, ctl.as_mut(), &planner, &options).expect("loop runs")
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
