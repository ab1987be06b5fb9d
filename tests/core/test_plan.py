"""The planner on its own: where the cut goes and what it never splits.

Sessions come from the transcript builder with random shapes (multi-fragment messages, parallel
calls, long single-turn tasks, Claude Code's own compactions); every plan is checked against the
rules the cut must obey, computed here from the records themselves.
"""

from __future__ import annotations

import random
from itertools import pairwise

import pytest

from pipeline.core.check.candidate import contract_messages
from pipeline.core.check.contract import protected_round, restate, restated_instructions
from pipeline.core.plan import Plan, PlanOutcome, plan_cut, protected_round_of, semantic_groups
from pipeline.formats.claude_code.records import message_text
from pipeline.reasons import PlanNote
from pipeline.testing import ToolSpec, TranscriptBuilder
from pipeline.testing.settings import cut_options
from tests.support.records import jsonl, rec
from tests.support.resolved import Resolved, resolve

RESERVE = 500  # tokens kept for the summary


def _turn(b: TranscriptBuilder, rng: random.Random, number: int, steps: int) -> None:
    b.user(f"request {number}: " + "please change the module " * rng.randint(1, 20))
    for step in range(steps):
        shape = rng.random()
        output = "line of output\n" * rng.randint(5, 200)
        if shape < 0.2:
            b.parallel_tool_calls(
                [ToolSpec("Read", {"file_path": f"/r/{number}_{step}_{k}.py"}, output) for k in range(3)]
            )
        elif shape < 0.4:
            lead = b.assistant(b.thinking("considering the options " * 10), tool_follows=True)
            b.tool_call("Bash", {"command": f"make test-{step}"}, output, message_id=lead.message_id)
        else:
            b.tool_call("Edit", {"file_path": f"/r/{number}_{step}.py", "old_string": "a"}, output)
    b.assistant(b.text(f"turn {number} done " * rng.randint(1, 30)))


def random_session(seed: int, *, turns: int, compact_at: int | None = None) -> Resolved:
    rng = random.Random(seed)
    b = TranscriptBuilder(seed=seed)
    for number in range(turns):
        if number == compact_at:
            b.compact("Summary of the work so far. " * 20)
        _turn(b, rng, number, rng.randint(0, 6))
    return resolve(b.to_bytes())


def _assert_obeys_the_rules(session: Resolved, plan: Plan, min_recent: int) -> None:
    chain = session.chain
    assert plan.summary_lines + plan.raw_lines == chain
    if plan.outcome is not PlanOutcome.CUT:
        assert plan.summary_lines == () and plan.raw_lines == chain
        return
    summarized = [session.record(line) for line in plan.summary_lines]
    kept = [session.record(line) for line in plan.raw_lines]
    # No message is split: its fragments are all on one side.
    assert not {r.message_id for r in summarized if r.message_id} & {
        r.message_id for r in kept if r.message_id
    }
    # Every result kept raw has its call kept raw (or the call is outside the chain altogether).
    summarized_uses = {tool for r in summarized for tool in r.tool_uses}
    assert not summarized_uses & {tool for r in kept for tool in r.tool_results}
    assert not summarized_uses & {r.attachment_tool_use for r in kept if r.attachment_tool_use}
    # The protected round stays raw, and so do the most recent records asked for.
    assert plan.cut <= plan.protected.start
    assert len(plan.raw_lines) >= min(min_recent, len(chain) - plan.cut)
    # A compact pair already in the chain is folded into the summary, never kept raw.
    assert not any(r.compact_boundary or r.compact_summary for r in kept)
    # The tail starts where an API message starts.
    assert kept[0].is_api


@pytest.mark.parametrize("seed", range(24))
def test_random_sessions_are_cut_where_nothing_is_split(seed: int) -> None:
    session = random_session(seed, turns=random.Random(seed).randint(2, 14))
    for ratio in (0.1, 0.3, 0.6):
        options = cut_options(target_ratio=ratio, min_recent_records=4, summary_char_budget=4000)
        plan = plan_cut(session.index, session.chain, options, summary_tokens=RESERVE)
        _assert_obeys_the_rules(session, plan, min_recent=4)


@pytest.mark.parametrize("seed", range(8))
def test_a_prior_compaction_is_summarized_with_the_history_before_it(seed: int) -> None:
    session = random_session(seed, turns=10, compact_at=3)
    options = cut_options(target_ratio=0.2, min_recent_records=4, summary_char_budget=4000)
    plan = plan_cut(session.index, session.chain, options, summary_tokens=RESERVE)
    _assert_obeys_the_rules(session, plan, min_recent=4)
    if plan.outcome is PlanOutcome.CUT:
        assert PlanNote.PRIOR_COMPACT_PAIR_FOLDED in plan.reasons
        assert any(session.record(line).compact_summary for line in plan.summary_lines)


