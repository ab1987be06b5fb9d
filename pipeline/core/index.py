"""The per-line index: where every physical line is, what it is, and the few facts stages need.

Parsed objects are never kept. A 500 MB session costs its bytes plus a small struct per line;
a stage that needs a line's content re-reads it by offset (`LineIndex.raw_line`).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from pipeline.formats.claude_code import scan
from pipeline.formats.claude_code.decode import DecodedRecord, LineProblem, decode_record
from pipeline.formats.line_guard import LineLimits
from pipeline.read.lines import BOM, content_span, iter_line_spans
from pipeline.vocabulary import LineKind, RecordType, SourceFormat

__all__ = ["LineIndex", "build_index", "build_index_reference", "iter_line_spans"]


@dataclass(frozen=True, slots=True)
class LineIndex:
    """Compact facts about every physical line of one session file (lines are 1-based)."""

    format: SourceFormat
    offsets: array[int]
    lengths: array[int]  # bytes of the line without its LF (a CR, if any, is included)
    kinds: tuple[LineKind, ...]
    records: tuple[DecodedRecord | None, ...]
    has_bom: bool
    crlf_lines: int
    final_newline: bool
    latest_pointer: int | None  # line of the physically last `last-prompt` record, if any

    def __len__(self) -> int:
        return len(self.kinds)

    def record(self, line: int) -> DecodedRecord | None:
        """The decoded record on a 1-based line, or None for a line that is not one."""
        return self.records[line - 1]

    def entry(self, line: int) -> DecodedRecord:
        """The record on a line known to hold one (a graph node); a programming error otherwise."""
        record = self.records[line - 1]
        if record is None:
            raise LookupError(f"line {line} holds no record")
        return record

    def flagged(self, mask: int) -> tuple[int, ...]:
        """Lines whose record has a `RecordFlag` bit of `mask`, in file order: one whole-file
        scan, in the Rust core where built (`flagged_reference` is what it is held to)."""
        return scan.flagged_lines(self.records, mask) if scan.COMPILED else self.flagged_reference(mask)

    def flagged_reference(self, mask: int) -> tuple[int, ...]:
        """`flagged` in pure Python."""
        records = self.records
        return tuple(n for n, record in enumerate(records, 1) if record is not None and record.flags & mask)

    def tokens(self, lines: tuple[int, ...] | None = None) -> int:
        """Seed-estimated tokens of some lines' records (None: of every record), summed in the
        Rust core where built (`tokens_reference` is what it is held to)."""
        return scan.line_tokens(self.records, lines) if scan.COMPILED else self.tokens_reference(lines)

    def tokens_reference(self, lines: tuple[int, ...] | None = None) -> int:
        """`tokens` in pure Python."""
        if lines is None:
            return sum(record.tokens for record in self.records if record is not None)
        return sum(record.tokens for line in lines if (record := self.record(line)) is not None)

    def client_versions(self) -> set[str]:
        """The distinct non-empty `version` texts of the records (a whole-file scan, compiled where built)."""
        return scan.client_versions(self.records) if scan.COMPILED else self.client_versions_reference()

    def client_versions_reference(self) -> set[str]:
        """`client_versions` in pure Python."""
        return {record.version for record in self.records if record is not None and record.version}

    def typed(self, kind: RecordType) -> tuple[int, ...]:
        """Lines whose record is of one type, in file order (a whole-file scan, compiled where built)."""
        return scan.typed_lines(self.records, kind.value) if scan.COMPILED else self.typed_reference(kind)

    def typed_reference(self, kind: RecordType) -> tuple[int, ...]:
        """`typed` in pure Python."""
        records = self.records
        return tuple(n for n, record in enumerate(records, 1) if record is not None and record.type == kind)

    def raw_line(self, data: bytes, line: int) -> bytes:
        """Exact bytes of a line without its terminator (CR and the file's BOM removed)."""
        start, end = self.span(data, line)
        return data[start:end]

    def span(self, data: bytes, line: int) -> tuple[int, int]:
        """Where `raw_line` is in `data`, for readers of huge lines that must not copy them."""
        return content_span(data, self.offsets[line - 1], self.lengths[line - 1], first=line == 1)

    def record_lines(self, data: bytes) -> Iterator[tuple[int, DecodedRecord, bytes]]:
        """(1-based line, record, exact bytes) of every record line, in physical order."""
        for number, record in enumerate(self.records, 1):
            if record is not None:
                yield number, record, self.raw_line(data, number)

    def lines_of(self, kind: LineKind) -> Iterator[int]:
        """1-based numbers of the lines of one kind."""
        return (number for number, value in enumerate(self.kinds, 1) if value is kind)


_PROBLEM_KINDS: Final = {kind.value: kind for kind in LineKind}


def build_index(data: bytes, fmt: SourceFormat, limits: LineLimits) -> LineIndex:
    """Index every physical line of a Claude Code transcript's bytes.

    The compiled scanner does it in one pass where it is built; it hands every line it does not
    decide to `decode_record`, so the index is the reference's (`build_index_reference`) exactly.
    """
    if not scan.COMPILED:
        return build_index_reference(data, fmt, limits)
    offsets_bytes, lengths_bytes, kinds, records, crlf, latest_pointer = scan.index_lines(data, limits)
    offsets: array[int] = array("q")
    offsets.frombytes(offsets_bytes)
    lengths: array[int] = array("q")
    lengths.frombytes(lengths_bytes)
    return LineIndex(
        format=fmt,
        offsets=offsets,
        lengths=lengths,
        kinds=kinds,
        records=records,
        has_bom=data.startswith(BOM),
        crlf_lines=crlf,
        final_newline=data.endswith(b"\n"),
        latest_pointer=latest_pointer,
    )


def build_index_reference(data: bytes, fmt: SourceFormat, limits: LineLimits) -> LineIndex:
    """The pure-Python index: the reference the compiled scanner is held to, line for line."""
    offsets: array[int] = array("q")
    lengths: array[int] = array("q")
    kinds: list[LineKind] = []
    records: list[DecodedRecord | None] = []
    crlf = 0
    latest_pointer = None
    # Raw non-ASCII bytes prove a writer that does not escape printable characters (Claude Code).
    escapes_possible = data.isascii()
    for start, end in iter_line_spans(data):
        offsets.append(start)
        lengths.append(end - start)
        content_end = end
        if end > start and data[end - 1] == 0x0D:
            crlf += 1
            content_end -= 1
        content_start = start + len(BOM) if start == 0 and data.startswith(BOM) else start
        line = data[content_start:content_end]
        if not line.strip():
            kinds.append(LineKind.BLANK)
            records.append(None)
            continue
        decoded = decode_record(line, limits=limits, escapes_possible=escapes_possible)
        if isinstance(decoded, LineProblem):
            kinds.append(_PROBLEM_KINDS[decoded.kind])
            records.append(None)
        else:
            kinds.append(LineKind.RECORD)
            records.append(decoded)
            if decoded.type == RecordType.LAST_PROMPT:
                latest_pointer = len(records)
    return LineIndex(
        format=fmt,
        offsets=offsets,
        lengths=lengths,
        kinds=tuple(kinds),
        records=tuple(records),
        has_bom=data.startswith(BOM),
        crlf_lines=crlf,
        final_newline=data.endswith(b"\n"),
        latest_pointer=latest_pointer,
    )
