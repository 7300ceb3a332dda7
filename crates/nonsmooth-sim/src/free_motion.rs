//! The free-motion view of a step's contact set ([`crate::contact_set`]), read by the
//! `anitescu-potra` and `qp-max-dissipation` contact models: the step's contacts and
//! joint-limit rows as rows sparse over the velocity coordinates, the mass matrix (with the
//! actuation's implicit terms) factored block by block and the free velocity
//! `v_free = v + h M̃⁻¹ f̃` ([`ContactSet::free_motion`]); the convex fallback both schemes
//! share ([`regularized_step`]); and the mass-matrix factorization every explicit-force
//! stepper (penalty, ODE baselines) shares.
//!
//! A contact set with a per-body view (a pile of free bodies) gives its rows and mass blocks
//! straight from the per-body snapshot, so that a step costs O(bodies + contacts): no dense
//! mass matrix, no dense Jacobian. Other models go through the dense snapshot and the
//! connected components of their mass matrix. Either way the Delassus matrix `Jᵀ M⁻¹ J` is
//! assembled from the columns each block touches, and its connected components (contacts
//! coupled through a body) are reported, so that a stepper can solve decoupled groups of
//! contacts on their own.

use nalgebra::{Cholesky, DMatrix, DVector, Dyn};
use nonsmooth_core::{ContactSnapshot, Dimension, State};

use crate::contact_set::{BlockView, ContactSet, SnapshotWorkspace};
use crate::error::SimError;
use crate::pipeline::Step;
use nonsmooth_core::geometry::ContactMargins;

/// A row (or column) sparse over the velocity coordinates: `(index, value)` pairs with
/// increasing, distinct indices.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct SparseRow {
    pub entries: Vec<(usize, f64)>,
}

impl SparseRow {
    /// The nonzero entries of a dense row.
    pub(crate) fn from_dense(row: &DVector<f64>) -> Self {
        Self {
            entries: row
                .iter()
                .enumerate()
                .filter(|(_, v)| **v != 0.0)
                .map(|(i, v)| (i, *v))
                .collect(),
        }
    }

    /// From `(index, value)` pairs in any order; repeated indices are summed and zeros
    /// dropped (the pattern of [`SparseRow::from_dense`]).
    fn from_unsorted(mut entries: Vec<(usize, f64)>) -> Self {
        entries.sort_by_key(|e| e.0);
        let mut out: Vec<(usize, f64)> = Vec::with_capacity(entries.len());
        for (i, v) in entries {
            match out.last_mut() {
                Some(last) if last.0 == i => last.1 += v,
                _ => out.push((i, v)),
            }
        }
        out.retain(|e| e.1 != 0.0);
        Self { entries: out }
    }

    /// `a·x + b·y` (the union of the two patterns).
    pub(crate) fn combine(a: f64, x: &SparseRow, b: f64, y: &SparseRow) -> Self {
        let mut all: Vec<(usize, f64)> = x.entries.iter().map(|&(i, v)| (i, a * v)).collect();
        all.extend(y.entries.iter().map(|&(i, v)| (i, b * v)));
        Self::from_unsorted(all)
    }

    /// `c·self`.
    pub(crate) fn scaled(&self, c: f64) -> Self {
        Self {
            entries: self.entries.iter().map(|&(i, v)| (i, c * v)).collect(),
        }
    }

    /// The dot product with a dense vector.
    pub(crate) fn dot(&self, v: &DVector<f64>) -> f64 {
        self.entries.iter().map(|&(i, x)| x * v[i]).sum()
    }

    /// `out += c·self`.
    pub(crate) fn add_scaled_to(&self, c: f64, out: &mut DVector<f64>) {
        for &(i, x) in &self.entries {
            out[i] += c * x;
        }
    }

    /// Largest absolute entry (0 for an empty row).
    pub(crate) fn amax(&self) -> f64 {
        self.entries.iter().fold(0.0, |m, e| m.max(e.1.abs()))
    }

    /// Whether every entry of the two rows is within `tol` of the other's (an entry missing
    /// from one row counts as zero).
    pub(crate) fn close_to(&self, other: &SparseRow, tol: f64) -> bool {
        SparseRow::combine(1.0, self, -1.0, other).amax() <= tol
    }
}

/// One contact of a rigid step, its rows sparse.
#[derive(Debug, Clone)]
pub(crate) struct RigidContact {
    /// Index in the snapshot of the step's start state (the order of
    /// [`ContactSnapshot::contacts`]).
    pub index: usize,
    /// Colliders A and B and the feature of A: the contact's identity across snapshots.
    pub pair: (usize, usize, usize),
    /// Signed gap φ.
    pub gap: f64,
    /// Coulomb friction coefficient μ.
    pub friction: f64,
    /// Newton restitution coefficient where the pair has one.
    pub restitution: Option<f64>,
    /// Normal row (`φ̇ = normal · v`).
    pub normal: SparseRow,
    /// Tangent rows (one planar, two spatial).
    pub tangents: Vec<SparseRow>,
}

