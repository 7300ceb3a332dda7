//! The stepper a model runs under when the user names none: the choice follows what the model
//! holds, so that every model a loader accepts runs (as MuJoCo's `simulate` runs any model it
//! loads).
//!
//! | the model holds | default | why |
//! |---|---|---|
//! | bilateral constraints (loop closures) | `drumwright` | the one scheme with constraint rows (rigid or soft) |
//! | a contact pair whose material gives a restitution e > 0 | `anitescu-potra` | the one scheme that applies Newton restitution (its contacts are rigid: a stiffness of the same material is not used, and the reason says so) |
//! | compliant and rigid elements together | `drumwright` | regularized rows and rigid rows in one program |
//! | only compliant elements, the step resolving the stiffest (linear) spring | `penalty-symplectic` | the force law as written, explicitly |
//! | only compliant elements, the step not resolving them (or a Hertz / Hunt–Crossley law) | `drumwright` | stable for any stiffness (Drumwright 2019, §4) |
//! | only rigid contacts or joint limits | `drumwright` | Coulomb friction with uninflated normal forces in one Newton solve per step; faster than the LCP scheme on every shipped model, piles and robots |
//! | no contact, limit or constraint (smooth dynamics) | `rk45` | adaptive Dormand–Prince over each step |
//!
//! A contact is "possible" for every collider pair the broad phase may ever pair
//! ([`nonsmooth_core::geometry::may_touch`]); its material is the pair's
//! ([`Model::pair_material`]). An element is compliant when it has a `stiffness`. The penalty
//! scheme is used only where the step resolves every spring: h·√(K/m) ≤
//! [`RESOLVED_STEP`] and h·B/m ≤ [`RESOLVED_STEP`] with m the lightest body's mass (an upper
//! bound of the fastest mode), since an explicit spring is stable only for h·ω < 2 and
//! accurate well below it.

use crate::error::SimError;
use crate::stepper::Stepper;
use nonsmooth_core::geometry::may_touch;
use nonsmooth_core::{ComplianceLaw, Model};

/// Largest h·ω (and h·B/m) at which the default keeps an explicit penalty scheme: about
/// twelve steps per period of the stiffest spring.
pub const RESOLVED_STEP: f64 = 0.5;

/// The stepper chosen for a model and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepperChoice {
    /// The stepper's name.
    pub name: String,
    /// Where the choice came from: `"argument"`, `"model file"` or `"default"`.
    pub source: &'static str,
    /// Why, in one phrase (for a default: what in the model decided it).
    pub reason: String,
}

impl StepperChoice {
    /// The stepper, with default options.
    ///
    /// # Errors
    /// [`SimError::UnknownStepper`] for a name that is not in [`crate::STEPPER_NAMES`]
    /// (never for a [`default_stepper`]).
    pub fn build(&self) -> Result<Box<dyn Stepper>, SimError> {
        crate::registry::stepper_by_name(&self.name)
    }

    /// One line for a summary: `drumwright (default: rigid contacts)`.
    pub fn describe(&self) -> String {
        format!("{} ({}: {})", self.name, self.source, self.reason)
    }
}

/// What a model holds that decides its default stepper.
#[derive(Debug, Clone, Default, PartialEq)]
struct Elements {
    constraints: usize,
    rigid_contacts: usize,
    compliant_contacts: usize,
    rigid_limits: usize,
    compliant_limits: usize,
    /// Largest h·√(K/m) and h·B/m over the compliant elements (∞ for a non-linear law).
    stiffest: f64,
    /// The largest restitution coefficient of a possible contact pair's material, and the
    /// material's name.
    restitution: Option<(f64, String)>,
}

