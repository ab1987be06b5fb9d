//! The uuid graph of one transcript (`pipeline.core.graph.build_graph_reference`, compiled): lines
//! by uuid, parents by line, children by line, from the records the index made.
//!
//! The reference's two loops run here over the records tuple; the uuid and parent strings stay the
//! records' own Python objects (the `line_of` dict holds them, as the reference's does), so uuids
//! compare exactly as Python compares them, lone surrogates included.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PyTuple};

use crate::int64_bytes;
use crate::record::SIDECHAIN;

/// Line 0: no parent in the file (root, dangling or malformed), as `graph._NO_LINE`.
const NO_LINE: i64 = 0;

/// (line_of dict, sorted duplicate uuids, parent_line, starts, kids, uuid_lines, main_rows), the
/// arrays as native int64 bytes: `build_graph_reference`'s parts, for records indexed by line - 1.
pub fn link_lines<'py>(records: &Bound<'py, PyTuple>) -> PyResult<Bound<'py, PyTuple>> {
    let py = records.py();
    let (uuid_name, parent_name) = (intern!(py, "uuid"), intern!(py, "parent"));
    let flags_name = intern!(py, "flags");
    let mut main_rows = false;
    let line_of = PyDict::new(py);
    let duplicates = PyDict::new(py); // a set kept in first-seen order; sorted below
    let mut uuid_lines: Vec<i64> = Vec::new();
    let mut parents: Vec<Option<Bound<'py, PyAny>>> = Vec::with_capacity(records.len());
    for (at, record) in records.iter().enumerate() {
        if record.is_none() {
            parents.push(None);
            continue;
        }
        let number = at as i64 + 1;
        let uuid = record.getattr(uuid_name)?;
        if !uuid.is_none() {
            // The first line keeps the uuid; the rest only make it a duplicate.
            if line_of.contains(&uuid)? {
                duplicates.set_item(&uuid, py.None())?;
            } else {
                line_of.set_item(&uuid, number)?;
            }
            uuid_lines.push(number);
            if !main_rows {
                let flags: u32 = record.getattr(flags_name)?.extract()?;
                main_rows = flags & SIDECHAIN == 0;
            }
        }
        let parent = record.getattr(parent_name)?;
        parents.push((!parent.is_none()).then_some(parent));
    }
    let mut parent_line = vec![NO_LINE; records.len()];
    let mut counts = vec![0i64; records.len() + 1];
    for (at, parent) in parents.iter().enumerate() {
        let Some(parent) = parent else { continue };
        if let Some(line) = line_of.get_item(parent)? {
            let line: i64 = line.extract()?;
            parent_line[at] = line;
            counts[line as usize] += 1;
        }
    }
    let (starts, kids) = children(&parent_line, &counts);
    let sorted = PyList::new(py, duplicates.keys())?;
    sorted.sort()?;
    let parts: [Bound<'py, PyAny>; 7] = [
        line_of.into_any(),
        sorted.to_tuple().into_any(),
        int64_bytes(py, &parent_line).into_any(),
        int64_bytes(py, &starts).into_any(),
        int64_bytes(py, &kids).into_any(),
        int64_bytes(py, &uuid_lines).into_any(),
        PyBool::new(py, main_rows).to_owned().into_any(),
    ];
    PyTuple::new(py, parts)
}

/// The children table of a parent array (`graph._children`): starts by prefix sums of the
/// counts, then the children of line n at `kids[starts[n - 1]..starts[n]]` in physical order.
fn children(parent_line: &[i64], counts: &[i64]) -> (Vec<i64>, Vec<i64>) {
    let mut starts = vec![0i64; counts.len()];
    let mut total = 0;
    for line in 1..counts.len() {
        total += counts[line];
        starts[line] = total;
    }
    let mut kids = vec![0i64; total as usize];
    let mut filled = starts.clone(); // where the next child of each line goes (shifted by one)
    for (at, parent) in parent_line.iter().enumerate() {
        if *parent != NO_LINE {
            let slot = &mut filled[*parent as usize - 1];
            kids[*slot as usize] = at as i64 + 1;
            *slot += 1;
        }
    }
    (starts, kids)
}

/// Lines (1-based) whose record's `flags` has a bit of `mask`, in file order: the whole-file
/// scans validation makes for compact boundaries, compact summaries and replaced UTF-8.
pub fn flagged_lines<'py>(
    records: &Bound<'py, PyTuple>,
    mask: u32,
) -> PyResult<Bound<'py, PyTuple>> {
    let flags_name = intern!(records.py(), "flags");
    let mut lines = Vec::new();
    for (at, record) in records.iter().enumerate() {
        if !record.is_none() && record.getattr(flags_name)?.extract::<u32>()? & mask != 0 {
            lines.push(at as i64 + 1);
        }
    }
    PyTuple::new(records.py(), lines)
}

/// How a walk from a leaf ended, by position in `graph.COMPILED_ENDS`.
const END_ROOT: u8 = 0;
const END_COMPACT_BOUNDARY: u8 = 1;
const END_EXTERNAL_PARENT: u8 = 2;
const END_LOOP: u8 = 3;
const END_MALFORMED_PARENT: u8 = 4;
/// `decode.RecordFlag`'s bits a walk reads.
const COMPACT_BOUNDARY: u32 = 16;
const PARENT_MALFORMED: u32 = 128;

/// `UuidGraph.trace`: the walk from `leaf` along the parent lines, root first, with how it ended
/// and the line that ended it (the repeated line of a loop, else the last line walked). None
/// where a walked line holds no record (the reference's assertion decides).
pub fn trace<'py>(
    records: &Bound<'py, PyTuple>,
    parent_line: &[i64],
    leaf: i64,
) -> PyResult<Bound<'py, PyAny>> {
    let py = records.py();
    let (flags_name, parent_name) = (intern!(py, "flags"), intern!(py, "parent"));
    let mut seen = std::collections::HashSet::new();
    let mut walked = Vec::new();
    let mut line = leaf;
    let (end, at) = loop {
        if !seen.insert(line) {
            break (END_LOOP, line);
        }
        walked.push(line);
        let slot = usize::try_from(line - 1)
            .ok()
            .filter(|at| *at < records.len() && *at < parent_line.len());
        let Some(slot) = slot else {
            return Ok(py.None().into_bound(py));
        };
        let record = records.get_item(slot)?;
        if record.is_none() {
            return Ok(py.None().into_bound(py));
        }
        let flags: u32 = record.getattr(flags_name)?.extract()?;
        if flags & PARENT_MALFORMED != 0 {
            break (END_MALFORMED_PARENT, line);
        }
        if record.getattr(parent_name)?.is_none() {
            let end = if flags & COMPACT_BOUNDARY != 0 {
                END_COMPACT_BOUNDARY
            } else {
                END_ROOT
            };
            break (end, line);
        }
        match parent_line[slot] {
            NO_LINE => break (END_EXTERNAL_PARENT, line),
            parent => line = parent,
        }
    };
    walked.reverse();
    Ok((PyTuple::new(py, walked)?, end, at)
        .into_pyobject(py)?
        .into_any())
}
