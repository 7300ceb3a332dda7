//! The smooth pieces of the FESD NLP of the time-freezing DCS (Nurkanović et al. eq. 31/35;
//! [`FesdBlock`]): collocation, algebraic equations, (cross) complementarity, cuts,
//! smoothing and objective terms, with their derivative structure for [`BlockFn`].

use std::sync::Arc;

use super::tableau::comp_pair;
use crate::nlp::{BlockFn, Real};
use crate::smoothed_switch::heaviside;
use crate::time_freezing::TimeFreezing;

/// The smooth pieces of the FESD NLP.
#[derive(Debug, Clone)]
pub enum FesdBlock {
    /// Y_j − y_n − h s Σ_l a_jl F(Y_l, α_l, u) = 0 for the n_r ≥ n_s rows of `a` (row n_s + 1,
    /// if present, is bᵀ with Y_{n_s+1} = y_end); vars [y_n, Y_1..Y_{n_r}, α_1..α_{n_s}, h, s, u].
    Collocation {
        /// The time-freezing system.
        tf: Arc<TimeFreezing>,
        /// Rows of the Butcher matrix (n_r × n_s, see [`Tableau::rows`](super::Tableau::rows)).
        a: Arc<Vec<Vec<f64>>>,
        /// Stewart's θ (length [`TimeFreezing::n_stewart`]) per stage instead of α.
        stewart: bool,
    },
    /// Stewart: g(Y) − λ − μ𝟙 = 0; vars [Y, λ (n_θ), μ].
    StewartAlgebraic {
        /// The time-freezing system.
        tf: Arc<TimeFreezing>,
    },
    /// Stewart (cross) complementarity per region r: Σ θ_{j',r} λ_{j,r} over the pairs of
    /// [`comp_pair`]; vars [θ (n_s×n_θ), λ (n_λ×n_θ)][, s_e].
    StewartComp {
        /// Stages.
        n_s: usize,
        /// Number of multiplier points.
        n_lam: usize,
        /// Number of regions n_θ.
        n_th: usize,
        /// Cross complementarity (FESD) or stage-wise.
        cross: bool,
        /// Scale of the output (penalty ρ or 1).
        weight: f64,
        /// Elastic mode: the last variable is the slack.
        elastic: bool,
    },
    /// c(Y) − λᵖ + λⁿ = 0; vars [Y, λᵖ, λⁿ].
    Algebraic {
        /// The time-freezing system.
        tf: Arc<TimeFreezing>,
    },
    /// Aggregated (cross) complementarity per component; vars [α (n_s×n_c), λᵖ (n_λ×n_c),
    /// λⁿ (n_λ×n_c)] with n_λ = n_s + 1 (Radau) or n_s + 2 (with the end point).
    Comp {
        /// Stages.
        n_s: usize,
        /// Number of multiplier points n_λ (element start, stages, end point if any).
        n_lam: usize,
        /// Switching functions.
        n_c: usize,
        /// Cross (all stage pairs) or stage-wise only.
        cross: bool,
        /// Number of leading components with cross complementarity (the rest stage-wise).
        n_cross: usize,
        /// Scale of the output (the penalty ρ in ℓ1-penalty mode, 1 as a constraint).
        weight: f64,
        /// Elastic mode: the last variable is the slack s_e, subtracted from every output.
        elastic: bool,
        /// As a constraint: one row per product α_{j'}λⁿ_j and (1 − α_{j'})λᵖ_j (nosnoc's
        /// `cross_comp_mode` 1, see [`comp_pair_rows`](super::comp_pair_rows)) instead of one aggregated row per
        /// component.
        per_pair: bool,
    },
    /// Linear objective ρ s_e of the elastic mode; vars `[s_e]`.
    Elastic {
        /// Weight ρ = 1/σ.
        weight: f64,
    },
    /// General path constraints g(q) of the system ([`ModelSystem::path`](crate::model_system::ModelSystem::path)); vars `[q]`.
    Path {
        /// The time-freezing system.
        tf: Arc<TimeFreezing>,
    },
    /// Flight cut (1 − α)(λᵖ − δ) ≤ 0 at one stage point ([`MpccStrategy::flight_cut`](crate::fesd::MpccStrategy::flight_cut));
    /// vars `[α_i, λᵖ_i]`.
    FlightCut {
        /// Threshold δ.
        delta: f64,
        /// Switching function index (0: gap, 1: normal velocity).
        comp: usize,
    },
    /// Smoothed step functions α_i − ½(1 + tanh((λᵖ_i − λⁿ_i)/w_i)) = 0 at one stage point
    /// ([`crate::smoothing`]); vars [α (n_c), λᵖ (n_c), λⁿ (n_c)].
    Smoothing {
        /// Widths w_i (units of the switching functions).
        widths: Vec<f64>,
    },
    /// Linear objective w Σ x over the multipliers of the stage points (the smoothing
    /// phase's choice of the complementary split); vars: the multipliers.
    LambdaSum {
        /// Weight w (0 outside the smoothing phase).
        weight: f64,
    },
    /// Σ h = step length (linear); vars [h_1..].
    SumH,
    /// Objective ρ (h − h̄)²/h̄²; vars `[h]`.
    StepEq {
        /// Nominal length h̄.
        hbar: f64,
        /// Weight ρ.
        rho: f64,
    },
    /// Linear objective w x₀; vars `[α₁]` (see [`Discretization::alpha_bias`](crate::fesd::Discretization::alpha_bias)).
    Linear {
        /// Weight w.
        weight: f64,
    },
    /// Objective ρ (s − 1)²; vars `[s]`.
    SpeedOfTime {
        /// Weight ρ.
        rho: f64,
    },
    /// Objective w Σ (x_i − target_i)²; vars: the terminal components of y(T̃) (soft
    /// terminal phase, [`MpccStrategy::soft_terminal`](crate::fesd::MpccStrategy::soft_terminal)).
    Terminal {
        /// Targets.
        target: Vec<f64>,
        /// Weight w (scaled by 1/σ in the homotopy).
        weight: f64,
    },
    /// Objective w Σ u_i²; vars `[u]`, or w Σ u_i² (t₁ − t₀); vars `[u, t₀, t₁]` (the
    /// clock at the interval's start and end) with `per_clock`.
    ControlCost {
        /// Weight (the physical length of the control interval without `per_clock`).
        weight: f64,
        /// Multiply by the clock increment over the interval.
        per_clock: bool,
    },
}

