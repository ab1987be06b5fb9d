"""Claude Code's candidate records: the compact pair and its stamp, and what it carries past it.

The compress job decides the cut and bounds the tail (`ChainCut`); this module writes them in
Claude Code's own compaction form (`core.compose`): the boundary stamped with what we did
(`compactMetadata.sessionCompaction`), the summarized span's resume state and loaded tools
(`formats/claude_code/resume_state`), and a record for each background shell or agent Claude Code
would report unfinished on resume (`formats/claude_code/tasks`).
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import msgspec

from pipeline import __version__
from pipeline.agents.protocol import BoundedTail, CarriedPast, ChainCut, ChainSession
from pipeline.core.compose import (
    ComposedTranscript,
    ComposeInput,
    MaskInput,
    PairIds,
    WrittenRecord,
    compose,
    compose_masked,
)
from pipeline.core.plan import Plan
from pipeline.estimate.seed import RECORD_ALLOWANCE, estimate_text
from pipeline.formats.claude_code.build import (
    AgentStamp,
    BoundStamp,
    LeafStamp,
    ShellStamp,
    StateStamp,
    ToolMetadata,
    claude_timestamp,
)
from pipeline.formats.claude_code.resume_state import StateRecord, discovered_tools, resume_state
from pipeline.formats.claude_code.tasks import (
    BackgroundAgent,
    BackgroundShell,
    may_start_shells,
    task_status,
    unfinished_agents,
    unfinished_shells,
)
from pipeline.vocabulary import LeafSource, PartitionSet

__all__ = ["carried_past", "compose_candidate", "compose_masked_candidate", "projected_state"]


def projected_state(session: ChainSession, plan: Plan) -> tuple[StateRecord, ...]:
    """The summarized attachment records the candidate carries after its summary, so Claude Code
    folds the same resume state (`pipeline.formats.claude_code.resume_state`)."""
    data, index = session.source.data, session.index
    return resume_state((line, index.raw_line(data, line)) for line in plan.summary_lines)


def carried_shells(session: ChainSession, plan: Plan) -> tuple[BackgroundShell, ...]:
    """The background shells Claude Code reports unfinished on resume that the summarized span
    started: the candidate writes a `task_status` record for each (`formats.claude_code.tasks`)."""
    data, index, summarized = session.source.data, session.index, frozenset(plan.summary_lines)
    if not may_start_shells(data):
        return ()
    shells = unfinished_shells((line, index.raw_line(data, line)) for line in session.topology.chain)
    return tuple(shell for shell in shells if shell.line in summarized)


def carried_agents(session: ChainSession, plan: Plan) -> tuple[BackgroundAgent, ...]:
    """The background agents Claude Code reports unfinished on resume that the summarized span
    launched (and did not re-dispatch): the candidate writes a record carrying each one's launch
    result (`formats.claude_code.tasks`)."""
    data, index, summarized = session.source.data, session.index, frozenset(plan.summary_lines)
    if not may_start_shells(data):
        return ()
    agents = unfinished_agents((line, index.raw_line(data, line)) for line in session.topology.chain)
    return tuple(
        agent for agent in agents if agent.line in summarized and agent.redispatched_at not in summarized
    )


def loaded_tools(session: ChainSession, plan: Plan) -> tuple[str, ...]:
    """The deferred tools the summarized span loaded, which the new boundary carries as loaded."""
    data, index = session.source.data, session.index
    return discovered_tools((line, index.raw_line(data, line)) for line in plan.summary_lines)


def carried_past(session: ChainSession, plan: Plan) -> CarriedPast:
    """Everything the candidate of `plan` carries after its summary."""
    return CarriedPast(
        projected_state(session, plan),
        carried_shells(session, plan),
        carried_agents(session, plan),
        loaded_tools(session, plan),
    )


def _bound_stamps(bounding: BoundedTail, raw_lines: tuple[int, ...]) -> list[BoundStamp]:
    return [
        BoundStamp(
            item.tool_use_id,
            item.part.value,
            bounding.rules[line].limit,
            bounding.rules[line].drop_media,
            item.original_bytes,
            item.kept_bytes,
            item.sha256,
            item.cleared,
        )
        for line in raw_lines
        for item in bounding.declared.get(line, ())
    ]


def tool_metadata(
    session: ChainSession,
    cut: ChainCut,
    post_tokens: int,
    state: tuple[StateRecord, ...] = (),
    shells: tuple[tuple[BackgroundShell, WrittenRecord], ...] = (),
    agents: tuple[tuple[BackgroundAgent, WrittenRecord], ...] = (),
) -> ToolMetadata:
    """What the candidate records about this compaction (`compactMetadata.sessionCompaction`)."""
    topology, plan, partition = session.topology, cut.plan, cut.partition
    return ToolMetadata(
        tool="session-compaction",
        tool_version=__version__,
        engine=cut.engine,
        preserve_mode="active-chain" if topology.branch_isolation else "physical-tail",
        leaf=LeafStamp(topology.leaf_uuid, topology.leaf_source.value, topology.policy.value),
        strict_status=topology.strict.status.value,
        source_sha256=session.source.sha256,
        counts={name.value: partition[name].count for name in PartitionSet},
        digests={name.value: partition[name].digest for name in PartitionSet},
        pre_estimated_tokens=session.tokens_of(topology.chain),
        post_estimated_tokens=post_tokens,
        cut_reasons=[note.value for note in plan.reasons],
        bounded_tool_outputs=_bound_stamps(cut.bounding, plan.raw_lines),
        projected_state=[
            StateStamp(r.line, r.kind.value, session.index.entry(r.line).uuid or "") for r in state
        ],
        carried_background_shells=[
            ShellStamp(shell.task_id, shell.tool_use_id, shell.line, record.uuid) for shell, record in shells
        ],
        carried_background_agents=[AgentStamp(a.agent_id, a.line, record.uuid) for a, record in agents]
        or msgspec.UNSET,
    )


def fresh_ids() -> PairIds:
    """New uuids for the compact pair and the time it is written (the one clock read of a run)."""
    return PairIds(str(uuid.uuid4()), str(uuid.uuid4()), claude_timestamp(datetime.now(UTC)))


def _bounded_kept(cut: ChainCut) -> dict[int, bytes]:
    """The kept lines the candidate holds bounded, by source line."""
    lines = cut.bounding.lines
    return {line: lines[line] for line in cut.plan.raw_lines if line in lines}


def pointed_leaf(session: ChainSession) -> int | None:
    """The leaf the source's pointer names, which Claude Code resumed it at (None when another
    rule chose it: a newest leaf it infers is the chain's last record, as the candidate's is)."""
    topology = session.topology
    return topology.leaf_line if topology.leaf_source is LeafSource.LAST_PROMPT else None


def compose_candidate(session: ChainSession, cut: ChainCut, summary_text: str) -> ComposedTranscript:
    """The candidate: the compact pair (fresh ids), the carried state and records, the kept tail."""
    ids = fresh_ids()
    index, topology, plan = session.index, session.topology, cut.plan
    pointer = topology.strict.pointer_line
    state = projected_state(session, plan)
    shells = tuple((s, WrittenRecord(str(uuid.uuid4()), s)) for s in carried_shells(session, plan))
    agents = tuple((a, WrittenRecord(str(uuid.uuid4()), a)) for a in carried_agents(session, plan))
    carried = {record.line for record in state} | ({pointer} if pointer else set())
    control = tuple(sorted(cut.partition[PartitionSet.CONTROL_PROJECTION].lines - carried))
    last_summarized = index.record(plan.summary_lines[-1]) if plan.summary_lines else None
    lineage = topology.lineage
    kept = sum(cut.bounding.kept_tokens[plan.cut :]) + session.tokens_of(tuple(sorted(carried - {pointer})))
    written = sum(estimate_text(str(task_status(shell))) + RECORD_ALLOWANCE for shell, _ in shells)
    written += sum(estimate_text(str(agent.launch_result())) + RECORD_ALLOWANCE for agent, _ in agents)
    post_tokens = kept + written + estimate_text(summary_text) + RECORD_ALLOWANCE
    return compose(
        ComposeInput(
            data=session.source.data,
            index=index,
            raw_lines=plan.raw_lines,
            side_lines=tuple(sorted(cut.side)),
            control_lines=control,
            summary_text=summary_text,
            pointer_line=pointer,
            session_id=lineage.current_session if lineage and lineage.transitions else None,
            logical_parent=last_summarized.uuid if last_summarized else None,
            metadata=tool_metadata(session, cut, post_tokens, state, shells, agents),
            pre_tokens=session.tokens_of(topology.chain),
            ids=ids,
            bounded=_bounded_kept(cut),
            state_lines=tuple(record.line for record in state),
            written=tuple(record for _, record in (*shells, *agents)),
            discovered_tools=loaded_tools(session, plan),
            leaf_line=pointed_leaf(session),
        )
    )


def compose_masked_candidate(session: ChainSession, cut: ChainCut) -> ComposedTranscript:
    """The masked candidate: the chain as it is but for its cleared outputs, declared on the pointer."""
    plan, pointer = cut.plan, session.topology.strict.pointer_line
    return compose_masked(
        MaskInput(
            session.source.data,
            session.index,
            plan.raw_lines,
            tuple(sorted(cut.side)),
            tuple(sorted(cut.partition[PartitionSet.CONTROL_PROJECTION].lines - {pointer})),
            pointer,
            tool_metadata(session, cut, plan.planned_tokens),
            _bounded_kept(cut),
            pointed_leaf(session),
        )
    )
