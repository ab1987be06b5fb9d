"""The JSON Schemas of every document the tool writes, generated from the report types.

Each schema's `$id` is the `schema` string its documents carry (`session-compaction/<name>/v1`);
the schemas ship in the package under `report/schemas/` (`compaction schema NAME` prints one)
and a test regenerates them and compares, so the files never drift from the types. This module
stands with the jobs because the tokens summary's types are the tokens job's own.

The generation is msgspec's own (`msgspec.json.schema_components`), with what the renderer does
to a document written into the schema too: a session report's findings section is spread into
its top level (`render.to_builtins`), a field that is not left `UNSET` is always written (so it
is required), and no other key is written (`additionalProperties: false`). msgspec cannot tell
apart a union of untagged structs (a fleet summary's `options`): such a field is generated as a
stand-in and written as `anyOf` its members.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from typing import Any, Final, TypeGuard, get_args

import msgspec
import orjson
from msgspec import UNSET, UnsetType

from pipeline.jobs.tokens.by_corpus import SUMMARY_SCHEMA as TOKENS_SUMMARY_SCHEMA
from pipeline.jobs.tokens.by_corpus import TokensSummary
from pipeline.report.documents import Report
from pipeline.report.fidelity import PROBE_SCHEMA, ProbeReport
from pipeline.report.fleet import SUMMARY_SCHEMA, FleetSummary
from pipeline.report.live_replacement import (
    IN_PLACE_SUMMARY_SCHEMA,
    REPAIR_SCHEMA,
    REPAIR_SUMMARY_SCHEMA,
    RESTORE_SCHEMA,
    InPlaceBriefReport,
    InPlaceCompressReport,
    InPlaceRolloutReport,
    InPlaceSummary,
    RepairReport,
    RepairSummary,
    RestoreReport,
)
from pipeline.report.repair_documents import (
    DAMAGE_REPAIR_SCHEMA,
    DAMAGE_REPAIR_SUMMARY_SCHEMA,
    DamageRepairReport,
    DamageRepairSummary,
)
from pipeline.report.rewrite_documents import (
    REWRITE_SCHEMA,
    REWRITE_SUMMARY_SCHEMA,
    RewriteReport,
    RewriteSummary,
)
from pipeline.report.sections import SESSION_SCHEMA, FindingsSection
from pipeline.summarize.model.cost import FleetPlan

__all__ = [
    "DOCUMENTS",
    "SCHEMA_DIALECT",
    "Document",
    "UnknownSchema",
    "document",
    "generate",
    "schema_bytes",
    "shipped",
]

SCHEMA_DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"
_SHIPPED: Final = "schemas"  # the folder beside this module the schemas ship in
_DEFS: Final = "#/$defs/"
# Names a report type's annotations use only under TYPE_CHECKING (the planner's module is heavy).
_DEFERRED: Final = {"FleetPlan": FleetPlan}


@dataclass(frozen=True, slots=True)
class Document:
    """One kind of document: its `schema` string, what it is, and the types that write it."""

    id: str
    description: str
    types: tuple[type[msgspec.Struct], ...]

    @property
    def name(self) -> str:
        """The id's middle part (`session-report`), as `compaction schema` names it."""
        return self.id.split("/")[1]

    @property
    def file_name(self) -> str:
        return f"{self.name}.{self.id.rsplit('/', 1)[1]}.json"


