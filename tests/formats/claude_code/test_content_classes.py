"""Content classes: every record kind lands in its class, with tool names, and nothing is lost."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import orjson
import pytest

from pipeline.core.index import build_index
from pipeline.formats.claude_code.content_classes import SIGNATURE_HEADER, safe_name, split_records
from pipeline.formats.content_pieces import NAME_OTHER, ContentClass, LinePieces, Piece
from pipeline.formats.detect import detect_format
from pipeline.testing import TranscriptBuilder
from pipeline.testing.settings import LIMITS


def pieces_of(data: bytes) -> list[LinePieces]:
    return list(split_records(build_index(data, detect_format(data), LIMITS).record_lines(data)))


def every_class_session() -> TranscriptBuilder:
    """One session holding every content class at least once."""
    b = TranscriptBuilder(seed=11, version="2.1.39")
    b.user("Why does the build fail?")
    b.meta_user("<system-reminder>Remember the plan.</system-reminder>")
    msg = b.assistant(b.thinking("Look at the makefile first."), b.text("Let me look."), tool_follows=True)
    b.tool_call("Bash", {"command": "make -j4"}, "cc: error: missing.h", message_id=msg.message_id)
    b.attachment("todo_reminder", content=[{"content": "fix build", "status": "pending"}])
    b.system("local_command", "<local-command-stdout>ok</local-command-stdout>")
    b.compact("The user asked about the build; make failed on a missing header.")
    b.tool_call(
        "Read",
        {"file_path": "/src/a.c"},
        [{"type": "text", "text": "     1→int main(void);"}, {"type": "text", "text": "     2→"}],
    )
    b.assistant(b.text("Done."))
    return b


def test_every_class_is_split_out() -> None:
    lines = pieces_of(every_class_session().to_bytes())
    kinds = Counter(piece.kind for line in lines for piece in line.pieces)
    assert set(kinds) == set(ContentClass)


def test_tool_results_carry_the_name_of_their_tool() -> None:
    lines = pieces_of(every_class_session().to_bytes())
    results = [p for line in lines for p in line.pieces if p.kind is ContentClass.TOOL_RESULT]
    uses = [p for line in lines for p in line.pieces if p.kind is ContentClass.TOOL_USE]
    assert [p.name for p in results] == ["Bash", "Read"]
    assert [p.name for p in uses] == ["Bash", "Read"]


def test_piece_text_is_the_decoded_content() -> None:
    lines = pieces_of(every_class_session().to_bytes())
    by_kind = {p.kind: p for line in lines for p in line.pieces}
    assert by_kind[ContentClass.HUMAN].text() == "Why does the build fail?"
    assert by_kind[ContentClass.THINKING].text() == "Look at the makefile first."
    assert orjson.loads(by_kind[ContentClass.TOOL_USE].text()) == {"file_path": "/src/a.c"}
    read = [
        p for line in lines for p in line.pieces if p.name == "Read" and p.kind is ContentClass.TOOL_RESULT
    ]
    assert read[0].text() == "     1→int main(void);\n     2→"
    assert by_kind[ContentClass.ATTACHMENT].name == "todo_reminder"
    systems = {p.name for line in lines for p in line.pieces if p.kind is ContentClass.SYSTEM}
    assert systems == {"local_command", "compact_boundary"}
    assert by_kind[ContentClass.COMPACT_SUMMARY].text().count("missing header") == 1


def test_escaped_bytes_are_kept_as_the_line_spells_them() -> None:
    b = TranscriptBuilder(seed=1)
    b.user('say "hi"\nthen stop')
    (piece,) = pieces_of(b.to_bytes())[0].pieces
    assert piece.raw == b'say \\"hi\\"\\nthen stop'
    assert piece.text() == 'say "hi"\nthen stop'


def test_images_are_counted_not_tokenized() -> None:
    b = TranscriptBuilder(seed=2)
    b.user([b.text("see this"), b.image("aGVsbG8=")])
    (line,) = pieces_of(b.to_bytes())
    assert line.images == 1
    assert [p.kind for p in line.pieces] == [ContentClass.HUMAN]


def test_billed_prompt_sums_input_and_both_cache_figures() -> None:
    b = TranscriptBuilder(seed=3)
    b.user("hello")
    b.assistant(
        b.text("hi"),
        b.text("there"),
        usage={
            "input_tokens": 7,
            "cache_creation_input_tokens": 100,
            "cache_read_input_tokens": 2000,
            "output_tokens": 3,
        },
    )
    billed = [line.billed_prompt for line in pieces_of(b.to_bytes()) if line.billed_prompt]
    assert billed == [2107, 2107]  # both fragments repeat it; usage.py keeps the first


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("Bash", "Bash"),
        ("mcp__github__create_issue", "mcp__github__create_issue"),
        ("hook_success", "hook_success"),
        ("rm -rf / && echo secret", NAME_OTHER),
        ("", ""),
        (None, ""),
        (42, NAME_OTHER),
        ("x" * 80, NAME_OTHER),
    ],
)
def test_names_are_identifiers_or_other(value: object, expected: str) -> None:
    assert safe_name(value) == expected


def test_odd_shapes_are_skipped_without_failing() -> None:
    lines = [
        b'{"type":"user","uuid":"u1","parentUuid":null,"message":{"role":"user","content":[1,"x",{"type":"text","text":"ok"}]}}',
        b'{"type":"assistant","uuid":"u2","parentUuid":"u1","message":{"role":"assistant","content":{"weird":true}}}',
        b'{"type":"attachment","uuid":"u3","parentUuid":"u2","attachment":"not an object"}',
        b'{"type":"system","uuid":"u4","parentUuid":"u3","subtype":"x","content":null}',
    ]
    found = pieces_of(b"\n".join(lines) + b"\n")
    assert [[p.text() for p in line.pieces] for line in found] == [["ok"], [], [], []]


def test_corpus_files_split_without_loss(corpus_files: Path) -> None:
    """Every API line of the corpus yields pieces or is an image/empty message, never an error."""
    total = 0
    for path in sorted(corpus_files.glob("*.jsonl"))[:20]:
        data = path.read_bytes()
        index = build_index(data, detect_format(data), LIMITS)
        for line in split_records(index.record_lines(data)):
            total += len(line.pieces)
            assert all(isinstance(p, Piece) and p.name == safe_name(p.name) for p in line.pieces)
    assert total > 1000


def signed(text: str, carried: int) -> str:
    """A signature as the API writes one: its header, then base64 of `carried` bytes of thinking."""
    return "E" * (SIGNATURE_HEADER + 4 * -(-carried // 3))


@pytest.mark.parametrize(
    ("text", "carried", "hidden"),
    [
        ("Check the makefile, then the header.", 36, 0),  # the whole thinking: nothing hidden
        ("é" * 300, 600, 0),  # bytes, not characters, are what the signature carries
        ("A summary of the long thought.", 3_030, 3_000),  # long thinking, returned summarized
    ],
)
def test_a_thinking_block_says_how_much_thinking_its_text_left_out(
    text: str, carried: int, hidden: int
) -> None:
    b = TranscriptBuilder(seed=3, version="2.1.37")
    b.user("Think it over.")
    b.assistant(b.thinking(text, signature=signed(text, carried)), b.text("Done."))
    thinking = [p for line in pieces_of(b.to_bytes()) for p in line.pieces if p.kind is ContentClass.THINKING]
    assert [(p.text(), p.hidden) for p in thinking] == [(text, hidden)]


def test_a_thinking_block_without_a_signature_hides_nothing() -> None:
    b = TranscriptBuilder(seed=3, version="2.1.37")
    b.user("Think it over.")
    b.assistant(b.thinking("Plain thought.", signature=""), b.text("Done."))
    thinking = [p for line in pieces_of(b.to_bytes()) for p in line.pieces if p.kind is ContentClass.THINKING]
    assert [p.hidden for p in thinking] == [0]
