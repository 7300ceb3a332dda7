//! The block fast path of the `drumwright` stepper (the speed target of the
//! sphere stack):
//! - `BlockSnapshot` (per-body blocks, broad phase) reproduces `ContactSnapshot` exactly;
//! - each stage solved by the specialized solvers (block principal pivoting for the normal
//!   stage, the quasi-definite sticking solve for the friction stage) agrees with Clarabel
//!   to 1e-6 relative to max(1, |λ|∞), with a small KKT residual and cone membership, on the
//!   sphere stack (N = 1, 10, 25, along a trajectory through the impacts), the incline
//!   (sticking, sliding, frictionless) and randomized 2D and 3D sphere piles;
//! - whole steps with the fast path agree with the Clarabel path;
//! - the step workspaces carry nothing over: `BlockSnapshot::update` in place equals a fresh
//!   snapshot, and a stepper reused across models steps like a fresh one.

use nonsmooth_sim::scenes;
use scenes::sphere_stack;

use nalgebra::DVector;
use nonsmooth_core::snapshot::{BlockSnapshot, ContactSnapshot};
use nonsmooth_core::{Model, State};
use nonsmooth_sim::{DrumwrightOptions, DrumwrightStepper, Stepper};

const INCLINE: &str = include_str!("../../../examples/drumwright_incline.toml");

fn stack(n: usize) -> Model {
    sphere_stack(n).unwrap()
}

fn incline(mu: f64) -> Model {
    let mut m = Model::from_toml_str(INCLINE, None).unwrap();
    for mat in &mut m.materials {
        mat.friction = mu;
    }
    m
}

/// A small linear congruential generator in [0, 1).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A random pile of spheres (disks in 2D) on the ground: a few columns of touching or
/// slightly overlapping bodies with random masses, friction, laws and velocities.
fn random_pile(planar: bool, seed: u64) -> Model {
    let mut rng = Lcg(seed);
    let mu = 0.2 + rng.next();
    let law = if rng.next() < 0.5 { "hertz" } else { "linear" };
    let k = if law == "hertz" { 2.2e10 } else { 1e6 };
    let (dim, grav, plane) = if planar {
        ("planar", "[0.0, -9.81, 0.0]", "[0.0, 1.0, 0.0]")
    } else {
        ("spatial", "[0.0, 0.0, -9.81]", "[0.0, 0.0, 1.0]")
    };
    let mut src = format!(
        "[model]\nname = \"pile\"\ndimension = \"{dim}\"\ngravity = {grav}\ncontact_margin = 0.01\n\n\
         [[materials]]\nname = \"m\"\nfriction = {mu}\nstiffness = {k}\ndamping = 1.0\nlaw = \"{law}\"\n\n\
         [[materials]]\nname = \"ground\"\nfriction = {mu}\n\n\
         [[colliders]]\nname = \"ground\"\nshape = {{ plane = {plane} }}\nmaterial = \"ground\"\n\n"
    );
    let cols = 2 + (rng.next() * 2.0) as usize;
    let rows = 2 + (rng.next() * 3.0) as usize;
    let mut init = String::from("[initial]\n");
    let mut id = 0;
    for c in 0..cols {
        for r in 0..rows {
            let mass = 0.05 + 0.2 * rng.next();
            src.push_str(&format!(
                "[[bodies]]\nname = \"b{id}\"\nmass = {mass}\ninertia = {{ solid_sphere = 0.05 }}\n\n\
                 [[colliders]]\nname = \"c{id}\"\nbody = \"b{id}\"\nshape = {{ sphere = 0.05 }}\n\
                 material = \"m\"\n\n"
            ));
            let x = c as f64 * 0.0995 + 0.01 * (rng.next() - 0.5);
            let up = 0.05 + r as f64 * 0.0995 + 0.002 * (rng.next() - 0.5);
            let vx = 0.2 * (rng.next() - 0.5);
            let vu = 0.2 * (rng.next() - 0.5);
            let w = 2.0 * (rng.next() - 0.5);
            if planar {
                init.push_str(&format!(
                    "q.b{id} = [{x}, {up}, 0.0]\nv.b{id} = [{vx}, {vu}, {w}]\n"
                ));
            } else {
                let y = 0.01 * (rng.next() - 0.5);
                init.push_str(&format!(
                    "q.b{id} = [{x}, {y}, {up}, 1.0, 0.0, 0.0, 0.0]\n\
                     v.b{id} = [{vx}, 0.0, {vu}, 0.0, {w}, 0.0]\n"
                ));
            }
            id += 1;
        }
    }
    src.push_str(&init);
    Model::from_toml_str(&src, None).unwrap()
}

fn amax(x: &DVector<f64>) -> f64 {
    x.amax()
}

