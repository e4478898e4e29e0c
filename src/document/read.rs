//! The one reader of documents: bytes a command read from a file become a
//! typed [`Document`] of one of the kinds that command takes, or a one-line
//! refusal. Every command (report, diff, merge, plan, plan --p99) goes
//! through [`open`] for the steps they share: the JSON, stripebench's,
//! this schema version, which kind. [`read`] then checks the figures add up
//! and parses the typed document.
//!
//! Which kind a document is: its `kind` tag, which every document written
//! since the tag exists carries; a document without it (an older
//! stripebench's) is told by its shape, each kind having keys of its own.
//!
//! Memory: the bytes are parsed in place. The syntax is checked without
//! building anything, the top level is kept as the text of each key, and a
//! whole document is never held as a `serde_json::Value` (which costs about
//! twenty times the document's size): the arithmetic parses one part at a
//! time (`merge::check`), and the document is deserialized straight into its
//! typed struct.
//!
//! Each command has said its refusals in its own words since it was first
//! written, and scripts match them: the texts stay the command's
//! ([`Reader`]), the reasons are one enum ([`ReadError`]).

use std::fmt;

use serde::Deserialize;
use serde_json::Value;

use crate::document::advise::FindingsDocument;
use crate::document::compare::CompareDocument;
use crate::document::error::{Error, Result};
pub use crate::document::error::{Origin, ReadError, Reader, Why};
pub use crate::document::kind::{Kind, READ_BACK, RESULTS};
pub(crate) use crate::document::lazy::{Lazy, Object};
use crate::document::merge::MergedDocument;
use crate::document::run::{RunDocument, SCHEMA_VERSION};
use crate::document::sweep::SweepDocument;

/// A document of one of the kinds a result is.
#[derive(Debug, Clone)]
pub enum Document {
    Run(Box<RunDocument>),
    Sweep(Box<SweepDocument>),
    Compare(Box<CompareDocument>),
    Merge(Box<MergedDocument>),
    Findings(Box<FindingsDocument>),
}

impl Document {
    pub fn kind(&self) -> Kind {
        match self {
            Document::Run(_) => Kind::Run,
            Document::Sweep(_) => Kind::Sweep,
            Document::Compare(_) => Kind::Compare,
            Document::Merge(_) => Kind::Merge,
            Document::Findings(_) => Kind::Findings,
        }
    }
}

/// The bytes of a file a command read, and the file as shown in messages.
#[derive(Debug, Clone)]
pub struct Source {
    pub shown: String,
    pub bytes: Vec<u8>,
}

/// A document as a command read it: the file as shown in messages, and
/// the document.
#[derive(Debug, Clone)]
pub struct Given {
    pub shown: String,
    pub document: Document,
}

impl Given {
    /// As a document to merge: a run or an earlier merge (what [`read`]
    /// with [`Reader::Merge`] gives; a sweep or compare is refused as there).
    pub fn into_merge(self) -> Result<crate::document::merge::Given> {
        use crate::document::merge::{Given as Merged, Input};
        let input = match self.document {
            Document::Run(d) => Input::Run(d),
            Document::Merge(m) => Input::Merged(m),
            Document::Sweep(_) | Document::Compare(_) | Document::Findings(_) => {
                let origin = Origin {
                    shown: self.shown,
                    reader: Reader::Merge,
                };
                return refuse(&origin, Why::WrongKind(Some(Kind::Sweep)));
            }
        };
        Ok(Merged {
            shown: self.shown,
            input,
        })
    }
}

fn refuse<T>(origin: &Origin, why: Why) -> Result<T> {
    Err(Error::Read(ReadError::Refused {
        origin: origin.clone(),
        why,
    }))
}

/// A JSON value parsed for its syntax only: every token is read, as a
/// `Value` would read it (numbers out of range are refused as there), and
/// nothing is kept. `IgnoredAny` would skip numbers without reading them.
struct Syntax;

impl<'de> Deserialize<'de> for Syntax {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Syntax, D::Error> {
        d.deserialize_any(SyntaxVisitor)
    }
}

struct SyntaxVisitor;

