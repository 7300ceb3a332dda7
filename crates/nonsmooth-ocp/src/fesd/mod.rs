//! Finite elements with switch detection (FESD; Nurkanović, Sperl, Albrecht & Diehl 2022)
//! for the time-freezing DCS (Nurkanović et al. eq. 31/35), as an integrator with fixed controls
//! and as a direct multiple-shooting OCP in numerical time, both solved by a Scholtes relaxation
//! homotopy over IPOPT.
//!
//! Per control interval (step) there are N_FE finite elements with free lengths h_n summing
//! to the step length; each element carries a Radau IIA collocation (n_s = 1, 2, 3) with the
//! algebraic equations c(Y) = λᵖ − λⁿ and α ∈ [0, 1] at every stage point. Cross
//! complementarity Σ_{j=0..n_s} Σ_{j'=1..n_s} α_{j'}∘λⁿ_j + (1 − α_{j'})∘λᵖ_j (λ_0 = the
//! previous element's last stage) is relaxed to ≤ σ per element and component. Step
//! equilibration uses the heuristic penalty ρ_h Σ (h_n − h̄)²/h̄² (nosnoc's
//! `heuristic_mean`). With `fesd = false` the same IRK runs on a fixed grid with stage-wise
//! complementarity only (the order-1 baseline of E4 in docs/decisions/002-time-freezing.md). After
//! the homotopy an active-set polish ([`polish`](fn@polish)) fixes the complementarity pairs'
//! active sides and re-solves the smooth NLP, so that the products vanish exactly. General path
//! constraints of the system ([`ModelSystem::path`](crate::model_system::ModelSystem::path)) are
//! imposed at every stage point of the OCP (not in the integrator, which follows the dynamics
//! wherever they lead). The integrator ([`simulate`]) first predicts the mode of the coming steps
//! ([`solve_fixed_mode`]): runs of steps without a switch are solved as one smooth NLP with the
//! active set fixed, and only the steps with a switch go through the homotopy. For OCPs,
//! [`Discretization::rho_sot`](crate::fesd::Discretization::rho_sot) penalizes the speed of time
//! and [`MpccStrategy::elastic`](crate::fesd::MpccStrategy::elastic) turns the Scholtes relaxation
//! into its elastic form.
//!
//! Alternatives to the defaults: [`Discretization::scheme`](crate::fesd::Discretization::scheme) = [`Scheme::GaussLegendre`] replaces
//! Radau IIA by Gauss–Legendre collocation (explicit element end state
//! y_end = y_n + h s Σ bᵢFᵢ with its own boundary multipliers in the cross complementarity), and
//! [`Discretization::dcs`](crate::fesd::Discretization::dcs) = [`Dcs::Stewart`] replaces the step representation by Stewart's
//! reformulation (θ per sign-vector region, g(y) − λ − μ𝟙 = 0, θ ⊥ λ).

// One file per job: `tableau` (collocation schemes, DCS representations, complementarity
// pairs), `options` (FesdOptions), `blocks` (the NLP's smooth pieces), `layout` (index
// layout and horizon), `build` (the NLP of a horizon), `complementarity` (products and
// residual), `homotopy` (the MPCC homotopy), `infeasibility` (a
// stagnating homotopy said as an unreachable target), `initial_guess` (a rollout mapped onto
// the variables), `polish` (the active-set end game),
// `integrator` (simulate and its fixed-mode prediction) and `solve` (the OCP).

pub mod active_set;
mod blocks;
mod build;
mod complementarity;
mod homotopy;
mod infeasibility;
mod initial_guess;
mod integrator;
mod layout;
mod options;
mod polish;
mod relaxed_nlp;
mod solve;
mod state_guess;
mod tableau;

pub use blocks::FesdBlock;
pub use build::{build, Built};
pub use complementarity::{comp_products, comp_residual, mpcc_pairs, CompProduct};
pub use homotopy::{homotopy, homotopy_with_trail};
pub use infeasibility::{BindingConstraint, BindingKind, Unreachability};
pub use integrator::{
    initial_mode, simulate, solve_fixed_mode, trajectory, Mode, SimResult, Trajectory,
};
pub use layout::{Clock, ElementIdx, Horizon, Layout, Tracking};
pub(crate) use options::write_checkpoint;
pub use options::{
    ActiveSetOptions, CutStep, Discretization, DiscretizationBuilder, FesdOptions, MpccMethod,
    MpccStrategy, MpccStrategyBuilder, NlpSettings, NlpSettingsBuilder, CUT_OFF,
};
pub use polish::{polish, solve_on_active_set};
pub use relaxed_nlp::NlpLog;
pub(crate) use relaxed_nlp::{complementarity_nlp_options, relaxed_nlp_options};
pub(crate) use solve::copy_interval_vars;
pub use solve::{
    extract_ocp, solve_active_set_from_point, solve_built, solve_from_point, solve_ocp,
    transfer_point, OcpSolution,
};
pub use state_guess::StateGuess;
pub use tableau::{comp_pair, comp_pair_rows, gauss_legendre, radau_iia, Dcs, Scheme, Tableau};
