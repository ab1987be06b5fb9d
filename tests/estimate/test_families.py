"""Model families: a model id names the family whose tokenizer billed it."""

from __future__ import annotations

import pytest

from pipeline.estimate.estimators import EstimatorName
from pipeline.estimate.families import (
    FAMILY_ESTIMATOR,
    MAX_MODEL_CHARS,
    SYNTHETIC_MODEL,
    ModelFamily,
    family_of,
)


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("claude-sonnet-4-5-20250929", ModelFamily.CLAUDE),
        ("claude-sonnet-4-20250514", ModelFamily.CLAUDE),  # a date is not a minor version
        ("claude-3-5-sonnet-20241022", ModelFamily.CLAUDE),
        ("claude-opus-4-6", ModelFamily.CLAUDE),
        ("claude-opus-4-7", ModelFamily.CLAUDE_4_7),
        ("claude-opus-5", ModelFamily.CLAUDE_4_7),
        ("anthropic/claude-opus-4.8", ModelFamily.CLAUDE_4_7),
        ("gpt-5", ModelFamily.OPENAI),
        ("gpt-4o-mini", ModelFamily.OPENAI),
        ("o3-mini", ModelFamily.OPENAI),
        ("gpt-4-turbo", ModelFamily.OPENAI_LEGACY),
        ("gpt-3.5-turbo", ModelFamily.OPENAI_LEGACY),
        ("deepseek-chat", ModelFamily.DEEPSEEK),
        ("deepseek-ai/DeepSeek-V3.1", ModelFamily.DEEPSEEK),
        ("qwen3-coder-plus", ModelFamily.QWEN),
        ("Qwen/Qwen3-Coder-480B-A35B-Instruct", ModelFamily.QWEN),
        ("glm-4.6", ModelFamily.GLM),
        ("zai-org/GLM-4.5-Air", ModelFamily.GLM),
        ("kimi-k2-0905-preview", ModelFamily.KIMI),
        ("moonshotai/Kimi-K2-Instruct", ModelFamily.KIMI),
        ("gemini-2.5-pro", ModelFamily.GEMINI),
        ("MiniMax-M2", ModelFamily.OTHER),
        ("", ModelFamily.UNKNOWN),
        (None, ModelFamily.UNKNOWN),
    ],
)
def test_model_ids_name_their_family(model: str | None, family: ModelFamily) -> None:
    assert family_of(model) is family


def test_claude_codes_synthetic_messages_are_no_model() -> None:
    assert family_of(SYNTHETIC_MODEL) is None


def test_a_value_too_long_for_a_model_id_is_of_another_family() -> None:
    assert family_of("claude-opus-4-7 " + "x" * MAX_MODEL_CHARS) is ModelFamily.OTHER


def test_every_family_has_an_estimator_and_vendors_keep_their_own_tokenizer() -> None:
    assert set(FAMILY_ESTIMATOR) == set(ModelFamily)
    assert FAMILY_ESTIMATOR[ModelFamily.DEEPSEEK] is EstimatorName.DEEPSEEK
    assert FAMILY_ESTIMATOR[ModelFamily.QWEN] is EstimatorName.QWEN
    assert FAMILY_ESTIMATOR[ModelFamily.OPENAI] is EstimatorName.O200K
    # no shipped tokenizer fits these: the calibrated estimator stands in
    assert FAMILY_ESTIMATOR[ModelFamily.GLM] is EstimatorName.CALIBRATED
    assert not EstimatorName.AUTO.is_real