/// Outcome of the stage checks at one state.
#[derive(Default)]
struct Tally {
    /// States checked.
    states: usize,
    /// Clarabel failed on the reference solve (the fast solvers were still checked by
    /// their own KKT residuals).
    reference_failed: usize,
    /// Normal stages solved by the fast solver.
    normal_fast: usize,
    /// ... that agree with the min-norm Clarabel solution to 1e-6 (the others agree to
    /// the interior-point accuracy of zero forces, see `check_stages`).
    normal_minnorm_1e6: usize,
    /// Friction stages solved by the fast solver.
    friction_fast: usize,
    /// ... that agree with Clarabel to 1e-6.
    friction_1e6: usize,
}

/// Checks both stages at `state` against Clarabel.
///
/// Normal stage: the pivoting solution λ must agree to 1e-6 relative to max(1, |λ|∞) with
/// Clarabel's solution of the LCP-equivalent QP, pass the complementarity check (1e-9)
/// and the min-norm certificate (checked inside the solver), and agree with Clarabel's
/// min-norm QP solution to 1e-6 — or, where an interior-point method resolves a zero force
/// only to about √(gap tolerance) (degenerate speculative rows), to 1e-4.
///
/// Friction stage: the sticking solution must be in every disk, have a small natural
/// residual (1e-9), and agree with Clarabel to 1e-6 — or, where they differ, have a
/// strictly lower objective than Clarabel's (feasible) answer, i.e. Clarabel is the less
/// accurate one (its dense Hessian I + EᵀE has entries ≈ 1e15 and loses the force
/// distribution along the null space of the Delassus block, e.g. over the four feet of the
/// incline box).
fn check_stages(model: &Model, state: &State, h: f64, label: &str, tally: &mut Tally) {
    let st = DrumwrightStepper::new(staged());
    tally.states += 1;
    let cmp = match st.compare_fast_stages(model, state, h) {
        Ok(c) => c.unwrap_or_else(|| panic!("{label}: model does not qualify")),
        Err(e) => {
            eprintln!("{label}: Clarabel reference failed: {e}");
            tally.reference_failed += 1;
            return;
        }
    };
    let tol = |x: &DVector<f64>| 1e-6 * 1f64.max(amax(x));
    if let Some(fast) = &cmp.normal_fast {
        let d = amax(&(fast - &cmp.normal_clarabel_lcp));
        assert!(
            d <= tol(&cmp.normal_clarabel_lcp),
            "{label}: normal stage differs from the LCP form by {d}"
        );
        let d = amax(&(fast - &cmp.normal_clarabel));
        assert!(
            d <= 100.0 * tol(&cmp.normal_clarabel),
            "{label}: normal stage differs from the min-norm form by {d}"
        );
        if d <= tol(&cmp.normal_clarabel) {
            tally.normal_minnorm_1e6 += 1;
        }
        assert!(fast.iter().all(|&x| x >= 0.0), "{label}: λ_n ≥ 0");
        let res = cmp.normal_residual.unwrap();
        assert!(res <= 1e-9, "{label}: complementarity residual {res}");
        tally.normal_fast += 1;
    }
    if let Some(fast) = &cmp.friction_fast {
        let (res, cone) = cmp.friction_residual.unwrap();
        assert!(res <= 1e-9, "{label}: friction KKT residual {res}");
        assert!(cone <= 0.0, "{label}: cone violation {cone}");
        let d = amax(&(fast - &cmp.friction_clarabel));
        let of = cmp.objective_fast.unwrap();
        let oc = cmp.objective_clarabel;
        if d <= tol(&cmp.friction_clarabel) {
            tally.friction_1e6 += 1;
        } else {
            eprintln!(
                "{label}: friction differs by {d:e} (|λ_t| {:e}); objective fast {of:.12e} \
                 Clarabel {oc:.12e}; |∇| fast {:?} Clarabel {:e}",
                amax(&cmp.friction_clarabel),
                cmp.gradient_fast,
                cmp.gradient_clarabel
            );
            assert!(
                of < oc && cmp.cone_clarabel <= 1e-9,
                "{label}: friction stage differs by {d} and is not more optimal"
            );
        }
        tally.friction_fast += 1;
    }
}

/// States along a trajectory of the default (fast) stepper (up to the first failed step:
/// some random piles make the Clarabel fallback of a sliding friction stage fail).
fn trajectory(model: &Model, h: f64, steps: usize) -> Vec<State> {
    let mut st = DrumwrightStepper::new(staged());
    let mut s = model.initial_state.clone();
    let mut out = vec![s.clone()];
    for _ in 0..steps {
        match st.step(model, &s, h) {
            Ok(next) => s = next,
            Err(e) => {
                eprintln!("{}: trajectory stopped: {e}", model.name);
                break;
            }
        }
        out.push(s.clone());
    }
    out
}