def test_a_smaller_target_never_keeps_more_raw() -> None:
    session = random_session(7, turns=16)
    kept = []
    for ratio in (0.8, 0.5, 0.3, 0.15, 0.05):
        options = cut_options(target_ratio=ratio, min_recent_records=4, summary_char_budget=4000)
        kept.append(len(plan_cut(session.index, session.chain, options, summary_tokens=RESERVE).raw_lines))
    assert kept == sorted(kept, reverse=True) and kept[0] > kept[-1]


def test_a_chain_that_fits_is_left_whole() -> None:
    b = TranscriptBuilder(seed=3)
    b.user("one small question")
    b.assistant(b.text("one small answer"))
    session = resolve(b.to_bytes())
    options = cut_options(target_estimated_tokens=10_000)
    plan = plan_cut(session.index, session.chain, options, summary_tokens=RESERVE)
    assert plan.outcome is PlanOutcome.FITS and plan.reasons == (PlanNote.WHOLE_CHAIN_FITS,)
    assert plan.raw_lines == session.chain


def test_one_long_task_is_cut_between_its_completed_exchanges() -> None:
    b = TranscriptBuilder(seed=5)
    b.user("refactor everything in one go")
    for step in range(40):
        b.tool_call("Bash", {"command": f"step {step}"}, "output line\n" * 300)
    b.assistant(b.text("all done"))
    session = resolve(b.to_bytes())
    options = cut_options(target_ratio=0.2, min_recent_records=4, summary_char_budget=4000)
    plan = plan_cut(session.index, session.chain, options, summary_tokens=RESERVE)
    assert plan.outcome is PlanOutcome.CUT and PlanNote.CUT_INSIDE_LONG_TURN in plan.reasons
    _assert_obeys_the_rules(session, plan, min_recent=4)
    assert session.record(session.chain[plan.cut]).tool_uses  # the tail opens on a tool call
    # The turn's instruction itself is summarized; keeping the turn whole leaves no cut, and says
    # so rather than that nothing older than the protected round exists.
    whole = plan_cut(session.index, session.chain, options, summary_tokens=RESERVE, keep_protected_turn=True)
    assert whole.outcome is PlanOutcome.NO_CUT and whole.reasons == (PlanNote.PROTECTED_TURN_KEPT_WHOLE,)


def test_turns_group_a_prompt_with_all_its_work() -> None:
    session = random_session(11, turns=6)
    records = [session.record(line) for line in session.chain]
    groups = semantic_groups(records)
    assert [g.start for g in groups] == [
        i
        for i, r in enumerate(records)
        if r.role == "user" and r.is_api and "T" in r.blocks and not r.tool_results
    ]
    assert groups[-1].end == len(records)
    assert all(a.end == b.start for a, b in pairwise(groups))


def test_a_call_and_its_late_result_are_never_separated() -> None:
    """A result that arrives after later assistant messages (a background task) binds the span."""
    big = "x" * 3000
    tool = [{"type": "tool_use", "id": "toolu_late", "name": "Bash", "input": {"command": "sleep"}}]
    result = [{"type": "tool_result", "tool_use_id": "toolu_late", "content": "done"}]
    records = [rec("user", "u0", text="start a long task"), rec("assistant", "call", "u0", content=tool)]
    for n in range(30):  # assistant messages of their own between the call and its result
        records.append(
            rec("assistant", f"mid{n}", records[-1]["uuid"], content=[{"type": "text", "text": big}])
        )
    records.append(rec("user", "late", records[-1]["uuid"], text=result))
    records.append(rec("assistant", "end", "late"))
    records.append(rec("user", "u1", "end", text="one more small thing"))
    for n in range(3):
        use = [{"type": "tool_use", "id": f"toolu_{n}", "name": "Read", "input": {"file_path": "f"}}]
        done = [{"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": "ok"}]
        records.append(rec("assistant", f"c{n}", records[-1]["uuid"], content=use))
        records.append(rec("user", f"r{n}", f"c{n}", text=done))
    records.append(rec("assistant", "fin", records[-1]["uuid"]))
    session = resolve(jsonl(records))
    assert len(session.chain) == len(records)
    options = cut_options(target_ratio=0.3, min_recent_records=1, summary_char_budget=4000)
    plan = plan_cut(session.index, session.chain, options, summary_tokens=RESERVE)
    assert plan.outcome is PlanOutcome.CUT
    _assert_obeys_the_rules(session, plan, min_recent=1)
    kept = {session.record(line).uuid for line in plan.raw_lines}
    assert "call" in kept or "late" not in kept


