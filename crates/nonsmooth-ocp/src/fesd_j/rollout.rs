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

/// Grid points on which an element's length is scanned for the first switch of the modes.
const SCAN: usize = 8;

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

/// The LCP of [`ContactSolve`] at one configuration for the contacts `active`: its
/// matrix (which does not depend on the step length) and the columns `M⁻¹G`.
struct ContactProblem<'a> {
    active: Vec<usize>,
    /// Rows of the velocity conditions: n_i, then b_i and −b_i of the active contacts.
    rows: Vec<Vec<f64>>,
    /// M⁻¹ times each row.
    w: Vec<Vec<f64>>,
    a: DMatrix<f64>,
    tangents: &'a [Vec<f64>],
    mu: &'a [f64],
}

impl<'a> ContactProblem<'a> {
    /// The problem of `active` at a configuration with the contact frames `normals`,
    /// `tangents` (none without friction) and `w[c] = M⁻¹ rows[c]` from `minv` (called
    /// once, with every row).
    fn new(
        normals: &[Vec<f64>],
        tangents: &'a [Vec<f64>],
        mu: &'a [f64],
        active: Vec<usize>,
        minv: impl FnOnce(&[Vec<f64>]) -> Vec<Vec<f64>>,
    ) -> Self {
        let friction = !tangents.is_empty();
        let k = active.len();
        let mut rows: Vec<Vec<f64>> = active.iter().map(|i| normals[*i].clone()).collect();
        if friction {
            rows.extend(active.iter().map(|i| tangents[*i].clone()));
            rows.extend(
                active
                    .iter()
                    .map(|i| tangents[*i].iter().map(|x| -x).collect()),
            );
        }
        let w = minv(&rows);
        let ng = rows.len();
        let m = if friction { 4 * k } else { k };
        let mut a = DMatrix::zeros(m, m);
        for (r, row) in rows.iter().enumerate() {
            for (c, wc) in w.iter().enumerate() {
                a[(r, c)] = dot(row, wc);
            }
        }
        if friction {
            for j in 0..k {
                // γ enters both tangential rows; its own row is μ p_n − p⁺ − p⁻
                a[(k + j, ng + j)] = 1.0;
                a[(2 * k + j, ng + j)] = 1.0;
                a[(ng + j, j)] = mu[active[j]];
                a[(ng + j, k + j)] = -1.0;
                a[(ng + j, 2 * k + j)] = -1.0;
            }
        }
        Self {
            active,
            rows,
            w,
            a,
            tangents,
            mu,
        }
    }

    /// The impulses from the free velocity `v_free`, with `offset[i]` added to contact
    /// i's normal condition (its gap over the step length in a stage, 0 in an impact).
    fn solve(&self, v_free: &[f64], offset: &[f64]) -> Option<ContactSolve> {
        let nc = offset.len();
        let k = self.active.len();
        let friction = !self.tangents.is_empty();
        let mut out = ContactSolve {
            v: v_free.to_vec(),
            pn: vec![0.0; nc],
            pp: vec![0.0; nc],
            pm: vec![0.0; nc],
            gamma: vec![0.0; nc],
            slack: vec![0.0; nc],
        };
        if k > 0 {
            let ng = self.rows.len();
            let mut b = DVector::zeros(self.a.nrows());
            for (r, row) in self.rows.iter().enumerate() {
                b[r] = dot(row, v_free);
            }
            for (r, i) in self.active.iter().enumerate() {
                b[r] += offset[*i];
            }
            let lcp = Lcp::new(self.a.clone(), b).ok()?;
            let sol = lemke(&lcp, &LemkeOptions::default()).ok()?;
            if sol.z.iter().any(|z| !z.is_finite()) {
                return None;
            }
            let z = sol.z.map(|x| x.max(0.0));
            for (c, wc) in self.w.iter().enumerate() {
                for (va, wa) in out.v.iter_mut().zip(wc) {
                    *va += wa * z[c];
                }
            }
            for (j, i) in self.active.iter().enumerate() {
                out.pn[*i] = z[j];
                if friction {
                    out.pp[*i] = z[k + j];
                    out.pm[*i] = z[2 * k + j];
                    out.gamma[*i] = z[ng + j];
                    out.slack[*i] = self.mu[*i] * z[j] - z[k + j] - z[2 * k + j];
                }
            }
        }
        for (i, b) in self.tangents.iter().enumerate() {
            if !self.active.contains(&i) {
                out.gamma[i] = dot(b, &out.v).abs();
            }
        }
        Some(out)
    }
}

