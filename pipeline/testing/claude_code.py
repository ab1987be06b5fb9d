"""Resume a transcript with the real Claude Code, offline, and read back the context it sent.

Real Claude Code is the judge of what a transcript means. These helpers find an installed build
(`COMPACTION_CLAUDE_CODE`, else the npm prefix `<repo>/.cache/claude-code` that
`scripts/install-claude-code` fills), stage a copy of a transcript as a session in a throwaway
`HOME`/`CLAUDE_CONFIG_DIR`, run `claude -p --resume <session-id> <probe>` against a
:class:`~pipeline.testing.fake_anthropic.FakeAnthropic` with every kind of outside traffic turned
off, and turn the captured request into the shape of the golden file
`claude_code_resume.jsonl`: one `(role, kind, text_prefix, id)` per content block, without
`<system-reminder>` texts and the probe.

The model is pinned with `ANTHROPIC_MODEL` (see :func:`recorded_model`): Claude Code otherwise
restores the session's own model unless it is retired *on the day of the run*, and the model in
use decides which thinking blocks are sent, so an unpinned resume changes meaning as the calendar
moves.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from pipeline.errors import CompactionError
from pipeline.testing.fake_anthropic import FakeAnthropic, RecordedRequest

__all__ = [
    "CLAUDE_CODE_ENV",
    "CLAUDE_CODE_VERSION",
    "GOLDEN_RECORDED_ON",
    "PROBE",
    "TEXT_PREFIX_CHARS",
    "ClaudeCodeError",
    "ClaudeCodeNotInstalled",
    "ContextBlock",
    "ResumeResult",
    "ResumeTimedOut",
    "StagedSession",
    "context_from_request",
    "find_claude_code",
    "installed_version",
    "project_slug",
    "recorded_model",
    "require_claude_code",
    "resume_transcript",
    "stage_session",
    "transcript_session_id",
]

CLAUDE_CODE_VERSION: Final = "2.1.332"  # the build the golden file was recorded with
CLAUDE_CODE_ENV: Final = "COMPACTION_CLAUDE_CODE"  # an executable, or an npm prefix holding one
PROBE: Final = "PROBE-PROMPT"  # the prompt the golden run sent after resuming
GOLDEN_RECORDED_ON: Final = "2026-11-30"  # model retirement is judged as of this day (SPEC §7)
DEFAULT_MODEL: Final = "claude-opus-5-5"  # what 2.1.332 runs when it declines to restore a model
TEXT_PREFIX_CHARS: Final = 120  # golden `text_prefix` length
RESUME_TIMEOUT_SECONDS: Final = 180.0  # one resume takes 10-20 s; a hung binary must not hang tests
_VERSION_TIMEOUT_SECONDS: Final = 30.0  # `--version` answers in well under a second
REMINDER_PREFIX: Final = "<system-reminder>"
REFUSAL_MARKER: Final = "No conversation found"
INSTALL_HINT: Final = "run scripts/install-claude-code"
_PACKAGE_EXE: Final = Path("node_modules", "@anthropic-ai", "claude-code", "bin", "claude.exe")
_REPO_ROOT: Final = Path(__file__).resolve().parents[2]
_SYNTHETIC_MODEL: Final = "<synthetic>"
# Families 2.1.332 remaps to its latest Opus (a legacy remap, even when set explicitly).
_REMAPPED: Final = frozenset({"claude-opus-4-1", "claude-opus-4-0"})
# First-party retirement days of build 2.1.332 (its `MA` table) by canonical family; None: no day.
_RETIRED_ON: Final[dict[str, str | None]] = {
    "claude-opus-4-1": None,
    "claude-opus-4-5": "2027-01-22",
    "claude-opus-4-0": "2026-06-15",
    "claude-sonnet-4-5": "2026-11-30",
    "claude-sonnet-4-0": "2026-06-15",
    "claude-3-opus": "2026-01-05",
    "claude-3-7-sonnet": "2026-02-19",
    "claude-3-5-sonnet": "2025-10-28",
    "claude-3-5-haiku": "2026-02-19",
}
# Switches that keep the binary off the network apart from the fake API, and its output plain.
_OFFLINE_ENV: Final = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_BUG_COMMAND": "1",
    "CLAUDE_CODE_ENABLE_TELEMETRY": "0",
    "NO_PROXY": "127.0.0.1,localhost",
    "NO_COLOR": "1",
    "TZ": "UTC",  # retirement is compared in local time on the day itself
}
_FAKE_API_KEY: Final = "sk-ant-api03-fake-key-for-loopback-tests"


class ClaudeCodeError(CompactionError):
    """Running Claude Code as a test oracle failed."""


class ResumeTimedOut(ClaudeCodeError):
    """A resume run exceeded its time limit and was killed."""

    def __init__(self, session_id: str, seconds: float) -> None:
        self.session_id = session_id
        self.seconds = seconds
        super().__init__(f"claude -p --resume {session_id} did not finish within {seconds:g} s")


class ClaudeCodeNotInstalled(ClaudeCodeError):
    """No Claude Code executable was found where the helpers look."""

    def __init__(self, looked_in: tuple[Path, ...]) -> None:
        self.looked_in = looked_in
        places = ", ".join(str(path) for path in looked_in) or f"${CLAUDE_CODE_ENV}"
        super().__init__(
            f"Claude Code {CLAUDE_CODE_VERSION} is not installed (looked in {places}); "
            f"{INSTALL_HINT} or set {CLAUDE_CODE_ENV}"
        )


@dataclass(frozen=True, slots=True)
class ContextBlock:
    """One content block of a request, as the golden file records it."""

    role: str
    kind: str
    text_prefix: str
    id: str | None

    @classmethod
    def from_golden(cls, entry: Mapping[str, Any]) -> ContextBlock:
        """Parse one element of a golden entry's `context`."""
        return cls(str(entry["role"]), str(entry["kind"]), str(entry["text_prefix"]), entry.get("id"))

    def as_dict(self) -> dict[str, str | None]:
        """The golden file's JSON shape."""
        return {"role": self.role, "kind": self.kind, "text_prefix": self.text_prefix, "id": self.id}


