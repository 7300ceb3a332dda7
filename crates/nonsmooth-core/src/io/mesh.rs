//! Triangle-mesh files (STL, OBJ) for mesh colliders.
//!
//! [`read_mesh_file`] reads an STL (ASCII or binary) or OBJ file, and [`read_mesh_bytes`] its
//! contents already in memory, into a [`MeshData`]: one vertex list and one triangle list,
//! with vertices at bit-identical positions merged (so that the topology is that of the
//! surface, whatever the file format splits it into), and every vertex multiplied by a
//! per-axis scale. [`validate_mesh`] rejects meshes that cannot
//! be used at all (no triangles, non-finite coordinates, dangling indices) with a typed
//! [`ModelError`]; [`mesh_warnings`] describes meshes that can be used but are suspicious for
//! a collider (open, non-manifold, degenerate triangles).

use std::collections::HashMap;
use std::io::Cursor;
use std::path::Path;

use nalgebra::Vector3;

use crate::error::{Location, ModelError};

/// A triangle mesh read from a file, in the file's units times `scale`.
///
/// Triangles index into `vertices` (0-based); their winding is counter-clockwise seen from
/// outside for a correctly oriented closed mesh.
#[derive(Debug, Clone, PartialEq)]
pub struct MeshData {
    /// Vertex positions.
    pub vertices: Vec<Vector3<f64>>,
    /// Triangles, as three indices into [`MeshData::vertices`].
    pub triangles: Vec<[u32; 3]>,
}

/// A triangle counts as degenerate (zero area) in [`mesh_warnings`] when twice its area is at
/// most this fraction of its longest edge squared (the sine of its largest angle, roughly).
const DEGENERATE_REL_TOL: f64 = 1e-10;

/// The mesh file formats [`read_mesh_file`] and [`read_mesh_bytes`] know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MeshFormat {
    /// STL, ASCII or binary (told apart by the contents).
    Stl,
    /// Wavefront OBJ.
    Obj,
}

impl MeshFormat {
    /// The format a file name's extension names (case-insensitive `.stl` / `.obj`), if any.
    pub fn from_path(path: &Path) -> Option<MeshFormat> {
        match path.extension().and_then(|e| e.to_str()) {
            Some(ext) if ext.eq_ignore_ascii_case("stl") => Some(MeshFormat::Stl),
            Some(ext) if ext.eq_ignore_ascii_case("obj") => Some(MeshFormat::Obj),
            _ => None,
        }
    }
}

/// Reads an STL (ASCII or binary, via `stl_io`; duplicate vertices merged as `stl_io`'s
/// `IndexedMesh` does) or OBJ (via `tobj`: triangulated, all models of the file merged) file,
/// dispatching on the extension (case-insensitive `.stl` / `.obj`), and multiplies every
/// vertex by `scale` componentwise: [`read_mesh_bytes`] on the file's contents.
///
/// `field` is the model-file field that names the mesh (e.g. `colliders[3].shape.mesh`), used
/// in error locations.
///
/// # Errors
/// - an extension other than `.stl` / `.obj`, or a file that cannot be read:
///   [`ModelError::Io`] naming the path, with what went wrong;
/// - as [`read_mesh_bytes`], with the path as the mesh's name.
pub fn read_mesh_file(
    path: &Path,
    scale: Vector3<f64>,
    field: &str,
) -> Result<MeshData, ModelError> {
    let name = path.display().to_string();
    check_scale(scale, &name, field)?;
    let io_error = |message: String| ModelError::Io {
        path: name.clone(),
        message,
    };
    let format = MeshFormat::from_path(path)
        .ok_or_else(|| io_error("unknown mesh file extension (expected .stl or .obj)".into()))?;
    let bytes = std::fs::read(path).map_err(|e| io_error(describe_io_error(&e)))?;
    read_mesh_bytes(&bytes, format, scale, &name, field)
}