/// Per contact: whether its normal force acts and, if so, whether it sticks (no sliding
/// speed; the split of friction among contacts that stick together is not unique, so the
/// cone's boundary does not tell), forces from the impulses of a step of length `h`.
fn modes(s: &ContactSolve, h: f64) -> Vec<(bool, bool)> {
    const FORCE: f64 = 1e-8;
    const SPEED: f64 = 1e-9;
    s.pn.iter()
        .zip(&s.gamma)
        .map(|(pn, gamma)| {
            let active = pn / h > FORCE;
            (active, active && *gamma <= SPEED)
        })
        .collect()
}

/// First indices of one contact group's variables in the NLP: a stage's (λ_n, λ_t, y, γ,
/// β, δ) or a boundary's (Λ_n, Λ_t, Y, Γ, Β, Δ).
struct ContactVars {
    ln: usize,
    lt: usize,
    y: usize,
    g: usize,
    b: usize,
    d: usize,
}

impl ContactVars {
    /// Writes the solve `s` into `x`: its impulses times `scale` (1/h turns a stage's into
    /// forces), the gaps `y`, and the friction variables at the velocity `s.v`.
    fn write(&self, x: &mut [f64], s: &ContactSolve, y: &[f64], tangents: &[Vec<f64>], scale: f64) {
        for i in 0..y.len() {
            x[self.ln + i] = s.pn[i] * scale;
            x[self.y + i] = y[i];
        }
        for (i, b) in tangents.iter().enumerate() {
            let bt = dot(b, &s.v);
            x[self.lt + 2 * i] = s.pp[i] * scale;
            x[self.lt + 2 * i + 1] = s.pm[i] * scale;
            x[self.g + i] = s.gamma[i];
            x[self.b + i] = s.slack[i] * scale;
            x[self.d + 2 * i] = bt + s.gamma[i];
            x[self.d + 2 * i + 1] = s.gamma[i] - bt;
        }
    }
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
            let closing: Vec<usize> = (0..nc)
                .filter(|&i| gaps[i] <= IMPACT_GAP && dot(&normals[i], &v) < 0.0)
                .collect();
            let impact = ContactProblem::new(&normals, &tangents, &mu, closing, |rows| {
                rows.iter().map(|r| sys.minv(&q, r)).collect()
            });
            let s = impact.solve(&v, &vec![0.0; nc])?;
            x[b.vp..b.vp + nq].copy_from_slice(&s.v);
            let vars = ContactVars {
                ln: b.ln,
                lt: b.lt,
                y: b.y,
                g: b.g,
                b: b.b,
                d: b.d,
            };
            let gaps_now: Vec<f64> = gaps.iter().map(|g| g.max(0.0)).collect();
            vars.write(&mut x, &s, &gaps_now, &tangents, 1.0);
            for i in 0..nc {
                let vn = dot(&normals[i], &s.v);
                x[b.p + i] = vn.max(0.0);
                x[b.n + i] = (-vn).max(0.0);
            }
            v = s.v;
        }
        // the stage: v = v_s + h f_v(q_s, v, u) + M⁻¹ G p, the gap linearized along the step
        let h_mean = left / (n_fe - j) as f64;
        let mut fv = vec![];
        let stage_problem =
            ContactProblem::new(&normals, &tangents, &mu, (0..nc).collect(), |rows| {
                let (f, w) = sys.accelerations(&q, &v, t + h_mean, uk, rows);
                fv = f;
                w
            });
        let stage = |h: f64| -> Option<ContactSolve> {
            let v_free: Vec<f64> = (0..nq).map(|a| v[a] + h * fv[a]).collect();
            let offset: Vec<f64> = gaps.iter().map(|g| g / h).collect();
            stage_problem.solve(&v_free, &offset)
        };
        // the element ends at the first switch of the contact modes in what is left of
        // the interval (a contact closing, a slide stopping), where the NLP wants its
        // boundary; the last element of an interval takes what is left
        let h = if j + 1 < n_fe {
            let min_len = 1e-3 * step;
            let modes0 = modes(&stage(min_len)?, min_len);
            let switched = |h: f64| stage(h).is_none_or(|s| modes(&s, h) != modes0);
            let room = left - (n_fe - j - 1) as f64 * min_len;
            // the first switch: scanned on a grid (the modes of a long semi-implicit step
            // need not be monotone in its length), then bisected
            match (1..=SCAN)
                .map(|i| room * i as f64 / SCAN as f64)
                .position(switched)
            {
                Some(i) => {
                    let (mut lo, mut hi) = (
                        room * i as f64 / SCAN as f64,
                        room * (i + 1) as f64 / SCAN as f64,
                    );
                    for _ in 0..40 {
                        let mid = 0.5 * (lo + hi);
                        if switched(mid) {
                            hi = mid;
                        } else {
                            lo = mid;
                        }
                    }
                    lo.max(min_len)
                }
                None => h_mean,
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
        // the stage's forces are its impulses over its length
        let linearized: Vec<f64> = (0..nc)
            .map(|i| (gaps[i] + h * dot(&normals[i], &v_end)).max(0.0))
            .collect();
        let vars = ContactVars {
            ln: e.ln,
            lt: e.lt,
            y: e.y,
            g: e.g,
            b: e.b,
            d: e.d,
        };
        vars.write(&mut x, &s, &linearized, &tangents, 1.0 / h);
        q = q_end;
        v = v_end;
    }
    Some(x)
}

