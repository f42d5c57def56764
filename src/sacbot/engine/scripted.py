"""Simple scripted policies that read the engine state directly: opponents for benchmarks and golden games.

Each policy is a callable `(game, bot_id) -> Intent`, deterministic for the game state. They peek at the true
state of the others (no radar bookkeeping): they exist to exercise the rules quickly, not to play fair.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from sacbot.engine import events as ev
from sacbot.engine.game import Game
from sacbot.engine.rules import normalize_relative
from sacbot.engine.state import Intent

Policy = Callable[[Game, int], Intent]


def _nearest_enemy(game: Game, bot_id: int) -> tuple[float, float] | None:
    me = game.bot(bot_id)
    best = None
    best_d2 = math.inf
    for other_id in game.alive_ids:
        if other_id == bot_id:
            continue
        other = game.bot(other_id)
        d2 = (other.x - me.x) ** 2 + (other.y - me.y) ** 2
        if d2 < best_d2:
            best_d2 = d2
            best = (other.x, other.y)
    return best


def spinner(game: Game, bot_id: int) -> Intent:
    """Circles with its radar spinning; fires 3 when a scan came in last turn."""
    scanned = any(e[0] == ev.SCANNED for e in game.events_for(bot_id))
    return Intent(target_speed=5.0, turn_rate=10.0, radar_turn_rate=45.0, firepower=3.0 if scanned else 0.0)


def tracker(game: Game, bot_id: int) -> Intent:
    """Turns its gun onto the nearest enemy, fires power 2 when aimed, zig-zags every 40 turns."""
    me = game.bot(bot_id)
    target = _nearest_enemy(game, bot_id)
    gun_turn = 0.0
    fire = 0.0
    if target is not None:
        bearing = math.degrees(math.atan2(target[1] - me.y, target[0] - me.x))
        gun_turn = normalize_relative(bearing - me.gun_direction)
        fire = 2.0 if abs(gun_turn) < 5.0 else 0.0
    forward = (game.turn_number // 40) % 2 == 0
    return Intent(
        target_speed=6.0 if forward else -6.0,
        turn_rate=4.0,
        gun_turn_rate=gun_turn,
        radar_turn_rate=45.0,
        adjust_gun_for_body_turn=True,
        firepower=fire,
        fire_assist=False,
    )


def rammer(game: Game, bot_id: int) -> Intent:
    """Drives straight at the nearest enemy at full speed and fires 1 on the way."""
    me = game.bot(bot_id)
    target = _nearest_enemy(game, bot_id)
    if target is None:
        return Intent()
    bearing = math.degrees(math.atan2(target[1] - me.y, target[0] - me.x))
    turn = normalize_relative(bearing - me.direction)
    return Intent(
        target_speed=8.0,
        turn_rate=turn,
        gun_turn_rate=normalize_relative(bearing - me.gun_direction - turn),
        firepower=1.0,
        fire_assist=False,
    )


def wall_runner(game: Game, bot_id: int) -> Intent:
    """Drives straight and reverses after hitting a wall; sweeps its gun and fires 0.5."""
    hit_wall = any(e[0] == ev.BOT_HIT_WALL for e in game.events_for(bot_id))
    me = game.bot(bot_id)
    speed = me.speed
    direction = -8.0 if speed < 0 else 8.0
    if hit_wall:
        direction = -direction
    return Intent(target_speed=direction, gun_turn_rate=7.0, radar_turn_rate=-30.0, firepower=0.5)


POLICIES: dict[str, Policy] = {
    "spinner": spinner,
    "tracker": tracker,
    "rammer": rammer,
    "wall_runner": wall_runner,
}
