"""`scripts/fit-calibration --families`: auto's framing per model family, fitted on the shared corpus.

For every Claude Code session of the corpus, the billed turns and the context Claude Code sent
before each (`pipeline/jobs/tokens/sent.py`: messages as sent, tool blocks, content counted by
the family's tokenizer) are collected once, unframed and unscaled. Then, per family:
- with at least `MIN_FRAMING_SESSIONS` sessions, the framing (per message, per tool block) is the
  point of a grid that minimizes the median per-session |slope - 1| of the sent fit (the figure
  `compaction tokens` reports), the family's scale left at 1; a session-level k-fold
  cross-validation refits it without each fold and measures the fold with it;
- with at least `MIN_SCALE_SESSIONS`, the fallback family's framing is taken and only a scale is
  fitted (billed tokens per token of the family's tokenizer: a tokenizer the shipped ones only
  approximate, such as Claude's newer one): the median slope of its sessions at scale 1;
- other families take the fallback family's framing at scale 1 (nothing is written for them).
With `--held-out DIR` the fit is then judged on DIR's sessions, which it never saw (a corpus kept
apart, such as `/work/unseen/files`, rebuilt by `scripts/rebuild-unseen`): each session is measured
with the constants its family takes, and the median |slope - 1| is printed per family with its
count, status and spread, per client version, for sessions of at least `LONG_SESSION` billed
turns, and the worst sessions.
Deterministic: same corpus and package versions give the same file.
"""

from __future__ import annotations

import hashlib
import json
import statistics
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipeline.core.topology.select import AUTO  # noqa: E402 - the repository goes on the path first
from pipeline.estimate import family_calibration  # noqa: E402
from pipeline.estimate.families import ModelFamily  # noqa: E402
from pipeline.jobs.front import Analysis, open_session  # noqa: E402
from pipeline.jobs.tokens.by_family import newest_version  # noqa: E402
from pipeline.jobs.tokens.job import sent_turns  # noqa: E402
from pipeline.jobs.tokens.sent import SentTurn, fit_sent  # noqa: E402
from pipeline.read.discover import discover  # noqa: E402
from pipeline.testing.settings import LIMITS  # noqa: E402

OUT = ROOT / "pipeline" / "estimate" / "family_calibration.py"
METHOD = 2  # bump when sent.py's fit changes meaning
FALLBACK = ModelFamily.CLAUDE
MIN_FRAMING_SESSIONS = 10  # fewer sessions cannot pin two framing constants
MIN_SCALE_SESSIONS = 3  # ...nor fewer a scale
MESSAGE_GRID = range(0, 21, 2)
BLOCK_GRID = range(0, 201, 5)
FOLDS = 5
LONG_SESSION = 20  # billed turns: issue 43 judges sessions at least this long
WORST_SHOWN = 12  # held-out sessions listed with their slopes, worst first


def collect(
    corpus: Path, versions: dict[str, str] | None = None
) -> dict[str, tuple[ModelFamily, list[SentTurn]]]:
    """Every session's billed turns, unframed and unscaled, with its family (of most turns);
    `versions` (when given) receives each session's newest client version."""
    family_calibration.FAMILY_FRAMING = {FALLBACK.value: (0, 0)}  # type: ignore[misc]
    family_calibration.FAMILY_SCALE = {}  # type: ignore[misc]
    sessions: dict[str, tuple[ModelFamily, list[SentTurn]]] = {}
    for session in discover([corpus]):
        analysis = open_session(
            session.path, session.label, AUTO, command="tokens", per_code=1, limits=LIMITS
        )
        if not isinstance(analysis, Analysis) or not analysis.topology.chain:
            continue
        turns = sent_turns(analysis)
        if versions is not None:
            named = analysis.session().client_versions
            versions[session.label] = newest_version(named if isinstance(named, list) else [])
        if len(turns) >= 3:
            ranked = statistics.multimode(turn.family for turn in turns)
            sessions[session.label] = (sorted(ranked)[0], list(turns))
    return sessions


def _framed(turns: Sequence[SentTurn], message: int, block: int, scale: float) -> list[SentTurn]:
    return [
        replace(t, estimate=round(scale * t.estimate) + message * t.messages + block * t.tool_blocks)
        for t in turns
    ]


