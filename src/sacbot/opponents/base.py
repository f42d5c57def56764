"""`ClassicBot`: the machinery a classic sample behaviour is written on, as a per-tick policy.

A classic bot is written the way the official samples are: a `run()` script with blocking moves (`yield from
self.forward(100)`) plus event handlers (`on_scanned_bot`, `on_hit_wall`, ...). Here `run()` is a generator:
each `yield` is one turn (the official `go()`). A handler that needs blocking moves starts them with
`self.interrupt(generator, priority)`; that script runs on top of `run()` until it finishes, and events of the
same or lower priority are dropped meanwhile (the official libraries do not dispatch them while a handler
blocks, and let them expire); that event loop is `EventDispatch` (`sacbot.opponents.dispatch`). This module
owns the rest: the bot's state, the official API's commands and blocking moves, and `on_tick`, which turns the
whole state into one complete `BotIntent` per turn, so the same object serves the socket client (the
`BotPolicy` contract) and in-process engine games.

Pure: no I/O, no clock; randomness comes from a `random.Random` seeded at construction.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import ClassVar

from mypy_extensions import mypyc_attr

from sacbot.opponents.dispatch import PRIORITY_CUSTOM, EventDispatch, Script
from sacbot.opponents.motion import Motion, direction_to, normalize_relative
from sacbot.protocol import (
    BotIntent,
    Event,
    GameEndedEventForBot,
    GameStartedEventForBot,
    RoundEndedEventForBot,
    RoundStartedEvent,
    SkippedTurnEvent,
    TickEventForBot,
)


# Compiled (`sacbot.compiled`), yet open to subclasses written in plain Python: your own opponents, tests.
@mypyc_attr(allow_interpreted_subclasses=True)
class ClassicBot(EventDispatch):
    """Base class of the classic opponents; subclasses override `run` and the `on_*` handlers they need."""

    # Class-level (ClassVar): read from the class itself, e.g. `opponent_class(name).name`.
    name: ClassVar[str] = "ClassicBot"
    # Sent once per round, like the samples' `set_*_color` calls at the top of run().
    colors: ClassVar[dict[str, str]] = {}
    # True in the subclasses that override `custom_events` (a flag, not a method identity test: that one
    # does not hold for compiled classes).
    has_custom_events: ClassVar[bool] = False

    round_number: int
    turn_number: int
    won_this_round: bool
    _round_over_told: bool
    _colors_sent: bool
    _saved: tuple[float | None, float | None, float | None, float | None] | None

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)
        self.my_id = 0
        self.arena_width = 800.0
        self.arena_height = 600.0
        self.motion = Motion()
        self._pending = []
        self._scripts = []
        self._new_round()

    # -- BotPolicy ------------------------------------------------------------------------------------------

    def on_game_started(self, event: GameStartedEventForBot) -> None:
        self.my_id = event.my_id
        self.arena_width = float(event.game_setup.arena_width)
        self.arena_height = float(event.game_setup.arena_height)
        self._new_round()  # a policy object may play several games

    def on_round_started(self, event: RoundStartedEvent) -> None:
        # Not when the round's first tick overtook this event (REFERENCE.md section 14): that tick started it.
        if event.round_number != self.round_number or self._round_over_told:
            self._new_round()

    def on_round_ended(self, event: RoundEndedEventForBot) -> None:
        if not self._round_over_told:
            self._round_over_told = True
            self.on_round_over(self.won_this_round)

    def on_game_ended(self, event: GameEndedEventForBot) -> None:
        pass

    def on_skipped_turn(self, event: SkippedTurnEvent) -> None:
        pass

    def on_game_aborted(self) -> None:
        pass

    def on_tick(self, tick: TickEventForBot) -> BotIntent:
        self.take_state(tick)
        s = tick.bot_state
        self.motion.observe(s.x, s.y, s.direction, s.gun_direction, s.radar_direction, s.speed)
        if self.energy == 0.0:
            self.motion.clear_remaining()  # disabled: the official libraries drop every blocking move
        if self._pending:
            self._pending = []  # held-back events expire with their turn
        if tick.events:
            self._dispatch(tick.events)
        if self.has_custom_events and self._priority() < PRIORITY_CUSTOM:
            self.custom_events()
        self._advance()
        return self._intent()

    def take_state(self, tick: TickEventForBot) -> None:
        """A new round if the tick says so, then the bot's own state fields from the tick (every turn)."""
        if tick.round_number != self.round_number:
            if self.round_number:  # a RoundStartedEvent that never came (or came late)
                self._new_round()
            self.round_number = tick.round_number
        s = tick.bot_state
        self.x, self.y, self.energy, self.speed = s.x, s.y, s.energy, s.speed
        self.direction, self.gun_direction, self.radar_direction = (
            s.direction,
            s.gun_direction,
            s.radar_direction,
        )
        self.gun_heat, self.enemy_count, self.turn_number = s.gun_heat, s.enemy_count, tick.turn_number

    def with_colors(self, intent: BotIntent) -> BotIntent:
        """`intent` with the bot's colours if it is the round's first (the samples set them once a round)."""
        if not self._colors_sent:
            self._colors_sent = True
            for key, value in self.colors.items():
                setattr(intent, key, value)
        return intent

    # -- what subclasses write (besides `run` and the `EventDispatch` handlers) ----------------------------

    def on_round_over(self, won: bool) -> None:
        """Once per round, at its end (learning across rounds, like Corners' corner switch)."""

    # -- the official API's vocabulary, per tick ------------------------------------------------------------

    def set_forward(self, distance: float) -> None:
        self.motion.distance = distance

    def set_back(self, distance: float) -> None:
        self.motion.distance = -distance

    def set_turn_left(self, degrees: float) -> None:
        self.motion.turn = degrees

    def set_turn_right(self, degrees: float) -> None:
        self.motion.turn = -degrees

    def set_turn_gun_left(self, degrees: float) -> None:
        self.motion.gun_turn = degrees

    def set_turn_gun_right(self, degrees: float) -> None:
        self.motion.gun_turn = -degrees

    def set_target_speed(self, speed: float) -> None:
        self.motion.distance = None
        self.motion.target_speed = speed

    def set_turn_rate(self, rate: float) -> None:
        self.motion.turn = None
        self.motion.turn_rate = rate

    def set_gun_turn_rate(self, rate: float) -> None:
        self.motion.gun_turn = None
        self.motion.gun_turn_rate = rate

    def set_max_speed(self, speed: float) -> None:
        self.motion.max_speed = max(0.0, min(8.0, speed))

    def set_fire(self, firepower: float) -> bool:
        """Ask to fire this turn (kept until the shot is confirmed); refused while hot or short of energy."""
        if self.energy < firepower or self.gun_heat > 0.0:
            return False
        self._firepower = firepower
        return True

    def set_rescan(self) -> None:
        self._rescan = True

    def forward(self, distance: float) -> Script:
        self.set_forward(distance)
        yield from self.wait_for(lambda: self.motion.move_done)

    def back(self, distance: float) -> Script:
        yield from self.forward(-distance)

    def turn_left(self, degrees: float) -> Script:
        self.set_turn_left(degrees)
        yield from self.wait_for(lambda: self.motion.turn_done)

    def turn_right(self, degrees: float) -> Script:
        yield from self.turn_left(-degrees)

    def turn_gun_left(self, degrees: float) -> Script:
        self.set_turn_gun_left(degrees)
        yield from self.wait_for(lambda: self.motion.gun_turn_done)

    def turn_gun_right(self, degrees: float) -> Script:
        yield from self.turn_gun_left(-degrees)

    def fire(self, firepower: float) -> Script:
        self.set_fire(firepower)
        yield

    def rescan(self) -> Script:
        """Scan again now; a handler that does this gets replaced by the next event of its own kind."""
        self.set_rescan()
        if self._scripts:
            script, priority, _ = self._scripts[-1]
            self._scripts[-1] = (script, priority, True)
        yield

    def stop(self) -> Script:
        """Brake to a standstill, keeping the interrupted moves for `resume()` (a 2nd stop keeps the 1st)."""
        if self._saved is None:
            self._saved = self.motion.save()
        self.motion.distance = self.motion.turn = self.motion.gun_turn = self.motion.radar_turn = 0.0
        yield from self.wait_for(lambda: self.speed == 0.0)

    def resume(self) -> None:
        if self._saved is not None:
            self.motion.restore(self._saved)
            self._saved = None

    def wait_for(self, condition: Callable[[], bool]) -> Script:
        yield
        while not condition():
            yield

    # -- geometry helpers -----------------------------------------------------------------------------------

    def direction_to(self, x: float, y: float) -> float:
        return direction_to(self.x, self.y, x, y)

    def bearing_to(self, x: float, y: float) -> float:
        """Body-relative angle to a point, in [-180, 180); positive is to the left."""
        return normalize_relative(self.direction_to(x, y) - self.direction)

    def gun_bearing_to(self, x: float, y: float) -> float:
        return normalize_relative(self.direction_to(x, y) - self.gun_direction)

    def distance_to(self, x: float, y: float) -> float:
        return math.hypot(x - self.x, y - self.y)

    def calc_bearing(self, direction: float) -> float:
        return normalize_relative(direction - self.direction)

    # -- internals ------------------------------------------------------------------------------------------

    def _new_round(self) -> None:
        self.round_number = 0
        self.turn_number = 0
        self.x = self.y = self.direction = self.gun_direction = self.radar_direction = 0.0
        self.speed = self.gun_heat = 0.0
        self.energy = 100.0
        self.enemy_count = 0
        self.won_this_round = False
        self._round_over_told = False
        self.motion.reset()
        self._firepower = 0.0
        self._rescan = False
        self._colors_sent = False
        self._saved = None
        self._scripts = []
        self._run_started = False
        self.on_new_round()

    def on_new_round(self) -> None:
        """Reset per-round fields of a subclass."""

    def _dispatch(self, events: list[Event]) -> None:
        ordered = sorted(events, key=self._event_priority, reverse=True) if len(events) > 1 else events
        for e in ordered:
            kind = e.type
            # The library's own bookkeeping runs whatever the bot's handlers are doing.
            if kind == "BulletFiredEvent":
                self._firepower = 0.0
                continue
            if kind == "BotHitWallEvent":
                self.motion.distance = 0.0 if self.motion.distance is not None else None
            elif kind == "BotHitBotEvent" and e.rammed:  # type: ignore[attr-defined]
                self.motion.distance = 0.0 if self.motion.distance is not None else None
            elif kind == "WonRoundEvent":
                self.won_this_round = True
            self._offer(e)

    def _intent(self) -> BotIntent:
        m = self.motion
        intent = BotIntent(
            turn_rate=m.turn_rate if m.turn is None else m.next_turn_rate(),
            gun_turn_rate=m.gun_turn_rate if m.gun_turn is None else m.next_gun_turn_rate(),
            radar_turn_rate=m.radar_turn_rate if m.radar_turn is None else m.next_radar_turn_rate(),
            target_speed=m.next_target_speed(),
            firepower=self._firepower,
            adjust_gun_for_body_turn=False,
            adjust_radar_for_body_turn=False,
            adjust_radar_for_gun_turn=False,
            rescan=self._rescan,
            fire_assist=True,
        )
        self._rescan = False
        return self.with_colors(intent)
