"""Bot-wall, bot-bot, bullet-wall, bullet-bullet and bullet-bot collisions (CollisionDetector)."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sacbot.engine import Game, Intent
from sacbot.engine.bullets import advance
from sacbot.protocol import BotHitBotEvent, BulletHitBotEvent, BulletHitBulletEvent, BulletHitWallEvent


def test_wall_hit_at_speed_eight_costs_three_and_only_on_first_contact(
    scene: Callable[..., Game], kinds: Callable[[Game, int], list[str]]
) -> None:
    game = scene((778.0, 300.0, 0.0), (100.0, 100.0, 0.0))
    bot = game.bot(1)
    bot.speed = 8.0
    game.turn({1: Intent(target_speed=8.0)})
    assert (bot.x, bot.y) == (782.0, 300.0)  # moved back onto the edge: W - 18
    assert bot.speed == 0.0
    assert bot.energy == 97.0  # 8/2 - 1 = 3
    assert "BotHitWallEvent" in kinds(game, 1)
    game.turn({})  # still pushing: contact continues, no event, no damage
    assert bot.energy == 97.0 and "BotHitWallEvent" not in kinds(game, 1)
    game.turn({})  # the previous turn had no event: the server counts it as a new hit (at speed 1: 0 damage)
    assert bot.energy == 97.0 and "BotHitWallEvent" in kinds(game, 1)


def test_wall_slide_keeps_the_direction_of_travel(scene: Callable[..., Game]) -> None:
    game = scene((778.0, 300.0, 45.0), (100.0, 100.0, 0.0))
    bot = game.bot(1)
    bot.speed = 8.0
    game.turn({1: Intent(target_speed=8.0)})
    # From (778, 300) along 45 degrees: x reaches the edge 782 after 4 units of x, so y moves by 4 too.
    assert bot.x == 782.0
    assert bot.y == pytest.approx(304.0)


def test_ram_costs_both_and_scores_one_point_two_per_turn(scene: Callable[..., Game]) -> None:
    game = scene((300.0, 300.0, 0.0), (333.0, 300.0, 180.0))
    rammer, victim = game.bot(1), game.bot(2)
    rammer.speed = 8.0
    game.turn({1: Intent(target_speed=8.0)})
    assert (rammer.x, rammer.y) == (300.0, 300.0)  # back where it started the turn
    assert rammer.speed == 0.0
    assert rammer.energy == pytest.approx(99.4) and victim.energy == pytest.approx(99.4)
    events = game.tick_for_bot(1).events
    hit = next(e for e in events if isinstance(e, BotHitBotEvent))
    assert (hit.bot_id, hit.victim_id, hit.rammed, hit.x) == (1, 2, True, 333.0)
    assert hit.energy == pytest.approx(99.4)
    other = next(e for e in game.tick_for_bot(2).events if isinstance(e, BotHitBotEvent))
    assert (other.bot_id, other.victim_id, other.rammed) == (2, 1, False)
    game.turn({})  # speed 0 -> 1: 301 is still within 36 of 333
    scores = game.round_scores()
    assert scores[1].ram_damage == pytest.approx(2.4)  # 2 turns x 2.0 x 0.6
    assert scores[2].ram_damage == 0.0
    assert victim.energy == pytest.approx(98.8)


def test_backing_into_a_bot_is_ramming_too(scene: Callable[..., Game]) -> None:
    game = scene((300.0, 300.0, 0.0), (268.0, 300.0, 0.0))
    game.bot(1).speed = -1.0
    game.turn({1: Intent(target_speed=-1.0)})
    hit = next(e for e in game.tick_for_bot(1).events if isinstance(e, BotHitBotEvent))
    assert hit.rammed is True


def test_power_three_bullet_flies_at_11_does_16_and_gives_its_shooter_9(scene: Callable[..., Game]) -> None:
    game = scene((200.0, 300.0, 0.0), (300.0, 300.0, 180.0))
    shooter, victim = game.bot(1), game.bot(2)
    shooter.gun_heat = 0.0
    game.turn({1: Intent(firepower=3.0)})
    assert game.bullets[0].x == 211.0  # one step of 11 after the firing turn
    assert shooter.energy == 97.0
    hit_turn = None
    for _ in range(10):
        game.turn({1: Intent()})
        if any(isinstance(e, BulletHitBotEvent) for e in game.tick_for_bot(2).events):
            hit_turn = game.turn_number
            break
    # Segment [start + 11*tick, start + 11*(tick+1)] reaches x = 282 (victim edge) at tick 7: 6 turns later.
    assert hit_turn == 2 + 6
    assert victim.energy == 84.0
    assert shooter.energy == 106.0  # 100 - 3 + 3*3
    event = next(e for e in game.tick_for_bot(1).events if isinstance(e, BulletHitBotEvent))
    assert (event.victim_id, event.damage, event.energy, event.bullet.x) == (2, 16.0, 84.0, 277.0)
    assert game.bullets == []
    assert game.round_scores()[1].bullet_damage == 16.0


def test_bullet_hits_the_wall_at_the_edge(scene: Callable[..., Game]) -> None:
    game = scene((760.0, 300.0, 0.0), (100.0, 100.0, 0.0))
    game.bot(1).gun_heat = 0.0
    game.turn({1: Intent(firepower=3.0)})  # at 771
    game.turn({1: Intent()})  # at 782
    game.turn({1: Intent()})  # at 793
    assert len(game.bullets) == 1
    game.turn({1: Intent()})  # at 804 >= 800: gone
    events = [e for e in game.tick_for_bot(1).events if isinstance(e, BulletHitWallEvent)]
    assert len(events) == 1 and events[0].bullet.x == 804.0
    assert game.bullets == []


def test_bullets_that_cross_destroy_each_other(scene: Callable[..., Game]) -> None:
    game = scene((200.0, 300.0, 0.0), (400.0, 300.0, 180.0), (300.0, 100.0, 0.0))
    for bot_id in (1, 2):
        game.bot(bot_id).gun_heat = 0.0
    game.turn({1: Intent(firepower=3.0), 2: Intent(firepower=3.0)})
    for _ in range(10):
        game.turn({})
        if not game.bullets:
            break
    ev1 = [e for e in game.tick_for_bot(1).events if isinstance(e, BulletHitBulletEvent)]
    ev2 = [e for e in game.tick_for_bot(2).events if isinstance(e, BulletHitBulletEvent)]
    assert len(ev1) == 1 and len(ev2) == 1
    assert ev1[0].bullet.owner_id == 1 and ev1[0].hit_bullet.owner_id == 2
    assert ev2[0].bullet.owner_id == 2 and ev2[0].hit_bullet.owner_id == 1
    assert game.bot(1).energy == 97.0 and game.bot(2).energy == 97.0  # nobody was hit


def test_bullet_hits_a_teammate_too(scene: Callable[..., Game]) -> None:
    game = scene((200.0, 300.0, 0.0), (300.0, 300.0, 0.0), (600.0, 500.0, 0.0), teams=(1, 1, 2))
    game.bot(1).gun_heat = 0.0
    game.turn({1: Intent(firepower=1.0)})
    for _ in range(8):
        game.turn({})
    assert game.bot(2).energy == 96.0


@settings(max_examples=300)
@given(
    bx=st.floats(0, 200),
    by=st.floats(0, 200),
    direction=st.floats(0, 360),
    power=st.floats(0.1, 3.0),
    tick=st.integers(0, 10),
)
def test_bullet_hit_prefilter_agrees_with_the_exact_test(
    bx: float, by: float, direction: float, power: float, tick: int
) -> None:
    from sacbot.engine.collisions import bullet_hits
    from sacbot.engine.events import TurnEvents
    from sacbot.engine.geometry import is_line_intersecting_circle
    from sacbot.engine.rules import calc_bullet_speed
    from sacbot.engine.scoring import RoundScoreTracker
    from sacbot.engine.state import Bot, Bullet

    angle = math.radians(direction)
    bullet = Bullet(1, 2, power, direction, None, 100.0, 100.0, calc_bullet_speed(power), math.cos(angle),
                    math.sin(angle))  # fmt: skip
    bullet.tick = tick
    advance([bullet])
    target = Bot(1, "T", bx, by, 0.0)
    expected = is_line_intersecting_circle(bullet.x, bullet.y, bullet.next_x, bullet.next_y, bx, by, 18.0)
    _, hit = bullet_hits([bullet], [target], RoundScoreTracker([1, 2]), TurnEvents([1, 2]))
    assert hit == expected
