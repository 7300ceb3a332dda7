//! The staged programs of a `drumwright` step after bilateral elimination (D4, D5): the
//! normal/unilateral stage, the friction stage with the Coulomb cones, their lifted (sparse)
//! forms and the literal Appendix 0.A program, each solved by Clarabel.

use super::*;

/// The data of the per-step convex program after bilateral elimination.
pub(super) struct Program {
    /// Rows: unilateral (0..nu) then tangents (nu..nu+nt).
    pub(super) w: DMatrix<f64>,
    /// R q for unilateral rows (scaled right-hand side).
    pub(super) rq: DVector<f64>,
    /// R for unilateral rows.
    pub(super) r: DVector<f64>,
    /// S for tangent rows.
    pub(super) s_t: DVector<f64>,
    /// d for tangent rows.
    pub(super) d_t: DVector<f64>,
    pub(super) nu: usize,
    /// Sparse data of the lifted form (fast path); `w` is empty when present.
    pub(super) lift: Option<Lift>,
    /// Whether the friction rows are planar (one tangent per contact, §6.3).
    pub(super) planar: bool,
}

impl Program {
    /// The dense form of a lifted program (fallback when a lifted solve fails).
    pub(super) fn dense(&self, lam: &MassSolver) -> Program {
        let w = match &self.lift {
            Some(l) => lam.delassus_dense(&l.gs),
            None => self.w.clone(),
        };
        Program {
            w,
            rq: self.rq.clone(),
            r: self.r.clone(),
            s_t: self.s_t.clone(),
            d_t: self.d_t.clone(),
            nu: self.nu,
            lift: None,
            planar: self.planar,
        }
    }
}

/// Data of the lifted (sparse) form: `u = Λ G*ᵀ λ*` with `Λ⁻¹ = M + G_bᵀS_bG_b`.
pub(super) struct Lift {
    /// Nonzeros (row, column, value) of the unilateral rows G_u.
    pub(super) gu: Vec<(usize, usize, f64)>,
    /// Nonzeros of the tangent rows G_t.
    pub(super) gt: Vec<(usize, usize, f64)>,
    /// Upper-triangle nonzeros of the augmented mass Λ⁻¹.
    pub(super) aug_upper: Vec<(usize, usize, f64)>,
    /// All nonzeros of Λ⁻¹.
    pub(super) aug: Vec<(usize, usize, f64)>,
    pub(super) nv: usize,
    /// The stacked rows G* (unilateral then tangent), for the coupling products
    /// `G_u Λ G_tᵀ λ_t` and `G_t Λ G_uᵀ λ_u` of the staged sweeps.
    pub(super) gs: DMatrix<f64>,
}

/// Nonzero triplets of a dense matrix.
pub(super) fn dense_triplets(m: &DMatrix<f64>) -> Vec<(usize, usize, f64)> {
    let mut t = Vec::new();
    for j in 0..m.ncols() {
        for i in 0..m.nrows() {
            let v = m[(i, j)];
            if v != 0.0 {
                t.push((i, j, v));
            }
        }
    }
    t
}

/// Relative size (to the largest friction bound of the step) below which a contact's friction
/// bound μλ_n counts as zero: its friction forces are fixed at zero by equality rows instead
/// of a cone without interior, which interior-point solvers cannot approach (a contact that
/// opens carries λ_n = 0 exactly or a round-off residue of it).
pub(super) const ZERO_FRICTION_BOUND: f64 = 1e-9;

/// Appends the Coulomb cones of the friction stage (λ_n fixed): `|λ_t| ≤ μλ_n` as two
/// linear rows in 2D, `‖λ_t‖ ≤ μλ_n` as a second-order cone in 3D (§6.3); a contact whose
/// bound is zero ([`ZERO_FRICTION_BOUND`]) gets `λ_t = 0` as equality rows. Friction forces
/// are the first variables of the program.
pub(super) fn friction_cones(
    mut b: ConicProblemBuilder,
    rows: &StepRows,
    lu: &DVector<f64>,
    planar: bool,
) -> Result<ConicProblemBuilder, SimError> {
    let largest = rows
        .contacts
        .iter()
        .map(|c| c.mu * lu[c.normal].max(0.0))
        .fold(0.0, f64::max);
    for c in &rows.contacts {
        if c.tangents.is_empty() {
            continue;
        }
        let bound = c.mu * lu[c.normal].max(0.0);
        if bound <= ZERO_FRICTION_BOUND * largest || bound == 0.0 {
            let tri: Vec<_> = c
                .tangents
                .iter()
                .enumerate()
                .map(|(k, &t)| (k, t, 1.0))
                .collect();
            b = b
                .constraint_triplets(
                    Cone::Zero(c.tangents.len()),
                    &tri,
                    &vec![0.0; c.tangents.len()],
                )
                .map_err(solver_error)?;
            continue;
        }
        if planar {
            let t = c.tangents[0];
            b = b
                .constraint_triplets(
                    Cone::Nonnegative(2),
                    &[(0, t, 1.0), (1, t, -1.0)],
                    &[bound, bound],
                )
                .map_err(solver_error)?;
        } else {
            let mut tri = Vec::new();
            for (k, &t) in c.tangents.iter().enumerate() {
                tri.push((k + 1, t, -1.0));
            }
            let mut rhs = vec![0.0; c.tangents.len() + 1];
            rhs[0] = bound;
            b = b
                .constraint_triplets(Cone::SecondOrder(c.tangents.len() + 1), &tri, &rhs)
                .map_err(solver_error)?;
        }
    }
    Ok(b)
}

