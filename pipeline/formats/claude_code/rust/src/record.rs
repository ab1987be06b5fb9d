//! From a scanned line to the reference's `DecodedRecord`: only here are Python values made.

use std::sync::atomic::{AtomicU8, Ordering};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

use crate::estimate::{estimate, inventory_is_exact, is_loose, Counted};
use crate::head::{scan_head, Head, Key};
use crate::json::{Kind, Scan, Scanned, Stop, Val, Weights};
use crate::text::{equals, text_bytes, Ring, RING};

/// Lines nested deeper go to the reference: real records nest under 30 deep.
const FAST_MAX_DEPTH: usize = 200;
/// One letter per content block kind, as `decode.BLOCK_CODES`; `O` for any other.
const BLOCK_CODES: [(&str, u8); 7] = [
    ("text", b'T'),
    ("thinking", b'K'),
    ("redacted_thinking", b'K'),
    ("tool_use", b'U'),
    ("tool_result", b'R'),
    ("image", b'I'),
    ("document", b'D'),
];
/// DecodedRecord's fields, given positionally.
const FIELDS: usize = 22;
/// `decode.RecordFlag`'s bits, packed into the record's one `flags` field.
pub(crate) const SIDECHAIN: u32 = 1;
const IS_API: u32 = 2;
const META: u32 = 4;
const COMPACT_SUMMARY: u32 = 8;
const COMPACT_BOUNDARY: u32 = 16;
const POINTER_EXPLICIT: u32 = 32;
const UUID_MALFORMED: u32 = 64;
const PARENT_MALFORMED: u32 = 128;
/// `decode.compact_stamp`'s form: `2026-01-02T03:04:05.678Z`, digits where this holds `0`.
const STAMP_FORM: &[u8; 24] = b"0000-00-00T00:00:00.000Z";

/// The reference's record type, vocabularies and helpers (see `scan.py`).
pub struct Config {
    pub record_type: Py<PyAny>,
    pointer_absent: Py<PyAny>,
    pointer_leaf: Py<PyAny>,
    pointer_empty: Py<PyAny>,
    pointer_null: Py<PyAny>,
    pub kind_blank: Py<PyAny>,
    pub kind_record: Py<PyAny>,
    pub problem_kinds: Py<PyDict>,
    prompt_key: Py<PyAny>,
    weight: Py<PyAny>,
    /// The common record type names, so equal names are one interned object.
    names: Vec<(String, Py<PyAny>)>,
    empty_str: Py<PyAny>,
    letter_t: Py<PyAny>,
    empty_tuple: Py<PyAny>,
}

type Pair<'py> = (Bound<'py, PyAny>, Bound<'py, PyAny>);

impl Config {
    pub fn new<'py>(
        py: Python<'py>,
        record_type: Bound<'py, PyAny>,
        pointers: (
            Bound<'py, PyAny>,
            Bound<'py, PyAny>,
            Bound<'py, PyAny>,
            Bound<'py, PyAny>,
        ),
        (blank, record): Pair<'py>,
        problem_kinds: Bound<'py, PyDict>,
        (prompt_key, weight): Pair<'py>,
        names: &Bound<'py, PyTuple>,
    ) -> PyResult<Self> {
        let names = names
            .iter()
            .map(|name| Ok((name.extract::<String>()?, name.unbind())))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(Config {
            record_type: record_type.unbind(),
            pointer_absent: pointers.0.unbind(),
            pointer_leaf: pointers.1.unbind(),
            pointer_empty: pointers.2.unbind(),
            pointer_null: pointers.3.unbind(),
            kind_blank: blank.unbind(),
            kind_record: record.unbind(),
            problem_kinds: problem_kinds.unbind(),
            prompt_key: prompt_key.unbind(),
            weight: weight.unbind(),
            names,
            empty_str: PyString::intern(py, "").into_any().unbind(),
            letter_t: PyString::intern(py, "T").into_any().unbind(),
            empty_tuple: PyTuple::empty(py).into_any().unbind(),
        })
    }
}

/// Tenths per BMP code point, asked of the seed's classifier once each (0: not asked yet).
static BMP_WEIGHT: [AtomicU8; 65536] = [const { AtomicU8::new(0) }; 65536];

