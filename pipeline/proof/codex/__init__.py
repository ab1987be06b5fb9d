"""The Codex judge: the real Codex CLI resumes a staged copy of a rollout against a loopback
Responses API server, and the history it sends is compared with the original's.

`responses_capture` stands in for the Responses API; `codex_staging` and `codex_client` run the
Codex CLI against it; `codex_excluded` lists the texts a rollout's compaction must never send;
`codex_verdict` compares two histories, `codex_prove` runs both, and `codex_golden` digests them.
Import from the modules: the package itself stays empty.
"""
