//! FFI to IPOPT's C interface (`IpStdCInterface.h`) and a safe wrapper around it. IPOPT is
//! found with pkg-config at build time (Debian `coinor-libipopt-dev`); versions 3.11 to 3.14
//! are supported: from 3.14 the C interface's `Bool` is C's `bool`, before it an `int`, which
//! the build script selects (cfg `ipopt_c_bool`).
//!
//! The NLP is min f(x) s.t. g_L ≤ g(x) ≤ g_U, x_L ≤ x ≤ x_U (Wächter & Biegler 2006, eq. 1)
//! with a sparse constraint Jacobian and a sparse lower-triangular Hessian of the Lagrangian
//! σ_f ∇²f + Σ λ_i ∇²g_i, both in triplet form (duplicate entries are summed by IPOPT).

use std::ffi::CString;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::Mutex;

use super::cpu_clock::thread_cpu_seconds;

type Index = c_int;
#[cfg(ipopt_c_bool)]
type Bool = bool;
#[cfg(not(ipopt_c_bool))]
type Bool = c_int;
type Number = f64;

/// `true` in IPOPT's `Bool`.
fn c_true(b: bool) -> Bool {
    Bool::from(b)
}

/// Whether an IPOPT `Bool` result is true.
#[cfg(ipopt_c_bool)]
fn is_true(b: Bool) -> bool {
    b
}
#[cfg(not(ipopt_c_bool))]
fn is_true(b: Bool) -> bool {
    b != 0
}

/// Why [`solve`] did not return a converged solution.
#[derive(Debug, Clone, thiserror::Error)]
pub enum IpoptError {
    /// The problem or an option is invalid (sizes, non-finite start, unknown option).
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// IPOPT did not converge; carries the last iterate.
    #[error("IPOPT returned {status:?} (constraint violation {constraint_violation:.3e})")]
    NotConverged {
        /// IPOPT's status.
        status: IpoptStatus,
        /// Constraint violation of the last iterate.
        constraint_violation: f64,
        /// The last iterate.
        solution: Box<IpoptSolution>,
    },
}

#[repr(C)]
struct IpoptProblemInfo {
    _private: [u8; 0],
}

type EvalF = extern "C" fn(Index, *mut Number, Bool, *mut Number, *mut c_void) -> Bool;
type EvalGradF = extern "C" fn(Index, *mut Number, Bool, *mut Number, *mut c_void) -> Bool;
type EvalG = extern "C" fn(Index, *mut Number, Bool, Index, *mut Number, *mut c_void) -> Bool;
type EvalJacG = extern "C" fn(
    Index,
    *mut Number,
    Bool,
    Index,
    Index,
    *mut Index,
    *mut Index,
    *mut Number,
    *mut c_void,
) -> Bool;
type EvalH = extern "C" fn(
    Index,
    *mut Number,
    Bool,
    Number,
    Index,
    *mut Number,
    Bool,
    Index,
    *mut Index,
    *mut Index,
    *mut Number,
    *mut c_void,
) -> Bool;
type IntermediateCb = extern "C" fn(
    Index,
    Index,
    Number,
    Number,
    Number,
    Number,
    Number,
    Number,
    Number,
    Number,
    Index,
    *mut c_void,
) -> Bool;

extern "C" {
    fn CreateIpoptProblem(
        n: Index,
        x_l: *mut Number,
        x_u: *mut Number,
        m: Index,
        g_l: *mut Number,
        g_u: *mut Number,
        nele_jac: Index,
        nele_hess: Index,
        index_style: Index,
        eval_f: EvalF,
        eval_g: EvalG,
        eval_grad_f: EvalGradF,
        eval_jac_g: EvalJacG,
        eval_h: EvalH,
    ) -> *mut IpoptProblemInfo;
    fn FreeIpoptProblem(p: *mut IpoptProblemInfo);
    fn AddIpoptStrOption(p: *mut IpoptProblemInfo, key: *mut c_char, val: *mut c_char) -> Bool;
    fn AddIpoptNumOption(p: *mut IpoptProblemInfo, key: *mut c_char, val: Number) -> Bool;
    fn AddIpoptIntOption(p: *mut IpoptProblemInfo, key: *mut c_char, val: c_int) -> Bool;
    fn SetIntermediateCallback(p: *mut IpoptProblemInfo, cb: IntermediateCb) -> Bool;
    fn IpoptSolve(
        p: *mut IpoptProblemInfo,
        x: *mut Number,
        g: *mut Number,
        obj_val: *mut Number,
        mult_g: *mut Number,
        mult_x_l: *mut Number,
        mult_x_u: *mut Number,
        user_data: *mut c_void,
    ) -> c_int;
}