@dataclass(frozen=True, slots=True)
class StagedSession:
    """A transcript copied into a throwaway Claude Code home, ready to resume."""

    session_id: str
    home: Path
    config_dir: Path
    project_dir: Path
    transcript: Path


@dataclass(frozen=True, slots=True)
class ResumeResult:
    """What one `claude -p --resume` run did: exit code, output, and the context it sent.

    `resumed` means Claude Code called the API with the probe; `context` is that call's
    golden-shaped content and `model` its model; `message_requests` counts every Messages call.
    """

    session_id: str
    returncode: int
    stdout: str
    stderr: str
    resumed: bool
    model: str | None
    context: tuple[ContextBlock, ...]
    message_requests: int

    @property
    def refused(self) -> bool:
        """Claude Code said there was no conversation to resume."""
        return not self.resumed and REFUSAL_MARKER in self.stdout + self.stderr


# locating ---------------------------------------------------------------------------------
def _executable_in(candidate: Path) -> Path | None:
    if candidate.is_dir():
        candidate = candidate / _PACKAGE_EXE
    return candidate if candidate.is_file() and os.access(candidate, os.X_OK) else None


def _search_places(root: Path | None) -> tuple[Path, ...]:
    configured = os.environ.get(CLAUDE_CODE_ENV)
    places = [Path(configured).expanduser()] if configured else []
    return (*places, (root or _REPO_ROOT) / ".cache" / "claude-code")


def find_claude_code(root: Path | None = None) -> Path | None:
    """The Claude Code executable: `$COMPACTION_CLAUDE_CODE`, else `<root>/.cache/claude-code`."""
    return next((exe for place in _search_places(root) if (exe := _executable_in(place))), None)


def require_claude_code(root: Path | None = None) -> Path:
    """Like :func:`find_claude_code`, but raise :class:`ClaudeCodeNotInstalled` when absent."""
    executable = find_claude_code(root)
    if executable is None:
        raise ClaudeCodeNotInstalled(_search_places(root))
    return executable


def installed_version(executable: Path) -> str | None:
    """The version an executable reports (`2.1.332 (Claude Code)` gives `2.1.332`), or None."""
    env = {"PATH": os.environ.get("PATH", ""), **_OFFLINE_ENV}
    try:
        done = subprocess.run(
            [str(executable), "--version"],
            capture_output=True,
            text=True,
            env=env,
            timeout=_VERSION_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    words = done.stdout.split()
    return words[0] if done.returncode == 0 and words else None


# staging ----------------------------------------------------------------------------------
def project_slug(directory: Path) -> str:
    """Claude Code's project folder name for a working directory (`/a/b_c` gives `-a-b-c`)."""
    return re.sub(r"[^A-Za-z0-9]", "-", str(directory))


def _rows(path: Path) -> Iterator[dict[str, Any]]:
    with path.open("rb") as handle:
        for line in handle:
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row, dict):
                yield row


def _is_uuid(value: object) -> bool:
    try:
        return isinstance(value, str) and str(uuid.UUID(value)) == value.lower()
    except ValueError:
        return False


