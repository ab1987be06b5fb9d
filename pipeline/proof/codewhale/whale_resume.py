"""Resume a staged CodeWhale session in the real client and judge what it sent.

Each side is copied into a throwaway `CODEWHALE_HOME` (its `sessions/<id>.json`, `HOME` pointed
there too, so no user config or key is read) and resumed with `codewhale exec --resume <id>`
against the loopback Chat Completions server (`pipeline/proof/chat_capture.py`, reached through
`CODEWHALE_BASE_URL`). The first request each side sends is its rebuilt history between
CodeWhale's own system prompt and the new prompt. The verdict needs no reader: the candidate
holds when its history is one user message carrying the summary, then a verbatim suffix of the
original's history, every call answered, and none of the excluded texts.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from pipeline.proof.chat_capture import ChatCaptureServer
from pipeline.proof.codewhale.whale_client import CodewhaleError
from pipeline.proof.verdict import ExcludedText

__all__ = ["CodewhaleVerdict", "SentSide", "judge", "prove_codewhale_resume", "resumed_history"]

PROMPT: Final = "Reply with the single word: ok"
MODEL: Final = "capture-model"


class CodewhaleFailed(CodewhaleError):
    """CodeWhale exited with an error, timed out, or sent no chat request."""


def _session_id(path: Path) -> str:
    try:
        document = json.loads(path.read_bytes())
        return str(document["metadata"]["id"])
    except (ValueError, KeyError, TypeError) as exc:
        raise CodewhaleFailed(f"{path.name}: no session id in its metadata") from exc


def resumed_history(session: Path, executable: Path, timeout: float) -> list[dict[str, Any]]:
    """The messages CodeWhale sends for `session` resumed, without its system prompt and the new
    prompt (raises `CodewhaleFailed` when it sends nothing)."""
    session_id = _session_id(session)
    with (
        tempfile.TemporaryDirectory(prefix="codewhale-judge-") as scratch,
        ChatCaptureServer(model=MODEL) as capture,
    ):
        home = Path(scratch)
        (home / "sessions").mkdir()
        (home / "sessions" / f"{session_id}.json").write_bytes(session.read_bytes())
        workspace = home / "workspace"
        workspace.mkdir()
        environ = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": scratch,
            "CODEWHALE_HOME": scratch,
            "CODEWHALE_PROVIDER": "deepseek",
            "CODEWHALE_BASE_URL": capture.base_url + "/v1",
            "DEEPSEEK_API_KEY": "loopback-capture",  # the loopback server takes any key
            "NO_COLOR": "1",
        }
        command = [str(executable), "exec", "--resume", session_id, "--model", MODEL, PROMPT]
        try:
            done = subprocess.run(
                command, cwd=workspace, env=environ, capture_output=True, timeout=timeout, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise CodewhaleFailed(f"codewhale exec --resume failed: {type(exc).__name__}") from exc
        requests = capture.conversations
    if not requests:  # its output may quote the session: only the exit status is reported
        raise CodewhaleFailed(f"CodeWhale sent no chat request on resume (exit status {done.returncode})")
    messages = [m for m in requests[0] if isinstance(m, dict) and m.get("role") != "system"]
    return messages[:-1] if messages and messages[-1].get("content") == PROMPT else messages


@dataclass(frozen=True, slots=True)
class SentSide:
    """What one resume sent of the history: its messages and their JSON text's characters."""

    messages: int
    characters: int


@dataclass(frozen=True, slots=True)
class CodewhaleVerdict:
    """What each side sent (sizes only), and the content-free differences that refuse the candidate."""

    original: SentSide
    compacted: SentSide
    differences: tuple[str, ...]

    @property
    def ok(self) -> bool:
        """The candidate resumes as its checkpoint, then a verbatim suffix of the original."""
        return not self.differences


def _side(messages: Sequence[dict[str, Any]]) -> SentSide:
    return SentSide(len(messages), len(json.dumps(list(messages), ensure_ascii=False)))


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def judge(
    original: Sequence[dict[str, Any]],
    compacted: Sequence[dict[str, Any]],
    excluded: Sequence[ExcludedText],
    summaries: Sequence[str] | None,
) -> CodewhaleVerdict:
    """Summary first, then a verbatim suffix of the original; every call answered; nothing excluded."""
    differences: list[str] = []
    if not compacted or compacted[0].get("role") != "user":
        differences.append("the candidate's history does not start with a user checkpoint")
    elif summaries and not all(s.strip() in _text(compacted[0]) for s in summaries):
        differences.append("the candidate's first message does not carry the summary")
    kept = list(compacted[1:])
    if not kept or kept != list(original[len(original) - len(kept) :]):
        differences.append("what follows the checkpoint is not a verbatim suffix of the original's history")
    called = {c.get("id") for m in compacted for c in m.get("tool_calls") or () if isinstance(c, dict)}
    answered = {m.get("tool_call_id") for m in compacted if m.get("role") == "tool"}
    if called ^ answered:
        differences.append(f"{len(called ^ answered)} tool call(s) or result(s) sent not paired")
    sent = "\x00".join(_strings(list(compacted)))
    leaked = [e for e in excluded if e.text in sent]
    if leaked:
        differences.append(f"{len(leaked)} excluded text(s) sent (lines {sorted({e.line for e in leaked})})")
    return CodewhaleVerdict(_side(original), _side(compacted), tuple(differences))


def prove_codewhale_resume(
    original: Path,
    candidate: Path,
    *,
    executable: Path,
    timeout: float,
    excluded: Sequence[ExcludedText],
    summaries: Sequence[str] | None,
) -> CodewhaleVerdict:
    """Resume both in CodeWhale and judge the candidate against the original."""
    before = resumed_history(original, executable, timeout)
    after = resumed_history(candidate, executable, timeout)
    return judge(before, after, excluded, summaries)
