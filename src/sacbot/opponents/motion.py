"""Blocking moves as per-tick intents: the bookkeeping behind `forward(100)` and `turn_left(90)`.

A classic bot says "drive 100 forward" once; the server only knows per-turn rates and a target speed. This
module keeps what is left of each blocking move, updates it from what the bot actually did (the observed
state), and turns it into the next turn's rates. The target speed for a move of N units is limited the way the
official libraries limit it (REFERENCE.md section 7.3): never more than +1 or -2 from the current speed, and
never faster than the speed from which the bot can still stop on the spot with 2 units/turn of braking. That
also keeps the server's "target 0 stops instantly" and "reversal gives cur/2 - 1" rules out of play, as with
the official bots.

Pure: no I/O, plain floats, fast enough to run every turn inside the engine.
"""

from __future__ import annotations

import math

# The engine's own angle helpers, re-exported: the opponents import them from here.
from sacbot.engine.rules import normalize_absolute as normalize_absolute
from sacbot.engine.rules import normalize_relative as normalize_relative

MAX_SPEED = 8.0
ACCELERATION = 1.0
BRAKING = 2.0  # |DECELERATION|
MAX_TURN_RATE = 10.0
MAX_GUN_TURN_RATE = 20.0
MAX_RADAR_TURN_RATE = 45.0
_EPS = 1e-5


def direction_to(from_x: float, from_y: float, to_x: float, to_y: float) -> float:
    """Absolute direction (0 = east, counter-clockwise) from one point to another."""
    return math.degrees(math.atan2(to_y - from_y, to_x - from_x)) % 360.0


def max_speed_for_distance(distance: float) -> float:
    """The highest speed from which braking 2 units/turn covers exactly `distance` (>= 0) and stops.

    With t braking turns the bot covers t*(t-1) units after this one, so the speed now may be
    2*(t-1) + (distance - t*(t-1)) / t, with t the smallest count for which that stays consistent.
    """
    if distance >= 20.0:  # 8 + 6 + 4 + 2: full speed still stops in time (and no sqrt per turn)
        return MAX_SPEED
    turns = max(1, math.ceil((math.sqrt(4.0 * distance + 1.0) - 1.0) / 2.0))
    braking_distance = turns * (turns - 1) * BRAKING / 2.0
    return (turns - 1) * BRAKING + (distance - braking_distance) / turns


def _max_braking_from_reverse(speed: float) -> float:
    # Moving backwards at `speed` (> 0) and wanting to go forwards: brake, then accelerate, within one turn.
    braking_time = speed / BRAKING
    return min(1.0, braking_time) * BRAKING + max(0.0, 1.0 - braking_time) * ACCELERATION


def target_speed_for_distance(speed: float, distance: float, max_speed: float = MAX_SPEED) -> float:
    """The target speed to send this turn so a move of `distance` left (signed) ends stopped on the spot."""
    if distance < 0:
        return -target_speed_for_distance(-speed, -distance, max_speed)
    wanted = min(max_speed, max_speed_for_distance(distance))
    if speed >= 0:
        return min(max(wanted, speed - BRAKING), speed + ACCELERATION)
    return min(max(wanted, speed - ACCELERATION), speed + _max_braking_from_reverse(-speed))


