"""Redaction: every kind on the list is replaced by its placeholder and counted; other text is kept."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pipeline.summarize.model.redaction import (
    REDACTION_VERSION,
    RedactionCounts,
    SecretKind,
    placeholder,
    redact,
    redactors,
)
from pipeline.summarize.model.secret_detector import LIBRARY

# Fakes in each provider's shape (none is a live credential).
PLANTED: dict[SecretKind, str] = {
    SecretKind.ANTHROPIC_KEY: "sk-ant-api03-" + "A1b2C3d4E5f6G7h8I9j0" * 3,
    SecretKind.OPENAI_KEY: "sk-proj-" + "Zy9Xw8Vu7Ts6Rq5Po4Nm3Lk2" * 2,
    SecretKind.AWS_ACCESS_KEY: "AKIAIOSFODNN7EXAMPLE",
    SecretKind.GITHUB_TOKEN: "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    SecretKind.SLACK_TOKEN: "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    SecretKind.STRIPE_KEY: "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    SecretKind.GOOGLE_API_KEY: "AIza" + "SyA-1234567890abcdefghijklmnopqrstu",
    SecretKind.JWT: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
}


@pytest.mark.parametrize("kind", list(PLANTED))
def test_a_planted_key_becomes_its_placeholder_and_is_counted(kind: SecretKind) -> None:
    secret = PLANTED[kind]
    result = redact(f"here it is: {secret} (do not share)")
    assert secret not in result.text
    assert result.text == f"here it is: {placeholder(kind)} (do not share)"
    assert result.counts.counts == ((kind, 1),)


def test_a_pem_private_key_is_replaced_whole_even_unterminated() -> None:
    block = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\nAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----"
    result = redact(f"key:\n{block}\nafter")
    assert result.text == f"key:\n{placeholder(SecretKind.PRIVATE_KEY)}\nafter"
    cut = redact("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n(output truncated)")
    assert "MIIEpAIBAAKCAQEA" not in cut.text and cut.counts.of(SecretKind.PRIVATE_KEY) == 1


def test_assignments_and_url_credentials_keep_the_name_and_lose_the_value() -> None:
    text = 'export PASSWORD="hunter2-correct-horse" && curl https://deploy:s3cr3tPass@git.example.com/repo.git token: abcd1234efgh'
    result = redact(text)
    for secret in ("hunter2-correct-horse", "s3cr3tPass", "abcd1234efgh"):
        assert secret not in result.text
    assert 'PASSWORD="[REDACTED:assigned-secret]"' in result.text
    assert "https://[REDACTED:url-credentials]@git.example.com/repo.git" in result.text
    assert result.counts.of(SecretKind.ASSIGNED_SECRET) == 2
    assert result.counts.of(SecretKind.URL_CREDENTIALS) == 1


def test_aws_secret_key_assignment_and_a_key_inside_an_assignment_are_counted_once() -> None:
    result = redact(
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\napi_key="
        + PLANTED[SecretKind.ANTHROPIC_KEY]
    )
    assert "wJalrXUtnFEMI" not in result.text and "sk-ant-" not in result.text
    assert result.counts.counts == ((SecretKind.ANTHROPIC_KEY, 1), (SecretKind.AWS_SECRET_KEY, 1))


@pytest.mark.parametrize(
    "text",
    [
        "def check(token: int) -> bool:",
        "Ran pytest -q: 3 passed in sk-learn (sklearn) docs",
        "email me at someone@example.com",
        "The ghost of a key: AKIA is a prefix only",
        "",
    ],
)
def test_ordinary_text_is_left_as_it_is(text: str) -> None:
    result = redact(text)
    assert result.text == text and result.counts.total == 0


def test_counts_add_up_across_records_in_the_lists_order() -> None:
    first = redact(PLANTED[SecretKind.JWT] + " " + PLANTED[SecretKind.ANTHROPIC_KEY]).counts
    second = redact(PLANTED[SecretKind.JWT]).counts
    total = RedactionCounts.summed([first, second])
    assert total.counts == ((SecretKind.ANTHROPIC_KEY, 1), (SecretKind.JWT, 2))
    assert (first + second) == total and total.total == 3
    assert REDACTION_VERSION >= 1


@pytest.mark.parametrize(
    "text", ["password: str = field()", "token = get_token()", "api_key: Optional[str]", "secret=None"]
)
def test_code_that_names_a_secret_without_holding_one_is_kept(text: str) -> None:
    assert redact(text).text == text


def test_without_the_library_our_patterns_still_run_and_reports_say_only_they_ran() -> None:
    script = (
        "import sys; sys.modules['detect_secrets'] = None\n"  # as if the redaction extra were absent
        "from pipeline.summarize.model import redaction, secret_detector\n"
        "print(secret_detector.LIBRARY, redaction.redactors())\n"
        "print(redaction.redact('DATABASE_PASSWORD=Xk29abcdQ7 hf_' + 'a1B2' * 9).text)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"None ('session-compaction-patterns {REDACTION_VERSION}',)",
        "DATABASE_PASSWORD=[REDACTED:assigned-secret] [REDACTED:huggingface-token]",
    ]


def test_reports_name_what_ran_our_list_and_the_library_when_installed() -> None:
    ran = redactors()
    assert ran[0] == f"session-compaction-patterns {REDACTION_VERSION}"
    if LIBRARY is None:
        assert ran == (ran[0],)
    else:
        assert ran[1] == f"{LIBRARY.name} {LIBRARY.version}" and LIBRARY.name.endswith("detect-secrets")


@pytest.mark.parametrize(
    "text",
    [
        "commit 3f786850e387550fdab836ed7e6dc881de23001b (HEAD -> main)",
        'sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"',
        '"integrity": "sha512-Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FycGx5d2FsZG8gZnJlZA=="',
        '"id": "msg_01J6DPiGJcuVzMb47chNN9Q2", "requestId": "req_011CUVfaQNLTXWgjJriSwCFw"',
        '"parentUuid": "4358ea05-e9f1-4c0a-8c27-6fe1727f2bda"',
        "project_path = '/var/folders/4n/2f7pppjd2_n0fftzg8vrlg040000gn/T/tmpzpz61wxy'",
        "- First pass: Build map of events; Second pass: match them",
        "const apiKey = await clack.password({ message: 'key' })",
        'token_summary = "Token usage - " + " | ".join(parts)',
        "password=password, token=auth_token, api_key=settings.API_KEY, secret=SECRET_NAME",
        "max_tokens=4096 input_tokens: 1234",
        'TIMESTAMP="$(date -u +%Y-%m-%dT%H:%M:%S.%6NZ)"',
        "git push -u origin main && docker run -u 1000:1000 app",
        'codemie --api-key sk-... "review code"',
        '"jsonwebtoken": "^9.0.2", "csrf-token": "~1.2.x"',
        "headers: { 'X-CSRF-Token': csrf, 'x-csrf-token': 'csrf-token' }, token: token!,",
        "const token = csrfPayload?.token as string",
        'alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"',
        '"nextPageToken": "CAoQAA", "syncToken": "Zx81kQ2m"',
        "permissions:\n  contents: read\n  id-token: write\n",
        "![chart](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==)",
    ],
)
def test_ordinary_code_ids_digests_and_paths_are_kept_with_the_library(text: str) -> None:
    result = redact(text)
    assert result.text == text and result.counts.total == 0
