"""Qwen Code's own estimate of a history's tokens, part by part (its `/context` view, 0.24.4's
`estimateConversationTokens`): a text (a thought's too) by its characters, ASCII / 4 and 1.5 per
other character, rounded up per part; a call by its `functionCall` as JSON; a response by
`{id, name, response}` as JSON, and its nested text parts. Media and parts of no shape Qwen
Code counts are 0 here: the rebuilt messages do not send them (a finding says so).

Both the sent items (`validate`, the cut's budget) and the content classes (`tokens`) count with
it, so the two agree on what Qwen Code sends.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

__all__ = ["estimate_tokens", "response_estimate", "text_estimate"]


def estimate_tokens(text: str) -> int:
    """Qwen Code's own estimate of a text: ASCII characters / 4 plus 1.5 per other character."""
    ascii_chars = len(text.encode("ascii", "ignore"))  # the characters below 128, counted in C
    return -(-(ascii_chars + 6 * (len(text) - ascii_chars)) // 4)


def text_estimate(value: Any) -> int:
    """The estimate of a JSON value as JavaScript's `JSON.stringify` writes it."""
    return estimate_tokens(orjson.dumps(value).decode())


def response_estimate(response: Mapping[str, Any], nested: tuple[str, ...]) -> int:
    """A `functionResponse`'s estimate: its id, name and response as JSON (an absent member left
    out, as `JSON.stringify` leaves out `undefined`), then each nested text part's."""
    body = {key: response[key] for key in ("id", "name", "response") if key in response}
    return text_estimate(body) + sum(estimate_tokens(text) for text in nested)