/// A smooth NLP with sparse first and second derivatives, in IPOPT's form.
pub trait Nlp {
    /// Number of variables n.
    fn num_vars(&self) -> usize;
    /// Number of constraints m.
    fn num_cons(&self) -> usize;
    /// Variable bounds x_L, x_U (±1e20 or beyond means unbounded).
    fn var_bounds(&self, lo: &mut [f64], hi: &mut [f64]);
    /// Constraint bounds g_L, g_U (equal for equalities).
    fn con_bounds(&self, lo: &mut [f64], hi: &mut [f64]);
    /// Jacobian sparsity (row, column) pairs; entries may repeat (they are summed).
    fn jacobian_structure(&self) -> Vec<(usize, usize)>;
    /// Lower-triangular (row ≥ column) Hessian sparsity; entries may repeat.
    fn hessian_structure(&self) -> Vec<(usize, usize)>;
    /// Objective f(x); `None` signals an evaluation error.
    fn objective(&self, x: &[f64]) -> Option<f64>;
    /// Gradient ∇f(x); `false` signals an evaluation error.
    fn gradient(&self, x: &[f64], grad: &mut [f64]) -> bool;
    /// Constraint values g(x).
    fn constraints(&self, x: &[f64], g: &mut [f64]) -> bool;
    /// Jacobian values in the order of [`Nlp::jacobian_structure`].
    fn jacobian_values(&self, x: &[f64], vals: &mut [f64]) -> bool;
    /// Hessian of σ_f f + λᵀg in the order of [`Nlp::hessian_structure`].
    fn hessian_values(&self, x: &[f64], obj_factor: f64, lambda: &[f64], vals: &mut [f64]) -> bool;
}

/// Typed IPOPT return status (`ApplicationReturnStatus` of `IpReturnCodes_inc.h`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum IpoptStatus {
    /// Solve_Succeeded (0).
    Succeeded,
    /// Solved_To_Acceptable_Level (1).
    Acceptable,
    /// Infeasible_Problem_Detected (2).
    Infeasible,
    /// Search_Direction_Becomes_Too_Small (3).
    SearchDirectionTooSmall,
    /// Diverging_Iterates (4).
    Diverging,
    /// User_Requested_Stop (5).
    UserStop,
    /// Feasible_Point_Found (6).
    FeasiblePointFound,
    /// Maximum_Iterations_Exceeded (−1).
    MaxIterations,
    /// Restoration_Failed (−2).
    RestorationFailed,
    /// Error_In_Step_Computation (−3).
    StepComputationError,
    /// Maximum_CpuTime_Exceeded (−4).
    MaxCpuTime,
    /// Not_Enough_Degrees_Of_Freedom (−10).
    NotEnoughDof,
    /// Invalid_Problem_Definition (−11).
    InvalidProblem,
    /// Invalid_Option (−12).
    InvalidOption,
    /// Invalid_Number_Detected (−13).
    InvalidNumber,
    /// Any other (internal, exception, memory) code.
    Other(i32),
}

impl IpoptStatus {
    fn from_code(c: c_int) -> Self {
        match c {
            0 => Self::Succeeded,
            1 => Self::Acceptable,
            2 => Self::Infeasible,
            3 => Self::SearchDirectionTooSmall,
            4 => Self::Diverging,
            5 => Self::UserStop,
            6 => Self::FeasiblePointFound,
            -1 => Self::MaxIterations,
            -2 => Self::RestorationFailed,
            -3 => Self::StepComputationError,
            -4 => Self::MaxCpuTime,
            -10 => Self::NotEnoughDof,
            -11 => Self::InvalidProblem,
            -12 => Self::InvalidOption,
            -13 => Self::InvalidNumber,
            other => Self::Other(other),
        }
    }

    /// Whether the status counts as a converged solve.
    pub fn is_success(self) -> bool {
        matches!(self, Self::Succeeded | Self::Acceptable)
    }
}

/// IPOPT options (see the IPOPT options reference); applied in order.
#[derive(Debug, Clone, Default)]
pub struct IpoptOptions {
    /// Integer options, e.g. ("max_iter", 3000).
    pub int: Vec<(String, i32)>,
    /// Numeric options, e.g. ("tol", 1e-8).
    pub num: Vec<(String, f64)>,
    /// String options, e.g. ("mu_strategy", "adaptive").
    pub string: Vec<(String, String)>,
}

