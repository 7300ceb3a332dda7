//! Comparison impact laws evaluated on the same frozen snapshot as the set-valued model
//! (Halm & Posa §3 and Appendix E):
//!
//! - [`anitescu_potra`]: simultaneous Anitescu–Potra impact, eq. (31), all LCP solutions by
//!   enumeration of complementary bases, deduplicated by the net contact-velocity change
//!   (the authors' code); Lemke alone when the LCP is too large to enumerate;
//! - [`sequential`]: Ivanov-style sequential impacts, one contact at a time with the
//!   single-contact AP law, cycling through a given order (at most `max_rounds` rounds,
//!   stopping once `min J_n v ≥ −2.2e-6`, as in the authors' code);
//! - [`routh_single`]: Routh's single-contact impact process, eq. (36), integrated with small
//!   capped steps of the eq. (75) LCP restricted to that contact;
//! - [`compliant`]: a Kelvin–Voigt or Hunt–Crossley normal force with Coulomb friction
//!   (eqs. 88–90) integrated by an implicit (backward-Euler) scheme of our own: each step is
//!   a small LCP in the step impulses, where the spring–damper enters as the diagonal
//!   regularisation `1/(Δt(kΔt + c))` (the backward-Euler discretisation of
//!   `λ_n = max(0, −kφ − cφ̇)`) and Coulomb friction is exact (the limit ε → 0 of the paper's
//!   regularised friction).

use nalgebra::DVector;
use nonsmooth_solvers::lcp::{enumerate_all, lemke, Lcp, LemkeOptions, ENUMERATE_MAX_N};

use crate::lcp::{build_ap_w, clean_round_off, ImpactLcp};
use crate::{ImpactError, ImpactProblem};

/// One solution of the Anitescu–Potra LCP.
#[derive(Debug, Clone, PartialEq)]
pub struct ApSolution {
    /// Post-impact velocity v⁺.
    pub v: DVector<f64>,
    /// Normal impulses Λ_n.
    pub lambda_n: DVector<f64>,
    /// Friction-direction impulses Λ_D.
    pub lambda_d: DVector<f64>,
    /// LCP residual.
    pub residual: f64,
}

/// All (distinct) Anitescu–Potra outcomes.
#[derive(Debug, Clone, PartialEq)]
pub struct ApResult {
    /// Distinct solutions (distinct contact-velocity changes `J̄(v⁺ − v⁻)`).
    pub solutions: Vec<ApSolution>,
    /// Whether every complementary basis was enumerated (false: Lemke's single solution).
    pub exhaustive: bool,
}

fn ap_solution(p: &ImpactProblem, z: &DVector<f64>, residual: f64) -> ApSolution {
    let m = p.num_contacts();
    let nl = m + m * p.k;
    let lam = z.rows(0, nl).into_owned();
    ApSolution {
        v: &p.v + &p.minv_jbar_t * &lam,
        lambda_n: z.rows(0, m).into_owned(),
        lambda_d: z.rows(m, m * p.k).into_owned(),
        residual,
    }
}

/// The Anitescu–Potra simultaneous impact (eq. 31): `M(v⁺ − v⁻) = J̄ᵀΛ`,
/// `0 ≤ Λ_n ⊥ J_n v⁺ ≥ 0` with linearised Coulomb friction at v⁺. Every solution with a
/// nonsingular complementary basis is listed when the LCP has at most
/// [`ENUMERATE_MAX_N`] variables (two planar contacts); otherwise Lemke's solution alone.
/// Solutions are deduplicated by `J̄(v⁺ − v⁻)` (tolerance 1e-7 relative).
///
/// # Errors
/// [`ImpactError::Solver`] if the LCP solvers fail.
pub fn anitescu_potra(p: &ImpactProblem) -> Result<ApResult, ImpactError> {
    let w = build_ap_w(p);
    let n = w.nrows();
    let mut q = DVector::zeros(n);
    let jv = &p.jbar * &p.v;
    q.rows_mut(0, jv.len()).copy_from(&jv);
    clean_round_off(&mut q);
    let lcp = Lcp::new(w, q)?;
    let mut solutions: Vec<ApSolution> = Vec::new();
    let mut exhaustive = false;
    if n <= ENUMERATE_MAX_N {
        exhaustive = true;
        let scale = 1.0 + p.m_norm(&p.v);
        for s in enumerate_all(&lcp, 1e-10)? {
            let cand = ap_solution(p, &s.z, s.residuals.max());
            let dv = &p.jbar * (&cand.v - &p.v);
            let dup = solutions
                .iter()
                .any(|o| (&p.jbar * (&o.v - &p.v) - &dv).amax() <= 1e-7 * scale);
            if !dup {
                solutions.push(cand);
            }
        }
    }
    if solutions.is_empty() {
        exhaustive = false;
        let s = lemke(&lcp, &LemkeOptions::default())?;
        solutions.push(ap_solution(p, &s.z, s.residuals.max()));
    }
    Ok(ApResult {
        solutions,
        exhaustive,
    })
}

