"""Drive the real Gemini CLI interactively, in a pseudo-terminal, to write what `-p` cannot.

`/rewind` is an interactive dialog: the session it writes (a `$rewindTo` record, then the
conversation going on from the rewound prompt) is recorded by typing into Gemini CLI's terminal
UI and waiting for what it draws. Each `Key` is bytes to type and, optionally, a text to wait for
on the screen (escape sequences stripped) before the next.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import re
import select
import signal
import struct
import subprocess
import termios
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pipeline.proof.gemini_cli.api_capture import GeminiApiServer, text_part
from pipeline.proof.gemini_cli.gemini_run import GeminiHome, gemini_environment

__all__ = ["CHECKPOINT_KEYS", "CHECKPOINT_TAG", "REWIND_KEYS", "REWIND_REPLIES", "Key", "run_interactive"]

_ANSI: Final = re.compile(rb"\x1b\[[0-9;?]*[a-zA-Z]|\x1b\][^\x07]*\x07")
_ROWS, _COLUMNS = 50, 120  # the dialogs need room to draw
READY: Final = "Type your message"
ENTER: Final = b"\r"
UP: Final = b"\x1b[A"
WAIT_SECONDS: Final = 30.0


@dataclass(frozen=True, slots=True)
class Key:
    """Bytes to type, then a text to wait for (None: a short pause)."""

    keys: bytes
    until: str | None = None


def _prompt(text: str, reply: str) -> tuple[Key, ...]:
    return (Key(text.encode()), Key(ENTER, reply), Key(b"", READY))


REWIND_REPLIES: Final = ("The first answer.", "The second answer.", "The answer after the rewind.")
REWIND_KEYS: Final = (
    Key(b"", READY),
    *_prompt("first question", REWIND_REPLIES[0]),
    *_prompt("second question", REWIND_REPLIES[1]),
    Key(b"/rewind"),
    Key(ENTER, "Cancel rewind"),
    Key(UP),
    Key(ENTER, "Confirm Rewind"),
    Key(ENTER, "Rewinding"),  # "Rewind conversation": the rewound prompt comes back into the input
    Key(b""),
    Key(b""),
    Key(ENTER, REWIND_REPLIES[2]),  # sent again as it is
    Key(b"", READY),
)


CHECKPOINT_TAG: Final = "fixture-tag"
CHECKPOINT_KEYS: Final = (
    Key(b"", READY),
    *_prompt("remember the number 42", REWIND_REPLIES[0]),
    Key(f"/chat save {CHECKPOINT_TAG}".encode()),
    Key(ENTER, "/chat save"),
    Key(ENTER, "saved"),
)


class _Screen:
    def __init__(self, fd: int) -> None:
        self.fd, self.seen = fd, b""

    def wait_for(self, text: str | None) -> None:
        end = time.monotonic() + (WAIT_SECONDS if text else 1.0)
        while time.monotonic() < end:
            if text and text.encode() in _ANSI.sub(b"", self.seen):
                self.seen = b""
                return
            ready, _, _ = select.select([self.fd], [], [], 0.1)
            if ready:
                with contextlib.suppress(OSError):
                    self.seen += os.read(self.fd, 1 << 16)
        if text:
            raise TimeoutError(f"Gemini CLI never drew {text!r}")


def run_interactive(script: Path, staged: GeminiHome, keys: Sequence[Key], replies: Sequence[str]) -> None:
    """Type `keys` into an interactive Gemini CLI answered by `replies` (one text each), then end it."""
    with GeminiApiServer(replies=tuple((text_part(r),) for r in replies)) as api:
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", _ROWS, _COLUMNS, 0, 0))
        env = {**gemini_environment(staged, api.base_url), "TERM": "xterm-256color"}
        command = ["node", str(script.absolute())]
        process = subprocess.Popen(
            command,
            cwd=staged.work_dir,
            env=env,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
        )
        os.close(slave)
        screen = _Screen(master)
        try:
            for key in keys:
                if key.keys:
                    os.write(master, key.keys)
                screen.wait_for(key.until)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            os.close(master)
