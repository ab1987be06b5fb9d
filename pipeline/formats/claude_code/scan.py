"""The compiled line scanner (`_scan.c`), configured with the reference's own types and helpers.

`index_lines` builds the per-line index in one C pass wherever a line is plain compact JSON of
the types Claude Code writes, and hands every other line to `decode_record`, the pure-Python
reference, unchanged. Without a compiler at install time there is no `_scan` module: `COMPILED`
is False, `compiled.NOTICE` says so in one line, and the index is built by the reference alone.
"""

from __future__ import annotations

from functools import partial
from importlib import import_module
from types import ModuleType
from typing import Final

from pipeline.estimate.seed import char_weight_tenths
from pipeline.formats.claude_code.compiled import CORE_MODULE, NOTICE, SCANNER_MODULE
from pipeline.formats.claude_code.decode import DecodedRecord, decode_record, prompt_key_of_raw
from pipeline.formats.claude_code.line_guard import LineLimits
from pipeline.vocabulary import LineKind, PointerState, RecordType

__all__ = ["COMPILED", "ENGINE", "NOTICE", "ScannedLines", "index_lines", "scan_line"]

ScannedLines = tuple[bytes, bytes, tuple[LineKind, ...], tuple[DecodedRecord | None, ...], int, int | None]
"""Offsets and lengths (native int64 bytes), kinds, records, CRLF lines, the last pointer's line."""


def _load_core() -> ModuleType | None:
    """The compiled core (Rust) where built, else the C scanner, else None (the reference alone)."""
    for name in (CORE_MODULE, SCANNER_MODULE):
        try:
            module = import_module(name)
        except ImportError:  # not built here: the next one, then the reference, does the work
            continue
        module.configure(
            DecodedRecord,
            (PointerState.ABSENT, PointerState.LEAF, PointerState.EMPTY, PointerState.NULL),
            LineKind.BLANK,
            LineKind.RECORD,
            {kind.value: kind for kind in LineKind},
            prompt_key_of_raw,
            char_weight_tenths,
            tuple(str(kind.value) for kind in RecordType)[:8],
        )
        return module
    return None


_scan: Final = _load_core()
COMPILED: Final = _scan is not None
ENGINE: Final = _scan.__name__ if _scan is not None else "reference"
"""Which index builds here: the Rust core's module, the C scanner's, or the pure-Python reference."""


def index_lines(data: bytes, limits: LineLimits) -> ScannedLines:
    """Every physical line's offset, length, kind and record, as `index.build_index` keeps them."""
    if _scan is None:
        raise RuntimeError(NOTICE)
    escapes_possible = data.isascii()
    reference = partial(decode_record, limits=limits, escapes_possible=escapes_possible)
    scanned: ScannedLines = _scan.index_lines(
        data, limits.max_line_bytes, limits.max_json_depth, escapes_possible, reference
    )
    return scanned


def scan_line(line: bytes, limits: LineLimits, *, escapes_possible: bool) -> DecodedRecord | None:
    """The fast path's record for one non-blank line, or None where the reference decides."""
    if _scan is None:
        raise RuntimeError(NOTICE)
    if len(line) > limits.max_line_bytes:
        return None
    record: DecodedRecord | None = _scan.scan_line(line, limits.max_json_depth, escapes_possible)
    return record
