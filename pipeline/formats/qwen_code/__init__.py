"""Qwen Code sessions: `~/.qwen/projects/<sanitized cwd>/chats/<sessionId>.jsonl`.

`session_records` the typed values a line decodes to; `session_decode` lines to records (damaged
lines are line kinds, never errors); `active_chain` the branch Qwen Code walks by `parentUuid`;
`api_history` the history it rebuilds from that branch (its own `chat_compression` records reset
it); `chat_messages` that history as the Chat Completions messages it sends; `session_analysis`
the findings, the sets and where a cut may fall; `compression_records` a candidate in Qwen Code's
own compression form; `signature` positive identification. Raw JSON stays inside this package.
"""
