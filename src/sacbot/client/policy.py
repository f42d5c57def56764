"""What a bot is to the client: a policy object the session calls for each game event."""

from __future__ import annotations

from typing import Protocol

from sacbot.protocol import (
    BotIntent,
    GameEndedEventForBot,
    GameStartedEventForBot,
    RoundEndedEventForBot,
    RoundStartedEvent,
    TickEventForBot,
)


class BotPolicy(Protocol):
    """A bot. `on_tick` runs on the realtime path: it must return quickly (the turn budget is 30 ms).

    Optional extras the session calls when present: `on_skipped_turn(SkippedTurnEvent)`, `on_game_aborted()`.
    """

    def on_game_started(self, event: GameStartedEventForBot) -> None: ...

    def on_round_started(self, event: RoundStartedEvent) -> None: ...

    def on_tick(self, tick: TickEventForBot) -> BotIntent: ...

    def on_round_ended(self, event: RoundEndedEventForBot) -> None: ...

    def on_game_ended(self, event: GameEndedEventForBot) -> None: ...
