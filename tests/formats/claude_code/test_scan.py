"""The compiled line index is held to the pure-Python reference, line for line and field for field.

`build_index` (the Rust core where built) must equal `build_index_reference` (the pure-Python
loop over `decode_record`) on every corpus file, on every kind of fuzzed damage, on a generated
fleet and on lines built to hit each rule of the fast path; and its JSON scanner must accept
exactly what orjson accepts, wherever it answers at all. test_core_reports.py holds the whole
`validate` path to the reference the same way.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from pipeline.core.index import LineIndex, build_index, build_index_reference
from pipeline.formats.claude_code import scan
from pipeline.formats.claude_code.decode import DecodedRecord, decode_record
from pipeline.formats.line_guard import LineLimits
from pipeline.testing.fuzz import Mutation, mutate
from pipeline.testing.fuzzing import builder_sources
from pipeline.testing.settings import LIMITS
from pipeline.testing.synth import generate_fleet
from pipeline.vocabulary import SourceFormat

pytestmark = pytest.mark.skipif(not scan.COMPILED, reason="the compiled scanner is not built here")

FMT = SourceFormat.CLAUDE_CODE


def _same_index(data: bytes, limits: LineLimits = LIMITS) -> LineIndex:
    fast, reference = build_index(data, FMT, limits), build_index_reference(data, FMT, limits)
    for number, (mine, theirs) in enumerate(zip(fast.records, reference.records, strict=True), 1):
        assert mine == theirs, f"line {number}: {reference.raw_line(data, number)[:200]!r}"
    assert fast.kinds == reference.kinds
    assert fast == reference  # offsets, lengths, BOM, CRLF count, final newline, last pointer too
    return fast


def _fields(record: DecodedRecord) -> tuple[object, ...]:
    return tuple(getattr(record, name) for name in record.__struct_fields__)


def test_every_corpus_file_indexes_identically(corpus_files: Path) -> None:
    answered = 0
    for path in sorted(corpus_files.iterdir()):
        data = path.read_bytes()
        index = _same_index(data)
        escapes = data.isascii()
        for number, record in enumerate(index.records, 1):
            if record is None:
                continue
            line = index.raw_line(data, number)
            fast = scan.scan_line(line, LIMITS, escapes_possible=escapes)
            if fast is not None:  # where the fast path answers, it answers what the reference does
                answered += 1
                reference = decode_record(line, limits=LIMITS, escapes_possible=escapes)
                assert isinstance(reference, DecodedRecord)
                assert _fields(fast) == _fields(reference)
                assert [type(v) for v in _fields(fast)] == [type(v) for v in _fields(reference)]
    assert answered > 10_000  # the fast path decides almost every real line itself


@pytest.mark.parametrize("kind", list(Mutation))
def test_fuzzed_sessions_index_identically(kind: Mutation, corpus_files: Path) -> None:
    sources = builder_sources()
    corpus = sorted(p for p in corpus_files.iterdir() if p.suffix == ".jsonl")[:12]
    sources.update({p.name: p.read_bytes() for p in corpus})
    for seed, (name, data) in enumerate(sorted(sources.items())):
        rng = random.Random(f"{kind}-{name}-{seed}")
        damaged = mutate(data, rng, kind, depth=2_000, huge_bytes=200_000)
        _same_index(damaged)


def test_a_generated_fleet_indexes_identically(tmp_path: Path) -> None:
    manifest = generate_fleet(tmp_path, target_bytes=4 << 20, seed=7)
    assert manifest.session_count > 3
    for path in sorted(tmp_path.rglob("*.jsonl")):
        _same_index(path.read_bytes())


def test_limits_below_the_fast_path_own_are_the_reference_ones() -> None:
    nested = b'{"type":"user","a":' + b"[" * 12 + b"]" * 12 + b"}"
    long = b'{"type":"user","a":"' + b"x" * 100 + b'"}'
    index = _same_index(b"\n".join([nested, long]), LineLimits(max_line_bytes=64, max_json_depth=10))
    assert [kind.value for kind in index.kinds] == ["nesting-too-deep", "too-long"]


RECORD = {
    "parentUuid": "p-1",
    "isSidechain": False,
    "type": "user",
    "message": {"role": "user", "content": [{"type": "text", "text": "fix the build"}]},
    "uuid": "u-1",
    "timestamp": "2026-01-01T00:00:00.000Z",
    "sessionId": "s-1",
    "cwd": "/work",
    "version": "2.1.0",
}


# Claude Code's own form is kept as an int, any other text as it is: each must read back whole.
STAMPS = [
    "2026-01-01T00:00:00.000Z",
    "0000-00-00T00:00:00.000Z",
    "9999-12-31T23:59:59.999Z",
    "2026-01-01T00:00:00Z",
    "2026-01-01T00:00:00.000+00:00",
    "2026-01-01 00:00:00.000Z",
    "2026-01-01T00:00:00.0000",
    "\uff12026-01-01T00:00:00.000Z",  # a full-width digit: not an ASCII one
    "",
    1767225600000,
    None,
]


def _dumps(value: object) -> bytes:
    """Compact JSON as Claude Code writes it (the stdlib: it also writes integers beyond 64 bits)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def _line(**members: object) -> bytes:
    return _dumps({**RECORD, **members})


