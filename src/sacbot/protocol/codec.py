"""The one wire codec: JSON text <-> protocol objects.

JSON text is parsed and written by pydantic-core's Rust `from_json`/`to_json` (about 3x faster than
stdlib `json` here), and the generated field checks in `models` turn dicts into slotted dataclasses and back.
Chosen by measurement against pydantic v2 models (`sacbot bench codec`; docs/benchmarks.md). Decoding
checks every known field, tolerates unknown ones and names the bad field; encoding leaves nulls out and
rejects NaN/infinity.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic_core import PydanticSerializationError, from_json, to_json

from sacbot.protocol._convert import ProtocolError
from sacbot.protocol.models import _DECODERS, _ENCODERS, Message


def _load(data: str | bytes | bytearray) -> Any:
    try:
        return from_json(data)
    except ValueError as exc:
        raise ProtocolError(f"not valid JSON ({exc})") from None


def _fallback(value: Any) -> Any:
    # numpy scalars from a policy: np.float32 and friends have .item(); np.float64 is already a float.
    item = getattr(value, "item", None)
    if item is None:
        raise TypeError(f"cannot encode a {type(value).__name__}")
    return item()


def _non_finite(value: Any) -> bool:
    """Whether a NaN or an infinity hides anywhere in a JSON-ready value (also as a numpy scalar)."""
    cls = value.__class__
    if cls is dict:
        return any(_non_finite(v) for v in value.values())
    if cls is list or cls is tuple:
        return any(_non_finite(v) for v in value)
    if isinstance(value, float):
        return not math.isfinite(value)
    if cls is str or cls is int or cls is bool or value is None:
        return False
    item = getattr(value, "item", None)  # numpy scalars, as `_fallback` writes them
    if item is None:
        return False
    number = item()
    return isinstance(number, float) and not math.isfinite(number)


def from_dict(d: Any) -> Message:
    """A parsed JSON object -> its message object, dispatched on `type`; every known field is checked."""
    if d.__class__ is not dict:
        raise ProtocolError("expected a JSON object")
    t = d.get("type")
    dec = _DECODERS.get(t) if t.__class__ is str else None
    if dec is None:
        if t is None:
            raise ProtocolError("required field is missing", "type")
        raise ProtocolError(f"unknown message type {t!r}", "type")
    try:
        result: Message = dec(d)
    except ProtocolError as exc:
        exc.msg_type = t
        raise
    return result


def decode(data: str | bytes | bytearray) -> Message:
    """JSON text -> message object (dispatch on "type"). Raises ProtocolError naming the bad field."""
    return from_dict(_load(data))


def to_dict(obj: Any) -> dict[str, Any]:
    """A protocol object -> JSON-ready dict with camelCase keys, `type` for messages, nulls left out."""
    enc = _ENCODERS.get(obj.__class__)
    if enc is None:
        raise TypeError(f"not a protocol object: {type(obj).__name__}")
    result: dict[str, Any] = enc(obj)
    return result


def encode(msg: Any) -> str:
    """A protocol object -> compact JSON text. NaN or infinity anywhere raises ProtocolError."""
    return encode_bytes(msg).decode()


def encode_bytes(msg: Any) -> bytes:
    """`encode` as the UTF-8 bytes that go on the wire (what the arena hands its transport)."""
    enc = _ENCODERS.get(msg.__class__)
    if enc is None:
        raise TypeError(f"not a protocol object: {type(msg).__name__}")
    return encode_dict_bytes(enc(msg), getattr(msg, "type", None))


def encode_dict_bytes(d: dict[str, Any], msg_type: str | None = None) -> bytes:
    """A JSON-ready dict (as `to_dict` gives, e.g. the engine's direct tick dicts) -> the UTF-8 bytes of its
    compact JSON, with the same checks as `encode`: NaN or infinity anywhere raises ProtocolError. The arena's
    ticks go to the wire this way, without a str in between."""
    try:
        # A NaN or infinity is written as null, so one scan for "null" finds it: the messages leave their
        # nulls out, so that scan is nearly always a miss, and a hit only costs the walk over the values.
        raw = to_json(d, fallback=_fallback, inf_nan_mode="null")
    except (PydanticSerializationError, TypeError) as exc:
        raise ProtocolError(f"cannot encode: {exc}", msg_type=msg_type) from None
    if b"null" in raw and _non_finite(d):
        raise ProtocolError("cannot encode NaN or infinity", msg_type=msg_type)
    return raw
