//! Line and scatter plots written as SVG through `plotters`: one plot ([`Figure`]) or a grid
//! of them in one picture ([`PanelFigure`]). Tick labels never read `-0` ([`tick_label`]);
//! series within a plot take distinct colours from a palette of [`PALETTE_SIZE`].

use crate::ReportError;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeriesStyle {
    /// A polyline through the points in order.
    Line,
    /// One small circle per point.
    Points,
}

/// One named data series.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend entry.
    pub name: String,
    /// Data points (x, y).
    pub points: Vec<(f64, f64)>,
    /// Line or scatter.
    pub style: SeriesStyle,
}

impl Series {
    /// A line series.
    pub fn line(name: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Series {
            name: name.into(),
            points,
            style: SeriesStyle::Line,
        }
    }

    /// A scatter series.
    pub fn scatter(name: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Series {
            name: name.into(),
            points,
            style: SeriesStyle::Points,
        }
    }
}

/// A 2-D plot with axes, labels and a legend.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// Title drawn above the plot.
    pub title: String,
    /// Label of the x axis.
    pub x_label: String,
    /// Label of the y axis.
    pub y_label: String,
    /// The data series, drawn in order.
    pub series: Vec<Series>,
    /// Plot |y| on a logarithmic axis (non-positive values are dropped).
    pub log_y: bool,
    /// Pixel size (width, height).
    pub size: (u32, u32),
    /// Where the legend goes.
    pub legend: LegendPlacement,
}

/// Where a figure's legend is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LegendPlacement {
    /// In a box in the plot's upper right corner (over the data).
    #[default]
    UpperRight,
    /// In a column right of the plot, one entry a line, never over the data; entries that
    /// do not fit end in a line saying how many more there are.
    Right,
}

/// Number of distinct series colours: series `i` and `i + PALETTE_SIZE` of one plot share a
/// colour, so a plot meant to be read series by series has at most this many.
pub const PALETTE_SIZE: usize = 10;

/// The ten colours of Matplotlib's `tab10` cycle (Vega's category10).
const PALETTE: [RGBColor; PALETTE_SIZE] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// Largest number of tick labels on an axis of a [`Figure`].
const X_TICKS: usize = 10;
/// Largest number of tick labels on the y axis of a [`Figure`].
const Y_TICKS: usize = 8;

/// The label of the tick at `value` on an axis spanning `span` with at most `ticks` labels:
/// as many decimals as the tick spacing needs (the spacing is at least `span / ticks`),
/// trailing zeros dropped, scientific notation where the numbers are very large or very
/// small, and a value that rounds to zero printed `0` (never `-0`).
pub fn tick_label(value: f64, span: f64, ticks: usize) -> String {
    if !value.is_finite() {
        return format!("{value}");
    }
    let step = (span.abs() / ticks.max(1) as f64).max(f64::MIN_POSITIVE);
    if value.abs() < 1e-6 * step {
        // round-off beside a tick at zero
        return "0".to_string();
    }
    let magnitude = value.abs().max(span.abs());
    let text = if !(1e-4..1e6).contains(&magnitude) {
        // one significant digit more than the step has, relative to the value's size
        let digits = if value == 0.0 {
            0
        } else {
            ((value.abs().log10() - step.log10()).ceil().max(0.0) as usize + 1).min(12)
        };
        let text = format!("{value:.digits$e}");
        match text.split_once('e') {
            Some((mantissa, exponent)) => {
                let mantissa = trim_zeros(mantissa);
                if mantissa == "0" || mantissa == "-0" {
                    "0".to_string()
                } else {
                    format!("{mantissa}e{exponent}")
                }
            }
            None => text,
        }
    } else {
        let decimals = ((-step.log10()).ceil().max(0.0) as usize + 1).min(12);
        trim_zeros(&format!("{value:.decimals$}"))
    };
    if text == "-0" {
        "0".to_string()
    } else {
        text
    }
}

/// A decimal number's text without the zeros that end its fraction (and without the point
/// when nothing is left after it).
fn trim_zeros(text: &str) -> String {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text.to_string()
    }
}

impl Figure {
    /// An empty figure of 800 × 500 pixels.
    pub fn new(
        title: impl Into<String>,
        x_label: impl Into<String>,
        y_label: impl Into<String>,
    ) -> Self {
        Figure {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            series: Vec::new(),
            log_y: false,
            size: (800, 500),
            legend: LegendPlacement::UpperRight,
        }
    }