class Motion:
    """What is left of the current blocking moves, or the continuous rates when no move is blocking.

    Signs follow Tank Royale: positive turns are to the left (counter-clockwise), positive distances forward.
    `None` for a remaining amount means "continuous": the matching rate (or target speed) is sent as it is.
    """

    __slots__ = (
        "distance",
        "turn",
        "gun_turn",
        "radar_turn",
        "target_speed",
        "turn_rate",
        "gun_turn_rate",
        "radar_turn_rate",
        "max_speed",
        "_prev",
        "speed",
    )

    def __init__(self) -> None:
        self.max_speed = MAX_SPEED
        self.reset()

    def reset(self) -> None:
        self.distance: float | None = None
        self.turn: float | None = None
        self.gun_turn: float | None = None
        self.radar_turn: float | None = None
        self.target_speed = 0.0
        self.turn_rate = 0.0
        self.gun_turn_rate = 0.0
        self.radar_turn_rate = 0.0
        self.speed = 0.0
        # Previous x, y, direction, gun direction, radar direction; None before the first observed turn.
        self._prev: tuple[float, float, float, float, float] | None = None

    def observe(
        self, x: float, y: float, direction: float, gun_direction: float, radar_direction: float, speed: float
    ) -> None:
        """Count what the last turn did against the remaining amounts."""
        self.speed = speed
        prev = self._prev
        self._prev = (x, y, direction, gun_direction, radar_direction)
        if prev is None or (self.distance is None and self.turn is None and self.gun_turn is None
                            and self.radar_turn is None):  # fmt: skip
            return
        px, py, pdir, pgun, pradar = prev
        if self.distance is not None:
            # The bot moves along its old heading; projecting the displacement on it also counts wall and
            # collision push-backs correctly.
            rad = math.radians(pdir)
            moved = (x - px) * math.cos(rad) + (y - py) * math.sin(rad)
            self.distance = _consume(self.distance, moved)
        if self.turn is not None:
            self.turn = _consume(self.turn, normalize_relative(direction - pdir))
        if self.gun_turn is not None:
            self.gun_turn = _consume(self.gun_turn, normalize_relative(gun_direction - pgun))
        if self.radar_turn is not None:
            self.radar_turn = _consume(self.radar_turn, normalize_relative(radar_direction - pradar))

    # -- what the next intent carries --------------------------------------------------------------------

    def next_target_speed(self) -> float:
        if self.distance is None:
            return max(-self.max_speed, min(self.max_speed, self.target_speed))
        distance = self.distance if abs(self.distance) >= _EPS else 0.0  # a crumb of a move is no move
        if distance == 0.0 and self.speed == 0.0:
            return 0.0
        return target_speed_for_distance(self.speed, distance, self.max_speed)

    def next_turn_rate(self) -> float:
        return self.turn_rate if self.turn is None else _clamp(self.turn, MAX_TURN_RATE)

    def next_gun_turn_rate(self) -> float:
        return self.gun_turn_rate if self.gun_turn is None else _clamp(self.gun_turn, MAX_GUN_TURN_RATE)

    def next_radar_turn_rate(self) -> float:
        return (
            self.radar_turn_rate if self.radar_turn is None else _clamp(self.radar_turn, MAX_RADAR_TURN_RATE)
        )

    # -- completion tests for the blocking forms ---------------------------------------------------------

    @property
    def move_done(self) -> bool:
        return not self.distance and self.speed == 0.0

    @property
    def turn_done(self) -> bool:
        return not self.turn

    @property
    def gun_turn_done(self) -> bool:
        return not self.gun_turn

    def clear_remaining(self) -> None:
        """End every blocking move now (continuous rates stay as they are)."""
        for name in ("distance", "turn", "gun_turn", "radar_turn"):
            if getattr(self, name) is not None:
                setattr(self, name, 0.0)

    def save(self) -> tuple[float | None, float | None, float | None, float | None]:
        return (self.distance, self.turn, self.gun_turn, self.radar_turn)

    def restore(self, saved: tuple[float | None, float | None, float | None, float | None]) -> None:
        self.distance, self.turn, self.gun_turn, self.radar_turn = saved


def _consume(remaining: float, done: float) -> float:
    """Remaining after `done` of it happened; a move that reached or passed its end is finished."""
    if math.isinf(remaining):
        return remaining
    if abs(remaining) <= abs(done) and remaining * done >= 0:
        return 0.0
    left = remaining - done
    return 0.0 if abs(left) < _EPS else left


def _clamp(value: float, limit: float) -> float:
    return -limit if value < -limit else (limit if value > limit else value)