/// Reads an STL or OBJ mesh from the contents of a file (`bytes`, in `format`), and multiplies
/// every vertex by `scale` componentwise. `name` names the mesh's source in errors (a path, or
/// any label for a mesh that never was a file) and `field` is the model-file field that names
/// the mesh (e.g. `colliders[3].shape.mesh`).
///
/// Details:
/// - vertices at bit-identical positions are merged in both formats (with `-0.0` and `0.0`
///   taken as equal), so an OBJ whose faces carry per-face normals or texture coordinates, or
///   whose groups/objects share positions, still gives a connected surface;
/// - OBJ point and line elements are ignored, polygons are triangulated as fans, material
///   libraries are not read;
/// - an ASCII STL whose header line is a bare `solid` (no name), and a binary STL whose
///   80-byte header happens to start with `solid `, are both read;
/// - a scale with an odd number of negative components (a mirror) reverses the winding of
///   every triangle, so that an outward-oriented mesh stays outward-oriented.
///
/// # Errors
/// - a non-finite or zero scale component: [`ModelError::InvalidValue`];
/// - contents the parser rejects: [`ModelError::Io`] with `name` as the path and the
///   parser's message;
/// - a mesh that fails [`validate_mesh`] (e.g. an empty file, a NaN coordinate): the typed
///   error of [`validate_mesh`], with `name` in [`Location::file`].
pub fn read_mesh_bytes(
    bytes: &[u8],
    format: MeshFormat,
    scale: Vector3<f64>,
    name: &str,
    field: &str,
) -> Result<MeshData, ModelError> {
    check_scale(scale, name, field)?;
    let (positions, triangles) = if bytes.iter().all(u8::is_ascii_whitespace) {
        // Neither parser has a useful message for an empty file: let `validate_mesh` say
        // "empty mesh" with a typed error.
        (Vec::new(), Vec::new())
    } else {
        match format {
            MeshFormat::Stl => parse_stl(bytes),
            MeshFormat::Obj => parse_obj(bytes),
        }
        .map_err(|message| ModelError::Io {
            path: name.to_string(),
            message,
        })?
    };
    let (positions, mut triangles) = weld(positions, triangles);
    let mirrored = scale.iter().filter(|&&c| c < 0.0).count() % 2 == 1;
    if mirrored {
        for t in &mut triangles {
            t.swap(1, 2);
        }
    }
    let mesh = MeshData {
        vertices: positions
            .into_iter()
            .map(|p| Vector3::new(p[0] * scale.x, p[1] * scale.y, p[2] * scale.z))
            .collect(),
        triangles,
    };
    validate_mesh(&mesh, Some(name), field)?;
    Ok(mesh)
}

/// Rejects a mesh scale with a non-finite or zero component.
fn check_scale(scale: Vector3<f64>, name: &str, field: &str) -> Result<(), ModelError> {
    if let Some(bad) = scale.iter().find(|c| !c.is_finite()) {
        return Err(ModelError::InvalidValue {
            location: file_location(name, field),
            reason: format!(
                "mesh scale [{}, {}, {}] is not finite ({bad})",
                scale.x, scale.y, scale.z
            ),
        });
    }
    if scale.iter().any(|&c| c == 0.0) {
        return Err(ModelError::InvalidValue {
            location: file_location(name, field),
            reason: format!(
                "mesh scale [{}, {}, {}] has a zero component (the mesh would be flat)",
                scale.x, scale.y, scale.z
            ),
        });
    }
    Ok(())
}

/// Checks that a mesh can be used: it has at least one triangle, every vertex coordinate is
/// finite, and every triangle index names a vertex.
///
/// `file` (the mesh file, if any) and `field` (the model-file field naming the mesh) go into
/// the error's [`Location`]; the field of a per-vertex or per-triangle error is extended with
/// the index, e.g. `colliders[3].shape.mesh.vertices[7]` or `...mesh.triangles[2]`.
///
/// # Errors
/// - no triangles: [`ModelError::InvalidValue`] ("empty mesh");
/// - a NaN or infinite coordinate: [`ModelError::NonFinite`] naming the vertex;
/// - a triangle index ≥ the number of vertices: [`ModelError::InvalidValue`] naming the
///   triangle and the index.
pub fn validate_mesh(mesh: &MeshData, file: Option<&str>, field: &str) -> Result<(), ModelError> {
    let location = |field: String| Location {
        file: file.map(str::to_string),
        line: None,
        field,
    };
    if mesh.triangles.is_empty() {
        return Err(ModelError::InvalidValue {
            location: location(field.to_string()),
            reason: format!(
                "empty mesh: no triangles ({} vertices)",
                mesh.vertices.len()
            ),
        });
    }
    for (i, v) in mesh.vertices.iter().enumerate() {
        if let Some(&value) = v.iter().find(|c| !c.is_finite()) {
            return Err(ModelError::NonFinite {
                location: location(format!("{field}.vertices[{i}]")),
                value,
            });
        }
    }
    let n = mesh.vertices.len();
    for (t, tri) in mesh.triangles.iter().enumerate() {
        if let Some(&k) = tri.iter().find(|&&k| !index_in_range(k, n)) {
            return Err(ModelError::InvalidValue {
                location: location(format!("{field}.triangles[{t}]")),
                reason: format!(
                    "vertex index {k} out of range (the mesh has {n} vertices, indices are 0-based)"
                ),
            });
        }
    }
    Ok(())
}