    /// Adds a series (builder style).
    pub fn with(mut self, series: Series) -> Self {
        self.series.push(series);
        self
    }

    /// Data bounds over all finite points, padded by 5 %, never degenerate.
    fn bounds(&self) -> Option<((f64, f64), (f64, f64))> {
        let pts = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().copied())
            .filter(|(x, y)| x.is_finite() && y.is_finite() && (!self.log_y || *y > 0.0));
        let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
        let mut any = false;
        for (x, y) in pts {
            any = true;
            x0 = x0.min(x);
            x1 = x1.max(x);
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
        if !any {
            return None;
        }
        let pad = |a: f64, b: f64| {
            let size = a.abs().max(b.abs()).max(1.0);
            if (b - a).abs() <= 1e-12 * size {
                // a constant (to round-off): drawn mid-axis on an axis 10 % of its size (of
                // 1 near zero) wide, not on an axis of round-off
                let (c, half) = (0.5 * (a + b), 0.05 * size);
                return (c - half, c + half);
            }
            let span = b - a;
            (a - 0.05 * span, b + 0.05 * span)
        };
        let y = if self.log_y {
            (y0 / 1.5, y1 * 1.5)
        } else {
            pad(y0, y1)
        };
        Some((pad(x0, x1), y))
    }

    /// Writes the figure as an SVG file. A figure without finite data is an error.
    pub fn write_svg(&self, path: &Path) -> Result<(), ReportError> {
        if self.bounds().is_none() {
            return Err(ReportError::Plot {
                title: self.title.clone(),
                message: "no finite data to plot".into(),
            });
        }
        let root = SVGBackend::new(path, self.size).into_drawing_area();
        let drawn = root
            .fill(&WHITE)
            .map_err(|e| e.to_string())
            .and_then(|()| self.draw_on(&root, 20))
            .and_then(|()| root.present().map_err(|e| e.to_string()));
        drawn.map_err(|message| ReportError::Plot {
            title: self.title.clone(),
            message,
        })
    }

    /// Draws the figure on `area` with its title in `caption_size` pixels; without finite data
    /// the area says so.
    fn draw_on<DB>(&self, area: &DrawingArea<DB, Shift>, caption_size: u32) -> Result<(), String>
    where
        DB: DrawingBackend,
        DB::ErrorType: 'static,
    {
        let Some(((x0, x1), (y0, y1))) = self.bounds() else {
            let (w, h) = area.dim_in_pixel();
            let style = ("sans-serif", 14)
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Center, VPos::Center));
            return area
                .draw(&Text::new(
                    format!("{}: no finite data", self.title),
                    (w as i32 / 2, h as i32 / 2),
                    style,
                ))
                .map_err(|e| e.to_string());
        };
        let legend_width = match self.legend {
            LegendPlacement::UpperRight => 0,
            LegendPlacement::Right => legend_column_width(&self.series),
        };
        let (width, _) = area.dim_in_pixel();
        let (plot, legend) = area.split_horizontally(width.saturating_sub(legend_width));
        let mut builder = ChartBuilder::on(&plot);
        builder
            .caption(&self.title, ("sans-serif", caption_size))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70);
        let x_tick = |x: &f64| tick_label(*x, x1 - x0, X_TICKS);
        let y_tick = |y: &f64| tick_label(*y, y1 - y0, Y_TICKS);
        if self.log_y {
            let mut chart = builder
                .build_cartesian_2d(x0..x1, (y0..y1).log_scale())
                .map_err(|e| e.to_string())?;
            chart
                .configure_mesh()
                .x_labels(X_TICKS)
                .x_label_formatter(&x_tick)
                .x_desc(&self.x_label)
                .y_desc(&self.y_label)
                .draw()
                .map_err(|e| e.to_string())?;
            for (i, s) in self.series.iter().enumerate() {
                let pts: Vec<(f64, f64)> = s.points.iter().copied().filter(|p| p.1 > 0.0).collect();
                draw_series(&mut chart, s, pts, colour(i)).map_err(|e| e.to_string())?;
            }
            if self.legend == LegendPlacement::UpperRight {
                draw_legend(&mut chart).map_err(|e| e.to_string())?;
            }
        } else {
            let mut chart = builder
                .build_cartesian_2d(x0..x1, y0..y1)
                .map_err(|e| e.to_string())?;
            chart
                .configure_mesh()
                .x_labels(X_TICKS)
                .y_labels(Y_TICKS)
                .x_label_formatter(&x_tick)
                .y_label_formatter(&y_tick)
                .x_desc(&self.x_label)
                .y_desc(&self.y_label)
                .draw()
                .map_err(|e| e.to_string())?;
            for (i, s) in self.series.iter().enumerate() {
                let pts: Vec<(f64, f64)> = s
                    .points
                    .iter()
                    .copied()
                    .filter(|p| p.0.is_finite() && p.1.is_finite())
                    .collect();
                draw_series(&mut chart, s, pts, colour(i)).map_err(|e| e.to_string())?;
            }
            if self.legend == LegendPlacement::UpperRight {
                draw_legend(&mut chart).map_err(|e| e.to_string())?;
            }
        }
        if self.legend == LegendPlacement::Right {
            draw_legend_column(&legend, &self.series, caption_size as i32 + 24)?;
        }
        Ok(())
    }
}

