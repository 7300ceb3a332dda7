//! A position-preserving view of a TOML document, used to turn field paths of semantic errors
//! into 1-based line numbers.
//!
//! The document is parsed a second time into a tree whose every node carries the byte span
//! `toml` reports for it (through [`toml::Spanned`]); a field path such as
//! `bodies[2].inertia` is then looked up in the tree, falling back to the nearest enclosing
//! node when the field itself is absent (e.g. a defaulted key).

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// One step of a field path: a table key or an array index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    /// A table key.
    Key(String),
    /// A (0-based) array index.
    Index(usize),
}

/// A field path, e.g. `bodies[2].inertia`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldPath(pub Vec<Seg>);

impl FieldPath {
    /// The empty path (the document root).
    pub fn root() -> Self {
        FieldPath(Vec::new())
    }

    /// This path extended by a key.
    pub fn key(&self, key: &str) -> Self {
        let mut p = self.clone();
        p.0.push(Seg::Key(key.to_string()));
        p
    }

    /// This path extended by an index.
    pub fn idx(&self, index: usize) -> Self {
        let mut p = self.clone();
        p.0.push(Seg::Index(index));
        p
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for seg in &self.0 {
            match seg {
                Seg::Key(k) => {
                    if !first {
                        write!(f, ".")?;
                    }
                    write!(f, "{k}")?;
                }
                Seg::Index(i) => write!(f, "[{i}]")?,
            }
            first = false;
        }
        Ok(())
    }
}

/// A TOML value with its byte span (where `toml` reports one; implicit tables created by
/// dotted keys get the union of their children's spans).
#[derive(Debug, Clone)]
pub struct SNode {
    /// Byte range of the value in the source.
    pub span: Option<Range<usize>>,
    /// The value.
    pub node: Node,
}

/// A TOML value whose descendants keep their spans.
#[derive(Debug, Clone)]
pub enum Node {
    /// A table.
    Table(BTreeMap<String, SNode>),
    /// An array.
    Array(Vec<SNode>),
    /// A float (kept to detect `nan` / `inf` literals).
    Float(f64),
    /// Any other scalar (string, integer, boolean, datetime).
    Other,
}

// The private protocol by which `toml` hands out spans (`serde_spanned` 0.6): a struct with
// these three fields, requested under this name.
const SPANNED_NAME: &str = "$__serde_spanned_private_Spanned";
const SPANNED_START: &str = "$__serde_spanned_private_start";
const SPANNED_END: &str = "$__serde_spanned_private_end";
const SPANNED_VALUE: &str = "$__serde_spanned_private_value";
const SPANNED_FIELDS: &[&str] = &[SPANNED_START, SPANNED_END, SPANNED_VALUE];

fn union_span<'a>(children: impl Iterator<Item = &'a SNode>) -> Option<Range<usize>> {
    children
        .filter_map(|c| c.span.clone())
        .reduce(|a, b| a.start.min(b.start)..a.end.max(b.end))
}

struct SNodeVisitor;

impl SNodeVisitor {
    fn plain(node: Node) -> SNode {
        let span = match &node {
            Node::Table(t) => union_span(t.values()),
            Node::Array(a) => union_span(a.iter()),
            _ => None,
        };
        SNode { span, node }
    }
}

impl<'de> Visitor<'de> for SNodeVisitor {
    type Value = SNode;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a TOML value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<SNode, E> {
        Ok(Self::plain(Node::Other))
    }
    fn visit_i64<E>(self, _: i64) -> Result<SNode, E> {
        Ok(Self::plain(Node::Other))
    }
    fn visit_u64<E>(self, _: u64) -> Result<SNode, E> {
        Ok(Self::plain(Node::Other))
    }
    fn visit_f64<E>(self, v: f64) -> Result<SNode, E> {
        Ok(Self::plain(Node::Float(v)))
    }
    fn visit_str<E>(self, _: &str) -> Result<SNode, E> {
        Ok(Self::plain(Node::Other))
    }
    fn visit_string<E>(self, _: String) -> Result<SNode, E> {
        Ok(Self::plain(Node::Other))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<SNode, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<SNode>()? {
            items.push(item);
        }
        Ok(Self::plain(Node::Array(items)))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<SNode, A::Error> {
        let Some(first) = map.next_key::<String>()? else {
            return Ok(Self::plain(Node::Table(BTreeMap::new())));
        };
        if first == SPANNED_START {
            // A spanned value: start, end, value.
            let start: usize = map.next_value()?;
            let mut end = start;
            let mut value = SNode {
                span: None,
                node: Node::Other,
            };
            while let Some(key) = map.next_key::<String>()? {
                if key == SPANNED_END {
                    end = map.next_value()?;
                } else {
                    value = map.next_value::<Unspanned>()?.0;
                }
            }
            return Ok(SNode {
                span: Some(start..end),
                node: value.node,
            });
        }
        let mut table = BTreeMap::new();
        let value = map.next_value::<SNode>()?;
        table.insert(first, value);
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value::<SNode>()?;
            table.insert(key, value);
        }
        Ok(Self::plain(Node::Table(table)))
    }
}

