//! The block fast path of the `drumwright` stepper (see the parent module's docs, "Block fast
//! path"): the step from a [`BlockSnapshot`] with the sparse Delassus matrix assembled body by
//! body, the normal stage by block principal pivoting and the friction stage by the
//! all-sticking solve or, when contacts slide, Newton's method on the multipliers of the
//! friction disks, each verified, with the dense Clarabel programs as the fallback.

use super::*;
use nonsmooth_core::snapshot::{BlockContact, MassBlock};

/// The sliding friction solve of the block path: accepted at a natural KKT residual of
/// 1e-12, far tighter than the interior-point tolerances of the Clarabel fallback, so that a
/// symmetric slide does not drift sideways by the tolerance over many steps (the incline box:
/// 1e-12 m across its slide in 100 s); 30 rounds; at most 16 frictional contacts (its
/// Newton step costs a back-solve per sliding contact and a dense factorization: the feet of
/// a robot or a box, not a toppling pile, whose friction stages stay with Clarabel).
const SLIDING: SlidingSettings = SlidingSettings {
    solve_tol: 1e-13,
    kkt_tol: 1e-12,
    max_rounds: 30,
    max_contacts: 16,
};

/// Whether a Delassus matrix of `rows` rows with about `entries` nonzeros (Σ over bodies of
/// the squared number of rows on the body) is worth the block fast path: at most
/// 16 entries per row (+ 1024), or at most a quarter of the dense matrix. Many contacts on
/// one body (the 900 points of the foundation) make it dense; a pile of spheres, each
/// touching a few others, keeps it sparse.
pub(super) fn delassus_is_sparse(entries: usize, rows: usize) -> bool {
    entries <= (16 * rows + 1024).max(rows * rows / 4)
}

/// One scalar row of the block (sparse) fast path: its coefficients on at most two joints'
/// velocity blocks (index into [`BlockSnapshot::blocks`], coefficients zero-padded to 6).
#[derive(Debug, Clone, Copy)]
pub(super) struct BlockRow {
    parts: [(usize, Vector6<f64>); 2],
    len: usize,
}

impl BlockRow {
    pub(super) fn parts(&self) -> &[(usize, Vector6<f64>)] {
        &self.parts[..self.len]
    }

    pub(super) fn dot(
        &self,
        blocks: &[nonsmooth_core::snapshot::MassBlock],
        v: &DVector<f64>,
    ) -> f64 {
        self.parts()
            .iter()
            .map(|(b, c)| {
                let blk = &blocks[*b];
                let n = blk.force.len().min(6);
                v.as_slice()[blk.v_index..blk.v_index + n]
                    .iter()
                    .zip(&c.as_slice()[..n])
                    .map(|(x, y)| x * y)
                    .sum::<f64>()
            })
            .sum()
    }
}

/// Clears `rows` and leaves `n` empty rows, keeping the rows' allocations.
pub(super) fn reset_rows<T>(rows: &mut Vec<Vec<T>>, n: usize) {
    rows.truncate(n);
    for r in rows.iter_mut() {
        r.clear();
    }
    while rows.len() < n {
        rows.push(Vec::new());
    }
}

/// Sets `x` to the zero vector of length `n`, reusing its storage when the length matches.
pub(super) fn reset_vector(x: &mut DVector<f64>, n: usize) {
    if x.len() == n {
        x.fill(0.0);
    } else {
        *x = DVector::zeros(n);
    }
}

/// Relative tolerance of the KKT checks of the fast per-step solvers.
pub(super) const FAST_KKT_TOL: f64 = 1e-9;

impl DrumwrightStepper {
    /// Whether the options allow the block fast path (staged coupling without contact Ġ).
    pub(super) fn fast_path_allowed(&self) -> bool {
        self.options.fast_solver
            && matches!(
                self.options.friction,
                FrictionCoupling::Staged { .. } | FrictionCoupling::OneProgram { .. }
            )
            && !self.options.unilateral_gdot
    }

    /// The block fast path on the per-body view of a step's contact set (`v0` the step's
    /// start velocity); `Ok(None)` when the actuation changes the mass blocks (servos) or
    /// the Delassus matrix is not sparse.
    pub(super) fn try_block_step(
        &mut self,
        view: &BlockView<'_>,
        v0: &DVector<f64>,
        h: f64,
    ) -> Result<Option<DVector<f64>>, SimError> {
        if view.implicit_diagonal.is_some() {
            return Ok(None);
        }
        let bs = view.snapshot;
        // Early sparsity estimate (the test of `block_program` on all detected contacts): many
        // contacts on one body (the foundation) stay on the Clarabel path.
        let mut per_body = vec![0usize; bs.block_of_body.len()];
        let mut rows = 0;
        for c in &bs.contacts {
            let k = 1 + if c.friction > 0.0 {
                c.tangents.len()
            } else {
                0
            };
            rows += k;
            for b in [c.body_a, c.body_b].into_iter().flatten() {
                if let Some(x) = per_body.get_mut(b) {
                    *x += k;
                }
            }
        }
        if !delassus_is_sparse(per_body.iter().map(|x| x * x).sum(), rows) {
            return Ok(None);
        }
        self.block_step(bs, v0, h, &view.forces)
    }

