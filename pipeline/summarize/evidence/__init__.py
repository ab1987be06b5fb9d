"""Evidence: what the summarized span holds, read into typed values every summarizer shares.

`items` re-reads exactly the lines to summarize, by offset, into immutable evidence items;
`work_state` reads what the session did from its tool calls (file operations, commands, active
work, todos); `shell` (over the lexer in `shell_lex`) reads a shell command the way a POSIX
shell would: which files it touches and whether it is a validation run. Pure: values in, values
out, no network and no clock.
"""
