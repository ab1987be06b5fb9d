"""A session with every probe class in its older turns, and a summarizer that forgets tool work."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pipeline.jobs.compress.writers import SummaryWriter, Written
from pipeline.reasons import Reason
from pipeline.summarize.evidence.items import EvidenceItem, EvidenceKind
from pipeline.testing import TranscriptBuilder

FIRST_PROMPT: Final = "Fix the login bug in src/app.py and keep the public API stable, please."
FAILURE: Final = "FAILED tests/test_app.py::test_login - KeyError: 'user_name'"
TEST_COMMAND: Final = "pytest -q tests/test_app.py"


def build_work_session(path: Path, *, turns: int = 6, seed: int = 3) -> TranscriptBuilder:
    """Human instructions, reads and edits, a failing test run fixed later, an identifier, filler turns."""
    builder = TranscriptBuilder(seed=seed)
    builder.user(FIRST_PROMPT)
    builder.tool_call(
        "Read", {"file_path": "/repo/src/app.py"}, "def login(user):\n    return user['name']\n" * 30
    )
    builder.tool_call("Read", {"file_path": "/repo/README.md"}, "# App\n" + "Logs users in.\n" * 40)
    builder.tool_call(
        "Bash", {"command": TEST_COMMAND}, f"Exit code 1\n{'.' * 400}\n{FAILURE}\n1 failed", is_error=True
    )
    builder.tool_call(
        "Edit",
        {"file_path": "/repo/src/app.py", "old_string": "['name']", "new_string": "['user_name']"},
        "The file has been updated." * 20,
    )
    builder.tool_call("Bash", {"command": TEST_COMMAND}, "." * 400 + "\n3 passed")
    builder.assistant(builder.text("Fixed: the key is user_name now (see issue #42); tests pass on v1.4.2."))
    for turn in range(1, turns):
        builder.user(f"Now step {turn}: tidy module_{turn} and rerun its tests, step {turn} of {turns}.")
        for step in range(3):
            builder.tool_call(
                "Bash", {"command": f"pytest tests/test_m{turn}_{step}.py -q"}, "." * 600 + "\n12 passed"
            )
        builder.tool_call(
            "Edit",
            {"file_path": f"/repo/src/module_{turn}.py", "old_string": "a", "new_string": "b"},
            "The file has been updated." * 40,
        )
        builder.assistant(builder.text(f"Step {turn} is done; its tests pass."))
    builder.last_prompt(
        f"Now step {turns - 1}: tidy module_{turns - 1} and rerun its tests, step {turns - 1} of {turns}."
    )
    builder.write(path)
    return builder


@dataclass(frozen=True, slots=True)
class ForgetfulWriter:
    """The embedded summarizer shown the conversation's text only: it cannot know the tool work.

    Real code on reduced evidence, so its candidate is valid and provably forgets commands, files
    and errors: what a fidelity floor is for.
    """

    inner: SummaryWriter
    replans: bool = True

    def __call__(self, evidence: Sequence[EvidenceItem], *room: int) -> Written | Reason:
        tool_work = (EvidenceKind.TOOL_CALL, EvidenceKind.TOOL_RESULT)
        return self.inner([item for item in evidence if item.kind not in tool_work], *room)