    /// The staged programs of one step on a [`BlockSnapshot`] with a sparse Delassus matrix
    /// and the step's generalized forces `forces` (actuation applied), written into the
    /// workspace `p` (its allocations are reused from step to step). `Ok(false)` when the
    /// Delassus matrix is not sparse enough for the fast path.
    pub(super) fn block_program(
        &self,
        bs: &BlockSnapshot,
        v0: &DVector<f64>,
        h: f64,
        forces: &DVector<f64>,
        p: &mut BlockProgram,
    ) -> Result<bool, SimError> {
        p.update_mass_inverses(&bs.blocks)?;
        p.free_velocity(&bs.blocks, v0, h, forces);
        self.block_rows(bs, v0, h, p);
        if !p.index_rows_by_block(bs.blocks.len()) {
            return Ok(false);
        }
        p.delassus();
        let bt = self.options.tangent_damping_times_h / h;
        p.compliance_terms(&bs.blocks, h, bt);
        p.split_delassus();
        Ok(true)
    }

    /// The contact rows of a block step (normals, then tangents) with their compliance
    /// laws, written over `p`'s rows and contacts (their storage reused).
    fn block_rows(&self, bs: &BlockSnapshot, v0: &DVector<f64>, h: f64, p: &mut BlockProgram) {
        let blocks = &bs.blocks;
        // Rows: contact normals (0..nu), then tangents (nu..nu+nt).
        p.normals.clear();
        p.tangents.clear();
        // Contacts are overwritten in place (their tangent index lists keep their storage).
        let mut n_contacts = 0;
        for (ci, c) in bs.contacts.iter().enumerate() {
            if self.options.inclusion == Inclusion::PenetratingOnly && c.gap > 0.0 {
                continue;
            }
            let nrow = block_row(bs, c, 0);
            let phidot = nrow.dot(blocks, v0);
            let (k, b, rigid) = self.contact_law(c.stiffness, c.damping, c.law, c.gap, phidot, h);
            if !rigid && h * h * k + h * b <= 0.0 {
                continue;
            }
            let normal = p.normals.len();
            p.normals.push((
                nrow,
                Row {
                    g: DVector::zeros(0),
                    phi: c.gap,
                    gdot_v: 0.0,
                    k,
                    b,
                    rigid,
                },
            ));
            if n_contacts == p.contacts.len() {
                p.contacts.push(ContactRows {
                    snapshot_index: ci,
                    normal,
                    tangents: Vec::new(),
                    mu: c.friction,
                });
            }
            let cr = &mut p.contacts[n_contacts];
            n_contacts += 1;
            cr.snapshot_index = ci;
            cr.normal = normal;
            cr.mu = c.friction;
            cr.tangents.clear();
            if c.friction > 0.0 {
                for t in 0..c.tangents.len() {
                    cr.tangents.push(p.tangents.len());
                    p.tangents.push(block_row(bs, c, 1 + t));
                }
            }
        }
        p.contacts.truncate(n_contacts);
    }

    /// Normal stage of a block program by the fast solver (block principal pivoting), with
    /// its KKT checks; `None` when it fails them.
    pub(super) fn fast_normal(
        &self,
        p: &BlockProgram,
        lt: &DVector<f64>,
        warm: &[bool],
    ) -> Option<DVector<f64>> {
        let c = &p.rq - sparse_mul(&p.wut, lt);
        let nu = p.rq.len();
        block_pivoting_factored(&p.a_mat, &c, warm, 100 + 2 * nu)
            .filter(|s| {
                natural_residual(&p.a_mat, &c, &s.lambda) <= FAST_KKT_TOL
                    && (self.options.unilateral == UnilateralForm::MaxLcp
                        || min_norm_certificate_factored(
                            &p.a_mat,
                            &s.lambda,
                            FAST_KKT_TOL,
                            s.factor.as_ref().map(|f| (s.active.as_slice(), f)),
                        ))
            })
            .map(|s| s.lambda)
    }

    /// Coulomb disks `(tangent rows, μ λ_n)` of the friction stage.
    pub(super) fn disks(p: &BlockProgram, lu: &DVector<f64>) -> Vec<(Vec<usize>, f64)> {
        let mut out = Vec::new();
        Self::disks_into(p, lu, &mut out);
        out
    }

    /// [`Self::disks`] written into `out`, reusing its allocations.
    pub(super) fn disks_into(
        p: &BlockProgram,
        lu: &DVector<f64>,
        out: &mut Vec<(Vec<usize>, f64)>,
    ) {
        let mut k = 0;
        for c in p.contacts.iter().filter(|c| !c.tangents.is_empty()) {
            let b = c.mu * lu[c.normal].max(0.0);
            if k < out.len() {
                out[k].0.clear();
                out[k].0.extend_from_slice(&c.tangents);
                out[k].1 = b;
            } else {
                out.push((c.tangents.clone(), b));
            }
            k += 1;
        }
        out.truncate(k);
    }

    /// `e = d_t + S_t W_tu λ_u` of the friction stage.
    pub(super) fn friction_offset(p: &BlockProgram, lu: &DVector<f64>) -> DVector<f64> {
        &p.d_t + p.s_t.component_mul(&sparse_mul(&p.wtu, lu))
    }

    /// The dense [`Program`] of a block program (Clarabel fallback).
    pub(super) fn dense_program(p: &BlockProgram, planar: bool) -> Program {
        Program {
            w: p.w.to_dense(),
            rq: p.rq.clone(),
            r: p.r.clone(),
            s_t: p.s_t.clone(),
            d_t: p.d_t.clone(),
            nu: p.rq.len(),
            lift: None,
            planar,
        }
    }

