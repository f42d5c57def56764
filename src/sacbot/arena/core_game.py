"""The arena core's game run: from the bots' BotReady to the game's end or abort, with the turn loop, its
pacing (TPS, turn timeout) and the round ends. A mixin of `ArenaCore` (`sacbot.arena.core`), which owns the
connections, through `ControlCommands` (`core_control`, the controller's commands); the `ServerState`
transitions into and out of a running game live here (`_start`, `_stop`)."""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from sacbot.arena.core_types import (
    BUCKET_CAP,
    IN_GAME,
    PLAYING,
    TOKENS_PER_TICK,
    ArenaConfig,
    Conn,
    GameRecorder,
    ServerState,
    Transport,
    TurnStats,
    identity_fields,
)
from sacbot.engine import Game, Participant, merge_intents
from sacbot.protocol import (
    BotIntent,
    GameAbortedEvent,
    GameSetup,
    GameStartedEventForObserver,
    RoundStartedEvent,
    SkippedTurnEvent,
    encode_bytes,
    encode_dict_bytes,
)
from sacbot.protocol import Participant as WireParticipant

log = logging.getLogger(__name__)


@dataclass
class Run:
    """One game from StartGame to its end or abort (`ArenaCore.run`; the phase is `ArenaCore.state`)."""

    setup: GameSetup
    game: Game
    bot_conn: dict[int, int]  # bot id -> conn id
    conn_bot: dict[int, int]  # conn id -> bot id
    ready: set[int] = field(default_factory=set)
    in_round: bool = False
    intents: dict[int, Any] = field(default_factory=dict)  # BotIntent (or merged Intent) since the last tick
    # Alive, connected bots that have not answered the last tick.
    waiting: set[int] = field(default_factory=set)
    tick_time: float = 0.0
    debugging: set[int] = field(default_factory=set)  # bot ids with graphical debugging enabled


