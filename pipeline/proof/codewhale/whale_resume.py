"""Resume a staged CodeWhale session in the real client and judge what it sent.

Each side is copied into a throwaway home (`whale_home.py`: `CODEWHALE_HOME` and `HOME` there, so
no user config or key is read, auto-compaction off) as `sessions/<id>.json` and resumed with
`codewhale exec --resume <id> --model capture-model PROMPT` against the loopback Chat
Completions server (`pipeline/proof/chat_capture.py`). The request that carries the prompt holds
the rebuilt history between CodeWhale's system prompt and the prompt. The verdict needs no
reader: the candidate holds when its history is one user message carrying the summary, then a
verbatim suffix of the original's history, every call answered, and none of the excluded texts.
Both sides are compared with CodeWhale's per-request back-references (a repeated `<turn_meta>`,
a repeated tool result) resolved to the text they stand for (`resolved`).
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from pipeline.proof.chat_capture import ChatCaptureServer
from pipeline.proof.codewhale.whale_client import CodewhaleError
from pipeline.proof.codewhale.whale_home import MODEL, WhaleHome, codewhale_environment, staged
from pipeline.proof.process_group import run_in_process_group
from pipeline.proof.verdict import ExcludedText

__all__ = [
    "CodewhaleFailed",
    "CodewhaleVerdict",
    "SentSide",
    "judge",
    "prove_codewhale_resume",
    "resolved",
    "resume_command",
    "resumed_history",
    "sent_history",
]

PROMPT: Final = "Reply with the single word: ok"


class CodewhaleFailed(CodewhaleError):
    """CodeWhale exited with an error, timed out, or sent no chat request."""


def _session_id(path: Path) -> str:
    try:
        document = json.loads(path.read_bytes())
        return str(document["metadata"]["id"])
    except (ValueError, KeyError, TypeError) as exc:
        raise CodewhaleFailed(f"{path.name}: no session id in its metadata") from exc


def resume_command(executable: Path, session_id: str, prompt: str) -> list[str]:
    """`codewhale exec --resume <id> --model <the loopback model> -- PROMPT`."""
    return [str(executable), "exec", "--resume", session_id, "--model", MODEL, "--", prompt]


def _text(content: object) -> str:
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def sent_history(conversations: Sequence[Sequence[Any]], prompt: str) -> list[dict[str, Any]] | None:
    """The history of the first request whose last message is `prompt` (then CodeWhale's
    `<turn_meta>` block): its messages without the system ones and that last message; None when
    no request carries it."""
    for messages in conversations:
        wire = [m for m in messages if isinstance(m, dict) and m.get("role") != "system"]
        if wire and wire[-1].get("role") == "user" and _text(wire[-1].get("content")).startswith(prompt):
            return wire[:-1]
    return None


def resumed_history(session: Path, executable: Path, timeout: float) -> list[dict[str, Any]]:
    """The messages CodeWhale sends for `session` resumed, without its system prompt and the new
    prompt (raises `CodewhaleFailed` when it sends nothing)."""
    session_id = _session_id(session)
    with (
        tempfile.TemporaryDirectory(prefix="codewhale-judge-") as scratch,
        ChatCaptureServer(model=MODEL) as capture,
    ):
        home = WhaleHome(Path(scratch) / "home", Path(scratch) / "workspace")
        home.stage()
        (home.sessions / f"{session_id}.json").write_bytes(staged(session.read_bytes(), home.workspace))
        environ = codewhale_environment(home, capture.base_url + "/v1")
        try:
            code, _, _ = run_in_process_group(
                resume_command(executable, session_id, PROMPT),
                cwd=home.workspace,
                env=environ,
                timeout=timeout,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise CodewhaleFailed(f"codewhale exec --resume failed: {type(exc).__name__}") from exc
        history = sent_history(capture.conversations, PROMPT)
    if history is None:  # its output may quote the session: only the exit status is reported
        raise CodewhaleFailed(f"CodeWhale sent no chat request on resume (exit status {code})")
    return history


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


_TURN_META: Final = re.compile(r"<turn_meta>\n.*?\n</turn_meta>", re.DOTALL)
_TURN_META_UNCHANGED: Final = "<turn_meta_unchanged />"
_RESULT_REF: Final = re.compile(
    r'<TOOL_RESULT_REF sha="([0-9a-f]{64})" original_message="[^"]*" chars="[0-9]+">\n'
    r"source: full content appears in [^\n]* earlier in this request\n</TOOL_RESULT_REF>"
)


def resolved(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The history with CodeWhale's per-request back-references resolved: a `<turn_meta>` block
    equal to the last one sent goes as `<turn_meta_unchanged />`, a repeated medium tool result
    as a `TOOL_RESULT_REF` to its first copy. A compaction that summarizes the first copy makes
    the candidate send the text itself where the original sent the reference; the model reads
    the same text either way, so each reference is replaced by the text it stands for."""
    last_meta: str | None = None
    results: dict[str, str] = {}
    out: list[dict[str, Any]] = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str) and message.get("role") == "tool":
            found = _RESULT_REF.fullmatch(content)
            if found and found.group(1) in results:
                content = results[found.group(1)]
            results.setdefault(hashlib.sha256(content.encode()).hexdigest(), content)
        elif isinstance(content, str):
            if last_meta is not None:
                content = content.replace(_TURN_META_UNCHANGED, last_meta)
            metas = _TURN_META.findall(content)
            last_meta = metas[-1] if metas else last_meta
        out.append({**message, "content": content} if content is not message.get("content") else message)
    return out


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
    elif summaries and not all(s.strip() in _text(compacted[0].get("content")) for s in summaries):
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
    before = resolved(resumed_history(original, executable, timeout))
    after = resolved(resumed_history(candidate, executable, timeout))
    return judge(before, after, excluded, summaries)
