//! The contact-set stage of a velocity-level rigid step ([`crate::pipeline`]), shared by the
//! `anitescu-potra`, `qp-max-dissipation` and `drumwright` steppers, and the
//! [`ContactModel`] trait of the stage that differs between them. [`rigid_step`] runs the
//! stages of every rigid scheme in order:
//!
//! 1. the step's options are checked ([`ContactModel::check_options`]);
//! 2. the contact set ([`ContactSet::detect`]): the contacts of the step's start state
//!    detected once, within the margins the scheme reports ([`Stepper::contact_margins`]:
//!    speculative margins widened by each collider's travel over the step, or the model's
//!    margin), with the actuation applied to the mass matrix and the generalized forces
//!    (servos implicitly, [`crate::actuation`]) and any extra generalized force of the
//!    step's start added (an external load, [`crate::external_load`]);
//! 3. the contact model's velocity ([`ContactModel::velocity`]), read from the contact set
//!    through the view it needs: the sparse rows with the mass matrix factored block by
//!    block ([`ContactSet::free_motion`], the LCP of `anitescu-potra` and the QP of
//!    `qp-max-dissipation`), or Drumwright's compliant rows and programs on the per-body
//!    view ([`ContactSet::blocks`]) or the dense snapshot ([`ContactSet::dense`]);
//! 4. the shared integrate and finish stages ([`crate::pipeline::integrate_and_finish`]).
//!
//! # Views
//! A model whose joints are all root joints (a pile of free bodies) is read through the
//! per-body [`BlockSnapshot`] (block-diagonal mass matrix, Jacobian rows as per-body
//! blocks, contacts from a sweep-and-prune broad phase), so that a step costs
//! O(bodies + contacts): no dense mass matrix, no dense Jacobian. That snapshot lives in a
//! [`SnapshotWorkspace`] kept by the scheme from step to step and is updated in place
//! ([`BlockSnapshot::update_with_contact_margins`] reuses the storage of its mass and
//! Jacobian blocks, with the same values as a fresh snapshot). Other models, and schemes
//! that cannot use the per-body view on a step ([`ContactModel::per_body_view`]), read the
//! dense [`ContactSnapshot`], built when first asked for. Both views hold the same contacts
//! in the same order (those of [`ContactSnapshot::contacts`]).

use nalgebra::DVector;
use nonsmooth_core::geometry::ContactMargins;
use nonsmooth_core::snapshot::BlockSnapshot;
use nonsmooth_core::{ContactSnapshot, State};

use crate::error::SimError;
use crate::pipeline::Step;
use crate::stepper::Stepper;

/// The storage of the contact-set stage that a scheme keeps from step to step: the per-body
/// snapshot of its last step, updated in place by the next one.
#[derive(Debug, Clone, Default)]
pub(crate) struct SnapshotWorkspace {
    block: Option<BlockSnapshot>,
}

/// The per-body view of a step's contact set: the [`BlockSnapshot`] of the start state and
/// the step's generalized forces with the actuation applied.
#[derive(Debug)]
pub(crate) struct BlockView<'w> {
    /// The per-body snapshot (mass blocks, contacts with per-body rows).
    pub snapshot: &'w BlockSnapshot,
    /// `f̃`: the snapshot's generalized forces (passive forces minus bias, per block), plus
    /// the actuation (explicit forces, e.g. an external load, and servos with their implicit
    /// terms), over all velocity coordinates.
    pub forces: DVector<f64>,
    /// The servos' implicit terms `h D + h² K` on the diagonal of the mass matrix
    /// (`M̃ = M + diag`, [`crate::actuation`]); `None` for an actuation without servos, for
    /// which `M̃ = M` block by block.
    pub implicit_diagonal: Option<DVector<f64>>,
}

impl<'w> BlockView<'w> {
    /// The view of `snapshot` with the actuation of `step` applied.
    fn new(snapshot: &'w BlockSnapshot, step: &Step<'_>) -> Self {
        let (state, input, h) = (step.state, step.input, step.h);
        let mut forces = DVector::zeros(snapshot.nv);
        for b in &snapshot.blocks {
            forces
                .rows_mut(b.v_index, b.force.len())
                .copy_from(&b.force);
        }
        let mut implicit_diagonal = input
            .has_servos()
            .then(|| DVector::<f64>::zeros(snapshot.nv));
        input.apply_implicit_with(
            |i, d| {
                if let Some(diagonal) = implicit_diagonal.as_mut() {
                    diagonal[i] += d;
                }
            },
            &mut forces,
            &state.q,
            &state.v,
            h,
        );
        BlockView {
            snapshot,
            forces,
            implicit_diagonal,
        }
    }
}

/// The contacts of one step, detected once at the step's start state, with the actuation
/// applied; read through its per-body view
/// ([`ContactSet::blocks`]), its dense view ([`ContactSet::dense`], built on first use) or
/// the sparse rows of the free motion ([`ContactSet::free_motion`]).
pub(crate) struct ContactSet<'a> {
    step: Step<'a>,
    margins: ContactMargins,
    blocks: Option<BlockView<'a>>,
    dense: Option<ContactSnapshot<f64>>,
}

