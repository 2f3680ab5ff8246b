"""Contract reference documentation and JSON Schema, generated from the model itself."""

from __future__ import annotations

import json
import types
import typing
from enum import Enum
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from slacheck.contract.model import Contract, nested_models

SCHEMA_ID = "https://slacheck.invalid/contract.schema.json"


def json_schema() -> dict[str, Any]:
    """The contract's JSON Schema (draft 2020-12), for editors and validators."""
    schema = Contract.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = SCHEMA_ID
    return schema


def json_schema_text() -> str:
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"


def reference_markdown() -> str:
    """One table per section: field, type, default, description. Embedded in the README."""
    out: list[str] = []
    seen: set[type[BaseModel]] = set()
    _section(Contract, "", out, seen)
    return "\n".join(out).rstrip() + "\n"


def _section(
    model: type[BaseModel], prefix: str, out: list[str], seen: set[type[BaseModel]]
) -> None:
    if model in seen:
        return
    seen.add(model)
    title = prefix or "(top level)"
    out.append(f"#### `{title}`")
    out.append("")
    doc = (model.__doc__ or "").strip().splitlines()
    if doc and model is not Contract:
        out.append(doc[0])
        out.append("")
    out.append("| field | type | default | description |")
    out.append("|---|---|---|---|")
    children: list[tuple[str, type[BaseModel]]] = []
    for name, info in model.model_fields.items():
        out.append(
            f"| `{name}` | {_type_name(info.annotation)} | {_default(info)} | "
            f"{_escape(info.description or '')} |"
        )
        for child in nested_models(info.annotation):
            suffix = "[]" if _is_list(info.annotation) else ""
            children.append((f"{prefix}.{name}{suffix}" if prefix else f"{name}{suffix}", child))
    out.append("")
    for path, child in children:
        kind = child.model_fields.get("kind")
        label = path if kind is None else f"{path} (kind: {kind.default})"
        _section(child, label, out, seen)


def _escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _default(info: FieldInfo) -> str:
    if info.is_required():
        return "required"
    if info.default_factory is not None:
        return "empty" if info.default_factory in (list, dict) else "see below"
    d = info.default
    if d is None:
        return "—"
    if d == "":
        return "empty"
    if isinstance(d, Enum):
        return f"`{d.value}`"
    if isinstance(d, bool):
        return f"`{str(d).lower()}`"
    return f"`{d}`"


def _type_name(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return _type_name(args[0])
    if origin in (typing.Union, types.UnionType):
        names = list(dict.fromkeys(_type_name(a) for a in args if a is not type(None)))
        return " or ".join(names)
    if origin is list:
        return f"list of {_type_name(args[0])}"
    if origin is typing.Literal:
        return " \\| ".join(f"`{a}`" for a in args)
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return " \\| ".join(f"`{m.value}`" for m in annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "mapping"
    return getattr(annotation, "__name__", str(annotation))


def _is_list(annotation: Any) -> bool:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _is_list(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return any(_is_list(a) for a in typing.get_args(annotation))
    return origin is list
