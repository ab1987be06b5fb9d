"""A small in-place driver over today's compress job, for the crash test and the nightly benchmark.

`compress_candidate` is the one adapter between the compress job and the in-place machinery: it
builds a candidate in the work directory with `compress_session` and reads it back. The command
line will replace it when the jobs are restructured; everything else here is what a thin
`compress --in-place` does: settings in, one locked state database, `run_in_place`, a summary.

    python -m pipeline.testing.inplace_driver ROOT --state-dir S --work-dir W [--backup-dir B]
    python -m pipeline.testing.inplace_driver --serve    # fork runs on request (crash tests)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from pipeline import __version__
from pipeline.core.check.structure import structural_failures
from pipeline.jobs.compress import ENGINE_VERSION, CompressOptions, compress_session
from pipeline.publish.activity import platform_probe
from pipeline.publish.decisions import Candidate, Declined
from pipeline.publish.inplace import BuildCandidate, InPlaceRun, run_in_place
from pipeline.publish.options import in_place_options, state_options
from pipeline.publish.source import FrozenSource, SessionTarget
from pipeline.publish.state import RecordedResult, open_state
from pipeline.read.discover import discover
from pipeline.settings import load_settings
from pipeline.vocabulary import SessionStatus

__all__ = ["compress_candidate", "config_digest", "main", "run"]

_FINAL = frozenset(
    {
        SessionStatus.SKIPPED_SMALL,
        SessionStatus.SKIPPED_FITS,
        SessionStatus.SKIPPED_SUBAGENT,
        SessionStatus.UNSUPPORTED_FORMAT,
        SessionStatus.REFUSED,
    }
)
_ORDINARY = frozenset({"committed", "skipped-unchanged-output", "skipped-unchanged-declined"})
_NOT_OUTPUT_SHAPING = ("out_dir", "root_label", "verify_resume", "claude", "resume_timeout")


def config_digest(options: CompressOptions) -> str:
    """Engine, package version and every option that shapes the output, hashed."""
    shaping = {k: v for k, v in asdict(options).items() if k not in _NOT_OUTPUT_SHAPING}
    text = json.dumps({"engine": ENGINE_VERSION, "version": __version__, "options": shaping}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def compress_candidate(options: CompressOptions) -> BuildCandidate:
    """The adapter: `compress_session` writes a candidate under the work dir; we read it back."""

    def build(frozen: FrozenSource, work_dir: Path) -> Candidate | Declined:
        out = work_dir / frozen.sha256[:24]
        job = replace(options, out_dir=str(out), root_label="", verify_resume=False)
        outcome = compress_session(frozen.path, frozen.name, job)
        try:
            if outcome.report.get("session", {}).get("sha256") != frozen.sha256:
                return Declined(outcome.status.value, ("source-changed-during-compression",), final=False)
            if outcome.status is not SessionStatus.COMPRESSED:
                reasons = tuple(outcome.report.get("reasons", ()))
                final = outcome.status in _FINAL and "source-changed-during-compression" not in reasons
                return Declined(outcome.status.value, reasons, final)
            data = (out / frozen.name).read_bytes()
        finally:
            shutil.rmtree(out, ignore_errors=True)
        topology = options.topology()
        return Candidate(data, lambda b: structural_failures(b, topology), False, outcome.status.value)

    return build


def _compress_options(settings: Any, args: argparse.Namespace) -> CompressOptions:
    sweep, compress = settings.section("sweep"), settings.section("compress")
    return CompressOptions(
        out_dir="",
        leaf_policy=sweep["leaf_policy"],
        min_tokens=args.min_tokens if args.min_tokens is not None else compress["min_tokens"],
        target_ratio=compress["target_ratio"],
        min_recent_records=args.min_recent_records or compress["min_recent_records"],
        summary_char_budget=compress["summary_char_budget"],
        min_gain=compress["min_gain"],
    )


def run(args: argparse.Namespace) -> InPlaceRun:
    """One in-place run over the roots, as `compress --in-place` will do it."""
    flags = {
        "in_place": {
            "backup_dir": str(args.backup_dir) if args.backup_dir else None,
            "backup_compression": args.backup_compression,
            "idle_for": args.idle_for,
            "confirm_sessions_closed": True if args.confirm_sessions_closed else None,
            "publish_strategy": args.publish_strategy,
        },
        "state": {"dir": str(args.state_dir)},
    }
    settings = load_settings(None, flags=flags)
    compress = _compress_options(settings, args)
    sessions = discover(list(args.roots))
    targets = [SessionTarget(s.path, s.root, s.root_label, s.label) for s in sessions]
    options = in_place_options(
        settings.section("in_place"),
        work_dir=args.work_dir,
        config_digest=config_digest(compress),
        require_resume_proof=False,  # the driver is the --no-verify-resume case
        result=RecordedResult.COMPACTED,
    )
    args.work_dir.mkdir(parents=True, exist_ok=True)
    with open_state(state_options(settings.section("state"))) as state:
        return run_in_place(
            targets,
            compress_candidate(compress),
            options,
            state,
            clock_ns=time.time_ns,
            probe=platform_probe(),
        )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m pipeline.testing.inplace_driver")
    parser.add_argument("roots", nargs="*", type=Path)
    parser.add_argument("--state-dir", type=Path)
    parser.add_argument("--work-dir", type=Path)
    parser.add_argument("--backup-dir", type=Path)
    parser.add_argument("--backup-compression", choices=("none", "gzip", "zstd"))
    parser.add_argument("--idle-for")
    parser.add_argument("--confirm-sessions-closed", action="store_true")
    parser.add_argument("--publish-strategy", choices=("auto", "exchange", "link"))
    parser.add_argument("--summary", type=Path, help="also write the summary line to this file")
    parser.add_argument("--min-tokens", type=int)
    parser.add_argument("--min-recent-records", type=int)
    parser.add_argument("--serve", action="store_true", help="fork one run per stdin line of arguments")
    return parser


def _summary(result: InPlaceRun) -> dict[str, Any]:
    counts: dict[str, int] = {}
    for outcome in result.outcomes:
        counts[outcome.disposition.value] = counts.get(outcome.disposition.value, 0) + 1
    unusual = [
        {
            "label": o.target.label,
            "disposition": o.disposition.value,
            "status": o.status,
            "reasons": list(o.reasons),
        }
        | ({"reason": o.receipt.reason, "step": o.receipt.failed_step} if o.receipt else {})
        for o in result.outcomes
        if o.disposition.value not in _ORDINARY
    ]
    recovered = [{"state": r.state.value, "preserved": len(r.preserved)} for r in result.recovered]
    return {
        "dispositions": counts,
        "built": result.compression_work,
        "recovered": len(result.recovered),
        "recoveries": recovered,
        "unusual": unusual,
    }


def _serve() -> int:
    """Fork a run per `run ARGS-JSON` line, print `pid N`; `wait` reaps it: `exit N CODE`, `killed N SIG`.

    The child is reaped only when asked, so until then its pid stays reserved (a zombie keeps
    it): a caller that kills by pid can never hit another process that reused the number.
    """
    child = 0
    for line in sys.stdin:
        command, _, rest = line.strip().partition(" ")
        if command == "wait":
            _, status = os.waitpid(child, 0)
            word, code = (
                ("killed", os.WTERMSIG(status))
                if os.WIFSIGNALED(status)
                else ("exit", os.WEXITSTATUS(status))
            )
            print(f"{word} {child} {code}", flush=True)
            continue
        child = os.fork()
        if child == 0:  # the child: one real run, then leave without running the parent's cleanup
            code = 1
            try:
                code = main(json.loads(rest))
            finally:
                os._exit(code)
        print(f"pid {child}", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run once over the roots and print a summary line, or serve forked runs."""
    args = _parser().parse_args(argv)
    if args.serve:
        return _serve()
    line = json.dumps(_summary(run(args)))
    if args.summary:
        args.summary.write_text(line + "\n")
    else:
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
