//! Construction of the FESD NLP of a horizon ([`build`]): variables, bounds, the blocks of
//! every element and interval, the initial guess and the [`Layout`].

use std::sync::Arc;

use super::blocks::{colloc_width, FesdBlock};
use super::layout::{Clock, ElementIdx, Horizon, Layout};
use super::options::{CutStep, FesdOptions, CUT_OFF};
use super::tableau::{comp_pair_rows, Dcs, Tableau};
use crate::nlp::BlockNlp;
use crate::time_freezing::TimeFreezing;
use crate::OcpError;

/// The FESD NLP, its layout and an initial guess.
pub type Built = (BlockNlp<FesdBlock>, Layout, Vec<f64>);

/// Builds the FESD NLP of `h`, its layout and an initial guess (y0 everywhere, α = ½, or
/// the horizon's [`Horizon::initial_guess`]),
/// with the system's path constraints ([`ModelSystem::path`](crate::model_system::ModelSystem::path)) at every stage point.
pub fn build(tf: &Arc<TimeFreezing>, hz: &Horizon, o: &FesdOptions) -> Result<Built, OcpError> {
    build_nlp(tf, hz, o, true)
}

/// [`build`] with the path constraints ([`ModelSystem::path`](crate::model_system::ModelSystem::path)) optional: the integrator
/// ([`simulate`](super::simulate)) leaves them out, since they are constraints of the OCP, not of the
/// dynamics (a state outside them, e.g. the hopper's knee at q_x − l_t sin φ_hip < −0.05,
/// would make the exact flow infeasible).
///
/// The NLP's variables and blocks come in this order: the initial state and boundary
/// multipliers, the elastic slack; per control interval its control and speed of time, then
/// per finite element its variables ([`NlpBuilder::element_vars`]) and blocks
/// ([`NlpBuilder::element_blocks`]), then the interval's blocks
/// ([`NlpBuilder::interval_blocks`]).
pub(super) fn build_nlp(
    tf: &Arc<TimeFreezing>,
    hz: &Horizon,
    o: &FesdOptions,
    path_constraints: bool,
) -> Result<Built, OcpError> {
    // every group's rules (the fields are public, so they are checked here too)
    o.validate()?;
    let st = o.discretization.dcs == Dcs::Stewart;
    if st && !tf.stewart_applies() {
        return Err(OcpError::InvalidInput(format!(
            "dcs = \"stewart\" takes one contact, the system has {} (Stewart's reformulation \
             needs 2^n_c regions); use the step representation (dcs = \"step\")",
            tf.cls.n_contacts()
        )));
    }
    let tab = Tableau::new(o.discretization.scheme, o.discretization.n_s)?;
    check_horizon(tf, hz, o)?;
    let mut b = NlpBuilder::new(tf, hz, o, &tab, path_constraints);
    b.add_elastic_slack()?;
    for k in 0..hz.n_steps {
        b.control_interval(k)?;
    }
    let (nlp, layout, mut x0) = (b.nlp, b.layout, b.x0);
    if let Some(guess) = &hz.initial_guess {
        guess.validate(tf.ny() - 1)?;
        super::initial_guess::apply(tf, hz, o, (&nlp, &layout), guess, &mut x0);
    }
    Ok((nlp, layout, x0))
}