/// Several figures in one picture: `columns[c][r]` is the panel in column `c`, row `r`
/// (columns may differ in length; every panel has the same size), under one title.
#[derive(Debug, Clone, PartialEq)]
pub struct PanelFigure {
    /// Title drawn above the panels.
    pub title: String,
    /// The panels, column by column, each drawn with its own title, axes and legend.
    pub columns: Vec<Vec<Figure>>,
    /// Pixel size of one panel (width, height).
    pub panel_size: (u32, u32),
}

impl PanelFigure {
    /// A picture without panels whose panels are 640 × 260 pixels.
    pub fn new(title: impl Into<String>) -> Self {
        PanelFigure {
            title: title.into(),
            columns: Vec::new(),
            panel_size: (640, 260),
        }
    }

    /// Adds a column of panels (builder style).
    pub fn with_column(mut self, panels: Vec<Figure>) -> Self {
        self.columns.push(panels);
        self
    }

    /// Every panel, column by column.
    pub fn panels(&self) -> impl Iterator<Item = &Figure> {
        self.columns.iter().flatten()
    }

    /// Writes the picture as an SVG file. A picture none of whose panels has finite data is
    /// an error; a panel without finite data says so in its place.
    pub fn write_svg(&self, path: &Path) -> Result<(), ReportError> {
        if self.panels().all(|p| p.bounds().is_none()) {
            return Err(ReportError::Plot {
                title: self.title.clone(),
                message: "no finite data to plot".into(),
            });
        }
        let columns: Vec<&Vec<Figure>> = self.columns.iter().filter(|c| !c.is_empty()).collect();
        let rows = columns.iter().map(|c| c.len()).max().unwrap_or(1);
        let (w, h) = self.panel_size;
        let title_height = 44;
        let size = (w * columns.len() as u32, title_height + h * rows as u32);
        let root = SVGBackend::new(path, size).into_drawing_area();
        let drawn = (|| -> Result<(), String> {
            root.fill(&WHITE).map_err(|e| e.to_string())?;
            let (title, body) = root.split_vertically(title_height);
            let style = ("sans-serif", 22)
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Center, VPos::Center));
            title
                .draw(&Text::new(
                    self.title.clone(),
                    (size.0 as i32 / 2, title_height as i32 / 2),
                    style,
                ))
                .map_err(|e| e.to_string())?;
            let cells = body.split_evenly((rows, columns.len()));
            for (c, column) in columns.iter().enumerate() {
                for (r, panel) in column.iter().enumerate() {
                    if let Some(cell) = cells.get(r * columns.len() + c) {
                        panel.draw_on(cell, 16)?;
                    }
                }
            }
            root.present().map_err(|e| e.to_string())
        })();
        drawn.map_err(|message| ReportError::Plot {
            title: self.title.clone(),
            message,
        })
    }
}

/// The colour of series `i` of a plot.
fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE_SIZE]
}

type PlotResult = Result<(), Box<dyn std::error::Error>>;

fn draw_series<'a, DB, X, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    series: &Series,
    points: Vec<(f64, f64)>,
    color: RGBColor,
) -> PlotResult
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let name = series.name.clone();
    match series.style {
        SeriesStyle::Line => chart
            .draw_series(LineSeries::new(points, color.stroke_width(2)))?
            .label(name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color)),
        SeriesStyle::Points => chart
            .draw_series(
                points
                    .into_iter()
                    .map(move |p| Circle::new(p, 2, color.filled())),
            )?
            .label(name)
            .legend(move |(x, y)| Circle::new((x + 10, y), 3, color.filled())),
    };
    Ok(())
}

