"""The grammar of the commands that change session files: `compress --in-place`, `restore`,
`backups`, `repair-read-pages`, `repair` and `vacuum`.

As in `parser`, no default is written here: an absent flag is None and the settings decide
(`[in_place]`, `[state]`, `[read_pages]`, `[repair]` of `config/default.toml`).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from pipeline.formats.registry import roots_help
from pipeline.live_vocabulary import BackupCompressionChoice, RepairScope
from pipeline.settings.typed_sections import DURATION_UNITS, is_duration, parse_retention
from pipeline.vocabulary import LeafPolicy, LogFormat

__all__ = ["CONFIG_HELP", "IN_PLACE_EXIT_CODES", "add_in_place_flags", "add_live_commands", "live_overrides"]

CONFIG_HELP: Final = "a TOML file overriding the defaults (config/default.toml, shipped in the package)"

IN_PLACE_EXIT_CODES: Final = (
    "exit codes: 0 every session fine (replaced, skipped, or declined as small, fitting or unchanged); "
    "1 at least one session was refused, could not be replaced (the original stayed or was put back), "
    "could not be read or crashed; 2 usage error, unreadable root, or another run holds the state "
    "directory; 3 a file was replaced and verified but its report could not be written (the receipts, "
    "with operation_state committed-report-failed, are printed on stdout)"
)
_SESSIONS_HELP: Final = (
    "session roots or files (default: every session directory of a supported agent found here: "
    f"{roots_help()}; an agent's own variable, such as $CLAUDE_CONFIG_DIR or $CODEX_HOME, "
    "moves that agent's folder)"
)


def _state_flags(parser: argparse._ActionsContainer) -> None:  # a parser or an argument group
    add = parser.add_argument
    add("--state-dir", type=Path, metavar="DIR", help="the state database and run lock ([state] dir)")
    add(
        "--backup-dir",
        type=Path,
        metavar="DIR",
        help="put backups here, mirroring the sessions' layout (default: the archive, archive/ under the "
        "state directory)",
    )
    add(
        "--backup-beside",
        action="store_true",
        default=None,
        help="the old layout: each backup beside its session file, inside the agent's folder",
    )
    add(
        "--backup-compression",
        choices=[c.value for c in BackupCompressionChoice],
        help="how backups are stored (default auto: zstd with the zstd extra, else gzip; read one with "
        "zstdcat or zcat); verification covers the decoded bytes",
    )
    add(
        "--keep",
        dest="backup_keep",
        type=_retention,
        metavar="POLICY",
        help="retention of backups: all (default), an age such as 30d, or last:N (the N newest per session); "
        "a compacted session's newest backup is kept whatever the policy ([in_place] backup_keep)",
    )


def _duration(text: str) -> str:
    """A duration with its unit: `--idle-for 12` is refused rather than taken as 12 seconds (0 is
    0 in any unit)."""
    value = text.strip().lower()
    bare = value.replace(".", "", 1).isdigit()
    if bare and float(value) != 0:
        raise argparse.ArgumentTypeError(
            f"{text!r} has no unit: write {value}h, {value}m, {value}d or {value}s"
        )
    if not is_duration(value) or not (bare or value[-1:] in DURATION_UNITS):
        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (examples: 12h, 30m, 2d)")
    return value


def _retention(text: str) -> str:
    """A `backup_keep` policy, refused at once when it does not parse."""
    try:
        parse_retention(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc
    return text.strip().lower()


def _replacement_flags(parser: argparse._ActionsContainer) -> None:
    """What every command that replaces session files shares: the idle rule, backups, the state."""
    add = parser.add_argument
    add(
        "--idle-for",
        type=_duration,
        metavar="DURATION",
        help="skip sessions written to within this period, with its unit (12h, 30m, 2d, 90s; "
        "default: [in_place] idle_for)",
    )
    add(
        "--confirm-sessions-closed",
        action="store_true",
        default=None,
        help="instead of the idle rule, your word that no session is open in Claude Code "
        "(processes holding a file open are still looked for)",
    )
    add(
        "--work-dir",
        type=Path,
        metavar="DIR",
        help="scratch directory outside ~/.claude (default: a fresh temporary directory, removed afterwards)",
    )
    _state_flags(parser)


def add_in_place_flags(compress: argparse.ArgumentParser) -> None:
    """`compress --in-place` and its knobs."""
    group = compress.add_argument_group(
        "in place", "compact the session files themselves (instead of --out), keeping a verified backup"
    )
    group.add_argument(
        "--in-place",
        action="store_true",
        help="replace each idle session that needs it by its compaction through the live-replacement "
        "transaction; Claude Code must first resume the candidate as the original (--no-verify-resume "
        "skips that proof); unchanged sessions are skipped on later runs at the cost of a stat",
    )
    _replacement_flags(group)


def _live_common(parser: argparse.ArgumentParser, *, paths_help: str) -> None:
    add = parser.add_argument
    add("paths", nargs="*", type=Path, metavar="PATH", help=paths_help)
    add("--config", type=Path, help=CONFIG_HELP)
    add("--log-format", choices=[f.value for f in LogFormat], help="log lines on stderr")
    add("--quiet", action="store_true", help="no progress bar or table; warnings and errors only")


def _restore(commands: Any, *, build: bool) -> None:
    restore = commands.add_parser(
        "restore",
        help="put verified backups back (undo compress --in-place or repair-read-pages --in-place)",
        description="Put the original back at each session PATH from the backup its current file replaced, "
        "through the same transaction (the compacted file gets a numbered backup of its own). Only over "
        "the output an in-place run published, unless --force; the restored bytes must hash to the "
        "digest recorded when the backup was made. With --all-since, every session whose output "
        "replaced a backup made since DATE, under the PATHs given as roots.",
        epilog="exit codes: 0 every session restored; 1 at least one was refused or not restored; 2 usage "
        "error or another run holds the state directory; 3 restored but the report could not be written",
    )
    if not build:
        return
    _live_common(restore, paths_help="session files to restore; with --all-since, the roots to restore under")
    add = restore.add_argument
    add(
        "--all-since",
        metavar="DATE",
        help="restore every session compacted from a backup made since DATE "
        "(2025-06-01, or 2025-06-01T22:00; local time unless an offset is given)",
    )
    add("--backup", type=Path, metavar="FILE", help="restore this backup (one PATH only)")
    add("--force", action="store_true", help="restore even over a file that is not the output we published")
    add("--report-dir", type=Path, help="where reports go (default: under the state directory)")
    _state_flags(restore)


def _backups(commands: Any, *, build: bool) -> None:
    backups = commands.add_parser(
        "backups",
        help="list, prune or archive the backups of in-place runs",
        description="List every backup the state database records and every backup file found beside "
        "the sessions under the roots and in the backup directory, oldest first, with sizes and dates. "
        "--prune applies the retention policy (--keep, [in_place] backup_keep): a dry run listing what "
        "would go and how many bytes, unless --yes. A backup is the only copy of the history a "
        "compaction summarized: a compacted session's newest backup is never pruned unless "
        "[in_place] prune_only_copies says so. --move-to-archive moves backups beside the sessions into "
        "the backup directory (each verified there, then removed).",
        epilog="exit codes: 0 done (or nothing to do); 1 a backup could not be pruned or moved (it stays "
        "where it was); 2 usage error or another run holds the state directory",
    )
    if not build:
        return
    _live_common(backups, paths_help=_SESSIONS_HELP + "; backups beside their sessions are found here")
    add = backups.add_argument
    add(
        "--json",
        action="store_true",
        help="print the listing (or what was pruned or moved) as JSON on stdout",
    )
    action = backups.add_mutually_exclusive_group()
    action.add_argument(
        "--prune",
        action="store_true",
        help="remove the backups the retention policy lets go (dry run without --yes)",
    )
    action.add_argument(
        "--move-to-archive",
        action="store_true",
        help="move backups found beside the sessions under the roots into the backup directory",
    )
    add("--yes", action="store_true", help="with --prune: really remove the backups listed")
    _state_flags(backups)


def _repair(commands: Any, *, build: bool) -> None:
    repair = commands.add_parser(
        "repair-read-pages",
        help="remove serialized Read.pages members (a compatibility repair), in place or as candidates",
        description="Find assistant Read tool_use inputs holding `pages` whose call has exactly one later "
        "matching result in the same session, and delete that member's exact bytes, nothing else. "
        "Without --in-place or --out only reports what it would do; pending calls are only reported. "
        "`repair --read-pages` makes the same edit among its other repairs.",
        epilog=IN_PLACE_EXIT_CODES,
    )
    if not build:
        return
    _live_common(repair, paths_help=_SESSIONS_HELP)
    _out_or_in_place(repair)
    add = repair.add_argument
    add("--scope", choices=[s.value for s in RepairScope], help="active-chain (default) or all records")
    _repair_chain_flags(repair, "the chain of --scope active-chain")


def _out_or_in_place(parser: argparse.ArgumentParser) -> None:
    """The choice every repair command offers: in place, as candidates, or (neither) a report only."""
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--in-place",
        action="store_true",
        help="repair the session files through the live-replacement transaction, keeping a verified backup",
    )
    mode.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="write repaired candidates here, mirroring the input layout (outside ~/.claude)",
    )


def _repair_chain_flags(parser: argparse.ArgumentParser, chain: str) -> None:
    """The active chain a repair works on, where its reports go, and the replacement's knobs."""
    add = parser.add_argument
    add(
        "--leaf-policy",
        dest="repair_leaf_policy",
        choices=[p.value for p in LeafPolicy],
        help=f"{chain} (default [read_pages] leaf_policy)",
    )
    add("--report-dir", type=Path, help="where reports go (default: under the state directory, or --out)")
    _replacement_flags(parser)