pub(super) fn upper_triplets(h: &DMatrix<f64>) -> Vec<(usize, usize, f64)> {
    let mut t = Vec::new();
    for j in 0..h.ncols() {
        for i in 0..=j {
            let v = h[(i, j)];
            if v != 0.0 {
                t.push((i, j, v));
            }
        }
    }
    t
}

impl DrumwrightStepper {
    /// Solves the normal/unilateral stage with tangent forces `lt` fixed (D4 forms).
    pub(super) fn normal_stage(
        &self,
        p: &Program,
        lam: &MassSolver,
        lt: &DVector<f64>,
        report: &mut StepReport,
    ) -> Result<DVector<f64>, SimError> {
        let nu = p.nu;
        if nu == 0 {
            return Ok(DVector::zeros(0));
        }
        let dense;
        let p = match &p.lift {
            Some(lift) => match self.normal_stage_lifted(p, lift, lam, lt, report) {
                Ok(x) if lifted_solve_exact(report) => return Ok(x),
                _ => {
                    dense = p.dense(lam);
                    &dense
                }
            },
            None => p,
        };
        let nt = lt.len();
        let wuu = p.w.view((0, 0), (nu, nu)).into_owned();
        let wut = p.w.view((0, nu), (nu, nt)).into_owned();
        let rhs = &p.rq - &wut * lt;
        let mut aa = wuu;
        for i in 0..nu {
            aa[(i, i)] += p.r[i];
        }
        // Single row: closed form (A5).
        if nu == 1 {
            let val = if aa[(0, 0)] > 0.0 {
                (rhs[0] / aa[(0, 0)]).max(0.0)
            } else {
                0.0
            };
            return Ok(DVector::from_element(1, val));
        }
        let mut b = ConicProblemBuilder::new(nu);
        match self.options.unilateral {
            UnilateralForm::MinNorm => {
                let t: Vec<_> = (0..nu).map(|i| (i, i, 1.0)).collect();
                b = b.quadratic_upper_triplets(&t).map_err(solver_error)?;
                // (R + W) λ ≥ R q  →  −(R + W) λ + s = −R q.
                let mut tri = Vec::new();
                for j in 0..nu {
                    for i in 0..nu {
                        let v = aa[(i, j)];
                        if v != 0.0 {
                            tri.push((i, j, -v));
                        }
                    }
                }
                let neg: Vec<f64> = rhs.iter().map(|x| -x).collect();
                b = b
                    .constraint_triplets(Cone::Nonnegative(nu), &tri, &neg)
                    .map_err(solver_error)?;
            }
            UnilateralForm::MaxLcp => {
                b = b
                    .quadratic_upper_triplets(&upper_triplets(&aa))
                    .map_err(solver_error)?;
                let c: Vec<f64> = rhs.iter().map(|x| -x).collect();
                b = b.linear(&c).map_err(solver_error)?;
            }
        }
        let tri: Vec<_> = (0..nu).map(|i| (i, i, -1.0)).collect();
        b = b
            .constraint_triplets(Cone::Nonnegative(nu), &tri, &vec![0.0; nu])
            .map_err(solver_error)?;
        let prob = b.build().map_err(solver_error)?;
        report.hessian_nnz = prob.p().nnz();
        let sol = prob.solve(&self.options.solver).map_err(solver_error)?;
        report.solver_status = Some(sol.status);
        report.solves += 1;
        Ok(sol.x.map(|x| x.max(0.0)))
    }