def _long_session(turns: int, output_lines: int) -> Resolved:
    b = TranscriptBuilder(seed=21)
    for turn in range(turns):
        b.user(f"turn {turn}: run the next step")
        for step in range(3):
            b.tool_call(
                "Bash", {"command": f"step {turn}.{step}"}, "output line of the build\n" * output_lines
            )
        b.assistant(b.text(f"turn {turn} done"))
    return resolve(b.to_bytes())


def test_the_tail_kept_is_the_longest_that_fits_the_goal() -> None:
    session = _long_session(30, 200)
    options = cut_options(target_ratio=0.3, min_recent_records=0)
    plan = plan_cut(session.index, session.chain, options, summary_tokens=RESERVE)
    tokens = [session.record(line).tokens for line in session.chain]
    assert plan.goal_tokens == round(0.3 * sum(tokens))
    assert plan.planned_tokens <= plan.goal_tokens and not plan.target_missed
    # One more turn kept raw would not fit: the cut sits at the latest turn start that fits.
    earlier = max(g.start for g in plan.groups if g.start < plan.cut)
    assert RESERVE + 2 * 20 + sum(tokens[earlier:]) > plan.goal_tokens


def test_the_window_ceiling_bounds_a_huge_session() -> None:
    session = _long_session(200, 600)
    chain_tokens = sum(session.record(line).tokens for line in session.chain)
    options = cut_options(
        target_ratio=0.3, context_window=200_000, max_window_share=0.1, min_recent_records=0
    )
    plan = plan_cut(session.index, session.chain, options, summary_tokens=RESERVE)
    assert plan.goal_tokens == 20_000 < 0.3 * chain_tokens
    assert plan.planned_tokens <= 20_000


