"""Walls: drives clockwise along the walls with its gun pointing into the arena; fires 2 at what it sees."""

from __future__ import annotations

from sacbot.opponents.base import ClassicBot
from sacbot.opponents.dispatch import PRIORITY_HIT_BOT, Script
from sacbot.protocol import BotHitBotEvent, ScannedBotEvent


class Walls(ClassicBot):
    name = "Walls"
    colors = {
        "body_color": "#000000",
        "turret_color": "#000000",
        "radar_color": "#FF9900",
        "scan_color": "#00FFFF",
    }

    def on_new_round(self) -> None:
        self.peek = False  # rescan while driving, so a bot ahead is seen again before the next wall

    def run(self) -> Script:
        move_amount = max(self.arena_width, self.arena_height)
        yield from self.turn_right(self.direction % 90)  # square up with the walls
        yield from self.forward(move_amount)
        self.peek = True
        yield from self.turn_gun_right(90)  # gun to the right of the body: into the arena from now on
        yield from self.turn_right(90)
        while True:
            self.peek = True
            yield from self.forward(move_amount)
            self.peek = False
            yield from self.turn_right(90)

    def on_hit_bot(self, e: BotHitBotEvent) -> None:
        bearing = self.bearing_to(e.x, e.y)
        # Back off from a bot in front, move on away from one behind.
        self.interrupt(self.back(100) if -90 < bearing < 90 else self.forward(100), PRIORITY_HIT_BOT)

    def on_scanned_bot(self, e: ScannedBotEvent) -> None:
        self.set_fire(2)
        if self.peek:
            self.set_rescan()
