//! Time series of a model's coordinates, velocities and actuator efforts, drawn as panels a
//! person can read: one quantity (and so one unit) a panel — positions in m, angles in rad,
//! quaternion parts without unit, linear velocities in m/s, angular velocities in rad/s,
//! forces in N, torques in N·m — every series named after its coordinate
//! ([`Model::q_names`], [`Model::v_names`]) or actuator, at most [`MAX_SERIES_PER_PANEL`]
//! series a panel (each its own colour), a joint's coordinates kept in one panel.
//!
//! Shared by `nonsmooth simulate` (`trajectory.svg`), `nonsmooth ocp` (`trajectory.svg`,
//! `controls.svg`) and `nonsmooth walk` (`torques.svg`).

use nonsmooth_core::{CoordinateKind, JointKind, Model};
use nonsmooth_report::plot::PALETTE_SIZE;
use nonsmooth_report::{Figure, LegendPlacement, PanelFigure, Series};
use std::ops::Index;

/// Most series in one panel: the palette's size, so that no two series of a panel share a
/// colour and the legend beside the panel stays short.
pub const MAX_SERIES_PER_PANEL: usize = PALETTE_SIZE;

/// Most panels in one column of a picture; the signals beyond them are left out and the
/// picture's title says how many are shown (the CSV files have them all).
pub const MAX_PANELS_PER_COLUMN: usize = 12;

/// What a signal measures: a name and its unit (`""`: none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quantity {
    /// What it is, e.g. `angle`.
    pub name: &'static str,
    /// Its unit, e.g. `rad`; empty for a unitless quantity.
    pub unit: &'static str,
}

impl Quantity {
    /// A force (N).
    pub const FORCE: Quantity = Quantity {
        name: "force",
        unit: "N",
    };
    /// A torque (N·m).
    pub const TORQUE: Quantity = Quantity {
        name: "torque",
        unit: "N·m",
    };

    /// The y-axis label: `angle [rad]`, or `quaternion part (no unit)`.
    pub fn axis_label(&self) -> String {
        if self.unit.is_empty() {
            format!("{} (no unit)", self.name)
        } else {
            format!("{} [{}]", self.name, self.unit)
        }
    }
}

impl From<CoordinateKind> for Quantity {
    fn from(kind: CoordinateKind) -> Self {
        Quantity {
            name: kind.label(),
            unit: kind.unit(),
        }
    }
}

/// One plotted signal over time.
#[derive(Debug, Clone, PartialEq)]
pub struct Signal {
    /// Legend entry (a coordinate's or an actuator's name).
    pub name: String,
    /// What it belongs to (its joint): a group's signals share a panel where they fit.
    pub group: String,
    /// What it measures.
    pub quantity: Quantity,
    /// (t, value) points.
    pub points: Vec<(f64, f64)>,
}

/// Panels of signals and how many of the signals they show.
#[derive(Debug, Clone, PartialEq)]
pub struct Panels {
    /// The panels, each of one quantity.
    pub figures: Vec<Figure>,
    /// Signals drawn.
    pub shown: usize,
    /// Signals given.
    pub total: usize,
}

/// The signals of a model's configuration coordinates `q` (one per entry of
/// [`Model::q_names`], grouped by joint), sampled at times `t` from `rows` (`rows[i][k]`:
/// coordinate k at `t[i]`; extra entries of a row, e.g. velocities after the coordinates,
/// are not read).
pub fn q_signals<R: Index<usize, Output = f64>>(
    model: &Model,
    t: &[f64],
    rows: &[R],
) -> Vec<Signal> {
    let names = model.q_names();
    let kinds = model.q_kinds();
    let groups = model
        .joints
        .iter()
        .flat_map(|j| std::iter::repeat_n(j.name.as_str(), j.kind.nq()));
    coordinate_signals(&names, &kinds, groups, 0, t, rows)
}

/// The signals of a model's velocity coordinates `v` (one per entry of
/// [`Model::v_names`], grouped by joint), read from `rows` from entry `offset` on (0 for a
/// velocity row, `nq` for a row `(q, v)`).
pub fn v_signals<R: Index<usize, Output = f64>>(
    model: &Model,
    t: &[f64],
    rows: &[R],
    offset: usize,
) -> Vec<Signal> {
    let names = model.v_names();
    let kinds = model.v_kinds();
    let groups = model
        .joints
        .iter()
        .flat_map(|j| std::iter::repeat_n(j.name.as_str(), j.kind.nv()));
    coordinate_signals(&names, &kinds, groups, offset, t, rows)
}

