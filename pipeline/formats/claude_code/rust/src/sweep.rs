//! The sweep's whole-file passes over the records tuple (a validate report's own reads of every
//! line): seed tokens, client versions, correlated file-history snapshots, the identity checks'
//! per-line facts and the lines of one record type.
//!
//! Strings are compared as Python compares them (rich comparison, Python sets), so a lone
//! surrogate in an id is read exactly as the reference reads it: none of these passes needs to
//! hand a case back.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PySet, PyString, PyTuple};

use crate::record::SIDECHAIN;

/// `decode.RecordFlag`'s malformed-id bits.
const UUID_MALFORMED: u32 = 64;
const PARENT_MALFORMED: u32 = 128;
/// The identity facts' kinds, by position in `checks.COMPILED_IDENTITY`.
const MALFORMED_UUID: u8 = 0;
const MALFORMED_PARENT: u8 = 1;
const DANGLING_PARENT: u8 = 2;

/// The record on a 1-based line, or None for a line out of range or without one.
fn record_at<'py>(records: &Bound<'py, PyTuple>, line: i64) -> PyResult<Option<Bound<'py, PyAny>>> {
    let Some(at) = usize::try_from(line - 1)
        .ok()
        .filter(|at| *at < records.len())
    else {
        return Ok(None);
    };
    let record = records.get_item(at)?;
    Ok((!record.is_none()).then_some(record))
}

/// The sum of the seed estimates of some lines' records (`lines` None: every line's).
pub fn line_tokens(records: &Bound<'_, PyTuple>, lines: Option<Vec<i64>>) -> PyResult<i64> {
    let tokens_name = intern!(records.py(), "tokens");
    let mut total = 0i64;
    let mut add = |record: &Bound<'_, PyAny>| -> PyResult<()> {
        total += record.getattr(tokens_name)?.extract::<i64>()?;
        Ok(())
    };
    match lines {
        None => {
            for record in records.iter().filter(|record| !record.is_none()) {
                add(&record)?;
            }
        }
        Some(lines) => {
            for line in lines {
                if let Some(record) = record_at(records, line)? {
                    add(&record)?;
                }
            }
        }
    }
    Ok(total)
}

/// The distinct non-empty `version` texts of the records.
pub fn client_versions<'py>(records: &Bound<'py, PyTuple>) -> PyResult<Bound<'py, PySet>> {
    let version_name = intern!(records.py(), "version");
    let versions = PySet::empty(records.py())?;
    for record in records.iter().filter(|record| !record.is_none()) {
        let version = record.getattr(version_name)?;
        if version.is_truthy()? {
            versions.add(version)?;
        }
    }
    Ok(versions)
}

/// Whether a record's `type` is the text `name` (a text that is not UTF-8 never is).
fn has_type(record: &Bound<'_, PyAny>, name: &str) -> PyResult<bool> {
    let kind = record.getattr(intern!(record.py(), "type"))?;
    Ok(kind
        .cast::<PyString>()
        .is_ok_and(|text| text.to_str().is_ok_and(|text| text == name)))
}

/// Lines (1-based) whose record's `type` is `name`, in file order.
pub fn typed_lines<'py>(
    records: &Bound<'py, PyTuple>,
    name: &str,
) -> PyResult<Bound<'py, PyTuple>> {
    let mut lines = Vec::new();
    for (at, record) in records.iter().enumerate() {
        if !record.is_none() && has_type(&record, name)? {
            lines.push(at as i64 + 1);
        }
    }
    PyTuple::new(records.py(), lines)
}

/// The ids the kept records correlate snapshots with, and their sessions.
fn kept_ids<'py>(
    records: &Bound<'py, PyTuple>,
    kept: &[i64],
) -> PyResult<(Bound<'py, PySet>, Bound<'py, PySet>)> {
    let py = records.py();
    let names = [
        intern!(py, "uuid"),
        intern!(py, "message_id"),
        intern!(py, "source_tool_assistant"),
    ];
    let (ids, sessions) = (PySet::empty(py)?, PySet::empty(py)?);
    for line in kept {
        let Some(record) = record_at(records, *line)? else {
            continue;
        };
        for name in names {
            let value = record.getattr(name)?;
            if value.is_truthy()? {
                ids.add(value)?;
            }
        }
        let session = record.getattr(intern!(py, "session"))?;
        if session.is_truthy()? {
            sessions.add(session)?;
        }
    }
    Ok((ids, sessions))
}

