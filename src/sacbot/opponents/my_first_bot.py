"""MyFirstBot: back and forth 100 units with a full gun turn at each end; fires 1 on a scan."""

from __future__ import annotations

from sacbot.opponents.base import ClassicBot
from sacbot.opponents.dispatch import PRIORITY_HIT_BY_BULLET, Script
from sacbot.protocol import BulletHitBotEvent, ScannedBotEvent


class MyFirstBot(ClassicBot):
    name = "MyFirstBot"

    def run(self) -> Script:
        while True:
            yield from self.forward(100)
            yield from self.turn_gun_right(360)
            yield from self.back(100)
            yield from self.turn_gun_right(360)

    def on_scanned_bot(self, e: ScannedBotEvent) -> None:
        self.set_fire(1)

    def on_hit_by_bullet(self, e: BulletHitBotEvent) -> None:
        # Turn perpendicular to the bullet.
        bearing = self.calc_bearing(e.bullet.direction)
        self.interrupt(self.turn_right(90 - bearing), PRIORITY_HIT_BY_BULLET)