fn coordinate_signals<'a, R: Index<usize, Output = f64>>(
    names: &[String],
    kinds: &[CoordinateKind],
    groups: impl Iterator<Item = &'a str>,
    offset: usize,
    t: &[f64],
    rows: &[R],
) -> Vec<Signal> {
    names
        .iter()
        .zip(kinds)
        .zip(groups)
        .enumerate()
        .map(|(k, ((name, kind), group))| Signal {
            name: name.clone(),
            group: group.to_string(),
            quantity: (*kind).into(),
            points: t
                .iter()
                .zip(rows)
                .map(|(t, row)| (*t, row[offset + k]))
                .collect(),
        })
        .collect()
}

/// What actuator `a` of `model` applies: a torque on a revolute joint, a ball joint or the
/// rotational coordinates of a floating or planar joint, a force otherwise.
pub fn actuator_quantity(model: &Model, a: usize) -> Quantity {
    let Some(act) = model.actuators.get(a) else {
        return Quantity::TORQUE;
    };
    let Some(joint) = model.joints.get(act.joint) else {
        return Quantity::TORQUE;
    };
    match joint.kind.v_kinds().get(act.dof) {
        Some(CoordinateKind::LinearVelocity) => Quantity::FORCE,
        _ if joint.kind == JointKind::Prismatic => Quantity::FORCE,
        _ => Quantity::TORQUE,
    }
}

/// The signals of the model's actuators (named after them, grouped by their joint), read from
/// `rows` (`rows[i][a]`: actuator a at `t[i]`); a row shorter than the model's actuators
/// gives the signals it has, named `u<index>` beyond the model's actuators.
pub fn actuator_signals<R: Index<usize, Output = f64>>(
    model: &Model,
    t: &[f64],
    rows: &[R],
    count: usize,
) -> Vec<Signal> {
    (0..count)
        .map(|a| {
            let act = model.actuators.get(a);
            Signal {
                name: act.map_or_else(|| format!("u{a}"), |x| x.name.clone()),
                group: act
                    .and_then(|x| model.joints.get(x.joint))
                    .map_or_else(|| format!("u{a}"), |j| j.name.clone()),
                quantity: actuator_quantity(model, a),
                points: t.iter().zip(rows).map(|(t, row)| (*t, row[a])).collect(),
            }
        })
        .collect()
}

/// Splits `signals` into panels: one quantity a panel (quantities in the order they first
/// appear), each quantity's signals in as few panels of at most [`MAX_SERIES_PER_PANEL`] as
/// hold them, balanced, a group's signals together unless the group alone is too many; at most
/// `max_panels` panels (the signals of the panels beyond are left out: see
/// [`Panels::shown`]). Each panel's title names the quantity and its groups, its y axis the
/// unit, its legend sits beside it.
pub fn panels(signals: Vec<Signal>, x_label: &str, max_panels: usize) -> Panels {
    let total = signals.len();
    let mut quantities: Vec<Quantity> = Vec::new();
    for s in &signals {
        if !quantities.contains(&s.quantity) {
            quantities.push(s.quantity);
        }
    }
    let mut figures = Vec::new();
    let mut shown = 0;
    for q in quantities {
        let of_q: Vec<&Signal> = signals.iter().filter(|s| s.quantity == q).collect();
        for chunk in chunks(&of_q) {
            if figures.len() >= max_panels {
                break;
            }
            shown += chunk.len();
            figures.push(panel(q, &chunk, x_label));
        }
    }
    Panels {
        figures,
        shown,
        total,
    }
}

/// Signals of one quantity in panels: runs of a group packed greedily up to a balanced
/// target size (⌈n / ⌈n / MAX⌉⌉), a run larger than a panel split.
fn chunks<'a>(signals: &[&'a Signal]) -> Vec<Vec<&'a Signal>> {
    let n = signals.len();
    if n == 0 {
        return Vec::new();
    }
    let panels = n.div_ceil(MAX_SERIES_PER_PANEL);
    let target = n.div_ceil(panels);
    let mut runs: Vec<Vec<&Signal>> = Vec::new();
    for s in signals {
        match runs.last_mut() {
            Some(run) if run[0].group == s.group && run.len() < MAX_SERIES_PER_PANEL => run.push(s),
            _ => runs.push(vec![s]),
        }
    }
    let mut out: Vec<Vec<&Signal>> = Vec::new();
    for run in runs {
        match out.last_mut() {
            Some(current) if current.len() + run.len() <= target => current.extend(run),
            _ => out.push(run),
        }
    }
    out
}

