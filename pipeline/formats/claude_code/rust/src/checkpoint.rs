//! The two whole-file passes of Claude Code's resume start
//! (`pipeline.core.topology.checkpoint.resume_start`, compiled): which uuid lines count as the
//! last conversation row, and the checkpoint its `last-prompt` pointers leave.
//!
//! Only the type, subtype, flags and (on pointers) the pointer's state and value are read from
//! each record. A string that is not valid UTF-8 (a lone surrogate) makes this return None, and
//! the reference decides.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::record::SIDECHAIN;
use crate::recover::{text, Out, Stop};

/// `decode.RecordFlag`'s bits the replay reads.
const COMPACT_BOUNDARY: u32 = 16;
const POINTER_EXPLICIT: u32 = 32;

/// `RowView.counts_as_last`: a conversation row on the transcript's side, not a file snapshot
/// nor a fork briefing.
fn counts_as_last(record: &Bound<'_, PyAny>, sidechain: bool) -> Out<bool> {
    let py = record.py();
    let kind = text(&record.getattr(intern!(py, "type"))?)?;
    let kind = kind.as_deref().unwrap_or("");
    if !matches!(kind, "user" | "assistant" | "attachment" | "system") {
        return Ok(false);
    }
    let flags: u32 = record.getattr(intern!(py, "flags"))?.extract()?;
    if (flags & SIDECHAIN != 0) != sidechain {
        return Ok(false);
    }
    let subtype = text(&record.getattr(intern!(py, "subtype"))?)?;
    Ok(!matches!(
        (kind, subtype.as_deref()),
        ("system", Some("file_snapshot")) | ("attachment", Some("fork_briefing"))
    ))
}

/// The pointer state Claude Code keeps while it reads a transcript top to bottom
/// (`checkpoint._Checkpoint`).
#[derive(Default)]
struct Checkpoint {
    leaf: Option<String>,
    pointer_line: Option<i64>,
    explicit: bool,
    ever_explicit: bool,
    named: bool,
}

impl Checkpoint {
    fn forget(&mut self) {
        (self.leaf, self.pointer_line) = (None, None);
        (self.explicit, self.ever_explicit) = (false, false);
    }

    /// One `last-prompt` record on `line`.
    fn pointer(&mut self, record: &Bound<'_, PyAny>, line: i64, flags: u32) -> Out<()> {
        let py = record.py();
        let state = text(&record.getattr(intern!(py, "pointer_state"))?)?.unwrap_or_default();
        let explicit = flags & POINTER_EXPLICIT != 0;
        self.named |= state != "absent";
        if state == "leaf" || state == "invalid" {
            let pointer = text(&record.getattr(intern!(py, "pointer"))?)?;
            let same = pointer == self.leaf;
            self.explicit = explicit || (self.explicit && same);
            self.ever_explicit = explicit || (self.ever_explicit && same);
            (self.leaf, self.pointer_line) = (pointer, Some(line)); // an invalid value names nothing
        } else if state == "null" && explicit {
            self.forget();
        }
        Ok(())
    }
}

/// The rows that count as last (in file order) and the replayed checkpoint.
fn passes(
    records: &Bound<'_, PyTuple>,
    uuid_lines: &[i64],
    sidechain: bool,
) -> Out<(Vec<i64>, Checkpoint)> {
    let py = records.py();
    let mut rows = Vec::new();
    let mut is_row = vec![false; records.len() + 1];
    for line in uuid_lines {
        let record = records.get_item((*line - 1) as usize)?;
        if counts_as_last(&record, sidechain)? {
            rows.push(*line);
            is_row[*line as usize] = true;
        }
    }
    let mut checkpoint = Checkpoint::default();
    for (at, record) in records.iter().enumerate() {
        if record.is_none() {
            continue;
        }
        let line = at as i64 + 1;
        let flags: u32 = record.getattr(intern!(py, "flags"))?.extract()?;
        let kind = record.getattr(intern!(py, "type"))?;
        if text(&kind)?.as_deref() == Some("last-prompt") {
            checkpoint.pointer(&record, line, flags)?;
            continue;
        }
        if is_row[at + 1] {
            checkpoint.explicit = false;
        }
        if flags & COMPACT_BOUNDARY != 0 {
            checkpoint.forget();
        }
    }
    Ok((rows, checkpoint))
}

/// (rows as a tuple, (leaf, pointer line, explicit, ever explicit, named)), or None where the
/// reference must decide.
pub fn resume_rows<'py>(
    records: &Bound<'py, PyTuple>,
    uuid_lines: &[i64],
    sidechain: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let py = records.py();
    match passes(records, uuid_lines, sidechain) {
        Ok((rows, c)) => {
            let pointer = (c.leaf, c.pointer_line, c.explicit, c.ever_explicit, c.named);
            Ok((PyTuple::new(py, rows)?, pointer)
                .into_pyobject(py)?
                .into_any())
        }
        Err(Stop::Reference) => Ok(py.None().into_bound(py)),
        Err(Stop::Python(error)) => Err(error),
    }
}
