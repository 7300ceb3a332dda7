//! The smooth pieces of the FESD-J NLP ([`ImpulseBlock`]): the state jump at an element
//! boundary, the semi-implicit step of an element, the complementarity products, the
//! interval lengths, path constraints and the objective terms.

use std::sync::Arc;

use crate::model_system::ModelSystem;
use crate::nlp::{BlockFn, Real};

/// Sizes shared by the jump and stage blocks: n_q, contacts, friction, controls.
#[derive(Debug, Clone, Copy)]
pub struct Dims {
    /// Generalized coordinates n_q (= n_v).
    pub nq: usize,
    /// Contacts n_c.
    pub nc: usize,
    /// Whether the contacts have Coulomb friction (planar: two directions ±b_i per contact).
    pub friction: bool,
    /// Controls n_u.
    pub nu: usize,
}

impl Dims {
    /// Friction directions 2 n_c (0 without friction).
    pub fn nt(&self) -> usize {
        if self.friction {
            2 * self.nc
        } else {
            0
        }
    }
    /// Per-contact friction variables n_c (0 without friction).
    pub fn nf(&self) -> usize {
        if self.friction {
            self.nc
        } else {
            0
        }
    }
    /// Variables of a [`ImpulseBlock::Jump`]: q, v⁻, v⁺, Λ_n, Λ_t, P, N, Y, Γ, Β, Δ.
    pub fn jump_vars(&self) -> usize {
        3 * self.nq + 4 * self.nc + 2 * self.nt() + 2 * self.nf()
    }
    /// Rows of a [`ImpulseBlock::Jump`].
    pub fn jump_rows(&self) -> usize {
        self.nq + 2 * self.nc + self.nf() + self.nt()
    }
    /// Variables of a [`ImpulseBlock::Stage`]: q_s, v_s, h, u, q, v, λ_n, λ_t, y, γ, β, δ.
    pub fn stage_vars(&self) -> usize {
        4 * self.nq + 1 + self.nu + 2 * self.nc + 2 * self.nt() + 2 * self.nf()
    }
    /// Rows of a [`ImpulseBlock::Stage`].
    pub fn stage_rows(&self) -> usize {
        2 * self.nq + self.nc + self.nf() + self.nt()
    }
}

/// One smooth piece of the FESD-J NLP.
#[derive(Debug, Clone)]
pub enum ImpulseBlock {
    /// The state jump at an element boundary (Nurkanović et al. 2024, FESD-J, the impulse
    /// equations), with variables (q, v⁻, v⁺, Λ_n, Λ_t, P, N, Y, Γ, Β, Δ) and the rows
    /// v⁺ − v⁻ − M(q)⁻¹(Σ n_i Λ_n,i + b_i (Λ⁺_t,i − Λ⁻_t,i)) = 0,
    /// Y_i − f_c,i(q) = 0, P_i − N_i − n_iᵀ v⁺ = 0 (inelastic: the post-impact normal
    /// velocity split into its positive and negative parts), and with friction
    /// Β_i − (μ_i Λ_n,i − Λ⁺_t,i − Λ⁻_t,i) = 0, Δ±_i − (±b_iᵀ v⁺ + Γ_i) = 0.
    Jump {
        /// The system.
        sys: Arc<ModelSystem>,
        /// Sizes.
        dims: Dims,
        /// μ_i per contact.
        mu: Vec<f64>,
    },
    /// One element with variables (q_s, v_s, h, u, q, v, λ_n, λ_t, y, γ, β, δ), the
    /// contact geometry and the mass matrix at the element's start and the velocity at its
    /// end (the semi-implicit step of Anitescu & Potra and Stewart & Trinkle):
    /// q − q_s − h v = 0,
    /// v − v_s − h (f_v(q_s, v, u) + M(q_s)⁻¹(Σ n_i λ_n,i + b_i (λ⁺_t,i − λ⁻_t,i))) = 0, the
    /// gap linearized along the step y_i − (f_c,i(q_s) + h n_iᵀ v) = 0, and the friction
    /// rows of [`ImpulseBlock::Jump`] at (λ, v). With λ_n ⊥ y the normal forces do no work
    /// over the element (h λ_n nᵀv = −λ_n f_c(q_s) = 0): a long element that turns the
    /// body cannot gain energy from them, as the gap at the element's end would let it.
    Stage {
        /// The system.
        sys: Arc<ModelSystem>,
        /// Sizes.
        dims: Dims,
        /// μ_i per contact.
        mu: Vec<f64>,
        /// The physical time the controls are evaluated at (for clock-rate controls).
        t: f64,
    },
    /// Products a_p · Σ_{b ∈ B_p} b of complementarity pairs (local indices), one row each,
    /// bounded above by the relaxation σ.
    Products {
        /// (a, B) per pair.
        pairs: Vec<(usize, Vec<usize>)>,
    },
    /// Objective w Σ_p a_p · Σ_{b ∈ B_p} b: the ℓ1 penalty of an element's complementarity
    /// pairs (w = 1/σ along the penalty homotopy, 0 under Scholtes' relaxation).
    Penalty {
        /// (a, B) per pair (local indices).
        pairs: Vec<(usize, Vec<usize>)>,
        /// Weight w.
        weight: f64,
    },
    /// Σ x (the element lengths of a control interval).
    Sum,
    /// The system's path constraints g(q).
    Path {
        /// The system.
        sys: Arc<ModelSystem>,
    },
    /// Objective w Σ x² (the control effort of an interval).
    Effort {
        /// Weight w.
        weight: f64,
    },
    /// Objective w Σ (x − h̄)²/h̄² (step equilibration, nosnoc's heuristic mean).
    StepEquilibration {
        /// The mean element length h̄.
        mean: f64,
        /// Weight w.
        weight: f64,
    },
    /// Objective w Σ (x_i − target_i)² (a released terminal constraint).
    Target {
        /// The targets.
        target: Vec<f64>,
        /// Weight w.
        weight: f64,
    },
}

