//! MJCF attributes that change the dynamics: each row of the table in docs/model-format.md
//! ("MJCF attributes that change the dynamics") is loaded from a small MJCF file and checked
//! against its documented handling (honoured: analytic values; accepted: the same model as
//! without it; warned: a warning naming it; refused: an error naming the attribute and its
//! line), and `settotalmass` with the bounds, balancing and `fusestatic` is compared with
//! MuJoCo's own numbers (tests/data/mujoco_compiler_reference.json, MuJoCo 4.0.0).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use nalgebra::{DVector, Matrix3, UnitQuaternion, Vector3};
use nonsmooth_core::dynamics::crba::mass_matrix;
use nonsmooth_core::io::MjcfOptions;
use nonsmooth_core::{Model, ModelError};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A scratch folder holding `files` (name, contents).
fn scratch(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nonsmooth-mjcf-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (f, text) in files {
        let path = dir.join(f);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

/// Loads `src` as if it were the file `dir/model.xml` (`dir`: the examples folder unless
/// given), so relative mesh paths resolve there.
fn load_in(src: &str, dir: &Path) -> Result<Model, ModelError> {
    let file = dir.join("model.xml");
    Model::from_mjcf_str(src, file.to_str(), &MjcfOptions::default())
}

fn load(src: &str) -> Result<Model, ModelError> {
    load_in(src, &repo().join("examples"))
}

/// One free body `b` holding `body` (its joints, geoms, inertial) below `<compiler {compiler}>`
/// and `<asset>{asset}</asset>`.
fn mjcf(compiler: &str, asset: &str, body: &str) -> String {
    format!(
        r#"<mujoco model="t">
  <compiler {compiler}/>
  <asset>{asset}</asset>
  <worldbody>
    <body name="b" pos="0 0 1">
{body}
    </body>
  </worldbody>
</mujoco>"#
    )
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * (1.0 + a.abs().max(b.abs()))
}

fn body<'m>(m: &'m Model, name: &str) -> &'m nonsmooth_core::Body {
    &m.bodies[m
        .body_index(name)
        .unwrap_or_else(|| panic!("no body `{name}`"))]
}

/// A hinge whose range is "0 1" (degrees unless `angle="radian"`).
const HINGE_RANGE: &str =
    r#"<joint name="h" type="hinge" range="0 1"/><geom type="sphere" size="0.1"/>"#;
/// Box 0.2 × 0.4 × 0.6 of 2 kg.
const BOX: &str = r#"<freejoint/><geom type="box" size="0.1 0.2 0.3" mass="2"/>"#;
/// Unit cube [0, 1]³ with the top face's centre pushed down to z = 0.2 (not convex): exact
/// volume 1 − 0.8/3, hull volume 1.
const DENTED: &str = "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 0 1\nv 1 0 1\nv 1 1 1\nv 0 1 1\n\
v 0.5 0.5 0.2\nf 1 3 2\nf 1 4 3\nf 1 2 6\nf 1 6 5\nf 2 3 7\nf 2 7 6\nf 3 4 8\nf 3 8 7\nf 4 1 5\n\
f 4 5 8\nf 5 6 9\nf 6 7 9\nf 7 8 9\nf 8 5 9\n";

