"""The secret corpus (issue 24): 42 credential shapes planted by the transcript builder in human
messages, tool inputs and tool outputs; none reaches a request body of the local provider server,
through the engine on both protocols and through the real `compress` command line."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.agents.claude_code.chain_evidence import extract_evidence
from pipeline.core.index import build_index
from pipeline.formats.line_guard import LineLimits
from pipeline.summarize.evidence.items import EvidenceItem
from pipeline.summarize.model.engine import ModelSummary, write_model_summary
from pipeline.summarize.model.redaction import REDACTION_VERSION, SecretKind, redact, redactors
from pipeline.summarize.model.secret_detector import LIBRARY
from pipeline.testing.builder import TranscriptBuilder
from pipeline.testing.invoke import compaction, reports
from pipeline.testing.provider_server import ProviderServer
from pipeline.vocabulary import SourceFormat
from tests.summarize._support import anthropic, client, openai, options, services
from tests.support.secret_shapes import SecretShape, secret_shapes

SHAPES = secret_shapes()
PLACES = ("human", "tool-input", "tool-output")


def needles(shape: SecretShape) -> tuple[str, ...]:
    """Parts of a secret a partial leak would still show: its tail and its middle."""
    secret = shape.secret
    middle = len(secret) // 2
    return (secret[-12:], secret[middle - 6 : middle + 6]) if len(secret) >= 16 else (secret,)


def marker(shape: SecretShape, place: str) -> str:
    return f"planted-{shape.name}-{place}"


def planted_session(path: Path, ordinary_turns: int = 6, words: int = 0) -> None:
    """One turn per shape, each carrying it in the prompt, a Bash command and that command's output;
    then ordinary turns (prompts of `words` more words), so the planted ones are in the summarized span."""
    filler = "".join(f" word{i}" for i in range(words))
    builder = TranscriptBuilder(seed=24)
    for shape in SHAPES:
        builder.user(f"{marker(shape, 'human')}: keep this for later\n{shape.line}")
        builder.tool_call(
            "Bash",
            {"command": f"# {marker(shape, 'tool-input')}\n{shape.line}"},
            f"{marker(shape, 'tool-output')}\n{shape.line}",
        )
        builder.assistant(builder.text(f"Noted {shape.name}."))
    for turn in range(ordinary_turns):
        builder.user(f"Now run the tests, round {turn}.{filler}")
        builder.tool_call("Bash", {"command": f"pytest -q tests/test_{turn}.py"}, "12 passed in 0.1s")
        builder.assistant(builder.text(f"Round {turn}: the tests pass."))
    builder.write(path)


def evidence(path: Path) -> tuple[EvidenceItem, ...]:
    data = path.read_bytes()
    index = build_index(data, SourceFormat.CLAUDE_CODE, LineLimits(1 << 26, 256))
    return extract_evidence(data, index, range(1, len(index) + 1))


def leaks(server: ProviderServer) -> list[str]:
    """The shapes any request body shows a part of."""
    return [shape.name for shape in SHAPES if any(server.bodies_containing(n) for n in needles(shape))]


def test_the_corpus_has_at_least_thirty_distinct_shapes() -> None:
    assert len(SHAPES) >= 30 and len({shape.name for shape in SHAPES}) == len(SHAPES)
    assert len({shape.secret for shape in SHAPES}) == len(SHAPES)
    assert secret_shapes(seed=1)[0].secret != SHAPES[0].secret  # values are drawn, not committed


@pytest.mark.parametrize("detector", ["patterns", "patterns+library"])
@pytest.mark.parametrize("shape", SHAPES, ids=[shape.name for shape in SHAPES])
def test_every_shape_is_replaced_by_our_patterns_alone_and_with_the_library(
    shape: SecretShape, detector: str
) -> None:
    if detector == "patterns+library" and LIBRARY is None:
        pytest.skip("the redaction extra is not installed")
    result = redact(f"before {shape.line} after", None if detector == "patterns" else LIBRARY)
    assert not any(needle in result.text for needle in needles(shape))
    assert result.counts.total >= 1 and "[REDACTED:" in result.text
    assert result.text.startswith("before ") and result.text.endswith(" after")


@pytest.mark.skipif(LIBRARY is None, reason="the redaction extra is not installed")
def test_the_library_catches_what_our_patterns_lack() -> None:
    artifactory = "AKCp8" + "k2Lm9Qx7Rt4Vw1Yz3Bn6Cd8Ef0Gh2Ij5Kl7Mn9Op1Qr3St6Uv8Wx0Yz2Ab4Cd6Ef8Gh0Ij2Kl"
    entropic = "q7Zx2Lp9Wv4Rt8Yn3Bm6Kc1Hd5Gs0Fj7Ae2Uo9Ti4"
    text = f"artifactory {artifactory}\nconfig = {{'signing': '{entropic}'}}"
    assert redact(text, None).counts.total == 0
    result = redact(text)
    assert artifactory not in result.text and entropic not in result.text
    assert result.counts.of(SecretKind.VENDOR_TOKEN) == 1
    assert result.counts.of(SecretKind.HIGH_ENTROPY_STRING) == 1


@pytest.mark.anyio
@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
@pytest.mark.parametrize("path", ["single", "chunked"])
async def test_no_planted_shape_reaches_a_request_body(tmp_path: Path, protocol: str, path: str) -> None:
    planted_session(tmp_path / "s.jsonl", *((40, 60) if path == "chunked" else (6, 0)))
    items = evidence(tmp_path / "s.jsonl")
    with ProviderServer() as server:
        async with client() as http:
            provider = (anthropic if protocol == "anthropic" else openai)(server.base_url, http, stream=True)
            window = 5_000 if path == "chunked" else 120_000
            result = await write_model_summary(
                items, options(context_window=window, max_output=1_000), services(provider)
            )
        assert isinstance(result, ModelSummary)
        assert (result.account.reduction_depth > 0) == (path == "chunked")
        assert leaks(server) == []
        # every shape was sent, with its secret replaced: the prompt's marker is in a body
        assert all(server.bodies_containing(marker(shape, "human")) for shape in SHAPES)
    assert result.account.redactions.total >= len(SHAPES) * len(PLACES)


def test_the_compress_command_sends_no_planted_shape(tmp_path: Path) -> None:
    root = tmp_path / "root" / "project"
    root.mkdir(parents=True)
    planted_session(root / "s.jsonl", ordinary_turns=20)  # the kept recent records are all ordinary
    with ProviderServer() as server:
        done = compaction(
            "compress", str(tmp_path / "root"), "--out", str(tmp_path / "out"), "--min-tokens", "0",
            "--summarizer", "openai", "--base-url", server.base_url + "/v1", "--model", "local-model",
            "--quiet", env={"OPENAI_API_KEY": ""},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        assert server.requests and leaks(server) == []
        sent = sum(1 for shape in SHAPES if server.bodies_containing(marker(shape, "human")))
    (report,) = reports(tmp_path / "out")
    writer = report["summary"]["writer"]
    assert report["status"] == "compressed" and sent == len(SHAPES)
    assert sum(writer["redactions"].values()) >= len(SHAPES) * len(PLACES)
    assert writer["redacted_by"] == list(redactors())
    assert writer["redacted_by"][0] == f"session-compaction-patterns {REDACTION_VERSION}"
    assert not any(needle in str(report) for shape in SHAPES for needle in needles(shape))
