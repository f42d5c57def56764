"""Corners: drives into a corner and sweeps its gun over the arena from there.

It picks one of the four corners at random, turns to face the wall on that corner's side, drives to it, turns
left and drives on into the corner. There it sweeps the gun 90 degrees back and forth in 3-degree steps. A
scan while moving stops it to fire; power 1 far away (or when low on energy), 2 at mid range, 3 close up.
After a round in which it outlived fewer than 75% of its enemies it tries the next corner.
"""

from __future__ import annotations

from sacbot.opponents.base import ClassicBot
from sacbot.opponents.dispatch import PRIORITY_SCANNED_BOT, Script
from sacbot.opponents.motion import normalize_relative
from sacbot.protocol import ScannedBotEvent


class Corners(ClassicBot):
    name = "Corners"
    colors = {
        "body_color": "#FF0000",
        "turret_color": "#000000",
        "radar_color": "#FFFF00",
        "gun_color": "#000000",
    }

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        # The direction of the first wall to drive to; the corner is the one to its left.
        self.corner = self.rng.choice((0, 90, 180, 270))
        self.enemies_at_start = 0

    def on_new_round(self) -> None:
        self.stop_when_see_enemy = False

    def run(self) -> Script:
        self.enemies_at_start = self.enemy_count
        yield from self.go_corner()
        step = 3.0
        while True:
            for _ in range(30):
                yield from self.turn_gun_left(step)
            step = -step

    def go_corner(self) -> Script:
        self.stop_when_see_enemy = False
        yield from self.turn_left(normalize_relative(self.corner - self.direction))
        self.stop_when_see_enemy = True
        yield from self.forward(5000)
        yield from self.turn_left(90)
        yield from self.forward(5000)
        # Facing along the second wall; a quarter turn left points the gun along the first wall, back into
        # the arena, and the sweep covers the quarter between the two walls.
        yield from self.turn_gun_left(90)

    def on_scanned_bot(self, e: ScannedBotEvent) -> None:
        distance = self.distance_to(e.x, e.y)
        if self.stop_when_see_enemy:
            self.interrupt(self._stop_and_fire(distance), PRIORITY_SCANNED_BOT)
        else:
            self.smart_fire(distance)

    def _stop_and_fire(self, distance: float) -> Script:
        yield from self.stop()
        self.smart_fire(distance)
        yield
        yield from self.rescan()
        self.resume()

    def smart_fire(self, distance: float) -> None:
        if distance > 200 or self.energy < 15:
            self.set_fire(1)
        elif distance > 50:
            self.set_fire(2)
        else:
            self.set_fire(3)

    def on_round_over(self, won: bool) -> None:
        if won or self.enemies_at_start == 0:
            return
        if (self.enemies_at_start - self.enemy_count) / self.enemies_at_start < 0.75:
            self.corner = (self.corner + 90) % 360
