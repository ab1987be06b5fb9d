"""`scripts/fit-calibration --families --codex DIR`: `auto` over every agent it is measured on.

Issue 43 asks for `auto`'s median |slope - 1| overall and per family, cross-validated on the
sessions it was fitted on and judged on sessions it never saw. Each agent has its own fit
(`_fit_families`: Claude Code's sessions, framing per family; `_fit_codex`: Codex's rollouts,
framing per item with the turn's reasoning); here each session's slope, measured as its agent's
fit measures it, is pooled: the shared corpora cross-validated (5 folds by session, each agent's
constants refitted without the fold), and with held-out sets, those sessions with the constants
the whole shared corpora give. Per family and per agent beside the pooled figure. Nothing is
written.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import _fit_codex as codex  # noqa: E402 - beside this script
import _fit_families as families  # noqa: E402

MODEL = codex.VIEWS[1]  # the visible text and the turn's reasoning: what `billed_requests` ships
assert MODEL.name == "visible+reasoning"

Measured = dict[str, list[float]]  # a group's name -> its sessions' slopes


def _add(groups: Measured, names: list[str], value: float) -> None:
    for name in names:
        groups.setdefault(name, []).append(value)


def shared(corpus: Path, rollouts: list[codex.Rollout]) -> Measured:
    """Each shared session's slope with its agent's constants fitted without its fold."""
    sessions = families.collect(corpus)
    groups: Measured = {}
    fallback = {label: t for label, (family, t) in sessions.items() if family is families.FALLBACK}
    for value in families.held_out_slopes(fallback).values():
        _add(groups, ["all", f"family {families.FALLBACK}", "agent claude-code"], value)
    family = {r.label: r.family for r in rollouts}
    for label, value in codex.held_out({r.label: codex.turns(r, MODEL) for r in rollouts}).items():
        _add(groups, ["all", f"family {family[label]}", "agent codex"], value)
    return groups


def held_out(corpus: Path, rollouts: list[codex.Rollout], claude_dir: Path, codex_dir: Path) -> Measured:
    """Each held-out session's slope with the constants the whole shared corpora give."""
    framing, scale, _ = families.fit(families.collect(corpus))
    groups: Measured = {}
    for family, _, value in families.held_out_figures(families.collect(claude_dir), framing, scale).values():
        _add(groups, ["all", f"family {family}", "agent claude-code"], value)
    item, _ = codex.best_framing([codex.turns(r, MODEL) for r in rollouts])
    for rollout in codex.collect(codex_dir):
        for value in families.slopes([codex.turns(rollout, MODEL)], item, 0, 1.0):
            _add(groups, ["all", f"family {rollout.family}", "agent codex"], value)
    return groups


def every_agent(corpus: Path, codex_dir: Path, claude_held: Path | None, codex_held: Path | None) -> int:
    rollouts = codex.collect(codex_dir)
    for name, values in sorted(shared(corpus, rollouts).items()):
        print(f"every agent, shared, cross-validated, {name}: {families._spread(values)}")
    if claude_held is not None and codex_held is not None:
        for name, values in sorted(held_out(corpus, rollouts, claude_held, codex_held).items()):
            print(f"every agent, held-out, {name}: {families._spread(values)}")
    return 0