fn elements(model: &Model, dt: f64) -> Elements {
    let lightest = model
        .bodies
        .iter()
        .map(|b| b.mass)
        .filter(|m| *m > 0.0)
        .fold(f64::INFINITY, f64::min);
    let lightest = if lightest.is_finite() { lightest } else { 1.0 };
    let resolution = |k: f64, b: Option<f64>, law: ComplianceLaw| -> f64 {
        if law != ComplianceLaw::Linear {
            return f64::INFINITY;
        }
        (dt * (k / lightest).sqrt()).max(dt * b.unwrap_or(0.0) / lightest)
    };
    let mut e = Elements {
        constraints: model.constraints.len(),
        ..Elements::default()
    };
    let n = model.colliders.len();
    for i in 0..n {
        for j in i + 1..n {
            if model.colliders[i].body.is_none() && model.colliders[j].body.is_none() {
                continue;
            }
            if !may_touch(model, i, j) {
                continue;
            }
            let material = model.pair_material(i, j);
            if let Some(coefficient) = material.restitution.filter(|c| *c > 0.0) {
                if e.restitution
                    .as_ref()
                    .is_none_or(|(top, _)| coefficient > *top)
                {
                    e.restitution = Some((coefficient, material.name.clone()));
                }
            }
            match material.stiffness {
                Some(k) => {
                    e.compliant_contacts += 1;
                    e.stiffest = e
                        .stiffest
                        .max(resolution(k, material.damping, material.law));
                }
                None => e.rigid_contacts += 1,
            }
        }
    }
    for limit in model.joints.iter().filter_map(|j| j.limit.as_ref()) {
        match limit.stiffness {
            Some(k) => {
                e.compliant_limits += 1;
                e.stiffest = e
                    .stiffest
                    .max(resolution(k, limit.damping, ComplianceLaw::Linear));
            }
            None => e.rigid_limits += 1,
        }
    }
    e
}

/// The default stepper of `model` at step `dt` (module docs).
pub fn default_stepper(model: &Model, dt: f64) -> StepperChoice {
    let e = elements(model, dt);
    let rigid = e.rigid_contacts + e.rigid_limits;
    let compliant = e.compliant_contacts + e.compliant_limits;
    let (name, reason) = if e.constraints > 0 {
        (
            "drumwright",
            format!("{} bilateral constraint(s)", e.constraints),
        )
    } else if let Some((coefficient, material)) = &e.restitution {
        (
            "anitescu-potra",
            format!(
                "material `{material}` gives restitution e = {coefficient}, which only this \
                 scheme applies (Newton's law at impacts; its contacts are rigid{})",
                if compliant > 0 {
                    ", so the stiffness of compliant materials is not used"
                } else {
                    ""
                }
            ),
        )
    } else if compliant > 0 && rigid > 0 {
        (
            "drumwright",
            format!("{compliant} compliant and {rigid} rigid contact pair(s) or limit(s)"),
        )
    } else if compliant > 0 && e.stiffest <= RESOLVED_STEP {
        (
            "penalty-symplectic",
            format!(
                "compliant contacts/limits resolved by the step (h·ω ≤ {:.2})",
                e.stiffest
            ),
        )
    } else if compliant > 0 {
        (
            "drumwright",
            if e.stiffest.is_finite() {
                format!(
                    "compliant contacts/limits too stiff for an explicit step (h·ω = {:.3})",
                    e.stiffest
                )
            } else {
                "compliant contacts with a Hertz or Hunt–Crossley law".to_string()
            },
        )
    } else if rigid > 0 {
        (
            "drumwright",
            format!(
                "rigid contacts ({} collider pair(s)) and limits ({})",
                e.rigid_contacts, e.rigid_limits
            ),
        )
    } else {
        (
            "rk45",
            "smooth dynamics: no contact, limit or constraint".to_string(),
        )
    };
    StepperChoice {
        name: name.to_string(),
        source: "default",
        reason,
    }
}

/// Step size (s) of a run when neither the caller nor the model file gives one.
pub const DEFAULT_DT: f64 = 1e-3;
/// Duration (s) of a run when neither the caller nor the model file gives one.
pub const DEFAULT_DURATION: f64 = 1.0;

