"""The Gemini CLI judge: the real Gemini CLI resumes a staged session against a loopback Gemini API."""