impl<'de> serde::de::Visitor<'de> for SyntaxVisitor {
    type Value = Syntax;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> std::result::Result<Syntax, E> {
        Ok(Syntax)
    }
    fn visit_i64<E>(self, _: i64) -> std::result::Result<Syntax, E> {
        Ok(Syntax)
    }
    fn visit_u64<E>(self, _: u64) -> std::result::Result<Syntax, E> {
        Ok(Syntax)
    }
    fn visit_f64<E>(self, _: f64) -> std::result::Result<Syntax, E> {
        Ok(Syntax)
    }
    fn visit_str<E>(self, _: &str) -> std::result::Result<Syntax, E> {
        Ok(Syntax)
    }
    fn visit_unit<E>(self) -> std::result::Result<Syntax, E> {
        Ok(Syntax)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> std::result::Result<Syntax, A::Error> {
        while seq.next_element::<Syntax>()?.is_some() {}
        Ok(Syntax)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<Syntax, A::Error> {
        while map.next_entry::<Syntax, Syntax>()?.is_some() {}
        Ok(Syntax)
    }
}

/// A document whose JSON, schema version and kind were checked, kept as
/// the text of its top level.
pub(crate) struct Opened<'a> {
    pub(crate) origin: Origin,
    pub(crate) top: Object<'a>,
    /// The kind it is, by its tag or its shape; `None` for none known.
    pub(crate) kind: Option<Kind>,
    pub(crate) bytes: &'a [u8],
}

/// Which kind a document is: its `kind` tag, or (a document of an older
/// stripebench) its shape, each kind having keys of its own.
fn detect(top: &Object) -> Option<Kind> {
    if let Some(k) = top.str("kind").as_deref().and_then(Kind::from_tag) {
        return Some(k);
    }
    // A plan has points too: its fit tells it apart first.
    if top.has("fit") && top.has("predictions") {
        Some(Kind::Plan)
    } else if top.has("points") {
        Some(Kind::Sweep)
    } else if top.has("phases") {
        Some(Kind::Compare)
    } else if top.has("workers") && top.has("targets") {
        Some(Kind::Run)
    } else if top.has("root") && top.has("resolved") {
        Some(Kind::Topology)
    } else {
        None
    }
}

/// The steps every reader shares, in the order each command has always
/// taken them: the JSON, stripebench's, this schema version, measured,
/// and the kind (not yet whether the command takes it).
pub(crate) fn open<'a>(bytes: &'a [u8], origin: &Origin) -> Result<Opened<'a>> {
    if let Err(e) = serde_json::from_slice::<Syntax>(bytes) {
        return refuse(
            origin,
            Why::NotJson {
                detail: e.to_string(),
                eof: e.is_eof(),
            },
        );
    }
    let top: Option<Object> = serde_json::from_slice(bytes).ok().map(Object);
    let is_object = top.is_some();
    let top = top.unwrap_or_default();
    let kind = detect(&top);
    let version = top.value("schema_version");
    let opened = |kind| Opened {
        origin: origin.clone(),
        top: top.clone(),
        kind,
        bytes,
    };
    let ours = u64::from(SCHEMA_VERSION);
    match origin.reader {
        Reader::Report => {
            if !top.has("schema_version") {
                return refuse(origin, Why::NoSchemaVersion);
            }
            if version.as_u64() != Some(ours) {
                return refuse(origin, Why::SchemaVersion(version.to_string()));
            }
            if top.value("measured").as_bool() == Some(false) {
                return refuse(origin, Why::Unmeasured);
            }
        }
        Reader::Diff => {
            if !is_object {
                return refuse(origin, Why::NotAnObject);
            }
            if !top.has("schema_version") {
                return match kind {
                    Some(k @ (Kind::Plan | Kind::Topology)) => {
                        refuse(origin, Why::WrongKind(Some(k)))
                    }
                    _ => refuse(origin, Why::NoSchemaVersion),
                };
            }
            let tool = top.value("tool");
            if tool.get("name").and_then(Value::as_str) != Some("stripebench") {
                let name = tool.get("name").map_or("missing".into(), |n| n.to_string());
                return refuse(origin, Why::OtherTool(name));
            }
            if version.as_u64() != Some(ours) {
                return refuse(origin, Why::SchemaVersion(version.to_string()));
            }
            // A merge says it is one before anything else is asked.
            if kind == Some(Kind::Merge) {
                return Ok(opened(kind));
            }
            if kind == Some(Kind::Diff) {
                return refuse(origin, Why::WrongKind(kind));
            }
            if top.value("measured").as_bool() == Some(false) {
                return refuse(origin, Why::Unmeasured);
            }
        }
        Reader::Merge => match version.as_u64() {
            None => return refuse(origin, Why::NoSchemaVersion),
            Some(n) if n != ours => return refuse(origin, Why::SchemaVersion(n.to_string())),
            Some(_) => {}
        },
        Reader::Plan | Reader::Curve => {
            if !top.has("schema_version") {
                return refuse(origin, Why::NoSchemaVersion);
            }
        }
    }
    Ok(opened(kind))
}

