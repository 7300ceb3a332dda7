//! Generated contact-rich optimal-control problems, written as a user writes them (a planar
//! model file and a problem file like `examples/ocp_box_push.toml`): boxes, sleds and
//! crates on rough ground, pushed by one horizontal force to rest at `T`, with random sizes,
//! masses, friction coefficients, force limits and start heights.
//!
//! - **Reachable by construction**: the target is the rest state at `T` of a rollout,
//!   through the simulator, of an admissible piecewise-constant push (a push of random
//!   strength above static friction for a random time, then nothing: friction stops the
//!   body before `T`). Its height and angle are those of rest (`y` = the half height,
//!   `θ` = 0), its `x` the rollout's.
//! - **Unreachable by construction**: a force limit below static friction (`F < μ m g`:
//!   the body cannot move) with a displaced target; or a target 1.5 times beyond a bound on
//!   every rest point an admissible push reaches in `T`: with friction (at most `μmg`)
//!   counted as helping both to speed up and to brake, and the whole horizon used (a
//!   dropped crate is pushed in the air too, where no friction holds it),
//!   `x_max = (F + μmg) T² / (4m)`, the bang–bang optimum at that acceleration.
//!
//! The problems are reproducible from a seed (`rand_chacha`).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use nonsmooth_core::Model;
use nonsmooth_sim::Simulator;

use crate::OcpError;

/// The family of a generated body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// A box about as wide as tall, starting at rest on the ground.
    Box,
    /// A long, low, heavy body on low friction.
    Sled,
    /// A box dropped flat from a few decimetres, then pushed.
    Crate,
}

impl Family {
    /// The family's name.
    pub fn name(self) -> &'static str {
        match self {
            Family::Box => "box",
            Family::Sled => "sled",
            Family::Crate => "crate",
        }
    }
}

/// What a generated problem is by construction.
#[derive(Debug, Clone, PartialEq)]
pub enum Expected {
    /// Reachable: the target is a rollout's rest state.
    Reachable,
    /// Unreachable, with the reason.
    Unreachable {
        /// Why no admissible control reaches the target.
        reason: String,
    },
}

/// One generated problem: its files' text and its parameters.
#[derive(Debug, Clone)]
pub struct GeneratedProblem {
    /// A file-name stem (`r03_sled`, `u07_box`).
    pub name: String,
    /// The body's family.
    pub family: Family,
    /// Reachable or not, by construction.
    pub expected: Expected,
    /// Half extents (m) of the body's box (along x, along y).
    pub half_extents: [f64; 2],
    /// Mass (kg).
    pub mass: f64,
    /// Friction coefficient.
    pub mu: f64,
    /// Force limit (N) of the push.
    pub force_limit: f64,
    /// Height (m) of the body's bottom above the ground at the start.
    pub drop_height: f64,
    /// Horizon (s).
    pub horizon: f64,
    /// Target `x` (m).
    pub target_x: f64,
    /// The model file (TOML).
    pub model_toml: String,
    /// The problem file (TOML), naming the model file `<name>_model.toml`.
    pub problem_toml: String,
}

/// Time step of the rollouts (s).
const ROLLOUT_DT: f64 = 1e-3;

/// `reachable` then `unreachable` problems from `seed`, the families in turn.
///
/// # Errors
/// [`OcpError::InvalidInput`] when a generated model does not load or a rollout fails
/// (a defect of the generator, not of a problem).
pub fn generate(
    seed: u64,
    reachable: usize,
    unreachable: usize,
) -> Result<Vec<GeneratedProblem>, OcpError> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let families = [Family::Box, Family::Sled, Family::Crate];
    let mut out = Vec::with_capacity(reachable + unreachable);
    for k in 0..reachable + unreachable {
        let family = families[k % families.len()];
        let is_reachable = k < reachable;
        let body = Body::random(family, &mut rng);
        let problem = if is_reachable {
            reachable_problem(k, body, &mut rng)?
        } else {
            unreachable_problem(k - reachable, body, &mut rng)?
        };
        out.push(problem);
    }
    Ok(out)
}

/// A body's random parameters.
#[derive(Debug, Clone, Copy)]
struct Body {
    family: Family,
    half: [f64; 2],
    mass: f64,
    mu: f64,
    drop_height: f64,
    horizon: f64,
}