/// Checks the horizon `hz` against the system and the options: the sizes and finiteness
/// of the initial state, the tracking terms, the control, multiplier and state bounds, the
/// step counts, and that smoothing has the step representation.
fn check_horizon(tf: &TimeFreezing, hz: &Horizon, o: &FesdOptions) -> Result<(), OcpError> {
    let st = o.discretization.dcs == Dcs::Stewart;
    let (ny, nc, nu) = (tf.ny(), colloc_width(tf, st), tf.cls.nu());
    if hz.y0.len() != ny || hz.y0.iter().any(|v| !v.is_finite()) {
        return Err(OcpError::InvalidInput(format!(
            "y0 must have {ny} finite entries"
        )));
    }
    if let Some(t) = hz.tracking.iter().find(|t| {
        t.index >= ny || !(t.weight.is_finite() && t.weight >= 0.0) || !t.target.is_finite()
    }) {
        return Err(OcpError::InvalidInput(format!(
            "tracking term {t:?}: the index must be below {ny}, the weight finite and ≥ 0, the target finite"
        )));
    }
    if hz.u_bounds.len() != hz.n_steps
        || hz
            .u_bounds
            .iter()
            .any(|(l, u)| l.len() != nu || u.len() != nu)
    {
        return Err(OcpError::InvalidInput(format!(
            "need {} control bound pairs of length {nu}",
            hz.n_steps
        )));
    }
    if !(hz.step_len > 0.0 && hz.step_len.is_finite())
        || o.discretization.n_fe == 0
        || hz.n_steps == 0
    {
        return Err(OcpError::InvalidInput(
            "step length, N and N_FE must be positive".into(),
        ));
    }
    if let Some((p, n)) = hz.lam0.as_ref().filter(|_| !st) {
        if p.len() != nc || n.len() != nc {
            return Err(OcpError::InvalidInput(format!(
                "lam0 must have {nc} entries each"
            )));
        }
    }
    if let Some((l, u)) = &hz.y_bounds {
        if l.len() != ny || u.len() != ny {
            return Err(OcpError::InvalidInput(format!(
                "y_bounds must have {ny} entries each"
            )));
        }
    }
    if let Some(sm) = &o.mpcc.smoothing {
        if st {
            return Err(OcpError::InvalidInput(
                "smoothing needs the step representation (dcs = step), not Stewart".into(),
            ));
        }
        sm.validate(nc)?;
    }
    Ok(())
}

/// Appends `vals.len()` variables with initial values `vals` and bounds `lo`, `hi` (their
/// leading entries) to `nlp` and `x0`; returns the first one's index.
fn push_vars(
    nlp: &mut BlockNlp<FesdBlock>,
    x0: &mut Vec<f64>,
    vals: &[f64],
    lo: &[f64],
    hi: &[f64],
) -> usize {
    let s = nlp.add_vars(vals.len(), 0.0, 0.0);
    nlp.xl[s..s + vals.len()].copy_from_slice(&lo[..vals.len()]);
    nlp.xu[s..s + vals.len()].copy_from_slice(&hi[..vals.len()]);
    x0.extend_from_slice(vals);
    s
}

/// The boundary multipliers (λᵖ, λⁿ) before the first element: Stewart's λ = g − μ𝟙 with
/// μ = min g (λ = 0 on the region of y0), else [`Horizon::lam0`] or the split
/// (max(c, 0), max(−c, 0)) of c(y0).
fn boundary_multipliers(tf: &TimeFreezing, hz: &Horizon, st: bool) -> (Vec<f64>, Vec<f64>) {
    if st {
        let g = tf.stewart_g(&hz.y0);
        let mu = g.iter().copied().fold(f64::INFINITY, f64::min);
        return (g.iter().map(|g| g - mu).collect(), vec![mu]);
    }
    let c0 = tf.switching(&hz.y0);
    hz.lam0.clone().unwrap_or_else(|| {
        (
            c0.iter().map(|c| c.max(0.0)).collect(),
            c0.iter().map(|c| (-c).max(0.0)).collect(),
        )
    })
}

/// The variables of an element's end point carried into the next element: state, λᵖ, λⁿ.
#[derive(Debug, Clone, Copy)]
struct EndPoint {
    /// State.
    y: usize,
    /// λᵖ.
    lp: usize,
    /// λⁿ.
    ln: usize,
}

/// The FESD NLP under construction: the NLP, its initial guess and layout, and what every
/// stage of the construction reads.
struct NlpBuilder<'a> {
    /// The time-freezing system.
    tf: &'a Arc<TimeFreezing>,
    /// The horizon.
    hz: &'a Horizon,
    /// The discretization and homotopy options.
    o: &'a FesdOptions,
    /// Path constraints at the stage points ([`build_nlp`]).
    path_constraints: bool,
    /// Stewart's representation instead of the step one.
    st: bool,
    /// n_y, n_c (n_θ for Stewart), n_u, n_s.
    ny: usize,
    nc: usize,
    nu: usize,
    ns: usize,
    /// The tableau is stiffly accurate (the last stage is the end point).
    sa: bool,
    /// Rows of the Butcher matrix ([`Tableau::rows`]).
    a: Arc<Vec<Vec<f64>>>,
    /// The terminal is a penalty (soft phase of the homotopy, smoothing phase).
    soft_terminal: bool,
    /// Flight-cut thresholds ([`cut_thresholds`]).
    cuts: [Option<f64>; 2],
    /// Nominal element length h̄.
    hbar: f64,
    /// Physical length of a control interval for the running tracking cost.
    nominal_interval: f64,
    /// State bounds at the stage points.
    y_bounds: (Vec<f64>, Vec<f64>),
    /// Initial guess of λᵖ and λⁿ at the stage points.
    lam_init: (Vec<f64>, Vec<f64>),
    /// The end point of the last element built (at first: y0 and the boundary multipliers).
    prev: EndPoint,
    /// The NLP.
    nlp: BlockNlp<FesdBlock>,
    /// Its initial guess.
    x0: Vec<f64>,
    /// Its layout.
    layout: Layout,
}