EDGE_LINES = [
    _line(),
    _line(message={"role": "user", "content": "  <command-name>/clear</command-name>"}),
    _line(
        message={"role": "user", "content": [{"type": "text", "text": "   "}, {"type": "text", "text": "é"}]}
    ),
    _line(
        message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": "", "toolUseID": "t"}]}
    ),
    _line(
        message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": True, "toolUseID": "t"}]}
    ),
    _line(message={"role": "user", "content": [{"type": "tool_result"}, {"type": "odd"}, {"type": None}]}),
    _line(message={"role": "user", "content": [{"type": "tool_use", "id": None}, "not a block"]}),
    _line(message={"role": "user", "content": None}, isMeta=True, isCompactSummary=True),
    _line(message={"role": "assistant", "id": "m", "content": [{"type": "thinking"}, {"type": "image"}]}),
    _line(message={"id": 12345678901234567890123, "content": []}),
    _line(message="a string"),
    _line(message=None),
    _line(type="assistant", costUSD=0.00005),
    _line(type="assistant", costUSD=1e-3),
    _line(type="assistant", costUSD=7),
    _line(type="attachment", attachment={"toolUseID": "tu-1", "text": "ünïcödé 漢字 🙂"}),
    _line(type="attachment", attachment="text"),
    _line(type="system", subtype="compact_boundary", content="c", compactMetadata={"a": [1, 2.5]}),
    _line(type="system", subtype=None, content=None, error={"e": "x"}),
    _line(type="system", content='"subtype":null'),
    _line(type="last-prompt", leafUuid="u-1", lastPrompt="fix the bu\u2026", explicit=True),
    _line(type="last-prompt", leafUuid=None, explicit=True),
    _line(type="last-prompt", leafUuid=""),
    _line(type="last-prompt", leafUuid=0),
    _line(type="file-history-snapshot", messageId="m-1"),
    _line(type="progress", agentId="a", sourceToolAssistantUUID="x", logicalParentUuid="l"),
    _line(type="", uuid="", parentUuid=""),
    _line(uuid=None, parentUuid=None, sessionId=None, cwd=None, version=None, timestamp=None),
    *(_line(timestamp=stamp) for stamp in STAMPS),
    b'{"type":"user","timestamp":"\\u0032026-01-01T00:00:00.000Z","message":{"content":"escaped digit"}}',
    b'{"type":"user","timestamp":"2026-01-01T00:00:00.000\\u005a","message":{"content":"escaped Z"}}',
    _line(cwd='C:\\Users\\dev\\"quoted"\n\ttab', version="ver\u00e9"),
    _line(cwd="/a\u007f/b\u2028"),
    b'{"type":"user","uuid":"a\\/b","message":{"role":"user","content":"x"}}',
    b'{"type":"user","uuid":"\\u0041","message":{"role":"user","content":"\\u00e9 \\ud83d\\ude00"}}',
    b'{"type":"user","uuid":"\\ud800","message":{"role":"user","content":"x"}}',
    b'{"type":"us\\u0065r","message":{"role":"\\u0075ser","content":"typed with escapes"}}',
    b'{"\\u0074ype":"user","message":{"role":"user","content":"escaped key"}}',
    b'{"type":"user","type":"assistant","message":{"content":"x"}}',
    b'{"type":"user","message":{"role":"user","role":"user","content":"x"}}',
    b'{"type": "user", "message": {"role": "user", "content": "spaced writer"}}',
    b'{"type":\t"user","message":{"role":"user","content":"tabbed writer"}}',
    b'{"type":\t\t\t\t\t\t\t\t\t"user","message":\t\t\t\t\t{"role":"user","content":"tabs"}}',
    b'{"type":"user","skipped":"\\udc00","message":{"role":"user","content":"lone surrogate"}}',
    b'{"type":"user","message":{"role":"\\ud800","content":"lone surrogate role"}}',
    b'{"type":"assistant","costUSD":0.00005,"message":{"role":"assistant","content":"JavaScript spelling"}}',
    b'{"type":"assistant","costUSD":-0.00001e0,"message":{"role":"assistant","content":"x"}}',
    b'{"type":"user","message":{"role":"user","content":"x"} ,"uuid" : "spaced later"}',
    b'  {"type":"user","message":{"role":"user","content":"padded"}}\x0b ',
    b'{"type":"user","big":123456789012345678901234567890,"f":1e400,"g":-0.0}',
    b'{"type":"user","small":0.00001,"e":1e-7,"message":{"content":"x"}}',
    b'{"type":"user","esc":"\\u001b[31m","message":{"content":"x"}}',
    b'{"type":"user","message":{"content":"x"}}trailing',
    b'{"type":"user","message":{"content":"x"},}',
    b'{"type":"user","ctl":"a\x01b"}',
    b'{"type":"user","bad":"\xc3\x28"}',
    b'{"type":"user","nan":NaN}',
    b'{"type":"user","lead":01}',
    b"{}",
    b"{ }",
    b"[]",
    b'"text"',
    b"{",
    b'{"type":"user"',
]