/// Warnings (human-readable, each starting with `source`, which should name the file and/or
/// field) for a mesh that is usable but suspicious as a collider:
/// - open: edges used by exactly one triangle (the count is reported);
/// - non-manifold: edges used by more than two triangles (the count is reported);
/// - degenerate (zero-area) triangles, including triangles that repeat a vertex index (the
///   count and the first index are reported).
///
/// Empty when the mesh is a closed 2-manifold without degenerate triangles. Triangles with
/// out-of-range indices (which [`validate_mesh`] rejects) are skipped and counted in a
/// warning of their own; this function never panics.
pub fn mesh_warnings(mesh: &MeshData, source: &str) -> Vec<String> {
    let n = mesh.vertices.len();
    let mut edges: HashMap<(u32, u32), usize> = HashMap::new();
    let mut out_of_range = 0usize;
    let mut degenerate = 0usize;
    let mut first_degenerate = None;
    for (t, &[a, b, c]) in mesh.triangles.iter().enumerate() {
        let (Some(pa), Some(pb), Some(pc)) = (vertex(mesh, a), vertex(mesh, b), vertex(mesh, c))
        else {
            out_of_range += 1;
            continue;
        };
        let repeated = a == b || b == c || c == a;
        if repeated || is_degenerate(pa, pb, pc) {
            degenerate += 1;
            first_degenerate.get_or_insert(t);
        }
        if repeated {
            // Its "edges" are not edges of the surface.
            continue;
        }
        for (u, v) in [(a, b), (b, c), (c, a)] {
            *edges.entry((u.min(v), u.max(v))).or_insert(0) += 1;
        }
    }
    let open = edges.values().filter(|&&k| k == 1).count();
    let non_manifold = edges.values().filter(|&&k| k > 2).count();
    let mut warnings = Vec::new();
    if out_of_range > 0 {
        warnings.push(format!(
            "{source}: {out_of_range} triangle(s) have vertex indices out of range \
             (the mesh has {n} vertices); they were skipped in these checks"
        ));
    }
    if open > 0 {
        warnings.push(format!(
            "{source}: mesh is open: {open} edge(s) are used by only one triangle, so the mesh \
             does not enclose a volume"
        ));
    }
    if non_manifold > 0 {
        warnings.push(format!(
            "{source}: mesh is non-manifold: {non_manifold} edge(s) are used by more than two \
             triangles"
        ));
    }
    if let Some(first) = first_degenerate {
        warnings.push(format!(
            "{source}: mesh has {degenerate} degenerate (zero-area) triangle(s), the first \
             is triangles[{first}]"
        ));
    }
    warnings
}

/// A location in a mesh file.
fn file_location(file: &str, field: &str) -> Location {
    Location {
        file: Some(file.to_string()),
        line: None,
        field: field.to_string(),
    }
}

/// Whether `k` indexes a list of `n` items.
fn index_in_range(k: u32, n: usize) -> bool {
    usize::try_from(k).is_ok_and(|k| k < n)
}

/// Vertex `k` of the mesh, if there is one.
fn vertex(mesh: &MeshData, k: u32) -> Option<&Vector3<f64>> {
    usize::try_from(k).ok().and_then(|k| mesh.vertices.get(k))
}

/// Whether the triangle has (numerically) zero area: see [`DEGENERATE_REL_TOL`].
fn is_degenerate(a: &Vector3<f64>, b: &Vector3<f64>, c: &Vector3<f64>) -> bool {
    let (ab, bc, ca) = (b - a, c - b, a - c);
    let longest = ab
        .norm_squared()
        .max(bc.norm_squared())
        .max(ca.norm_squared());
    let twice_area = ab.cross(&(-ca)).norm();
    // NaN coordinates count as degenerate.
    twice_area.partial_cmp(&(DEGENERATE_REL_TOL * longest)) != Some(std::cmp::Ordering::Greater)
}

/// An `io::Error` as a short message.
fn describe_io_error(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => format!("no such file ({e})"),
        std::io::ErrorKind::PermissionDenied => format!("permission denied ({e})"),
        _ => e.to_string(),
    }
}

/// Vertex positions and triangles as read from a file, before merging and scaling.
type RawMesh = (Vec<[f64; 3]>, Vec<[u32; 3]>);

/// A 0-based vertex index as `u32`.
fn to_u32(k: usize) -> Result<u32, String> {
    u32::try_from(k).map_err(|_| format!("vertex index {k} does not fit in 32 bits"))
}

