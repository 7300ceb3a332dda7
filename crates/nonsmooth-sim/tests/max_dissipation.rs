//! Tests of the `qp-max-dissipation` stepper (complementarity-free maximal-dissipation QP,
//! the forward model of Stage I of the two-stage QP inverse dynamics, Zapolsky & Drumwright 2017,
//! §6).

use nonsmooth_core::dynamics::kinetic_energy;
use nonsmooth_core::{ContactSnapshot, Model, State};
use nonsmooth_sim::{
    stepper_by_name, AnitescuPotraStepper, MaxDissipationStepper, SimError, Stepper,
};

const BALL: &str = include_str!("../../../examples/bouncing_sphere.toml");
const BOX: &str = include_str!("../../../examples/sliding_box.toml");
const G: f64 = 9.81;

fn resting_box() -> Model {
    let mut model = Model::from_toml_str(BOX, None).unwrap();
    model.initial_state.v.fill(0.0);
    model
}

/// The ball resting on the ground (gap 0), rigid contact, μ = 0.5.
fn ball_on_ground() -> Model {
    let mut model = Model::from_toml_str(BALL, None).unwrap();
    for m in &mut model.materials {
        m.stiffness = None;
        m.damping = None;
        m.restitution = None;
    }
    model.initial_state.q[2] = 0.1;
    model
}

#[test]
fn registered_by_name() {
    let s = stepper_by_name("qp-max-dissipation").unwrap();
    assert_eq!(s.name(), "qp-max-dissipation");
}

#[test]
fn resting_box_stays_at_rest_and_carries_its_weight() {
    let model = resting_box();
    let mut st = MaxDissipationStepper::default();
    let h = 1e-3;
    let mut s = model.initial_state.clone();
    let mut total = 0.0;
    for _ in 0..100 {
        s = st.step(&model, &s, h).unwrap();
        // (A step that starts a hair above the ground has no contact rows; the next one
        // then also undoes the free-fall step's penetration through φ/h.)
        let Some(imp) = st.last_impulses() else {
            continue;
        };
        total += imp.normal.sum();
        // Net friction per direction (internal squeeze between corners cancels).
        for j in 0..2 {
            let net: f64 = (0..4).map(|i| imp.friction(i, j)).sum();
            assert!(net.abs() < 1e-5, "{net}");
        }
    }
    // Time-averaged Σ f_N = m g (2 kg box).
    let avg = total / 100.0;
    assert!((avg - 2.0 * G).abs() < 0.02 * 2.0 * G, "{avg}");
    assert!(s.v.amax() < 1e-4, "{}", s.v.amax());
    assert!((s.q[2] - 0.1).abs() < 1e-5, "{}", s.q[2]);
}

#[test]
fn sliding_ball_lifts_off_at_mu_times_the_sliding_speed() {
    // One point contact sliding along the first pyramid edge: with the friction constraint
    // active, min ½(v_n² + v_t²) (in contact space; the Delassus matrix of a sphere is
    // diagonal) gives v_n⁺ = μ v_t⁺ — the complementarity-free model buys friction with
    // extra normal impulse.
    let mut model = ball_on_ground();
    let snap =
        ContactSnapshot::new(&model, &model.initial_state.q, &model.initial_state.v, 0.0).unwrap();
    assert_eq!(snap.contacts.len(), 1);
    let t1 = snap.contacts[0].tangents[0];
    model.initial_state.v[0] = t1.x;
    model.initial_state.v[1] = t1.y;
    let mu = snap.contacts[0].friction;
    let mut st = MaxDissipationStepper::default();
    let s1 = st.step(&model, &model.initial_state, 1e-3).unwrap();
    let snap1 = ContactSnapshot::new(&model, &model.initial_state.q, &s1.v, 0.0).unwrap();
    let c = &snap1.contacts[0];
    let vn = c.rows.normal.dot(&s1.v);
    let vt = c.rows.tangents.row(0).transpose().dot(&s1.v);
    assert!(vt > 0.5, "{vt}");
    assert!(
        (vn - mu * vt).abs() < 1e-6,
        "v_n⁺ = {vn}, μ v_t⁺ = {}",
        mu * vt
    );
    // The friction pyramid is active: Σ edges = μ f_N.
    let imp = st.last_impulses().unwrap();
    assert!((imp.edges.sum() - mu * imp.normal[0]).abs() < 1e-6 * imp.normal[0]);
    assert!(imp.friction(0, 0) < 0.0, "friction opposes the sliding");
}

