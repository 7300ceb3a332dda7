//! Mixed-integer linear programs through HiGHS (feature `milp`; Huangfu & Hall's solver,
//! built from source by the `highs` crate with cmake).
//!
//! ```text
//! minimize cᵀx   subject to   r_lo ≤ A x ≤ r_hi,   x_lo ≤ x ≤ x_hi,   x_j ∈ ℤ for integer j
//! ```
//!
//! Built column by column ([`Milp::add_row`] first, then [`Milp::add_column`] with the column's
//! entries). The solve returns the point, its objective, HiGHS's status and measured
//! residuals (row and bound violation, integrality), or a typed [`SolverError`] for an
//! infeasible or unbounded program and a time limit reached without a feasible point.

use crate::status::SolverError;

const SOLVER: &str = "MILP (HiGHS)";

/// One column of a [`Milp`]: objective coefficient, bounds, integrality and its nonzeros.
#[derive(Debug, Clone, PartialEq)]
struct Column {
    cost: f64,
    lo: f64,
    hi: f64,
    integer: bool,
    entries: Vec<(usize, f64)>,
}

/// A mixed-integer linear program (minimization).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Milp {
    row_lo: Vec<f64>,
    row_hi: Vec<f64>,
    columns: Vec<Column>,
    start: Option<Vec<f64>>,
}

/// Settings of a [`Milp`] solve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MilpSettings {
    /// Wall-clock limit of one solve in seconds (HiGHS `time_limit`).
    pub time_limit: f64,
    /// Relative MIP gap at which branch and bound stops (HiGHS `mip_rel_gap`).
    pub mip_rel_gap: f64,
    /// Primal feasibility tolerance (HiGHS `primal_feasibility_tolerance`, also used for
    /// `mip_feasibility_tolerance`).
    pub feasibility_tol: f64,
}

impl Default for MilpSettings {
    fn default() -> Self {
        Self {
            time_limit: 60.0,
            mip_rel_gap: 1e-6,
            feasibility_tol: 1e-9,
        }
    }
}

/// How a [`Milp`] solve ended with a point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MilpStatus {
    /// Optimal within the MIP gap.
    Optimal,
    /// The time limit was reached; the point is the best feasible one found.
    TimeLimit,
}

/// The result of a [`Milp`] solve.
#[derive(Debug, Clone, PartialEq)]
pub struct MilpSolution {
    /// The point.
    pub x: Vec<f64>,
    /// cᵀx.
    pub objective: f64,
    /// How the solve ended.
    pub status: MilpStatus,
    /// HiGHS's relative MIP gap at the end (0 for a pure LP).
    pub mip_gap: f64,
    /// Largest violation of a row or column bound at `x`.
    pub bound_violation: f64,
    /// Largest distance of an integer column from the nearest integer.
    pub integrality_violation: f64,
}

impl Milp {
    /// An empty program.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the row `lo ≤ aᵀx ≤ hi` (its coefficients come with the columns); returns its
    /// index. Infinite bounds are allowed.
    pub fn add_row(&mut self, lo: f64, hi: f64) -> usize {
        self.row_lo.push(lo);
        self.row_hi.push(hi);
        self.row_lo.len() - 1
    }

    /// Adds a column with objective coefficient `cost`, bounds `lo ≤ x_j ≤ hi`, integrality and
    /// its nonzeros `(row, coefficient)`; returns its index.
    pub fn add_column(
        &mut self,
        cost: f64,
        lo: f64,
        hi: f64,
        integer: bool,
        entries: Vec<(usize, f64)>,
    ) -> usize {
        self.columns.push(Column {
            cost,
            lo,
            hi,
            integer,
            entries,
        });
        self.columns.len() - 1
    }

    /// Number of columns.
    pub fn num_cols(&self) -> usize {
        self.columns.len()
    }

    /// Number of rows.
    pub fn num_rows(&self) -> usize {
        self.row_lo.len()
    }

    /// A feasible point handed to branch and bound as its first incumbent.
    pub fn set_start(&mut self, x: Vec<f64>) {
        self.start = Some(x);
    }

