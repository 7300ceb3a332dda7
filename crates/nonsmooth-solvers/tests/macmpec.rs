//! The MPCC active-set method on MacMPEC problems (Leyffer's collection; the AMPL models'
//! data as in Pyomo's `examples/mpec/macmpec`) with known solutions, several of them
//! chosen because relaxation methods stop at spurious points there. General complementarity
//! functions are lifted into slack variables with equality rows, as the method requires.
#![cfg(feature = "mpcc")]

use nonsmooth_solvers::mpcc::{solve, solve_from_relaxed, ActiveSetSettings, Mpcc, Pair, Side};
use nonsmooth_solvers::nlp::ipopt::Nlp;

/// f = ½ xᵀQx + cᵀx + c₀ with linear rows g_L ≤ A x ≤ g_U; `q` holds the lower triangle.
struct Quadratic {
    n: usize,
    q: Vec<(usize, usize, f64)>,
    c: Vec<f64>,
    c0: f64,
    a: Vec<(usize, usize, f64)>,
    gl: Vec<f64>,
    gu: Vec<f64>,
    xl: Vec<f64>,
    xu: Vec<f64>,
}

impl Quadratic {
    fn new(n: usize) -> Self {
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
    fn row(mut self, coefs: &[(usize, f64)], lo: f64, hi: f64) -> Self {
        let r = self.gl.len();
        self.a.extend(coefs.iter().map(|(j, v)| (r, *j, *v)));
        self.gl.push(lo);
        self.gu.push(hi);
        self
    }
    fn nonnegative(mut self, vars: &[usize]) -> Self {
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

fn pair(g: usize, h: usize) -> Pair {
    Pair {
        g: Side::var(g),
        h: Side::var(h),
    }
}

/// A MacMPEC problem: its NLP, pairs, start point, the known optimal value and where it
/// comes from.
struct Case {
    name: &'static str,
    nlp: Quadratic,
    pairs: Vec<Pair>,
    x0: Vec<f64>,
    optimum: f64,
}

fn cases() -> Vec<Case> {
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

/// Every problem: exact complementarity, a B-stationarity certificate and the known value.
#[test]
fn macmpec_problems_reach_their_known_solutions_with_a_certificate() {
    for case in cases() {
        let mpcc = Mpcc {
            nlp: &case.nlp,
            pairs: case.pairs.clone(),
        };
        let s = solve(&mpcc, &case.x0, &ActiveSetSettings::default())
            .unwrap_or_else(|e| panic!("{}: {e}", case.name));
        println!(
            "{:<10} f = {:>12.9}  (known {:>5})  {:?}  comp {:.1e}  LPECs {}  BNLPs {}  relaxed {}",
            case.name,
            s.solution.objective,
            case.optimum,
            s.verdict,
            s.comp_residual,
            s.lpec_count,
            s.bnlp_count,
            s.relaxed_count
        );
        assert!(
            s.verdict.is_b_stationary(),
            "{}: {:?}",
            case.name,
            s.verdict
        );
        assert!(
            s.comp_residual <= 1e-12,
            "{}: {}",
            case.name,
            s.comp_residual
        );
        assert!(
            (s.solution.objective - case.optimum).abs() <= 1e-6,
            "{}: f = {} against {}",
            case.name,
            s.solution.objective,
            case.optimum
        );
    }
}

/// Phase II leaves a branch optimum that is not B-stationary: min (x − 1)² + y² with
/// 0 ≤ x ⊥ y ≥ 0 projected from (0, 0.5) onto the branch x = 0, whose optimum is the
/// biactive origin (f = 1); the LPEC there finds the descent along x on the branch y = 0 and
/// the method ends at (1, 0) with f = 0, certified.
#[test]
fn phase_two_leaves_a_branch_optimum_that_is_not_b_stationary() {
    let mut nlp = Quadratic::new(2);
    nlp.q = vec![(0, 0, 2.0), (1, 1, 2.0)];
    nlp.c = vec![-2.0, 0.0];
    nlp.c0 = 1.0;
    let mpcc = Mpcc {
        nlp: &nlp,
        pairs: vec![pair(0, 1)],
    };
    let s = solve_from_relaxed(&mpcc, &[0.0, 0.5], &ActiveSetSettings::default()).unwrap();
    let first = s.log.iter().find(|l| l.kind == "bnlp").unwrap();
    assert!((first.objective - 1.0).abs() < 1e-6, "{:?}", s.log);
    assert!(s.solution.objective.abs() < 1e-9, "{s:?}");
    assert!(
        (s.solution.x[0] - 1.0).abs() < 1e-6 && s.solution.x[1] == 0.0,
        "{s:?}"
    );
    assert!(s.verdict.is_b_stationary(), "{s:?}");
}

/// Bad pairs and settings are typed errors naming the pair or the setting.
#[test]
fn bad_pairs_and_settings_are_named() {
    let nlp = Quadratic::new(2);
    let bad = Mpcc {
        nlp: &nlp,
        pairs: vec![pair(0, 5)],
    };
    let e = solve(&bad, &[0.0, 0.0], &ActiveSetSettings::default()).unwrap_err();
    assert!(e.to_string().contains("pair 0"), "{e}");
    let same = Mpcc {
        nlp: &nlp,
        pairs: vec![pair(1, 1)],
    };
    assert!(solve(&same, &[0.0, 0.0], &ActiveSetSettings::default()).is_err());
    let ok = Mpcc {
        nlp: &nlp,
        pairs: vec![pair(0, 1)],
    };
    let settings = ActiveSetSettings {
        trust_region_shrink: 1.5,
        ..ActiveSetSettings::default()
    };
    let e = solve(&ok, &[0.0, 0.0], &settings).unwrap_err();
    assert!(e.to_string().contains("trust_region_shrink"), "{e}");
}
