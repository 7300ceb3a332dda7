//! Second-order-cone programs through the conic (Clarabel) wrappers, checked against
//! closed-form optima and projections.

use nalgebra::{dmatrix, dvector, DMatrix, DVector};
use nonsmooth_solvers::conic::{project_soc, ConicOptions, Qp, SocConstraint, Socp};
use nonsmooth_solvers::SolveStatus;

#[test]
fn distance_to_point_is_zero_at_the_point() {
    // min x₀ s.t. ‖(x₁ − 1, x₂ − 2)‖ ≤ x₀ → optimum 0 at (0, 1, 2).
    let socp = Socp::new(
        Qp::lp(dvector![1.0, 0.0, 0.0]),
        vec![SocConstraint::Affine {
            m: dmatrix![0.0, 1.0, 0.0; 0.0, 0.0, 1.0],
            m0: dvector![-1.0, -2.0],
            c: dvector![1.0, 0.0, 0.0],
            d: 0.0,
        }],
    );
    let sol = socp.solve(&ConicOptions::default()).unwrap();
    assert_eq!(sol.status, SolveStatus::Solved);
    assert!(sol.objective.abs() < 1e-7, "{}", sol.objective);
    assert!(
        (sol.x[1] - 1.0).abs() < 1e-5 && (sol.x[2] - 2.0).abs() < 1e-5,
        "{}",
        sol.x
    );
    assert!(sol.residuals.max() < 1e-7, "{:?}", sol.residuals);
}

#[test]
fn distance_from_point_to_disc() {
    // min t s.t. ‖x − (3, 4)‖ ≤ t, ‖x‖ ≤ 1 (variables (t, x₀, x₁)) → t = 5 − 1 = 4,
    // x = (0.6, 0.8).
    let socp = Socp::new(
        Qp::lp(dvector![1.0, 0.0, 0.0]),
        vec![
            SocConstraint::Affine {
                m: dmatrix![0.0, 1.0, 0.0; 0.0, 0.0, 1.0],
                m0: dvector![-3.0, -4.0],
                c: dvector![1.0, 0.0, 0.0],
                d: 0.0,
            },
            // Raw block b − A x = (1, x₀, x₁) ∈ SOC(3).
            SocConstraint::Raw {
                a: dmatrix![0.0, 0.0, 0.0; 0.0, -1.0, 0.0; 0.0, 0.0, -1.0],
                b: dvector![1.0, 0.0, 0.0],
            },
        ],
    );
    let sol = socp.solve(&ConicOptions::default()).unwrap();
    assert!((sol.objective - 4.0).abs() < 1e-6, "{}", sol.objective);
    assert!(
        (sol.x[1] - 0.6).abs() < 1e-6 && (sol.x[2] - 0.8).abs() < 1e-6,
        "{}",
        sol.x
    );
}

/// Closed-form projection onto the cone ‖u‖ ≤ μ t (a Coulomb friction cone with
/// coefficient μ; t is the normal component).
fn project_friction_cone(p: &DVector<f64>, mu: f64) -> DVector<f64> {
    let t = p[0];
    let u = p.rows(1, p.len() - 1).into_owned();
    let nu = u.norm();
    if nu <= mu * t {
        p.clone()
    } else if mu * nu <= -t {
        DVector::zeros(p.len())
    } else {
        let tp = (t + mu * nu) / (1.0 + mu * mu);
        let mut out = DVector::zeros(p.len());
        out[0] = tp;
        out.rows_mut(1, p.len() - 1)
            .copy_from(&(u * (mu * tp / nu)));
        out
    }
}

fn points() -> Vec<DVector<f64>> {
    vec![
        dvector![1.0, 0.2, -0.3], // inside
        dvector![-1.0, 0.1, 0.2], // polar cone → 0
        dvector![0.5, 2.0, -1.0], // generic boundary projection
        dvector![-0.2, 1.0, 1.5], // negative normal, still projects to the boundary
        dvector![0.0, 0.0, 3.0],
    ]
}

#[test]
fn projection_onto_standard_soc_matches_closed_form() {
    for p in points() {
        // min ½‖x − p‖² s.t. x ∈ SOC(3): raw block 0 − (−I) x ∈ SOC.
        let socp = Socp::new(
            Qp::new(DMatrix::identity(3, 3), -&p),
            vec![SocConstraint::Raw {
                a: -DMatrix::identity(3, 3),
                b: DVector::zeros(3),
            }],
        );
        let sol = socp.solve(&ConicOptions::default()).unwrap();
        let exact = project_friction_cone(&p, 1.0);
        assert!(
            (&sol.x - &exact).amax() < 1e-6,
            "p = {p}: {} vs {exact}",
            sol.x
        );
        let lib = DVector::from_vec(project_soc(p.as_slice()));
        assert!((&lib - &exact).amax() < 1e-14);
    }
}

#[test]
fn projection_onto_friction_cone_matches_closed_form() {
    let mu = 0.4;
    for p in points() {
        // ‖(x₁, x₂)‖ ≤ μ x₀ as an affine SOC constraint.
        let socp = Socp::new(
            Qp::new(DMatrix::identity(3, 3), -&p),
            vec![SocConstraint::Affine {
                m: dmatrix![0.0, 1.0, 0.0; 0.0, 0.0, 1.0],
                m0: dvector![0.0, 0.0],
                c: dvector![mu, 0.0, 0.0],
                d: 0.0,
            }],
        );
        let sol = socp.solve(&ConicOptions::default()).unwrap();
        let exact = project_friction_cone(&p, mu);
        assert!(
            (&sol.x - &exact).amax() < 1e-6,
            "p = {p}: {} vs {exact}",
            sol.x
        );
        let expected_obj = 0.5 * (&exact - &p).norm_squared() - 0.5 * p.norm_squared();
        assert!((sol.objective - expected_obj).abs() < 1e-7);
        assert!(sol.residuals.max() < 1e-6, "{:?}", sol.residuals);
    }
}
