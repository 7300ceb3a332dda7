//! The implicit discrete step of the impact differential inclusion as the LCP of Halm &
//! Posa eq. (75), with the cap block of eqs. (73)–(74):
//!
//! ```text
//! z = [β; λ_n; λ_D; γ],   w = [λ_n,max; J_n v; J_D v; 0]
//! W = [ 0   −I          0           0 ]
//!     [ I   J_n M⁻¹J_nᵀ J_n M⁻¹J_Dᵀ  0 ]
//!     [ 0   J_D M⁻¹J_nᵀ J_D M⁻¹J_Dᵀ  E ]
//!     [ 0   diag(μ)     −Eᵀ          0 ]
//! v′ = v + M⁻¹ J̄ᵀ λ̄
//! ```
//!
//! W is copositive (zᵀWz = ‖J̄ᵀλ̄‖²_{M⁻¹} + λ_nᵀ diag(μ) γ), so Lemke's method always finds
//! a solution (Theorem 6) and K(v′) ≤ K(v) (Theorem 7). The matrix is built once per
//! problem (q is frozen during an impact); only `w` changes between steps.

use nalgebra::{DMatrix, DVector};
use nonsmooth_solvers::lcp::{lemke, Lcp, LemkeOptions};

use crate::{ImpactError, ImpactProblem};

/// The eq. (75) LCP of one impact problem, with W precomputed.
#[derive(Debug, Clone)]
pub struct ImpactLcp {
    /// The LCP matrix W of eq. (75).
    pub w_matrix: DMatrix<f64>,
    /// Number of contacts m.
    pub m: usize,
    /// Friction directions per contact k.
    pub k: usize,
    options: LemkeOptions,
}

/// Result of one discrete impact step `f_q(v, λ_n,max)`.
#[derive(Debug, Clone, PartialEq)]
pub struct StepOutcome {
    /// The post-step velocity v′.
    pub v: DVector<f64>,
    /// Normal impulses λ_n (length m).
    pub lambda_n: DVector<f64>,
    /// Friction-direction impulses λ_D (length m·k).
    pub lambda_d: DVector<f64>,
    /// Cap multipliers β (length m).
    pub beta: DVector<f64>,
    /// Friction multipliers γ (length m).
    pub gamma: DVector<f64>,
    /// Largest LCP residual max(−z, −(Wz+w), |z∘(Wz+w)|).
    pub residual: f64,
    /// Lemke pivots.
    pub pivots: usize,
}

/// Round-off noise in `J̄v` (e.g. a velocity at rest up to 1e-16) makes an LCP degenerate
/// at `z = 0` and can end Lemke's method on a ray; entries of `q` below `1e-13·(1 + ‖q‖∞)`
/// are set to exact zeros.
pub fn clean_round_off(q: &mut DVector<f64>) {
    let noise = 1e-13 * (1.0 + q.amax());
    for x in q.iter_mut() {
        if x.abs() < noise {
            *x = 0.0;
        }
    }
}

/// Builds the eq. (75) matrix W for a problem (block order β | λ_n | λ_D | γ).
pub fn build_w(p: &ImpactProblem) -> DMatrix<f64> {
    let m = p.num_contacts();
    let k = p.k;
    let nl = m + m * k;
    let n = 3 * m + m * k;
    let mut w = DMatrix::zeros(n, n);
    for i in 0..m {
        w[(i, m + i)] = -1.0;
        w[(m + i, i)] = 1.0;
    }
    w.view_mut((m, m), (nl, nl)).copy_from(&p.delassus);
    add_friction_blocks(&mut w, p, m, m + nl);
    w
}

/// Adds the E, diag(μ) and −Eᵀ blocks for a matrix whose λ_n block starts at `ln0` and whose
/// γ block starts at `g0` (λ_D follows λ_n).
fn add_friction_blocks(w: &mut DMatrix<f64>, p: &ImpactProblem, ln0: usize, g0: usize) {
    let m = p.num_contacts();
    let k = p.k;
    let ld0 = ln0 + m;
    for i in 0..m {
        for j in 0..k {
            w[(ld0 + i * k + j, g0 + i)] = 1.0;
            w[(g0 + i, ld0 + i * k + j)] = -1.0;
        }
        w[(g0 + i, ln0 + i)] = p.mu[i];
    }
}

