"""Chunks and bounded reduction: turns kept whole, at most 32 chunks a round, depth at most 4."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pipeline.summarize.evidence.items import EvidenceItem, EvidenceKind
from pipeline.summarize.model.engine import ModelSummary, write_model_summary
from pipeline.summarize.model.pack import AnchorKind, entries_of
from pipeline.summarize.model.prompts import REDUCTION_MARKER
from pipeline.summarize.model.reduction import (
    MAX_CHUNKS_PER_ROUND,
    MAX_REDUCTION_DEPTH,
    Budget,
    GroupOverBudget,
    history_groups,
    partition,
)
from pipeline.testing.provider_server import Answer, Behavior, ProviderServer
from tests.summarize._support import anthropic, client, lines_of, options, services, session, turn

pytestmark = pytest.mark.anyio


@pytest.fixture
def server() -> Iterator[ProviderServer]:
    with ProviderServer() as running:
        yield running


def test_turns_start_at_human_messages_commands_and_prior_summaries_and_keep_their_tools() -> None:
    items = [
        EvidenceItem(1, EvidenceKind.ASSISTANT_TEXT, "continuing"),
        *turn(2, "first", "ok"),
        EvidenceItem(6, EvidenceKind.COMMAND, "<command-name>/clear</command-name>"),
        EvidenceItem(7, EvidenceKind.PRIOR_SUMMARY, "earlier work"),
        *turn(8, "second", "ok"),
    ]
    groups = history_groups(entries_of(items, 400))
    assert [(group.first_line, group.last_line) for group in groups] == [
        (1, 1),
        (2, 5),
        (6, 6),
        (7, 7),
        (8, 11),
    ]
    second = groups[1]
    assert [entry.kind for entry in second.entries] == [
        AnchorKind.HUMAN,
        AnchorKind.ASSISTANT,
        AnchorKind.TOOL_CALL,
        AnchorKind.TOOL_RESULT,
    ]
    assert second.humans == (2,) and second.mandatory_tokens < second.tokens


def test_partition_is_greedy_bounded_and_leaves_the_rest_for_the_next_round() -> None:
    groups = history_groups(entries_of(session(10), 400))
    size = max(group.tokens for group in groups)
    chunks = partition(groups, Budget(size * 3, 10**6), max_chunks=2)
    assert [len(chunk) for chunk in chunks] == [3, 3]  # a prefix of six of the ten turns
    assert partition(groups, Budget(size * 100, 10**6), MAX_CHUNKS_PER_ROUND) == (groups,)


def test_a_group_too_big_only_for_its_optional_evidence_gets_a_chunk_of_its_own() -> None:
    groups = history_groups(entries_of([*turn(1, "a", "b", output="z" * 400), *turn(5, "c", "d")], 400))
    budget = Budget(groups[0].mandatory_tokens + 20, 10**6)
    assert groups[0].tokens > budget.tokens
    assert [len(chunk) for chunk in partition(groups, budget, MAX_CHUNKS_PER_ROUND)] == [1, 1]
    with pytest.raises(GroupOverBudget) as raised:
        partition(groups, Budget(groups[0].mandatory_tokens - 1, 10**6), MAX_CHUNKS_PER_ROUND)
    assert raised.value.group_line == 1


async def test_a_history_too_large_for_one_request_is_reduced_within_depth_four(
    server: ProviderServer,
) -> None:
    items = session(400, words=40)
    async with client() as http:
        result = await write_model_summary(
            items, options(context_window=9_000), services(anthropic(server.base_url, http))
        )
    assert isinstance(result, ModelSummary)
    account = result.account
    assert 2 <= account.reduction_depth <= MAX_REDUCTION_DEPTH
    assert account.calls == account.chunks + 1 == len(server.requests)
    reductions = [request for request in server.requests if REDUCTION_MARKER.encode() in request.raw]
    assert 1 <= len(reductions) < account.chunks  # later rounds and the final merge read partial checkpoints
    assert len(server.requests) - len(reductions) <= MAX_CHUNKS_PER_ROUND  # the first round's chunks
    assert set(lines_of(items, EvidenceKind.HUMAN_PROMPT)) <= set(result.cited_lines)
    assert max(request.input_tokens for request in server.requests) <= 9_000


@pytest.mark.parametrize("first", [Answer.of(Behavior.TRUNCATED), Answer.of(Behavior.CONTEXT_EXCEEDED)])
async def test_a_first_answer_truncated_or_too_long_splits_the_history_in_two(
    server: ProviderServer, first: Answer
) -> None:
    server.script(first)
    async with client() as http:
        result = await write_model_summary(session(8), options(), services(anthropic(server.base_url, http)))
    assert isinstance(result, ModelSummary)
    account = result.account
    assert account.reduction_depth == 1 and account.chunks >= 2 and account.calls == 1 + account.chunks + 1