impl RigidContact {
    /// From the contact's scalars and `row(k)`: its normal row (k = 0) and its `ntan`
    /// tangent rows (k = 1…ntan).
    fn from_rows(
        index: usize,
        pair: (usize, usize, usize),
        gap: f64,
        friction: f64,
        restitution: Option<f64>,
        ntan: usize,
        row: impl Fn(usize) -> SparseRow,
    ) -> Self {
        RigidContact {
            index,
            pair,
            gap,
            friction,
            restitution,
            normal: row(0),
            tangents: (1..=ntan).map(row).collect(),
        }
    }
}

/// One joint-limit row of a rigid step (φ ≥ 0 enforced).
#[derive(Debug, Clone)]
pub(crate) struct RigidLimit {
    /// Distance to the limit φ.
    pub phi: f64,
    /// Its row (`φ̇ = row · v`).
    pub row: SparseRow,
}

/// Contacts, limits, mass factor and free velocity at the start of a step.
pub(crate) struct FreeMotion {
    pub dimension: Dimension,
    pub contacts: Vec<RigidContact>,
    pub limits: Vec<RigidLimit>,
    pub mass: MassSolver,
    pub v_free: DVector<f64>,
}

/// One diagonal block of the mass matrix: its velocity indices (increasing), the block and
/// its Cholesky factor.
struct MassBlock {
    idx: Vec<usize>,
    mass: DMatrix<f64>,
    chol: Cholesky<f64, Dyn>,
}

impl MassBlock {
    /// The rows of `g` (m × nv) that touch this block, and their entries on it, transposed
    /// (block size × rows); `None` when no row touches it.
    fn rows_of(&self, g: &DMatrix<f64>) -> Option<(Vec<usize>, DMatrix<f64>)> {
        let rows: Vec<usize> = (0..g.nrows())
            .filter(|&i| self.idx.iter().any(|&k| g[(i, k)] != 0.0))
            .collect();
        if rows.is_empty() {
            return None;
        }
        let sub_t = DMatrix::from_fn(self.idx.len(), rows.len(), |k, a| g[(rows[a], self.idx[k])]);
        Some((rows, sub_t))
    }
}

/// Solves with the mass matrix through its block-diagonal structure: the velocity
/// coordinates split into the connected components of M's sparsity pattern (one per free
/// body or articulated tree), each factored by Cholesky on its own. A pile of N free bodies
/// then costs N small solves instead of one dense factor of size 6N.
pub(crate) struct MassSolver {
    blocks: Vec<MassBlock>,
    /// Per velocity coordinate: its block and its position in the block.
    place: Vec<(usize, usize)>,
}

/// A group of columns coupled through the mass matrix: the columns (increasing) and the
/// mass blocks they touch.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Component {
    pub columns: Vec<usize>,
    pub blocks: Vec<usize>,
}

/// The Delassus matrix `W = Jᵀ M⁻¹ J` of a set of columns `J`, sparse.
pub(crate) struct Delassus {
    /// `M⁻¹ J`, column by column.
    pub minv_columns: Vec<SparseRow>,
    /// The entries `(i, j, W_ij)` of every pair of columns that share a mass block (both
    /// orders; a position may repeat when the two columns share two blocks, and repeated
    /// positions sum).
    pub entries: Vec<(usize, usize, f64)>,
    /// The connected components of W's pattern with the columns of one owner tied together,
    /// in order of their first column.
    pub components: Vec<Component>,
    /// The component of each column.
    pub component_of: Vec<usize>,
}

impl MassSolver {
    /// The components of the dense `mass` and their factors; a block that is not positive
    /// definite is a [`SimError::Diverged`] at `t`.
    pub(crate) fn new(mass: &DMatrix<f64>, t: f64) -> Result<Self, SimError> {
        let nv = mass.nrows();
        let mut parent: Vec<usize> = (0..nv).collect();
        for i in 0..nv {
            for j in 0..i {
                if mass[(i, j)] != 0.0 || mass[(j, i)] != 0.0 {
                    union(&mut parent, i, j);
                }
            }
        }
        let mut members: Vec<Vec<usize>> = vec![Vec::new(); nv];
        for i in 0..nv {
            let r = root(&mut parent, i);
            members[r].push(i);
        }
        let blocks = members
            .into_iter()
            .filter(|m| !m.is_empty())
            .map(|idx| {
                let block = DMatrix::from_fn(idx.len(), idx.len(), |a, b| mass[(idx[a], idx[b])]);
                (idx, block)
            })
            .collect();
        Self::from_blocks(nv, blocks, t)
    }

