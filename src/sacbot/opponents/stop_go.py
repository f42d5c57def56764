"""StopGo: stop-and-go movement with linear aim from range.

Classic strategy: stop-and-go. It stands still until it sees the enemy fire (an energy drop of 0.1-3), then
makes a short burst across the line of fire, long enough to leave a head-on or linear shot's path, and stops
again. Guns that lead a moving target (linear, circular) aim ahead of a bot that then stands still; head-on
guns aim where it was before the burst. Its own gun is linear targeting (the enemy's heading and speed, no
turn) from mid range.
"""

from __future__ import annotations

from sacbot.engine.rules import calc_bullet_speed
from sacbot.opponents.duel import DuelBot

PREFERRED_DISTANCE = 280.0
CLOSE = 160.0  # nearer than this it keeps driving away, across the line


class StopGo(DuelBot):
    name = "StopGo"
    colors = {
        "body_color": "#7D3C98",
        "turret_color": "#4A235A",
        "radar_color": "#D2B4DE",
        "gun_color": "#4A235A",
        "bullet_color": "#BB8FCE",
    }

    def on_duel_round(self) -> None:
        self.orientation = 1.0 if self.rng.random() < 0.5 else -1.0
        self.burst = 0  # turns left of the current burst

    def on_wall(self) -> None:
        self.orientation = -self.orientation

    def act(self) -> None:
        if not self.seen:
            self._out_gun = 20.0
            return
        distance = self.enemy_distance()
        if self.enemy_fired:
            # Long enough to clear a bot width (and a bit) before the bullet arrives, not much longer.
            flight = distance / calc_bullet_speed(self.enemy_fired)
            self.burst = int(min(max(8.0, flight * 0.6), 16.0))
            if self.rng.random() < 0.5:
                self.orientation = -self.orientation
        if self.burst > 0 or distance < CLOSE:
            self.burst -= 1
            angle = self.orbit_angle(self.x, self.y, self.orientation, distance, PREFERRED_DISTANCE)
            self.drive(self.wall_smooth(self.x, self.y, angle, self.orientation))
        else:
            # Stand still, but face across the line so the next burst needs no turning first.
            angle = self.orbit_angle(self.x, self.y, self.orientation, distance, PREFERRED_DISTANCE)
            self.drive(self.wall_smooth(self.x, self.y, angle, self.orientation), 0.0)
        power = self.power_for(distance)
        self.aim_fire(self.circular_aim(power, turn_rate=0.0), power)
