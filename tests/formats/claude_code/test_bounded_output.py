"""Bounded tool outputs: within the limit, head and tail kept, the rest of the record untouched."""

from __future__ import annotations

import hashlib

import orjson
import pytest

from pipeline.formats.claude_code.bounded_output import (
    CLEARED_MARKER,
    BoundPart,
    BoundRule,
    bound_content,
    bound_line,
    bound_text,
    declared_bounds,
    declared_cleared_inputs,
    marker,
)
from pipeline.formats.claude_code.build import (
    LeafStamp,
    ToolMetadata,
    declaring_pointer,
    new_pointer,
    projected_pointer,
)

RULE = BoundRule(8192, drop_media=False)


@pytest.mark.parametrize("text", ["x" * 20_000, "é€😀" * 5000, "line\n" * 4000])
def test_a_long_text_keeps_head_and_tail_around_the_marker_within_the_limit(text: str) -> None:
    bounded = bound_text(text, 8192)
    encoded = text.encode()
    assert len(bounded.encode()) <= 8192
    middle = marker(len(encoded), hashlib.sha256(encoded).hexdigest())
    head, tail = bounded.split(middle)
    assert text.startswith(head) and text.endswith(tail) and len(head) > 1000 and len(tail) > 1000


def test_a_short_text_is_left_alone() -> None:
    assert bound_text("short", 8192) == "short"


def test_content_blocks_are_joined_bounded_and_media_replaced_only_when_asked() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "A" * 9000}}
    content = [{"type": "text", "text": "a" * 6000}, image, {"type": "text", "text": "b" * 6000}]
    kept = bound_content(content, RULE)
    assert [b["type"] for b in kept] == ["text", "image"] and kept[1] == image
    assert kept[0]["text"].startswith("a") and kept[0]["text"].endswith("b")
    dropped = bound_content(content, BoundRule(8192, drop_media=True))
    assert dropped[1]["type"] == "text" and "image of" in dropped[1]["text"] and "AAAA" not in str(dropped)


def _record(result: str, mirror: object = None) -> bytes:
    record = {
        "parentUuid": "p",
        "unknownField": {"keep": [1, 2.5, None]},
        "type": "user",
        "message": {
            "role": "user",
            "content": [
                {"tool_use_id": "toolu_1", "type": "tool_result", "content": result, "is_error": False}
            ],
        },
        "uuid": "u",
        "toolUseResult": mirror
        if mirror is not None
        else {"stdout": result, "stderr": "", "interrupted": False},
    }
    return orjson.dumps(record)


def test_a_record_keeps_every_other_member_and_its_key_order() -> None:
    line = _record("out\n" * 10_000)
    bounded, declared = bound_line(line, RULE) or (b"", ())
    before, after = orjson.loads(line), orjson.loads(bounded)
    assert list(after) == list(before)
    assert {k: v for k, v in after.items() if k not in ("message", "toolUseResult")} == {
        k: v for k, v in before.items() if k not in ("message", "toolUseResult")
    }
    block = after["message"]["content"][0]
    assert block == {**before["message"]["content"][0], "content": bound_text("out\n" * 10_000, 8192)}
    assert (
        len(after["toolUseResult"]["stdout"].encode()) <= 8192
        and after["toolUseResult"]["interrupted"] is False
    )
    assert [(d.tool_use_id, d.part) for d in declared] == [
        ("toolu_1", BoundPart.CONTENT),
        ("toolu_1", BoundPart.MIRROR),
    ]
    assert declared[0].original_bytes == 40_000 and declared[0].kept_bytes <= 8192


def test_only_the_display_copy_is_bounded_when_the_result_is_short() -> None:
    line = _record("short", mirror={"file": {"content": "f" * 50_000}})
    bounded, declared = bound_line(line, RULE) or (b"", ())
    assert [d.part for d in declared] == [BoundPart.MIRROR]
    assert orjson.loads(bounded)["message"] == orjson.loads(line)["message"]


def test_small_records_and_unreadable_lines_are_not_touched() -> None:
    assert bound_line(_record("short"), RULE) is None
    assert bound_line(b'{"type":"user","message":' + b"x" * 9000, RULE) is None


def test_a_line_is_read_in_place_from_its_span() -> None:
    line = _record("out\n" * 10_000)
    data = b"first line\n" + line + b"\nlast line\n"
    start = data.index(line)
    assert bound_line(data, RULE, span=(start, start + len(line))) == bound_line(line, RULE)


def test_declared_bounds_are_read_back_from_our_compact_boundary() -> None:
    stamps = [
        {"toolUseId": "toolu_1", "part": "content", "limit": 8192, "dropMedia": True},
        {"toolUseId": "toolu_2", "part": "toolUseResult", "limit": 8192, "dropMedia": False},
    ]
    boundary = {
        "type": "system",
        "subtype": "compact_boundary",
        "compactMetadata": {"sessionCompaction": {"boundedToolOutputs": stamps}},
    }
    data = orjson.dumps(boundary) + b"\n" + _record("x") + b"\n"
    assert declared_bounds(data) == {"toolu_1": BoundRule(8192, drop_media=True)}


CLEAR = BoundRule(8192, drop_media=True, clear=True)


def test_a_clearing_rule_replaces_an_output_with_claude_codes_marker_and_declares_its_digest() -> None:
    output = "row\n" * 400
    bounded, declared = bound_line(_record(output), CLEAR) or (b"", ())
    block = orjson.loads(bounded)["message"]["content"][0]
    assert block["content"] == CLEARED_MARKER == "[Old tool result content cleared]"
    content = next(d for d in declared if d.part is BoundPart.CONTENT)
    assert content.cleared and content.original_bytes == len(output)
    assert content.sha256 == hashlib.sha256(output.encode()).hexdigest()
    listed = [{"type": "text", "text": output}, {"type": "image", "source": {"data": "A" * 900}}]
    assert bound_content(listed, CLEAR) == [{"type": "text", "text": CLEARED_MARKER}]