/// What a local variable of a jump or stage block enters nonlinearly with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Affine (no second derivatives).
    Linear,
    /// Configuration (nonlinear with every other nonlinear variable).
    Q,
    /// Velocity in the stage (products with q, h and itself).
    V,
    /// Element length (products with v, u, λ).
    H,
    /// Controls or contact forces (products with q and h).
    Force,
}

fn nonzero(a: Role, b: Role) -> bool {
    use Role::*;
    match (a, b) {
        (Linear, _) | (_, Linear) => false,
        (Q, _) | (_, Q) => true,
        (H, V) | (V, H) | (H, Force) | (Force, H) => true,
        (V, V) => true,
        _ => false,
    }
}

fn dot<T: Real>(a: &[T], b: &[T]) -> T {
    a.iter().zip(b).fold(T::zero(), |s, (x, y)| s + *x * *y)
}

/// Σ_i n_i λ_n,i + b_i (λ⁺_t,i − λ⁻_t,i).
fn contact_force<T: Real>(
    normals: &[Vec<T>],
    tangents: &[Vec<T>],
    ln: &[T],
    lt: &[T],
    nq: usize,
) -> Vec<T> {
    let mut r = vec![T::zero(); nq];
    for (i, n) in normals.iter().enumerate() {
        for a in 0..nq {
            r[a] += n[a] * ln[i];
        }
    }
    for (i, b) in tangents.iter().enumerate() {
        let l = lt[2 * i] - lt[2 * i + 1];
        for a in 0..nq {
            r[a] += b[a] * l;
        }
    }
    r
}

/// The friction rows Β_i − (μ_i Λ_n,i − Λ⁺ − Λ⁻) and Δ±_i − (±b_iᵀ v + Γ_i) into `out`.
#[allow(clippy::too_many_arguments)]
fn friction_rows<T: Real>(
    out: &mut [T],
    mu: &[f64],
    tangents: &[Vec<T>],
    v: &[T],
    ln: &[T],
    lt: &[T],
    gamma: &[T],
    beta: &[T],
    delta: &[T],
) {
    let nc = ln.len();
    for i in 0..nc {
        out[i] = beta[i] - (ln[i] * T::from(mu[i]) - lt[2 * i] - lt[2 * i + 1]);
        let bt = dot(&tangents[i], v);
        out[nc + 2 * i] = delta[2 * i] - (bt + gamma[i]);
        out[nc + 2 * i + 1] = delta[2 * i + 1] - (gamma[i] - bt);
    }
}

/// Splits `x` into consecutive slices of the given lengths.
fn split<'a, T>(mut x: &'a [T], lens: &[usize]) -> Vec<&'a [T]> {
    let mut out = Vec::with_capacity(lens.len());
    for &l in lens {
        let (a, b) = x.split_at(l);
        out.push(a);
        x = b;
    }
    out
}

impl ImpulseBlock {
    fn roles(&self) -> Vec<Role> {
        use Role::*;
        let rep = |r: Role, n: usize| std::iter::repeat_n(r, n);
        match self {
            ImpulseBlock::Jump { dims: d, .. } => rep(Q, d.nq)
                .chain(rep(Linear, d.nq))
                .chain(rep(Force, d.nq)) // v⁺: products with q only
                .chain(rep(Force, d.nc + d.nt()))
                .chain(rep(Linear, 3 * d.nc + 2 * d.nf() + d.nt()))
                .collect(),
            ImpulseBlock::Stage { dims: d, .. } => rep(Q, d.nq)
                .chain(rep(Linear, d.nq))
                .chain(rep(H, 1))
                .chain(rep(Force, d.nu))
                .chain(rep(Linear, d.nq))
                .chain(rep(V, d.nq))
                .chain(rep(Force, d.nc + d.nt()))
                .chain(rep(Linear, d.nc + 2 * d.nf() + d.nt()))
                .collect(),
            _ => vec![],
        }
    }
}