class GameLoop:
    """The game half of `ArenaCore`: the attributes below are set by `ArenaCore.__init__`."""

    transport: Transport
    config: ArenaConfig
    clock: Callable[[], float]
    recorder: GameRecorder | None
    conns: dict[int, Conn]
    state: ServerState
    run: Run | None
    deadline: float | None
    tps: int
    stats: TurnStats
    _observers: list[int]

    # ---- sending ------------------------------------------------------------------------------------------

    def _to_observers(self, data: bytes) -> None:
        send = self.transport.send
        for cid in self._observers:
            send(cid, data)

    def _to_watchers(self, data: bytes) -> None:
        """A game event for the observers and, when one is kept, the recording (the same bytes)."""
        self._to_observers(data)
        if self.recorder is not None:
            self.recorder.record(data)

    def _to_bots(self, run: Run, data_for: Callable[[int], bytes], ids: Iterable[int]) -> None:
        send = self.transport.send
        for bid in ids:
            cid = run.bot_conn.get(bid)
            if cid is not None:
                send(cid, data_for(bid))

    def _new_game(self, setup: GameSetup, members: list[tuple[int, Conn]]) -> Game:
        parts = []
        for bid, c in members:
            h = c.bot
            assert h is not None
            pos = None
            if h.initial_position is not None:
                p = h.initial_position
                pos = (p.x, p.y, p.direction)
            parts.append(
                Participant(
                    bid,
                    h.name,
                    version=h.version,
                    session_id=c.session_id,
                    team_id=h.team_id,
                    is_droid=bool(h.is_droid),
                    initial_position=pos,
                )
            )
        seed = self.config.seed if self.config.seed is not None else secrets.randbits(63)
        return Game(setup, parts, seed=seed, use_initial_positions=self.config.enable_initial_position)

    # ---- bots in a game -----------------------------------------------------------------------------------

    def _on_ready(self, conn: Conn) -> None:
        if self.state is not ServerState.WAIT_FOR_READY_PARTICIPANTS:
            return
        run = self.run
        assert run is not None
        bid = run.conn_bot.get(conn.id)
        if bid is None:
            return
        run.ready.add(bid)
        if len(run.ready) == len(run.bot_conn):
            self._start(run)

    def _ready_timeout(self) -> None:
        run = self.run
        assert run is not None
        if len(run.ready) >= run.setup.min_number_of_participants and run.ready:
            # Drop the bots that never answered: the game is rebuilt with the ready ones (same ids).
            members = [(bid, self.conns[run.bot_conn[bid]]) for bid in sorted(run.ready)]
            run.game = self._new_game(run.setup, members)
            run.bot_conn = {bid: run.bot_conn[bid] for bid in run.ready}
            run.conn_bot = {c: b for b, c in run.bot_conn.items()}
            self._start(run)
        else:
            self._abort("not enough bots were ready in time")

    def _start(self, run: Run) -> None:
        """WAIT_FOR_READY_PARTICIPANTS -> GAME_RUNNING: observers hear of the game and turn 1 runs."""
        self.state = ServerState.GAME_RUNNING
        self.stats.games += 1
        parts = []
        for bid, cid in sorted(run.bot_conn.items()):
            h = self.conns[cid].bot
            assert h is not None
            parts.append(WireParticipant(id=bid, **identity_fields(h)))
        if self.recorder is not None:
            self.recorder.start_game()
        self._to_watchers(encode_bytes(GameStartedEventForObserver(game_setup=run.setup, participants=parts)))
        self._next_turn()

    def _take_intent(self, conn: Conn, intent: BotIntent) -> None:
        """A bot's intent (already checked) for the running round; the last missing one runs the turn."""
        if self.state not in PLAYING:
            return
        run = self.run
        assert run is not None
        bid = run.conn_bot.get(conn.id)
        if bid is None:
            return
        if not run.in_round:  # an answer to the last tick of the round that ended: the next round may start
            if bid in run.waiting:
                run.waiting.discard(bid)
                if not run.waiting and self.state is ServerState.GAME_RUNNING:
                    self._arm(run)
            return
        prev = run.intents.get(bid)
        # A later intent in the same turn only changes the fields it sets (the server's mapForMerge).
        run.intents[bid] = intent if prev is None else merge_intents((prev, intent))
        waiting = run.waiting
        if bid in waiting:
            waiting.discard(bid)
            if not waiting and self.state is ServerState.GAME_RUNNING and self.tps != 0:
                self._schedule(run)

    def _bot_left(self, cid: int) -> None:
        if self.state not in IN_GAME:
            return
        run = self.run
        assert run is not None
        bid = run.conn_bot.pop(cid, None)
        if bid is None:
            return
        del run.bot_conn[bid]
        run.ready.discard(bid)
        if not run.bot_conn:
            self._abort("every participant left")
            return
        # The engine keeps the bot playing its last intent; nobody waits for it any more.
        if self.state is ServerState.WAIT_FOR_READY_PARTICIPANTS:
            if len(run.ready) == len(run.bot_conn):
                self._start(run)
        elif bid in run.waiting:
            run.waiting.discard(bid)
            if not run.waiting and self.state is ServerState.GAME_RUNNING and self.tps != 0:
                self._schedule(run)

    # ---- the turn loop ------------------------------------------------------------------------------------

    def _pace(self) -> float:
        return 1.0 / self.tps if self.tps > 0 else 0.0

    def _arm(self, run: Run) -> None:
        """After a tick: the next turn is due when every bot answered, at the latest at the turn timeout."""
        if self.state is not ServerState.GAME_RUNNING or self.tps == 0:
            self.deadline = None
        elif run.waiting:
            self.deadline = run.tick_time + max(self._pace(), run.setup.turn_timeout / 1e6)
        else:
            self.deadline = run.tick_time + self._pace()

    def _schedule(self, run: Run) -> None:
        """Every bot answered (or left): run the next turn now, unless TPS pacing says later."""
        if run.waiting or not run.in_round:
            self._arm(run)
            return
        earliest = run.tick_time + self._pace()
        if earliest <= self.clock():
            self._next_turn()
        else:
            self.deadline = earliest

    def _next_turn(self) -> None:
        if self.state not in PLAYING:
            return
        run = self.run
        assert run is not None
        t0 = time.perf_counter()
        try:
            self._turn(run)
        except Exception:
            log.exception("the game failed; aborting it")
            self._abort("internal error")
            return
        self.stats.turn_seconds += time.perf_counter() - t0

    def _turn(self, run: Run) -> None:
        game = run.game
        send = self.transport.send
        if not run.in_round:
            game.start_round()
            run.in_round = True
            run.intents = {}
            started = encode_bytes(RoundStartedEvent(round_number=game.round_number))
            self._to_bots(run, lambda _b: started, run.bot_conn)
            self._to_watchers(started)
            game.turn({})
        else:
            if run.waiting:
                # Late bots: their last intent repeats; they hear about it before the next tick.
                skipped = encode_bytes(SkippedTurnEvent(turn_number=game.turn_number))
                self._to_bots(run, lambda _b: skipped, run.waiting)
            intents = run.intents
            run.intents = {}
            game.turn(intents)
        self.stats.turns += 1
        bot_conn = run.bot_conn
        conns = self.conns
        debugging = run.debugging
        # Ticks go straight from engine state to wire dicts to JSON (no protocol objects in between); the
        # observer tick is built only when someone observes (or records), and encoded once for all of them.
        for bid in game.tick_bot_ids():
            cid = bot_conn.get(bid)
            if cid is not None:
                tick = game.tick_for_bot_dict(bid)
                if debugging and bid in debugging:
                    tick["botState"]["isDebuggingEnabled"] = True
                send(cid, encode_dict_bytes(tick, "TickEventForBot"))
                conn = conns[cid]
                tokens = conn.tokens + TOKENS_PER_TICK
                conn.tokens = tokens if tokens < BUCKET_CAP else BUCKET_CAP
        if self._observers or self.recorder is not None:
            obs = game.tick_for_observer_dict()
            for state in obs["botStates"]:
                # As the real server: a bot's debug graphics reach observers only while it may debug.
                if state["id"] in debugging:
                    state["isDebuggingEnabled"] = True
                elif "debugGraphics" in state:
                    del state["debugGraphics"]
            self._to_watchers(encode_dict_bytes(obs, "TickEventForObserver"))
        run.tick_time = self.clock()
        if game.round_over:
            self._end_round(run, bot_conn.keys() & game.tick_bot_ids())
            return
        run.waiting = bot_conn.keys() & game.alive_ids  # the connected ones
        self._arm(run)

    def _end_round(self, run: Run, answering: set[int]) -> None:
        """After a round's last tick. The next round waits for the answers to that tick (`answering`: the bots
        it was sent to), at the latest until the turn timeout, as the server's timer waits for every bot after
        each tick: an answer that came after the next round's tick 1 would count as the answer to it, and that
        bot's every intent of the round would then apply one turn late."""
        game = run.game
        run.in_round = False
        run.waiting = answering
        run.intents = {}
        self.stats.rounds += 1
        self._to_bots(run, lambda b: encode_bytes(game.round_ended_for_bot(b)), list(run.bot_conn))
        self._to_watchers(encode_bytes(game.round_ended_for_observer()))
        if game.game_over:
            self._to_bots(run, lambda b: encode_bytes(game.game_ended_for_bot(b)), list(run.bot_conn))
            self._to_watchers(encode_bytes(game.game_ended_for_observer()))
            if self.recorder is not None:
                self.recorder.end_game()
            self._stop()
        else:
            # The next round starts on the next timer fire: once the answers to the last tick are in (or at
            # the turn timeout), unless TPS pacing says later.
            self._arm(run)

    def _abort(self, why: str) -> None:
        if self.state not in IN_GAME:
            return
        run = self.run
        assert run is not None
        log.info("game aborted: %s", why)
        started = self.state is not ServerState.WAIT_FOR_READY_PARTICIPANTS
        self._stop()
        aborted = encode_bytes(GameAbortedEvent())
        # The real server tells only observers; bots get it too so they can reset (the bot APIs handle it).
        self._to_bots(run, lambda _b: aborted, list(run.bot_conn))
        self._to_observers(aborted)
        if self.recorder is not None and started:
            self.recorder.record(aborted)
            self.recorder.end_game()

    def _stop(self) -> None:
        """Any state -> GAME_STOPPED: the game (if any) is dropped and no timer is due."""
        self.state = ServerState.GAME_STOPPED
        self.run = None
        self.deadline = None
