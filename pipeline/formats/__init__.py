"""Transcript formats: each agent's signature and the registry of them, detection, and the
Claude Code and Codex readers."""
