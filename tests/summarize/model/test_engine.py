"""The engine end to end over loopback: a grounded summary, every typed failure, repair, abort."""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import pytest

from pipeline.summarize.checkpoint.document import APPENDIX_MARKER, CHECKPOINT_MARKER, validate_checkpoint
from pipeline.summarize.evidence.items import EvidenceItem, EvidenceKind
from pipeline.summarize.model.calls import RetryPolicy
from pipeline.summarize.model.engine import ModelSummary, write_model_summary
from pipeline.summarize.model.outcomes import STILL_DEFECTIVE, SummaryFailure, SummaryOutcome
from pipeline.testing.provider_server import Answer, Behavior, ProviderServer
from tests.summarize._support import anthropic, client, lines_of, openai, options, services, session, turn

pytestmark = pytest.mark.anyio


@pytest.fixture
def server() -> Iterator[ProviderServer]:
    with ProviderServer() as running:
        yield running


async def summarize(
    server: ProviderServer, items: list[EvidenceItem], **bounds: int
) -> ModelSummary | SummaryFailure:
    async with client() as http:
        return await write_model_summary(items, options(**bounds), services(anthropic(server.base_url, http)))


async def test_a_session_that_fits_gets_one_grounded_checkpoint_and_our_appendix(
    server: ProviderServer,
) -> None:
    items = session(6)
    result = await summarize(server, items)
    assert isinstance(result, ModelSummary)
    assert result.text.startswith(CHECKPOINT_MARKER + "\n\n## Goal\n")
    assert validate_checkpoint(result.text) == ()
    assert result.text.count(APPENDIX_MARKER) == 1 and "- passed: pytest -q" in result.text
    assert set(lines_of(items, EvidenceKind.HUMAN_PROMPT)) <= set(result.cited_lines)
    account = result.account
    assert (account.provider, account.model, account.calls, account.reduction_depth) == (
        "anthropic",
        "claude-test",
        1,
        0,
    )
    assert account.billed_input_tokens == server.requests[0].input_tokens > 0


async def test_wrong_structure_is_fixed_by_the_one_repair_call(server: ProviderServer) -> None:
    server.script(Answer.of(Behavior.BROKEN_STRUCTURE))
    result = await summarize(server, session(3))
    assert isinstance(result, ModelSummary) and result.account.repairs == 1 and result.account.calls == 2
    repair = server.requests[1].raw.decode()
    assert "session-compaction repair v1" in repair and "missing-heading" in repair
    assert "it went well" in repair  # the answer goes back so the model can fix it ...
    assert result.text.count("## Goal") == 1  # ... and the fixed one is what is kept


@pytest.mark.parametrize("second", [Behavior.BROKEN_STRUCTURE, Behavior.UNSUPPORTED_CLAIMS])
async def test_an_answer_still_ungrounded_after_the_repair_is_refused(
    server: ProviderServer, second: Behavior
) -> None:
    server.script(Answer.of(Behavior.UNSUPPORTED_CLAIMS), Answer.of(second))
    result = await summarize(server, session(3))
    assert isinstance(result, SummaryFailure) and result.outcome is SummaryOutcome.GROUNDING_FAILED
    codes = dict(result.facts.defects)
    assert (
        ("missing-heading" in codes)
        if second is Behavior.BROKEN_STRUCTURE
        else (codes == {"uncited-bullet": 1, "unknown-anchor": 1})
    )
    assert result.account.calls == 2 and result.account.repairs == 1
    repair = result.facts.repair_call
    assert repair is not None and repair.outcome == STILL_DEFECTIVE
    repaired = {(note.code, note.detail) for note in repair.repaired_defects}
    assert (
        ("structure", "missing-heading") in repaired
        if second is Behavior.BROKEN_STRUCTURE
        else repaired == {("uncited-bullet", None), ("unknown-anchor", None)}
    )
    # the first answer's defects, as the report lists them: code, section, anchor (never its text)
    assert [(note.code, note.section, note.anchor) for note in repair.answer_defects] == [
        ("uncited-bullet", "Decisions", None),
        ("unknown-anchor", "Errors and blockers", 999999),
    ]
    assert all(note.answer_line for note in repair.answer_defects)


@pytest.mark.parametrize(("second", "outcome"), [(Behavior.EMPTY, "empty"), (Behavior.REFUSAL, "refused")])
async def test_a_repair_call_that_ends_badly_says_how_and_what_it_was_to_fix(
    server: ProviderServer, second: Behavior, outcome: str
) -> None:
    server.script(Answer.of(Behavior.UNSUPPORTED_CLAIMS), Answer.of(second))
    result = await summarize(server, session(3))
    assert isinstance(result, SummaryFailure) and result.outcome.value == outcome
    repair = result.facts.repair_call
    assert repair is not None and repair.outcome == outcome and repair.repaired_defects == ()
    assert [note.code for note in repair.answer_defects] == ["uncited-bullet", "unknown-anchor"]


