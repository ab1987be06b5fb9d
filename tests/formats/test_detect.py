"""Which agent wrote a file, and what a file that is nobody's transcript holds instead.

The corpora are detected as their manifests say; every other agent's files, built from the
public formats, are named as that agent's; and no line of any of them is claimed by an agent
that did not write it.
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path, PurePath

import orjson
import pytest

from pipeline.formats.detect import NotTranscript, detect_format, why_not_a_transcript
from pipeline.formats.registry import RECOGNIZED
from pipeline.testing import TranscriptBuilder
from pipeline.vocabulary import SourceFormat
from tests.conftest import CORPUS
from tests.support.agent_files import AGENT_FILES, gemini_chat, gemini_checkpoint, gemini_legacy
from tests.support.rollout_builder import RolloutBuilder

PI_FILES = CORPUS / "pi" / "files"


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
        (b'{\n  "name": "package",\n  "version": "1.0.0"\n}\n', NotTranscript.JSON_DOCUMENT),  # indented
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


def _manifest_formats(corpus: Path) -> dict[str, SourceFormat]:
    """Each corpus file's format as its manifest records it (`format / versions`, first word)."""
    formats: dict[str, SourceFormat] = {}
    for row in (corpus.parent / "MANIFEST.md").read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in row.split("|")]
        if len(cells) > 6 and (corpus / cells[1]).is_file():
            formats[cells[1]] = SourceFormat(cells[6].split()[0])
    return formats


def test_every_corpus_file_is_detected_as_the_agent_that_wrote_it(
    corpus_files: Path, codex_files: Path
) -> None:
    expected = _manifest_formats(corpus_files)
    assert len(expected) == len(list(corpus_files.iterdir())) == 64
    expected |= {f"codex/{p.name}": SourceFormat.CODEX for p in codex_files.iterdir()}
    expected |= {f"pi/{p.name}": SourceFormat.PI for p in PI_FILES.iterdir()}
    folders = {"codex": codex_files, "pi": PI_FILES}
    found = {}
    for name in expected:
        folder, _, rest = name.partition("/")
        path = folders[folder] / rest if folder in folders else corpus_files / name
        found[name] = detect_format(path.read_bytes(), path)
    assert found == expected
    assert Counter(found.values())[SourceFormat.CLAUDE_CODE] == 54


def _claimants(data: bytes) -> set[SourceFormat]:
    """Every agent whose signature claims at least one line of a file."""
    owners: set[SourceFormat] = set()
    for line in data.splitlines():
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(record, dict):
            owners.update(s.format for s in RECOGNIZED if s.record is not None and s.record(record))
    return owners


def test_no_line_of_a_real_session_is_claimed_by_another_agent(corpus_files: Path, codex_files: Path) -> None:
    """Positive identification: every line an agent claims in the corpora is that agent's."""
    expected = _manifest_formats(corpus_files)
    paths = [(corpus_files / name, fmt) for name, fmt in expected.items()]
    paths += [(p, SourceFormat.CODEX) for p in codex_files.iterdir()]
    paths += [(p, SourceFormat.PI) for p in PI_FILES.iterdir()]
    strays = {p.name: claimed - {fmt} for p, fmt in paths if (claimed := _claimants(p.read_bytes())) - {fmt}}
    assert strays == {}


def _document_claimants(data: bytes, path: PurePath) -> set[SourceFormat]:
    """Every agent whose signature claims a file that is one JSON document."""
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError:
        return set()
    return {s.format for s in RECOGNIZED if s.document is not None and s.document(document, path)}


@pytest.mark.parametrize("relative", sorted(AGENT_FILES))
def test_another_agents_session_is_named_as_that_agent(relative: str) -> None:
    data, agent = AGENT_FILES[relative]
    assert detect_format(data, PurePath(relative)) is agent
    assert _claimants(data) <= {agent}  # no line of it is any other agent's
    assert _document_claimants(data, PurePath(relative)) <= {agent}


def test_qwen_and_gemini_records_are_never_claude_code() -> None:
    """The two shapes the issue found read as Claude Code, and Claude Code's own beside them."""
    qwen = _claimants(AGENT_FILES[next(k for k in AGENT_FILES if k.startswith("qwen/"))][0])
    gemini = _claimants(gemini_chat())
    assert qwen == {SourceFormat.QWEN_CODE} and gemini == {SourceFormat.GEMINI_CLI}
    assert _claimants(_session()) == {SourceFormat.CLAUDE_CODE}


def test_a_generic_shape_needs_its_agents_file_name() -> None:
    """A JSON list of chat messages is Cline's only as `tasks/<id>/api_conversation_history.json`."""
    api = next(
        data for name, (data, _) in AGENT_FILES.items() if name.endswith("api_conversation_history.json")
    )
    assert detect_format(api, PurePath("tasks/1/api_conversation_history.json")) is SourceFormat.CLINE
    assert detect_format(api, PurePath("exports/chat.json")) is SourceFormat.UNKNOWN
    assert detect_format(api) is SourceFormat.UNKNOWN
    assert why_not_a_transcript(api) is NotTranscript.JSON_DOCUMENT
    history = b"\n# 2026-04-20 10:00:05.123456\n+ls\n"
    assert detect_format(history, PurePath(".aider.input.history")) is SourceFormat.AIDER
    assert detect_format(history, PurePath(".python_history")) is SourceFormat.UNKNOWN


def test_a_line_two_agents_could_own_decides_nothing() -> None:
    """A bare turn with no Claude Code chain key is nobody's; the next line decides."""
    bare = b'{"type":"user","message":{"role":"user","content":"hi"}}\n'
    assert detect_format(bare) is SourceFormat.UNKNOWN
    assert detect_format(bare + RolloutBuilder(seed=3).to_bytes()) is SourceFormat.CODEX


def test_a_document_gemini_cli_and_its_fork_share_belongs_to_the_home_it_lies_under() -> None:
    """Qwen Code forked Gemini CLI and saves the same checkpoints; the prompt log is no session."""
    checkpoint = gemini_checkpoint(bare=False)
    assert (
        detect_format(checkpoint, PurePath("/h/.gemini/tmp/ab/checkpoint-x.json")) is SourceFormat.GEMINI_CLI
    )
    assert detect_format(checkpoint, PurePath("/h/.qwen/tmp/ab/checkpoint-x.json")) is SourceFormat.QWEN_CODE
    assert detect_format(gemini_legacy(), PurePath("/h/.qwen/tmp/ab/chats/s.json")) is SourceFormat.QWEN_CODE
    prompts = b'[{"sessionId": "s", "messageId": 0, "type": "user", "message": "/model", "timestamp": "t"}]'
    assert detect_format(prompts, PurePath("/h/.gemini/tmp/ab/logs.json")) is SourceFormat.UNKNOWN


def test_a_claude_code_record_with_a_damaged_field_is_still_claude_codes() -> None:
    """Damage is for the validator to report: the chain envelope still says whose record it is."""
    first = orjson.loads(_session().splitlines()[0])
    first["message"]["content"] = 7  # a wrong type, as the fuzzer plants it
    assert detect_format(orjson.dumps(first) + b"\n") is SourceFormat.CLAUDE_CODE
    del first["userType"]  # without Claude Code's own key, a wrong-typed turn is nobody's
    assert detect_format(orjson.dumps(first) + b"\n") is SourceFormat.UNKNOWN
