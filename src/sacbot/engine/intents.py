"""How arriving intents become a bot's persistent intent (`GameServer.handleBotIntent`, `BotIntentMapper`,
`model/BotIntent.kt`).

- The first intent after a tick replaces the persistent one; its omitted (None) numbers become 0.0, flags
  False and `fire_assist` True. Colors are sticky: None keeps the old color, a blank string clears it.
- Later intents in the same turn change only their non-None fields (`merge_intents` folds them).
- No intent for a turn: the persistent intent repeats.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sacbot.engine.state import COLOR_FIELDS, INTENT_FIELDS, Intent

_NUMBERS = ("turn_rate", "gun_turn_rate", "radar_turn_rate", "target_speed", "firepower")
_FLAGS = ("adjust_gun_for_body_turn", "adjust_radar_for_body_turn", "adjust_radar_for_gun_turn", "rescan")
_STICKY_IF_NONE = (*COLOR_FIELDS, "debug_graphics")
_ONE_SHOT = ("std_out", "std_err", "team_messages")
ALL_FIELDS = INTENT_FIELDS


def to_persistent(message: Any, previous: Intent | None) -> Intent:
    """The persistent intent after `message` arrived as the first intent of a turn.

    `message` is a `sacbot.protocol.BotIntent`, an engine `Intent` or any object with those attributes.
    Unrolled on purpose: this runs for every bot every turn.
    """
    new = Intent()
    v = message.turn_rate
    new.turn_rate = 0.0 if v is None else float(v)
    v = message.gun_turn_rate
    new.gun_turn_rate = 0.0 if v is None else float(v)
    v = message.radar_turn_rate
    new.radar_turn_rate = 0.0 if v is None else float(v)
    v = message.target_speed
    new.target_speed = 0.0 if v is None else float(v)
    v = message.firepower
    new.firepower = 0.0 if v is None else float(v)
    new.adjust_gun_for_body_turn = message.adjust_gun_for_body_turn is True
    new.adjust_radar_for_body_turn = message.adjust_radar_for_body_turn is True
    new.adjust_radar_for_gun_turn = message.adjust_radar_for_gun_turn is True
    new.rescan = message.rescan is True
    new.fire_assist = message.fire_assist is not False
    new.std_out = message.std_out
    new.std_err = message.std_err
    messages = message.team_messages
    new.team_messages = list(messages) if messages else None
    if previous is None:
        new.body_color = new.turret_color = new.radar_color = new.bullet_color = None
        new.scan_color = new.tracks_color = new.gun_color = new.debug_graphics = None
    else:
        new.body_color = previous.body_color
        new.turret_color = previous.turret_color
        new.radar_color = previous.radar_color
        new.bullet_color = previous.bullet_color
        new.scan_color = previous.scan_color
        new.tracks_color = previous.tracks_color
        new.gun_color = previous.gun_color
        new.debug_graphics = previous.debug_graphics
    if (
        message.body_color is not None
        or message.turret_color is not None
        or message.radar_color is not None
        or message.bullet_color is not None
        or message.scan_color is not None
        or message.tracks_color is not None
        or message.gun_color is not None
    ):
        for name in COLOR_FIELDS:
            v = getattr(message, name)
            if v is not None:
                setattr(new, name, v if v.strip() else None)
    v = message.debug_graphics
    if v is not None:
        new.debug_graphics = v
    return new


def merge_intents(messages: Sequence[Any]) -> Intent:
    """Fold several intents that one bot sent within one turn into the one `Game.turn` takes.

    The first one counts with the reset-to-defaults rule (None numbers and flags become defaults); every later
    one changes only its non-None fields. Colors left None stay None, which `Game.turn` reads as "unchanged".
    """
    if not messages:
        raise ValueError("merge_intents needs at least one intent")
    first = messages[0]
    merged = Intent()
    for name in _NUMBERS:
        v = getattr(first, name, None)
        setattr(merged, name, 0.0 if v is None else float(v))
    for name in _FLAGS:
        setattr(merged, name, getattr(first, name, None) is True)
    merged.fire_assist = getattr(first, "fire_assist", None) is not False
    for name in (*_STICKY_IF_NONE, *_ONE_SHOT):
        setattr(merged, name, getattr(first, name, None))
    for later in messages[1:]:
        for name in ALL_FIELDS:
            v = getattr(later, name, None)
            if v is not None:
                setattr(merged, name, float(v) if name in _NUMBERS else v)
    return merged
