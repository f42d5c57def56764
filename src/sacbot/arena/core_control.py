"""The arena core's controller commands: StartGame (its checks, the game's creation and the move to
WAIT_FOR_READY_PARTICIPANTS), StopGame, pause and resume, NextTurn, ChangeTps and BotPolicyUpdate. A mixin of
`ArenaCore` (`sacbot.arena.core`), whose `_dispatch` calls `_control_handlers` for a controller's message; the
game run they start, pause and stop is `core_game`'s `GameLoop`."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from typing import Any

from sacbot.arena.core_game import GameLoop, Run
from sacbot.arena.core_types import IN_GAME, Conn, ServerState, norm_host
from sacbot.engine import assign_bot_ids, validate_setup
from sacbot.errors import UserError
from sacbot.protocol import (
    BotPolicyUpdate,
    ChangeTps,
    DisableDebugMode,
    EnableDebugMode,
    GamePausedEventForObserver,
    GameResumedEventForObserver,
    GameSetup,
    NextTurn,
    PauseGame,
    ResumeGame,
    StartGame,
    StopGame,
    TpsChangedEvent,
    encode_bytes,
)

log = logging.getLogger(__name__)


class ControlCommands(GameLoop):
    """The controller-command half of `ArenaCore`: the attributes below (and `GameLoop`'s) are set by
    `ArenaCore.__init__`."""

    _debug_sessions: dict[str, bool]  # BotPolicyUpdate's debuggingEnabled, kept per session id
    last_setup: GameSetup | None

    def _on_start_game(self, msg: StartGame) -> None:
        setup = msg.game_setup
        bots: list[Conn] = []
        problem = self._setup_problem(setup)
        if problem is None:
            assert setup is not None
            wanted = {(norm_host(a.host), a.port) for a in msg.bot_addresses}
            bots = [
                c for c in self.conns.values() if c.role == "bot" and (norm_host(c.host), c.port) in wanted
            ]
            if not bots:
                problem = "no connected bot matches botAddresses"
            else:
                try:  # the engine's checks: rounds, arena, participant count, room to place every bot, ...
                    validate_setup(setup, len(bots))
                except UserError as exc:
                    problem = str(exc)
        if problem is not None:
            # The real server only logs a rejected StartGame; controllers notice by the missing game start.
            log.warning("StartGame rejected: %s", problem)
            return
        assert setup is not None
        if self.state in IN_GAME:
            self._abort("a new game was started")
        self.last_setup = setup
        ids = assign_bot_ids([c.session_id for c in bots])  # 1..N by session id, as the real server
        members = sorted(((ids[c.session_id], c) for c in bots), key=lambda m: m[0])
        try:
            game = self._new_game(setup, members)
        except Exception as exc:
            log.warning("StartGame rejected: %s", exc)
            return
        run = Run(setup, game, {b: c.id for b, c in members}, {c.id: b for b, c in members})
        debug = self.config.debug_graphics
        run.debugging = {b for b, c in members if self._debug_sessions.get(c.session_id, debug)}
        self.run = run
        self.state = ServerState.WAIT_FOR_READY_PARTICIPANTS
        for bid, c in members:
            self.transport.send(c.id, encode_bytes(game.game_started_for_bot(bid)))
        self.deadline = self.clock() + setup.ready_timeout / 1e6

    def _setup_problem(self, s: GameSetup | None) -> str | None:
        """The real server's StartGame checks that the engine's `validate_setup` does not make."""
        if s is None:
            return "gameSetup is missing"
        if s.game_type not in self.config.game_types:
            return f"game type {s.game_type!r} is not served here"
        if not s.turn_timeout > 0:
            return "turnTimeout <= 0"
        if not s.ready_timeout > 0:
            return "readyTimeout <= 0"
        if not math.isfinite(s.gun_cooling_rate):
            return "gunCoolingRate is not finite"
        return None

    def _on_stop_game(self, msg: StopGame) -> None:
        if self.state in IN_GAME:
            self._abort("stopped by a controller")

    def _on_pause(self, msg: PauseGame) -> None:
        if self.state is ServerState.GAME_RUNNING:
            self.state = ServerState.GAME_PAUSED
            self.deadline = None
            self._to_observers(encode_bytes(GamePausedEventForObserver(pause_cause="pause")))

    def _on_resume(self, msg: ResumeGame) -> None:
        if self.state is ServerState.GAME_PAUSED:
            run = self.run
            assert run is not None
            self.state = ServerState.GAME_RUNNING
            self._to_observers(encode_bytes(GameResumedEventForObserver()))
            run.tick_time = self.clock()  # waiting bots get a fresh turn timeout
            self._schedule(run)

    def _on_next_turn(self, msg: NextTurn) -> None:
        if self.state is ServerState.GAME_PAUSED:
            self._next_turn()
            if self.state is ServerState.GAME_PAUSED:
                self.deadline = None  # still paused

    def _on_change_tps(self, msg: ChangeTps) -> None:
        tps = msg.tps
        if tps is None or not -1 <= tps <= 999:
            return
        self.tps = tps
        self._to_observers(encode_bytes(TpsChangedEvent(tps=tps)))
        if self.state is ServerState.GAME_RUNNING:
            run = self.run
            assert run is not None
            if tps == 0:
                self.deadline = None
            else:
                self._schedule(run)

    def _on_bot_policy(self, msg: BotPolicyUpdate) -> None:
        # Graphical debugging per bot (the real server's debugGraphicsEnableMap); breakpoints are not offered.
        enabled = msg.debugging_enabled
        if self.state not in IN_GAME or enabled is None:
            return
        run = self.run
        assert run is not None
        cid = run.bot_conn.get(msg.bot_id)
        if cid is None or cid not in self.conns:
            return
        self._debug_sessions[self.conns[cid].session_id] = enabled
        if enabled:
            run.debugging.add(msg.bot_id)
        else:
            run.debugging.discard(msg.bot_id)

    def _ignore(self, msg: Any) -> None:
        # Debug and breakpoint modes are not offered (ServerHandshake features say so); accepted and ignored.
        return None

    _control_handlers: dict[type, Callable[[ControlCommands, Any], None]] = {
        StartGame: _on_start_game,
        StopGame: _on_stop_game,
        PauseGame: _on_pause,
        ResumeGame: _on_resume,
        NextTurn: _on_next_turn,
        ChangeTps: _on_change_tps,
        BotPolicyUpdate: _on_bot_policy,
        EnableDebugMode: _ignore,
        DisableDebugMode: _ignore,
    }
