"""Gunner: a GuessFactor gun that learns during the battle, behind a random orbit.

Classic strategy: statistical targeting ("GuessFactor targeting"). Every turn it launches a virtual wave at
the enemy; when the wave passes the enemy it counts the guess factor the enemy reached (how far, as a share of
the largest possible escape angle, it moved to one side of head-on), per segment of distance and lateral
speed, across rounds. It fires at the densest factor. Its movement is a random orbit: it changes direction
and speed at random intervals.
"""

from __future__ import annotations

from sacbot.opponents.duel import DuelBot
from sacbot.opponents.guess_factor import GuessFactorGun

PREFERRED_DISTANCE = 320.0


class Gunner(DuelBot):
    name = "Gunner"
    colors = {
        "body_color": "#1E8449",
        "turret_color": "#145A32",
        "radar_color": "#ABEBC6",
        "gun_color": "#145A32",
        "bullet_color": "#58D68D",
    }

    def __init__(self, seed: int | None = None) -> None:
        self.gun = GuessFactorGun()
        super().__init__(seed)

    def on_duel_round(self) -> None:
        self.gun.new_round()
        self.orientation = 1.0 if self.rng.random() < 0.5 else -1.0
        self.change_at = 0
        self.cruise = 8.0

    def on_wall(self) -> None:
        self.orientation = -self.orientation

    def act(self) -> None:
        if not self.seen:
            self._out_gun = 20.0
            return
        distance = self.enemy_distance()
        if self.turn_number >= self.change_at:
            if self.rng.random() < 0.6:
                self.orientation = -self.orientation
            self.cruise = 4.0 + 4.0 * self.rng.random()
            self.change_at = self.turn_number + 8 + int(self.rng.random() * 30)
        angle = self.orbit_angle(self.x, self.y, self.orientation, distance, PREFERRED_DISTANCE)
        self.drive(self.wall_smooth(self.x, self.y, angle, self.orientation), self.cruise)
        power = self.power_for(distance)
        aim = self.gun.aim(self, power) if distance > 120.0 else None
        self.aim_fire(self.circular_aim(power) if aim is None else aim, power)
        if self.fresh_scan:
            self.gun.update(self, power, self._out_fire > 0.0)
