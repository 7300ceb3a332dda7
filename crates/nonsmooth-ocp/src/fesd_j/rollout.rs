//! Rollouts of the FESD-J discretization itself: for given controls, every element one
//! semi-implicit step whose contact forces solve its linear complementarity problem
//! (Stewart & Trinkle's, by Lemke's method), every boundary an inelastic impact of the
//! contacts that close there. A rollout fills every variable of the NLP consistently
//! ([`start_point`]): the stage and jump rows hold and the products vanish inside each
//! element; what a rollout with elements of equal length cannot satisfy is the cross
//! complementarity where a contact closes or a slide stops inside an element (the NLP moves
//! the boundaries there). A pattern search over the piecewise-constant controls
//! ([`search`]) brings such a rollout close to the target: a contact-consistent start for
//! the optimal control, where the trivial start (the initial state everywhere) holds a
//! dropped body in the air with no force.

use std::time::Instant;

use nalgebra::{DMatrix, DVector};
use nonsmooth_solvers::lcp::{lemke, Lcp, LemkeOptions};

use super::build::Layout;
use crate::fesd::Horizon;
use crate::model_system::ModelSystem;

/// Gap (m) below which a contact closing at a boundary takes an impulse.
const IMPACT_GAP: f64 = 1e-9;

/// The impulses of one contact problem: `v = v_free + M⁻¹ Σ n_i p_n,i + b_i (p⁺_i − p⁻_i)`
/// with `0 ≤ p_n ⊥ c + nᵀv ≥ 0`, `0 ≤ p^± ⊥ ±bᵀv + γ ≥ 0`, `0 ≤ γ ⊥ μ p_n − p⁺ − p⁻ ≥ 0`
/// (Stewart & Trinkle's LCP with the planar friction cone) over the contacts `active`.
struct ContactSolve {
    v: Vec<f64>,
    /// Per contact of the system: p_n, p⁺, p⁻, γ, μp_n − p⁺ − p⁻ (zero where not active).
    pn: Vec<f64>,
    pp: Vec<f64>,
    pm: Vec<f64>,
    gamma: Vec<f64>,
    slack: Vec<f64>,
}

#[allow(clippy::too_many_arguments)]
fn contact_solve(
    sys: &ModelSystem,
    q: &[f64],
    normals: &[Vec<f64>],
    tangents: &[Vec<f64>],
    mu: &[f64],
    v_free: &[f64],
    active: &[(usize, f64)],
) -> Option<ContactSolve> {
    let nc = normals.len();
    let friction = !tangents.is_empty();
    let mut out = ContactSolve {
        v: v_free.to_vec(),
        pn: vec![0.0; nc],
        pp: vec![0.0; nc],
        pm: vec![0.0; nc],
        gamma: vec![0.0; nc],
        slack: vec![0.0; nc],
    };
    for (g, b) in out.gamma.iter_mut().zip(tangents) {
        *g = dot(b, v_free).abs();
    }
    let k = active.len();
    if k == 0 {
        return Some(out);
    }
    // columns of G (n_i, then b_i and −b_i) and M⁻¹G
    let mut cols: Vec<Vec<f64>> = active.iter().map(|(i, _)| normals[*i].clone()).collect();
    if friction {
        cols.extend(active.iter().map(|(i, _)| tangents[*i].clone()));
        cols.extend(
            active
                .iter()
                .map(|(i, _)| tangents[*i].iter().map(|x| -x).collect()),
        );
    }
    let w: Vec<Vec<f64>> = cols.iter().map(|c| sys.minv(q, c)).collect();
    let rows: Vec<Vec<f64>> = cols.clone();
    let m = if friction { 4 * k } else { k };
    let mut a = DMatrix::zeros(m, m);
    let mut b = DVector::zeros(m);
    let ng = cols.len();
    // velocity rows: n_i (normal), b_i (+), −b_i (−)
    for (r, row) in rows.iter().enumerate() {
        for (c, wc) in w.iter().enumerate() {
            a[(r, c)] = dot(row, wc);
        }
        b[r] = dot(row, v_free);
    }
    for (r, (_, offset)) in active.iter().enumerate() {
        b[r] += offset;
    }
    if friction {
        for j in 0..k {
            // γ enters both tangential rows; its own row is μ p_n − p⁺ − p⁻
            a[(k + j, ng + j)] = 1.0;
            a[(2 * k + j, ng + j)] = 1.0;
            a[(ng + j, j)] = mu[active[j].0];
            a[(ng + j, k + j)] = -1.0;
            a[(ng + j, 2 * k + j)] = -1.0;
        }
    }
    let lcp = Lcp::new(a, b).ok()?;
    let sol = lemke(&lcp, &LemkeOptions::default()).ok()?;
    if !sol.residuals.complementarity.is_finite() || sol.z.iter().any(|z| !z.is_finite()) {
        return None;
    }
    let z = sol.z.map(|x| x.max(0.0));
    for (c, wc) in w.iter().enumerate() {
        for (va, wa) in out.v.iter_mut().zip(wc) {
            *va += wa * z[c];
        }
    }
    for (j, (i, _)) in active.iter().enumerate() {
        out.pn[*i] = z[j];
        if friction {
            out.pp[*i] = z[k + j];
            out.pm[*i] = z[2 * k + j];
            out.gamma[*i] = z[ng + j];
            out.slack[*i] = mu[*i] * z[j] - z[k + j] - z[2 * k + j];
        }
    }
    for (i, b) in tangents.iter().enumerate() {
        if !active.iter().any(|(j, _)| *j == i) {
            out.gamma[i] = dot(b, &out.v).abs();
        }
    }
    Some(out)
}

