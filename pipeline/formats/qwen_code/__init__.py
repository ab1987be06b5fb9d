"""Qwen Code sessions: `~/.qwen/projects/<sanitized cwd>/chats/<sessionId>.jsonl`.

`session_records` the typed values a line decodes to; `session_decode` lines to records (damaged
lines are line kinds, never errors); `active_chain` the branch Qwen Code walks by `parentUuid`;
`api_history` the history it rebuilds from that branch (its own `chat_compression` records reset
it); `chat_messages` that history as the Chat Completions messages it sends; `session_analysis`
the findings, the sets and where a cut may fall; `call_repair` the repair of calls' answers Qwen
Code makes before every request, `answer_repair` that repair written into the file (`repair`),
`part_origins` the line each part of the history was written on; `chat_compression` a candidate
in Qwen Code's own compression form; `signature` positive identification. Raw JSON stays inside
this package.
"""
