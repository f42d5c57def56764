"""Mutable game state: participants, persistent intents, bots and bullets, as plain slots classes.

The hot loop reads and writes these attributes directly; nothing here validates or allocates per turn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sacbot.engine.rules import INITIAL_BOT_ENERGY, INITIAL_DROID_ENERGY, INITIAL_GUN_HEAT

COLOR_FIELDS = (
    "body_color",
    "turret_color",
    "radar_color",
    "bullet_color",
    "scan_color",
    "tracks_color",
    "gun_color",
)


@dataclass(frozen=True)
class Participant:
    """One bot in a game. `id` is the bot id (1..N on the server, sorted by session id)."""

    id: int
    name: str
    version: str = "1.0"
    session_id: str = ""
    team_id: int | None = None
    is_droid: bool = False
    # (x, y, direction); any element may be None. Used only with Game(use_initial_positions=True).
    initial_position: tuple[float | None, float | None, float | None] | None = None
    team_name: str | None = None
    team_version: str | None = None


# The persistent intent's fields, in `sacbot.protocol.BotIntent` order (a module constant, not read from
# __slots__: compiled classes have none).
INTENT_FIELDS = (
    "turn_rate",
    "gun_turn_rate",
    "radar_turn_rate",
    "target_speed",
    "firepower",
    "adjust_gun_for_body_turn",
    "adjust_radar_for_body_turn",
    "adjust_radar_for_gun_turn",
    "rescan",
    "fire_assist",
    *COLOR_FIELDS,
    "std_out",
    "std_err",
    "team_messages",
    "debug_graphics",
)


class Intent:
    """A bot's persistent intent: what it does each turn until a new intent arrives.

    The field names are those of `sacbot.protocol.BotIntent`. `None` is only meaningful for the colors,
    std_out/std_err, team_messages and debug_graphics (no value); the numbers and flags always hold one.
    """

    __slots__ = INTENT_FIELDS

    def __init__(
        self,
        turn_rate: float = 0.0,
        gun_turn_rate: float = 0.0,
        radar_turn_rate: float = 0.0,
        target_speed: float = 0.0,
        firepower: float = 0.0,
        adjust_gun_for_body_turn: bool = False,
        adjust_radar_for_body_turn: bool = False,
        adjust_radar_for_gun_turn: bool = False,
        rescan: bool = False,
        fire_assist: bool = True,
        body_color: str | None = None,
        turret_color: str | None = None,
        radar_color: str | None = None,
        bullet_color: str | None = None,
        scan_color: str | None = None,
        tracks_color: str | None = None,
        gun_color: str | None = None,
        std_out: str | None = None,
        std_err: str | None = None,
        team_messages: list[Any] | None = None,
        debug_graphics: str | None = None,
    ) -> None:
        self.turn_rate = turn_rate
        self.gun_turn_rate = gun_turn_rate
        self.radar_turn_rate = radar_turn_rate
        self.target_speed = target_speed
        self.firepower = firepower
        self.adjust_gun_for_body_turn = adjust_gun_for_body_turn
        self.adjust_radar_for_body_turn = adjust_radar_for_body_turn
        self.adjust_radar_for_gun_turn = adjust_radar_for_gun_turn
        self.rescan = rescan
        self.fire_assist = fire_assist
        self.body_color = body_color
        self.turret_color = turret_color
        self.radar_color = radar_color
        self.bullet_color = bullet_color
        self.scan_color = scan_color
        self.tracks_color = tracks_color
        self.gun_color = gun_color
        self.std_out = std_out
        self.std_err = std_err
        self.team_messages = team_messages
        self.debug_graphics = debug_graphics

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in INTENT_FIELDS)
        return f"Intent({fields})"


class Bot:
    """One bot's state within a round (`MutableBot`)."""

    __slots__ = (
        "id",
        "name",
        "team_id",
        "is_droid",
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
        "energy",
        "gun_heat",
        "intent",
        "prev_x",
        "prev_y",
        "prev_direction",
        "prev_gun_direction",
        "prev_radar_direction",
        "hit_wall_last_turn",
        "hit_wall_this_turn",
        "scan_last_turn",
        "scan_this_turn",
        "std_out",
        "std_err",
        "debug_graphics",
        "teammate_ids",
    )

    def __init__(
        self,
        bot_id: int,
        name: str,
        x: float,
        y: float,
        direction: float,
        team_id: int | None = None,
        is_droid: bool = False,
        teammate_ids: tuple[int, ...] = (),
    ) -> None:
        self.id = bot_id
        self.name = name
        self.team_id = team_id
        self.is_droid = is_droid
        self.x = x
        self.y = y
        self.direction = direction
        self.gun_direction = direction
        self.radar_direction = direction
        self.radar_sweep = 0.0
        self.speed = 0.0
        self.turn_rate = 0.0
        self.gun_turn_rate = 0.0
        self.radar_turn_rate = 0.0
        self.energy = INITIAL_DROID_ENERGY if is_droid else INITIAL_BOT_ENERGY
        self.gun_heat = INITIAL_GUN_HEAT
        # None until the first intent of the round is taken (turn 2 at the earliest).
        self.intent: Intent | None = None
        self.prev_x = x
        self.prev_y = y
        self.prev_direction = direction
        self.prev_gun_direction = direction
        self.prev_radar_direction = direction
        self.hit_wall_last_turn = False
        self.hit_wall_this_turn = False
        # (x, y) of the first bot this bot scanned in the previous/current turn: the fire-assist target.
        self.scan_last_turn: tuple[float, float] | None = None
        self.scan_this_turn: tuple[float, float] | None = None
        self.std_out: str | None = None
        self.std_err: str | None = None
        self.debug_graphics: str | None = None
        self.teammate_ids = teammate_ids

    @property
    def alive(self) -> bool:
        return self.energy >= 0

    @property
    def disabled(self) -> bool:
        return self.energy >= 0 and abs(self.energy) < 1e-6

    def __repr__(self) -> str:
        return (
            f"Bot(id={self.id}, x={self.x:.3f}, y={self.y:.3f}, dir={self.direction:.3f}, "
            f"speed={self.speed}, energy={self.energy:.3f}, gun_heat={self.gun_heat:.3f})"
        )


class Bullet:
    """A bullet in flight: its position is start + speed * tick along its direction (`IBullet`)."""

    __slots__ = (
        "bullet_id",
        "owner_id",
        "power",
        "direction",
        "color",
        "start_x",
        "start_y",
        "tick",
        "speed",
        "cos",
        "sin",
        "x",
        "y",
        "next_x",
        "next_y",
    )

    def __init__(
        self,
        bullet_id: int,
        owner_id: int,
        power: float,
        direction: float,
        color: str | None,
        start_x: float,
        start_y: float,
        speed: float,
        cos: float,
        sin: float,
    ) -> None:
        self.bullet_id = bullet_id
        self.owner_id = owner_id
        self.power = power
        self.direction = direction
        self.color = color
        self.start_x = start_x
        self.start_y = start_y
        self.tick = 0
        self.speed = speed
        self.cos = cos
        self.sin = sin
        self.x = start_x
        self.y = start_y
        self.next_x = start_x
        self.next_y = start_y

    def snapshot(self) -> tuple[int, int, float, float, float, float, str | None]:
        """(bullet_id, owner_id, power, x, y, direction, color) as of now, for events."""
        return (self.bullet_id, self.owner_id, self.power, self.x, self.y, self.direction, self.color)

    def __repr__(self) -> str:
        return (
            f"Bullet(id={self.bullet_id}, owner={self.owner_id}, power={self.power}, x={self.x}, y={self.y})"
        )
