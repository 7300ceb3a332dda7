//! The MJCF document as an owned element tree: every `<include>` replaced by the children of
//! the included file's `<mujoco>` root, every element and attribute knowing its file and
//! 1-based line (for error locations).

use std::path::{Path, PathBuf};
use std::rc::Rc;

use crate::error::{Location, ModelError};
use crate::io::spans::{line_starts, offset_to_line};

/// One attribute with the line its value is on.
#[derive(Debug, Clone)]
pub(crate) struct Attr {
    pub name: String,
    pub value: String,
    pub line: usize,
}

/// One XML element (comments, text and processing instructions dropped).
#[derive(Debug, Clone)]
pub(crate) struct Element {
    pub tag: String,
    pub attrs: Vec<Attr>,
    pub children: Vec<Element>,
    /// The file the element is written in (`None`: a string without a file name).
    pub file: Option<Rc<str>>,
    pub line: usize,
}

impl Element {
    /// The value of attribute `name` written on the element itself.
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|a| a.name == name)
            .map(|a| a.value.as_str())
    }

    /// The field naming the element (and `attr`): `tag`, `tag[name]`, `tag[name].attr`.
    pub fn field(&self, attr: Option<&str>) -> String {
        let mut f = match self.attr("name") {
            Some(n) => format!("{}[{n}]", self.tag),
            None => self.tag.clone(),
        };
        if let Some(a) = attr {
            f.push('.');
            f.push_str(a);
        }
        f
    }

    /// Where the element (or its attribute `attr`, on that attribute's line) is.
    pub fn loc(&self, attr: Option<&str>) -> Location {
        let line = attr
            .and_then(|a| self.attrs.iter().find(|x| x.name == a))
            .map_or(self.line, |a| a.line);
        Location {
            file: self.file.as_deref().map(str::to_string),
            line: Some(line),
            field: self.field(attr),
        }
    }

    /// A [`ModelError::Mjcf`] at the element (or its attribute).
    pub fn error(&self, attr: Option<&str>, message: impl Into<String>) -> ModelError {
        ModelError::Mjcf {
            location: self.loc(attr),
            message: message.into(),
        }
    }
}

/// The deepest nesting of elements the importer reads (the `<mujoco>` root is depth 1). The
/// document is read recursively, so a deeper nesting would overflow the stack; the bodies of
/// real models nest a few tens of levels deep.
pub(crate) const MAX_DEPTH: usize = 200;

/// The error of an element nested deeper than [`MAX_DEPTH`].
fn too_deep(location: Location) -> ModelError {
    ModelError::Mjcf {
        location,
        message: format!(
            "elements are nested more than {MAX_DEPTH} deep (the deepest nesting the importer \
             reads)"
        ),
    }
}

