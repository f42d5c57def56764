"""Bot-wall, bot-bot, bullet-bullet and bullet-bot collisions (`CollisionDetector`).

- Bot-wall (not in turn 1): a bot whose move left [18, W-18] x [18, H-18] goes back along its move onto the
  edge and stops; damage `calc_wall_damage(speed)` and a BotHitWallEvent only if it had no BotHitWallEvent in
  the previous turn.
- Bot-bot: each touching pair (centres <= 36 apart) takes 0.6 each, both go back to where they started the
  turn (turn 1: the second one to a random spot), rammers stop and score a ram hit; both get a BotHitBotEvent.
- Bullets are segments from their current to their next position. Pairs whose segments cross destroy each
  other; a segment touching a bot circle (not the owner's) hits it: damage to the victim, 3 x power to the
  shooter. A bullet removed by one test still takes part in the other tests of the same turn.
"""

from __future__ import annotations

import random
from math import atan2, degrees, fmod

from sacbot.engine import events as ev
from sacbot.engine.geometry import is_line_intersecting_circle, is_line_intersecting_line
from sacbot.engine.movement import constrain_position
from sacbot.engine.rules import (
    BOT_DIAMETER,
    BOT_RADIUS,
    BULLET_HIT_ENERGY_GAIN_FACTOR,
    MAX_BULLET_SPEED,
    RAM_DAMAGE,
    calc_bullet_damage,
    calc_wall_damage,
)
from sacbot.engine.scoring import RoundScoreTracker
from sacbot.engine.state import Bot, Bullet

_BOT_DIAMETER2 = BOT_DIAMETER * BOT_DIAMETER
_BULLET_REACH = 2 * MAX_BULLET_SPEED
_BULLET_REACH2 = _BULLET_REACH * _BULLET_REACH


def bot_wall_collisions(bots: list[Bot], width: float, height: float, events: ev.TurnEvents) -> None:
    lo = BOT_RADIUS
    hi_x = width - BOT_RADIUS
    hi_y = height - BOT_RADIUS
    for bot in bots:
        x = bot.x
        y = bot.y
        if lo <= x <= hi_x and lo <= y <= hi_y:
            continue
        nx, ny = constrain_position(bot.prev_x, bot.prev_y, x, y, width, height)
        if nx == x and ny == y:
            continue
        bot.x = nx
        bot.y = ny
        if not bot.hit_wall_last_turn:
            event = (ev.BOT_HIT_WALL, bot.id)
            events.by_bot[bot.id].append(event)
            events.observer.append(event)
            bot.energy -= calc_wall_damage(bot.speed)
            bot.hit_wall_this_turn = True
        bot.speed = 0.0


def is_ramming(bot: Bot, victim: Bot) -> bool:
    """Driving toward the victim: forward with it ahead (bearing in (-90, 90)) or backward with it behind."""
    speed = bot.speed
    if speed == 0:
        return False
    a = fmod(degrees(atan2(victim.y - bot.y, victim.x - bot.x)) - bot.direction, 360.0)
    if a >= 0:
        bearing = a if a < 180 else a - 360.0
    else:
        bearing = a if a >= -180 else a + 360.0
    if speed > 0:
        return -90 < bearing < 90
    return bearing < -90 or bearing > 90


def bot_bot_collisions(
    bots: list[Bot],
    first_turn: bool,
    width: float,
    height: float,
    rng: random.Random,
    tracker: RoundScoreTracker,
    events: ev.TurnEvents,
) -> None:
    n = len(bots)
    for i in range(n - 1):
        b1 = bots[i]
        for j in range(i + 1, n):
            b2 = bots[j]
            dx = b2.x - b1.x
            if dx > BOT_DIAMETER or dx < -BOT_DIAMETER:
                continue
            dy = b2.y - b1.y
            if dy > BOT_DIAMETER or dy < -BOT_DIAMETER or dx * dx + dy * dy > _BOT_DIAMETER2:
                continue
            _bot_hit_bot(b1, b2, first_turn, width, height, rng, tracker, events)