    /// From diagonal blocks `(velocity indices, block)` that cover `0..nv` once.
    fn from_blocks(
        nv: usize,
        blocks: Vec<(Vec<usize>, DMatrix<f64>)>,
        t: f64,
    ) -> Result<Self, SimError> {
        let mut place = vec![(usize::MAX, 0); nv];
        let mut out = Vec::with_capacity(blocks.len());
        for (b, (idx, mass)) in blocks.into_iter().enumerate() {
            for (a, &i) in idx.iter().enumerate() {
                place[i] = (b, a);
            }
            let chol = factor_mass(&mass, t)?;
            out.push(MassBlock { idx, mass, chol });
        }
        Ok(Self { blocks: out, place })
    }

    /// A solver of no coordinates (for programs whose Delassus matrix is given).
    pub(crate) fn empty() -> Self {
        Self {
            blocks: Vec::new(),
            place: Vec::new(),
        }
    }

    /// The dense Delassus matrix `G M⁻¹ Gᵀ` of the rows of `g` (m × nv), block by block: each
    /// block multiplies only the rows that touch it.
    pub(crate) fn delassus_dense(&self, g: &DMatrix<f64>) -> DMatrix<f64> {
        let m = g.nrows();
        let mut w = DMatrix::zeros(m, m);
        for blk in &self.blocks {
            let Some((rows, sub_t)) = blk.rows_of(g) else {
                continue;
            };
            let prod = sub_t.transpose() * blk.chol.solve(&sub_t);
            for (a, &i) in rows.iter().enumerate() {
                for (b, &j) in rows.iter().enumerate() {
                    w[(i, j)] += prod[(a, b)];
                }
            }
        }
        w
    }

    /// The diagonal `(G M⁻¹ Gᵀ)_ii` of the Delassus matrix of the rows of `g` (m × nv),
    /// block by block, without the off-diagonal entries.
    pub(crate) fn delassus_diagonal(&self, g: &DMatrix<f64>) -> Vec<f64> {
        let m = g.nrows();
        let mut w = vec![0.0; m];
        for blk in &self.blocks {
            let Some((rows, sub_t)) = blk.rows_of(g) else {
                continue;
            };
            let x = blk.chol.solve(&sub_t);
            for (a, &i) in rows.iter().enumerate() {
                w[i] += sub_t.column(a).dot(&x.column(a));
            }
        }
        w
    }

    /// `M⁻¹ b` for a vector.
    pub(crate) fn solve_vector(&self, b: &DVector<f64>) -> DVector<f64> {
        let mut out = DVector::zeros(self.place.len());
        for blk in &self.blocks {
            let sub = DVector::from_fn(blk.idx.len(), |a, _| b[blk.idx[a]]);
            let x = blk.chol.solve(&sub);
            for (a, &i) in blk.idx.iter().enumerate() {
                out[i] = x[a];
            }
        }
        out
    }

    /// Kinetic energy `½ vᵀ M v` of the coordinates of the given blocks.
    pub(crate) fn kinetic_energy_of(&self, v: &DVector<f64>, blocks: &[usize]) -> f64 {
        blocks
            .iter()
            .map(|&b| {
                let blk = &self.blocks[b];
                let vb = DVector::from_fn(blk.idx.len(), |a, _| v[blk.idx[a]]);
                0.5 * vb.dot(&(&blk.mass * &vb))
            })
            .sum()
    }

    /// Kinetic energy `½ vᵀ M v`.
    pub(crate) fn kinetic_energy(&self, v: &DVector<f64>) -> f64 {
        let all: Vec<usize> = (0..self.blocks.len()).collect();
        self.kinetic_energy_of(v, &all)
    }

