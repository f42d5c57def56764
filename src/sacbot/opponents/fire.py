"""Fire: sits still spinning its gun; fires at what it sees, and side-steps when hit."""

from __future__ import annotations

from sacbot.opponents.base import ClassicBot
from sacbot.opponents.dispatch import PRIORITY_HIT_BOT, PRIORITY_HIT_BY_BULLET, PRIORITY_SCANNED_BOT, Script
from sacbot.opponents.motion import normalize_relative
from sacbot.protocol import BotHitBotEvent, BulletHitBotEvent, ScannedBotEvent


class Fire(ClassicBot):
    name = "Fire"
    colors = {
        "body_color": "#FFAA00",
        "turret_color": "#FF7700",
        "radar_color": "#FF0000",
        "gun_color": "#FF7700",
    }

    def on_new_round(self) -> None:
        self.dodge = 50.0

    def run(self) -> Script:
        while True:
            yield from self.turn_gun_right(5)

    def on_scanned_bot(self, e: ScannedBotEvent) -> None:
        self.interrupt(self._shoot(self.distance_to(e.x, e.y)), PRIORITY_SCANNED_BOT)

    def _shoot(self, distance: float) -> Script:
        yield from self.fire(3 if distance < 50 and self.energy > 50 else 1)
        yield from self.rescan()  # the gun stays on the target while the rescans keep finding it

    def on_hit_by_bullet(self, e: BulletHitBotEvent) -> None:
        self.interrupt(self._side_step(e.bullet.direction), PRIORITY_HIT_BY_BULLET)

    def _side_step(self, bullet_direction: float) -> Script:
        yield from self.turn_left(normalize_relative(bullet_direction + 90 - self.direction))
        yield from self.forward(self.dodge)
        self.dodge = -self.dodge
        yield from self.rescan()

    def on_hit_bot(self, e: BotHitBotEvent) -> None:
        self.interrupt(self._point_blank(e.x, e.y), PRIORITY_HIT_BOT)

    def _point_blank(self, x: float, y: float) -> Script:
        yield from self.turn_gun_left(self.gun_bearing_to(x, y))
        yield from self.fire(3)
