//! MacMPEC test problems (Leyffer's collection of MPECs; the AMPL models' data as in Pyomo's
//! `examples/mpec/macmpec`) with known solutions: small quadratic programs with
//! complementarity constraints for checking and timing [`super::solve`]. General
//! complementarity functions are lifted into slack variables with equality rows, as the
//! method requires (bard1).

use super::{Pair, Side};
use crate::nlp::ipopt::Nlp;

/// f = ½ xᵀQx + cᵀx + c₀ with linear rows g_L ≤ A x ≤ g_U; `q` holds the lower triangle.
pub struct Quadratic {
    n: usize,
    /// Lower triangle of Q: (row, column, value), row ≥ column.
    pub q: Vec<(usize, usize, f64)>,
    /// Linear term c.
    pub c: Vec<f64>,
    /// Constant c₀.
    pub c0: f64,
    a: Vec<(usize, usize, f64)>,
    gl: Vec<f64>,
    gu: Vec<f64>,
    xl: Vec<f64>,
    xu: Vec<f64>,
}

impl Quadratic {
    /// n free variables, f = 0, no rows.
    pub fn new(n: usize) -> Self {
        Self {
            n,
            q: vec![],
            c: vec![0.0; n],
            c0: 0.0,
            a: vec![],
            gl: vec![],
            gu: vec![],
            xl: vec![-1e20; n],
            xu: vec![1e20; n],
        }
    }
    /// Adds the row lo ≤ Σ coef x_j ≤ hi.
    pub fn row(mut self, coefs: &[(usize, f64)], lo: f64, hi: f64) -> Self {
        let r = self.gl.len();
        self.a.extend(coefs.iter().map(|(j, v)| (r, *j, *v)));
        self.gl.push(lo);
        self.gu.push(hi);
        self
    }
    /// Lower bound 0 on `vars`.
    pub fn nonnegative(mut self, vars: &[usize]) -> Self {
        for j in vars {
            self.xl[*j] = 0.0;
        }
        self
    }
}

impl Nlp for Quadratic {
    fn num_vars(&self) -> usize {
        self.n
    }
    fn num_cons(&self) -> usize {
        self.gl.len()
    }
    fn var_bounds(&self, lo: &mut [f64], hi: &mut [f64]) {
        lo.copy_from_slice(&self.xl);
        hi.copy_from_slice(&self.xu);
    }
    fn con_bounds(&self, lo: &mut [f64], hi: &mut [f64]) {
        lo.copy_from_slice(&self.gl);
        hi.copy_from_slice(&self.gu);
    }
    fn jacobian_structure(&self) -> Vec<(usize, usize)> {
        self.a.iter().map(|(r, c, _)| (*r, *c)).collect()
    }
    fn hessian_structure(&self) -> Vec<(usize, usize)> {
        self.q.iter().map(|(r, c, _)| (*r, *c)).collect()
    }
    fn objective(&self, x: &[f64]) -> Option<f64> {
        let quad: f64 = self
            .q
            .iter()
            .map(|(i, j, v)| {
                if i == j {
                    0.5 * v * x[*i] * x[*i]
                } else {
                    v * x[*i] * x[*j]
                }
            })
            .sum();
        Some(quad + self.c.iter().zip(x).map(|(c, x)| c * x).sum::<f64>() + self.c0)
    }
    fn gradient(&self, x: &[f64], grad: &mut [f64]) -> bool {
        grad.copy_from_slice(&self.c);
        for (i, j, v) in &self.q {
            grad[*i] += v * x[*j];
            if i != j {
                grad[*j] += v * x[*i];
            }
        }
        true
    }
    fn constraints(&self, x: &[f64], g: &mut [f64]) -> bool {
        g.fill(0.0);
        for (r, c, v) in &self.a {
            g[*r] += v * x[*c];
        }
        true
    }
    fn jacobian_values(&self, _x: &[f64], vals: &mut [f64]) -> bool {
        for (k, (_, _, v)) in self.a.iter().enumerate() {
            vals[k] = *v;
        }
        true
    }
    fn hessian_values(&self, _x: &[f64], obj_factor: f64, _l: &[f64], vals: &mut [f64]) -> bool {
        for (k, (_, _, v)) in self.q.iter().enumerate() {
            vals[k] = obj_factor * v;
        }
        true
    }
}

/// The pair x_g ⊥ x_h.
pub fn pair(g: usize, h: usize) -> Pair {
    Pair {
        g: Side::var(g),
        h: Side::var(h),
    }
}

/// A MacMPEC problem: its NLP, pairs, start point and known optimal value.
pub struct Case {
    /// MacMPEC's name.
    pub name: &'static str,
    /// The smooth part.
    pub nlp: Quadratic,
    /// The complementarity pairs.
    pub pairs: Vec<Pair>,
    /// The model's start point.
    pub x0: Vec<f64>,
    /// The known optimal value.
    pub optimum: f64,
}

