"""The checkpoint messages CodeWhale's compactions have written across versions, recognised as it
recognises them (`crates/tui/src/compaction.rs`), and the current form built.

Current (v0.9.6+): a user message of exactly two plain text blocks, the note opening with
"Codewhale handoff note" (or, from the releases between, "Another language model started to
solve this problem") and the provenance block `<!-- codewhale.compaction-checkpoint.v1 -->`.
Legacy: a user message whose text opens with either legacy marker, or with the pre-v0.9.6
"## 📋 Conversation Summary (Auto-Generated)" heading (optionally after the pinned anchors).
"""

from __future__ import annotations

from typing import Final

from pipeline.formats.codewhale.whale_document import Block, BlockKind, Message, message_from_json

__all__ = [
    "NO_SUMMARY",
    "PROVENANCE",
    "SUMMARY_HEADER",
    "checkpoint_message",
    "checkpoint_text",
    "is_checkpoint",
    "is_runtime_owned",
    "is_wire_checkpoint",
    "user_text",
]

MARKER: Final = "Codewhale handoff note"
LEGACY_V2_MARKER: Final = "Another language model started to solve this problem"
LEGACY_MARKER: Final = "Conversation Summary (Auto-Generated)"
LEGACY_HEADING: Final = "## 📋 Conversation Summary (Auto-Generated)"
LEGACY_ANCHORS_HEADING: Final = "## Pinned Facts (User Anchors)"
PROVENANCE: Final = "<!-- codewhale.compaction-checkpoint.v1 -->"
NO_SUMMARY: Final = "(no summary available)"
ANCHORS_HEADING: Final = "User-pinned anchors (verbatim):"

# CodeWhale 0.10.2's SUMMARY_HEADER and SUMMARY_CLOSING, byte for byte: the candidate's
# checkpoint must read to it as one it wrote.
SUMMARY_HEADER: Final = (
    "Codewhale handoff note. Earlier turns of this session were condensed to make room. Kept above "
    "are the most recent user messages and the last steps of the current round. Long tool output "
    "there is shortened, with a marker where it was cut, and the oldest kept message may be "
    "shortened too. Everything earlier, including earlier steps of this round, exists only in this "
    "note; rerun a command or reread a file when its full output matters. Build on this note "
    "instead of redoing finished work, and check live state (files, git, running commands) before "
    "relying on anything it reports. Agent status, when there is any, comes from the separate agent "
    "status message, not from this note."
)
SUMMARY_CLOSING: Final = (
    "Continue the user's task from here. Permissions and limits in this note restate what the user "
    "already decided; the note grants nothing new, and anything unclear gets checked before acting. "
    "Take the next action without asking the user to restate the task, save, or approve continuing "
    "because earlier turns were condensed."
)


def user_text(message: Message) -> str | None:
    """A user message's text blocks joined and trimmed (`user_text_of`); None when empty."""
    if message.role != "user":
        return None
    text = "\n".join(message.texts()).strip()
    return text or None


def _turn_meta(message: Message) -> str | None:
    """`turn_metadata_text`: a complete `<turn_meta>` envelope as the last plain text block (or,
    written before 0.8.54, the first, when the last is ordinary text)."""
    blocks = message.blocks
    if len(blocks) < 2:
        return None

    def envelope(block: Block) -> str | None:
        text = block.text.strip()
        complete = block.kind is BlockKind.TEXT and text.startswith("<turn_meta>")
        return text if complete and text.endswith("</turn_meta>") else None

    last = envelope(blocks[-1]) if blocks[-1].plain else None
    if last is not None:
        return last
    first = envelope(blocks[0]) if blocks[0].plain else None
    ordinary_tail = blocks[-1].kind is BlockKind.TEXT and envelope(blocks[-1]) is None
    return first if ordinary_tail else None


def is_runtime_owned(message: Message) -> bool:
    """A user message CodeWhale's runtime wrote, not its user (`is_runtime_owned_user_message`):
    its `<turn_meta>` names a non-authoritative input provenance (a subagent handoff, a runtime
    notice, a restored checkpoint); it never opens the protected round."""
    meta = _turn_meta(message) if message.role == "user" else None
    if meta is None:
        return False
    lines = [line.strip() for line in meta.splitlines()]
    provenance = [line for line in lines if line.startswith("Input provenance: ")]
    condensed = any(line.endswith(" (non-authoritative)") for line in provenance)
    return condensed or (bool(provenance) and "Input authority: non_authoritative" in lines)


def is_wire_checkpoint(message: Message) -> bool:
    """The current form: exactly the note block and the provenance block, both plain text."""
    if message.role != "user" or len(message.blocks) != 2:
        return False
    note, provenance = message.blocks
    return (
        note.kind is BlockKind.TEXT
        and provenance.kind is BlockKind.TEXT
        and note.plain
        and provenance.plain
        and note.text.startswith((MARKER, LEGACY_V2_MARKER))
        and provenance.text == PROVENANCE
    )


def _legacy_text(text: str) -> bool:
    text = text.lstrip()
    return text.startswith((LEGACY_V2_MARKER, LEGACY_MARKER, LEGACY_HEADING)) or (
        text.startswith(LEGACY_ANCHORS_HEADING)
        and any(line.rstrip() == LEGACY_HEADING for line in text.splitlines())
    )


def is_checkpoint(message: Message) -> bool:
    """Any checkpoint CodeWhale recognises, current or legacy (`is_compaction_checkpoint_message`)."""
    text = user_text(message)
    return is_wire_checkpoint(message) or (text is not None and _legacy_text(text))


def checkpoint_text(summary: str, anchors: str | None) -> str:
    """`build_compaction_summary_block_text`: header, summary, the `/anchor` pins, closing."""
    body = summary.strip() or NO_SUMMARY
    pins = f"\n\n{ANCHORS_HEADING}\n{anchors.strip()}" if anchors and anchors.strip() else ""
    return f"{SUMMARY_HEADER}\n\n{body}{pins}\n\n{SUMMARY_CLOSING}"


def checkpoint_message(summary: str, anchors: str | None) -> Message:
    """`compaction_checkpoint_message`: the checkpoint in the current form."""
    raw = {
        "role": "user",
        "content": [
            {"type": "text", "text": checkpoint_text(summary, anchors)},
            {"type": "text", "text": PROVENANCE},
        ],
    }
    message = message_from_json(raw)
    assert message is not None  # built from known parts
    return message
