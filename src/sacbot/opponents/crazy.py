"""Crazy: drives flat out on a wavy path (turns of 90, 180, 180 degrees), reversing on walls and rams."""

from __future__ import annotations

from sacbot.opponents.base import ClassicBot
from sacbot.opponents.dispatch import Script
from sacbot.protocol import BotHitBotEvent, BotHitWallEvent, ScannedBotEvent


class Crazy(ClassicBot):
    name = "Crazy"
    colors = {
        "body_color": "#00C800",
        "turret_color": "#009632",
        "radar_color": "#006464",
        "gun_color": "#009632",
    }

    def on_new_round(self) -> None:
        self.moving_forward = True

    def run(self) -> Script:
        while True:
            self.set_forward(40_000)
            self.moving_forward = True
            for degrees in (-90.0, 180.0, -180.0):  # right 90, left 180, right 180
                self.set_turn_left(degrees)
                yield from self.wait_for(lambda: self.motion.turn_done)

    def reverse_direction(self) -> None:
        if self.moving_forward:
            self.set_back(40_000)
            self.moving_forward = False
        else:
            self.set_forward(40_000)
            self.moving_forward = True

    def on_hit_wall(self, e: BotHitWallEvent) -> None:
        self.reverse_direction()

    def on_hit_bot(self, e: BotHitBotEvent) -> None:
        if e.rammed:
            self.reverse_direction()

    def on_scanned_bot(self, e: ScannedBotEvent) -> None:
        self.set_fire(1)
