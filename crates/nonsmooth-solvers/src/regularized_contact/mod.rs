//! The regularized contact problem: one strictly convex program per time step, solved by
//! Newton's method on its primal (unconstrained) form.
//!
//! This is the formulation of Drake's SAP solver (Castro, Permenter, Han, "An
//! unconstrained convex formulation of compliant contact", IEEE Transactions on Robotics
//! 39(2), 2022) and of MuJoCo's Newton solver (Todorov, "Convex and analytically-invertible
//! dynamics with contacts and constraints: theory and implementation in MuJoCo", ICRA 2014).
//!
//! # The problem
//!
//! Unknown: the generalized velocity `v ∈ ℝⁿ` at the end of the step. Data: a symmetric
//! positive definite `A` (`n × n`, sparse: typically block diagonal per free body or one
//! dense block per articulated tree), the free velocity `v*` (the velocity without
//! constraints, `A v* = A v₀ + h f`), and constraints `c = 1..m`, each with
//!
//! - Jacobian rows `J_c` (1, 2 or 3 rows, sparse over `v`); `v_c = J_c v`,
//! - a [`ConstraintKind`] that fixes the set `F_c` of admissible impulses, rows ordered
//!   **tangents first, normal last** (normal velocity positive when separating, normal
//!   impulse positive when pushing apart):
//!   - `Cone { μ }`, rows `(t₁, t₂, n)`: `F = {‖γ_t‖ ≤ μ γ_n}`,
//!   - `Planar { μ }`, rows `(t, n)`: `F = {|γ_t| ≤ μ γ_n}`,
//!   - `Unilateral`, one row: `F = {γ ≥ 0}`,
//!   - `Bilateral`, one row: `F = ℝ` (a soft equality),
//!   - `Disk { radius }`, rows `(t₁, t₂)`: `F = {‖γ_t‖ ≤ radius}`, and `Interval { radius }`,
//!     one row: `F = {|γ_t| ≤ radius}` — friction with a given bound (Tresca friction), the
//!     Coulomb disk of a contact for a fixed estimate of its normal impulse (the normal row
//!     is then a separate `Unilateral` constraint; [`RegularizedContactProblem::set_friction_bound`]
//!     changes the bound between solves of a fixed-point iteration on the normal impulses),
//!   - `Coulomb { μ }`, rows `(t₁, t₂, n)`, and `PlanarCoulomb { μ }`, rows `(t, n)`: the
//!     same set as the cone, but the impulse is Alart and Curnier's non-associated map
//!     `γ_n = max(0, y_n)`, `γ_t = P_{‖·‖ ≤ μγ_n}(y_t)` (`coulomb.rs`): the normal impulse
//!     is the unilateral row's alone, so a sliding contact keeps `v_n − v̂_n + R_nγ_n = 0`
//!     (no Anitescu relaxation). This map is no projection and no gradient: a problem with
//!     a Coulomb kind is no convex program and is solved by [`solve_semismooth`] only,
//! - a diagonal regularization `R_c > 0` (for a cone the two tangential entries are
//!   equal) and a bias velocity `v̂_c`, one of each per row.
//!
//! **Primal** (what is solved):
//!
//! ```text
//! minimize over v   ℓ(v) = ½ (v − v*)ᵀ A (v − v*) + Σ_c ℓ_c(J_c v),
//! ℓ_c(v_c) = ½ γ_c(v_c)ᵀ R_c γ_c(v_c),
//! γ_c(v_c) = P_F(y_c),   y_c = −R_c⁻¹ (v_c − v̂_c),
//! ```
//!
//! where `P_F(y) = argmin_{γ ∈ F} ½ (γ − y)ᵀ R (γ − y)` is the projection onto `F` in the
//! norm weighted by `R`. `ℓ_c` is convex and continuously differentiable, with
//! `∂ℓ_c/∂v_c = −γ_c`, so
//!
//! ```text
//! ∇ℓ(v) = A (v − v*) − Jᵀ γ(v),
//! H(v)  = A + Jᵀ G J,   G_c = −∂γ_c/∂v_c = (∂P_F/∂y) R_c⁻¹  (symmetric PSD),
//! ```
//!
//! and `ℓ` is strictly convex (`A` is positive definite): the minimizer is unique, and at
//! it `A (v − v*) = Jᵀ γ` — the momentum balance with impulses `γ`. `G_c` is `R_c⁻¹` where
//! `y_c ∈ F` (stiction, an active unilateral row, any bilateral row), `0` where `y_c` lies
//! in the polar cone (separation) and the derivative of the projection onto the cone's
//! boundary in between (sliding); see `projection.rs` for the closed forms (SAP §V-B).
//!
//! **Dual** (the program a time stepper writes; the impulses `γ` of the primal solution
//! solve it): with `W = J A⁻¹ Jᵀ` and `R = diag(R_c)`,
//!
//! ```text
//! minimize over γ ∈ F₁ × … × F_m   ½ γᵀ (W + R) γ + (J v* − v̂)ᵀ γ,
//! ```
//!
//! and `v = v* + A⁻¹ Jᵀ γ`. Its optimality condition
//! `0 ∈ (W + R) γ + J v* − v̂ + N_F(γ)` reads `0 ∈ R γ + v_c − v̂ + N_F(γ)` with
//! `v_c = J v`, which is exactly `γ = P_F(−R⁻¹ (v_c − v̂))` (SAP §IV). For a contact,
//! `R_n → 0` with `v̂_n = −φ/h` (signed distance `φ`) recovers the hard constraint
//! `v_n ≥ v̂_n` complementary to `γ_n ≥ 0`.
//!
//! # The method
//!
//! Newton's method on `ℓ` (SAP §V): the direction `Δv = −H⁻¹ ∇ℓ` from a Cholesky
//! factorization of `H`, then an exact line search on the one-dimensional strictly convex,
//! piecewise smooth `α ↦ ℓ(v + α Δv)`: `α = α_max` (1.5) if `ℓ'(α_max) ≤ 0`; otherwise the
//! root of `ℓ'` in `(0, α_max)` by Newton's method on `ℓ'` safeguarded by bisection of the
//! bracket (SAP §V-C), started at `α = 1`. With `a = ΔvᵀAΔv`, `b = ΔvᵀA(v − v*)` and
//! `Δv_c = J_c Δv` precomputed, each evaluation of `ℓ'(α)` and `ℓ''(α)` costs one
//! projection per constraint that `Δv` moves. The iteration starts from the warm start
//! (e.g. the previous step's velocity) or from `v*`.
//!
//! `H` is factored densely (nalgebra) for `n ≤ dense_threshold` (30), otherwise by faer's
//! sparse Cholesky: its pattern (that of `A` plus each constraint's full block over the
//! velocities it touches, kept where `G_c = 0`) is fixed, so the AMD ordering and the
//! symbolic factorization are computed once per problem (at its first solve) and every
//! Newton iteration repeats only the numeric factorization. Disconnected islands (bodies
//! not coupled through `A` or a constraint) stay independent diagonal blocks of the
//! factor: the ordering never couples them.
//!
//! # Coulomb friction: the semismooth Newton method
//!
//! With Coulomb kinds the equations `F(v) = A (v − v*) − Jᵀγ(v) = 0` remain (the
//! momentum balance), but `γ` is no gradient. [`solve_semismooth`] applies Newton's
//! method to them with the element `H = A + Jᵀ G J` of the generalized Jacobian, `G`
//! non-symmetric on sliding contacts (`∂γ_t/∂y_n = μ t̂`), factored by LU (dense below
//! `dense_threshold`, else faer's sparse LU whose symbolic analysis a
//! [`SemismoothWorkspace`] keeps for the next problem with the same pattern), and the
//! line search above applied to `φ(α) = Δvᵀ F(v + αΔv)`: for convex kinds `φ = ℓ'`
//! (the solve is then the convex one), and near a solution `φ(1) ≈ 0`, so full steps and
//! quadratic convergence are kept. See `semismooth.rs` for the choices and their reasons.
//!
//! # Tolerances
//!
//! With `D = diag(A)^{-1/2}`, a point is accepted when
//!
//! ```text
//! ‖D ∇ℓ(v)‖₂ ≤ ε_abs + ε_rel · max(‖D A v‖₂, ‖D Jᵀγ‖₂)
//! ```
//!
//! (SAP's test: the scaled momentum residual against the scaled momentum and constraint
//! impulse), defaults `ε_abs = 1e-14`, `ε_rel = 1e-8`
//! ([`RegularizedContactOptions`]). `D ∇ℓ` is dimensionally uniform across translational
//! and rotational velocities. Each line search stops at
//! `|ℓ'(α)| ≤ 10⁻¹⁰ |ℓ'(0)|`. Every returned `γ` lies in its set exactly (up to one
//! rounding of the closed-form projection); the solution reports the largest violation.
//! A run whose steps fall to the rounding level of `v` before the test passes ends as
//! [`SolveStatus::AlmostSolved`](crate::SolveStatus::AlmostSolved).
//!
//! # Complexity
//!
//! Per Newton iteration: `O(nnz(A) + Σ_c k_c²)` to evaluate and assemble (`k_c` the number
//! of velocities constraint `c` touches), the numeric sparse Cholesky `O(Σ_j |L_{*j}|²)` —
//! `O(n)` for chains, stacks and piles with bounded contact degree under AMD — and the
//! line search `O(m)` per evaluation. Far from the solution Newton's method takes a few
//! damped steps; near it, convergence is quadratic on the smooth pieces.
//!
//! # Limitations
//!
//! - `A` must be positive definite; this is not checked beyond a positive diagonal at
//!   build, and a failed factorization is reported by the solve as
//!   [`SolverError::Failed`](crate::SolverError::Failed).
//! - The cone's two tangential regularizations must be equal (isotropic friction): the
//!   closed-form projection needs it.
//! - Iteration counts. A warm start at or near the solution converges in 0 or 1
//!   iteration, and a problem that stays in one region (a stack at rest) in 1. A cold start
//!   across which many contacts change region — typically sliding at `v*`, sticking at
//!   the solution, with a tangential regularization far below the normal one — takes
//!   damped steps, each cut by the line search at the first contacts that start to stick:
//!   about 40 iterations for stacks of 100 to 1000 spheres with SAP's near-rigid `R`
//!   (`R_t/R_n ≈ 0.14`), and about 100 for `R ≈ 10⁻⁶ W`. Each iteration costs `O(n)`.
//! - The Newton iteration is global: every island is iterated until the whole problem
//!   passes the test, although the factorization is separable.
//! - The convex formulation's known artifact (Anitescu's relaxation, SAP §IV): a sliding
//!   contact separates at `v_n ≈ μ ‖v_t‖` in the rigid limit instead of keeping
//!   `v_n = 0`.
//! - The regularization `R` is data: choosing it (SAP's near-rigid estimate from the
//!   diagonal of `W`, or from contact stiffness and damping) is the caller's job.
//! - The solve is sequential (no threads).

// Index loops over several parallel arrays read best as index loops.
#![allow(clippy::needless_range_loop)]

mod coulomb;
mod csc;
mod hessian;
mod jacobian;
mod pattern;
mod problem;
mod projection;
mod region;
mod semismooth;
mod sensitivity;
mod solve;
mod sparse_lu;

pub use jacobian::SemismoothWorkspace;
pub use problem::{
    Constraint, ConstraintKind, RegularizedContactProblem, RegularizedContactProblemBuilder,
    SYMMETRY_TOL,
};
pub use semismooth::solve_semismooth;
pub use sensitivity::{sensitivity, ConstraintMode, Sensitivity};
pub use solve::{solve, RegularizedContactOptions, RegularizedContactSolution};
