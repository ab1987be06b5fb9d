"""The user's own Claude Code as the summarizer: `claude -p`, the prompt on standard input.

One turn, no tools, no MCP servers, no slash commands, no settings files, no session written to
disk, JSON output. It runs in a fresh empty working directory with a clean environment: `PATH`,
the home that holds the user's login (or a throwaway one), the switches that turn off
telemetry and other outside traffic, and only the endpoint and key the options name. Nothing
is ever written into a user's project. The executable is found as `verify-resume` finds it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import anyio
import anyio.abc
import msgspec

from pipeline.installed import OFFLINE_ENV
from pipeline.summarize.model.providers.base import (
    InputTooLong,
    ModelReply,
    ModelRequest,
    ProviderAborted,
    ProviderName,
    ProviderProtocolError,
    ProviderStatusError,
    Role,
    Secret,
    StopKind,
    Usage,
)

__all__ = ["ClaudeCodeOptions", "ClaudeCodeProvider", "command_line", "environment"]

_STOPS: Final = {"max_tokens": StopKind.TRUNCATED, "refusal": StopKind.REFUSED}
_TOO_LONG: Final = ("prompt is too long", "context window", "context length")
_OUTPUT_LIMIT: Final = "output token maximum"


@dataclass(frozen=True, slots=True)
class ClaudeCodeOptions:
    """Which Claude Code to run and how.

    `home` None runs with the user's own home (and `CLAUDE_CONFIG_DIR`), where a subscription
    login lives; a path gives a throwaway home. `base_url` and `api_key` are passed only when set.
    """

    executable: Path
    model: str
    home: Path | None
    base_url: str | None
    api_key: Secret | None


class _Usage(msgspec.Struct):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0


class _Result(msgspec.Struct):
    type: str = ""
    subtype: str = ""
    is_error: bool = False
    result: str = ""
    stop_reason: str | None = None
    api_error_status: int | None = None
    usage: _Usage | None = None


def command_line(options: ClaudeCodeOptions, system: str) -> list[str]:
    """The arguments of one summary run."""
    args = [str(options.executable), "-p", "--output-format", "json", "--max-turns", "1", "--tools", ""]
    args += ["--no-session-persistence", "--strict-mcp-config", "--disable-slash-commands"]
    args += ["--setting-sources", "", "--system-prompt", system]
    return args + (["--model", options.model] if options.model else [])


def environment(options: ClaudeCodeOptions, workdir: Path, max_output_tokens: int) -> dict[str, str]:
    """A clean environment: nothing of the caller's but `PATH` and, for the user's login, `HOME`."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "TMPDIR": str(workdir), **OFFLINE_ENV}
    if options.home is None:
        env["HOME"] = os.environ.get("HOME", str(workdir))
        if "CLAUDE_CONFIG_DIR" in os.environ:
            env["CLAUDE_CONFIG_DIR"] = os.environ["CLAUDE_CONFIG_DIR"]
    else:
        env["HOME"] = str(options.home)
        env["CLAUDE_CONFIG_DIR"] = str(options.home / ".claude")
    if options.base_url:
        env["ANTHROPIC_BASE_URL"] = options.base_url
    if options.api_key is not None:
        env["ANTHROPIC_API_KEY"] = options.api_key.value
    env["CLAUDE_CODE_MAX_OUTPUT_TOKENS"] = str(max_output_tokens)
    return env


class ClaudeCodeProvider:
    """Runs one `claude -p` process per call."""

    def __init__(self, options: ClaudeCodeOptions) -> None:
        self._options = options

    @property
    def name(self) -> ProviderName:
        """`claude-code`."""
        return ProviderName.CLAUDE_CODE

    @property
    def model(self) -> str:
        """The model asked for (empty: Claude Code's default)."""
        return self._options.model

    async def complete(self, request: ModelRequest) -> ModelReply:
        """One run; a cancelled call kills the process group."""
        with tempfile.TemporaryDirectory(prefix="compaction-summary-", ignore_cleanup_errors=True) as scratch:
            workdir = Path(scratch)
            args = command_line(self._options, request.system)
            env = environment(self._options, workdir, request.max_output_tokens)
            returncode, stdout = await _run(args, env, workdir, _prompt(request).encode())
        if returncode < 0:
            raise ProviderAborted(-returncode)
        return _reply(stdout, returncode)


def _prompt(request: ModelRequest) -> str:
    """The turns as one prompt: a single user turn as it is, later turns labelled by role."""
    if len(request.turns) == 1:
        return request.turns[0].text
    parts = []
    for turn in request.turns:
        tag = "previous-answer" if turn.role is Role.ASSISTANT else "request"
        parts.append(f"<{tag}>\n{turn.text}\n</{tag}>")
    return "\n\n".join(parts)


async def _run(args: list[str], env: dict[str, str], cwd: Path, stdin: bytes) -> tuple[int, bytes]:
    process = await anyio.open_process(
        args,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=cwd,
        env=env,
        start_new_session=True,
    )
    try:
        chunks: list[bytes] = []
        async with anyio.create_task_group() as group:
            group.start_soon(_feed, process, stdin)
            assert process.stdout is not None
            async for chunk in process.stdout:
                chunks.append(chunk)
        return await process.wait(), b"".join(chunks)
    finally:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            with anyio.CancelScope(shield=True):
                await process.wait()


async def _feed(process: anyio.abc.Process, data: bytes) -> None:
    assert process.stdin is not None
    with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdin.send(data)
    await process.stdin.aclose()


def _reply(stdout: bytes, returncode: int) -> ModelReply:
    try:
        result = msgspec.json.decode(stdout.strip() or b"null", type=_Result)
    except msgspec.DecodeError as exc:
        raise ProviderProtocolError("claude-code-output", returncode) from exc
    usage = _usage(result.usage)
    if result.is_error:
        lowered = result.result.lower()
        if result.stop_reason == "refusal":
            return ModelReply("", StopKind.REFUSED, usage)
        if _OUTPUT_LIMIT in lowered:  # Claude Code ends a cut answer as an error, not as max_tokens
            return ModelReply("", StopKind.TRUNCATED, usage)
        if any(hint in lowered for hint in _TOO_LONG):
            raise InputTooLong(result.api_error_status, "claude-code-prompt-too-long")
        if result.api_error_status is not None:
            raise ProviderStatusError(result.api_error_status)
        raise ProviderProtocolError(f"claude-code-{result.subtype or 'error'}", returncode)
    return ModelReply(result.result, _STOPS.get(result.stop_reason or "", StopKind.COMPLETE), usage)


def _usage(usage: _Usage | None) -> Usage | None:
    if usage is None:
        return None
    read, written = usage.cache_read_input_tokens, usage.cache_creation_input_tokens
    return Usage(usage.input_tokens + read + written, usage.output_tokens, read, written)
