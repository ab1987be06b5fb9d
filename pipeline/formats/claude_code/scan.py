"""The compiled line index (the Rust core, `rust/`), configured with the reference's own types and helpers.

`index_lines` builds the per-line index in one compiled pass wherever a line is plain compact JSON
of the types Claude Code writes, and hands every other line to `decode_record`, the pure-Python
reference, unchanged. Without a Rust toolchain at install time there is no `_core` module:
`COMPILED` is False, `compiled.NOTICE` says so in one line, and the reference builds the index.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from types import ModuleType
from typing import Final

from pipeline.estimate.seed import char_weight_tenths
from pipeline.formats.claude_code.compiled import NOTICE
from pipeline.formats.claude_code.decode import DecodedRecord, decode_record, prompt_key_of_raw
from pipeline.formats.line_guard import LineLimits
from pipeline.vocabulary import LineKind, PointerState, RecordType

__all__ = [
    "COMPILED",
    "NOTICE",
    "IdentityFacts",
    "LinkedLines",
    "PairedTools",
    "ResumeRows",
    "ScannedLines",
    "SessionRuns",
    "client_versions",
    "flagged_lines",
    "identity_facts",
    "index_lines",
    "line_tokens",
    "link_lines",
    "pair_tools",
    "recover_rows",
    "resume_rows",
    "scan_line",
    "session_runs",
    "snapshot_lines",
    "trace_chain",
    "typed_lines",
]

ScannedLines = tuple[bytes, bytes, tuple[LineKind, ...], tuple[DecodedRecord | None, ...], int, int | None]
"""Offsets and lengths (native int64 bytes), kinds, records, CRLF lines, the last pointer's line."""

LinkedLines = tuple[dict[str, int], tuple[str, ...], bytes, bytes, bytes, bytes, bool]
"""The uuid graph's parts: first line by uuid, sorted duplicate uuids, then parent lines, children
starts, children and uuid lines as native int64 bytes, and whether some uuid line is not a
sidechain one (`pipeline.core.graph.UuidGraph`)."""

ResumeRows = tuple[tuple[int, ...], tuple[str | None, int | None, bool, bool, bool]]
"""The uuid lines that count as the last conversation row, and the checkpoint the pointers leave:
(leaf, pointer line, explicit, ever explicit, named) (`pipeline.core.topology.checkpoint`)."""

PairedTools = tuple[tuple[tuple[int, int | None, int, tuple[str, ...]], ...], int, int, int]
"""The tool pairing's findings as (kind, line, count, ids), kind indexing
`pipeline.core.validate.pairing.COMPILED_FINDINGS`; then partial and reordered answers, and
the number of API messages."""


_compiled: ModuleType | None
try:
    from pipeline.formats.claude_code import _core
except ImportError:  # built without a Rust toolchain: the reference does all the work
    _compiled = None
else:
    _core.configure(
        DecodedRecord,
        (PointerState.ABSENT, PointerState.LEAF, PointerState.EMPTY, PointerState.NULL),
        LineKind.BLANK,
        LineKind.RECORD,
        {kind.value: kind for kind in LineKind},
        prompt_key_of_raw,
        char_weight_tenths,
        tuple(str(kind.value) for kind in RecordType)[:8],
    )
    _compiled = _core

COMPILED: Final = _compiled is not None


def index_lines(data: bytes, limits: LineLimits) -> ScannedLines:
    """Every physical line's offset, length, kind and record, as `index.build_index` keeps them."""
    if _compiled is None:
        raise RuntimeError(NOTICE)
    escapes_possible = data.isascii()
    reference = partial(decode_record, limits=limits, escapes_possible=escapes_possible)
    scanned: ScannedLines = _compiled.index_lines(
        data, limits.max_line_bytes, limits.max_json_depth, escapes_possible, reference
    )
    return scanned


def scan_line(line: bytes, limits: LineLimits, *, escapes_possible: bool) -> DecodedRecord | None:
    """The fast path's record for one non-blank line, or None where the reference decides."""
    if _compiled is None:
        raise RuntimeError(NOTICE)
    if len(line) > limits.max_line_bytes:
        return None
    record: DecodedRecord | None = _compiled.scan_line(line, limits.max_json_depth, escapes_possible)
    return record


def link_lines(records: tuple[DecodedRecord | None, ...]) -> LinkedLines:
    """The uuid graph of an index's records, as `graph.build_graph_reference` builds it."""
    if _compiled is None:
        raise RuntimeError(NOTICE)
    linked: LinkedLines = _compiled.link_lines(records)
    return linked


def pair_tools(
    records: tuple[DecodedRecord | None, ...], chain: tuple[int, ...], line_of: Mapping[str, int]
) -> PairedTools | None:
    """The active chain's tool pairing, as `pairing.check_pairing_reference` checks it, or None
    where the reference decides (ids and blocks that disagree, a string that is not UTF-8)."""
    if _compiled is None:
        raise RuntimeError(NOTICE)
    paired: PairedTools | None = _compiled.pair_tools(records, chain, line_of)
    return paired


