"""Fast, seeded text for synthetic transcripts: code, logs, prose and prompts.

A :class:`TextBank` fills the fixed corpora of :mod:`pipeline.testing._corpora` once into pools
of a few hundred kilobytes; after that every piece of text is a slice of a pool or a join of
pre-filled sentences, so generating megabytes costs a few C-level string operations and no
per-character Python loops.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import orjson

from pipeline.testing._corpora import (
    ASSISTANT_EN,
    CODE,
    EMOJI,
    FOREIGN_PROMPTS,
    FOREIGN_REPLIES,
    IDENT_PARTS,
    LOG_LINES,
    PROMPTS_EN,
    SLUG_WORDS,
    SUBAGENT_PROMPTS,
    THINKING_EN,
)

__all__ = ["LANGUAGES", "TextBank", "numbered"]

LANGUAGES = tuple(CODE)  # programming languages a synthetic project can use
CODE_POOL_BYTES = 640 * 1024  # per language; Read results slice files out of it
LOG_POOL_BYTES = 384 * 1024
SENTENCES_PER_LANGUAGE = 1500  # pre-filled sentences per human language
SECTIONS = 240  # pre-built markdown sections per (human language, code language)
JSON_POOL_ROWS = 2500  # rows of the JSON pool that API-response outputs are cut from


_SNAKE = tuple(f"{a}_{b}" for a in IDENT_PARTS for b in IDENT_PARTS if a != b)
_CAMEL = tuple(a.capitalize() + b.capitalize() for a in IDENT_PARTS for b in IDENT_PARTS if a != b)
_NUMBERS = tuple(str(k) for k in range(2, 481))
_SECTION_TITLES = (
    "Summary",
    "Root cause",
    "Changes",
    "Files modified",
    "Tests",
    "Next steps",
    "Open questions",
    "Key findings",
    "Current state",
    "Errors and fixes",
    "Pending tasks",
    "Architecture",
)


def _fill(template: str, rng: random.Random, camel: bool) -> str:
    """Replace the ``@N @M @F @K`` placeholders of a corpus template."""
    names = _CAMEL if camel else _SNAKE
    name, other = rng.choice(names), rng.choice(names)
    return (
        template.replace("@N", name)
        .replace("@M", other)
        .replace("@F", rng.choice(_SNAKE))
        .replace("@K", rng.choice(_NUMBERS))
    )


def _fill_many(rng: random.Random, templates: Sequence[str], n: int, *, camel: bool) -> list[str]:
    """``n`` filled templates; names and numbers are drawn in bulk (one ``choices`` call each)."""
    names = _CAMEL if camel else _SNAKE
    picks = rng.choices(templates, k=n)
    first, second = rng.choices(names, k=n), rng.choices(names, k=n)
    fields, numbers = rng.choices(_SNAKE, k=n), rng.choices(_NUMBERS, k=n)
    return [
        t.replace("@N", first[i]).replace("@M", second[i]).replace("@F", fields[i]).replace("@K", numbers[i])
        for i, t in enumerate(picks)
    ]


def _pool(rng: random.Random, templates: Sequence[str], size: int, *, camel: bool, sep: str) -> str:
    """Concatenate filled templates until the pool holds about ``size`` characters."""
    average = sum(map(len, templates)) / len(templates) + len(sep)
    return sep.join(_fill_many(rng, templates, int(size / average) + 1, camel=camel))


def _sentences(rng: random.Random, templates: Sequence[str], count: int) -> tuple[str, ...]:
    """``count`` filled sentences."""
    return tuple(_fill_many(rng, templates, count, camel=False))


def numbered(text: str, start: int = 1) -> str:
    """``cat -n`` style numbering as the Read tool returns it: ``     1→first line``."""
    return "\n".join(f"{i:6d}→{line}" for i, line in enumerate(text.split("\n"), start))


class TextBank:
    """Seeded pools of code, logs and sentences; every accessor takes the caller's RNG."""

    def __init__(self, seed: int) -> None:
        rng = random.Random(seed)
        self._seed = seed
        self._code: dict[str, str] = {}  # built on first use: fleets rarely need every language
        self._sections: dict[tuple[str, str], tuple[str, ...]] = {}  # markdown sections, built on first use
        self._json: str | None = None
        self._logs = _pool(rng, LOG_LINES, LOG_POOL_BYTES, camel=False, sep="\n")
        self._sentences = {"en": _sentences(rng, ASSISTANT_EN, SENTENCES_PER_LANGUAGE)}
        for lang, lines in FOREIGN_REPLIES.items():
            self._sentences[lang] = _sentences(rng, lines, SENTENCES_PER_LANGUAGE // 4)
        self._thinking = _sentences(rng, THINKING_EN, SENTENCES_PER_LANGUAGE)

    # ------------------------------------------------------------------ slices
    @staticmethod
    def _slice(pool: str, rng: random.Random, size: int, boundary: str = "\n") -> str:
        """About ``size`` characters of ``pool``, starting and ending on a ``boundary``."""
        if size >= len(pool):
            return pool
        start = int(rng.random() * (len(pool) - size))
        cut = pool.find(boundary, start)
        start = 0 if cut < 0 else cut + len(boundary)
        end = pool.find(boundary, start + size)
        return pool[start : len(pool) if end < 0 else end]

    def code(self, rng: random.Random, language: str, size: int) -> str:
        """Source text of about ``size`` characters in ``language``."""
        pool = self._code.get(language)
        if pool is None:
            seeded = random.Random(self._seed * 31 + LANGUAGES.index(language))
            camel = language in ("go", "elixir", "typescript")
            pool = self._code[language] = _pool(
                seeded, CODE[language], CODE_POOL_BYTES, camel=camel, sep="\n"
            )
        return self._slice(pool, rng, max(1, size), "\n\n")

    def json(self, rng: random.Random, size: int) -> str:
        """A pretty-printed JSON array (an API response piped through ``jq``) of about ``size`` chars."""
        if self._json is None:
            seeded = random.Random(self._seed * 17 + 5)
            rows = [
                {
                    "id": seeded.getrandbits(40),
                    "name": seeded.choice(_SNAKE),
                    "enabled": seeded.random() < 0.5,
                    "weight": round(seeded.random() * 100, 3),
                    "tags": ["alpha", "beta", "gamma"][: seeded.randint(0, 3)],
                }
                for _ in range(JSON_POOL_ROWS)
            ]
            self._json = orjson.dumps(rows, option=orjson.OPT_INDENT_2).decode()
        if size >= len(self._json) - 64:
            return self._json
        body = self._slice(self._json, rng, max(1, size), "\n  {")
        return "[\n  {" + body.rstrip().removesuffix(",") + "\n]"

    def log(self, rng: random.Random, size: int) -> str:
        """Command output (test runs, builds, git) of about ``size`` characters."""
        return self._slice(self._logs, rng, max(1, size))

    # ------------------------------------------------------------------ prose
    def sentences(self, rng: random.Random, count: int, lang: str = "en") -> str:
        """``count`` sentences of assistant prose in ``lang`` (``en``, ``zh``, ``ja``, ``ru``, ``ar``)."""
        pool = self._sentences.get(lang, self._sentences["en"])
        sep = "" if lang in ("zh", "ja") else " "
        text = sep.join(rng.choices(pool, k=max(1, count)))
        if lang != "en" and rng.random() < 0.3:
            text += " " + rng.choice(EMOJI)
        return text

    def thinking(self, rng: random.Random, count: int) -> str:
        """``count`` sentences of thinking."""
        return " ".join(rng.choices(self._thinking, k=max(1, count)))

    def markdown(self, rng: random.Random, size: int, lang: str = "en", language: str = "python") -> str:
        """A markdown report (summaries, subagent results) of about ``size`` characters.

        Sections come from a per-(language, code language) pool built on first use, so a report
        is a handful of ``choices`` and one join.
        """
        key = (lang, language)
        pool = self._sections.get(key)
        if pool is None:
            seeded = random.Random(self._seed * 131 + len(self._sections))
            pool = self._sections[key] = tuple(self._section(seeded, lang, language) for _ in range(SECTIONS))
        parts: list[str] = []
        total = 0
        while total < size:
            picked = rng.choices(pool, k=max(1, (size - total) // 700))
            parts.extend(picked)
            total += sum(map(len, picked))
        return "".join(f"## {i}. {part}" for i, part in enumerate(parts, 1)).rstrip()

    def _section(self, rng: random.Random, lang: str, language: str) -> str:
        """One report section (title, prose, bullets, sometimes code), without its number."""
        head = (
            rng.choice(_SECTION_TITLES) + (f": `{rng.choice(_SNAKE)}`" if rng.random() < 0.5 else "") + "\n\n"
        )
        bullets = "\n".join("- " + self.sentences(rng, 1, lang) for _ in range(rng.randint(2, 6)))
        block = head + self.sentences(rng, rng.randint(2, 5), lang) + "\n\n" + bullets + "\n\n"
        if rng.random() < 0.35:
            block += "```" + language + "\n" + self.code(rng, language, rng.randint(200, 1200)) + "\n```\n\n"
        return block

    def prompt(self, rng: random.Random, lang: str = "en") -> str:
        """A human prompt in ``lang``; occasionally long and multi-paragraph."""
        if lang == "en":
            text = _fill(rng.choice(PROMPTS_EN), rng, False)
        else:
            text = _fill(rng.choice(FOREIGN_PROMPTS[lang]), rng, False)
            if rng.random() < 0.25:
                text += " " + rng.choice(EMOJI)
        if rng.random() < 0.12:
            text += "\n\n" + self.sentences(rng, rng.randint(3, 12), lang)
        return text

    def delegation(self, rng: random.Random) -> str:
        """The instructions a session gives a subagent (Task/Agent tool prompt)."""
        return _fill(rng.choice(SUBAGENT_PROMPTS), rng, False)

    # ------------------------------------------------------------------ names
    @staticmethod
    def identifier(rng: random.Random) -> str:
        """A snake_case identifier."""
        return rng.choice(_SNAKE)

    @staticmethod
    def slug(rng: random.Random) -> str:
        """A Claude Code session slug such as ``radiant-floating-music``."""
        return "-".join(rng.sample(SLUG_WORDS, 3))