/// Per contact: whether its normal force acts and whether it sticks (strictly inside the
/// friction cone), forces from the impulses of a step of length `h`.
fn modes(s: &ContactSolve, h: f64) -> Vec<(bool, bool)> {
    const FORCE: f64 = 1e-8;
    s.pn.iter()
        .zip(&s.slack)
        .map(|(pn, slack)| (pn / h > FORCE, slack / h > FORCE))
        .collect()
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The NLP point of a rollout of the controls `u` (one vector per interval) from the
/// horizon's start, each element ending at the first switch of the contact modes in its
/// interval (else the interval's time shared equally); `None` when a contact problem fails.
pub(crate) fn start_point(
    sys: &ModelSystem,
    hz: &Horizon,
    layout: &Layout,
    trivial: &[f64],
    t_final: f64,
    u: &[Vec<f64>],
) -> Option<Vec<f64>> {
    let d = layout.dims;
    let (nq, nc) = (d.nq, d.nc);
    let mu = sys.frictions();
    let mut x = trivial.to_vec();
    let mut q = hz.y0[..nq].to_vec();
    let mut v = hz.y0[nq..2 * nq].to_vec();
    let n_fe = layout.elems.len() / hz.n_steps.max(1);
    let step = t_final / hz.n_steps as f64;
    let (mut t, mut left, mut j) = (0.0, 0.0, 0);
    for e in &layout.elems {
        let k = e.interval;
        if e.boundary.is_none() || j == n_fe {
            (left, j) = (step, 0);
        }
        let uk = &u[k];
        x[layout.u[k]..layout.u[k] + d.nu].copy_from_slice(uk);
        let (gaps, normals, tangents) = sys.contact_frames(&q);
        if let Some(b) = &e.boundary {
            // the contacts that close here take an inelastic impact
            let closing: Vec<(usize, f64)> = (0..nc)
                .filter(|&i| gaps[i] <= IMPACT_GAP && dot(&normals[i], &v) < 0.0)
                .map(|i| (i, 0.0))
                .collect();
            let s = contact_solve(sys, &q, &normals, &tangents, &mu, &v, &closing)?;
            x[b.vp..b.vp + nq].copy_from_slice(&s.v);
            for i in 0..nc {
                let vn = dot(&normals[i], &s.v);
                x[b.ln + i] = s.pn[i];
                x[b.p + i] = vn.max(0.0);
                x[b.n + i] = (-vn).max(0.0);
                x[b.y + i] = gaps[i].max(0.0);
                if d.friction {
                    let bt = dot(&tangents[i], &s.v);
                    x[b.lt + 2 * i] = s.pp[i];
                    x[b.lt + 2 * i + 1] = s.pm[i];
                    x[b.g + i] = s.gamma[i];
                    x[b.b + i] = s.slack[i];
                    x[b.d + 2 * i] = bt + s.gamma[i];
                    x[b.d + 2 * i + 1] = s.gamma[i] - bt;
                }
            }
            v = s.v;
        }
        // the stage: v = v_s + h f_v(q_s, v, u) + M⁻¹ G p, the gap linearized along the step
        let stage = |h: f64| -> Option<ContactSolve> {
            let mut v_end = v.clone();
            let mut s = None;
            for _ in 0..2 {
                let fv = sys.f_v(&q, &v_end, t + h, uk);
                let v_free: Vec<f64> = (0..nq).map(|a| v[a] + h * fv[a]).collect();
                let all: Vec<(usize, f64)> = (0..nc).map(|i| (i, gaps[i] / h)).collect();
                let solved = contact_solve(sys, &q, &normals, &tangents, &mu, &v_free, &all)?;
                v_end = solved.v.clone();
                s = Some(solved);
            }
            s
        };
        // the element ends at the first switch of the contact modes in what is left of
        // the interval (a contact closing, a slide stopping), where the NLP wants its
        // boundary; the last element of an interval takes what is left
        let h = if j + 1 < n_fe {
            let min_len = 1e-3 * step;
            let modes0 = modes(&stage(min_len)?, min_len);
            let switched = |h: f64| stage(h).is_none_or(|s| modes(&s, h) != modes0);
            let room = left - (n_fe - j - 1) as f64 * min_len;
            if switched(room) {
                let (mut lo, mut hi) = (0.0, room);
                for _ in 0..60 {
                    let mid = 0.5 * (lo + hi);
                    if switched(mid) {
                        hi = mid;
                    } else {
                        lo = mid;
                    }
                }
                lo.max(min_len)
            } else {
                left / (n_fe - j) as f64
            }
        } else {
            left
        };
        let s = stage(h)?;
        let v_end = s.v.clone();
        x[e.h] = h;
        t += h;
        left -= h;
        j += 1;
        let q_end: Vec<f64> = (0..nq).map(|a| q[a] + h * v_end[a]).collect();
        x[e.q..e.q + nq].copy_from_slice(&q_end);
        x[e.v..e.v + nq].copy_from_slice(&v_end);
        for i in 0..nc {
            x[e.ln + i] = s.pn[i] / h;
            x[e.y + i] = (gaps[i] + h * dot(&normals[i], &v_end)).max(0.0);
            if d.friction {
                let bt = dot(&tangents[i], &v_end);
                x[e.lt + 2 * i] = s.pp[i] / h;
                x[e.lt + 2 * i + 1] = s.pm[i] / h;
                x[e.g + i] = s.gamma[i];
                x[e.b + i] = s.slack[i] / h;
                x[e.d + 2 * i] = bt + s.gamma[i];
                x[e.d + 2 * i + 1] = s.gamma[i] - bt;
            }
        }
        q = q_end;
        v = v_end;
    }
    Some(x)
}

/// Controls within the bounds whose rollout ([`start_point`]) ends closest to the target
/// (the sum of squared terminal errors), found by a pattern search: from no control (each
/// clamped into its bounds), every control of every interval tried half a bound range up
/// and down, an improvement kept at once, the step halved when none improves, until the
/// step is below 1e-3 of the range, the target is met, `max_rollouts` are spent or the
/// deadline passes. Returns the point and its terminal error (largest component).
pub(crate) fn search(
    sys: &ModelSystem,
    hz: &Horizon,
    layout: &Layout,
    trivial: &[f64],
    t_final: f64,
    max_rollouts: usize,
    deadline: Instant,
) -> Option<(Vec<f64>, f64)> {
    let nu = layout.dims.nu;
    let bounds: Vec<(Vec<f64>, Vec<f64>)> = (0..hz.n_steps)
        .map(|k| {
            hz.u_bounds
                .get(k)
                .cloned()
                .unwrap_or_else(|| (vec![-1e20; nu], vec![1e20; nu]))
        })
        .collect();
    if bounds
        .iter()
        .any(|(l, h)| l.iter().chain(h).any(|x| !x.is_finite() || x.abs() >= 1e19))
    {
        return None;
    }
    let miss = |x: &[f64]| -> f64 {
        layout
            .terminal
            .iter()
            .map(|(i, t)| (x[*i] - t) * (x[*i] - t))
            .sum()
    };
    let mut u: Vec<Vec<f64>> = bounds
        .iter()
        .map(|(l, h)| (0..nu).map(|a| 0.0f64.clamp(l[a], h[a])).collect())
        .collect();
    let mut best_x = start_point(sys, hz, layout, trivial, t_final, &u)?;
    let mut best = miss(&best_x);
    let mut scale = 0.5;
    let mut rollouts = 1;
    while scale >= 1e-3 && best > 1e-14 && rollouts < max_rollouts && Instant::now() < deadline {
        let mut improved = false;
        for k in 0..hz.n_steps {
            for a in 0..nu {
                let (lo, hi) = (bounds[k].0[a], bounds[k].1[a]);
                for sign in [1.0, -1.0] {
                    let trial = (u[k][a] + sign * scale * (hi - lo)).clamp(lo, hi);
                    if trial == u[k][a] {
                        continue;
                    }
                    let old = u[k][a];
                    u[k][a] = trial;
                    rollouts += 1;
                    match start_point(sys, hz, layout, trivial, t_final, &u) {
                        Some(x) if miss(&x) < best => {
                            best = miss(&x);
                            best_x = x;
                            improved = true;
                            break;
                        }
                        _ => u[k][a] = old,
                    }
                }
            }
        }
        if !improved {
            scale *= 0.5;
        }
    }
    let err = layout.terminal_error(&best_x);
    Some((best_x, err))
}
