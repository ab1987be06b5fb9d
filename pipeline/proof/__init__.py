"""Resume proof with the real client: what Claude Code sends for a session and for its compaction.

`capture` is the loopback stand-in for the Messages API; `staging` and `client` run Claude Code
against it in a throwaway home; `context` reads the request it sent; `model` pins the model;
`excluded` lists the texts a compaction must never send; `verdict` compares two contexts and
`proof` runs the whole check; `command` is `compaction verify-resume`. For Codex rollouts,
`responses_capture` stands in for the Responses API, `codex_staging` and `codex_client` run the
Codex CLI against it, `codex_excluded` lists the texts a rollout's compaction must never send,
`codex_verdict` compares two histories, `codex_prove` runs both, and `codex_golden` digests them.
Import from the modules: the package itself stays empty so building the CLI parser does not load
the client or server.
"""
