"""The pi judge: the real pi (on its own Node.js 22) resumes a staged copy of a session against a
loopback OpenAI-compatible server, which records the context it sends."""
