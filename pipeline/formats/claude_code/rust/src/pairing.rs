//! Tool pairing on the active chain (`pipeline.core.validate.pairing.check_pairing_reference`,
//! compiled): the chain's user/assistant records merged into API messages, then their tool ids
//! and order checked, returning only what a finding needs (a kind, a line, a count, ids).
//!
//! Each record's few fields are read once into Rust values; every rule after that is Rust. Where
//! the reference would raise (blocks and ids that disagree) or a string is not valid UTF-8 (a lone
//! surrogate), this returns None and the reference decides, exactly as the line index does.

use std::collections::{HashMap, HashSet};

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};

/// `decode.RecordFlag.IS_API`: a user or assistant record with a message object.
const IS_API: u32 = 2;

/// The findings this check makes, by position in `pairing.COMPILED_FINDINGS` (code and severity).
#[derive(Clone, Copy)]
enum Kind {
    IdMalformed = 0,
    UseDuplicate = 1,
    ResultDuplicate = 2,
    UseUnanswered = 3,
    UseNotFollowedByUser = 4,
    ResultMismatch = 5,
    ResultWithoutUse = 6,
    ResultNotFirst = 7,
    ResultPartial = 8,
    ResultOrder = 9,
}

/// A finding before it is a Python `Finding`: kind, line, count, tool ids.
struct Found {
    kind: Kind,
    line: Option<i64>,
    count: usize,
    ids: Vec<String>,
}

impl Found {
    fn at(kind: Kind, line: i64, ids: &[String]) -> Self {
        Found {
            kind,
            line: Some(line),
            count: 1,
            ids: ids.to_vec(),
        }
    }
}

/// The fields of one chain record the check reads.
struct Row {
    line: i64,
    role: String,
    message_id: Option<String>,
    blocks: Vec<u8>,
    uses: Vec<String>,
    results: Vec<String>,
    uuid: Option<String>,
    source: Option<String>,
}

/// One API message rebuilt from consecutive chain lines (`pairing.ApiMessage`).
struct Message {
    role: String,
    lines: Vec<i64>,
    uuids: Vec<String>,
    blocks: Vec<u8>,
    block_lines: Vec<i64>,
    uses: Vec<String>,
    results: Vec<String>,
    message_id: Option<String>,
    source: Option<String>,
    other_blocks: bool, // some block is not a tool result
}

impl Message {
    fn of(row: Row) -> Self {
        let mut message = Message {
            role: row.role.clone(),
            lines: Vec::new(),
            uuids: Vec::new(),
            blocks: Vec::new(),
            block_lines: Vec::new(),
            uses: Vec::new(),
            results: Vec::new(),
            message_id: row.message_id.clone(),
            source: row.source.clone(),
            other_blocks: false,
        };
        message.join(row);
        message
    }

    fn join(&mut self, row: Row) {
        self.lines.push(row.line);
        self.uuids.extend(row.uuid.filter(|uuid| !uuid.is_empty()));
        self.block_lines
            .extend(std::iter::repeat_n(row.line, row.blocks.len()));
        self.other_blocks |= row.blocks.iter().any(|code| *code != b'R');
        self.blocks.extend(row.blocks);
        self.uses.extend(row.uses);
        self.results.extend(row.results);
    }

    /// Line holding the first block of a kind, or the message's first line.
    fn first_line_of(&self, code: u8) -> i64 {
        match self.blocks.iter().position(|c| *c == code) {
            Some(at) => self.block_lines[at],
            None => self.lines[0],
        }
    }
}

/// A Python `str | None` as Rust text; Err(()) for a string that is not valid UTF-8.
fn text(value: &Bound<'_, PyAny>) -> Result<Option<String>, ()> {
    if value.is_none() {
        return Ok(None);
    }
    let string = value.cast::<PyString>().map_err(|_| ())?;
    string.to_str().map(|s| Some(s.to_owned())).map_err(|_| ())
}

