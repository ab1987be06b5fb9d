"""What the HTTP providers share: the run's one client, status and transport errors, SSE lines.

httpx errors are translated here and only here (`ProviderTransportError` with the exception's
class name as its kind); an error status becomes `ProviderStatusError` with the `retry-after`
the server gave. Response bodies are read, never logged.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, Final

import anyio
import httpx
import orjson

from pipeline.summarize.model.providers.base import (
    ModelReply,
    ProviderName,
    ProviderStatusError,
    ProviderTransportError,
)

__all__ = [
    "CONNECT_TIMEOUT_SECONDS",
    "HttpProvider",
    "error_fields",
    "open_http_client",
    "post_json",
    "retry_after_seconds",
    "status_error",
    "stream_lines",
    "transport_errors",
]

CONNECT_TIMEOUT_SECONDS: Final = 10.0  # a model endpoint that does not accept within this is down
MAX_RETRY_AFTER_SECONDS: Final = 600.0  # a longer `retry-after` is treated as this, not obeyed for hours


def open_http_client(max_connections: int, timeout_seconds: float) -> httpx.AsyncClient:
    """The one client of a run: pooled connections up to the in-flight cap.

    The environment is trusted as the vendors' SDKs trust it: `HTTPS_PROXY`/`HTTP_PROXY`/
    `ALL_PROXY` with `NO_PROXY`, and `SSL_CERT_FILE`/`SSL_CERT_DIR` for a corporate CA.
    """
    return httpx.AsyncClient(
        timeout=httpx.Timeout(timeout_seconds, connect=CONNECT_TIMEOUT_SECONDS),
        limits=httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections),
        trust_env=True,
        follow_redirects=False,
    )


@contextlib.contextmanager
def transport_errors() -> Iterator[None]:
    """Turn httpx's transport failures into `ProviderTransportError`."""
    try:
        yield
    except httpx.TransportError as exc:
        raise ProviderTransportError(type(exc).__name__) from exc
    except httpx.StreamError as exc:
        raise ProviderTransportError(type(exc).__name__) from exc


def retry_after_seconds(headers: httpx.Headers) -> float | None:
    """`retry-after` (seconds or an HTTP date) or `retry-after-ms`, bounded; None when absent."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        with contextlib.suppress(ValueError):
            return min(max(float(millis) / 1000, 0.0), MAX_RETRY_AFTER_SECONDS)
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return min(max(float(value), 0.0), MAX_RETRY_AFTER_SECONDS)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    seconds = (when - datetime.now(UTC)).total_seconds()
    return min(max(seconds, 0.0), MAX_RETRY_AFTER_SECONDS)


def status_error(response: httpx.Response) -> ProviderStatusError:
    """The typed error for a non-2xx response."""
    return ProviderStatusError(response.status_code, retry_after_seconds(response.headers))


def error_fields(raw: bytes) -> tuple[str, str]:
    """(error code or type, message) of an OpenAI- or Anthropic-style error body, lower case."""
    try:
        body: Any = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return "", ""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return "", str(body.get("message", "")).lower() if isinstance(body, dict) else ""
    code = error.get("code") if isinstance(error.get("code"), str) else error.get("type")
    return str(code or "").lower(), str(error.get("message") or "").lower()


async def post_json(
    client: httpx.AsyncClient, url: str, headers: Mapping[str, str], body: bytes
) -> httpx.Response:
    """POST a JSON body and read the whole response."""
    with transport_errors():
        return await client.post(url, content=body, headers={**headers, "content-type": "application/json"})


@contextlib.asynccontextmanager
async def stream_lines(
    client: httpx.AsyncClient, url: str, headers: Mapping[str, str], body: bytes
) -> AsyncIterator[tuple[httpx.Response, AsyncIterator[str]]]:
    """POST a JSON body and yield the response with an iterator over its body's lines."""
    request_headers = {**headers, "content-type": "application/json", "accept": "text/event-stream"}
    with transport_errors():
        async with client.stream("POST", url, content=body, headers=request_headers) as response:
            yield response, _lines(response)


async def _lines(response: httpx.Response) -> AsyncIterator[str]:
    with transport_errors():
        async for line in response.aiter_lines():
            yield line


ReadStream = Callable[[AsyncIterator[str]], Awaitable[ModelReply]]
"""A provider's reading of its streamed body's lines into a reply."""
RaiseFor = Callable[[httpx.Response, bytes], None]
"""A provider's error for a response that is not 200 (its body read whole)."""


class HttpProvider:
    """What the HTTP providers share: which provider, the run's client, the one URL they post to
    with their headers, the model asked for, and a streamed call timed from its response's arrival."""

    def __init__(
        self, name: ProviderName, client: httpx.AsyncClient, url: str, headers: Mapping[str, str], model: str
    ) -> None:
        self._name = name
        self._client = client
        self._url = url
        self._headers = dict(headers)
        self._model = model

    @property
    def name(self) -> ProviderName:
        """Which provider this is (`anthropic`, `openai`)."""
        return self._name

    @property
    def model(self) -> str:
        """The model asked for."""
        return self._model

    async def _streamed(self, body: bytes, read: ReadStream, raise_for: RaiseFor) -> ModelReply:
        async with stream_lines(self._client, self._url, self._headers, body) as (response, lines):
            began = anyio.current_time()
            if response.status_code != 200:
                raise_for(response, await response.aread())
            return replace(await read(lines), answer_began=began)
