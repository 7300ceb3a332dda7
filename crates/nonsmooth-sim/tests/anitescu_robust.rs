//! Robustness of the `anitescu-potra` stepper at large friction (μ = 100): every accepted
//! LCP solution has a small residual on the unscaled LCP, the kinetic energy never grows by
//! more than the penetration-recovery work, a squeezed box stays put, and randomized scenes
//! never produce a velocity jump.

use nalgebra::DVector;
use nonsmooth_core::snapshot::ContactSnapshot;
use nonsmooth_core::{Model, State};
use nonsmooth_sim::anitescu::ApStepReport;
use nonsmooth_sim::AnitescuPotraStepper;

const H: f64 = 1e-3;

/// Two prismatic fingers (0.05 kg, sliding along ∓y from the world) squeezing a free
/// 0.06 m cube of 1.296 kg (the grasp testbed's box) under gravity; friction `mu`.
fn squeeze_model(mu: f64) -> Model {
    let toml = format!(
        r#"
[model]
name = "squeeze"
dimension = "spatial"
gravity = [0.0, 0.0, -9.81]
contact_margin = 0.005

[[bodies]]
name = "box"
mass = 1.296
inertia = {{ solid_box = [0.06, 0.06, 0.06] }}

[[bodies]]
name = "fa"
mass = 0.05
inertia = {{ solid_sphere = 0.01 }}

[[bodies]]
name = "fb"
mass = 0.05
inertia = {{ solid_sphere = 0.01 }}

[[joints]]
name = "box"
kind = "floating"
parent = "world"
child = "box"

[[joints]]
name = "fa_slide"
kind = "prismatic"
parent = "world"
child = "fa"
placement = {{ xyz = [0.0, 0.08, 0.0] }}
axis = [0.0, -1.0, 0.0]

[[joints]]
name = "fb_slide"
kind = "prismatic"
parent = "world"
child = "fb"
placement = {{ xyz = [0.0, -0.08, 0.0] }}
axis = [0.0, 1.0, 0.0]

[[materials]]
name = "m"
friction = {mu}

[[colliders]]
name = "box"
body = "box"
shape = {{ box = [0.03, 0.03, 0.03] }}
material = "m"

[[colliders]]
name = "fa_tip"
body = "fa"
shape = "point"
pose = {{ xyz = [0.0, -0.05, 0.0] }}
material = "m"

[[colliders]]
name = "fb_tip"
body = "fb"
shape = "point"
pose = {{ xyz = [0.0, 0.05, 0.0] }}
material = "m"

[[actuators]]
name = "fa_motor"
joint = "fa_slide"
gear = 1.0

[[actuators]]
name = "fb_motor"
joint = "fb_slide"
gear = 1.0

[initial]
q.box = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]
"#
    );
    Model::from_toml_str(&toml, None).unwrap()
}

/// A free cube (0.1 m, 1 kg) over the ground plane with friction `mu`.
fn box_on_ground(mu: f64) -> Model {
    let toml = format!(
        r#"
[model]
name = "box_ground"
dimension = "spatial"
gravity = [0.0, 0.0, -9.81]
contact_margin = 0.01

[[bodies]]
name = "box"
mass = 1.0
inertia = {{ solid_box = [0.1, 0.1, 0.1] }}

[[materials]]
name = "m"
friction = {mu}

[[colliders]]
name = "ground"
body = "world"
shape = {{ plane = [0.0, 0.0, 1.0] }}
material = "m"

[[colliders]]
name = "box"
body = "box"
shape = {{ box = [0.05, 0.05, 0.05] }}
material = "m"

[initial]
q.box = [0.0, 0.0, 0.05, 1.0, 0.0, 0.0, 0.0]
"#
    );
    Model::from_toml_str(&toml, None).unwrap()
}

/// Zero-order-hold actuation as the control loops do: `v ← v + h M⁻¹ Pᵀ u`.
fn actuate(model: &Model, state: &State, u: &DVector<f64>) -> State {
    let snap = ContactSnapshot::from_state(model, state).unwrap();
    let chol = snap.mass_matrix.clone().cholesky().unwrap();
    let v = &state.v + chol.solve(&(&snap.actuation * u)) * H;
    State {
        q: state.q.clone(),
        v,
        t: state.t,
    }
}

/// `‖v‖_M` at the configuration of `state`.
fn m_norm(model: &Model, state: &State, v: &DVector<f64>) -> f64 {
    let snap = ContactSnapshot::from_state(model, state).unwrap();
    v.dot(&(&snap.mass_matrix * v)).max(0.0).sqrt()
}

