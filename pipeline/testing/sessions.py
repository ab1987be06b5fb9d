"""A realistic multi-turn session with the hazards compression must handle, for tests and demos.

`build_session` writes tool work in every turn, constraints in several languages, a rewound
branch carrying `CANARY_BRANCH` and a malformed line carrying `CANARY_MALFORMED`: text of
excluded lines that must never reach a candidate, a summary, a report or a log.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from pipeline.testing.builder import TranscriptBuilder

__all__ = ["CANARY_BRANCH", "CANARY_MALFORMED", "PROMPTS", "build_session"]

CANARY_BRANCH: Final = "CANARY-REWOUND-7f3a9"
CANARY_MALFORMED: Final = "CANARY-MALFORMED-41c2"
PROMPTS: Final = (
    "Set up the parser module and keep the public API stable",
    "不要修改数据库的结构\uff0c只添加新的索引",  # constraints in any language must survive verbatim
    "Добавь тесты для граничных случаев",
    "Now profile the hot loop and report the numbers",
    "Finally, write the changelog entry",
)


def build_session(path: Path, *, turns: int = 5, seed: int = 1, pointer: bool = True) -> TranscriptBuilder:
    """Write the session to `path` (and return its builder)."""
    builder = TranscriptBuilder(seed=seed)
    for turn in range(turns):
        prompt = builder.user(
            PROMPTS[turn % len(PROMPTS)] + ("" if turn < len(PROMPTS) else f" (round {turn})")
        )
        if turn == 1:
            builder.assistant(builder.text(f"abandoned idea {CANARY_BRANCH}"))
            builder.rewind(prompt)  # the user edited the prompt: the branch above is rewound
        for step in range(4):
            builder.tool_call(
                "Bash",
                {"command": f"pytest tests/test_step_{turn}_{step}.py -q"},
                "collected 12 items\n" + "." * 600 + f"\n12 passed in 0.{step}s",
            )
        builder.tool_call(
            "Edit",
            {"file_path": f"/repo/src/module_{turn}.py", "old_string": "a", "new_string": "b"},
            "The file has been updated." * 40,
        )
        builder.assistant(builder.text(f"Turn {turn} is complete; the tests pass."))
    builder.raw(b'{"type":"user","message":{"content":"' + CANARY_MALFORMED.encode() + b'"')
    if pointer:
        builder.last_prompt(PROMPTS[(turns - 1) % len(PROMPTS)])
    builder.write(path)
    return builder
