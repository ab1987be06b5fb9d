"""The seam every agent whose client rebuilds a context of items passes through: a format
(`ContextFormat`: read a session into a `ContextSession`) and its judge (`ContextJudge`).

One job drives every such format (`jobs/context_*.py`, `jobs/compress/context_job.py`):

    read -> the rebuilt context, item by item (digests and the client's own token estimate)
         -> validate: findings, the six sets of a sweep, the report's `context` part
         -> tokens: tallies by content class, in the file and in what is sent; the billed truth
         -> compress: gate -> the largest safe tail within room -> the evidence of the span before
            it -> a summary -> the candidate in the agent's own compaction form -> re-read it: the
            summary item, then the original's items from the cut, digest for digest -> the judge
            resumes original and candidate in the real client -> publish

An agent plugs in by one package under `formats/` (pure reading), one under `proof/` (its
client), one under `agents/` (binding them, with its evidence and report part) and one line in
`agents/registry.py`. Nothing under `jobs/`, `execute/` or `cli/` names it.

An active-chain format (Claude Code) is processed by its own jobs; they reach its own parts in a
compaction through `ChainFormat` (below).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Protocol, runtime_checkable

from pipeline.core.compose import ComposedTranscript
from pipeline.core.index import LineIndex
from pipeline.core.partition import Partition
from pipeline.core.plan import Plan
from pipeline.core.topology.select import Topology
from pipeline.findings import Finding
from pipeline.formats.bound_rule import BoundRule
from pipeline.formats.context_items import BilledTurn, ClassTallies, SentItem, TailPlan
from pipeline.formats.line_guard import LineLimits
from pipeline.formats.rewrites import Rewrite, RewriteKind, RewriteRefusal, SentEdit
from pipeline.installed import ResumeJudge
from pipeline.proof.verdict import ExcludedText
from pipeline.read.load import SourceBytes
from pipeline.report.compression import CarriedLine, CarriedState, DeclaredBound
from pipeline.report.resume_check import ResumeCheckSection
from pipeline.report.resume_context import BilledSection, ContextSection
from pipeline.summarize.evidence.items import EvidenceItem
from pipeline.vocabulary import PartitionSet, SessionKind, SourceFormat

__all__ = [
    "BoundedTail",
    "CarriedPast",
    "ChainCut",
    "ChainFormat",
    "ChainSession",
    "ContextFormat",
    "ContextJudge",
    "ContextSession",
    "JudgedPair",
    "PartitionSets",
    "SentEditsJudge",
    "SourceStamp",
    "SpanStamp",
]

PartitionSets = Mapping[PartitionSet, frozenset[int]]
"""The lines of each of the six sets (before `core.partition.checked_partition` checks them)."""


class ContextSession(Protocol):
    """One session read: the context its client rebuilds on resume, what is wrong with it, and how
    a compaction of it is cut, evidenced and composed. Pure: the bytes are in memory."""

    @property
    def findings(self) -> tuple[Finding, ...]:
        """What validation found (file line, code, reason); damaged lines included, never raised."""
        ...

    @property
    def versions(self) -> tuple[str, ...]:
        """The client versions its records name, in file order (repeats allowed)."""
        ...

    @property
    def line_count(self) -> int:
        """Lines of the file (the partition covers each exactly once)."""
        ...

    @property
    def kind(self) -> SessionKind:
        """A main session, or a subagent's."""
        ...

    @property
    def resumable(self) -> bool:
        """Whether its client resumes it at all (a layout the current client no longer reads is not)."""
        ...

    def sent(self) -> Sequence[SentItem]:
        """Each item of the rebuilt context as the client sends it, in order."""
        ...

    def file_tokens(self) -> int:
        """The client's estimate of every record the file holds."""
        ...

    def sweep_sets(self) -> PartitionSets:
        """The six sets of a sweep: nothing summarized, the sent records kept."""
        ...

    def context_section(self, tokens: int) -> ContextSection:
        """The report's `context` part: the rebuilt context as counts and line digests, no text."""
        ...

    def class_tallies(self, estimator: str, tokenizers: Mapping[str, Callable[[str], int]]) -> ClassTallies:
        """Items and tokens by content class (and tool) over the file and over what is sent: the
        client's estimate (named `estimator`) and each tokenizer over an item's visible text."""
        ...

    def billed(self) -> BilledSection:
        """What the file records of the tokens its requests were billed for."""
        ...

    def billed_turns(self, count: Callable[[str], int]) -> tuple[BilledTurn, ...]:
        """Each billed request beside what was sent before it, counted by `count` (a real
        tokenizer); empty where the reader does not rebuild a context per request."""
        ...

    def plan_tail(self, room: int) -> TailPlan | None:
        """The largest tail within `room` tokens that starts where a cut is safe (no call split
        from its result, nothing a compaction or rewind already dropped); the smallest safe one
        when none fits (`target_met` False); None when no cut is safe."""
        ...

    def compress_sets(self, plan: TailPlan) -> PartitionSets:
        """The six sets of a compaction cutting at `plan`: summarized, kept, projected, excluded."""
        ...

    def evidence(self, plan: TailPlan) -> tuple[EvidenceItem, ...]:
        """The summarized span (the sent items before the cut) as the summarizers' evidence."""
        ...

    def summary_sent(self, summary: str) -> SentItem:
        """The item the client sends for a summary the candidate carries."""
        ...

    def compose(self, plan: TailPlan, summary: str) -> bytes:
        """The candidate in the agent's own compaction form: the summary, then the original's lines
        from the cut byte for byte (plus what the client needs to resume it as its own)."""
        ...

    def summary_line(self) -> int:
        """The candidate's line that carries the summary (`compose` puts it there)."""
        ...

    def compose_archive(self, plan: TailPlan, summary: str) -> tuple[bytes, int] | None:
        """The smaller archival form and its summary's line, for an agent whose own compaction
        keeps the summarized history in the file: the same summary and kept tail, which the client
        resumes alike, the history before the cut gone (`[compress] history`). None when `compose`
        already drops it, or this session cannot be written so."""
        ...

    def rewrite(self, kind: RewriteKind, limits: LineLimits) -> Rewrite | RewriteRefusal | None:
        """The file rewritten for `kind` (`repair`: the repair its client makes on load written in;
        `vacuum`: what it never loads dropped), its client sending the same context, or that
        context with the items the rewrite declares (`Rewrite.sent`: a repair its client does not
        make itself); a refusal why not; None when there is nothing to do or no such rewrite."""
        ...