/// Character weights: fixed ranges, else the seed's own classifier (this interpreter's unicodedata).
struct PyWeights<'a, 'py> {
    weight: &'a Bound<'py, PyAny>,
}

impl Weights for PyWeights<'_, '_> {
    fn weight(&mut self, cp: u32) -> Scanned<u32> {
        let wide = [
            0x3400..=0x4DBF,
            0x4E00..=0x9FFF,
            0xF900..=0xFAFF,
            0x20000..=0x323AF,
        ];
        let kana_hangul = [
            0x3040..=0x30FF,
            0x31F0..=0x31FF,
            0xAC00..=0xD7AF,
            0x1100..=0x11FF,
        ];
        if wide
            .iter()
            .chain(kana_hangul.iter())
            .any(|range| range.contains(&cp))
        {
            return Ok(13);
        }
        if cp > 0xFFFF {
            return Ok(15);
        }
        let cached = BMP_WEIGHT[cp as usize].load(Ordering::Relaxed);
        if cached != 0 {
            return Ok(u32::from(cached));
        }
        let character = char::from_u32(cp).ok_or(Stop::Fallback)?;
        let value: i64 = self
            .weight
            .call1((character,))
            .and_then(|w| w.extract())
            .map_err(Stop::Failed)?;
        let tenths = u8::try_from(value)
            .ok()
            .filter(|w| *w > 0)
            .ok_or_else(|| Stop::Failed(PyValueError::new_err("weight out of range")))?;
        BMP_WEIGHT[cp as usize].store(tenths, Ordering::Relaxed);
        Ok(u32::from(tenths))
    }
}

/// Texts most lines repeat, from the lines before (see `text::Ring`).
pub struct Recent {
    session: Ring<Py<PyAny>>,
    version: Ring<Py<PyAny>>,
    message_id: Ring<Py<PyAny>>,
    uuids: Ring<Py<PyAny>>,
    tools: Ring<Py<PyAny>>,
}

impl Recent {
    pub fn new() -> Self {
        Recent {
            session: Ring::new(1),
            version: Ring::new(1),
            message_id: Ring::new(1),
            uuids: Ring::new(RING),
            tools: Ring::new(RING),
        }
    }
}

/// Makes the Python values of one scanned line.
struct Maker<'a, 'py> {
    py: Python<'py>,
    config: &'a Config,
    line: &'a [u8],
}

impl<'py> Maker<'_, 'py> {
    fn none(&self) -> Bound<'py, PyAny> {
        self.py.None().into_bound(self.py)
    }

    /// A string value's text (the scan validated its UTF-8).
    fn string(&self, v: &Val) -> PyResult<Bound<'py, PyAny>> {
        let bytes = text_bytes(self.line, v);
        let text = std::str::from_utf8(&bytes)
            .map_err(|_| PyValueError::new_err("invalid UTF-8 after the scan"))?;
        Ok(PyString::new(self.py, text).into_any())
    }

    /// `_set`/`_text`: the string when it is a non-empty string, else None.
    fn text_or_none(&self, v: &Val) -> PyResult<Bound<'py, PyAny>> {
        if v.kind != Kind::Str || v.is_empty_str() {
            return Ok(self.none());
        }
        self.string(v)
    }

    /// `decode.compact_stamp` of `text_or_none`: Claude Code's form as its 17 digits in one int.
    fn stamp(&self, v: &Val) -> PyResult<Bound<'py, PyAny>> {
        if v.kind != Kind::Str {
            return Ok(self.none());
        }
        let text = text_bytes(self.line, v);
        let canonical = text.len() == STAMP_FORM.len()
            && text.iter().zip(STAMP_FORM.iter()).all(|(c, form)| {
                if *form == b'0' {
                    c.is_ascii_digit()
                } else {
                    c == form
                }
            });
        if !canonical {
            return self.text_or_none(v);
        }
        let digits = text
            .iter()
            .filter(|c| c.is_ascii_digit())
            .fold(0u64, |n, c| n * 10 + u64::from(c - b'0'));
        Ok(digits.into_pyobject(self.py)?.into_any())
    }

    /// `text_or_none`, one of the ring's objects where it holds this very text.
    fn shared(&self, v: &Val, ring: &Ring<Py<PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        if v.kind != Kind::Str || v.is_empty_str() {
            return Ok(self.none());
        }
        if !v.escaped {
            if let Some(known) = ring.find(v.inner(self.line)) {
                return Ok(known.bind(self.py).clone());
            }
        }
        self.string(v)
    }

    /// The record type as an interned name where it is one of the common ones.
    fn kind_name(&self, v: &Val) -> PyResult<Bound<'py, PyAny>> {
        if v.kind != Kind::Str || v.is_empty_str() {
            return Ok(self.none());
        }
        if !v.escaped {
            let raw = v.inner(self.line);
            if let Some((_, name)) = self
                .config
                .names
                .iter()
                .find(|(name, _)| name.as_bytes() == raw)
            {
                return Ok(name.bind(self.py).clone());
            }
        }
        self.string(v)
    }

    fn raw(&self, v: &Val) -> Bound<'py, PyAny> {
        PyBytes::new(self.py, &self.line[v.start..v.end]).into_any()
    }

    fn prompt_key(&self, mode: u8, raws: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        self.config.prompt_key.bind(self.py).call1((mode, raws))
    }
}