impl BlockFn for ImpulseBlock {
    fn eval<T: Real>(&self, x: &[T], out: &mut [T]) {
        match self {
            ImpulseBlock::Jump { sys, dims: d, mu } => {
                let (nq, nc, nt, nf) = (d.nq, d.nc, d.nt(), d.nf());
                let s = split(x, &[nq, nq, nq, nc, nt, nc, nc, nc, nf, nf, nt]);
                let (q, vm, vp, ln, lt, p, n, y) = (s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]);
                let (gaps, normals, tangents) = sys.contact_frames(q);
                let dv = sys.minv(q, &contact_force(&normals, &tangents, ln, lt, nq));
                for a in 0..nq {
                    out[a] = vp[a] - vm[a] - dv[a];
                }
                for i in 0..nc {
                    out[nq + i] = y[i] - gaps[i];
                    out[nq + nc + i] = p[i] - n[i] - dot(&normals[i], vp);
                }
                if d.friction {
                    friction_rows(
                        &mut out[nq + 2 * nc..],
                        mu,
                        &tangents,
                        vp,
                        ln,
                        lt,
                        s[8],
                        s[9],
                        s[10],
                    );
                }
            }
            ImpulseBlock::Stage {
                sys,
                dims: d,
                mu,
                t,
            } => {
                let (nq, nc, nt, nf, nu) = (d.nq, d.nc, d.nt(), d.nf(), d.nu);
                let s = split(x, &[nq, nq, 1, nu, nq, nq, nc, nt, nc, nf, nf, nt]);
                let (qs, vs, h, u, q, v, ln, lt, y) =
                    (s[0], s[1], s[2][0], s[3], s[4], s[5], s[6], s[7], s[8]);
                let (gaps, normals, tangents) = sys.contact_frames(qs);
                let r = contact_force(&normals, &tangents, ln, lt, nq);
                let (fv, rs) = sys.accelerations(qs, v, T::from(*t), u, &[r]);
                for a in 0..nq {
                    out[a] = q[a] - qs[a] - h * v[a];
                    out[nq + a] = v[a] - vs[a] - h * (fv[a] + rs[0][a]);
                }
                for i in 0..nc {
                    out[2 * nq + i] = y[i] - (gaps[i] + h * dot(&normals[i], v));
                }
                if d.friction {
                    friction_rows(
                        &mut out[2 * nq + nc..],
                        mu,
                        &tangents,
                        v,
                        ln,
                        lt,
                        s[9],
                        s[10],
                        s[11],
                    );
                }
            }
            ImpulseBlock::Products { pairs } => {
                for (k, (a, bs)) in pairs.iter().enumerate() {
                    out[k] = x[*a] * bs.iter().fold(T::zero(), |s, b| s + x[*b]);
                }
            }
            ImpulseBlock::Penalty { pairs, weight } => {
                out[0] = pairs.iter().fold(T::zero(), |s, (a, bs)| {
                    s + x[*a] * bs.iter().fold(T::zero(), |t, b| t + x[*b])
                }) * T::from(*weight);
            }
            ImpulseBlock::Sum => out[0] = x.iter().fold(T::zero(), |s, v| s + *v),
            ImpulseBlock::Path { sys } => {
                for (o, g) in out.iter_mut().zip(sys.path(x)) {
                    *o = g;
                }
            }
            ImpulseBlock::Effort { weight } => {
                out[0] = x.iter().fold(T::zero(), |s, v| s + *v * *v) * T::from(*weight)
            }
            ImpulseBlock::StepEquilibration { mean, weight } => {
                let m = T::from(*mean);
                out[0] = x.iter().fold(T::zero(), |s, h| s + (*h - m) * (*h - m))
                    * T::from(*weight / (mean * mean));
            }
            ImpulseBlock::Target { target, weight } => {
                out[0] = x.iter().zip(target).fold(T::zero(), |s, (v, t)| {
                    s + (*v - T::from(*t)) * (*v - T::from(*t))
                }) * T::from(*weight);
            }
        }
    }

    fn is_linear(&self) -> bool {
        matches!(self, ImpulseBlock::Sum)
    }

    fn hess_pair(&self, i: usize, j: usize) -> bool {
        match self {
            ImpulseBlock::Jump { .. } | ImpulseBlock::Stage { .. } => {
                let r = self.roles();
                nonzero(r[i], r[j])
            }
            ImpulseBlock::Products { pairs } | ImpulseBlock::Penalty { pairs, .. } => pairs
                .iter()
                .any(|(a, bs)| (*a == i && bs.contains(&j)) || (*a == j && bs.contains(&i))),
            ImpulseBlock::Effort { .. }
            | ImpulseBlock::StepEquilibration { .. }
            | ImpulseBlock::Target { .. } => i == j,
            ImpulseBlock::Sum => false,
            ImpulseBlock::Path { .. } => true,
        }
    }
}