    /// Friction stage with λ_u fixed: min ½‖λ_t‖² + ½‖β‖², β = λ_t + S_t(W_tt λ_t + W_tu λ_u)
    /// + d_t, Coulomb cone with λ_n fixed (eq 99–108 / 109–120 with λ_n known).
    pub(super) fn friction_stage(
        &self,
        p: &Program,
        lam: &MassSolver,
        rows: &StepRows,
        lu: &DVector<f64>,
        report: &mut StepReport,
    ) -> Result<DVector<f64>, SimError> {
        let nu = p.nu;
        let nt = p.s_t.len();
        if nt == 0 {
            return Ok(DVector::zeros(0));
        }
        let dense;
        let p = match &p.lift {
            Some(lift) if self.options.sparse_friction => {
                match self.friction_stage_lifted(p, lift, lam, rows, lu, report) {
                    Ok(x) if lifted_solve_exact(report) => return Ok(x),
                    _ => {
                        dense = p.dense(lam);
                        &dense
                    }
                }
            }
            Some(_) => {
                dense = p.dense(lam);
                &dense
            }
            None => p,
        };
        let wtt = p.w.view((nu, nu), (nt, nt)).into_owned();
        let wtu = p.w.view((nu, 0), (nt, nu)).into_owned();
        // β = E λ_t + e with E = I + S_t W_tt, e = S_t W_tu λ_u + d_t.
        let mut e_mat = DMatrix::identity(nt, nt);
        let mut e_vec = &p.d_t + DVector::zeros(nt);
        let wl = &wtu * lu;
        for i in 0..nt {
            for j in 0..nt {
                e_mat[(i, j)] += p.s_t[i] * wtt[(i, j)];
            }
            e_vec[i] += p.s_t[i] * wl[i];
        }
        // λ_t = 0 is optimal (and always feasible) when the objective has no linear term.
        if e_vec.amax() == 0.0 {
            return Ok(DVector::zeros(nt));
        }
        // The objective divided by s² (s = the largest S_t, 1e6 with the default tangential
        // damping), which leaves the minimizer unchanged: the Hessian I + EᵀE then has
        // entries of the order of W_tt instead of S_t²·W_tt ≈ 1e15.
        let s = p.s_t.iter().fold(1.0f64, |m, x| m.max(x.abs()));
        let (e_mat, e_vec) = (e_mat / s, e_vec / s);
        let hess = DMatrix::identity(nt, nt) / (s * s) + e_mat.transpose() * &e_mat;
        let g = e_mat.transpose() * &e_vec;
        let mut b = ConicProblemBuilder::new(nt)
            .quadratic_upper_triplets(&upper_triplets(&hess))
            .map_err(solver_error)?
            .linear(g.as_slice())
            .map_err(solver_error)?;
        b = friction_cones(b, rows, lu, p.planar)?;
        let prob = b.build().map_err(solver_error)?;
        report.hessian_nnz = prob.p().nnz();
        let sol = prob.solve(&self.options.solver).map_err(solver_error)?;
        report.solver_status = Some(sol.status);
        report.solves += 1;
        Ok(sol.x)
    }

