"""The liveness rule (pure): round events and the bot's round counter must each advance within a timeout.

Round events come from the server (a stalled game or server stops them); the round counter is written by the
bot at every round end (a hung or frozen bot stops it while the server keeps playing its last intent). Either
one standing still for longer than the timeout means the chunk is hung. Times are monotonic seconds from the
caller.
"""

from __future__ import annotations


class LivenessWatch:
    def __init__(self, timeout_s: float, now: float, counter_baseline: int | None = None) -> None:
        """`counter_baseline`: the counter as it stood before the bot started (None: do not watch it)."""
        self.timeout_s = timeout_s
        self.watch_counter = counter_baseline is not None
        self._rounds_seen = -1
        self._rounds_at = now
        self._counter = counter_baseline
        self._counter_at = now

    def round_event(self, round_number: int, ended: bool, now: float) -> None:
        """A RoundStarted (`ended` False) or RoundEnded event; only a step forward counts as progress."""
        step = 2 * round_number + int(ended)
        if step > self._rounds_seen:
            self._rounds_seen = step
            self._rounds_at = now

    def any_event(self, now: float) -> None:
        """Progress that resets the round timer without a new round (e.g. the game started)."""
        self._rounds_at = now

    def counter(self, rounds: int | None, now: float) -> None:
        """The bot's round counter as read from its file (None: unreadable or absent, no news)."""
        if rounds is not None and rounds != self._counter:
            self._counter = rounds
            self._counter_at = now

    def hung(self, now: float) -> str | None:
        """Why the chunk counts as hung, or None while it is alive."""
        if now - self._rounds_at > self.timeout_s:
            return f"no round event for {now - self._rounds_at:.0f} s"
        if self.watch_counter and now - self._counter_at > self.timeout_s:
            return f"the bot's round counter did not advance for {now - self._counter_at:.0f} s"
        return None
