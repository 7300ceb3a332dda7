//! Butcher tableaus of the collocation schemes (Radau IIA; Gauss–Legendre with its explicit
//! end state, FESD paper §4), the choice of scheme ([`Scheme`]) and of DCS representation
//! ([`Dcs`]: the step functions of Nurkanović et al. eq. 31 or Stewart's reformulation), and which
//! (α, λ) pairs enter an element's (cross) complementarity ([`comp_pair`]).

use crate::OcpError;

/// Radau IIA Butcher tableau (A, c) for n_s = 1, 2, 3 (Hairer & Wanner, Table IV.5.5).
pub fn radau_iia(n_s: usize) -> Result<(Vec<Vec<f64>>, Vec<f64>), OcpError> {
    let r6 = 6f64.sqrt();
    match n_s {
        1 => Ok((vec![vec![1.0]], vec![1.0])),
        2 => Ok((
            vec![vec![5.0 / 12.0, -1.0 / 12.0], vec![0.75, 0.25]],
            vec![1.0 / 3.0, 1.0],
        )),
        3 => Ok((
            vec![
                vec![
                    (88.0 - 7.0 * r6) / 360.0,
                    (296.0 - 169.0 * r6) / 1800.0,
                    (-2.0 + 3.0 * r6) / 225.0,
                ],
                vec![
                    (296.0 + 169.0 * r6) / 1800.0,
                    (88.0 + 7.0 * r6) / 360.0,
                    (-2.0 - 3.0 * r6) / 225.0,
                ],
                vec![(16.0 - r6) / 36.0, (16.0 + r6) / 36.0, 1.0 / 9.0],
            ],
            vec![(4.0 - r6) / 10.0, (4.0 + r6) / 10.0, 1.0],
        )),
        other => Err(OcpError::InvalidInput(format!(
            "Radau IIA with n_s = {other} is not available (1, 2 or 3)"
        ))),
    }
}

/// Gauss–Legendre Butcher tableau (A, b, c) for n_s = 1, 2, 3 (Hairer & Wanner, Table
/// IV.5.1/5.2; order 2n_s). Not stiffly accurate: the element end value is
/// y₀ + h Σ bᵢ F(Yᵢ), not the last stage.
#[allow(clippy::type_complexity)]
pub fn gauss_legendre(n_s: usize) -> Result<(Vec<Vec<f64>>, Vec<f64>, Vec<f64>), OcpError> {
    match n_s {
        1 => Ok((vec![vec![0.5]], vec![1.0], vec![0.5])),
        2 => {
            let r = 3f64.sqrt() / 6.0;
            Ok((
                vec![vec![0.25, 0.25 - r], vec![0.25 + r, 0.25]],
                vec![0.5, 0.5],
                vec![0.5 - r, 0.5 + r],
            ))
        }
        3 => {
            let r = 15f64.sqrt();
            Ok((
                vec![
                    vec![5.0 / 36.0, 2.0 / 9.0 - r / 15.0, 5.0 / 36.0 - r / 30.0],
                    vec![5.0 / 36.0 + r / 24.0, 2.0 / 9.0, 5.0 / 36.0 - r / 24.0],
                    vec![5.0 / 36.0 + r / 30.0, 2.0 / 9.0 + r / 15.0, 5.0 / 36.0],
                ],
                vec![5.0 / 18.0, 4.0 / 9.0, 5.0 / 18.0],
                vec![0.5 - r / 10.0, 0.5, 0.5 + r / 10.0],
            ))
        }
        other => Err(OcpError::InvalidInput(format!(
            "Gauss-Legendre with n_s = {other} is not available (1, 2 or 3)"
        ))),
    }
}

/// Collocation scheme of the finite elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub enum Scheme {
    /// Radau IIA (order 2n_s − 1, stiffly accurate: the last stage is the element end).
    #[default]
    RadauIIA,
    /// Gauss–Legendre (order 2n_s, not stiffly accurate): each element gets an explicit end
    /// state y_end = y₀ + h s Σ bᵢ F(Yᵢ) and boundary multipliers (λᵖ, λⁿ) with
    /// c(y_end) = λᵖ − λⁿ, which enter the cross complementarity of the element and, as the
    /// j = 0 point, of the next element (FESD paper, Nurkanović et al. 2022, §4 on
    /// non-stiffly-accurate schemes). In [`solve_ocp`](super::solve_ocp) the ℓ1-penalty homotopy is preceded
    /// by a Scholtes relaxation homotopy (see there; docs/decisions/002-time-freezing.md,
    /// "Gauss–Legendre runs Scholtes first").
    GaussLegendre,
}

