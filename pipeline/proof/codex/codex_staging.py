"""Stage a Codex rollout as a thread in a throwaway `CODEX_HOME` that points at a loopback API.

Codex finds a thread by id under `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl` and
appends to the file it resumes, so the rollout is copied (never linked). Codex refuses to switch
a thread's model provider on resume, so the copy's first `session_meta` names the staged provider;
every other line is copied byte for byte. `config.toml` defines that provider (the loopback
`base_url`, the Responses wire API, no websockets), lets Codex never compact on its own, and turns
off what would reach the network (update checks, analytics, the plugin and app catalogues). The
user's own home is never read.

The rollout is read here only as far as staging needs (the thread id, the first `session_meta`);
the format itself is read by the Codex format module.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import orjson

from pipeline.installed import CodexThreadNotFound

__all__ = ["PROVIDER", "StagedThread", "rollout_thread_id", "stage_thread"]

PROVIDER: Final = "compaction-loopback"  # the staged provider's id and name
_ID: Final = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_ROLLOUT_NAME: Final = re.compile(rf"rollout-(\d{{4}})-(\d{{2}})-(\d{{2}})T[\d-]+-({_ID})\.jsonl$")
_BARE_ID: Final = re.compile(rf"({_ID})\.jsonl$")
_FALLBACK_TIME: Final = "2025-01-01T00-00-00"  # the folder date of a file not named as Codex names it
# Codex compacts a history over its model's window before the turn: the judge must see the history
# as rebuilt from the file, so the staged model's window and compaction threshold are out of reach.
_NO_LIMIT_TOKENS: Final = 1_000_000_000_000
_META_PREFIX_BYTES: Final = 4096  # a session_meta line says its type early; longer lines are skipped


@dataclass(frozen=True, slots=True)
class StagedThread:
    """A rollout copied into a throwaway Codex home, ready to resume."""

    thread_id: str
    home: Path  # HOME
    codex_home: Path  # CODEX_HOME
    work_dir: Path  # the working directory Codex runs in
    rollout: Path  # the staged copy Codex resumes (and appends to)


def _meta_record(line: bytes) -> dict[str, object] | None:
    """A `session_meta` line's record (its payload an object), else None."""
    if b'"session_meta"' not in line[:_META_PREFIX_BYTES]:
        return None
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if not (isinstance(record, dict) and record.get("type") == "session_meta"):
        return None
    return record if isinstance(record.get("payload"), dict) else None


def _meta_id(line: bytes) -> str | None:
    """The thread id of a `session_meta` line, else None."""
    record = _meta_record(line)
    payload = record["payload"] if record is not None else {}
    value = payload.get("id") if isinstance(payload, dict) else None
    return value if isinstance(value, str) and re.fullmatch(_ID, value) else None


def rollout_thread_id(path: Path) -> str | None:
    """The thread id Codex resumes the file by: its name's, else its first `session_meta`'s."""
    named = _ROLLOUT_NAME.search(path.name) or _BARE_ID.search(path.name)
    if named:
        return named.group(named.lastindex or 1).lower()
    with path.open("rb") as lines:
        return next((found for line in lines if (found := _meta_id(line))), None)


def _with_provider(line: bytes) -> bytes | None:
    """The line with `payload.model_provider` set to ours when it is a `session_meta`, else None."""
    record = _meta_record(line)
    if record is None or not isinstance(payload := record["payload"], dict):
        return None
    payload["model_provider"] = PROVIDER
    return orjson.dumps(record) + (b"\n" if line.endswith(b"\n") else b"")


def _copy_with_provider(source: Path, target: Path) -> None:
    """Copy `source` to `target`, rewriting only the first `session_meta` line."""
    rewritten = False
    with source.open("rb") as lines, target.open("wb") as out:
        for line in lines:
            changed = None if rewritten else _with_provider(line)
            rewritten = rewritten or changed is not None
            out.write(line if changed is None else changed)


def config_toml(base_url: str, model: str) -> str:
    """The staged `config.toml`: our provider at `base_url`, nothing else on the network."""
    return (
        f'model = "{model}"\n'
        f'model_provider = "{PROVIDER}"\n'
        "check_for_update_on_startup = false\n"
        f"model_context_window = {_NO_LIMIT_TOKENS}\n"
        f"model_auto_compact_token_limit = {_NO_LIMIT_TOKENS}\n"
        "\n[features]\nplugins = false\napps = false\n"
        "\n[analytics]\nenabled = false\n"
        f"\n[model_providers.{PROVIDER}]\n"
        f'name = "{PROVIDER}"\n'
        f'base_url = "{base_url}"\n'
        'wire_api = "responses"\n'
        "supports_websockets = false\n"
        "request_max_retries = 0\n"
        "stream_max_retries = 0\n"
    )


def stage_thread(rollout: Path, scratch: Path, *, base_url: str, model: str) -> StagedThread:
    """Copy `rollout` into `<scratch>/home/.codex/sessions/...` with a config pointing at `base_url`.

    The thread id is the file's (:func:`rollout_thread_id`), else its first session_meta's; a file
    with neither cannot be resumed by Codex and raises :class:`CodexThreadNotFound`.
    """
    thread_id = rollout_thread_id(rollout)
    if thread_id is None:
        raise CodexThreadNotFound(rollout.name)
    named = _ROLLOUT_NAME.search(rollout.name)
    year, month, day = named.groups()[:3] if named else _FALLBACK_TIME[:10].split("-")
    file_name = named.group(0) if named else f"rollout-{_FALLBACK_TIME}-{thread_id}.jsonl"
    home = scratch / "home"
    codex_home = home / ".codex"
    sessions = codex_home / "sessions" / year / month / day
    sessions.mkdir(parents=True, exist_ok=True)
    work_dir = scratch / "work"
    work_dir.mkdir(parents=True, exist_ok=True)
    staged = sessions / file_name
    _copy_with_provider(rollout, staged)
    (codex_home / "config.toml").write_text(config_toml(base_url, model), encoding="utf-8")
    return StagedThread(thread_id, home, codex_home, work_dir, staged)
