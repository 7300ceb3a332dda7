//! Line and scatter plots written as SVG through `plotters`.

use crate::ReportError;
use plotters::prelude::*;
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
}

const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

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
            let span = (b - a).abs().max(1e-12 * a.abs().max(1.0));
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
        let err = |e: &dyn std::fmt::Display| ReportError::Plot {
            title: self.title.clone(),
            message: e.to_string(),
        };
        let ((x0, x1), (y0, y1)) = self.bounds().ok_or_else(|| ReportError::Plot {
            title: self.title.clone(),
            message: "no finite data to plot".into(),
        })?;
        let root = SVGBackend::new(path, self.size).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let mut builder = ChartBuilder::on(&root);
        builder
            .caption(&self.title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70);
        if self.log_y {
            let mut chart = builder
                .build_cartesian_2d(x0..x1, (y0..y1).log_scale())
                .map_err(|e| err(&e))?;
            chart
                .configure_mesh()
                .x_desc(&self.x_label)
                .y_desc(&self.y_label)
                .draw()
                .map_err(|e| err(&e))?;
            for (i, s) in self.series.iter().enumerate() {
                let pts: Vec<(f64, f64)> = s.points.iter().copied().filter(|p| p.1 > 0.0).collect();
                draw_series(&mut chart, s, pts, PALETTE[i % PALETTE.len()]).map_err(|e| err(&e))?;
            }
            draw_legend(&mut chart).map_err(|e| err(&e))?;
        } else {
            let mut chart = builder
                .build_cartesian_2d(x0..x1, y0..y1)
                .map_err(|e| err(&e))?;
            chart
                .configure_mesh()
                .x_desc(&self.x_label)
                .y_desc(&self.y_label)
                .draw()
                .map_err(|e| err(&e))?;
            for (i, s) in self.series.iter().enumerate() {
                let pts: Vec<(f64, f64)> = s
                    .points
                    .iter()
                    .copied()
                    .filter(|p| p.0.is_finite() && p.1.is_finite())
                    .collect();
                draw_series(&mut chart, s, pts, PALETTE[i % PALETTE.len()]).map_err(|e| err(&e))?;
            }
            draw_legend(&mut chart).map_err(|e| err(&e))?;
        }
        root.present().map_err(|e| err(&e))
    }
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
}