    /// Checks the data: finite costs and coefficients, row indices in range, lo ≤ hi.
    fn validate(&self) -> Result<(), SolverError> {
        let invalid = |reason: String| SolverError::InvalidInput {
            solver: SOLVER,
            reason,
        };
        for (j, c) in self.columns.iter().enumerate() {
            if !c.cost.is_finite() || c.entries.iter().any(|(_, v)| !v.is_finite()) {
                return Err(SolverError::NonFinite {
                    solver: SOLVER,
                    what: "column cost or coefficient",
                });
            }
            if c.lo.is_nan() || c.hi.is_nan() || c.lo > c.hi {
                return Err(invalid(format!(
                    "column {j}: bounds [{}, {}] are empty",
                    c.lo, c.hi
                )));
            }
            if let Some((r, _)) = c.entries.iter().find(|(r, _)| *r >= self.row_lo.len()) {
                return Err(invalid(format!(
                    "column {j}: row {r} out of range ({} rows)",
                    self.row_lo.len()
                )));
            }
        }
        for (i, (lo, hi)) in self.row_lo.iter().zip(&self.row_hi).enumerate() {
            if lo.is_nan() || hi.is_nan() || lo > hi {
                return Err(invalid(format!("row {i}: bounds [{lo}, {hi}] are empty")));
            }
        }
        if let Some(s) = &self.start {
            if s.len() != self.columns.len() {
                return Err(SolverError::DimensionMismatch {
                    solver: SOLVER,
                    what: "start point",
                    expected: self.columns.len(),
                    got: s.len(),
                });
            }
        }
        Ok(())
    }

    /// Solves the program with HiGHS (one thread, quiet).
    pub fn solve(&self, settings: &MilpSettings) -> Result<MilpSolution, SolverError> {
        use highs::{ColProblem, HighsModelStatus, Sense};
        self.validate()?;
        let failed = |reason: String| SolverError::Failed {
            solver: SOLVER,
            reason,
        };
        let mut problem = ColProblem::default();
        let rows: Vec<highs::Row> = self
            .row_lo
            .iter()
            .zip(&self.row_hi)
            .map(|(lo, hi)| problem.add_row(*lo..=*hi))
            .collect();
        let any_integer = self.columns.iter().any(|c| c.integer);
        for c in &self.columns {
            let entries: Vec<(highs::Row, f64)> =
                c.entries.iter().map(|(r, v)| (rows[*r], *v)).collect();
            problem.add_column_with_integrality(c.cost, c.lo..=c.hi, entries, c.integer);
        }
        let mut model = problem
            .try_optimise(Sense::Minimise)
            .map_err(|e| failed(format!("the program was rejected: {e:?}")))?;
        model.make_quiet();
        let set = |model: &mut highs::Model, key: &str, value: f64| {
            model
                .try_set_option(key, value)
                .map_err(|e| failed(format!("option {key}: {e:?}")))
        };
        set(&mut model, "time_limit", settings.time_limit)?;
        set(
            &mut model,
            "primal_feasibility_tolerance",
            settings.feasibility_tol,
        )?;
        if any_integer {
            set(&mut model, "mip_rel_gap", settings.mip_rel_gap)?;
            set(
                &mut model,
                "mip_feasibility_tolerance",
                settings.feasibility_tol,
            )?;
        }
        model
            .try_set_option("threads", 1)
            .map_err(|e| failed(format!("option threads: {e:?}")))?;
        if let Some(start) = &self.start {
            model
                .try_set_solution(Some(start), None, None, None)
                .map_err(|e| failed(format!("start point: {e:?}")))?;
        }
        let solved = model
            .try_solve()
            .map_err(|e| failed(format!("HiGHS stopped: {e:?}")))?;
        let status = match solved.status() {
            HighsModelStatus::Optimal => MilpStatus::Optimal,
            HighsModelStatus::ReachedTimeLimit => MilpStatus::TimeLimit,
            HighsModelStatus::Infeasible => {
                return Err(SolverError::PrimalInfeasible {
                    solver: SOLVER,
                    detail: String::new(),
                })
            }
            HighsModelStatus::Unbounded | HighsModelStatus::UnboundedOrInfeasible => {
                return Err(SolverError::DualInfeasible {
                    solver: SOLVER,
                    detail: String::new(),
                })
            }
            other => return Err(failed(format!("model status {other:?}"))),
        };
        let x = solved.get_solution().columns().to_vec();
        if x.len() != self.columns.len() || x.iter().any(|v| !v.is_finite()) {
            return Err(failed(match status {
                MilpStatus::TimeLimit => "time limit reached before a feasible point".into(),
                MilpStatus::Optimal => "no finite solution returned".into(),
            }));
        }
        let (bound_violation, integrality_violation) = self.violations(&x);
        if status == MilpStatus::TimeLimit && bound_violation > 1e3 * settings.feasibility_tol {
            return Err(failed(format!(
                "time limit reached before a feasible point (violation {bound_violation:.1e})"
            )));
        }
        let objective = self.columns.iter().zip(&x).map(|(c, v)| c.cost * v).sum();
        let mip_gap = if any_integer {
            solved.mip_gap().clamp(0.0, f64::MAX)
        } else {
            0.0
        };
        Ok(MilpSolution {
            x,
            objective,
            status,
            mip_gap,
            bound_violation,
            integrality_violation,
        })
    }