/// MUMPS fill-reducing ordering used by every solve (IPOPT option `mumps_pivot_order`):
/// 2 = AMF, approximate minimum fill. IPOPT's default, 7, lets MUMPS choose: with Debian's
/// MUMPS (SCOTCH, no METIS) it chooses AMF on the small NLPs and SCOTCH on the larger FESD
/// NLPs, whose randomized nested dissection makes the same solve differ from run to run
/// (hopper, 20 intervals × 6 elements: 1.5e-10 after one IPOPT iteration, different local
/// optima after a few hundred; docs/decisions/002-time-freezing.md, "Deterministic linear
/// algebra"). AMD, AMF, PORD and QAMD are deterministic. AMF keeps every small solve
/// identical to MUMPS's own choice (the same ordering), while AMD, QAMD and PORD each turned
/// the homotopy path of two to four tested particle and hopper problems into a stall or a
/// failed NLP; on the hopper above AMF costs 12.7 s for 150 IPOPT iterations against
/// 11.9 s with SCOTCH.
pub const MUMPS_PIVOT_ORDER: i32 = 2;

impl IpoptOptions {
    /// Quiet defaults: print_level 0, no banner, the given tolerance and iteration limit,
    /// and the deterministic MUMPS ordering [`MUMPS_PIVOT_ORDER`].
    pub fn quiet(tol: f64, max_iter: i32) -> Self {
        Self {
            int: vec![
                ("print_level".into(), 0),
                ("max_iter".into(), max_iter),
                ("mumps_pivot_order".into(), MUMPS_PIVOT_ORDER),
            ],
            num: vec![("tol".into(), tol)],
            string: vec![("sb".into(), "yes".into())],
        }
    }
}

/// Primal–dual point: the solution of one NLP or a warm start for the next.
#[derive(Debug, Clone, PartialEq)]
pub struct IpoptSolution {
    /// Primal variables.
    pub x: Vec<f64>,
    /// Constraint values g(x).
    pub g: Vec<f64>,
    /// Objective value.
    pub objective: f64,
    /// Constraint multipliers.
    pub mult_g: Vec<f64>,
    /// Lower-bound multipliers.
    pub mult_x_l: Vec<f64>,
    /// Upper-bound multipliers.
    pub mult_x_u: Vec<f64>,
    /// Return status.
    pub status: IpoptStatus,
    /// IPOPT iterations (from the intermediate callback).
    pub iterations: usize,
    /// CPU seconds of the solve (calling thread, [`thread_cpu_seconds`]).
    pub cpu_seconds: f64,
    /// Max violation of the constraint and bound intervals at the returned point.
    pub constraint_violation: f64,
}

impl IpoptSolution {
    /// A start point without multipliers (all zero) for a warm start from a primal point
    /// `x` of an NLP with `n_cons` constraints, e.g. the solution of a neighbouring problem.
    #[must_use]
    pub fn from_primal(x: Vec<f64>, n_cons: usize) -> Self {
        let n = x.len();
        Self {
            x,
            g: vec![0.0; n_cons],
            objective: 0.0,
            mult_g: vec![0.0; n_cons],
            mult_x_l: vec![0.0; n],
            mult_x_u: vec![0.0; n],
            status: IpoptStatus::Succeeded,
            iterations: 0,
            cpu_seconds: 0.0,
            constraint_violation: 0.0,
        }
    }
}

struct Ctx<'a> {
    nlp: &'a dyn Nlp,
    iterations: usize,
}

