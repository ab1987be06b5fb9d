//! The compiled Claude Code line index (`pipeline.formats.claude_code._core`): one pass over a
//! transcript's bytes builds the per-line index that `pipeline.core.index.build_index_reference`
//! builds, record for record, field for field.
//!
//! Each line is validated and its kept members located by a scanner that builds nothing
//! (`json`, `head`), its seed estimate counted on its own bytes (`estimate`), and only then are
//! the record's few Python values made (`record`). A line the fast path does not decide is handed
//! to the pure-Python reference unchanged. This crate holds no `unsafe` code: PyO3's safe API is
//! the whole binding layer.
#![forbid(unsafe_code)]

mod checkpoint;
mod estimate;
mod graph;
mod head;
mod json;
mod pairing;
mod record;
mod recover;
mod sweep;
mod text;

use std::sync::{Arc, Mutex};

use pyo3::exceptions::{PyKeyError, PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};

use record::{Config, Recent};

/// The reference's types and helpers, set once by `configure` (from `scan.py`).
static CONFIG: Mutex<Option<Arc<Config>>> = Mutex::new(None);

fn config() -> PyResult<Arc<Config>> {
    let guard = CONFIG
        .lock()
        .map_err(|_| PyRuntimeError::new_err("the configuration lock is poisoned"))?;
    guard
        .clone()
        .ok_or_else(|| PyRuntimeError::new_err("configure() was not called"))
}

/// bytes.strip(): ASCII whitespace including \v and \f.
fn is_space(c: u8) -> bool {
    c == b' ' || (b'\t'..=b'\r').contains(&c)
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|c| is_space(*c))
}

/// Sets the reference's record type, vocabularies and helpers the index is built with.
#[pyfunction]
#[allow(clippy::too_many_arguments)] // the reference's eight parts, named once at import
fn configure(
    py: Python<'_>,
    record_type: Bound<'_, PyAny>,
    pointer_states: (
        Bound<'_, PyAny>,
        Bound<'_, PyAny>,
        Bound<'_, PyAny>,
        Bound<'_, PyAny>,
    ),
    blank: Bound<'_, PyAny>,
    record: Bound<'_, PyAny>,
    problem_kinds: Bound<'_, PyDict>,
    prompt_key: Bound<'_, PyAny>,
    weight: Bound<'_, PyAny>,
    names: Bound<'_, PyTuple>,
) -> PyResult<()> {
    if !record_type.is_instance_of::<pyo3::types::PyType>() || names.len() > 8 {
        return Err(PyTypeError::new_err(
            "configure(record type, ..., at most 8 names)",
        ));
    }
    let config = Config::new(
        py,
        record_type,
        pointer_states,
        (blank, record),
        problem_kinds,
        (prompt_key, weight),
        &names,
    )?;
    let mut guard = CONFIG
        .lock()
        .map_err(|_| PyRuntimeError::new_err("the configuration lock is poisoned"))?;
    *guard = Some(Arc::new(config));
    Ok(())
}

/// The kind and record of a line the reference decoded (a DecodedRecord or a LineProblem).
fn from_reference<'py>(
    config: &Config,
    decoded: Bound<'py, PyAny>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    let py = decoded.py();
    if decoded.is_instance(config.record_type.bind(py))? {
        return Ok((config.kind_record.bind(py).clone(), decoded));
    }
    let name = decoded.getattr("kind")?;
    let kind = config
        .problem_kinds
        .bind(py)
        .get_item(name)?
        .ok_or_else(|| PyKeyError::new_err("unknown line problem"))?;
    Ok((kind, py.None().into_bound(py)))
}

fn is_last_prompt(record: &Bound<'_, PyAny>) -> PyResult<bool> {
    if record.is_none() {
        return Ok(false);
    }
    let kind = record.getattr("type")?;
    Ok(kind
        .extract::<&str>()
        .is_ok_and(|text| text == "last-prompt"))
}

pub(crate) fn int64_bytes<'py>(py: Python<'py>, values: &[i64]) -> Bound<'py, PyBytes> {
    let raw: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
    PyBytes::new(py, &raw)
}

/// Runs `body`, turning a panic (a bug in the core) into a Python `RuntimeError`: PyO3's own
/// `PanicException` is a `BaseException`, which would escape the per-session guard
/// (`execute.session_tasks.run_guarded`) and cost the other sessions of the worker's batch.
fn guarded<T>(body: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)).unwrap_or_else(|_| {
        Err(PyRuntimeError::new_err(
            "the compiled line index failed on this input (a bug in the core)",
        ))
    })
}

/// Every physical line's offset, length, kind and record, as `index.build_index` keeps them:
/// (offsets, lengths as native int64 bytes, kinds, records, CRLF lines, the last pointer's line).
#[pyfunction]
fn index_lines<'py>(
    py: Python<'py>,
    data: &[u8],
    max_line_bytes: usize,
    max_depth: usize,
    escapes_possible: bool,
    reference: Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyTuple>> {
    guarded(|| {
        index_all(
            py,
            data,
            max_line_bytes,
            max_depth,
            escapes_possible,
            reference,
        )
    })
}

