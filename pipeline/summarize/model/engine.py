"""Model-written summaries: the engine behind `write_model_summary` (seeds 001 and 004).

The summarized evidence becomes redacted pack entries cut into turns. When their mandatory part
fits one request, one grounded call writes the checkpoint; when it does not, or that call comes
back truncated or too long, turns are packed into at most 32 chunks a round, the chunks are
summarized concurrently under the run's limiter, and their partial checkpoints are reduced in
further rounds, at most 4. Every answer passes the grounding gate, with one repair call. The
deterministic appendix is added by this code, never by a model. Failures end in one typed
outcome with counts only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final

import anyio
import anyio.to_thread

from pipeline.summarize.evidence.items import EvidenceItem
from pipeline.summarize.model.calls import CallLedger, RetryPolicy, call_model
from pipeline.summarize.model.finish import AppendixOptions, with_appendix
from pipeline.summarize.model.grounding import (
    GroundingDefect,
    GroundingEvidence,
    check_answer,
    cited_lines,
    defect_counts,
    normalize_answer,
)
from pipeline.summarize.model.limiter import CallLimiter, RequestOverRateLimit
from pipeline.summarize.model.outcomes import (
    STILL_DEFECTIVE,
    DefectNote,
    FailureFacts,
    RepairFacts,
    SummaryAccount,
    SummaryFailed,
    SummaryFailure,
    SummaryOutcome,
)
from pipeline.summarize.model.pack import (
    AnchorKind,
    MandatoryOverflow,
    PackEntry,
    PackOptions,
    anchor_texts,
    entries_of,
    fit_entries,
)
from pipeline.summarize.model.prices import BilledPrices
from pipeline.summarize.model.prompts import Partial, fixed_overhead_tokens, repair_request, summary_request
from pipeline.summarize.model.providers.base import (
    InputTooLong,
    ModelReply,
    ModelRequest,
    ProviderAborted,
    ProviderError,
    StopKind,
    SummaryProvider,
)
from pipeline.summarize.model.redaction import RedactionCounts, redact, redactors
from pipeline.summarize.model.reduction import (
    MAX_CHUNKS_PER_ROUND,
    MAX_REDUCTION_DEPTH,
    Budget,
    GroupOverBudget,
    SemanticGroup,
    history_groups,
    merged_evidence,
    partial_group,
    partition,
)
from pipeline.summarize.model.run_budget import RunBudgetReached

__all__ = [
    "AppendixOptions",
    "ModelServices",
    "ModelSummary",
    "ModelSummaryOptions",
    "RequestBudget",
    "request_budget",
    "write_model_summary",
]

_SPLITTABLE: Final = frozenset({SummaryOutcome.OUTPUT_TRUNCATED, SummaryOutcome.INPUT_OVERFLOW})
_STOP_OUTCOMES: Final = {
    StopKind.REFUSED: SummaryOutcome.REFUSED,
    StopKind.CONTENT_FILTERED: SummaryOutcome.CONTENT_FILTERED,
    StopKind.TRUNCATED: SummaryOutcome.OUTPUT_TRUNCATED,
}


@dataclass(frozen=True, slots=True)
class RequestBudget:
    """The model's context window and what is kept out of it for everything but evidence."""

    context_window_tokens: int
    max_output_tokens: int
    provider_reserve_tokens: int
    safety_margin: float


@dataclass(frozen=True, slots=True)
class ModelSummaryOptions:
    """Everything one model summary needs to know, built from config at the edge."""

    budget: RequestBudget
    pack: PackOptions
    retry: RetryPolicy
    appendix: AppendixOptions
    planned_output_tokens: int
    prices: BilledPrices  # what the billed tokens cost, in each summary's account


@dataclass(frozen=True, slots=True)
class ModelServices:
    """The run's shared parts: the provider (holding the one HTTP client), the limiter, an abort signal.

    `pack_threads` bounds the threads that build evidence packs (redaction and estimates are CPU
    work): one or two leave the event loop its share of the interpreter, so the first sessions'
    calls go out while later packs are still being built.
    """

    provider: SummaryProvider
    limiter: CallLimiter
    abort: anyio.Event | None
    pack_threads: anyio.CapacityLimiter


@dataclass(frozen=True, slots=True)
class ModelSummary:
    """A grounded checkpoint with the deterministic appendix, the lines it cites, and its account."""

    text: str
    cited_lines: tuple[int, ...]
    account: SummaryAccount


