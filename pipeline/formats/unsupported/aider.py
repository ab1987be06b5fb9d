"""Aider: the markdown chat history and the prompt history it keeps in a repository's root.

`.aider.chat.history.md` opens every chat with `# aider chat started at <date> <time>`;
`.aider.input.history` is prompt_toolkit's history file (`# <timestamp>` then `+line`s), a
generic shape, so only its name makes it Aider's. Both are found by name: neither ends in
`.json` or `.jsonl`.
"""

from __future__ import annotations

import re
from pathlib import PurePath
from typing import Final

from pipeline.formats.identity import Signature
from pipeline.vocabulary import SourceFormat

__all__ = ["AIDER"]

_CHAT_HISTORY: Final = ".aider.chat.history.md"
_INPUT_HISTORY: Final = ".aider.input.history"
_CHAT_OPENING: Final = re.compile(r"# aider chat started at \d{4}-\d\d-\d\d")
_INPUT_STAMP: Final = re.compile(r"# \d{4}-\d\d-\d\d \d\d:\d\d:\d\d")


def is_aider_text(first_line: str, path: PurePath | None) -> bool:
    """Whether a text file is Aider's chat history (by its opening) or its prompt history."""
    if _CHAT_OPENING.match(first_line):
        return True
    return path is not None and path.name == _INPUT_HISTORY and bool(_INPUT_STAMP.match(first_line))


AIDER: Final = Signature(
    SourceFormat.AIDER, text=is_aider_text, file_names=frozenset({_CHAT_HISTORY, _INPUT_HISTORY})
)