impl Body {
    fn random(family: Family, rng: &mut ChaCha8Rng) -> Self {
        let (half, mass, mu, drop_height) = match family {
            Family::Box => (
                [rng.gen_range(0.08..0.25), rng.gen_range(0.05..0.15)],
                rng.gen_range(0.5..3.0),
                rng.gen_range(0.3..0.8),
                0.0,
            ),
            Family::Sled => (
                [rng.gen_range(0.3..0.6), rng.gen_range(0.03..0.06)],
                rng.gen_range(3.0..15.0),
                rng.gen_range(0.05..0.2),
                0.0,
            ),
            Family::Crate => (
                [rng.gen_range(0.1..0.2), rng.gen_range(0.1..0.2)],
                rng.gen_range(1.0..5.0),
                rng.gen_range(0.3..0.7),
                rng.gen_range(0.05..0.3),
            ),
        };
        Body {
            family,
            half,
            mass,
            mu,
            drop_height,
            horizon: rng.gen_range(1.0..2.0),
        }
    }

    /// Static friction's force limit `μ m g`.
    fn static_friction(&self) -> f64 {
        self.mu * self.mass * 9.81
    }

    /// Time (s) a dropped crate needs to land and settle before it is pushed.
    fn landing_time(&self) -> f64 {
        if self.drop_height > 0.0 {
            (2.0 * self.drop_height / 9.81).sqrt() + 0.15
        } else {
            0.0
        }
    }

    fn model_toml(&self, name: &str, force_limit: f64) -> String {
        let [a, b] = self.half;
        let (mass, mu, y0) = (self.mass, self.mu, b + self.drop_height);
        format!(
            r#"# Generated ({family}): a planar box {w:.3} m × {h:.3} m of {mass:.3} kg on ground with
# mu = {mu:.3}, pushed horizontally at its centre by at most {force_limit:.3} N.

[model]
name = "{name}"
dimension = "planar"
gravity = [0.0, -9.81, 0.0]

[simulation]
dt = {ROLLOUT_DT:?}

[[materials]]
name = "rough"
friction = {mu:?}

[[colliders]]
name = "floor"
shape = {{ plane = [0.0, 1.0, 0.0] }}
material = "rough"

[[bodies]]
name = "body"
mass = {mass:?}
inertia = {{ solid_box = [{a:?}, {b:?}, {b:?}] }}

[[joints]]
name = "base"
kind = "planar"
parent = "world"
child = "body"

[[colliders]]
name = "shell"
body = "body"
shape = {{ box = [{a:?}, {b:?}, {b:?}] }}
material = "rough"

[[actuators]]
name = "push"
joint = "base"
dof = 0
effort_limit = [{lo:?}, {force_limit:?}]

[initial]
q.base = [0.0, {y0:?}, 0.0]
"#,
            family = self.family.name(),
            w = 2.0 * a,
            h = 2.0 * b,
            lo = -force_limit,
        )
    }

    fn problem_toml(&self, name: &str, expected: &Expected, target_x: f64) -> String {
        let what = match expected {
            Expected::Reachable => "reachable by construction (a rollout's rest state)".into(),
            Expected::Unreachable { reason } => format!("unreachable by construction: {reason}"),
        };
        format!(
            r#"# Generated: the {family} of {name}_model.toml pushed to rest at x = {target_x:.4} m at
# T = {t:.3} s; {what}.

[ocp]
model = "{name}_model.toml"
N = 10
T = {t:?}
controls = ["push"]

[ocp.terminal]
q."base.x" = {target_x:?}
q."base.y" = {b:?}
q."base.theta" = 0.0
v."base.vx" = 0.0
v."base.vy" = 0.0
v."base.omega" = 0.0
"#,
            family = self.family.name(),
            t = self.horizon,
            b = self.half[1],
        )
    }

    fn problem(
        &self,
        name: String,
        expected: Expected,
        force_limit: f64,
        target_x: f64,
    ) -> GeneratedProblem {
        GeneratedProblem {
            model_toml: self.model_toml(&name, force_limit),
            problem_toml: self.problem_toml(&name, &expected, target_x),
            name,
            family: self.family,
            expected,
            half_extents: self.half,
            mass: self.mass,
            mu: self.mu,
            force_limit,
            drop_height: self.drop_height,
            horizon: self.horizon,
            target_x,
        }
    }
}

fn generator_error(what: impl std::fmt::Display) -> OcpError {
    OcpError::InvalidInput(format!("problem generator: {what}"))
}

