//! Phase I by the feasibility MPCC (Nurkanović & Leyffer 2025, MPECopt's phase I): the
//! constraint violation made elastic,
//!
//! ```text
//! minimize Σ_i (p_i + n_i) + (ε/2)‖x − x₀‖²   subject to   g_L ≤ g(x) + p − n ≤ g_U,
//!          p, n ≥ 0,   x_L ≤ x ≤ x_U,   0 ≤ G_i(x) ⊥ H_i(x) ≥ 0
//! ```
//!
//! (p_i only on rows with a finite lower bound, n_i only on rows with a finite upper one; the
//! proximal term with ε = 1e-4 keeps the variables that no row constrains near the start x₀,
//! as IPOPT's restoration phase does: without it an interior-point BNLP drives a free side
//! with no cost towards infinity, out of any trust region; the ℓ1 violation stays exact while
//! the constraints' multipliers needed to hold ε(x − x₀) are below 1), is
//! an MPCC whose every branch NLP is feasible wherever the branch's bounds are consistent. Its
//! phase II (LPECs on the ℓ1 violation, branch NLPs, trust region) starts from the branch of
//! any point, with slacks that make the point feasible, and changes branches until the
//! violation is B-stationary (certified on a trust region widened tenfold, up to 1000 times
//! the phase-II radius, while the violation is positive; back to the phase-II radius after
//! each accepted branch). At zero violation (or a largest slack below 1e-3, which the
//! proximal term may hold) the branch's own BNLP is solved from the point: feasible, it ends
//! phase I. At a positive violation certified on the widest region the MPCC is locally
//! infeasible (no branch near the point meets the constraints, to first order).

use super::branch::bnlp_tol;
use super::descent::{descend, rounded_branch, tighten, Run};
use super::{con_bounds, Mpcc, MpccError, Verdict};
use crate::nlp::ipopt::{IpoptSolution, Nlp};

/// Bounds at or beyond this magnitude are infinite (IPOPT's convention).
const INF: f64 = 1e19;

/// Largest slack at which a certified point's branch is tried on the original MPCC: the
/// proximal term can hold a violation of the order ε‖x − x₀‖ that the branch's own NLP
/// removes.
const TRY_ORIGINAL: f64 = 1e-3;

/// The widest trust region of the feasibility phase, in units of the phase-II radius: a
/// positive violation is certified only where no branch within 1000 ρ₀ lowers it (to first
/// order), so that a pair far from biactive can still change its branch.
const WIDEST: f64 = 1e3;

/// Weight ε of the proximal term (module docs).
const PROXIMAL_WEIGHT: f64 = 1e-4;

/// The elastic NLP: `inner`'s variables, then one slack per finite side of every row
/// (objective: their sum and the proximal term; the rows `g(x) + p − n`).
pub struct ElasticNlp<'a> {
    inner: &'a dyn Nlp,
    /// Per slack column (after the n variables): its row and its sign in that row.
    slacks: Vec<(usize, f64)>,
    /// The proximal term's centre x₀.
    reference: Vec<f64>,
}

impl<'a> ElasticNlp<'a> {
    /// The elastic version of `inner`, its proximal term centred at `reference`.
    pub fn new(inner: &'a dyn Nlp, reference: &[f64]) -> Self {
        let (gl, gu) = con_bounds(inner);
        let mut slacks = vec![];
        for (row, (l, u)) in gl.iter().zip(&gu).enumerate() {
            if *l > -INF {
                slacks.push((row, 1.0));
            }
            if *u < INF {
                slacks.push((row, -1.0));
            }
        }
        Self {
            inner,
            slacks,
            reference: reference.to_vec(),
        }
    }

    /// Number of variables of the inner NLP.
    pub fn inner_vars(&self) -> usize {
        self.inner.num_vars()
    }

