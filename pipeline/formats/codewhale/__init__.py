"""CodeWhale (formerly DeepSeek-TUI) sessions: `~/.codewhale/sessions/<uuid>.json`, one JSON
document per session that grows with the whole history (`schema_version`, `metadata`, `messages`,
the `journal` of entries linked by `parent_id` with its `leaf_id`).

Pure reading: the document decoded (`whale_document.py`), the context CodeWhale rebuilds on resume
(`whale_history.py`), validation (`whale_integrity.py`), the checkpoint markers its compactions wrote
(`whale_markers.py`), where a cut may fall and the candidate in CodeWhale's own compaction form
(`whale_compose.py`), and seed 000's survival checks (`whale_survival.py`).
"""
