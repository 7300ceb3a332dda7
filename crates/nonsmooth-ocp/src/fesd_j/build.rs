//! The FESD-J NLP of a horizon ([`build`]) and its index layout ([`Layout`]).

use std::sync::Arc;

use super::blocks::{Dims, ImpulseBlock};
use super::options::ImpulseOptions;
use crate::fesd::{Clock, Horizon};
use crate::model_system::ModelSystem;
use crate::nlp::BlockNlp;
use crate::OcpError;

/// IPOPT's infinity.
const INF: f64 = 1e20;

/// Variables of an element boundary's state jump (first index of each group).
#[derive(Debug, Clone)]
pub struct BoundaryIdx {
    /// Post-impact velocity v⁺.
    pub vp: usize,
    /// Normal impulses Λ_n.
    pub ln: usize,
    /// Friction impulses Λ_t (two per contact).
    pub lt: usize,
    /// Positive part P of the post-impact normal velocity.
    pub p: usize,
    /// Negative part N.
    pub n: usize,
    /// The gap Y = f_c(q) at the boundary.
    pub y: usize,
    /// Γ (the friction impulse's sliding-speed bound).
    pub g: usize,
    /// Β = μΛ_n − ΣΛ_t.
    pub b: usize,
    /// Δ = ±bᵀv⁺ + Γ.
    pub d: usize,
}

/// Variables of one finite element (first index of each group).
#[derive(Debug, Clone)]
pub struct ElementIdx {
    /// Control interval.
    pub interval: usize,
    /// Length h.
    pub h: usize,
    /// The start configuration (the previous element's q, or q(0)).
    pub qs: usize,
    /// The velocity before the boundary (the previous element's v, or v(0)).
    pub vs: usize,
    /// The state jump at the element's start (none for the first element).
    pub boundary: Option<BoundaryIdx>,
    /// End configuration q.
    pub q: usize,
    /// End velocity v.
    pub v: usize,
    /// Normal forces λ_n.
    pub ln: usize,
    /// Friction forces λ_t.
    pub lt: usize,
    /// Gaps y = f_c(q).
    pub y: usize,
    /// γ.
    pub g: usize,
    /// β.
    pub b: usize,
    /// δ.
    pub d: usize,
}

impl ElementIdx {
    /// The velocity the element starts from: v⁺ of its boundary, or v(0).
    pub fn v_start(&self) -> usize {
        self.boundary.as_ref().map_or(self.vs, |b| b.vp)
    }
}

/// Index layout of a FESD-J NLP.
#[derive(Debug, Clone)]
pub struct Layout {
    /// Sizes.
    pub dims: Dims,
    /// q(0).
    pub q0: usize,
    /// v(0).
    pub v0: usize,
    /// Controls per interval.
    pub u: Vec<usize>,
    /// Elements in order.
    pub elems: Vec<ElementIdx>,
    /// (first row, rows) of each element's complementarity products.
    pub comp_rows: Vec<(usize, usize)>,
    /// Per element: the products' pairs in global indices (a, B).
    pub comp_pairs: Vec<Vec<(usize, Vec<usize>)>>,
    /// Per element and pair: the factor of σ in the pair's relaxation (the impact law's
    /// pairs at the boundary [`IMPULSE_RELAXATION`], the others 1).
    pub comp_scale: Vec<Vec<f64>>,
    /// Terminal (variable, target) of the last element's state.
    pub terminal: Vec<(usize, f64)>,
    /// Physical time at each interval's start.
    pub interval_start: Vec<f64>,
    /// Weight w of the effort w Σ_k ‖u_k‖² (the horizon's control weight per interval).
    pub effort_weight: f64,
}

impl Layout {
    /// The largest complementarity product at `x`.
    pub fn comp_residual(&self, x: &[f64]) -> f64 {
        self.comp_pairs
            .iter()
            .flatten()
            .map(|(a, bs)| (x[*a] * bs.iter().map(|b| x[*b]).sum::<f64>()).abs())
            .fold(0.0, f64::max)
    }