    /// The point `x` of the inner NLP with the slacks that make every row hold (`None` if
    /// the constraints cannot be evaluated at `x`).
    pub fn start(&self, x: &[f64]) -> Option<Vec<f64>> {
        let m = self.inner.num_cons();
        let mut g = vec![0.0; m];
        if !self.inner.constraints(x, &mut g) {
            return None;
        }
        let (gl, gu) = con_bounds(self.inner);
        let mut z = x.to_vec();
        z.extend(self.slacks.iter().map(|(row, sign)| {
            if *sign > 0.0 {
                (gl[*row] - g[*row]).max(0.0)
            } else {
                (g[*row] - gu[*row]).max(0.0)
            }
        }));
        Some(z)
    }

    /// The ℓ1 violation (sum of the slacks) of an elastic point.
    pub fn violation(&self, z: &[f64]) -> f64 {
        z[self.inner_vars()..].iter().sum()
    }

    /// The largest slack of an elastic point.
    pub fn largest_slack(&self, z: &[f64]) -> f64 {
        z[self.inner_vars()..]
            .iter()
            .fold(0.0_f64, |a, s| a.max(s.abs()))
    }
}

impl Nlp for ElasticNlp<'_> {
    fn num_vars(&self) -> usize {
        self.inner.num_vars() + self.slacks.len()
    }
    fn num_cons(&self) -> usize {
        self.inner.num_cons()
    }
    fn var_bounds(&self, lo: &mut [f64], hi: &mut [f64]) {
        let n = self.inner.num_vars();
        self.inner.var_bounds(&mut lo[..n], &mut hi[..n]);
        lo[n..].fill(0.0);
        hi[n..].fill(1e20);
    }
    fn con_bounds(&self, lo: &mut [f64], hi: &mut [f64]) {
        self.inner.con_bounds(lo, hi)
    }
    fn jacobian_structure(&self) -> Vec<(usize, usize)> {
        let n = self.inner.num_vars();
        let mut s = self.inner.jacobian_structure();
        s.extend(
            self.slacks
                .iter()
                .enumerate()
                .map(|(k, (row, _))| (*row, n + k)),
        );
        s
    }
    fn hessian_structure(&self) -> Vec<(usize, usize)> {
        let mut s = self.inner.hessian_structure();
        s.extend((0..self.inner.num_vars()).map(|j| (j, j)));
        s
    }
    fn objective(&self, x: &[f64]) -> Option<f64> {
        let n = self.inner.num_vars();
        let proximal: f64 = x[..n]
            .iter()
            .zip(&self.reference)
            .map(|(a, r)| (a - r) * (a - r))
            .sum();
        Some(x[n..].iter().sum::<f64>() + 0.5 * PROXIMAL_WEIGHT * proximal)
    }
    fn gradient(&self, x: &[f64], grad: &mut [f64]) -> bool {
        let n = self.inner.num_vars();
        for ((g, a), r) in grad[..n].iter_mut().zip(&x[..n]).zip(&self.reference) {
            *g = PROXIMAL_WEIGHT * (a - r);
        }
        grad[n..x.len()].fill(1.0);
        true
    }
    fn constraints(&self, x: &[f64], g: &mut [f64]) -> bool {
        let n = self.inner.num_vars();
        if !self.inner.constraints(&x[..n], g) {
            return false;
        }
        for (k, (row, sign)) in self.slacks.iter().enumerate() {
            g[*row] += sign * x[n + k];
        }
        true
    }
    fn jacobian_values(&self, x: &[f64], vals: &mut [f64]) -> bool {
        let n = self.inner.num_vars();
        let inner = vals.len() - self.slacks.len();
        if !self.inner.jacobian_values(&x[..n], &mut vals[..inner]) {
            return false;
        }
        for (v, (_, sign)) in vals[inner..].iter_mut().zip(&self.slacks) {
            *v = *sign;
        }
        true
    }
    fn hessian_values(&self, x: &[f64], obj_factor: f64, lambda: &[f64], vals: &mut [f64]) -> bool {
        // the slacks enter linearly: the constraints' curvature and the proximal diagonal
        let n = self.inner.num_vars();
        let inner = vals.len() - n;
        if !self
            .inner
            .hessian_values(&x[..n], 0.0, lambda, &mut vals[..inner])
        {
            return false;
        }
        vals[inner..].fill(obj_factor * PROXIMAL_WEIGHT);
        true
    }
}

