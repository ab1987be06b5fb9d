"""Gemini CLI sessions: decoding, the context Gemini CLI rebuilds on resume, findings, vacuum."""
