//! The rows Claude Code pulls back around a parent walk
//! (`pipeline.core.topology.resume_chain.with_recovered_rows_reference`, compiled): parallel-call
//! fragments and results hanging off the walk, dangling side tails, and the system and attachment
//! rows below the leaf.
//!
//! The graph comes as the flat int64 tables `pipeline.core.graph` keeps; each record's few fields
//! are read once, when a rule first looks at its line. Where the reference would raise (a walk
//! line without a record) or a string is not valid UTF-8, this returns None and the reference
//! decides.

use std::collections::{HashMap, HashSet};

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};

use crate::record::SIDECHAIN;

/// `decode.RecordFlag`'s bits the rules read.
const META: u32 = 4;
const COMPACT_BOUNDARY: u32 = 16;

/// Why the compiled walk stops: a Python error, or a case the reference decides.
pub enum Stop {
    Python(PyErr),
    Reference,
}

impl From<PyErr> for Stop {
    fn from(error: PyErr) -> Self {
        Stop::Python(error)
    }
}

pub type Out<T> = Result<T, Stop>;

/// A record's `type`, as the rules compare it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Type {
    User,
    Assistant,
    Progress,
    Attachment,
    System,
    Other,
}

/// The fields of one record the rules read.
struct Row {
    kind: Type,
    message_id: Option<String>,
    uses: Vec<String>,
    results: Vec<String>,
    flags: u32,
}

impl Row {
    fn sidechain(&self) -> bool {
        self.flags & SIDECHAIN != 0
    }

    /// `rows.is_side_row`.
    fn is_side(&self) -> bool {
        self.kind == Type::Attachment
            || (self.kind == Type::System && self.flags & COMPACT_BOUNDARY == 0)
            || (self.kind == Type::User && self.flags & META != 0 && self.results.is_empty())
    }
}

/// A Python `str | None` (or `StrEnum`) as Rust text; `Stop::Reference` for one that is not
/// valid UTF-8.
pub fn text(value: &Bound<'_, PyAny>) -> Out<Option<String>> {
    if value.is_none() {
        return Ok(None);
    }
    let string = value.cast::<PyString>().map_err(|_| Stop::Reference)?;
    let text = string.to_str().map_err(|_| Stop::Reference)?;
    Ok(Some(text.to_owned()))
}

fn texts(value: &Bound<'_, PyAny>) -> Out<Vec<String>> {
    let tuple = value.cast::<PyTuple>().map_err(|_| Stop::Reference)?;
    tuple
        .iter()
        .map(|item| text(&item)?.ok_or(Stop::Reference))
        .collect()
}

fn kind_of(value: &Bound<'_, PyAny>) -> Out<Type> {
    if value.is_none() {
        return Ok(Type::Other);
    }
    let string = value.cast::<PyString>().map_err(|_| Stop::Reference)?;
    Ok(match string.to_str().map_err(|_| Stop::Reference)? {
        "user" => Type::User,
        "assistant" => Type::Assistant,
        "progress" => Type::Progress,
        "attachment" => Type::Attachment,
        "system" => Type::System,
        _ => Type::Other,
    })
}

/// The records of one transcript, read on first use, with its uuid graph.
struct Rows<'a, 'py> {
    records: &'a Bound<'py, PyTuple>,
    read: Vec<Option<Row>>,
    starts: Vec<i64>,
    kids: Vec<i64>,
}

impl<'a, 'py> Rows<'a, 'py> {
    fn row(&mut self, line: i64) -> Out<&Row> {
        let at = usize::try_from(line - 1).map_err(|_| Stop::Reference)?;
        if at >= self.read.len() {
            return Err(Stop::Reference);
        }
        if self.read[at].is_none() {
            let row = self.fetch(at)?;
            self.read[at] = Some(row);
        }
        self.read[at].as_ref().ok_or(Stop::Reference)
    }

    fn fetch(&self, at: usize) -> Out<Row> {
        let py = self.records.py();
        let record = self.records.get_item(at)?;
        if record.is_none() {
            return Err(Stop::Reference); // the reference raises on a walk line without a record
        }
        Ok(Row {
            kind: kind_of(&record.getattr(intern!(py, "type"))?)?,
            message_id: text(&record.getattr(intern!(py, "message_id"))?)?,
            uses: texts(&record.getattr(intern!(py, "tool_uses"))?)?,
            results: texts(&record.getattr(intern!(py, "tool_results"))?)?,
            flags: record.getattr(intern!(py, "flags"))?.extract()?,
        })
    }

