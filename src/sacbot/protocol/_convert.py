"""Field checks behind the generated decoders: the slow paths, taken only when the fast inline test fails.

The generated code tests the common case inline (`v.__class__ is float` and finite, `is int`, `is str`);
these helpers then accept what JSON Schema allows (an int where a number is expected, 3.0 where an integer
is) or raise `ProtocolError` naming the field.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

INF = math.inf

_T = TypeVar("_T")


class ProtocolError(ValueError):
    """Bad wire input. `field` is the dotted path of the bad field (e.g. `botState.energy`, `events[2].x`)."""

    def __init__(self, problem: str, field: str = "", msg_type: str | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.field = field
        self.msg_type = msg_type

    def prefixed(self, name: str) -> ProtocolError:
        if name:
            if not self.field:
                self.field = name
            elif self.field.startswith("["):
                self.field = name + self.field
            else:
                self.field = f"{name}.{self.field}"
        return self

    def __str__(self) -> str:
        where = f" {self.msg_type}" if self.msg_type else ""
        if self.field:
            return f"bad{where} message: field '{self.field}': {self.problem}"
        return f"bad{where} message: {self.problem}"


def _missing_or_bad(v: Any, name: str, required: bool, expected: str) -> ProtocolError:
    if v is None:
        problem = "required field is missing" if required else f"null where {expected} expected"
        return ProtocolError(problem, name)
    return ProtocolError(f"expected {expected}, got {type(v).__name__} {_short(v)}", name)


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


def num_slow(v: Any, name: str, required: bool) -> Any:
    if v is None and not required:
        return None
    if v.__class__ is int:
        return float(v)
    if v.__class__ is float:
        raise ProtocolError(f"expected a finite number, got {v!r}", name)
    raise _missing_or_bad(v, name, required, "a number")


def int_slow(v: Any, name: str, required: bool) -> Any:
    if v is None and not required:
        return None
    if v.__class__ is float and v.is_integer():
        return int(v)
    raise _missing_or_bad(v, name, required, "an integer")


def str_slow(v: Any, name: str, required: bool) -> Any:
    if v is None and not required:
        return None
    raise _missing_or_bad(v, name, required, "a string")


def bool_slow(v: Any, name: str, required: bool) -> Any:
    if v is None and not required:
        return None
    raise _missing_or_bad(v, name, required, "a boolean")


def dict_field(v: Any, name: str, required: bool) -> Any:
    if v.__class__ is dict or (v is None and not required):
        return v
    raise _missing_or_bad(v, name, required, "an object")


def enum_field(v: Any, allowed: tuple[str, ...], name: str, required: bool) -> Any:
    if v in allowed or (v is None and not required):
        return v
    if v is None:
        raise _missing_or_bad(v, name, required, "a string")
    raise ProtocolError(f"expected one of {', '.join(allowed)}, got {_short(v)}", name)


def obj_field(v: Any, dec: Callable[[Any], _T], name: str, required: bool) -> Any:
    if v is None:
        if required:
            raise _missing_or_bad(v, name, required, "an object")
        return None
    try:
        return dec(v)
    except ProtocolError as exc:
        raise exc.prefixed(name) from None


def list_field(v: Any, dec: Callable[[Any], _T], name: str, required: bool) -> Any:
    if v.__class__ is not list:
        if v is None and not required:
            return None
        raise _missing_or_bad(v, name, required, "an array")
    try:
        return [dec(x) for x in v]
    except ProtocolError:
        pass
    for i, x in enumerate(v):  # error path only: find the index to name
        try:
            dec(x)
        except ProtocolError as exc:
            raise exc.prefixed(f"{name}[{i}]") from None
    raise AssertionError("unreachable")


def events_field(
    v: Any,
    event_decoders: Mapping[str, Callable[[Any], Any]],
    all_decoders: Mapping[str, Callable[[Any], Any]],
    name: str,
    required: bool,
) -> Any:
    """A polymorphic list of events, dispatched on each item's `type`.

    An item whose type this version does not know is skipped (a newer server may add events); a known message
    that is not an event, or an item without a type, is an error.
    """
    if v.__class__ is not list:
        if v is None and not required:
            return None
        raise _missing_or_bad(v, name, required, "an array")
    out = []
    for i, x in enumerate(v):
        try:
            if x.__class__ is not dict:
                raise ProtocolError("expected a JSON object")
            t = x.get("type")
            dec = event_decoders.get(t) if t.__class__ is str else None
            if dec is None:
                if t.__class__ is not str:
                    problem = "required field is missing" if t is None else "expected a string"
                    raise ProtocolError(problem, "type")
                if t in all_decoders:
                    raise ProtocolError(f"not an event type: {_short(t)}", "type")
                continue
            out.append(dec(x))
        except ProtocolError as exc:
            raise exc.prefixed(f"{name}[{i}]") from None
    return out