def slopes(sessions: Sequence[Sequence[SentTurn]], message: int, block: int, scale: float) -> list[float]:
    fitted = (fit_sent(_framed(turns, message, block, scale), "auto") for turns in sessions)
    return [fit.usage.fit.slope for fit in fitted if fit is not None]


def _error(values: Sequence[float]) -> float:
    return statistics.median(abs(value - 1) for value in values) if values else float("inf")


def grid(sessions: Sequence[Sequence[SentTurn]]) -> tuple[int, int, float]:
    """(message, block, median |slope - 1|) of the best grid point (ties: the smaller framing)."""
    best = (0, 0, float("inf"))
    for message in MESSAGE_GRID:
        for block in BLOCK_GRID:
            error = _error(slopes(sessions, message, block, 1.0))
            if error < best[2] - 1e-12:
                best = (message, block, error)
    return best


def _fold(label: str) -> int:
    return int(hashlib.sha256(label.encode()).hexdigest(), 16) % FOLDS


def held_out_slopes(labelled: dict[str, list[SentTurn]]) -> dict[str, float]:
    """Each session's slope with the framing fitted without its fold (sessions with no fit left out)."""
    held_slopes: dict[str, float] = {}
    for fold in range(FOLDS):
        trained = [turns for label, turns in labelled.items() if _fold(label) != fold]
        message, block, _ = grid(trained)
        for label, turns in labelled.items():
            if _fold(label) == fold:
                held_slopes.update((label, value) for value in slopes([turns], message, block, 1.0))
    return held_slopes


def cross_validated(labelled: dict[str, list[SentTurn]]) -> float:
    return _error(list(held_out_slopes(labelled).values()))


def _spread(values: Sequence[float]) -> str:
    errors = sorted(abs(value - 1) for value in values)
    if len(errors) < 2:
        return f"n={len(errors)} median {_error(values):.4f}"
    q = statistics.quantiles(errors, n=20, method="inclusive")
    return f"n={len(errors)} median {_error(values):.4f} q1 {q[4]:.4f} q3 {q[14]:.4f} p90 {q[17]:.4f}"


def _status(family: ModelFamily, fitted_sessions: int) -> str:
    """Whose constants a family takes, given its sessions in the fit."""
    if family is FALLBACK or fitted_sessions >= MIN_FRAMING_SESSIONS:
        return "fitted (framing)"
    if fitted_sessions >= MIN_SCALE_SESSIONS:
        return f"fitted (scale only; {FALLBACK}'s framing, scaled)"
    return f"not fitted: too-few-sessions (minimum {MIN_SCALE_SESSIONS}); borrows {FALLBACK}"


def print_breakdown(
    sessions: dict[str, tuple[ModelFamily, list[SentTurn]]], versions: dict[str, str]
) -> None:
    """Per family its fit status, and the fallback's cross-validated slopes per client version
    (major.minor) and per length (billed turns): where the framing carries and where it does not."""
    counts: dict[str, int] = {}
    for family, _ in sessions.values():
        counts[family.value] = counts.get(family.value, 0) + 1
    for family in ModelFamily:
        n = counts.get(family.value, 0)
        print(f"family {family}: {n} sessions, {_status(family, n)}")
    fallback = {label: turns for label, (family, turns) in sessions.items() if family is FALLBACK}
    held = held_out_slopes(fallback)
    groups: dict[str, list[float]] = {}
    for label, value in held.items():
        era = ".".join(versions.get(label, "unknown").split(".")[:2])
        groups.setdefault(f"client {era}", []).append(value)
        length = "billed turns >= 20" if len(fallback[label]) >= 20 else "billed turns < 20"
        groups.setdefault(length, []).append(value)
    for name, values in sorted(groups.items()):
        print(f"{FALLBACK} cross-validated, {name}: {_spread(values)}")
    print(f"{FALLBACK} cross-validated, all: {_spread(list(held.values()))}")