/// Remembers a made text under its own bytes (a str only; None leaves the ring as it was).
fn remember(ring: &mut Ring<Py<PyAny>>, value: &Bound<'_, PyAny>) -> PyResult<()> {
    if let Ok(text) = value.cast::<PyString>() {
        ring.push(text.to_str()?.as_bytes(), value.clone().unbind());
    }
    Ok(())
}

/// `decode._block_facts` over the typed content: block codes, tool_use ids, tool_result ids,
/// and the raw text members of text blocks when a prompt's text may be needed.
struct Facts<'py> {
    blocks: Bound<'py, PyAny>,
    uses: Bound<'py, PyAny>,
    results: Bound<'py, PyAny>,
    texts: Vec<Bound<'py, PyAny>>,
}

fn block_facts<'py>(
    maker: &Maker<'_, 'py>,
    h: &Head,
    want_text: bool,
    recent: &mut Recent,
) -> PyResult<Facts<'py>> {
    let py = maker.py;
    let m = &h.message;
    let empty = || maker.config.empty_tuple.bind(py).clone();
    let mut facts = Facts {
        blocks: maker.config.empty_str.bind(py).clone(),
        uses: empty(),
        results: empty(),
        texts: Vec::new(),
    };
    if m.content.kind == Kind::Str {
        facts.blocks = maker.config.letter_t.bind(py).clone();
        return Ok(facts);
    }
    if m.content.kind != Kind::Array || m.blocks.is_empty() {
        return Ok(facts);
    }
    let (mut letters, mut uses, mut results) =
        (Vec::with_capacity(m.blocks.len()), Vec::new(), Vec::new());
    for b in &m.blocks {
        let code = BLOCK_CODES
            .iter()
            .find(|(name, _)| b.kind.kind == Kind::Str && equals(maker.line, &b.kind, name));
        let letter = code.map_or(b'O', |(_, letter)| *letter);
        letters.push(letter);
        match code.map(|(name, _)| *name) {
            Some("tool_use") => {
                let id = if b.id.kind == Kind::Str {
                    maker.string(&b.id)?
                } else {
                    maker.config.empty_str.bind(py).clone()
                };
                remember(&mut recent.tools, &id)?;
                uses.push(id);
            }
            Some("tool_result") => {
                // tool_use_id or toolUseID, by truthiness
                let first = &b.tool_use_id;
                let truthy =
                    first.kind == Kind::True || (first.kind == Kind::Str && !first.is_empty_str());
                let chosen = if truthy { first } else { &b.tool_use_id_camel };
                let id = if chosen.kind == Kind::Str {
                    maker.shared(chosen, &recent.tools).map(|id| {
                        if id.is_none() {
                            maker.config.empty_str.bind(py).clone()
                        } else {
                            id
                        }
                    })?
                } else {
                    maker.config.empty_str.bind(py).clone()
                };
                results.push(id);
            }
            Some("text") if want_text && b.text.kind == Kind::Str => {
                facts.texts.push(maker.raw(&b.text))
            }
            _ => {}
        }
    }
    let letters =
        std::str::from_utf8(&letters).map_err(|_| PyValueError::new_err("block codes"))?;
    facts.blocks = PyString::new(py, letters).into_any();
    if !uses.is_empty() {
        facts.uses = PyTuple::new(py, uses)?.into_any();
    }
    if !results.is_empty() {
        facts.results = PyTuple::new(py, results)?.into_any();
    }
    Ok(facts)
}

