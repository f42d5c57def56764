"""RamFire: spins until it sees a bot, then drives into it, firing on contact by the victim's energy."""

from __future__ import annotations

from sacbot.opponents.base import ClassicBot
from sacbot.opponents.dispatch import PRIORITY_HIT_BOT, PRIORITY_SCANNED_BOT, Script
from sacbot.protocol import BotHitBotEvent, ScannedBotEvent


class RamFire(ClassicBot):
    name = "RamFire"
    colors = {
        "body_color": "#999999",
        "turret_color": "#888888",
        "radar_color": "#666666",
        "gun_color": "#888888",
    }

    def on_new_round(self) -> None:
        self.turn_direction = 1.0

    def run(self) -> Script:
        while True:
            yield from self.turn_left(5 * self.turn_direction)

    def turn_to_face(self, x: float, y: float) -> Script:
        bearing = self.bearing_to(x, y)
        self.turn_direction = 1.0 if bearing >= 0 else -1.0
        yield from self.turn_left(bearing)

    def on_scanned_bot(self, e: ScannedBotEvent) -> None:
        self.interrupt(self._charge(e.x, e.y), PRIORITY_SCANNED_BOT)

    def _charge(self, x: float, y: float) -> Script:
        yield from self.turn_to_face(x, y)
        yield from self.forward(self.distance_to(x, y) + 5)
        yield from self.rescan()

    def on_hit_bot(self, e: BotHitBotEvent) -> None:
        self.interrupt(self._ram(e.x, e.y, e.energy), PRIORITY_HIT_BOT)

    def _ram(self, x: float, y: float, victim_energy: float) -> Script:
        yield from self.turn_to_face(x, y)
        # Just enough to finish it off without wasting energy on a weak victim.
        power = next(
            (
                p
                for limit, p in ((16, 3.0), (10, 2.0), (4, 1.0), (2, 0.5), (0.4, 0.1))
                if victim_energy > limit
            ),
            0.0,
        )
        if power:
            yield from self.fire(power)
        yield from self.forward(40)  # ram it again
