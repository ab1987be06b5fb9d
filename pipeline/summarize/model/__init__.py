"""The model path: a checkpoint written by a language model, over HTTP or the user's Claude Code.

This package calls the network. `engine.write_model_summary` packs redacted evidence (`pack`,
`redaction` with `secret_detector`), sends it through a provider (`providers/`: Anthropic
Messages, OpenAI-compatible chat, `claude -p`) under the run's one limiter (`limiter`, `calls`),
with the words of
`prompts`, reduces partial checkpoints in rounds (`reduction`), and checks every answer
(`grounding`); `outcomes` are its typed results, `cost` the plan before spending, and
`configure` makes its options from the settings.
"""
