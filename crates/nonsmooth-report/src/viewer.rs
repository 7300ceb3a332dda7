//! An offline trajectory viewer: one self-contained HTML page (a canvas and a small
//! embedded script, no network access) that plays the motion of a model's bodies.
//!
//! The page is written from plain data, independent of the model crate: a [`ViewerScene`]
//! holds the body names, their collider shapes ([`ViewerShape`]) and one or more runs
//! ([`ViewerRun`]) of the same model: the world pose of every body at every recorded time of
//! the run, the time series offered in the plot beside the scene and, where known, the
//! contacts of each recorded state ([`ViewerContact`]). Several runs (e.g. one per stepper of
//! `nonsmooth simulate --stepper all`) are overlaid on one time axis, one colour per run.
//! [`write_viewer_html`] checks that the lengths agree, thins long runs (at most
//! [`MAX_FRAMES`] frames in all, at least [`MIN_RUN_FRAMES`] per run) and writes the page.
//!
//! Poses are `[x, y, z, qw, qx, qy, qz]`: a position and a unit quaternion (scalar first).
//! Planar scenes are drawn in the x–y plane; spatial scenes in the x–z plane (side view)
//! with a small x–y top view. The page exposes
//! `window.nonsmoothViewer = { setTime(t), bodyScreenPosition(i, run), drawnShapes(), data }`
//! so that a headless browser can scrub the time and read back where body `i` of a run was
//! drawn (canvas pixels) and which shapes of which run the last drawing of the main view
//! placed where. Non-finite numbers are written as `null`; the page skips what it cannot
//! place.

use crate::ReportError;
use serde::Serialize;
use std::path::Path;

/// Most frames written into a page, over all its runs; longer runs are thinned evenly
/// (first and last kept). A page of several runs keeps at least [`MIN_RUN_FRAMES`] per run.
pub const MAX_FRAMES: usize = 2000;

/// Fewest frames a run of a page with several runs is thinned to (when it has more).
pub const MIN_RUN_FRAMES: usize = 250;

/// The page template; the scene's JSON replaces `__NONSMOOTH_DATA__` and the escaped title
/// replaces `__NONSMOOTH_TITLE__` (which comes before it).
const TEMPLATE: &str = include_str!("viewer.html");

/// What the viewer plays: bodies, their shapes and one or more runs of them over time.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ViewerScene {
    /// Page title (e.g. the model's name and the stepper).
    pub title: String,
    /// Planar scene (drawn in the x–y plane) rather than spatial (x–z side view).
    pub planar: bool,
    /// Body names; `runs[r].poses[k][i]` is the pose of `bodies[i]`.
    pub bodies: Vec<String>,
    /// Collider shapes, attached to a body or to the world.
    pub shapes: Vec<ViewerShape>,
    /// Names of the time series (e.g. the trajectory's q coordinates); every run has one
    /// series per name.
    pub series_names: Vec<String>,
    /// The runs, overlaid on one time axis (one colour per run when there are several).
    pub runs: Vec<ViewerRun>,
    /// Lines shown under the legend (e.g. the steppers that could not run the model).
    pub notes: Vec<String>,
}

/// One run of a [`ViewerScene`]'s bodies: poses, series and contacts over time.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ViewerRun {
    /// Name in the legend (e.g. the stepper).
    pub name: String,
    /// How the run ended, shown in the legend (e.g. `failed at t = 0.3 s: …`); empty when
    /// it completed.
    pub status: String,
    /// Recorded times in s, non-decreasing.
    pub times: Vec<f64>,
    /// `poses[k][i]`: world pose `[x, y, z, qw, qx, qy, qz]` of body `i` at `times[k]`.
    pub poses: Vec<Vec<[f64; 7]>>,
    /// `series[j][k]`: value of series `j` at `times[k]`.
    pub series: Vec<Vec<f64>>,
    /// `contacts[k]`: the contacts at `times[k]`; empty (no frames at all) when the run's
    /// contacts are not known.
    pub contacts: Vec<Vec<ViewerContact>>,
}