    /// The literal Appendix 0.A program (eqs 176–186) in all of λ* at once.
    /// Lifted (sparse) normal stage: variables (λ_u, u) with `Λ⁻¹u − G_uᵀλ_u = 0`; the rows
    /// `Rλ + G_u u ≥ R q − G_u Λ G_tᵀ λ_t`, `λ ≥ 0`; objective ½‖λ‖² (D4 MinNorm) or
    /// ½λᵀRλ + ½uᵀΛ⁻¹u − (Rq)ᵀλ (D4 MaxLcp), i.e. the dense programs with W = G Λ Gᵀ
    /// expressed through u.
    pub(super) fn normal_stage_lifted(
        &self,
        p: &Program,
        lift: &Lift,
        lam: &MassSolver,
        lt: &DVector<f64>,
        report: &mut StepReport,
    ) -> Result<DVector<f64>, SimError> {
        let nu = p.nu;
        let nv = lift.nv;
        let nt = lt.len();
        let gu = lift.gs.rows(0, nu);
        let mut rhs = p.rq.clone();
        if nt > 0 && lt.amax() > 0.0 {
            let gt = lift.gs.rows(nu, nt);
            rhs -= gu * lam.solve_vector(&(gt.transpose() * lt));
        }
        if nu == 1 {
            let g = gu.row(0).transpose();
            let aa = p.r[0] + g.dot(&lam.solve_vector(&g));
            let val = if aa > 0.0 {
                (rhs[0] / aa).max(0.0)
            } else {
                0.0
            };
            return Ok(DVector::from_element(1, val));
        }
        let mut b = ConicProblemBuilder::new(nu + nv);
        match self.options.unilateral {
            UnilateralForm::MinNorm => {
                let t: Vec<_> = (0..nu).map(|i| (i, i, 1.0)).collect();
                b = b.quadratic_upper_triplets(&t).map_err(solver_error)?;
            }
            UnilateralForm::MaxLcp => {
                let mut t: Vec<_> = (0..nu)
                    .filter(|&i| p.r[i] != 0.0)
                    .map(|i| (i, i, p.r[i]))
                    .collect();
                t.extend(lift.aug_upper.iter().map(|&(i, j, v)| (nu + i, nu + j, v)));
                b = b.quadratic_upper_triplets(&t).map_err(solver_error)?;
                let mut c = vec![0.0; nu + nv];
                for i in 0..nu {
                    c[i] = -rhs[i];
                }
                b = b.linear(&c).map_err(solver_error)?;
            }
        }
        let mut eq: Vec<_> = lift.aug.iter().map(|&(i, j, v)| (i, nu + j, v)).collect();
        eq.extend(lift.gu.iter().map(|&(i, k, v)| (k, i, -v)));
        b = b
            .constraint_triplets(Cone::Zero(nv), &eq, &vec![0.0; nv])
            .map_err(solver_error)?;
        if self.options.unilateral == UnilateralForm::MinNorm {
            let mut ineq: Vec<_> = (0..nu)
                .filter(|&i| p.r[i] != 0.0)
                .map(|i| (i, i, -p.r[i]))
                .collect();
            ineq.extend(lift.gu.iter().map(|&(i, k, v)| (i, nu + k, -v)));
            let neg: Vec<f64> = rhs.iter().map(|x| -x).collect();
            b = b
                .constraint_triplets(Cone::Nonnegative(nu), &ineq, &neg)
                .map_err(solver_error)?;
        }
        let tri: Vec<_> = (0..nu).map(|i| (i, i, -1.0)).collect();
        b = b
            .constraint_triplets(Cone::Nonnegative(nu), &tri, &vec![0.0; nu])
            .map_err(solver_error)?;
        let prob = b.build().map_err(solver_error)?;
        report.hessian_nnz = prob.p().nnz();
        let sol = prob.solve(&self.options.solver).map_err(solver_error)?;
        report.solver_status = Some(sol.status);
        report.solves += 1;
        report.lifted_solves += 1;
        Ok(DVector::from_iterator(
            nu,
            sol.x.iter().take(nu).map(|x| x.max(0.0)),
        ))
    }

    /// Lifted (sparse) friction stage: variables (λ_t, u, β) with `Λ⁻¹u − G_tᵀλ_t = 0`,
    /// `β − λ_t − S_t G_t u = d_t + S_t G_t Λ G_uᵀ λ_u`; objective ½‖λ_t‖² + ½‖β‖² (the
    /// slack objective of eq 99), Coulomb cones on λ_t with λ_n fixed.
    pub(super) fn friction_stage_lifted(
        &self,
        p: &Program,
        lift: &Lift,
        lam: &MassSolver,
        rows: &StepRows,
        lu: &DVector<f64>,
        report: &mut StepReport,
    ) -> Result<DVector<f64>, SimError> {
        let nu = p.nu;
        let nt = p.s_t.len();
        let nv = lift.nv;
        let gt = lift.gs.rows(nu, nt);
        let mut e_vec = p.d_t.clone();
        if nu > 0 && lu.amax() > 0.0 {
            let gu = lift.gs.rows(0, nu);
            let c = gt * lam.solve_vector(&(gu.transpose() * lu));
            for i in 0..nt {
                e_vec[i] += p.s_t[i] * c[i];
            }
        }
        if e_vec.amax() == 0.0 {
            return Ok(DVector::zeros(nt));
        }
        let n = 2 * nt + nv;
        let beta = nt + nv;
        let mut quad: Vec<_> = (0..nt).map(|i| (i, i, 1.0)).collect();
        quad.extend((0..nt).map(|i| (beta + i, beta + i, 1.0)));
        let mut b = ConicProblemBuilder::new(n)
            .quadratic_upper_triplets(&quad)
            .map_err(solver_error)?;
        let mut eq: Vec<_> = lift.aug.iter().map(|&(i, j, v)| (i, nt + j, v)).collect();
        eq.extend(lift.gt.iter().map(|&(i, k, v)| (k, i, -v)));
        b = b
            .constraint_triplets(Cone::Zero(nv), &eq, &vec![0.0; nv])
            .map_err(solver_error)?;
        let mut eq2: Vec<_> = (0..nt)
            .flat_map(|i| [(i, beta + i, 1.0), (i, i, -1.0)])
            .collect();
        eq2.extend(lift.gt.iter().map(|&(i, k, v)| (i, nt + k, -p.s_t[i] * v)));
        b = b
            .constraint_triplets(Cone::Zero(nt), &eq2, e_vec.as_slice())
            .map_err(solver_error)?;
        b = friction_cones(b, rows, lu, p.planar)?;
        let prob = b.build().map_err(solver_error)?;
        report.hessian_nnz = prob.p().nnz();
        let sol = prob.solve(&self.options.solver).map_err(solver_error)?;
        report.solver_status = Some(sol.status);
        report.solves += 1;
        report.lifted_solves += 1;
        Ok(DVector::from_iterator(nt, sol.x.iter().take(nt).copied()))
    }