impl BlockFn for FesdBlock {
    fn eval<T: Real>(&self, x: &[T], out: &mut [T]) {
        match self {
            FesdBlock::Collocation { tf, a, stewart } => {
                eval_collocation(tf, a, *stewart, x, out);
            }
            FesdBlock::Algebraic { tf } => {
                let (ny, nc) = (tf.ny(), tf.nc());
                let c = tf.switching(&x[..ny]);
                for i in 0..nc {
                    out[i] = c[i] - x[ny + i] + x[ny + nc + i];
                }
            }
            FesdBlock::Comp {
                n_s,
                n_lam,
                n_c,
                cross,
                n_cross,
                weight,
                elastic,
                per_pair,
            } => {
                let (ns, nc, nl) = (*n_s, *n_c, *n_lam);
                let (x, slack) = split_elastic(x, *elastic);
                let al = &x[..ns * nc];
                let lp = &x[ns * nc..ns * nc + nl * nc];
                let ln = &x[ns * nc + nl * nc..];
                if *per_pair && out.len() > 1 {
                    let mut r = 0;
                    for i in 0..nc {
                        for jp in 0..ns {
                            let a = al[jp * nc + i];
                            for j in 0..nl {
                                if comp_pair(*cross && i < *n_cross, jp, j, ns) {
                                    out[r] = a * ln[j * nc + i] * *weight;
                                    out[r + 1] = (T::from(1.0) - a) * lp[j * nc + i] * *weight;
                                    if let Some(se) = slack {
                                        out[r] -= se;
                                        out[r + 1] -= se;
                                    }
                                    r += 2;
                                }
                            }
                        }
                    }
                    return;
                }
                for i in 0..nc {
                    let mut acc = T::from(0.0);
                    for jp in 0..ns {
                        let a = al[jp * nc + i];
                        for j in 0..nl {
                            if comp_pair(*cross && i < *n_cross, jp, j, ns) {
                                acc += a * ln[j * nc + i] + (T::from(1.0) - a) * lp[j * nc + i];
                            }
                        }
                    }
                    write_comp_row(out, i, acc, *weight, slack);
                }
            }
            FesdBlock::StewartAlgebraic { tf } => {
                let (ny, nt) = (tf.ny(), tf.n_stewart());
                let g = tf.stewart_g(&x[..ny]);
                let mu = x[ny + nt];
                for r in 0..nt {
                    out[r] = g[r] - x[ny + r] - mu;
                }
            }
            FesdBlock::StewartComp {
                n_s,
                n_lam,
                n_th,
                cross,
                weight,
                elastic,
            } => {
                let (ns, nl, nt) = (*n_s, *n_lam, *n_th);
                let (x, slack) = split_elastic(x, *elastic);
                let th = &x[..ns * nt];
                let la = &x[ns * nt..ns * nt + nl * nt];
                for r in 0..nt {
                    let mut acc = T::from(0.0);
                    for jp in 0..ns {
                        for j in 0..nl {
                            if comp_pair(*cross, jp, j, ns) {
                                acc += th[jp * nt + r] * la[j * nt + r];
                            }
                        }
                    }
                    write_comp_row(out, r, acc, *weight, slack);
                }
            }
            FesdBlock::Path { tf } => {
                for (o, g) in out.iter_mut().zip(tf.cls.path(x)) {
                    *o = g;
                }
            }
            FesdBlock::FlightCut { delta, .. } => {
                out[0] = (T::from(1.0) - x[0]) * (x[1] - *delta);
            }
            FesdBlock::Smoothing { widths } => {
                let nc = widths.len();
                for (i, w) in widths.iter().enumerate() {
                    out[i] = x[i] - heaviside(x[nc + i] - x[2 * nc + i], *w);
                }
            }
            FesdBlock::LambdaSum { weight } => {
                out[0] = x.iter().fold(T::from(0.0), |s, v| s + *v) * *weight
            }
            FesdBlock::SumH => out[0] = x.iter().fold(T::from(0.0), |s, v| s + *v),
            FesdBlock::Linear { weight } | FesdBlock::Elastic { weight } => out[0] = x[0] * *weight,
            FesdBlock::StepEq { hbar, rho } => {
                let d = (x[0] - *hbar) / *hbar;
                out[0] = d * d * *rho;
            }
            FesdBlock::SpeedOfTime { rho } => {
                let d = x[0] - 1.0;
                out[0] = d * d * *rho;
            }
            FesdBlock::ControlCost { weight, per_clock } => {
                let (u, dt) = if *per_clock {
                    let n = x.len();
                    (&x[..n - 2], x[n - 1] - x[n - 2])
                } else {
                    (x, T::from(1.0))
                };
                out[0] = u.iter().fold(T::from(0.0), |s, v| s + *v * *v) * dt * *weight
            }
            FesdBlock::Terminal { target, weight } => {
                out[0] = x
                    .iter()
                    .zip(target)
                    .fold(T::from(0.0), |s, (v, t)| s + (*v - *t) * (*v - *t))
                    * *weight
            }
        }
    }
    fn eval_hess<T: Real>(&self, x: &[T], out: &mut [T], i: usize, j: usize) {
        if let FesdBlock::Collocation { tf, a, stewart } = self {
            let (ny, nc, nr, ns) = (tf.ny(), colloc_width(tf, *stewart), a.len(), a[0].len());
            let stage = |k: usize| -> Option<usize> {
                if k >= ny && k < ny + ns * ny {
                    Some((k - ny) / ny)
                } else if k >= ny + nr * ny && k < ny + nr * ny + ns * nc {
                    Some((k - ny - nr * ny) / nc)
                } else {
                    None
                }
            };
            // a pair touching stage l only sees −h s a_jl F(Y_l, α_l, u) (Y_j − y_n is affine)
            if let Some(l) = stage(i).or(stage(j)) {
                let ys = &x[ny + l * ny..ny + (l + 1) * ny];
                let al = &x[ny + nr * ny + l * nc..ny + nr * ny + (l + 1) * nc];
                let k = ny + nr * ny + ns * nc;
                let (h, s, u) = (x[k], x[k + 1], &x[k + 2..]);
                let f = colloc_rhs(tf, *stewart, ys, al, u);
                let hs = h * s;
                for jj in 0..nr {
                    for ii in 0..ny {
                        out[jj * ny + ii] = -(hs * f[ii] * a[jj][l]);
                    }
                }
                return;
            }
        }
        self.eval(x, out)
    }
    fn is_linear(&self) -> bool {
        matches!(
            self,
            FesdBlock::SumH
                | FesdBlock::Linear { .. }
                | FesdBlock::Elastic { .. }
                | FesdBlock::LambdaSum { .. }
        )
    }
    fn eval_jac<T: Real>(&self, x: &[T], out: &mut [T], i: usize) {
        let FesdBlock::Collocation { tf, a, stewart } = self else {
            return self.eval(x, out);
        };
        // Y_j − y_n is affine; F(Y_l, α_l, u) depends on stage l and the globals only
        let (ny, nc, nr, ns) = (tf.ny(), colloc_width(tf, *stewart), a.len(), a[0].len());
        let k = ny + nr * ny + ns * nc;
        for j in 0..nr {
            for ii in 0..ny {
                out[j * ny + ii] = x[ny + j * ny + ii] - x[ii];
            }
        }
        let stages: Vec<usize> = if i < ny {
            vec![]
        } else if i < ny + ns * ny {
            vec![(i - ny) / ny]
        } else if i < ny + nr * ny {
            vec![]
        } else if i < k {
            vec![(i - ny - nr * ny) / nc]
        } else {
            (0..ns).collect()
        };
        let (h, s, u) = (x[k], x[k + 1], &x[k + 2..]);
        let hs = h * s;
        for l in stages {
            let ys = &x[ny + l * ny..ny + (l + 1) * ny];
            let al = &x[ny + nr * ny + l * nc..ny + nr * ny + (l + 1) * nc];
            let f = colloc_rhs(tf, *stewart, ys, al, u);
            for j in 0..nr {
                for ii in 0..ny {
                    out[j * ny + ii] -= hs * f[ii] * a[j][l];
                }
            }
        }
    }
    fn hess_groups(&self) -> Option<Vec<Vec<usize>>> {
        let FesdBlock::Collocation { tf, a, stewart } = self else {
            return None;
        };
        // group l: stage l's Y_l and α_l with the globals (h, s, u)
        let (ny, nc, nr, ns, nu) = (
            tf.ny(),
            colloc_width(tf, *stewart),
            a.len(),
            a[0].len(),
            tf.cls.nu(),
        );
        let k = ny + nr * ny + ns * nc;
        Some(
            (0..ns)
                .map(|l| {
                    let mut g: Vec<usize> = (ny + l * ny..ny + (l + 1) * ny).collect();
                    g.extend(ny + nr * ny + l * nc..ny + nr * ny + (l + 1) * nc);
                    g.extend(k..k + 2 + nu);
                    g
                })
                .collect(),
        )
    }
    fn eval_group<T: Real>(&self, x: &[T], out: &mut [T], group: usize) {
        let FesdBlock::Collocation { tf, a, stewart } = self else {
            return self.eval(x, out);
        };
        let (ny, nc, nr, ns) = (tf.ny(), colloc_width(tf, *stewart), a.len(), a[0].len());
        let l = group;
        let ys = &x[ny + l * ny..ny + (l + 1) * ny];
        let al = &x[ny + nr * ny + l * nc..ny + nr * ny + (l + 1) * nc];
        let k = ny + nr * ny + ns * nc;
        let (h, s, u) = (x[k], x[k + 1], &x[k + 2..]);
        let f = colloc_rhs(tf, *stewart, ys, al, u);
        let hs = h * s;
        for j in 0..nr {
            for ii in 0..ny {
                out[j * ny + ii] = -(hs * f[ii] * a[j][l]);
            }
        }
    }
    fn eval_group_weighted<T: Real>(&self, x: &[T], w: &[f64], group: usize) -> Option<T> {
        // Stewart keeps the per-output path: its integrator's homotopy is sensitive to the
        // rounding of the Hessian (with the weighted sum its particle integrator put the jump
        // end inside an element; docs/decisions/002-time-freezing.md, "Exact derivatives")
        let FesdBlock::Collocation {
            tf,
            a,
            stewart: false,
        } = self
        else {
            return None;
        };
        // Σ_j Σ_i w_ji (−h s a_jl F_i(Y_l, α_l, u)) = −h s Σ_i F_i (Σ_j w_ji a_jl)
        let (ny, nc, nr, ns) = (tf.ny(), tf.nc(), a.len(), a[0].len());
        let l = group;
        let ys = &x[ny + l * ny..ny + (l + 1) * ny];
        let al = &x[ny + nr * ny + l * nc..ny + nr * ny + (l + 1) * nc];
        let k = ny + nr * ny + ns * nc;
        let (h, s, u) = (x[k], x[k + 1], &x[k + 2..]);
        let f = tf.rhs(ys, al, u);
        let mut acc = T::from(0.0);
        for (ii, fi) in f.iter().enumerate() {
            let c: f64 = (0..nr).map(|j| w[j * ny + ii] * a[j][l]).sum();
            if c != 0.0 {
                acc += *fi * c;
            }
        }
        Some(-(h * s * acc))
    }
    fn hess_pair(&self, i: usize, j: usize) -> bool {
        match self {
            FesdBlock::Collocation { tf, a, stewart } => {
                // classes: y_n (affine), stage l (Y_l, α_l), globals (h, s, u)
                let (ny, nc, nr, ns) = (tf.ny(), colloc_width(tf, *stewart), a.len(), a[0].len());
                let class = |k: usize| -> Option<usize> {
                    if k < ny || (k >= ny + ns * ny && k < ny + nr * ny) {
                        None
                    } else if k < ny + ns * ny {
                        Some((k - ny) / ny)
                    } else if k < ny + nr * ny + ns * nc {
                        Some((k - ny - nr * ny) / nc)
                    } else {
                        Some(usize::MAX)
                    }
                };
                match (class(i), class(j)) {
                    (Some(a), Some(b)) => a == b || a == usize::MAX || b == usize::MAX,
                    _ => false,
                }
            }
            // α enters linearly, tanh couples λᵖ_i and λⁿ_i of one component
            FesdBlock::Smoothing { widths } => {
                let nc = widths.len();
                i >= nc && j >= nc && (i - nc) % nc == (j - nc) % nc
            }
            // c(Y) − λᵖ + λⁿ: the multipliers enter linearly
            FesdBlock::Algebraic { tf } | FesdBlock::StewartAlgebraic { tf } => {
                i < tf.ny() && j < tf.ny()
            }
            FesdBlock::StewartComp {
                n_s,
                n_lam,
                n_th,
                cross,
                ..
            } => {
                let (ns, nl, nt) = (*n_s, *n_lam, *n_th);
                let na = ns * nt;
                if i < na || j >= na || i >= na + nl * nt {
                    return false;
                }
                let (jp, ra) = (j / nt, j % nt);
                let (jl, rl) = ((i - na) / nt, (i - na) % nt);
                ra == rl && comp_pair(*cross, jp, jl, ns)
            }
            // bilinear α∘λ products of the same component
            FesdBlock::Comp {
                n_s,
                n_lam,
                n_c,
                cross,
                n_cross,
                ..
            } => {
                let (ns, nc, nl) = (*n_s, *n_c, *n_lam);
                let na = ns * nc;
                if i < na || j >= na || i >= na + 2 * nl * nc {
                    return false;
                }
                let (jp, ca) = (j / nc, j % nc);
                let idx = (i - na) % (nl * nc);
                let (jl, cl) = (idx / nc, idx % nc);
                ca == cl && comp_pair(*cross && ca < *n_cross, jp, jl, ns)
            }
            _ => true,
        }
    }
}

