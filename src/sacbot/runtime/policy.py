"""Thread 1 of `sacbot play`: the realtime policy the bot client calls once per tick.

Per tick: observe, one fast actor step with the GRU hidden state, return one complete BotIntent (the client
sends it at once), then put the finished transition on the channel. The tick-to-intent time runs from
`on_tick` being called to the intent written to the socket (a callback queued on the client's event loop runs
right after the send); decoding the frame before `on_tick` is not in it. The newest published actor is taken
at a tick boundary with one reference read. No disk I/O, no autograd, no lock the trainer can hold long.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from sacbot.agent.exploration import ColouredNoise
from sacbot.agent.features import ACTION_DIM
from sacbot.agent.inference import ActionMode, drawn_entries
from sacbot.runtime.channel import DropOldestChannel
from sacbot.runtime.latency import LatencyRecorder
from sacbot.runtime.ports import TickActor
from sacbot.runtime.records import EPISODE_CUT, ChannelItem, RoundReport, Transition
from sacbot.runtime.scoring import RoundTally


class Features(Protocol):
    """The one feature code path (sacbot.agent.features) behind a small per-bot object."""

    @property
    def observed_dim(self) -> int:
        """How many leading entries of an observation the actor reads (`NetworkSizes.observed_dim`)."""
        ...

    def start_game(self, arena_width: float, arena_height: float, my_id: int) -> None: ...

    def start_round(self) -> None: ...

    def observe(self, tick: Any) -> np.ndarray: ...

    def reward(self, tick: Any) -> float: ...

    def round_end_reward(self) -> float: ...

    def to_intent(self, action: np.ndarray) -> Any: ...

    def paint(self, tick: Any, action: np.ndarray) -> str:
        """Debug graphics (an SVG) of this tick, made only while the server lets the bot debug."""
        ...


class RealtimePolicy:
    """A `sacbot.client` BotPolicy. `actor_source()` returns the newest published actor (a reference read)."""

    def __init__(
        self,
        features: Features,
        actor_source: Callable[[], TickActor],
        channel: DropOldestChannel[ChannelItem] | None,
        on_round_report: Callable[[RoundReport], None] | None,
        actions: ActionMode,
        keep_all_latencies: bool = False,
        noise: ColouredNoise | None = None,
    ) -> None:
        self.features = features
        self.actor_source = actor_source
        self.channel = channel  # None in eval mode: nothing reaches the replay
        self.on_round_report = on_round_report
        self.actor = actor_source()
        self.deterministic, self.drawn = drawn_entries(actions, ACTION_DIM)
        # Coloured exploration noise (one stream, restarted each round); None: the actor's white draws.
        self.noise = None if self.deterministic else noise
        self.hidden = self.actor.initial_hidden()
        self.my_id = 0
        self.latency = LatencyRecorder()
        self.all_latency = LatencyRecorder(1 << 15) if keep_all_latencies else None
        self.game_over = False
        self.aborted = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self.turns_total = 0
        self.skipped_total = 0
        self._prev_total_score = 0.0
        self._start_round_state()

    def _start_round_state(self) -> None:
        self.hidden = self.actor.initial_hidden()
        self._pending: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._ready: Transition | None = None
        self.reward_sum = 0.0
        self.turns = 0
        self.skipped = 0
        self.won = False
        self.tally = RoundTally()
        self.latency.reset()
        self._dropped_at_start = self.channel.dropped if self.channel is not None else 0

    # --- BotPolicy ----------------------------------------------------------------------------------------
    def on_game_started(self, event: Any) -> None:
        try:
            # The client's event loop: a callback queued on it runs once the intent is written to the socket.
            self._loop = asyncio.get_running_loop()
        except RuntimeError:
            self._loop = None  # called without an event loop (in-process battles): time on_tick alone
        setup = event.game_setup
        self.my_id = int(event.my_id)
        self.features.start_game(float(setup.arena_width), float(setup.arena_height), self.my_id)
        self._prev_total_score = 0.0

    def _cut_episode(self) -> None:
        """A round that ended without RoundEnded: keep its finished steps, close it as not terminal."""
        if self.channel is not None and (self._ready is not None or self._pending is not None):
            if self._ready is not None:
                self.channel.put(self._ready)
            self.channel.put(EPISODE_CUT)
        self._ready = None
        self._pending = None

    def on_round_started(self, event: Any) -> None:
        self._cut_episode()  # only does something if the last round never ended
        self.actor = self.actor_source()
        self.features.start_round()
        self._start_round_state()
        if self.noise is not None:
            self.noise.restart(0)

    def on_tick(self, tick: Any) -> Any:
        started = time.perf_counter_ns()
        actor = self.actor_source()  # one reference read: the newest published weights, at a tick boundary
        if actor is not self.actor:
            self.actor = actor
        obs = self.features.observe(tick)
        reward = self.features.reward(tick)
        eps = None if self.noise is None else self.noise.draw_one(0)
        state = obs[: self.features.observed_dim]  # the actor's part (the critics' own inputs may follow)
        action, new_hidden = self.actor.step(state, self.hidden, self.deterministic, self.drawn, eps)
        intent = self.features.to_intent(action)
        if tick.bot_state.is_debugging_enabled:  # the server lets this bot paint: off the path otherwise
            intent.debug_graphics = self.features.paint(tick, action)
        # The intent is ready; the rest is cheap bookkeeping done before the client sends it.
        self._bookkeeping(tick, obs, action, reward)
        self.hidden = new_hidden
        if self._loop is not None:
            self._loop.call_soon(self._record_since, started)  # runs after the client has sent the intent
        else:
            self._record_since(started)
        return intent

    def _record_since(self, started_ns: int) -> None:
        duration_ns = time.perf_counter_ns() - started_ns
        self.latency.record(duration_ns)
        if self.all_latency is not None:
            self.all_latency.record(duration_ns)

    def _bookkeeping(self, tick: Any, obs: np.ndarray, action: np.ndarray, reward: float) -> None:
        self.turns += 1
        self.turns_total += 1
        if self._pending is not None:
            # The reward seen on this tick belongs to the previous action. The finished transition waits one
            # tick, so the round's last one can still be marked done at round end.
            self.reward_sum += reward
            if self.channel is not None:
                if self._ready is not None:
                    self.channel.put(self._ready)
                prev_obs, prev_action, prev_hidden = self._pending
                self._ready = Transition(prev_obs, prev_action, reward, obs, False, prev_hidden)
        self._pending = (obs, action, self.hidden)
        my_id = self.my_id
        for event in tick.events or ():
            kind = event.type
            if kind == "BulletHitBotEvent" and event.victim_id == my_id:
                self.tally.damage_taken += float(event.damage)
            elif kind == "BotHitBotEvent" and event.bot_id == my_id and not event.rammed:
                self.tally.rammed_turns += 1
            elif kind == "BotDeathEvent" and event.victim_id == my_id:
                self.tally.died = True
            elif kind == "WonRoundEvent":
                self.won = True
        if tick.bot_state.energy <= 0 and not self.won:
            self.tally.died = True

    def on_skipped_turn(self, event: Any) -> None:
        self.skipped += 1
        self.skipped_total += 1

    def on_round_ended(self, event: Any) -> None:
        final_reward = self.features.round_end_reward()  # a loss no event told us about
        self.reward_sum += final_reward
        if self._ready is not None and self.channel is not None:
            # The round's last finished step ends the episode; the last tick's action had no effect.
            last = self._ready
            self.channel.put(last._replace(reward=last.reward + final_reward, done=True))
        self._ready = None
        self._pending = None
        total = float(event.results.total_score)
        own = max(0.0, total - self._prev_total_score)
        self._prev_total_score = total
        p50, p99, worst = self.latency.stats_ms()
        dropped_now = self.channel.dropped if self.channel is not None else 0
        outcome = "won" if self.won else ("lost" if self.tally.died else "survived")
        report = RoundReport(
            round=int(event.round_number),
            outcome=outcome,
            reward_sum=self.reward_sum,
            turns=self.turns,
            skipped_turns=self.skipped,
            p50_ms=p50,
            p99_ms=p99,
            max_ms=worst,
            dropped_transitions=dropped_now - self._dropped_at_start,
            own_score=own,
            enemy_score=self.tally.enemy_points(),
        )
        if self.on_round_report is not None:
            self.on_round_report(report)

    def on_game_ended(self, event: Any) -> None:
        self.game_over = True

    def on_game_aborted(self) -> None:
        self._cut_episode()
        self.aborted = True
