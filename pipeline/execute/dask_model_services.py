"""Compress with a model summarizer on a cluster: each worker process opens the run's services
once (an event loop in a thread, one HTTP client, the provider) and every call of every worker
goes through the one cluster-wide limiter (`cluster_limiter.LimiterActor`).

The client creates the actor when the run starts (`ModelSummarizer.on_cluster`) and sends each session
options that name it; a worker's first model session starts its services and keeps them for the
process's life, the way the local runner keeps them for the run's. The jobs run in a thread of
that loop, so the model writer reaches the loop as it does locally (`anyio.from_thread`).
"""

from __future__ import annotations

import threading
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Final

import anyio
import anyio.from_thread
import anyio.to_thread

from pipeline.execute.dask_limiter import ClusterLimiter
from pipeline.jobs.compress import CompressOptions, compress_session
from pipeline.jobs.compress.writers import ModelWriter
from pipeline.report.documents import Outcome
from pipeline.summarize.model.engine import ModelServices, ModelSummaryOptions
from pipeline.summarize.model.providers import ProviderConfig, open_provider
from pipeline.summarize.model.providers.http import open_http_client
from pipeline.summarize.model.run_budget import RunBudget

if TYPE_CHECKING:
    from distributed import Actor

__all__ = ["ClusterModelOptions", "compress_with_model"]

PACK_THREADS: Final = 1  # as the local run: packs are CPU work, one thread leaves the loop its share


@dataclass(frozen=True, slots=True)
class ClusterModelOptions:
    """A session's compress options and what its worker needs to call the model."""

    base: CompressOptions
    provider: ProviderConfig
    summary: ModelSummaryOptions
    fallback: bool  # write the embedded summary when the model's fails
    max_in_flight: int
    limiter: Actor = field(repr=False, compare=False)  # the run's LimiterActor proxy; not in the digest


@dataclass(slots=True)
class _Services:
    """One worker process's open services: a portal (loop thread), the model services, their exits."""

    portal: anyio.from_thread.BlockingPortal
    services: ModelServices
    exits: ExitStack


_OPEN: dict[str, _Services] = {}  # per worker process and limiter: outlives a task, as a run's services do
_OPENING = threading.Lock()


def _services(options: ClusterModelOptions) -> _Services:
    key = str(options.limiter.key)
    with _OPENING:
        opened = _OPEN.get(key)
        if opened is None:
            exits = ExitStack()
            portal = exits.enter_context(anyio.from_thread.start_blocking_portal())
            client = exits.enter_context(
                portal.wrap_async_context_manager(
                    open_http_client(options.max_in_flight, options.summary.retry.call_timeout_seconds)
                )
            )
            pack_threads = portal.call(partial(anyio.CapacityLimiter, PACK_THREADS))
            services = ModelServices(
                open_provider(options.provider, client), ClusterLimiter(options.limiter), None, pack_threads
            )
            opened = _OPEN[key] = _Services(portal, services, exits)
        return opened


def compress_with_model(path: Path, label: str, options: ClusterModelOptions) -> Outcome:
    """`compress_session` with the model writer of this worker's services (a `SessionJob`)."""
    opened = _services(options)
    backup = options.base.summary_options() if options.fallback else None
    writer = ModelWriter(options.summary, opened.services, backup, RunBudget(None))
    session = replace(options.base, writer=writer)
    outcome: Outcome = opened.portal.call(anyio.to_thread.run_sync, compress_session, path, label, session)
    return outcome
