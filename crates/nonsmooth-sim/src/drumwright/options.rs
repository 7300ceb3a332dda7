//! The options of the `drumwright` stepper: the decisions D1–D10 of docs/simulation.md.

use nonsmooth_solvers::conic::ConicOptions;
use nonsmooth_solvers::regularized_contact::RegularizedContactOptions;

/// Which constraint rows enter a step (decision D3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inclusion {
    /// Every contact within the model's contact margin and every limit row of a limited
    /// joint, whatever the sign of φ₀ (the program decides whether it carries force).
    Speculative,
    /// Only rows with φ₀ ≤ 0 (detected penetration or limit violation).
    PenetratingOnly,
}

/// Semantics of unilateral and contact-normal rows (decision D4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnilateralForm {
    /// The paper's minimum-norm QP (eqs 83–85): min ½ζ‖λ‖² s.t. Aλ ≥ q, λ ≥ 0.
    MinNorm,
    /// The LCP-equivalent ("max()") convex QP: min ½λᵀ(R + GΛGᵀ)λ − λᵀRq s.t. λ ≥ 0.
    MaxLcp,
}

/// How normal and friction forces are coupled (decision D5).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FrictionCoupling {
    /// The single program of Appendix 0.A (eqs 176–186) with weight ζ on λ_n and λ_u
    /// (`None` = the paper's ζ = 1/h). Requires [`UnilateralForm::MinNorm`].
    Literal {
        /// Weight ζ on λ_n and λ_u; `None` means 1/h.
        zeta: Option<f64>,
    },
    /// Lexicographic / fixed-point split (mitigation of D5, after Anitescu–Hart): at most
    /// `sweeps` times, solve the normal and unilateral rows with the current friction forces
    /// fixed, then the friction rows (slack objective of eq 99, Coulomb cone with λ_n
    /// fixed), until the forces change by at most
    /// [`DrumwrightOptions::sweep_tolerance`] (relative).
    Staged {
        /// Maximum number of normal/friction sweeps.
        sweeps: usize,
    },
    /// The whole step as one regularized program in the symmetric `(W + R)` form (default;
    /// see the [module documentation](crate::drumwright#the-one-program-default)): every
    /// row's spring–damper law projected on its admissible set, solved in the velocity by
    /// Newton's method with exact line search ([`nonsmooth_solvers::regularized_contact`]),
    /// each contact's Coulomb bound `μ γ̄_n` taken from an estimate of its normal impulse
    /// and updated to a fixed point in at most `rounds` solves. Fallbacks, counted
    /// ([`StepReport::fell_back`](crate::drumwright::StepReport::fell_back), [`Stepper::last_step_fell_back`](crate::stepper::Stepper::last_step_fell_back)): the program with
    /// coupled Coulomb cones when the bounds reach no fixed point; the staged programs
    /// ([`DrumwrightOptions::fallback_sweeps`]) when Newton's method fails or, for
    /// [`UnilateralForm::MinNorm`], the normal forces are not also the minimum-norm ones.
    OneProgram {
        /// Maximum number of solves of the fixed point on the friction bounds.
        rounds: usize,
    },
}

