//! Anitescu–Potra velocity-level time stepping (M. Anitescu & F. Potra, "Formulating
//! dynamic multi-rigid-body contact problems with friction as solvable linear
//! complementarity problems", Nonlinear Dynamics 14, 1997; Stewart & Trinkle 1996), with a
//! polyhedral friction pyramid and Lemke's method.
//!
//! Unknown impulses: normal λ_n (one per contact and per active joint-limit row), friction
//! β ≥ 0 along `d` pyramid directions per contact, and γ (≈ sliding speed). With
//! `v₁ = v₀ + M⁻¹(h f + G_nᵀλ_n + Dβ)` the LCP reads
//!
//! ```text
//! 0 ≤ λ_n ⊥ G_n v₁ + φ₀/h ≥ 0,
//! 0 ≤ β   ⊥ Dᵀ v₁ + E γ   ≥ 0,
//! 0 ≤ γ   ⊥ μ λ_n − Eᵀ β  ≥ 0,
//! ```
//!
//! then `q₁ = q₀ + h N(q₀) v₁`. Contacts and limits are rigid here (their stiffness is
//! ignored); the φ₀/h term is the usual constraint stabilization. Bilateral constraints are
//! not supported by this stepper (a typed error).

use crate::{SimError, Stepper};
use nalgebra::{DMatrix, DVector};
use nonsmooth_core::dynamics::{check_state, integrate_configuration};
use nonsmooth_core::snapshot::ContactSnapshot;
use nonsmooth_core::{Dimension, Model, State};
use nonsmooth_solvers::lcp::{lemke, Lcp, LemkeOptions};

/// The `anitescu-potra` stepper.
#[derive(Debug, Clone)]
pub struct AnitescuPotraStepper {
    /// Friction-pyramid directions per contact in 3D (≥ 3; planar models always use ±t).
    pub directions: usize,
    /// Lemke options.
    pub lemke: LemkeOptions,
}

impl Default for AnitescuPotraStepper {
    fn default() -> Self {
        AnitescuPotraStepper {
            directions: 4,
            lemke: LemkeOptions::default(),
        }
    }
}

impl Stepper for AnitescuPotraStepper {
    fn name(&self) -> &'static str {
        "anitescu-potra"
    }

    fn step(&mut self, model: &Model, state: &State, h: f64) -> Result<State, SimError> {
        if !(h.is_finite() && h > 0.0) {
            return Err(SimError::InvalidOption {
                option: "dt",
                reason: format!("step size must be positive and finite, got {h}"),
            });
        }
        if self.directions < 3 {
            return Err(SimError::InvalidOption {
                option: "directions",
                reason: "a friction pyramid needs at least 3 directions".into(),
            });
        }
        check_state(model, &state.q, &state.v)?;
        let snap = ContactSnapshot::from_state(model, state)?;
        if !snap.bilateral.is_empty() {
            return Err(SimError::Unsupported {
                stepper: "anitescu-potra",
                reason: "bilateral constraints are not supported by this LCP formulation".into(),
            });
        }
        let nv = snap.nv();
        let chol = snap
            .mass_matrix
            .clone()
            .cholesky()
            .ok_or_else(|| SimError::Diverged {
                t: state.t,
                reason: "mass matrix is not positive definite".into(),
            })?;
        let v_free = &state.v + chol.solve(&snap.forces) * h;
        // Normal rows: contacts then limits.
        let mut normals: Vec<(DVector<f64>, f64)> = Vec::new();
        let mut dirs: Vec<(usize, DVector<f64>)> = Vec::new();
        let mut mus: Vec<f64> = Vec::new();
        for c in &snap.contacts {
            let i = normals.len();
            normals.push((c.normal_row.clone(), c.gap));
            mus.push(c.friction);
            if c.friction > 0.0 {
                match snap.dimension {
                    Dimension::Planar => {
                        let t = c.tangent_rows.row(0).transpose();
                        dirs.push((i, t.clone()));
                        dirs.push((i, -t));
                    }
                    Dimension::Spatial => {
                        let t1 = c.tangent_rows.row(0).transpose();
                        let t2 = c.tangent_rows.row(1).transpose();
                        for k in 0..self.directions {
                            let a = 2.0 * std::f64::consts::PI * k as f64 / self.directions as f64;
                            dirs.push((i, &t1 * a.cos() + &t2 * a.sin()));
                        }
                    }
                }
            }
        }
        for l in &snap.limits {
            normals.push((l.row.clone(), l.phi));
            mus.push(0.0);
        }
        let m = normals.len();
        if m == 0 {
            let q1 = integrate_configuration(model, &state.q, &v_free, h);
            return Ok(State {
                q: q1,
                v: v_free,
                t: state.t + h,
            });
        }
        let friction_contacts: Vec<usize> = {
            let mut f: Vec<usize> = dirs.iter().map(|d| d.0).collect();
            f.dedup();
            f
        };
        let nd = dirs.len();
        let ng = friction_contacts.len();
        let n = m + nd + ng;
        // Columns of the impulse map J (nv × (m + nd)).
        let mut j = DMatrix::zeros(nv, m + nd);
        for (k, (row, _)) in normals.iter().enumerate() {
            j.set_column(k, row);
        }
        for (k, (_, d)) in dirs.iter().enumerate() {
            j.set_column(m + k, d);
        }
        let minv_j = chol.solve(&j);
        let jmj = j.transpose() * &minv_j;
        let mut mat = DMatrix::zeros(n, n);
        mat.view_mut((0, 0), (m + nd, m + nd)).copy_from(&jmj);
        let mut q = DVector::zeros(n);
        let jv = j.transpose() * &v_free;
        for k in 0..m {
            q[k] = jv[k] + normals[k].1 / h;
        }
        for k in 0..nd {
            q[m + k] = jv[m + k];
        }
        for (g, &ci) in friction_contacts.iter().enumerate() {
            let col = m + nd + g;
            for (k, (c, _)) in dirs.iter().enumerate() {
                if *c == ci {
                    mat[(m + k, col)] = 1.0;
                    mat[(col, m + k)] = -1.0;
                }
            }
            mat[(col, ci)] = mus[ci];
        }
        let lcp = Lcp::new(mat, q)?;
        let sol = lemke(&lcp, &self.lemke)?;
        let impulses = sol.z.rows(0, m + nd).into_owned();
        let v1 = v_free + minv_j * impulses;
        let q1 = integrate_configuration(model, &state.q, &v1, h);
        if !(v1.iter().all(|x| x.is_finite()) && q1.iter().all(|x| x.is_finite())) {
            return Err(SimError::Diverged {
                t: state.t + h,
                reason: "anitescu-potra produced a non-finite state".into(),
            });
        }
        Ok(State {
            q: q1,
            v: v1,
            t: state.t + h,
        })
    }
}