@dataclass(frozen=True, slots=True)
class _Run:
    options: ModelSummaryOptions
    services: ModelServices
    ledger: CallLedger
    budget: Budget


def request_budget(budget: RequestBudget, pack: PackOptions, human_count: int) -> Budget:
    """Evidence tokens and characters one request may carry; FIXED_OVERHEAD_EXCEEDS_BUDGET if none."""
    overhead = fixed_overhead_tokens(human_count)
    margin = int(budget.context_window_tokens * budget.safety_margin + 0.999)
    available = (
        budget.context_window_tokens - budget.max_output_tokens - budget.provider_reserve_tokens - margin
    )
    if available - overhead <= 0:
        facts = FailureFacts(input_tokens=overhead, limit_tokens=max(available, 0))
        raise SummaryFailed(SummaryOutcome.FIXED_OVERHEAD_EXCEEDS_BUDGET, facts)
    return Budget(min(available - overhead, pack.token_budget), pack.char_budget)


async def write_model_summary(
    evidence: Sequence[EvidenceItem], options: ModelSummaryOptions, services: ModelServices
) -> ModelSummary | SummaryFailure:
    """A model-written, grounded checkpoint of `evidence`, or the typed reason there is none."""
    started = anyio.current_time()
    ledger = CallLedger()
    # Redacting and measuring a large session is CPU work: in a thread, so other sessions' calls go on.
    limit = options.pack.max_optional_chars
    entries = await anyio.to_thread.run_sync(entries_of, evidence, limit, limiter=services.pack_threads)
    redactions = RedactionCounts.summed(entry.redactions for entry in entries)
    outcome: str | SummaryFailed | None = None
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as group:
            if services.abort is not None:
                group.start_soon(_cancel_on, services.abort, scope)
            outcome = await _checkpoint_or_failure(entries, options, services, ledger)
            group.cancel_scope.cancel()
    account = _account(services.provider, ledger, anyio.current_time() - started, redactions, options.prices)
    if outcome is None:
        return SummaryFailure(SummaryOutcome.ABORTED, FailureFacts(attempts=ledger.attempts), account)
    if isinstance(outcome, SummaryFailed):
        return SummaryFailure(outcome.outcome, outcome.facts, account)
    text = with_appendix(outcome, evidence, options.appendix)
    return ModelSummary(text, cited_lines(outcome), account)


async def _cancel_on(abort: anyio.Event, scope: anyio.CancelScope) -> None:
    await abort.wait()
    scope.cancel()


async def _checkpoint_or_failure(
    entries: Sequence[PackEntry], options: ModelSummaryOptions, services: ModelServices, ledger: CallLedger
) -> str | SummaryFailed:
    try:
        humans = sum(1 for entry in entries if entry.kind is AnchorKind.HUMAN)
        run = _Run(options, services, ledger, request_budget(options.budget, options.pack, humans))
        return await _summarize(history_groups(entries), run)
    except SummaryFailed as failure:
        return failure


def _account(
    provider: SummaryProvider,
    ledger: CallLedger,
    seconds: float,
    redactions: RedactionCounts,
    prices: BilledPrices,
) -> SummaryAccount:
    tokens_in, tokens_out = ledger.billed_input_tokens, ledger.billed_output_tokens
    read, written = ledger.cache_read_tokens, ledger.cache_write_tokens
    return SummaryAccount(
        provider=provider.name.value,
        model=provider.model,
        calls=ledger.calls,
        retries=ledger.retries,
        repairs=ledger.repairs,
        billed_input_tokens=ledger.billed_input_tokens,
        billed_output_tokens=ledger.billed_output_tokens,
        cache_read_tokens=ledger.cache_read_tokens,
        cache_write_tokens=ledger.cache_write_tokens,
        cost_usd=prices.cost(provider.model, tokens_in, tokens_out, read, written),
        calls_without_usage=ledger.calls_without_usage,
        rate_limit_pauses=ledger.pauses,
        retry_wait_seconds=ledger.waited_seconds,
        reduction_depth=ledger.depth,
        chunks=ledger.chunks,
        wall_seconds=seconds,
        redactions=redactions,
        redacted_by=redactors(),
        optional_evidence_omitted=ledger.optional_omitted,
    )