/// Parses an STL file (ASCII or binary).
fn parse_stl(bytes: &[u8]) -> Result<RawMesh, String> {
    let looks_ascii =
        bytes.starts_with(b"solid") && bytes.get(5).is_some_and(u8::is_ascii_whitespace);
    let mesh = if looks_ascii {
        // `stl_io` recognizes ASCII STL by the header `solid ` (with a space): give a bare
        // `solid` line the space it expects.
        let text = if bytes.get(5) == Some(&b' ') {
            bytes.to_vec()
        } else {
            [b"solid ".as_slice(), bytes.get(5..).unwrap_or_default()].concat()
        };
        match stl_io::read_stl(&mut Cursor::new(text)) {
            Ok(mesh) => mesh,
            Err(ascii_err) if binary_stl_size(bytes) == Some(bytes.len()) => {
                // Some exporters write binary STL files whose 80-byte header starts with
                // "solid ", which `stl_io` then reads as ASCII. Retry as binary, defeating
                // the header sniffing by blanking the first byte of the (unused) header.
                let mut binary = bytes.to_vec();
                if let Some(first) = binary.first_mut() {
                    *first = 0;
                }
                stl_io::read_stl(&mut Cursor::new(binary)).map_err(|e| {
                    format!("invalid STL: {ascii_err} (read as ASCII); {e} (read as binary)")
                })?
            }
            Err(e) => return Err(format!("invalid ASCII STL: {e}")),
        }
    } else {
        match binary_stl_size(bytes) {
            None => {
                return Err(format!(
                    "invalid STL: {} bytes is too short for a binary STL (84-byte header), \
                     and the file does not start with `solid` as an ASCII STL does",
                    bytes.len()
                ))
            }
            Some(needed) if needed > bytes.len() => {
                return Err(format!(
                    "invalid binary STL: truncated: the header announces {} triangles \
                     ({needed} bytes), the file has {} bytes",
                    (needed - 84) / 50,
                    bytes.len()
                ))
            }
            Some(_) => {}
        }
        stl_io::read_stl(&mut Cursor::new(bytes)).map_err(|e| format!("invalid binary STL: {e}"))?
    };
    let positions = mesh.vertices.iter().map(|v| v.0.map(f64::from)).collect();
    let triangles = mesh
        .faces
        .iter()
        .map(|f| -> Result<[u32; 3], String> {
            Ok([
                to_u32(f.vertices[0])?,
                to_u32(f.vertices[1])?,
                to_u32(f.vertices[2])?,
            ])
        })
        .collect::<Result<_, _>>()?;
    Ok((positions, triangles))
}

/// The size in bytes of a binary STL file with the triangle count its header states, if it
/// has a header.
fn binary_stl_size(bytes: &[u8]) -> Option<usize> {
    let count: [u8; 4] = bytes.get(80..84)?.try_into().ok()?;
    let count = usize::try_from(u32::from_le_bytes(count)).ok()?;
    count.checked_mul(50)?.checked_add(84)
}

/// Parses an OBJ file: all models merged, faces triangulated, points and lines ignored,
/// material libraries not read.
fn parse_obj(bytes: &[u8]) -> Result<RawMesh, String> {
    // `LoadOptions` has more fields when tobj's `merging` / `reordering` features are on
    // (feature unification may turn them on): they must keep their `false` defaults.
    #[allow(clippy::needless_update)]
    let options = tobj::LoadOptions {
        // Position indices only: with `single_index`, tobj would split vertices whose
        // faces carry different normals or texture coordinates, which opens the surface.
        single_index: false,
        triangulate: true,
        ignore_points: true,
        ignore_lines: true,
        ..Default::default()
    };
    let (models, _materials) = tobj::load_obj_buf(&mut Cursor::new(bytes), &options, |_| {
        Ok((Vec::new(), Default::default()))
    })
    .map_err(|e| format!("invalid OBJ: {e}"))?;
    let mut positions = Vec::new();
    let mut triangles = Vec::new();
    for model in &models {
        let mesh = &model.mesh;
        let offset = to_u32(positions.len())?;
        positions.extend(
            mesh.positions
                .chunks_exact(3)
                .map(|p| [f64::from(p[0]), f64::from(p[1]), f64::from(p[2])]),
        );
        if mesh.indices.len() % 3 != 0 {
            return Err(format!(
                "invalid OBJ: object `{}` has {} face indices, not a multiple of 3",
                model.name,
                mesh.indices.len()
            ));
        }
        for t in mesh.indices.chunks_exact(3) {
            let tri = [t[0], t[1], t[2]].map(|k| offset.checked_add(k));
            match tri {
                [Some(a), Some(b), Some(c)] => triangles.push([a, b, c]),
                _ => return Err("invalid OBJ: too many vertices".into()),
            }
        }
    }
    Ok((positions, triangles))
}

