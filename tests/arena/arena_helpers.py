"""Shared helpers for the arena tests: bot directories written on the fly, and waiting with a deadline."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

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


def make_bot_dir(
    root: Path,
    name: str,
    *,
    py: str | None = None,
    sh: str | None = None,
    info: dict[str, object] | None = None,
) -> Path:
    d = root / name
    d.mkdir(parents=True)
    meta: dict[str, object] = {
        "name": name,
        "version": "1.0",
        "authors": ["tests"],
        "gameTypes": ["1v1", "classic"],
        "platform": "Python",
        "programmingLang": "Python 3",
    }
    meta.update(info or {})
    (d / f"{name}.json").write_text(json.dumps(meta))
    if py is not None:
        (d / f"{name}.py").write_text(py)
    if sh is not None:
        (d / f"{name}.sh").write_text(sh)
    return d


def wait_for(cond: Callable[[], object], timeout: float, what: str) -> None:
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def pid_alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"
