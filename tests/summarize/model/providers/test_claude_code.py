"""The claude-code provider with the real Claude Code 2.1.332 against the local server (Anthropic protocol)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipeline.summarize.model.engine import ModelSummary, write_model_summary
from pipeline.summarize.model.outcomes import SummaryFailure, SummaryOutcome
from pipeline.summarize.model.prompts import SYSTEM_PROMPT
from pipeline.summarize.model.providers import (
    ClaudeCodeOptions,
    ClaudeCodeProvider,
    ProviderName,
    ProviderSettings,
    ProviderUnavailable,
    Secret,
    check_available,
)
from pipeline.testing.provider_server import Answer, Behavior, ProviderServer
from tests.summarize._support import options, services, session, turn
from tests.summarize.model.test_secrets import SECRETS, planted_session

pytestmark = [pytest.mark.anyio, pytest.mark.claude_code]

THROWAWAY_KEY = "sk-ant-api03-throwaway-key-for-the-loopback-provider-server"


@pytest.fixture
def server() -> Iterator[ProviderServer]:
    with ProviderServer() as running:
        yield running


def provider(executable: Path, server: ProviderServer, home: Path) -> ClaudeCodeProvider:
    return ClaudeCodeProvider(
        ClaudeCodeOptions(executable, "claude-sonnet-4-5", home, server.base_url, Secret(THROWAWAY_KEY))
    )


async def test_claude_code_writes_a_grounded_summary_and_no_secret_leaves(
    claude_code: Path, server: ProviderServer, tmp_path: Path
) -> None:
    result = await write_model_summary(
        planted_session(), options(), services(provider(claude_code, server, tmp_path))
    )
    assert isinstance(result, ModelSummary)
    assert (result.account.provider, result.account.model, result.account.calls) == (
        "claude-code",
        "claude-sonnet-4-5",
        1,
    )
    assert result.account.billed_input_tokens > 0
    assert server.requests and all(server.bodies_containing(secret) == 0 for secret in SECRETS)
    body = server.requests[0].raw.decode()
    assert SYSTEM_PROMPT.splitlines()[0][:60] in body  # our instructions replace Claude Code's
    assert '"tools":' not in body or '"tools":[]' in body
    assert "compaction-summary-" in body and os.getcwd() not in body  # a neutral working directory
    assert not any(tmp_path.glob("**/projects/**/*.jsonl"))  # no session transcript was written


async def test_the_repair_goes_through_claude_code_too(
    claude_code: Path, server: ProviderServer, tmp_path: Path
) -> None:
    server.script(Answer.of(Behavior.BROKEN_STRUCTURE))
    result = await write_model_summary(
        session(3), options(), services(provider(claude_code, server, tmp_path))
    )
    assert isinstance(result, ModelSummary) and result.account.repairs == 1 and result.account.calls == 2
    assert "<previous-answer>" in server.requests[-1].raw.decode()


@pytest.mark.parametrize(
    ("behavior", "outcome"),
    [
        (Behavior.REFUSAL, SummaryOutcome.REFUSED),
        (Behavior.TRUNCATED, SummaryOutcome.OUTPUT_TRUNCATED),
        (Behavior.CONTEXT_EXCEEDED, SummaryOutcome.INPUT_OVERFLOW),
        (Behavior.EMPTY, SummaryOutcome.EMPTY),
    ],
)
async def test_claude_codes_failures_map_to_typed_outcomes(
    claude_code: Path, server: ProviderServer, tmp_path: Path, behavior: Behavior, outcome: SummaryOutcome
) -> None:
    server.script(*[Answer.of(behavior)] * 8)  # Claude Code retries some of these itself
    result = await write_model_summary(
        turn(1, "one turn", "only"), options(), services(provider(claude_code, server, tmp_path))
    )
    assert isinstance(result, SummaryFailure) and result.outcome is outcome


def test_a_missing_claude_code_is_one_line_before_any_work(claude_code: Path, tmp_path: Path) -> None:
    settings = ProviderSettings(
        ProviderName.CLAUDE_CODE, "", "", "", "", False, str(tmp_path / "nowhere"), ""
    )
    with pytest.raises(ProviderUnavailable) as raised:
        check_available(settings, {})
    assert str(raised.value).startswith("claude-code: Claude Code not found") and "\n" not in str(
        raised.value
    )
    found = check_available(
        ProviderSettings(ProviderName.CLAUDE_CODE, "opus", "", "", "", False, str(claude_code), ""), {}
    )
    assert isinstance(found, ClaudeCodeOptions) and found.executable == claude_code and found.home is None