fn index_all<'py>(
    py: Python<'py>,
    data: &[u8],
    max_line_bytes: usize,
    max_depth: usize,
    escapes_possible: bool,
    reference: Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyTuple>> {
    let config = config()?;
    let bom = data.starts_with(b"\xEF\xBB\xBF");
    let (mut offsets, mut lengths) = (Vec::new(), Vec::new());
    let (mut kinds, mut records) = (Vec::new(), Vec::new());
    let (mut crlf, mut latest) = (0usize, None);
    let mut recent = Recent::new();
    let mut start = 0;
    while start < data.len() {
        let newline = memchr::memchr(b'\n', &data[start..]).map(|at| start + at);
        let end = newline.unwrap_or(data.len());
        offsets.push(start as i64);
        lengths.push((end - start) as i64);
        let mut content_end = end;
        if end > start && data[end - 1] == b'\r' {
            crlf += 1;
            content_end -= 1;
        }
        let content_start = if start == 0 && bom { 3 } else { start };
        let line = &data[content_start..content_end.max(content_start)];
        if is_blank(line) {
            kinds.push(config.kind_blank.bind(py).clone());
            records.push(py.None().into_bound(py));
        } else {
            let fast = if line.len() <= max_line_bytes {
                record::fast_record(py, &config, line, max_depth, escapes_possible, &mut recent)?
            } else {
                None
            };
            let (kind, record, pointer) = match fast {
                Some((record, pointer)) => (config.kind_record.bind(py).clone(), record, pointer),
                None => {
                    let decoded = reference.call1((PyBytes::new(py, line),))?;
                    let (kind, record) = from_reference(&config, decoded)?;
                    let pointer = is_last_prompt(&record)?;
                    (kind, record, pointer)
                }
            };
            if pointer {
                latest = Some(offsets.len());
            }
            kinds.push(kind);
            records.push(record);
        }
        match newline {
            Some(at) => start = at + 1,
            None => break,
        }
    }
    let parts: [Bound<'py, PyAny>; 6] = [
        int64_bytes(py, &offsets).into_any(),
        int64_bytes(py, &lengths).into_any(),
        PyTuple::new(py, kinds)?.into_any(),
        PyTuple::new(py, records)?.into_any(),
        crlf.into_pyobject(py)?.into_any(),
        latest.into_pyobject(py)?.into_any(),
    ];
    PyTuple::new(py, parts)
}

/// One line's record as `decode_record` would return it, or None where the reference decides.
#[pyfunction]
fn scan_line<'py>(
    py: Python<'py>,
    line: &[u8],
    max_depth: usize,
    escapes_possible: bool,
) -> PyResult<Bound<'py, PyAny>> {
    guarded(|| scan_one(py, line, max_depth, escapes_possible))
}

fn scan_one<'py>(
    py: Python<'py>,
    line: &[u8],
    max_depth: usize,
    escapes_possible: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let config = config()?;
    if is_blank(line) {
        return Ok(py.None().into_bound(py));
    }
    let mut recent = Recent::new();
    let fast = record::fast_record(py, &config, line, max_depth, escapes_possible, &mut recent)?;
    Ok(fast.map_or_else(|| py.None().into_bound(py), |(record, _)| record))
}

/// The uuid graph of the index's records, as `graph.build_graph_reference` builds it:
/// (line_of, sorted duplicates, parent_line, starts, kids, uuid_lines as native int64 bytes,
/// whether some uuid line is not a sidechain record).
#[pyfunction]
fn link_lines<'py>(records: &Bound<'py, PyTuple>) -> PyResult<Bound<'py, PyTuple>> {
    guarded(|| graph::link_lines(records))
}

/// The active chain's tool pairing, as `pairing.check_pairing_reference` checks it:
/// (findings as (kind, line, count, ids), partial, reordered, API messages), or None where the
/// reference must decide.
#[pyfunction]
fn pair_tools<'py>(
    records: &Bound<'py, PyTuple>,
    chain: &Bound<'py, PyTuple>,
    line_of: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    guarded(|| pairing::pair_tools(records, chain, line_of))
}

/// Native int64 bytes (an `array('q')`'s) as values.
fn int64_values(raw: &[u8]) -> PyResult<Vec<i64>> {
    if raw.len() % 8 != 0 {
        return Err(PyTypeError::new_err("int64 bytes expected"));
    }
    let values = raw.chunks_exact(8).map(|chunk| {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        i64::from_ne_bytes(word)
    });
    Ok(values.collect())
}

/// A parent walk plus the rows Claude Code pulls back around it, as
/// `resume_chain.with_recovered_rows_reference` builds it, or None where the reference must decide.
/// The graph is its children starts, children and uuid lines as native int64 bytes.
#[pyfunction]
fn recover_rows<'py>(
    py: Python<'py>,
    records: &Bound<'py, PyTuple>,
    graph: (&[u8], &[u8], &[u8]),
    walk: Vec<i64>,
    below_until: Option<i64>,
) -> PyResult<Bound<'py, PyAny>> {
    guarded(|| {
        let tables = (
            int64_values(graph.0)?,
            int64_values(graph.1)?,
            int64_values(graph.2)?,
        );
        match recover::recover_rows(records, tables, &walk, below_until) {
            Ok(chain) => Ok(PyTuple::new(py, chain)?.into_any()),
            Err(recover::Stop::Reference) => Ok(py.None().into_bound(py)),
            Err(recover::Stop::Python(error)) => Err(error),
        }
    })
}