    pub(super) fn literal_program(
        &self,
        p: &Program,
        rows: &StepRows,
        zeta: f64,
        report: &mut StepReport,
    ) -> Result<DVector<f64>, SimError> {
        let nu = p.nu;
        let nt = p.s_t.len();
        let m = nu + nt;
        // β = (P_t + E) λ* + d, E = S_t W_t*.
        let mut pe = DMatrix::zeros(nt, m);
        for i in 0..nt {
            for j in 0..m {
                pe[(i, j)] = p.s_t[i] * p.w[(nu + i, j)];
            }
            pe[(i, nu + i)] += 1.0;
        }
        let mut hess = pe.transpose() * &pe;
        for i in 0..m {
            hess[(i, i)] += if i < nu { zeta } else { 1.0 };
        }
        let g = pe.transpose() * &p.d_t;
        let mut b = ConicProblemBuilder::new(m)
            .quadratic_upper_triplets(&upper_triplets(&hess))
            .map_err(solver_error)?
            .linear(g.as_slice())
            .map_err(solver_error)?;
        let mut tri = Vec::new();
        for i in 0..nu {
            for j in 0..m {
                let v = p.w[(i, j)] + if i == j { p.r[i] } else { 0.0 };
                if v != 0.0 {
                    tri.push((i, j, -v));
                }
            }
        }
        let neg: Vec<f64> = p.rq.iter().map(|x| -x).collect();
        b = b
            .constraint_triplets(Cone::Nonnegative(nu), &tri, &neg)
            .map_err(solver_error)?;
        let tri: Vec<_> = (0..nu).map(|i| (i, i, -1.0)).collect();
        b = b
            .constraint_triplets(Cone::Nonnegative(nu), &tri, &vec![0.0; nu])
            .map_err(solver_error)?;
        for c in &rows.contacts {
            if c.tangents.is_empty() {
                continue;
            }
            let n = c.normal;
            if p.planar {
                let t = nu + c.tangents[0];
                b = b
                    .constraint_triplets(
                        Cone::Nonnegative(2),
                        &[(0, t, 1.0), (0, n, -c.mu), (1, t, -1.0), (1, n, -c.mu)],
                        &[0.0, 0.0],
                    )
                    .map_err(solver_error)?;
            } else {
                let mut tri = vec![(0, n, -c.mu)];
                for (k, &t) in c.tangents.iter().enumerate() {
                    tri.push((k + 1, nu + t, -1.0));
                }
                b = b
                    .constraint_triplets(
                        Cone::SecondOrder(c.tangents.len() + 1),
                        &tri,
                        &vec![0.0; c.tangents.len() + 1],
                    )
                    .map_err(solver_error)?;
            }
        }
        let prob = b.build().map_err(solver_error)?;
        report.hessian_nnz = prob.p().nnz();
        let sol = prob.solve(&self.options.solver).map_err(solver_error)?;
        report.solver_status = Some(sol.status);
        report.solves += 1;
        let mut x = sol.x;
        for i in 0..nu {
            x[i] = x[i].max(0.0);
        }
        Ok(x)
    }
}

/// Whether the last (sparse, lifted) stage solve is kept: solved to tolerance, not merely
/// almost solved or stopped at the iteration limit (then the stage falls back to the dense
/// program).
fn lifted_solve_exact(report: &StepReport) -> bool {
    !matches!(
        report.solver_status,
        Some(SolveStatus::AlmostSolved | SolveStatus::MaxIterations)
    )
}