    /// The largest |x_i − target_i| over the terminal components.
    pub fn terminal_error(&self, x: &[f64]) -> f64 {
        self.terminal
            .iter()
            .map(|(i, t)| (x[*i] - t).abs())
            .fold(0.0, f64::max)
    }
}

fn range(start: usize, n: usize) -> impl Iterator<Item = usize> {
    start..start + n
}

/// Builds the FESD-J NLP of `hz` on `sys` over the physical horizon `t_final`: N control
/// intervals of N_FE semi-implicit elements each, with free lengths summing to T/N, a state
/// jump at every element boundary after the first, the cross complementarity of FESD-J
/// (the stage forces against the boundary's gap and sliding speeds), step equilibration and
/// the control effort w Σ_k ‖u_k‖² (w: [`Layout::effort_weight`]). The terminal components of `hz` are hard bounds, or,
/// with `release = Some(w)`, the objective is w Σ (y_i − target_i)² alone (the closest
/// reachable final state, without the effort). Returns the NLP, its
/// layout and the trivial start point (the initial state everywhere, elements of equal
/// length).
pub fn build(
    sys: &Arc<ModelSystem>,
    hz: &Horizon,
    t_final: f64,
    o: &ImpulseOptions,
    release: Option<f64>,
) -> Result<(BlockNlp<ImpulseBlock>, Layout, Vec<f64>), OcpError> {
    let nq = sys.nq();
    let dims = Dims {
        nq,
        nc: sys.n_contacts(),
        friction: sys.friction().is_some(),
        nu: sys.nu(),
    };
    let (nc, nt, nf, nu) = (dims.nc, dims.nt(), dims.nf(), dims.nu);
    if hz.y0.len() < 2 * nq {
        return Err(OcpError::InvalidInput(format!(
            "initial state has {} entries, the model needs {}",
            hz.y0.len(),
            2 * nq
        )));
    }
    if hz.n_steps == 0 || t_final.is_nan() || t_final <= 0.0 {
        return Err(OcpError::InvalidInput(
            "the horizon needs N ≥ 1 intervals and T > 0".into(),
        ));
    }
    let mu = sys.frictions();
    let n_fe = o.n_fe;
    let step = t_final / hz.n_steps as f64;
    let hbar = step / n_fe as f64;
    let mut nlp = BlockNlp::<ImpulseBlock>::default();
    let mut x0 = vec![];
    let (q_init, v_init) = (&hz.y0[..nq], &hz.y0[nq..2 * nq]);
    let gap0: Vec<f64> = sys.contact_frames(q_init).0;
    let fixed = |nlp: &mut BlockNlp<ImpulseBlock>, x0: &mut Vec<f64>, vals: &[f64]| {
        let i = nlp.add_vars(vals.len(), 0.0, 0.0);
        for (k, v) in vals.iter().enumerate() {
            nlp.xl[i + k] = *v;
            nlp.xu[i + k] = *v;
        }
        x0.extend_from_slice(vals);
        i
    };
    let free = |nlp: &mut BlockNlp<ImpulseBlock>,
                x0: &mut Vec<f64>,
                n: usize,
                lo: f64,
                hi: f64,
                guess: f64| {
        x0.extend(std::iter::repeat_n(guess, n));
        nlp.add_vars(n, lo, hi)
    };
    let q0 = fixed(&mut nlp, &mut x0, q_init);
    let v0 = fixed(&mut nlp, &mut x0, v_init);
    let (ybl, ybu) = match &hz.y_bounds {
        Some((l, u)) => (l.clone(), u.clone()),
        None => (vec![-INF; 2 * nq], vec![INF; 2 * nq]),
    };
    let mut layout = Layout {
        dims,
        q0,
        v0,
        u: vec![],
        elems: vec![],
        comp_rows: vec![],
        comp_pairs: vec![],
        comp_scale: vec![],
        terminal: vec![],
        interval_start: vec![],
        effort_weight: match hz.clock {
            Clock::Stagewise(_) => hz.control_weight,
            Clock::Terminal(_) | Clock::Free => hz.control_weight * step,
        },
    };
    let (mut q_prev, mut v_prev) = (q0, v0);
    for k in 0..hz.n_steps {
        let (ul, uh) = hz
            .u_bounds
            .get(k)
            .cloned()
            .unwrap_or_else(|| (vec![-INF; nu], vec![INF; nu]));
        if ul.len() != nu || uh.len() != nu {
            return Err(OcpError::InvalidInput(format!(
                "control bounds of interval {k} have {} entries, the model has {nu} controls",
                ul.len()
            )));
        }
        let u = nlp.add_vars(nu, 0.0, 0.0);
        for a in 0..nu {
            nlp.xl[u + a] = ul[a];
            nlp.xu[u + a] = uh[a];
            x0.push(0.0f64.clamp(ul[a], uh[a]));
        }
        layout.u.push(u);
        layout.interval_start.push(k as f64 * step);
        if release.is_none() && nu > 0 && layout.effort_weight > 0.0 {
            nlp.add_objective(
                ImpulseBlock::Effort {
                    weight: layout.effort_weight,
                },
                range(u, nu).collect(),
            )?;
        }
        let mut hs = vec![];
        for j in 0..n_fe {
            let first = k == 0 && j == 0;
            let h = free(&mut nlp, &mut x0, 1, 0.0, step, hbar);
            hs.push(h);
            let boundary = (!first).then(|| {
                let vp = free(&mut nlp, &mut x0, nq, -INF, INF, 0.0);
                x0[vp..vp + nq].copy_from_slice(v_init);
                BoundaryIdx {
                    vp,
                    ln: free(&mut nlp, &mut x0, nc, 0.0, INF, 0.0),
                    lt: free(&mut nlp, &mut x0, nt, 0.0, INF, 0.0),
                    p: free(&mut nlp, &mut x0, nc, 0.0, INF, 0.0),
                    n: free(&mut nlp, &mut x0, nc, 0.0, INF, 0.0),
                    y: free(&mut nlp, &mut x0, nc, 0.0, INF, 0.0),
                    g: free(&mut nlp, &mut x0, nf, 0.0, INF, 0.0),
                    b: free(&mut nlp, &mut x0, nf, 0.0, INF, 0.0),
                    d: free(&mut nlp, &mut x0, nt, 0.0, INF, 0.0),
                }
            });
            if let Some(b) = &boundary {
                for i in 0..nc {
                    x0[b.y + i] = gap0[i].max(0.0);
                }
            }
            let q = free(&mut nlp, &mut x0, nq, -INF, INF, 0.0);
            let v = free(&mut nlp, &mut x0, nq, -INF, INF, 0.0);
            x0[q..q + nq].copy_from_slice(q_init);
            x0[v..v + nq].copy_from_slice(v_init);
            nlp.xl[q..q + nq].copy_from_slice(&ybl[..nq]);
            nlp.xu[q..q + nq].copy_from_slice(&ybu[..nq]);
            nlp.xl[v..v + nq].copy_from_slice(&ybl[nq..2 * nq]);
            nlp.xu[v..v + nq].copy_from_slice(&ybu[nq..2 * nq]);
            let e = ElementIdx {
                interval: k,
                h,
                qs: q_prev,
                vs: v_prev,
                boundary,
                q,
                v,
                ln: free(&mut nlp, &mut x0, nc, 0.0, INF, 0.0),
                lt: free(&mut nlp, &mut x0, nt, 0.0, INF, 0.0),
                y: free(&mut nlp, &mut x0, nc, 0.0, INF, 0.0),
                g: free(&mut nlp, &mut x0, nf, 0.0, INF, 0.0),
                b: free(&mut nlp, &mut x0, nf, 0.0, INF, 0.0),
                d: free(&mut nlp, &mut x0, nt, 0.0, INF, 0.0),
            };
            for i in 0..nc {
                x0[e.y + i] = gap0[i].max(0.0);
            }
            if let Some(b) = &e.boundary {
                let vars: Vec<usize> = range(e.qs, nq)
                    .chain(range(e.vs, nq))
                    .chain(range(b.vp, nq))
                    .chain(range(b.ln, nc))
                    .chain(range(b.lt, nt))
                    .chain(range(b.p, nc))
                    .chain(range(b.n, nc))
                    .chain(range(b.y, nc))
                    .chain(range(b.g, nf))
                    .chain(range(b.b, nf))
                    .chain(range(b.d, nt))
                    .collect();
                let zeros = vec![0.0; dims.jump_rows()];
                nlp.add_constraint(
                    ImpulseBlock::Jump {
                        sys: sys.clone(),
                        dims,
                        mu: mu.clone(),
                    },
                    vars,
                    &zeros,
                    &zeros,
                )?;
            }
            let vars: Vec<usize> = range(e.qs, nq)
                .chain(range(e.v_start(), nq))
                .chain(range(h, 1))
                .chain(range(u, nu))
                .chain(range(q, nq))
                .chain(range(v, nq))
                .chain(range(e.ln, nc))
                .chain(range(e.lt, nt))
                .chain(range(e.y, nc))
                .chain(range(e.g, nf))
                .chain(range(e.b, nf))
                .chain(range(e.d, nt))
                .collect();
            let zeros = vec![0.0; dims.stage_rows()];
            nlp.add_constraint(
                ImpulseBlock::Stage {
                    sys: sys.clone(),
                    dims,
                    mu: mu.clone(),
                    t: k as f64 * step + (j as f64 + 1.0) * hbar,
                },
                vars,
                &zeros,
                &zeros,
            )?;
            if sys.n_path() > 0 {
                let (lo, hi) = sys.path_bounds();
                nlp.add_constraint(
                    ImpulseBlock::Path { sys: sys.clone() },
                    range(q, nq).collect(),
                    &lo,
                    &hi,
                )?;
            }
            let (pairs, scale) = element_pairs(&e, &dims);
            add_products(&mut nlp, &mut layout, &pairs)?;
            layout.comp_pairs.push(pairs);
            layout.comp_scale.push(scale);
            q_prev = q;
            v_prev = v;
            layout.elems.push(e);
        }
        nlp.add_constraint(ImpulseBlock::Sum, hs.clone(), &[step], &[step])?;
        if o.rho_h > 0.0 {
            nlp.add_objective(
                ImpulseBlock::StepEquilibration {
                    mean: hbar,
                    weight: o.rho_h,
                },
                hs,
            )?;
        }
    }
    // terminal components of y = (q, v, t); the clock is fixed by the interval lengths
    let mut released = (vec![], vec![]);
    for &(i, value) in &hz.terminal {
        let var = match i {
            i if i < nq => q_prev + i,
            i if i < 2 * nq => v_prev + i - nq,
            _ => continue,
        };
        layout.terminal.push((var, value));
        if release.is_some() {
            released.0.push(var);
            released.1.push(value);
        } else {
            nlp.xl[var] = value;
            nlp.xu[var] = value;
        }
    }
    if let Some(weight) = release {
        if !released.0.is_empty() {
            nlp.add_objective(
                ImpulseBlock::Target {
                    target: released.1,
                    weight,
                },
                released.0,
            )?;
        }
    }
    if !hz.tracking.is_empty() {
        return Err(OcpError::InvalidInput(
            "ocp.formulation = \"fesd-j\" has no tracking cost (ocp.tracking): use \
             \"time-freezing\""
                .into(),
        ));
    }
    Ok((nlp, layout, x0))
}

