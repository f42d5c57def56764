"""In-process battles: policies play inside the engine, with the arena's message order and no sockets.

The arena sends a bot GameStartedEventForBot, then per round RoundStartedEvent, a TickEventForBot per turn
(answered by one intent that applies to the next turn; nobody acts in turn 1), RoundEndedEventForBot and
finally GameEndedEventForBot. `LocalBattle` does the same with direct calls, so a policy behaves here as it
does over WebSocket, only much faster. Tests and benchmarks use it; `on_turn` lets them watch the live
engine state.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from sacbot.engine import Game, Participant
from sacbot.protocol import (
    BotIntent,
    GameEndedEventForBot,
    GameSetup,
    GameStartedEventForBot,
    ResultsForObserver,
    RoundEndedEventForBot,
    RoundStartedEvent,
    TickEventForBot,
)


class Policy(Protocol):
    """The part of the client's `BotPolicy` contract a local battle uses."""

    def on_game_started(self, event: GameStartedEventForBot) -> None: ...
    def on_round_started(self, event: RoundStartedEvent) -> None: ...
    def on_tick(self, tick: TickEventForBot) -> BotIntent: ...
    def on_round_ended(self, event: RoundEndedEventForBot) -> None: ...
    def on_game_ended(self, event: GameEndedEventForBot) -> None: ...


class LocalBattle:
    """A game between policies keyed by bot id (1..N), names taken from `policy.name` when present."""

    def __init__(self, setup: GameSetup, policies: Mapping[int, Policy], seed: int = 0) -> None:
        self.policies = dict(policies)
        participants = [
            Participant(bot_id, str(getattr(policy, "name", f"Bot{bot_id}")))
            for bot_id, policy in sorted(self.policies.items())
        ]
        self.game = Game(setup, participants, seed=seed)
        self._started = False

    def play_round(self, on_turn: Callable[[Game], Any] | None = None, max_turns: int | None = None) -> bool:
        """Play the next round; returns False when `max_turns` cut it short (it is then abandoned).

        `on_turn(game)` runs after every turn; returning True from it also ends the round early.
        """
        game = self.game
        if not self._started:
            self._started = True
            for bot_id, policy in self.policies.items():
                policy.on_game_started(game.game_started_for_bot(bot_id))
        round_number = game.start_round()
        for policy in self.policies.values():
            policy.on_round_started(RoundStartedEvent(round_number=round_number))
        game.turn({})  # turn 1: intents are not read yet
        while True:
            if on_turn is not None and on_turn(game):
                return False
            alive = set(game.alive_ids)
            intents = {}
            for bot_id in game.tick_bot_ids():
                intent = self.policies[bot_id].on_tick(game.tick_for_bot(bot_id))
                if bot_id in alive:
                    intents[bot_id] = intent
            if game.round_over:
                break
            if max_turns is not None and game.turn_number >= max_turns:
                return False
            game.turn(intents)
        for bot_id, policy in self.policies.items():
            policy.on_round_ended(game.round_ended_for_bot(bot_id))
        if game.game_over:
            for bot_id, policy in self.policies.items():
                policy.on_game_ended(game.game_ended_for_bot(bot_id))
        return True

    def play(self, max_turns_per_round: int | None = None) -> list[ResultsForObserver]:
        """Play every round to the end; the accumulated results."""
        while not self.game.game_over:
            if not self.play_round(max_turns=max_turns_per_round):
                break
        return self.game.results_for_observer()