class JudgedPair(Protocol):
    """The judge's verdict on an original and its candidate."""

    @property
    def ok(self) -> bool:
        """The candidate resumes as the summary followed by a verbatim suffix of the original (with
        no summary: as the original, item for item)."""
        ...

    def section(self, elapsed_ms: float) -> ResumeCheckSection:
        """The report's `resume_check` section: content-free differences and both sizes."""
        ...


class ContextJudge(Protocol):
    """The agent's own client as the judge of a compaction: where it is, and how it resumes a pair."""

    @property
    def client(self) -> ResumeJudge:
        """Its name and where it is found (`--judge`, the flag, the config, the pinned build, PATH)."""
        ...

    def excluded(
        self, session: ContextSession, sets: PartitionSets, candidate: bytes, min_chars: int
    ) -> tuple[ExcludedText, ...]:
        """Texts of the original's excluded records that the candidate file holds and no sent or
        summarized record does: the candidate must never send them."""
        ...

    def prove(
        self,
        original: Path,
        candidate: Path,
        *,
        executable: Path,
        timeout: float,
        limits: LineLimits,
        excluded: Sequence[ExcludedText],
        summaries: Sequence[str] | None,
    ) -> JudgedPair:
        """Resume both staged files in the client against a loopback capture server and judge what
        it sent (`summaries`: the texts the candidate's summary holds, None when unknown; empty: the
        candidate holds no summary and must send exactly what the original sends). Raises
        the client's own `JudgeError`s."""
        ...


