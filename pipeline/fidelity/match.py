"""When a resumed context still carries a probe: one rule per class, each about the whole fact.

- `human-instruction`: the whole message (white space made one) stands in the context; one shorter
  than `MIN_QUOTE_CHARS` must be a line of the summary on its own (list marker, quotes, citation
  and a short label aside), since containment cannot tell whose "yes" it is; or be a kept human
  message of its own, whole (a masked middle keeps every one as it was).
- `file-modified`, `file-read`: the path stands whole (not inside a longer path), or a passage
  names its directory whole (ending in `/`) and, after it, the file's name whole: a list grouped
  by directory (`Read in /repo/src/ (2): a.py, b.py`) writes each directory once.
- `command`: the command's identity (its first 200 characters) stands in a passage that states
  its outcome (passed, failed, canceled; the words of the command itself not counted), or the
  kept records run it (a resumed agent sees that run and its current result; a run whose result
  is not there, or was cleared, carries only a command whose outcome is unknown). A whole command
  must also end there: `pytest` is not carried by `pytest -x` (after it may come the passage's
  end, a quote, bracket or stop, a citation, a dash or arrow, or a word of prose).
- `error`: the error's signature stands in a passage together with what it was about (a file
  tool's path, a fetch's URL); without a signature, the failing command or target with a word of
  failure; a rejection, its target with a word of refusal (and the user's reason when given).
  An error a later action resolved is kept only when the resolution is carried too: that
  passage says it was resolved, or the resolving action is (the command with a word of success,
  the path with the kind of action, or the kept records run it successfully).
- `identifier`: it stands whole (a port as `:8080`, `port 8080` or `PORT=8080`).
- `last-state`: its identity stands in the context.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Final

from pipeline.fidelity.outcome import states
from pipeline.fidelity.passages import ResumedContext
from pipeline.fidelity.probe_value import Probe, ProbeClass, Resolution
from pipeline.fidelity.text import (
    IDENTITY_CHARS,
    MIN_QUOTE_CHARS,
    Edge,
    found,
    occurrences,
    standalone,
    without,
)
from pipeline.summarize.evidence.shell import CommandOutcome, FileAction

__all__ = ["carried"]

_RESOLVED: Final = re.compile(
    r"(?i)\b(?:resolved|fixed|solved|worked around|now (?:passes|passing|works|succeeds)|"
    r"succeeded (?:on|after)|then passed|passed (?:on|after)|later passed)\b"
)
_ACTION_WORDS: Final = {
    FileAction.MODIFIED: re.compile(
        r"(?i)\b(?:modified|edited|wrote|written|created|updated|changed|patched|"
        r"added|deleted|removed|renamed|moved|fixed)\b"
    ),
    FileAction.READ: re.compile(r"(?i)\b(?:read|reads|opened|viewed|inspected|loaded|examined)\b"),
}
_UNKNOWN: Final = CommandOutcome.UNKNOWN  # a kept run whose result is not there (or cleared)
_CLOSERS: Final = frozenset("`\"')]},;:.!?")
_PROSE_AFTER: Final = re.compile(r" (?:\(L\d|[(—–→]|-{1,2}>? |=> |[A-Za-z]+\b(?![-./=:]))")  # noqa: RUF001
"""After a whole command: a citation, a bracket, a dash or arrow, or a word of prose (letters only, not
followed by a path or option character): not an option, a path or another argument."""
_EDGE: Final = {
    "url": Edge.URL,
    "issue": Edge.WORD,
    "ticket": Edge.WORD,
    "version": Edge.PATH,  # `v1.2.3` is not carried by `v1.2.3.4` or `av1.2.3`
}


def carried(probe: Probe, context: ResumedContext) -> bool:
    """Whether the resumed context carries this probe's fact (the rule of its class)."""
    return _RULES[probe.klass](probe, context)


def _human(probe: Probe, context: ResumedContext) -> bool:
    if probe.key in context.prompts:
        return True
    if len(probe.key) >= MIN_QUOTE_CHARS:
        return found(context.text, probe.key, Edge.WORD)
    return any(probe.key in standalone(line) for line in context.summary_lines)


def _path(probe: Probe, context: ResumedContext) -> bool:
    if found(context.text, probe.key, Edge.PATH):
        return True
    directory, slash, name = probe.key.rpartition("/")
    directory += slash
    if not directory or not name or directory not in context.text:
        return False
    return any(_listed(passage, directory, name) for passage in context.passages if directory in passage)