    /// Largest row/bound violation and integrality violation of `x`.
    fn violations(&self, x: &[f64]) -> (f64, f64) {
        let mut ax = vec![0.0; self.row_lo.len()];
        let mut bound: f64 = 0.0;
        let mut integrality: f64 = 0.0;
        for (c, v) in self.columns.iter().zip(x) {
            for (r, a) in &c.entries {
                ax[*r] += a * v;
            }
            bound = bound.max(c.lo - v).max(v - c.hi);
            if c.integer {
                integrality = integrality.max((v - v.round()).abs());
            }
        }
        for ((lo, hi), v) in self.row_lo.iter().zip(&self.row_hi).zip(&ax) {
            bound = bound.max(lo - v).max(v - hi);
        }
        (bound.max(0.0), integrality)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A knapsack-like program whose LP relaxation is fractional: max 5a + 4b + 3c subject to
    /// 2a + 3b + c ≤ 5, 4a + b + 2c ≤ 11, 3a + 4b + 2c ≤ 8, binary a, b, c: the optimum is
    /// a = 1, b = 1, c = 0 with value 9 (enumeration of the 8 points).
    #[test]
    fn binary_program_matches_enumeration() {
        let mut p = Milp::new();
        let rows = [
            p.add_row(f64::NEG_INFINITY, 5.0),
            p.add_row(f64::NEG_INFINITY, 11.0),
        ];
        let r3 = p.add_row(f64::NEG_INFINITY, 8.0);
        let a = [(2.0, 4.0, 3.0), (3.0, 1.0, 4.0), (1.0, 2.0, 2.0)];
        let cost = [-5.0, -4.0, -3.0];
        for (j, (c1, c2, c3)) in a.iter().enumerate() {
            p.add_column(
                cost[j],
                0.0,
                1.0,
                true,
                vec![(rows[0], *c1), (rows[1], *c2), (r3, *c3)],
            );
        }
        let s = p.solve(&MilpSettings::default()).unwrap();
        assert_eq!(s.status, MilpStatus::Optimal);
        assert!((s.objective + 9.0).abs() < 1e-9, "{s:?}");
        let want = [1.0, 1.0, 0.0];
        for (x, w) in s.x.iter().zip(want) {
            assert!((x - w).abs() < 1e-9, "{s:?}");
        }
        assert!(s.bound_violation < 1e-9 && s.integrality_violation < 1e-9);
    }

    /// Infeasible and unbounded programs are typed errors, bad data an invalid-input error.
    #[test]
    fn infeasible_unbounded_and_bad_input_are_errors() {
        let mut p = Milp::new();
        let r = p.add_row(2.0, f64::INFINITY);
        p.add_column(1.0, 0.0, 1.0, false, vec![(r, 1.0)]);
        assert!(matches!(
            p.solve(&MilpSettings::default()),
            Err(SolverError::PrimalInfeasible { .. })
        ));
        let mut p = Milp::new();
        p.add_column(-1.0, 0.0, f64::INFINITY, true, vec![]);
        assert!(matches!(
            p.solve(&MilpSettings::default()),
            Err(SolverError::DualInfeasible { .. })
        ));
        let mut p = Milp::new();
        p.add_column(1.0, 0.0, 1.0, false, vec![(3, 1.0)]);
        assert!(matches!(
            p.solve(&MilpSettings::default()),
            Err(SolverError::InvalidInput { .. })
        ));
    }
}
