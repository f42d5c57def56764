"""Data and validators shared by the arena tests (the fixtures are in conftest.py): the source of the test
bots, and wire messages checked against the official Tank Royale schemas (YAML, with the custom `extends`
merged).

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


# A bot on the official Python Bot API: its body turns back and forth over the target, the gun and radar
# follow it, it fires at whatever it scans (fire assist aims), and it writes what it saw to result.json in its
# directory when the game ends.
OFFICIAL_BOT = """
import json, os
from robocode_tank_royale.bot_api import Bot


class Gunner(Bot):
    def __init__(self):
        super().__init__()
        self.seen = {"ticks": 0, "scans": 0, "fired": 0, "hits": 0, "hit_by": 0, "skipped": 0, "won": 0,
                     "rounds": [], "game": None, "env": {k: os.environ.get(k) for k in
                     ("BOT_BOOTED", "BOT_NAME", "BOT_VERSION", "BOT_AUTHORS")}, "cwd": os.getcwd()}

    def run(self):
        self.sign = 1
        while self.running:
            self.turn_rate = 10 * self.sign
            self.go()

    def on_tick(self, e):
        self.seen["ticks"] += 1

    def on_scanned_bot(self, e):
        self.seen["scans"] += 1
        self.sign = -self.sign  # sweep back over the target: a scan every few turns
        self.set_fire(3)

    def on_bullet_fired(self, e):
        self.seen["fired"] += 1

    def on_bullet_hit(self, e):
        self.seen["hits"] += 1

    def on_hit_by_bullet(self, e):
        self.seen["hit_by"] += 1

    def on_skipped_turn(self, e):
        self.seen["skipped"] += 1

    def on_won_round(self, e):
        self.seen["won"] += 1

    def on_round_ended(self, e):
        self.seen["rounds"].append(e.round_number)

    def on_game_ended(self, e):
        self.seen["game"] = {"rounds": e.number_of_rounds, "rank": e.results.rank,
                             "score": e.results.total_score}
        with open("result.tmp", "w") as f:
            json.dump(self.seen, f)
        os.replace("result.tmp", "result.json")


Gunner().start()
"""

# A quick, accurate bot on the sacbot protocol models: spins its radar, turns the gun to the last scan and
# fires 3 when aligned, so rounds end within a few hundred turns.
AIM_BOT = """
import asyncio, math, os
from websockets.asyncio.client import connect
from sacbot.protocol import BotHandshake, BotIntent, BotReady, ScannedBotEvent, TickEventForBot
from sacbot.protocol import decode, encode


async def main():
    async with connect(os.environ["SERVER_URL"]) as ws:
        hello = decode(await ws.recv())
        await ws.send(encode(BotHandshake(session_id=hello.session_id, name=os.environ["BOT_NAME"],
                                          version=os.environ["BOT_VERSION"], authors=["tests"],
                                          secret=os.environ.get("SERVER_SECRET"))))
        target = None
        async for raw in ws:
            msg = decode(raw)
            if msg.type == "GameStartedEventForBot":
                await ws.send(encode(BotReady()))
            elif isinstance(msg, TickEventForBot):
                me = msg.bot_state
                for e in msg.events:
                    if isinstance(e, ScannedBotEvent):
                        target = (e.x, e.y)
                turn, fire = 0.0, 0.0
                if target is not None:
                    want = math.degrees(math.atan2(target[1] - me.y, target[0] - me.x))
                    turn = (want - me.gun_direction + 180) % 360 - 180
                    fire = 3.0 if abs(turn) < 3 and me.gun_heat == 0 else 0.0
                await ws.send(encode(BotIntent(
                    turn_rate=0.0, target_speed=0.0, gun_turn_rate=max(-20.0, min(20.0, turn)),
                    radar_turn_rate=45.0, firepower=fire, adjust_gun_for_body_turn=True,
                    adjust_radar_for_body_turn=True, adjust_radar_for_gun_turn=True, rescan=False,
                    fire_assist=False)))


asyncio.run(main())
"""

BENCH_BOT_SH = '#!/bin/bash\nexec "${SACBOT_PYTHON:-python3}" -m sacbot.bench.benchbot\n'