def _listed(passage: str, directory: str, name: str) -> bool:
    """Whether a passage names `directory` whole and, after it, `name` whole."""
    return any(
        found(passage[start + len(directory) :], name, Edge.PATH)
        for start in occurrences(passage, directory, Edge.PATH)
    )


def _stated(passage: str, fact: str, outcome: CommandOutcome, edge: Edge = Edge.WORD) -> bool:
    rest = without(passage, fact, edge)
    return rest is not None and states(rest, outcome)


def _command_ends(passage: str, end: int) -> bool:
    """Whether a whole command's occurrence ends where the passage says the command ends."""
    rest = passage[end:]
    if not rest or rest[0] in _CLOSERS:
        return True
    return rest[0] == " " and (_PROSE_AFTER.match(rest) is not None)


def _command_in(passage: str, key: str, outcome: CommandOutcome) -> bool:
    """A command stands whole in a passage that states its outcome (the command's own words aside)."""
    whole = len(key) < IDENTITY_CHARS  # an identity cut at its bound goes on in the passage
    for start in occurrences(passage, key, Edge.WORD):
        end = start + len(key)
        if whole and not _command_ends(passage, end):
            continue
        if states(passage[:start] + " " + passage[end:], outcome):
            return True
    return False


def _command(probe: Probe, context: ResumedContext) -> bool:
    known = probe.outcome in (None, CommandOutcome.UNKNOWN)
    if any(call.command == probe.key and (known or call.outcome is not _UNKNOWN) for call in context.calls):
        return True
    if probe.key not in context.text:  # every passage's text is in the whole text
        return False
    outcome = probe.outcome or CommandOutcome.UNKNOWN
    return any(probe.key in p and _command_in(p, probe.key, outcome) for p in context.passages)


def _error_passages(probe: Probe, context: ResumedContext) -> Iterator[str]:
    """The passages that carry the error itself (its resolution aside)."""
    for passage in context.passages:
        if probe.kind == "rejected":
            if (not probe.key or found(passage, probe.key, Edge.WORD)) and _stated(
                passage, probe.target, CommandOutcome.CANCELED, Edge.PATH
            ):
                yield passage
        elif probe.key:
            if found(passage, probe.key, Edge.WORD) and (
                not probe.target or found(passage, probe.target, Edge.PATH)
            ):
                yield passage
        elif _stated(passage, probe.command or probe.target, CommandOutcome.FAILED, Edge.PATH):
            yield passage


def _resolution_carried(resolution: Resolution, context: ResumedContext, own: set[str]) -> bool:
    """Whether the resolving action is carried, by a passage other than the error's `own`."""
    passages = [passage for passage in context.passages if passage not in own]
    if resolution.command:
        if any(c.command == resolution.command and c.outcome is CommandOutcome.PASSED for c in context.calls):
            return True
        return any(_command_in(p, resolution.command, CommandOutcome.PASSED) for p in passages)
    if resolution.path:
        action = resolution.action or FileAction.READ
        words = _ACTION_WORDS[action]
        return any(
            c.target == resolution.path and c.outcome is CommandOutcome.PASSED for c in context.calls
        ) or any(
            (rest := without(p, resolution.path, Edge.PATH)) is not None and words.search(rest) is not None
            for p in passages
        )
    return any(c.tool == resolution.tool and c.outcome is CommandOutcome.PASSED for c in context.calls)


def _error(probe: Probe, context: ResumedContext) -> bool:
    passages = list(_error_passages(probe, context))
    if not passages:
        return False
    if probe.resolution is None:
        return True
    if any(_RESOLVED.search(p) for p in passages):
        return True
    return _resolution_carried(probe.resolution, context, set(passages))


def _identifier(probe: Probe, context: ResumedContext) -> bool:
    if probe.kind == "port":
        port = re.escape(probe.key)
        pattern = rf"(?<!\d)(?::|PORT=|(?i:port\s+|--port[= ])){port}(?!\d)"
        return re.search(pattern, context.text) is not None
    return found(context.text, probe.key, _EDGE.get(probe.kind, Edge.WORD))


def _state(probe: Probe, context: ResumedContext) -> bool:
    return next(occurrences(context.text, probe.key, Edge.WORD), None) is not None


_RULES: Final[dict[ProbeClass, Callable[[Probe, ResumedContext], bool]]] = {
    ProbeClass.HUMAN: _human,
    ProbeClass.FILE_MODIFIED: _path,
    ProbeClass.FILE_READ: _path,
    ProbeClass.COMMAND: _command,
    ProbeClass.ERROR: _error,
    ProbeClass.IDENTIFIER: _identifier,
    ProbeClass.LAST_STATE: _state,
}