/// Builds the Anitescu–Potra LCP matrix of eq. (31) (the lower-right block of eq. (75)):
/// `[[J̄M⁻¹J̄ᵀ, [0; E]], [[diag μ, −Eᵀ], 0]]`, block order λ_n | λ_D | γ.
pub fn build_ap_w(p: &ImpactProblem) -> DMatrix<f64> {
    let m = p.num_contacts();
    let k = p.k;
    let nl = m + m * k;
    let mut w = DMatrix::zeros(nl + m, nl + m);
    w.view_mut((0, 0), (nl, nl)).copy_from(&p.delassus);
    add_friction_blocks(&mut w, p, 0, nl);
    w
}

impl ImpactLcp {
    /// Precomputes W for the problem.
    pub fn new(p: &ImpactProblem) -> Self {
        Self {
            w_matrix: build_w(p),
            m: p.num_contacts(),
            k: p.k,
            options: LemkeOptions::default(),
        }
    }

    /// LCP size `3m + mk`.
    pub fn size(&self) -> usize {
        self.w_matrix.nrows()
    }

    /// The vector `w(v, λ_n,max) = [λ_n,max; J_n v; J_D v; 0]`.
    pub fn q_vector(&self, p: &ImpactProblem, v: &DVector<f64>, caps: &[f64]) -> DVector<f64> {
        let m = self.m;
        let mut q = DVector::zeros(self.size());
        for i in 0..m {
            q[i] = caps[i];
        }
        let jv = &p.jbar * v;
        q.rows_mut(m, jv.len()).copy_from(&jv);
        q
    }

    /// One discrete step `v′ = f_q(v, λ_n,max)` solved by Lemke (covering vector 1,
    /// lexicographic ratio test).
    ///
    /// # Errors
    /// [`ImpactError::DimensionMismatch`] for wrong lengths, [`ImpactError::InvalidOption`]
    /// for a negative or non-finite cap, [`ImpactError::NonFinite`] for a non-finite `v`,
    /// [`ImpactError::Solver`] if Lemke fails.
    pub fn step(
        &self,
        p: &ImpactProblem,
        v: &DVector<f64>,
        caps: &[f64],
    ) -> Result<StepOutcome, ImpactError> {
        let m = self.m;
        if caps.len() != m {
            return Err(ImpactError::DimensionMismatch {
                what: "caps",
                expected: m,
                got: caps.len(),
            });
        }
        if v.len() != p.nv() {
            return Err(ImpactError::DimensionMismatch {
                what: "velocity",
                expected: p.nv(),
                got: v.len(),
            });
        }
        if v.iter().any(|x| !x.is_finite()) {
            return Err(ImpactError::NonFinite { what: "velocity" });
        }
        if caps.iter().any(|c| !(c.is_finite() && *c >= 0.0)) {
            return Err(ImpactError::InvalidOption {
                what: "caps",
                reason: "every cap must be finite and >= 0".into(),
            });
        }
        let mut q = self.q_vector(p, v, caps);
        clean_round_off(&mut q);
        let lcp = Lcp::new(self.w_matrix.clone(), q)?;
        let sol = match lemke(&lcp, &self.options) {
            Ok(s) => s,
            // W is copositive but not always copositive-plus, so a ray may end a run that
            // another covering vector completes (Cottle–Pang–Stone §4.4); retry once.
            Err(nonsmooth_solvers::SolverError::NoSolution { .. }) => {
                let n = self.size();
                let d = DVector::from_fn(n, |i, _| 1.0 + 0.37 * ((i * 7919) % 13) as f64 / 13.0);
                let opts = LemkeOptions {
                    covering: Some(d),
                    ..self.options.clone()
                };
                lemke(&lcp, &opts)?
            }
            Err(e) => return Err(e.into()),
        };
        let z = sol.z;
        let nl = m + m * self.k;
        let lam = z.rows(m, nl).into_owned();
        let v_next = v + &p.minv_jbar_t * &lam;
        Ok(StepOutcome {
            v: v_next,
            lambda_n: z.rows(m, m).into_owned(),
            lambda_d: z.rows(2 * m, m * self.k).into_owned(),
            beta: z.rows(0, m).into_owned(),
            gamma: z.rows(m + nl, m).into_owned(),
            residual: sol.residuals.max(),
            pivots: sol.iterations,
        })
    }
}