    /// `M⁻¹ J`, the Delassus matrix `Jᵀ M⁻¹ J` and its connected components for the
    /// columns `J`, block by block: each block solves and multiplies only the columns that
    /// touch it (a contact's columns touch the one or two bodies of the contact), so a pile
    /// costs O(contacts) small products.
    ///
    /// `owner[c]` names the constraint column `c` belongs to (e.g. its contact): columns of
    /// one owner are always in the same component, even where their rows touch different
    /// blocks (the normal and the tangent rows of a planar body with a diagonal mass matrix).
    pub(crate) fn delassus(&self, columns: &[SparseRow], owner: &[usize]) -> Delassus {
        let nb = self.blocks.len();
        let owners = owner.iter().map(|&o| o + 1).max().unwrap_or(0);
        let mut touching: Vec<Vec<usize>> = vec![Vec::new(); nb];
        // union-find over the blocks (0..nb) and the owners (nb..nb + owners)
        let mut parent: Vec<usize> = (0..nb + owners).collect();
        for (c, col) in columns.iter().enumerate() {
            let node = nb + owner[c];
            for &(i, _) in &col.entries {
                let b = self.place[i].0;
                if touching[b].last() != Some(&c) {
                    touching[b].push(c);
                }
                union(&mut parent, node, b);
            }
        }
        let mut minv: Vec<Vec<(usize, f64)>> = vec![Vec::new(); columns.len()];
        let mut entries = Vec::new();
        for (b, cols) in touching.iter().enumerate() {
            if cols.is_empty() {
                continue;
            }
            let blk = &self.blocks[b];
            let mut sub = DMatrix::zeros(blk.idx.len(), cols.len());
            for (k, &c) in cols.iter().enumerate() {
                for &(i, v) in &columns[c].entries {
                    let (bi, a) = self.place[i];
                    if bi == b {
                        sub[(a, k)] = v;
                    }
                }
            }
            let x = blk.chol.solve(&sub);
            for (k, &c) in cols.iter().enumerate() {
                for (a, &i) in blk.idx.iter().enumerate() {
                    if x[(a, k)] != 0.0 {
                        minv[c].push((i, x[(a, k)]));
                    }
                }
            }
            let g = sub.transpose() * &x;
            for (a, &ca) in cols.iter().enumerate() {
                for (k, &cb) in cols.iter().enumerate() {
                    entries.push((ca, cb, g[(a, k)]));
                }
            }
        }
        // components of the columns, in order of their first column
        let mut label = vec![usize::MAX; nb + owners];
        let mut components: Vec<Component> = Vec::new();
        let mut component_of = vec![0; columns.len()];
        for c in 0..columns.len() {
            let r = root(&mut parent, nb + owner[c]);
            if label[r] == usize::MAX {
                label[r] = components.len();
                components.push(Component {
                    columns: Vec::new(),
                    blocks: Vec::new(),
                });
            }
            component_of[c] = label[r];
            components[label[r]].columns.push(c);
        }
        for (b, cols) in touching.iter().enumerate() {
            if !cols.is_empty() {
                let r = root(&mut parent, b);
                components[label[r]].blocks.push(b);
            }
        }
        Delassus {
            minv_columns: minv.into_iter().map(SparseRow::from_unsorted).collect(),
            entries,
            components,
            component_of,
        }
    }
}

fn root(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

fn union(parent: &mut [usize], a: usize, b: usize) {
    let (ra, rb) = (root(parent, a), root(parent, b));
    if ra != rb {
        parent[ra.max(rb)] = ra.min(rb);
    }
}

impl ContactSet<'_> {
    /// The free-motion view of the contact set: its contacts as rows sparse over the
    /// velocity coordinates, the mass matrix with the actuation's implicit terms factored
    /// block by block, and `v_free = v + h M̃⁻¹ f̃`. From the per-body view when the set has
    /// one (no dense matrix of size nv), else from the dense snapshot, whose bilateral
    /// constraints `stepper` refuses; a mass matrix that is not positive definite is a
    /// [`SimError::Diverged`].
    ///
    /// # Errors
    /// [`SimError::Unsupported`] for bilateral constraints, [`SimError::Diverged`] for a mass
    /// matrix that is not positive definite, and the errors of [`ContactSet::dense`].
    pub(crate) fn free_motion(&mut self, stepper: &'static str) -> Result<FreeMotion, SimError> {
        let (state, h) = (self.step().state, self.step().h);
        if let Some(view) = self.blocks() {
            return block_free_motion(view, state, h);
        }
        dense_free_motion(self.dense()?, state, h, stepper)
    }

    /// The contact set of `step` detected afresh (a workspace of its own, the per-body view
    /// where the model has one) within `margins`, read as its free motion: for reports and
    /// searches outside the step's own stages.
    ///
    /// # Errors
    /// As [`ContactSet::detect`] and [`ContactSet::free_motion`].
    pub(crate) fn fresh_free_motion(
        step: &Step<'_>,
        margins: ContactMargins,
        stepper: &'static str,
    ) -> Result<FreeMotion, SimError> {
        let mut workspace = SnapshotWorkspace::default();
        ContactSet::detect(step, margins, true, &mut workspace)?.free_motion(stepper)
    }
}

/// [`ContactSet::free_motion`] from the dense snapshot `snap` (actuation applied) of any
/// model.
fn dense_free_motion(
    snap: &ContactSnapshot<f64>,
    state: &State,
    h: f64,
    stepper: &'static str,
) -> Result<FreeMotion, SimError> {
    if !snap.bilateral.is_empty() {
        return Err(SimError::Unsupported {
            stepper,
            reason: "bilateral constraints are not supported by this formulation".into(),
        });
    }
    let mass = MassSolver::new(&snap.mass_matrix, state.t)?;
    let v_free = &state.v + mass.solve_vector(&snap.forces) * h;
    let contacts = snap
        .contacts
        .iter()
        .enumerate()
        .map(|(index, c)| {
            let row = |k: usize| match k {
                0 => SparseRow::from_dense(&c.rows.normal),
                _ => SparseRow::from_dense(&c.rows.tangents.row(k - 1).transpose()),
            };
            let ntan = c.rows.tangents.nrows();
            let pair = (c.collider_a, c.collider_b, c.feature);
            RigidContact::from_rows(index, pair, c.gap, c.friction, c.restitution, ntan, row)
        })
        .collect();
    let limits = snap
        .limits
        .iter()
        .map(|l| RigidLimit {
            phi: l.phi,
            row: SparseRow::from_dense(&l.row),
        })
        .collect();
    Ok(FreeMotion {
        dimension: snap.dimension,
        contacts,
        limits,
        mass,
        v_free,
    })
}

