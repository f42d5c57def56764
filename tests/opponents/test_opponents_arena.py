"""The classic opponents on the real arena over WebSocket: booted from their bot directories (the `.sh` a Tank
Royale booter runs), and a round-robin of all ten with no skipped turn.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import os
import sys
from collections import defaultdict
from pathlib import Path

from sacbot.arena.booter import Booter
from sacbot.arena.controller import GameResult, play_game, play_game_async
from sacbot.arena.server import EmbeddedArena
from sacbot.client import BotIdentity, play
from sacbot.engine import game_setup_for
from sacbot.opponents import ALL_OPPONENT_NAMES, CLASSIC_NAMES, make_opponent
from sacbot.opponents.motion import normalize_relative
from sacbot.protocol import BotStateWithId, TickEventForObserver

BOTS = Path(__file__).resolve().parents[2] / "bots"
# A long turn timeout: the machines are shared, and these tests are about every intent arriving, not about
# speed (that is `sacbot bench arena`). The arena runs the next turn as soon as every bot has answered.
SLOW_OK = {"turn_timeout": 10_000_000, "ready_timeout": 10_000_000}


class Watch:
    """Counts SkippedTurnEvents the server sends and keeps every observer tick."""

    def __init__(self) -> None:
        self.skipped = 0
        self.ticks: list[TickEventForObserver] = []

    def tap(self, _conn: int, text: str) -> None:
        if '"SkippedTurnEvent"' in text:
            self.skipped += 1

    def states(self, name: str) -> list[BotStateWithId]:
        return [s for t in self.ticks for s in t.bot_states if s.name == name]


def booted_game(names: list[str], seed: int, rounds: int = 1) -> tuple[GameResult, Watch]:
    watch = Watch()
    setup = game_setup_for("1v1", number_of_rounds=rounds, **SLOW_OK)
    with (
        EmbeddedArena(bot_secrets={"bots"}, controller_secrets={"ctl"}, seed=seed, tap=watch.tap) as arena,
        Booter(arena.url, "bots", extra_env={"SACBOT_PYTHON": sys.executable}) as booter,
    ):
        booter.boot_all([BOTS / name for name in names])
        result = play_game(arena.url, setup, names, secret="ctl", connect_timeout=60,
                           on_tick=watch.ticks.append)  # fmt: skip
    return result, watch


def test_bot_directories_are_complete_for_the_booters() -> None:
    for name in ALL_OPPONENT_NAMES:
        folder = BOTS / name
        assert (folder / f"{name}.json").is_file() and (folder / f"{name}.cmd").is_file()
        script = folder / f"{name}.sh"
        assert os.access(script, os.X_OK)
        text = script.read_text()
        assert "SACBOT_PYTHON" in text and ".venv/bin/python" in text and f"opponent {name}" in text


def test_booted_spinbot_circles_and_target_never_fires() -> None:
    result, watch = booted_game(["SpinBot", "Target"], seed=3)
    assert watch.skipped == 0
    assert result.results[0].name == "SpinBot"  # Target never fires, so it cannot win
    spin = watch.states("SpinBot")
    circling = sum(
        s.speed == 5.0 and math.isclose(normalize_relative(s.direction - p.direction), -6.25, abs_tol=1e-9)
        for p, s in zip(spin, spin[1:], strict=False)
    )
    assert circling > len(spin) / 2
    target_ids = {s.id for s in watch.states("Target")}
    assert not [b for t in watch.ticks for b in t.bullet_states if b.owner_id in target_ids]


def test_booted_ramfire_rams() -> None:
    result, watch = booted_game(["RamFire", "Target"], seed=4)
    assert watch.skipped == 0
    ram = next(r for r in result.results if r.name == "RamFire")
    assert ram.ram_damage > 0 and ram.rank == 1


def test_booted_walls_hugs_the_walls() -> None:
    _, watch = booted_game(["Walls", "Fire"], seed=5)
    assert watch.skipped == 0
    w, h = 800.0, 600.0
    walls = watch.states("Walls")[120:]
    assert len(walls) > 100
    near = sum(min(s.x, w - s.x, s.y, h - s.y) <= 18.5 for s in walls)
    assert near > 0.9 * len(walls)


def test_booted_advanced_opponents_and_the_teacher_beat_classics() -> None:
    """Each advanced opponent and the Teacher, booted from its directory, plays a real bot process; and Surfer
    stays the strongest over the real protocol, where a tick's events come in no set order. Each wins most of
    seven rounds: in-process they win 95-100% of rounds, so a lost round or two is play, not a fault."""
    for seed, (name, classic) in enumerate(
        [("Orbiter", "TrackFire"), ("StopGo", "Fire"), ("Gunner", "Walls"), ("Surfer", "SpinBot"),
         ("Rammer", "Target"), ("Teacher", "SpinBot"), ("Surfer", "Gunner")]
    ):  # fmt: skip
        result, watch = booted_game([name, classic], seed=20 + seed, rounds=7)
        assert watch.skipped == 0, name
        won = next(r.first_places for r in result.results if r.name == name)
        assert won >= 4, (name, result.results)


def test_round_robin_of_all_ten_without_a_skipped_turn() -> None:
    """Every pair plays one short round (small arena, fast guns), each bot on its own client connection."""
    watch = Watch()
    setup = game_setup_for(
        "1v1", number_of_rounds=1, arena_width=400, arena_height=400, gun_cooling_rate=3.0,
        max_inactivity_turns=10, **SLOW_OK,
    )  # fmt: skip
    wins: dict[str, int] = defaultdict(int)
    played: dict[str, int] = defaultdict(int)

    async def one_game(url: str, pair: tuple[str, str], seed: int) -> GameResult:
        identities = [BotIdentity(n, "1.0.0", ["sacbot"]) for n in pair]
        bots = [asyncio.create_task(play(make_opponent(i.name, seed), i, url, "bots")) for i in identities]
        result = await play_game_async(url, setup, list(pair), secret="ctl", connect_timeout=30)
        outcomes = await asyncio.gather(*bots)
        assert all(o.game_ended for o in outcomes)
        assert all(o.stats.skipped_turns == 0 for o in outcomes)
        return result

    async def tournament(url: str) -> None:
        for seed, pair in enumerate(itertools.combinations(CLASSIC_NAMES, 2)):
            result = await one_game(url, pair, seed)
            assert {r.name for r in result.results} == set(pair)
            wins[result.results[0].name] += 1
            for name in pair:
                played[name] += 1

    with EmbeddedArena(bot_secrets={"bots"}, controller_secrets={"ctl"}, seed=11, tap=watch.tap) as arena:
        asyncio.run(tournament(arena.url))
    assert watch.skipped == 0
    assert all(played[name] == 9 for name in CLASSIC_NAMES)
    assert sum(wins.values()) == 45