fn ctx<'a>(p: *mut c_void) -> &'a mut Ctx<'a> {
    // SAFETY: `p` is the `Ctx` passed to `IpoptSolve`, alive for the whole solve.
    unsafe { &mut *(p as *mut Ctx<'a>) }
}

fn slice<'a>(p: *const f64, n: Index) -> &'a [f64] {
    // SAFETY: IPOPT passes arrays of the declared length.
    unsafe { std::slice::from_raw_parts(p, n.max(0) as usize) }
}

fn slice_mut<'a, T>(p: *mut T, n: Index) -> &'a mut [T] {
    // SAFETY: IPOPT passes writable arrays of the declared length.
    unsafe { std::slice::from_raw_parts_mut(p, n.max(0) as usize) }
}

extern "C" fn cb_f(n: Index, x: *mut Number, _nx: Bool, obj: *mut Number, u: *mut c_void) -> Bool {
    match ctx(u).nlp.objective(slice(x, n)) {
        Some(v) if v.is_finite() => {
            // SAFETY: obj is a valid out pointer.
            unsafe { *obj = v };
            c_true(true)
        }
        _ => c_true(false),
    }
}

extern "C" fn cb_grad(n: Index, x: *mut Number, _nx: Bool, g: *mut Number, u: *mut c_void) -> Bool {
    c_true(ctx(u).nlp.gradient(slice(x, n), slice_mut(g, n)))
}

extern "C" fn cb_g(
    n: Index,
    x: *mut Number,
    _nx: Bool,
    m: Index,
    g: *mut Number,
    u: *mut c_void,
) -> Bool {
    c_true(ctx(u).nlp.constraints(slice(x, n), slice_mut(g, m)))
}

/// Writes a sparsity structure (row, column pairs) into IPOPT's index arrays.
fn write_structure(s: &[(usize, usize)], irow: *mut Index, jcol: *mut Index, nele: Index) -> Bool {
    let (r, k) = (slice_mut(irow, nele), slice_mut(jcol, nele));
    for (i, (a, b)) in s.iter().enumerate().take(nele as usize) {
        r[i] = *a as Index;
        k[i] = *b as Index;
    }
    c_true(true)
}

extern "C" fn cb_jac(
    n: Index,
    x: *mut Number,
    _nx: Bool,
    _m: Index,
    nele: Index,
    irow: *mut Index,
    jcol: *mut Index,
    vals: *mut Number,
    u: *mut c_void,
) -> Bool {
    let c = ctx(u);
    if vals.is_null() {
        write_structure(&c.nlp.jacobian_structure(), irow, jcol, nele)
    } else {
        c_true(c.nlp.jacobian_values(slice(x, n), slice_mut(vals, nele)))
    }
}

extern "C" fn cb_h(
    n: Index,
    x: *mut Number,
    _nx: Bool,
    obj_factor: Number,
    m: Index,
    lambda: *mut Number,
    _nl: Bool,
    nele: Index,
    irow: *mut Index,
    jcol: *mut Index,
    vals: *mut Number,
    u: *mut c_void,
) -> Bool {
    let c = ctx(u);
    if vals.is_null() {
        write_structure(&c.nlp.hessian_structure(), irow, jcol, nele)
    } else {
        c_true(c.nlp.hessian_values(
            slice(x, n),
            obj_factor,
            slice(lambda, m),
            slice_mut(vals, nele),
        ))
    }
}

extern "C" fn cb_iter(
    _mode: Index,
    iter: Index,
    _obj: Number,
    _inf_pr: Number,
    _inf_du: Number,
    _mu: Number,
    _d: Number,
    _reg: Number,
    _ad: Number,
    _ap: Number,
    _ls: Index,
    u: *mut c_void,
) -> Bool {
    ctx(u).iterations = iter.max(0) as usize;
    c_true(true)
}

/// IPOPT's C interface is used from one thread at a time (MUMPS sequential build).
static IPOPT_LOCK: Mutex<()> = Mutex::new(());

fn cstr(s: &str) -> Result<CString, IpoptError> {
    CString::new(s).map_err(|_| IpoptError::InvalidInput(format!("option name {s:?} contains NUL")))
}

/// Max violation of l ≤ v ≤ u over all components.
pub fn interval_violation(v: &[f64], lo: &[f64], hi: &[f64]) -> f64 {
    v.iter()
        .zip(lo.iter().zip(hi))
        .map(|(v, (l, u))| (l - v).max(v - u).max(0.0))
        .fold(0.0, f64::max)
}

/// Solves `nlp` from `x0` with IPOPT. A `warm` point supplies multipliers (the caller should
/// then set `warm_start_init_point yes`). Non-converged solves return
/// [`IpoptError::NotConverged`] carrying the last iterate and its constraint violation.
pub fn solve(
    nlp: &dyn Nlp,
    x0: &[f64],
    warm: Option<&IpoptSolution>,
    options: &IpoptOptions,
) -> Result<IpoptSolution, IpoptError> {
    let n = nlp.num_vars();
    let m = nlp.num_cons();
    if x0.len() != n {
        return Err(IpoptError::InvalidInput(format!(
            "initial point has {} entries, the NLP has {n} variables",
            x0.len()
        )));
    }
    if x0.iter().any(|v| !v.is_finite()) {
        return Err(IpoptError::InvalidInput(
            "initial point is not finite".into(),
        ));
    }
    let (mut xl, mut xu) = (vec![-1e20; n], vec![1e20; n]);
    let (mut gl, mut gu) = (vec![-1e20; m], vec![1e20; m]);
    nlp.var_bounds(&mut xl, &mut xu);
    nlp.con_bounds(&mut gl, &mut gu);
    let nj = nlp.jacobian_structure().len();
    let nh = nlp.hessian_structure().len();
    let _guard = IPOPT_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: arrays have the declared sizes; IPOPT copies the bounds.
    let prob = unsafe {
        CreateIpoptProblem(
            n as Index,
            xl.as_mut_ptr(),
            xu.as_mut_ptr(),
            m as Index,
            gl.as_mut_ptr(),
            gu.as_mut_ptr(),
            nj as Index,
            nh as Index,
            0,
            cb_f,
            cb_g,
            cb_grad,
            cb_jac,
            cb_h,
        )
    };
    if prob.is_null() {
        return Err(IpoptError::InvalidInput(
            "IPOPT rejected the problem".into(),
        ));
    }
    struct Guard(*mut IpoptProblemInfo);
    impl Drop for Guard {
        fn drop(&mut self) {
            // SAFETY: created by CreateIpoptProblem, freed once.
            unsafe { FreeIpoptProblem(self.0) }
        }
    }
    let guard = Guard(prob);
    for (k, v) in &options.int {
        let k = cstr(k)?;
        // SAFETY: valid problem and NUL-terminated key.
        if !is_true(unsafe { AddIpoptIntOption(guard.0, k.as_ptr() as *mut c_char, *v) }) {
            return Err(IpoptError::InvalidInput(format!(
                "invalid IPOPT option {k:?}"
            )));
        }
    }
    for (k, v) in &options.num {
        let k = cstr(k)?;
        // SAFETY: as above.
        if !is_true(unsafe { AddIpoptNumOption(guard.0, k.as_ptr() as *mut c_char, *v) }) {
            return Err(IpoptError::InvalidInput(format!(
                "invalid IPOPT option {k:?}"
            )));
        }
    }
    for (k, v) in &options.string {
        let (k, v) = (cstr(k)?, cstr(v)?);
        // SAFETY: as above.
        let ok = unsafe {
            AddIpoptStrOption(
                guard.0,
                k.as_ptr() as *mut c_char,
                v.as_ptr() as *mut c_char,
            )
        };
        if !is_true(ok) {
            return Err(IpoptError::InvalidInput(format!(
                "invalid IPOPT option {k:?}={v:?}"
            )));
        }
    }
    // SAFETY: valid problem.
    unsafe { SetIntermediateCallback(guard.0, cb_iter) };
    let mut x = x0.to_vec();
    let mut g = vec![0.0; m];
    let mut obj = 0.0;
    let (mut mg, mut ml, mut mu) = match warm {
        Some(w) if w.mult_g.len() == m && w.mult_x_l.len() == n && w.mult_x_u.len() == n => {
            (w.mult_g.clone(), w.mult_x_l.clone(), w.mult_x_u.clone())
        }
        _ => (vec![0.0; m], vec![0.0; n], vec![0.0; n]),
    };
    let mut c = Ctx { nlp, iterations: 0 };
    let start = thread_cpu_seconds();
    // SAFETY: all arrays have the declared sizes; `c` outlives the call.
    let code = unsafe {
        IpoptSolve(
            guard.0,
            x.as_mut_ptr(),
            g.as_mut_ptr(),
            &mut obj,
            mg.as_mut_ptr(),
            ml.as_mut_ptr(),
            mu.as_mut_ptr(),
            &mut c as *mut Ctx as *mut c_void,
        )
    };
    let cpu_seconds = thread_cpu_seconds() - start;
    drop(guard);
    let status = IpoptStatus::from_code(code);
    nlp.constraints(&x, &mut g);
    let violation = interval_violation(&g, &gl, &gu).max(interval_violation(&x, &xl, &xu));
    let sol = IpoptSolution {
        x,
        g,
        objective: obj,
        mult_g: mg,
        mult_x_l: ml,
        mult_x_u: mu,
        status,
        iterations: c.iterations,
        cpu_seconds,
        constraint_violation: violation,
    };
    if status.is_success() {
        Ok(sol)
    } else {
        Err(IpoptError::NotConverged {
            status,
            constraint_violation: violation,
            solution: Box::new(sol),
        })
    }
}