impl<'a> ContactSet<'a> {
    /// Detects the contacts of `step` within `margins`: into the per-body view kept in
    /// `workspace` (updated in place) when `per_body` and the model has one, else (on first
    /// use) into the dense snapshot.
    ///
    /// # Errors
    /// [`SimError::Model`] for a state the snapshot refuses.
    pub(crate) fn detect(
        step: &Step<'a>,
        margins: ContactMargins,
        per_body: bool,
        workspace: &'a mut SnapshotWorkspace,
    ) -> Result<Self, SimError> {
        let (model, state) = (step.model, step.state);
        let has_view = per_body
            && match workspace.block.as_mut() {
                Some(bs) => {
                    bs.update_with_contact_margins(model, &state.q, &state.v, state.t, &margins)?
                }
                None => {
                    workspace.block = BlockSnapshot::with_contact_margins(
                        model, &state.q, &state.v, state.t, &margins,
                    )?;
                    workspace.block.is_some()
                }
            };
        let workspace: &'a SnapshotWorkspace = workspace;
        let blocks = workspace
            .block
            .as_ref()
            .filter(|_| has_view)
            .map(|snapshot| BlockView::new(snapshot, step));
        Ok(ContactSet {
            step: *step,
            margins,
            blocks,
            dense: None,
        })
    }

    /// The step the contacts belong to.
    pub(crate) fn step(&self) -> &Step<'a> {
        &self.step
    }

    /// The per-body view, when the model has one and the contact model asked for it.
    pub(crate) fn blocks(&self) -> Option<&BlockView<'a>> {
        self.blocks.as_ref()
    }

    /// The dense view: the [`ContactSnapshot`] of the step's start state within the step's
    /// margins, the extra generalized force added to its forces and the actuation applied
    /// to its mass matrix and forces ([`crate::Actuation::apply_implicit`]). Built on the
    /// first call.
    ///
    /// # Errors
    /// [`SimError::Model`] for a state the snapshot refuses.
    pub(crate) fn dense(&mut self) -> Result<&ContactSnapshot<f64>, SimError> {
        let snap = match self.dense.take() {
            Some(snap) => snap,
            None => dense_snapshot(&self.step, &self.margins)?,
        };
        Ok(self.dense.insert(snap))
    }
}

/// The dense view of `step`'s contact set within `margins`: the [`ContactSnapshot`] of the
/// step's start state with the actuation applied to its mass matrix and forces
/// ([`crate::Actuation::apply_implicit`]).
///
/// # Errors
/// [`SimError::Model`] for a state the snapshot refuses.
pub(crate) fn dense_snapshot(
    step: &Step<'_>,
    margins: &ContactMargins,
) -> Result<ContactSnapshot<f64>, SimError> {
    let (model, state, input, h) = (step.model, step.state, step.input, step.h);
    let mut snap =
        ContactSnapshot::with_contact_margins(model, &state.q, &state.v, state.t, margins)?;
    input.apply_implicit(
        &mut snap.mass_matrix,
        &mut snap.forces,
        &state.q,
        &state.v,
        h,
    );
    Ok(snap)
}

/// The contact-model stage of a velocity-level rigid step: the one part that differs between
/// the rigid schemes (`anitescu-potra`'s LCP, `qp-max-dissipation`'s QP, `drumwright`'s
/// compliant rows and programs). The stages around it ([`rigid_step`]) are shared; the
/// contacts are detected within the scheme's [`Stepper::contact_margins`], so that a report
/// of a step's contacts sees the contacts the step used.
pub(crate) trait ContactModel: Stepper {
    /// The scheme's name (in errors).
    const NAME: &'static str;

    /// Checks the scheme's options before a step.
    fn check_options(&self) -> Result<(), SimError>;

    /// Whether the scheme reads the per-body view of `step` where the model has one (by
    /// default it does); otherwise the contact set has only its dense view.
    fn per_body_view(&self, _step: &Step<'_>) -> bool {
        true
    }

    /// The scheme's workspace of the contact-set stage.
    fn workspace(&mut self) -> &mut SnapshotWorkspace;

    /// The velocity at the end of the step from the step's contact set.
    fn velocity(
        &mut self,
        step: &Step<'_>,
        contacts: &mut ContactSet<'_>,
    ) -> Result<DVector<f64>, SimError>;
}