    /// Solves both stages of the first staged sweep (friction forces zero in the normal
    /// stage; the friction stage with the Clarabel normal forces) with the fast solvers and
    /// with Clarabel, for the agreement tests of the fast path. `Ok(None)` when the model
    /// does not qualify for the block fast path.
    ///
    /// # Errors
    /// Invalid states and Clarabel failures.
    pub fn compare_fast_stages(
        &self,
        model: &Model,
        state: &State,
        h: f64,
    ) -> Result<Option<StageComparison>, SimError> {
        // The per-body view of the shared contact-set stage, within the model's margin.
        let none = crate::actuation::Actuation::none();
        let step = crate::pipeline::prepare(model, state, &none, h)?;
        let margins = ContactMargins::uniform(model.contact_margin);
        let mut workspace = SnapshotWorkspace::default();
        let contacts = ContactSet::detect(&step, margins, true, &mut workspace)?;
        let Some(view) = contacts.blocks() else {
            return Ok(None);
        };
        let bs = view.snapshot;
        let mut p = BlockProgram::default();
        if !self.block_program(bs, &state.v, h, &view.forces, &mut p)? {
            return Ok(None);
        }
        let nu = p.rq.len();
        let nt = p.s_t.len();
        let planar = bs.dimension == Dimension::Planar;
        let dense = Self::dense_program(&p, planar);
        let rows = StepRows {
            contacts: p.contacts.clone(),
            ..StepRows::default()
        };
        let no_mass = MassSolver::empty();
        let mut report = StepReport::default();
        let lt0 = DVector::zeros(nt);
        let warm: Vec<bool> = p.rq.iter().map(|&x| x > 0.0).collect();
        let normal_fast = self.fast_normal(&p, &lt0, &warm);
        let normal_clarabel = self.normal_stage(&dense, &no_mass, &lt0, &mut report)?;
        let lcp_form = DrumwrightStepper::new(DrumwrightOptions {
            unilateral: UnilateralForm::MaxLcp,
            ..self.options.clone()
        });
        let normal_clarabel_lcp = lcp_form.normal_stage(&dense, &no_mass, &lt0, &mut report)?;
        let c = &p.rq - sparse_mul(&p.wut, &lt0);
        let normal_residual = normal_fast
            .as_ref()
            .map(|x| natural_residual(&p.a_mat, &c, x));
        let (
            friction_fast,
            friction_clarabel,
            friction_kkt,
            gradient_fast,
            gradient_clarabel,
            objective_fast,
            objective_clarabel,
            cone_clarabel,
        ) = if nt > 0 {
            let e = Self::friction_offset(&p, &normal_clarabel);
            let disks = Self::disks(&p, &normal_clarabel);
            let fast = solve_friction_sticking(&p.e_rows, &e, &disks, 1e-13);
            let clar = if e.amax() == 0.0 {
                DVector::zeros(nt)
            } else {
                self.friction_stage(&dense, &no_mass, &rows, &normal_clarabel, &mut report)?
            };
            let kkt = fast
                .as_ref()
                .map(|x| friction_residual(&p.e_rows, &e, &disks, x));
            let grad_fast = fast
                .as_ref()
                .map(|x| friction_gradient(&p.e_rows, &e, x).amax());
            let grad_clar = friction_gradient(&p.e_rows, &e, &clar).amax();
            let obj_fast = fast.as_ref().map(|x| friction_objective(&p.e_rows, &e, x));
            let obj_clar = friction_objective(&p.e_rows, &e, &clar);
            let cone_clar = disks
                .iter()
                .map(|(rows, b)| rows.iter().map(|&i| clar[i] * clar[i]).sum::<f64>().sqrt() - b)
                .fold(0.0, f64::max);
            (
                fast, clar, kkt, grad_fast, grad_clar, obj_fast, obj_clar, cone_clar,
            )
        } else {
            (
                Some(DVector::zeros(0)),
                DVector::zeros(0),
                Some((0.0, 0.0)),
                Some(0.0),
                0.0,
                Some(0.0),
                0.0,
                0.0,
            )
        };
        let _ = nu;
        Ok(Some(StageComparison {
            normal_fast,
            normal_clarabel,
            normal_residual,
            friction_fast,
            friction_clarabel,
            friction_residual: friction_kkt,
            normal_matrix: p.a_mat.clone(),
            normal_clarabel_lcp,
            gradient_fast,
            gradient_clarabel,
            objective_fast,
            objective_clarabel,
            cone_clarabel,
        }))
    }

