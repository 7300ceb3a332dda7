//! Infeasibility of the MPCC, said as such: a penalty (or elastic) homotopy whose relaxed
//! NLPs meet every constraint but keep the complementarity violation while σ falls by
//! decades has found no contact-consistent trajectory ([`stagnation`]); the constraints that
//! bind at its last point are read from the stationarity of the Lagrangian
//! ([`binding_constraints`]).
//!
//! Why the stagnation test is sound: the ℓ1-penalty NLP minimizes J + (1/σ) C(x) over the
//! constraints, C ≥ 0 the complementarity violation. Where the MPCC is feasible near the
//! homotopy's path, the penalty is exact — below a finite σ̄ (1/σ̄ above the multipliers'
//! norm) its minimizers have C = 0 — so C falls to zero as σ passes σ̄. Where C stays at the
//! same positive value over several decades of σ, the NLPs are minimizing C itself: its
//! local minimum under the constraints is positive, and no trajectory that satisfies the
//! complementarity constraints (the contact laws) meets the terminal and path constraints
//! there. A stagnation can also be the homotopy's own (a switch the discretization does not
//! resolve, whatever the target), so the homotopy tests it once by solving the relaxed NLP
//! again with the terminal values released: only when C then falls tenfold is the target
//! what the contact laws cannot meet. The elastic mode (one slack s ≥ C with the objective
//! weight 1/σ) behaves alike.
//! The Scholtes relaxation (C ≤ σ as a constraint) cannot stagnate: an infeasible MPCC
//! shows there as an NLP that IPOPT reports infeasible.

use super::blocks::FesdBlock;
use super::layout::Layout;
use super::relaxed_nlp::NlpLog;
use crate::ipopt::{IpoptSolution, Nlp};
use crate::nlp::BlockNlp;

/// Whether the converged NLPs of a homotopy `log` show a stagnating complementarity: the
/// last converged NLP's residual is above `floor` and at least half the residual of an
/// earlier converged NLP whose σ was `10^decades` times larger or more (`decades > 0`; 0
/// turns the test off). Returns the σ of that earlier NLP.
pub(crate) fn stagnation(log: &[NlpLog], floor: f64, decades: f64) -> Option<f64> {
    if decades <= 0.0 {
        return None;
    }
    let converged: Vec<&NlpLog> = log.iter().filter(|l| l.status.is_success()).collect();
    let last = converged.last()?;
    if last.comp_residual <= floor || last.comp_residual.is_nan() {
        return None;
    }
    let ratio = 10f64.powf(decades);
    converged
        .iter()
        .rev()
        .find(|l| l.sigma >= last.sigma * ratio * (1.0 - 1e-12))
        .filter(|l| last.comp_residual >= 0.5 * l.comp_residual)
        .map(|l| l.sigma)
}

/// What [`OcpError::Unreachable`](crate::OcpError::Unreachable) reports: the residual that
/// stagnated, over which σ, and the constraints that bind at the last point.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Unreachability {
    /// Complementarity residual of the last relaxed NLP.
    pub comp_residual: f64,
    /// Constraint violation of the last relaxed NLP.
    pub constraint_violation: f64,
    /// σ of the earlier NLP whose residual was not halved.
    pub sigma_from: f64,
    /// σ of the last relaxed NLP.
    pub sigma: f64,
    /// The constraints on the state that bind at the last point, largest sensitivity first.
    pub binding: Vec<BindingConstraint>,
}

impl std::fmt::Display for Unreachability {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "no contact-consistent solution found: the target appears unreachable \
             (complementarity {:.3e} did not decrease while σ fell from {:.1e} to {:.1e}, \
             constraint violation {:.1e}); binding: ",
            self.comp_residual, self.sigma_from, self.sigma, self.constraint_violation
        )?;
        if self.binding.is_empty() {
            return write!(
                f,
                "none of the state's bounds (the contact laws themselves cannot be met)"
            );
        }
        for (k, b) in self.binding.iter().enumerate() {
            let sep = if k == 0 { "" } else { ", " };
            write!(f, "{sep}{b}")?;
        }
        Ok(())
    }
}