def recover_rows(
    records: tuple[DecodedRecord | None, ...],
    graph: tuple[bytes, bytes, bytes],
    walk: tuple[int, ...],
    below_until: int | None,
) -> tuple[int, ...] | None:
    """A parent walk plus the rows Claude Code pulls back around it, as
    `resume_chain.with_recovered_rows_reference` builds it, or None where the reference decides.

    `graph` is the uuid graph's children starts, children and uuid lines as native int64 bytes.
    """
    if _compiled is None:
        raise RuntimeError(NOTICE)
    chain: tuple[int, ...] | None = _compiled.recover_rows(records, graph, walk, below_until)
    return chain


def resume_rows(
    records: tuple[DecodedRecord | None, ...], uuid_lines: bytes, *, sidechain: bool
) -> ResumeRows | None:
    """The rows that count as last and the replayed checkpoint, as `checkpoint.resume_start`
    finds them, or None where the reference decides (a string that is not UTF-8)."""
    if _compiled is None:
        raise RuntimeError(NOTICE)
    found: ResumeRows | None = _compiled.resume_rows(records, uuid_lines, sidechain)
    return found


def flagged_lines(records: tuple[DecodedRecord | None, ...], mask: int) -> tuple[int, ...]:
    """Lines (1-based) whose record's `flags` has a bit of `mask`, in file order."""
    if _compiled is None:
        raise RuntimeError(NOTICE)
    lines: tuple[int, ...] = _compiled.flagged_lines(records, mask)
    return lines


def trace_chain(
    records: tuple[DecodedRecord | None, ...], parent_line: bytes, leaf: int
) -> tuple[tuple[int, ...], int, int] | None:
    """The walk from a leaf towards the root, as `graph.UuidGraph.trace_reference` walks it: (lines
    root first, how it ended, the line that ended it), or None where the reference decides."""
    if _compiled is None:
        raise RuntimeError(NOTICE)
    walked: tuple[tuple[int, ...], int, int] | None = _compiled.trace_chain(records, parent_line, leaf)
    return walked


def line_tokens(records: tuple[DecodedRecord | None, ...], lines: tuple[int, ...] | None = None) -> int:
    """The sum of the seed estimates of some lines' records (`lines` None: of every record)."""
    if _compiled is None:
        raise RuntimeError(NOTICE)
    total: int = _compiled.line_tokens(records, lines)
    return total


def client_versions(records: tuple[DecodedRecord | None, ...]) -> set[str]:
    """The distinct non-empty `version` texts of the records."""
    if _compiled is None:
        raise RuntimeError(NOTICE)
    versions: set[str] = _compiled.client_versions(records)
    return versions


def typed_lines(records: tuple[DecodedRecord | None, ...], name: str) -> tuple[int, ...]:
    """Lines (1-based) whose record's `type` is `name`, in file order."""
    if _compiled is None:
        raise RuntimeError(NOTICE)
    lines: tuple[int, ...] = _compiled.typed_lines(records, name)
    return lines


def snapshot_lines(
    records: tuple[DecodedRecord | None, ...], kept: tuple[int, ...], last: int
) -> tuple[int, ...]:
    """`partition.correlated_snapshots_reference`'s snapshot lines up to line `last`."""
    if _compiled is None:
        raise RuntimeError(NOTICE)
    lines: tuple[int, ...] = _compiled.snapshot_lines(records, kept, last)
    return lines


IdentityFacts = tuple[tuple[tuple[int, int, bool], ...], int]
"""`checks._identity_findings`' per-line facts as (kind, line, bit), kind indexing
`checks.COMPILED_IDENTITY`, then the cross-session parent links off the chain."""


def identity_facts(
    records: tuple[DecodedRecord | None, ...], parent_line: bytes, chain: tuple[int, ...]
) -> IdentityFacts:
    """The identity checks' per-line facts, as `checks.identity_line_facts_reference` finds them."""
    if _compiled is None:
        raise RuntimeError(NOTICE)
    facts: IdentityFacts = _compiled.identity_facts(records, parent_line, chain)
    return facts


SessionRuns = tuple[tuple[tuple[str, int], ...], int]
"""The runs of equal named sessions along a chain as (session, position), and how many of the
chain's records name a session (`pipeline.core.topology.strict.analyze_lineage`)."""


def session_runs(records: tuple[DecodedRecord | None, ...], chain: tuple[int, ...]) -> SessionRuns:
    """A chain's session runs, as `strict.session_runs_reference` reads them."""
    if _compiled is None:
        raise RuntimeError(NOTICE)
    runs: SessionRuns = _compiled.session_runs(records, chain)
    return runs
