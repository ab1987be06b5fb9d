"""Redaction: secrets in evidence become typed placeholders before any text leaves the machine.

A curated, versioned list of patterns (API keys of the common providers, cloud, chat and package
registry tokens, PEM private keys, JWTs, credentials in URLs and connection strings, `Authorization`
headers, `password=`/`*_API_KEY=`-style assignments), then, when the `redaction` extra is installed,
a maintained detector library's plugins (`secret_detector`). Each match becomes
`[REDACTED:<kind>]`; only the count per kind is kept, never the secret. Changing the list
changes `REDACTION_VERSION`; reports carry `redactors()` so a reader knows what was applied.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from pipeline.summarize.model.secret_detector import (
    LIBRARY,
    MIN_VALUE_CHARS,
    UNSCANNABLE,
    DetectorLibrary,
    findings_in,
)

__all__ = [
    "REDACTION_VERSION",
    "Redacted",
    "RedactionCounts",
    "SecretKind",
    "placeholder",
    "redact",
    "redactors",
]

REDACTION_VERSION: Final = 2
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
    HUGGINGFACE_TOKEN = "huggingface-token"
    NPM_TOKEN = "npm-token"
    PYPI_TOKEN = "pypi-token"
    GITLAB_TOKEN = "gitlab-token"
    TWILIO_KEY = "twilio-key"
    SENDGRID_KEY = "sendgrid-key"
    MAILCHIMP_KEY = "mailchimp-key"
    SQUARE_TOKEN = "square-token"
    DISCORD_TOKEN = "discord-token"
    AZURE_STORAGE_KEY = "azure-storage-key"
    VENDOR_TOKEN = "vendor-token"  # a vendor's credential only the detector library knows
    UNSCANNED_LINE = "unscanned-line"  # a line a detector plugin failed on, withheld whole
    URL_CREDENTIALS = "url-credentials"
    CLI_CREDENTIALS = "cli-credentials"  # `curl -u user:password`, `--password VALUE`
    BEARER_TOKEN = "bearer-token"
    ASSIGNED_SECRET = "assigned-secret"
    HIGH_ENTROPY_STRING = "high-entropy-string"


def placeholder(kind: SecretKind) -> str:
    """The text that stands in for one secret of `kind`."""
    return f"[REDACTED:{kind.value}]"


# A name that says its value is a secret: `password`, `DATABASE_PASSWORD`, `PGPASSWORD`,
# `MY_SERVICE_API_KEY`, `SECRET_KEY`, `_authToken`, `--password`; the secret word ends the name
# (`max_tokens` is not one), `pass` counts only after a separator (`DB_PASS`, not `bypass`), and
# a paging or sync token (`nextPageToken`) is no secret. A name's parts are bounded: a long run of
# `-`-joined characters (a base64url blob on one line) made unbounded ones quadratic.
_SECRET_NAME: Final = (
    r"(?<![A-Za-z0-9_.])(?![A-Za-z0-9_.\-]{0,40}?(?:page|next|continuation|sync|cancellation)[_\-]?token)"
    r"_{0,3}(?:(?:[A-Za-z0-9]{1,30}[_.\-]){1,4}pass|[A-Za-z0-9_.\-]{0,40}?"
    r"(?:password|passwd|passphrase|pwd|secret|client_?secret|secret_?key|token|access_?token"
    r"|auth_?token|refresh_?token|api_?key|apikey|access_?key|private_?key|signing_?key|encryption_?key"
    r"|master_?key|account_?key))(?![A-Za-z0-9])[\"']?\s*(?:=>|:=|[=:])\s*"
)
_VALUE_END: Final = r"(?=[\s\"'`&,;<>()\[\]{}]|$)"
# What code writes after such a name without holding a secret: a type, a null, a keyword, a
# permission (`id-token: write`), a template or an environment reference, a masked or elided value,
# an attribute, a constant's name, a variable passed on (`{ token: csrf, ... }`), an identifier
# named like a secret (`password=password`, `token=auth_token`), or a version (a package named
# `jsonwebtoken` in a package.json).
_NOT_A_VALUE: Final = (
    r"(?!(?:str|string|int|bool|boolean|number|bytes|None|null|nil|undefined|any|Optional|Secret"
    r"|SecretStr|true|false|await|async|new|function|lambda|yield|require|import|typeof|this|self"
    r"|read|write|none|required|optional)(?![\w\-])"
    r"|\[REDACTED:|\{\{|\$|%\(|%[A-Za-z_]|\*{3,}|x{4,}|\.\.\.|<|[^\s\"']*\.\.\.(?:[\s\"']|$)"
    r"|(?:[A-Za-z_]\w*[?!]?\.)+[A-Za-z_]\w*"
    + _VALUE_END
    + r"|[A-Za-z_]\w*[!?]?\s*[,)}\]]"
    + r"|(?-i:[A-Z][A-Z0-9_]*_[A-Z0-9_]*)"
    + _VALUE_END
    + r"|[A-Za-z_\-]*(?:pass|pwd|secret|token|key|auth)[A-Za-z_\-]*"
    + _VALUE_END
    + r"|[\^~]?v?\d+(?:\.[\dx*]+)+(?:[-+][\w.]+)?"
    + _VALUE_END
    + r")"
)

# Order matters: the specific key shapes run before the generic assignment rules, so a key in
# `api_key=sk-ant-...` is counted as an Anthropic key, and Anthropic's `sk-ant-` before OpenAI's `sk-`.
# A pattern with a named group replaces only the group that matched (the key name stays readable).
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
        SecretKind.GITLAB_TOKEN,
        re.compile(
            r"\b(?:gl(?:pat|dt|rt|ptt|ft|soat|cbt|imt|agent)-[A-Za-z0-9_\-]{20,}|GR1348941[A-Za-z0-9_\-]{20,})"
        ),
    ),
    (
        SecretKind.SLACK_TOKEN,
        re.compile(
            r"\bxox[abposre]-[A-Za-z0-9\-]{10,}"
            r"|https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_\-]{20,}"
        ),
    ),
    (
        SecretKind.STRIPE_KEY,
        re.compile(r"\b(?:(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{24,})"),
    ),
    (SecretKind.GOOGLE_API_KEY, re.compile(r"\bAIza[0-9A-Za-z_\-]{35}")),
    (SecretKind.HUGGINGFACE_TOKEN, re.compile(r"\b(?:hf_|api_org_)[A-Za-z0-9]{30,}\b")),
    (SecretKind.NPM_TOKEN, re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")),
    (SecretKind.PYPI_TOKEN, re.compile(r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{40,}")),
    (SecretKind.TWILIO_KEY, re.compile(r"\b(?:SK|AC)[0-9a-f]{32}\b")),
    (SecretKind.SENDGRID_KEY, re.compile(r"\bSG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}")),
    (SecretKind.MAILCHIMP_KEY, re.compile(r"\b[0-9a-f]{32}-us[0-9]{1,2}\b")),
    (
        SecretKind.SQUARE_TOKEN,
        re.compile(r"\b(?:sq0(?:atp|csp|idp)-[0-9A-Za-z_\-]{22,}|EAAA[A-Za-z0-9_\-]{60})"),
    ),
    (
        SecretKind.DISCORD_TOKEN,
        re.compile(
            r"\b[MNO][A-Za-z0-9_\-]{23,25}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,38}(?![A-Za-z0-9_\-])"
        ),
    ),
    (SecretKind.JWT, re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")),
    (
        SecretKind.AZURE_STORAGE_KEY,
        re.compile(
            r"(?i)\b(?:AccountKey|SharedAccessKey|SharedSecret)\s*=\s*(?P<secret>[A-Za-z0-9+/]{20,}={0,2})"
            r"|[?&]sig=(?P<sas>[A-Za-z0-9%+/]{20,}(?:%3D|=)*)"
        ),
    ),
    (
        SecretKind.URL_CREDENTIALS,
        re.compile(r"(?i)\b[a-z][a-z0-9+.\-]{1,20}://(?P<secret>[^\s:/@\"'<>]*:[^\s/\"'<>]+)@"),
    ),
    (
        SecretKind.CLI_CREDENTIALS,
        re.compile(
            r"(?<!\S)(?:-u|--user)[ =][\"']?[A-Za-z0-9_.\-]+:(?P<secret>(?!\d+(?:[\s\"']|$))[^\s\"']{3,})"
            r"|(?<!\S)--?(?:password|passwd|pass|token|api-key|apikey|secret|client-secret|access-token)"
            r" +[\"']?(?P<flag>(?![-$<{]|\[REDACTED:|[^\s\"']*\.\.\.)[^\s\"']{4,})"
        ),
    ),
    (
        SecretKind.BEARER_TOKEN,
        re.compile(
            r"(?i)\bauthorization[\"']?\s*[:=]\s*[\"']?(?:Bearer|Basic|Token|Digest|Bot)?\s*"
            r"(?P<secret>(?!\[REDACTED:|\$)[A-Za-z0-9._~+/\-]{8,}=*)"
            r"|\bBearer\s+(?P<bearer>(?=[A-Za-z._~+/\-]*[0-9])[A-Za-z0-9._~+/\-]{16,}=*)"
        ),
    ),
)

# The assignment rules, last: a value in double quotes, in single quotes, or bare. They are tried
# only on the lines `_ASSIGNMENT_LINE` finds (a secret word, then `=` or `:`): values never span
# lines, and scanning every line of a long tool result with them cost most of redaction's time.
_ASSIGNMENTS: Final[tuple[re.Pattern[str], ...]] = (
    re.compile(r"(?i)" + _SECRET_NAME + r"\"(?P<secret>" + _NOT_A_VALUE + r"[^\"\s]{4,}?)\""),
    re.compile(r"(?i)" + _SECRET_NAME + r"'(?P<secret>" + _NOT_A_VALUE + r"[^'\s]{4,}?)'"),
    re.compile(
        r"(?i)" + _SECRET_NAME + r"(?P<secret>" + _NOT_A_VALUE + r"[^\s\"'`&,;<>()\[\]{}]{4,}+)(?![(\[])"
    ),
)
# Bounded like the names: `token-token-token-...` made an unbounded tail quadratic.
_ASSIGNMENT_WORD: Final = r"(?:pass|pwd|secret|token|key)[A-Za-z0-9_\-]{0,40}[\"']?\s{0,8}(?:=>|:=|[=:])"
_ASSIGNMENT_HINT: Final = re.compile(r"(?i)" + _ASSIGNMENT_WORD)
_ASSIGNMENT_LINE: Final = re.compile(r"(?im)^.*" + _ASSIGNMENT_WORD + r".*$")


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


def redact(text: str, library: DetectorLibrary | None = LIBRARY) -> Redacted:
    """`text` with every secret our list or the detector library recognizes replaced by its placeholder.

    `library` is the installed detector (None: our list only, as without the `redaction` extra).
    """
    found: Counter[SecretKind] = Counter()
    for kind, pattern in _PATTERNS:
        if kind is not SecretKind.PRIVATE_KEY and not _may_hold(kind, text):
            continue
        text = pattern.sub(_replacer(kind, found), text)
    if _ASSIGNMENT_HINT.search(text):
        text = _ASSIGNMENT_LINE.sub(lambda line: _assignments_in(line.group(0), found), text)
    if library is not None:
        text = "".join(_detected(line, library, found) for line in text.splitlines(keepends=True))
    return Redacted(text, RedactionCounts.of_counter(found))


def redactors() -> tuple[str, ...]:
    """What redaction runs here, for reports: our list's version, then the detector library's."""
    ours = f"session-compaction-patterns {REDACTION_VERSION}"
    return (ours,) if LIBRARY is None else (ours, f"{LIBRARY.name} {LIBRARY.version}")


def _assignments_in(line: str, found: Counter[SecretKind]) -> str:
    for pattern in _ASSIGNMENTS:
        line = pattern.sub(_replacer(SecretKind.ASSIGNED_SECRET, found), line)
    return line


def _detected(line: str, library: DetectorLibrary, found: Counter[SecretKind]) -> str:
    if len(line) < MIN_VALUE_CHARS:
        return line
    for finding in tuple(findings_in(line, library)):
        times = line.count(finding.value)
        if times:
            kind = _LIBRARY_KINDS.get(finding.secret_type, SecretKind.VENDOR_TOKEN)
            found[kind] += times
            line = line.replace(finding.value, placeholder(kind))
    return line


# detect-secrets' secret types as our kinds (a type not listed counts as a vendor token).
_LIBRARY_KINDS: Final[Mapping[str, SecretKind]] = {
    "AWS Access Key": SecretKind.AWS_ACCESS_KEY,
    "Azure Storage Account access key": SecretKind.AZURE_STORAGE_KEY,
    "Basic Auth Credentials": SecretKind.URL_CREDENTIALS,
    "Base64 High Entropy String": SecretKind.HIGH_ENTROPY_STRING,
    "Hex High Entropy String": SecretKind.HIGH_ENTROPY_STRING,
    "Discord Bot Token": SecretKind.DISCORD_TOKEN,
    "GitHub Token": SecretKind.GITHUB_TOKEN,
    "GitLab Token": SecretKind.GITLAB_TOKEN,
    "JSON Web Token": SecretKind.JWT,
    "Secret Keyword": SecretKind.ASSIGNED_SECRET,
    "Mailchimp Access Key": SecretKind.MAILCHIMP_KEY,
    "NPM tokens": SecretKind.NPM_TOKEN,
    "OpenAI Token": SecretKind.OPENAI_KEY,
    "Private Key": SecretKind.PRIVATE_KEY,
    "PyPI Token": SecretKind.PYPI_TOKEN,
    "SendGrid API Key": SecretKind.SENDGRID_KEY,
    "Slack Token": SecretKind.SLACK_TOKEN,
    "Square OAuth Secret": SecretKind.SQUARE_TOKEN,
    "Stripe Access Key": SecretKind.STRIPE_KEY,
    "Twilio API Key": SecretKind.TWILIO_KEY,
    UNSCANNABLE: SecretKind.UNSCANNED_LINE,
}


def _replacer(kind: SecretKind, found: Counter[SecretKind]) -> Callable[[re.Match[str]], str]:
    def replace(match: re.Match[str]) -> str:
        found[kind] += 1
        group = next((name for name in match.re.groupindex if match.group(name) is not None), None)
        if group is not None:
            start, end = match.span(group)
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
    SecretKind.STRIPE_KEY: ("_live_", "_test_", "whsec_"),
    SecretKind.GOOGLE_API_KEY: ("AIza",),
    SecretKind.JWT: ("eyJ",),
    SecretKind.GITLAB_TOKEN: ("gl", "GR1348941"),
    SecretKind.HUGGINGFACE_TOKEN: ("hf_", "api_org_"),
    SecretKind.NPM_TOKEN: ("npm_",),
    SecretKind.PYPI_TOKEN: ("pypi-",),
    SecretKind.TWILIO_KEY: ("SK", "AC"),
    SecretKind.SENDGRID_KEY: ("SG.",),
    SecretKind.MAILCHIMP_KEY: ("-us",),
    SecretKind.SQUARE_TOKEN: ("sq0", "EAAA"),
    SecretKind.DISCORD_TOKEN: (".",),
    SecretKind.AZURE_STORAGE_KEY: ("=",),
    SecretKind.URL_CREDENTIALS: ("@",),
    SecretKind.CLI_CREDENTIALS: (
        "-u",
        "--user",
        "-p",
        "--p",
        "-t",
        "--t",
        "-a",
        "--a",
        "-s",
        "--s",
        "-c",
        "--c",
    ),
    SecretKind.BEARER_TOKEN: ("uthorization", "UTHORIZATION", "Bearer"),
}


def _may_hold(kind: SecretKind, text: str) -> bool:
    guards = _GUARDS.get(kind)
    return guards is None or any(guard in text for guard in guards)
