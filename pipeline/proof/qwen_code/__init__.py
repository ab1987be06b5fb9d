"""The Qwen Code judge: the real Qwen Code resumes a staged copy of a session against a loopback
OpenAI-compatible server (`pipeline.proof.chat_capture`) and the request it sends is compared.

`qwen_install` finds the pinned Node.js 22 and Qwen Code; `session_staging` copies a session into
a throwaway home; `resume_run` runs the resume and splits the captured request; `qwen_verdict`
compares an original's and a candidate's contexts. Import from the modules: the package itself
stays empty.
"""