fn texts(value: &Bound<'_, PyAny>) -> Result<Vec<String>, ()> {
    let tuple = value.cast::<PyTuple>().map_err(|_| ())?;
    tuple.iter().map(|item| text(&item)?.ok_or(())).collect()
}

/// The record's fields, or Ok(None) for a line that is not an API record; Err(()) to fall back.
fn row(record: &Bound<'_, PyAny>, line: i64) -> PyResult<Result<Option<Row>, ()>> {
    let py = record.py();
    if record.is_none() {
        return Ok(Ok(None));
    }
    let flags: u32 = record.getattr(intern!(py, "flags"))?.extract()?;
    if flags & IS_API == 0 {
        return Ok(Ok(None));
    }
    let fields = (
        record.getattr(intern!(py, "role"))?,
        record.getattr(intern!(py, "type"))?,
        record.getattr(intern!(py, "message_id"))?,
        record.getattr(intern!(py, "blocks"))?,
        record.getattr(intern!(py, "tool_uses"))?,
        record.getattr(intern!(py, "tool_results"))?,
        record.getattr(intern!(py, "uuid"))?,
        record.getattr(intern!(py, "source_tool_assistant"))?,
    );
    let (role, kind, message_id, blocks, uses, results, uuid, source) = fields;
    Ok((|| {
        let blocks = text(&blocks)?.ok_or(())?;
        if !blocks.is_ascii() {
            return Err(()); // positions would differ from Python's code points
        }
        let role = text(&role)?.filter(|r| !r.is_empty());
        let role = role
            .or(text(&kind)?.filter(|k| !k.is_empty()))
            .unwrap_or_default();
        Ok(Some(Row {
            line,
            role,
            message_id: text(&message_id)?,
            blocks: blocks.into_bytes(),
            uses: texts(&uses)?,
            results: texts(&results)?,
            uuid: text(&uuid)?,
            source: text(&source)?,
        }))
    })())
}

/// The earlier assistant message this fragment continues, across tool-result-only users.
fn same_call_target(messages: &[Message], message_id: &str) -> Option<usize> {
    for (at, message) in messages.iter().enumerate().rev() {
        if message.role == "assistant" {
            return (message.message_id.as_deref() == Some(message_id)).then_some(at);
        }
        if message.other_blocks {
            return None;
        }
    }
    None
}

/// `pairing.api_messages`: consecutive user lines form one message; an assistant fragment joins
/// the earlier assistant message of its `message.id` across tool-result-only user messages.
fn api_messages(
    records: &Bound<'_, PyTuple>,
    chain: &Bound<'_, PyTuple>,
) -> PyResult<Result<Vec<Message>, ()>> {
    let mut messages: Vec<Message> = Vec::new();
    for line in chain.iter() {
        let line: i64 = line.extract()?;
        let record = records.get_item((line - 1) as usize)?;
        let row = match row(&record, line)? {
            Ok(Some(row)) => row,
            Ok(None) => continue,
            Err(()) => return Ok(Err(())),
        };
        let position = if row.role == "user" {
            messages
                .last()
                .filter(|m| m.role == "user")
                .map(|_| messages.len() - 1)
        } else if row.role == "assistant" {
            row.message_id
                .as_deref()
                .and_then(|id| same_call_target(&messages, id))
        } else {
            None
        };
        match position {
            Some(at) => messages[at].join(row),
            None => messages.push(Message::of(row)),
        }
    }
    Ok(Ok(messages))
}

/// An insertion-ordered table of lines by tool id (the reference's `defaultdict(list)`).
#[derive(Default)]
struct LinesById {
    order: Vec<(String, Vec<i64>)>,
    at: HashMap<String, usize>,
}

impl LinesById {
    fn add(&mut self, id: &str, line: i64) {
        match self.at.get(id) {
            Some(&at) => self.order[at].1.push(line),
            None => {
                self.at.insert(id.to_owned(), self.order.len());
                self.order.push((id.to_owned(), vec![line]));
            }
        }
    }