/// One contact of a recorded state: where it is and, where known, the force through it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ViewerContact {
    /// Contact point (world, m).
    pub point: [f64; 3],
    /// Unit normal (world), drawn as a short tick.
    pub normal: [f64; 3],
    /// Signed gap (m; negative = penetration).
    pub gap: f64,
    /// Contact force (world, N) where the stepper reports it, drawn as an arrow.
    pub force: Option<[f64; 3]>,
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
    /// Checks that every length agrees: at least one run, and in every run at least one
    /// time, one pose per body per time, one value per time in every series, one series per
    /// name, one contact list per time (or none at all), times finite and non-decreasing;
    /// and shapes on existing bodies.
    pub fn validate(&self) -> Result<(), ReportError> {
        if self.runs.is_empty() {
            return Err(invalid("no runs".to_string()));
        }
        for run in &self.runs {
            self.validate_run(run)
                .map_err(|m| invalid(format!("run `{}`: {m}", run.name)))?;
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

    fn validate_run(&self, run: &ViewerRun) -> Result<(), String> {
        if run.times.is_empty() {
            return Err("no recorded times".to_string());
        }
        if run.poses.len() != run.times.len() {
            return Err(format!(
                "{} pose frames for {} times",
                run.poses.len(),
                run.times.len()
            ));
        }
        if let Some((k, frame)) = run
            .poses
            .iter()
            .enumerate()
            .find(|(_, f)| f.len() != self.bodies.len())
        {
            return Err(format!(
                "pose frame {k} has {} poses for {} bodies",
                frame.len(),
                self.bodies.len()
            ));
        }
        if let Some(k) = run.times.iter().position(|t| !t.is_finite()) {
            return Err(format!("time {k} is {}", run.times[k]));
        }
        if let Some(k) = run.times.windows(2).position(|w| w[1] < w[0]) {
            return Err(format!(
                "times decrease at {}: {} then {}",
                k + 1,
                run.times[k],
                run.times[k + 1]
            ));
        }
        if self.series_names.len() != run.series.len() {
            return Err(format!(
                "{} series names for {} series",
                self.series_names.len(),
                run.series.len()
            ));
        }
        if let Some((j, s)) = run
            .series
            .iter()
            .enumerate()
            .find(|(_, s)| s.len() != run.times.len())
        {
            return Err(format!(
                "series `{}` has {} values for {} times",
                self.series_names[j],
                s.len(),
                run.times.len()
            ));
        }
        if !run.contacts.is_empty() && run.contacts.len() != run.times.len() {
            return Err(format!(
                "{} contact frames for {} times",
                run.contacts.len(),
                run.times.len()
            ));
        }
        Ok(())
    }

    /// Most frames kept per run: [`MAX_FRAMES`] shared by the runs, at least
    /// [`MIN_RUN_FRAMES`] each.
    pub fn frames_per_run(&self) -> usize {
        (MAX_FRAMES / self.runs.len().max(1)).max(MIN_RUN_FRAMES)
    }

    /// The scene with every run thinned to at most `max_frames` evenly spread frames
    /// (first and last kept).
    pub fn downsampled(&self, max_frames: usize) -> ViewerScene {
        ViewerScene {
            runs: self
                .runs
                .iter()
                .map(|r| r.downsampled(max_frames))
                .collect(),
            ..self.clone()
        }
    }
}

impl ViewerRun {
    /// The run thinned to at most `max_frames` evenly spread frames (first and last kept).
    pub fn downsampled(&self, max_frames: usize) -> ViewerRun {
        let n = self.times.len();
        let max_frames = max_frames.max(2);
        if n <= max_frames {
            return self.clone();
        }
        let picks = even_picks(n, max_frames);
        ViewerRun {
            name: self.name.clone(),
            status: self.status.clone(),
            times: picks.iter().map(|&k| self.times[k]).collect(),
            poses: picks.iter().map(|&k| self.poses[k].clone()).collect(),
            series: self
                .series
                .iter()
                .map(|s| picks.iter().map(|&k| s[k]).collect())
                .collect(),
            contacts: if self.contacts.is_empty() {
                Vec::new()
            } else {
                picks.iter().map(|&k| self.contacts[k].clone()).collect()
            },
        }
    }
}

/// `m` indices spread evenly over `0..n` (first and last included; `m ≥ 2`, `n > m`).
pub fn even_picks(n: usize, m: usize) -> Vec<usize> {
    (0..m)
        .map(|i| (i as f64 * (n - 1) as f64 / (m - 1) as f64).round() as usize)
        .collect()
}

/// The payload of the page: the scene with poses, series and contacts in single precision,
/// poses and contact points rounded to 1e-5, which more than halves the page's size and is
/// ample for drawing.
#[derive(Serialize)]
struct Payload<'a> {
    title: &'a str,
    planar: bool,
    bodies: &'a [String],
    shapes: &'a [ViewerShape],
    series_names: &'a [String],
    runs: Vec<RunPayload<'a>>,
    notes: &'a [String],
}

