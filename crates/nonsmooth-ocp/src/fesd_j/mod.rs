//! Optimal control of rigid bodies with several frictional contacts and impacts by FESD-J
//! (Nurkanović, Frey, Pozharskiy & Diehl 2024; nosnoc's complementarity Lagrangian system
//! discretization): finite elements with switch detection on the complementarity
//! Lagrangian system itself, the contact forces and impulses as variables and the velocity
//! jumping at element boundaries, with no auxiliary time-freezing dynamics.
//!
//! Each control interval holds N_FE elements of free lengths summing to T/N, each one
//! semi-implicit step (velocity at the element's end, contact geometry and mass matrix at its
//! start). In an element, the contact forces obey 0 ≤ λ_n ⊥ f_c(q_s) + h nᵀv ≥ 0 (the gap
//! linearized along the step, so that normal forces do no work) and Coulomb friction as the
//! planar polyhedral cone (0 ≤ λ_t ⊥ ±bᵀv + γ ≥ 0, 0 ≤ γ ⊥ μλ_n − Σλ_t ≥ 0).
//! At every boundary after the first the velocity may jump,
//! M(q)(v⁺ − v⁻) = Σ n_i Λ_n,i + b_i Λ_t,i, with the inelastic impact law
//! 0 ≤ Λ_n ⊥ f_c(q) + P + N ≥ 0, 0 ≤ P ⊥ N ≥ 0, P − N = nᵀv⁺ (an impulse only in contact,
//! and then nᵀv⁺ = 0) and the same friction cone on the impulses at v⁺. The cross
//! complementarity of FESD-J pairs each element's forces with its start boundary's gap,
//! sliding speeds and friction bound, so that a contact closes, or a slide stops, only at an
//! element boundary, and the boundaries move to the switches.
//!
//! The modules: `blocks` (the NLP's smooth pieces), `build` (the NLP of a horizon and its
//! layout), `options` ([`ImpulseOptions`]), `solve` (the homotopy and the phases).

mod blocks;
mod build;
mod options;
mod rollout;
mod solve;

pub use blocks::{Dims, ImpulseBlock};
pub use build::{build, BoundaryIdx, ElementIdx, Layout, IMPULSE_RELAXATION};
pub use options::{ImpulseOptions, ImpulseOptionsBuilder};
pub use solve::{solve, ImpulseSolution, Outcome, Sample, UNREACHABLE_SHARE};