    /// One step on a [`BlockSnapshot`]: the staged programs with a sparse Delassus matrix,
    /// solved by the specialized sparse solvers of
    /// [`nonsmooth_solvers::lcp::block_pivoting`](mod@nonsmooth_solvers::lcp::block_pivoting)
    /// and [`nonsmooth_solvers::friction`] with Clarabel as the fallback.
    pub(super) fn block_step(
        &mut self,
        bs: &BlockSnapshot,
        v0: &DVector<f64>,
        h: f64,
        forces: &DVector<f64>,
    ) -> Result<Option<DVector<f64>>, SimError> {
        let mut p = std::mem::take(&mut self.block_work);
        if !self.block_program(bs, v0, h, forces, &mut p)? {
            self.block_work = p;
            return Ok(None);
        }
        let mut report = StepReport::default();
        let one_program = match self.options.friction {
            FrictionCoupling::OneProgram { rounds } => {
                self.block_one_program(bs, &p, v0, h, rounds, &mut report)?
            }
            _ => None,
        };
        let (lu, lt) = match one_program {
            Some(forces) => {
                report.sweep_limit_reached = false;
                forces
            }
            None => {
                let (lu, lt, converged) = self.block_sweeps(bs, &mut p, &mut report)?;
                report.sweep_limit_reached = !converged;
                (lu, lt)
            }
        };
        if report.solver_status.is_none() && report.fast_solves > 0 {
            report.solver_status = Some(SolveStatus::Solved);
        }
        let v1 = block_velocity(&mut p, &bs.blocks, &lu, &lt, h);
        if !v1.iter().all(|x| x.is_finite()) {
            return Err(SimError::Diverged {
                t: bs.t + h,
                reason: "drumwright produced a non-finite velocity".into(),
            });
        }
        self.remember_block_contacts(bs, &p.contacts, &lu, &lt);
        report.contacts = self.block_contact_forces(bs, &p, &v1, &lu, &lt, h);
        self.last = report;
        self.block_work = p;
        Ok(Some(v1))
    }

    /// The one program of a block step; the normal and tangent forces when it is solved
    /// (and, for [`UnilateralForm::MinNorm`], certified), `None` when the step falls back
    /// to the staged sweeps.
    fn block_one_program(
        &mut self,
        bs: &BlockSnapshot,
        p: &BlockProgram,
        v0: &DVector<f64>,
        h: f64,
        rounds: usize,
        report: &mut StepReport,
    ) -> Result<Option<BlockForces>, SimError> {
        let nu = p.rq.len();
        let nt = p.s_t.len();
        let planar = bs.dimension == Dimension::Planar;
        let input = self.block_program_input(bs, p, v0, h, planar);
        let solved = self.solve_one_program(&input, h, rounds)?.filter(|sol| {
            self.options.unilateral == UnilateralForm::MaxLcp
                || min_norm_certificate(
                    &p.a_mat,
                    &sol.lambda.rows(0, nu).into_owned(),
                    FAST_KKT_TOL,
                )
        });
        Ok(match solved {
            Some(sol) => {
                report.one_program = true;
                report.fell_back = sol.fell_back;
                report.newton_iterations = sol.newton_iterations;
                report.program_rounds = sol.rounds;
                report.solver_status = Some(SolveStatus::Solved);
                Some((
                    sol.lambda.rows(0, nu).into_owned(),
                    sol.lambda.rows(nu, nt).into_owned(),
                ))
            }
            None => {
                report.fell_back = true;
                None
            }
        })
    }

    /// The staged normal/friction sweeps (D5) of a block program, each stage by the fast
    /// solver with Clarabel as the fallback; returns the normal forces, the tangent forces
    /// and whether the sweeps converged.
    fn block_sweeps(
        &self,
        bs: &BlockSnapshot,
        p: &mut BlockProgram,
        report: &mut StepReport,
    ) -> Result<(DVector<f64>, DVector<f64>, bool), SimError> {
        let nu = p.rq.len();
        let nt = p.s_t.len();
        let warm = self.warm_active_set(bs, p);
        let mut dense_program: Option<Program> = None;
        let mut dense_rows: Option<StepRows> = None;
        let no_mass = MassSolver::empty();
        let planar = bs.dimension == Dimension::Planar;
        let sweeps = match self.options.friction {
            FrictionCoupling::Staged { sweeps } => sweeps,
            FrictionCoupling::Literal { .. } => 1,
            FrictionCoupling::OneProgram { .. } => self.options.fallback_sweeps,
        };
        let mut lt = DVector::zeros(nt);
        let mut lu = DVector::zeros(nu);
        for _ in 0..sweeps.max(1) {
            let lu_new = match self.fast_normal(p, &lt, &warm) {
                Some(x) => {
                    report.fast_solves += 1;
                    report.hessian_nnz = p.a_mat.nnz();
                    x
                }
                None => {
                    report.fallbacks += 1;
                    let dp = dense_program.get_or_insert_with(|| Self::dense_program(p, planar));
                    self.normal_stage(dp, &no_mass, &lt, report)?
                }
            };
            if nt == 0 {
                return Ok((lu_new, lt, true));
            }
            let e_vec = Self::friction_offset(p, &lu_new);
            let lt_new = if e_vec.amax() == 0.0 {
                DVector::zeros(nt)
            } else {
                let mut disks = std::mem::take(&mut p.disks);
                Self::disks_into(p, &lu_new, &mut disks);
                let fast =
                    solve_friction_sticking(&p.e_rows, &e_vec, &disks, 1e-13).or_else(|| {
                        solve_friction_sliding(
                            &p.e_rows,
                            &e_vec,
                            &disks,
                            &SLIDING,
                            &mut p.friction_nu,
                        )
                    });
                p.disks = disks;
                match fast {
                    Some(x) => {
                        report.fast_solves += 1;
                        x
                    }
                    None => {
                        report.fallbacks += 1;
                        let dp =
                            dense_program.get_or_insert_with(|| Self::dense_program(p, planar));
                        let dr = dense_rows.get_or_insert_with(|| StepRows {
                            contacts: p.contacts.clone(),
                            ..StepRows::default()
                        });
                        self.friction_stage(dp, &no_mass, dr, &lu_new, report)?
                    }
                }
            };
            report.sweeps += 1;
            if accept_sweep(
                &mut lu,
                &mut lt,
                lu_new,
                lt_new,
                self.options.sweep_tolerance,
            ) {
                return Ok((lu, lt, true));
            }
        }
        Ok((lu, lt, false))
    }