/// The settings of a run or a simulator: each from the caller when given, else from the
/// model file (`[simulation]` of a TOML model, MJCF's `timestep`), else the default — one
/// resolution for the CLI, Python's `simulate` and `Simulator` and the Rust API.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSettings {
    /// Step size (s).
    pub dt: f64,
    /// Duration (s) of a run.
    pub duration: f64,
    /// The stepper and why ([`choose_stepper`] at `dt`).
    pub stepper: StepperChoice,
}

impl RunSettings {
    /// The settings for `model` with the caller's `stepper`, `dt` and `duration` where given.
    pub fn resolve(
        model: &Model,
        stepper: Option<&str>,
        dt: Option<f64>,
        duration: Option<f64>,
    ) -> Self {
        let dt = dt.or(model.simulation.dt).unwrap_or(DEFAULT_DT);
        RunSettings {
            dt,
            duration: duration
                .or(model.simulation.duration)
                .unwrap_or(DEFAULT_DURATION),
            stepper: choose_stepper(model, stepper, dt),
        }
    }
}

/// The stepper of a run: `requested` when given (an argument), else the model file's
/// `[simulation] stepper`, else [`default_stepper`]. Names are not checked here: building
/// the stepper does ([`StepperChoice::build`]).
pub fn choose_stepper(model: &Model, requested: Option<&str>, dt: f64) -> StepperChoice {
    let named = |name: &str, source: &'static str| StepperChoice {
        name: name.to_string(),
        source,
        reason: "named".to_string(),
    };
    match (requested, model.simulation.stepper.as_deref()) {
        (Some(name), _) => named(name, "argument"),
        (None, Some(name)) => named(name, "model file"),
        (None, None) => default_stepper(model, dt),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example(name: &str) -> Model {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples")
            .join(name);
        Model::from_file(&path).unwrap()
    }

    #[test]
    fn the_default_follows_what_the_model_holds() {
        let pick = |name: &str, dt: f64| default_stepper(&example(name), dt).name;
        assert_eq!(pick("pendulum.toml", 1e-3), "rk45");
        assert_eq!(pick("drumwright_pendulum.toml", 1e-3), "drumwright");
        assert_eq!(pick("quadruped.toml", 1e-3), "drumwright");
        assert_eq!(pick("mjcf/quadruped.xml", 5e-3), "drumwright");
        assert_eq!(pick("drumwright_incline.toml", 1e-2), "drumwright");
        // restitution e = 0.8: the scheme that applies it, whatever the step
        assert_eq!(pick("bouncing_sphere.toml", 1e-3), "anitescu-potra");
        assert_eq!(pick("bouncing_sphere.toml", 1e-2), "anitescu-potra");
        let mut plain = example("bouncing_sphere.toml");
        plain
            .materials
            .iter_mut()
            .for_each(|m| m.restitution = None);
        // two materials of K = 1e5 N/m in series (5e4) on 1 kg: h·ω = 0.22 at 1 ms
        // (resolved), 2.2 at 10 ms (explicit symplectic Euler is unstable beyond h·ω = 2)
        assert_eq!(default_stepper(&plain, 1e-3).name, "penalty-symplectic");
        assert_eq!(default_stepper(&plain, 1e-2).name, "drumwright");
    }

    #[test]
    fn a_named_stepper_wins_over_the_file_and_the_default() {
        let model = example("ball_on_ground.toml");
        let file = choose_stepper(&model, None, 1e-3);
        assert_eq!(
            (file.name.as_str(), file.source),
            ("anitescu-potra", "model file")
        );
        let named = choose_stepper(&model, Some("drumwright"), 1e-3);
        assert_eq!(
            (named.name.as_str(), named.source),
            ("drumwright", "argument")
        );
        assert!(named.build().is_ok());
        assert!(choose_stepper(&model, Some("nope"), 1e-3).build().is_err());
    }
}
