"""The deterministic checkpoint: seed 001's nine cited sections, written without a model.

`document` is the checkpoint's form (headings, bullets, citations, how to write, read and check
it); `bullets` reads the bullets from evidence, `assembly` assembles the nine sections, `fitting`
fits them into their room, `appendix` renders the file operations, validation runs and active
work, and `deterministic` is the embedded summarizer that composes them. Pure: no network, no
clock, no files.
"""