#[test]
fn block_snapshot_matches_the_dense_snapshot() {
    for model in [
        stack(6),
        random_pile(true, 3),
        random_pile(false, 5),
        incline(0.3),
    ] {
        for s in trajectory(&model, 0.01, 4).iter().step_by(2) {
            let dense = ContactSnapshot::from_state(&model, s).unwrap();
            let blocks = BlockSnapshot::from_state(&model, s).unwrap().unwrap();
            assert_eq!(dense.contacts.len(), blocks.contacts.len());
            for b in &blocks.blocks {
                let n = b.force.len();
                let md = dense.mass_matrix.view((b.v_index, b.v_index), (n, n));
                assert!((md - &b.mass).amax() < 1e-12);
                let fd = dense.forces.rows(b.v_index, n);
                assert!((fd - &b.force).amax() < 1e-9);
            }
            for (c, bc) in dense.contacts.iter().zip(&blocks.contacts) {
                assert_eq!(
                    (c.collider_a, c.collider_b, c.feature),
                    (bc.collider_a, bc.collider_b, bc.feature)
                );
                assert!((c.gap - bc.gap).abs() < 1e-15);
                let mut rows = nalgebra::DMatrix::zeros(1 + c.rows.tangents.nrows(), dense.nv());
                rows.set_row(0, &c.rows.normal.transpose());
                for t in 0..c.rows.tangents.nrows() {
                    rows.set_row(1 + t, &c.rows.tangents.row(t));
                }
                let mut rb = nalgebra::DMatrix::zeros(rows.nrows(), dense.nv());
                for (body, part) in [(bc.body_a, &bc.rows.a), (bc.body_b, &bc.rows.b)] {
                    if let Some(b) = body {
                        let vi = model.joints[b].v_index;
                        let mut view = rb.view_mut((0, vi), (part.nrows(), part.ncols()));
                        view += part;
                    }
                }
                assert!((rows - rb).amax() < 1e-12);
                assert!((c.normal_row_dot_v - bc.normal_row_dot_v).abs() < 1e-9);
            }
        }
    }
    // Models with parents, constraints or limits do not qualify.
    let pendulum = Model::from_toml_str(
        include_str!("../../../examples/drumwright_pendulum.toml"),
        None,
    )
    .unwrap();
    assert!(
        BlockSnapshot::from_state(&pendulum, &pendulum.initial_state)
            .unwrap()
            .is_none()
    );
}

#[test]
fn fast_stages_agree_with_clarabel_on_the_stack() {
    for n in [1usize, 10, 25] {
        let model = stack(n);
        let states = trajectory(&model, 0.01, 60);
        let mut t = Tally::default();
        for (k, s) in states.iter().enumerate().step_by(6) {
            check_stages(&model, s, 0.01, &format!("stack N = {n}, step {k}"), &mut t);
        }
        assert_eq!(t.reference_failed, 0);
        assert_eq!(
            t.normal_fast, t.states,
            "stack N = {n}: normal stage declined"
        );
        assert_eq!(
            t.friction_fast, t.states,
            "stack N = {n}: friction stage declined"
        );
        assert_eq!(t.friction_1e6, t.states);
        assert!(
            t.normal_minnorm_1e6 + 2 >= t.states,
            "N = {n}: {}",
            t.normal_minnorm_1e6
        );
    }
}

#[test]
fn fast_stages_agree_with_clarabel_on_the_incline() {
    // μ = 0.375 sticks (fast friction stage), μ = 0.125 slides (the sticking solve declines
    // and Clarabel is used), μ = 0 has no friction rows.
    for (mu, sticking) in [(0.375, true), (0.125, false), (0.0, true)] {
        let model = incline(mu);
        let mut t = Tally::default();
        for (k, s) in trajectory(&model, 0.01, 12).iter().enumerate().step_by(4) {
            check_stages(
                &model,
                s,
                0.01,
                &format!("incline μ = {mu}, step {k}"),
                &mut t,
            );
        }
        assert_eq!(t.reference_failed, 0);
        assert_eq!(
            t.normal_fast, t.states,
            "incline μ = {mu}: normal stage declined"
        );
        if sticking {
            assert_eq!(
                t.friction_fast, t.states,
                "incline μ = {mu}: friction declined"
            );
        }
    }
}