/// The collocation equations Y_j − y_n − h s Σ_l a_jl F(Y_l, α_l, u) of
/// [`FesdBlock::Collocation`] (Nurkanović et al. eq. 31).
fn eval_collocation<T: Real>(
    tf: &TimeFreezing,
    a: &[Vec<f64>],
    stewart: bool,
    x: &[T],
    out: &mut [T],
) {
    let (ny, nc, nr, ns) = (tf.ny(), colloc_width(tf, stewart), a.len(), a[0].len());
    let y0 = &x[..ny];
    let ys = &x[ny..ny + nr * ny];
    let al = &x[ny + nr * ny..ny + nr * ny + ns * nc];
    let k = ny + nr * ny + ns * nc;
    let (h, s, u) = (x[k], x[k + 1], &x[k + 2..]);
    let f: Vec<Vec<T>> = (0..ns)
        .map(|l| {
            colloc_rhs(
                tf,
                stewart,
                &ys[l * ny..(l + 1) * ny],
                &al[l * nc..(l + 1) * nc],
                u,
            )
        })
        .collect();
    let hs = h * s;
    for j in 0..nr {
        for i in 0..ny {
            let mut acc = T::from(0.0);
            for (l, fl) in f.iter().enumerate() {
                acc += fl[i] * a[j][l];
            }
            out[j * ny + i] = ys[j * ny + i] - y0[i] - hs * acc;
        }
    }
}

