"""A compress run whose summaries a model writes: the provider checked before any work, then one
HTTP client, one provider, one limiter and one pack-thread limiter for every session of the run.

`ModelSummarizer` is the run's `SharedServices`: the executor opens it where its sessions run, so
every call of every session goes through the same limiter (requests and tokens a minute, calls in
flight) however many sessions run at once.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Final, cast

import anyio

from pipeline.errors import UsageError
from pipeline.execute.seam import WorkFor
from pipeline.execute.session_tasks import BoundJob
from pipeline.jobs.compress import CompressOptions, compress_session
from pipeline.jobs.compress.writers import ModelWriter
from pipeline.read.discover import SessionFile
from pipeline.settings import Settings
from pipeline.summarize.model.configure import (
    CONFIGURED_WINDOW,
    ModelWindow,
    model_summary_options,
    provider_settings,
    rate_limits,
)
from pipeline.summarize.model.engine import ModelServices, ModelSummaryOptions
from pipeline.summarize.model.limiter import RateLimits, WindowLimiter
from pipeline.summarize.model.providers import (
    ProviderConfig,
    ProviderName,
    ProviderUnavailable,
    check_available,
    open_provider,
)
from pipeline.summarize.model.providers.catalog import missing_model
from pipeline.summarize.model.providers.http import open_http_client
from pipeline.summarize.model.run_budget import BudgetedLimiter, RunBudget
from pipeline.vocabulary import SummarizerName, SummaryFallback

if TYPE_CHECKING:
    from distributed import Actor, Client

    from pipeline.execute.dask_model_services import ClusterModelOptions

__all__ = [
    "BASE_URL_ENV",
    "PACK_THREADS",
    "ModelSummarizer",
    "model_provider",
    "model_summarizer",
    "model_window",
]

PACK_THREADS = 1  # packs are CPU work: one thread leaves the event loop its share for the calls


Provider = tuple[ProviderName, ProviderConfig]


# The variables the vendors' SDKs take their endpoint from when none is passed (Claude Code reads
# its own `ANTHROPIC_BASE_URL` and is configured by `[claude_code] base_url`).
BASE_URL_ENV: Final = {ProviderName.ANTHROPIC: "ANTHROPIC_BASE_URL", ProviderName.OPENAI: "OPENAI_BASE_URL"}


def model_provider(args: argparse.Namespace, settings: Settings) -> Provider | None:
    """The provider the run will use, checked now (a missing key or binary is a usage error).

    The endpoint is `--base-url`, else the vendor SDK's variable (`ANTHROPIC_BASE_URL`,
    `OPENAI_BASE_URL`) when set, else the config section's.
    """
    if settings.compress.summarizer is SummarizerName.DETERMINISTIC:
        return None
    name = ProviderName(settings.compress.summarizer.value)
    base_url = getattr(args, "base_url", None) or os.environ.get(BASE_URL_ENV.get(name, ""), "").strip()
    chosen = provider_settings(settings, name, getattr(args, "model", None), base_url or None)
    try:
        config = check_available(chosen, os.environ)
    except ProviderUnavailable as exc:
        raise UsageError(f"--summarizer {name.value}: {exc}") from exc
    missing = missing_model(config)  # one GET: a model that does not exist stops the run up front
    if missing is not None:
        raise UsageError(f"--summarizer {name.value}: {missing}; name a served one with --model")
    return name, config


@dataclass(frozen=True, slots=True)
class ModelSummarizer:
    """A model run's `SharedServices`: one client, provider and limiter for every session, in this
    process (`in_process`) or, on a cluster, a limiter actor every worker's calls go through."""

    options_for: Callable[[SessionFile], CompressOptions]
    provider: ProviderConfig
    summary: ModelSummaryOptions
    limits: RateLimits
    fallback: bool  # write the embedded summary when the model's fails
    max_run_tokens: int | None  # counted in this process: refused with --cluster

    @asynccontextmanager
    async def in_process(self) -> AsyncIterator[WorkFor]:
        """Open the services in the event loop; each session's options carry the model writer."""
        async with self.writers() as with_writer:

            def bound(session: SessionFile) -> BoundJob[CompressOptions]:
                return BoundJob(compress_session, with_writer(self.options_for(session)))

            yield bound

    @asynccontextmanager
    async def writers(self) -> AsyncIterator[Callable[[CompressOptions], CompressOptions]]:
        """Open the services in the event loop; what it yields gives options the model writer
        (one client, limiter and run budget for every session: the fleet's and the in-place pass's)."""
        budget = RunBudget(self.max_run_tokens)
        async with open_http_client(
            self.limits.max_in_flight, self.summary.retry.call_timeout_seconds
        ) as client:
            services = ModelServices(
                open_provider(self.provider, client),
                BudgetedLimiter(WindowLimiter(self.limits), budget),
                None,
                anyio.CapacityLimiter(PACK_THREADS),
            )

            def with_writer(options: CompressOptions) -> CompressOptions:
                backup = options.summary_options() if self.fallback else None
                return replace(options, writer=ModelWriter(self.summary, services, backup, budget))

            yield with_writer

    def on_cluster(self, client: Client) -> WorkFor:
        """Make the limiter actor on the cluster; each session's work names it."""
        from pipeline.execute.dask_limiter import LimiterActor  # noqa: PLC0415 - Dask on use only
        from pipeline.execute.dask_model_services import ClusterModelOptions, compress_with_model  # noqa: PLC0415

        actor = cast("Actor", client.submit(LimiterActor, self.limits, actor=True).result())

        def on_cluster(session: SessionFile) -> BoundJob[ClusterModelOptions]:
            options = ClusterModelOptions(
                self.options_for(session),
                self.provider,
                self.summary,
                self.fallback,
                self.limits.max_in_flight,
                actor,
            )
            return BoundJob(compress_with_model, options)

        return on_cluster


def model_window(args: argparse.Namespace) -> ModelWindow:
    """`--model-context-window` and `--model-max-output` (0 or absent: the configured default)."""
    return ModelWindow(
        getattr(args, "model_context_window", None) or None, getattr(args, "model_max_output", None) or None
    )


def model_summarizer(
    settings: Settings,
    provider: Provider,
    options_for: Callable[[SessionFile], CompressOptions],
    max_run_tokens: int | None = None,
    window: ModelWindow = CONFIGURED_WINDOW,
) -> ModelSummarizer:
    """The run's shared model services, from the settings and the provider checked before."""
    name, config = provider
    return ModelSummarizer(
        options_for,
        config,
        model_summary_options(settings, name, config.model, window),
        rate_limits(settings),
        settings.compress.on_summary_failure is SummaryFallback.DETERMINISTIC,
        max_run_tokens,
    )