#[test]
fn no_slip_ball_sticks_in_one_step_without_lift_off() {
    let mut model = ball_on_ground();
    model.initial_state.v[0] = 0.5;
    let mut st = MaxDissipationStepper::new(true);
    let s1 = st.step(&model, &model.initial_state, 1e-3).unwrap();
    let snap1 = ContactSnapshot::new(&model, &model.initial_state.q, &s1.v, 0.0).unwrap();
    let c = &snap1.contacts[0];
    // (Interior-point accuracy: about 1e-5 m/s on these velocities.)
    assert!(c.rows.normal.dot(&s1.v).abs() < 1e-4);
    assert!(c.rows.tangents.row(0).transpose().dot(&s1.v).abs() < 1e-4);
    assert!(c.rows.tangents.row(1).transpose().dot(&s1.v).abs() < 1e-4);
    // Rolling: the ball keeps moving (the point stops, not the centre).
    assert!(s1.v[0] > 0.1);
}

#[test]
fn sliding_box_never_ends_above_the_anitescu_potra_energy_and_stays_in_the_cone() {
    // From the same state, the Anitescu–Potra impulses (same 4-edge pyramid, same φ/h
    // stabilization) are feasible for the maximal-dissipation QP, so the QP's post-step
    // kinetic energy is never above the LCP's. States: along the Anitescu–Potra trajectory
    // of the sliding box (2 m/s, μ = 0.3).
    let model = Model::from_toml_str(BOX, None).unwrap();
    let mut qp = MaxDissipationStepper::default();
    let mut ap = AnitescuPotraStepper::default();
    let h = 1e-3;
    let mut s = model.initial_state.clone();
    let mut below = 0;
    for k in 0..700 {
        let a = ap.step(&model, &s, h).unwrap();
        if k % 20 == 0 {
            let next = qp.step(&model, &s, h).unwrap();
            let ka = kinetic_energy(&model, &s.q, &a.v);
            let kq = kinetic_energy(&model, &s.q, &next.v);
            assert!(kq <= ka + 1e-7 * (1.0 + ka), "step {k}: {kq} > {ka}");
            if kq < ka - 1e-6 {
                below += 1;
            }
        }
        s = a;
    }
    // While sliding the QP dissipates strictly more (the lift-off of the test above).
    assert!(below >= 10, "{below}");
    // Along its own trajectory the impulses stay in the pyramid and the box comes to rest
    // (up to a slowly decaying rocking) near the Coulomb distance v₀²/(2μg).
    let mut s = model.initial_state.clone();
    for k in 0..1500 {
        s = qp.step(&model, &s, h).unwrap();
        if let Some(imp) = qp.last_impulses() {
            let n = imp.normal.len();
            for i in 0..n {
                let edges: f64 = (0..4).map(|e| imp.edges[e * n + i]).sum();
                assert!(imp.normal[i] >= -1e-6);
                assert!(edges <= 0.3 * imp.normal[i] + 1e-5, "step {k} contact {i}");
            }
        }
    }
    let ke = kinetic_energy(&model, &s.q, &s.v);
    assert!(ke < 1e-3 * 4.0, "{ke}");
    let d = 4.0 / (2.0 * 0.3 * G);
    assert!((s.q[0] - d).abs() < 0.02 * d, "{} vs {d}", s.q[0]);
    assert!((s.q[2] - 0.1).abs() < 2e-3, "{}", s.q[2]);
}

#[test]
fn bad_inputs_are_typed_errors() {
    let model = resting_box();
    let mut st = MaxDissipationStepper::default();
    assert!(matches!(
        st.step(&model, &model.initial_state, -1.0),
        Err(SimError::InvalidOption { .. })
    ));
    let bad = State {
        q: model.initial_state.q.clone(),
        v: model.initial_state.v.map(|_| f64::NAN),
        t: 0.0,
    };
    assert!(st.step(&model, &bad, 1e-3).is_err());
    st.tolerance = 0.0;
    assert!(matches!(
        st.step(&model, &model.initial_state, 1e-3),
        Err(SimError::InvalidOption { .. })
    ));
}
