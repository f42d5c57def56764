"""Codec measurement behind the choice of codec (`sacbot bench codec`).

Three contenders, each checking every field and naming the bad one:
- "ours": slotted dataclasses + generated field checks, JSON text by pydantic-core's Rust from_json/to_json;
- "ours_stdlib_json": the same with stdlib `json` for the text;
- "pydantic": pydantic v2 models with camelCase aliases, a discriminated event union,
  `TypeAdapter.validate_json`, `model_dump_json` and `model_construct` (the models here exist only for this
  comparison).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Annotated, Any, Literal

from sacbot.protocol import (
    BotIntent,
    BotState,
    BulletState,
    ScannedBotEvent,
    TickEventForBot,
    decode,
    encode,
    from_dict,
    to_dict,
)

TICK_JSON = (
    '{"type":"TickEventForBot","turnNumber":412,"roundNumber":3,"botState":{"isDroid":false,"energy":87.4,'
    '"x":412.25,"y":301.5,"direction":127.5,"gunDirection":131.0,"radarDirection":145.0,"radarSweep":45.0,'
    '"speed":6.0,"turnRate":-4.5,"gunTurnRate":10.0,"radarTurnRate":45.0,"gunHeat":0.4,"enemyCount":1,'
    '"isDebuggingEnabled":false},"bulletStates":[{"bulletId":17,"ownerId":1,"power":1.9,"x":455.0,"y":330.0,'
    '"direction":131.0,"color":"#FF0000"}],"events":[{"type":"ScannedBotEvent","turnNumber":412,'
    '"scannedByBotId":1,"scannedBotId":2,"energy":64.2,"x":612.0,"y":470.5,"direction":270.0,"speed":-8.0}]}'
)


# The field values of the tick and the intent above, which every contender builds from.
_INTENT: dict[str, Any] = {
    "turn_rate": -7.5,
    "gun_turn_rate": 12.25,
    "radar_turn_rate": 45.0,
    "target_speed": 8.0,
    "firepower": 1.75,
    "adjust_gun_for_body_turn": True,
    "adjust_radar_for_body_turn": True,
    "adjust_radar_for_gun_turn": True,
    "rescan": False,
    "fire_assist": False,
}
_BOT_STATE: dict[str, Any] = {
    "energy": 87.4,
    "x": 412.25,
    "y": 301.5,
    "direction": 127.5,
    "gun_direction": 131.0,
    "radar_direction": 145.0,
    "radar_sweep": 45.0,
    "speed": 6.0,
    "turn_rate": -4.5,
    "gun_turn_rate": 10.0,
    "radar_turn_rate": 45.0,
    "gun_heat": 0.4,
    "enemy_count": 1,
}
_BULLET: dict[str, Any] = {
    "bullet_id": 17,
    "owner_id": 1,
    "power": 1.9,
    "x": 455.0,
    "y": 330.0,
    "direction": 131.0,
}
_SCANNED: dict[str, Any] = {
    "turn_number": 412,
    "scanned_by_bot_id": 1,
    "scanned_bot_id": 2,
    "energy": 64.2,
    "x": 612.0,
    "y": 470.5,
    "direction": 270.0,
    "speed": -8.0,
}


def full_intent() -> BotIntent:
    return BotIntent(**_INTENT)


def _tick_objects() -> TickEventForBot:
    return TickEventForBot(
        turn_number=412,
        round_number=3,
        bot_state=BotState(**_BOT_STATE),
        bullet_states=[BulletState(**_BULLET)],
        events=[ScannedBotEvent(**_SCANNED)],
    )


def _pydantic_codec() -> dict[str, Callable[[], Any]]:
    from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
    from pydantic.alias_generators import to_camel

    class _M(BaseModel):
        model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    class PBotState(_M):
        is_droid: bool | None = None
        energy: float
        x: float
        y: float
        direction: float
        gun_direction: float
        radar_direction: float
        radar_sweep: float
        speed: float
        turn_rate: float
        gun_turn_rate: float
        radar_turn_rate: float
        gun_heat: float
        enemy_count: int
        is_debugging_enabled: bool | None = None

    class PBulletState(_M):
        bullet_id: int
        owner_id: int
        power: float
        x: float
        y: float
        direction: float
        color: str | None = None

    class PScanned(_M):
        type: Literal["ScannedBotEvent"] = "ScannedBotEvent"
        turn_number: int
        scanned_by_bot_id: int
        scanned_bot_id: int
        energy: float
        x: float
        y: float
        direction: float
        speed: float

    class PHitWall(_M):
        type: Literal["BotHitWallEvent"] = "BotHitWallEvent"
        turn_number: int
        victim_id: int

    class PTick(_M):
        type: Literal["TickEventForBot"] = "TickEventForBot"
        turn_number: int
        round_number: int
        bot_state: PBotState
        bullet_states: list[PBulletState]
        events: list[Annotated[PScanned | PHitWall, Field(discriminator="type")]]

    class PIntent(_M):
        model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, allow_inf_nan=False)
        type: Literal["BotIntent"] = "BotIntent"
        turn_rate: float | None = None
        gun_turn_rate: float | None = None
        radar_turn_rate: float | None = None
        target_speed: float | None = None
        firepower: float | None = None
        adjust_gun_for_body_turn: bool | None = None
        adjust_radar_for_body_turn: bool | None = None
        adjust_radar_for_gun_turn: bool | None = None
        rescan: bool | None = None
        fire_assist: bool | None = None

    tick_adapter = TypeAdapter(PTick)
    intent = PIntent(**_INTENT)
    assert tick_adapter.validate_json(TICK_JSON).bot_state.energy == 87.4

    def construct() -> Any:
        return PTick.model_construct(
            turn_number=412,
            round_number=3,
            bot_state=PBotState.model_construct(**_BOT_STATE),
            bullet_states=[PBulletState.model_construct(**_BULLET)],
            events=[PScanned.model_construct(**_SCANNED)],
        )

    return {
        "decode_tick": lambda: tick_adapter.validate_json(TICK_JSON),
        "encode_intent": lambda: intent.model_dump_json(by_alias=True, exclude_none=True),
        "construct_tick": construct,
    }


def _ours() -> dict[str, Callable[[], Any]]:
    intent = full_intent()
    assert decode(TICK_JSON).events[0].energy == 64.2  # type: ignore[attr-defined]
    return {
        "decode_tick": lambda: decode(TICK_JSON),
        "encode_intent": lambda: encode(intent),
        "construct_tick": _tick_objects,
    }


def _ours_stdlib_json() -> dict[str, Callable[[], Any]]:
    import json

    intent = full_intent()
    dumps = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode
    return {
        "decode_tick": lambda: from_dict(json.loads(TICK_JSON)),
        "encode_intent": lambda: dumps(to_dict(intent)),
        "construct_tick": _tick_objects,
    }


def _time_us(fn: Callable[[], Any], number: int) -> float:
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t0) / number * 1e6


def run_codec_bench(number: int = 5000, repeats: int = 9) -> dict[str, dict[str, float]]:
    """Median microseconds per operation for each codec: {"ours": {...}, "pydantic": {...}, ...}.

    The contenders take turns within each repeat, so a busy machine slows them alike.
    """
    contenders = {"ours": _ours(), "ours_stdlib_json": _ours_stdlib_json(), "pydantic": _pydantic_codec()}
    samples: dict[tuple[str, str], list[float]] = {}
    for _ in range(repeats):
        for name, ops in contenders.items():
            for op, fn in ops.items():
                samples.setdefault((name, op), []).append(_time_us(fn, number))
    out: dict[str, dict[str, float]] = {}
    for (name, op), values in samples.items():
        out.setdefault(name, {})[op] = round(statistics.median(values), 2)
    return out