    fn duplicates(self, kind: Kind, found: &mut Vec<Found>) {
        for (id, lines) in self.order.into_iter().filter(|(_, lines)| lines.len() > 1) {
            found.push(Found {
                kind,
                line: Some(lines[1]),
                count: lines.len(),
                ids: vec![id],
            });
        }
    }
}

/// Malformed and repeated tool ids, block by block; Err(()) where blocks and ids disagree.
fn id_findings(messages: &[Message], found: &mut Vec<Found>) -> Result<(), ()> {
    let (mut uses, mut results) = (LinesById::default(), LinesById::default());
    for message in messages {
        let (mut used, mut answered) = (0, 0);
        for (position, code) in message.blocks.iter().enumerate() {
            let (ids, ordinal, table) = match code {
                b'U' => (&message.uses, &mut used, &mut uses),
                b'R' => (&message.results, &mut answered, &mut results),
                _ => continue,
            };
            let line = message.block_lines[position];
            let tool_id = ids.get(*ordinal).ok_or(())?;
            *ordinal += 1;
            if tool_id.is_empty() {
                found.push(Found::at(Kind::IdMalformed, line, &[]));
            } else {
                table.add(tool_id, line);
            }
        }
    }
    uses.duplicates(Kind::UseDuplicate, found);
    results.duplicates(Kind::ResultDuplicate, found);
    Ok(())
}

/// Every result names one of the calls (duplicates are checked apart).
fn answers(results: &[String], uses: &[String]) -> bool {
    if results.is_empty() || uses.is_empty() {
        return false;
    }
    let calls: HashSet<&String> = uses.iter().collect();
    results.iter().all(|result| calls.contains(result))
}

fn ordered_subset(items: &[String], expected: &[String]) -> bool {
    if items.is_empty() || expected.is_empty() {
        return false;
    }
    let mut position = 0;
    for item in items {
        while position < expected.len() && expected[position] != *item {
            position += 1;
        }
        if position >= expected.len() {
            return false;
        }
        position += 1;
    }
    true
}

fn distinct(ids: &[String]) -> usize {
    ids.iter().collect::<HashSet<_>>().len()
}

/// What the check counts besides its findings.
#[derive(Default)]
struct Tally {
    partial: usize,
    reordered: usize,
}

/// The calls-side checks of a message with tool uses against the message after it.
fn use_findings(messages: &[Message], at: usize, tally: &mut Tally, found: &mut Vec<Found>) {
    let message = &messages[at];
    let line = message.first_line_of(b'U');
    match messages.get(at + 1) {
        None => found.push(Found::at(Kind::UseUnanswered, line, &message.uses)),
        Some(following) if following.role != "user" => {
            found.push(Found::at(Kind::UseNotFollowedByUser, line, &message.uses))
        }
        Some(following) if !answers(&following.results, &message.uses) => found.push(Found::at(
            Kind::ResultMismatch,
            following.first_line_of(b'R'),
            &following.results,
        )),
        Some(following) => {
            tally.reordered += usize::from(!ordered_subset(&following.results, &message.uses));
            tally.partial += usize::from(distinct(&following.results) < distinct(&message.uses));
        }
    }
}

/// The calls a message's `sourceToolAssistantUUID` names: its message's, else its record's.
fn source_uses(
    records: &Bound<'_, PyTuple>,
    line_of: &Bound<'_, PyAny>,
    source: &str,
) -> PyResult<Result<Vec<String>, ()>> {
    let line = line_of.call_method1(intern!(records.py(), "get"), (source,))?;
    if line.is_none() {
        return Ok(Ok(Vec::new()));
    }
    let line: i64 = line.extract()?;
    if line == 0 {
        return Ok(Ok(Vec::new()));
    }
    let record = records.get_item((line - 1) as usize)?;
    if record.is_none() {
        return Ok(Ok(Vec::new()));
    }
    Ok(texts(&record.getattr(intern!(records.py(), "tool_uses"))?))
}

