"""Live replacement: changing a session file in place, safely, and undoing it.

`transaction` drives one replacement (seed 004): `source` freezes the session, `replacement`
validates, backs up and stages, `publication` takes the live name, verifies, rolls back and
cleans up; `placement` and `fsops` confine every operation to the directories opened once,
`faults` names the steps tests make fail, `receipt` is what a replacement reports and
`fingerprint` the identity values it records. Around it: numbered verified `backups`, the
`state_db` and run lock, `activity` (the idle rule, open-file detection), `recovery` of
interrupted runs, `decisions` and `session_pass` (one session of an in-place run), restore and
the backups listing (`backup_restore`), the `Read.pages` repair (`read_pages_repair`) and the
option objects made from the typed settings (`configured`). Import the modules themselves: this
package re-exports nothing.
"""
