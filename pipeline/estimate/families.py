"""Model families: which tokenizer billed a session, read from the models its assistant records name.

Claude Code writes the model of every assistant message (`message.model`). Many sessions run
other vendors' models behind it (DeepSeek, GLM, Qwen, Kimi through Anthropic-compatible
endpoints), and each vendor bills with its own tokenizer. A family groups the models that share
one: `claude` for Claude models through 4.6 (the legacy tokenizer is their closest public
relative), `claude-4.7` for Opus 4.7 and later (Anthropic's newer tokenizer, which makes more
tokens of the same text), `openai` (o200k) and `openai-legacy` (cl100k), `deepseek`, `qwen`, and
families no shipped tokenizer fits (`glm`, `kimi`, `gemini`, `other`). `unknown` is a record
without a model. Claude Code's own `<synthetic>` messages are no model at all.

`family_of` is pure string matching on the model id, lower-cased: version numbers are parsed
where the family depends on them, never a table of today's model names.
"""

from __future__ import annotations

import re
from enum import StrEnum
from functools import lru_cache
from types import MappingProxyType
from typing import Final

from pipeline.estimate.estimators import EstimatorName

__all__ = ["FAMILY_ESTIMATOR", "MAX_MODEL_CHARS", "SYNTHETIC_MODEL", "ModelFamily", "family_of"]

SYNTHETIC_MODEL: Final = "<synthetic>"


class ModelFamily(StrEnum):
    """Families of models that share a tokenizer (report keys)."""

    CLAUDE = "claude"
    CLAUDE_4_7 = "claude-4.7"
    OPENAI = "openai"
    OPENAI_LEGACY = "openai-legacy"
    DEEPSEEK = "deepseek"
    QWEN = "qwen"
    GLM = "glm"
    KIMI = "kimi"
    GEMINI = "gemini"
    OTHER = "other"
    UNKNOWN = "unknown"


FAMILY_ESTIMATOR: Final = MappingProxyType(
    {
        ModelFamily.CLAUDE: EstimatorName.CLAUDE_LEGACY,
        ModelFamily.CLAUDE_4_7: EstimatorName.CLAUDE_LEGACY,  # scaled by the family's fitted factor
        ModelFamily.OPENAI: EstimatorName.O200K,
        ModelFamily.OPENAI_LEGACY: EstimatorName.CL100K,
        ModelFamily.DEEPSEEK: EstimatorName.DEEPSEEK,
        ModelFamily.QWEN: EstimatorName.QWEN,
        ModelFamily.GLM: EstimatorName.CALIBRATED,
        ModelFamily.KIMI: EstimatorName.CALIBRATED,
        ModelFamily.GEMINI: EstimatorName.CALIBRATED,
        ModelFamily.OTHER: EstimatorName.CALIBRATED,
        ModelFamily.UNKNOWN: EstimatorName.CALIBRATED,
    }
)
"""The estimator `auto` counts a family's text with: its own tokenizer, else the calibrated one."""

# Claude ids: `claude-opus-4-7`, `claude-sonnet-4-5-20250929`, `claude-3-5-sonnet-20241022`,
# `claude-opus-5`; the first number after the tier (or before it, in the older naming) is the
# major version, a following 1-2 digit number the minor (8-digit dates are not versions).
_CLAUDE_NEW: Final = re.compile(r"claude-(?:[a-z]+-)?(\d{1,2})(?:[-.](\d{1,2}))?(?![\d])")
_CLAUDE_TOKENIZER_CHANGE: Final = (4, 7)  # Opus 4.7 introduced Anthropic's newer tokenizer
_OPENAI_LEGACY: Final = re.compile(r"(?:^|/)gpt-(?:3\.5|4)(?:-turbo|-\d{4}|-32k|$)(?!o)")
_OPENAI: Final = re.compile(r"(?:^|/)(?:gpt-|o[1-9](?:-|$)|chatgpt-|codex-|text-embedding-3)")
_PREFIXES: Final = (
    ("deepseek", ModelFamily.DEEPSEEK),
    ("qwen", ModelFamily.QWEN),
    ("qwq", ModelFamily.QWEN),
    ("glm", ModelFamily.GLM),
    ("chatglm", ModelFamily.GLM),
    ("zhipu", ModelFamily.GLM),
    ("kimi", ModelFamily.KIMI),
    ("moonshot", ModelFamily.KIMI),
    ("gemini", ModelFamily.GEMINI),
    ("gemma", ModelFamily.GEMINI),
)


def _claude(model: str) -> ModelFamily:
    match = _CLAUDE_NEW.search(model)
    if match is None:
        return ModelFamily.CLAUDE
    major = int(match.group(1))
    minor = int(match.group(2)) if match.group(2) else 0
    return ModelFamily.CLAUDE_4_7 if (major, minor) >= _CLAUDE_TOKENIZER_CHANGE else ModelFamily.CLAUDE


MAX_MODEL_CHARS: Final = 200  # longer is no model id (and is never held in the cache below)


def family_of(model: str | None) -> ModelFamily | None:
    """The family of a `message.model` value; None for Claude Code's synthetic messages."""
    if model is None or not model.strip():
        return ModelFamily.UNKNOWN
    if len(model) > MAX_MODEL_CHARS:
        return ModelFamily.OTHER
    return _family_of(model)


@lru_cache(maxsize=1024)  # a fleet names few models, each on thousands of lines
def _family_of(model: str) -> ModelFamily | None:
    if model == SYNTHETIC_MODEL:
        return None
    name = model.strip().lower()
    # A provider prefix (`anthropic/claude-...`, `deepseek-ai/DeepSeek-V3`) says less than the id.
    base = name.rsplit("/", 1)[-1]
    if "claude" in base:
        return _claude(base)
    named = (family for prefix, family in _PREFIXES if base.startswith(prefix) or name.startswith(prefix))
    found = next(named, None)
    if found is None and _OPENAI_LEGACY.search(base):
        found = ModelFamily.OPENAI_LEGACY
    elif found is None and _OPENAI.search(base):
        found = ModelFamily.OPENAI
    return found or ModelFamily.OTHER
