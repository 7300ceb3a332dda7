//! Simulates a model file with no actuator input and prints where its bodies come to rest: the
//! smallest program on `nonsmooth-sim` alone (it links neither IPOPT nor OpenBLAS).
//!
//! ```sh
//! cargo run -p nonsmooth-sim --example drop_model -- examples/bouncing_sphere.toml 1.0
//! ```

use std::error::Error;

fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .ok_or("usage: drop_model MODEL.toml [DURATION_S] [STEPPER]")?;
    let duration: f64 = match args.next() {
        Some(text) => text
            .parse()
            .map_err(|e| format!("duration `{text}`: {e}"))?,
        None => 1.0,
    };
    let stepper = args.next().unwrap_or_else(|| "anitescu-potra".into());
    let model = nonsmooth_core::Model::from_file(&path)?;
    let names: Vec<String> = model.bodies.iter().map(|b| b.name.clone()).collect();
    let dt = model.simulation.dt.unwrap_or(1e-3);
    let mut sim = nonsmooth_sim::Simulator::new(model, &stepper, dt)?;
    let steps = (duration / dt).round() as usize;
    sim.step_n(steps, &[])?;
    println!("{path}: t = {:.4} s with {stepper}, h = {dt}", sim.t());
    for (name, pose) in names.iter().zip(sim.body_poses()) {
        let p = pose.translation.vector;
        println!("  {name}: ({:.4}, {:.4}, {:.4}) m", p.x, p.y, p.z);
    }
    Ok(())
}
