"""pi's (and OpenClaw's) session JSONL: signature, decode, the branch and context pi 1.6.0
rebuilds on resume, findings, the six sets, where a cut falls and pi's own compaction entry."""
