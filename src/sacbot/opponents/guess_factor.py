"""`GuessFactorGun`: the statistical gun of the advanced opponents (`Gunner`, `Surfer`).

It owns the visit statistics per segment and the virtual waves that feed them; the wave geometry and the
guess-factor bins it counts in are `sacbot.opponents.waves`. The statistics live in the gun object, so they
carry over from round to round within a game (`new_round` drops only the waves in flight).

Pure: no I/O, no clock, no randomness.
"""

from __future__ import annotations

import math

from sacbot.engine.rules import calc_bullet_speed
from sacbot.opponents.duel import BOT_RADIUS, DuelBot
from sacbot.opponents.waves import GF_BINS, Wave, bin_gf, gf_bin, max_escape_angle, smear


class GuessFactorGun:
    """A statistical gun: visit counts of the enemy's guess factor per (distance, lateral speed) segment.

    Every turn with a fresh scan it launches a virtual wave; when a wave passes the enemy it records the
    factor the enemy reached. It aims at the densest factor of the current segment, falling back to all
    segments together while that one has few visits.
    """

    DISTANCE_EDGES = (150.0, 300.0, 450.0, 600.0)
    LATERAL_EDGES = (1.0, 3.0, 5.5, 7.5)

    def __init__(self) -> None:
        segments = (len(self.DISTANCE_EDGES) + 1) * (len(self.LATERAL_EDGES) + 1)
        self.stats = [[0.0] * GF_BINS for _ in range(segments)]
        self.visits = [0] * segments
        self.total = [0.0] * GF_BINS
        self.total_visits = 0
        self.waves: list[Wave] = []

    def new_round(self) -> None:
        self.waves = []

    def segment(self, distance: float, lateral: float) -> int:
        d = sum(1 for edge in self.DISTANCE_EDGES if distance > edge)
        v = sum(1 for edge in self.LATERAL_EDGES if abs(lateral) > edge)
        return d * (len(self.LATERAL_EDGES) + 1) + v

    def update(self, bot: DuelBot, power: float, fired: bool) -> None:
        """Each turn with a fresh scan: score the waves that reached the enemy, launch this turn's wave."""
        en = bot.enemy
        turn = bot.turn_number
        alive: list[Wave] = []
        for wave in self.waves:
            if wave.radius(turn) >= math.hypot(en.x - wave.x, en.y - wave.y) - BOT_RADIUS / 2.0:
                index = gf_bin(wave.guess_factor(en.x, en.y))
                weight = 3.0 if wave.power else 1.0  # real shots count more than virtual waves
                smear(self.stats[wave.segment], index, weight)
                smear(self.total, index, weight)
                self.visits[wave.segment] += 1
                self.total_visits += 1
            else:
                alive.append(wave)
        self.waves = alive
        lateral = bot.enemy_lateral_speed()
        segment = self.segment(bot.enemy_distance(), lateral)
        self.waves.append(
            Wave(
                bot.x,
                bot.y,
                turn + 1,
                calc_bullet_speed(power),
                bot.enemy_bearing(),
                bot.lateral_direction,
                segment,
                power if fired else 0.0,
            )
        )

    def aim(self, bot: DuelBot, power: float) -> float | None:
        """The angle of the densest factor; None until there is data."""
        segment = self.segment(bot.enemy_distance(), bot.enemy_lateral_speed())
        stats = self.stats[segment] if self.visits[segment] >= 8 else self.total
        if self.total_visits < 8:
            return None
        best = max(range(GF_BINS), key=stats.__getitem__)
        offset = bin_gf(best) * max_escape_angle(calc_bullet_speed(power)) * bot.lateral_direction
        return (bot.enemy_bearing() + offset) % 360.0


__all__ = [
    "GuessFactorGun",
]