/// The complementarity pairs of element `e` (global indices): the stage's contact and
/// friction pairs, and after a boundary the impulse pairs and FESD-J's cross pairs (stage
/// forces against the boundary's gap, sliding speeds and friction bound).
fn element_pairs(e: &ElementIdx, d: &Dims) -> (Vec<(usize, Vec<usize>)>, Vec<f64>) {
    let mut pairs = vec![];
    for i in 0..d.nc {
        pairs.push((e.ln + i, vec![e.y + i]));
    }
    if d.friction {
        for i in 0..d.nc {
            pairs.push((e.lt + 2 * i, vec![e.d + 2 * i]));
            pairs.push((e.lt + 2 * i + 1, vec![e.d + 2 * i + 1]));
            pairs.push((e.g + i, vec![e.b + i]));
        }
    }
    let mut scale = vec![1.0; pairs.len()];
    if let Some(b) = &e.boundary {
        let mut impulse = |pairs: &mut Vec<(usize, Vec<usize>)>, p: (usize, Vec<usize>)| {
            pairs.push(p);
            scale.push(IMPULSE_RELAXATION);
        };
        for i in 0..d.nc {
            impulse(&mut pairs, (b.ln + i, vec![b.y + i, b.p + i, b.n + i]));
            impulse(&mut pairs, (b.p + i, vec![b.n + i]));
            if d.friction {
                impulse(&mut pairs, (b.lt + 2 * i, vec![b.d + 2 * i]));
                impulse(&mut pairs, (b.lt + 2 * i + 1, vec![b.d + 2 * i + 1]));
                impulse(&mut pairs, (b.g + i, vec![b.b + i]));
            }
        }
        let mut cross = |p: (usize, Vec<usize>)| {
            pairs.push(p);
            scale.push(1.0);
        };
        for i in 0..d.nc {
            cross((e.ln + i, vec![b.y + i]));
            if d.friction {
                cross((e.lt + 2 * i, vec![b.d + 2 * i]));
                cross((e.lt + 2 * i + 1, vec![b.d + 2 * i + 1]));
                cross((e.b + i, vec![b.g + i]));
            }
        }
    }
    (pairs, scale)
}