def test_a_failed_or_short_output_is_not_cleared() -> None:
    assert bound_line(_record("ok"), CLEAR) is None  # under CLEAR_MIN_BYTES: the marker saves nothing
    failing = "." * 2000 + "\nFAILED tests/test_a.py::test_x - KeyError\n1 failed, 3 passed"
    for output in (failing, "Exit code 2\n" + "make: *** Error\n" * 100):
        changed = bound_line(_record(output), CLEAR)
        content = orjson.loads(changed[0])["message"]["content"][0]["content"] if changed else output
        assert content == output
    flagged = orjson.loads(_record("x" * 20_000))
    flagged["message"]["content"][0]["is_error"] = True
    bounded, declared = bound_line(orjson.dumps(flagged), CLEAR) or (b"", ())
    kept = orjson.loads(bounded)["message"]["content"][0]["content"]
    assert kept == bound_text("x" * 20_000, 8192)  # bounded as always, never cleared
    assert not any(d.cleared for d in declared)


def test_a_cleared_output_is_read_back_with_its_rule() -> None:
    stamps = [{"toolUseId": "toolu_1", "part": "content", "limit": 8192, "dropMedia": True, "cleared": True}]
    boundary = {
        "type": "system",
        "subtype": "compact_boundary",
        "compactMetadata": {"sessionCompaction": {"boundedToolOutputs": stamps}},
    }
    assert declared_bounds(orjson.dumps(boundary)) == {"toolu_1": CLEAR}
    assert bound_content("y" * 1000, CLEAR) == CLEARED_MARKER


MASK = BoundRule(8192, drop_media=True, clear=True, clear_inputs=True)


def _call(name: str, tool_input: dict[str, object]) -> bytes:
    thinking = {"type": "thinking", "thinking": "plan it", "signature": "sig=="}
    block = {"type": "tool_use", "id": "toolu_9", "name": name, "input": tool_input}
    return orjson.dumps({"type": "assistant", "message": {"role": "assistant", "content": [thinking, block]}})


@pytest.mark.parametrize(
    ("name", "tool_input", "cleared"),
    [
        ("Write", {"file_path": "/r/a.py", "content": "x = 1\n" * 200}, {"content"}),
        ("Edit", {"file_path": "/r/a.py", "old_string": "a" * 600, "new_string": "b"}, {"old_string"}),
        ("NotebookEdit", {"notebook_path": "/r/n.ipynb", "new_source": "c" * 900}, {"new_source"}),
        ("Write", {"file_path": "/r/a.py", "content": "short"}, set()),  # under CLEAR_MIN_BYTES
        ("Bash", {"command": "echo " + "d" * 900}, set()),  # not a file-writing call
    ],
)
def test_a_masking_rule_clears_only_the_bulky_strings_of_file_writing_calls(
    name: str, tool_input: dict[str, object], cleared: set[str]
) -> None:
    line = _call(name, tool_input)
    changed = bound_line(line, MASK)
    if not cleared:
        assert changed is None and bound_line(line, CLEAR) is None
        return
    assert changed is not None and bound_line(line, CLEAR) is None  # hybrid's rule leaves calls whole
    written, declared = changed
    thinking, block = orjson.loads(written)["message"]["content"]
    assert thinking == orjson.loads(line)["message"]["content"][0]  # byte for byte, signature included
    assert {k for k, v in block["input"].items() if v == CLEARED_MARKER} == cleared
    assert {k: v for k, v in block["input"].items() if k not in cleared} == {
        k: v for k, v in tool_input.items() if k not in cleared
    }
    [stamp] = declared
    assert (stamp.tool_use_id, stamp.part, stamp.cleared) == ("toolu_9", BoundPart.INPUT, True)
    assert stamp.sha256 == hashlib.sha256(orjson.dumps(tool_input)).hexdigest()


def test_a_masked_candidate_declares_on_its_pointer_what_a_boundary_would() -> None:
    stamps = [
        {"toolUseId": "toolu_1", "part": "content", "limit": 8192, "dropMedia": True, "cleared": True},
        {"toolUseId": "toolu_9", "part": "input", "limit": 8192, "dropMedia": True, "cleared": True},
    ]
    pointer = {"type": "last-prompt", "leafUuid": "u", "sessionCompaction": {"boundedToolOutputs": stamps}}
    data = _record("x") + b"\n" + orjson.dumps(pointer) + b"\n"
    assert declared_bounds(data) == {"toolu_1": CLEAR}
    assert declared_cleared_inputs(data) == frozenset({"toolu_9"})
    elsewhere = {"type": "user", "sessionCompaction": {"boundedToolOutputs": stamps}, "x": "last-prompt"}
    assert declared_bounds(orjson.dumps(elsewhere)) == {}  # only our pointer or boundary declares


def test_a_pointer_projected_from_a_masked_source_drops_its_declarations() -> None:
    """A summary of a masked file declares only its own boundings: the old pointer's are stale."""
    metadata = ToolMetadata(
        "t", "v", "e", "active-chain", LeafStamp("u", "s", "p"), "valid", "0" * 64, {}, {}, 1, 1, []
    )
    masked = declaring_pointer(new_pointer("leaf-1", "s"), metadata)
    assert orjson.loads(masked)["sessionCompaction"]["sourceSha256"] == "0" * 64
    projected = orjson.loads(projected_pointer(masked, "leaf-2", "s") or b"{}")
    assert projected == {"type": "last-prompt", "leafUuid": "leaf-2", "sessionId": "s"}
