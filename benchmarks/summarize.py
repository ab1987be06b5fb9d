"""Benchmark the model-summary engine against the local provider server: wall time versus the limits' bound.

A fleet of sessions (most fit one request, some need chunks and reduction) is summarized
concurrently through one limiter against `ProviderServer` with a fixed latency. The lower bound
is what the limits impose: the larger of calls / RPM, billed tokens / TPM, and the longest chain
of dependent calls times the latency. Target: wall time within 1.15x of that bound, and no window
over either limit. One window stands for a provider's minute so the run takes seconds.

    python benchmarks/summarize.py
    python benchmarks/summarize.py --sessions 400 --latency 0.1
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import emit

from pipeline.summarize.evidence.items import EvidenceItem, EvidenceKind
from pipeline.summarize.model.calls import RetryPolicy
from pipeline.summarize.model.engine import (
    AppendixOptions,
    ModelServices,
    ModelSummary,
    ModelSummaryOptions,
    RequestBudget,
    write_model_summary,
)
from pipeline.summarize.model.limiter import RateLimits, WindowLimiter
from pipeline.summarize.model.outcomes import SummaryFailure
from pipeline.summarize.model.pack import PackOptions
from pipeline.summarize.model.prices import BilledPrices, PriceTable
from pipeline.summarize.model.providers import AnthropicOptions, AnthropicProvider, Secret, open_http_client
from pipeline.testing.provider_server import ProviderServer

TARGET = 1.15
PACK_THREADS = 1  # one thread builds packs; the event loop keeps its share of the interpreter
OPTIONS = ModelSummaryOptions(
    budget=RequestBudget(6_000, 800, provider_reserve_tokens=200, safety_margin=0.05),
    pack=PackOptions(char_budget=500_000, token_budget=150_000, max_optional_chars=400),
    retry=RetryPolicy(
        max_attempts=6, initial_backoff_seconds=0.05, max_backoff_seconds=0.5, call_timeout_seconds=30
    ),
    appendix=AppendixOptions(64, 32, 32, 600),
    planned_output_tokens=300,
    prices=BilledPrices(PriceTable(()), 0.1, 1.25),  # unpriced: the benchmark measures time
)


def session(turns: int, seed: int) -> list[EvidenceItem]:
    """A session of `turns` turns: a prompt, a reply, a Bash call and its result each."""
    items: list[EvidenceItem] = []
    for number in range(turns):
        line = 1 + 4 * number
        words = " ".join(f"w{(seed * 7 + number * 3 + i) % 97}" for i in range(40))
        items += [
            EvidenceItem(line, EvidenceKind.HUMAN_PROMPT, f"Task {number}: {words}"),
            EvidenceItem(line + 1, EvidenceKind.ASSISTANT_TEXT, f"Done {number}. {words}"),
            EvidenceItem(
                line + 2,
                EvidenceKind.TOOL_CALL,
                tool_name="Bash",
                tool_id=f"t{line}",
                tool_input={"command": "pytest -q"},
            ),
            EvidenceItem(
                line + 3, EvidenceKind.TOOL_RESULT, "3 passed", tool_name="Bash", tool_id=f"t{line}"
            ),
        ]
    return items


def fleet(sessions: int) -> list[list[EvidenceItem]]:
    """Nine in ten sessions fit one request; one in ten needs chunks and a reduction."""
    return [session(60 if index % 10 == 9 else 4 + index % 5, index) for index in range(sessions)]


async def run(items: list[list[EvidenceItem]], limits: RateLimits, latency: float) -> dict[str, object]:
    results: list[ModelSummary | SummaryFailure] = []
    with ProviderServer(latency=latency) as server:
        async with open_http_client(limits.max_in_flight, 60.0) as http:
            provider = AnthropicProvider(
                AnthropicOptions(
                    server.base_url, "claude-bench", Secret("sk-ant-bench-local"), "2023-06-01", False
                ),
                http,
            )
            services = ModelServices(
                provider, WindowLimiter(limits), None, anyio.CapacityLimiter(PACK_THREADS)
            )

            async def one(evidence: list[EvidenceItem]) -> None:
                results.append(await write_model_summary(evidence, OPTIONS, services))

            started = time.perf_counter()
            async with anyio.create_task_group() as group:
                for evidence in items:
                    group.start_soon(one, evidence)
            wall = time.perf_counter() - started
        served = server.requests
        peak = server.peak(limits.window_seconds)
    done = [r for r in results if isinstance(r, ModelSummary)]
    billed = sum(request.billed_tokens for request in served)
    by_calls = len(served) / limits.requests_per_window * limits.window_seconds
    by_tokens = billed / limits.tokens_per_window * limits.window_seconds
    chain = max((r.account.reduction_depth + 1) * latency for r in done)
    bound = max(by_calls, by_tokens, chain)
    # A sliding window lets the first window's worth go at once, so the limits allow finishing one
    # window sooner than the rates alone say: the floor a perfect scheduler could reach.
    floor = max(
        (math.ceil(len(served) / limits.requests_per_window) - 1) * limits.window_seconds + latency,
        (billed / limits.tokens_per_window - 1) * limits.window_seconds + latency,
        chain,
    )
    return {
        "sessions": len(items),
        "summarized": len(done),
        "reduced": sum(1 for r in done if r.account.reduction_depth),
        "calls": len(served),
        "billed_tokens": billed,
        "wall_seconds": round(wall, 3),
        "bound_seconds": {
            "calls_per_rpm": round(by_calls, 3),
            "tokens_per_tpm": round(by_tokens, 3),
            "critical_path": round(chain, 3),
        },
        "ratio_to_bound": round(wall / bound, 3),
        "sliding_window_floor_seconds": round(floor, 3),
        "ratio_to_floor": round(wall / floor, 3),
        "peak_window": {
            "requests": peak.requests,
            "rpm": limits.requests_per_window,
            "tokens": peak.tokens,
            "tpm": limits.tokens_per_window,
        },
        "within_target": wall / bound <= TARGET
        and peak.requests <= limits.requests_per_window
        and peak.tokens <= limits.tokens_per_window,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.05, help="seconds the server takes per answer")
    parser.add_argument(
        "--window", type=float, default=1.0, help="seconds that stand for a provider's minute"
    )
    args = parser.parse_args()
    items = fleet(args.sessions)
    cases = {
        "requests-bound": RateLimits(60, 400_000, 16, args.window),
        "tokens-bound": RateLimits(1_000, 80_000, 16, args.window),
    }
    figures = {name: anyio.run(run, items, limits, args.latency) for name, limits in cases.items()}
    emit(
        "summarize",
        {"latency_seconds": args.latency, "window_seconds": args.window, "target": TARGET, **figures},
    )


if __name__ == "__main__":
    main()