fn draw_legend<'a, DB, X, Y>(chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>) -> PlotResult
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()?;
    Ok(())
}

/// Longest legend entry drawn in full (characters); longer names keep their end.
const LEGEND_CHARS: usize = 28;
/// Height of one legend line (px).
const LEGEND_LINE: i32 = 17;

/// A series name as its legend line shows it: at most [`LEGEND_CHARS`] characters, a longer
/// name shortened at its start (the end, e.g. `knee.q`, tells series apart).
fn legend_text(name: &str) -> String {
    let n = name.chars().count();
    if n <= LEGEND_CHARS {
        name.to_string()
    } else {
        let tail: String = name.chars().skip(n + 1 - LEGEND_CHARS).collect();
        format!("…{tail}")
    }
}

/// Width of a legend column (px) that fits the series' names.
fn legend_column_width(series: &[Series]) -> u32 {
    let longest = series
        .iter()
        .map(|s| legend_text(&s.name).chars().count())
        .max()
        .unwrap_or(0) as u32;
    (36 + 7 * longest).clamp(80, 240)
}

/// The legend as a column of lines (a line or dot in the series' colour, then its name)
/// from `top` down; when the lines do not all fit, the last one says how many are left out.
fn draw_legend_column<DB>(
    area: &DrawingArea<DB, Shift>,
    series: &[Series],
    top: i32,
) -> Result<(), String>
where
    DB: DrawingBackend,
{
    let (_, height) = area.dim_in_pixel();
    let fit = ((height as i32 - top - 8) / LEGEND_LINE).max(1) as usize;
    let shown = if series.len() > fit {
        fit - 1
    } else {
        series.len()
    };
    let style = ("sans-serif", 13)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    for (i, s) in series.iter().take(shown).enumerate() {
        let y = top + i as i32 * LEGEND_LINE;
        let c = colour(i);
        match s.style {
            SeriesStyle::Line => {
                area.draw(&PathElement::new(vec![(4, y), (24, y)], c.stroke_width(2)))
            }
            SeriesStyle::Points => area.draw(&Circle::new((14, y), 3, c.filled())),
        }
        .map_err(|e| e.to_string())?;
        area.draw(&Text::new(legend_text(&s.name), (30, y), style.clone()))
            .map_err(|e| e.to_string())?;
    }
    if shown < series.len() {
        let y = top + shown as i32 * LEGEND_LINE;
        area.draw(&Text::new(
            format!("… {} more", series.len() - shown),
            (30, y),
            style,
        ))
        .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Points of a piecewise-constant signal (one value per interval between consecutive
/// `breaks`, e.g. the interval clock of an optimal-control solution) for a line plot: both ends of every interval.
pub fn staircase(breaks: &[f64], values: impl Iterator<Item = f64>) -> Vec<(f64, f64)> {
    values
        .zip(breaks.windows(2))
        .flat_map(|(v, t)| [(t[0], v), (t[1], v)])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_an_svg_with_title_and_one_path_per_line_series() {
        let dir = std::env::temp_dir().join(format!("nonsmooth-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f.svg");
        let fig = Figure::new("decay", "t [s]", "x [m]")
            .with(Series::line(
                "x",
                (0..50)
                    .map(|i| (i as f64, (-0.1 * i as f64).exp()))
                    .collect(),
            ))
            .with(Series::scatter("samples", vec![(1.0, 0.5), (2.0, 0.25)]));
        fig.write_svg(&path).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("decay"));
        assert!(svg.matches("<circle").count() >= 2);
        let empty = Figure::new("empty", "x", "y");
        assert!(empty.write_svg(&dir.join("e.svg")).is_err());
    }

    #[test]
    fn tick_labels_never_read_minus_zero_and_carry_the_spacing_s_decimals() {
        for span in [1e-9, 1e-5, 0.02, 1.0, 37.0, 1e4, 5e7] {
            for ticks in [4, 8, 10] {
                for value in [0.0, -0.0, -1e-300, -1e-7 * span / ticks as f64] {
                    let label = tick_label(value, span, ticks);
                    assert_eq!(label, "0", "value {value:e}, span {span:e}, {ticks} ticks");
                }
            }
        }
        assert_eq!(tick_label(0.5, 1.0, 10), "0.5");
        assert_eq!(tick_label(-0.25, 1.0, 10), "-0.25");
        assert_eq!(tick_label(0.30000000000000004, 1.0, 10), "0.3");
        assert_eq!(tick_label(2.0, 10.0, 10), "2");
        assert_eq!(tick_label(1500.0, 2000.0, 10), "1500");
        assert_eq!(tick_label(3e-5, 1e-4, 10), "0.00003");
        assert_eq!(tick_label(3e-5, 5e-5, 10), "3e-5");
        assert_eq!(tick_label(-1e-17, 1.0, 10), "0");
        assert_eq!(tick_label(2.5e7, 5e7, 10), "2.5e7");
        // every tick of a 1-2-5 spacing on a span of 0.9 keeps its value
        for k in -10..=10 {
            let v = 0.05 * k as f64;
            let label = tick_label(v, 0.9, 10);
            assert!(
                (label.parse::<f64>().unwrap() - v).abs() < 1e-12,
                "{v} → {label}"
            );
        }
    }

    #[test]
    fn a_constant_series_sits_mid_axis_not_on_an_axis_of_round_off() {
        let fig = |ys: &[f64]| {
            Figure::new("c", "t", "y").with(Series::line(
                "y",
                ys.iter().enumerate().map(|(i, y)| (i as f64, *y)).collect(),
            ))
        };
        let (_, (y0, y1)) = fig(&[0.0, 3e-14, -2e-14]).bounds().unwrap();
        assert!(
            (y0 + 0.05).abs() < 1e-12 && (y1 - 0.05).abs() < 1e-12,
            "{y0} {y1}"
        );
        let (_, (y0, y1)) = fig(&[20.0, 20.0]).bounds().unwrap();
        assert!(
            (y0 - 19.0).abs() < 1e-12 && (y1 - 21.0).abs() < 1e-12,
            "{y0} {y1}"
        );
        // a varying series keeps its 5 % margins
        let (_, (y0, y1)) = fig(&[1e-6, 2e-6]).bounds().unwrap();
        assert!(
            (y0 - 0.95e-6).abs() < 1e-18 && (y1 - 2.05e-6).abs() < 1e-18,
            "{y0} {y1}"
        );
    }

    #[test]
    fn legend_names_keep_their_end_and_the_palette_repeats_only_after_ten() {
        assert_eq!(legend_text("base.qw"), "base.qw");
        let long = "a_very_long_front_left_hip_abduction_joint.q";
        let shown = legend_text(long);
        assert_eq!(shown.chars().count(), LEGEND_CHARS);
        assert!(shown.starts_with('…') && shown.ends_with("abduction_joint.q"));
        let colours: Vec<RGBColor> = (0..PALETTE_SIZE).map(colour).collect();
        for i in 0..PALETTE_SIZE {
            for j in 0..i {
                assert_ne!(colours[i], colours[j], "series {i} and {j}");
            }
        }
    }

    #[test]
    fn panel_figure_draws_every_panel_and_its_legend_beside_it() {
        let dir = std::env::temp_dir().join(format!("nonsmooth-panels-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let line = |name: &str, k: f64| {
            Series::line(name, (0..20).map(|i| (i as f64, k * i as f64)).collect())
        };
        let mut left = Figure::new("position", "t [s]", "position [m]");
        left.legend = LegendPlacement::Right;
        left.series = vec![line("ball.x", 1.0), line("ball.y", -1.0)];
        let mut right = Figure::new("angular velocity", "t [s]", "ω [rad/s]");
        right.legend = LegendPlacement::Right;
        right.series = (0..12).map(|i| line(&format!("w{i}"), i as f64)).collect();
        let nan = Figure::new("empty panel", "t [s]", "x")
            .with(Series::line("nan", vec![(0.0, f64::NAN)]));
        let fig = PanelFigure::new("two columns")
            .with_column(vec![left, nan])
            .with_column(vec![right]);
        let path = dir.join("panels.svg");
        fig.write_svg(&path).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        for text in [
            "two columns",
            "ball.x",
            "ball.y",
            "w0",
            "w11",
            "no finite data",
        ] {
            assert!(svg.contains(text), "{text} missing");
        }
        assert!(!svg.contains(">-0<") && !svg.contains(">-0.0<"));
        let all_nan = PanelFigure::new("nothing").with_column(vec![
            Figure::new("p", "x", "y").with(Series::line("nan", vec![(0.0, f64::NAN)]))
        ]);
        assert!(all_nan.write_svg(&dir.join("nothing.svg")).is_err());
    }
}
