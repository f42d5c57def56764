"""VelociBot: drives by setting rates directly (no blocking moves): forward 4, back 6, gun always turning."""

from __future__ import annotations

from sacbot.opponents.base import ClassicBot
from sacbot.opponents.dispatch import Script
from sacbot.protocol import BotHitWallEvent, BulletHitBotEvent, ScannedBotEvent


class VelociBot(ClassicBot):
    name = "VelociBot"
    colors = {
        "body_color": "#FFFFFF",
        "turret_color": "#FF0000",
        "radar_color": "#FF0000",
        "gun_color": "#FF0000",
    }

    def on_new_round(self) -> None:
        self.turn_counter = 0

    def run(self) -> Script:
        self.set_gun_turn_rate(15)
        while True:
            if self.turn_counter % 64 == 0:
                self.set_turn_rate(0)  # straighten out if it was hit
                self.set_target_speed(4)
            if self.turn_counter % 64 == 32:
                self.set_target_speed(-6)
            self.turn_counter += 1
            yield

    def on_scanned_bot(self, e: ScannedBotEvent) -> None:
        self.set_fire(1)

    def on_hit_by_bullet(self, e: BulletHitBotEvent) -> None:
        self.set_turn_rate(5)

    def on_hit_wall(self, e: BotHitWallEvent) -> None:
        self.set_target_speed(-self.motion.target_speed)