/// Phase I from any point `x0` by the feasibility MPCC (module docs): a feasible branch of
/// `mpcc` and its BNLP solution, or why none was found.
///
/// # Errors
/// [`MpccError::LocallyInfeasible`] when the ℓ1 violation is B-stationary above the BNLPs'
/// tolerance; [`MpccError::NoFeasibleBranch`] when the feasibility MPCC's own phase fails
/// (its first branch NLP, a trust region that collapsed above zero violation, or the
/// original BNLP on a branch of zero violation); LPEC failures and the time limit as in
/// phase II, with the point on `mpcc`'s variables.
pub(super) fn feasible_branch(
    mpcc: &Mpcc<'_>,
    x0: &[f64],
    run: &mut Run<'_>,
) -> Result<(Vec<bool>, IpoptSolution), MpccError> {
    let s = run.settings;
    let elastic = ElasticNlp::new(mpcc.nlp, x0);
    let n = elastic.inner_vars();
    let problem = Mpcc {
        nlp: &elastic,
        pairs: mpcc.pairs.clone(),
    };
    let no_branch = |reason: String, x: &[f64]| MpccError::NoFeasibleBranch {
        reason,
        relaxed: x[..n].to_vec(),
    };
    let z0 = elastic.start(x0).ok_or_else(|| {
        no_branch(
            "the constraints cannot be evaluated at the start point".into(),
            x0,
        )
    })?;
    let branch = rounded_branch(&problem, &z0, None);
    let start = run
        .labelled_branch(&problem, &branch, &z0, "feasibility phase, rounded branch")
        .map_err(|e| {
            no_branch(
                format!("the feasibility MPCC's first branch NLP failed: {e}"),
                x0,
            )
        })?;
    let tol = feasibility_tol(s);
    let on_inner = |e: MpccError| match e {
        MpccError::Lpec { source, x } => MpccError::Lpec {
            source,
            x: x[..n.min(x.len())].to_vec(),
        },
        MpccError::TimeLimit { limit, x } => MpccError::TimeLimit {
            limit,
            x: x[..n.min(x.len())].to_vec(),
        },
        other => other,
    };
    let (mut branch, mut sol, mut rho) = (branch, start, s.trust_region);
    loop {
        let (b, found, verdict) =
            descend(&problem, branch, sol, run, rho, true).map_err(on_inner)?;
        (branch, sol) = (b, found);
        let violation = elastic.largest_slack(&sol.x);
        let x = &sol.x[..n];
        // at zero violation, or where the proximal term may hold a small one, the branch's
        // own NLP decides
        if violation <= TRY_ORIGINAL {
            let label = format!("phase I, feasibility branch (largest slack {violation:.1e})");
            if let Ok(found) = run.labelled_branch(mpcc, &branch, x, &label) {
                let found = tighten(mpcc, &branch, found, run);
                return Ok((branch, found));
            }
        }
        if violation <= tol {
            return Err(no_branch(
                format!(
                    "the branch of violation {violation:.1e} found by the feasibility phase \
                     has no feasible NLP"
                ),
                x,
            ));
        }
        match verdict {
            Verdict::BStationary { trust_region, .. }
                if trust_region * 10.0 <= WIDEST * s.trust_region =>
            {
                rho = trust_region * 10.0;
            }
            Verdict::BStationary { .. } => {
                return Err(MpccError::LocallyInfeasible {
                    violation: elastic.violation(&sol.x),
                    x: x.to_vec(),
                })
            }
            Verdict::NotCertified { reason } => {
                return Err(no_branch(
                    format!(
                        "the feasibility phase ended at violation {violation:.2e} without a \
                         certificate: {reason}"
                    ),
                    x,
                ))
            }
        }
    }
}

/// Largest slack of a feasibility-phase point that counts as feasible: a hundred times the
/// BNLPs' tolerance (an interior-point solution leaves its slacks ≈ μ above their bound).
fn feasibility_tol(s: &super::ActiveSetSettings) -> f64 {
    100.0 * bnlp_tol(&s.bnlp)
}