# ---------------------------------------------------------------------------------------------- rounds
async def _summarize(groups: tuple[SemanticGroup, ...], run: _Run) -> str:
    """The checkpoint text: one request when it fits, else rounds of chunks, then the final merge."""
    forced = False
    while True:
        if not forced and _fits(groups, run.budget):
            try:
                return (await _write(groups, run))[0]
            except SummaryFailed as failure:
                if failure.outcome not in _SPLITTABLE or len(groups) < 2:
                    raise
                forced = True  # too long a prompt or answer: split it, whatever the estimate said
        if run.ledger.depth == MAX_REDUCTION_DEPTH:
            tokens, limit = _mandatory(groups), run.budget.tokens
            facts = FailureFacts(input_tokens=tokens, limit_tokens=limit, depth=MAX_REDUCTION_DEPTH)
            raise SummaryFailed(SummaryOutcome.INPUT_OVERFLOW, facts)
        groups = await _round(groups, _split_budget(groups, run.budget) if forced else run.budget, run)
        forced = False


async def _round(groups: tuple[SemanticGroup, ...], budget: Budget, run: _Run) -> tuple[SemanticGroup, ...]:
    """One reduction round: chunks summarized concurrently, their partials before the rest."""
    try:
        chunks = partition(groups, budget, MAX_CHUNKS_PER_ROUND)
    except GroupOverBudget as over:
        raise over.refusal() from None
    run.ledger.depth += 1
    run.ledger.chunks += len(chunks)
    partials = await _chunks(chunks, run)
    reduced = (*partials, *groups[sum(len(chunk) for chunk in chunks) :])
    before, after = _mandatory(groups), _mandatory(reduced)
    if after >= before:
        facts = FailureFacts(before_tokens=before, after_tokens=after, depth=run.ledger.depth)
        raise SummaryFailed(SummaryOutcome.REDUCTION_NO_PROGRESS, facts)
    return reduced


async def _chunks(chunks: Sequence[tuple[SemanticGroup, ...]], run: _Run) -> tuple[SemanticGroup, ...]:
    """Every chunk's partial, written concurrently; the first failure cancels the rest."""
    written: dict[int, SemanticGroup] = {}
    failures: list[SummaryFailed] = []

    async def one(index: int, chunk: tuple[SemanticGroup, ...], scope: anyio.CancelScope) -> None:
        try:
            answer, evidence = await _write(chunk, run)
        except SummaryFailed as failure:
            failures.append(failure)
            scope.cancel()
            return
        partial = Partial(redact(answer).text, chunk[0].first_line, chunk[-1].last_line)
        written[index] = partial_group(partial, evidence.humans, evidence)

    async with anyio.create_task_group() as group:
        for index, chunk in enumerate(chunks):
            group.start_soon(one, index, chunk, group.cancel_scope)
    if failures:
        raise failures[0]
    return tuple(written[index] for index in range(len(chunks)))


def _fits(groups: Sequence[SemanticGroup], budget: Budget) -> bool:
    chars = sum(group.mandatory_chars for group in groups)
    return _mandatory(groups) <= budget.tokens and chars <= budget.chars


def _mandatory(groups: Sequence[SemanticGroup]) -> int:
    return sum(group.mandatory_tokens for group in groups)


