"""Fitting human messages into a room: newest whole, older cut to a marked head, every one represented."""

from __future__ import annotations

import random

import pytest

from pipeline.summarize.checkpoint.document import Bullet, omission_marker, parse_bullets, render_bullet
from pipeline.summarize.checkpoint.fitting import (
    MIN_PROMPT_HEAD_CHARS,
    PROMPT_FLOOR_CHARS,
    Bounds,
    PromptFit,
    PromptUnit,
    fit_prompts,
    prompt_units,
)

MAX_PROMPT = 4000


def units(sizes: list[int], seed: int = 0) -> tuple[PromptUnit, ...]:
    rng = random.Random(seed)
    return tuple(
        PromptUnit(f"request {n}: " + "".join(rng.choice("abcdef \n") for _ in range(size)), (10 * n + 1,))
        for n, size in enumerate(sizes)
    )


def rendered(fit: PromptFit) -> str:
    lines = [omission_marker(fit.omitted)] if fit.omitted else []
    return "\n".join([*lines, *(render_bullet(b.text, b.lines) for b in fit.bullets)]) + "\n"


def cited(fit: PromptFit) -> set[int]:
    return {line for bullet in fit.bullets for line in bullet.lines}


def test_everything_that_fits_is_kept_whole() -> None:
    given = units([300, 50, 900])
    fit = fit_prompts(given, 100_000, MAX_PROMPT)
    assert [b.text for b in fit.bullets] == [u.text for u in given]
    assert (fit.verbatim, fit.cut, fit.floor_met) == (3, 0, True)


def test_the_newest_stay_whole_and_older_ones_keep_a_marked_head_of_the_floor() -> None:
    given = units([1500] * 12)
    floors = fit_prompts(given, 10**9, PROMPT_FLOOR_CHARS).chars  # every message cut at the floor
    room = floors + 2 * 1600  # the floor for all, and about two messages more
    fit = fit_prompts(given, room, MAX_PROMPT)
    texts = [b.text for b in fit.bullets]
    whole = [n for n, (text, unit) in enumerate(zip(texts, given, strict=True)) if text == unit.text]
    assert whole == [10, 11]  # the two newest, and only they
    for unit, text in zip(given[:9], texts[:9], strict=True):
        cut_chars = len(unit.text) - PROMPT_FLOOR_CHARS
        assert (
            text == f"{unit.text[:PROMPT_FLOOR_CHARS]}[... {cut_chars} more characters at L{unit.lines[0]}]"
        )
    boundary = texts[9]  # the first that did not fit whole keeps the longest head the room allows
    assert boundary.startswith(given[9].text[:PROMPT_FLOOR_CHARS]) and len(boundary) > PROMPT_FLOOR_CHARS + 40
    assert len(rendered(fit)) == fit.chars <= room
    assert fit.floor_met and fit.head_chars == PROMPT_FLOOR_CHARS


def test_a_message_longer_than_the_prompt_bound_is_cut_at_it_even_when_newest() -> None:
    given = units([6000])
    fit = fit_prompts(given, 100_000, 1000)
    text = given[0].text
    marker = f"[... {len(text) - 1000} more characters at L1]"
    assert fit.bullets[0].text == text[:750] + marker + text[-250:]  # its head and its end
    assert fit.verbatim == 1  # kept as the bound allows


def test_when_the_floor_does_not_fit_every_message_keeps_a_shorter_head() -> None:
    given = units([1500] * 40)
    fit = fit_prompts(given, 40 * 150, MAX_PROMPT)
    assert not fit.floor_met and MIN_PROMPT_HEAD_CHARS <= fit.head_chars < PROMPT_FLOOR_CHARS
    assert all(b.text.startswith(u.text[: fit.head_chars]) for b, u in zip(fit.bullets, given, strict=True))
    assert cited(fit) == {line for unit in given for line in unit.lines}
    assert len(rendered(fit)) == fit.chars <= 40 * 150


def test_when_short_heads_do_not_fit_the_oldest_are_cited_by_anchor_alone() -> None:
    given = units([500] * 1500)
    room = 30_000
    fit = fit_prompts(given, room, MAX_PROMPT)
    assert fit.anchors_only > 0 and fit.omitted == 0 and not fit.floor_met
    assert cited(fit) == {line for unit in given for line in unit.lines}  # every message keeps its anchor
    alone = [b for b in fit.bullets if "by anchor only" in b.text]
    assert sum(len(b.lines) for b in alone) == fit.anchors_only
    first = alone[0]
    chars = sum(len(u.text) for u in given[: len(first.lines)])
    assert first.text == f"{len(first.lines)} older requests by anchor only ({chars} characters cut)"
    assert first.lines == tuple(line for unit in given[: len(first.lines)] for line in unit.lines)
    headed = fit.bullets[len(alone) :]
    assert all(
        b.text.startswith(u.text[:MIN_PROMPT_HEAD_CHARS])
        for b, u in zip(headed, given[-len(headed) :], strict=True)
    )
    assert len(rendered(fit)) == fit.chars <= room


def test_when_not_even_the_anchors_fit_the_oldest_are_counted_in_an_omission_marker() -> None:
    given = units([100] * 2000)
    fit = fit_prompts(given, 3000, MAX_PROMPT, omitted_before=3)
    assert fit.omitted > 3 and fit.anchors_only == 2000 - (fit.omitted - 3)
    newest = {line for unit in given[-fit.anchors_only :] for line in unit.lines}
    assert cited(fit) == newest
    assert len(rendered(fit)) == fit.chars <= 3000


@pytest.mark.parametrize("room", [0, 500, 4_000, 20_000, 57_000, 200_000])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_bullets_always_fit_their_room_and_say_what_they_are(room: int, seed: int) -> None:
    rng = random.Random(seed)
    given = units([rng.choice([5, 80, 250, 3000, 9000]) for _ in range(rng.randint(1, 400))], seed)
    fit = fit_prompts(given, room, MAX_PROMPT)
    assert fit.chars == len(rendered(fit))
    assert fit.chars <= max(room, len(omission_marker(len(given))) + 1)  # a room too small holds the marker
    counted = fit.verbatim + fit.cut + fit.anchors_only + fit.omitted
    assert counted == len(given)
    reread = parse_bullets(rendered(fit).split("\n"))
    assert [b.lines for b in reread if not b.omitted] == [b.lines for b in fit.bullets]
    assert fit_prompts(given, room, MAX_PROMPT) == fit  # same input, same bullets


def test_equal_messages_become_one_unit_citing_every_line() -> None:
    bullets = [Bullet("continue", (line,)) for line in range(5, 200, 5)] + [Bullet("stop", (300,))]
    merged = prompt_units(bullets)
    assert merged == (PromptUnit("continue", tuple(range(5, 200, 5))), PromptUnit("stop", (300,)))


def test_a_rung_is_never_looser_than_the_options() -> None:
    options = Bounds(100, 3, 64, 2, 32, 16)
    assert Bounds(600, 40, 8, 32, 32, 1024).within(options) == Bounds(100, 3, 8, 2, 32, 16)
