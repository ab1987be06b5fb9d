"""A local model server for tests and benchmarks: the Anthropic and OpenAI protocols over loopback.

`ProviderServer` serves `POST /v1/messages` (Anthropic Messages) and `POST .../chat/completions`
(OpenAI-compatible), streamed or not, on 127.0.0.1 at an ephemeral port from a background
thread. By default it answers like a model that follows the checkpoint protocol: it reads the
evidence pack in the prompt and writes nine headings whose bullets cite the pack's anchors and
every listed human anchor. Scripted `Answer`s (queued, or chosen per request number) replace
that with latency, 429 with `retry-after`, 500/529, a held reply (a timeout), a truncated answer,
a refusal, a content filter, empty text, broken structure, unsupported claims or an over-long
prompt (llama.cpp's way: 400 `context_length_exceeded` plain, 200 with an empty body streamed).
It bills tokens as characters / 4 and keeps a prompt cache (a prefix offered again is read from
it: Anthropic's `cache_control` prefixes, OpenAI's message boundaries), reports that usage on
both protocols, keeps its own ledger of what it billed (`bill()`), records every request and
reports the busiest window::

    with ProviderServer() as server:
        server.script(Answer.rate_limited(0.01), Answer.broken_structure())
        ...
        assert server.peak(60.0).requests <= 50
        assert server.bodies_containing(planted_secret) == 0
"""

from __future__ import annotations

import json
import ssl
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler

from pipeline.proof.loopback import LoopbackServer
from pipeline.testing._provider_answers import Answer, Behavior, ServedRequest, tokens_of
from pipeline.testing._provider_wire import handler_for

__all__ = ["Answer", "Behavior", "Bill", "ProviderServer", "ServedRequest", "WindowPeak"]


@dataclass(frozen=True, slots=True)
class WindowPeak:
    """The most requests and the most billed tokens that fell into any one window."""

    requests: int
    tokens: int


@dataclass(frozen=True, slots=True)
class Bill:
    """What the server billed over the answers that reported their usage to the caller."""

    requests: int
    input_tokens: int  # cached ones included
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int

    def cost(self, input_usd_per_mtok: float, output_usd_per_mtok: float, read: float, write: float) -> float:
        """Dollars at these prices, cache reads and writes billed at `read` and `write` input shares."""
        fresh = self.input_tokens - self.cache_read_tokens - self.cache_write_tokens
        cached = self.cache_read_tokens * read + self.cache_write_tokens * write
        return ((fresh + cached) * input_usd_per_mtok + self.output_tokens * output_usd_per_mtok) / 1e6


class ProviderServer(LoopbackServer):
    """Context manager running the server; `.base_url`, `.requests`, `.peak()` while or after it runs."""

    thread_name = "provider-server"
    poll_seconds = 0.02  # the library's 0.5 s adds up over many tests

    def __init__(
        self,
        *,
        latency: float = 0.0,
        context_window: int | None = None,
        chooser: Callable[[int], Answer | None] | None = None,
        models: tuple[str, ...] | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.latency = latency
        self.tls = (
            tls  # serve https with this context (the tests make one with `tests/support/loopback_cert.py`)
        )
        self.context_window = context_window
        self.models = models
        self._chooser = chooser
        self._script: deque[Answer] = deque()
        self._served: list[ServedRequest] = []
        self._count = 0
        self._cached: set[tuple[str, str]] = set()  # (protocol and model, prompt prefix)
        self._lock = threading.Lock()
        super().__init__()

    def handler(self) -> type[BaseHTTPRequestHandler]:
        """Requests are recorded and answered from the script, the chooser or the default model."""
        return handler_for(self)

    def start(self) -> ProviderServer:
        """Serve as the loopback server does; with `tls`, every accepted connection speaks TLS."""
        super().start()
        if self.tls is not None and self._server is not None:
            # the handshake runs on accept; one that fails (an untrusted certificate) drops that connection
            self._server.socket = self.tls.wrap_socket(self._server.socket, server_side=True)
        return self

    # control and inspection -----------------------------------------------------------------
    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:<port>`, `https://` with `tls` (Anthropic's base URL; OpenAI's is this
        plus `/v1`)."""
        plain = super().base_url
        return plain if self.tls is None else "https" + plain.removeprefix("http")

    def script(self, *answers: Answer) -> None:
        """Queue answers for the next model requests, one each, before the chooser and the default."""
        with self._lock:
            self._script.extend(answers)

    @property
    def requests(self) -> tuple[ServedRequest, ...]:
        """Every model request so far, in arrival order."""
        with self._lock:
            return tuple(self._served)

    def peak(self, window_seconds: float) -> WindowPeak:
        """The busiest window of this length, sliding over arrivals: requests and billed tokens."""
        served = sorted(self.requests, key=lambda request: request.arrived)
        most_requests = most_tokens = 0
        start = tokens = 0
        for end, request in enumerate(served):
            tokens += request.billed_tokens
            while served[start].arrived <= request.arrived - window_seconds:
                tokens -= served[start].billed_tokens
                start += 1
            most_requests = max(most_requests, end - start + 1)
            most_tokens = max(most_tokens, tokens)
        return WindowPeak(most_requests, most_tokens)

    def bill(self) -> Bill:
        """The server's own ledger: tokens of every answer whose usage reached the caller."""
        billed = [request for request in self.requests if request.reported]
        return Bill(
            len(billed),
            sum(request.input_tokens for request in billed),
            sum(request.output_tokens for request in billed),
            sum(request.cache_read_tokens for request in billed),
            sum(request.cache_write_tokens for request in billed),
        )

    def bodies_containing(self, text: str) -> int:
        """How many request bodies hold `text` (raw bytes, or as a JSON string would escape it)."""
        needles = {text.encode(), json.dumps(text)[1:-1].encode()}
        return sum(1 for request in self.requests if any(needle in request.raw for needle in needles))

    # used by the handler --------------------------------------------------------------------
    def _next_answer(self) -> tuple[int, Answer]:
        with self._lock:
            self._count += 1
            number = self._count
            scripted = self._script.popleft() if self._script else None
        chosen = self._chooser(number) if scripted is None and self._chooser is not None else None
        return number, scripted or chosen or Answer()

    def _record(self, request: ServedRequest) -> None:
        with self._lock:
            self._served.append(request)

    def _cache_use(self, key: str, prefixes: tuple[str, ...], *, writes: bool) -> tuple[int, int]:
        """(read, written) tokens of a request offering `prefixes` (nested, shortest first): the
        longest one cached before is read; with `writes`, the rest of the longest is written."""
        with self._lock:
            hits = [prefix for prefix in prefixes if (key, prefix) in self._cached]
            self._cached.update((key, prefix) for prefix in prefixes)
        read = tokens_of(hits[-1]) if hits else 0
        longest = prefixes[-1] if prefixes else ""
        written = tokens_of(longest) - read if writes and longest and longest not in hits else 0
        return read, written
