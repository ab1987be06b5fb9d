"""Transcript formats: detection, and the Claude Code record decoder."""