impl<'a> NlpBuilder<'a> {
    /// The builder with the initial state and the boundary multipliers as the first
    /// variables.
    fn new(
        tf: &'a Arc<TimeFreezing>,
        hz: &'a Horizon,
        o: &'a FesdOptions,
        tab: &Tableau,
        path_constraints: bool,
    ) -> Self {
        let st = o.discretization.dcs == Dcs::Stewart;
        let (ny, nc, nu) = (tf.ny(), colloc_width(tf, st), tf.cls.nu());
        let ns = o.discretization.n_s;
        let nominal_interval = match hz.clock {
            Clock::Stagewise(t) | Clock::Terminal(t) => t / hz.n_steps.max(1) as f64,
            Clock::Free => hz.step_len,
        };
        let mut nlp = BlockNlp::default();
        let mut x0 = vec![];
        let y0 = push_vars(&mut nlp, &mut x0, &hz.y0, &hz.y0, &hz.y0);
        let (lp0v, ln0v) = boundary_multipliers(tf, hz, st);
        let lp0 = push_vars(&mut nlp, &mut x0, &lp0v, &lp0v, &lp0v);
        let ln0 = push_vars(&mut nlp, &mut x0, &ln0v, &ln0v, &ln0v);
        let y_bounds = hz
            .y_bounds
            .clone()
            .unwrap_or((vec![-1e20; ny], vec![1e20; ny]));
        let shift = if st {
            0.0
        } else {
            o.discretization.lambda_shift
        };
        let lam_init = (
            lp0v.iter().map(|v| v + shift).collect(),
            ln0v.iter().map(|v| v + shift).collect(),
        );
        let layout = Layout {
            dims: (ny, nc, nu, ns),
            y0,
            u: vec![],
            s: vec![],
            elems: vec![],
            comp_rows: vec![],
            comp_row_len: 0,
            terminal: vec![],
            c: tab.c.clone(),
            n_cross: if st {
                usize::MAX
            } else {
                o.discretization.cross_components
            },
            elastic: None,
            dcs: o.discretization.dcs,
            smoothing: o.mpcc.smoothing.is_some(),
        };
        Self {
            tf,
            hz,
            o,
            path_constraints,
            st,
            ny,
            nc,
            nu,
            ns,
            sa: tab.stiffly_accurate,
            a: Arc::new(tab.rows()),
            soft_terminal: o.mpcc.soft_terminal > 0.0 || o.mpcc.smoothing.is_some(),
            cuts: cut_thresholds(o),
            hbar: hz.step_len / o.discretization.n_fe as f64,
            nominal_interval,
            y_bounds,
            lam_init,
            prev: EndPoint {
                y: y0,
                lp: lp0,
                ln: ln0,
            },
            nlp,
            x0,
            layout,
        }
    }

    /// Appends variables ([`push_vars`]).
    fn push(&mut self, vals: &[f64], lo: &[f64], hi: &[f64]) -> usize {
        push_vars(&mut self.nlp, &mut self.x0, vals, lo, hi)
    }

    /// The elastic slack s_e ∈ [0, s_max] and its objective (elastic mode, not in penalty
    /// mode).
    fn add_elastic_slack(&mut self) -> Result<(), OcpError> {
        let m = &self.o.mpcc;
        if m.elastic && !m.penalty {
            let v = self.push(&[m.sigma0.min(m.s_elastic_max)], &[0.0], &[m.s_elastic_max]);
            self.nlp
                .add_objective(FesdBlock::Elastic { weight: 1.0 }, vec![v])?;
            self.layout.elastic = Some(v);
        }
        Ok(())
    }