def _damage_repair(commands: Any, *, build: bool) -> None:
    repair = commands.add_parser(
        "repair",
        help="make damaged sessions resumable again (torn lines, broken tool pairing, --relink), minimally",
        description="Repair what makes a session's active chain unfit for the Messages API, each defect with "
        "the fewest whole-line edits, every other line byte-identical: lines no reader can take (a torn "
        "tail) are dropped, a missing final newline is written, a call without its result gets the "
        "result Claude Code writes for an interrupted call, a result without its call or a second "
        "result is dropped, a repeated tool id is made unique for its call and results, results are "
        "moved ahead of other blocks. Other agents' sessions get the repair their own client makes "
        "(pi, Qwen Code, Gemini CLI). Each repaired file is resumed in its agent's own client "
        "(offline, against a capture server that answers as the API does) and published only if the "
        "API takes it and it holds everything the damaged one sent (plus, where the repair declares "
        "them, the answers it adds). Without --in-place or --out only reports what it would do. A "
        "defect it cannot repair safely leaves the file as it was, with the defect's line and code. "
        "summary.json's totals (and the line under the table) give the repaired files' bytes before "
        "and after (in place, the backups' too), per root.",
        epilog=IN_PLACE_EXIT_CODES,
    )
    if not build:
        return
    _live_common(repair, paths_help=_SESSIONS_HELP)
    _out_or_in_place(repair)
    add = repair.add_argument
    add(
        "--relink",
        action="store_true",
        default=None,
        help="also hang a record whose parent was never written onto the record before it, so the history "
        "before the break is resumed again (changes what the model sees; [repair] relink)",
    )
    add(
        "--read-pages",
        action="store_true",
        default=None,
        help="also remove serialized Read.pages members, as repair-read-pages does ([repair] read_pages)",
    )
    add("--claude", type=Path, metavar="PATH", help="the Claude Code that proves repairs ([verify] claude)")
    add(
        "--no-verify-resume",
        action="store_true",
        help="publish repairs without resuming them in Claude Code (their reports say unproven)",
    )
    _repair_chain_flags(repair, "the chain that is repaired")