/// [`ContactSet::free_motion`] from the per-body view of a model of root joints: each mass
/// block with the servos' implicit diagonal added, factored on its own.
fn block_free_motion(view: &BlockView<'_>, state: &State, h: f64) -> Result<FreeMotion, SimError> {
    let snap = view.snapshot;
    let nv = snap.nv;
    let blocks = snap
        .blocks
        .iter()
        .map(|b| {
            let n = b.mass.nrows();
            let mut mass = b.mass.clone();
            if let Some(diagonal) = &view.implicit_diagonal {
                for k in 0..n {
                    mass[(k, k)] += diagonal[b.v_index + k];
                }
            }
            ((b.v_index..b.v_index + n).collect(), mass)
        })
        .collect();
    let mass = MassSolver::from_blocks(nv, blocks, state.t)?;
    let v_free = &state.v + mass.solve_vector(&view.forces) * h;
    let start = |body: Option<usize>| {
        body.and_then(|b| snap.block_of_body[b])
            .map(|k| snap.blocks[k].v_index)
    };
    let row = |c: &nonsmooth_core::snapshot::BlockContact, k: usize| {
        let mut entries = Vec::with_capacity(c.rows.a.ncols() + c.rows.b.ncols());
        for (rows, body) in [(&c.rows.a, c.body_a), (&c.rows.b, c.body_b)] {
            if let Some(s) = start(body) {
                entries.extend((0..rows.ncols()).map(|j| (s + j, rows[(k, j)])));
            }
        }
        SparseRow::from_unsorted(entries)
    };
    let contacts = snap
        .contacts
        .iter()
        .enumerate()
        .map(|(index, c)| {
            let ntan = c.tangents.len();
            let pair = (c.collider_a, c.collider_b, c.feature);
            RigidContact::from_rows(index, pair, c.gap, c.friction, c.restitution, ntan, |k| {
                row(c, k)
            })
        })
        .collect();
    Ok(FreeMotion {
        dimension: snap.dimension,
        contacts,
        limits: Vec::new(),
        mass,
        v_free,
    })
}

/// Largest speed (m/s, or rad/s for a joint limit) at which a velocity-level rigid step pushes
/// penetrating bodies apart: the stabilization term φ/h of a row with φ < 0 is limited to
/// −`MAX_DEPENETRATION_SPEED`. A body placed 0.2 m into the ground then rises out of it over
/// 0.2 s instead of leaving at 0.2/h (100 m/s at h = 2 ms); penetrations of ordinary steps
/// (a fraction of a millimetre) are corrected in full.
pub const MAX_DEPENETRATION_SPEED: f64 = 1.0;

/// The gap a row's stabilization uses: φ, or −h·[`MAX_DEPENETRATION_SPEED`] for a deeper
/// penetration.
pub(crate) fn stabilized_gap(phi: f64, h: f64) -> f64 {
    phi.max(-MAX_DEPENETRATION_SPEED * h)
}

/// Regularization of the convex fallback ([`regularized_step`]) relative to each row's
/// Delassus diagonal: `R = ρ·w` makes a row's response `(w + R)⁻¹` within 0.1 % of the rigid
/// one, while keeping the program strictly convex.
pub const FALLBACK_REGULARIZATION: f64 = 1e-3;