def fit(sessions: dict[str, tuple[ModelFamily, list[SentTurn]]]) -> tuple[dict, dict, dict]:
    by_family: dict[ModelFamily, dict[str, list[SentTurn]]] = {}
    for label, (family, turns) in sorted(sessions.items()):
        by_family.setdefault(family, {})[label] = turns
    framing: dict[str, tuple[int, int]] = {}
    scale: dict[str, float] = {}
    figures: dict[str, float] = {}
    fallback = by_family.get(FALLBACK, {})
    if len(fallback) < MIN_FRAMING_SESSIONS:
        raise SystemExit(f"{len(fallback)} {FALLBACK} sessions: too few to fit the fallback framing")
    message, block, error = grid(list(fallback.values()))
    framing[FALLBACK.value], scale[FALLBACK.value] = (message, block), 1.0
    figures[f"{FALLBACK}_sessions"] = float(len(fallback))
    figures[f"{FALLBACK}_abs_slope_error"] = round(error, 4)
    figures[f"{FALLBACK}_abs_slope_error_cv"] = round(cross_validated(fallback), 4)
    for family, labelled in sorted(by_family.items()):
        if family is FALLBACK:
            continue
        figures[f"{family}_sessions"] = float(len(labelled))
        if len(labelled) < MIN_SCALE_SESSIONS:
            continue
        if len(labelled) >= MIN_FRAMING_SESSIONS:
            m, b, e = grid(list(labelled.values()))
            framing[family.value], scale[family.value] = (m, b), 1.0
            figures[f"{family}_abs_slope_error"] = round(e, 4)
            continue
        factor = round(statistics.median(slopes(list(labelled.values()), message, block, 1.0)), 4)
        framing[family.value] = (round(message * factor), round(block * factor))
        scale[family.value] = factor
        m, b = framing[family.value]
        figures[f"{family}_abs_slope_error"] = round(_error(slopes(list(labelled.values()), m, b, factor)), 4)
    every = [
        value
        for family, labelled in by_family.items()
        for value in slopes(
            list(labelled.values()),
            *framing.get(family.value, framing[FALLBACK.value]),
            scale.get(family.value, 1.0),
        )
    ]
    figures["all_sessions"] = float(len(every))
    figures["all_abs_slope_error"] = round(_error(every), 4)
    return framing, scale, figures


def render(framing: dict, scale: dict, figures: dict, sessions: int) -> str:
    counts = {k.removesuffix("_sessions"): int(v) for k, v in figures.items() if k.endswith("_sessions")}
    counts.pop("all", None)
    payload = repr((sorted(framing.items()), sorted(scale.items())))
    version = f"{METHOD}.{hashlib.sha256(payload.encode()).hexdigest()[:10]}"
    indent = " " * 8
    framing_lines = "\n".join(f"{indent}{json.dumps(k)}: {tuple(v)!r}," for k, v in sorted(framing.items()))
    scale_lines = "\n".join(f"{indent}{json.dumps(k)}: {v!r}," for k, v in sorted(scale.items()))
    fit_lines = "\n".join(f"{indent}{json.dumps(k)}: {v!r}," for k, v in figures.items())
    count_lines = "\n".join(f"{indent}{json.dumps(k)}: {v!r}," for k, v in sorted(counts.items()))
    return f'''"""Constants of `auto`'s fit over the sent context, written by fit-calibration --families.

Do not edit. Fitted on the {sessions} Claude Code sessions of the shared corpus with billed turns.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Final

__all__ = [
    "FALLBACK_FAMILY",
    "FAMILY_CALIBRATION_VERSION",
    "FAMILY_FIT",
    "FAMILY_FRAMING",
    "FAMILY_MINIMUMS",
    "FAMILY_SCALE",
    "FAMILY_SESSIONS",
]

FAMILY_CALIBRATION_VERSION: Final = {json.dumps(version)}
"""Method number and a digest of the constants; reported beside every `auto` fit."""

FALLBACK_FAMILY: Final = {json.dumps(FALLBACK.value)}
"""Families the shared corpus does not hold take this family's framing (Claude Code's, the client's)."""

FAMILY_FRAMING: Final = MappingProxyType(
    {{
{framing_lines}
    }}
)
"""Family -> (tokens per sent API message, per tool_use or tool_result block), in billed tokens."""

FAMILY_SCALE: Final = MappingProxyType(
    {{
{scale_lines}
    }}
)
"""Family -> billed tokens per token of its `auto` tokenizer (families not listed: 1.0)."""

FAMILY_FIT: Final = MappingProxyType(
    {{
{fit_lines}
    }}
)
"""The fit when written: sessions per family, median |slope - 1| in-sample and cross-validated."""

FAMILY_SESSIONS: Final = MappingProxyType(
    {{
{count_lines}
    }}
)
"""Family -> its sessions in the fit (families not listed: none). See `family_status`."""

FAMILY_MINIMUMS: Final = MappingProxyType(
    {{
        "framing": {MIN_FRAMING_SESSIONS},
        "scale": {MIN_SCALE_SESSIONS},
    }}
)
"""Sessions a family needs for its own framing, and for its own scale over the fallback's framing."""
'''


