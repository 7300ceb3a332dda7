//! An offline trajectory viewer: one self-contained HTML page (a canvas and a small
//! embedded script, no network access) that plays the motion of a model's bodies.
//!
//! The page is written from plain data, independent of the model crate: a [`ViewerScene`]
//! holds the body names, their collider shapes ([`ViewerShape`]), the world pose of every
//! body at every recorded time and the time series offered in the plot beside the scene.
//! [`write_viewer_html`] checks that the lengths agree, thins long runs to at most
//! [`MAX_FRAMES`] frames and writes the page.
//!
//! Poses are `[x, y, z, qw, qx, qy, qz]`: a position and a unit quaternion (scalar first).
//! Planar scenes are drawn in the x–y plane; spatial scenes in the x–z plane (side view)
//! with a small x–y top view. The page exposes
//! `window.nonsmoothViewer = { setTime(t), bodyScreenPosition(i), data }` so that a headless
//! browser can scrub the time and read back where body `i` was drawn (canvas pixels).
//! Non-finite numbers are written as `null`; the page skips what it cannot place.

use crate::ReportError;
use serde::Serialize;
use std::path::Path;

/// Most frames written into a page; longer runs are thinned evenly (first and last kept).
pub const MAX_FRAMES: usize = 2000;

/// The page template; the scene's JSON replaces `__NONSMOOTH_DATA__` and the escaped title
/// replaces `__NONSMOOTH_TITLE__` (which comes before it).
const TEMPLATE: &str = include_str!("viewer.html");

/// What the viewer plays: bodies, their shapes, their poses over time and time series.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ViewerScene {
    /// Page title (e.g. the model's name and the stepper).
    pub title: String,
    /// Planar scene (drawn in the x–y plane) rather than spatial (x–z side view).
    pub planar: bool,
    /// Body names; `poses[k][i]` is the pose of `bodies[i]`.
    pub bodies: Vec<String>,
    /// Collider shapes, attached to a body or to the world.
    pub shapes: Vec<ViewerShape>,
    /// Recorded times in s, non-decreasing.
    pub times: Vec<f64>,
    /// `poses[k][i]`: world pose `[x, y, z, qw, qx, qy, qz]` of body `i` at `times[k]`.
    pub poses: Vec<Vec<[f64; 7]>>,
    /// Names of the time series (e.g. the trajectory's q coordinates).
    pub series_names: Vec<String>,
    /// `series[j][k]`: value of series `j` at `times[k]`.
    pub series: Vec<Vec<f64>>,
}

/// One collider shape of a [`ViewerScene`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ViewerShape {
    /// Name shown in the legend.
    pub name: String,
    /// Index into [`ViewerScene::bodies`]; `None` is the world.
    pub body: Option<usize>,
    /// Pose `[x, y, z, qw, qx, qy, qz]` of the shape in its body's frame (world if `body`
    /// is `None`).
    pub offset: [f64; 7],
    /// Geometry.
    pub kind: ViewerShapeKind,
}

/// Geometry of a [`ViewerShape`], in the shape's own frame.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ViewerShapeKind {
    /// Sphere (disk in planar scenes) centred at the shape origin.
    Sphere {
        /// Radius (m).
        radius: f64,
    },
    /// Box centred at the shape origin.
    Box {
        /// Half-extents along the shape's axes (m).
        half_extents: [f64; 3],
    },
    /// Plane through the shape origin with this outward normal (shape frame).
    Plane {
        /// Outward normal.
        normal: [f64; 3],
    },
    /// A single point at the shape origin.
    Point,
    /// Points in the shape frame.
    Points {
        /// The points (m).
        points: Vec<[f64; 3]>,
    },
    /// A thin line between two points of the shape frame with a dot at `b` (e.g. a link
    /// from a body's origin to a joint or to its centre of mass); not a collider.
    Segment {
        /// Start point (m).
        a: [f64; 3],
        /// End point (m), marked with a dot.
        b: [f64; 3],
    },
    /// A shape the viewer does not draw (e.g. a height map); named in the legend.
    Skipped {
        /// What it is.
        what: String,
    },
}

/// The identity pose `[0, 0, 0, 1, 0, 0, 0]`.
pub const IDENTITY_POSE: [f64; 7] = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0];

fn invalid(message: String) -> ReportError {
    ReportError::Invalid {
        what: "trajectory viewer scene".to_string(),
        message,
    }
}

