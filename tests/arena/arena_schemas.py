"""Validate wire messages against the official Tank Royale schemas (YAML, with the custom `extends` merged).

The schemas' two non-standard features are handled here: `extends: {$ref}` is merged by hand (properties and
required), and JS regex literals such as `/^[a-z]{2}$/ig` are turned into plain patterns.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

_HERE = Path(__file__).resolve()
_CANDIDATES = [
    _HERE.parents[1] / "protocol" / "schemas",
    _HERE.parents[3] / "shared" / "tank-royale" / "schemas",
]
SCHEMA_DIR = next((p for p in _CANDIDATES if (p / "message.schema.yaml").exists()), _CANDIDATES[-1])


def _file_for(msg_type: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "-", msg_type).lower() + ".schema.yaml"


def _fix_patterns(node: Any) -> Any:
    if isinstance(node, dict):
        out = {}
        for k, v in node.items():
            if k == "pattern" and isinstance(v, str) and v.startswith("/"):
                body, flags = v[1:].rsplit("/", 1)
                out[k] = ("(?i)" if "i" in flags else "") + body
            else:
                out[k] = _fix_patterns(v)
        return out
    if isinstance(node, list):
        return [_fix_patterns(v) for v in node]
    return node


@cache
def _raw(name: str) -> dict[str, Any]:
    data = yaml.safe_load((SCHEMA_DIR / name).read_text())
    assert isinstance(data, dict), name
    return data


@cache
def _merged(name: str) -> dict[str, Any]:
    schema = dict(_fix_patterns(_raw(name)))
    ext = schema.pop("extends", None)
    if ext:
        parent = _merged(ext["$ref"])
        props = dict(parent.get("properties", {}))
        props.update(schema.get("properties", {}))
        schema["properties"] = props
        schema["required"] = list(dict.fromkeys(parent.get("required", []) + schema.get("required", [])))
    schema.pop("$schema", None)
    return schema


@cache
def _registry() -> Registry:
    resources = []
    for path in SCHEMA_DIR.glob("*.schema.yaml"):
        resources.append(
            (path.name, Resource.from_contents(_merged(path.name), default_specification=_spec()))
        )
    return Registry().with_resources(resources)


def _spec() -> Any:
    from referencing.jsonschema import DRAFT202012

    return DRAFT202012


def validate(text: str) -> dict[str, Any]:
    """Validate one message (JSON text) against the schema named by its `type`; nested events by theirs."""
    msg: dict[str, Any] = json.loads(text)
    _validate_obj(msg)
    return msg


@cache
def _validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(_merged(name), registry=_registry())


def _validate_obj(obj: dict[str, Any]) -> None:
    name = _file_for(obj["type"])
    validator = _validator(name)
    errors = sorted(validator.iter_errors(obj), key=str)
    assert not errors, f"{obj['type']} breaks {name}: {errors[0].message} at {list(errors[0].absolute_path)}"
    for ev in obj.get("events", []) or []:
        _validate_obj(ev)
