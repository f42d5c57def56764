"""One game: rounds of turns through the server's pipeline (`ModelUpdater`, `TurnProcessor.processTurn`).

Pipeline of `Game.turn`: take intents -> snapshot -> guns -> move and turn -> bot-wall -> bot-bot -> constrain
-> scans -> bullets advance -> bullet-wall -> bullet-bullet and bullet-bot -> inactivity -> disabled bots ->
deaths -> round end. See the package docstring for the public API.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from sacbot.engine import events as ev
from sacbot.engine import views
from sacbot.engine.bullets import advance, remove_wall_hits
from sacbot.engine.collisions import bot_bot_collisions, bot_wall_collisions, bullet_hits
from sacbot.engine.guns import cool_and_fire
from sacbot.engine.intents import to_persistent
from sacbot.engine.movement import constrain_all, execute_intents
from sacbot.engine.placement import place_bots
from sacbot.engine.rules import INACTIVITY_DAMAGE
from sacbot.engine.scans import scan_all
from sacbot.engine.scoring import RoundScoreTracker, Score
from sacbot.engine.setup import validate_setup
from sacbot.engine.state import Bot, Bullet, Participant
from sacbot.errors import UserError
from sacbot.protocol import (
    GameEndedEventForBot,
    GameEndedEventForObserver,
    GameStartedEventForBot,
    ResultsForBot,
    ResultsForObserver,
    RoundEndedEventForBot,
    RoundEndedEventForObserver,
    RoundStartedEvent,
    TickEventForBot,
    TickEventForObserver,
)


def _as_participant(item: Any) -> Participant:
    if isinstance(item, Participant):
        return item
    bot_id, name = item
    return Participant(int(bot_id), str(name))


class Game:
    """A game between participants under one GameSetup; deterministic for a seed."""

    def __init__(
        self,
        setup: Any,
        participants: Sequence[Participant | tuple[int, str]],
        seed: int = 0,
        use_initial_positions: bool = False,
    ) -> None:
        parts = sorted((_as_participant(p) for p in participants), key=lambda p: p.id)
        ids = [p.id for p in parts]
        if len(set(ids)) != len(ids) or any(i < 1 for i in ids):
            raise UserError(f"bot ids must be unique positive integers (got {ids})", 2)
        validate_setup(setup, len(parts))
        self.setup = setup
        self.participants: list[Participant] = parts
        self.bot_ids: list[int] = ids
        self._participant = {p.id: p for p in parts}
        self._teammates = {
            p.id: tuple(
                q.id for q in parts if p.team_id is not None and q.team_id == p.team_id and q.id != p.id
            )
            for p in parts
        }
        self._has_teams = any(p.team_id is not None for p in parts)
        self._width = float(setup.arena_width)
        self._height = float(setup.arena_height)
        self._cooling = float(setup.gun_cooling_rate)
        self._max_inactivity = int(setup.max_inactivity_turns)
        self._use_initial_positions = use_initial_positions
        self._place_rng = random.Random(f"sacbot-placement:{seed}")
        self._turn_rng = random.Random(f"sacbot-turns:{seed}")

        self.round_number = 0
        self.turn_number = 0
        self.round_over = False
        self.game_over = False
        self._running = False
        self.winner_ids: list[int] = []
        self._placement = place_bots(parts, setup.arena_width, setup.arena_height, self._place_rng,
                                     use_initial_positions)  # fmt: skip
        self._round_bots: dict[int, Bot] = {}
        self._bots: list[Bot] = []  # alive, in id order
        self._turn_bots: list[Bot] = []  # alive at the start of the last turn
        self.bullets: list[Bullet] = []
        self._next_bullet_id = 0
        self._inactivity = 0
        self._events = ev.TurnEvents(ids)
        self._tracker = RoundScoreTracker(ids)
        self._round_scores: list[Score] = []
        self._accumulated = {bot_id: Score(bot_id) for bot_id in ids}

    # ----------------------------------------------------------------------------------------------- rounds
    def start_round(self) -> int:
        """Start the next round (bots placed, intents/bullets/scores cleared); returns its number."""
        if self._running:
            raise RuntimeError(f"round {self.round_number} is still running")
        if self.game_over:
            raise RuntimeError("the game is over")
        self.round_number += 1
        self.turn_number = 0
        self.round_over = False
        self._running = True
        self._current_placement = self._placement
        self._round_bots = {}
        for p in self.participants:
            x, y, direction = self._placement[p.id]
            self._round_bots[p.id] = Bot(
                p.id, p.name, x, y, direction, p.team_id, p.is_droid, self._teammates[p.id]
            )
        self._bots = list(self._round_bots.values())
        self._turn_bots = list(self._bots)
        self.bullets = []
        self._next_bullet_id = 0
        self._inactivity = 0
        self._events.clear()
        self._tracker = RoundScoreTracker(self.bot_ids)
        return self.round_number

    def start_position(self, bot_id: int) -> tuple[float, float, float]:
        """(x, y, direction) where the bot starts the current round (between rounds: the next round)."""
        placement = self._current_placement if self._running else self._placement
        return placement[bot_id]

    # ------------------------------------------------------------------------------------------------ turns
    def turn(self, intents: Mapping[int, Any]) -> None:
        """Process one turn; `intents` holds the bots whose intent arrived for it (see the package docs)."""
        if not self._running:
            raise RuntimeError("no round is running; call start_round() first")
        self.turn_number += 1
        turn = self.turn_number
        events = self._events
        events.clear()
        bots = self._bots
        if turn > 1:  # turn 1 runs with no intents: the server clears them when the round starts
            alive = self._round_bots
            for bot_id, message in intents.items():
                bot = alive.get(bot_id)
                if bot is not None and bot.energy >= 0:
                    bot.intent = to_persistent(message, bot.intent)
        for bot in bots:
            bot.prev_x = bot.x
            bot.prev_y = bot.y
            bot.prev_direction = bot.direction
            bot.prev_gun_direction = bot.gun_direction
            bot.prev_radar_direction = bot.radar_direction
            bot.hit_wall_last_turn = bot.hit_wall_this_turn
            bot.hit_wall_this_turn = False
            bot.scan_last_turn = bot.scan_this_turn
            bot.scan_this_turn = None
            bot.std_out = None
            bot.std_err = None
        self._turn_bots = bots  # never mutated in place: deaths below build a new list
        width = self._width
        height = self._height
        tracker = self._tracker

        bullets = self.bullets
        self._next_bullet_id = cool_and_fire(bots, self._cooling, bullets, self._next_bullet_id, events)
        execute_intents(bots, events)
        if turn > 1:
            bot_wall_collisions(bots, width, height, events)
        bot_bot_collisions(bots, turn == 1, width, height, self._turn_rng, tracker, events)
        constrain_all(bots, width, height)
        scan_all(bots, events)
        if bullets:
            advance(bullets)
            bullets = remove_wall_hits(bullets, width, height, events)
            bullets, hit_bot = bullet_hits(bullets, bots, tracker, events)
            self.bullets = bullets
            if hit_bot:
                self._inactivity = 0

        # Inactivity: the global counter, reset only by bullet hits on bots. The zap, the disabled check and
        # the death check are per bot and independent, so one loop does all three in the server's order.
        zap = self._inactivity > self._max_inactivity
        self._inactivity += 1
        dead = None
        for bot in bots:
            if zap:
                bot.energy -= INACTIVITY_DAMAGE
            energy = bot.energy
            if energy < 0:
                if dead is None:
                    dead = [bot.id]
                else:
                    dead.append(bot.id)
            elif energy < 1e-6:  # disabled: its persistent intent stops moving, turning and firing
                intent = bot.intent
                if intent is not None:
                    intent.target_speed = 0.0
                    intent.turn_rate = 0.0
                    intent.gun_turn_rate = 0.0
                    intent.radar_turn_rate = 0.0
                    intent.firepower = 0.0
        if dead is not None:
            by_bot = events.by_bot
            for victim in dead:
                event = (ev.BOT_DEATH, victim)
                # Intended behaviour: every bot alive at the start of the turn hears of it (1.1.0 sends none).
                for bot in bots:
                    by_bot[bot.id].append(event)
                events.observer.append(event)
            tracker.register_deaths(dead)
            bots = [bot for bot in bots if bot.energy >= 0]
            self._bots = bots

        if len(bots) <= 1 or self._is_round_over(bots):
            self._end_round()

    def _is_round_over(self, alive: list[Bot]) -> bool:
        if len(alive) <= 1:
            return True
        if self.bullets and not self._has_teams:
            return False
        groups = {bot.id if bot.team_id is None else -bot.team_id - 1 for bot in alive}
        if len(groups) <= 1:
            return True
        if self.bullets:
            return False
        disabled = {bot.id if bot.team_id is None else -bot.team_id - 1 for bot in alive if bot.energy < 1e-6}
        return len(disabled) == len(groups)

    def _end_round(self) -> None:
        scores = self._tracker.round_scores()
        self._round_scores = scores
        self.winner_ids = sorted(s.bot_id for s in scores if s.rank == 1)
        for bot_id in self.winner_ids:
            self._events.by_bot[bot_id].append((ev.WON_ROUND,))
        self._events.private_only = True
        for s in scores:
            self._accumulated[s.bot_id].accumulate(s)
        self._running = False
        self.round_over = True
        self.game_over = self.round_number >= self.setup.number_of_rounds
        if not self.game_over:
            self._placement = place_bots(
                self.participants,
                self.setup.arena_width,
                self.setup.arena_height,
                self._place_rng,
                self._use_initial_positions,
            )

    # -------------------------------------------------------------------------------------------- reading
    @property
    def alive_ids(self) -> list[int]:
        return [bot.id for bot in self._bots]

    def bot(self, bot_id: int) -> Bot:
        """The live state of a bot in the current (or last) round; read it, do not change it."""
        return self._round_bots[bot_id]

    def tick_bot_ids(self) -> list[int]:
        """Bots that get a tick for the last turn: those alive at its start (the dead ones get their last)."""
        return [bot.id for bot in self._turn_bots]

    def events_for(self, bot_id: int) -> list[tuple[Any, ...]]:
        """The raw engine event tuples of the last turn for one bot (see `sacbot.engine.events`)."""
        return self._events.by_bot[bot_id]

    def observer_events(self) -> list[tuple[Any, ...]]:
        """The raw engine event tuples of the last turn as observers see them."""
        return self._events.observer

    def tick_for_bot(self, bot_id: int) -> TickEventForBot:
        return views.tick_for_bot(self, self._round_bots[bot_id], self._events.by_bot[bot_id])

    def tick_for_observer(self) -> TickEventForObserver:
        return views.tick_for_observer(self, self._turn_bots, self._events.observer)

    def tick_for_bot_dict(self, bot_id: int) -> dict[str, Any]:
        """The wire dict of `tick_for_bot(bot_id)` (what `sacbot.protocol.to_dict` gives), built directly."""
        return views.tick_for_bot_dict(self, self._round_bots[bot_id], self._events.by_bot[bot_id])

    def tick_for_observer_dict(self) -> dict[str, Any]:
        """The wire dict of `tick_for_observer()`, built directly."""
        return views.tick_for_observer_dict(self, self._turn_bots, self._events.observer)

    def enemy_count(self, bot_id: int) -> int:
        mates = self._teammates[bot_id]
        alive = self._bots
        if not mates:  # every other living bot (identity test: a list of slotted objects)
            bot = self._round_bots.get(bot_id)
            return len(alive) - 1 if bot is not None and bot in alive else len(alive)
        return sum(1 for bot in alive if bot.id != bot_id and bot.id not in mates)

    def participant(self, bot_id: int) -> Participant:
        return self._participant[bot_id]

    def teammate_ids(self, bot_id: int) -> tuple[int, ...]:
        return self._teammates[bot_id]

    # -------------------------------------------------------------------------------------------- results
    def round_scores(self) -> dict[int, Score]:
        """Raw float scores of the running (or last) round so far."""
        return {bot_id: self._tracker.score(bot_id) for bot_id in self.bot_ids}

    def accumulated_scores(self) -> dict[int, Score]:
        """Raw float scores summed over the finished rounds (copies)."""
        return {bot_id: s.copy() for bot_id, s in self._accumulated.items()}

    def round_results(self) -> list[ResultsForObserver]:
        return views.observer_results(self, [s.copy() for s in self._round_scores])

    def results_for_observer(self) -> list[ResultsForObserver]:
        return views.observer_results(self, [s.copy() for s in self._accumulated.values()])

    def results_for_bot(self, bot_id: int) -> ResultsForBot:
        return views.bot_results(self._accumulated, bot_id)

    def round_started(self) -> RoundStartedEvent:
        return RoundStartedEvent(round_number=self.round_number)

    def game_started_for_bot(self, bot_id: int) -> GameStartedEventForBot:
        x, y, direction = self.start_position(bot_id)
        return GameStartedEventForBot(
            my_id=bot_id,
            game_setup=self.setup,
            start_x=x,
            start_y=y,
            start_direction=direction,
            teammate_ids=list(self._teammates[bot_id]),
        )

    def round_ended_for_bot(self, bot_id: int) -> RoundEndedEventForBot:
        return RoundEndedEventForBot(
            round_number=self.round_number, turn_number=self.turn_number, results=self.results_for_bot(bot_id)
        )

    def round_ended_for_observer(self) -> RoundEndedEventForObserver:
        return RoundEndedEventForObserver(
            round_number=self.round_number, turn_number=self.turn_number, results=self.results_for_observer()
        )

    def game_ended_for_bot(self, bot_id: int) -> GameEndedEventForBot:
        return GameEndedEventForBot(number_of_rounds=self.round_number, results=self.results_for_bot(bot_id))

    def game_ended_for_observer(self) -> GameEndedEventForObserver:
        return GameEndedEventForObserver(
            number_of_rounds=self.round_number, results=self.results_for_observer()
        )
