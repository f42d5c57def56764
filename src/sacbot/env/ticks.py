"""Light tick views for in-process arenas: `TickEventForBot`'s attribute names, without its construction cost.

`Game.tick_for_bot` builds the full protocol tick (a 22-field BotState, the bot's bullet states, events):
about 10 us, twice per environment step. The learner's features and the classic opponents read only part of
it, duck-typed, so `tick_view` gives an object with the same attribute names and the same values, built from
the engine state in a fraction of that: the bot state's numbers are copied, the events are the same protocol
event objects (`sacbot.engine.events.to_protocol`, built only when there are any), and the bullet states are
built when read. A view describes the last turn; read it before the next `Game.turn` (the environment does:
the opponent answers its tick and the features read theirs right away). `tests/env/test_env_ticks.py` checks
it against `Game.tick_for_bot` field for field.
"""

from __future__ import annotations

from typing import Any, ClassVar

from sacbot.engine import Game
from sacbot.engine.events import to_protocol
from sacbot.engine.state import Bot
from sacbot.protocol import BulletState


class BotStateView:
    """`sacbot.protocol.BotState`'s attributes for one engine bot (numbers copied; colors read on demand)."""

    __slots__ = (
        "energy",
        "x",
        "y",
        "direction",
        "gun_direction",
        "radar_direction",
        "radar_sweep",
        "speed",
        "turn_rate",
        "gun_turn_rate",
        "radar_turn_rate",
        "gun_heat",
        "enemy_count",
        "is_droid",
        "_bot",
    )
    is_debugging_enabled: ClassVar[bool | None] = None

    def __init__(self, bot: Bot, enemy_count: int) -> None:
        self.energy = bot.energy
        self.x = bot.x
        self.y = bot.y
        self.direction = bot.direction
        self.gun_direction = bot.gun_direction
        self.radar_direction = bot.radar_direction
        self.radar_sweep = bot.radar_sweep
        self.speed = bot.speed
        self.turn_rate = bot.turn_rate
        self.gun_turn_rate = bot.gun_turn_rate
        self.radar_turn_rate = bot.radar_turn_rate
        self.gun_heat = bot.gun_heat
        self.enemy_count = enemy_count
        self.is_droid = bot.is_droid
        self._bot = bot

    def _color(self, name: str) -> str | None:
        intent = self._bot.intent
        return None if intent is None else getattr(intent, name)

    @property
    def body_color(self) -> str | None:
        return self._color("body_color")

    @property
    def turret_color(self) -> str | None:
        return self._color("turret_color")

    @property
    def radar_color(self) -> str | None:
        return self._color("radar_color")

    @property
    def bullet_color(self) -> str | None:
        return self._color("bullet_color")

    @property
    def scan_color(self) -> str | None:
        return self._color("scan_color")

    @property
    def tracks_color(self) -> str | None:
        return self._color("tracks_color")

    @property
    def gun_color(self) -> str | None:
        return self._color("gun_color")


class TickView:
    """`sacbot.protocol.TickEventForBot`'s attributes for one bot after the last turn of a game."""

    __slots__ = ("turn_number", "round_number", "bot_state", "events", "_game", "_bot_id")
    type: ClassVar[str] = "TickEventForBot"

    def __init__(self, game: Game, bot_id: int) -> None:
        turn = game.turn_number
        self.turn_number = turn
        self.round_number = game.round_number
        self.bot_state = BotStateView(game.bot(bot_id), game.enemy_count(bot_id))
        raw = game.events_for(bot_id)
        self.events: list[Any] = [to_protocol(e, turn) for e in raw] if raw else []
        self._game = game
        self._bot_id = bot_id

    @property
    def bullet_states(self) -> list[BulletState]:
        """The bot's own bullets in flight (as `Game.tick_for_bot` lists them; read before the next turn)."""
        bot_id = self._bot_id
        return [
            BulletState(
                bullet_id=b.bullet_id,
                owner_id=b.owner_id,
                power=b.power,
                x=b.x,
                y=b.y,
                direction=b.direction,
                color=b.color,
            )
            for b in self._game.bullets
            if b.owner_id == bot_id
        ]


def tick_view(game: Game, bot_id: int) -> TickView:
    """The light view of `game.tick_for_bot(bot_id)` (same attribute names and values)."""
    return TickView(game, bot_id)