/// The step's velocity as the solution of the regularized convex contact problem
/// (`nonsmooth_solvers::regularized_contact`): every contact a Coulomb cone (planar: an
/// interval; frictionless: a unilateral row), every limit a unilateral row, each with the
/// regularization `R = ρ·w` ([`FALLBACK_REGULARIZATION`], `w` the row's Delassus diagonal) and
/// the bias velocity `−φ/h` of the rigid stabilization ([`stabilized_gap`]). Always feasible
/// and strictly convex: the rigid steppers fall back on it where their own solve fails (an
/// LCP without a checked solution), and count it. Returns the velocity and the contact
/// impulses (in the order of `free.contacts`).
///
/// # Errors
/// [`SimError::Solver`] when the Newton method does not converge.
pub(crate) fn regularized_step(
    free: &FreeMotion,
    h: f64,
) -> Result<(DVector<f64>, Vec<crate::stepper::ContactImpulse>), SimError> {
    use nonsmooth_solvers::regularized_contact::{
        solve, Constraint, ConstraintKind, RegularizedContactOptions, RegularizedContactProblem,
    };
    let nv = free.v_free.len();
    // the Delassus diagonal w = rowᵀ M⁻¹ row of one sparse row
    let diagonal = |row: &SparseRow| -> f64 {
        let mut dense = DVector::zeros(nv);
        row.add_scaled_to(1.0, &mut dense);
        row.dot(&free.mass.solve_vector(&dense))
            .max(f64::MIN_POSITIVE)
    };
    let bias = |phi: f64| -stabilized_gap(phi, h) / h;
    let triplets = |rows: &[&SparseRow]| -> Vec<(usize, usize, f64)> {
        rows.iter()
            .enumerate()
            .flat_map(|(r, row)| row.entries.iter().map(move |&(i, x)| (r, i, x)))
            .collect()
    };
    let mut builder = RegularizedContactProblem::builder(nv).free_velocity(free.v_free.clone());
    for blk in &free.mass.blocks {
        builder = builder.mass_block_at(&blk.idx, &blk.mass);
    }
    // the constraint of each contact (None: a contact whose rows are empty, e.g. between
    // two bodies welded to the world, takes no impulse)
    let mut slot: Vec<Option<usize>> = Vec::with_capacity(free.contacts.len());
    let mut constraints = 0;
    // Σ γ_n·max(0, v̂_n): the most kinetic energy the stabilization may add (J per unit h)
    let mut stabilization_rows: Vec<(usize, f64)> = Vec::new();
    for c in &free.contacts {
        if c.normal.entries.is_empty() {
            slot.push(None);
            continue;
        }
        let rho_n = FALLBACK_REGULARIZATION * diagonal(&c.normal);
        let frictional = c.friction > 0.0 && c.tangents.iter().all(|t| !t.entries.is_empty());
        let constraint = if !frictional || c.tangents.is_empty() {
            Constraint::new(
                ConstraintKind::Unilateral,
                triplets(&[&c.normal]),
                vec![rho_n],
                vec![bias(c.gap)],
            )
        } else {
            let rho_t = FALLBACK_REGULARIZATION * c.tangents.iter().map(&diagonal).sum::<f64>()
                / c.tangents.len() as f64;
            let mut rows: Vec<&SparseRow> = c.tangents.iter().collect();
            rows.push(&c.normal);
            let kind = if c.tangents.len() == 1 {
                ConstraintKind::Planar { mu: c.friction }
            } else {
                ConstraintKind::Cone { mu: c.friction }
            };
            let mut r = vec![rho_t; c.tangents.len()];
            r.push(rho_n);
            let mut v_hat = vec![0.0; c.tangents.len()];
            v_hat.push(bias(c.gap));
            Constraint::new(kind, triplets(&rows), r, v_hat)
        };
        stabilization_rows.push((constraints, bias(c.gap).max(0.0)));
        slot.push(Some(constraints));
        constraints += 1;
        builder = builder.constraint(constraint);
    }
    for l in free.limits.iter().filter(|l| !l.row.entries.is_empty()) {
        stabilization_rows.push((constraints, bias(l.phi).max(0.0)));
        constraints += 1;
        builder = builder.constraint(Constraint::new(
            ConstraintKind::Unilateral,
            triplets(&[&l.row]),
            vec![FALLBACK_REGULARIZATION * diagonal(&l.row)],
            vec![bias(l.phi)],
        ));
    }
    let problem = builder.build()?;
    let solution = solve(&problem, None, &RegularizedContactOptions::default())?;
    let no_solution = |reason: String| {
        SimError::Solver(nonsmooth_solvers::SolverError::NoSolution {
            solver: "regularized contact",
            reason,
        })
    };
    if !solution.converged() {
        return Err(no_solution(format!(
            "Newton stopped after {} iterations at gradient norm {:.3e} (tolerance {:.3e})",
            solution.iterations, solution.gradient_norm, solution.tolerance
        )));
    }
    // Energy check: the impulses dissipate, except for the work of the stabilization's
    // bias velocities, ½‖v₁‖²_M ≤ ½‖v_free‖²_M + Σ γ_n max(0, v̂_n) (plus round-off).
    let ke_free = free.mass.kinetic_energy(&free.v_free);
    let ke = free.mass.kinetic_energy(&solution.v);
    let bound: f64 = stabilization_rows
        .iter()
        .map(|&(k, b)| solution.impulse(k).last().copied().unwrap_or(0.0).max(0.0) * b)
        .sum();
    let slack = 1e-8 * (ke_free + bound) + 1e-12;
    if !(ke.is_finite() && ke <= ke_free + bound + slack) {
        return Err(no_solution(format!(
            "kinetic energy {ke:e} J above {:e} J (free motion) + {bound:e} J (stabilization)",
            ke_free
        )));
    }
    let impulses = free
        .contacts
        .iter()
        .zip(&slot)
        .map(|(c, k)| {
            let g = k.map(|k| solution.impulse(k)).unwrap_or(&[]);
            let (normal, tangent) = match g.split_last() {
                Some((n, t)) if t.len() == c.tangents.len() => (*n, t.to_vec()),
                Some((n, _)) => (*n, vec![0.0; c.tangents.len()]),
                None => (0.0, vec![0.0; c.tangents.len()]),
            };
            crate::stepper::ContactImpulse {
                contact: c.index,
                normal,
                tangent,
            }
        })
        .collect();
    Ok((solution.v, impulses))
}

