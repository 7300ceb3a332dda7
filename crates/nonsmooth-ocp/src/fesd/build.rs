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

#[cfg(doc)]
use super::simulate;

/// The FESD NLP, its layout and an initial guess.
pub type Built = (BlockNlp<FesdBlock>, Layout, Vec<f64>);

/// Builds the FESD NLP of `h`, its layout and an initial guess (y0 everywhere, α = ½),
/// with the system's path constraints ([`ModelSystem::path`](crate::model_system::ModelSystem::path)) at every stage point.
pub fn build(tf: &Arc<TimeFreezing>, hz: &Horizon, o: &FesdOptions) -> Result<Built, OcpError> {
    build_nlp(tf, hz, o, true)
}

/// [`build`] with the path constraints ([`ModelSystem::path`](crate::model_system::ModelSystem::path)) optional: the integrator
/// ([`simulate`]) leaves them out, since they are constraints of the OCP, not of the
/// dynamics (a state outside them, e.g. the hopper's knee at q_x − l_t sin φ_hip < −0.05,
/// would make the exact flow infeasible).
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
    let (ny, nc, nu) = (tf.ny(), colloc_width(tf, st), tf.cls.nu());
    let tab = Tableau::new(o.discretization.scheme, o.discretization.n_s)?;
    let cnodes = tab.c.clone();
    let sa = tab.stiffly_accurate;
    let ns = o.discretization.n_s;
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
    // physical length of a control interval for the running tracking cost
    let nominal_interval = match hz.clock {
        Clock::Stagewise(t) | Clock::Terminal(t) => t / hz.n_steps.max(1) as f64,
        Clock::Free => hz.step_len,
    };
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
    // the terminal is a penalty in the soft phase of the homotopy and in the smoothing phase
    let soft_terminal = o.mpcc.soft_terminal > 0.0 || o.mpcc.smoothing.is_some();
    let cuts = cut_thresholds(o);
    let a = Arc::new(tab.rows());
    let mut nlp = BlockNlp::default();
    let mut x0 = vec![];
    let push =
        |nlp: &mut BlockNlp<FesdBlock>, x0: &mut Vec<f64>, vals: &[f64], lo: &[f64], hi: &[f64]| {
            let s = nlp.add_vars(vals.len(), 0.0, 0.0);
            nlp.xl[s..s + vals.len()].copy_from_slice(&lo[..vals.len()]);
            nlp.xu[s..s + vals.len()].copy_from_slice(&hi[..vals.len()]);
            x0.extend_from_slice(vals);
            s
        };
    let y0 = push(&mut nlp, &mut x0, &hz.y0, &hz.y0, &hz.y0);
    let c0 = tf.switching(&hz.y0);
    let (lp0v, ln0v) = if st {
        // λ = g − μ𝟙 with μ = min g (λ = 0 on the region of y0)
        let g = tf.stewart_g(&hz.y0);
        let mu = g.iter().copied().fold(f64::INFINITY, f64::min);
        (g.iter().map(|g| g - mu).collect(), vec![mu])
    } else {
        hz.lam0.clone().unwrap_or_else(|| {
            (
                c0.iter().map(|c| c.max(0.0)).collect(),
                c0.iter().map(|c| (-c).max(0.0)).collect(),
            )
        })
    };
    let lp0 = push(&mut nlp, &mut x0, &lp0v, &lp0v, &lp0v);
    let ln0 = push(&mut nlp, &mut x0, &ln0v, &ln0v, &ln0v);
    let inf = vec![1e20; ny.max(nc)];
    let ninf = vec![-1e20; ny.max(nc)];
    let (ylo, yhi) = hz
        .y_bounds
        .clone()
        .unwrap_or((ninf[..ny].to_vec(), inf[..ny].to_vec()));
    let hbar = hz.step_len / o.discretization.n_fe as f64;
    let shift = if st {
        0.0
    } else {
        o.discretization.lambda_shift
    };
    let lam_init_p: Vec<f64> = lp0v.iter().map(|v| v + shift).collect();
    let lam_init_n: Vec<f64> = ln0v.iter().map(|v| v + shift).collect();
    let mut layout = Layout {
        dims: (ny, nc, nu, ns),
        y0,
        u: vec![],
        s: vec![],
        elems: vec![],
        comp_rows: vec![],
        comp_row_len: 0,
        terminal: vec![],
        c: cnodes,
        n_cross: if st {
            usize::MAX
        } else {
            o.discretization.cross_components
        },
        elastic: None,
        dcs: o.discretization.dcs,
        smoothing: o.mpcc.smoothing.is_some(),
    };
    let elastic_var = if o.mpcc.elastic && !o.mpcc.penalty {
        let v = push(
            &mut nlp,
            &mut x0,
            &[o.mpcc.sigma0.min(o.mpcc.s_elastic_max)],
            &[0.0],
            &[o.mpcc.s_elastic_max],
        );
        nlp.add_objective(FesdBlock::Elastic { weight: 1.0 }, vec![v])?;
        Some(v)
    } else {
        None
    };
    layout.elastic = elastic_var;
    let (mut y_prev, mut lp_prev, mut ln_prev) = (y0, lp0, ln0);
    for k in 0..hz.n_steps {
        let (ul, uh) = &hz.u_bounds[k];
        let uinit: Vec<f64> = ul.iter().zip(uh).map(|(l, h)| 0f64.clamp(*l, *h)).collect();
        let u = push(&mut nlp, &mut x0, &uinit, ul, uh);
        let s0 = 1f64.clamp(hz.s_bounds.0, hz.s_bounds.1);
        let new_speed = !(hz.global_speed && k > 0);
        let s = if new_speed {
            push(&mut nlp, &mut x0, &[s0], &[hz.s_bounds.0], &[hz.s_bounds.1])
        } else {
            layout.s[0]
        };
        let y_interval_start = y_prev;
        layout.u.push(u);
        layout.s.push(s);
        let mut hs = vec![];
        for n in 0..o.discretization.n_fe {
            let (hl, hh) = if o.discretization.fesd {
                (
                    (1.0 - o.discretization.gamma_h) * hbar,
                    (1.0 + o.discretization.gamma_h) * hbar,
                )
            } else {
                (hbar, hbar)
            };
            let h = push(&mut nlp, &mut x0, &[hbar], &[hl], &[hh]);
            hs.push(h);
            let mut e = ElementIdx {
                h,
                y_start: y_prev,
                y: vec![],
                y_end: y_prev,
                alpha: vec![],
                lp: vec![lp_prev],
                ln: vec![ln_prev],
                step: k,
            };
            for j in 0..ns + usize::from(!sa) {
                let (mut lo, mut hi) = (ylo.clone(), yhi.clone());
                let end_point = if sa { j == ns - 1 } else { j == ns };
                if end_point && n == o.discretization.n_fe - 1 {
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
                    if k == hz.n_steps - 1 && !soft_terminal {
                        for (i, v) in &hz.terminal {
                            if *i < ny {
                                lo[*i] = *v;
                                hi[*i] = *v;
                            }
                        }
                    }
                }
                let init: Vec<f64> = (0..ny)
                    .map(|i| x0[y_prev + i].clamp(lo[i], hi[i]))
                    .collect();
                let yv = push(&mut nlp, &mut x0, &init, &lo, &hi);
                if j < ns {
                    e.y.push(yv);
                    let a0 = if st {
                        1.0 / nc as f64
                    } else {
                        o.discretization.alpha0
                    };
                    e.alpha.push(push(
                        &mut nlp,
                        &mut x0,
                        &vec![a0; nc],
                        &vec![0.0; nc],
                        &vec![1.0; nc],
                    ));
                }
                if end_point {
                    e.y_end = yv;
                }
                e.lp.push(push(
                    &mut nlp,
                    &mut x0,
                    &lam_init_p,
                    &vec![0.0; nc],
                    &inf[..nc],
                ));
                let nn = lam_init_n.len();
                let ln_lo = if st { -1e20 } else { 0.0 };
                e.ln.push(push(
                    &mut nlp,
                    &mut x0,
                    &lam_init_n,
                    &vec![ln_lo; nn],
                    &inf[..nn],
                ));
            }
            // collocation
            let mut vars: Vec<usize> = (0..ny).map(|i| e.y_start + i).collect();
            for j in 0..ns {
                vars.extend((0..ny).map(|i| e.y[j] + i));
            }
            if !sa {
                vars.extend((0..ny).map(|i| e.y_end + i));
            }
            for j in 0..ns {
                vars.extend((0..nc).map(|i| e.alpha[j] + i));
            }
            vars.push(h);
            vars.push(s);
            vars.extend((0..nu).map(|i| u + i));
            let z = vec![0.0; a.len() * ny];
            nlp.add_constraint(
                FesdBlock::Collocation {
                    tf: tf.clone(),
                    a: a.clone(),
                    stewart: st,
                },
                vars,
                &z,
                &z,
            )?;
            if path_constraints && tf.cls.n_path() > 0 {
                let (plo, phi) = tf.cls.path_bounds();
                let nq = tf.cls.nq();
                for j in 0..ns + usize::from(!sa) {
                    let yj = if j < ns { e.y[j] } else { e.y_end };
                    if !o.discretization.path_at_stages
                        && (n + 1 < o.discretization.n_fe || yj != e.y_end)
                    {
                        continue;
                    }
                    nlp.add_constraint(
                        FesdBlock::Path { tf: tf.clone() },
                        (0..nq).map(|i| yj + i).collect(),
                        &plo,
                        &phi,
                    )?;
                }
            }
            for j in 0..ns + usize::from(!sa) {
                let yj = if j < ns { e.y[j] } else { e.y_end };
                let mut vars: Vec<usize> = (0..ny).map(|i| yj + i).collect();
                vars.extend((0..nc).map(|i| e.lp[j + 1] + i));
                vars.extend((0..lam_init_n.len()).map(|i| e.ln[j + 1] + i));
                let z = vec![0.0; nc];
                let block = if st {
                    FesdBlock::StewartAlgebraic { tf: tf.clone() }
                } else {
                    FesdBlock::Algebraic { tf: tf.clone() }
                };
                nlp.add_constraint(block, vars, &z, &z)?;
            }
            if st {
                for j in 0..ns {
                    nlp.add_constraint(
                        FesdBlock::SumH,
                        (0..nc).map(|i| e.alpha[j] + i).collect(),
                        &[1.0],
                        &[1.0],
                    )?;
                }
            }
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
            let elastic = elastic_var.is_some();
            if let Some(v) = elastic_var {
                vars.push(v);
            }
            let comp = if st {
                FesdBlock::StewartComp {
                    n_s: ns,
                    n_lam: e.lp.len(),
                    n_th: nc,
                    cross: o.discretization.fesd,
                    weight: 1.0,
                    elastic,
                }
            } else {
                FesdBlock::Comp {
                    n_s: ns,
                    n_lam: e.lp.len(),
                    n_c: nc,
                    cross: o.discretization.fesd,
                    n_cross: o.discretization.cross_components,
                    weight: 1.0,
                    elastic,
                    per_pair: o.mpcc.per_pair,
                }
            };
            if o.mpcc.penalty {
                nlp.add_objective(comp, vars)?;
            } else {
                let ub = if elastic { 0.0 } else { o.mpcc.sigma0 };
                let nrow = if o.mpcc.per_pair && !st {
                    comp_pair_rows(
                        o.discretization.fesd,
                        o.discretization.cross_components,
                        ns,
                        e.lp.len(),
                        nc,
                    )
                } else {
                    nc
                };
                layout.comp_row_len = nrow;
                let row = nlp.add_constraint(comp, vars, &vec![-1e20; nrow], &vec![ub; nrow])?;
                layout.comp_rows.push(row);
            }
            if !st {
                for (i, delta) in cuts.iter().enumerate().take(nc) {
                    let Some(delta) = *delta else { continue };
                    for j in 0..ns {
                        nlp.add_constraint(
                            FesdBlock::FlightCut { delta, comp: i },
                            vec![e.alpha[j] + i, e.lp[j + 1] + i],
                            &[-1e20],
                            &[0.0],
                        )?;
                    }
                }
            }
            if let Some(sm) = &o.mpcc.smoothing {
                let mut lams = vec![];
                for j in 0..ns {
                    let mut vars: Vec<usize> = (0..nc).map(|i| e.alpha[j] + i).collect();
                    vars.extend((0..nc).map(|i| e.lp[j + 1] + i));
                    vars.extend((0..nc).map(|i| e.ln[j + 1] + i));
                    lams.extend_from_slice(&vars[nc..]);
                    let z = vec![0.0; nc];
                    nlp.add_constraint(
                        FesdBlock::Smoothing {
                            widths: sm.widths.clone(),
                        },
                        vars,
                        &z,
                        &z,
                    )?;
                }
                nlp.add_objective(
                    FesdBlock::LambdaSum {
                        weight: sm.lambda_weight,
                    },
                    lams,
                )?;
            }
            if o.discretization.alpha_bias > 0.0 && !st {
                for j in 0..ns {
                    nlp.add_objective(
                        FesdBlock::Linear {
                            weight: o.discretization.alpha_bias,
                        },
                        vec![e.alpha[j]],
                    )?;
                }
            }
            if o.discretization.fesd && o.discretization.rho_h > 0.0 {
                nlp.add_objective(
                    FesdBlock::StepEq {
                        hbar,
                        rho: o.discretization.rho_h,
                    },
                    vec![h],
                )?;
            }
            y_prev = e.y_end;
            lp_prev = e.lp[e.lp.len() - 1];
            ln_prev = e.ln[e.ln.len() - 1];
            layout.elems.push(e);
        }
        if o.discretization.fesd {
            nlp.add_constraint(FesdBlock::SumH, hs, &[hz.step_len], &[hz.step_len])?;
        }
        if o.discretization.rho_sot > 0.0 && hz.s_bounds.0 < hz.s_bounds.1 && new_speed {
            nlp.add_objective(
                FesdBlock::SpeedOfTime {
                    rho: o.discretization.rho_sot,
                },
                vec![s],
            )?;
        }
        if k == hz.n_steps - 1 && soft_terminal {
            let (idx, target): (Vec<usize>, Vec<f64>) = hz
                .terminal
                .iter()
                .filter(|(i, _)| *i < ny)
                .map(|(i, v)| (y_prev + i, *v))
                .unzip();
            layout.terminal = idx.iter().copied().zip(target.iter().copied()).collect();
            nlp.add_objective(
                FesdBlock::Terminal {
                    target,
                    weight: o.mpcc.soft_terminal / o.mpcc.sigma0,
                },
                idx,
            )?;
        }
        // running tracking cost at the interval's end (y_prev: its last point)
        for tr in hz
            .tracking
            .iter()
            .filter(|t| t.weight > 0.0 && t.index < ny)
        {
            nlp.add_objective(
                FesdBlock::Terminal {
                    target: vec![tr.target],
                    weight: tr.weight * nominal_interval,
                },
                vec![y_prev + tr.index],
            )?;
        }
        if hz.control_weight > 0.0 {
            let mut vars: Vec<usize> = (0..nu).map(|i| u + i).collect();
            let per_clock = !matches!(hz.clock, Clock::Stagewise(_));
            if per_clock {
                vars.extend([y_interval_start + ny - 1, y_prev + ny - 1]);
            }
            nlp.add_objective(
                FesdBlock::ControlCost {
                    weight: hz.control_weight,
                    per_clock,
                },
                vars,
            )?;
        }
    }
    Ok((nlp, layout, x0))
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