    /// Whether a line's record is an assistant one, its row read only if so (most lines are
    /// not, and the calls' table asks of every uuid line).
    fn is_assistant(&mut self, line: i64) -> Out<bool> {
        let at = usize::try_from(line - 1).map_err(|_| Stop::Reference)?;
        if let Some(Some(row)) = self.read.get(at) {
            return Ok(row.kind == Type::Assistant);
        }
        let record = self.records.get_item(at)?;
        if record.is_none() {
            return Err(Stop::Reference);
        }
        let kind = record.getattr(intern!(self.records.py(), "type"))?;
        Ok(kind_of(&kind)? == Type::Assistant && self.row(line)?.kind == Type::Assistant)
    }

    /// `record.timestamp or ""`.
    fn timestamp(&self, line: i64) -> Out<String> {
        let record = self.records.get_item((line - 1) as usize)?;
        Ok(text(&record.getattr(intern!(self.records.py(), "timestamp"))?)?.unwrap_or_default())
    }

    /// `graph.children.get(line, ())`.
    fn children(&self, line: i64) -> Vec<i64> {
        let at = line as usize;
        if line <= 0 || at >= self.starts.len() {
            return Vec::new();
        }
        self.kids[self.starts[at - 1] as usize..self.starts[at] as usize].to_vec()
    }

    /// `RowView.bridged_children`: children with progress rows passed through.
    fn bridged_children(&mut self, line: i64) -> Out<Vec<(i64, Vec<i64>)>> {
        let children = self.children(line);
        let mut direct = true;
        for child in &children {
            direct &= self.row(*child)?.kind != Type::Progress;
        }
        if direct {
            return Ok(children
                .into_iter()
                .map(|child| (child, Vec::new()))
                .collect());
        }
        let mut found = Vec::new();
        let mut pending = vec![(line, Vec::new())];
        while let Some((node, via)) = pending.pop() {
            for child in self.children(node) {
                if self.row(child)?.kind == Type::Progress {
                    let mut further = via.clone();
                    further.push(child);
                    pending.push((child, further));
                } else {
                    found.push((child, via.clone()));
                }
            }
        }
        found.sort();
        Ok(found)
    }

    /// `resume_chain._side_tail`: a linear run of side rows that ends without continuing into a
    /// real message, or nothing.
    fn side_tail(&mut self, start: i64, taken: &dyn Fn(i64) -> bool) -> Out<Vec<i64>> {
        let (mut run, mut line) = (Vec::new(), start);
        loop {
            let row = self.row(line)?;
            if row.kind != Type::Progress && !row.is_side() {
                return Ok(Vec::new());
            }
            run.push(line);
            let children: Vec<i64> = self
                .children(line)
                .into_iter()
                .filter(|c| !taken(*c))
                .collect();
            match children[..] {
                [] => return Ok(run),
                [only] => line = only,
                _ => return Ok(Vec::new()),
            }
        }
    }
}

/// The walk's assistant message ids, the calls those messages make (tool id -> message id) and
/// the results the walk already holds.
type Calls = (HashSet<String>, HashMap<String, String>, HashSet<String>);

fn walk_calls(rows: &mut Rows<'_, '_>, walk: &[i64], uuid_lines: &[i64]) -> Out<Calls> {
    let mut message_ids = HashSet::new();
    let mut answered = HashSet::new();
    for line in walk {
        let row = rows.row(*line)?;
        if row.kind == Type::Assistant {
            message_ids.extend(row.message_id.clone().filter(|id| !id.is_empty()));
        }
        answered.extend(row.results.iter().cloned());
    }
    let mut uses = HashMap::new();
    for line in uuid_lines {
        if !rows.is_assistant(*line)? {
            continue;
        }
        let row = rows.row(*line)?;
        if let Some(id) = row
            .message_id
            .as_ref()
            .filter(|id| message_ids.contains(*id))
        {
            uses.extend(row.uses.iter().map(|tool| (tool.clone(), id.clone())));
        }
    }
    Ok((message_ids, uses, answered))
}

