"""Every message and event type in the official schemas has a model, named and shaped as the contract says."""

from __future__ import annotations

import dataclasses
import re

import pytest

import sacbot.protocol as protocol
from sacbot.protocol import MESSAGE_CLASSES, Event, Message

from . import protocol_support as ts


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


@pytest.mark.parametrize("wire_type", ts.WIRE_TYPES)
def test_every_type_in_message_schema_has_a_model(wire_type: str) -> None:
    cls = getattr(protocol, wire_type, None)
    assert cls is not None, f"no model for wire type {wire_type}"
    assert issubclass(cls, Message) and cls.type == wire_type
    assert MESSAGE_CLASSES[wire_type] is cls


@pytest.mark.parametrize("event_type", ts.EVENT_TYPES)
def test_every_event_schema_has_an_event_model(event_type: str) -> None:
    cls = getattr(protocol, event_type, None)
    assert cls is not None and issubclass(cls, Event), f"no event model for {event_type}"
    assert "turn_number" in {f.name for f in dataclasses.fields(cls)}


@pytest.mark.parametrize("schema_file", sorted(ts.RAW))
def test_every_schema_file_has_a_class_with_its_fields(schema_file: str) -> None:
    cls = getattr(protocol, ts.file_to_class(schema_file), None)
    assert cls is not None, f"no class for {schema_file}"
    if schema_file == "color.schema.yaml":
        assert cls is str
        return
    props, required = ts._props(schema_file)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    expected = {_snake(k) for k in props if k != "type"}
    assert set(fields) == expected
    for wire in required - {"type"}:
        assert fields[_snake(wire)].default is dataclasses.MISSING, f"{wire} should be required"


def test_models_are_slotted_and_constructible_with_snake_case_keywords() -> None:
    intent = protocol.BotIntent(turn_rate=1.0, gun_turn_rate=2.0, adjust_radar_for_gun_turn=True)
    assert not hasattr(intent, "__dict__")
    assert intent.type == "BotIntent" and intent.gun_turn_rate == 2.0 and intent.firepower is None
    scan = protocol.ScannedBotEvent(
        turn_number=3,
        scanned_by_bot_id=1,
        scanned_bot_id=2,
        energy=50.0,
        x=1.0,
        y=2.0,
        direction=0.0,
        speed=8.0,
    )
    assert scan.type == "ScannedBotEvent" and isinstance(scan, Event)
    with pytest.raises(TypeError):
        protocol.ScannedBotEvent(turn_number=3)  # type: ignore[call-arg]