/// Writes the aggregated (cross) complementarity `acc` of component `i` scaled by `weight`:
/// summed into the one output of a penalty block, else as row `i` less the elastic `slack`.
fn write_comp_row<T: Real>(out: &mut [T], i: usize, acc: T, weight: f64, slack: Option<T>) {
    if out.len() == 1 {
        if i == 0 {
            out[0] = T::from(0.0);
        }
        out[0] += acc * weight;
    } else {
        out[i] = acc * weight;
        if let Some(se) = slack {
            out[i] -= se;
        }
    }
}

/// The block variables of a complementarity block and, in elastic mode, its trailing
/// elastic slack.
fn split_elastic<T: Real>(x: &[T], elastic: bool) -> (&[T], Option<T>) {
    match x.split_last() {
        Some((slack, rest)) if elastic => (rest, Some(*slack)),
        _ => (x, None),
    }
}

/// Width of a stage's switching variables: n_c (α) or n_θ (Stewart's θ).
pub(super) fn colloc_width(tf: &TimeFreezing, stewart: bool) -> usize {
    if stewart {
        tf.n_stewart()
    } else {
        tf.nc()
    }
}

/// The right-hand side from α (step) or θ (Stewart).
fn colloc_rhs<T: Real>(tf: &TimeFreezing, stewart: bool, y: &[T], w: &[T], u: &[T]) -> Vec<T> {
    if stewart {
        tf.rhs_stewart(y, w, u)
    } else {
        tf.rhs(y, w, u)
    }
}