#[test]
fn fast_stages_agree_with_clarabel_on_random_piles() {
    let mut t = Tally::default();
    for seed in 0..6u64 {
        for planar in [true, false] {
            let model = random_pile(planar, 11 + seed);
            for (k, s) in trajectory(&model, 0.01, 6).iter().enumerate().step_by(3) {
                let label = format!("pile seed {seed} planar {planar} step {k}");
                check_stages(&model, s, 0.01, &label, &mut t);
            }
        }
    }
    eprintln!(
        "random piles: {} states, {} Clarabel failures, normal fast {} (min-norm 1e-6: {}), \
         friction fast {} (1e-6: {})",
        t.states,
        t.reference_failed,
        t.normal_fast,
        t.normal_minnorm_1e6,
        t.friction_fast,
        t.friction_1e6
    );
    let checked = t.states - t.reference_failed;
    // Piles have non-M-matrix normal couplings (a sphere resting on two below), where the
    // LCP solution is not the min-norm one (D4) and the normal stage falls back to
    // Clarabel, and sliding contacts, where the friction stage does; the fast solvers
    // must still take a good share.
    assert!(
        t.normal_fast * 3 >= checked,
        "normal fast {}",
        t.normal_fast
    );
    assert!(
        t.friction_fast * 4 >= checked,
        "friction fast {}",
        t.friction_fast
    );
    assert!(t.reference_failed * 5 <= t.states);
}

#[test]
fn fast_steps_agree_with_the_clarabel_path() {
    let clarabel = DrumwrightOptions {
        fast_solver: false,
        ..staged()
    };
    for model in [
        stack(10),
        incline(0.375),
        random_pile(false, 2),
        random_pile(true, 4),
    ] {
        let mut fast = DrumwrightStepper::new(staged());
        let mut slow = DrumwrightStepper::new(clarabel.clone());
        let mut s = model.initial_state.clone();
        let mut fast_solves = 0;
        let weight: f64 = model.bodies.iter().map(|b| b.mass).sum::<f64>() * 9.81;
        for k in 0..30 {
            let a = fast.step(&model, &s, 0.01).unwrap();
            let b = slow.step(&model, &s, 0.01).unwrap();
            fast_solves += fast.last.fast_solves;
            assert_eq!(fast.last.contacts.len(), slow.last.contacts.len());
            let dv = (&a.v - &b.v).amax();
            assert!(dv <= 1e-5 * (1.0 + b.v.amax()), "step {k}: |Δv| = {dv}");
            let scale = 1.0
                + slow
                    .last
                    .contacts
                    .iter()
                    .fold(weight, |m, c| m.max(c.normal.abs()));
            for (x, y) in fast.last.contacts.iter().zip(&slow.last.contacts) {
                assert_eq!(x.contact, y.contact);
                // Zero forces of degenerate speculative rows are resolved by the interior
                // point method only to ~1e-5 of the force scale (as in fast_path.rs).
                assert!(
                    (x.normal - y.normal).abs() <= 1e-5 * scale,
                    "{} step {k}: λ_n {} vs {}",
                    model.name,
                    x.normal,
                    y.normal
                );
            }
            s = b;
        }
        assert!(fast_solves > 0);
    }
}

#[test]
fn block_snapshot_update_in_place_matches_a_fresh_snapshot() {
    // One snapshot updated in place along trajectories of models with different numbers of
    // bodies and contacts equals a freshly built one at every state (the reused storage
    // carries nothing over).
    let models = [
        stack(6),
        random_pile(true, 3),
        stack(2),
        random_pile(false, 5),
    ];
    let mut reused: Option<BlockSnapshot> = None;
    for model in &models {
        for s in trajectory(model, 0.01, 3) {
            let fresh = BlockSnapshot::from_state(model, &s).unwrap().unwrap();
            let snap = reused.get_or_insert_with(|| fresh.clone());
            assert!(snap.update(model, &s.q, &s.v, s.t).unwrap());
            assert_eq!(*snap, fresh);
        }
    }
}

#[test]
fn a_stepper_reused_across_models_matches_fresh_steppers() {
    // The stepper's workspaces (cached mass-block inverses, block snapshot, program
    // storage) are invalidated when the model changes: stepping a second model with a
    // stepper that stepped a first one gives bit-identical results to a fresh stepper.
    let first = stack(6);
    let second = random_pile(false, 5);
    let mut shared = DrumwrightStepper::new(staged());
    let mut s = first.initial_state.clone();
    for _ in 0..3 {
        s = shared.step(&first, &s, 0.01).unwrap();
    }
    let mut fresh = DrumwrightStepper::new(staged());
    let (mut a, mut b) = (second.initial_state.clone(), second.initial_state.clone());
    for _ in 0..3 {
        a = shared.step(&second, &a, 0.01).unwrap();
        b = fresh.step(&second, &b, 0.01).unwrap();
        assert_eq!(a.q, b.q);
        assert_eq!(a.v, b.v);
    }
}

/// The staged normal/friction alternation with the paper's minimum-norm normal rows (D4,
/// D5), whose fast path and lifted programs these tests check.
fn staged() -> DrumwrightOptions {
    DrumwrightOptions {
        friction: nonsmooth_sim::drumwright::FrictionCoupling::Staged { sweeps: 100 },
        unilateral: nonsmooth_sim::drumwright::UnilateralForm::MinNorm,
        ..Default::default()
    }
}