/// `v_free = v + h M⁻¹ f`.
fn free_velocity(model: &Model, state: &State) -> DVector<f64> {
    let snap = ContactSnapshot::from_state(model, state).unwrap();
    let chol = snap.mass_matrix.clone().cholesky().unwrap();
    &state.v + chol.solve(&snap.forces) * H
}

fn check_report(r: &ApStepReport, what: &str) {
    assert!(r.residual <= 1e-8, "{what}: residual {:e}", r.residual);
    assert!(
        r.energy_gain <= r.energy_bound + 1e-9,
        "{what}: energy gain {:e} > bound {:e}",
        r.energy_gain,
        r.energy_bound
    );
}

/// Deterministic uniform numbers in [0, 1) (a 64-bit LCG, Knuth's MMIX constants).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
    fn sym(&mut self, a: f64) -> f64 {
        a * (2.0 * self.next() - 1.0)
    }
}

#[test]
fn squeezed_box_at_mu_100_stays_put_for_1000_steps() {
    let model = squeeze_model(100.0);
    let mut stepper = AnitescuPotraStepper::default();
    let mut s = model.initial_state.clone();
    let x0 = s.q.clone();
    let u = DVector::from_vec(vec![20.0, 20.0]);
    assert_eq!(model.q_names()[0], "box.x", "{:?}", model.q_names());
    let mut worst = 0.0_f64;
    for k in 0..1000 {
        let a = actuate(&model, &s, &u);
        let (next, r) = stepper.step_report(&model, &a, H).unwrap();
        check_report(&r, &format!("step {k}"));
        worst = worst.max(next.v.amax());
        s = next;
    }
    // The box (q[0..3]) moves less than 0.1 mm and every speed stays below 1 cm/s.
    let drift = (s.q.rows(0, 3) - x0.rows(0, 3)).amax();
    assert!(drift < 1e-4, "box drift {drift:e} m");
    assert!(worst < 1e-2, "largest speed {worst:e}");
}

// States extracted from the grasp testbed (`lcp_mu` controller, arm + hand + box of
// examples/id_arm_hand_box.toml; q = 7 arm + 4 finger + 7 box coordinates) at steps where
// the stepper failed before the fix.
/// t = 0.078 s: the dropped box falls away from the fingertips (every gap > 0, every
/// contact separating), the snapshot lists each fingertip contact twice, and the friction
/// rows of `q` are round-off (±1.7e-23). Lemke's first pivot used to pick a `q = 0` row by
/// the tie-break and end in ray termination after one pivot.
const SEPARATING_Q: [f64; 18] = [
    2.9286858486164112e-25,
    -4.0162317915815077e-17,
    3.358127479323186e-28,
    9.400119571623129e-17,
    -1.5782838420778384e-23,
    -2.0681373280595514e-17,
    -3.3581274793214684e-28,
    -1.0781230749056873e-24,
    -1.697721740468469e-24,
    1.0781230749056873e-24,
    1.697721740468469e-24,
    0.65,
    6.44311903070925e-61,
    -0.03022460999999997,
    1.0,
    -8.679906544943958e-43,
    1.1870623908417957e-42,
    2.9400210966902873e-58,
];
const SEPARATING_V: [f64; 17] = [
    9.10715481518696e-24,
    -0.0422328119645769,
    1.754498897434865e-26,
    0.056340075721173714,
    -4.907894352454719e-22,
    -0.02189293320923594,
    2.051076754553228e-25,
    -3.3525737999463206e-23,
    -5.2793025073674187e-23,
    3.3525737999463206e-23,
    5.2793025073674187e-23,
    7.816649761309518e-58,
    2.672301289627437e-59,
    -0.7651799999999991,
    -3.3072988505251967e-41,
    4.673316116738773e-41,
    1.2355070929950966e-56,
];
/// t = 0.019 s: a fingertip hits the box with the wrist turning at 33 rad/s.
const IMPACT_Q: [f64; 18] = [
    7.625832974714336e-7,
    0.01345331329056318,
    2.618264673731342e-7,
    -0.027334386725038396,
    -4.2283067824393124e-5,
    -0.2815501954305387,
    0.00019863957335628042,
    -8.370482528428804e-6,
    -5.291611975595976e-6,
    8.369706646762405e-6,
    5.291386837602833e-6,
    0.6499999999981831,
    1.9921867292563287e-7,
    -0.0012637971513479243,
    0.9999999536458257,
    -0.00012478488902209527,
    0.0002777340926323559,
    -9.228622287784051e-7,
];
const IMPACT_V: [f64; 17] = [
    0.0022808087554947987,
    2.4837902709977855,
    0.000619394849923178,
    -5.542723342287647,
    -0.12687143652416122,
    -33.45454779050461,
    0.6213019704027969,
    -0.014118548918117514,
    -0.013582325692175691,
    0.26653588517376603,
    0.013587110308659514,
    -1.8058223466055347e-9,
    0.00018602516051608622,
    -0.0834262593314368,
    -0.23298956136624446,
    0.5322979284731549,
    -0.0017391157489068739,
];

