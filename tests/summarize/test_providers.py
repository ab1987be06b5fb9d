"""The HTTP providers against the local server over loopback: both protocols, plain and streamed."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx
import pytest

from pipeline.summarize.providers import (
    InputTooLong,
    ModelRequest,
    ProviderStatusError,
    Role,
    StopKind,
    SummaryProvider,
    Turn,
)
from pipeline.summarize.providers.http import retry_after_seconds
from pipeline.testing.provider_server import Answer, Behavior, ProviderServer
from tests.summarize._support import TEST_KEY, anthropic, client, openai

pytestmark = pytest.mark.anyio

REQUEST = ModelRequest(
    "system words",
    (Turn(Role.USER, 'Human message anchors (cite each at least once): L1\nL1 human: "hi"'),),
    500,
)
Make = Callable[[str, httpx.AsyncClient], SummaryProvider]
PROVIDERS: dict[str, Make] = {
    "anthropic": anthropic,
    "anthropic-stream": lambda url, http: anthropic(url, http, stream=True),
    "openai": openai,
    "openai-stream": lambda url, http: openai(url, http, stream=True),
}


@pytest.fixture
def server() -> Iterator[ProviderServer]:
    with ProviderServer() as running:
        yield running


@pytest.mark.parametrize("name", list(PROVIDERS))
@pytest.mark.parametrize(
    ("behavior", "stop"),
    [
        (Behavior.GROUNDED, StopKind.COMPLETE),
        (Behavior.TRUNCATED, StopKind.TRUNCATED),
        (Behavior.REFUSAL, StopKind.REFUSED),
    ],
)
async def test_text_stop_reason_and_usage_come_back_typed(
    server: ProviderServer, name: str, behavior: Behavior, stop: StopKind
) -> None:
    server.script(Answer.of(behavior))
    async with client() as http:
        reply = await PROVIDERS[name](server.base_url, http).complete(REQUEST)
    (served,) = server.requests
    assert reply.stop is stop
    assert reply.usage is not None and (reply.usage.input_tokens, reply.usage.output_tokens) == (
        served.input_tokens,
        served.output_tokens,
    )
    assert ("## Goal" in reply.text) == (behavior is not Behavior.REFUSAL)
    assert served.stream == name.endswith("stream")


@pytest.mark.parametrize("stream", [False, True])
async def test_openai_content_filter_and_missing_streamed_usage(server: ProviderServer, stream: bool) -> None:
    server.script(Answer.of(Behavior.CONTENT_FILTER), Answer.of(Behavior.GROUNDED, usage=False))
    async with client() as http:
        provider = openai(server.base_url, http, stream=stream)
        filtered = await provider.complete(REQUEST)
        bare = await provider.complete(REQUEST)
    assert filtered.stop is StopKind.CONTENT_FILTERED
    assert bare.usage is None and bare.stop is StopKind.COMPLETE and bare.text


@pytest.mark.parametrize(
    ("name", "status", "code"),
    [
        ("anthropic", 400, "invalid_request_error"),
        ("anthropic-stream", 400, "invalid_request_error"),
        ("openai", 400, "context_length_exceeded"),
        ("openai-stream", 200, "empty-stream"),
    ],
)
async def test_an_over_long_prompt_is_input_too_long_in_each_protocols_way(
    name: str, status: int, code: str
) -> None:
    with ProviderServer(context_window=5) as server:
        async with client() as http:
            with pytest.raises(InputTooLong) as raised:
                await PROVIDERS[name](server.base_url, http).complete(REQUEST)
    assert (raised.value.status, raised.value.code) == (status, code)


@pytest.mark.parametrize("name", list(PROVIDERS))
async def test_error_statuses_carry_retry_after(server: ProviderServer, name: str) -> None:
    server.script(Answer.rate_limited(1.5), Answer.error(529), Answer.error(401))
    errors = []
    async with client() as http:
        provider = PROVIDERS[name](server.base_url, http)
        for _ in range(3):
            with pytest.raises(ProviderStatusError) as raised:
                await provider.complete(REQUEST)
            errors.append((raised.value.status, raised.value.retry_after, raised.value.retryable))
    assert errors == [(429, 1.5, True), (529, None, True), (401, None, False)]


async def test_headers_say_who_calls_and_the_key_goes_only_where_it_belongs(server: ProviderServer) -> None:
    async with client() as http:
        await anthropic(server.base_url, http).complete(REQUEST)
        await openai(server.base_url, http).complete(REQUEST)
    first, second = (request.raw for request in server.requests)
    assert b'"system":"system words"' in first and b'"role":"system"' in second
    assert server.bodies_containing(TEST_KEY) == 0


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "2"}, 2.0),
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after": "99999"}, 600.0),
        ({"retry-after": "soon"}, None),
        ({}, None),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),
    ],
)
def test_retry_after_is_read_in_seconds_milliseconds_or_a_date_and_bounded(
    headers: dict[str, str], seconds: float | None
) -> None:
    assert retry_after_seconds(httpx.Headers(headers)) == seconds