/// The factor of σ in the relaxation of the impact law's pairs at element boundaries. Each
/// pair's product is bounded separately, so a relaxation as loose as the stage's lets
/// every one of the many boundaries carry a small impulse with the body in flight
/// (Λ_n (f_c + P + N) ≤ σ with P the rising normal speed): at σ = 0.1 the pushed box
/// hovers on them and is carried to its target at no effort. An impulse of a real impact
/// has f_c = P = N = 0 and is not bounded by any relaxation.
pub const IMPULSE_RELAXATION: f64 = 1e-3;

/// Adds the products of `pairs` as one block of rows (≤ σ under Scholtes' relaxation) and
/// as one penalty term of the objective (weight 1/σ along the penalty homotopy); the
/// homotopy sets both.
fn add_products(
    nlp: &mut BlockNlp<ImpulseBlock>,
    layout: &mut Layout,
    pairs: &[(usize, Vec<usize>)],
) -> Result<(), OcpError> {
    let mut vars: Vec<usize> = vec![];
    let local = |g: usize, vars: &mut Vec<usize>| -> usize {
        if let Some(p) = vars.iter().position(|v| *v == g) {
            p
        } else {
            vars.push(g);
            vars.len() - 1
        }
    };
    let local_pairs: Vec<(usize, Vec<usize>)> = pairs
        .iter()
        .map(|(a, bs)| {
            let a = local(*a, &mut vars);
            let bs = bs.iter().map(|b| local(*b, &mut vars)).collect();
            (a, bs)
        })
        .collect();
    let n = local_pairs.len();
    nlp.add_objective(
        ImpulseBlock::Penalty {
            pairs: local_pairs.clone(),
            weight: 0.0,
        },
        vars.clone(),
    )?;
    let row = nlp.add_constraint(
        ImpulseBlock::Products { pairs: local_pairs },
        vars,
        &vec![-INF; n],
        &vec![INF; n],
    )?;
    layout.comp_rows.push((row, n));
    Ok(())
}
