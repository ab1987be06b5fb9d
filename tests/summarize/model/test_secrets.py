"""Planted secrets reach no request body, on every provider path: plain, streamed, repaired, chunked."""

from __future__ import annotations

import pytest

from pipeline.summarize.evidence.items import EvidenceItem, EvidenceKind
from pipeline.summarize.model.engine import ModelSummary, write_model_summary
from pipeline.testing.provider_server import Answer, Behavior, ProviderServer
from tests.summarize._support import anthropic, client, openai, options, services, session
from tests.summarize.model.test_redaction import PLANTED

pytestmark = pytest.mark.anyio

SECRETS = [*PLANTED.values(), "hunter2-correct-horse", "s3cr3tPass"]


def planted_session() -> list[EvidenceItem]:
    """A session whose every kind of record carries secrets, then enough turns to need chunks."""
    keys = list(PLANTED.values())
    return [
        EvidenceItem(1, EvidenceKind.HUMAN_PROMPT, f"deploy with {keys[0]} and {keys[1]}"),
        EvidenceItem(2, EvidenceKind.THINKING, f"the user gave {keys[2]}; also {keys[3]}"),
        EvidenceItem(3, EvidenceKind.ASSISTANT_TEXT, f"I will use {keys[4]}"),
        EvidenceItem(
            4,
            EvidenceKind.TOOL_CALL,
            tool_name="Bash",
            tool_id="t",
            tool_input={"command": 'export PASSWORD="hunter2-correct-horse"'},
        ),
        EvidenceItem(
            5,
            EvidenceKind.TOOL_RESULT,
            f"{keys[5]}\n{keys[6]}\nhttps://ci:s3cr3tPass@git.example.com",
            tool_name="Bash",
            tool_id="t",
        ),
        EvidenceItem(6, EvidenceKind.PRIOR_SUMMARY, f"## Goal\n- ship it, token {keys[7]} (L1)"),
        *[
            EvidenceItem(item.line + 10, item.kind, item.text, item.tool_name, item.tool_id, item.tool_input)
            for item in session(40, words=40)
        ],
    ]


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("path", ["single", "repair", "chunked"])
async def test_no_planted_secret_reaches_a_request_body(protocol: str, stream: bool, path: str) -> None:
    items = planted_session()
    with ProviderServer() as server:
        if path == "repair":
            server.script(Answer.of(Behavior.UNSUPPORTED_CLAIMS))
        async with client() as http:
            provider = (anthropic if protocol == "anthropic" else openai)(
                server.base_url, http, stream=stream
            )
            window = 6_000 if path == "chunked" else 50_000
            result = await write_model_summary(items, options(context_window=window), services(provider))
        assert isinstance(result, ModelSummary)
        assert (result.account.repairs == 1) == (path == "repair")
        assert (result.account.reduction_depth > 0) == (path == "chunked")
        assert server.requests and all(server.bodies_containing(secret) == 0 for secret in SECRETS)
        assert result.account.redactions.total == len(SECRETS)