def transcript_session_id(path: Path) -> str | None:
    """The first `sessionId` in the file that is a UUID (what `--resume` accepts), if any."""
    return next((row["sessionId"] for row in _rows(path) if _is_uuid(row.get("sessionId"))), None)


def stage_session(transcript: Path, scratch: Path, *, session_id: str | None = None) -> StagedSession:
    """Copy `transcript` to `<scratch>/home/.claude/projects/<slug>/<session-id>.jsonl`.

    The session id is `session_id`, else the file's own, else a fresh UUID. The source is only
    read: Claude Code appends to the session file it resumes.
    """
    sid = session_id or transcript_session_id(transcript) or str(uuid.uuid4())
    home = scratch / "home"
    config_dir = home / ".claude"
    project_dir = scratch / "project"
    project_dir.mkdir(parents=True, exist_ok=True)
    sessions = config_dir / "projects" / project_slug(project_dir)
    sessions.mkdir(parents=True, exist_ok=True)
    staged = sessions / f"{sid}.jsonl"
    shutil.copyfile(transcript, staged)
    return StagedSession(sid, home, config_dir, project_dir, staged)


def _environment(staged: StagedSession, base_url: str, model: str | None) -> dict[str, str]:
    """A clean environment: nothing inherited but PATH, so no user setting leaks in."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(staged.home),
        "CLAUDE_CONFIG_DIR": str(staged.config_dir),
        "TMPDIR": str(staged.home),
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": _FAKE_API_KEY,
        **_OFFLINE_ENV,
    }
    if model:
        env["ANTHROPIC_MODEL"] = model
    return env


# the model --------------------------------------------------------------------------------
def _family(model: str) -> str | None:
    """The retirement-table family of a model id (`claude-sonnet-4-20250514` is `claude-sonnet-4-0`)."""
    name = re.sub(r"(claude-(?:[a-z]+-)?\d{1,2})\.(?=\d)", r"\1-", model.lower())
    for family in _RETIRED_ON:
        if family in name:
            return family
        # `claude-opus-4` and dated `claude-opus-4-2025...` ids are 4.0; `claude-opus-4-1` is not.
        bare = family.removesuffix("-0")
        if bare != family and re.search(re.escape(bare) + r"(?!-\d(?!\d))", name):
            return family
    return None


def _assistant_models(transcript: Path) -> list[tuple[dict[str, Any], str]]:
    """(message, model) of every assistant row Claude Code could restore a model from, in file order."""
    found = []
    for row in _rows(transcript):
        message = row.get("message")
        if row.get("type") != "assistant" or row.get("isMeta") or not isinstance(message, dict):
            continue
        replaced = row.get("inPlaceOfModel")
        model = replaced if isinstance(replaced, str) else message.get("model")
        if isinstance(model, str) and model != _SYNTHETIC_MODEL:
            found.append((message, model))
    return found


def _holds(message: Mapping[str, Any], block: ContextBlock) -> bool:
    """Whether a stored assistant message carries this context block."""
    content = message.get("content")
    items = [{"type": "text", "text": content}] if isinstance(content, str) else content or ()
    for item in items:
        if not isinstance(item, dict) or item.get("type") != block.kind:
            continue
        if block.kind == "tool_use" and item.get("id") == block.id:
            return True
        shown = str(item.get(block.kind, ""))[:TEXT_PREFIX_CHARS]
        if block.kind in ("text", "thinking") and shown == block.text_prefix:
            return True
    return False


def _restored_from(transcript: Path, context: Sequence[ContextBlock]) -> str | None:
    """The model of the resumed chain's last assistant row.

    With a context, that row is the last one holding the context's last stored assistant block;
    without one (or no match), the file's last assistant row, which is the same row in every
    corpus file except a synthetic fixture whose last assistant rows are on a side branch.
    """
    candidates = _assistant_models(transcript)
    for block in reversed(context):
        if block.role == "assistant":
            held = [model for message, model in candidates if _holds(message, block)]
            if held:
                return held[-1]
    return candidates[-1][1] if candidates else None


def recorded_model(
    transcript: Path, context: Sequence[ContextBlock] = (), on: str = GOLDEN_RECORDED_ON
) -> str:
    """The model Claude Code 2.1.332 ran with when it resumed `transcript` on day `on` (ISO date).

    It restores the model of the chain's last assistant row (not meta, not synthetic; `context`,
    the golden context, locates that row) unless the model is not a Claude model, is retired on
    that day, or is remapped (Opus 4 and 4.1); then it runs its default. Passing the result as
    `model` to :func:`resume_transcript` reproduces the golden run on any later day.
    """
    restored = _restored_from(transcript, context)
    if restored is None or "claude" not in restored.lower():
        return DEFAULT_MODEL
    family = _family(restored)
    retired_on = _RETIRED_ON.get(family) if family else None
    if family in _REMAPPED or (retired_on is not None and retired_on <= on):
        return DEFAULT_MODEL
    return restored


# reading the request ----------------------------------------------------------------------
def _block(role: str, block: Mapping[str, Any], probe: str) -> ContextBlock | None:
    kind = str(block.get("type"))
    if kind == "text":
        text = str(block.get("text", ""))
        if text.startswith(REMINDER_PREFIX) or text == probe:
            return None
        return ContextBlock(role, "text", text[:TEXT_PREFIX_CHARS], None)
    if kind in ("thinking", "redacted_thinking"):
        return ContextBlock(role, "thinking", str(block.get("thinking") or "")[:TEXT_PREFIX_CHARS], None)
    if kind == "tool_use":
        return ContextBlock(role, kind, json.dumps(block.get("input"))[:TEXT_PREFIX_CHARS], block.get("id"))
    if kind == "tool_result":
        # The golden harness took a non-standard `text` key when present, else the JSON of `content`.
        shown = block["text"] if "text" in block else json.dumps(block.get("content"))
        return ContextBlock(role, kind, str(shown)[:TEXT_PREFIX_CHARS], block.get("tool_use_id"))
    return ContextBlock(role, kind, "", None)


def context_from_request(body: Mapping[str, Any], probe: str = PROBE) -> tuple[ContextBlock, ...]:
    """The golden-shaped context of a Messages API request body, minus what Claude Code adds.

    Dropped: `<system-reminder>` texts, the probe, and `system`-role messages (the environment
    block Claude Code appends after the probe for newer models; no transcript row becomes one).
    """
    blocks: list[ContextBlock] = []
    for message in body.get("messages") or ():
        role, content = str(message.get("role")), message.get("content")
        if role == "system":
            continue
        items: Iterable[Any] = (
            [{"type": "text", "text": content}] if isinstance(content, str) else content or ()
        )
        blocks += [b for item in items if isinstance(item, dict) and (b := _block(role, item, probe))]
    return tuple(blocks)


def _carries_probe(request: RecordedRequest, probe: str) -> bool:
    body = request.body
    return request.is_message and isinstance(body, dict) and probe in json.dumps(body.get("messages"))


def _probe_request(requests: Iterable[RecordedRequest], probe: str) -> RecordedRequest | None:
    """The last message request that carries the probe (other calls, if any, are not the turn)."""
    return next((request for request in reversed(tuple(requests)) if _carries_probe(request, probe)), None)


# running ----------------------------------------------------------------------------------
def _run(
    command: list[str], staged: StagedSession, env: dict[str, str], timeout: float
) -> tuple[int, str, str]:
    """Run in a new process group so a timeout ends the binary and anything it started."""
    with subprocess.Popen(
        command,
        cwd=staged.project_dir,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        start_new_session=True,
    ) as process:
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise ResumeTimedOut(staged.session_id, timeout) from None
    return process.returncode, stdout, stderr


def resume_transcript(
    transcript: Path,
    *,
    executable: Path,
    model: str | None = None,
    probe: str = PROBE,
    session_id: str | None = None,
    timeout: float = RESUME_TIMEOUT_SECONDS,
) -> ResumeResult:
    """Resume a copy of `transcript` with Claude Code against a fresh fake API; return what it sent.

    `model` pins `ANTHROPIC_MODEL` (use :func:`recorded_model` for golden parity); None lets
    Claude Code restore the session's model as of today. Raises :class:`ResumeTimedOut` when
    the run exceeds `timeout` seconds.
    """
    scratch = tempfile.TemporaryDirectory(prefix="cc-resume-", ignore_cleanup_errors=True)
    with scratch, FakeAnthropic() as api:
        staged = stage_session(transcript, Path(scratch.name), session_id=session_id)
        command = [str(executable), "-p", "--resume", staged.session_id, probe]
        returncode, stdout, stderr = _run(command, staged, _environment(staged, api.base_url, model), timeout)
        request = _probe_request(api.requests, probe)
    body: Mapping[str, Any] = request.body if request is not None else {}
    return ResumeResult(
        session_id=staged.session_id,
        returncode=returncode,
        stdout=stdout,
        stderr=stderr,
        resumed=request is not None,
        model=body.get("model"),
        context=context_from_request(body, probe),
        message_requests=sum(1 for r in api.requests if r.is_message),
    )