/// `resume_chain._recover`: parallel-call fragments, their results and dangling side tails
/// hanging off the walk.
fn recover(
    rows: &mut Rows<'_, '_>,
    walk: &[i64],
    uuid_lines: &[i64],
    sidechain: bool,
) -> Out<HashSet<i64>> {
    let chain: HashSet<i64> = walk.iter().copied().collect();
    let mut recovered: HashSet<i64> = HashSet::new();
    let (message_ids, uses, mut answered) = walk_calls(rows, walk, uuid_lines)?;
    let mut pending = walk.to_vec();
    while let Some(node) = pending.pop() {
        for (child, via) in rows.bridged_children(node)? {
            if chain.contains(&child)
                || recovered.contains(&child)
                || rows.row(child)?.sidechain() != sidechain
            {
                continue;
            }
            let row = rows.row(child)?;
            let fragment = row.kind == Type::Assistant
                && row
                    .message_id
                    .as_ref()
                    .is_some_and(|id| message_ids.contains(id));
            let results = row.results.clone();
            let answer = !results.is_empty()
                && results
                    .iter()
                    .all(|t| uses.get(t).is_some_and(|id| message_ids.contains(id)))
                && !results.iter().any(|t| answered.contains(t));
            if fragment || answer {
                recovered.insert(child);
                recovered.extend(via);
                answered.extend(if fragment { Vec::new() } else { results });
                pending.push(child);
                continue;
            }
            let parent = rows.row(node)?;
            let calls = matches!(parent.kind, Type::Assistant | Type::User)
                && !(parent.uses.is_empty() && parent.results.is_empty());
            if calls {
                let taken = |line: i64| chain.contains(&line) || recovered.contains(&line);
                let tail = rows.side_tail(child, &taken)?;
                if !tail.is_empty() {
                    recovered.extend(tail);
                    recovered.extend(via);
                }
            }
        }
    }
    Ok(recovered)
}

/// `resume_chain._merge`: recovered lines among the walk by physical position, the walk's order kept.
fn merge(walk: &[i64], extra: HashSet<i64>) -> Vec<i64> {
    if extra.is_empty() {
        return walk.to_vec();
    }
    let mut extra: Vec<i64> = extra.into_iter().collect();
    extra.sort_unstable();
    if walk.windows(2).all(|pair| pair[0] <= pair[1]) {
        let mut merged: Vec<i64> = walk.iter().copied().chain(extra).collect();
        merged.sort_unstable();
        merged.dedup();
        return merged;
    }
    let mut merged = walk.to_vec();
    for line in extra {
        let after = merged
            .iter()
            .position(|existing| *existing > line)
            .unwrap_or(merged.len());
        merged.insert(after, line);
    }
    merged
}

/// `resume_chain._below_leaf`: system, attachment and progress rows below the leaf, pre-order.
fn below_leaf(
    rows: &mut Rows<'_, '_>,
    leaf: i64,
    taken: &mut HashSet<i64>,
    sidechain: bool,
) -> Out<Vec<i64>> {
    let mut found = Vec::new();
    let mut pending = vec![leaf];
    while let Some(node) = pending.pop() {
        let mut children = Vec::new();
        for child in rows.children(node) {
            if taken.contains(&child) {
                continue;
            }
            let row = rows.row(child)?;
            if !matches!(row.kind, Type::User | Type::Assistant) && row.sidechain() == sidechain {
                children.push((rows.timestamp(child)?, child));
            }
        }
        children.sort_unstable_by(|a, b| b.cmp(a));
        for (_, child) in children {
            taken.insert(child);
            found.push(child);
            pending.push(child);
        }
    }
    Ok(found)
}

/// `with_recovered_rows_reference` for a non-empty walk.
pub fn recover_rows(
    records: &Bound<'_, PyTuple>,
    tables: (Vec<i64>, Vec<i64>, Vec<i64>),
    walk: &[i64],
    below_until: Option<i64>,
) -> Out<Vec<i64>> {
    let (starts, kids, uuid_lines) = tables;
    let read = (0..records.len()).map(|_| None).collect();
    let mut rows = Rows {
        records,
        read,
        starts,
        kids,
    };
    let leaf = *walk.last().ok_or(Stop::Reference)?;
    let sidechain = rows.row(leaf)?.sidechain();
    let extra = recover(&mut rows, walk, &uuid_lines, sidechain)?;
    let mut chain = merge(walk, extra);
    let mut taken: HashSet<i64> = chain.iter().copied().collect();
    let below = below_leaf(&mut rows, leaf, &mut taken, sidechain)?;
    chain.extend(
        below
            .into_iter()
            .filter(|line| below_until.is_none_or(|until| *line < until)),
    );
    Ok(chain)
}
