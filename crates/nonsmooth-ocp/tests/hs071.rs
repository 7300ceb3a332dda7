//! IPOPT FFI and block NLP on Hock–Schittkowski problem 71 (f* = 17.0140173).

use nonsmooth_ocp::ipopt::{solve, IpoptOptions, Nlp};
use nonsmooth_ocp::nlp::{BlockFn, BlockNlp, Real};

enum Hs {
    Obj,
    Cons,
}

impl BlockFn for Hs {
    fn eval<T: Real>(&self, x: &[T], out: &mut [T]) {
        match self {
            Hs::Obj => out[0] = x[0] * x[3] * (x[0] + x[1] + x[2]) + x[2],
            Hs::Cons => {
                out[0] = x[0] * x[1] * x[2] * x[3];
                out[1] = x[0] * x[0] + x[1] * x[1] + x[2] * x[2] + x[3] * x[3];
            }
        }
    }
}

fn hs071() -> BlockNlp<Hs> {
    let mut nlp = BlockNlp::default();
    nlp.add_vars(4, 1.0, 5.0);
    nlp.add_objective(Hs::Obj, vec![0, 1, 2, 3]).unwrap();
    nlp.add_constraint(Hs::Cons, vec![0, 1, 2, 3], &[25.0, 40.0], &[2e19, 40.0])
        .unwrap();
    nlp
}

#[test]
fn hs071_optimum() {
    let nlp = hs071();
    let sol = solve(
        &nlp,
        &[1.0, 5.0, 5.0, 1.0],
        None,
        &IpoptOptions::quiet(1e-10, 100),
    )
    .unwrap();
    assert!(
        (sol.objective - 17.014_017_14).abs() < 1e-6,
        "{}",
        sol.objective
    );
    let xs = [1.0, 4.742_999_64, 3.821_149_98, 1.379_408_29];
    for (a, b) in sol.x.iter().zip(xs) {
        assert!((a - b).abs() < 1e-6);
    }
    assert!(sol.constraint_violation < 1e-7);
    assert!(sol.iterations > 3 && sol.iterations < 30);
}

#[test]
fn hs071_derivatives_match_finite_differences() {
    let nlp = hs071();
    let x = [1.3, 4.1, 3.7, 1.9];
    let lam = [0.7, -1.3];
    let s = nlp.jacobian_structure();
    let mut jv = vec![0.0; s.len()];
    assert!(nlp.jacobian_values(&x, &mut jv));
    let eps = 1e-6;
    for (k, (r, c)) in s.iter().enumerate() {
        let (mut xp, mut xm) = (x, x);
        xp[*c] += eps;
        xm[*c] -= eps;
        let (_, gp) = nlp.eval_all(&xp);
        let (_, gm) = nlp.eval_all(&xm);
        assert!((jv[k] - (gp[*r] - gm[*r]) / (2.0 * eps)).abs() < 1e-6);
    }
    let hs = nlp.hessian_structure();
    let mut hv = vec![0.0; hs.len()];
    assert!(nlp.hessian_values(&x, 2.0, &lam, &mut hv));
    let mut h = [[0.0; 4]; 4];
    for (k, (r, c)) in hs.iter().enumerate() {
        h[*r][*c] += hv[k];
    }
    let grad_l = |x: &[f64; 4]| {
        let mut gf = vec![0.0; 4];
        nlp.gradient(x, &mut gf);
        let mut jv = vec![0.0; s.len()];
        nlp.jacobian_values(x, &mut jv);
        let mut g = gf.iter().map(|v| 2.0 * v).collect::<Vec<_>>();
        for (k, (r, c)) in s.iter().enumerate() {
            g[*c] += lam[*r] * jv[k];
        }
        g
    };
    for c in 0..4 {
        let (mut xp, mut xm) = (x, x);
        xp[c] += eps;
        xm[c] -= eps;
        let (gp, gm) = (grad_l(&xp), grad_l(&xm));
        for r in c..4 {
            let fd = (gp[r] - gm[r]) / (2.0 * eps);
            assert!(
                (h[r][c] - fd).abs() < 1e-5,
                "H[{r}][{c}] {} vs {fd}",
                h[r][c]
            );
        }
    }
}

/// A block NLP large enough for the thread pool (3000 blocks, 30 000 Hessian entries)
/// returns, block by block, exactly the derivatives of the same block evaluated alone (in
/// the one-block problem, below the pool's threshold): the parallel evaluation changes no
/// bit, so solves do not depend on the number of threads.
#[test]
fn pooled_derivatives_equal_the_blocks_evaluated_alone() {
    let n = 1500;
    let mut big = BlockNlp::default();
    big.add_vars(n + 3, 1.0, 5.0);
    for k in 0..n {
        let vars: Vec<usize> = (k..k + 4).collect();
        big.add_objective(Hs::Obj, vars.clone()).unwrap();
        big.add_constraint(Hs::Cons, vars, &[25.0, 40.0], &[2e19, 40.0])
            .unwrap();
    }
    let x: Vec<f64> = (0..n + 3)
        .map(|i| 1.0 + (i as f64 * 0.37).sin().abs() * 4.0)
        .collect();
    let lam: Vec<f64> = (0..2 * n).map(|r| (r as f64 * 0.11).cos()).collect();
    let (obj_factor, small) = (0.7, hs071());
    let mut hess = vec![0.0; big.hessian_structure().len()];
    let mut jac = vec![0.0; big.jacobian_structure().len()];
    assert!(hess.len() >= 30_000);
    assert!(big.hessian_values(&x, obj_factor, &lam, &mut hess));
    assert!(big.jacobian_values(&x, &mut jac));
    let (mut h1, mut j1) = (vec![0.0; 20], vec![0.0; 8]);
    for k in 0..n {
        let xs = &x[k..k + 4];
        assert!(small.hessian_values(xs, obj_factor, &lam[2 * k..2 * k + 2], &mut h1));
        assert!(small.jacobian_values(xs, &mut j1));
        assert_eq!(
            &hess[20 * k..20 * k + 20],
            &h1[..],
            "Hessian of block pair {k}"
        );
        assert_eq!(&jac[8 * k..8 * k + 8], &j1[..], "Jacobian of block {k}");
    }
}
