"""Whether the configured model exists, asked once before any session: a misspelt model otherwise
fails every session of the run, one retry budget at a time.

Anthropic answers `GET /v1/models/{id}` with 404 for a model it does not serve; an
OpenAI-compatible server lists what it serves at `GET <base>/models`. Only a clear answer stops
the run: a server without a catalog (404 on the list, an empty list), an error status or an
unreachable endpoint leaves the question to the run's first call and its retries.
"""

from __future__ import annotations

import logging
from typing import Final

import httpx

from pipeline.summarize.model.providers.anthropic import AnthropicOptions
from pipeline.summarize.model.providers.http import CONNECT_TIMEOUT_SECONDS
from pipeline.summarize.model.providers.openai import OpenAIOptions

__all__ = ["missing_model"]

CATALOG_TIMEOUT_SECONDS: Final = 15.0  # one small GET; a slower catalog is left to the first call
_LISTED: Final = 5  # served models named in the one line


def _get(url: str, headers: dict[str, str]) -> httpx.Response | None:
    timeout = httpx.Timeout(CATALOG_TIMEOUT_SECONDS, connect=CONNECT_TIMEOUT_SECONDS)
    requests = logging.getLogger("httpx")
    level = requests.level
    requests.setLevel(logging.WARNING)  # the check's request line is noise beside its one-line verdict
    try:
        with httpx.Client(timeout=timeout, trust_env=True, follow_redirects=False) as client:
            return client.get(url, headers=headers)
    except httpx.HTTPError:
        return None
    finally:
        requests.setLevel(level)


def _anthropic(options: AnthropicOptions) -> str | None:
    url = f"{options.base_url.rstrip('/')}/v1/models/{options.model}"
    headers = {"x-api-key": options.api_key.value, "anthropic-version": options.version}
    response = _get(url, headers)
    if response is None or response.status_code != 404:
        return None
    return (
        f"model {options.model!r} does not exist at {options.base_url} (GET /v1/models/{options.model}: 404)"
    )


def _served_ids(response: httpx.Response) -> list[str]:
    try:
        listed = response.json().get("data")
    except (ValueError, AttributeError):
        return []
    if not isinstance(listed, list):
        return []
    return [str(item["id"]) for item in listed if isinstance(item, dict) and "id" in item]


def _openai(options: OpenAIOptions) -> str | None:
    headers = {"authorization": f"Bearer {options.api_key.value}"} if options.api_key is not None else {}
    response = _get(options.base_url.rstrip("/") + "/models", headers)
    if response is None or response.status_code != 200:
        return None
    served = _served_ids(response)
    if not served or options.model in served:
        return None
    named = ", ".join(sorted(served)[:_LISTED]) + (", ..." if len(served) > _LISTED else "")
    return f"model {options.model!r} is not served by {options.base_url} (it lists {named})"


def missing_model(config: object) -> str | None:
    """One line saying the configured model does not exist, or None (exists, or no clear answer)."""
    if isinstance(config, AnthropicOptions):
        return _anthropic(config)
    if isinstance(config, OpenAIOptions):
        return _openai(config)
    return None  # Claude Code resolves its own model names
