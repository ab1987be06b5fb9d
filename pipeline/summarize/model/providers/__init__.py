"""Model providers behind one protocol: Anthropic Messages, OpenAI-compatible chat, Claude Code.

`check_available` resolves a provider's settings against the environment before any work starts
and raises `ProviderUnavailable` with one line saying what is missing (a key, an executable);
`open_provider` builds the provider on the run's one HTTP client.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import httpx

from pipeline.installed import ClaudeCodeNotInstalled, require_claude_code
from pipeline.summarize.model.providers.anthropic import AnthropicOptions, AnthropicProvider
from pipeline.summarize.model.providers.base import (
    InputTooLong,
    ModelReply,
    ModelRequest,
    ProviderAborted,
    ProviderError,
    ProviderName,
    ProviderProtocolError,
    ProviderStatusError,
    ProviderTransportError,
    ProviderUnavailable,
    Role,
    Secret,
    StopKind,
    SummaryProvider,
    Turn,
    Usage,
)
from pipeline.summarize.model.providers.claude_code import ClaudeCodeOptions, ClaudeCodeProvider
from pipeline.summarize.model.providers.http import open_http_client
from pipeline.summarize.model.providers.openai import OpenAIOptions, OpenAIProvider

__all__ = [
    "AnthropicOptions",
    "AnthropicProvider",
    "ClaudeCodeOptions",
    "ClaudeCodeProvider",
    "InputTooLong",
    "ModelReply",
    "ModelRequest",
    "OpenAIOptions",
    "OpenAIProvider",
    "ProviderAborted",
    "ProviderConfig",
    "ProviderError",
    "ProviderName",
    "ProviderProtocolError",
    "ProviderSettings",
    "ProviderStatusError",
    "ProviderTransportError",
    "ProviderUnavailable",
    "Role",
    "Secret",
    "StopKind",
    "SummaryProvider",
    "Turn",
    "Usage",
    "check_available",
    "open_http_client",
    "open_provider",
]

ProviderConfig = AnthropicOptions | OpenAIOptions | ClaudeCodeOptions
"""A provider's settings, resolved: key read, executable found."""


@dataclass(frozen=True, slots=True)
class ProviderSettings:
    """One provider's knobs as config gives them (config sections [anthropic], [openai], [claude_code]).

    `api_key_env` names the variable holding the key (never the key itself); `executable` is an
    executable or npm prefix for Claude Code (empty: found as verify-resume finds it); `home`
    empty runs Claude Code with the user's own home, where their login lives.
    """

    name: ProviderName
    model: str
    base_url: str
    api_key_env: str
    anthropic_version: str
    stream: bool
    executable: str
    home: str


def check_available(settings: ProviderSettings, environ: Mapping[str, str]) -> ProviderConfig:
    """The resolved provider, or ProviderUnavailable with a one-line reason; nothing is called."""
    key = environ.get(settings.api_key_env, "") if settings.api_key_env else ""
    if settings.name is ProviderName.ANTHROPIC:
        if not key:
            raise ProviderUnavailable(f"anthropic: set {settings.api_key_env or 'an API key variable'}")
        return AnthropicOptions(
            settings.base_url, settings.model, Secret(key), settings.anthropic_version, settings.stream
        )
    if settings.name is ProviderName.OPENAI:
        if not settings.base_url:
            raise ProviderUnavailable("openai: set a base URL for the chat-completions endpoint")
        return OpenAIOptions(settings.base_url, settings.model, Secret(key) if key else None, settings.stream)
    try:
        executable = require_claude_code(Path(settings.executable) if settings.executable else None)
    except ClaudeCodeNotInstalled as exc:
        raise ProviderUnavailable(f"claude-code: {exc}") from None
    home = Path(settings.home) if settings.home else None
    return ClaudeCodeOptions(
        executable, settings.model, home, settings.base_url or None, Secret(key) if key else None
    )


def open_provider(config: ProviderConfig, client: httpx.AsyncClient) -> SummaryProvider:
    """The provider for resolved settings (Claude Code needs no HTTP client)."""
    if isinstance(config, AnthropicOptions):
        return AnthropicProvider(config, client)
    if isinstance(config, OpenAIOptions):
        return OpenAIProvider(config, client)
    return ClaudeCodeProvider(config)