/// What a binding constraint restricts.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum BindingKind {
    /// A fixed component of the final state ([`Horizon::terminal`](super::Horizon::terminal)).
    Terminal {
        /// Its index in y = (q, v, t).
        component: usize,
        /// Its target value.
        value: f64,
    },
    /// The physical clock fixed at the control-interval ends (the horizon T).
    Clock,
    /// A state bound ([`Horizon::y_bounds`](super::Horizon::y_bounds)) met at some stage
    /// points.
    Path {
        /// Its index in y = (q, v, t).
        component: usize,
        /// The bound.
        bound: f64,
        /// The lower bound (else the upper).
        lower: bool,
    },
}

impl BindingKind {
    /// The state component it restricts (none for the clock).
    pub fn component(&self) -> Option<usize> {
        match *self {
            BindingKind::Terminal { component, .. } | BindingKind::Path { component, .. } => {
                Some(component)
            }
            BindingKind::Clock => None,
        }
    }
}

/// A constraint that binds at a point: its kind, the sensitivity of the complementarity
/// violation to it, and a name (`y[i]` until [`BindingConstraint::name_with`] gives the
/// model's coordinate names).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BindingConstraint {
    /// What it restricts.
    pub kind: BindingKind,
    /// |Σ σ (z_L − z_U)| over its variables (for the clock weighted by t_k/T): the rate at
    /// which the complementarity violation changes with the constraint's value (the target,
    /// the bound, the horizon T) — the multiplier of the penalty NLP divided by its penalty
    /// weight 1/σ.
    pub sensitivity: f64,
    /// The state component's name.
    pub name: String,
}

impl BindingConstraint {
    /// Renames the state component with `names[component]` (the model's coordinate names,
    /// then the velocities and the clock).
    pub fn name_with(&mut self, names: &[String]) {
        if let Some(n) = self.kind.component().and_then(|c| names.get(c)) {
            self.name = n.clone();
        }
    }
}

impl std::fmt::Display for BindingConstraint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.kind {
            BindingKind::Terminal { value, .. } => write!(f, "terminal {} = {value}", self.name),
            BindingKind::Clock => write!(f, "the horizon's clock"),
            BindingKind::Path { bound, lower, .. } => {
                let side = if lower { "≥" } else { "≤" };
                write!(f, "path bound {} {side} {bound}", self.name)
            }
        }?;
        write!(f, " (sensitivity {:.2e})", self.sensitivity)
    }
}

/// The constraints on the state that bind at the solution `sol` of the relaxed NLP `nlp`
/// at relaxation `sigma`, largest sensitivity first, down to 1e-3 of the largest. The bound
/// multipliers are recovered from the stationarity of the Lagrangian,
/// z_L − z_U = ∇f + Jᵀλ (IPOPT's sign convention), so that fixed variables, which IPOPT
/// removes from the problem, have theirs too.
pub(crate) fn binding_constraints(
    nlp: &BlockNlp<FesdBlock>,
    layout: &Layout,
    sol: &IpoptSolution,
    sigma: f64,
) -> Vec<BindingConstraint> {
    let z = bound_multipliers(nlp, sol);
    let ny = layout.dims.0;
    let Some(last) = layout.elems.last() else {
        return vec![];
    };
    let mut points: Vec<usize> = layout
        .elems
        .iter()
        .flat_map(|e| e.y.iter().copied().chain(std::iter::once(e.y_end)))
        .collect();
    points.sort_unstable();
    points.dedup();
    // signed sums of σ z over each constraint's variables: the derivative of the weighted
    // violation with respect to the constraint's value (a bound shifted at every stage
    // point at once; the horizon T, which places the interval end k at t_k = k T/N)
    let horizon = points
        .iter()
        .map(|&start| start + ny - 1)
        .filter(|&i| nlp.xl[i] == nlp.xu[i])
        .map(|i| nlp.xl[i])
        .fold(0.0, f64::max);
    let mut found: Vec<BindingConstraint> = vec![];
    let mut add = |kind: BindingKind, amount: f64| {
        match found.iter_mut().find(|b| b.kind == kind) {
            Some(b) => b.sensitivity += amount,
            None => found.push(BindingConstraint {
                kind,
                sensitivity: amount,
                name: kind.component().map_or("t".into(), |c| format!("y[{c}]")),
            }),
        };
    };
    for &start in &points {
        for c in 0..ny {
            let i = start + c;
            let (lo, hi, x) = (nlp.xl[i], nlp.xu[i], sol.x[i]);
            let amount = sigma * z[i];
            let at = |b: f64| b.abs() < 1e19 && (x - b).abs() <= 1e-7 * (1.0 + b.abs());
            if lo == hi {
                if c + 1 == ny {
                    if horizon > 0.0 {
                        add(BindingKind::Clock, amount * lo / horizon);
                    }
                } else if start == last.y_end {
                    add(
                        BindingKind::Terminal {
                            component: c,
                            value: lo,
                        },
                        amount,
                    );
                }
            } else if at(lo) || at(hi) {
                let lower = at(lo);
                let bound = if lower { lo } else { hi };
                add(
                    BindingKind::Path {
                        component: c,
                        bound,
                        lower,
                    },
                    amount,
                );
            }
        }
    }
    found
        .iter_mut()
        .for_each(|b| b.sensitivity = b.sensitivity.abs());
    let largest = found.iter().map(|b| b.sensitivity).fold(0.0, f64::max);
    found.retain(|b| b.sensitivity >= 1e-3 * largest);
    found.sort_by(|a, b| b.sensitivity.total_cmp(&a.sensitivity));
    found
}

