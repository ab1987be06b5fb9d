"""The provider protocol: one request in, one reply out, failures as typed errors.

A provider turns a `ModelRequest` (system text, alternating turns, an output bound) into a
`ModelReply` (text, why it stopped, the usage it reported) and raises the errors below for
everything else. Raw JSON never leaves a provider module; these values are all the engine sees.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final, Protocol

from pipeline.errors import CompactionError

__all__ = [
    "RETRYABLE_STATUSES",
    "InputTooLong",
    "ModelReply",
    "ModelRequest",
    "ProviderAborted",
    "ProviderError",
    "ProviderName",
    "ProviderProtocolError",
    "ProviderStatusError",
    "ProviderTransportError",
    "ProviderUnavailable",
    "Role",
    "Secret",
    "StopKind",
    "SummaryProvider",
    "Turn",
    "Usage",
]

RETRYABLE_STATUSES: Final = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})
"""Statuses worth another attempt: timeouts, rate limits, server errors and Anthropic's 529 overload."""


class ProviderName(StrEnum):
    """The summarizers that call a model."""

    ANTHROPIC = "anthropic"
    OPENAI = "openai"
    CLAUDE_CODE = "claude-code"


class Role(StrEnum):
    """Who speaks a turn."""

    USER = "user"
    ASSISTANT = "assistant"


class StopKind(StrEnum):
    """Why the model stopped, in the engine's terms."""

    COMPLETE = "complete"
    TRUNCATED = "truncated"
    REFUSED = "refused"
    CONTENT_FILTERED = "content-filtered"


@dataclass(frozen=True, slots=True)
class Secret:
    """A credential: its repr never shows the value, so it cannot leak into a log or report."""

    value: str

    def __repr__(self) -> str:
        return "Secret(***)"

    __str__ = __repr__


@dataclass(frozen=True, slots=True)
class Turn:
    """One message of the conversation sent."""

    role: Role
    text: str


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """What to send: system instructions, turns (user first, alternating), the output bound."""

    system: str
    turns: tuple[Turn, ...]
    max_output_tokens: int


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens the provider billed for one call."""

    input_tokens: int  # every input token, cached ones included
    output_tokens: int
    cache_read_tokens: int = 0  # of the input: read from the provider's prompt cache
    cache_write_tokens: int = 0  # of the input: written to it (Anthropic bills these above input)

    @property
    def total(self) -> int:
        """Input and output together (what a tokens-per-minute limit counts)."""
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True, slots=True)
class ModelReply:
    """The model's text, why it stopped, its usage (None when the provider sent none).

    `answer_began` is when a streamed answer's headers came, on anyio's clock: the request had
    reached the provider by then. None when only the whole answer was seen.
    """

    text: str
    stop: StopKind
    usage: Usage | None
    answer_began: float | None = None


class ProviderError(CompactionError):
    """A model call did not produce a reply (codes and counts only, never response text)."""

    retryable: bool = False


class ProviderStatusError(ProviderError):
    """The provider answered with an error status; `retry_after` in seconds when it said so."""

    def __init__(self, status: int, retry_after: float | None = None) -> None:
        self.status, self.retry_after = status, retry_after
        self.retryable = status in RETRYABLE_STATUSES
        super().__init__(f"provider answered HTTP {status}")


class ProviderTransportError(ProviderError):
    """The call failed below HTTP (connection refused or reset, read timeout, a hung process)."""

    retryable = True

    def __init__(self, kind: str) -> None:
        self.kind = kind
        super().__init__(f"provider transport failed: {kind}")


class ProviderProtocolError(ProviderError):
    """The provider answered something that is not its protocol (a code names what was wrong)."""

    def __init__(self, code: str, status: int | None = None) -> None:
        self.code, self.status = code, status
        super().__init__(f"provider answer not understood: {code}")


class InputTooLong(ProviderError):
    """The provider said the prompt exceeds the model's context (or, streaming, sent nothing)."""

    def __init__(self, status: int | None, code: str) -> None:
        self.status, self.code = status, code
        super().__init__(f"provider rejected the prompt as too long ({code})")


class ProviderAborted(ProviderError):
    """The provider process was stopped by a signal before it answered."""

    def __init__(self, signal: int) -> None:
        self.signal = signal
        super().__init__(f"provider process ended by signal {signal}")


class ProviderUnavailable(CompactionError):
    """A provider cannot run at all (no key, no executable): one line that says what to fix."""


class SummaryProvider(Protocol):
    """Anything that completes a `ModelRequest`."""

    @property
    def name(self) -> ProviderName:
        """Which provider this is."""
        ...

    @property
    def model(self) -> str:
        """The model it asks for (as configured; empty when the provider chooses)."""
        ...

    async def complete(self, request: ModelRequest) -> ModelReply:
        """One call; raises a `ProviderError` when there is no reply."""
        ...