    /// Warm start of the normal stage: the previous step's active contacts (a new contact
    /// is active when its `R q` is positive).
    fn warm_active_set(&self, bs: &BlockSnapshot, p: &BlockProgram) -> Vec<bool> {
        p.contacts
            .iter()
            .map(|c| {
                let bc = &bs.contacts[c.snapshot_index];
                let key = (bc.collider_a, bc.collider_b, bc.feature);
                self.warm_active
                    .binary_search_by(|e| e.0.cmp(&key))
                    .map_or(p.rq[c.normal] > 0.0, |k| self.warm_active[k].1)
            })
            .collect()
    }

    /// Keeps this step's active contacts (the next warm start) and, for the one program,
    /// their normal forces (the next friction bounds).
    fn remember_block_contacts(
        &mut self,
        bs: &BlockSnapshot,
        contacts: &[ContactRows],
        lu: &DVector<f64>,
        lt: &DVector<f64>,
    ) {
        self.warm_active.clear();
        for c in contacts {
            let bc = &bs.contacts[c.snapshot_index];
            self.warm_active.push((
                (bc.collider_a, bc.collider_b, bc.feature),
                lu[c.normal] > 0.0,
            ));
        }
        self.warm_active.sort_unstable_by_key(|a| a.0);
        self.warm_active.dedup_by(|a, b| a.0 == b.0);
        if matches!(self.options.friction, FrictionCoupling::OneProgram { .. }) {
            self.remember_forces(contacts.iter().map(|c| {
                let bc = &bs.contacts[c.snapshot_index];
                let mut f = [lu[c.normal], 0.0, 0.0];
                for (k, &t) in c.tangents.iter().take(2).enumerate() {
                    f[1 + k] = lt[t];
                }
                ((bc.collider_a, bc.collider_b, bc.feature), f)
            }));
        }
    }

    /// Contact forces of the report, written over the previous report's entries (their
    /// tangent and slip vectors keep their storage).
    fn block_contact_forces(
        &mut self,
        bs: &BlockSnapshot,
        p: &BlockProgram,
        v1: &DVector<f64>,
        lu: &DVector<f64>,
        lt: &DVector<f64>,
        h: f64,
    ) -> Vec<ContactForce> {
        let blocks = &bs.blocks;
        let contacts = &p.contacts;
        let mut forces = std::mem::take(&mut self.last.contacts);
        forces.truncate(contacts.len());
        for (k, c) in contacts.iter().enumerate() {
            let (nrow, row) = &p.normals[c.normal];
            let phidot1 = nrow.dot(blocks, v1);
            let phi1 = row.phi + h * phidot1;
            let spring = if row.rigid {
                lu[c.normal]
            } else {
                (-row.k * phi1 - row.b * phidot1).max(0.0)
            };
            if k == forces.len() {
                forces.push(ContactForce {
                    contact: 0,
                    normal: 0.0,
                    tangent: Vec::new(),
                    spring_normal: 0.0,
                    slip: Vec::new(),
                });
            }
            let f = &mut forces[k];
            f.contact = c.snapshot_index;
            f.normal = lu[c.normal];
            f.spring_normal = spring;
            f.tangent.clear();
            f.tangent.extend(c.tangents.iter().map(|&t| lt[t]));
            f.slip.clear();
            f.slip
                .extend(c.tangents.iter().map(|&t| p.tangents[t].dot(blocks, v1)));
        }
        forces
    }
}

/// The forces of a block step: normal rows, then tangent rows.
type BlockForces = (DVector<f64>, DVector<f64>);

/// `v₁ = v_free + h M⁻¹ Gᵀ λ`, block by block.
fn block_velocity(
    p: &mut BlockProgram,
    blocks: &[MassBlock],
    lu: &DVector<f64>,
    lt: &DVector<f64>,
    h: f64,
) -> DVector<f64> {
    let nu = p.rq.len();
    let nt = p.s_t.len();
    p.gt_lambda.clear();
    p.gt_lambda.resize(blocks.len(), Vector6::zeros());
    for i in 0..nu + nt {
        let l = if i < nu { lu[i] } else { lt[i - nu] };
        if l == 0.0 {
            continue;
        }
        for (b, c) in row_ref(&p.normals, &p.tangents, i).parts() {
            p.gt_lambda[*b] += c * l;
        }
    }
    let mut v1 = p.v_free.clone();
    for ((b, mi), f) in blocks.iter().zip(&p.minv).zip(&p.gt_lambda) {
        let dv = mi * f * h;
        for k in 0..b.force.len() {
            v1[b.v_index + k] += dv[k];
        }
    }
    v1
}

