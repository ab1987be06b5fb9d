"""The golden test: the history our reader rebuilds from a CodeWhale session, put on the wire as
CodeWhale puts it (`formats/codewhale/whale_wire.py`), is exactly, message for message, what the
real CodeWhale 0.10.2 sends when it resumes that session: every fixture the real CodeWhale wrote
(`tests/fixtures/codewhale/`), and built sessions for the shapes a recording does not give (a
crash's unanswered call, an orphan result, a rewound branch, an interrupted answer, a document
with no journal, a pre-0.9.6 summary, a "started to solve this problem" note after a round, an
image); and a journal the reader calls not resumable is one CodeWhale refuses to
resume. The resumes skip while `scripts/install-codewhale` has not built CodeWhale."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Final

import pytest

from pipeline.formats.codewhale.whale_analysis import analyze_session
from pipeline.formats.codewhale.whale_markers import PROVENANCE
from pipeline.formats.codewhale.whale_wire import canonical, wire_history
from pipeline.proof.codewhale.whale_client import find_codewhale
from pipeline.proof.codewhale.whale_resume import CodewhaleFailed, resumed_history
from pipeline.vocabulary import Severity
from tests.support.codewhale_sessions import LIMITS, SessionBuilder, call, fixture_files, result, text

CODEWHALE = find_codewhale()
needs_codewhale = pytest.mark.skipif(
    CODEWHALE is None, reason="CodeWhale not built (scripts/install-codewhale)"
)
TIMEOUT: Final = 180.0


def _ours(data: bytes) -> list[str]:
    analysis = analyze_session(data, LIMITS)
    assert analysis.rebuilt is not None and analysis.resumable
    wire = wire_history([item.message for item in analysis.rebuilt.messages])
    return [m for m in wire if json.loads(m)["role"] != "system"]  # the judge drops system messages


def _sent(path: Path) -> list[str]:
    assert CODEWHALE is not None
    return [canonical(m) for m in resumed_history(path, CODEWHALE, TIMEOUT)]


def _built() -> dict[str, bytes]:
    """Sessions in CodeWhale's serde form with what a recording does not show."""
    crashed = SessionBuilder()
    crashed.extend([text("user", "run the build"), call("c1", say="building"), text("user", "status?")])
    orphan = SessionBuilder()
    orphan.extend([text("user", "go"), result("c9", "a result of no call"), text("assistant", "went")])
    rewound = SessionBuilder()
    root = rewound.add(text("user", "pick a name"))
    rewound.add(text("assistant", "the abandoned answer"))
    rewound.add(text("assistant", "the kept answer"), parent=root)
    interrupted = SessionBuilder()
    interrupted.extend([text("user", "write it"), text("assistant_interrupted", "half of the")])
    legacy = SessionBuilder(journal=False)
    legacy.extend(
        [text("user", "old"), call("c2"), result("c2", "x" * 2000), call("c3"), result("c3", "x" * 2000)]
    )
    legacy_summary = SessionBuilder()
    legacy_summary.extend(
        [
            text("user", "## 📋 Conversation Summary (Auto-Generated)\n\nEarlier: the tree was built."),
            text("user", "continue"),
            call("c4", say="checking"),
            result("c4", "ok"),
            text("assistant", "continued"),
        ]
    )
    v2_note = SessionBuilder()
    v2_note.extend([text("user", "review"), call("c5"), result("c5", "done")])
    v2_note.add(
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Another language model started to solve this problem. Its notes."},
                {"type": "text", "text": PROVENANCE},
            ],
        }
    )
    v2_note.add(text("user", "go on"))
    image = SessionBuilder()
    picture = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
    image.extend(
        [{"role": "user", "content": [{"type": "text", "text": "look"}, picture]}, text("assistant", "seen")]
    )
    return {
        "legacy-summary": legacy_summary.bytes(),
        "v2-note-after-a-round": v2_note.bytes(),
        "image": image.bytes(),
        "crashed": crashed.bytes(),
        "orphan": orphan.bytes(),
        "rewound": rewound.bytes(),
        "interrupted": interrupted.bytes(),
        "legacy-repeated-result": legacy.bytes(),
    }


BUILT: Final = _built()


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: p.name)
def test_every_fixture_validates_with_no_error(path: Path) -> None:
    analysis = analyze_session(path.read_bytes(), LIMITS)
    assert analysis.resumable
    assert [f.code for f in analysis.findings if f.severity is Severity.ERROR] == []


@needs_codewhale
@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: p.name)
def test_the_rebuilt_context_of_a_fixture_is_what_codewhale_sends(path: Path) -> None:
    assert _sent(path) == _ours(path.read_bytes())


@needs_codewhale
@pytest.mark.parametrize("name", sorted(BUILT))
def test_the_rebuilt_context_of_a_built_session_is_what_codewhale_sends(name: str, tmp_path: Path) -> None:
    path = tmp_path / f"{name}.json"
    path.write_bytes(BUILT[name])
    assert _sent(path) == _ours(BUILT[name])


JOURNAL_DAMAGE: Final = {
    "duplicate-id": lambda d: d["journal"]["entries"].append(dict(d["journal"]["entries"][0])),
    "dangling-parent": lambda d: d["journal"]["entries"][1].update(parent_id="nowhere"),
    "missing-leaf": lambda d: d["journal"].update(leaf_id="nowhere"),
    "loop": lambda d: d["journal"]["entries"][0].update(parent_id=d["journal"]["leaf_id"]),
    "unknown-block": lambda d: d["journal"]["entries"][1]["message"]["content"].append({"type": "video"}),
}


@needs_codewhale
@pytest.mark.parametrize("damage", sorted(JOURNAL_DAMAGE))
def test_a_document_the_reader_calls_not_resumable_codewhale_refuses_to_resume(
    damage: str, tmp_path: Path
) -> None:
    session = SessionBuilder()
    session.extend([text("user", "q"), text("assistant", "a")])
    document = session.document()
    JOURNAL_DAMAGE[damage](document)
    path = tmp_path / "damaged.json"
    path.write_text(json.dumps(document))
    assert not analyze_session(path.read_bytes(), LIMITS).resumable
    with pytest.raises(CodewhaleFailed, match="sent no chat request"):
        _sent(path)
