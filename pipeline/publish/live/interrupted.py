"""What an interrupted in-place run left: its intents finished and recorded, its sessions found again.

A replacement records its intent before its first write in the session's directory; the next
run finishes every intent from what is on disk (`recovery.recover_intent`) and records a
committed one as the output it is. The link strategy leaves a session's path empty for a
moment: a run killed then leaves the session where that next run's discovery could not see it,
so the sessions recovery puts back under the scanned roots are added to its targets.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from pipeline.publish.live.recovery import Recovered, RecoveredState, recover_intent
from pipeline.publish.live.source import SessionTarget
from pipeline.publish.live.state_db import RecordedResult, SessionRecord, StateDb

__all__ = ["recover", "with_put_back"]


def recover(state: StateDb, config_digest: str, result: RecordedResult) -> tuple[Recovered, ...]:
    """Finish every intent an interrupted run left, recording committed ones as `result`."""
    done = []
    for intent in state.intents():
        found = recover_intent(intent)
        if found.state is RecoveredState.COMMITTED and found.live is not None:
            record = SessionRecord(
                path=str(intent.session),
                result=result,
                status="recovered",
                config_digest=config_digest,
                source_sha256=intent.frozen_sha256,
                source=found.live,  # the original's own fingerprint was not recorded
                output_sha256=intent.candidate_sha256,
                output=found.live,
                backup_path=str(intent.backup),
            )
            state.save(record, datetime.now(UTC))
        else:
            state.clear_intent(intent.session)
        done.append(found)
    return tuple(done)


def with_put_back(
    targets: list[SessionTarget], recovered: tuple[Recovered, ...], scanned: Sequence[tuple[Path, str]]
) -> list[SessionTarget]:
    """The targets, plus sessions recovery put back at their path after discovery missed them.

    The link strategy leaves a session's path empty for a moment; a run killed then leaves it
    empty until the next run's recovery puts the original back, after that run's discovery.
    """
    missed = [f for f in recovered if f.state is not RecoveredState.COMMITTED and f.live is not None]
    if not missed:  # the usual case: nothing was put back (no realpath per target)
        return targets
    pairs = {**dict(scanned), **{target.root: target.root_label for target in targets}}
    roots = {root: (os.path.realpath(root), label) for root, label in pairs.items()}
    known = {os.path.join(roots[t.root][0], t.label) for t in targets}
    added = []
    for found in missed:
        session = found.intent.session
        if str(session) in known:
            continue
        for root, (resolved, label) in roots.items():
            if Path(resolved) in session.parents:
                relative = session.relative_to(resolved).as_posix()
                added.append(SessionTarget(session, root, label, relative))
                break
    return [*targets, *added]
