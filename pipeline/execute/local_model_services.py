"""A compress run whose summaries a model writes: the provider checked before any work, then one
HTTP client, one provider, one limiter and one pack-thread limiter for every session of the run.

`model_services` is a run's `prepare`: it opens them in the event loop and yields each session's
options with the model's writer in them, so every call of every session goes through the same
limiter (requests and tokens a minute, calls in flight) however many sessions run at once.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any

import anyio

from pipeline.errors import UsageError
from pipeline.jobs.compress import CompressOptions
from pipeline.jobs.compress.writers import ModelWriter, RunTokens
from pipeline.read.discover import SessionFile
from pipeline.settings import Settings
from pipeline.summarize.configure import model_summary_options, provider_settings, rate_limits
from pipeline.summarize.limiter import WindowLimiter
from pipeline.summarize.model import ModelServices
from pipeline.summarize.providers import (
    ProviderConfig,
    ProviderName,
    ProviderUnavailable,
    check_available,
    open_provider,
)
from pipeline.summarize.providers.http import open_http_client
from pipeline.vocabulary import SummarizerName, SummaryFallback

__all__ = ["PACK_THREADS", "model_provider", "model_services"]

PACK_THREADS = 1  # packs are CPU work: one thread leaves the event loop its share for the calls


Provider = tuple[ProviderName, ProviderConfig]


def model_provider(args: argparse.Namespace, settings: Settings) -> Provider | None:
    """The provider the run will use, checked now (a missing key or binary is a usage error)."""
    if settings.compress.summarizer is SummarizerName.DETERMINISTIC:
        return None
    name = ProviderName(settings.compress.summarizer.value)
    chosen = provider_settings(settings, name, getattr(args, "model", None), getattr(args, "base_url", None))
    try:
        return name, check_available(chosen, os.environ)
    except ProviderUnavailable as exc:
        raise UsageError(f"--summarizer {name.value}: {exc}") from exc


def model_services(
    settings: Settings,
    provider: Provider,
    options_for: Callable[[SessionFile], CompressOptions],
    max_run_tokens: int | None = None,
) -> Callable[[], Any]:
    """The run's `prepare`: opens the shared services and yields options carrying the model writer."""
    name, config = provider
    summary_options = model_summary_options(settings, name)
    fallback = settings.compress.on_summary_failure is SummaryFallback.DETERMINISTIC
    limits = rate_limits(settings)
    budget = RunTokens(max_run_tokens)

    @asynccontextmanager
    async def prepare() -> AsyncIterator[Callable[[SessionFile], CompressOptions]]:
        async with open_http_client(
            limits.max_in_flight, summary_options.retry.call_timeout_seconds
        ) as client:
            services = ModelServices(
                open_provider(config, client),
                WindowLimiter(limits),
                None,
                anyio.CapacityLimiter(PACK_THREADS),
            )

            def with_writer(session: SessionFile) -> CompressOptions:
                options = options_for(session)
                backup = options.summary_options() if fallback else None
                return replace(options, writer=ModelWriter(summary_options, services, backup, budget))

            yield with_writer

    return prepare