/// z_L − z_U = ∇f(x) + J(x)ᵀλ at the point and multipliers of `sol` (zero where the
/// derivatives cannot be evaluated).
fn bound_multipliers(nlp: &BlockNlp<FesdBlock>, sol: &IpoptSolution) -> Vec<f64> {
    let n = nlp.num_vars();
    let mut z = vec![0.0; n];
    if !nlp.gradient(&sol.x, &mut z) {
        return vec![0.0; n];
    }
    let structure = nlp.jacobian_structure();
    let mut values = vec![0.0; structure.len()];
    if !nlp.jacobian_values(&sol.x, &mut values) {
        return vec![0.0; n];
    }
    for ((row, col), v) in structure.iter().zip(&values) {
        if let Some(l) = sol.mult_g.get(*row) {
            z[*col] += v * l;
        }
    }
    z
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ipopt::IpoptStatus;

    fn entry(sigma: f64, comp_residual: f64, status: IpoptStatus) -> NlpLog {
        NlpLog {
            sigma,
            objective: 0.0,
            comp_residual,
            iterations: 1,
            cpu_seconds: 0.0,
            status,
        }
    }

    fn log(comps: &[f64]) -> Vec<NlpLog> {
        comps
            .iter()
            .enumerate()
            .map(|(k, c)| entry(10f64.powi(-(k as i32)), *c, IpoptStatus::Succeeded))
            .collect()
    }

    #[test]
    fn a_residual_kept_over_three_decades_stagnates() {
        // not yet three decades, then three: σ = 1 → 1e-3
        assert_eq!(stagnation(&log(&[0.95, 0.95, 0.95]), 1e-4, 3.0), None);
        assert_eq!(
            stagnation(&log(&[0.95, 0.95, 0.95, 0.94]), 1e-4, 3.0),
            Some(1.0)
        );
        // halved over the three decades: not stagnating
        assert_eq!(stagnation(&log(&[0.95, 0.9, 0.8, 0.4]), 1e-4, 3.0), None);
        // below the floor, or the test turned off
        assert_eq!(stagnation(&log(&[1e-5; 4]), 1e-4, 3.0), None);
        assert_eq!(stagnation(&log(&[0.95; 6]), 1e-4, 0.0), None);
        // failed NLPs do not count
        let mut l = log(&[0.95, 0.95, 0.95]);
        l.push(entry(1e-3, 0.95, IpoptStatus::RestorationFailed));
        assert_eq!(stagnation(&l, 1e-4, 3.0), None);
    }
}