/// Result of a sequential impact.
#[derive(Debug, Clone, PartialEq)]
pub struct SequentialResult {
    /// Post-impact velocity.
    pub v: DVector<f64>,
    /// Number of single-contact impacts applied (non-zero impulse).
    pub impacts: usize,
    /// Whether the final velocity is non-colliding (`min J_n v ≥ −stop_tol`).
    pub terminated: bool,
}

/// Ivanov-style sequential impacts: contacts of `order` are cycled (`order[0], order[1], …,
/// order[0], …`) for at most `max_rounds` rounds; each applies the single-contact
/// Anitescu–Potra impulse at the current velocity; stops once `min_i J_n,i v ≥ −stop_tol`
/// (the authors' code: 10 rounds, 2.2e-6).
///
/// # Errors
/// [`ImpactError::DimensionMismatch`] for a bad contact index, [`ImpactError::NoContacts`]
/// for an empty order, solver failures.
pub fn sequential(
    p: &ImpactProblem,
    order: &[usize],
    max_rounds: usize,
    stop_tol: f64,
) -> Result<SequentialResult, ImpactError> {
    if order.is_empty() {
        return Err(ImpactError::NoContacts);
    }
    let subs: Vec<ImpactProblem> = order
        .iter()
        .map(|&i| p.restrict(&[i]))
        .collect::<Result<_, _>>()?;
    let mut v = p.v.clone();
    let mut impacts = 0;
    'outer: for _ in 0..max_rounds {
        for (sub, &i) in subs.iter().zip(order) {
            if !p.is_colliding(&v, stop_tol) {
                break 'outer;
            }
            // A contact that is not approaching takes no impulse (λ_n = 0 solves its LCP).
            if p.jn.row(i).dot(&v.transpose()) >= 0.0 {
                continue;
            }
            let s = sub.with_velocity(v.clone())?;
            let r = anitescu_potra_lemke(&s)?;
            if r.lambda_n.amax() > 0.0 {
                impacts += 1;
            }
            v = r.v;
        }
    }
    Ok(SequentialResult {
        terminated: !p.is_colliding(&v, stop_tol),
        v,
        impacts,
    })
}

/// The Anitescu–Potra impact solved by Lemke alone (one solution).
///
/// # Errors
/// Solver failures.
pub fn anitescu_potra_lemke(p: &ImpactProblem) -> Result<ApSolution, ImpactError> {
    let w = build_ap_w(p);
    let mut q = DVector::zeros(w.nrows());
    let jv = &p.jbar * &p.v;
    q.rows_mut(0, jv.len()).copy_from(&jv);
    clean_round_off(&mut q);
    let lcp = Lcp::new(w, q)?;
    let s = lemke(&lcp, &LemkeOptions::default())?;
    Ok(ap_solution(p, &s.z, s.residuals.max()))
}

