"""Speed, movement and turning of bots that carry out their intent (`TurnProcessor.executeBotIntent`,
`updateBotTurnRatesAndDirections`), and keeping positions inside the arena (`constrainBotPosition`).

Order per bot: new speed from `calc_new_bot_speed`, move along the *old* heading, then turn body, gun and
radar with the adjust flags. Disabled bots and bots without an intent do nothing.
"""

from __future__ import annotations

from math import cos, fmod, sin

from sacbot.engine import events as ev
from sacbot.engine.rules import (
    BOT_RADIUS,
    DEG_TO_RAD,
    MAX_GUN_TURN_RATE,
    MAX_NUMBER_OF_TEAM_MESSAGES_PER_TURN,
    MAX_RADAR_TURN_RATE,
    MAX_TEAM_MESSAGE_SIZE,
    calc_new_bot_speed,
)
from sacbot.engine.state import Bot


def execute_intents(bots: list[Bot], events: ev.TurnEvents) -> None:
    for bot in bots:
        intent = bot.intent
        if intent is None:
            continue
        energy = bot.energy
        if energy < 0 or abs(energy) < 1e-6:  # dead or disabled: not enabled
            continue
        speed = calc_new_bot_speed(bot.speed, intent.target_speed)
        bot.speed = speed
        angle = bot.direction * DEG_TO_RAD
        bot.x += cos(angle) * speed
        bot.y += sin(angle) * speed

        # Turn rates, clamped; the body's limit depends on the new speed.
        abs_speed = speed if speed >= 0 else -speed
        if abs_speed > 8.0:
            abs_speed = 8.0
        max_turn = 10.0 - 0.75 * abs_speed
        tr = intent.turn_rate
        if tr > max_turn:
            tr = max_turn
        if tr < -max_turn:
            tr = -max_turn
        gtr = intent.gun_turn_rate
        if gtr > MAX_GUN_TURN_RATE:
            gtr = MAX_GUN_TURN_RATE
        if gtr < -MAX_GUN_TURN_RATE:
            gtr = -MAX_GUN_TURN_RATE
        rtr = intent.radar_turn_rate
        if rtr > MAX_RADAR_TURN_RATE:
            rtr = MAX_RADAR_TURN_RATE
        if rtr < -MAX_RADAR_TURN_RATE:
            rtr = -MAX_RADAR_TURN_RATE
        bot.turn_rate = tr
        bot.gun_turn_rate = gtr
        bot.radar_turn_rate = rtr

        gun_adjust = tr + gtr
        if intent.adjust_gun_for_body_turn:
            gun_adjust -= tr
        radar_adjust = gun_adjust + rtr
        if intent.adjust_radar_for_gun_turn:
            radar_adjust -= gtr
            if intent.adjust_gun_for_body_turn:  # original Robocode compatibility, as the server does
                radar_adjust += tr
        if intent.adjust_radar_for_body_turn:
            radar_adjust -= tr

        a = fmod(bot.direction + tr, 360.0)
        bot.direction = a if a >= 0 else a + 360.0
        a = fmod(bot.gun_direction + gun_adjust, 360.0)
        bot.gun_direction = a if a >= 0 else a + 360.0
        a = fmod(bot.radar_direction + radar_adjust, 360.0)
        bot.radar_direction = a if a >= 0 else a + 360.0
        bot.radar_sweep = radar_adjust

        # One-shot outputs move from the intent to the bot (observers see them once).
        bot.std_out = intent.std_out
        bot.std_err = intent.std_err
        intent.std_out = None
        intent.std_err = None
        bot.debug_graphics = intent.debug_graphics
        if intent.team_messages:
            _send_team_messages(bot, intent.team_messages, events)
            intent.team_messages = None


def _send_team_messages(bot: Bot, messages: list[object], events: ev.TurnEvents) -> None:
    """At most 5 per turn; a message longer than 4096 characters is skipped on its own."""
    for msg in messages[:MAX_NUMBER_OF_TEAM_MESSAGES_PER_TURN]:
        text = getattr(msg, "message", None)
        if not isinstance(text, str) or len(text) > MAX_TEAM_MESSAGE_SIZE:
            continue
        event = (ev.TEAM_MESSAGE, text, getattr(msg, "message_type", ""), bot.id)
        events.private_only = True
        receiver = getattr(msg, "receiver_id", None)
        if receiver is not None:
            events.private(receiver, event)
        else:
            for mate in bot.teammate_ids:
                events.private(mate, event)


def constrain_position(
    old_x: float, old_y: float, x: float, y: float, width: float, height: float
) -> tuple[float, float]:
    """Move (x, y) back along the segment from (old_x, old_y) until the bot circle is inside the arena."""
    new_x = x
    new_y = y
    if x - BOT_RADIUS < 0:
        new_x = BOT_RADIUS
        dx = x - old_x
        if dx != 0.0:
            new_y = old_y + (y - old_y) * (new_x - old_x) / dx
    elif x + BOT_RADIUS > width:
        new_x = width - BOT_RADIUS
        dx = x - old_x
        if dx != 0.0:
            new_y = old_y + (y - old_y) * (new_x - old_x) / dx
    if y - BOT_RADIUS < 0:
        new_y = BOT_RADIUS
        dy = y - old_y
        if dy != 0.0:
            new_x = old_x + (x - old_x) * (new_y - old_y) / dy
    elif y + BOT_RADIUS > height:
        new_y = height - BOT_RADIUS
        dy = y - old_y
        if dy != 0.0:
            new_x = old_x + (x - old_x) * (new_y - old_y) / dy
    return new_x, new_y


def constrain_all(bots: list[Bot], width: float, height: float) -> None:
    """Step 6 of the pipeline: every bot back inside, no event and no damage."""
    lo = BOT_RADIUS
    hi_x = width - BOT_RADIUS
    hi_y = height - BOT_RADIUS
    for bot in bots:
        x = bot.x
        y = bot.y
        if lo <= x <= hi_x and lo <= y <= hi_y:
            continue
        bot.x, bot.y = constrain_position(bot.prev_x, bot.prev_y, x, y, width, height)
