"""Measure redaction over the Claude Code corpus: how much ordinary text it replaces, and its cost.

The corpus sessions hold no live credential, so every replacement there is a false positive (or a
fake key a session printed on purpose). For our patterns alone and with the detector library, it
prints the share of evidence texts and of characters replaced, the kinds hit and the time taken.
Counts only: no replaced text is printed. `--codex` measures the Codex rollouts too (every string
of every record, each distinct string once); `--adversarial` times redaction of 40 K-character
runs of each rule's characters (a regex that backtracks shows as seconds here).

    python benchmarks/redaction.py
    python benchmarks/redaction.py --codex --adversarial
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import CORPUS, emit, session_files

from pipeline.agents.claude_code.chain_evidence import extract_evidence
from pipeline.core.index import build_index
from pipeline.formats.detect import detect_format
from pipeline.formats.line_guard import LineLimits
from pipeline.summarize.evidence.items import EvidenceItem
from pipeline.summarize.model.redaction import SecretKind, placeholder, redact
from pipeline.summarize.model.secret_detector import LIBRARY, DetectorLibrary
from pipeline.vocabulary import SourceFormat

LIMITS = LineLimits(64 * 1024 * 1024, 256)


def texts(root: Path) -> Iterator[str]:
    """Every text a model request could carry: each evidence item's text and tool-input string."""
    for path in session_files(root):
        data = path.read_bytes()
        if detect_format(data) is not SourceFormat.CLAUDE_CODE:
            continue
        index = build_index(data, SourceFormat.CLAUDE_CODE, LIMITS)
        for item in extract_evidence(data, index, range(1, len(index) + 1)):
            yield from _strings(item)


def codex_texts(root: Path) -> Iterator[str]:
    """Every distinct string of every Codex rollout record under `root`."""
    seen: set[str] = set()
    for path in session_files(root):
        for line in path.read_text(errors="replace").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            for text in _nested(record):
                if text and text not in seen:
                    seen.add(text)
                    yield text


def _strings(item: EvidenceItem) -> Iterator[str]:
    if item.text:
        yield item.text
    yield from _nested(item.tool_input)


def _nested(value: object) -> Iterator[str]:
    stack: list[object] = [value]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            yield value
        elif isinstance(value, Mapping):
            stack.extend(value.values())
        elif isinstance(value, (list, tuple)):
            stack.extend(value)


def measure(corpus: list[str], library: DetectorLibrary | None) -> dict[str, object]:
    """Shares of texts, lines and characters replaced, the kinds hit, and seconds taken."""
    kinds: Counter[SecretKind] = Counter()
    texts_hit = lines_hit = replaced = 0
    started = time.perf_counter()
    for text in corpus:
        result = redact(text, library)
        if not result.counts.total:
            continue
        texts_hit += 1
        lines_hit += sum(1 for line in result.text.splitlines() if "[REDACTED:" in line)
        shown = sum(len(placeholder(kind)) * count for kind, count in result.counts.counts)
        replaced += len(text) - len(result.text) + shown
        kinds.update(dict(result.counts.counts))
    seconds = time.perf_counter() - started
    chars = sum(len(text) for text in corpus)
    lines = sum(text.count("\n") + 1 for text in corpus)
    return {
        "detectors": "patterns" if library is None else f"patterns + {library.name} {library.version}",
        "texts": len(corpus),
        "texts_redacted": texts_hit,
        "texts_redacted_share": round(texts_hit / len(corpus), 5),
        "lines": lines,
        "lines_redacted": lines_hit,
        "lines_redacted_share": round(lines_hit / lines, 6),
        "chars": chars,
        "chars_redacted": replaced,
        "chars_redacted_share": round(replaced / chars, 6),
        "kinds": {kind.value: count for kind, count in kinds.most_common()},
        "seconds": round(seconds, 2),
        "mb_per_second": round(chars / 1e6 / seconds, 2),
    }


ADVERSARIAL_CHARS = 40_000
ADVERSARIAL_UNITS = (
    "a-",
    "a_",
    "a.",
    "a:",
    "a=",
    "a@",
    "key=",
    "token-",
    "x_pass_",
    '"a',
    "a ",
    "-u a:",
    "--password ",
    "Bearer ",
    "authorization: ",
    "eyJaaaaaaaaaa.",
    "http://a:",
    "AccountKey=A",
    "&sig=A",
    "Ab3-_",
)


def adversarial(library: DetectorLibrary | None) -> dict[str, float]:
    """Seconds to redact a long run of each unit, slowest first."""
    seconds: dict[str, float] = {}
    for unit in ADVERSARIAL_UNITS:
        text = unit * (ADVERSARIAL_CHARS // len(unit))
        started = time.perf_counter()
        redact(text, library)
        seconds[unit] = round(time.perf_counter() - started, 3)
    return dict(sorted(seconds.items(), key=lambda item: -item[1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--codex", action="store_true", help="also the Codex rollouts beside the corpus")
    parser.add_argument(
        "--adversarial", action="store_true", help="also time long runs of each rule's characters"
    )
    args = parser.parse_args()
    results: dict[str, object] = {"corpus": str(args.corpus), "runs": _runs(list(texts(args.corpus)))}
    if args.codex:
        rollouts = args.corpus.parent / "codex" / "files"
        results["codex"] = {"corpus": str(rollouts), "runs": _runs(list(codex_texts(rollouts)))}
    if args.adversarial:
        libraries = [None] if LIBRARY is None else [None, LIBRARY]
        results["adversarial"] = [
            {
                "detectors": "patterns" if library is None else "patterns + library",
                "seconds": adversarial(library),
            }
            for library in libraries
        ]
    emit("redaction", results)


def _runs(corpus: list[str]) -> list[dict[str, object]]:
    libraries = [None] if LIBRARY is None else [None, LIBRARY]
    return [measure(corpus, library) for library in libraries]


if __name__ == "__main__":
    main()
