"""Claude Code through the seams: its active chain's own parts in a compaction (`chain_parts`:
bounding, carried state, its compaction records and stamps, read from `formats/claude_code`) and
its judge (`claude_judge`: the real Claude Code resuming both sides against the loopback Messages
API, `proof/claude_code/`)."""