    /// Control interval `k`: its control u and speed of time s (one s for the horizon with
    /// [`Horizon::global_speed`]), its finite elements, and its blocks.
    fn control_interval(&mut self, k: usize) -> Result<(), OcpError> {
        let hz = self.hz;
        let (ul, uh) = &hz.u_bounds[k];
        let uinit: Vec<f64> = ul.iter().zip(uh).map(|(l, h)| 0f64.clamp(*l, *h)).collect();
        let u = self.push(&uinit, ul, uh);
        let s0 = 1f64.clamp(hz.s_bounds.0, hz.s_bounds.1);
        let new_speed = !(hz.global_speed && k > 0);
        let s = if new_speed {
            self.push(&[s0], &[hz.s_bounds.0], &[hz.s_bounds.1])
        } else {
            self.layout.s[0]
        };
        let y_interval_start = self.prev.y;
        self.layout.u.push(u);
        self.layout.s.push(s);
        let mut hs = vec![];
        for n in 0..self.o.discretization.n_fe {
            let e = self.element_vars(k, n)?;
            hs.push(e.h);
            self.element_blocks(&e, n, u, s)?;
            self.prev = EndPoint {
                y: e.y_end,
                lp: e.lp[e.lp.len() - 1],
                ln: e.ln[e.ln.len() - 1],
            };
            self.layout.elems.push(e);
        }
        let interval = Interval {
            k,
            u,
            s,
            new_speed,
            y_start: y_interval_start,
        };
        self.interval_blocks(&interval, hs)
    }

    /// The variables of element `n` of interval `k`: its length h, then per stage point the
    /// state Y (initialized from the element's start, within its bounds), α at the stages,
    /// λᵖ and λⁿ.
    fn element_vars(&mut self, k: usize, n: usize) -> Result<ElementIdx, OcpError> {
        let (ny, nc, ns, sa, st) = (self.ny, self.nc, self.ns, self.sa, self.st);
        let d = &self.o.discretization;
        let hbar = self.hbar;
        let (hl, hh) = if d.fesd {
            ((1.0 - d.gamma_h) * hbar, (1.0 + d.gamma_h) * hbar)
        } else {
            (hbar, hbar)
        };
        let h = self.push(&[hbar], &[hl], &[hh]);
        let y_prev = self.prev.y;
        let mut e = ElementIdx {
            h,
            y_start: y_prev,
            y: vec![],
            y_end: y_prev,
            alpha: vec![],
            lp: vec![self.prev.lp],
            ln: vec![self.prev.ln],
            step: k,
        };
        let n_lam_n = self.lam_init.1.len();
        for j in 0..ns + usize::from(!sa) {
            let end_point = if sa { j == ns - 1 } else { j == ns };
            let (lo, hi) = self.stage_point_bounds(k, end_point && n == d.n_fe - 1);
            let init: Vec<f64> = (0..ny)
                .map(|i| self.x0[y_prev + i].clamp(lo[i], hi[i]))
                .collect();
            let yv = self.push(&init, &lo, &hi);
            if j < ns {
                e.y.push(yv);
                let a0 = if st { 1.0 / nc as f64 } else { d.alpha0 };
                e.alpha
                    .push(self.push(&vec![a0; nc], &vec![0.0; nc], &vec![1.0; nc]));
            }
            if end_point {
                e.y_end = yv;
            }
            let (nlp, x0, (lam_p, lam_n)) = (&mut self.nlp, &mut self.x0, &self.lam_init);
            e.lp.push(push_vars(nlp, x0, lam_p, &vec![0.0; nc], &vec![1e20; nc]));
            let ln_lo = if st { -1e20 } else { 0.0 };
            let (lo, hi) = (vec![ln_lo; n_lam_n], vec![1e20; n_lam_n]);
            e.ln.push(push_vars(nlp, x0, lam_n, &lo, &hi));
        }
        Ok(e)
    }

    /// The state bounds at a stage point; at the end of interval `k` (`interval_end`) also
    /// its clock value ([`Clock`]) and, at the horizon's end without a soft terminal, the
    /// terminal values.
    fn stage_point_bounds(&self, k: usize, interval_end: bool) -> (Vec<f64>, Vec<f64>) {
        let (mut lo, mut hi) = self.y_bounds.clone();
        if !interval_end {
            return (lo, hi);
        }
        let (hz, ny) = (self.hz, self.ny);
        let last = k == hz.n_steps - 1;
        let tk = match hz.clock {
            Clock::Stagewise(t_end) => Some(t_end * (k + 1) as f64 / hz.n_steps as f64),
            Clock::Terminal(t_end) if last => Some(t_end),
            _ => None,
        };
        if let Some(tk) = tk {
            lo[ny - 1] = tk;
            hi[ny - 1] = tk;
        }
        if last && !self.soft_terminal {
            for (i, v) in &hz.terminal {
                if *i < ny {
                    lo[*i] = *v;
                    hi[*i] = *v;
                }
            }
        }
        (lo, hi)
    }