/// ralph1, ralph2, scholtes3, scholtes4, kth1, kth2, kth3 and bard1.
pub fn cases() -> Vec<Case> {
    // ralph1: min 2x − y, 0 ≤ y ⊥ y − x ≥ 0, x, y ≥ 0 (s = y − x). Optimum 0 at the origin,
    // B-stationary but not strongly stationary (the model's comment).
    let mut ralph1 = Quadratic::new(3)
        .row(&[(1, 1.0), (0, -1.0), (2, -1.0)], 0.0, 0.0)
        .nonnegative(&[0, 1]);
    ralph1.c = vec![2.0, -1.0, 0.0];
    // ralph2: min x² + y² − 4xy, 0 ≤ x ⊥ y ≥ 0: 0 at the origin.
    let mut ralph2 = Quadratic::new(2);
    ralph2.q = vec![(0, 0, 2.0), (1, 1, 2.0), (1, 0, -4.0)];
    // scholtes3: min ½((x₁ − 1)² + (x₂ − 1)²), 0 ≤ x₁ ⊥ x₂ ≥ 0 from (1e-4, 1e-4): the
    // solutions (1, 0) and (0, 1) with ½; the origin is a spurious (C-)stationary point.
    let mut scholtes3 = Quadratic::new(2);
    scholtes3.q = vec![(0, 0, 1.0), (1, 1, 1.0)];
    scholtes3.c = vec![-1.0, -1.0];
    scholtes3.c0 = 1.0;
    // scholtes4: min z₁ + z₂ − z₃, z₃ ≤ 4z₁, z₃ ≤ 4z₂, 0 ≤ z₁ ⊥ z₂ ≥ 0: 0 at the origin.
    let mut scholtes4 = Quadratic::new(3)
        .row(&[(0, -4.0), (2, 1.0)], -1e20, 0.0)
        .row(&[(1, -4.0), (2, 1.0)], -1e20, 0.0);
    scholtes4.c = vec![1.0, 1.0, -1.0];
    // kth1: min z₁ + z₂: 0.  kth2: min z₁ + (z₂ − 1)²: 0 at (0, 1).
    // kth3: min ½(z₁ − 1)² + (z₂ − 1)² from (0, 1): ½ at (0, 1).
    let mut kth1 = Quadratic::new(2);
    kth1.c = vec![1.0, 1.0];
    let mut kth2 = Quadratic::new(2);
    kth2.q = vec![(1, 1, 2.0)];
    kth2.c = vec![1.0, -2.0];
    kth2.c0 = 1.0;
    let mut kth3 = Quadratic::new(2);
    kth3.q = vec![(0, 0, 1.0), (1, 1, 2.0)];
    kth3.c = vec![-1.0, -2.0];
    kth3.c0 = 1.5;
    // bard1 (Bard 1988): min (x − 5)² + (2y + 1)² s.t. the lower level's KKT conditions
    // 2(y − 1) − 1.5x + l₁ − ½l₂ + l₃ = 0, 0 ≤ 3x − y − 3 ⊥ l₁ ≥ 0,
    // 0 ≤ −x + ½y + 4 ⊥ l₂ ≥ 0, 0 ≤ −x − y + 7 ⊥ l₃ ≥ 0; x, y ≥ 0. MacMPEC: 17 at (1, 0).
    // Variables x, y, l₁..l₃, s₁..s₃ (s = the lower-level constraint values).
    let mut bard1 = Quadratic::new(8)
        .row(
            &[(0, -1.5), (1, 2.0), (2, 1.0), (3, -0.5), (4, 1.0)],
            2.0,
            2.0,
        )
        .row(&[(5, 1.0), (0, -3.0), (1, 1.0)], -3.0, -3.0)
        .row(&[(6, 1.0), (0, 1.0), (1, -0.5)], 4.0, 4.0)
        .row(&[(7, 1.0), (0, 1.0), (1, 1.0)], 7.0, 7.0)
        .nonnegative(&[0, 1]);
    bard1.q = vec![(0, 0, 2.0), (1, 1, 8.0)];
    bard1.c = vec![-10.0, 4.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
    bard1.c0 = 26.0;
    vec![
        Case {
            name: "ralph1",
            nlp: ralph1,
            pairs: vec![pair(1, 2)],
            x0: vec![0.0; 3],
            optimum: 0.0,
        },
        Case {
            name: "ralph2",
            nlp: ralph2,
            pairs: vec![pair(0, 1)],
            x0: vec![1.0, 1.0],
            optimum: 0.0,
        },
        Case {
            name: "scholtes3",
            nlp: scholtes3,
            pairs: vec![pair(0, 1)],
            x0: vec![1e-4, 1e-4],
            optimum: 0.5,
        },
        Case {
            name: "scholtes4",
            nlp: scholtes4,
            pairs: vec![pair(0, 1)],
            x0: vec![0.0, 1.0, 0.0],
            optimum: 0.0,
        },
        Case {
            name: "kth1",
            nlp: kth1,
            pairs: vec![pair(0, 1)],
            x0: vec![0.0, 0.0],
            optimum: 0.0,
        },
        Case {
            name: "kth2",
            nlp: kth2,
            pairs: vec![pair(0, 1)],
            x0: vec![0.0, 1.0],
            optimum: 0.0,
        },
        Case {
            name: "kth3",
            nlp: kth3,
            pairs: vec![pair(0, 1)],
            x0: vec![0.0, 1.0],
            optimum: 0.5,
        },
        Case {
            name: "bard1",
            nlp: bard1,
            pairs: vec![pair(5, 2), pair(6, 3), pair(7, 4)],
            x0: vec![0.0; 8],
            optimum: 17.0,
        },
    ]
}