def _vacuum(commands: Any, *, build: bool) -> None:
    vacuum = commands.add_parser(
        "vacuum",
        help="rewrite session files as small as what their client loads from them (Gemini CLI), losslessly",
        description="Drop what a session's client never loads (Gemini CLI re-appends a message whole on "
        "every update and a full snapshot on every resume, and leaves rewound records behind): the "
        "rewritten file is re-read and must send the original's context item for item, with no new finding, "
        "then (when installed) the agent's own client resumes both offline and must send the same. Without "
        "--in-place or --out only reports what it would do. Sessions of formats without a vacuum (Claude "
        "Code, Codex, Qwen Code), subagents' sessions and files the client does not resume (a /chat save "
        "checkpoint) are reported skipped, with the reason. In place, each file gets a verified backup and "
        "`compaction restore` undoes it.",
        epilog=IN_PLACE_EXIT_CODES,
    )
    if not build:
        return
    _live_common(vacuum, paths_help=_SESSIONS_HELP)
    _out_or_in_place(vacuum)
    vacuum.add_argument(
        "--no-verify-resume",
        action="store_true",
        help="publish without resuming original and rewrite in the agent's client ([compress] verify_resume)",
    )
    vacuum.add_argument(
        "--report-dir", type=Path, help="where reports go (default: under the state directory, or --out)"
    )
    _replacement_flags(vacuum)


def add_live_commands(commands: Any, wanted: Callable[[str], bool]) -> None:
    """`restore`, `backups`, `repair-read-pages`, `repair` and `vacuum` (the arguments of those
    `wanted` only)."""
    _restore(commands, build=wanted("restore"))
    _backups(commands, build=wanted("backups"))
    _repair(commands, build=wanted("repair-read-pages"))
    _damage_repair(commands, build=wanted("repair"))
    _vacuum(commands, build=wanted("vacuum"))


def _text(value: Path | None) -> str | None:
    return str(value) if value is not None else None


def live_overrides(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """The `[in_place]`, `[state]` and `[read_pages]` layer the flags form (None: not given)."""
    get = vars(args).get
    flags: dict[str, dict[str, Any]] = {
        "in_place": {
            "idle_for": get("idle_for"),
            "confirm_sessions_closed": get("confirm_sessions_closed"),
            "backup_dir": _text(get("backup_dir")),
            "backup_beside": get("backup_beside"),
            "backup_compression": get("backup_compression"),
            "backup_keep": get("backup_keep"),
            "work_dir": _text(get("work_dir")),
        },
        "state": {"dir": _text(get("state_dir"))},
    }
    if args.command == "repair-read-pages":
        flags["read_pages"] = {"scope": get("scope"), "leaf_policy": get("repair_leaf_policy")}
    if args.command == "repair":
        flags["read_pages"] = {"leaf_policy": get("repair_leaf_policy")}
        flags["repair"] = {"relink": get("relink"), "read_pages": get("read_pages")}
        flags["verify"] = {"claude": _text(get("claude"))}
    return flags