fn counted(line: &[u8], kind: &Val) -> Counted {
    let names = [
        ("user", Counted::User),
        ("assistant", Counted::Assistant),
        ("attachment", Counted::Attachment),
        ("system", Counted::System),
    ];
    names
        .iter()
        .find(|(name, _)| equals(line, kind, name))
        .map_or(Counted::Other, |(_, c)| *c)
}

/// The record's prompt fingerprint (a human prompt, or a pointer's `lastPrompt`), else None.
fn prompt_key<'py>(
    maker: &Maker<'_, 'py>,
    h: &Head,
    kind: Counted,
    role: &Bound<'py, PyAny>,
    facts: &Facts<'py>,
) -> PyResult<Bound<'py, PyAny>> {
    let line = maker.line;
    let human = kind == Counted::User
        && role.extract::<&str>().is_ok_and(|r| r == "user")
        && h.get(Key::CompactSummary).kind != Kind::True
        && h.get(Key::Meta).kind != Kind::True
        && facts.results.len()? == 0;
    if human {
        let content = &h.message.content;
        if content.kind == Kind::Str {
            return maker.prompt_key(0, PyTuple::new(maker.py, [maker.raw(content)])?.into_any());
        }
        if !facts.texts.is_empty() {
            return maker.prompt_key(1, PyList::new(maker.py, facts.texts.iter())?.into_any());
        }
    } else if kind == Counted::Other
        && h.get(Key::LastPrompt).kind == Kind::Str
        && equals(line, h.get(Key::Type), "last-prompt")
    {
        return maker.prompt_key(
            2,
            PyTuple::new(maker.py, [maker.raw(h.get(Key::LastPrompt))])?.into_any(),
        );
    }
    Ok(maker.none())
}

fn pointer_state<'py>(maker: &Maker<'_, 'py>, leaf: &Val) -> Bound<'py, PyAny> {
    let c = maker.config;
    let state = match leaf.kind {
        Kind::Absent => &c.pointer_absent,
        Kind::Null => &c.pointer_null,
        _ if leaf.is_empty_str() => &c.pointer_empty,
        _ => &c.pointer_leaf,
    };
    state.bind(maker.py).clone()
}

/// A record's message id, role and block facts (None, None and no blocks without a message).
fn message_parts<'py>(
    maker: &Maker<'_, 'py>,
    h: &Head,
    kind: Counted,
    is_api: bool,
    recent: &mut Recent,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>, Facts<'py>)> {
    if is_api {
        let facts = block_facts(maker, h, kind == Counted::User, recent)?;
        let m = &h.message;
        return Ok((
            maker.shared(&m.id, &recent.message_id)?,
            maker.kind_name(&m.role)?,
            facts,
        ));
    }
    let empty = maker.config.empty_tuple.bind(maker.py);
    let facts = Facts {
        blocks: maker.config.empty_str.bind(maker.py).clone(),
        uses: empty.clone(),
        results: empty.clone(),
        texts: Vec::new(),
    };
    Ok((maker.none(), maker.none(), facts))
}