/// t = 1.713 s (`pid`, 3 s run): four fingertips closing on the box at 0.27 m/s, gaps
/// ±1.6e-9 m, every contact sticking. The cold Lemke run ends with a basis whose solution
/// leaves a tangential speed of 1.7e-5 m/s (residual 2e-6); a warm restart from its support
/// solves it to round-off.
const STICK_Q: [f64; 18] = [
    0.02574474321580545,
    -0.11662018673318972,
    1.2233871645970489e-5,
    -0.0006128808168849926,
    -0.026253104476349612,
    0.11959030733929794,
    4.661217973420488e-6,
    9.577624694402e-5,
    9.579317302479874e-5,
    -9.577624811976661e-5,
    -9.579317420053396e-5,
    0.6462920792043251,
    0.013933581013708209,
    0.06391903534511956,
    0.9999980820378906,
    0.0015406322495241796,
    0.0011984164269074977,
    -0.00016177416240730367,
];
const STICK_V: [f64; 17] = [
    0.13502635295375043,
    -0.15524438398378673,
    -7.592804081858306e-5,
    0.004503309016339115,
    -0.13688403795457696,
    -0.08848659094700809,
    0.0002467544933172763,
    0.26827599605491154,
    0.26827592244120735,
    0.26884400394741037,
    0.26884407756111445,
    -0.011358612070025415,
    0.07259441734824364,
    0.1001974278250779,
    0.02056976020326133,
    -0.19000409171362434,
    -0.0004198037170447925,
];

/// The grasp plant: examples/id_arm_hand_box.toml with rigid contacts of friction `mu`.
fn grasp_plant(mu: f64) -> Model {
    let toml = include_str!("../../../examples/id_arm_hand_box.toml");
    let mut model = Model::from_toml_str(toml, None).unwrap();
    for m in &mut model.materials {
        m.friction = mu;
        m.stiffness = None;
        m.damping = None;
    }
    model
}

#[test]
fn extracted_grasp_states_solve_with_small_residual_and_bounded_velocity() {
    for mu in [1.0, 100.0] {
        let model = grasp_plant(mu);
        let mut stepper = AnitescuPotraStepper::default();
        // Separating contacts: no impulse, v₁ = v_free.
        let s = State {
            q: DVector::from_row_slice(&SEPARATING_Q),
            v: DVector::from_row_slice(&SEPARATING_V),
            t: 0.078,
        };
        let snap = ContactSnapshot::from_state(&model, &s).unwrap();
        assert_eq!(snap.contacts.len(), 4);
        let (next, r) = stepper.step_report(&model, &s, H).unwrap();
        check_report(&r, "separating");
        assert_eq!(r.attempts, 1);
        assert!(r.max_impulse < 1e-12, "impulse {:e}", r.max_impulse);
        let vf = free_velocity(&model, &s);
        assert!((&next.v - &vf).amax() < 1e-12);
        // Impact at 33 rad/s: the kinetic energy does not grow (no penetration) and the
        // speed stays below the incoming one.
        let s = State {
            q: DVector::from_row_slice(&IMPACT_Q),
            v: DVector::from_row_slice(&IMPACT_V),
            t: 0.019,
        };
        let (next, r) = stepper.step_report(&model, &s, H).unwrap();
        check_report(&r, "impact");
        let vf = free_velocity(&model, &s);
        assert!(
            m_norm(&model, &s, &next.v)
                <= m_norm(&model, &s, &vf) * (1.0 + 1e-9) + 1e-9 + (2.0 * r.energy_bound).sqrt(),
            "mu {mu}"
        );
        assert!(
            next.v.amax() <= vf.amax() * 1.5,
            "{} vs {}",
            next.v.amax(),
            vf.amax()
        );
        // Squeezed and sticking: every fingertip stops relative to the box.
        let s = State {
            q: DVector::from_row_slice(&STICK_Q),
            v: DVector::from_row_slice(&STICK_V),
            t: 1.713,
        };
        let (next, r) = stepper.step_report(&model, &s, H).unwrap();
        check_report(&r, "stick");
        assert!(r.attempts <= 2, "attempts {}", r.attempts);
        let snap = ContactSnapshot::from_state(&model, &s).unwrap();
        for c in &snap.contacts {
            let vt = (&c.rows.tangents * &next.v).amax();
            assert!(vt < 1e-9, "mu {mu}: tangential speed {vt:e}");
            assert!(c.rows.normal.dot(&next.v) + c.gap / H > -1e-9);
        }
        let vf = free_velocity(&model, &s);
        assert!(
            m_norm(&model, &s, &next.v)
                <= m_norm(&model, &s, &vf) + (2.0 * r.energy_bound).sqrt() + 1e-12
        );
    }
}

