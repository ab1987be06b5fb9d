"""`auto`'s building blocks: the family in force at each line, and model names a report may hold."""

from __future__ import annotations

import pytest

from pipeline.estimate.families import ModelFamily
from pipeline.formats.content_pieces import ContentClass, Piece
from pipeline.jobs.tokens.auto import (
    MAX_MODELS,
    AutoCounter,
    ModelTally,
    hidden_tokens,
    report_model,
    unsent_tokens,
)


def counter(lines: list[int], families: list[ModelFamily]) -> AutoCounter:
    def no_tokenizer(name: str) -> object:
        raise AssertionError("family_at loads nothing")

    return AutoCounter(lines, families, no_tokenizer)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("line", "family"),
    [
        (1, ModelFamily.CLAUDE),  # the prompt before the first reply: the first reply's model reads it
        (5, ModelFamily.CLAUDE),
        (9, ModelFamily.CLAUDE),
        (10, ModelFamily.DEEPSEEK),  # from the switch on
        (400, ModelFamily.DEEPSEEK),
    ],
)
def test_the_family_in_force_is_the_last_reply_s(line: int, family: ModelFamily) -> None:
    assert (
        counter([5, 7, 10], [ModelFamily.CLAUDE, ModelFamily.CLAUDE, ModelFamily.DEEPSEEK]).family_at(line)
        is family
    )


def test_a_session_without_replies_is_of_no_known_family() -> None:
    assert counter([], []).family_at(3) is ModelFamily.UNKNOWN


@pytest.mark.parametrize(
    ("model", "shown"),
    [
        ("deepseek-ai/DeepSeek-V3.1", "deepseek-ai/DeepSeek-V3.1"),
        ("claude-opus-4-7", "claude-opus-4-7"),
        ("my secret prompt text", "other"),
        ("x" * 200, "other"),
        (None, "unknown"),
    ],
)
def test_reports_hold_model_ids_only(model: str | None, shown: str) -> None:
    assert report_model(model) == shown


def test_many_models_fold_under_other_and_fragments_count_once() -> None:
    tally = ModelTally()
    for number in range(MAX_MODELS + 4):
        tally.add(f"msg-{number}", f"qwen-{number}")
        tally.add(f"msg-{number}", f"qwen-{number}")  # a second fragment of the same message
    tally.add(None, "<synthetic>")
    section = tally.section([ModelFamily.QWEN] * 3, [ModelFamily.QWEN])
    assert len(section.models) == MAX_MODELS + 1 and section.models["other"] == 4
    assert section.families == {"qwen": MAX_MODELS + 4}
    assert section.family == "qwen" and section.switches == 0


def test_thinking_the_text_summarized_is_sent_at_the_text_s_own_tokens_per_byte() -> None:
    def words(name: str) -> object:
        return lambda text: len(text.split())

    auto = AutoCounter([1], [ModelFamily.CLAUDE], words)  # type: ignore[arg-type]
    summary = Piece(ContentClass.THINKING, "", b"one two three four", hidden=36)  # 18 bytes, 4 tokens
    whole = Piece(ContentClass.THINKING, "", b"five six")
    reply = Piece(ContentClass.ASSISTANT, "", b"seven eight nine")
    assert hidden_tokens(auto, [summary, whole, reply], ModelFamily.CLAUDE) == 8
    assert hidden_tokens(auto, [whole, reply], ModelFamily.CLAUDE) == 0


def test_what_the_client_strips_from_a_recorded_input_is_left_out_at_its_tokens_per_byte() -> None:
    def words(name: str) -> object:
        return lambda text: len(text.split())

    auto = AutoCounter([1], [ModelFamily.CLAUDE], words)  # type: ignore[arg-type]
    call = Piece(ContentClass.TOOL_USE, "ExitPlanMode", b'{"plan":"one two three"}', quoted=False, unsent=22)
    plain = Piece(ContentClass.TOOL_USE, "Read", b'{"file_path":"/a b"}', quoted=False)
    assert unsent_tokens(auto, [call, plain], ModelFamily.CLAUDE) == round(3 * 22 / 24)
    assert unsent_tokens(auto, [plain], ModelFamily.CLAUDE) == 0