/// What a row's case produced: a model to check, or the load's result for `refused`.
#[allow(clippy::large_enum_variant)] // built once per table row
enum Case {
    /// Load this; the closure checks what "honoured" means for the row.
    Honoured(Result<Model, ModelError>, Box<dyn Fn(&Model)>),
    /// This load must give the same model as the second.
    Accepted(Result<Model, ModelError>, Result<Model, ModelError>),
    /// Loads, with a warning containing the text.
    Warned(Result<Model, ModelError>, &'static str),
    /// Must fail, naming this attribute.
    Refused(Result<Model, ModelError>, &'static str),
}

fn case(key: &str) -> Case {
    use Case::*;
    let plain = || load(&mjcf("", "", BOX));
    match key {
        "compiler angle" => Honoured(
            load(&mjcf(r#"angle="radian""#, "", HINGE_RANGE)),
            Box::new(|m| {
                assert_eq!(m.joints[0].limit.as_ref().unwrap().upper, 1.0);
                let deg = load(&mjcf("", "", HINGE_RANGE)).unwrap();
                assert!(close(
                    deg.joints[0].limit.as_ref().unwrap().upper,
                    1f64.to_radians(),
                    1e-15
                ));
            }),
        ),
        "compiler eulerseq" => {
            // euler="30 60 90": MuJoCo 4.0 gives the quaternion (0.683013, −0.183013, 0.5, 0.5)
            // for fixed axes XYZ = Rz(90°) Ry(60°) Rx(30°), and (0.5, 0.5, 0.183013,
            // 0.683013) for the default moving axes xyz = Rx(30°) Ry(60°) Rz(90°).
            let tilted = r#"<body name="c" euler="30 60 90"><joint type="hinge"/><geom size="0.1"/></body><geom size="0.1"/>"#;
            Honoured(
                load(&mjcf(r#"eulerseq="XYZ""#, "", tilted)),
                Box::new(move |m| {
                    let about = |axis: nalgebra::Unit<Vector3<f64>>, deg: f64| {
                        UnitQuaternion::from_axis_angle(&axis, deg.to_radians())
                    };
                    let (x, y, z) = (Vector3::x_axis(), Vector3::y_axis(), Vector3::z_axis());
                    let fixed = about(z, 90.0) * about(y, 60.0) * about(x, 30.0);
                    let c = m.body_index("c").unwrap();
                    let r = m.joints[c].placement.rotation;
                    assert!(r.angle_to(&fixed) < 1e-12, "{r:?}");
                    let mujoco = UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(
                        0.683013, -0.183013, 0.5, 0.5,
                    ));
                    assert!(r.angle_to(&mujoco) < 1e-5);
                    // The default, moving x, y, z, differs.
                    let d = load(&mjcf("", "", tilted)).unwrap();
                    let moving = about(x, 30.0) * about(y, 60.0) * about(z, 90.0);
                    let rd = d.joints[c].placement.rotation;
                    assert!(rd.angle_to(&moving) < 1e-12);
                    assert!(rd.angle_to(&r) > 0.5);
                }),
            )
        }
        "compiler meshdir" | "compiler assetdir" => {
            let attr = if key.ends_with("meshdir") {
                r#"meshdir="meshes""#
            } else {
                r#"assetdir="meshes""#
            };
            Honoured(
                load(&mjcf(
                    attr,
                    r#"<mesh name="cube" file="cube.obj"/>"#,
                    r#"<freejoint/><geom type="mesh" mesh="cube" density="300"/>"#,
                )),
                // The unit cube: 300 kg/m³ × 1 m³, I = m/6 on every axis.
                Box::new(|m| {
                    let b = body(m, "b");
                    assert!(close(b.mass, 300.0, 1e-12));
                    assert!((b.inertia - Matrix3::identity() * 50.0).norm() < 1e-9);
                }),
            )
        }
        "compiler texturedir" => Accepted(load(&mjcf(r#"texturedir="tex""#, "", BOX)), plain()),
        "compiler autolimits" => Honoured(
            load(&mjcf(r#"autolimits="false""#, "", HINGE_RANGE)),
            Box::new(|m| {
                assert!(m.joints[0].limit.is_none());
                assert!(load(&mjcf("", "", HINGE_RANGE)).unwrap().joints[0]
                    .limit
                    .is_some());
            }),
        ),
        "compiler inertiafromgeom" => Honoured(
            load(&mjcf(
                r#"inertiafromgeom="true""#,
                "",
                r#"<freejoint/><inertial pos="0 0 0" mass="7" diaginertia="1 1 1"/><geom type="box" size="0.1 0.2 0.3" mass="2"/>"#,
            )),
            Box::new(|m| assert_eq!(body(m, "b").mass, 2.0)),
        ),
        "compiler inertiagrouprange" => Honoured(
            load(&mjcf(
                r#"inertiagrouprange="0 0""#,
                "",
                r#"<freejoint/><geom type="box" size="0.1 0.2 0.3" mass="2"/><geom type="sphere" size="0.1" mass="5" group="1"/>"#,
            )),
            Box::new(|m| assert_eq!(body(m, "b").mass, 2.0)),
        ),
        "compiler coordinate=\"local\"" => Honoured(
            load(&mjcf(r#"coordinate="local""#, "", BOX)),
            Box::new(|m| assert_eq!(*m, load(&mjcf("", "", BOX)).unwrap())),
        ),
        "compiler coordinate=\"global\"" => {
            Refused(load(&mjcf(r#"coordinate="global""#, "", BOX)), "coordinate")
        }
        "compiler settotalmass" => Honoured(
            load(
                r#"<mujoco><compiler settotalmass="8"/><worldbody>
  <body name="a"><freejoint/><geom type="box" size="0.1 0.2 0.3" mass="1"/>
    <body name="c" pos="0 0 -1"><joint type="hinge"/><geom type="sphere" size="0.1" mass="3"/></body>
  </body></worldbody></mujoco>"#,
            ),
            // 1 + 3 kg scaled by 2: masses 2 and 6, inertias doubled.
            Box::new(|m| {
                assert!(close(body(m, "a").mass, 2.0, 1e-14));
                assert!(close(body(m, "c").mass, 6.0, 1e-14));
                let ixx = 2.0 / 3.0 * (0.2 * 0.2 + 0.3 * 0.3);
                assert!(close(body(m, "a").inertia[(0, 0)], ixx, 1e-12));
                assert!(close(body(m, "c").inertia[(0, 0)], 6.0 * 0.4 * 0.01, 1e-12));
            }),
        ),
        "compiler boundmass" => Honoured(
            load(&mjcf(
                r#"boundmass="0.5""#,
                "",
                r#"<freejoint/><inertial pos="0 0 0" mass="0.01" diaginertia="1 1 1"/>"#,
            )),
            Box::new(|m| assert_eq!(body(m, "b").mass, 0.5)),
        ),
        "compiler boundinertia" => Honoured(
            load(&mjcf(
                r#"boundinertia="0.01""#,
                "",
                r#"<freejoint/><inertial pos="0 0 0" mass="1" diaginertia="1e-6 0.02 0.02"/>"#,
            )),
            Box::new(|m| {
                let i = body(m, "b").inertia;
                let want = Matrix3::from_diagonal(&Vector3::new(0.01, 0.02, 0.02));
                assert!((i - want).norm() < 1e-14, "{i}");
            }),
        ),
        "compiler balanceinertia" => Honoured(
            load(&mjcf(
                r#"balanceinertia="true""#,
                "",
                r#"<freejoint/><inertial pos="0 0 0" mass="1" diaginertia="0.01 0.01 0.05"/>"#,
            )),
            Box::new(|m| {
                let i = body(m, "b").inertia;
                assert!(
                    (i - Matrix3::identity() * (0.07 / 3.0)).norm() < 1e-15,
                    "{i}"
                );
                assert!(m
                    .import_warnings
                    .iter()
                    .any(|w| w.contains("balanceinertia")));
                // Without it: kept as given, with a warning naming the body and the defect.
                let kept = load(&mjcf(
                    "",
                    "",
                    r#"<freejoint/><inertial pos="0 0 0" mass="1" diaginertia="0.01 0.01 0.05"/>"#,
                ))
                .unwrap();
                assert_eq!(body(&kept, "b").inertia[(2, 2)], 0.05);
                assert!(kept
                    .import_warnings
                    .iter()
                    .any(|w| w.contains("body `b`") && w.contains("triangle inequality")));
            }),
        ),
        "compiler fusestatic" => {
            let src = |fuse: &str| {
                format!(
                    r#"<mujoco><compiler settotalmass="6" {fuse}/><worldbody>
  <body name="pedestal"><geom type="box" size="0.1 0.1 0.1" mass="2"/></body>
  <body name="a" pos="0 0 1"><freejoint/><geom type="sphere" size="0.1" mass="1"/></body>
</worldbody></mujoco>"#
                )
            };
            // A static body another element names (here a sensor, not imported) is not fused
            // by MuJoCo (4.0: pedestal 4 kg, a 2 kg): checked below.
            let referenced = src(r#"fusestatic="true""#).replace(
                "</worldbody>",
                r#"</worldbody><sensor><framepos objtype="body" objname="pedestal"/></sensor>"#,
            );
            Honoured(
                load(&src(r#"fusestatic="true""#)),
                // Fused into the world, the pedestal leaves the total: a gets all 6 kg;
                // without fusestatic it keeps its share, 6 · 1/3.
                Box::new(move |m| {
                    assert!(close(body(m, "a").mass, 6.0, 1e-14));
                    let unfused = load(&src("")).unwrap();
                    assert!(close(body(&unfused, "a").mass, 2.0, 1e-14));
                    let kept = load(&referenced).unwrap();
                    assert!(close(body(&kept, "a").mass, 2.0, 1e-14));
                }),
            )
        }
        "compiler strippath" => Honoured(
            load(&mjcf(
                r#"strippath="true" meshdir="meshes""#,
                r#"<mesh name="cube" file="/somewhere/else/cube.obj"/>"#,
                r#"<freejoint/><geom type="mesh" mesh="cube" density="300"/>"#,
            )),
            Box::new(|m| assert!(close(body(m, "b").mass, 300.0, 1e-12))),
        ),
        "compiler discardvisual" => Accepted(
            load(&mjcf(
                r#"discardvisual="true""#,
                "",
                r#"<freejoint/><geom type="box" size="0.1 0.2 0.3" mass="2"/><geom type="sphere" size="0.1" mass="1" contype="0" conaffinity="0"/>"#,
            )),
            load(&mjcf(
                "",
                "",
                r#"<freejoint/><geom type="box" size="0.1 0.2 0.3" mass="2"/><geom type="sphere" size="0.1" mass="1" contype="0" conaffinity="0"/>"#,
            )),
        ),
        "compiler usethread" => Accepted(load(&mjcf(r#"usethread="false""#, "", BOX)), plain()),
        "compiler saveinertial" => {
            Accepted(load(&mjcf(r#"saveinertial="false""#, "", BOX)), plain())
        }
        "compiler fitaabb" => Accepted(load(&mjcf(r#"fitaabb="true""#, "", BOX)), plain()),
        "compiler alignfree=\"true\"" => {
            Refused(load(&mjcf(r#"alignfree="true""#, "", BOX)), "alignfree")
        }
        "compiler exactmeshinertia" => Refused(
            load(&mjcf(r#"exactmeshinertia="true""#, "", BOX)),
            "exactmeshinertia",
        ),
        "include" => {
            let dir = scratch(
                "include",
                &[(
                    "parts/leg.xml",
                    r#"<mujoco><body name="leg" pos="0 0 -0.5"><joint type="hinge"/><geom type="sphere" size="0.1" mass="4"/></body></mujoco>"#,
                )],
            );
            Honoured(
                load_in(
                    &mjcf("", "", &format!("{BOX}<include file=\"parts/leg.xml\"/>")),
                    &dir,
                ),
                Box::new(|m| assert_eq!(body(m, "leg").mass, 4.0)),
            )
        }
        "default class" => Honoured(
            load(
                r#"<mujoco><default><default class="soft"><joint damping="0.7" armature="0.2"/><geom mass="3"/></default></default>
  <worldbody><body name="b" childclass="soft"><joint name="h" type="hinge"/><geom type="sphere" size="0.1"/></body></worldbody></mujoco>"#,
            ),
            Box::new(|m| {
                assert_eq!(m.joints[0].damping, 0.7);
                assert_eq!(m.joints[0].armature, 0.2);
                assert_eq!(body(m, "b").mass, 3.0);
            }),
        ),
        "joint armature" => Honoured(
            load(&mjcf(
                "",
                "",
                r#"<joint type="hinge" axis="0 0 1" armature="0.25"/><geom type="sphere" size="0.1" mass="2"/>"#,
            )),
            // M = I_zz + armature = 2/5 · 2 · 0.01 + 0.25.
            Box::new(|m| {
                let mm = mass_matrix(m, &DVector::zeros(m.nq()));
                assert!(close(mm[(0, 0)], 0.008 + 0.25, 1e-12));
            }),
        ),
        "joint damping" => Honoured(
            load(&mjcf(
                "",
                "",
                r#"<joint type="hinge" damping="1.5"/><geom type="sphere" size="0.1"/>"#,
            )),
            Box::new(|m| assert_eq!(m.joints[0].damping, 1.5)),
        ),
        "joint springref" => Honoured(
            load(&mjcf(
                "",
                "",
                r#"<joint type="hinge" stiffness="4" springref="30"/><geom type="sphere" size="0.1"/>"#,
            )),
            Box::new(|m| {
                let s = m.joints[0].spring.as_ref().expect("a spring");
                assert_eq!(s.stiffness, 4.0);
                assert!(close(s.reference, 30f64.to_radians(), 1e-15));
            }),
        ),
        "joint frictionloss" => Warned(
            load(&mjcf(
                "",
                "",
                r#"<joint type="hinge" frictionloss="0.3"/><geom type="sphere" size="0.1"/>"#,
            )),
            "frictionloss",
        ),
        "joint actuatorfrcrange" => Warned(
            load(&mjcf(
                "",
                "",
                r#"<joint type="hinge" actuatorfrcrange="-1 1"/><geom type="sphere" size="0.1"/>"#,
            )),
            "actuatorfrcrange",
        ),
        "joint springdamper" => Warned(
            load(&mjcf(
                "",
                "",
                r#"<joint type="hinge" springdamper="0.5 1"/><geom type="sphere" size="0.1"/>"#,
            )),
            "springdamper",
        ),
        "body gravcomp" => Warned(
            load(&mjcf("", "", BOX).replace(r#"pos="0 0 1">"#, r#"pos="0 0 1" gravcomp="1">"#)),
            "gravcomp",
        ),
        "option flag gravity" => Honoured(
            load(&mjcf("", "", BOX).replace(
                "<worldbody>",
                r#"<option gravity="0 0 -3"><flag gravity="disable"/></option><worldbody>"#,
            )),
            Box::new(|m| assert_eq!(m.gravity, Vector3::zeros())),
        ),
        "option density" | "option viscosity" | "option wind" => {
            let attr = key.strip_prefix("option ").unwrap();
            let value = if attr == "wind" { "1 0 0" } else { "1.2" };
            let needle: &'static str = match attr {
                "density" => "density not imported",
                "viscosity" => "viscosity not imported",
                _ => "wind not imported",
            };
            Warned(
                load(&mjcf("", "", BOX).replace(
                    "<worldbody>",
                    &format!(r#"<option {attr}="{value}"/><worldbody>"#),
                )),
                needle,
            )
        }
        "geom density" => Honoured(
            load(&mjcf(
                "",
                "",
                r#"<freejoint/><geom type="box" size="0.1 0.2 0.3" density="250"/>"#,
            )),
            Box::new(|m| assert!(close(body(m, "b").mass, 250.0 * 0.2 * 0.4 * 0.6, 1e-12))),
        ),
        "geom mass" => Honoured(
            load(&mjcf("", "", BOX)),
            Box::new(|m| {
                let b = body(m, "b");
                assert_eq!(b.mass, 2.0);
                assert!(close(b.inertia[(2, 2)], 2.0 / 3.0 * (0.01 + 0.04), 1e-12));
            }),
        ),
        "geom shellinertia=\"true\"" => Refused(
            load(&mjcf(
                "",
                "",
                r#"<freejoint/><geom type="sphere" size="0.1" shellinertia="true"/>"#,
            )),
            "shellinertia",
        ),
        "geom mesh on a primitive" => Refused(
            load(&mjcf(
                "",
                r#"<mesh name="cube" file="meshes/cube.obj"/>"#,
                r#"<freejoint/><geom type="box" mesh="cube"/>"#,
            )),
            "mesh",
        ),
        "mesh inertia=\"exact\"" | "mesh inertia=\"convex\"" | "mesh inertia=\"legacy\"" => {
            let mode = key.split('"').nth(1).unwrap();
            let dir = scratch(&format!("mesh-{mode}"), &[("dented.obj", DENTED)]);
            let m = load_in(
                &mjcf(
                    "",
                    &format!(r#"<mesh name="d" file="dented.obj" inertia="{mode}"/>"#),
                    r#"<freejoint/><geom type="mesh" mesh="d" density="1"/>"#,
                ),
                &dir,
            );
            let exact = 1.0 - 0.8 / 3.0;
            match mode {
                "legacy" => Warned(m, "not convex"),
                "exact" => Honoured(
                    m,
                    Box::new(move |m| {
                        let mass = body(m, "b").mass;
                        // The OBJ's 0.2 is read in single precision (as MuJoCo reads it:
                        // its mass for this mesh is 0.7333333343).
                        assert!(close(mass, exact, 1e-8), "{mass} vs {exact}");
                    }),
                ),
                // The hull is the unit cube: volume 1, I = 1/6 on every axis.
                _ => Honoured(
                    m,
                    Box::new(|m| {
                        let b = body(m, "b");
                        assert!(close(b.mass, 1.0, 1e-12));
                        assert!((b.inertia - Matrix3::identity() / 6.0).norm() < 1e-12);
                    }),
                ),
            }
        }
        "mesh inertia=\"shell\"" => Refused(
            load(&mjcf(
                "",
                r#"<mesh name="cube" file="meshes/cube.obj" inertia="shell"/>"#,
                r#"<freejoint/><geom type="mesh" mesh="cube"/>"#,
            )),
            "inertia",
        ),
        other => panic!("the table has a row `{other}` this test does not know"),
    }
}

/// The rows (attribute, handling) of the table in docs/model-format.md.
fn documented_rows() -> Vec<(String, String)> {
    let doc = std::fs::read_to_string(repo().join("docs/model-format.md")).unwrap();
    let start = doc
        .find("### MJCF attributes that change the dynamics")
        .expect("the table's heading");
    doc[start..]
        .lines()
        .skip_while(|l| !l.starts_with("| attribute |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            (cells[1].replace('`', ""), cells[2].to_string())
        })
        .collect()
}

#[test]
fn every_documented_mjcf_attribute_behaves_as_documented() {
    let rows = documented_rows();
    assert!(rows.len() >= 30, "{rows:?}");
    let keys: BTreeSet<&str> = rows.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys.len(), rows.len(), "duplicate rows");
    // Every compiler attribute of MuJoCo 4.0 has a row.
    for attr in [
        "angle",
        "eulerseq",
        "meshdir",
        "assetdir",
        "texturedir",
        "autolimits",
        "inertiafromgeom",
        "inertiagrouprange",
        "coordinate",
        "settotalmass",
        "boundmass",
        "boundinertia",
        "balanceinertia",
        "fusestatic",
        "strippath",
        "discardvisual",
        "usethread",
        "saveinertial",
        "fitaabb",
        "alignfree",
    ] {
        assert!(
            keys.iter()
                .any(|k| k.starts_with(&format!("compiler {attr}"))),
            "no row for <compiler {attr}>"
        );
    }
    for (key, handling) in &rows {
        match (handling.as_str(), case(key)) {
            ("honoured", Case::Honoured(m, check)) => {
                let m = m.unwrap_or_else(|e| panic!("`{key}`: {e}"));
                check(&m);
            }
            ("accepted", Case::Accepted(with, without)) => {
                let (with, without) = (with.unwrap(), without.unwrap());
                assert_eq!(with, without, "`{key}` changed the model");
            }
            ("warned", Case::Warned(m, needle)) => {
                let m = m.unwrap_or_else(|e| panic!("`{key}`: {e}"));
                assert!(
                    m.import_warnings.iter().any(|w| w.contains(needle)),
                    "`{key}`: no warning with `{needle}` in {:?}",
                    m.import_warnings
                );
            }
            ("refused", Case::Refused(m, attr)) => {
                let e = m.expect_err(key);
                let text = e.to_string();
                let ModelError::Mjcf { location, .. } = &e else {
                    panic!("`{key}`: {e:?}");
                };
                assert!(
                    location.line.is_some() && location.field.contains(attr),
                    "`{key}`: {text}"
                );
                assert!(text.contains("model.xml"), "`{key}`: {text}");
            }
            (h, _) => panic!("`{key}`: documented `{h}`, the test's case differs"),
        }
    }
}

#[test]
fn compiler_mass_corrections_match_mujoco() {
    // scripts/mujoco_check.sh regenerates the reference with the installed MuJoCo and
    // points this variable at it; otherwise the committed one (MuJoCo 4.0.0) is read.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let reference_file = std::env::var_os("NONSMOOTH_MUJOCO_COMPILER_REFERENCE")
        .map_or_else(|| dir.join("mujoco_compiler_reference.json"), PathBuf::from);
    let text = std::fs::read_to_string(&reference_file).unwrap();
    let reference: serde_json::Value = serde_json::from_str(&text).unwrap();
    let files = reference["files"].as_object().unwrap();
    assert_eq!(files.len(), 2);
    let num = |v: &serde_json::Value| v.as_f64().unwrap();
    for (name, r) in files {
        let model = Model::from_file(dir.join("mjcf_compiler").join(name)).unwrap();
        let q = DVector::from_iterator(model.nq(), r["qpos"].as_array().unwrap().iter().map(num));
        let m = mass_matrix(&model, &q);
        let theirs = &r["mass_matrix"];
        let mut worst: f64 = 0.0;
        for i in 0..model.nv() {
            for j in 0..model.nv() {
                worst = worst.max((m[(i, j)] - num(&theirs[i][j])).abs());
            }
        }
        assert!(worst < 1e-9, "{name}: mass matrix off by {worst:e}");
        // Every MuJoCo body that is one of ours has MuJoCo's mass and principal moments
        // (bodies fused or merged into the world are compared through the mass matrix).
        let mut compared = 0;
        for (body, b) in r["bodies"].as_object().unwrap() {
            let Some(i) = model.body_index(body) else {
                continue;
            };
            let ours = &model.bodies[i];
            let fused_here = name.contains("fusestatic") && (body == "trunk" || body == "lower");
            if fused_here {
                continue;
            }
            assert!(close(ours.mass, num(&b["mass"]), 1e-12), "{name}: {body}");
            let mut eig: Vec<f64> = ours
                .inertia
                .symmetric_eigenvalues()
                .iter()
                .copied()
                .collect();
            eig.sort_by(f64::total_cmp);
            for (k, e) in eig.iter().enumerate() {
                let want = num(&b["principal_inertia"][k]);
                assert!(
                    close(*e, want, 1e-9),
                    "{name}: {body} moment {k}: {e} vs {want}"
                );
            }
            compared += 1;
        }
        assert!(compared >= 1, "{name}");
        // The total of our bodies (those merged into the world are gone) is MuJoCo's total
        // of the bodies that move.
        let ours: f64 = model.bodies.iter().map(|b| b.mass).sum();
        let theirs: f64 = r["bodies"]
            .as_object()
            .unwrap()
            .iter()
            .filter(|(n, _)| n.as_str() != "pedestal")
            .map(|(_, b)| num(&b["mass"]))
            .sum();
        assert!(close(ours, theirs, 1e-12), "{name}: {ours} vs {theirs}");
    }
}
