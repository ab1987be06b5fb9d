"""The file side of a transcript builder: output, counters, and records that carry no uuid.

``RecordWriter`` owns where lines go (kept in memory or streamed to a binary sink), how a file's
bytes are assembled (line endings, BOM, final newline), and the control records Claude Code
writes beside the message chain: file-history snapshots, queue operations, titles, modes,
``last-prompt`` and ``summary`` pointers. :class:`~pipeline.testing.builder.TranscriptBuilder`
adds the chain on top.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import orjson

from pipeline.testing._records import Feature, Stamper, truncate_prompt

__all__ = ["CURSOR", "STEP_SIDE", "RecordWriter"]

Json = dict[str, Any]

CURSOR: Any = object()  # sentinel: "use the current cursor"
STEP_SIDE = (0, 60)  # clock step (ms) before side records: hooks, snapshots, pointers
_BOM = b"\xef\xbb\xbf"


class RecordWriter:
    """Collect serialized lines for one transcript file and write the uuid-less control records."""

    def __init__(
        self,
        *,
        session_id: str,
        stamp: Stamper,
        sink: IO[bytes] | None,
        tap: Callable[[Json], None] | None,
    ) -> None:
        self._stamp = stamp
        self._session_id = session_id
        self._cursor: str | None = None
        self._reserved_uuid: str | None = None
        self._last_prompt: str | None = None
        self._features: set[Feature] = set()
        self._lines: list[bytes] | None = None if sink is not None else []
        self._sink = sink
        self._tap = tap
        self._line_count = 0
        self._byte_count = 0

    # ------------------------------------------------------------------ state
    @property
    def session_id(self) -> str:
        """The ``sessionId`` every record carries."""
        return self._session_id

    @property
    def cursor(self) -> str | None:
        """The uuid the next chain record will use as ``parentUuid``."""
        return self._cursor

    @property
    def features(self) -> frozenset[Feature]:
        """Features written so far."""
        return frozenset(self._features)

    @property
    def line_count(self) -> int:
        """Lines written so far."""
        return self._line_count

    @property
    def byte_count(self) -> int:
        """Bytes written so far, counting one ``\\n`` per line."""
        return self._byte_count

    @property
    def now(self) -> datetime:
        """The clock: the last timestamp written, or the start time."""
        return datetime.fromtimestamp(self._stamp.now_ms / 1000, tz=UTC)

    @property
    def last_prompt_text(self) -> str | None:
        """Text of the last human prompt written (what ``last-prompt`` records by default)."""
        return self._last_prompt

    def mark(self, feature: Feature) -> None:
        """Record a feature the builder cannot see itself (e.g. :attr:`Feature.HAS_SUBAGENTS`)."""
        self._features.add(feature)

    def pause(self, seconds: float) -> None:
        """Let time pass (user thinking, a long tool) before the next record."""
        self._stamp.advance(int(seconds * 1000))

    # ------------------------------------------------------------------ control records
    def file_history_snapshot(
        self,
        message_id: str | None = None,
        *,
        tracked: Json | None = None,
        update_of: str | None = None,
    ) -> str:
        """A ``file-history-snapshot``; returns its ``messageId``.

        Without ``message_id`` it names the *next* human prompt (Claude Code writes the snapshot
        just before that prompt), and the next ``user()`` call takes that uuid. ``update_of``
        writes an ``isSnapshotUpdate`` record amending an earlier prompt's snapshot.
        """
        if message_id is None:
            if update_of is None:
                self._reserved_uuid = self._reserved_uuid or self._stamp.uuid4()
                message_id = self._reserved_uuid
            else:
                message_id = self._stamp.uuid4()
        ts = self._stamp.tick(*STEP_SIDE)
        self._features.add(Feature.FILE_HISTORY)
        self._emit(
            {
                "type": "file-history-snapshot",
                "messageId": message_id,
                "snapshot": {
                    "messageId": update_of or message_id,
                    "trackedFileBackups": tracked or {},
                    "timestamp": ts,
                },
                "isSnapshotUpdate": update_of is not None,
            }
        )
        return message_id

    def queue_operation(self, operation: str = "enqueue", content: str | None = None) -> None:
        """A ``queue-operation`` record (input queued while the agent was busy)."""
        rec: Json = {
            "type": "queue-operation",
            "operation": operation,
            "timestamp": self._stamp.tick(*STEP_SIDE),
            "sessionId": self._session_id,
        }
        if content is not None:
            rec["content"] = content
        self._features.add(Feature.QUEUE_OPERATION)
        self._emit(rec)

    def custom_title(self, title: str) -> None:
        """A ``custom-title`` record."""
        self._features.add(Feature.TITLE)
        self._emit({"type": "custom-title", "sessionId": self._session_id, "customTitle": title})

    def mode(self, mode: str = "normal") -> None:
        """A ``mode`` record."""
        self._features.add(Feature.MODE)
        self._emit({"type": "mode", "mode": mode, "sessionId": self._session_id})

    def permission_mode(self, mode: str = "default") -> None:
        """A ``permission-mode`` record (2.1.1xx writes one at session start and on changes)."""
        self._features.add(Feature.MODE)
        self._emit({"type": "permission-mode", "permissionMode": mode, "sessionId": self._session_id})

    def last_prompt(
        self,
        text: str | None = None,
        *,
        leaf: str | None = CURSOR,
        with_leaf: bool = True,
        explicit: bool = False,
    ) -> None:
        """A ``last-prompt`` pointer: the prompt text and, ``with_leaf``, the resume ``leafUuid``.

        The text defaults to the last human prompt, cut like Claude Code cuts it; the leaf
        defaults to the cursor. ``explicit`` marks it as written by a rewind or ``/clear``.
        """
        rec: Json = {
            "type": "last-prompt",
            "lastPrompt": text if text is not None else truncate_prompt(self._last_prompt or ""),
        }
        if with_leaf:
            rec["leafUuid"] = self._cursor if leaf is CURSOR else leaf
            self._features.add(Feature.LAST_PROMPT_LEAF)
            if explicit:
                rec["explicit"] = True
        else:
            self._features.add(Feature.LAST_PROMPT_TEXT)
        rec["sessionId"] = self._session_id
        self._emit(rec)

    def summary_record(self, summary: str, leaf_uuid: str | None) -> None:
        """An old-style ``summary`` record naming a leaf (often one in another session)."""
        self._features.add(Feature.SUMMARY_RECORD)
        self._emit({"type": "summary", "summary": summary, "leafUuid": leaf_uuid})

    def raw(self, line: bytes) -> None:
        """Append ``line`` verbatim (malformed JSON, arrays, invalid UTF-8, truncated records)."""
        self._features.add(Feature.RAW_LINE)
        self._write(line)

    # ------------------------------------------------------------------ output
    def lines(self) -> list[bytes]:
        """The lines written so far, without terminators (in-memory writers only)."""
        if self._lines is None:
            raise RuntimeError("this builder streams to a sink; its lines are not kept")
        return list(self._lines)

    def to_bytes(self, *, crlf: bool = False, bom: bool = False, final_newline: bool = True) -> bytes:
        """The file's bytes, with the requested line ending, optional BOM and final newline."""
        sep = b"\r\n" if crlf else b"\n"
        lines = self.lines()
        data = sep.join(lines)
        if final_newline and lines:
            data += sep
        return _BOM + data if bom else data

    def write(
        self, path: Path | str, *, crlf: bool = False, bom: bool = False, final_newline: bool = True
    ) -> Path:
        """Write :meth:`to_bytes` to ``path`` (creating parent directories) and return the path."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(self.to_bytes(crlf=crlf, bom=bom, final_newline=final_newline))
        return target

    # ------------------------------------------------------------------ internals
    def _take_reserved(self) -> str | None:
        uid, self._reserved_uuid = self._reserved_uuid, None
        return uid

    def _emit(self, rec: Json) -> int:
        """Serialize ``rec`` compactly (as Claude Code does) and append it; return the line length."""
        if self._tap is not None:
            self._tap(rec)
        line = orjson.dumps(rec)
        self._write(line)
        return len(line)

    def _write(self, line: bytes) -> None:
        if self._lines is not None:
            self._lines.append(line)
        else:
            assert self._sink is not None
            self._sink.write(line + b"\n")
        self._line_count += 1
        self._byte_count += len(line) + 1
