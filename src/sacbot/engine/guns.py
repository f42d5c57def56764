"""Gun cooling and firing (`GunEngine.coolDownAndFireGuns`), before anything moves.

A bot fires when its gun heat is exactly 0.0, it is enabled, its intent asks for firepower >= 0.1 and its
energy is strictly above the firepower. The bullet starts at the pre-move position in the pre-turn gun
direction (or toward last turn's scan with fire assist) with power min(firepower, 3); the *requested*
firepower is charged. A gun that does not fire cools by the cooling rate; not in the turn it fires.
"""

from __future__ import annotations

from math import atan2, cos, degrees, fmod, sin

from sacbot.engine import events as ev
from sacbot.engine.rules import DEG_TO_RAD, MAX_FIREPOWER, MIN_FIREPOWER, calc_bullet_speed, calc_gun_heat
from sacbot.engine.state import Bot, Bullet


def cool_and_fire(
    bots: list[Bot], cooling_rate: float, bullets: list[Bullet], next_bullet_id: int, events: ev.TurnEvents
) -> int:
    """Fires or cools every bot's gun; appends new bullets; returns the next free bullet id."""
    for bot in bots:
        energy = bot.energy
        if bot.gun_heat == 0.0 and energy >= 0 and abs(energy) >= 1e-6:
            intent = bot.intent
            if intent is None:
                continue
            firepower = intent.firepower
            if firepower >= MIN_FIREPOWER and energy > firepower:
                next_bullet_id += 1
                bullets.append(_fire(bot, firepower, next_bullet_id, events))
        else:
            heat = bot.gun_heat - cooling_rate
            bot.gun_heat = heat if heat > 0.0 else 0.0
    return next_bullet_id


def _fire(bot: Bot, firepower: float, bullet_id: int, events: ev.TurnEvents) -> Bullet:
    intent = bot.intent
    assert intent is not None
    power = firepower if firepower < MAX_FIREPOWER else MAX_FIREPOWER
    direction = bot.gun_direction
    # Fire assist: gun and radar point the same way (the start-of-turn copy is the same state) and the bot
    # scanned someone last turn: aim at that scan's position.
    if intent.fire_assist and bot.gun_direction == bot.radar_direction and bot.scan_last_turn is not None:
        tx, ty = bot.scan_last_turn
        a = fmod(degrees(atan2(ty - bot.y, tx - bot.x)), 360.0)
        direction = a if a >= 0 else a + 360.0
    bot.gun_heat = calc_gun_heat(power)
    angle = direction * DEG_TO_RAD
    bullet = Bullet(
        bullet_id,
        bot.id,
        power,
        direction,
        intent.bullet_color,
        bot.x,
        bot.y,
        calc_bullet_speed(power),
        cos(angle),
        sin(angle),
    )
    event = (ev.BULLET_FIRED, bullet.snapshot())
    events.by_bot[bot.id].append(event)
    events.observer.append(event)
    bot.energy -= firepower
    return bullet