/// Controls within the bounds whose rollout ([`start_point`]) ends closest to the target
/// (the sum of squared terminal errors), found by a pattern search: from every control at
/// `first` (−1 its lower bound, 0 the middle of its bounds, 1 its upper bound), every control of every interval tried half a bound range up
/// and down, an improvement kept at once, the step halved when none improves, until the
/// step is below 1e-6 of the range, the target is met, `max_rollouts` are spent or the
/// deadline passes. Returns the point and its terminal error (largest component).
#[allow(clippy::too_many_arguments)]
pub(crate) fn search(
    sys: &ModelSystem,
    hz: &Horizon,
    layout: &Layout,
    trivial: &[f64],
    t_final: f64,
    first: f64,
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
        .map(|(l, h)| {
            (0..nu)
                .map(|a| (0.5 * (l[a] + h[a]) + 0.5 * first * (h[a] - l[a])).clamp(l[a], h[a]))
                .collect()
        })
        .collect();
    let mut best_x = start_point(sys, hz, layout, trivial, t_final, &u)?;
    let mut best = miss(&best_x);
    let mut scale = 0.5;
    let mut rollouts = 1;
    while scale >= 1e-6 && best > 1e-12 && rollouts < max_rollouts && Instant::now() < deadline {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fesd_j::build;
    use crate::generator::generate;
    use crate::problem::ModelProblem;

    #[test]
    fn a_rollout_satisfies_the_nlp_and_lands_a_dropped_crate() {
        // the generator's third problem is a crate dropped flat from a few decimetres
        let g = generate(1, 3, 0).unwrap().remove(2);
        assert!(g.drop_height > 0.05, "{}", g.drop_height);
        let dir = std::env::temp_dir().join(format!("nonsmooth-rollout-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{}_model.toml", g.name)), &g.model_toml).unwrap();
        let file = dir.join(format!("{}.toml", g.name));
        std::fs::write(&file, &g.problem_toml).unwrap();
        let p = ModelProblem::from_file(&file).unwrap();
        std::fs::remove_dir_all(&dir).ok();
        let sys = &p.tf.cls;
        let (nlp, layout, trivial) = build(
            &std::sync::Arc::new(sys.clone()),
            &p.horizon,
            p.t_final,
            &p.impulse_options,
            None,
        )
        .unwrap();
        // no push: the crate falls, lands with an impulse at a boundary and rests
        let u = vec![vec![0.0]; p.horizon.n_steps];
        let x = start_point(sys, &p.horizon, &layout, &trivial, p.t_final, &u).unwrap();
        let (_, g_rows) = nlp.eval_all(&x);
        let products: Vec<usize> = layout
            .comp_rows
            .iter()
            .flat_map(|&(r, n)| r..r + n)
            .collect();
        for (r, value) in g_rows.iter().enumerate() {
            if !products.contains(&r) {
                let off = (nlp.gl[r] - value).max(value - nlp.gu[r]).max(0.0);
                assert!(
                    off <= 1e-9,
                    "row {r}: {value} outside [{}, {}]",
                    nlp.gl[r],
                    nlp.gu[r]
                );
            }
        }
        // every product of the point vanishes: the landing and the rest on boundaries
        assert!(
            layout.comp_residual(&x) <= 1e-9,
            "{}",
            layout.comp_residual(&x)
        );
        let landed = layout
            .elems
            .iter()
            .filter_map(|e| e.boundary.as_ref())
            .any(|b| (0..layout.dims.nc).any(|i| x[b.ln + i] > 0.1));
        assert!(landed, "no impact impulse at a boundary");
        let last = layout.elems.last().unwrap();
        let nq = layout.dims.nq;
        assert!(
            (x[last.q + 1] - g.half_extents[1]).abs() <= 1e-6,
            "height {}",
            x[last.q + 1]
        );
        assert!(x[last.v..last.v + nq].iter().all(|v| v.abs() <= 1e-9));
    }
}
