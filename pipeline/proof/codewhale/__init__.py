"""CodeWhale as the judge of its sessions' compactions: the pinned build located, a copy staged
under a throwaway `CODEWHALE_HOME`, resumed with `codewhale exec --resume` against a loopback
OpenAI-compatible capture server (`pipeline.proof.chat_capture`), and what it sent compared."""