/// Representation of the time-freezing DCS in the FESD NLP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub enum Dcs {
    /// Step representation (Nurkanović et al. eq. 31): α ∈ [0, 1]^{n_c}, c(y) = λᵖ − λⁿ,
    /// α ⊥ λⁿ, 1 − α ⊥ λᵖ.
    #[default]
    Step,
    /// Stewart's reformulation: one multiplier θ_r ≥ 0 per sign-vector region
    /// ([`TimeFreezing::n_stewart`](crate::time_freezing::TimeFreezing::n_stewart)), Σ θ_r = 1, λ ≥ 0 with g(y) − λ − μ𝟙 = 0
    /// (g_r = −S_rᵀc, [`TimeFreezing::stewart_g`](crate::time_freezing::TimeFreezing::stewart_g)) and θ ⊥ λ, with the FESD cross
    /// complementarity over all stage/boundary pairs. The integrator's fixed-mode prediction
    /// ([`MpccStrategy::mode_predict`](crate::fesd::MpccStrategy::mode_predict)), the Euler prediction and the α bias do not apply;
    /// the active-set polish fixes θ_r = 0 or λ_r = 0.
    Stewart,
}

/// Butcher data of a scheme: the stage matrix A, the weights b, the nodes c and whether
/// the scheme is stiffly accurate (last row of A = b, c_{n_s} = 1).
#[derive(Debug, Clone, PartialEq)]
pub struct Tableau {
    /// Stage matrix A (n_s × n_s).
    pub a: Vec<Vec<f64>>,
    /// Weights b.
    pub b: Vec<f64>,
    /// Nodes c.
    pub c: Vec<f64>,
    /// Whether the element end value is the last stage.
    pub stiffly_accurate: bool,
}

impl Tableau {
    /// The tableau of `scheme` with `n_s` stages (1, 2 or 3).
    pub fn new(scheme: Scheme, n_s: usize) -> Result<Self, OcpError> {
        match scheme {
            Scheme::RadauIIA => {
                let (a, c) = radau_iia(n_s)?;
                let b = a[n_s - 1].clone();
                Ok(Self {
                    a,
                    b,
                    c,
                    stiffly_accurate: true,
                })
            }
            Scheme::GaussLegendre => {
                let (a, b, c) = gauss_legendre(n_s)?;
                Ok(Self {
                    a,
                    b,
                    c,
                    stiffly_accurate: false,
                })
            }
        }
    }
    /// Rows of the collocation block: A, followed by bᵀ for a non-stiffly-accurate scheme
    /// (the end-state equation).
    pub fn rows(&self) -> Vec<Vec<f64>> {
        let mut r = self.a.clone();
        if !self.stiffly_accurate {
            r.push(self.b.clone());
        }
        r
    }
}

/// Whether the pair (α at stage `jp`, λ at point `j`) enters the complementarity of an
/// element with `ns` stages: all pairs with cross complementarity, else the stage-wise
/// pairs j = jp + 1 and, for a non-stiffly-accurate scheme, the end point j = n_s + 1 with
/// the last stage.
pub fn comp_pair(cross: bool, jp: usize, j: usize, ns: usize) -> bool {
    cross || j == jp + 1 || (j == ns + 1 && jp + 1 == ns)
}

/// Number of rows of an element's complementarity block with one row per product
/// ([`MpccStrategy::per_pair`](crate::fesd::MpccStrategy::per_pair)): two products (α λⁿ and (1 − α) λᵖ) per pair of
/// [`comp_pair`] and component, `n_lam` multiplier points, the first `n_cross` components
/// with cross complementarity when `cross`.
pub fn comp_pair_rows(cross: bool, n_cross: usize, ns: usize, n_lam: usize, nc: usize) -> usize {
    let mut r = 0;
    for i in 0..nc {
        for jp in 0..ns {
            r += 2
                * (0..n_lam)
                    .filter(|&j| comp_pair(cross && i < n_cross, jp, j, ns))
                    .count();
        }
    }
    r
}