/// Routh's single-contact impact process (eq. 36) at `contact`: the DI
/// `dv/ds ∈ M⁻¹F_i(q, v, 1)` integrated with `resolution` capped implicit steps of the
/// eq. (75) LCP restricted to that contact, until `J_n,i v ≥ 0` (other contacts ignored).
///
/// # Errors
/// Bad index, `resolution = 0`, solver failures.
pub fn routh_single(
    p: &ImpactProblem,
    contact: usize,
    resolution: usize,
) -> Result<DVector<f64>, ImpactError> {
    if resolution == 0 {
        return Err(ImpactError::InvalidOption {
            what: "resolution",
            reason: "must be >= 1".into(),
        });
    }
    let sub = p.restrict(&[contact])?;
    let vn = sub.jn.row(0).dot(&sub.v.transpose());
    if vn >= 0.0 {
        return Ok(p.v.clone());
    }
    // The frictionless normal impulse bounds the scale of the total normal impulse.
    let g = sub.delassus[(0, 0)].max(1e-300);
    let cap = (-vn / g) / resolution as f64;
    let lcp = ImpactLcp::new(&sub);
    let mut v = sub.v.clone();
    let limit = 100 * resolution + 100;
    let mut n = 0;
    while sub.jn.row(0).dot(&v.transpose()) < -crate::COLLIDING_TOL && n < limit {
        v = lcp.step(&sub, &v, &[cap])?.v;
        n += 1;
    }
    Ok(v)
}

/// Normal-force law of the compliant model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CompliantLaw {
    /// Kelvin–Voigt: `λ_n = max(0, −kφ − cφ̇)`, `c = 2ζ√(k m)` (eq. 88).
    KelvinVoigt,
    /// Hunt–Crossley-type damping proportional to the penetration:
    /// `λ_n = max(0, −kφ − c(−φ)φ̇ / δ_ref)` with the same `c` and `δ_ref = m·|v_n⁻|/c`
    /// (linearised in the state at each step).
    HuntCrossley,
}

/// Settings of the compliant comparison model.
#[derive(Debug, Clone, PartialEq)]
pub struct CompliantSettings {
    /// Stiffness k_i per contact [N/m].
    pub stiffness: Vec<f64>,
    /// Damping ratio ζ (paper: 5).
    pub zeta: f64,
    /// Mass used in the damping coefficient `c = 2ζ√(k m)`.
    pub damping_mass: f64,
    /// Initial gaps φ_i (0 for contacts touching at the start).
    pub gaps: Vec<f64>,
    /// Normal-force law.
    pub law: CompliantLaw,
    /// Steps per `√(m/k_min)` time unit (time-step resolution).
    pub steps_per_unit: f64,
    /// Maximum number of steps.
    pub max_steps: usize,
}

impl CompliantSettings {
    /// Kelvin–Voigt settings with ζ = 5, unit damping mass, zero gaps.
    pub fn kelvin_voigt(stiffness: Vec<f64>) -> Self {
        let m = stiffness.len();
        Self {
            stiffness,
            zeta: 5.0,
            damping_mass: 1.0,
            gaps: vec![0.0; m],
            law: CompliantLaw::KelvinVoigt,
            steps_per_unit: 20.0,
            max_steps: 200_000,
        }
    }
}

/// Result of the compliant model.
#[derive(Debug, Clone, PartialEq)]
pub struct CompliantResult {
    /// Velocity at the end of the contact phase.
    pub v: DVector<f64>,
    /// Integration steps taken.
    pub steps: usize,
    /// Simulated contact time in s.
    pub time: f64,
    /// Whether the stopping rule was met (otherwise `max_steps` was hit).
    pub terminated: bool,
}

