"""Opt-in tier: the engine against llama.cpp's OpenAI-compatible server and SmolLM2-135M (scripts/test-real-model).

Not run by scripts/test (the `real_model` marker is deselected by default, and the tests skip
without the server's interpreter and model, which only scripts/test-real-model sets up). The
model is too small to follow the checkpoint format, so these check the wiring, the limits and
the typed outcomes end to end, never the prose: llama.cpp's own answers to an over-long prompt
(400 `context_length_exceeded` plain, 200 and an empty body streamed), `finish_reason: length`,
streamed answers without `usage`, and a whole summary ending in a typed result.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator

import httpx
import pytest

from pipeline.summarize.model.calls import RetryPolicy
from pipeline.summarize.model.engine import ModelSummary, write_model_summary
from pipeline.summarize.model.limiter import RateLimits, WindowLimiter
from pipeline.summarize.model.outcomes import SummaryFailure, SummaryOutcome
from pipeline.summarize.model.providers import (
    InputTooLong,
    ModelRequest,
    OpenAIOptions,
    OpenAIProvider,
    Role,
    StopKind,
    Turn,
)
from tests.summarize._support import client, options, services, turn

pytestmark = [pytest.mark.anyio, pytest.mark.real_model]

SERVER_PYTHON = os.environ.get("REAL_MODEL_SERVER_PYTHON", "")
GGUF = os.environ.get("REAL_MODEL_GGUF", "")
N_CTX = 2048  # small, so an over-long prompt is cheap to make; SmolLM2 itself takes 8k
START_SECONDS = 180.0  # loading a 98 MB model takes a few seconds; a busy 2-core machine more
MODEL = "smollm2"
# Two cores: prompt ~80 tokens/s, generation ~30 tokens/s; a call here takes 5-20 s.
SLOW = RetryPolicy(
    max_attempts=2, initial_backoff_seconds=1.0, max_backoff_seconds=2.0, call_timeout_seconds=240.0
)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def llama() -> Iterator[str]:
    """llama.cpp's server on a loopback port, for this module; its base URL (`.../v1`)."""
    if not (SERVER_PYTHON and GGUF):
        pytest.skip("run scripts/test-real-model: it builds llama.cpp's server and finds SmolLM2")
    port = _free_port()
    command = [
        SERVER_PYTHON, "-m", "llama_cpp.server", "--model", GGUF, "--model_alias", MODEL,
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(N_CTX),
        "--n_threads", "2", "--n_threads_batch", "2",
    ]  # fmt: skip
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    base = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_ready(base, process)
        yield base
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _wait_ready(base: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"llama.cpp's server exited with {process.returncode} before it was ready")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(base + "/models", timeout=2.0).status_code == 200:
                return
        time.sleep(1.0)
    pytest.fail(f"llama.cpp's server was not ready within {START_SECONDS:g} s")


def provider(base: str, http: httpx.AsyncClient, *, stream: bool) -> OpenAIProvider:
    return OpenAIProvider(OpenAIOptions(base, MODEL, None, stream), http)


def ask(text: str, max_tokens: int) -> ModelRequest:
    return ModelRequest("You are a helpful assistant.", (Turn(Role.USER, text),), max_tokens)


LONG = "Summarize the following log. " + " ".join(f"event {i} finished with status ok" for i in range(700))


async def test_an_over_long_prompt_is_input_too_long_plain_and_streamed(llama: str) -> None:
    async with client() as http:
        with pytest.raises(InputTooLong) as plain:
            await provider(llama, http, stream=False).complete(ask(LONG, 16))
        with pytest.raises(InputTooLong) as streamed:
            await provider(llama, http, stream=True).complete(ask(LONG, 16))
    assert (plain.value.status, plain.value.code) == (400, "context_length_exceeded")
    assert (streamed.value.status, streamed.value.code) == (200, "empty-stream")


async def test_a_cut_answer_is_truncated_and_a_streamed_one_may_lack_usage(llama: str) -> None:
    async with client() as http:
        plain = await provider(llama, http, stream=False).complete(
            ask("Count from one to one hundred in words.", 8)
        )
        streamed = await provider(llama, http, stream=True).complete(
            ask("Count from one to one hundred in words.", 8)
        )
    assert plain.stop is StopKind.TRUNCATED and plain.usage is not None and plain.usage.output_tokens <= 8
    assert streamed.stop is StopKind.TRUNCATED and streamed.text
    assert streamed.answer_began is not None


@pytest.mark.parametrize("stream", [False, True])
async def test_a_whole_summary_ends_in_a_typed_result_within_the_limits(llama: str, stream: bool) -> None:
    items = turn(
        1, "Please add a --verbose flag to the CLI and keep the tests green.", "Added the flag; tests pass."
    )
    limits = RateLimits(requests_per_window=3, tokens_per_window=20_000, max_in_flight=1, window_seconds=60.0)
    async with client() as http:
        shared = services(provider(llama, http, stream=stream), limits)
        result = await write_model_summary(
            items, options(context_window=N_CTX, max_output=256, retry=SLOW), shared
        )
    outcome = result.outcome.value if isinstance(result, SummaryFailure) else "summary"
    print(
        f"stream={stream} outcome={outcome} calls={result.account.calls} seconds={result.account.wall_seconds:.1f}"
    )
    assert isinstance(shared.limiter, WindowLimiter)
    stats = shared.limiter.statistics()
    account = result.account
    assert stats.grants == account.calls + account.retries and stats.in_flight == 0
    assert (account.provider, account.model) == ("openai", MODEL) and 1 <= account.calls <= 2
    if isinstance(result, SummaryFailure):
        assert result.outcome in {
            SummaryOutcome.GROUNDING_FAILED,
            SummaryOutcome.OUTPUT_TRUNCATED,
            SummaryOutcome.EMPTY,
        }
        assert (result.outcome is SummaryOutcome.GROUNDING_FAILED) == (
            account.repairs == 1 and account.calls == 2
        )
    else:
        assert isinstance(result, ModelSummary) and result.text.count("## Goal") == 1
    if stream:
        assert account.calls_without_usage in (0, account.calls)  # llama.cpp sends no usage when streaming
    else:
        assert account.calls_without_usage == 0 and account.billed_input_tokens > 0


async def test_the_engine_turns_the_servers_overflow_into_input_overflow(llama: str) -> None:
    items = turn(1, LONG, "ok")  # one group: it cannot be split, so the server's refusal is final
    async with client() as http:
        shared = services(provider(llama, http, stream=False))
        result = await write_model_summary(
            items, options(context_window=8_192, max_output=64, retry=SLOW), shared
        )
    assert isinstance(result, SummaryFailure) and result.outcome is SummaryOutcome.INPUT_OVERFLOW
    assert result.facts.http_status == 400 and result.account.calls == 1
