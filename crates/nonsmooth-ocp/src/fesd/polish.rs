//! Active-set polishing after the homotopy (Scholtes 2001 §4; [`polish`],
//! [`solve_on_active_set`]): every complementarity pair's active side fixed and the smooth
//! NLP re-solved, with the idle pairs freed and projected afterwards.

use super::blocks::FesdBlock;
use super::complementarity::comp_residual;
use super::layout::Layout;
use super::options::FesdOptions;
use super::relaxed_nlp::{relaxed_nlp_options, NlpLog};
use super::tableau::{comp_pair, Dcs};
use crate::ipopt::{solve, IpoptSolution};
use crate::nlp::BlockNlp;

/// Threshold below which α (or 1 − α) counts as at its bound in [`polish`].
const POLISH_ALPHA: f64 = 1e-3;
/// Largest multiplier value that [`polish`] may fix to zero.
const POLISH_LAMBDA: f64 = 1e-4;
/// Largest constraint violation of an accepted [`polish`] point.
const POLISH_MAX_VIOLATION: f64 = 1e-8;

/// MPCC active-set polishing (a standard end game for relaxation methods, cf. Scholtes
/// 2001 §4 and the "polishing" step of MPCC solvers): from the last relaxed solution every
/// α component is classified per stage as 0 (then λᵖ = 0 on all stage points it is crossed
/// with), 1 (then λⁿ = 0) or interior (sliding: λᵖ = λⁿ = 0); the fixed variables turn all
/// complementarity products into identities and the resulting smooth NLP is solved by
/// IPOPT warm-started from the relaxed point. The pairs that the fixed mode makes
/// irrelevant (α₂, α₃ where α₁ = 1, α₃ where α₂ = 1) stay free and are projected onto exact
/// complementarity afterwards ([`solve_on_active_set`] with `free_idle`): fixing the side of,
/// e.g., nᵀv in flight from a relaxed point over-constrains the smooth NLP (on the hopper,
/// x = 3 without holes, every polish with those pairs fixed failed down to σ = 2e-8; with
/// them free it converged at σ = 2e-9). Returns `None` (keep the relaxed
/// solution) when the classification would fix a multiplier larger than a small threshold,
/// when IPOPT fails, or when the polished point is not better.
pub fn polish(
    nlp: &mut BlockNlp<FesdBlock>,
    layout: &Layout,
    sol: &IpoptSolution,
    o: &FesdOptions,
) -> Option<(IpoptSolution, NlpLog)> {
    let capped = {
        let mut o = o.clone();
        o.nlp.max_iter = o.nlp.max_iter.min(POLISH_MAX_ITER);
        o
    };
    solve_on_active_set(nlp, layout, sol, &capped, POLISH_MU_INIT, true)
}

/// IPOPT's initial barrier parameter of [`polish`]: the start point is (nearly) feasible.
const POLISH_MU_INIT: f64 = 1e-9;

/// Most IPOPT iterations of one [`polish`]: on the right active set the start point is
/// nearly optimal; a wrong one runs into the iteration limit (on the hopper end game 3000
/// iterations, about four minutes, for every failed polish), so the homotopy goes on sooner.
const POLISH_MAX_ITER: i32 = 500;

/// [`polish`] with the initial barrier parameter `mu_init`: the smooth NLP on the active
/// set of `sol` (every complementarity product fixed to an identity), warm-started from
/// `sol`. A start point far from feasibility (another terminal set than the one `sol` solved,
/// [`crate::continuation`]) needs a larger `mu_init` than the polish's 1e-9.
///
/// With `free_idle`, the pairs of switching functions that the fixed mode makes irrelevant
/// are not fixed: in the step representation θ₁ = α₁ + (1−α₁)α₂, θ₂ = (1−α₁)(1−α₂)α₃,
/// θ₃ = (1−α₁)(1−α₂)(1−α₃), so α₁ = 1 makes θ independent of α₂, α₃ and α₂ = 1 of α₃.
/// The sign of such a c_i (e.g. nᵀv and bᵀv in flight) may then change while the
/// trajectory deforms; after the solve every freed pair is projected onto its exact
/// complementarity (λᵖ = max(c, 0), λⁿ = max(−c, 0), α = 1 or 0 by the sign of c), which
/// leaves θ and every constraint unchanged. Only pairs without cross complementarity are
/// freed, and only for the Scholtes rows of the step representation.
pub fn solve_on_active_set(
    nlp: &mut BlockNlp<FesdBlock>,
    layout: &Layout,
    sol: &IpoptSolution,
    o: &FesdOptions,
    mu_init: f64,
    free_idle: bool,
) -> Option<(IpoptSolution, NlpLog)> {
    let saved = (nlp.xl.clone(), nlp.xu.clone(), nlp.gu.clone());
    let out = polish_inner(nlp, layout, sol, o, mu_init, free_idle);
    nlp.xl = saved.0;
    nlp.xu = saved.1;
    nlp.gu = saved.2;
    out
}