#[derive(Serialize)]
struct RunPayload<'a> {
    name: &'a str,
    status: &'a str,
    times: &'a [f64],
    poses: Vec<Vec<[f32; 7]>>,
    series: Vec<Vec<f32>>,
    contacts: Vec<Vec<ContactPayload>>,
}

#[derive(Serialize)]
struct ContactPayload {
    point: [f32; 3],
    normal: [f32; 3],
    gap: f32,
    #[serde(skip_serializing_if = "Option::is_none")]
    force: Option<[f32; 3]>,
}

fn single(x: f64) -> f32 {
    // Out-of-range values become infinite and are written as `null`, as NaN is.
    x as f32
}

/// A pose or point entry for drawing: rounded to 1e-5 (10 µm, or 1e-5 of a unit
/// quaternion, far below a pixel), which shortens the page's numbers by a third.
fn drawn(x: f64) -> f32 {
    single((x * 1e5).round() / 1e5)
}

fn run_payload(run: &ViewerRun) -> RunPayload<'_> {
    RunPayload {
        name: &run.name,
        status: &run.status,
        times: &run.times,
        poses: run
            .poses
            .iter()
            .map(|frame| frame.iter().map(|p| p.map(drawn)).collect())
            .collect(),
        series: run
            .series
            .iter()
            .map(|s| s.iter().map(|&x| single(x)).collect())
            .collect(),
        contacts: run
            .contacts
            .iter()
            .map(|frame| {
                frame
                    .iter()
                    .map(|c| ContactPayload {
                        point: c.point.map(drawn),
                        normal: c.normal.map(drawn),
                        gap: single(c.gap),
                        force: c.force.map(|f| f.map(single)),
                    })
                    .collect()
            })
            .collect(),
    }
}