/// `partition.select_snapshots` before its limit: the lines up to `last` of file-history
/// snapshots (no uuid, no parent) whose message id a kept record carries, from a kept session.
pub fn snapshot_lines<'py>(
    records: &Bound<'py, PyTuple>,
    kept: Vec<i64>,
    last: i64,
) -> PyResult<Bound<'py, PyTuple>> {
    let py = records.py();
    let (ids, sessions) = kept_ids(records, &kept)?;
    let any_session = !sessions.is_empty();
    let mut lines = Vec::new();
    let end = usize::try_from(last.max(0)).unwrap_or(0).min(records.len());
    for at in 0..end {
        let record = records.get_item(at)?;
        if record.is_none() || !has_type(&record, "file-history-snapshot")? {
            continue;
        }
        if record.getattr(intern!(py, "uuid"))?.is_truthy()?
            || record.getattr(intern!(py, "parent"))?.is_truthy()?
        {
            continue;
        }
        let session = record.getattr(intern!(py, "session"))?;
        if session.is_truthy()? && any_session && !sessions.contains(&session)? {
            continue;
        }
        if ids.contains(record.getattr(intern!(py, "snapshot_message_id"))?)? {
            lines.push(at as i64 + 1);
        }
    }
    PyTuple::new(py, lines)
}

/// Whether two records name sessions that differ (both named).
fn other_session(record: &Bound<'_, PyAny>, parent: &Bound<'_, PyAny>) -> PyResult<bool> {
    let name = intern!(record.py(), "session");
    let (own, theirs) = (record.getattr(name)?, parent.getattr(name)?);
    Ok(own.is_truthy()? && theirs.is_truthy()? && own.ne(&theirs)?)
}

/// `checks._identity_findings`' per-line loop: the facts in file order as (kind, line, bit) --
/// the bit is "on the chain" for a malformed parent, "a sidechain record" for a dangling one --
/// and the parent links that cross sessions off the chain.
pub fn identity_facts<'py>(
    records: &Bound<'py, PyTuple>,
    parent_line: &[i64],
    chain: Vec<i64>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = records.py();
    let mut active = vec![false; records.len() + 1];
    for line in chain.iter().filter_map(|line| usize::try_from(*line).ok()) {
        if let Some(slot) = active.get_mut(line) {
            *slot = true;
        }
    }
    let mut facts: Vec<(u8, i64, bool)> = Vec::new();
    let mut cross_session = 0i64;
    for (at, record) in records.iter().enumerate() {
        if record.is_none() {
            continue;
        }
        let (number, on_chain) = (at as i64 + 1, active[at + 1]);
        let flags: u32 = record.getattr(intern!(py, "flags"))?.extract()?;
        if flags & UUID_MALFORMED != 0 {
            facts.push((MALFORMED_UUID, number, false));
        }
        if flags & PARENT_MALFORMED != 0 {
            facts.push((MALFORMED_PARENT, number, on_chain));
        }
        let parent = parent_line.get(at).copied().unwrap_or(0);
        if parent == 0 && !on_chain && !record.getattr(intern!(py, "parent"))?.is_none() {
            facts.push((DANGLING_PARENT, number, flags & SIDECHAIN != 0));
        }
        if parent != 0 && !on_chain {
            if let Some(parent) = record_at(records, parent)? {
                cross_session += i64::from(other_session(&record, &parent)?);
            }
        }
    }
    Ok((PyTuple::new(py, facts)?, cross_session)
        .into_pyobject(py)?
        .into_any())
}

/// `strict.analyze_lineage`'s reading of a chain: the runs of equal named sessions as
/// ((session, position in the chain), ...) and how many of the chain's records name one.
pub fn session_runs<'py>(
    records: &Bound<'py, PyTuple>,
    chain: Vec<i64>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = records.py();
    let mut runs: Vec<(Bound<'py, PyAny>, i64)> = Vec::new();
    let mut named = 0i64;
    for (position, line) in chain.iter().enumerate() {
        let Some(record) = record_at(records, *line)? else {
            continue;
        };
        let session = record.getattr(intern!(py, "session"))?;
        if !session.is_truthy()? {
            continue;
        }
        named += 1;
        let fresh = match runs.last() {
            None => true,
            Some((last, _)) => last.ne(&session)?,
        };
        if fresh {
            runs.push((session, position as i64));
        }
    }
    Ok((PyTuple::new(py, runs)?, named)
        .into_pyobject(py)?
        .into_any())
}
