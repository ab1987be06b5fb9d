"""The HTTP providers against the local server over loopback: both protocols, plain and streamed."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from pipeline.installed import OFFLINE_ENV
from pipeline.summarize.model.providers import (
    AnthropicOptions,
    ClaudeCodeOptions,
    InputTooLong,
    ModelRequest,
    OpenAIOptions,
    OpenAIProvider,
    ProviderName,
    ProviderSettings,
    ProviderStatusError,
    ProviderUnavailable,
    Role,
    Secret,
    StopKind,
    SummaryProvider,
    Turn,
    check_available,
)
from pipeline.summarize.model.providers.claude_code import command_line, environment
from pipeline.summarize.model.providers.http import retry_after_seconds
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
    marked = b'"system":[{"type":"text","text":"system words","cache_control":{"type":"ephemeral"}}]'
    assert marked in first and b'"role":"system"' in second
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


@pytest.mark.parametrize(
    ("name", "environ", "message"),
    [
        (ProviderName.ANTHROPIC, {}, "anthropic: set ANTHROPIC_API_KEY"),
        (ProviderName.ANTHROPIC, {"ANTHROPIC_API_KEY": ""}, "anthropic: set ANTHROPIC_API_KEY"),
    ],
)
def test_a_missing_key_is_one_line_before_any_work(
    name: ProviderName, environ: dict[str, str], message: str
) -> None:
    settings = ProviderSettings(
        name, "m", "https://api.example", "ANTHROPIC_API_KEY", "2023-06-01", False, "", ""
    )
    with pytest.raises(ProviderUnavailable, match=f"^{message}$"):
        check_available(settings, environ)


def test_resolved_settings_hold_the_key_as_a_secret_and_openai_needs_none() -> None:
    anthropic_settings = ProviderSettings(
        ProviderName.ANTHROPIC, "m", "https://x", "ANTHROPIC_API_KEY", "v", True, "", ""
    )
    resolved = check_available(anthropic_settings, {"ANTHROPIC_API_KEY": TEST_KEY})
    assert (
        isinstance(resolved, AnthropicOptions)
        and resolved.api_key.value == TEST_KEY
        and TEST_KEY not in repr(resolved)
    )
    local = ProviderSettings(
        ProviderName.OPENAI, "m", "http://127.0.0.1:8080/v1", "OPENAI_API_KEY", "", False, "", ""
    )
    opened = check_available(local, {})
    assert isinstance(opened, OpenAIOptions) and opened.api_key is None


def test_claude_code_runs_in_a_clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-for-claude")
    monkeypatch.setenv("HOME", "/home/someone")
    user = ClaudeCodeOptions(Path("/bin/claude"), "", None, None, None)
    env = environment(user, tmp_path, 1234)
    assert (
        env["HOME"] == "/home/someone"
        and "ANTHROPIC_API_KEY" not in env
        and "AWS_SECRET_ACCESS_KEY" not in env
    )
    assert env["CLAUDE_CODE_MAX_OUTPUT_TOKENS"] == "1234" and env["TMPDIR"] == str(tmp_path)
    assert set(env) <= {
        "PATH",
        "HOME",
        "TMPDIR",
        "CLAUDE_CONFIG_DIR",
        "CLAUDE_CODE_MAX_OUTPUT_TOKENS",
        *OFFLINE_ENV,
    }
    isolated = ClaudeCodeOptions(Path("/bin/claude"), "opus", tmp_path, "http://127.0.0.1:1", Secret("k"))
    env = environment(isolated, tmp_path, 1)
    assert (env["HOME"], env["ANTHROPIC_BASE_URL"], env["ANTHROPIC_API_KEY"]) == (
        str(tmp_path),
        "http://127.0.0.1:1",
        "k",
    )
    args = command_line(isolated, "SYS")
    assert args[1:] == [
        "-p",
        "--output-format",
        "json",
        "--max-turns",
        "1",
        "--tools",
        "",
        "--no-session-persistence",
        "--strict-mcp-config",
        "--disable-slash-commands",
        "--setting-sources",
        "",
        "--system-prompt",
        "SYS",
        "--model",
        "opus",
    ]


@pytest.mark.parametrize(
    ("model", "field"),
    [
        ("gpt-5-mini", "max_completion_tokens"),
        ("o3", "max_completion_tokens"),
        ("o4-mini-2025-04-16", "max_completion_tokens"),
        ("openai/o1", "max_completion_tokens"),
        ("gpt-4.1-mini", "max_tokens"),
        ("local-model", "max_tokens"),
        ("llama-3-o1-finetune", "max_tokens"),
    ],
)
async def test_reasoning_models_get_max_completion_tokens(
    server: ProviderServer, model: str, field: str
) -> None:
    async with client() as http:
        provider = OpenAIProvider(OpenAIOptions(server.base_url + "/v1", model, None, False), http)
        await provider.complete(REQUEST)
    (request,) = server.requests
    sent = json.loads(request.raw)
    assert sent[field] == 500
    other = ({"max_tokens", "max_completion_tokens"} - {field}).pop()
    assert other not in sent