@runtime_checkable
class SentEditsJudge(Protocol):
    """A judge that also proves a rewrite which changes what its client sends (`Rewrite.sent`: a
    repair its client does not make on load). Only a format whose rewrites declare such items needs
    one; the rewrite job refuses them from any other."""

    def prove_edits(
        self,
        original: Path,
        candidate: Path,
        *,
        executable: Path,
        timeout: float,
        limits: LineLimits,
        edits: Sequence[SentEdit],
    ) -> JudgedPair:
        """Resume both staged files in the client and judge what it sent: the candidate holds when
        it sends the original's context with exactly `edits` put in, nothing else changed. Raises
        the client's own `JudgeError`s."""
        ...


class ContextFormat(Protocol):
    """An agent's session format: how it is read, counted and judged."""

    @property
    def format(self) -> SourceFormat:
        """The format's name in reports."""
        ...

    @property
    def estimator(self) -> str:
        """The name of the client's own token estimate (what its sent items' `tokens` hold)."""
        ...

    @property
    def tokenizer(self) -> str | None:
        """The real tokenizer of the models the client runs, counted beside it when installed."""
        ...

    @property
    def compressed_sessions(self) -> bool:
        """Whether the client itself keeps sessions compressed (`.jsonl.zst`): only then is a
        compressed file read and its candidate stored compressed; else it is left as it is."""
        ...

    @property
    def rewrites(self) -> frozenset[RewriteKind]:
        """The rewrites its sessions offer (`ContextSession.rewrite`): `repair`, `vacuum`, or none."""
        ...

    @property
    def judge(self) -> ContextJudge:
        """The client that proves its compactions."""
        ...

    def read(self, data: bytes, path: PurePath | None, limits: LineLimits) -> ContextSession:
        """Decode, rebuild and judge one session's bytes (never raises for bad input); `path`: where
        the file is (a subagent's session is told by it), None for a candidate in memory."""
        ...


# The active-chain formats (Claude Code, `registry.CHAIN_PARTS`). Their compress job
# (`jobs/compress/`) plans the cut, bounds the kept tail, checks and publishes the candidate; what
# is the format's own (how a record's tool outputs are bounded and read back, the state a
# candidate carries past its summary, its compaction records and the stamps on them) it reaches
# through `ChainFormat`.


class ChainSession(Protocol):
    """A chain session as the active-chain jobs hold it (`jobs/front.Analysis`): its bytes, their
    line index and the chain chosen."""

    @property
    def source(self) -> SourceBytes: ...
    @property
    def index(self) -> LineIndex: ...
    @property
    def topology(self) -> Topology: ...
    def tokens_of(self, lines: tuple[int, ...]) -> int:
        """Seed-estimated tokens of some lines."""
        ...


class BoundedTail(Protocol):
    """The chain's tail as a candidate holds it (`jobs/compress/planning.ChainBounding`): each
    bounded line's bytes, what they declare, the rule that bounded them, and the tokens kept per
    chain position."""

    @property
    def lines(self) -> Mapping[int, bytes]: ...
    @property
    def declared(self) -> Mapping[int, tuple[DeclaredBound, ...]]: ...
    @property
    def rules(self) -> Mapping[int, BoundRule]: ...
    @property
    def kept_tokens(self) -> tuple[int, ...]: ...


@dataclass(frozen=True, slots=True)
class ChainCut:
    """A compaction the compress job decided, for the chain's format to write: the plan, the
    bounded tail, the six sets, the snapshots kept beside the tail, and the engine its stamp names."""

    plan: Plan
    bounding: BoundedTail
    partition: Partition
    side: frozenset[int]
    engine: str


