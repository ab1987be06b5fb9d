"""Types of the compiled line index (the Rust core, `rust/`); see `pipeline.formats.claude_code.scan`."""

from collections.abc import Callable
from typing import Any

def configure(
    record_type: type[Any],
    pointer_states: tuple[Any, Any, Any, Any],
    blank: Any,
    record: Any,
    problem_kinds: dict[str, Any],
    prompt_key: Callable[[int, Any], str | None],
    weight: Callable[[str], int],
    names: tuple[str, ...],
    /,
) -> None: ...
def index_lines(
    data: bytes,
    max_line_bytes: int,
    max_depth: int,
    escapes_possible: bool,
    reference: Callable[[bytes], Any],
    /,
) -> tuple[bytes, bytes, tuple[Any, ...], tuple[Any, ...], int, int | None]: ...
def scan_line(line: bytes, max_depth: int, escapes_possible: bool, /) -> Any: ...
def link_lines(
    records: tuple[Any, ...], /
) -> tuple[dict[str, int], tuple[str, ...], bytes, bytes, bytes, bytes, bool]: ...
def pair_tools(
    records: tuple[Any, ...], chain: tuple[int, ...], line_of: Any, /
) -> tuple[tuple[tuple[int, int | None, int, tuple[str, ...]], ...], int, int, int] | None: ...
def recover_rows(
    records: tuple[Any, ...],
    graph: tuple[bytes, bytes, bytes],
    walk: tuple[int, ...],
    below_until: int | None,
    /,
) -> tuple[int, ...] | None: ...
def resume_rows(
    records: tuple[Any, ...], uuid_lines: bytes, sidechain: bool, /
) -> tuple[tuple[int, ...], tuple[str | None, int | None, bool, bool, bool]] | None: ...
def flagged_lines(records: tuple[Any, ...], mask: int, /) -> tuple[int, ...]: ...
def trace_chain(
    records: tuple[Any, ...], parent_line: bytes, leaf: int, /
) -> tuple[tuple[int, ...], int, int] | None: ...
def line_tokens(records: tuple[Any, ...], lines: tuple[int, ...] | None = None, /) -> int: ...
def client_versions(records: tuple[Any, ...], /) -> set[str]: ...
def typed_lines(records: tuple[Any, ...], name: str, /) -> tuple[int, ...]: ...
def snapshot_lines(records: tuple[Any, ...], kept: tuple[int, ...], last: int, /) -> tuple[int, ...]: ...
def identity_facts(
    records: tuple[Any, ...], parent_line: bytes, chain: tuple[int, ...], /
) -> tuple[tuple[tuple[int, int, bool], ...], int]: ...
def session_runs(
    records: tuple[Any, ...], chain: tuple[int, ...], /
) -> tuple[tuple[tuple[str, int], ...], int]: ...
