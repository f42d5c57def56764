"""`EventDispatch`: the official libraries' event loop for classic bots, the base of `ClassicBot`.

It owns the default event priorities, the handler hooks a classic bot overrides (`run`, `on_scanned_bot`,
...), and the stack of running scripts: `run()` at the bottom, on top of it the blocking moves a handler
started with `interrupt(script, priority)`. Each turn the topmost script runs to its next `yield`; an event
whose priority does not exceed that of the busy handler is held back for the turn (and expires with it), as
the official libraries do while a handler blocks. The bot's state, commands and intent live in `ClassicBot`.

Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from typing import Any

from mypy_extensions import mypyc_attr

from sacbot.protocol import (
    BotDeathEvent,
    BotHitBotEvent,
    BotHitWallEvent,
    BulletHitBotEvent,
    Event,
    ScannedBotEvent,
    WonRoundEvent,
)

Script = Generator[None, None, None]

# Official default event priorities (REFERENCE.md section 12), highest first.
PRIORITY_WON_ROUND = 150
PRIORITY_CUSTOM = 120
PRIORITY_DEATH_OF_OTHER = 100
PRIORITY_BULLET_HIT = 70
PRIORITY_HIT_BY_BULLET = 50
PRIORITY_HIT_WALL = 40
PRIORITY_HIT_BOT = 30
PRIORITY_SCANNED_BOT = 20
PRIORITY_DEATH = 10
NO_HANDLER = -1  # the run() script: every event may interrupt it


# Compiled (`sacbot.compiled`), yet open to subclasses written in plain Python, like `ClassicBot` itself.
@mypyc_attr(allow_interpreted_subclasses=True)
class EventDispatch:
    """Routes a turn's events to the `on_*` handlers by priority and runs the script stack one turn a tick."""

    my_id: int
    _pending: list[Event]
    # Running scripts, run() at the bottom: (script, priority of the event that started it, replaceable).
    _scripts: list[tuple[Iterator[None], int, bool]]
    _run_started: bool

    # -- what subclasses write ------------------------------------------------------------------------

    def run(self) -> Script:
        """The main loop; the default stands still forever."""
        while True:
            yield

    def on_scanned_bot(self, e: ScannedBotEvent) -> None: ...
    def on_hit_by_bullet(self, e: BulletHitBotEvent) -> None: ...
    def on_bullet_hit(self, e: BulletHitBotEvent) -> None: ...
    def on_hit_wall(self, e: BotHitWallEvent) -> None: ...
    def on_hit_bot(self, e: BotHitBotEvent) -> None: ...
    def on_won_round(self, e: WonRoundEvent) -> None: ...
    def on_death(self, e: BotDeathEvent) -> None: ...
    def on_bot_death(self, e: BotDeathEvent) -> None: ...

    def custom_events(self) -> None:
        """Checked every turn after the wire events (the samples' custom conditions, priority 120)."""

    # -- the script stack -----------------------------------------------------------------------------------

    def interrupt(self, script: Script, priority: int) -> None:
        """Run `script` (a handler's blocking moves) on top of whatever runs now."""
        self._scripts.append((script, priority, False))

    def _priority(self) -> int:
        return self._scripts[-1][1] if self._scripts else NO_HANDLER

    def _may_handle(self, priority: int) -> bool:
        if not self._scripts:
            return True
        _, top, replaceable = self._scripts[-1]
        if priority > top:
            return True
        if priority == top and replaceable:
            self._scripts.pop()  # the handler asked to be restarted by a fresh event (official rescan())
            return True
        return False

    def _advance(self) -> None:
        """Run the topmost script up to its next `yield` (one turn); finished handler scripts give way."""
        if not self._run_started:
            self._run_started = True
            self._scripts.insert(0, (self.run(), NO_HANDLER, False))
        while self._scripts:
            script = self._scripts[-1][0]
            try:
                next(script)
                return
            except StopIteration:
                self._scripts.pop()
                if not self._scripts:  # run() ended: stand still from now on
                    self._scripts.append((_idle(), NO_HANDLER, False))
                if self._pending:
                    self._retry_pending()

    # -- events ---------------------------------------------------------------------------------------------

    def _offer(self, e: Event) -> None:
        """Handle `e` now if no handler of its priority or above is busy; else keep it for this turn."""
        if self._may_handle(self._event_priority(e)):
            self._handle(e)
        else:
            self._pending.append(e)

    def _retry_pending(self) -> None:
        """A handler script finished this turn: this turn's events it held back get their turn now."""
        pending, self._pending = self._pending, []
        for e in pending:
            self._offer(e)

    def _handle(self, e: Event) -> None:
        if isinstance(e, ScannedBotEvent):
            if e.scanned_by_bot_id == self.my_id or not self.my_id:
                self.on_scanned_bot(e)
        elif isinstance(e, BulletHitBotEvent):
            if e.victim_id == self.my_id:
                self.on_hit_by_bullet(e)
            elif e.bullet.owner_id == self.my_id:
                self.on_bullet_hit(e)
        elif isinstance(e, BotHitWallEvent):
            self.on_hit_wall(e)
        elif isinstance(e, BotHitBotEvent):
            self.on_hit_bot(e)
        elif isinstance(e, WonRoundEvent):
            self.on_won_round(e)
        elif isinstance(e, BotDeathEvent):
            if e.victim_id == self.my_id:
                self.on_death(e)
            else:
                self.on_bot_death(e)

    def _event_priority(self, e: Any) -> int:
        kind = e.type
        if kind == "BulletHitBotEvent" and e.victim_id == self.my_id:
            return PRIORITY_HIT_BY_BULLET  # the API's HitByBulletEvent
        if kind == "BotDeathEvent" and e.victim_id == self.my_id:
            return PRIORITY_DEATH  # the API's DeathEvent
        return _PRIORITIES.get(kind, 0)


def _idle() -> Iterator[None]:
    while True:
        yield


_PRIORITIES: dict[str, int] = {
    "WonRoundEvent": PRIORITY_WON_ROUND,
    "BotDeathEvent": PRIORITY_DEATH_OF_OTHER,
    "BulletHitWallEvent": 90,
    "BulletHitBulletEvent": 80,
    "BulletHitBotEvent": PRIORITY_BULLET_HIT,
    "BulletFiredEvent": 60,
    "BotHitWallEvent": PRIORITY_HIT_WALL,
    "BotHitBotEvent": PRIORITY_HIT_BOT,
    "ScannedBotEvent": PRIORITY_SCANNED_BOT,
}