@pytest.mark.parametrize(
    ("answers", "outcome"),
    [
        ([Answer.of(Behavior.EMPTY)], SummaryOutcome.EMPTY),
        ([Answer.of(Behavior.REFUSAL)], SummaryOutcome.REFUSED),
        ([Answer.of(Behavior.TRUNCATED)], SummaryOutcome.OUTPUT_TRUNCATED),
        ([Answer.of(Behavior.CONTEXT_EXCEEDED)], SummaryOutcome.INPUT_OVERFLOW),
        ([Answer.error(529)] * 6, SummaryOutcome.PROVIDER_FAILURE),
    ],
)
async def test_each_provider_outcome_is_typed(
    server: ProviderServer, answers: list[Answer], outcome: SummaryOutcome
) -> None:
    server.script(*answers)
    result = await summarize(server, turn(1, "one turn only", "so it cannot be split"))
    assert isinstance(result, SummaryFailure) and result.outcome is outcome
    if outcome is SummaryOutcome.PROVIDER_FAILURE:
        assert (result.facts.http_status, result.facts.attempts, result.account.retries) == (529, 6, 5)


async def test_a_content_filter_is_typed(server: ProviderServer) -> None:
    server.script(Answer.of(Behavior.CONTENT_FILTER))
    async with client() as http:
        result = await write_model_summary(session(2), options(), services(openai(server.base_url, http)))
    assert isinstance(result, SummaryFailure) and result.outcome is SummaryOutcome.CONTENT_FILTERED


async def test_fixed_overhead_over_the_window_is_refused_before_any_call(server: ProviderServer) -> None:
    result = await summarize(server, session(3), context_window=2_500, max_output=2_000)
    assert (
        isinstance(result, SummaryFailure) and result.outcome is SummaryOutcome.FIXED_OVERHEAD_EXCEEDS_BUDGET
    )
    assert result.facts.input_tokens is not None and result.account.calls == 0 and not server.requests


async def test_one_group_larger_than_the_budget_is_refused_with_its_line(server: ProviderServer) -> None:
    items = [*session(4), *turn(17, "paste: " + "log line " * 3_000, "ok"), *session(2)]
    result = await summarize(server, items, context_window=8_000)
    assert isinstance(result, SummaryFailure) and result.outcome is SummaryOutcome.GROUP_EXCEEDS_BUDGET
    assert result.facts.group_line == 17 and result.facts.input_tokens > result.facts.limit_tokens  # type: ignore[operator]
    assert not server.requests


async def test_a_round_that_does_not_shrink_its_input_stops_with_no_progress(server: ProviderServer) -> None:
    tiny = [item for number in range(40) for item in turn(1 + 4 * number, f"t{number}", "k", output="")]
    result = await summarize(server, tiny, context_window=2_700, max_output=1_500)
    assert isinstance(result, SummaryFailure) and result.outcome is SummaryOutcome.REDUCTION_NO_PROGRESS
    assert result.facts.after_tokens >= result.facts.before_tokens and result.facts.depth == 1  # type: ignore[operator]


async def test_an_abort_ends_a_summary_in_flight_as_aborted(server: ProviderServer) -> None:
    server.script(Answer.held(2.0))
    abort = anyio.Event()
    async with client() as http, anyio.create_task_group() as group:
        group.start_soon(lambda: _set_later(abort, 0.1))
        with anyio.fail_after(1.5):
            result = await write_model_summary(
                session(2), options(), services(anthropic(server.base_url, http), abort=abort)
            )
    assert isinstance(result, SummaryFailure) and result.outcome is SummaryOutcome.ABORTED
    assert result.account.calls == 1


async def _set_later(event: anyio.Event, seconds: float) -> None:
    await anyio.sleep(seconds)
    event.set()


async def test_a_timed_out_call_is_retried_within_the_call_limit(server: ProviderServer) -> None:
    server.script(Answer.held(0.6))
    fast = RetryPolicy(
        max_attempts=3, initial_backoff_seconds=0.01, max_backoff_seconds=0.02, call_timeout_seconds=0.2
    )
    async with client() as http:
        result = await write_model_summary(
            session(2), options(retry=fast), services(anthropic(server.base_url, http))
        )
    assert isinstance(result, ModelSummary) and result.account.retries == 1
