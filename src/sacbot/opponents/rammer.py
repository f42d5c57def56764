"""Rammer: closes in while sidestepping, then rams and fires point blank.

Classic strategy: ramming (RamFire's idea, with movement that is hard to hit on the way in). It drives toward
the enemy at an angle (about 35 degrees off the direct line), switching sides on each enemy shot and every
so often, so head-on and linear shots miss the approach. Close up it drives straight in; on contact it fires
full power and keeps pushing (ram damage scores double). Its gun leads the enemy linearly.
"""

from __future__ import annotations

from sacbot.opponents.duel import DuelBot

SIDESTEP = 35.0  # degrees off the direct line while closing in
CLOSE = 110.0


class Rammer(DuelBot):
    name = "Rammer"
    colors = {
        "body_color": "#C0392B",
        "turret_color": "#641E16",
        "radar_color": "#F5B7B1",
        "gun_color": "#641E16",
        "bullet_color": "#E74C3C",
    }

    def on_duel_round(self) -> None:
        self.side = 1.0 if self.rng.random() < 0.5 else -1.0
        self.switch_at = 0

    def act(self) -> None:
        if not self.seen:
            self._out_gun = 20.0
            self.set_speed_turn(0.0, 10.0)
            return
        distance = self.enemy_distance()
        bearing = self.enemy_bearing()
        if self.enemy_fired or self.turn_number >= self.switch_at:
            self.side = -self.side
            self.switch_at = self.turn_number + 12 + int(self.rng.random() * 20)
        if distance < CLOSE:
            angle = bearing
        else:
            angle = self.wall_smooth(self.x, self.y, bearing + self.side * SIDESTEP, -self.side, 60.0)
        self.drive(angle)
        power = 3.0 if distance < CLOSE else self.power_for(distance)
        power = min(power, max(0.1, self.energy - 1.0))
        self.aim_fire(self.circular_aim(power, turn_rate=0.0), power)
