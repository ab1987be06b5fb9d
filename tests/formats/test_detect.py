"""Which agent wrote a file, and what a file that is nobody's transcript holds instead."""

from __future__ import annotations

import random

import orjson
import pytest

from pipeline.formats.detect import NotTranscript, detect_format, why_not_a_transcript
from pipeline.testing import TranscriptBuilder
from pipeline.testing.rollout_builder import RolloutBuilder
from pipeline.vocabulary import SourceFormat


def _session() -> bytes:
    b = TranscriptBuilder(seed=2)
    b.user("hello")
    b.assistant(b.text("hi"))
    return b.to_bytes()


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"", NotTranscript.EMPTY),
        (b"\n \r\n\t\n", NotTranscript.EMPTY),
        (random.Random(1).randbytes(5000), NotTranscript.BINARY),
        (b"\x7fELF\x02\x01\x01" + b"\x00" * 200, NotTranscript.BINARY),
        (b'[{"type":"user"},{"type":"assistant"}]', NotTranscript.JSON_DOCUMENT),
        (b'{"name":"package","version":"1.0.0"}\n', NotTranscript.JSON_DOCUMENT),
        (b'{"event":"a","at":1}\n{"event":"b","at":2}\n', NotTranscript.UNKNOWN_RECORDS),
        (b"just some notes\nwritten by hand\n", NotTranscript.TEXT),
    ],
)
def test_a_file_that_is_no_transcript_says_what_it_is(data: bytes, why: NotTranscript) -> None:
    assert detect_format(data) in (SourceFormat.EMPTY, SourceFormat.UNKNOWN)
    assert why_not_a_transcript(data) is why


def test_a_transcript_with_a_damaged_head_is_still_recognized() -> None:
    garbage = b"\n".join(orjson.dumps({"noise": n}) for n in range(200))
    assert detect_format(garbage + b"\n" + _session()) is SourceFormat.CLAUDE_CODE
    assert detect_format(_session()) is SourceFormat.CLAUDE_CODE


def test_codex_rollouts_of_both_layouts_are_recognized_and_pi_stays_pi() -> None:
    assert detect_format(RolloutBuilder(seed=3).to_bytes()) is SourceFormat.CODEX
    legacy = b'{"id":"x","timestamp":"2025-08-19T08:25:08.061Z","instructions":null,"git":null}\n'
    legacy += b'{"record_type":"state"}\n{"type":"message","id":null,"role":"user","content":[]}\n'
    assert detect_format(legacy) is SourceFormat.CODEX
    assert detect_format(b'{"type":"session","id":"s","version":3}\n') is SourceFormat.PI
