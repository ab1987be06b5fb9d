"""The Claude Code judge: the real Claude Code resumes a staged copy of a session against a loopback
Messages API server, and the context it sends is compared with the original's.

`capture` is the loopback stand-in for the Messages API (`api_rules`: the 400s the API answers);
`staging` and `client` run Claude Code against it in a throwaway home; `sent_context` reads the
request it sent, `reminders` the reminders it folds into one; `model` pins the model; `expected`
models the context it rebuilds from a chain; `exclusions` lists the texts a compaction must never
send; `resume_verdict` compares two contexts and `prove` runs both resumes and the verdict;
`repair_proof` judges a damage repair (`proof.damage_repair` plans and stages it). The seam binds
them as the active chain's judge in `agents/claude_code`. Import from the modules: the package
itself stays empty so building the CLI parser does not load the client or server.
"""
