"""Orbiter: circular aim from the enemy's turn rate; orbits the enemy, reversing at random and on its shots.

Classic strategy: circular targeting (predicts an enemy that turns as it drives, which head-on and linear aim
miss) with an orbiting movement, perpendicular to the enemy so that head-on shots pass behind it. It reverses
its orbit when it sees the enemy fire (an energy drop of 0.1-3) and, now and then, at random, so a gun that
learned one direction is wrong half the time.
"""

from __future__ import annotations

from sacbot.opponents.duel import DuelBot

PREFERRED_DISTANCE = 260.0
RANDOM_REVERSE = 0.02  # chance per turn of reversing without a reason
FIRE_REVERSE = 0.75  # chance of reversing when the enemy fires


class Orbiter(DuelBot):
    name = "Orbiter"
    colors = {
        "body_color": "#2E86DE",
        "turret_color": "#1B4F72",
        "radar_color": "#AED6F1",
        "gun_color": "#1B4F72",
        "bullet_color": "#5DADE2",
    }

    def on_duel_round(self) -> None:
        self.orientation = 1.0 if self.rng.random() < 0.5 else -1.0

    def on_wall(self) -> None:
        self.orientation = -self.orientation

    def act(self) -> None:
        if not self.seen:
            self._out_gun = 20.0
            return
        if self.enemy_fired and self.rng.random() < FIRE_REVERSE or self.rng.random() < RANDOM_REVERSE:
            self.orientation = -self.orientation
        distance = self.enemy_distance()
        angle = self.orbit_angle(self.x, self.y, self.orientation, distance, PREFERRED_DISTANCE)
        self.drive(self.wall_smooth(self.x, self.y, angle, self.orientation))
        power = self.power_for(distance)
        self.aim_fire(self.circular_aim(power), power)