/// The value inside a spanned wrapper: deserialized without asking for a span again.
struct Unspanned(SNode);

impl<'de> Deserialize<'de> for Unspanned {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Unspanned, D::Error> {
        d.deserialize_any(SNodeVisitor).map(Unspanned)
    }
}

impl<'de> Deserialize<'de> for SNode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<SNode, D::Error> {
        d.deserialize_struct(SPANNED_NAME, SPANNED_FIELDS, SNodeVisitor)
    }
}

/// A parsed document with spans, plus the line-start table of its source.
pub struct SpanIndex {
    root: SNode,
    line_starts: Vec<usize>,
}

impl SpanIndex {
    /// Parses `src`; a syntax error is returned as toml's own error.
    pub fn parse(src: &str) -> Result<Self, toml::de::Error> {
        let root: SNode = toml::from_str(src)?;
        Ok(SpanIndex {
            root,
            line_starts: line_starts(src),
        })
    }

    /// 1-based line of the node at `path`, or of its nearest enclosing node that has a span.
    pub fn line_of(&self, path: &FieldPath) -> Option<usize> {
        let mut node = &self.root.node;
        let mut best: Option<usize> = None;
        for seg in &path.0 {
            let next = match (seg, node) {
                (Seg::Key(k), Node::Table(t)) => t.get(k),
                (Seg::Index(i), Node::Array(a)) => a.get(*i),
                _ => None,
            };
            match next {
                Some(sp) => {
                    if let Some(span) = &sp.span {
                        best = Some(span.start);
                    }
                    node = &sp.node;
                }
                None => break,
            }
        }
        best.map(|offset| offset_to_line(&self.line_starts, offset))
    }

    /// The path of the deepest node whose span contains `offset` (for errors reported by
    /// byte span only).
    pub fn path_at(&self, offset: usize) -> FieldPath {
        let mut path = FieldPath::root();
        let mut node = &self.root.node;
        let inside = |v: &SNode| v.span.as_ref().is_some_and(|s| s.contains(&offset));
        loop {
            let found = match node {
                Node::Table(t) => t
                    .iter()
                    .find(|(_, v)| inside(v))
                    .map(|(k, v)| (Seg::Key(k.clone()), v)),
                Node::Array(a) => a
                    .iter()
                    .enumerate()
                    .find(|(_, v)| inside(v))
                    .map(|(i, v)| (Seg::Index(i), v)),
                _ => None,
            };
            match found {
                Some((seg, v)) => {
                    path.0.push(seg);
                    node = &v.node;
                }
                None => return path,
            }
        }
    }

    /// The first non-finite float in the document (`nan`, `inf` literals), with its path and
    /// line.
    pub fn first_non_finite(&self) -> Option<(FieldPath, usize, f64)> {
        fn walk(
            node: &Node,
            span: Option<&Range<usize>>,
            path: &mut FieldPath,
            out: &mut Option<(FieldPath, usize, f64)>,
        ) {
            if out.is_some() {
                return;
            }
            match node {
                Node::Float(v) if !v.is_finite() => {
                    *out = Some((path.clone(), span.map_or(0, |s| s.start), *v));
                }
                Node::Table(t) => {
                    for (k, v) in t {
                        path.0.push(Seg::Key(k.clone()));
                        walk(&v.node, v.span.as_ref(), path, out);
                        path.0.pop();
                    }
                }
                Node::Array(a) => {
                    for (i, v) in a.iter().enumerate() {
                        path.0.push(Seg::Index(i));
                        walk(&v.node, v.span.as_ref(), path, out);
                        path.0.pop();
                    }
                }
                _ => {}
            }
        }
        let mut out = None;
        walk(&self.root.node, None, &mut FieldPath::root(), &mut out);
        out.map(|(p, offset, v)| (p, offset_to_line(&self.line_starts, offset), v))
    }

    /// 1-based line of a byte offset.
    pub fn line_at(&self, offset: usize) -> usize {
        offset_to_line(&self.line_starts, offset)
    }
}

/// Byte offsets at which lines start.
pub fn line_starts(src: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(src.match_indices('\n').map(|(i, _)| i + 1))
        .collect()
}

/// 1-based line containing byte `offset`.
pub fn offset_to_line(line_starts: &[usize], offset: usize) -> usize {
    match line_starts.binary_search(&offset) {
        Ok(i) => i + 1,
        Err(i) => i.max(1),
    }
}