    /// The state variable of stage point j of `e` (the end point after the stages).
    fn stage_point(&self, e: &ElementIdx, j: usize) -> usize {
        if j < self.ns {
            e.y[j]
        } else {
            e.y_end
        }
    }

    /// The blocks of element `n` (control u, speed s), in this order: collocation, path
    /// constraints, algebraic equations, Stewart's Σθ = 1, (cross) complementarity, flight
    /// cuts, smoothing, and the element's objective terms.
    fn element_blocks(
        &mut self,
        e: &ElementIdx,
        n: usize,
        u: usize,
        s: usize,
    ) -> Result<(), OcpError> {
        self.collocation(e, u, s)?;
        if self.path_constraints && self.tf.cls.n_path() > 0 {
            self.path_rows(e, n)?;
        }
        self.algebraic(e)?;
        if self.st {
            for j in 0..self.ns {
                self.nlp.add_constraint(
                    FesdBlock::SumH,
                    (0..self.nc).map(|i| e.alpha[j] + i).collect(),
                    &[1.0],
                    &[1.0],
                )?;
            }
        }
        self.complementarity(e)?;
        if !self.st {
            self.flight_cuts(e)?;
        }
        let o = self.o;
        if let Some(sm) = &o.mpcc.smoothing {
            self.smoothing(e, &sm.widths, sm.lambda_weight)?;
        }
        self.element_objectives(e)
    }

    /// The collocation equations of `e` (Nurkanović et al. eq. 31), vars [y_n, Y_1..,
    /// (y_end), α_1.., h, s, u].
    fn collocation(&mut self, e: &ElementIdx, u: usize, s: usize) -> Result<(), OcpError> {
        let (ny, nc, nu, ns) = (self.ny, self.nc, self.nu, self.ns);
        let mut vars: Vec<usize> = (0..ny).map(|i| e.y_start + i).collect();
        for j in 0..ns {
            vars.extend((0..ny).map(|i| e.y[j] + i));
        }
        if !self.sa {
            vars.extend((0..ny).map(|i| e.y_end + i));
        }
        for j in 0..ns {
            vars.extend((0..nc).map(|i| e.alpha[j] + i));
        }
        vars.push(e.h);
        vars.push(s);
        vars.extend((0..nu).map(|i| u + i));
        let z = vec![0.0; self.a.len() * ny];
        self.nlp.add_constraint(
            FesdBlock::Collocation {
                tf: self.tf.clone(),
                a: self.a.clone(),
                stewart: self.st,
            },
            vars,
            &z,
            &z,
        )?;
        Ok(())
    }

    /// The system's path constraints at the stage points of element `n` (only at the
    /// interval's end without [`Discretization::path_at_stages`](crate::fesd::Discretization::path_at_stages)).
    fn path_rows(&mut self, e: &ElementIdx, n: usize) -> Result<(), OcpError> {
        let (plo, phi) = self.tf.cls.path_bounds();
        let nq = self.tf.cls.nq();
        for j in 0..self.ns + usize::from(!self.sa) {
            let yj = self.stage_point(e, j);
            if !self.o.discretization.path_at_stages
                && (n + 1 < self.o.discretization.n_fe || yj != e.y_end)
            {
                continue;
            }
            self.nlp.add_constraint(
                FesdBlock::Path {
                    tf: self.tf.clone(),
                },
                (0..nq).map(|i| yj + i).collect(),
                &plo,
                &phi,
            )?;
        }
        Ok(())
    }

    /// The algebraic equations c(Y) − λᵖ + λⁿ = 0 (Stewart: g(Y) − λ − μ𝟙 = 0) at every
    /// stage point of `e`.
    fn algebraic(&mut self, e: &ElementIdx) -> Result<(), OcpError> {
        let (ny, nc) = (self.ny, self.nc);
        for j in 0..self.ns + usize::from(!self.sa) {
            let yj = self.stage_point(e, j);
            let mut vars: Vec<usize> = (0..ny).map(|i| yj + i).collect();
            vars.extend((0..nc).map(|i| e.lp[j + 1] + i));
            vars.extend((0..self.lam_init.1.len()).map(|i| e.ln[j + 1] + i));
            let z = vec![0.0; nc];
            let block = if self.st {
                FesdBlock::StewartAlgebraic {
                    tf: self.tf.clone(),
                }
            } else {
                FesdBlock::Algebraic {
                    tf: self.tf.clone(),
                }
            };
            self.nlp.add_constraint(block, vars, &z, &z)?;
        }
        Ok(())
    }