/// The uuid lines that count as the last conversation row and the checkpoint the pointers leave,
/// as `checkpoint.resume_start` finds them: (rows, (leaf, pointer line, explicit, ever explicit,
/// named)), or None where the reference must decide. `uuid_lines` as native int64 bytes.
#[pyfunction]
fn resume_rows<'py>(
    records: &Bound<'py, PyTuple>,
    uuid_lines: &[u8],
    sidechain: bool,
) -> PyResult<Bound<'py, PyAny>> {
    guarded(|| checkpoint::resume_rows(records, &int64_values(uuid_lines)?, sidechain))
}

/// Lines (1-based) whose record's flags have a bit of `mask`, as a tuple.
#[pyfunction]
fn flagged_lines<'py>(records: &Bound<'py, PyTuple>, mask: u32) -> PyResult<Bound<'py, PyTuple>> {
    guarded(|| graph::flagged_lines(records, mask))
}

/// The walk from a leaf towards the root, as `graph.UuidGraph.trace` walks it: (lines root
/// first, how it ended, the line that ended it), or None where the reference decides.
/// `parent_line` as native int64 bytes.
#[pyfunction]
fn trace_chain<'py>(
    records: &Bound<'py, PyTuple>,
    parent_line: &[u8],
    leaf: i64,
) -> PyResult<Bound<'py, PyAny>> {
    guarded(|| graph::trace(records, &int64_values(parent_line)?, leaf))
}

/// The sum of the seed estimates of some lines' records (`lines` None: of every record).
#[pyfunction]
#[pyo3(signature = (records, lines=None))]
fn line_tokens(records: &Bound<'_, PyTuple>, lines: Option<Vec<i64>>) -> PyResult<i64> {
    guarded(|| sweep::line_tokens(records, lines))
}

/// The distinct non-empty client versions of the records, as a set.
#[pyfunction]
fn client_versions<'py>(records: &Bound<'py, PyTuple>) -> PyResult<Bound<'py, PyAny>> {
    guarded(|| sweep::client_versions(records).map(Bound::into_any))
}

/// Lines (1-based) whose record's type is `name`, as a tuple.
#[pyfunction]
fn typed_lines<'py>(records: &Bound<'py, PyTuple>, name: &str) -> PyResult<Bound<'py, PyTuple>> {
    guarded(|| sweep::typed_lines(records, name))
}

/// The correlated file-history snapshot lines up to `last`, before the sweep's limit.
#[pyfunction]
fn snapshot_lines<'py>(
    records: &Bound<'py, PyTuple>,
    kept: Vec<i64>,
    last: i64,
) -> PyResult<Bound<'py, PyTuple>> {
    guarded(|| sweep::snapshot_lines(records, kept, last))
}

/// The identity checks' per-line facts as ((kind, line, bit), ...) and the cross-session
/// parent links off the chain. `parent_line` as native int64 bytes.
#[pyfunction]
fn identity_facts<'py>(
    records: &Bound<'py, PyTuple>,
    parent_line: &[u8],
    chain: Vec<i64>,
) -> PyResult<Bound<'py, PyAny>> {
    guarded(|| sweep::identity_facts(records, &int64_values(parent_line)?, chain))
}

/// The runs of equal named sessions along a chain as ((session, position), ...) and how many
/// of its records name a session.
#[pyfunction]
fn session_runs<'py>(
    records: &Bound<'py, PyTuple>,
    chain: Vec<i64>,
) -> PyResult<Bound<'py, PyAny>> {
    guarded(|| sweep::session_runs(records, chain))
}

/// The compiled Claude Code line index.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(configure, m)?)?;
    m.add_function(wrap_pyfunction!(index_lines, m)?)?;
    m.add_function(wrap_pyfunction!(scan_line, m)?)?;
    m.add_function(wrap_pyfunction!(link_lines, m)?)?;
    m.add_function(wrap_pyfunction!(pair_tools, m)?)?;
    m.add_function(wrap_pyfunction!(recover_rows, m)?)?;
    m.add_function(wrap_pyfunction!(resume_rows, m)?)?;
    m.add_function(wrap_pyfunction!(flagged_lines, m)?)?;
    m.add_function(wrap_pyfunction!(trace_chain, m)?)?;
    m.add_function(wrap_pyfunction!(line_tokens, m)?)?;
    m.add_function(wrap_pyfunction!(client_versions, m)?)?;
    m.add_function(wrap_pyfunction!(typed_lines, m)?)?;
    m.add_function(wrap_pyfunction!(snapshot_lines, m)?)?;
    m.add_function(wrap_pyfunction!(identity_facts, m)?)?;
    m.add_function(wrap_pyfunction!(session_runs, m)?)?;
    Ok(())
}
