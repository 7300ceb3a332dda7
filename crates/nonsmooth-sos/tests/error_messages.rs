//! Every `SosError` a user can trigger through the polynomial API, with its message.

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