def _outcome(read: Callable[[], object]) -> object:
    """What reading returns, or the exception it raises (the reference's own failures included)."""
    try:
        return read()
    except Exception as exc:  # compared, not handled
        return type(exc)


@pytest.mark.parametrize("line", EDGE_LINES, ids=range(len(EDGE_LINES)))
@pytest.mark.parametrize("escapes", [True, False])
def test_edge_lines_decode_as_the_reference(line: bytes, escapes: bool) -> None:
    reference = _outcome(lambda: decode_record(line, limits=LIMITS, escapes_possible=escapes))
    fast = scan.scan_line(line, LIMITS, escapes_possible=escapes)
    if fast is not None:
        assert isinstance(reference, DecodedRecord) and _fields(fast) == _fields(reference)
    data = line + b"\n" + line
    indexed = _outcome(lambda: build_index(data, FMT, LIMITS))
    assert indexed == _outcome(lambda: build_index_reference(data, FMT, LIMITS))


@pytest.mark.parametrize("stamp", STAMPS, ids=range(len(STAMPS)))
def test_a_record_timestamp_reads_back_as_its_line_holds_it(stamp: object) -> None:
    line = _line(timestamp=stamp)
    reference = decode_record(line, limits=LIMITS, escapes_possible=True)
    fast = scan.scan_line(line, LIMITS, escapes_possible=True)  # None: the reference decides
    for record in (reference, reference if fast is None else fast):
        assert isinstance(record, DecodedRecord)
        assert record.timestamp == (stamp if isinstance(stamp, str) and stamp else None)
    assert isinstance(decode_record(_line(), limits=LIMITS).stamp, int)  # the form a million lines hold


def test_flags_read_as_the_facts_they_pack() -> None:
    boundary = decode_record(
        _line(type="system", subtype="compact_boundary", isSidechain=True, isMeta=True, uuid=""),
        limits=LIMITS,
    )
    assert isinstance(boundary, DecodedRecord)
    assert (boundary.compact_boundary, boundary.sidechain, boundary.meta, boundary.uuid_malformed) == (
        True,
        True,
        True,
        True,
    )
    assert (boundary.is_api, boundary.compact_summary, boundary.parent_malformed, boundary.replaced_utf8) == (
        False,
        False,
        False,
        False,
    )
    broken = decode_record(_line(cwd="x").replace(b'"x"', b'"\xff"'), limits=LIMITS)
    assert isinstance(broken, DecodedRecord) and broken.replaced_utf8 and broken.is_api


_ALPHABET = b'{}[]:,"\\ 0123456789.eE+-tfnulrsa\xc3\xa9\xe6\xbc\xa2\x80\xff\x00\x1f'


def _random_value(rng: random.Random, depth: int) -> object:
    roll = rng.random()
    if depth > 3 or roll < 0.35:
        return rng.choice(
            ["", "x", "é漢", "tool_use", "text", '\n"\\', None, True, False, 0, -1.5, 10**20, 1e-5]
        )
    if roll < 0.65:
        return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    keys = ["type", "id", "text", "content", "uuid", "role", "tool_use_id", "toolUseID", "k"]
    return {rng.choice(keys): _random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def _random_line(rng: random.Random) -> bytes:
    record = {**RECORD, "type": rng.choice(["user", "assistant", "system", "attachment", "x"])}
    for _ in range(rng.randint(0, 4)):
        key = rng.choice([*RECORD, "message", "attachment", "content", "subtype", "costUSD", "extra"])
        record[key] = _random_value(rng, 0)
    line = bytearray(_dumps(record))
    for _ in range(rng.choice([0, 0, 1, 2, 5])):  # a few byte edits make most lines invalid
        at = rng.randrange(len(line))
        action = rng.random()
        if action < 0.4:
            line[at] = rng.choice(_ALPHABET)
        elif action < 0.7:
            line.insert(at, rng.choice(_ALPHABET))
        else:
            del line[at]
    return bytes(line)


def test_the_json_scanner_accepts_only_what_orjson_accepts() -> None:
    rng = random.Random(20260512)
    accepted = refused = 0
    for _ in range(30_000):
        line = _random_line(rng)
        fast = scan.scan_line(line, LIMITS, escapes_possible=False)
        try:
            parsed = orjson.loads(line)
        except orjson.JSONDecodeError:
            assert fast is None, line  # never a record from a line orjson refuses
            refused += 1
            continue
        if fast is not None:
            assert isinstance(parsed, dict), line
            reference = decode_record(line, limits=LIMITS, escapes_possible=False)
            assert _fields(fast) == _fields(reference), line  # type: ignore[arg-type]
            accepted += 1
    assert accepted > 5_000 and refused > 3_000  # both sides of the boundary were exercised