/// The DecodedRecord of a scanned line, or None where the reference must read it.
fn assemble<'py>(
    maker: &Maker<'_, 'py>,
    scan: &mut Scan<'_, PyWeights<'_, 'py>>,
    h: &Head,
    escapes_possible: bool,
    recent: &mut Recent,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let kind = counted(maker.line, h.get(Key::Type));
    let is_api = matches!(kind, Counted::User | Counted::Assistant)
        && h.get(Key::Message).kind == Kind::Object;
    if escapes_possible && !inventory_is_exact(maker.line) {
        return Ok(None);
    }
    let tokens = match estimate(scan, h, is_api, kind) {
        Ok(tokens) => tokens,
        Err(Stop::Fallback) => return Ok(None),
        Err(Stop::Failed(err)) => return Err(err),
    };
    let v = |key: Key| h.get(key);
    let (message_id, role, facts) = message_parts(maker, h, kind, is_api, recent)?;
    let key = prompt_key(maker, h, kind, &role, &facts)?;
    let uuid = maker.text_or_none(v(Key::Uuid))?;
    let session = maker.shared(v(Key::Session), &recent.session)?;
    let version = maker.shared(v(Key::Version), &recent.version)?;
    let attachment_tool = if kind == Counted::Attachment && v(Key::Attachment).kind == Kind::Object
    {
        maker.shared(&h.attachment_tool, &recent.tools)?
    } else {
        maker.none()
    };
    let snapshot = equals(maker.line, v(Key::Type), "file-history-snapshot");
    let flag = |on: bool, bit: u32| if on { bit } else { 0 };
    let flags = flag(v(Key::Sidechain).kind == Kind::True, SIDECHAIN)
        | flag(is_api, IS_API)
        | flag(v(Key::Meta).kind == Kind::True, META)
        | flag(v(Key::CompactSummary).kind == Kind::True, COMPACT_SUMMARY)
        | flag(
            kind == Counted::System && equals(maker.line, v(Key::Subtype), "compact_boundary"),
            COMPACT_BOUNDARY,
        )
        | flag(v(Key::Explicit).kind == Kind::True, POINTER_EXPLICIT)
        | flag(v(Key::Uuid).is_empty_str(), UUID_MALFORMED)
        | flag(v(Key::Parent).is_empty_str(), PARENT_MALFORMED);
    let fields: [Bound<'py, PyAny>; FIELDS] = [
        maker.kind_name(v(Key::Type))?,
        maker.text_or_none(v(Key::Subtype))?,
        uuid.clone(),
        maker.shared(v(Key::Parent), &recent.uuids)?,
        maker.text_or_none(v(Key::LogicalParent))?,
        session.clone(),
        maker.stamp(v(Key::Timestamp))?,
        version.clone(),
        message_id.clone(),
        role,
        facts.blocks,
        facts.uses,
        facts.results,
        maker.shared(v(Key::SourceTool), &recent.uuids)?,
        attachment_tool,
        pointer_state(maker, v(Key::Leaf)),
        maker.text_or_none(v(Key::Leaf))?,
        key,
        if snapshot {
            maker.text_or_none(v(Key::MessageId))?
        } else {
            maker.none()
        },
        maker.text_or_none(v(Key::AgentId))?,
        tokens.into_pyobject(maker.py)?.into_any(),
        flags.into_pyobject(maker.py)?.into_any(),
    ];
    let record = maker
        .config
        .record_type
        .bind(maker.py)
        .call1(PyTuple::new(maker.py, fields)?)?;
    remember(&mut recent.uuids, &uuid)?;
    remember(&mut recent.session, &session)?;
    remember(&mut recent.version, &version)?;
    remember(&mut recent.message_id, &message_id)?;
    Ok(Some(record))
}

/// A non-blank line's record and whether it is a `last-prompt` pointer, or None where the
/// reference must read it.
pub fn fast_record<'py>(
    py: Python<'py>,
    config: &Config,
    line: &[u8],
    max_depth: usize,
    escapes_possible: bool,
    recent: &mut Recent,
) -> PyResult<Option<(Bound<'py, PyAny>, bool)>> {
    let is_space = |c: &u8| *c == b' ' || (b'\t'..=b'\r').contains(c);
    let first = line.iter().position(|c| !is_space(c)).unwrap_or(line.len());
    let last = line
        .iter()
        .rposition(|c| !is_space(c))
        .map_or(first, |at| at + 1);
    let line = &line[first..last.max(first)];
    if line.len() < 2 || line[0] != b'{' || is_loose(line) {
        return Ok(None);
    }
    let weight = config.weight.bind(py);
    let mut weights = PyWeights { weight };
    let mut scan = Scan::new(line, max_depth.min(FAST_MAX_DEPTH), &mut weights);
    let head = match scan_head(&mut scan) {
        Ok(head) => head,
        Err(Stop::Fallback) => return Ok(None),
        Err(Stop::Failed(err)) => return Err(err),
    };
    let maker = Maker { py, config, line };
    let record = assemble(&maker, &mut scan, &head, escapes_possible, recent)?;
    Ok(record.map(|record| (record, equals(line, head.get(Key::Type), "last-prompt"))))
}
