"""`scripts/fit-calibration --codex DIR`: `auto`'s per-turn fit over Codex rollouts, measured.

For every rollout under DIR (read in place), each billed model request is paired with the history
Codex sent before it (`pipeline/formats/codex/billed_requests.py`), counted with the `openai`
family's tokenizer (o200k, the `tokenizers` extra). The session's slope is fitted as for Claude
Code (`sent.fit_sent`: `billed = c_epoch + slope * estimate` within epochs, a compaction or a model
change starting one, steps counted), with one framing constant per sent item: the point of a grid
that minimizes the median |slope - 1|, cross-validated by session in `_fit_families`' folds.

Four views of what was sent are measured side by side: each item's visible text (what `compaction
tokens` counts per item) or its JSON as sent (encrypted reasoning left out), each without and
with the reasoning of the request's own user turn at the length the model produced it (Codex
sends those reasoning items back; earlier turns' reasoning is dropped from the context). Printed
per view: n, the median |slope - 1| unframed, framed in-sample and cross-validated, with q1/q3/p90,
per client version (major.minor of `cli_version`), and the worst sessions. With `--held-out DIR2`
the rollouts of DIR2 (none of DIR's files) are then measured with the framing DIR's give: the
figure on rollouts the constant was not fitted on. Nothing is written.
"""

from __future__ import annotations

import hashlib
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _fit_families import FOLDS, _error, _fold, _spread, slopes  # noqa: E402 - beside this script

from pipeline.estimate.families import ModelFamily, family_of  # noqa: E402
from pipeline.estimate.real import load_tokenizer  # noqa: E402
from pipeline.formats.codex.analysis import analyze_rollout  # noqa: E402
from pipeline.formats.codex.billed_requests import BilledRequest, billed_requests  # noqa: E402
from pipeline.jobs.tokens.sent import SentTurn, fit_sent  # noqa: E402
from pipeline.testing.settings import LIMITS  # noqa: E402

ITEM_GRID = range(0, 61, 2)  # tokens per sent item tried (a message's role and wrapper: a few)
TOKENIZER = "o200k"  # the `openai` family's (`families.FAMILY_ESTIMATOR`)
MIN_REQUESTS = 3  # fewer say nothing of a slope
WORST_SHOWN = 6


@dataclass(frozen=True, slots=True)
class View:
    """What of the sent items is counted."""

    name: str
    json: bool  # the items' JSON (else their visible text)
    reasoning: bool  # the turn's reasoning, sent back, at the length the model produced it


VIEWS = (
    View("visible", json=False, reasoning=False),
    View("visible+reasoning", json=False, reasoning=True),
    View("json", json=True, reasoning=False),
    View("json+reasoning", json=True, reasoning=True),
)


@dataclass(frozen=True, slots=True)
class Rollout:
    """One rollout's billed requests, its client version and family."""

    label: str
    version: str
    family: ModelFamily
    requests: tuple[BilledRequest, ...]


def _family(requests: Sequence[BilledRequest]) -> ModelFamily:
    """The family of most requests; a rollout naming no model ran OpenAI's (Codex's default)."""
    named = [family_of(r.model) for r in requests if r.model]
    families = [f for f in named if f is not None]
    return sorted(statistics.multimode(families))[0] if families else ModelFamily.OPENAI


def collect(root: Path) -> list[Rollout]:
    """Every rollout under `root` with at least `MIN_REQUESTS` billed requests."""
    count = load_tokenizer(TOKENIZER).count
    found: list[Rollout] = []
    for path in sorted(p for p in root.rglob("*.jsonl") if p.is_file()):
        analysis = analyze_rollout(path.read_bytes(), LIMITS)
        requests = billed_requests(analysis, count, json=True)
        if len(requests) >= MIN_REQUESTS:
            version = analysis.versions[0] if analysis.versions else "unknown"
            found.append(Rollout(path.name, version, _family(requests), requests))
    return found


def turns(rollout: Rollout, view: View) -> list[SentTurn]:
    """The requests as `fit_sent` takes them: one framing unit per sent item, no tool blocks."""
    return [
        SentTurn(
            r.line,
            r.billed,
            rollout.family,
            (r.json_tokens if view.json else r.tokens) + (r.carried_reasoning if view.reasoning else 0),
            r.items,
            0,
            r.epoch_start,
        )
        for r in rollout.requests
    ]


def best_framing(sessions: Sequence[Sequence[SentTurn]]) -> tuple[int, float]:
    """(tokens per item, median |slope - 1|) of the best grid point (ties: the smaller)."""
    best = (0, float("inf"))
    for framing in ITEM_GRID:
        error = _error(slopes(sessions, framing, 0, 1.0))
        if error < best[1] - 1e-12:
            best = (framing, error)
    return best