/// The compliant impact model (eqs. 88–90) on the frozen configuration, integrated by
/// backward Euler with exact Coulomb friction (see the module docs). Integration stops when
/// every contact is either separated (`φ_i > 0`) or has `J_n,i v ≥ −δ`, `δ = 1e-3·m/k_min`
/// (the authors' rule).
///
/// # Errors
/// [`ImpactError::DimensionMismatch`] / [`ImpactError::InvalidOption`] for bad settings,
/// solver failures.
pub fn compliant(p: &ImpactProblem, s: &CompliantSettings) -> Result<CompliantResult, ImpactError> {
    let m = p.num_contacts();
    if s.stiffness.len() != m || s.gaps.len() != m {
        return Err(ImpactError::DimensionMismatch {
            what: "compliant stiffness/gaps",
            expected: m,
            got: s.stiffness.len().min(s.gaps.len()),
        });
    }
    let positive = |x: f64| x.is_finite() && x > 0.0;
    let valid = s.stiffness.iter().all(|k| positive(*k))
        && s.zeta.is_finite()
        && s.zeta >= 0.0
        && positive(s.damping_mass)
        && positive(s.steps_per_unit);
    if !valid {
        return Err(ImpactError::InvalidOption {
            what: "compliant settings",
            reason: "stiffness, mass and resolution must be > 0, zeta >= 0".into(),
        });
    }
    let k_min = s.stiffness.iter().cloned().fold(f64::INFINITY, f64::min);
    let dt = (s.damping_mass / k_min).sqrt() / s.steps_per_unit;
    let delta = 1e-3 * s.damping_mass / k_min;
    let c: Vec<f64> = s
        .stiffness
        .iter()
        .map(|k| 2.0 * s.zeta * (k * s.damping_mass).sqrt())
        .collect();
    let v_ref = p.normal_velocities(&p.v).amax().max(1e-12);
    let base = build_ap_w(p);
    let nl = m + m * p.k;
    let mut v = p.v.clone();
    let mut phi = DVector::from_vec(s.gaps.clone());
    let mut steps = 0;
    let opts = LemkeOptions::default();
    // The contact phase ends when no contact approaches any more. An open contact that is
    // still closing (a tilted block's second corner, entered as an initial gap) is not done:
    // without external forces it will touch, so the integration runs on until it has.
    // "Approaching" means faster than 1e-6 of the pre-impact normal speed: a corner that has
    // become the pivot of the rocking motion keeps a round-off normal velocity (≈ −1e-9).
    let v_tol = delta.max(1e-6 * v_ref);
    let done = |v: &DVector<f64>, _phi: &DVector<f64>| {
        (0..m).all(|i| p.jn.row(i).dot(&v.transpose()) >= -v_tol)
    };
    while steps < s.max_steps && (steps == 0 || !done(&v, &phi)) {
        // Backward Euler: λ = Δt f, φ⁺ = φ + Δt J_n v⁺, f_n = max(0, −kφ⁺ − c_eff J_n v⁺).
        // Row of contact i: λ_n/(Δt(kΔt + c)) + kφ/(kΔt + c) + J_n v⁺ ≥ 0 ⊥ λ_n ≥ 0;
        // contacts that are open at the end of the step (φ⁺ > 0) get no force because the
        // row is then strictly positive at λ_n = 0.
        let mut w = base.clone();
        let mut q = DVector::zeros(w.nrows());
        let jv = &p.jbar * &v;
        q.rows_mut(0, jv.len()).copy_from(&jv);
        for i in 0..m {
            let ki = s.stiffness[i];
            let ci = match s.law {
                CompliantLaw::KelvinVoigt => c[i],
                CompliantLaw::HuntCrossley => {
                    let delta_ref = s.damping_mass * v_ref / c[i];
                    c[i] * ((-phi[i]).max(0.0) / delta_ref)
                }
            };
            let denom = ki * dt + ci;
            w[(i, i)] += 1.0 / (dt * denom);
            q[i] += ki * phi[i] / denom;
        }
        let lcp = Lcp::new(w, q)?;
        let sol = lemke(&lcp, &opts)?;
        let lam = sol.z.rows(0, nl).into_owned();
        v += &p.minv_jbar_t * &lam;
        let vn = p.normal_velocities(&v);
        phi += vn * dt;
        steps += 1;
    }
    Ok(CompliantResult {
        terminated: done(&v, &phi),
        v,
        steps,
        time: steps as f64 * dt,
    })
}

/// Convenience: `J̄`-space contact-velocity change of a solution.
pub fn contact_velocity_change(p: &ImpactProblem, v: &DVector<f64>) -> DVector<f64> {
    &p.jbar * (v - &p.v)
}