impl DrumwrightStepper {
    /// The one program of a block step (see the `one_program` module): the mass blocks, the
    /// free velocity and the rows of `p`, `v̂ = −(ε/h)φ₀` per normal row (no Ġ on this
    /// path), `W_ii` from the sparse Delassus matrix.
    pub(super) fn block_program_input<'a>(
        &self,
        bs: &'a BlockSnapshot,
        p: &'a BlockProgram,
        v0: &'a DVector<f64>,
        h: f64,
        planar: bool,
    ) -> ProgramInput<'a> {
        let blocks = &bs.blocks;
        let jac = |r: &BlockRow| -> Vec<(usize, f64)> {
            let mut out = Vec::with_capacity(12);
            for (b, c) in r.parts() {
                let blk = &blocks[*b];
                for k in 0..blk.force.len().min(6) {
                    if c[k] != 0.0 {
                        out.push((blk.v_index + k, c[k]));
                    }
                }
            }
            out
        };
        let nu = p.normals.len();
        let tangent_row = Row {
            g: DVector::zeros(0),
            phi: 0.0,
            gdot_v: 0.0,
            k: 0.0,
            b: self.options.tangent_damping_times_h / h,
            rigid: false,
        };
        let normals = p
            .normals
            .iter()
            .enumerate()
            .map(|(i, (br, row))| ProgramRow {
                jac: jac(br),
                r: self.program_r(row, p.w.get(i, i), h, false),
                v_hat: -(row.eps(h) / h) * row.phi,
            })
            .collect();
        let tangents = p
            .tangents
            .iter()
            .enumerate()
            .map(|(t, br)| ProgramRow {
                jac: jac(br),
                r: self.program_r(&tangent_row, p.w.get(nu + t, nu + t), h, true),
                v_hat: 0.0,
            })
            .collect();
        let force_guess = force_guesses(
            &self.program_forces,
            p.contacts.iter().map(|c| {
                let bc = &bs.contacts[c.snapshot_index];
                (bc.collider_a, bc.collider_b, bc.feature)
            }),
        );
        ProgramInput {
            mass: ProgramMass::Blocks(blocks),
            v_free: &p.v_free,
            normals,
            tangents,
            contacts: &p.contacts,
            force_guess,
            warm: v0,
            planar,
        }
    }
}

/// Data of one step of the block fast path (see [`DrumwrightStepper::block_program`]), kept
/// in the stepper as a workspace whose allocations are reused from step to step.
#[derive(Debug, Clone, Default)]
pub(super) struct BlockProgram {
    /// Inverses of the mass blocks (zero-padded to 6 × 6).
    minv: Vec<Matrix6<f64>>,
    /// The (size, zero-padded) mass blocks `minv` was computed from.
    mass_key: Vec<(usize, Matrix6<f64>)>,
    /// `v₀ + h M⁻¹ f`.
    v_free: DVector<f64>,
    /// Normal rows with their spring–damper data.
    normals: Vec<(BlockRow, Row)>,
    /// Tangent rows.
    tangents: Vec<BlockRow>,
    /// Contacts (indices into `normals` / `tangents`).
    contacts: Vec<ContactRows>,
    /// The full sparse Delassus matrix (normals then tangents).
    w: SymSparse,
    rq: DVector<f64>,
    r: DVector<f64>,
    s_t: DVector<f64>,
    d_t: DVector<f64>,
    /// `R + W_uu`.
    a_mat: SymSparse,
    /// Rows of W_ut.
    wut: Vec<Vec<(usize, f64)>>,
    /// Rows of W_tu.
    wtu: Vec<Vec<(usize, f64)>>,
    /// Rows of E = I + S_t W_tt.
    e_rows: Vec<Vec<(usize, f64)>>,
    /// Scratch: (row, part) pairs touching each block.
    per_block: Vec<Vec<(usize, usize)>>,
    /// Scratch: `M_b⁻¹ gᵀ` of each row's (at most two) parts.
    ys: Vec<[Vector6<f64>; 2]>,
    /// Scratch: `Gᵀ λ` per block.
    gt_lambda: Vec<Vector6<f64>>,
    /// Scratch: `G v_free`.
    gv: Vec<f64>,
    /// Scratch: the Coulomb disks of the friction stage.
    disks: Vec<(Vec<usize>, f64)>,
    /// The disk multipliers of the last sliding friction solve (its warm start).
    friction_nu: Vec<f64>,
}

impl BlockProgram {
    /// Row i (normals, then tangents).
    pub(super) fn row(&self, i: usize) -> &BlockRow {
        row_ref(&self.normals, &self.tangents, i)
    }
}

/// Row `r` of contact `c` (0: the normal, 1 + t: tangent t) as its parts on the (at most
/// two) blocks of the contact's bodies.
fn block_row(bs: &BlockSnapshot, c: &BlockContact, r: usize) -> BlockRow {
    let mut row = BlockRow {
        parts: [(0, Vector6::zeros()); 2],
        len: 0,
    };
    for (body, rows) in [(c.body_a, &c.rows.a), (c.body_b, &c.rows.b)] {
        let Some(k) = body.and_then(|b| bs.block_of_body.get(b).copied().flatten()) else {
            continue;
        };
        if rows.ncols() == 0 || rows.ncols() > 6 || r >= rows.nrows() {
            continue;
        }
        let mut g = Vector6::zeros();
        let nr = rows.nrows();
        for (gj, col) in g.iter_mut().zip(rows.as_slice().chunks_exact(nr)) {
            *gj = col[r];
        }
        row.parts[row.len] = (k, g);
        row.len += 1;
    }
    row
}