def _digests(root: Path) -> dict[str, str]:
    """SHA-256 of each session file under `root` -> its label."""
    return {hashlib.sha256(s.path.read_bytes()).hexdigest(): s.label for s in discover([root])}


def held_out_figures(
    sessions: dict[str, tuple[ModelFamily, list[SentTurn]]],
    framing: dict[str, tuple[int, int]],
    scale: dict[str, float],
) -> dict[str, tuple[ModelFamily, int, float]]:
    """Each session's (family, billed turns, slope) with the constants its family takes from the fit
    (a family without its own: the fallback's framing at scale 1); sessions with no fit left out."""
    measured: dict[str, tuple[ModelFamily, int, float]] = {}
    for label, (family, turns) in sorted(sessions.items()):
        message, block = framing.get(family.value, framing[FALLBACK.value])
        for value in slopes([turns], message, block, scale.get(family.value, 1.0)):
            measured[label] = (family, len(turns), value)
    return measured


def print_held_out(
    measured: dict[str, tuple[ModelFamily, int, float]], versions: dict[str, str], fitted: dict[str, int]
) -> None:
    """The fit judged on sessions it never saw: per family (count, status, spread), per client
    version, the long sessions of each family, and the worst sessions."""
    groups: dict[str, list[float]] = {}
    for label, (family, turns, value) in measured.items():
        era = ".".join(versions.get(label, "unknown").split(".")[:2])
        names = [f"family {family}", f"client {era}", "all"]
        if turns >= LONG_SESSION:
            long = f"billed turns >= {LONG_SESSION}"
            names += [f"family {family}, {long}", f"all, {long}"]
        for name in names:
            groups.setdefault(name, []).append(value)
    for family in ModelFamily:
        if f"family {family}" in groups:
            print(f"held-out family {family}: {_status(family, fitted.get(family.value, 0))}")
    for name, values in sorted(groups.items()):
        print(f"held-out {name}: {_spread(values)}")
    worst = sorted(measured.items(), key=lambda item: -abs(item[1][2] - 1))[:WORST_SHOWN]
    for label, (family, turns, value) in worst:
        version = versions.get(label, "unknown")
        print(f"held-out worst: slope {value:.3f} {family} {version} {turns} turns {label}")


def judge_held_out(
    corpus: Path, held_out: Path, framing: dict[str, tuple[int, int]], scale: dict[str, float], figures: dict
) -> None:
    """Measure the fit on `held_out`, refusing sessions the fit was made on (same bytes)."""
    shared = _digests(corpus).keys() & _digests(held_out).keys()
    if shared:
        raise SystemExit(f"{len(shared)} held-out sessions are also in the corpus fitted on")
    versions: dict[str, str] = {}
    sessions = collect(held_out, versions)
    fitted = {k.removesuffix("_sessions"): int(v) for k, v in figures.items() if k.endswith("_sessions")}
    print_held_out(held_out_figures(sessions, framing, scale), versions, fitted)


def fit_families(corpus: Path, *, check: bool, held_out: Path | None = None) -> int:
    versions: dict[str, str] = {}
    sessions = collect(corpus, versions)
    framing, scale, figures = fit(sessions)
    for key, value in figures.items():
        print(f"{key}: {value}")
    print(f"framing: {framing}; scale: {scale}")
    print_breakdown(sessions, versions)
    if held_out is not None:
        judge_held_out(corpus, held_out, framing, scale, figures)
    source = render(framing, scale, figures, len(sessions))
    if check:
        print(source)
        return 0
    OUT.write_text(source, encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0
