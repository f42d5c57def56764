"""Gun heat, cooling, firing and fire assist (GunEngine.kt)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from sacbot.engine import Game, Intent, Participant, game_setup_for
from sacbot.protocol import BulletFiredEvent, ScannedBotEvent


def test_gun_at_heat_three_first_fires_in_turn_31() -> None:
    # 3.0 cools by 0.1 once per turn from turn 1; after 30 coolings it is exactly 0.0, so turn 31 fires.
    game = Game(game_setup_for("1v1", number_of_rounds=1), [(1, "A"), (2, "B")], seed=5)
    game.start_round()
    fired_turns = []
    heats = []
    while game.turn_number < 40:
        game.turn({1: Intent(firepower=1.0), 2: Intent()})
        heats.append(game.bot(1).gun_heat)
        if any(isinstance(e, BulletFiredEvent) for e in game.tick_for_bot(1).events):
            fired_turns.append(game.turn_number)
    assert fired_turns == [31]
    assert heats[0] == 2.9  # turn 1 cools too, though nobody acts
    assert heats[29] == 0.0  # after turn 30
    assert heats[30] == pytest.approx(1.2)  # turn 31: fired, 1 + 1/5, and no cooling in the firing turn


def test_next_shot_after_power_three_is_17_turns_later(scene: Callable[..., Game]) -> None:
    game = scene((200.0, 300.0, 90.0), (600.0, 300.0, 90.0))
    game.bot(1).gun_heat = 0.0
    shots = []
    for _ in range(40):
        game.turn({1: Intent(firepower=3.0)})
        if any(isinstance(e, BulletFiredEvent) for e in game.tick_for_bot(1).events):
            shots.append(game.turn_number)
    # 1.6 heat needs 16 coolings of 0.1, so the shots are 17 turns apart.
    assert shots[:2] == [2, 19]


def test_fires_only_with_energy_strictly_above_firepower_and_charges_the_request(
    scene: Callable[..., Game],
) -> None:
    game = scene((200.0, 300.0, 90.0), (600.0, 300.0, 90.0))
    bot = game.bot(1)
    bot.gun_heat = 0.0
    bot.energy = 2.0
    game.turn({1: Intent(firepower=2.0)})
    assert not game.bullets and bot.energy == 2.0
    assert bot.gun_heat == 0.0  # not firing with a cold gun: nothing to cool
    bot.energy = 50.0
    game.turn({1: Intent(firepower=5.0)})  # power is capped at 3, but 5 is charged
    assert len(game.bullets) == 1
    assert game.bullets[0].power == 3.0
    assert bot.energy == 45.0
    assert bot.gun_heat == 1.6


def test_below_minimum_firepower_does_not_fire(scene: Callable[..., Game]) -> None:
    game = scene((200.0, 300.0, 90.0), (600.0, 300.0, 90.0))
    game.bot(1).gun_heat = 0.0
    game.turn({1: Intent(firepower=0.09)})
    assert game.bullets == []


def test_bullet_leaves_from_the_pre_move_position_in_the_pre_turn_gun_direction(
    scene: Callable[..., Game],
) -> None:
    game = scene((400.0, 300.0, 0.0), (100.0, 100.0, 0.0))
    bot = game.bot(1)
    bot.gun_heat = 0.0
    bot.speed = 8.0
    # Moving east at 8 and turning the gun 20 degrees: the bullet still starts at x=400 heading 0 degrees.
    game.turn({1: Intent(target_speed=8.0, gun_turn_rate=20.0, firepower=1.0, fire_assist=False)})
    fired = [e for e in game.tick_for_bot(1).events if isinstance(e, BulletFiredEvent)]
    assert fired[0].bullet.x == 400.0 and fired[0].bullet.y == 300.0
    assert fired[0].bullet.direction == 0.0
    assert bot.x == 408.0
    assert bot.gun_direction == 20.0
    # After the turn the bullet has advanced one step of 20 - 3*1 = 17.
    assert game.bullets[0].x == 417.0


def test_fire_assist_aims_at_last_turns_scan_when_gun_and_radar_agree(scene: Callable[..., Game]) -> None:
    game = scene((400.0, 300.0, 0.0), (600.0, 335.0, 0.0))
    game.bot(1).gun_heat = 0.0
    # The gun turns 20 degrees and carries the radar with it: the sector [0, 20] finds bot 2 at 9.93 degrees.
    game.turn({1: Intent(gun_turn_rate=20.0)})
    assert game.bot(1).gun_direction == game.bot(1).radar_direction == 20.0
    scans = [e for e in game.tick_for_bot(1).events if isinstance(e, ScannedBotEvent)]
    assert [(s.x, s.y) for s in scans] == [(600.0, 335.0)]
    game.turn({1: Intent(firepower=1.0)})
    assert game.bullets[0].direction == pytest.approx(9.926245506651)
    # Without fire assist the bullet follows the gun.
    game2 = scene((400.0, 300.0, 0.0), (600.0, 335.0, 0.0))
    game2.bot(1).gun_heat = 0.0
    game2.turn({1: Intent(gun_turn_rate=20.0)})
    game2.turn({1: Intent(firepower=1.0, fire_assist=False)})
    assert game2.bullets[0].direction == 20.0


def test_bullet_ids_restart_each_round() -> None:
    game = Game(
        game_setup_for("custom", number_of_rounds=2), [Participant(1, "A"), Participant(2, "B")], seed=3
    )
    firsts = []
    for _ in range(2):
        game.start_round()
        game.turn({})
        game.bot(1).gun_heat = 0.0
        game.turn({1: Intent(firepower=0.5)})
        firsts.append(game.bullets[0].bullet_id)
        game.bot(2).energy = -1.0  # end the round at once
        game.turn({})
        assert game.round_over
    assert firsts == [1, 1]