/// The viewer page for `scene` (validated, each run thinned to
/// [`ViewerScene::frames_per_run`] frames).
pub fn render_viewer_html(scene: &ViewerScene) -> Result<String, ReportError> {
    scene.validate()?;
    let scene = scene.downsampled(scene.frames_per_run());
    let payload = Payload {
        title: &scene.title,
        planar: scene.planar,
        bodies: &scene.bodies,
        shapes: &scene.shapes,
        series_names: &scene.series_names,
        runs: scene.runs.iter().map(run_payload).collect(),
        notes: &scene.notes,
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

    fn run(name: &str, frames: usize) -> ViewerRun {
        let times: Vec<f64> = (0..frames).map(|k| k as f64 * 0.01).collect();
        ViewerRun {
            name: name.to_string(),
            status: String::new(),
            poses: times
                .iter()
                .map(|t| vec![[2.0 * t, 0.0, 0.1, 1.0, 0.0, 0.0, 0.0]])
                .collect(),
            series: vec![times.iter().map(|t| 2.0 * t).collect()],
            contacts: times
                .iter()
                .map(|t| {
                    vec![ViewerContact {
                        point: [2.0 * t, 0.0, 0.0],
                        normal: [0.0, 0.0, 1.0],
                        gap: -1e-4,
                        force: (*t > 0.0).then_some([0.0, 0.0, 19.62]),
                    }]
                })
                .collect(),
            times,
        }
    }

    fn scene(frames: usize) -> ViewerScene {
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
            series_names: vec!["box.x".to_string()],
            runs: vec![run("anitescu-potra", frames)],
            notes: Vec::new(),
        }
    }

    fn page_data(html: &str) -> serde_json::Value {
        let start = html.find(r#"id="nonsmooth-data">"#).unwrap() + 20;
        let end = start + html[start..].find("</script>").unwrap();
        serde_json::from_str(&html[start..end]).unwrap()
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
        // Contacts: a force where known, none written where not.
        let data = page_data(&html);
        let contacts = &data["runs"][0]["contacts"];
        assert_eq!(contacts.as_array().unwrap().len(), 50);
        assert!(contacts[0][0].get("force").is_none());
        assert_eq!(contacts[1][0]["force"][2].as_f64().unwrap() as f32, 19.62);
        assert_eq!(contacts[1][0]["gap"].as_f64().unwrap() as f32, -1e-4);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn inconsistent_lengths_are_errors_naming_the_culprit() {
        let mut s = scene(5);
        s.runs[0].poses[3].push(IDENTITY_POSE);
        let err = render_viewer_html(&s).unwrap_err().to_string();
        assert!(
            err.contains("run `anitescu-potra`: pose frame 3 has 2 poses for 1 bodies"),
            "{err}"
        );
        let mut s = scene(5);
        s.runs[0].series[0].pop();
        let err = render_viewer_html(&s).unwrap_err().to_string();
        assert!(
            err.contains("series `box.x` has 4 values for 5 times"),
            "{err}"
        );
        let mut s = scene(5);
        s.runs[0].times.pop();
        assert!(render_viewer_html(&s).is_err());
        let mut s = scene(5);
        s.runs[0].contacts.pop();
        let err = render_viewer_html(&s).unwrap_err().to_string();
        assert!(err.contains("4 contact frames for 5 times"), "{err}");
        let mut s = scene(5);
        s.runs[0].contacts.clear(); // contacts unknown: allowed
        render_viewer_html(&s).unwrap();
        let mut s = scene(5);
        s.shapes[1].body = Some(1);
        let err = render_viewer_html(&s).unwrap_err().to_string();
        assert!(err.contains("shape `box_shape` is on body 1"), "{err}");
        let mut s = scene(5);
        s.series_names.push("extra".to_string());
        assert!(render_viewer_html(&s).is_err());
        assert!(render_viewer_html(&scene(0)).is_err());
        let mut s = scene(5);
        s.runs.clear();
        assert!(render_viewer_html(&s)
            .unwrap_err()
            .to_string()
            .contains("no runs"));
    }

    #[test]
    fn long_runs_are_thinned_keeping_the_ends() {
        let s = scene(5001).downsampled(MAX_FRAMES);
        let r = &s.runs[0];
        assert_eq!(r.times.len(), MAX_FRAMES);
        assert_eq!(r.poses.len(), MAX_FRAMES);
        assert_eq!(r.series[0].len(), MAX_FRAMES);
        assert_eq!(r.contacts.len(), MAX_FRAMES);
        assert_eq!(r.times[0], 0.0);
        assert!((r.times[MAX_FRAMES - 1] - 50.0).abs() < 1e-12);
        s.validate().unwrap();
    }

    #[test]
    fn several_runs_share_the_frame_budget_and_keep_their_own_lengths() {
        let mut s = scene(5001);
        for k in 0..8 {
            s.runs.push(run(&format!("stepper-{k}"), 3000 + k));
        }
        s.runs.push(run("failed-early", 40));
        assert_eq!(s.frames_per_run(), MIN_RUN_FRAMES);
        let data = page_data(&render_viewer_html(&s).unwrap());
        let runs = data["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 10);
        for r in &runs[..9] {
            assert_eq!(r["times"].as_array().unwrap().len(), MIN_RUN_FRAMES);
            assert_eq!(r["poses"].as_array().unwrap().len(), MIN_RUN_FRAMES);
        }
        assert_eq!(runs[9]["times"].as_array().unwrap().len(), 40);
        assert_eq!(runs[9]["name"], "failed-early");
        let mut two = scene(5001);
        two.runs.push(run("b", 5001));
        assert_eq!(two.frames_per_run(), MAX_FRAMES / 2);
    }

    #[test]
    fn a_long_run_of_many_bodies_makes_a_page_of_bounded_size() {
        let mut s = scene(5000);
        s.bodies = (0..100).map(|i| format!("b{i}")).collect();
        s.runs[0].contacts.clear();
        for frame in &mut s.runs[0].poses {
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
        let data = page_data(&html);
        assert_eq!(
            data["runs"][0]["times"].as_array().unwrap().len(),
            MAX_FRAMES
        );
        assert_eq!(data["runs"][0]["poses"][0].as_array().unwrap().len(), 100);
        assert!(html.len() < 25_000_000, "{} bytes", html.len());
    }
}