/// A complementarity pair left free by [`solve_on_active_set`]: indices of α_i, λᵖ_i, λⁿ_i.
struct IdlePair {
    alpha: usize,
    lp: usize,
    ln: usize,
}

/// Frees the pairs that the fixed α of a stage point make irrelevant (see
/// [`solve_on_active_set`]) and lifts the Scholtes rows they sit in; `orig` are the bounds
/// before the active set was fixed.
fn free_idle_pairs(
    p: &mut BlockNlp<FesdBlock>,
    layout: &Layout,
    o: &FesdOptions,
    orig: &(Vec<f64>, Vec<f64>),
) -> Vec<IdlePair> {
    let (_, nc, _, ns) = layout.dims;
    let plain_rows = layout.dcs == Dcs::Step
        && layout.elastic.is_none()
        && !o.mpcc.penalty
        && layout.comp_row_len == nc
        && layout.comp_rows.len() == layout.elems.len();
    if !plain_rows {
        return vec![];
    }
    let first_free = if o.discretization.fesd {
        layout.n_cross.max(1)
    } else {
        1
    };
    let mut pairs = vec![];
    for (ie, e) in layout.elems.iter().enumerate() {
        for jp in 0..ns {
            for i in first_free..nc {
                let masked = (0..i).any(|k| {
                    let a = e.alpha[jp] + k;
                    p.xl[a] == 1.0 && p.xu[a] == 1.0
                });
                if !masked {
                    continue;
                }
                let pair = IdlePair {
                    alpha: e.alpha[jp] + i,
                    lp: e.lp[jp + 1] + i,
                    ln: e.ln[jp + 1] + i,
                };
                for v in [pair.alpha, pair.lp, pair.ln] {
                    p.xl[v] = orig.0[v];
                    p.xu[v] = orig.1[v];
                }
                p.gu[layout.comp_rows[ie] + i] = 1e20;
                pairs.push(pair);
            }
        }
    }
    pairs
}

/// Projects the freed pairs of [`free_idle_pairs`] onto exact complementarity.
fn project_idle_pairs(x: &mut [f64], pairs: &[IdlePair]) {
    for pair in pairs {
        let c = x[pair.lp] - x[pair.ln];
        x[pair.lp] = c.max(0.0);
        x[pair.ln] = (-c).max(0.0);
        if c > 0.0 {
            x[pair.alpha] = 1.0;
        } else if c < 0.0 {
            x[pair.alpha] = 0.0;
        }
    }
}

