"""TrackFire: stands still; its gun searches, then follows the scanned bot and fires when nearly on it."""

from __future__ import annotations

from sacbot.opponents.base import ClassicBot
from sacbot.opponents.dispatch import PRIORITY_SCANNED_BOT, PRIORITY_WON_ROUND, Script
from sacbot.protocol import ScannedBotEvent, WonRoundEvent


class TrackFire(ClassicBot):
    name = "TrackFire"
    colors = {
        "body_color": "#FFFFFF",
        "turret_color": "#FFFFFF",
        "radar_color": "#FFFFFF",
        "gun_color": "#FFFFFF",
    }

    def run(self) -> Script:
        while True:
            yield from self.turn_gun_right(10)

    def on_scanned_bot(self, e: ScannedBotEvent) -> None:
        self.interrupt(self._track(e.x, e.y), PRIORITY_SCANNED_BOT)

    def _track(self, x: float, y: float) -> Script:
        bearing = self.gun_bearing_to(x, y)
        yield from self.turn_gun_left(bearing)
        if abs(bearing) <= 3 and self.gun_heat == 0.0:
            yield from self.fire(min(3 - abs(bearing), self.energy - 0.1))
        if abs(bearing) < 1e-6:
            yield from self.rescan()  # a gun that does not move does not scan

    def on_won_round(self, e: WonRoundEvent) -> None:
        self.interrupt(self.turn_left(36_000), PRIORITY_WON_ROUND)