impl BlockProgram {
    /// `M_b⁻¹` per block (zero-padded to 6 × 6), recomputed only for blocks whose mass
    /// matrix differs (entry for entry) from the one the cached inverse was computed from:
    /// the blocks of floating bodies whose origin is the centre of mass (spheres) depend
    /// only on the model (v = (parent-frame linear, body-frame angular)), so their Cholesky
    /// factorization and inverse are computed once.
    fn update_mass_inverses(&mut self, blocks: &[MassBlock]) -> Result<(), SimError> {
        let p = self;
        p.minv.truncate(blocks.len());
        p.mass_key.truncate(blocks.len());
        for (k, b) in blocks.iter().enumerate() {
            let n = b.mass.nrows();
            if n > 6 || b.mass.ncols() != n {
                return Err(invalid("mass block larger than 6 × 6"));
            }
            let unchanged = p.mass_key.get(k).is_some_and(|(kn, key)| {
                if *kn != n {
                    false
                } else if n == 6 {
                    key.as_slice() == b.mass.as_slice()
                } else {
                    key.view((0, 0), (n, n)) == b.mass
                }
            });
            if unchanged {
                continue;
            }
            let mut key = Matrix6::zeros();
            key.view_mut((0, 0), (n, n)).copy_from(&b.mass);
            let bad = || invalid("mass matrix is not positive definite");
            let inv = if n == 6 {
                key.cholesky().ok_or_else(bad)?.inverse()
            } else {
                let small = b.mass.clone().cholesky().ok_or_else(bad)?.inverse();
                let mut m = Matrix6::zeros();
                m.view_mut((0, 0), (n, n)).copy_from(&small);
                m
            };
            if k < p.minv.len() {
                p.minv[k] = inv;
                p.mass_key[k] = (n, key);
            } else {
                p.minv.push(inv);
                p.mass_key.push((n, key));
            }
        }
        Ok(())
    }

    /// `v_free = v₀ + h M⁻¹ f̃`, block by block (`forces` = f̃, the step's generalized
    /// forces with the actuation and any external load).
    fn free_velocity(
        &mut self,
        blocks: &[MassBlock],
        v0: &DVector<f64>,
        h: f64,
        forces: &DVector<f64>,
    ) {
        let p = self;
        if p.v_free.len() == v0.len() {
            p.v_free.copy_from(v0);
        } else {
            p.v_free = v0.clone();
        }
        for (b, mi) in blocks.iter().zip(&p.minv) {
            let n = b.force.len();
            let mut f = Vector6::zeros();
            for k in 0..n {
                f[k] = forces[b.v_index + k];
            }
            let dv = mi * f * h;
            for k in 0..n {
                p.v_free[b.v_index + k] += dv[k];
            }
        }
    }

    /// Lists the (row, part) pairs touching each of the `n_blocks` blocks; `false` when the
    /// Delassus matrix they imply is not sparse enough for the fast path.
    fn index_rows_by_block(&mut self, n_blocks: usize) -> bool {
        let p = self;
        let n = p.normals.len() + p.tangents.len();
        reset_rows(&mut p.per_block, n_blocks);
        for i in 0..n {
            let r = row_ref(&p.normals, &p.tangents, i);
            for (k, (b, _)) in r.parts().iter().enumerate() {
                p.per_block[*b].push((i, k));
            }
        }
        let work: usize = p.per_block.iter().map(|l| l.len() * l.len()).sum();
        delassus_is_sparse(work, n)
    }

    /// The sparse Delassus matrix `W = G M⁻¹ Gᵀ` row by row: `M_b⁻¹ gᵀ` of every (row,
    /// block) part first, then row i of W as the merge of the (sorted) row lists of its at
    /// most two blocks, so its entries come out sorted by column with shared columns summed.
    fn delassus(&mut self) {
        let p = self;
        let n = p.normals.len() + p.tangents.len();
        p.ys.clear();
        for i in 0..n {
            let r = row_ref(&p.normals, &p.tangents, i);
            let mut y = [Vector6::zeros(); 2];
            for (k, (b, g)) in r.parts().iter().enumerate() {
                y[k] = p.minv[*b] * g;
            }
            p.ys.push(y);
        }
        p.w.n = n;
        reset_rows(&mut p.w.rows, n);
        for (i, row) in p.w.rows.iter_mut().enumerate() {
            let parts = row_ref(&p.normals, &p.tangents, i).parts();
            let list = |k: usize| parts.get(k).map_or(&[][..], |(b, _)| &p.per_block[*b][..]);
            let (l1, l2) = (list(0), list(1));
            let val = |k: usize, (j, q): (usize, usize)| parts[k].1.dot(&p.ys[j][q]);
            let (mut a, mut b) = (0, 0);
            while a < l1.len() || b < l2.len() {
                let ja = l1.get(a).map_or(usize::MAX, |e| e.0);
                let jb = l2.get(b).map_or(usize::MAX, |e| e.0);
                if ja < jb {
                    row.push((ja, val(0, l1[a])));
                    a += 1;
                } else if jb < ja {
                    row.push((jb, val(1, l2[b])));
                    b += 1;
                } else {
                    row.push((ja, val(0, l1[a]) + val(1, l2[b])));
                    a += 1;
                    b += 1;
                }
            }
        }
    }