DOCUMENTS: Final = (
    Document(
        SESSION_SCHEMA,
        "One session's `<label>.report.json` of validate, compress (also --in-place) and tokens, "
        "for Claude Code sessions and Codex rollouts.",
        (
            *get_args(Report),  # the session reports of validate, compress and tokens
            InPlaceCompressReport,
            InPlaceRolloutReport,
            InPlaceBriefReport,
        ),
    ),
    Document(SUMMARY_SCHEMA, "`summary.json` of validate and compress --out.", (FleetSummary,)),
    Document(IN_PLACE_SUMMARY_SCHEMA, "`summary.json` of compress --in-place.", (InPlaceSummary,)),
    Document(
        TOKENS_SUMMARY_SCHEMA,
        "`summary.json` of tokens, and `tokens.json` of tokens --out.",
        (TokensSummary,),
    ),
    Document(DAMAGE_REPAIR_SCHEMA, "One session's report of repair.", (DamageRepairReport,)),
    Document(DAMAGE_REPAIR_SUMMARY_SCHEMA, "`summary.json` of repair.", (DamageRepairSummary,)),
    Document(
        REWRITE_SCHEMA,
        "One session's report of vacuum, and of repair for the agents other than Claude Code.",
        (RewriteReport,),
    ),
    Document(REWRITE_SUMMARY_SCHEMA, "`summary.json` of vacuum.", (RewriteSummary,)),
    Document(REPAIR_SCHEMA, "One session's report of repair-read-pages.", (RepairReport,)),
    Document(REPAIR_SUMMARY_SCHEMA, "`summary.json` of repair-read-pages.", (RepairSummary,)),
    Document(RESTORE_SCHEMA, "One session's report of restore.", (RestoreReport,)),
    Document(PROBE_SCHEMA, "What `probe --json` prints.", (ProbeReport,)),
)


class UnknownSchema(LookupError):
    """A schema name no document has."""

    def __init__(self, name: str) -> None:
        super().__init__(f"no schema named {name!r}; one of: {', '.join(d.name for d in DOCUMENTS)}")


def document(name: str) -> Document:
    """The document a schema name (or its whole id) stands for."""
    found = next((d for d in DOCUMENTS if name in (d.name, d.id)), None)
    if found is None:
        raise UnknownSchema(name)
    return found


def _is_record(annotation: object) -> TypeGuard[type]:
    """A struct or a dataclass: a schema component of its own."""
    return isinstance(annotation, type) and (
        issubclass(annotation, msgspec.Struct) or dataclasses.is_dataclass(annotation)
    )


def _struct_members(annotation: object) -> tuple[type, ...]:
    """The struct (or dataclass) members of a union: more than one needs a stand-in."""
    if typing.get_origin(annotation) not in (typing.Union, types.UnionType):
        return ()
    return tuple(member for member in typing.get_args(annotation) if _is_record(member))


def _defaults(struct: type[msgspec.Struct]) -> tuple[object, ...]:
    """Every field's default, in field order (`NODEFAULT` for a field that has none)."""
    missing = len(struct.__struct_fields__) - len(struct.__struct_defaults__)
    return (msgspec.NODEFAULT,) * missing + struct.__struct_defaults__


def _stand_in(cls: type[msgspec.Struct], unions: dict[str, tuple[type, ...]]) -> type[msgspec.Struct]:
    """`cls` with its annotations resolved and each untagged struct union a named placeholder."""
    hints = typing.get_type_hints(cls, localns=_DEFERRED)
    fields: list[tuple[str, Any, Any]] = []
    for name, encoded, default in zip(
        cls.__struct_fields__, cls.__struct_encode_fields__, _defaults(cls), strict=True
    ):
        annotation = hints[name]
        members = _struct_members(annotation)
        if len(members) > 1:
            placeholder = msgspec.defstruct(f"{cls.__name__}{name.title().replace('_', '')}", [])
            unions[placeholder.__name__] = members
            annotation = placeholder
        factory = getattr(default, "factory", None)
        spec = msgspec.field(
            name=encoded, **({"default_factory": factory} if factory else {"default": default})
        )
        fields.append((name, annotation, spec))
    return msgspec.defstruct(cls.__name__, fields, kw_only=True, namespace={"__doc__": cls.__doc__})


def _classes(roots: tuple[type, ...]) -> Iterator[type]:
    """Every struct and dataclass reachable from the roots' annotations."""
    seen: set[type] = set()
    pending: list[object] = list(roots)
    while pending:
        annotation = pending.pop()
        if _is_record(annotation):
            if annotation not in seen:
                seen.add(annotation)
                yield annotation
                pending.extend(typing.get_type_hints(annotation, localns=_DEFERRED).values())
        else:
            pending.extend(typing.get_args(annotation))