/// Merges vertices at bit-identical positions (`-0.0` and `0.0` taken as equal; NaNs by bit
/// pattern) and drops vertices no triangle uses; vertices are numbered in order of first use.
/// A mesh with an out-of-range index (which neither parser produces) is returned unchanged,
/// for [`validate_mesh`] to report.
fn weld(positions: Vec<[f64; 3]>, triangles: Vec<[u32; 3]>) -> RawMesh {
    let mut index_of: HashMap<[u64; 3], u32> = HashMap::new();
    let mut welded: Vec<[f64; 3]> = Vec::new();
    let mut new_triangles = Vec::with_capacity(triangles.len());
    for t in &triangles {
        let mut new = [0u32; 3];
        for (slot, &k) in new.iter_mut().zip(t) {
            let Some(p) = usize::try_from(k).ok().and_then(|k| positions.get(k)) else {
                return (positions, triangles);
            };
            // Adding +0.0 turns -0.0 into +0.0 and leaves every other value unchanged.
            let key = p.map(|c| (c + 0.0).to_bits());
            *slot = match index_of.get(&key) {
                Some(&i) => i,
                None => {
                    let Ok(i) = u32::try_from(welded.len()) else {
                        return (positions, triangles);
                    };
                    index_of.insert(key, i);
                    welded.push(*p);
                    i
                }
            };
        }
        new_triangles.push(new);
    }
    (welded, new_triangles)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn fixture(name: &str) -> PathBuf {
        PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/meshes/"
        ))
        .join(name)
    }

    /// A file in the temporary directory, removed when dropped.
    struct TempFile(PathBuf);

    impl TempFile {
        fn new(name: &str, contents: &[u8]) -> TempFile {
            static COUNTER: AtomicUsize = AtomicUsize::new(0);
            let unique = COUNTER.fetch_add(1, Ordering::SeqCst);
            let path = std::env::temp_dir().join(format!(
                "nonsmooth-mesh-test-{}-{unique}-{name}",
                std::process::id()
            ));
            std::fs::write(&path, contents).unwrap();
            TempFile(path)
        }
    }

    impl Drop for TempFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    fn ones() -> Vector3<f64> {
        Vector3::new(1.0, 1.0, 1.0)
    }

    fn bounding_box(mesh: &MeshData) -> (Vector3<f64>, Vector3<f64>) {
        let mut lo = Vector3::repeat(f64::INFINITY);
        let mut hi = Vector3::repeat(f64::NEG_INFINITY);
        for v in &mesh.vertices {
            lo = lo.inf(v);
            hi = hi.sup(v);
        }
        (lo, hi)
    }

    /// Signed volume: positive for a closed mesh with outward (counter-clockwise) winding.
    fn signed_volume(mesh: &MeshData) -> f64 {
        mesh.triangles
            .iter()
            .map(|t| {
                let [a, b, c] = t.map(|k| mesh.vertices[k as usize]);
                a.dot(&b.cross(&c)) / 6.0
            })
            .sum()
    }

    fn assert_unit_cube(mesh: &MeshData, scale: Vector3<f64>) {
        assert_eq!(mesh.vertices.len(), 8);
        assert_eq!(mesh.triangles.len(), 12);
        let (lo, hi) = bounding_box(mesh);
        assert_eq!(lo, -0.5 * scale.abs());
        assert_eq!(hi, 0.5 * scale.abs());
        let volume = scale.x * scale.y * scale.z;
        assert!((signed_volume(mesh) - volume.abs()).abs() < 1e-12);
        // Every triangle faces outward.
        for t in &mesh.triangles {
            let [a, b, c] = t.map(|k| mesh.vertices[k as usize]);
            assert!((b - a).cross(&(c - a)).dot(&(a + b + c)) > 0.0, "{t:?}");
        }
        assert!(mesh_warnings(mesh, "cube").is_empty());
    }

    fn cube() -> MeshData {
        read_mesh_file(&fixture("cube.obj"), ones(), "mesh").unwrap()
    }

    #[test]
    fn reads_stl_cube_fixture() {
        let mesh = read_mesh_file(&fixture("cube.stl"), ones(), "mesh").unwrap();
        assert_unit_cube(&mesh, ones());
    }

    #[test]
    fn reads_obj_cube_fixture() {
        assert_unit_cube(&cube(), ones());
    }

    #[test]
    fn stl_and_obj_fixtures_describe_the_same_cube() {
        let stl = read_mesh_file(&fixture("cube.stl"), ones(), "mesh").unwrap();
        let obj = cube();
        let mut a: Vec<[f64; 3]> = stl.vertices.iter().map(|v| [v.x, v.y, v.z]).collect();
        let mut b: Vec<[f64; 3]> = obj.vertices.iter().map(|v| [v.x, v.y, v.z]).collect();
        a.sort_by(|p, q| p.partial_cmp(q).unwrap());
        b.sort_by(|p, q| p.partial_cmp(q).unwrap());
        assert_eq!(a, b);
    }

    #[test]
    fn bytes_in_memory_read_as_the_file_does() {
        for (name, format) in [("cube.stl", MeshFormat::Stl), ("cube.obj", MeshFormat::Obj)] {
            let path = fixture(name);
            assert_eq!(MeshFormat::from_path(&path), Some(format));
            let bytes = std::fs::read(&path).unwrap();
            let scale = Vector3::new(2.0, -1.0, 0.5);
            let from_file = read_mesh_file(&path, scale, "mesh").unwrap();
            let from_bytes = read_mesh_bytes(&bytes, format, scale, "part", "mesh").unwrap();
            assert_eq!(from_bytes, from_file);
        }
        assert_eq!(
            MeshFormat::from_path(Path::new("part.STL")),
            Some(MeshFormat::Stl)
        );
        assert_eq!(MeshFormat::from_path(Path::new("part.ply")), None);
        // Errors name the mesh by the name given.
        match read_mesh_bytes(
            b"v 0 0 0\nf 1 2 3\n",
            MeshFormat::Obj,
            ones(),
            "part",
            "mesh",
        ) {
            Err(ModelError::Io { path, message }) => {
                assert_eq!(path, "part");
                assert!(message.contains("invalid OBJ"), "{message}");
            }
            other => panic!("unexpected result {other:?}"),
        }
        match read_mesh_bytes(b" \n", MeshFormat::Stl, ones(), "part", "mesh") {
            Err(ModelError::InvalidValue { location, reason }) => {
                assert_eq!(location.file.as_deref(), Some("part"));
                assert!(reason.contains("empty mesh"), "{reason}");
            }
            other => panic!("unexpected result {other:?}"),
        }
    }

    #[test]
    fn scale_is_applied_componentwise() {
        let scale = Vector3::new(2.0, 3.0, 4.0);
        for name in ["cube.stl", "cube.obj"] {
            let mesh = read_mesh_file(&fixture(name), scale, "mesh").unwrap();
            assert_unit_cube(&mesh, scale);
        }
    }

    #[test]
    fn mirroring_scale_keeps_outward_winding() {
        let scale = Vector3::new(-1.0, 2.0, 1.0);
        for name in ["cube.stl", "cube.obj"] {
            let mesh = read_mesh_file(&fixture(name), scale, "mesh").unwrap();
            assert_unit_cube(&mesh, scale);
        }
    }

    #[test]
    fn bad_scale_is_invalid_value() {
        for scale in [
            Vector3::new(1.0, f64::NAN, 1.0),
            Vector3::new(f64::INFINITY, 1.0, 1.0),
            Vector3::new(1.0, 1.0, 0.0),
        ] {
            let err =
                read_mesh_file(&fixture("cube.stl"), scale, "colliders[0].shape.mesh").unwrap_err();
            match err {
                ModelError::InvalidValue { location, reason } => {
                    assert_eq!(location.field, "colliders[0].shape.mesh");
                    assert!(reason.contains("scale"), "{reason}");
                }
                other => panic!("unexpected error {other:?}"),
            }
        }
    }

    #[test]
    fn uppercase_extension_is_accepted() {
        let stl = std::fs::read(fixture("cube.stl")).unwrap();
        let file = TempFile::new("cube.STL", &stl);
        assert_unit_cube(&read_mesh_file(&file.0, ones(), "mesh").unwrap(), ones());
        let obj = std::fs::read(fixture("cube.obj")).unwrap();
        let file = TempFile::new("cube.Obj", &obj);
        assert_unit_cube(&read_mesh_file(&file.0, ones(), "mesh").unwrap(), ones());
    }

    #[test]
    fn reads_binary_stl() {
        let mesh = cube();
        let triangles: Vec<stl_io::Triangle> = mesh
            .triangles
            .iter()
            .map(|t| {
                let [a, b, c] = t.map(|k| mesh.vertices[k as usize]);
                let n = (b - a).cross(&(c - a)).normalize();
                let f = |v: Vector3<f64>| stl_io::Vector::new([v.x as f32, v.y as f32, v.z as f32]);
                stl_io::Triangle {
                    normal: f(n),
                    vertices: [f(a), f(b), f(c)],
                }
            })
            .collect();
        let mut bytes = Vec::new();
        stl_io::write_stl(&mut bytes, triangles.iter()).unwrap();
        let file = TempFile::new("binary.stl", &bytes);
        assert_unit_cube(&read_mesh_file(&file.0, ones(), "mesh").unwrap(), ones());
        // A binary header that starts like an ASCII file.
        bytes[..12].copy_from_slice(b"solid binary");
        let file = TempFile::new("solid-header.stl", &bytes);
        assert_unit_cube(&read_mesh_file(&file.0, ones(), "mesh").unwrap(), ones());
    }

    /// An ASCII STL of the given triangles (vertices as written in the file).
    fn ascii_stl(header: &str, triangles: &[[&str; 3]]) -> String {
        let mut text = format!("{header}\n");
        for t in triangles {
            text += "facet normal 0 0 0\nouter loop\n";
            for v in t {
                text += &format!("vertex {v}\n");
            }
            text += "endloop\nendfacet\n";
        }
        text + "endsolid\n"
    }

    #[test]
    fn ascii_stl_with_bare_solid_header() {
        let text = std::fs::read_to_string(fixture("cube.stl")).unwrap();
        let text = text.replacen("solid cube\n", "solid\n", 1);
        let file = TempFile::new("bare.stl", text.as_bytes());
        assert_unit_cube(&read_mesh_file(&file.0, ones(), "mesh").unwrap(), ones());
    }

    #[test]
    fn signed_zeros_are_merged() {
        // A tetrahedron whose corner at the origin is written with a negative zero once.
        let (o, x, y, z) = ("0 0 0", "1 0 0", "0 1 0", "0 0 1");
        let text = ascii_stl(
            "solid tetra",
            &[[o, y, x], ["-0 0 0", x, z], [o, z, y], [x, y, z]],
        );
        let file = TempFile::new("tetra.stl", text.as_bytes());
        let mesh = read_mesh_file(&file.0, ones(), "mesh").unwrap();
        assert_eq!(mesh.vertices.len(), 4);
        assert!(mesh_warnings(&mesh, "tetra").is_empty());
        assert!((signed_volume(&mesh) - 1.0 / 6.0).abs() < 1e-15);
    }

    #[test]
    fn obj_with_normals_groups_and_quads_is_welded() {
        let obj = "\
mtllib missing.mtl
v -0.5 -0.5 -0.5
v 0.5 -0.5 -0.5
v 0.5 0.5 -0.5
v -0.5 0.5 -0.5
v -0.5 -0.5 0.5
v 0.5 -0.5 0.5
v 0.5 0.5 0.5
v -0.5 0.5 0.5
vn 0 0 -1
vn 0 0 1
vn 0 -1 0
vn 0 1 0
vn -1 0 0
vn 1 0 0
g bottom
f 1//1 4//1 3//1 2//1
g top
f 5//2 6//2 7//2 8//2
o sides
f 1//3 2//3 6//3 5//3
f 4//4 8//4 7//4 3//4
f -8//5 -4//5 -1//5 -5//5
f 2//6 3//6 7//6 6//6
l 1 7
";
        let file = TempFile::new("groups.obj", obj.as_bytes());
        assert_unit_cube(&read_mesh_file(&file.0, ones(), "mesh").unwrap(), ones());
    }

    #[test]
    fn cube_has_no_warnings() {
        assert!(mesh_warnings(&cube(), "cube.obj").is_empty());
    }

    #[test]
    fn open_mesh_warns() {
        let mut mesh = cube();
        mesh.triangles.pop();
        let warnings = mesh_warnings(&mesh, "examples/meshes/cube.obj (colliders[0])");
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("open"), "{}", warnings[0]);
        assert!(warnings[0].contains("3 edge"), "{}", warnings[0]);
        assert!(warnings[0].contains("examples/meshes/cube.obj (colliders[0])"));
    }

    #[test]
    fn non_manifold_mesh_warns() {
        let mut mesh = cube();
        let t = mesh.triangles[0];
        mesh.triangles.push([t[0], t[2], t[1]]);
        let warnings = mesh_warnings(&mesh, "m");
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("non-manifold"), "{}", warnings[0]);
        assert!(warnings[0].contains("3 edge"), "{}", warnings[0]);
    }

    #[test]
    fn degenerate_triangles_warn() {
        let mut mesh = cube();
        let t = mesh.triangles[0];
        mesh.triangles.push([t[0], t[0], t[1]]);
        let warnings = mesh_warnings(&mesh, "m");
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("degenerate"), "{}", warnings[0]);
        assert!(warnings[0].contains("triangles[12]"), "{}", warnings[0]);

        // Three distinct but collinear vertices.
        let mesh = MeshData {
            vertices: vec![
                Vector3::zeros(),
                Vector3::new(1.0, 0.0, 0.0),
                Vector3::new(2.0, 0.0, 0.0),
            ],
            triangles: vec![[0, 1, 2]],
        };
        let warnings = mesh_warnings(&mesh, "m");
        assert!(
            warnings.iter().any(|w| w.contains("degenerate")),
            "{warnings:?}"
        );
        assert!(warnings.iter().any(|w| w.contains("open")), "{warnings:?}");
    }

    #[test]
    fn warnings_do_not_panic_on_invalid_indices() {
        let mut mesh = cube();
        mesh.triangles.push([0, 1, 99]);
        let warnings = mesh_warnings(&mesh, "m");
        assert!(
            warnings.iter().any(|w| w.contains("out of range")),
            "{warnings:?}"
        );
    }

    #[test]
    fn missing_file_is_io_error_naming_the_path() {
        let path = fixture("no-such-mesh.stl");
        match read_mesh_file(&path, ones(), "mesh").unwrap_err() {
            ModelError::Io { path: p, message } => {
                assert_eq!(p, path.display().to_string());
                assert!(message.contains("no such file"), "{message}");
            }
            other => panic!("unexpected error {other:?}"),
        }
    }

    #[test]
    fn unknown_extension_is_an_error() {
        let file = TempFile::new("cube.ply", b"ply\n");
        match read_mesh_file(&file.0, ones(), "mesh").unwrap_err() {
            ModelError::Io { path, message } => {
                assert_eq!(path, file.0.display().to_string());
                assert!(
                    message.contains(".stl") && message.contains(".obj"),
                    "{message}"
                );
            }
            other => panic!("unexpected error {other:?}"),
        }
        assert!(read_mesh_file(Path::new("no_extension"), ones(), "mesh").is_err());
    }

    #[test]
    fn empty_stl_is_a_typed_error() {
        for (name, contents) in [
            ("empty.stl", &b""[..]),
            ("blank.stl", &b"\n  \n"[..]),
            ("no-facets.stl", &b"solid empty\nendsolid empty\n"[..]),
            ("no-faces.obj", &b"v 0 0 0\nv 1 0 0\n"[..]),
        ] {
            let file = TempFile::new(name, contents);
            let err = read_mesh_file(&file.0, ones(), "colliders[3].shape.mesh").unwrap_err();
            match &err {
                ModelError::InvalidValue { location, reason } => {
                    assert_eq!(location.file, Some(file.0.display().to_string()));
                    assert_eq!(location.field, "colliders[3].shape.mesh");
                    assert!(reason.contains("empty"), "{reason}");
                }
                other => panic!("{name}: unexpected error {other:?}"),
            }
            assert!(err.to_string().contains("empty"));
        }
    }

    #[test]
    fn parse_errors_are_io_errors_with_the_parser_message() {
        let file = TempFile::new(
            "bad.stl",
            b"solid bad\nfacet normal 0 0 1\nouter loop\nvertex 0 0 x\n",
        );
        match read_mesh_file(&file.0, ones(), "mesh").unwrap_err() {
            ModelError::Io { path, message } => {
                assert_eq!(path, file.0.display().to_string());
                assert!(message.contains("invalid ASCII STL"), "{message}");
                assert!(message.contains("invalid float literal"), "{message}");
            }
            other => panic!("unexpected error {other:?}"),
        }
        // Truncated binary STL: the header promises more triangles than the file holds.
        let mut bytes = vec![0u8; 80];
        bytes.extend_from_slice(&5u32.to_le_bytes());
        bytes.extend_from_slice(&[0u8; 60]);
        let file = TempFile::new("truncated.stl", &bytes);
        match read_mesh_file(&file.0, ones(), "mesh").unwrap_err() {
            ModelError::Io { message, .. } => {
                assert!(message.contains("truncated"), "{message}");
            }
            other => panic!("unexpected error {other:?}"),
        }
        let file = TempFile::new("short.stl", b"\x01\x02");
        assert!(matches!(
            read_mesh_file(&file.0, ones(), "mesh"),
            Err(ModelError::Io { .. })
        ));
        let file = TempFile::new("bad.obj", b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 7\n");
        match read_mesh_file(&file.0, ones(), "mesh").unwrap_err() {
            ModelError::Io { message, .. } => {
                assert!(message.contains("invalid OBJ"), "{message}");
            }
            other => panic!("unexpected error {other:?}"),
        }
    }

    #[test]
    fn nan_vertex_is_non_finite_naming_the_vertex() {
        let mut mesh = cube();
        mesh.vertices[7].y = f64::NAN;
        match validate_mesh(&mesh, Some("cube.obj"), "colliders[3].shape.mesh").unwrap_err() {
            ModelError::NonFinite { location, value } => {
                assert_eq!(location.file.as_deref(), Some("cube.obj"));
                assert_eq!(location.field, "colliders[3].shape.mesh.vertices[7]");
                assert!(value.is_nan());
            }
            other => panic!("unexpected error {other:?}"),
        }
        // Through a file: names the file.
        let file = TempFile::new("nan.obj", b"v 0 0 0\nv 1 0 0\nv 0 nan 0\nf 1 2 3\n");
        match read_mesh_file(&file.0, ones(), "mesh").unwrap_err() {
            ModelError::NonFinite { location, .. } => {
                assert_eq!(location.file, Some(file.0.display().to_string()));
                assert_eq!(location.field, "mesh.vertices[2]");
            }
            other => panic!("unexpected error {other:?}"),
        }
    }

    #[test]
    fn out_of_range_index_is_an_error() {
        let mut mesh = cube();
        mesh.triangles[4][1] = 8;
        match validate_mesh(&mesh, None, "mesh").unwrap_err() {
            ModelError::InvalidValue { location, reason } => {
                assert_eq!(location.field, "mesh.triangles[4]");
                assert!(reason.contains("out of range"), "{reason}");
            }
            other => panic!("unexpected error {other:?}"),
        }
        mesh.triangles[4][1] = u32::MAX;
        assert!(validate_mesh(&mesh, None, "mesh").is_err());
    }

    #[test]
    fn validate_accepts_the_cube_and_rejects_an_empty_mesh() {
        assert_eq!(validate_mesh(&cube(), None, "mesh"), Ok(()));
        let empty = MeshData {
            vertices: vec![],
            triangles: vec![],
        };
        let err = validate_mesh(&empty, None, "mesh").unwrap_err();
        assert!(err.to_string().contains("empty mesh"), "{err}");
    }
}