/// The Cholesky factor of the mass matrix at time `t`; a matrix that is not positive
/// definite (a state off the model's manifold) is a [`SimError::Diverged`] at `t`.
pub(crate) fn factor_mass(mass: &DMatrix<f64>, t: f64) -> Result<Cholesky<f64, Dyn>, SimError> {
    mass.clone().cholesky().ok_or_else(|| SimError::Diverged {
        t,
        reason: "mass matrix is not positive definite".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use nonsmooth_core::geometry::ContactMargins;
    use nonsmooth_core::Model;

    /// The block-by-block Delassus matrix, `M⁻¹J` and components equal their dense
    /// counterparts for a mass matrix of three components (one with interleaved indices).
    #[test]
    fn delassus_by_blocks_matches_the_dense_product() {
        let nv = 6;
        let mut mass = DMatrix::<f64>::zeros(nv, nv);
        // component {0, 3, 5}, component {1, 2}, component {4}
        for &(i, j, v) in &[
            (0, 0, 4.0),
            (3, 3, 3.0),
            (5, 5, 2.0),
            (0, 3, 1.0),
            (3, 5, -0.5),
            (1, 1, 2.0),
            (2, 2, 5.0),
            (1, 2, 0.7),
            (4, 4, 1.5),
        ] {
            mass[(i, j)] = v;
            mass[(j, i)] = v;
        }
        let solver = MassSolver::new(&mass, 0.0).unwrap();
        let dense_columns = [
            DVector::from_row_slice(&[1.0, 0.0, 0.0, 0.5, 0.0, 0.0]),
            DVector::from_row_slice(&[0.0, 0.0, 0.0, 0.0, 2.0, 0.0]),
            DVector::from_row_slice(&[0.0, 1.0, -1.0, 0.0, 0.0, 0.3]),
            DVector::from_row_slice(&[0.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
            DVector::from_row_slice(&[0.0, 0.0, 0.0, 0.0, -1.0, 0.0]),
        ];
        let columns: Vec<SparseRow> = dense_columns.iter().map(SparseRow::from_dense).collect();
        let d = solver.delassus(&columns, &[0, 1, 2, 3, 4]);
        let j = DMatrix::from_columns(&dense_columns);
        let minv_j = mass.clone().cholesky().unwrap().solve(&j);
        let w = j.transpose() * &minv_j;
        let diag = solver.delassus_diagonal(&j.transpose());
        let dense = solver.delassus_dense(&j.transpose());
        for i in 0..5 {
            assert!((diag[i] - w[(i, i)]).abs() <= 1e-12 * (1.0 + w[(i, i)].abs()));
            for k in 0..5 {
                assert!((dense[(i, k)] - w[(i, k)]).abs() <= 1e-12 * (1.0 + w[(i, k)].abs()));
            }
        }
        let mut w_sparse = DMatrix::zeros(5, 5);
        for &(a, b, v) in &d.entries {
            w_sparse[(a, b)] += v;
        }
        assert!((&w_sparse - &w).amax() < 1e-12, "{w_sparse} vs {w}");
        for (k, col) in d.minv_columns.iter().enumerate() {
            let mut dense = DVector::zeros(nv);
            col.add_scaled_to(1.0, &mut dense);
            assert!((dense - minv_j.column(k)).amax() < 1e-12);
        }
        // columns 0 and 2 share the component {0, 3, 5} through entry 5 of column 2 and
        // the block {1, 2}; columns 1 and 4 share {4}; the zero column is alone
        let groups: Vec<Vec<usize>> = d.components.iter().map(|c| c.columns.clone()).collect();
        assert_eq!(groups, vec![vec![0, 2], vec![1, 4], vec![3]]);
        assert_eq!(d.component_of, vec![0, 1, 0, 2, 1]);
        // an owner ties columns of different components together
        let tied = solver.delassus(&columns, &[0, 0, 2, 3, 4]);
        let groups: Vec<Vec<usize>> = tied.components.iter().map(|c| c.columns.clone()).collect();
        assert_eq!(groups, vec![vec![0, 1, 2, 4], vec![3]]);
        let v = DVector::from_fn(nv, |i, _| 0.3 * i as f64 - 0.4);
        let ke = 0.5 * v.dot(&(&mass * &v));
        assert!((solver.kinetic_energy(&v) - ke).abs() < 1e-12);
    }

    /// A pile of free bodies read through the per-body snapshot gives the same rows, gaps and
    /// free velocity as the dense snapshot.
    #[test]
    fn block_and_dense_paths_agree_on_a_pile() {
        let src = r#"
[model]
name = "pile"
dimension = "spatial"
gravity = [0.0, 0.0, -9.81]
contact_margin = 0.01

[[materials]]
name = "m"
friction = 0.6

[[colliders]]
name = "ground"
shape = { plane = [0.0, 0.0, 1.0] }
material = "m"

[[bodies]]
name = "a"
mass = 0.3
inertia = { solid_box = [0.05, 0.04, 0.03] }

[[colliders]]
name = "a_box"
body = "a"
shape = { box = [0.05, 0.04, 0.03] }
material = "m"

[[bodies]]
name = "b"
mass = 0.1
inertia = { solid_sphere = 0.05 }

[[colliders]]
name = "b_ball"
body = "b"
shape = { sphere = 0.05 }
material = "m"

[initial]
q.a = [0.0, 0.0, 0.031, 0.99, 0.1, 0.05, 0.0]
q.b = [0.01, 0.0, 0.111, 1.0, 0.0, 0.0, 0.0]
v.a = [0.1, -0.2, -0.3, 0.5, 0.2, -0.1]
v.b = [0.0, 0.3, -1.0, 0.0, 0.0, 2.0]
"#;
        let model = Model::from_toml_str(src, None).unwrap();
        let mut state = model.initial_state.clone();
        nonsmooth_core::dynamics::normalize_configuration(&model, &mut state.q).unwrap();
        let h = 0.01;
        let margins = ContactMargins::speculative(model.contact_margin, h);
        let input = crate::actuation::Actuation::none();
        let step = crate::pipeline::prepare(&model, &state, &input, h).unwrap();
        let mut workspace = SnapshotWorkspace::default();
        let mut set = ContactSet::detect(&step, margins.clone(), true, &mut workspace).unwrap();
        assert!(
            set.blocks().is_some(),
            "a pile of free bodies has a block view"
        );
        let block = set.free_motion("test").unwrap();
        let dense = dense_free_motion(set.dense().unwrap(), &state, h, "test").unwrap();
        assert!(
            block.contacts.len() >= 3,
            "{} contacts",
            block.contacts.len()
        );
        assert_eq!(block.contacts.len(), dense.contacts.len());
        for (x, y) in block.contacts.iter().zip(&dense.contacts) {
            assert_eq!(x.index, y.index);
            assert!((x.gap - y.gap).abs() < 1e-14);
            assert!(
                x.normal.close_to(&y.normal, 1e-12),
                "{:?} vs {:?}",
                x.normal,
                y.normal
            );
            for (s, t) in x.tangents.iter().zip(&y.tangents) {
                assert!(s.close_to(t, 1e-12));
            }
        }
        assert!((&block.v_free - &dense.v_free).amax() < 1e-12);
    }

    /// The convex fallback on a ball resting on the ground: the normal impulse carries the
    /// weight within the regularization (γ = m g h / (1 + ρ)), the tangential impulses are
    /// zero and the ball stays at rest.
    #[test]
    fn the_convex_fallback_holds_a_resting_ball() {
        let src = r#"
[model]
name = "ball"
dimension = "spatial"
gravity = [0.0, 0.0, -9.81]

[[materials]]
name = "m"
friction = 0.5

[[bodies]]
name = "ball"
mass = 2.0
inertia = { solid_sphere = 0.1 }

[[colliders]]
name = "ground"
shape = { plane = [0.0, 0.0, 1.0] }
material = "m"

[[colliders]]
name = "surface"
body = "ball"
shape = { sphere = 0.1 }
material = "m"

[initial]
q.ball = [0.0, 0.0, 0.1, 1.0, 0.0, 0.0, 0.0]
"#;
        let model = Model::from_toml_str(src, None).unwrap();
        let h = 1e-3;
        let state = model.initial_state.clone();
        let input = crate::actuation::Actuation::none();
        let step = crate::pipeline::prepare(&model, &state, &input, h).unwrap();
        let margins = ContactMargins::speculative(model.contact_margin, h);
        let free = ContactSet::fresh_free_motion(&step, margins, "test").unwrap();
        assert_eq!(free.contacts.len(), 1);
        let (v1, impulses) = regularized_step(&free, h).unwrap();
        let weight = 2.0 * 9.81 * h;
        let expected = weight / (1.0 + FALLBACK_REGULARIZATION);
        assert!(
            (impulses[0].normal - expected).abs() <= 1e-9 * weight,
            "{impulses:?}"
        );
        assert!(
            impulses[0].tangent.iter().all(|t| t.abs() <= 1e-12),
            "{impulses:?}"
        );
        assert!(
            v1.amax() <= 2.0 * FALLBACK_REGULARIZATION * 9.81 * h,
            "{v1}"
        );
    }
}