impl ViewerScene {
    /// Checks that every length agrees: one pose per body per time, one value per time in
    /// every series, a name per series, shapes on existing bodies, times finite and
    /// non-decreasing, and at least one time.
    pub fn validate(&self) -> Result<(), ReportError> {
        if self.times.is_empty() {
            return Err(invalid("no recorded times".to_string()));
        }
        if self.poses.len() != self.times.len() {
            return Err(invalid(format!(
                "{} pose frames for {} times",
                self.poses.len(),
                self.times.len()
            )));
        }
        if let Some((k, frame)) = self
            .poses
            .iter()
            .enumerate()
            .find(|(_, f)| f.len() != self.bodies.len())
        {
            return Err(invalid(format!(
                "pose frame {k} has {} poses for {} bodies",
                frame.len(),
                self.bodies.len()
            )));
        }
        if let Some(k) = self.times.iter().position(|t| !t.is_finite()) {
            return Err(invalid(format!("time {k} is {}", self.times[k])));
        }
        if let Some(k) = self.times.windows(2).position(|w| w[1] < w[0]) {
            return Err(invalid(format!(
                "times decrease at {}: {} then {}",
                k + 1,
                self.times[k],
                self.times[k + 1]
            )));
        }
        if self.series_names.len() != self.series.len() {
            return Err(invalid(format!(
                "{} series names for {} series",
                self.series_names.len(),
                self.series.len()
            )));
        }
        if let Some((j, s)) = self
            .series
            .iter()
            .enumerate()
            .find(|(_, s)| s.len() != self.times.len())
        {
            return Err(invalid(format!(
                "series `{}` has {} values for {} times",
                self.series_names[j],
                s.len(),
                self.times.len()
            )));
        }
        if let Some(shape) = self
            .shapes
            .iter()
            .find(|s| s.body.is_some_and(|b| b >= self.bodies.len()))
        {
            return Err(invalid(format!(
                "shape `{}` is on body {} but there are {} bodies",
                shape.name,
                shape.body.unwrap_or_default(),
                self.bodies.len()
            )));
        }
        Ok(())
    }

    /// The scene thinned to at most `max_frames` evenly spread frames (first and last kept).
    pub fn downsampled(&self, max_frames: usize) -> ViewerScene {
        let n = self.times.len();
        let max_frames = max_frames.max(2);
        if n <= max_frames {
            return self.clone();
        }
        let picks: Vec<usize> = (0..max_frames)
            .map(|i| (i as f64 * (n - 1) as f64 / (max_frames - 1) as f64).round() as usize)
            .collect();
        ViewerScene {
            title: self.title.clone(),
            planar: self.planar,
            bodies: self.bodies.clone(),
            shapes: self.shapes.clone(),
            times: picks.iter().map(|&k| self.times[k]).collect(),
            poses: picks.iter().map(|&k| self.poses[k].clone()).collect(),
            series_names: self.series_names.clone(),
            series: self
                .series
                .iter()
                .map(|s| picks.iter().map(|&k| s[k]).collect())
                .collect(),
        }
    }
}

/// The payload of the page: the scene with poses and series in single precision, which
/// halves the page's size and is ample for drawing.
#[derive(Serialize)]
struct Payload<'a> {
    title: &'a str,
    planar: bool,
    bodies: &'a [String],
    shapes: &'a [ViewerShape],
    times: &'a [f64],
    poses: Vec<Vec<[f32; 7]>>,
    series_names: &'a [String],
    series: Vec<Vec<f32>>,
}

fn single(x: f64) -> f32 {
    // Out-of-range values become infinite and are written as `null`, as NaN is.
    x as f32
}

/// The viewer page for `scene` (validated, thinned to [`MAX_FRAMES`] frames).
pub fn render_viewer_html(scene: &ViewerScene) -> Result<String, ReportError> {
    scene.validate()?;
    let scene = scene.downsampled(MAX_FRAMES);
    let payload = Payload {
        title: &scene.title,
        planar: scene.planar,
        bodies: &scene.bodies,
        shapes: &scene.shapes,
        times: &scene.times,
        poses: scene
            .poses
            .iter()
            .map(|frame| frame.iter().map(|p| p.map(single)).collect())
            .collect(),
        series_names: &scene.series_names,
        series: scene
            .series
            .iter()
            .map(|s| s.iter().map(|&x| single(x)).collect())
            .collect(),
    };
    let json = serde_json::to_string(&payload).map_err(|e| invalid(e.to_string()))?;
    // `<` only occurs inside JSON strings, where `\u003c` means the same; this keeps
    // `</script>` and `<!--` in names from ending the script element early.
    let json = json.replace('<', "\\u003c");
    let title = scene
        .title
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    // Split first, so that a title holding the data marker cannot receive the data.
    let (head, tail) = TEMPLATE
        .split_once("__NONSMOOTH_DATA__")
        .ok_or_else(|| invalid("the page template has no data marker".to_string()))?;
    let head = head.replacen("__NONSMOOTH_TITLE__", &title, 1);
    let mut html = String::with_capacity(head.len() + json.len() + tail.len());
    html.push_str(&head);
    html.push_str(&json);
    html.push_str(tail);
    Ok(html)
}

