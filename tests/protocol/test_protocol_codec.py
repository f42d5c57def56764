"""The codec against the official schemas: samples of every type decode; what we encode validates."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import ValidationError

from sacbot.bench.protocol import TICK_JSON, full_intent
from sacbot.protocol import (
    BotIntent,
    BotState,
    BulletState,
    ProtocolError,
    ScannedBotEvent,
    TickEventForBot,
    decode,
    encode,
    encode_bytes,
    encode_dict_bytes,
    to_dict,
)

from . import protocol_support as ts

OBJECT_SCHEMAS = [
    n for n in sorted(ts.RAW) if n not in ("color.schema.yaml", "message.schema.yaml", "event.schema.yaml")
]
MESSAGE_SCHEMAS = [n for n in OBJECT_SCHEMAS if ts.file_to_class(n) in ts.WIRE_TYPES]


@pytest.mark.parametrize("full", [True, False], ids=["all-fields", "required-only"])
@pytest.mark.parametrize("schema_file", MESSAGE_SCHEMAS)
def test_schema_valid_sample_of_every_message_decodes_and_reencodes_identically(
    schema_file: str, full: bool
) -> None:
    sample = ts.sample(schema_file, full)
    ts.validate(ts.file_to_class(schema_file), sample)  # the sample itself is schema-valid
    msg = decode(json.dumps(sample))
    assert msg.type == sample["type"] and type(msg).__name__ == sample["type"]
    text = encode(msg)
    ts.validate(msg.type, json.loads(text))
    assert json.loads(text) == sample
    assert decode(text) == msg


@pytest.mark.parametrize("schema_file", [n for n in OBJECT_SCHEMAS if n not in MESSAGE_SCHEMAS])
def test_nested_objects_decode_without_a_type(schema_file: str) -> None:
    cls_name = ts.file_to_class(schema_file)
    import sacbot.protocol as protocol

    cls = getattr(protocol, cls_name)
    sample = ts.sample(schema_file, True)
    obj = ts.from_dict_as(sample, cls)
    assert to_dict(obj) == sample
    ts.validate(cls_name, to_dict(obj))


def _tick() -> TickEventForBot:
    return TickEventForBot(
        turn_number=7,
        round_number=2,
        bot_state=BotState(
            energy=99.5,
            x=100.0,
            y=200.0,
            direction=90.0,
            gun_direction=91.0,
            radar_direction=92.0,
            radar_sweep=45.0,
            speed=8.0,
            turn_rate=0.0,
            gun_turn_rate=0.0,
            radar_turn_rate=45.0,
            gun_heat=0.0,
            enemy_count=1,
        ),
        bullet_states=[BulletState(bullet_id=1, owner_id=1, power=3.0, x=1.0, y=2.0, direction=359.9)],
        events=[
            ScannedBotEvent(
                turn_number=7,
                scanned_by_bot_id=1,
                scanned_bot_id=2,
                energy=50,
                x=3.0,
                y=4.0,
                direction=0.0,
                speed=1.0,
            )
        ],
    )


def test_constructed_objects_encode_to_schema_valid_json_without_nulls() -> None:
    for obj in (_tick(), full_intent(), BotIntent()):
        text = encode(obj)
        assert "null" not in text
        ts.validate(obj.type, json.loads(text))
    assert json.loads(encode(BotIntent(firepower=1.0))) == {"type": "BotIntent", "firepower": 1.0}


def test_typical_tick_decodes_with_camel_case_wire_names() -> None:
    tick = decode(TICK_JSON)
    assert isinstance(tick, TickEventForBot)
    ts.validate("TickEventForBot", json.loads(TICK_JSON))
    assert tick.bot_state.gun_direction == 131.0 and tick.bot_state.is_droid is False
    assert tick.bullet_states[0].color == "#FF0000"
    (scan,) = tick.events
    assert isinstance(scan, ScannedBotEvent) and scan.scanned_bot_id == 2 and scan.speed == -8.0
    assert '"gunTurnRate":12.25' in encode(full_intent())


def test_unknown_fields_are_tolerated_and_unknown_event_types_skipped() -> None:
    data = json.loads(TICK_JSON)
    data["futureField"] = {"anything": [1, 2]}
    data["botState"]["futureFlag"] = True
    data["events"].insert(0, {"type": "SomeFutureEvent", "turnNumber": 412, "whatever": 1})
    tick = decode(json.dumps(data))
    assert isinstance(tick, TickEventForBot)
    assert [type(e).__name__ for e in tick.events] == ["ScannedBotEvent"]


def test_json_numbers_follow_json_schema_rules() -> None:
    msg = decode('{"type":"BotHitWallEvent","turnNumber":4.0,"victimId":1}')
    assert msg.turn_number == 4 and type(msg.turn_number) is int  # type: ignore[attr-defined]
    intent = decode('{"type":"BotIntent","turnRate":5}')
    assert isinstance(intent, BotIntent)
    assert intent.turn_rate == 5.0 and type(intent.turn_rate) is float


def _error(data: str | dict[str, Any]) -> ProtocolError:
    text = data if isinstance(data, str) else json.dumps(data)
    with pytest.raises(ProtocolError) as info:
        decode(text)
    return info.value


def _tick_dict() -> dict[str, Any]:
    result: dict[str, Any] = json.loads(TICK_JSON)
    return result


def test_bad_input_names_the_field() -> None:
    d = _tick_dict()
    del d["botState"]["gunHeat"]
    err = _error(d)
    assert err.field == "botState.gunHeat" and "missing" in str(err) and "TickEventForBot" in str(err)

    d = _tick_dict()
    d["events"][0]["energy"] = "lots"
    assert _error(d).field == "events[0].energy"

    d = _tick_dict()
    d["bulletStates"][0]["bulletId"] = 1.5
    assert _error(d).field == "bulletStates[0].bulletId"

    d = _tick_dict()
    d["botState"]["speed"] = True  # a boolean is not a number
    assert _error(d).field == "botState.speed"

    d = _tick_dict()
    d["botState"]["x"] = None  # explicit null in a required field
    assert _error(d).field == "botState.x"

    d = _tick_dict()
    d["events"] = [{"type": "BotIntent"}]  # a known message that is not an event
    assert _error(d).field == "events[0].type"

    assert _error('{"type":"BotIntent","rescan":"yes"}').field == "rescan"
    assert _error('{"type":"GamePausedEventForObserver","pauseCause":"coffee"}').field == "pauseCause"
    assert (
        _error('{"type":"ServerHandshake","sessionId":"s","variant":"v","version":"1"}').field == "gameTypes"
    )
    assert _error('{"type":"NoSuchThing"}').field == "type"
    assert _error('{"turnRate":1}').field == "type"
    assert "JSON" in str(_error('{"type":'))
    assert "object" in str(_error("[1,2]"))


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_numbers_in_an_intent_are_rejected(token: str) -> None:
    err = _error('{"type":"BotIntent","gunTurnRate":' + token + "}")
    assert err.field == "gunTurnRate" and "finite" in str(err)
    with pytest.raises(ProtocolError):
        encode(BotIntent(target_speed=math.nan))
    with pytest.raises(ProtocolError):
        encode(BotIntent(firepower=math.inf))


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, np.float64(math.nan), np.float32(math.inf)])
def test_encode_dict_refuses_non_finite_numbers_anywhere(bad: float) -> None:
    for d in ({"x": bad}, {"a": {"b": [1.0, bad]}}, {"t": (0.0, bad)}, {"s": "null", "x": bad}):
        with pytest.raises(ProtocolError):
            encode_dict_bytes(d, "TickEventForBot")


def test_encode_dict_writes_null_and_finite_numpy_scalars_as_they_are() -> None:
    # A null or the text "null" only sends the check through the values; the output is the plain JSON.
    d = {"a": None, "s": "null", "x": 1.5, "n": np.float32(0.25), "l": [None, 2]}
    assert encode_dict_bytes(d) == b'{"a":null,"s":"null","x":1.5,"n":0.25,"l":[null,2]}'
    intent = BotIntent(turn_rate=5.0, firepower=1.0, rescan=True)
    assert encode_bytes(intent) == encode(intent).encode()


def test_schema_validation_of_our_output_can_fail() -> None:
    # The schema check used above is real: an out-of-range firepower and a bad color are caught.
    with pytest.raises(ValidationError):
        ts.validate("BotIntent", json.loads(encode(BotIntent(firepower=5.0))))
    with pytest.raises(ValidationError):
        ts.validate("BotIntent", json.loads(encode(BotIntent(body_color="red"))))


_finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6)


@given(
    turn=_finite,
    gun=_finite,
    radar=_finite,
    speed=_finite,
    power=st.none() | st.floats(min_value=0.0, max_value=3.0),
    flags=st.lists(st.none() | st.booleans(), min_size=5, max_size=5),
)
def test_any_intent_round_trips_and_validates(
    turn: float, gun: float, radar: float, speed: float, power: float | None, flags: list[bool | None]
) -> None:
    intent = BotIntent(
        turn_rate=turn,
        gun_turn_rate=gun,
        radar_turn_rate=radar,
        target_speed=speed,
        firepower=power,
        adjust_gun_for_body_turn=flags[0],
        adjust_radar_for_body_turn=flags[1],
        adjust_radar_for_gun_turn=flags[2],
        rescan=flags[3],
        fire_assist=flags[4],
    )
    text = encode(intent)
    ts.validate("BotIntent", json.loads(text))
    assert decode(text) == intent
