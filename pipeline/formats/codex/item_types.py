"""The one list of what a Codex rollout holds: its record kinds and its response item types.

Reading, checking and judging a rollout all ask the same questions of an item (is it a call,
which output answers it, is it sent to the model at all), so each is answered here once, from
Codex's own types (0.171, `codex-rs` protocol `ResponseItem` and `RolloutItem`): the decoder
uses the record kinds, the reconstruction and integrity findings the calls and outputs, the token
classes and the evidence the same sets, and the resume verdict checks every call is answered.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Final

__all__ = [
    "API_ITEM_TYPES",
    "CALL_OUTPUTS",
    "CALL_TYPES",
    "CONTROL_RECORD_KINDS",
    "ENVELOPE_KINDS",
    "LEGACY_ITEM_TYPES",
    "OUTPUT_TYPES",
    "SHELL_CALL_TYPES",
    "ItemType",
]


class ItemType(StrEnum):
    """The `type` of a response item (a `response_item` payload, or an item of a history)."""

    MESSAGE = "message"
    REASONING = "reasoning"
    FUNCTION_CALL = "function_call"
    FUNCTION_CALL_OUTPUT = "function_call_output"
    CUSTOM_TOOL_CALL = "custom_tool_call"
    CUSTOM_TOOL_CALL_OUTPUT = "custom_tool_call_output"
    LOCAL_SHELL_CALL = "local_shell_call"
    WEB_SEARCH_CALL = "web_search_call"
    IMAGE_GENERATION_CALL = "image_generation_call"
    TOOL_SEARCH_CALL = "tool_search_call"
    TOOL_SEARCH_OUTPUT = "tool_search_output"
    COMPACTION = "compaction"
    CONTEXT_COMPACTION = "context_compaction"
    ADDITIONAL_TOOLS = "additional_tools"


LEGACY_ITEM_TYPES: Final = frozenset(
    {
        ItemType.MESSAGE,
        ItemType.REASONING,
        ItemType.FUNCTION_CALL,
        ItemType.FUNCTION_CALL_OUTPUT,
        ItemType.CUSTOM_TOOL_CALL,
        ItemType.CUSTOM_TOOL_CALL_OUTPUT,
        ItemType.LOCAL_SHELL_CALL,
        ItemType.WEB_SEARCH_CALL,
    }
)
"""The item types every CLI version writes (a bare 0.2x line of one of them is an item)."""
API_ITEM_TYPES: Final = frozenset(ItemType)
"""The item types Codex replays into the history it sends (any other is skipped)."""
CALL_OUTPUTS: Final[Mapping[str, str]] = {
    ItemType.FUNCTION_CALL: ItemType.FUNCTION_CALL_OUTPUT,
    ItemType.CUSTOM_TOOL_CALL: ItemType.CUSTOM_TOOL_CALL_OUTPUT,
    ItemType.LOCAL_SHELL_CALL: ItemType.FUNCTION_CALL_OUTPUT,
    ItemType.TOOL_SEARCH_CALL: ItemType.TOOL_SEARCH_OUTPUT,
}
"""Each call type and the output type Codex answers it with (by `call_id`)."""
CALL_TYPES: Final = frozenset(CALL_OUTPUTS)
OUTPUT_TYPES: Final = frozenset(CALL_OUTPUTS.values())
SHELL_CALL_TYPES: Final = frozenset({ItemType.LOCAL_SHELL_CALL})
"""Calls whose `action` is the command itself (no arguments to parse)."""

ENVELOPE_KINDS: Final = frozenset(
    {
        "session_meta",
        "response_item",
        "compacted",
        "turn_context",
        "event_msg",
        "token_usage_record",
        "world_state",
        "inter_agent_communication_metadata",
    }
)
"""The `{timestamp, [ordinal,] type, payload}` record kinds Codex writes (0.4x on; 0.171 adds
`token_usage_record`, one per model response, `world_state`, the context baseline, and
`inter_agent_communication_metadata`, whether a message from another agent starts a turn)."""
CONTROL_RECORD_KINDS: Final = frozenset(
    {"turn_context", "event_msg", "token_usage_record", "world_state", "inter_agent_communication_metadata"}
)
"""Records Codex reads for its resume state, never into the history it sends."""