/// Parses `src` (from `file`, if any) and expands its includes. Include paths are relative
/// to the including file's directory, then to the main file's directory (MuJoCo's rule).
pub(crate) fn load(src: &str, file: Option<&str>) -> Result<Element, ModelError> {
    let main_dir = file
        .and_then(|f| Path::new(f).parent())
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let mut chain = Vec::new();
    if let Some(f) = file {
        chain.push(canonical(Path::new(f)));
    }
    let root = parse_one(src, file, &main_dir, &main_dir, &mut chain)?;
    if root.tag != "mujoco" {
        return Err(root.error(None, "the root element must be <mujoco>"));
    }
    // Each file's nesting is bounded when it is read; an include inside a nested element adds
    // the depths of the two files.
    let mut stack = vec![(&root, 1)];
    while let Some((el, depth)) = stack.pop() {
        if depth > MAX_DEPTH {
            return Err(too_deep(el.loc(None)));
        }
        stack.extend(el.children.iter().map(|c| (c, depth + 1)));
    }
    Ok(root)
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

fn parse_one(
    src: &str,
    file: Option<&str>,
    dir: &Path,
    main_dir: &Path,
    chain: &mut Vec<PathBuf>,
) -> Result<Element, ModelError> {
    let options = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..roxmltree::ParsingOptions::default()
    };
    let doc =
        roxmltree::Document::parse_with_options(src, options).map_err(|e| ModelError::Syntax {
            location: Location {
                file: file.map(str::to_string),
                line: Some(e.pos().row as usize),
                field: String::new(),
            },
            message: format!("XML: {e}"),
        })?;
    let starts = line_starts(src);
    // The depth is checked before the recursive conversion, without recursion: the elements
    // in document order, with the stack of their open ancestors.
    let mut open: Vec<roxmltree::Node> = Vec::new();
    for n in doc.root().descendants().filter(roxmltree::Node::is_element) {
        let parent = n.parent_element();
        while open.last().is_some_and(|top| Some(*top) != parent) {
            open.pop();
        }
        open.push(n);
        if open.len() > MAX_DEPTH {
            return Err(too_deep(Location {
                file: file.map(str::to_string),
                line: Some(offset_to_line(&starts, n.range().start)),
                field: n.tag_name().name().to_string(),
            }));
        }
    }
    let file: Option<Rc<str>> = file.map(Rc::from);
    let mut root = convert(doc.root_element(), &file, &starts);
    expand_includes(&mut root, dir, main_dir, chain)?;
    Ok(root)
}

/// The element tree of `node`; `starts` are the byte offsets where the lines of the document's
/// text start (a line is found by binary search: `roxmltree`'s `text_pos_at` scans the text
/// from its start at every call, quadratic in the size of the file).
fn convert(node: roxmltree::Node, file: &Option<Rc<str>>, starts: &[usize]) -> Element {
    let line = |pos: usize| offset_to_line(starts, pos);
    Element {
        tag: node.tag_name().name().to_string(),
        attrs: node
            .attributes()
            .map(|a| Attr {
                name: a.name().to_string(),
                value: a.value().to_string(),
                line: line(a.range_value().start),
            })
            .collect(),
        children: node
            .children()
            .filter(roxmltree::Node::is_element)
            .map(|c| convert(c, file, starts))
            .collect(),
        file: file.clone(),
        line: line(node.range().start),
    }
}

fn expand_includes(
    el: &mut Element,
    dir: &Path,
    main_dir: &Path,
    chain: &mut Vec<PathBuf>,
) -> Result<(), ModelError> {
    let mut out = Vec::with_capacity(el.children.len());
    for mut child in std::mem::take(&mut el.children) {
        if child.tag != "include" {
            expand_includes(&mut child, dir, main_dir, chain)?;
            out.push(child);
            continue;
        }
        let Some(name) = child.attr("file") else {
            return Err(child.error(Some("file"), "<include> without a `file` attribute"));
        };
        let candidates = [dir.join(name), main_dir.join(name)];
        let Some(path) = candidates.iter().find(|p| p.is_file()) else {
            return Err(child.error(
                Some("file"),
                format!(
                    "included file `{name}` not found (looked at {})",
                    candidates
                        .iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        };
        let canon = canonical(path);
        if chain.contains(&canon) {
            let names: Vec<String> = chain
                .iter()
                .chain(std::iter::once(&canon))
                .map(|p| p.display().to_string())
                .collect();
            return Err(child.error(
                Some("file"),
                format!("include cycle: {}", names.join(" → ")),
            ));
        }
        let text = std::fs::read_to_string(path).map_err(|e| {
            child.error(
                Some("file"),
                format!("cannot read included file `{}`: {e}", path.display()),
            )
        })?;
        let path_name = path.display().to_string();
        let sub_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        chain.push(canon);
        let root = parse_one(&text, Some(&path_name), &sub_dir, main_dir, chain)?;
        chain.pop();
        if root.tag != "mujoco" {
            return Err(root.error(
                None,
                "the root element of an included file must be <mujoco>",
            ));
        }
        out.extend(root.children);
    }
    el.children = out;
    Ok(())
}
