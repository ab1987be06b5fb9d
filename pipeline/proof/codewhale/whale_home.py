"""A throwaway CodeWhale home that talks to a loopback Chat Completions server only.

CodeWhale 0.10.2 reads its sessions from `$CODEWHALE_HOME/sessions/`, its config from
`$CODEWHALE_HOME/config.toml` and its settings from `$CODEWHALE_HOME/settings.toml`; with `HOME`
pointed at the same place no user file or key is read. The run selects the `openai` provider
(`CODEWHALE_PROVIDER`, which `exec --resume` honours over the provider the session saved), whose
endpoint is the loopback server (`CODEWHALE_BASE_URL`; plain HTTP is allowed for loopback hosts)
and whose window is set so that one tool result's inline budget is the known cap. Telemetry,
the update check and workspace snapshots are off; the workspace is trusted, so `/anchor` pins in
its `.codewhale/anchors.md` are restated by CodeWhale's compactions.

A resumed session runs in the workspace its metadata names, not the one it is launched in:
`staged` points a judged copy at the throwaway workspace, so nothing of the user's project is
read or run (the history CodeWhale sends does not depend on it).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import orjson

__all__ = ["API_KEY", "JUDGE_WINDOW", "MODEL", "PROVIDER", "WhaleHome", "codewhale_environment", "staged"]

PROVIDER: Final = "openai"  # an OpenAI-compatible Chat Completions route
MODEL: Final = "capture-model"  # a model CodeWhale does not know: no reasoning replay
API_KEY: Final = "loopback-capture"  # the loopback server takes any key
JUDGE_WINDOW: Final = 1_000_000  # 3% of it exceeds TOOL_OUTPUT_INLINE_MAX_CHARS: the cap applies


@dataclass(frozen=True, slots=True)
class WhaleHome:
    """A staged home: where it is, the workspace CodeWhale runs in, and how it compacts.

    `compact_at_percent` None turns CodeWhale's auto-compaction off (a judge must see the history
    as rebuilt); a number turns it on at that share of `window` tokens."""

    root: Path
    workspace: Path
    window: int = JUDGE_WINDOW
    compact_at_percent: float | None = None

    @property
    def sessions(self) -> Path:
        """Where CodeWhale keeps the session documents."""
        return self.root / "sessions"

    def stage(self) -> None:
        """Write the config and settings, and make the sessions folder and the workspace."""
        self.sessions.mkdir(parents=True, exist_ok=True)
        self.workspace.mkdir(parents=True, exist_ok=True)
        # json.dumps quotes a TOML basic string correctly for every path and number used here.
        config = (
            f"provider = {json.dumps(PROVIDER)}\n\n"
            f"[providers.{PROVIDER}]\n"
            f"context_window = {self.window}\n\n"
            f"[projects.{json.dumps(str(self.workspace.resolve()))}]\n"
            'trust_level = "trusted"\n\n'
            "[update]\ncheck_for_updates = false\n\n"
            "[snapshots]\nenabled = false\n"  # no side-git snapshot of the workspace before a turn
        )
        (self.root / "config.toml").write_text(config)
        compaction = (
            "auto_compact = false\n"
            if self.compact_at_percent is None
            else f"auto_compact = true\nauto_compact_threshold_percent = {self.compact_at_percent}\n"
        )
        (self.root / "settings.toml").write_text(compaction)


def staged(document: bytes, workspace: Path) -> bytes:
    """`document` with `metadata.workspace` set to `workspace` (unchanged when it is no JSON
    object with metadata: CodeWhale then refuses it as it would the original)."""
    try:
        raw = orjson.loads(document)
    except orjson.JSONDecodeError:
        return document
    if not isinstance(raw, dict) or not isinstance(raw.get("metadata"), dict):
        return document
    raw["metadata"]["workspace"] = str(workspace)
    return orjson.dumps(raw)


def codewhale_environment(home: WhaleHome, base_url: str) -> dict[str, str]:
    """The environment a CodeWhale run gets: this home only, the loopback server as its provider."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home.root),
        "CODEWHALE_HOME": str(home.root),
        "CODEWHALE_PROVIDER": PROVIDER,
        "CODEWHALE_BASE_URL": base_url,
        "OPENAI_BASE_URL": base_url,
        "OPENAI_API_KEY": API_KEY,
        "CODEWHALE_TELEMETRY": "0",
        "NO_COLOR": "1",
        "TERM": "dumb",
    }