/// A reachable problem: a push above static friction for a time after which friction
/// stops the body well before `T`, rolled out through the simulator.
fn reachable_problem(
    k: usize,
    body: Body,
    rng: &mut ChaCha8Rng,
) -> Result<GeneratedProblem, OcpError> {
    let name = format!("r{k:02}_{}", body.family.name());
    let fs = body.static_friction();
    let force_limit = fs * rng.gen_range(1.5..4.0);
    let push = rng.gen_range(1.2 * fs..force_limit);
    // Pushed for t₁, the body slides on for t₁ (push − μmg)/(μmg); both within 70 % of
    // what is left of T after a crate's landing.
    let free = (body.horizon - body.landing_time()) * 0.7;
    let t1_max = free / (1.0 + (push - fs) / fs);
    let t1 = rng.gen_range(0.3 * t1_max..t1_max);
    let model_toml = body.model_toml(&name, force_limit);
    let model = Model::from_toml_str(&model_toml, Some(&format!("{name}_model.toml")))
        .map_err(generator_error)?;
    let mut sim = Simulator::with_default_stepper(model, ROLLOUT_DT).map_err(generator_error)?;
    let steps = (body.horizon / ROLLOUT_DT).round() as usize;
    let (landing, push_end) = (body.landing_time(), body.landing_time() + t1);
    for i in 0..steps {
        let t = i as f64 * ROLLOUT_DT;
        let u = if t >= landing && t < push_end {
            push
        } else {
            0.0
        };
        sim.step(&[u]).map_err(generator_error)?;
    }
    let (q, v) = (sim.q(), sim.v());
    if v.amax() > 1e-3 || q[2].abs() > 1e-3 {
        return Err(generator_error(format!(
            "{name}: the rollout is not at rest flat at T (v = {v:?}, θ = {})",
            q[2]
        )));
    }
    Ok(body.problem(name, Expected::Reachable, force_limit, q[0]))
}

/// A bound on how far a push of at most `force_limit` moves a body of `mass` from rest to
/// rest in `t`, friction (at most `friction`) counted in its favour both ways: accelerating
/// and braking at `a = (F + μmg)/m` for `t/2` each, `a t²/4`.
fn farthest_rest_bound(force_limit: f64, friction: f64, mass: f64, t: f64) -> f64 {
    (force_limit + friction) / mass * t * t / 4.0
}

/// An unreachable problem: a force limit below static friction, or a target beyond the
/// farthest rest point.
fn unreachable_problem(
    k: usize,
    body: Body,
    rng: &mut ChaCha8Rng,
) -> Result<GeneratedProblem, OcpError> {
    let name = format!("u{k:02}_{}", body.family.name());
    let fs = body.static_friction();
    if k.is_multiple_of(2) {
        let force_limit = fs * rng.gen_range(0.3..0.8);
        let target_x = rng.gen_range(0.1..0.5);
        let reason =
            format!("the force limit {force_limit:.3} N is below static friction μmg = {fs:.3} N");
        Ok(body.problem(
            name,
            Expected::Unreachable { reason },
            force_limit,
            target_x,
        ))
    } else {
        let force_limit = fs * rng.gen_range(1.5..3.0);
        let x_max = farthest_rest_bound(force_limit, fs, body.mass, body.horizon);
        let target_x = 1.5 * x_max;
        let reason = format!(
            "x = {target_x:.3} m is 1.5 times {x_max:.3} m, beyond which no admissible push \
             brings the body to rest in T"
        );
        Ok(body.problem(
            name,
            Expected::Unreachable { reason },
            force_limit,
            target_x,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The farthest `x` at which pushes of the simulator, full force forward until a
    /// switch time and full force back after it (every switch on a grid of 40), leave the
    /// body nearly at rest at `T`.
    fn best_push_rest_point(model: &Model, p: &GeneratedProblem) -> f64 {
        let steps = (p.horizon / ROLLOUT_DT).round() as usize;
        let mut best: f64 = 0.0;
        for k in 1..40 {
            let switch = steps * k / 40;
            let mut sim = Simulator::with_default_stepper(model.clone(), ROLLOUT_DT).unwrap();
            for i in 0..steps {
                let u = if i < switch {
                    p.force_limit
                } else {
                    -p.force_limit
                };
                sim.step(&[u]).unwrap();
            }
            if sim.v()[0].abs() < 0.5 {
                best = best.max(sim.q()[0]);
            }
        }
        best
    }

    #[test]
    fn generated_problems_load_and_are_what_they_claim() {
        let problems = generate(7, 3, 2).expect("generated");
        assert_eq!(problems.len(), 5);
        for p in &problems {
            let model = Model::from_toml_str(&p.model_toml, Some("m.toml")).expect("model");
            assert_eq!(model.actuators.len(), 1);
            match &p.expected {
                Expected::Reachable => {
                    assert!(p.force_limit > p.mu * p.mass * 9.81);
                    assert!(p.target_x > 0.0);
                }
                Expected::Unreachable { reason } => {
                    assert!(!reason.is_empty());
                    if p.force_limit > p.mu * p.mass * 9.81 {
                        // the best push of the simulator (full force forward, then full
                        // braking) stays within the bound the target is 1.5 times beyond
                        let reached = best_push_rest_point(&model, p);
                        assert!(reached < p.target_x / 1.5, "{}: {reached}", p.name);
                    }
                }
            }
            assert!(p.problem_toml.contains(&format!("{}_model.toml", p.name)));
        }
        let again = generate(7, 3, 2).expect("generated");
        assert_eq!(again[1].problem_toml, problems[1].problem_toml);
    }
}