/// One panel of `signals` (all of quantity `q`).
fn panel(q: Quantity, signals: &[&Signal], x_label: &str) -> Figure {
    let mut groups: Vec<&str> = Vec::new();
    for s in signals {
        if !groups.contains(&s.group.as_str()) {
            groups.push(&s.group);
        }
    }
    let named = match groups.as_slice() {
        [] => String::new(),
        [a] => (*a).to_string(),
        [a, b] => format!("{a}, {b}"),
        [a, b, c] => format!("{a}, {b}, {c}"),
        [a, .., z] => format!("{a} … {z} ({} joints)", groups.len()),
    };
    let title = if named.is_empty() {
        q.name.to_string()
    } else {
        format!("{}: {named}", q.name)
    };
    let mut fig = Figure::new(title, x_label, q.axis_label());
    fig.legend = LegendPlacement::Right;
    fig.series = signals
        .iter()
        .map(|s| Series::line(s.name.clone(), s.points.clone()))
        .collect();
    fig
}

/// `title`, with the note `(first N of M …)` when panels left signals out.
fn noted(title: String, columns: &[(&Panels, &str)]) -> String {
    let notes: Vec<String> = columns
        .iter()
        .filter(|(p, _)| p.shown < p.total)
        .map(|(p, what)| format!("first {} of {} {what}", p.shown, p.total))
        .collect();
    if notes.is_empty() {
        title
    } else {
        format!("{title} ({}; the CSV has all)", notes.join(", "))
    }
}

/// The picture of a model's motion: a column of coordinate panels (positions, angles,
/// quaternion parts) and a column of velocity panels (linear, angular), from the recorded
/// times `t` and states (`q[i]`, `v[i]` at `t[i]`). A model without coordinates gets one
/// panel saying so.
pub fn trajectory_figure<Q, V>(
    model: &Model,
    title: impl Into<String>,
    t: &[f64],
    q: &[Q],
    v: &[V],
) -> PanelFigure
where
    Q: Index<usize, Output = f64>,
    V: Index<usize, Output = f64>,
{
    let qp = panels(q_signals(model, t, q), "t [s]", MAX_PANELS_PER_COLUMN);
    let vp = panels(v_signals(model, t, v, 0), "t [s]", MAX_PANELS_PER_COLUMN);
    let title = noted(title.into(), &[(&qp, "coordinates"), (&vp, "velocities")]);
    let mut fig = PanelFigure::new(title);
    if qp.figures.is_empty() && vp.figures.is_empty() {
        let mut empty = Figure::new("no coordinates (every joint is fixed)", "t [s]", "");
        empty.series.push(Series::line(
            "(no coordinates)",
            t.iter().map(|t| (*t, 0.0)).collect(),
        ));
        return fig.with_column(vec![empty]);
    }
    fig = fig.with_column(qp.figures);
    if !vp.figures.is_empty() {
        fig = fig.with_column(vp.figures);
    }
    fig
}

