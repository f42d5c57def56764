"""Data and validators shared by the protocol tests: the official schemas as a jsonschema registry, samples,
and a decoder for one nested class on its own.

The schemas use two non-standard things: a custom `extends: {$ref}` key (merged here into `allOf`) and
JavaScript regex literals as patterns (`/^#[0-9A-F]{3,6}$/ig`, turned into `(?i)^#[0-9A-F]{3,6}$`).
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any, TypeVar

import yaml
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from sacbot.protocol.models import _CLASS_DECODERS

_M = TypeVar("_M")

SCHEMA_DIR = Path(__file__).parent / "schemas"
BASE = "https://schemas.tank-royale.local/"


def load_raw() -> dict[str, dict[str, Any]]:
    return {p.name: yaml.safe_load(p.read_text()) for p in sorted(SCHEMA_DIR.glob("*.schema.yaml"))}


def _js_pattern(pattern: str) -> str:
    m = re.fullmatch(r"/(.*)/([a-z]*)", pattern)
    if not m:
        return pattern
    body, flags = m.groups()
    return ("(?i)" if "i" in flags else "") + body


def _normalise(node: Any) -> Any:
    if isinstance(node, dict):
        out = {k: _normalise(v) for k, v in node.items() if k not in ("examples", "$schema")}
        if isinstance(out.get("pattern"), str):
            out["pattern"] = _js_pattern(out["pattern"])
        if "extends" in out:
            out["allOf"] = [*out.get("allOf", []), out.pop("extends")]
        return out
    if isinstance(node, list):
        return [_normalise(v) for v in node]
    return node


def normalised_schemas() -> dict[str, dict[str, Any]]:
    out = {}
    for name, raw in RAW.items():
        schema = _normalise(copy.deepcopy(raw))
        schema["$id"] = BASE + name
        out[name] = schema
    return out


def file_to_class(name: str) -> str:
    return "".join(p.capitalize() for p in name.removesuffix(".schema.yaml").split("-"))


RAW = load_raw()
SCHEMAS = normalised_schemas()
REGISTRY: Registry = Registry().with_resources(
    (BASE + name, Resource.from_contents(schema, default_specification=DRAFT202012))
    for name, schema in SCHEMAS.items()
)
VALIDATORS = {
    file_to_class(name): Draft202012Validator(schema, registry=REGISTRY) for name, schema in SCHEMAS.items()
}


def _chain(name: str) -> list[str]:
    out = [name]
    while (ext := RAW[out[-1]].get("extends")) is not None:
        out.append(ext["$ref"])
    return out


WIRE_TYPES: list[str] = list(RAW["message.schema.yaml"]["properties"]["type"]["enum"])
EVENT_TYPES = sorted(
    file_to_class(n) for n in RAW if n != "event.schema.yaml" and "event.schema.yaml" in _chain(n)
)


def _props(name: str) -> tuple[dict[str, Any], set[str]]:
    props: dict[str, Any] = {}
    required: set[str] = set()
    for n in reversed(_chain(name)):
        props.update(RAW[n].get("properties") or {})
        required |= set(RAW[n].get("required", []))
    return props, required


def sample(name: str, full: bool) -> dict[str, Any]:
    """A schema-valid instance of one schema file: every property (full) or only the required ones."""
    props, required = _props(name)
    out: dict[str, Any] = {}
    if "message.schema.yaml" in _chain(name) and name not in ("message.schema.yaml", "event.schema.yaml"):
        out["type"] = file_to_class(name)
    for key, prop in props.items():
        if key == "type" or (not full and key not in required):
            continue
        out[key] = _value(key, prop, full)
    return out


def _value(key: str, prop: dict[str, Any], full: bool) -> Any:
    if "$ref" in prop:
        ref = prop["$ref"]
        if ref == "color.schema.yaml":
            return "#1A2B3C"
        if ref == "event.schema.yaml":
            return sample("scanned-bot-event.schema.yaml", full)
        return sample(ref, full)
    t = prop.get("type")
    if "enum" in prop:
        return prop["enum"][-1]
    if t == "number":
        return 2.5 if prop.get("maximum") is None else min(2.5, prop["maximum"])
    if t == "integer":
        return 3
    if t == "boolean":
        return True
    if t == "string":
        return "gb" if key == "countryCodes" else f"{key}-value"[: prop.get("maxLength", 100)]
    if t == "array":
        if key == "events":
            return [
                sample("scanned-bot-event.schema.yaml", full),
                sample("bot-hit-wall-event.schema.yaml", full),
            ]
        return [_value(key, prop["items"], full)]
    if t == "object":
        return {name: _value(name, p, full) for name, p in (prop.get("properties") or {}).items()}
    raise AssertionError(f"no sample for {key}: {prop}")


def validate(class_name: str, instance: Any) -> None:
    """Raise jsonschema.ValidationError unless the instance fits the official schema of that class."""
    VALIDATORS[class_name].validate(instance)


def from_dict_as(d: Any, cls: type[_M]) -> _M:
    """A parsed JSON object -> an instance of `cls` by its generated decoder (`cls` need not be a message,
    e.g. GameSetup, and `type` is not required); the codec runs these decoders only nested in a message."""
    dec = _CLASS_DECODERS.get(cls)
    if dec is None:
        raise TypeError(f"{cls!r} is not a protocol class")
    result: _M = dec(d)
    return result