def _bot_hit_bot(
    b1: Bot,
    b2: Bot,
    first_turn: bool,
    width: float,
    height: float,
    rng: random.Random,
    tracker: RoundScoreTracker,
    events: ev.TurnEvents,
) -> None:
    ram12 = is_ramming(b1, b2)
    ram21 = is_ramming(b2, b1)
    alive1 = b1.energy >= 0
    alive2 = b2.energy >= 0
    b1.energy -= RAM_DAMAGE
    b2.energy -= RAM_DAMAGE
    if ram12:
        tracker.register_ram_hit(b1.id, b2.id, alive2 and b2.energy < 0)
    if ram21:
        tracker.register_ram_hit(b2.id, b1.id, alive1 and b1.energy < 0)
    if first_turn:
        b2.x = BOT_RADIUS + rng.random() * (width - BOT_DIAMETER)
        b2.y = BOT_RADIUS + rng.random() * (height - BOT_DIAMETER)
    else:
        b1.x = b1.prev_x
        b1.y = b1.prev_y
        b2.x = b2.prev_x
        b2.y = b2.prev_y
    if ram12:
        b1.speed = 0.0
    if ram21:
        b2.speed = 0.0
    e1 = (ev.BOT_HIT_BOT, b1.id, b2.id, b2.energy, b2.x, b2.y, ram12)
    e2 = (ev.BOT_HIT_BOT, b2.id, b1.id, b1.energy, b1.x, b1.y, ram21)
    events.by_bot[b1.id].append(e1)
    events.by_bot[b2.id].append(e2)
    events.observer.append(e1)
    events.observer.append(e2)


def bullet_hits(
    bullets: list[Bullet], bots: list[Bot], tracker: RoundScoreTracker, events: ev.TurnEvents
) -> tuple[list[Bullet], bool]:
    """Bullet-bullet and bullet-bot hits; returns the surviving bullets and whether any bullet hit a bot."""
    n = len(bullets)
    if n == 0:
        return bullets, False
    removed: set[int] = set()
    any_bot_hit = False
    for i in range(n):
        b = bullets[i]
        x1 = b.x
        y1 = b.y
        x2 = b.next_x
        y2 = b.next_y
        for j in range(i + 1, n):
            c = bullets[j]
            dx = c.next_x - x2
            if dx > _BULLET_REACH or dx < -_BULLET_REACH:
                continue
            dy = c.next_y - y2
            if dy > _BULLET_REACH or dy < -_BULLET_REACH or dx * dx + dy * dy > _BULLET_REACH2:
                continue
            if is_line_intersecting_line(x1, y1, x2, y2, c.x, c.y, c.next_x, c.next_y):
                snap_b = b.snapshot()
                snap_c = c.snapshot()
                e1 = (ev.BULLET_HIT_BULLET, snap_b, snap_c)
                events.private(b.owner_id, e1)
                events.private(c.owner_id, (ev.BULLET_HIT_BULLET, snap_c, snap_b))
                events.observer.append(e1)
                removed.add(b.bullet_id)
                removed.add(c.bullet_id)
        # Cheap box around the segment first; the exact circle test decides.
        min_x = (x1 if x1 < x2 else x2) - BOT_RADIUS - 1.0
        max_x = (x1 if x1 > x2 else x2) + BOT_RADIUS + 1.0
        min_y = (y1 if y1 < y2 else y2) - BOT_RADIUS - 1.0
        max_y = (y1 if y1 > y2 else y2) + BOT_RADIUS + 1.0
        owner = b.owner_id
        for bot in bots:
            bx = bot.x
            by = bot.y
            if bx < min_x or bx > max_x or by < min_y or by > max_y or bot.id == owner:
                continue
            if is_line_intersecting_circle(x1, y1, x2, y2, bx, by, BOT_RADIUS):
                any_bot_hit = True
                shooter = next((s for s in bots if s.id == owner), None)
                _bullet_hit_bot(b, bot, shooter, tracker, events)
                removed.add(b.bullet_id)
    if not removed:
        return bullets, any_bot_hit
    return [b for b in bullets if b.bullet_id not in removed], any_bot_hit


def _bullet_hit_bot(
    bullet: Bullet, victim: Bot, shooter: Bot | None, tracker: RoundScoreTracker, events: ev.TurnEvents
) -> None:
    damage = calc_bullet_damage(bullet.power)
    energy_before = victim.energy
    victim.energy = energy_before - damage
    killed = energy_before >= 0 and victim.energy < 0
    if shooter is not None:
        shooter.energy += BULLET_HIT_ENERGY_GAIN_FACTOR * bullet.power
    # The score counts only the energy the victim still had.
    scored = damage if damage < energy_before else (energy_before if energy_before > 0 else 0.0)
    tracker.register_bullet_hit(bullet.owner_id, victim.id, scored, killed)
    event = (ev.BULLET_HIT_BOT, bullet.snapshot(), victim.id, damage, victim.energy)
    events.private(bullet.owner_id, event)
    events.private(victim.id, event)
    events.observer.append(event)