/// Options of [`DrumwrightStepper`](crate::drumwright::DrumwrightStepper).
#[derive(Debug, Clone, PartialEq)]
pub struct DrumwrightOptions {
    /// D3: which rows enter a step.
    pub inclusion: Inclusion,
    /// D4: semantics of unilateral rows.
    pub unilateral: UnilateralForm,
    /// D5: normal/friction coupling.
    pub friction: FrictionCoupling,
    /// D6: smallest penetration (m) at which a Hertz or Hunt–Crossley contact's secant
    /// stiffness k√d is evaluated, so that touching and approaching contacts are stiff.
    pub hertz_floor: f64,
    /// D5: relative force change at which the staged sweeps stop (and at which the one
    /// program's friction bounds count as consistent with its normal forces).
    pub sweep_tolerance: f64,
    /// Staged sweeps of a one-program step that falls back to the staged programs.
    pub fallback_sweeps: usize,
    /// One program: `σ` of the regularization `R = σ W_ii` of rigid rows, `W_ii` the row's
    /// Delassus diagonal.
    pub rigid_regularization: f64,
    /// One program: `σ_t` of the floor `R_t ≥ σ_t W_ii` of the friction rows'
    /// regularization (whose value from the paper's tangential damping, `1/(hB_r)`, is
    /// far below it).
    pub friction_regularization: f64,
    /// One program: options of the Newton solver.
    pub contact_solver: RegularizedContactOptions,
    /// One program: solve each step's Coulomb problem (the max() normal forces, friction
    /// on the disk `μγ_n`) in one semismooth Newton solve (default), with the fixed point
    /// on the friction bounds as its fallback; `false`: the fixed point alone.
    pub coulomb_newton: bool,
    /// D3: a speculative joint-limit row enters when φ₀ ≤ margin + w·h·|φ̇₀| (w this
    /// factor, margin the model's contact margin); farther rows cannot carry force within
    /// the step and only degrade the conditioning of the program.
    pub speculative_window: f64,
    /// D1: include Ġv and M̂Ġv for bilateral rows.
    pub bilateral_gdot: bool,
    /// D1: include Ġv and M̂Ġv for unilateral, contact-normal and friction rows.
    pub unilateral_gdot: bool,
    /// Tangential damping B_r = B_s = `tangent_damping_times_h / h` (paper §6.4: 10⁶/h).
    pub tangent_damping_times_h: f64,
    /// Options of the conic solver (Clarabel).
    pub solver: ConicOptions,
    /// Fast path: build the staged programs in sparse "lifted" form,
    /// with the auxiliary velocities `u = Λ Gᵀ λ` as extra variables and the equalities
    /// `(M + G_bᵀS_bG_b) u − Gᵀ λ = 0`, so the dense Delassus matrix `G Λ Gᵀ` is never
    /// formed and the KKT system keeps the sparsity of G (contacts couple only through
    /// shared bodies). Mathematically the same program as the dense form; the test
    /// `lifted_programs_agree_with_the_dense_delassus_form` checks agreement to 1e-6.
    /// Used when the step has at least this many contact/unilateral rows (`usize::MAX`
    /// disables it). Small programs stay dense: there the dense form is as fast and Clarabel
    /// reaches a tighter accuracy on the badly scaled Hertz rows. A lifted solve that fails
    /// falls back to the dense form.
    pub sparse_min_rows: usize,
    /// Also lift the friction stage (off by default: with the tangential damping
    /// B_r = 10⁶/h the lifted friction program is badly scaled and Clarabel's answer differs
    /// from the dense one by up to 0.5 %, above our 1e-6 agreement target).
    pub sparse_friction: bool,
    /// Use the lifted normal stage also in steps with friction rows (off by default: on the
    /// sphere stack the lifted KKT system is slower in Clarabel than the dense form, measured
    /// 22 ms versus 12 ms per step at N = 100; on the frictionless 900-element foundation it
    /// is about 10× faster).
    pub sparse_with_friction: bool,
    /// Block fast path (the sphere stack): for models whose joints are all root
    /// joints, without bilateral constraints or joint limits, with the staged coupling and
    /// no contact Ġ, build the step from a [`BlockSnapshot`](nonsmooth_core::snapshot::BlockSnapshot) (block-diagonal M, Jacobian
    /// rows as per-body blocks, sparse Delassus matrix) and solve the normal stage by block
    /// principal pivoting and the friction stage by a sparse Cholesky / semismooth Newton
    /// solver ([`nonsmooth_solvers::lcp::block_pivoting()`], [`nonsmooth_solvers::friction`]),
    /// each verified by a KKT check (relative 1e-9), with Clarabel as the fallback
    /// ([`StepReport::fallbacks`](crate::drumwright::StepReport::fallbacks)). Skipped (the Clarabel path is used) when the Delassus
    /// matrix is not sparse, e.g. many contacts on one body.
    pub fast_solver: bool,
    /// D3 for fast bodies: detect contacts within
    /// [`nonsmooth_core::snapshot::velocity_margins`] (each collider's margin widened by the
    /// distance its fastest point travels in one step) so that a body moving faster than
    /// margin/h meets its speculative contact before it passes through (default on).
    pub velocity_margin: bool,
}

impl Default for DrumwrightOptions {
    fn default() -> Self {
        DrumwrightOptions {
            inclusion: Inclusion::Speculative,
            unilateral: UnilateralForm::MaxLcp,
            friction: FrictionCoupling::OneProgram { rounds: 30 },
            sweep_tolerance: 1e-7,
            fallback_sweeps: 100,
            rigid_regularization: 1e-6,
            friction_regularization: 1e-3,
            contact_solver: RegularizedContactOptions::default(),
            coulomb_newton: true,
            hertz_floor: 1e-6,
            speculative_window: 2.0,
            bilateral_gdot: true,
            unilateral_gdot: false,
            tangent_damping_times_h: 1e6,
            solver: ConicOptions {
                presolve: false,
                eps_abs: 1e-10,
                eps_rel: 1e-10,
                ..ConicOptions::default()
            },
            sparse_min_rows: 48,
            sparse_friction: false,
            sparse_with_friction: false,
            fast_solver: true,
            velocity_margin: true,
        }
    }
}
