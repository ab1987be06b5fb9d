"""An item as Codex sends it: its record re-read into Codex's own types and written back out.

Codex (0.171) parses each rollout item into its `ResponseItem` and serializes that into the
request, so what it sends differs from the line in three known ways, each checked against what
the real Codex sends (the golden test): fields it does not model or never serializes are gone
(`id`, `end_turn`); a reasoning item without `content` or `encrypted_content` sends them as null;
and a tool output recorded into its history is cut to the truncation budget (`truncate_text`: the
middle of the text replaced by a "…N tokens truncated…" marker).
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["OUTPUT_TOKEN_BUDGET", "sent_item", "truncate_middle"]

OUTPUT_TOKEN_BUDGET: Final = 12_000
"""Codex's `TruncationPolicy::Tokens(10_000)` for its models, with its 20% serialization allowance."""
_BYTES_PER_TOKEN: Final = 4  # Codex's approx_token_count
_UNSERIALIZED: Final = {
    "message": ("id", "end_turn"),
    "reasoning": ("id",),
    "function_call": ("id",),
    "custom_tool_call": ("id",),
    "local_shell_call": ("id",),
    "web_search_call": ("id",),
}
_TRUNCATED: Final = frozenset({"function_call_output", "custom_tool_call_output"})


def _char_start(raw: bytes, index: int, step: int) -> int:
    """The nearest UTF-8 character boundary from `index`, moving by `step` (-1 or +1)."""
    while 0 < index < len(raw) and (raw[index] & 0xC0) == 0x80:
        index += step
    return index


def truncate_middle(text: str, max_tokens: int) -> str:
    """Codex's `truncate_middle_with_token_budget`: keep the head and tail bytes, mark the cut."""
    raw = text.encode("utf-8")
    max_bytes = max_tokens * _BYTES_PER_TOKEN
    if not raw or len(raw) <= max_bytes:
        return text
    left = max_bytes // 2
    prefix_end = _char_start(raw, left, -1)
    suffix_start = max(_char_start(raw, len(raw) - (max_bytes - left), 1), prefix_end)
    removed = -(-(len(raw) - max_bytes) // _BYTES_PER_TOKEN)
    marker = f"\u2026{removed} tokens truncated\u2026".encode()
    return (raw[:prefix_end] + marker + raw[suffix_start:]).decode("utf-8")


def _truncated_parts(parts: list[Any], budget: int) -> list[Any]:
    """Codex's `truncate_function_output_items_with_policy` over content items, by tokens."""
    out: list[Any] = []
    omitted = 0
    for part in parts:
        text = part.get("text") if isinstance(part, dict) and part.get("type") == "input_text" else None
        if not isinstance(text, str):
            out.append(part)
            continue
        if not text:
            continue
        if budget == 0:
            omitted += 1
            continue
        cost = -(-len(text.encode("utf-8")) // _BYTES_PER_TOKEN)
        if cost <= budget:
            out.append(part)
            budget -= cost
            continue
        snippet = truncate_middle(text, budget)
        if snippet:
            out.append({**part, "text": snippet})
        else:
            omitted += 1
        budget = 0
    if omitted:
        out.append({"type": "input_text", "text": f"[omitted {omitted} text items ...]"})
    return out


def sent_item(item: dict[str, Any], *, recorded: bool) -> dict[str, Any]:
    """`item` as Codex sends it. `recorded`: replayed into the history (outputs are truncated
    there), as opposed to a replacement history, which Codex installs as it is."""
    kind = item.get("type")
    sent = {key: value for key, value in item.items() if key not in _UNSERIALIZED.get(str(kind), ())}
    if kind == "reasoning":
        sent.setdefault("content", None)
        sent.setdefault("encrypted_content", None)
    if recorded and kind in _TRUNCATED:
        output = sent.get("output")
        if isinstance(output, str):
            sent["output"] = truncate_middle(output, OUTPUT_TOKEN_BUDGET)
        elif isinstance(output, list):
            sent["output"] = _truncated_parts(output, OUTPUT_TOKEN_BUDGET)
    return sent
