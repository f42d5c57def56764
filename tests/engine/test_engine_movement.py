"""Moving and turning (TurnProcessor.executeBotIntent, updateBotTurnRatesAndDirections)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TypedDict

import pytest

from sacbot.engine import Game, Intent


class AdjustFlags(TypedDict, total=False):
    adjust_gun_for_body_turn: bool
    adjust_radar_for_gun_turn: bool
    adjust_radar_for_body_turn: bool


def test_moves_along_the_old_heading_then_turns(scene: Callable[..., Game]) -> None:
    game = scene((400.0, 300.0, 0.0), (100.0, 100.0, 0.0))
    bot = game.bot(1)
    bot.speed = 4.0
    game.turn({1: Intent(target_speed=5.0, turn_rate=6.0)})  # limit at speed 5: 6.25
    assert bot.speed == 5.0
    assert (bot.x, bot.y) == (405.0, 300.0)  # east, the heading before the turn
    assert bot.direction == 6.0
    game.turn({1: Intent(target_speed=5.0, turn_rate=0.0)})
    assert bot.x == pytest.approx(405.0 + 5 * math.cos(math.radians(6.0)))
    assert bot.y == pytest.approx(300.0 + 5 * math.sin(math.radians(6.0)))


def test_turn_rates_are_clamped_by_speed_and_limits(scene: Callable[..., Game]) -> None:
    game = scene((400.0, 300.0, 0.0), (100.0, 100.0, 0.0))
    bot = game.bot(1)
    bot.speed = 8.0
    game.turn({1: Intent(target_speed=8.0, turn_rate=-10.0, gun_turn_rate=50.0, radar_turn_rate=-99.0)})
    assert bot.turn_rate == -4.0  # 10 - 0.75*8
    assert bot.gun_turn_rate == 20.0
    assert bot.radar_turn_rate == -45.0
    assert bot.direction == 356.0
    assert bot.gun_direction == 16.0  # -4 + 20
    assert bot.radar_direction == 331.0  # 16 - 45
    assert bot.radar_sweep == -29.0  # signed, as the server sends it


@pytest.mark.parametrize(
    ("flags", "gun", "radar"),
    [
        ({}, 15.0, 45.0),  # gun = body + gun; radar = gun + radar
        ({"adjust_gun_for_body_turn": True}, 5.0, 35.0),
        ({"adjust_radar_for_body_turn": True}, 15.0, 35.0),
        ({"adjust_radar_for_gun_turn": True}, 15.0, 40.0),  # radar adjusts for the gun's own 5 only
        (
            {"adjust_gun_for_body_turn": True, "adjust_radar_for_gun_turn": True},
            5.0,
            40.0,
        ),  # the compat quirk
        (
            {
                "adjust_gun_for_body_turn": True,
                "adjust_radar_for_gun_turn": True,
                "adjust_radar_for_body_turn": True,
            },
            5.0,
            30.0,
        ),
    ],
)
def test_adjust_flags(flags: AdjustFlags, gun: float, radar: float, scene: Callable[..., Game]) -> None:
    game = scene((400.0, 300.0, 0.0), (100.0, 100.0, 0.0))
    game.turn({1: Intent(turn_rate=10.0, gun_turn_rate=5.0, radar_turn_rate=30.0, **flags)})
    bot = game.bot(1)
    assert bot.direction == 10.0
    assert bot.gun_direction == gun
    assert bot.radar_direction == radar


def test_disabled_bot_neither_moves_nor_fires_but_its_gun_cools(scene: Callable[..., Game]) -> None:
    game = scene((400.0, 300.0, 0.0), (100.0, 100.0, 0.0))
    bot = game.bot(1)
    bot.energy = 0.0
    heat = bot.gun_heat
    game.turn({1: Intent(target_speed=8.0, turn_rate=10.0, firepower=1.0)})
    assert (bot.x, bot.y, bot.direction, bot.speed) == (400.0, 300.0, 0.0, 0.0)
    assert bot.gun_heat == pytest.approx(heat - 0.1)
    assert bot.alive and bot.disabled
    assert bot.intent is not None and bot.intent.target_speed == 0.0 and bot.intent.firepower == 0.0