def _always_written(cls: type) -> list[str]:
    """The keys a document always holds: every field but those that may be `UNSET` (by default,
    or because their type allows it)."""
    if dataclasses.is_dataclass(cls):
        return [field.name for field in dataclasses.fields(cls)]
    struct = typing.cast("type[msgspec.Struct]", cls)
    hints = typing.get_type_hints(struct, localns=_DEFERRED)
    fields = zip(struct.__struct_fields__, struct.__struct_encode_fields__, _defaults(struct), strict=True)
    return [
        encoded
        for name, encoded, default in fields
        if default is not UNSET and UnsetType not in typing.get_args(hints[name])
    ]


def _spread_findings(definition: dict[str, Any], findings: dict[str, Any]) -> None:
    """A report's findings section as the renderer writes it: its keys at the top level."""
    properties = definition["properties"]
    if properties.get("findings") != {"$ref": f"{_DEFS}{FindingsSection.__name__}"}:
        return
    del properties["findings"]
    properties.update(findings["properties"])
    definition["required"] = sorted({*definition["required"], *findings["required"]})


def _referenced(value: object) -> Iterator[str]:
    if isinstance(value, dict):
        ref = value.get("$ref")
        if isinstance(ref, str) and ref.startswith(_DEFS):
            yield ref.removeprefix(_DEFS)
        for item in value.values():
            yield from _referenced(item)
    elif isinstance(value, list):
        for item in value:
            yield from _referenced(item)


def _reachable(root: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """Only the definitions the schema refers to (the spread findings section is not)."""
    kept: dict[str, Any] = {}
    pending = list(_referenced(root))
    while pending:
        name = pending.pop()
        if name not in kept:
            kept[name] = defs[name]
            pending.extend(_referenced(defs[name]))
    return dict(sorted(kept.items()))


def generate(doc: Document) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of one kind of document."""
    unions: dict[str, tuple[type, ...]] = {}
    roots = tuple(_stand_in(cls, unions) for cls in doc.types)
    members = tuple(member for found in unions.values() for member in found)
    refs, defs = msgspec.json.schema_components((*roots, *members), ref_template=_DEFS + "{name}")
    classes = {cls.__name__: cls for cls in _classes((*roots, *members))}
    for name, definition in defs.items():
        if name in unions:
            defs[name] = {"anyOf": [{"$ref": f"{_DEFS}{member.__name__}"} for member in unions[name]]}
        elif definition.get("type") == "object" and name in classes:
            definition["additionalProperties"] = False
            definition["required"] = _always_written(classes[name])
            schema = definition["properties"].get("schema")
            if schema is not None and "default" in schema:  # a document's version: exactly this one
                schema["const"] = schema["default"]
    for root in roots:
        _spread_findings(defs[root.__name__], defs.get(FindingsSection.__name__, {}))
    body: dict[str, Any] = refs[0] if len(refs) == 1 else {"anyOf": list(refs[: len(roots)])}
    return {
        "$schema": SCHEMA_DIALECT,
        "$id": doc.id,
        "title": doc.name,
        "description": doc.description,
        **body,
        "$defs": _reachable(body, defs),
    }


def schema_bytes(doc: Document) -> bytes:
    """A schema as the shipped file holds it: indented, keys sorted, a final newline."""
    return orjson.dumps(generate(doc), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"


def shipped(doc: Document) -> bytes:
    """The schema file the package ships for a document."""
    return (resources.files("pipeline.report") / _SHIPPED / doc.file_name).read_bytes()


if __name__ == "__main__":  # python -m pipeline.jobs.report_schemas: regenerate the shipped files
    folder = resources.files("pipeline.report") / _SHIPPED
    for each in DOCUMENTS:
        with resources.as_file(folder / each.file_name) as path:
            path.parent.mkdir(exist_ok=True)
            path.write_bytes(schema_bytes(each))