/// Reads a document of one of the kinds in `accepts` (of those a result
/// is, [`RESULTS`]): refuses, in one line, what is not JSON, not
/// stripebench's, of another schema version, of another kind, or has
/// figures that do not add up.
pub fn read(bytes: &[u8], origin: &Origin, accepts: &[Kind]) -> Result<Document> {
    let o = open(bytes, origin)?;
    let kind = match (origin.reader, o.kind) {
        // merge takes everything that is not a sweep or a compare as a
        // run, and lets the arithmetic say what is wrong with it.
        (Reader::Merge, Some(k @ (Kind::Sweep | Kind::Compare))) => {
            return refuse(origin, Why::WrongKind(Some(k)))
        }
        (Reader::Merge, Some(Kind::Merge)) => Kind::Merge,
        (Reader::Merge, _) => Kind::Run,
        (_, Some(k)) if accepts.contains(&k) => k,
        (_, k) => return refuse(origin, Why::WrongKind(k)),
    };
    if !accepts.contains(&kind) {
        return refuse(origin, Why::WrongKind(Some(kind)));
    }
    crate::document::merge::check_document_arithmetic(&o.top, &origin.shown, kind)?;
    typed(&o, kind)
}

/// The document parsed into its typed struct, straight from its bytes.
fn typed(o: &Opened, kind: Kind) -> Result<Document> {
    fn parse<T: serde::de::DeserializeOwned>(o: &Opened, kind: Kind) -> Result<Box<T>> {
        serde_json::from_slice::<T>(o.bytes)
            .map(Box::new)
            .or_else(|e| {
                refuse(
                    &o.origin,
                    Why::Invalid {
                        kind,
                        detail: without_position(&e),
                    },
                )
            })
    }
    Ok(match kind {
        Kind::Sweep => Document::Sweep(parse(o, kind)?),
        Kind::Compare => Document::Compare(parse(o, kind)?),
        Kind::Merge => Document::Merge(parse(o, kind)?),
        Kind::Findings => Document::Findings(parse(o, kind)?),
        _ => Document::Run(parse(o, kind)?),
    })
}

/// A serde error's message without " at line L column C": the refusal
/// names the field, as it did when documents were parsed from a `Value`.
fn without_position(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let tail = format!(" at line {} column {}", e.line(), e.column());
    text.strip_suffix(&tail)
        .map_or(text.clone(), str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(text: &str, reader: Reader) -> String {
        let o = Origin {
            shown: "f".into(),
            reader,
        };
        read(text.as_bytes(), &o, &RESULTS).unwrap_err().to_string()
    }

    #[test]
    fn the_tag_decides_the_kind_and_the_shape_without_it() {
        let top = |t: &'static str| -> Object<'static> { Object(serde_json::from_str(t).unwrap()) };
        assert_eq!(
            detect(&top(r#"{"kind": "sweep", "workers": 1, "targets": 1}"#)),
            Some(Kind::Sweep)
        );
        assert_eq!(
            detect(&top(r#"{"workers": 1, "targets": 1}"#)),
            Some(Kind::Run)
        );
        assert_eq!(
            detect(&top(r#"{"kind": "nonsense", "points": []}"#)),
            Some(Kind::Sweep)
        );
        assert_eq!(detect(&top(r#"{"fit": 1}"#)), None);
    }

    #[test]
    fn a_wrong_kind_is_refused_in_each_commands_words() {
        let diff = r#"{"schema_version": 1, "tool": {"name": "stripebench"}, "kind": "diff"}"#;
        assert!(refused(diff, Reader::Diff).ends_with("f is a diff document: diff takes run, sweep, compare, merge or findings (advise) documents written with --json"));
        assert!(refused(diff, Reader::Report).contains("of a kind this command does not take"));
        let sweep = r#"{"schema_version": 1, "kind": "sweep"}"#;
        assert_eq!(
            refused(sweep, Reader::Merge),
            "f is a sweep or compare document: merge takes run documents"
        );
        assert!(refused("[1, 2", Reader::Report).contains("it ends early (truncated?)"));
        assert!(refused("[1e400]", Reader::Merge).contains("is not JSON"));
    }
}