fn polish_inner(
    p: &mut BlockNlp<FesdBlock>,
    layout: &Layout,
    sol: &IpoptSolution,
    o: &FesdOptions,
    mu_init: f64,
    free_idle: bool,
) -> Option<(IpoptSolution, NlpLog)> {
    let (_, nc, _, ns) = layout.dims;
    let x = &sol.x;
    let orig = (p.xl.clone(), p.xu.clone());
    // thresholds grow with the residual of the relaxed point (√comp: both factors of a
    // product ≤ comp can be that large)
    let root = comp_residual(layout, x, o.discretization.fesd).sqrt();
    let tol_l = POLISH_LAMBDA.max(10.0 * root);
    let tol_a = POLISH_ALPHA.max(10.0 * root).min(0.25);
    let fix = |idx: usize, val: f64, p: &mut BlockNlp<FesdBlock>| -> bool {
        if (x[idx] - val).abs() > tol_l {
            return false;
        }
        p.xl[idx] = val;
        p.xu[idx] = val;
        true
    };
    for e in &layout.elems {
        for jp in 0..ns {
            for i in 0..nc {
                let ai = e.alpha[jp] + i;
                let a = x[ai];
                let js: Vec<usize> = (0..e.lp.len())
                    .filter(|&j| comp_pair(o.discretization.fesd && i < layout.n_cross, jp, j, ns))
                    .collect();
                let lp_max = js.iter().map(|&j| x[e.lp[j] + i]).fold(0.0, f64::max);
                if layout.dcs == Dcs::Stewart {
                    // θ_r ⊥ λ_r: a positive λ anywhere or a vanishing θ_r fixes θ_r = 0,
                    // otherwise λ_r = 0
                    if lp_max > tol_l || a <= tol_a {
                        p.xl[ai] = 0.0;
                        p.xu[ai] = 0.0;
                    } else {
                        for &j in &js {
                            if !fix(e.lp[j] + i, 0.0, p) {
                                if o.nlp.verbose {
                                    eprintln!("polish: λ above the threshold {tol_l:.1e}");
                                }
                                return None;
                            }
                        }
                    }
                    continue;
                }
                let ln_max = js.iter().map(|&j| x[e.ln[j] + i]).fold(0.0, f64::max);
                // 0: α = 0 (λᵖ = 0), 1: α = 1 (λⁿ = 0), 2: interior (both λ = 0)
                let side = if lp_max.max(ln_max) > tol_l {
                    usize::from(lp_max > ln_max)
                } else if a <= tol_a {
                    0
                } else if a >= 1.0 - tol_a {
                    1
                } else {
                    2
                };
                let mut ok = true;
                if side == 0 {
                    p.xl[ai] = 0.0;
                    p.xu[ai] = 0.0;
                    for &j in &js {
                        ok &= fix(e.lp[j] + i, 0.0, p);
                    }
                } else if side == 1 {
                    p.xl[ai] = 1.0;
                    p.xu[ai] = 1.0;
                    for &j in &js {
                        ok &= fix(e.ln[j] + i, 0.0, p);
                    }
                } else {
                    for &j in &js {
                        ok &= fix(e.lp[j] + i, 0.0, p);
                        ok &= fix(e.ln[j] + i, 0.0, p);
                    }
                }
                if !ok {
                    return None;
                }
            }
        }
    }
    let idle = if free_idle {
        free_idle_pairs(p, layout, o, &orig)
    } else {
        vec![]
    };
    // the fixed bounds must hold at the start point for IPOPT's fixed-variable treatment
    let x0: Vec<f64> = x
        .iter()
        .zip(p.xl.iter().zip(&p.xu))
        .map(|(v, (l, u))| v.clamp(*l, *u))
        .collect();
    let mut opts = relaxed_nlp_options(o, None);
    // an "acceptable" stop may leave up to 1e-2 of violation (IPOPT's default), which the
    // check below (1e-8) rejects: the point must meet the exact tolerance
    opts.num.push((
        "acceptable_constr_viol_tol".into(),
        POLISH_MAX_VIOLATION.min(o.nlp.tol),
    ));
    opts.num.push(("mu_init".into(), mu_init));
    opts.string
        .push(("warm_start_init_point".into(), "yes".into()));
    opts.num.push(("warm_start_bound_push".into(), mu_init));
    opts.num
        .push(("warm_start_mult_bound_push".into(), mu_init));
    let out = solve(&*p, &x0, Some(sol), &opts);
    if o.nlp.verbose {
        if let Err(e) = &out {
            eprintln!("polish: IPOPT failed: {e}");
        }
    }
    let mut out = out.ok()?;
    project_idle_pairs(&mut out.x, &idle);
    let comp = comp_residual(layout, &out.x, o.discretization.fesd);
    let before = comp_residual(layout, x, o.discretization.fesd);
    if out.constraint_violation > POLISH_MAX_VIOLATION || comp > before.max(1e-14) {
        if o.nlp.verbose {
            eprintln!(
                "polish rejected: violation {:.1e}, complementarity {comp:.1e} (before {before:.1e})",
                out.constraint_violation
            );
        }
        return None;
    }
    let entry = NlpLog {
        sigma: 0.0,
        objective: out.objective,
        comp_residual: comp,
        iterations: out.iterations,
        cpu_seconds: out.cpu_seconds,
        status: out.status,
    };
    Some((out, entry))
}

#[cfg(test)]
mod tests {
    use super::{project_idle_pairs, IdlePair};

    /// A freed pair keeps c = λᵖ − λⁿ and becomes exactly complementary, α on the side of
    /// the sign of c (and unchanged where c = 0).
    #[test]
    fn idle_pairs_are_projected_onto_exact_complementarity() {
        let pair = |k: usize| IdlePair {
            alpha: 3 * k,
            lp: 3 * k + 1,
            ln: 3 * k + 2,
        };
        let mut x = vec![0.3, 2.0, 0.5, 0.6, 0.2, 0.7, 0.4, 0.25, 0.25];
        project_idle_pairs(&mut x, &[pair(0), pair(1), pair(2)]);
        let want = [1.0, 1.5, 0.0, 0.0, 0.0, 0.5, 0.4, 0.0, 0.0];
        for (got, want) in x.iter().zip(want) {
            assert!((got - want).abs() < 1e-15, "{x:?}");
        }
    }
}
