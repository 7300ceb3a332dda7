//! Every `SosError` a user can trigger through the polynomial, program and certificate
//! APIs, with its message.

use nonsmooth_sos::{Poly, SosError};

#[test]
fn variable_index_out_of_range_is_a_dimension_error() {
    let err = Poly::var(2, 5).unwrap_err();
    assert!(matches!(err, SosError::Dimension(_)));
    assert_eq!(
        err.to_string(),
        "dimension mismatch: variable index 5 out of range for 2 variables"
    );
}

#[test]
fn wrong_exponent_length_names_both_sizes() {
    let err = Poly::from_terms(2, &[(1.0, &[1, 0, 0])]).unwrap_err();
    assert!(matches!(err, SosError::Dimension(_)));
    assert!(
        err.to_string().contains("3 exponents") && err.to_string().contains("2 variables"),
        "{err}"
    );
}

#[test]
fn non_finite_coefficient_is_invalid_input() {
    let err = Poly::from_terms(1, &[(f64::NAN, &[1])]).unwrap_err();
    assert!(matches!(err, SosError::InvalidInput(_)));
    assert_eq!(err.to_string(), "invalid input: non-finite coefficient");
}

#[test]
fn mismatched_variable_counts_are_rejected_in_products() {
    let x = Poly::var(1, 0).expect("x");
    let y = Poly::var(2, 1).expect("y");
    let err = x.mul(&y).unwrap_err();
    assert!(matches!(err, SosError::Dimension(_)), "{err}");
}

#[test]
fn unsupported_template_degree_is_invalid_input() {
    use nonsmooth_sos::lyapunov::{certify, CertifyOptions};
    use nonsmooth_sos::planar::PlanarParams;
    let p = PlanarParams::new(30f64.to_radians(), 2.0, 2.0, 1.0, 0.0);
    let opts = CertifyOptions {
        v2_degree: 5,
        ..CertifyOptions::default()
    };
    let err = certify(&p, &opts).unwrap_err();
    assert!(matches!(err, SosError::InvalidInput(_)), "{err}");
    assert!(err.to_string().contains("degree 5"), "{err}");
}

#[test]
fn negative_trace_weight_is_invalid_input() {
    use nonsmooth_sos::{Margin, SosProgram};
    let p = Poly::from_terms(1, &[(1.0, &[2])]).expect("x²");
    let mut prog = SosProgram::new();
    prog.require_nonneg("x^2", &p, &[], &[], 1, true)
        .expect("registers");
    let err = prog
        .solve(
            Margin::MaximizeRegularized {
                cap: 1e-2,
                trace_weight: -1.0,
            },
            1e-7,
        )
        .unwrap_err();
    assert!(matches!(err, SosError::InvalidInput(_)), "{err}");
    // A nonnegative weight solves, and the margin is still maximised.
    let s = prog
        .solve(
            Margin::MaximizeRegularized {
                cap: 1e-2,
                trace_weight: 1e-3,
            },
            1e-7,
        )
        .expect("solves");
    assert_eq!(s.status, nonsmooth_sos::SosStatus::Certified);
    assert!(s.epsilon > 0.9e-2, "{}", s.epsilon);
}