/// The picture of actuator efforts over time: panels of forces (N) and torques (N·m) named
/// after the model's actuators (`rows[i][a]`: actuator a at `t[i]`, `count` actuators).
pub fn actuator_figure<R: Index<usize, Output = f64>>(
    model: &Model,
    title: impl Into<String>,
    t: &[f64],
    rows: &[R],
    count: usize,
) -> PanelFigure {
    let p = panels(
        actuator_signals(model, t, rows, count),
        "t [s]",
        MAX_PANELS_PER_COLUMN,
    );
    let title = noted(title.into(), &[(&p, "actuators")]);
    PanelFigure::new(title).with_column(p.figures)
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{DVector, Matrix3};
    use nonsmooth_core::{Actuator, ActuatorKind, Body, Dimension, Joint};

    /// `n` floating boxes, each with a revolute arm driven by an actuator.
    fn boxes_with_arms(n: usize) -> Model {
        let mut m = Model::new("boxes", Dimension::Spatial);
        let eye = Matrix3::identity();
        for i in 0..n {
            let b = m
                .add_body(
                    Body::new(format!("box{i}"), 1.0, eye),
                    Joint::new(format!("box{i}"), JointKind::Floating, None),
                )
                .unwrap();
            m.add_body(
                Body::new(format!("arm{i}"), 1.0, eye),
                Joint::new(format!("elbow{i}"), JointKind::Revolute, Some(b)),
            )
            .unwrap();
            m.actuators.push(Actuator {
                name: format!("elbow{i}_motor"),
                joint: 2 * i + 1,
                dof: 0,
                gear: 1.0,
                effort_limit: None,
                kind: ActuatorKind::Motor,
            });
        }
        m
    }

    fn titles(p: &Panels) -> Vec<(String, String, usize)> {
        p.figures
            .iter()
            .map(|f| (f.title.clone(), f.y_label.clone(), f.series.len()))
            .collect()
    }

    #[test]
    fn a_floating_joint_gives_a_position_and_a_quaternion_panel_with_units() {
        let m = boxes_with_arms(1);
        let t = [0.0, 0.1];
        let q = vec![m.initial_state.q.clone(); 2];
        let p = panels(q_signals(&m, &t, &q), "t [s]", 12);
        assert_eq!(
            titles(&p),
            vec![
                ("position: box0".into(), "position [m]".into(), 3),
                (
                    "quaternion part: box0".into(),
                    "quaternion part (no unit)".into(),
                    4
                ),
                ("angle: elbow0".into(), "angle [rad]".into(), 1),
            ]
        );
        let names: Vec<&str> = p.figures[1]
            .series
            .iter()
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(names, ["box0.qw", "box0.qx", "box0.qy", "box0.qz"]);
        // the identity quaternion's w part is 1 at every sample
        assert!(p.figures[1].series[0].points.iter().all(|p| p.1 == 1.0));
        let v = vec![m.initial_state.v.clone(); 2];
        let p = panels(v_signals(&m, &t, &v, 0), "t [s]", 12);
        assert_eq!(
            titles(&p),
            vec![
                (
                    "linear velocity: box0".into(),
                    "linear velocity [m/s]".into(),
                    3
                ),
                (
                    "angular velocity: box0, elbow0".into(),
                    "angular velocity [rad/s]".into(),
                    4
                ),
            ]
        );
        assert_eq!(p.shown, p.total);
    }

    #[test]
    fn many_coordinates_fill_balanced_panels_of_at_most_ten_keeping_joints_whole() {
        // six floating boxes (the box pyramid): 18 positions, 24 quaternion parts, 6 angles
        let m = boxes_with_arms(6);
        let t = [0.0];
        let q = vec![m.initial_state.q.clone()];
        let p = panels(q_signals(&m, &t, &q), "t [s]", 12);
        let sizes: Vec<usize> = p.figures.iter().map(|f| f.series.len()).collect();
        assert_eq!(sizes, [9, 9, 8, 8, 8, 6]);
        for f in &p.figures {
            assert!(f.series.len() <= MAX_SERIES_PER_PANEL);
            assert_eq!(f.legend, LegendPlacement::Right);
        }
        // a joint's quaternion never straddles two panels
        for f in &p.figures[2..5] {
            let joints: Vec<&str> = f
                .series
                .iter()
                .map(|s| s.name.split('.').next().unwrap())
                .collect();
            for pair in joints.chunks(4) {
                assert!(pair.iter().all(|j| *j == pair[0]), "{joints:?}");
            }
        }
        assert_eq!(p.figures[0].title, "position: box0, box1, box2");
        assert_eq!(p.figures[5].title, "angle: elbow0 … elbow5 (6 joints)");
        // with room for three panels, the rest is left out and counted
        let few = panels(q_signals(&m, &t, &q), "t [s]", 3);
        assert_eq!((few.shown, few.total), (9 + 9 + 8, 48));
        let v = std::slice::from_ref(&m.initial_state.v);
        let fig = trajectory_figure(&m, "pyramid", &t, &q, v);
        assert_eq!(fig.columns.len(), 2);
        assert_eq!(fig.title, "pyramid");
    }

    #[test]
    fn actuator_panels_name_the_actuators_and_their_units() {
        let mut m = boxes_with_arms(12);
        m.add_body(
            Body::new("slider", 1.0, Matrix3::identity()),
            Joint::new("rail", JointKind::Prismatic, None),
        )
        .unwrap();
        m.actuators.push(Actuator {
            name: "rail_motor".into(),
            joint: m.joints.len() - 1,
            dof: 0,
            gear: 1.0,
            effort_limit: None,
            kind: ActuatorKind::Motor,
        });
        let t = [0.0, 1.0];
        let u = vec![DVector::from_element(m.nu(), -0.0); 2];
        let fig = actuator_figure(&m, "torques", &t, &u, m.nu());
        let panels = &fig.columns[0];
        let sizes: Vec<(usize, &str)> = panels
            .iter()
            .map(|f| (f.series.len(), f.y_label.as_str()))
            .collect();
        assert_eq!(
            sizes,
            [(6, "torque [N·m]"), (6, "torque [N·m]"), (1, "force [N]")]
        );
        assert_eq!(panels[0].series[0].name, "elbow0_motor");
        assert_eq!(panels[2].series[0].name, "rail_motor");
    }
}
