"""Radar scans (TurnProcessor.checkAndHandleScans)."""

from __future__ import annotations

import math
from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from sacbot.engine import Game, Intent
from sacbot.engine.events import TurnEvents
from sacbot.engine.scans import scan_all, scan_angles
from sacbot.protocol import ScannedBotEvent

from .engine_support import is_circle_intersecting_sector


def _scanned(game: Game, bot_id: int) -> list[int]:
    return [e.scanned_bot_id for e in game.tick_for_bot(bot_id).events if isinstance(e, ScannedBotEvent)]


def test_radar_sweep_finds_a_bot_in_its_arc_and_misses_one_behind(scene: Callable[..., Game]) -> None:
    # Scanner at (400, 300), radar from 0 to 45 degrees. Bot 2 at 30 degrees, 300 away; bot 3 straight behind.
    inside = (400 + 300 * math.cos(math.radians(30)), 300 + 300 * math.sin(math.radians(30)), 0.0)
    game = scene((400.0, 300.0, 0.0), inside, (100.0, 300.0, 0.0))
    game.turn({1: Intent(radar_turn_rate=45.0)})
    assert game.bot(1).radar_sweep == 45.0
    assert _scanned(game, 1) == [2]
    event = next(e for e in game.tick_for_bot(1).events if isinstance(e, ScannedBotEvent))
    assert (event.scanned_by_bot_id, event.energy, event.x, event.y) == (1, 100.0, inside[0], inside[1])


def test_negative_sweep_scans_clockwise_arc(scene: Callable[..., Game]) -> None:
    below = (400 + 300 * math.cos(math.radians(-20)), 300 + 300 * math.sin(math.radians(-20)), 0.0)
    game = scene((400.0, 300.0, 0.0), below, (400.0, 500.0, 0.0))
    game.turn({1: Intent(radar_turn_rate=-45.0)})
    assert scan_angles(game.bot(1).radar_direction, game.bot(1).radar_sweep) == (315.0, 0.0)
    assert _scanned(game, 1) == [2]


def test_still_bot_does_not_scan_unless_it_rescans_along_a_ray(scene: Callable[..., Game]) -> None:
    game = scene((100.0, 300.0, 0.0), (700.0, 300.0, 0.0), (700.0, 350.0, 0.0))
    game.turn({1: Intent()})
    assert _scanned(game, 1) == []
    game.turn({1: Intent(rescan=True)})
    # Radar did not turn: a single ray along 0 degrees, 1200 long; bot 3 is 50 off the ray (> 18).
    assert _scanned(game, 1) == [2]


def test_scan_range_is_1200(scene: Callable[..., Game]) -> None:
    # The ray runs from x=20 to x=1220; a bot is a circle of radius 18.
    game = scene((20.0, 300.0, 0.0), (1239.0, 300.0, 0.0), width=1300, height=600)
    game.turn({1: Intent(rescan=True)})
    assert _scanned(game, 1) == []  # its edge is at 1221
    game.bot(2).x = 1238.0
    game.turn({1: Intent(rescan=True)})
    assert _scanned(game, 1) == [2]  # its edge touches the end of the ray


def test_droids_never_scan(scene: Callable[..., Game]) -> None:
    game = scene((400.0, 300.0, 0.0), (600.0, 300.0, 0.0))
    game.bot(1).is_droid = True
    game.turn({1: Intent(rescan=True, radar_turn_rate=10.0)})
    assert _scanned(game, 1) == []


@settings(max_examples=300)
@given(
    tx=st.floats(0, 2400),
    ty=st.floats(0, 2400),
    radar=st.floats(0, 359.99),
    sweep=st.floats(-75, 75).filter(lambda s: abs(s) > 1e-9),
)
def test_inline_sector_test_agrees_with_the_server_function(
    tx: float, ty: float, radar: float, sweep: float, scene: Callable[..., Game]
) -> None:
    game = scene((1200.0, 1200.0, 0.0), (tx, ty, 0.0), width=2400, height=2400)
    scanner, target = game.bot(1), game.bot(2)
    scanner.radar_direction = radar
    scanner.radar_sweep = sweep
    scanner.intent = Intent(rescan=True)
    events = TurnEvents([1, 2])
    scan_all([scanner, target], events)
    start, end = scan_angles(radar, sweep)
    expected = is_circle_intersecting_sector(tx, ty, 18.0, 1200.0, 1200.0, 1200.0, start, end)
    assert (len(events.by_bot[1]) == 1) == expected