def _split_budget(groups: Sequence[SemanticGroup], budget: Budget) -> Budget:
    """A budget that cuts these groups into at least two chunks (a request that fit, but failed)."""
    half_tokens = -(-sum(group.tokens for group in groups) // 2)
    half_chars = -(-sum(group.chars for group in groups) // 2)
    largest = max(groups, key=lambda group: group.mandatory_tokens)
    tokens = min(budget.tokens, max(half_tokens, largest.mandatory_tokens))
    return Budget(tokens, min(budget.chars, max(half_chars, largest.mandatory_chars)))


# ---------------------------------------------------------------------------------------------- calls
async def _write(groups: Sequence[SemanticGroup], run: _Run) -> tuple[str, GroundingEvidence]:
    """One grounded checkpoint of `groups`: its pack, the call, the gate, at most one repair."""
    partials = [group.partial for group in groups if group.partial is not None]
    partial_tokens = sum(group.tokens for group in groups if group.partial is not None)
    partial_chars = sum(group.chars for group in groups if group.partial is not None)
    entries = [entry for group in groups for entry in group.entries]
    try:
        room = Budget(run.budget.tokens - partial_tokens, run.budget.chars - partial_chars)
        shown, omitted = fit_entries(entries, room.tokens, room.chars)
    except MandatoryOverflow as over:
        facts = FailureFacts(input_tokens=over.tokens + partial_tokens, limit_tokens=run.budget.tokens)
        raise SummaryFailed(SummaryOutcome.INPUT_OVERFLOW, facts) from None
    run.ledger.optional_omitted += omitted
    own = GroundingEvidence(
        frozenset(entry.line for entry in shown),
        tuple(sorted({entry.line for entry in shown if entry.kind is AnchorKind.HUMAN})),
        anchor_texts(shown),
    )
    evidence = merged_evidence([own, *(group.evidence for group in groups if group.evidence is not None)])
    max_output = run.options.budget.max_output_tokens
    request = summary_request(shown, partials, evidence.humans, omitted, max_output)
    return await _grounded(request, evidence, run), evidence


async def _grounded(request: ModelRequest, evidence: GroundingEvidence, run: _Run) -> str:
    """A grounded answer; a failure that gives up after the repair lists both answers' defects."""
    answer = _usable(await _call(request, run))
    defects = check_answer(answer, evidence)
    if not defects:
        return answer
    run.ledger.repairs += 1
    max_output = run.options.budget.max_output_tokens
    repair = repair_request(request, redact(answer).text, defects, max_output)
    asked = _noted(defects)
    try:
        answer = _usable(await _call(repair, run))
    except SummaryFailed as failure:  # the repair call itself ended badly: say how, and what it was to fix
        facts = replace(failure.facts, repair_call=RepairFacts(asked, failure.outcome.value))
        raise SummaryFailed(failure.outcome, facts) from None
    left = check_answer(answer, evidence)
    if left:
        repaired = RepairFacts(asked, STILL_DEFECTIVE, _noted(left))
        facts = FailureFacts(defects=defect_counts(left), repair_call=repaired)
        raise SummaryFailed(SummaryOutcome.GROUNDING_FAILED, facts)
    return answer


def _noted(defects: Sequence[GroundingDefect]) -> tuple[DefectNote, ...]:
    """Defects as a report lists them: codes, sections, lines and anchors only."""
    return tuple(
        DefectNote(
            defect.code.value,
            defect.structure.value if defect.structure is not None else None,
            defect.heading.value if defect.heading is not None else None,
            defect.answer_line,
            defect.anchor,
        )
        for defect in defects
    )


def _usable(reply: ModelReply) -> str:
    """The normalized text of a reply that ended well; the stop's outcome otherwise."""
    if reply.stop in _STOP_OUTCOMES:
        raise SummaryFailed(_STOP_OUTCOMES[reply.stop])
    answer = normalize_answer(reply.text)
    if not answer:
        raise SummaryFailed(SummaryOutcome.EMPTY)
    return answer


async def _call(request: ModelRequest, run: _Run) -> ModelReply:
    """`call_model`, its provider errors turned into outcomes with counts."""
    ledger, services = run.ledger, run.services
    try:
        return await call_model(request, services.provider, services.limiter, run.options.retry, ledger)
    except InputTooLong as exc:
        facts = FailureFacts(limit_tokens=run.budget.tokens, http_status=exc.status, attempts=ledger.attempts)
        raise SummaryFailed(SummaryOutcome.INPUT_OVERFLOW, facts) from None
    except RequestOverRateLimit as exc:
        facts = FailureFacts(input_tokens=exc.tokens, limit_tokens=exc.limit)
        raise SummaryFailed(SummaryOutcome.INPUT_OVERFLOW, facts) from None
    except ProviderAborted:
        raise SummaryFailed(SummaryOutcome.ABORTED, FailureFacts(attempts=ledger.attempts)) from None
    except RunBudgetReached as exc:
        facts = FailureFacts(input_tokens=exc.tokens, limit_tokens=exc.left)
        raise SummaryFailed(SummaryOutcome.RUN_BUDGET_REACHED, facts) from None
    except ProviderError:
        facts = FailureFacts(http_status=ledger.last_status, attempts=ledger.attempts)
        raise SummaryFailed(SummaryOutcome.PROVIDER_FAILURE, facts) from None