    /// `G v_free`, `R` and `R q` of the normal rows (eq 82 scaled by R), `S_t` and `d_t` of
    /// the tangent rows (damping `bt`, §6.4).
    fn compliance_terms(&mut self, blocks: &[MassBlock], h: f64, bt: f64) {
        let p = self;
        let nu = p.normals.len();
        let nt = p.tangents.len();
        p.gv.clear();
        for i in 0..nu + nt {
            let gv = p.row(i).dot(blocks, &p.v_free);
            p.gv.push(gv);
        }
        reset_vector(&mut p.rq, nu);
        reset_vector(&mut p.r, nu);
        for (i, (_, row)) in p.normals.iter().enumerate() {
            p.r[i] = row.r(h);
            p.rq[i] = -(row.eps(h) / (h * h)) * row.phi - p.gv[i] / h;
        }
        reset_vector(&mut p.s_t, nt);
        reset_vector(&mut p.d_t, nt);
        for i in 0..nt {
            p.s_t[i] = h * bt;
            p.d_t[i] = bt * p.gv[nu + i];
        }
    }

    /// The sub-blocks of W the staged solvers read (rows stay sorted by column): `R + W_uu`,
    /// `W_ut`, `W_tu` and `E = I + S_t W_tt`.
    fn split_delassus(&mut self) {
        let p = self;
        let nu = p.normals.len();
        let nt = p.tangents.len();
        p.a_mat.n = nu;
        reset_rows(&mut p.a_mat.rows, nu);
        reset_rows(&mut p.wut, nu);
        reset_rows(&mut p.wtu, nt);
        reset_rows(&mut p.e_rows, nt);
        for (i, row) in p.w.rows.iter().enumerate() {
            let split = row.partition_point(|e| e.0 < nu);
            let (lo, hi) = row.split_at(split);
            if i < nu {
                let ar = &mut p.a_mat.rows[i];
                ar.extend_from_slice(lo);
                if let Some(d) = ar.iter_mut().find(|e| e.0 == i) {
                    d.1 += p.r[i];
                } else {
                    ar.push((i, p.r[i]));
                    ar.sort_unstable_by_key(|e| e.0);
                }
                p.wut[i].extend(hi.iter().map(|&(j, v)| (j - nu, v)));
            } else {
                let k = i - nu;
                p.wtu[k].extend_from_slice(lo);
                // E = I + S_t W_tt.
                let er = &mut p.e_rows[k];
                er.extend(hi.iter().map(|&(j, v)| (j - nu, p.s_t[k] * v)));
                if let Some(d) = er.iter_mut().find(|e| e.0 == k) {
                    d.1 += 1.0;
                } else {
                    er.push((k, 1.0));
                    er.sort_unstable_by_key(|e| e.0);
                }
            }
        }
    }
}

/// Row i of the rows `normals` then `tangents`.
pub(super) fn row_ref<'a>(
    normals: &'a [(BlockRow, Row)],
    tangents: &'a [BlockRow],
    i: usize,
) -> &'a BlockRow {
    match normals.get(i) {
        Some((r, _)) => r,
        None => &tangents[i - normals.len()],
    }
}

/// `X x` for X stored by rows.
pub(super) fn sparse_mul(rows: &[Vec<(usize, f64)>], x: &DVector<f64>) -> DVector<f64> {
    DVector::from_iterator(
        rows.len(),
        rows.iter()
            .map(|r| r.iter().map(|&(j, v)| v * x[j]).sum::<f64>()),
    )
}

/// Both stages of a staged sweep solved by the fast solvers and by Clarabel
/// ([`DrumwrightStepper::compare_fast_stages`]).
#[derive(Debug, Clone)]
pub struct StageComparison {
    /// Normal stage by block principal pivoting (`None`: failed its KKT check).
    pub normal_fast: Option<DVector<f64>>,
    /// Normal stage by Clarabel.
    pub normal_clarabel: DVector<f64>,
    /// Complementarity residual of `normal_fast` (see
    /// [`nonsmooth_solvers::lcp::natural_residual`]).
    pub normal_residual: Option<f64>,
    /// Friction stage (with the Clarabel normal forces) by the sticking solver (`None`:
    /// some contact slides, or the check failed).
    pub friction_fast: Option<DVector<f64>>,
    /// Friction stage by Clarabel.
    pub friction_clarabel: DVector<f64>,
    /// (natural residual, cone violation) of `friction_fast`
    /// ([`nonsmooth_solvers::friction::friction_residual`]).
    pub friction_residual: Option<(f64, f64)>,
    /// The normal-stage matrix `R + W_uu` (sparse).
    pub normal_matrix: SymSparse,
    /// Normal stage by Clarabel in the LCP-equivalent form ([`UnilateralForm::MaxLcp`]),
    /// whose solution the pivoting method computes (and certifies as the min-norm
    /// solution with [`nonsmooth_solvers::lcp::min_norm_certificate`]).
    pub normal_clarabel_lcp: DVector<f64>,
    /// `‖∇‖∞` of the friction objective at `friction_fast`, gradient in factored form
    /// ([`nonsmooth_solvers::friction::friction_gradient`]; zero at a sticking optimum).
    pub gradient_fast: Option<f64>,
    /// The same at `friction_clarabel`.
    pub gradient_clarabel: f64,
    /// Friction objective ½‖λ‖² + ½‖Eλ + e‖² at `friction_fast`
    /// ([`nonsmooth_solvers::friction::friction_objective`]).
    pub objective_fast: Option<f64>,
    /// The same at `friction_clarabel`.
    pub objective_clarabel: f64,
    /// Largest cone violation of `friction_clarabel`.
    pub cone_clarabel: f64,
}