def held_out(labelled: dict[str, list[SentTurn]]) -> dict[str, float]:
    """Each session's slope with the framing fitted without its fold."""
    measured: dict[str, float] = {}
    for fold in range(FOLDS):
        framing, _ = best_framing([t for label, t in labelled.items() if _fold(label) != fold])
        for label, t in labelled.items():
            if _fold(label) == fold:
                measured.update((label, value) for value in slopes([t], framing, 0, 1.0))
    return measured


def report(rollouts: Sequence[Rollout], view: View) -> float:
    """Print one view's figures; returns its cross-validated median |slope - 1|."""
    labelled = {r.label: turns(r, view) for r in rollouts}
    sessions = list(labelled.values())
    framing, _ = best_framing(sessions)
    name = f"codex {view.name}"
    print(f"{name}: {len(sessions)} rollouts, {sum(len(t) for t in sessions)} billed requests")
    print(f"{name} unframed: {_spread(slopes(sessions, 0, 0, 1.0))}")
    print(f"{name} framed in-sample ({framing} per item): {_spread(slopes(sessions, framing, 0, 1.0))}")
    held = held_out(labelled)
    print(f"{name} cross-validated: {_spread(list(held.values()))}")
    versions = {r.label: ".".join(r.version.split(".")[:2]) for r in rollouts}
    by_version: dict[str, list[float]] = {}
    for label, value in held.items():
        by_version.setdefault(versions[label], []).append(value)
    for version, values in sorted(by_version.items()):
        print(f"{name} cross-validated, client {version}: {_spread(values)}")
    for label, value in sorted(held.items(), key=lambda kv: -abs(kv[1] - 1))[:WORST_SHOWN]:
        print(f"{name} worst: slope {value:.3f} {_detail(labelled[label], framing)} {label[:64]}")
    return _error(list(held.values()))


def _detail(session: Sequence[SentTurn], framing: int) -> str:
    """What a session shows beside its slope: requests, epochs, steps, residual, intercept."""
    framed = [
        SentTurn(t.line, t.billed, t.family, t.estimate + framing * t.messages, t.messages, 0, t.epoch_start)
        for t in session
    ]
    fit = fit_sent(framed, "auto")
    if fit is None:
        return f"{len(session)} requests, no fit"
    usage = fit.usage
    return (
        f"{len(session)} requests, {fit.epochs} epochs, {fit.steps} steps, "
        f"rel. residual {usage.relative_rmse:.3f}, constant {usage.fit.constant:.0f}"
    )


def _digests(root: Path) -> set[str]:
    return {hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*.jsonl") if p.is_file()}


def judge_held_out(rollouts: Sequence[Rollout], held: Sequence[Rollout], view: View) -> float:
    """Measure `held` with the framing fitted on `rollouts` alone; returns the median |slope - 1|."""
    framing, _ = best_framing([turns(r, view) for r in rollouts])
    measured = {r.label: v for r in held for v in slopes([turns(r, view)], framing, 0, 1.0)}
    name = f"codex held-out {view.name} ({framing} per item)"
    print(f"{name}: {_spread(list(measured.values()))}")
    versions = {r.label: ".".join(r.version.split(".")[:2]) for r in held}
    by_version: dict[str, list[float]] = {}
    for label, value in measured.items():
        by_version.setdefault(versions[label], []).append(value)
    for version, values in sorted(by_version.items()):
        print(f"{name}, client {version}: {_spread(values)}")
    labelled = {r.label: turns(r, view) for r in held}
    for label, value in sorted(measured.items(), key=lambda kv: -abs(kv[1] - 1))[:WORST_SHOWN]:
        print(f"{name} worst: slope {value:.3f} {_detail(labelled[label], framing)} {label[:64]}")
    return _error(list(measured.values()))


def fit_codex(root: Path, held_out: Path | None = None) -> int:
    """Measure every view over the rollouts under `root` and print them; with `held_out`, measure
    those rollouts with the framing `root`'s give (refusing a file both hold)."""
    rollouts = collect(root)
    if not rollouts:
        raise SystemExit(f"no rollout with {MIN_REQUESTS} billed requests under {root}")
    families = statistics.multimode(r.family for r in rollouts)
    versions = sorted({r.version for r in rollouts})
    print(f"codex: {len(rollouts)} rollouts, family {families[0]}, client versions {', '.join(versions)}")
    for view in VIEWS:
        report(rollouts, view)
    if held_out is not None:
        if _digests(root) & _digests(held_out):
            raise SystemExit("held-out rollouts are also in the rollouts fitted on")
        held = collect(held_out)
        named = ", ".join(sorted({r.version for r in held}))
        print(f"codex held-out: {len(held)} rollouts, client versions {named}")
        for view in VIEWS:
            judge_held_out(rollouts, held, view)
    return 0