/// Shifts the box of `box_on_ground` vertically so that its lowest point has gap `gap`.
fn place_box(model: &Model, state: &mut State, gap: f64) {
    let snap = ContactSnapshot::from_state(model, state).unwrap();
    let lowest = snap
        .contacts
        .iter()
        .map(|c| c.gap)
        .fold(f64::INFINITY, f64::min);
    state.q[2] += gap - lowest;
}

#[test]
fn randomized_scenes_never_jump_and_solve_to_small_residual() {
    let mut rng = Lcg(0x005e_eda9);
    let mut solved = 0;
    for mu in [0.1, 1.0, 100.0] {
        let ground = box_on_ground(mu);
        let squeeze = squeeze_model(mu);
        let mut stepper = AnitescuPotraStepper::default();
        for case in 0..60 {
            let (model, state) = if case % 2 == 0 {
                // Tilted box near the ground: 1 to 4 corner contacts, gap in [−1, 4] mm.
                let mut s = ground.initial_state.clone();
                let axis = nalgebra::Vector3::new(rng.sym(1.0), rng.sym(1.0), rng.sym(1.0));
                let angle = rng.sym(0.3) * if case % 4 == 0 { 0.0 } else { 1.0 };
                let rot = nalgebra::UnitQuaternion::from_scaled_axis(axis.normalize() * angle);
                s.q[3] = rot.w;
                s.q[4] = rot.i;
                s.q[5] = rot.j;
                s.q[6] = rot.k;
                place_box(&ground, &mut s, rng.next() * 5e-3 - 1e-3);
                for i in 0..3 {
                    s.v[i] = rng.sym(1.0);
                    s.v[3 + i] = rng.sym(5.0);
                }
                (&ground, s)
            } else {
                // Squeezed box, random finger forces and small random speeds.
                let s0 = squeeze.initial_state.clone();
                let u = DVector::from_vec(vec![rng.next() * 50.0, rng.next() * 50.0]);
                let mut s = actuate(&squeeze, &s0, &u);
                for i in 0..s.v.len() {
                    s.v[i] += rng.sym(0.05);
                }
                (&squeeze, s)
            };
            let what = format!("mu {mu} case {case}");
            let (next, r) = stepper.step_report(model, &state, H).unwrap();
            check_report(&r, &what);
            let vf = free_velocity(model, &state);
            // ‖v₁‖²_M ≤ ‖v_free‖²_M + 2 λᵀ(−φ)⁺/h (module docs), hence the bound on ‖v₁‖_M.
            let bound = (m_norm(model, &state, &vf).powi(2) + 2.0 * r.energy_bound).sqrt();
            let n1 = m_norm(model, &state, &next.v);
            assert!(n1 <= bound * (1.0 + 1e-9) + 1e-12, "{what}: {n1} > {bound}");
            // And in plain speeds: nothing faster than 10 m/s (inputs are ≤ 1 m/s, 5 rad/s
            // and penetrations ≤ 1 mm, i.e. recovery speeds ≤ 1 m/s).
            assert!(next.v.amax() < 10.0, "{what}: speed {}", next.v.amax());
            solved += 1;
        }
    }
    assert_eq!(solved, 180);
}

/// A ball on two chained prismatic joints (a diagonal mass matrix: its normal and its
/// tangent rows touch different blocks) slides on the ground and brakes at μ g: a contact's
/// normal and pyramid rows stay one LCP group.
#[test]
fn sliding_ball_on_prismatic_joints_brakes_at_mu_g() {
    let text = include_str!("../../../examples/ball_on_ground.toml");
    let mut model = Model::from_toml_str(text, None).unwrap();
    model.initial_state.q[1] = 0.1;
    let mut stepper = AnitescuPotraStepper::default();
    let mut state = model.initial_state.clone();
    for _ in 0..500 {
        let (next, r) = stepper.step_report(&model, &state, H).unwrap();
        check_report(&r, "sliding ball");
        assert_eq!(r.lcp_size, 4, "normal, two pyramid directions and γ");
        state = next;
    }
    let expected = 3.0 - 0.3 * 9.81 * 0.5;
    assert!((state.v[0] - expected).abs() < 1e-9, "v_x = {}", state.v[0]);
    assert!((state.q[1] - 0.1).abs() < 1e-9, "y = {}", state.q[1]);
}