/// A velocity-level rigid step of a prepared `step` ([`crate::pipeline`]): the options
/// checked, the contact set, the contact model's velocity, then the shared integrate and
/// finish stages.
///
/// # Errors
/// As the stages.
pub(crate) fn rigid_step<C: ContactModel>(
    contact_model: &mut C,
    step: &Step<'_>,
) -> Result<State, SimError> {
    contact_model.check_options()?;
    let margins = contact_model.contact_margins(step.model, step.h);
    let per_body = contact_model.per_body_view(step);
    let mut workspace = std::mem::take(contact_model.workspace());
    let v1 = ContactSet::detect(step, margins, per_body, &mut workspace)
        .and_then(|mut contacts| contact_model.velocity(step, &mut contacts));
    *contact_model.workspace() = workspace;
    crate::pipeline::integrate_and_finish(C::NAME, step, v1?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use nonsmooth_core::Model;

    /// A ball on the ground and a box on a vertical slider driven by a position servo: a
    /// model of root joints, so that the contact set has both views.
    const SCENE: &str = r#"
[model]
name = "views"
dimension = "spatial"
gravity = [0.0, 0.0, -9.81]
contact_margin = 0.01

[[materials]]
name = "m"
friction = 0.5

[[colliders]]
name = "ground"
shape = { plane = [0.0, 0.0, 1.0] }
material = "m"

[[bodies]]
name = "ball"
mass = 0.5
inertia = { solid_sphere = 0.05 }

[[colliders]]
name = "ball_surface"
body = "ball"
shape = { sphere = 0.05 }
material = "m"

[[bodies]]
name = "slider"
mass = 1.0
inertia = { solid_box = [0.05, 0.05, 0.05] }

[[joints]]
name = "z"
kind = "prismatic"
parent = "world"
child = "slider"
axis = [0.0, 0.0, 1.0]

[[colliders]]
name = "box"
body = "slider"
shape = { box = [0.05, 0.05, 0.05] }
material = "m"

[[actuators]]
name = "lift"
joint = "z"
kind = "position"
kp = 100.0
kv = 5.0

[initial]
q.ball = [0.3, 0.0, 0.0505, 1.0, 0.0, 0.0, 0.0]
v.ball = [0.2, 0.0, -0.1, 0.0, 1.0, 0.0]
q.z = 0.052
v.z = -0.3
"#;

    /// The per-body view carries the forces and the servo's implicit diagonal of the dense
    /// view (`M̃`, `f̃` with the actuation and an extra force applied), the same contacts, and
    /// is updated in place from step to step with the values of a fresh detection.
    #[test]
    fn the_views_of_a_contact_set_agree() {
        let model = Model::from_toml_str(SCENE, None).unwrap();
        let state = model.initial_state.clone();
        let h = 0.01;
        let mut input = crate::actuation::Actuation::from_command(&model, &state, &[0.1]).unwrap();
        assert!(input.has_servos());
        // an external load: an explicit generalized force beside the servo
        input.add_generalized_force(&DVector::from_fn(model.nv(), |i, _| 0.1 * i as f64 - 0.2));
        let step = crate::pipeline::prepare(&model, &state, &input, h).unwrap();
        let margins = ContactMargins::speculative(model.contact_margin, h);
        let mut workspace = SnapshotWorkspace::default();
        let mut set = ContactSet::detect(&step, margins.clone(), true, &mut workspace).unwrap();
        let view = set
            .blocks()
            .expect("a model of root joints has a per-body view");
        let (forces, diagonal) = (
            view.forces.clone(),
            view.implicit_diagonal.clone().expect("a servo"),
        );
        let ncontacts = view.snapshot.contacts.len();
        assert_eq!(
            ncontacts, 5,
            "the ball and the four lower corners of the box"
        );
        let plain =
            ContactSnapshot::with_contact_margins(&model, &state.q, &state.v, state.t, &margins)
                .unwrap();
        let dense = set.dense().unwrap();
        assert_eq!(dense.contacts.len(), ncontacts);
        assert!(
            (&dense.forces - &forces).amax() < 1e-12,
            "{} vs {forces}",
            dense.forces
        );
        let added = &dense.mass_matrix - &plain.mass_matrix;
        assert!((added.diagonal() - &diagonal).amax() < 1e-12);
        assert!(diagonal.amax() > 0.0);

        // a later step updates the kept snapshot in place, with a fresh detection's values
        let mut later = state.clone();
        later.q[2] -= 0.004;
        later.t = h;
        let step = crate::pipeline::prepare(&model, &later, &input, h).unwrap();
        let updated = ContactSet::detect(&step, margins.clone(), true, &mut workspace)
            .unwrap()
            .blocks()
            .map(|v| (v.snapshot.clone(), v.forces.clone()));
        let mut own = SnapshotWorkspace::default();
        let fresh = ContactSet::detect(&step, margins.clone(), true, &mut own)
            .unwrap()
            .blocks()
            .map(|v| (v.snapshot.clone(), v.forces.clone()));
        assert!(updated.is_some());
        assert_eq!(updated, fresh);

        // without the per-body view only the dense view is there
        let mut unused = SnapshotWorkspace::default();
        let mut dense_only = ContactSet::detect(&step, margins, false, &mut unused).unwrap();
        assert!(dense_only.blocks().is_none());
        assert_eq!(dense_only.dense().unwrap().contacts.len(), ncontacts);
    }
}