def test_bounded_costs_let_more_of_the_tail_stay() -> None:
    session = _long_session(30, 200)
    options = cut_options(target_ratio=0.3, min_recent_records=0)
    plain = plan_cut(session.index, session.chain, options, summary_tokens=RESERVE)
    halved = [session.record(line).tokens // 2 for line in session.chain]
    bounded = plan_cut(session.index, session.chain, options, kept_tokens=halved, summary_tokens=RESERVE)
    assert bounded.cut < plain.cut and bounded.planned_tokens <= bounded.goal_tokens


def test_a_protected_round_over_the_goal_is_cut_at_its_start_and_says_why() -> None:
    b = TranscriptBuilder(seed=22)
    for turn in range(6):
        b.user(f"small turn {turn}")
        b.tool_call("Read", {"file_path": f"/f{turn}"}, "short")
        b.assistant(b.text("ok"))
    b.user("the last task")
    for step in range(3):
        b.tool_call("Bash", {"command": f"big {step}"}, "huge output line\n" * 4000)
    b.assistant(b.text("done"))
    session = resolve(b.to_bytes())
    plan = plan_cut(
        session.index,
        session.chain,
        cut_options(target_ratio=0.1, min_recent_records=0),
        summary_tokens=RESERVE,
    )
    assert plan.outcome is PlanOutcome.CUT and plan.target_missed
    assert {PlanNote.TARGET_MISSED, PlanNote.PROTECTED_ROUND_EXCEEDS_TARGET} <= set(plan.reasons)
    assert plan.cut == plan.protected.start


def test_recent_records_are_a_preference_the_goal_overrides() -> None:
    session = _long_session(30, 200)
    options = cut_options(target_ratio=0.3, min_recent_records=10_000)
    plan = plan_cut(session.index, session.chain, options, summary_tokens=RESERVE)
    assert plan.outcome is PlanOutcome.CUT and not plan.target_missed
    assert PlanNote.FEWER_RECENT_RECORDS_THAN_PREFERRED in plan.reasons


def test_exchanges_that_open_with_thinking_still_bound_the_protected_round() -> None:
    b = TranscriptBuilder(seed=23)
    b.user("one long task")
    for step in range(6):
        lead = b.assistant(b.thinking(f"planning step {step} " * 20), tool_follows=True)
        b.tool_call("Bash", {"command": f"step {step}"}, "output\n" * 50, message_id=lead.message_id)
    b.assistant(b.text("done"))
    session = resolve(b.to_bytes())
    records = [session.record(line) for line in session.chain]
    protected = protected_round_of(session.index, session.chain)
    starts = [i for i, r in enumerate(records) if r.type == "assistant" and "K" in r.blocks]
    assert protected.start == starts[-2]  # the last two exchanges, each from its thinking fragment
    assert len(protected.tool_use_ids) == 2


def _one_task(
    b: TranscriptBuilder, prompt: str | list[dict[str, object]], steps: int, lines: int = 300
) -> None:
    b.user(prompt)
    for step in range(steps):
        b.tool_call("Bash", {"command": f"step {step}"}, "output line\n" * lines)
    b.assistant(b.text("all done"))


@pytest.mark.parametrize("steps", [0, 1, 2])
def test_nothing_is_summarizable_when_no_exchange_is_older_than_the_last_two(steps: int) -> None:
    b = TranscriptBuilder(seed=40)
    _one_task(b, "one instruction", steps, lines=3000)
    session = resolve(b.to_bytes())
    plan = plan_cut(session.index, session.chain, cut_options(target_ratio=0.1), summary_tokens=RESERVE)
    assert plan.outcome is PlanOutcome.NO_CUT
    assert plan.reasons == (PlanNote.NOTHING_BEFORE_PROTECTED_ROUND,)


def test_a_protected_round_over_the_goal_still_summarizes_its_older_exchanges() -> None:
    """Three exchanges, each alone over the goal: the oldest goes to the summary with the prompt."""
    b = TranscriptBuilder(seed=41)
    _one_task(b, "one instruction", 3, lines=3000)
    session = resolve(b.to_bytes())
    plan = plan_cut(session.index, session.chain, cut_options(target_ratio=0.1), summary_tokens=RESERVE)
    assert plan.outcome is PlanOutcome.CUT and plan.cut == plan.protected.start > plan.protected.group_start
    assert {PlanNote.CUT_INSIDE_LONG_TURN, PlanNote.PROTECTED_ROUND_EXCEEDS_TARGET} <= set(plan.reasons)
    assert PlanNote.PROTECTED_TURN_KEPT_WHOLE not in plan.reasons
    assert plan.protected.user_lines == (session.chain[0],)  # the prompt, restated by the summary
    assert plan.protected.user_lines[0] in plan.summary_lines


def test_an_instruction_holding_an_image_keeps_its_turn_whole_and_says_why() -> None:
    b = TranscriptBuilder(seed=42)
    _one_task(b, [b.text("make the page look like this"), b.image("iVBORw0KGgo=" * 50)], 40)
    session = resolve(b.to_bytes())
    options = cut_options(target_ratio=0.2, min_recent_records=0)
    plan = plan_cut(session.index, session.chain, options, summary_tokens=RESERVE)
    assert plan.protected.opening_media and plan.outcome is PlanOutcome.NO_CUT
    # Older exchanges exist: the note says the turn is kept whole, not that nothing is older.
    assert plan.reasons == (PlanNote.PROTECTED_TURN_KEPT_WHOLE, PlanNote.PROTECTED_INSTRUCTION_HOLDS_MEDIA)
    c = TranscriptBuilder(seed=42)
    _one_task(c, "an earlier request", 5)
    _one_task(c, [c.text("make the page look like this"), c.image("iVBORw0KGgo=" * 50)], 40)
    earlier = resolve(c.to_bytes())
    plan = plan_cut(earlier.index, earlier.chain, options, summary_tokens=RESERVE)
    assert plan.outcome is PlanOutcome.CUT and plan.cut == plan.protected.group_start
    assert PlanNote.PROTECTED_INSTRUCTION_HOLDS_MEDIA in plan.reasons


def test_the_round_instruction_is_the_prompt_and_its_expansion_not_hook_context_between_calls() -> None:
    b = TranscriptBuilder(seed=43)
    prompt = b.user("<command-name>/init</command-name>", human=False)
    expansion = b.meta_user("Please analyze this codebase and create a CLAUDE.md file")
    for step in range(30):
        b.tool_call("Bash", {"command": f"step {step}"}, "output line\n" * 300)
        if step % 7 == 3:
            b.meta_user("<system-reminder>PostToolUse:Edit hook additional context: ok</system-reminder>")
    b.assistant(b.text("CLAUDE.md written"))
    session = resolve(b.to_bytes())
    lines = {session.record(line).uuid: line for line in session.chain}
    options = cut_options(target_ratio=0.2, min_recent_records=0)
    plan = plan_cut(session.index, session.chain, options, summary_tokens=RESERVE)
    assert plan.protected.group_start == 0 and len(plan.groups) == 1  # hook context opens no turn
    assert plan.protected.user_lines == (lines[prompt], lines[expansion])
    assert plan.outcome is PlanOutcome.CUT and not plan.target_missed


def test_a_task_going_on_after_a_compact_pair_carries_the_instructions_of_its_summary() -> None:
    b = TranscriptBuilder(seed=44)
    _one_task(b, "the task", 5)
    b.compact("the task, restated by an earlier compaction")
    for step in range(30):  # Claude Code compacted mid-task and went on without a new prompt
        b.tool_call("Bash", {"command": f"more {step}"}, "output line\n" * 300)
    session = resolve(b.to_bytes())
    summary = next(line for line in session.chain if session.record(line).compact_summary)
    plan = plan_cut(session.index, session.chain, cut_options(target_ratio=0.2), summary_tokens=RESERVE)
    assert plan.protected.user_lines == () and plan.protected.carried_line == summary
    assert plan.outcome is PlanOutcome.CUT and summary in plan.summary_lines


def test_a_round_that_fits_without_its_summary_is_not_said_to_exceed_the_target() -> None:
    """The rules keep less than the goal; what is missing is room for the summary beside it."""
    b = TranscriptBuilder(seed=45)
    _one_task(b, "one instruction", 30, lines=100)
    session = resolve(b.to_bytes())
    options = cut_options(target_ratio=0.2, min_recent_records=0)
    goal = options.goal(sum(session.record(line).tokens for line in session.chain))
    protected = protected_round_of(session.index, session.chain)
    kept = sum(session.record(line).tokens for line in session.chain[protected.start :])
    assert kept < goal
    plan = plan_cut(session.index, session.chain, options, summary_tokens=goal - kept // 2)
    assert plan.cut == plan.protected.start and plan.target_missed
    assert PlanNote.NO_ROOM_FOR_SUMMARY in plan.reasons
    assert PlanNote.PROTECTED_ROUND_EXCEEDS_TARGET not in plan.reasons
    # An instruction the summary restates belongs to the round: too long, the round is over alone.
    over = plan_cut(
        session.index, session.chain, options, summary_tokens=RESERVE + goal, restated_tokens=goal
    )
    assert PlanNote.PROTECTED_ROUND_EXCEEDS_TARGET in over.reasons


def _hooked_session(seed: int) -> Resolved:
    """Turns opened by prompts or slash commands, hook context between calls, compactions mid-task."""
    rng = random.Random(seed)
    b = TranscriptBuilder(seed=seed)
    for number in range(rng.randint(1, 5)):
        if rng.random() < 0.3:
            b.compact(rng.choice(["earlier work", restate(f"task {number - 1}") + "\n- steps (L3)"]))
            if rng.random() < 0.5:
                _steps(b, rng, number)
                continue
        if rng.random() < 0.3:
            b.user(f"<command-name>/cmd{number}</command-name>", human=False)
            b.meta_user(f"expansion of command {number}")
        else:
            b.user(f"request {number}: " + "do it " * rng.randint(1, 2000))
        _steps(b, rng, number)
    return resolve(b.to_bytes())


def _steps(b: TranscriptBuilder, rng: random.Random, number: int) -> None:
    for step in range(rng.randint(0, 8)):
        b.tool_call("Bash", {"command": f"s {number}.{step}"}, "out\n" * rng.randint(1, 300))
        if rng.random() < 0.3:
            b.meta_user("<system-reminder>PostToolUse hook additional context</system-reminder>")
    if rng.random() < 0.5:
        b.assistant(b.text(f"turn {number} done"))


@pytest.mark.parametrize("seed", range(30))
def test_the_planner_restates_exactly_the_instructions_the_contract_requires(seed: int) -> None:
    """Planner and contract find the round's instructions independently: they must agree."""
    session = _hooked_session(seed)
    protected = protected_round_of(session.index, session.chain)
    data = session.data
    required = protected_round(
        contract_messages(data, session.index, session.chain, from_line=session.chain[protected.group_start])
    ).user_texts
    carried = protected.carried_line
    restated = (
        restated_instructions(message_text(session.index.raw_line(data, carried))[1]) if carried else ()
    )
    found = (
        *restated,
        *(message_text(session.index.raw_line(data, line))[1] for line in protected.user_lines),
    )
    assert found == required
