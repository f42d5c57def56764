"""SpinBot: circles at speed 5 turning right all the time; fires 3 at whatever it sees."""

from __future__ import annotations

from sacbot.opponents.base import ClassicBot
from sacbot.opponents.dispatch import PRIORITY_HIT_BOT, Script
from sacbot.protocol import BotHitBotEvent, ScannedBotEvent


class SpinBot(ClassicBot):
    name = "SpinBot"
    colors = {
        "body_color": "#0000FF",
        "turret_color": "#0000FF",
        "radar_color": "#000000",
        "scan_color": "#FFFF00",
    }

    def run(self) -> Script:
        while True:
            self.set_turn_right(10_000)
            self.set_max_speed(5)
            yield from self.forward(10_000)

    def on_scanned_bot(self, e: ScannedBotEvent) -> None:
        self.set_fire(3)

    def on_hit_bot(self, e: BotHitBotEvent) -> None:
        if abs(self.bearing_to(e.x, e.y)) < 10:
            self.set_fire(3)
        if e.rammed:
            self.interrupt(self.turn_right(10), PRIORITY_HIT_BOT)