/// The results-side checks of a message with tool results (`pairing._result_findings`).
fn result_findings(
    context: (&Bound<'_, PyTuple>, &Bound<'_, PyAny>),
    messages: &[Message],
    at: usize,
    uses_by_uuid: &HashMap<&str, &[String]>,
    found: &mut Vec<Found>,
) -> PyResult<Result<(), ()>> {
    let message = &messages[at];
    let line = message.first_line_of(b'R');
    if at == 0 {
        found.push(Found::at(Kind::ResultWithoutUse, line, &message.results));
        return Ok(Ok(()));
    }
    if messages[at - 1].role != "assistant" {
        let source = message.source.as_deref().unwrap_or("");
        let calls = match uses_by_uuid.get(source) {
            Some(calls) => calls.to_vec(),
            None if source.is_empty() => Vec::new(),
            None => match source_uses(context.0, context.1, source)? {
                Ok(calls) => calls,
                Err(()) => return Ok(Err(())),
            },
        };
        if !answers(&message.results, &calls) {
            found.push(Found::at(Kind::ResultMismatch, line, &message.results));
        }
    }
    let leading = &message.blocks[..message.results.len().min(message.blocks.len())];
    if leading.len() < message.results.len() && leading.iter().all(|c| *c == b'R') {
        return Ok(Err(())); // the reference raises here (no misplaced block to name)
    }
    if let Some(misplaced) = leading.iter().position(|c| *c != b'R') {
        found.push(Found::at(
            Kind::ResultNotFirst,
            message.block_lines[misplaced],
            &[],
        ));
    }
    Ok(Ok(()))
}

/// The whole check over built messages: findings in the reference's order, and its counts.
fn check(
    context: (&Bound<'_, PyTuple>, &Bound<'_, PyAny>),
    messages: &[Message],
) -> PyResult<Result<(Vec<Found>, Tally), ()>> {
    let mut found = Vec::new();
    if id_findings(messages, &mut found).is_err() {
        return Ok(Err(()));
    }
    let mut uses_by_uuid: HashMap<&str, &[String]> = HashMap::new();
    for message in messages
        .iter()
        .filter(|m| m.role == "assistant" && !m.uses.is_empty())
    {
        for uuid in &message.uuids {
            uses_by_uuid.insert(uuid, &message.uses);
        }
    }
    let mut tally = Tally::default();
    for at in 0..messages.len() {
        if !messages[at].uses.is_empty() {
            use_findings(messages, at, &mut tally, &mut found);
        }
        if !messages[at].results.is_empty() {
            if let Err(()) = result_findings(context, messages, at, &uses_by_uuid, &mut found)? {
                return Ok(Err(()));
            }
        }
    }
    if tally.partial > 0 {
        found.push(Found {
            kind: Kind::ResultPartial,
            line: None,
            count: tally.partial,
            ids: vec![],
        });
    }
    if tally.reordered > 0 {
        let count = tally.reordered;
        found.push(Found {
            kind: Kind::ResultOrder,
            line: None,
            count,
            ids: vec![],
        });
    }
    Ok(Ok((found, tally)))
}

/// (findings as (kind, line, count, ids) tuples, partial, reordered, message count), or None
/// where the reference must decide.
pub fn pair_tools<'py>(
    records: &Bound<'py, PyTuple>,
    chain: &Bound<'py, PyTuple>,
    line_of: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = records.py();
    let Ok(messages) = api_messages(records, chain)? else {
        return Ok(py.None().into_bound(py));
    };
    let Ok((found, tally)) = check((records, line_of), &messages)? else {
        return Ok(py.None().into_bound(py));
    };
    let findings = found
        .into_iter()
        .map(|f| (f.kind as u8, f.line, f.count, PyTuple::new(py, f.ids)?).into_pyobject(py))
        .collect::<PyResult<Vec<_>>>()?;
    let result = (
        PyTuple::new(py, findings)?,
        tally.partial,
        tally.reordered,
        messages.len(),
    );
    Ok(result.into_pyobject(py)?.into_any())
}
