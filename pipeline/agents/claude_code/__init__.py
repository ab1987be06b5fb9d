"""Claude Code through the seam: its active chain's judge (`claude_judge`), the real Claude Code
resuming both sides against the loopback Messages API (`proof/claude_code/`)."""
