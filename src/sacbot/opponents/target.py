"""Target: a sitting duck that never fires; each time its energy falls 20 lower it moves 100 units away."""

from __future__ import annotations

from sacbot.opponents.base import ClassicBot
from sacbot.opponents.dispatch import PRIORITY_CUSTOM, Script


class Target(ClassicBot):
    name = "Target"
    colors = {"body_color": "#FFFFFF", "turret_color": "#FFFFFF", "radar_color": "#FFFFFF"}
    has_custom_events = True

    def on_new_round(self) -> None:
        self.trigger = 80.0

    def custom_events(self) -> None:
        if self.energy <= self.trigger:
            self.trigger -= 20
            self.interrupt(self._move_away(), PRIORITY_CUSTOM)

    def _move_away(self) -> Script:
        yield from self.turn_left(65)
        yield from self.forward(100)
