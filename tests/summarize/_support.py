"""Shared pieces of the model-summary tests: evidence, options, and providers on the local server."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

import anyio
import httpx

from pipeline.summarize.evidence.items import EvidenceItem, EvidenceKind
from pipeline.summarize.model.calls import RetryPolicy
from pipeline.summarize.model.engine import AppendixOptions, ModelServices, ModelSummaryOptions, RequestBudget
from pipeline.summarize.model.limiter import RateLimits, WindowLimiter
from pipeline.summarize.model.pack import PackOptions
from pipeline.summarize.model.prices import BilledPrices, ModelPrice, PriceTable
from pipeline.summarize.model.providers import (
    AnthropicOptions,
    AnthropicProvider,
    OpenAIOptions,
    OpenAIProvider,
    Secret,
    SummaryProvider,
    open_http_client,
)

TEST_KEY = "sk-ant-api03-local-test-key-not-a-secret-0000"
FAST_RETRY = RetryPolicy(
    max_attempts=6, initial_backoff_seconds=0.01, max_backoff_seconds=0.05, call_timeout_seconds=5.0
)
# The two test models priced at explicit figures (tests never read [prices]): costs can be checked.
PRICES = BilledPrices(
    PriceTable((ModelPrice("claude-test", 3.0, 15.0), ModelPrice("local-model", 0.4, 1.6))),
    cache_read_share=0.1,
    cache_write_share=1.25,
)
APPENDIX = AppendixOptions(
    max_file_operations=64, max_validation_records=32, max_active_work_records=32, max_command_chars=600
)
PACK_THREADS = 1  # as a run would use: the event loop keeps its share of the interpreter
OPEN_LIMITS = RateLimits(
    requests_per_window=10_000, tokens_per_window=10**9, max_in_flight=16, window_seconds=60.0
)


def options(
    *,
    context_window: int = 50_000,
    max_output: int = 2_000,
    retry: RetryPolicy = FAST_RETRY,
    pack_tokens: int = 150_000,
    pack_chars: int = 500_000,
) -> ModelSummaryOptions:
    """Options with small, explicit bounds (tests never read config/default.toml for them)."""
    return ModelSummaryOptions(
        budget=RequestBudget(context_window, max_output, provider_reserve_tokens=200, safety_margin=0.05),
        pack=PackOptions(char_budget=pack_chars, token_budget=pack_tokens, max_optional_chars=400),
        retry=retry,
        appendix=APPENDIX,
        planned_output_tokens=300,
        prices=PRICES,
    )


def turn(
    line: int, prompt: str, reply: str, *, command: str = "pytest -q", output: str = "3 passed"
) -> list[EvidenceItem]:
    """One turn: a human prompt, an assistant reply, a Bash call and its result (four lines)."""
    tool_id = f"toolu_{line}"
    return [
        EvidenceItem(line, EvidenceKind.HUMAN_PROMPT, prompt),
        EvidenceItem(line + 1, EvidenceKind.ASSISTANT_TEXT, reply),
        EvidenceItem(
            line + 2,
            EvidenceKind.TOOL_CALL,
            tool_name="Bash",
            tool_id=tool_id,
            tool_input={"command": command},
        ),
        EvidenceItem(line + 3, EvidenceKind.TOOL_RESULT, output, tool_name="Bash", tool_id=tool_id),
    ]


def session(turns: int, *, words: int = 20) -> list[EvidenceItem]:
    """A session of `turns` turns whose texts have about `words` words each."""
    filler = " ".join(f"word{i}" for i in range(words))
    items: list[EvidenceItem] = []
    for number in range(turns):
        items += turn(
            1 + 4 * number, f"Please do task {number}: {filler}", f"Done with task {number}. {filler}"
        )
    return items


def anthropic(base_url: str, client: httpx.AsyncClient, *, stream: bool = False) -> AnthropicProvider:
    """The Anthropic provider pointed at the local server."""
    return AnthropicProvider(
        AnthropicOptions(base_url, "claude-test", Secret(TEST_KEY), "2023-06-01", stream), client
    )


def openai(base_url: str, client: httpx.AsyncClient, *, stream: bool = False) -> OpenAIProvider:
    """The OpenAI-compatible provider pointed at the local server."""
    return OpenAIProvider(OpenAIOptions(base_url + "/v1", "local-model", None, stream), client)


def services(
    provider: SummaryProvider, limits: RateLimits = OPEN_LIMITS, abort: anyio.Event | None = None
) -> ModelServices:
    """A provider with a fresh limiter."""
    return ModelServices(provider, WindowLimiter(limits), abort, anyio.CapacityLimiter(PACK_THREADS))


@asynccontextmanager
async def client() -> AsyncIterator[httpx.AsyncClient]:
    """The run's one HTTP client, as production opens it."""
    async with open_http_client(max_connections=16, timeout_seconds=30.0) as http:
        yield http


def lines_of(items: Sequence[EvidenceItem], kind: EvidenceKind) -> list[int]:
    """Lines of the items of one kind."""
    return [item.line for item in items if item.kind is kind]