@dataclass(frozen=True, slots=True)
class CarriedPast:
    """What the summarized span leaves a candidate to carry after its summary (the report's
    `projected` part): state records, background shells and agents still running, loaded tools."""

    state: tuple[CarriedState, ...]
    shells: tuple[CarriedLine, ...]
    agents: tuple[CarriedLine, ...]
    loaded_tools: tuple[str, ...]


class SourceStamp(Protocol):
    """What a candidate of ours names of its source: its digest and the leaf policy of its chain."""

    @property
    def source_sha256(self) -> str: ...
    @property
    def leaf_policy(self) -> str: ...


class SpanStamp(SourceStamp, Protocol):
    """What a compaction of ours recorded on its boundary of the span it summarized: how many
    lines and their digest, the first kept record, and the records it carries that the source's
    tail does not hold (their uuids; the source lines of the state among them)."""

    @property
    def summary_lines(self) -> int: ...
    @property
    def summary_digest(self) -> str: ...
    @property
    def head_uuid(self) -> str: ...
    @property
    def carried_uuids(self) -> frozenset[str]: ...
    @property
    def projected_lines(self) -> tuple[int, ...]: ...


class ChainFormat(Protocol):
    """A chain format's own parts in a compaction: bounding, carried state, its records, stamps."""

    @property
    def format(self) -> SourceFormat:
        """The format's name in reports."""
        ...

    @property
    def cleared_marker(self) -> str:
        """The text that stands for a cleared tool output (the client's own wording)."""
        ...

    def evidence(self, data: bytes, index: LineIndex, lines: Iterable[int]) -> tuple[EvidenceItem, ...]:
        """The summarizers' evidence from exactly `lines` of the session (1-based, in line order);
        raises `EvidenceLineOutOfRange` for a number that is not a line of the file."""
        ...

    def bound(
        self, data: bytes, rule: BoundRule, span: tuple[int, int]
    ) -> tuple[bytes, tuple[DeclaredBound, ...]] | None:
        """The record at `span` of `data` with its tool outputs bounded by `rule`, and what was
        bounded; None when nothing changes. The one rule: a checker applies it again."""
        ...

    def record_tokens(self, line: bytes, limits: LineLimits) -> int | None:
        """The seed tokens of a line written as a record, None when it does not read back as one."""
        ...

    def instruction(self, line: bytes) -> str:
        """A human record's instruction text, as the record holds it."""
        ...

    def reparented(self, line: bytes, parent: str) -> bytes:
        """The record with only its parent link changed (the one edit a kept record may take)."""
        ...

    def projected(self, session: ChainSession, plan: Plan) -> tuple[CarriedState, ...]:
        """The summarized state records the candidate of `plan` carries after its summary (the
        partition's projected lines)."""
        ...

    def carried(self, session: ChainSession, plan: Plan) -> CarriedPast:
        """What the candidate of `plan` carries after its summary, so its client resumes the same
        state, tasks and tools."""
        ...

    def compose(self, session: ChainSession, cut: ChainCut, summary_text: str) -> ComposedTranscript:
        """The candidate in the format's compaction form: its compact pair (fresh ids, stamped),
        the carried state, the kept tail. Raises `ComposeError`."""
        ...

    def compose_masked(self, session: ChainSession, cut: ChainCut) -> ComposedTranscript:
        """The masked candidate (no summary): the whole chain, its cleared outputs declared on the
        pointer. Raises `ComposeError`."""
        ...

    def compaction_stamp(self, line: bytes) -> SpanStamp | None:
        """Our stamp on a boundary line, None for a boundary that is not ours (or damage)."""
        ...

    def mask_stamp(self, data: bytes) -> SourceStamp | None:
        """Our stamp on a masked candidate, None when the file holds none."""
        ...

    def cleared_tools(self, data: bytes) -> frozenset[str]:
        """The tool calls whose outputs a compaction of ours declares cleared in the file."""
        ...
