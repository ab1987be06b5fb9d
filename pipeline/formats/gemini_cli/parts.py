"""Gemini CLI's view of message content: `Part` lists, their text, and which user messages it skips.

Ports `partToString` (verbose), `ensurePartArray` and `isIgnoredUserContent` of Gemini CLI 0.61:
a user message whose text starts with `/`, `?`, `<session_context>` or `<hook_context>` (or is
blank) is never sent back on resume.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final

__all__ = ["IGNORED_PREFIXES", "as_parts", "content_text", "is_ignored_user_text", "is_resumable_message"]

IGNORED_PREFIXES: Final = ("/", "?", "<session_context>", "<hook_context>")
_MARKERS: Final = (
    ("videoMetadata", "[Video Metadata]"),
    ("codeExecutionResult", "[Code Execution Result]"),
    ("executableCode", "[Executable Code]"),
    ("fileData", "[File Data]"),
)


def _inline(data: Mapping[str, Any]) -> str:
    mime = data.get("mimeType") or "unknown"
    size = math.ceil(len(str(data.get("data") or "")) * 3 / 4) / 1024
    kind = next(
        (k for p, k in (("audio/", "Audio"), ("video/", "Video"), ("image/", "Image")) if mime.startswith(p)),
        "Media",
    )
    return f"[{kind}: {mime}, {size:.1f} KB]"


def _js_string(value: object) -> str:
    """How a template literal renders a JSON scalar (`true`, not Python's `True`)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def _marker(part: Mapping[str, Any]) -> str | None:
    """The placeholder Gemini CLI renders for a part that is not text, in its order of tests."""
    if "videoMetadata" in part:
        return "[Video Metadata]"
    if "thought" in part:
        return f"[Thought: {_js_string(part['thought'])}]"
    for key, marker in _MARKERS[1:]:
        if key in part:
            return marker
    for key, label in (("functionCall", "Function Call"), ("functionResponse", "Function Response")):
        if key in part:
            call = part[key] if isinstance(part[key], Mapping) else {}
            return f"[{label}: {call.get('name', 'undefined')}]"
    return _inline(part["inlineData"]) if isinstance(part.get("inlineData"), Mapping) else None


def _part_text(part: Any) -> str:
    if isinstance(part, str):
        return part
    if isinstance(part, list):
        return "".join(_part_text(p) for p in part)
    if not isinstance(part, Mapping) or not part:
        return ""
    marker = _marker(part)
    text = part.get("text")
    return marker if marker is not None else text if isinstance(text, str) else ""


def content_text(content: Any) -> str:
    """A message's content as Gemini CLI renders it to decide what it is (`partToString`)."""
    return _part_text(content)


def is_ignored_user_text(text: str) -> bool:
    """Whether Gemini CLI leaves a user message with this text out of a resumed history."""
    trimmed = text.strip()
    return not trimmed or trimmed.startswith(IGNORED_PREFIXES)


def as_parts(content: Any) -> list[Any]:
    """`ensurePartArray`: a list with strings made text parts, a string one text part, anything
    else a list of itself."""
    if isinstance(content, list):
        return [{"text": p} if isinstance(p, str) else p for p in content]
    if isinstance(content, str):
        return [{"text": content}]
    return [content]


def is_resumable_message(message: Mapping[str, Any]) -> bool:
    """`isResumableMessageRecord`: a prompt Gemini CLI does not skip, or a reply with text, calls
    or thoughts (what makes a session worth listing to resume)."""
    text = content_text(message.get("content")) if message.get("content") else ""
    if message.get("type") == "user":
        return not is_ignored_user_text(text)
    if message.get("type") == "gemini":
        return bool(text.strip() or message.get("toolCalls") or message.get("thoughts"))
    return False
