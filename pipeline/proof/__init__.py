"""Resume proof with the real clients: each agent's judge in its own package, and what they share.

`claude_code/`, `codex/`, `pi/`, `gemini_cli/`, `qwen_code/` and `codewhale/` each hold one
agent's judge: staging, running its client against a loopback server, its verdict. Shared by
them: `loopback` (the loopback HTTP server), `process_group` (a client run in a group of its
own), `chat_capture` (the one loopback Chat Completions server), `item_verdict` (the verdict of
the item-context judges), `context` (a request's size, measured alike), `verdict` (the excluded
texts every verdict searches for) and `excluded` (the sets they come from). Import from the
modules: the package itself stays empty so building the CLI parser does not load a client or server.
"""