    /// The (cross) complementarity of `e` (Nurkanović et al. eq. 35): a penalty objective,
    /// or rows ≤ σ (≤ s_e in elastic mode) recorded in the layout.
    fn complementarity(&mut self, e: &ElementIdx) -> Result<(), OcpError> {
        let (nc, ns, st) = (self.nc, self.ns, self.st);
        let (d, m) = (&self.o.discretization, &self.o.mpcc);
        let mut vars: Vec<usize> = vec![];
        for j in 0..ns {
            vars.extend((0..nc).map(|i| e.alpha[j] + i));
        }
        for lp in &e.lp {
            vars.extend((0..nc).map(|i| lp + i));
        }
        if !st {
            for ln in &e.ln {
                vars.extend((0..nc).map(|i| ln + i));
            }
        }
        let elastic = self.layout.elastic.is_some();
        if let Some(v) = self.layout.elastic {
            vars.push(v);
        }
        let comp = if st {
            FesdBlock::StewartComp {
                n_s: ns,
                n_lam: e.lp.len(),
                n_th: nc,
                cross: d.fesd,
                weight: 1.0,
                elastic,
            }
        } else {
            FesdBlock::Comp {
                n_s: ns,
                n_lam: e.lp.len(),
                n_c: nc,
                cross: d.fesd,
                n_cross: d.cross_components,
                weight: 1.0,
                elastic,
                per_pair: m.per_pair,
            }
        };
        if m.penalty {
            return self.nlp.add_objective(comp, vars);
        }
        let ub = if elastic { 0.0 } else { m.sigma0 };
        let nrow = if m.per_pair && !st {
            comp_pair_rows(d.fesd, d.cross_components, ns, e.lp.len(), nc)
        } else {
            nc
        };
        self.layout.comp_row_len = nrow;
        let row = self
            .nlp
            .add_constraint(comp, vars, &vec![-1e20; nrow], &vec![ub; nrow])?;
        self.layout.comp_rows.push(row);
        Ok(())
    }

    /// The flight-cut rows of `e` at its stages, for the switching functions with a
    /// threshold ([`cut_thresholds`]).
    fn flight_cuts(&mut self, e: &ElementIdx) -> Result<(), OcpError> {
        for (i, delta) in self.cuts.iter().enumerate().take(self.nc) {
            let Some(delta) = *delta else { continue };
            for j in 0..self.ns {
                self.nlp.add_constraint(
                    FesdBlock::FlightCut { delta, comp: i },
                    vec![e.alpha[j] + i, e.lp[j + 1] + i],
                    &[-1e20],
                    &[0.0],
                )?;
            }
        }
        Ok(())
    }

    /// The smoothed step functions of width `widths` at the stages of `e`
    /// ([`crate::smoothing`]) and the objective `lambda_weight` Σ λ over their multipliers.
    fn smoothing(
        &mut self,
        e: &ElementIdx,
        widths: &[f64],
        lambda_weight: f64,
    ) -> Result<(), OcpError> {
        let nc = self.nc;
        let mut lams = vec![];
        for j in 0..self.ns {
            let mut vars: Vec<usize> = (0..nc).map(|i| e.alpha[j] + i).collect();
            vars.extend((0..nc).map(|i| e.lp[j + 1] + i));
            vars.extend((0..nc).map(|i| e.ln[j + 1] + i));
            lams.extend_from_slice(&vars[nc..]);
            let z = vec![0.0; nc];
            self.nlp.add_constraint(
                FesdBlock::Smoothing {
                    widths: widths.to_vec(),
                },
                vars,
                &z,
                &z,
            )?;
        }
        self.nlp.add_objective(
            FesdBlock::LambdaSum {
                weight: lambda_weight,
            },
            lams,
        )
    }

