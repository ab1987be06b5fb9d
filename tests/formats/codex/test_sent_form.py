"""Items as Codex sends them: unserialized fields gone, reasoning defaults, outputs truncated."""

from __future__ import annotations

from pipeline.formats.codex.sent_form import OUTPUT_TOKEN_BUDGET, sent_item, truncate_middle


def test_fields_codex_never_serializes_are_dropped_and_reasoning_gets_its_nulls() -> None:
    message = {
        "type": "message",
        "id": "m1",
        "role": "assistant",
        "content": [],
        "end_turn": True,
        "phase": "x",
    }
    assert sent_item(message, recorded=True) == {
        "type": "message",
        "role": "assistant",
        "content": [],
        "phase": "x",
    }
    reasoning = {"type": "reasoning", "summary": []}
    assert sent_item(reasoning, recorded=True) == {
        "type": "reasoning", "summary": [], "content": None, "encrypted_content": None,
    }  # fmt: skip


def test_a_recorded_output_over_budget_keeps_its_head_and_tail_around_a_marker() -> None:
    text = "h" * 30_000 + "é" * 10_000 + "t" * 30_000  # 80,000 bytes
    cut = truncate_middle(text, OUTPUT_TOKEN_BUDGET)
    head, _, rest = cut.partition("\u2026")
    marker, _, tail = rest.partition("\u2026")
    assert head == "h" * 24_000 and tail == "t" * 24_000
    assert marker == f"{(80_000 - 48_000) // 4} tokens truncated"
    item = {"type": "function_call_output", "call_id": "c", "output": text}
    assert sent_item(item, recorded=True)["output"] == cut
    assert sent_item(item, recorded=False)["output"] == text  # a replacement history is installed as is
    assert truncate_middle("short", OUTPUT_TOKEN_BUDGET) == "short"


def test_a_cut_never_splits_a_character() -> None:
    text = "é" * 30_000  # 60,000 bytes, every boundary at an even offset
    cut = truncate_middle(text, 10_001)  # an odd half-budget
    assert "\ufffd" not in cut and cut.startswith("é" * 10_000)


def test_content_item_outputs_spend_one_budget_in_order() -> None:
    parts = [{"type": "input_text", "text": "a" * 40_000}, {"type": "input_text", "text": "b" * 40_000},
             {"type": "input_text", "text": "c"}]  # fmt: skip
    sent = sent_item({"type": "function_call_output", "call_id": "c", "output": parts}, recorded=True)[
        "output"
    ]
    assert sent[0] == parts[0]
    assert sent[1]["text"].startswith("b" * 4_000) and "tokens truncated" in sent[1]["text"]
    assert sent[2] == {"type": "input_text", "text": "[omitted 1 text items ...]"}
