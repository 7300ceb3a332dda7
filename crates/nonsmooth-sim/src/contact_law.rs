//! Force laws of compliant contact: the normal spring–damper laws a material selects, and a
//! regularized Coulomb friction law for penalty steppers.

use nonsmooth_core::ComplianceLaw;

/// Compressive normal force (≥ 0) of a compliant contact with gap `phi` (φ < 0 is
/// penetration d = −φ) and gap rate `phi_dot` (ḋ = −φ̇):
/// - [`ComplianceLaw::Linear`] (Kelvin–Voigt): λ = K d + B ḋ;
/// - [`ComplianceLaw::Hertz`]: λ = K d^{3/2} + B ḋ (K lumps E*√r, as in Drumwright 2019, §6.4,
///   where the 4/3 factor is omitted);
/// - [`ComplianceLaw::HuntCrossley`]: λ = K d^{3/2} (1 + B ḋ).
///
/// The force is clipped at zero: contact never pulls (a unilateral spring). A separated
/// contact (φ ≥ 0) carries no force.
pub fn normal_force(
    law: ComplianceLaw,
    stiffness: f64,
    damping: f64,
    phi: f64,
    phi_dot: f64,
) -> f64 {
    if phi >= 0.0 {
        return 0.0;
    }
    let d = -phi;
    let d_dot = -phi_dot;
    let force = match law {
        ComplianceLaw::Linear => stiffness * d + damping * d_dot,
        ComplianceLaw::Hertz => stiffness * d * d.sqrt() + damping * d_dot,
        ComplianceLaw::HuntCrossley => stiffness * d * d.sqrt() * (1.0 + damping * d_dot),
    };
    force.max(0.0)
}

/// Regularized Coulomb friction for penalty steppers: λ_t = −μ λ_n s / max(‖s‖, v_reg) for
/// the slip velocity `slip` (one entry per tangent direction). Below the regularization speed
/// `v_reg` the law is viscous (λ_t = −μ λ_n s / v_reg); above it, it is exact Coulomb
/// (‖λ_t‖ = μ λ_n opposing slip). The result always lies in the friction cone.
pub fn regularized_coulomb(mu: f64, normal: f64, slip: &[f64], v_reg: f64) -> Vec<f64> {
    let speed = slip.iter().map(|s| s * s).sum::<f64>().sqrt();
    let scale = mu * normal / speed.max(v_reg);
    slip.iter().map(|s| -scale * s).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_laws_match_their_formulas_and_never_pull() {
        assert_eq!(
            normal_force(ComplianceLaw::Linear, 100.0, 2.0, 0.1, -1.0),
            0.0
        );
        assert!((normal_force(ComplianceLaw::Linear, 100.0, 2.0, -0.01, -0.5) - 2.0).abs() < 1e-12);
        let hertz = normal_force(ComplianceLaw::Hertz, 1e6, 0.0, -1e-4, 0.0);
        assert!((hertz - 1e6 * 1e-6).abs() < 1e-9);
        let hc = normal_force(ComplianceLaw::HuntCrossley, 1e6, 0.5, -1e-4, -2.0);
        assert!((hc - 1.0 * (1.0 + 0.5 * 2.0)).abs() < 1e-9);
        assert_eq!(
            normal_force(ComplianceLaw::Linear, 100.0, 50.0, -0.01, 10.0),
            0.0
        );
    }

    #[test]
    fn friction_stays_in_the_cone_and_opposes_slip() {
        let f = regularized_coulomb(0.5, 10.0, &[3.0, 4.0], 1e-3);
        assert!((f[0] + 3.0).abs() < 1e-12 && (f[1] + 4.0).abs() < 1e-12);
        let slow = regularized_coulomb(0.5, 10.0, &[1e-4], 1e-3);
        assert!((slow[0] + 0.5).abs() < 1e-12);
    }
}