    /// The objective terms of `e`: the α bias at its stages and the step equilibration
    /// ρ_h (h − h̄)²/h̄².
    fn element_objectives(&mut self, e: &ElementIdx) -> Result<(), OcpError> {
        let d = &self.o.discretization;
        if d.alpha_bias > 0.0 && !self.st {
            for j in 0..self.ns {
                self.nlp.add_objective(
                    FesdBlock::Linear {
                        weight: d.alpha_bias,
                    },
                    vec![e.alpha[j]],
                )?;
            }
        }
        if d.fesd && d.rho_h > 0.0 {
            self.nlp.add_objective(
                FesdBlock::StepEq {
                    hbar: self.hbar,
                    rho: d.rho_h,
                },
                vec![e.h],
            )?;
        }
        Ok(())
    }

    /// The blocks of a control interval after its elements (lengths `hs`): Σh = step length
    /// (FESD), the speed-of-time objective, the soft terminal at the horizon's end, the
    /// running tracking cost and the control cost.
    fn interval_blocks(&mut self, iv: &Interval, hs: Vec<usize>) -> Result<(), OcpError> {
        let (hz, ny, nu) = (self.hz, self.ny, self.nu);
        let d = &self.o.discretization;
        if d.fesd {
            self.nlp
                .add_constraint(FesdBlock::SumH, hs, &[hz.step_len], &[hz.step_len])?;
        }
        if d.rho_sot > 0.0 && hz.s_bounds.0 < hz.s_bounds.1 && iv.new_speed {
            self.nlp
                .add_objective(FesdBlock::SpeedOfTime { rho: d.rho_sot }, vec![iv.s])?;
        }
        // the interval's last point
        let y_end = self.prev.y;
        if iv.k == hz.n_steps - 1 && self.soft_terminal {
            let (idx, target): (Vec<usize>, Vec<f64>) = hz
                .terminal
                .iter()
                .filter(|(i, _)| *i < ny)
                .map(|(i, v)| (y_end + i, *v))
                .unzip();
            self.layout.terminal = idx.iter().copied().zip(target.iter().copied()).collect();
            self.nlp.add_objective(
                FesdBlock::Terminal {
                    target,
                    weight: self.o.mpcc.soft_terminal / self.o.mpcc.sigma0,
                },
                idx,
            )?;
        }
        // running tracking cost at the interval's end
        for tr in hz
            .tracking
            .iter()
            .filter(|t| t.weight > 0.0 && t.index < ny)
        {
            self.nlp.add_objective(
                FesdBlock::Terminal {
                    target: vec![tr.target],
                    weight: tr.weight * self.nominal_interval,
                },
                vec![y_end + tr.index],
            )?;
        }
        if hz.control_weight > 0.0 {
            let mut vars: Vec<usize> = (0..nu).map(|i| iv.u + i).collect();
            let per_clock = !matches!(hz.clock, Clock::Stagewise(_));
            if per_clock {
                vars.extend([iv.y_start + ny - 1, y_end + ny - 1]);
            }
            self.nlp.add_objective(
                FesdBlock::ControlCost {
                    weight: hz.control_weight,
                    per_clock,
                },
                vars,
            )?;
        }
        Ok(())
    }
}

/// The variables of a control interval that its closing blocks read.
struct Interval {
    /// Index of the interval.
    k: usize,
    /// First control variable.
    u: usize,
    /// Speed-of-time variable.
    s: usize,
    /// `s` is this interval's own (not the horizon's shared one of a later interval).
    new_speed: bool,
    /// State at the interval's start.
    y_start: usize,
}

/// Initial thresholds of the flight-cut rows per switching function (`None` = no rows):
/// the first [`MpccStrategy::cut_schedule`](crate::fesd::MpccStrategy::cut_schedule) entry ([`CUT_OFF`] where it leaves a cut
/// inactive that a later entry sets), else `flight_cut` / `flight_cut_v`.
fn cut_thresholds(o: &FesdOptions) -> [Option<f64>; 2] {
    let Some(first) = o.mpcc.cut_schedule.first() else {
        return [o.mpcc.flight_cut, o.mpcc.flight_cut_v];
    };
    let used = |f: fn(&CutStep) -> Option<f64>, fixed: Option<f64>| {
        (fixed.is_some() || o.mpcc.cut_schedule.iter().any(|c| f(c).is_some()))
            .then(|| f(first).unwrap_or(CUT_OFF))
    };
    [
        used(|c| c.delta, o.mpcc.flight_cut),
        used(|c| c.delta_v, o.mpcc.flight_cut_v),
    ]
}
