"""Resume a staged copy of a pi session with the real pi and capture the context it sends.

`pi -p --session <copy> --model fake/fake-model <probe>` rebuilds the session's context, appends
the probe as a new user message and sends everything in one `POST /v1/chat/completions`. The
messages of the request that ends with the probe are split in three: pi's system prompt (first),
the history it rebuilt from the file (`context`, what the verdict and the goldens compare), and
the probe (last).
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from pipeline.proof.chat_capture import ChatCaptureServer
from pipeline.proof.pi.pi_process import FAKE_MODEL, PiInstallation, run_pi, write_agent_dir
from pipeline.proof.pi.pi_staging import stage_session

__all__ = ["PROBE", "PiResumeResult", "resume_pi"]

PROBE: Final = "PROBE-PROMPT"  # the prompt sent after resuming


@dataclass(frozen=True, slots=True)
class PiResumeResult:
    """What one resume did: exit code, output, and the context pi sent.

    `resumed` means pi called the model with the probe; `system` is its system message, `context`
    the history it rebuilt from the file, `chat_requests` how many chat calls it made in all.
    """

    returncode: int
    stdout: str
    stderr: str
    resumed: bool
    system: Any
    context: tuple[Any, ...]
    chat_requests: int


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else ()
    return "".join(part.get("text", "") for part in parts if isinstance(part, dict))


def _probe_messages(conversations: Sequence[tuple[Any, ...]], probe: str) -> tuple[Any, ...] | None:
    """The last request whose final message is the user's probe."""
    for messages in reversed(conversations):
        last = messages[-1] if messages else None
        if isinstance(last, dict) and last.get("role") == "user" and _text(last.get("content")) == probe:
            return tuple(messages)
    return None


def resume_pi(
    session: Path, *, pi: PiInstallation, timeout: float, probe: str = PROBE, keep: Path | None = None
) -> PiResumeResult:
    """Resume a copy of `session` with pi against a fresh capture server (`keep` receives the copy
    as pi left it). Raises :class:`~pipeline.proof.pi.pi_process.PiTimedOut` after `timeout` s."""
    scratch = tempfile.TemporaryDirectory(prefix="pi-resume-", ignore_cleanup_errors=True)
    with scratch, ChatCaptureServer() as api:
        staged = stage_session(session, Path(scratch.name))
        write_agent_dir(staged.agent_dir, f"{api.base_url}/v1")
        # pi compacts before a request it judges too large: a resume must send the context as rebuilt.
        (staged.agent_dir / "settings.json").write_text('{"compaction": {"enabled": false}}')
        arguments = ["-p", "--model", FAKE_MODEL, "--session", str(staged.session), probe]
        run = run_pi(pi, arguments, agent_dir=staged.agent_dir, work_dir=staged.work_dir, timeout=timeout)
        if keep is not None:
            keep.write_bytes(staged.session.read_bytes())
        conversations = api.conversations
    sent = _probe_messages(conversations, probe)
    messages = sent or ()
    leading = 1 if messages and isinstance(messages[0], dict) and messages[0].get("role") == "system" else 0
    return PiResumeResult(
        returncode=run.returncode,
        stdout=run.stdout,
        stderr=run.stderr,
        resumed=sent is not None,
        system=messages[0] if leading else None,
        context=tuple(messages[leading:-1]),
        chat_requests=len(conversations),
    )