/// Writes the viewer page for `scene` to `path`; an inconsistent scene is a
/// [`ReportError::Invalid`] naming what disagrees.
pub fn write_viewer_html(path: &Path, scene: &ViewerScene) -> Result<(), ReportError> {
    let html = render_viewer_html(scene)?;
    std::fs::write(path, html).map_err(|e| ReportError::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scene(frames: usize) -> ViewerScene {
        let times: Vec<f64> = (0..frames).map(|k| k as f64 * 0.01).collect();
        ViewerScene {
            title: "falling </script> box".to_string(),
            planar: false,
            bodies: vec!["box".to_string()],
            shapes: vec![
                ViewerShape {
                    name: "ground".to_string(),
                    body: None,
                    offset: IDENTITY_POSE,
                    kind: ViewerShapeKind::Plane {
                        normal: [0.0, 0.0, 1.0],
                    },
                },
                ViewerShape {
                    name: "box_shape".to_string(),
                    body: Some(0),
                    offset: IDENTITY_POSE,
                    kind: ViewerShapeKind::Box {
                        half_extents: [0.2, 0.15, 0.1],
                    },
                },
            ],
            poses: times
                .iter()
                .map(|t| vec![[2.0 * t, 0.0, 0.1, 1.0, 0.0, 0.0, 0.0]])
                .collect(),
            series_names: vec!["box.x".to_string()],
            series: vec![times.iter().map(|t| 2.0 * t).collect()],
            times,
        }
    }

    #[test]
    fn viewer_page_is_written_offline_with_the_data() {
        let dir = std::env::temp_dir().join(format!("nonsmooth-viewer-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("viewer.html");
        write_viewer_html(&path, &scene(50)).unwrap();
        let html = std::fs::read_to_string(&path).unwrap();
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.contains("\"box_shape\""));
        assert!(html.contains("\"half_extents\":[0.2,0.15,0.1]"));
        assert!(html.contains("window.nonsmoothViewer"));
        assert!(!html.contains("http://") && !html.contains("https://"));
        // The title cannot close the data's script element.
        assert_eq!(html.matches("</script>").count(), 2, "data + code scripts");
        assert!(html.contains("falling \\u003c/script> box"));
        assert!(html.contains("<title>falling &lt;/script&gt; box</title>"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn inconsistent_lengths_are_errors_naming_the_culprit() {
        let mut s = scene(5);
        s.poses[3].push(IDENTITY_POSE);
        let err = render_viewer_html(&s).unwrap_err().to_string();
        assert!(
            err.contains("pose frame 3 has 2 poses for 1 bodies"),
            "{err}"
        );
        let mut s = scene(5);
        s.series[0].pop();
        let err = render_viewer_html(&s).unwrap_err().to_string();
        assert!(
            err.contains("series `box.x` has 4 values for 5 times"),
            "{err}"
        );
        let mut s = scene(5);
        s.times.pop();
        assert!(render_viewer_html(&s).is_err());
        let mut s = scene(5);
        s.shapes[1].body = Some(1);
        let err = render_viewer_html(&s).unwrap_err().to_string();
        assert!(err.contains("shape `box_shape` is on body 1"), "{err}");
        let mut s = scene(5);
        s.series_names.push("extra".to_string());
        assert!(render_viewer_html(&s).is_err());
        assert!(render_viewer_html(&scene(0)).is_err());
    }

    #[test]
    fn long_runs_are_thinned_keeping_the_ends() {
        let s = scene(5001).downsampled(MAX_FRAMES);
        assert_eq!(s.times.len(), MAX_FRAMES);
        assert_eq!(s.poses.len(), MAX_FRAMES);
        assert_eq!(s.series[0].len(), MAX_FRAMES);
        assert_eq!(s.times[0], 0.0);
        assert!((s.times[MAX_FRAMES - 1] - 50.0).abs() < 1e-12);
        s.validate().unwrap();
    }

    #[test]
    fn a_long_run_of_many_bodies_makes_a_page_of_bounded_size() {
        let mut s = scene(5000);
        s.bodies = (0..100).map(|i| format!("b{i}")).collect();
        for frame in &mut s.poses {
            let p = frame[0];
            *frame = (0..100)
                .map(|i| {
                    [
                        p[0] + 0.123_456_789 * i as f64,
                        p[1],
                        p[2],
                        p[3],
                        p[4],
                        p[5],
                        p[6],
                    ]
                })
                .collect();
        }
        let html = render_viewer_html(&s).unwrap();
        let start = html.find(r#"id="nonsmooth-data">"#).unwrap() + 20;
        let end = start + html[start..].find("</script>").unwrap();
        let data: serde_json::Value = serde_json::from_str(&html[start..end]).unwrap();
        assert_eq!(data["times"].as_array().unwrap().len(), MAX_FRAMES);
        assert_eq!(data["poses"][0].as_array().unwrap().len(), 100);
        assert!(html.len() < 25_000_000, "{} bytes", html.len());
    }
}
