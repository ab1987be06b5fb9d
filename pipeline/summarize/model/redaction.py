"""Redaction: secrets in evidence become typed placeholders before any text leaves the machine.

A curated, versioned list of patterns (API keys of the common providers, cloud and chat tokens,
PEM private keys, JWTs, credentials in URLs, `password=`-style assignments). Each match becomes
`[REDACTED:<kind>]`; only the count per kind is kept, never the secret. Changing the list
changes `REDACTION_VERSION`, which reports carry so a reader knows which list was applied.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

__all__ = [
    "REDACTION_VERSION",
    "Redacted",
    "RedactionCounts",
    "SecretKind",
    "placeholder",
    "redact",
]

REDACTION_VERSION: Final = 1
"""Version of the pattern list below; bump it whenever a pattern is added, removed or changed."""


class SecretKind(StrEnum):
    """What a redacted secret was (the placeholder names it; reports count them)."""

    ANTHROPIC_KEY = "anthropic-key"
    OPENAI_KEY = "openai-key"
    AWS_ACCESS_KEY = "aws-access-key"
    AWS_SECRET_KEY = "aws-secret-key"
    GITHUB_TOKEN = "github-token"
    SLACK_TOKEN = "slack-token"
    STRIPE_KEY = "stripe-key"
    GOOGLE_API_KEY = "google-api-key"
    PRIVATE_KEY = "private-key"
    JWT = "jwt"
    URL_CREDENTIALS = "url-credentials"
    ASSIGNED_SECRET = "assigned-secret"


def placeholder(kind: SecretKind) -> str:
    """The text that stands in for one secret of `kind`."""
    return f"[REDACTED:{kind.value}]"


# Order matters: the specific key shapes run before the generic assignment rule, so a key in
# `api_key=sk-ant-...` is counted as an Anthropic key, and Anthropic's `sk-ant-` before OpenAI's `sk-`.
# A pattern with a group named `secret` replaces only that group (the key name stays readable).
_PATTERNS: Final[tuple[tuple[SecretKind, re.Pattern[str]], ...]] = (
    (
        SecretKind.PRIVATE_KEY,
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
            r"[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)"
        ),
    ),
    (SecretKind.ANTHROPIC_KEY, re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{16,}")),
    (SecretKind.OPENAI_KEY, re.compile(r"\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}")),
    (SecretKind.AWS_ACCESS_KEY, re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA|AROA|AIDA)[0-9A-Z]{16}\b")),
    (
        SecretKind.AWS_SECRET_KEY,
        re.compile(r"(?i)aws_?secret_?access_?key\W{0,3}[=:]\s*[\"']?(?P<secret>[A-Za-z0-9/+=]{40})\b"),
    ),
    (SecretKind.GITHUB_TOKEN, re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})")),
    (
        SecretKind.SLACK_TOKEN,
        re.compile(
            r"\bxox[abposre]-[A-Za-z0-9\-]{10,}"
            r"|https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_\-]{20,}"
        ),
    ),
    (SecretKind.STRIPE_KEY, re.compile(r"\b(?:sk|rk|pk|whsec)_(?:live|test)_[A-Za-z0-9]{16,}")),
    (SecretKind.GOOGLE_API_KEY, re.compile(r"\bAIza[0-9A-Za-z_\-]{35}")),
    (SecretKind.JWT, re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")),
    (
        SecretKind.URL_CREDENTIALS,
        re.compile(r"(?i)\b[a-z][a-z0-9+.\-]{1,20}://(?P<secret>[^\s:/@\"'<>]+:[^\s@/\"'<>]+)@"),
    ),
    (
        SecretKind.ASSIGNED_SECRET,
        re.compile(
            r"(?i)\b(?:password|passwd|pwd|secret|client_secret|token|access_token|auth_token|api_key|apikey"
            r"|api-key|private_key)[\"']?\s*[=:]\s*[\"']?"
            # not a placeholder, a type annotation or a call: a value written out
            r"(?P<secret>(?!\[REDACTED:|(?:str|string|int|bool|boolean|number|bytes|None|null|undefined"
            r"|any|Optional|Secret)\b|[A-Za-z_][\w.]*\()[^\s\"'&,;<>()\[\]{}]{4,})"
        ),
    ),
)


@dataclass(frozen=True, slots=True)
class RedactionCounts:
    """How many secrets of each kind were replaced, kinds in the list's order (zero kinds left out)."""

    counts: tuple[tuple[SecretKind, int], ...] = ()

    @property
    def total(self) -> int:
        """Secrets replaced, all kinds together."""
        return sum(count for _, count in self.counts)

    def of(self, kind: SecretKind) -> int:
        """Secrets of one kind replaced."""
        return dict(self.counts).get(kind, 0)

    def __add__(self, other: RedactionCounts) -> RedactionCounts:
        return RedactionCounts.of_counter(Counter(dict(self.counts)) + Counter(dict(other.counts)))

    @staticmethod
    def of_counter(counter: Mapping[SecretKind, int]) -> RedactionCounts:
        """Counts from a mapping, in the kinds' declared order."""
        return RedactionCounts(tuple((kind, counter[kind]) for kind in SecretKind if counter.get(kind, 0)))

    @staticmethod
    def summed(parts: Iterable[RedactionCounts]) -> RedactionCounts:
        """The sum of several counts."""
        total: Counter[SecretKind] = Counter()
        for part in parts:
            total.update(dict(part.counts))
        return RedactionCounts.of_counter(total)


@dataclass(frozen=True, slots=True)
class Redacted:
    """Text with its secrets replaced, and how many of each kind."""

    text: str
    counts: RedactionCounts


def redact(text: str) -> Redacted:
    """`text` with every secret the list recognizes replaced by its kind's placeholder."""
    found: Counter[SecretKind] = Counter()
    for kind, pattern in _PATTERNS:
        if kind is not SecretKind.PRIVATE_KEY and not _may_hold(kind, text):
            continue
        text = pattern.sub(_replacer(kind, found), text)
    return Redacted(text, RedactionCounts.of_counter(found))


def _replacer(kind: SecretKind, found: Counter[SecretKind]) -> Callable[[re.Match[str]], str]:
    def replace(match: re.Match[str]) -> str:
        found[kind] += 1
        if "secret" in match.re.groupindex:
            start, end = match.span("secret")
            whole = match.group(0)
            offset = match.start()
            return whole[: start - offset] + placeholder(kind) + whole[end - offset :]
        return placeholder(kind)

    return replace


# Cheap substring guards: most evidence holds no secret, and one `in` test is far cheaper than a
# regex scan over a long tool result. A kind whose guard is absent cannot match.
_GUARDS: Final[Mapping[SecretKind, tuple[str, ...]]] = {
    SecretKind.ANTHROPIC_KEY: ("sk-ant-",),
    SecretKind.OPENAI_KEY: ("sk-",),
    SecretKind.AWS_ACCESS_KEY: ("AKIA", "ASIA", "ABIA", "ACCA", "AROA", "AIDA"),
    SecretKind.GITHUB_TOKEN: ("gh", "github_pat_"),
    SecretKind.SLACK_TOKEN: ("xox", "hooks.slack.com"),
    SecretKind.STRIPE_KEY: ("_live_", "_test_"),
    SecretKind.GOOGLE_API_KEY: ("AIza",),
    SecretKind.JWT: ("eyJ",),
    SecretKind.URL_CREDENTIALS: ("@",),
}


def _may_hold(kind: SecretKind, text: str) -> bool:
    guards = _GUARDS.get(kind)
    return guards is None or any(guard in text for guard in guards)
