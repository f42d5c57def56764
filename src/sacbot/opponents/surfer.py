"""Surfer: wave surfing (light) with a GuessFactor gun; the strongest of the advanced opponents.

Classic strategy: wave surfing, paired with GuessFactor targeting (see `Gunner`), the two learning halves
of the strong Robocode bots. Each enemy shot shows as an energy drop; Surfer turns it into a wave (origin,
time, bullet speed, the head-on angle to where Surfer was). When a bullet hits it, it records the guess factor
of the hit on that wave, across rounds. For the nearest wave it predicts where it would be when the wave
arrives if it orbited clockwise, counter-clockwise or stopped (its own turn and speed limits, wall
smoothing), and takes the option whose factor has been hit least. It starts out expecting head-on shots, as
most bots fire.
"""

from __future__ import annotations

import math

from sacbot.engine.rules import calc_max_turn_rate, calc_new_bot_speed
from sacbot.opponents.duel import BOT_RADIUS, DuelBot, project, steer
from sacbot.opponents.guess_factor import GuessFactorGun
from sacbot.opponents.waves import GF_BINS, Wave, gf_bin, smear

PREFERRED_DISTANCE = 380.0


class Surfer(DuelBot):
    name = "Surfer"
    colors = {
        "body_color": "#F1C40F",
        "turret_color": "#7D6608",
        "radar_color": "#FCF3CF",
        "gun_color": "#7D6608",
        "bullet_color": "#F7DC6F",
    }

    def __init__(self, seed: int | None = None) -> None:
        self.gun = GuessFactorGun()
        self.danger = [0.0] * GF_BINS
        smear(self.danger, GF_BINS // 2, 0.5)  # most guns start head-on
        super().__init__(seed)

    def on_duel_round(self) -> None:
        self.gun.new_round()
        self.orientation = 1.0 if self.rng.random() < 0.5 else -1.0

    def on_hit_by(self, x: float, y: float, power: float) -> None:
        wave = self._wave_at(x, y, power)
        if wave is not None:
            smear(self.danger, gf_bin(wave.guess_factor(x, y)))
            self.enemy_waves.remove(wave)

    def _wave_at(self, x: float, y: float, power: float) -> Wave | None:
        best, best_gap = None, 60.0
        for wave in self.enemy_waves:
            if abs(wave.power - power) > 0.02:
                continue
            gap = abs(wave.radius(self.turn_number) - math.hypot(x - wave.x, y - wave.y))
            if gap < best_gap:
                best, best_gap = wave, gap
        return best

    def act(self) -> None:
        turn = self.turn_number
        self.enemy_waves = [
            w
            for w in self.enemy_waves
            if w.radius(turn) < math.hypot(self.x - w.x, self.y - w.y) + BOT_RADIUS
        ]
        if not self.seen:
            self._out_gun = 20.0
            return
        distance = self.enemy_distance()
        wave = min(
            self.enemy_waves,
            key=lambda w: (math.hypot(self.x - w.x, self.y - w.y) - w.radius(turn)) / w.speed,
            default=None,
        )
        if wave is None:
            angle = self.orbit_angle(self.x, self.y, self.orientation, distance, PREFERRED_DISTANCE)
            self.drive(self.wall_smooth(self.x, self.y, angle, self.orientation))
        else:
            options = [(self._danger(wave, o, 8.0), o, 8.0) for o in (self.orientation, -self.orientation)]
            options.append((self._danger(wave, self.orientation, 0.0), self.orientation, 0.0))
            _, self.orientation, speed = min(options, key=lambda option: option[0])
            centre = (wave.x, wave.y)
            angle = self.orbit_angle(self.x, self.y, self.orientation, distance, PREFERRED_DISTANCE, centre)
            self.drive(self.wall_smooth(self.x, self.y, angle, self.orientation), speed)
        power = self.power_for(distance)
        aim = self.gun.aim(self, power) if distance > 120.0 else None
        self.aim_fire(self.circular_aim(power) if aim is None else aim, power)
        if self.fresh_scan:
            self.gun.update(self, power, self._out_fire > 0.0)

    def _danger(self, wave: Wave, orientation: float, speed: float) -> float:
        """The hit statistics at the factor where we would be when `wave` reaches us, moving that way."""
        x, y, heading, v = self.x, self.y, self.direction, self.speed
        distance = self.enemy_distance()
        centre = (wave.x, wave.y)
        for t in range(1, 100):
            angle = self.orbit_angle(x, y, orientation, distance, PREFERRED_DISTANCE, centre)
            target, turn = steer(heading, self.wall_smooth(x, y, angle, orientation), speed)
            v = calc_new_bot_speed(v, target)
            x, y = project(x, y, heading, v)  # moves along the old heading, then turns
            x = max(BOT_RADIUS, min(self.arena_width - BOT_RADIUS, x))
            y = max(BOT_RADIUS, min(self.arena_height - BOT_RADIUS, y))
            limit = calc_max_turn_rate(v)
            heading += max(-limit, min(limit, turn))
            if wave.radius(self.turn_number + t) >= math.hypot(x - wave.x, y - wave.y) - BOT_RADIUS:
                break
        index = gf_bin(wave.guess_factor(x, y))
        return self.danger[index] + 0.5 * sum(
            self.danger[i] for i in (index - 1, index + 1) if 0 <= i < GF_BINS
        )
