"""Bullet waves and guess factors: the geometry the advanced opponents measure shots with.

A `Wave` is one shot (real or virtual) spreading from where it was fired; where a bot stands when the wave
passes it, as a fraction of the widest escape angle (`max_escape_angle`) on its side of head-on, is its guess
factor (-1..1). Guess factors are counted in `GF_BINS` bins (`gf_bin`, `bin_gf`), a visit smeared over its
neighbours (`smear`): `GuessFactorGun`'s aim statistics and `Surfer`'s danger bins.

Pure: no I/O, no clock, no randomness.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sacbot.opponents.motion import MAX_SPEED, direction_to, normalize_relative

GF_BINS = 31  # guess-factor bins, the middle one is head-on
_MID = GF_BINS // 2


def max_escape_angle(speed: float) -> float:
    """Degrees: the widest angle a bot at full speed can move away from head-on while a bullet flies."""
    return math.degrees(math.asin(min(1.0, MAX_SPEED / speed)))


@dataclass
class Wave:
    """A bullet wave: where and when a shot left, how fast it goes, and where the target was then."""

    x: float
    y: float
    turn: int  # the turn the shot was fired in: it has travelled speed * (now - turn + 1) by `now`
    speed: float
    bearing: float  # absolute angle from the origin to the target at firing time (head-on)
    direction: float  # +1 / -1: the target's lateral direction then (guess factors point that way)
    segment: int = 0
    power: float = 0.0

    def radius(self, turn: int) -> float:
        return self.speed * (turn - self.turn + 1)

    def guess_factor(self, x: float, y: float) -> float:
        offset = normalize_relative(direction_to(self.x, self.y, x, y) - self.bearing)
        gf = offset / max_escape_angle(self.speed) * self.direction
        return max(-1.0, min(1.0, gf))


def gf_bin(gf: float) -> int:
    return max(0, min(GF_BINS - 1, round((gf + 1.0) * _MID)))


def bin_gf(index: int) -> float:
    return index / _MID - 1.0


def smear(stats: list[float], index: int, weight: float = 1.0) -> None:
    """Add a visit at `index`, spread over its neighbours (1 / (1 + d^2)), as guess-factor guns do."""
    for i in range(GF_BINS):
        d = i - index
        stats[i] += weight / (1.0 + d * d)


__all__ = [
    "GF_BINS",
    "Wave",
    "bin_gf",
    "gf_bin",
    "max_escape_angle",
    "smear",
]
