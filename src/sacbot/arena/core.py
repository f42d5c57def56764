"""The arena server's protocol core: connections, roles, handshakes, the lobby, the game and turn state
machine.

Sans-I/O: the shell (`server.py`) feeds it `connect` / `receive` / `disconnect` / `on_timer` and gives it a
`Transport` (send text, close with a code) and a clock. After every call the shell re-arms one timer at
`core.deadline`. A turn runs inside the `receive` call of the last missing intent, so at TPS -1 nothing ever
sleeps or polls; the timer only serves the turn timeout, the ready timeout, TPS pacing and the gap between
rounds.

Behaviour follows the Tank Royale 1.1.0 server (REFERENCE.md sections 1-5, 9) with the deliberate differences
listed in docs/arena.md.
"""

from __future__ import annotations

import logging
import math
import secrets
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from sacbot.engine import Game, Participant
from sacbot.protocol import (
    BotHandshake,
    BotInfo,
    BotIntent,
    BotListUpdate,
    BotPolicyUpdate,
    BotReady,
    ChangeTps,
    ControllerHandshake,
    DisableDebugMode,
    EnableDebugMode,
    GameAbortedEvent,
    GamePausedEventForObserver,
    GameResumedEventForObserver,
    GameSetup,
    GameStartedEventForObserver,
    NextTurn,
    ObserverHandshake,
    PauseGame,
    ResumeGame,
    RoundStartedEvent,
    ServerHandshake,
    SkippedTurnEvent,
    StartGame,
    StopGame,
    TpsChangedEvent,
    decode,
    encode,
    encode_dict,
)
from sacbot.protocol import Participant as WireParticipant

log = logging.getLogger(__name__)

SERVER_NAME = "sacbot arena"
VARIANT = "Tank Royale"
# The protocol level we follow. The official bot libraries accept any server with the same major version.
VERSION = "1.1.0"
BEHAVIOR_VERSION = 1
GAME_TYPES = ("classic", "1v1", "twinduel", "melee", "custom")

# Close codes (RFC 6455 section 7.4). The official Python Bot API hangs after 1000/1001, so we never use
# those.
CLOSE_POLICY = 1008  # wrong session id or secret, wrong role, unknown type, flooding, slow reader
CLOSE_INVALID = 1007  # malformed JSON, a message that breaks its schema, NaN/infinity
CLOSE_UNSUPPORTED = 1003  # binary frames
CLOSE_INTERNAL = 1011  # a bug on our side while handling this client's message
CLOSE_SHUTDOWN = 4001  # the server is stopping

# Flood control: a token bucket per connection. Bots also earn tokens with every tick they are sent, so a bot
# may answer every tick at any TPS, but a client that sends far more than it is sent is cut off.
BUCKET_CAP = 400.0
BUCKET_RATE = 200.0  # tokens per second
# And a byte budget, so a client cannot keep the server parsing near-limit messages all day.
BYTES_CAP = 8.0 * (1 << 20)
BYTES_RATE = 2.0 * (1 << 20)  # bytes per second
TOKENS_PER_TICK = 4.0

# Decoding already refuses NaN and infinities; this bounds the finite ones (every rule clamps far below it).
MAX_INTENT_NUMBER = 1e9
_INTENT_NUMBERS = ("turn_rate", "gun_turn_rate", "radar_turn_rate", "target_speed", "firepower")


class Transport(Protocol):
    def send(self, conn_id: int, text: str) -> None: ...

    def close(self, conn_id: int, code: int, reason: str) -> None: ...


class GameRecorder(Protocol):
    """Takes the observer messages of every game that a recording keeps (GameStarted, RoundStarted, ticks,
    RoundEnded, GameEnded or GameAborted), as the very text sent to observers. Called on the turn's path:
    an implementation only queues the text (e.g. `sacbot.viewer.recording.RecordingWriter`)."""

    def start_game(self) -> None: ...

    def record(self, text: str) -> None: ...

    def end_game(self) -> None: ...


@dataclass
class ArenaConfig:
    game_types: tuple[str, ...] = GAME_TYPES
    bot_secrets: frozenset[str] = frozenset()
    controller_secrets: frozenset[str] = frozenset()
    tps: int = -1
    enable_initial_position: bool = False
    seed: int | None = None  # None: a fresh random seed per game
    # Graphical debugging for every bot: ticks say isDebuggingEnabled and observers get its debugGraphics.
    # Without it a controller's BotPolicyUpdate turns it on per bot, as on the real server.
    debug_graphics: bool = False


@dataclass(slots=True)
class Conn:
    id: int
    host: str
    port: int
    session_id: str
    role: str | None = None  # "bot", "observer" or "controller" once the handshake is accepted
    bot: BotHandshake | None = None
    tokens: float = BUCKET_CAP
    byte_tokens: float = BYTES_CAP
    refilled: float = 0.0


@dataclass
class TurnStats:
    """Counters the bench reads: turns run and the time spent running them (engine + views + encode +
    send)."""

    turns: int = 0
    turn_seconds: float = 0.0
    rounds: int = 0
    games: int = 0


@dataclass
class _Run:
    """One game from StartGame to its end or abort."""

    setup: GameSetup
    game: Game
    bot_conn: dict[int, int]  # bot id -> conn id
    conn_bot: dict[int, int]  # conn id -> bot id
    ready: set[int] = field(default_factory=set)
    started: bool = False  # all ready (or ready timeout passed): the turn loop runs
    in_round: bool = False
    intents: dict[int, BotIntent] = field(default_factory=dict)  # intents since the last tick
    waiting: set[int] = field(
        default_factory=set
    )  # alive, connected bots that have not answered the last tick
    tick_time: float = 0.0
    paused: bool = False
    debugging: set[int] = field(default_factory=set)  # bot ids with graphical debugging enabled


class ArenaCore:
    def __init__(
        self,
        transport: Transport,
        config: ArenaConfig | None = None,
        clock: Callable[[], float] = time.monotonic,
        recorder: GameRecorder | None = None,
    ) -> None:
        self.transport = transport
        self.config = config or ArenaConfig()
        self.clock = clock
        self.recorder = recorder
        self._debug_sessions: dict[str, bool] = {}  # BotPolicyUpdate's debuggingEnabled, kept per session id
        self.conns: dict[int, Conn] = {}
        self.run: _Run | None = None
        self.deadline: float | None = None
        self.tps = self.config.tps
        self.last_setup: GameSetup | None = None
        self.stats = TurnStats()
        self._next_id = 1
        self._observers: list[int] = []  # observers and controllers, in join order

    # ---- connection events ----------------------------------------------------------------------------

    def connect(self, host: str, port: int) -> int:
        cid = self._next_id
        self._next_id += 1
        # 16 random bytes as unpadded url-safe base64: 22 characters, like the real server's UUID ids.
        conn = Conn(cid, host, port, secrets.token_urlsafe(16), refilled=self.clock())
        self.conns[cid] = conn
        hs = ServerHandshake(
            session_id=conn.session_id,
            variant=VARIANT,
            version=VERSION,
            game_types=list(self.config.game_types),
            name=SERVER_NAME,
            behavior_version=BEHAVIOR_VERSION,
            game_setup=self.last_setup,
            features={"debugMode": False, "breakpointMode": False},
        )
        self.transport.send(cid, encode(hs))
        return cid

    def disconnect(self, cid: int) -> None:
        conn = self.conns.pop(cid, None)
        if conn is None:
            return
        if conn.role == "bot":
            self._bot_left(cid)
            self._broadcast_bot_list()
        elif conn.role in ("observer", "controller"):
            self._observers.remove(cid)

    def kick(self, cid: int, code: int, reason: str) -> None:
        """Close a client and forget it at once; its later messages are ignored."""
        if cid in self.conns:
            log.info("closing client %d: %d %s", cid, code, reason)
            self.transport.close(cid, code, reason)
            self.disconnect(cid)

    def receive(self, cid: int, text: str | bytes) -> None:
        conn = self.conns.get(cid)
        if conn is None:
            return
        if not isinstance(text, str):
            self.kick(cid, CLOSE_UNSUPPORTED, "Binary messages are not supported")
            return
        now = self.clock()
        elapsed = now - conn.refilled
        conn.refilled = now
        tokens = min(BUCKET_CAP, conn.tokens + elapsed * BUCKET_RATE)
        byte_tokens = min(BYTES_CAP, conn.byte_tokens + elapsed * BYTES_RATE) - len(text)
        if tokens < 1.0 or byte_tokens < 0.0:
            self.kick(cid, CLOSE_POLICY, "Flooding: too many messages")
            return
        conn.tokens = tokens - 1.0
        conn.byte_tokens = byte_tokens
        try:
            msg = decode(text)
        except Exception as exc:  # ProtocolError, or anything odd a hostile payload provokes in the parser
            self.kick(cid, CLOSE_INVALID, _short(f"Invalid message: {exc}"))
            return
        try:
            self._dispatch(conn, msg)
        except Exception:
            log.exception("error handling %s from client %d", type(msg).__name__, cid)
            self.kick(cid, CLOSE_INTERNAL, "Internal server error")

    def on_timer(self) -> None:
        """The shell calls this when `deadline` has passed."""
        run = self.run
        if self.deadline is None or self.clock() < self.deadline - 0.0005:
            return
        self.deadline = None
        if run is None:
            return
        if not run.started:
            self._ready_timeout()
        elif not run.paused and self.tps != 0:
            self._next_turn()

    def shutdown(self) -> None:
        """Close every client (code 4001) and drop the game."""
        self.run = None
        self.deadline = None
        for cid in list(self.conns):
            self.transport.close(cid, CLOSE_SHUTDOWN, "Server stopping")
        self.conns.clear()
        self._observers.clear()

    # ---- dispatch by role -----------------------------------------------------------------------------

    def _dispatch(self, conn: Conn, msg: Any) -> None:
        role = conn.role
        cls = msg.__class__
        if role == "bot":
            if cls is BotIntent:
                self._on_intent(conn, msg)
            elif cls is BotReady:
                self._on_ready(conn)
            else:
                self._wrong_role(conn, msg)
        elif role == "controller":
            handler = self._control_handlers.get(cls)
            if handler is None:
                self._wrong_role(conn, msg)
            else:
                handler(self, msg)
        elif role == "observer":
            self._wrong_role(conn, msg)
        elif cls is BotHandshake:
            self._on_bot_handshake(conn, msg)
        elif cls is ObserverHandshake or cls is ControllerHandshake:
            self._on_watcher_handshake(conn, msg)
        else:
            self.kick(conn.id, CLOSE_POLICY, f"Expected a handshake, got {msg.type}")

    def _wrong_role(self, conn: Conn, msg: Any) -> None:
        self.kick(conn.id, CLOSE_POLICY, f"{msg.type} is not allowed for the {conn.role} role")

    # ---- handshakes and the lobby ---------------------------------------------------------------------

    def _on_bot_handshake(self, conn: Conn, hs: BotHandshake) -> None:
        if hs.session_id != conn.session_id:
            self.kick(conn.id, CLOSE_POLICY, "Missing or wrong session id")
            return
        if self.config.bot_secrets and hs.secret not in self.config.bot_secrets:
            self.kick(conn.id, CLOSE_POLICY, "Invalid secret")
            return
        conn.role = "bot"
        conn.bot = hs
        self._broadcast_bot_list()

    def _on_watcher_handshake(self, conn: Conn, hs: ObserverHandshake | ControllerHandshake) -> None:
        if hs.session_id != conn.session_id:
            self.kick(conn.id, CLOSE_POLICY, "Missing or wrong session id")
            return
        # As in the real server, the controller secrets gate observers too.
        if self.config.controller_secrets and hs.secret not in self.config.controller_secrets:
            self.kick(conn.id, CLOSE_POLICY, "Invalid secret")
            return
        conn.role = "controller" if isinstance(hs, ControllerHandshake) else "observer"
        self._observers.append(conn.id)
        self.transport.send(conn.id, encode(self._bot_list()))

    def _bot_list(self) -> BotListUpdate:
        infos = []
        for c in self.conns.values():
            if c.role == "bot" and c.bot is not None:
                infos.append(BotInfo(**_identity_fields(c.bot), host=c.host, port=c.port))
        return BotListUpdate(bots=infos)

    def _broadcast_bot_list(self) -> None:
        if self._observers:
            self._to_observers(encode(self._bot_list()))

    def _to_observers(self, text: str) -> None:
        send = self.transport.send
        for cid in self._observers:
            send(cid, text)

    def _to_watchers(self, text: str) -> None:
        """A game event for the observers and, when one is kept, the recording (the same text)."""
        self._to_observers(text)
        if self.recorder is not None:
            self.recorder.record(text)

    def _to_bots(self, run: _Run, text_for: Callable[[int], str], ids: Iterable[int]) -> None:
        send = self.transport.send
        for bid in ids:
            cid = run.bot_conn.get(bid)
            if cid is not None:
                send(cid, text_for(bid))

    # ---- controller commands --------------------------------------------------------------------------

    def _on_start_game(self, msg: StartGame) -> None:
        setup = msg.game_setup
        problem = self._setup_problem(setup)
        if problem is None:
            assert setup is not None
            wanted = {(_norm_host(a.host), a.port) for a in msg.bot_addresses}
            bots = [
                c for c in self.conns.values() if c.role == "bot" and (_norm_host(c.host), c.port) in wanted
            ]
            if not bots:
                problem = "no connected bot matches botAddresses"
            elif len(bots) < setup.min_number_of_participants:
                problem = (
                    f"{len(bots)} bots matched, minNumberOfParticipants is {setup.min_number_of_participants}"
                )
            elif setup.max_number_of_participants and len(bots) > setup.max_number_of_participants:
                problem = (
                    f"{len(bots)} bots matched, maxNumberOfParticipants is {setup.max_number_of_participants}"
                )
        if problem is not None:
            # The real server only logs a rejected StartGame; controllers notice by the missing game start.
            log.warning("StartGame rejected: %s", problem)
            return
        assert setup is not None
        if self.run is not None:
            self._abort("a new game was started")
        self.last_setup = setup
        bots.sort(key=lambda c: c.session_id)  # ids 1..N by session id, as the real server numbers them
        ids = {c.id: i + 1 for i, c in enumerate(bots)}
        try:
            game = self._new_game(setup, [(ids[c.id], c) for c in bots])
        except Exception as exc:
            log.warning("StartGame rejected: %s", exc)
            return
        run = _Run(setup, game, {b: c for c, b in ids.items()}, dict(ids))
        run.debugging = {
            ids[c.id] for c in bots if self._debug_sessions.get(c.session_id, self.config.debug_graphics)
        }
        self.run = run
        for c in bots:
            self.transport.send(c.id, encode(game.game_started_for_bot(ids[c.id])))
        self.deadline = self.clock() + setup.ready_timeout / 1e6

    def _setup_problem(self, s: GameSetup | None) -> str | None:
        if s is None:
            return "gameSetup is missing"
        if s.game_type not in self.config.game_types:
            return f"game type {s.game_type!r} is not served here"
        checks = [
            (s.number_of_rounds >= 1, "numberOfRounds < 1"),
            (s.arena_width > 0, "arenaWidth <= 0"),
            (s.arena_height > 0, "arenaHeight <= 0"),
            (s.min_number_of_participants >= 1, "minNumberOfParticipants < 1"),
            (s.turn_timeout > 0, "turnTimeout <= 0"),
            (s.ready_timeout > 0, "readyTimeout <= 0"),
            (math.isfinite(s.gun_cooling_rate), "gunCoolingRate is not finite"),
        ]
        for ok, problem in checks:
            if not ok:
                return problem
        return None

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

    def _on_stop_game(self, msg: StopGame) -> None:
        if self.run is not None:
            self._abort("stopped by a controller")

    def _on_pause(self, msg: PauseGame) -> None:
        run = self.run
        if run is not None and run.started and not run.paused:
            run.paused = True
            self.deadline = None
            self._to_observers(encode(GamePausedEventForObserver(pause_cause="pause")))

    def _on_resume(self, msg: ResumeGame) -> None:
        run = self.run
        if run is not None and run.paused:
            run.paused = False
            self._to_observers(encode(GameResumedEventForObserver()))
            run.tick_time = self.clock()  # waiting bots get a fresh turn timeout
            self._schedule(run)

    def _on_next_turn(self, msg: NextTurn) -> None:
        run = self.run
        if run is not None and run.paused:
            self._next_turn()
            if self.run is not None:
                self.deadline = None  # still paused

    def _on_change_tps(self, msg: ChangeTps) -> None:
        tps = msg.tps
        if tps is None or not -1 <= tps <= 999:
            return
        self.tps = tps
        self._to_observers(encode(TpsChangedEvent(tps=tps)))
        run = self.run
        if run is not None and run.started and not run.paused:
            if tps == 0:
                self.deadline = None
            else:
                self._schedule(run)

    def _on_bot_policy(self, msg: BotPolicyUpdate) -> None:
        # Graphical debugging per bot (the real server's debugGraphicsEnableMap); breakpoints are not offered.
        run = self.run
        enabled = msg.debugging_enabled
        if run is None or enabled is None:
            return
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

    _control_handlers: dict[type, Callable[[ArenaCore, Any], None]] = {
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

    # ---- bots in a game -------------------------------------------------------------------------------

    def _on_ready(self, conn: Conn) -> None:
        run = self.run
        if run is None or run.started:
            return
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

    def _start(self, run: _Run) -> None:
        run.started = True
        self.stats.games += 1
        parts = []
        for bid, cid in sorted(run.bot_conn.items()):
            h = self.conns[cid].bot
            assert h is not None
            parts.append(WireParticipant(id=bid, **_identity_fields(h)))
        if self.recorder is not None:
            self.recorder.start_game()
        self._to_watchers(encode(GameStartedEventForObserver(game_setup=run.setup, participants=parts)))
        self._next_turn()

    def _on_intent(self, conn: Conn, intent: BotIntent) -> None:
        for name in _INTENT_NUMBERS:
            v = getattr(intent, name)
            if v is not None and not -MAX_INTENT_NUMBER < v < MAX_INTENT_NUMBER:
                # Finite but absurd: no rule needs it, and it only invites overflow downstream.
                self.kick(
                    conn.id, CLOSE_INVALID, f"Invalid message: BotIntent field '{name}' is out of range"
                )
                return
        run = self.run
        if run is None or not run.in_round:
            return
        bid = run.conn_bot.get(conn.id)
        if bid is None:
            return
        prev = run.intents.get(bid)
        run.intents[bid] = intent if prev is None else _merge(prev, intent)
        waiting = run.waiting
        if bid in waiting:
            waiting.discard(bid)
            if not waiting and not run.paused and self.tps != 0:
                self._schedule(run)

    def _bot_left(self, cid: int) -> None:
        run = self.run
        if run is None:
            return
        bid = run.conn_bot.pop(cid, None)
        if bid is None:
            return
        del run.bot_conn[bid]
        run.ready.discard(bid)
        if not run.bot_conn:
            self._abort("every participant left")
            return
        # The engine keeps the bot playing its last intent; nobody waits for it any more.
        if not run.started:
            if len(run.ready) == len(run.bot_conn):
                self._start(run)
        elif bid in run.waiting:
            run.waiting.discard(bid)
            if not run.waiting and not run.paused and self.tps != 0:
                self._schedule(run)

    # ---- the turn loop --------------------------------------------------------------------------------

    def _pace(self) -> float:
        return 1.0 / self.tps if self.tps > 0 else 0.0

    def _arm(self, run: _Run) -> None:
        """After a tick: the next turn is due when every bot answered, at the latest at the turn timeout."""
        if run.paused or self.tps == 0:
            self.deadline = None
        elif run.waiting:
            self.deadline = run.tick_time + max(self._pace(), run.setup.turn_timeout / 1e6)
        else:
            self.deadline = run.tick_time + self._pace()

    def _schedule(self, run: _Run) -> None:
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
        run = self.run
        if run is None:
            return
        t0 = time.perf_counter()
        try:
            self._turn(run)
        except Exception:
            log.exception("the game failed; aborting it")
            self._abort("internal error")
            return
        self.stats.turn_seconds += time.perf_counter() - t0

    def _turn(self, run: _Run) -> None:
        game = run.game
        send = self.transport.send
        if not run.in_round:
            game.start_round()
            run.in_round = True
            run.intents = {}
            text = encode(RoundStartedEvent(round_number=game.round_number))
            self._to_bots(run, lambda _b: text, run.bot_conn)
            self._to_watchers(text)
            game.turn({})
        else:
            if run.waiting:
                # Late bots: their last intent repeats; they hear about it before the next tick.
                skipped = encode(SkippedTurnEvent(turn_number=game.turn_number))
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
                send(cid, encode_dict(tick, "TickEventForBot"))
                conn = conns[cid]
                conn.tokens = min(BUCKET_CAP, conn.tokens + TOKENS_PER_TICK)
        if self._observers or self.recorder is not None:
            obs = game.tick_for_observer_dict()
            for state in obs["botStates"]:
                # As the real server: a bot's debug graphics reach observers only while it may debug.
                if state["id"] in debugging:
                    state["isDebuggingEnabled"] = True
                elif "debugGraphics" in state:
                    del state["debugGraphics"]
            self._to_watchers(encode_dict(obs, "TickEventForObserver"))
        run.tick_time = self.clock()
        if game.round_over:
            self._end_round(run)
            return
        run.waiting = {b for b in game.alive_ids if b in bot_conn}
        self._arm(run)

    def _end_round(self, run: _Run) -> None:
        game = run.game
        run.in_round = False
        run.waiting = set()
        run.intents = {}
        self.stats.rounds += 1
        self._to_bots(run, lambda b: encode(game.round_ended_for_bot(b)), list(run.bot_conn))
        self._to_watchers(encode(game.round_ended_for_observer()))
        if game.game_over:
            self._to_bots(run, lambda b: encode(game.game_ended_for_bot(b)), list(run.bot_conn))
            self._to_watchers(encode(game.game_ended_for_observer()))
            if self.recorder is not None:
                self.recorder.end_game()
            self.run = None
            self.deadline = None
        else:
            # The next round starts on the next timer fire (now, unless TPS pacing says later), so messages
            # that queued up meanwhile are handled between rounds.
            self._arm(run)

    def _abort(self, why: str) -> None:
        run = self.run
        if run is None:
            return
        log.info("game aborted: %s", why)
        self.run = None
        self.deadline = None
        text = encode(GameAbortedEvent())
        # The real server tells only observers; bots get it too so they can reset (the bot APIs handle it).
        self._to_bots(run, lambda _b: text, list(run.bot_conn))
        self._to_observers(text)
        if self.recorder is not None and run.started:
            self.recorder.record(text)
            self.recorder.end_game()


def _identity_fields(h: BotHandshake) -> dict[str, Any]:
    """What BotInfo and Participant both copy from a bot's handshake."""
    return {
        "session_id": h.session_id,
        "name": h.name,
        "version": h.version,
        "authors": h.authors,
        "description": h.description,
        "homepage": h.homepage,
        "country_codes": h.country_codes,
        "game_types": h.game_types,
        "platform": h.platform,
        "programming_lang": h.programming_lang,
        "initial_position": h.initial_position,
        "team_id": h.team_id,
        "team_name": h.team_name,
        "team_version": h.team_version,
        "is_droid": h.is_droid,
        "debugger_attached": h.debugger_attached,
    }


def _merge(prev: BotIntent, new: BotIntent) -> BotIntent:
    """A later intent in the same turn only changes the fields it sets (the server's mapForMerge)."""
    merged = BotIntent()
    for name in BotIntent.__slots__:
        v = getattr(new, name)
        setattr(merged, name, getattr(prev, name) if v is None else v)
    return merged


def _norm_host(host: str) -> str:
    host = host.lower()
    if host in ("localhost", "::1", "::ffff:127.0.0.1"):
        return "127.0.0.1"
    if host.startswith("::ffff:"):
        return host[7:]
    return host


def _short(text: str) -> str:
    # A close reason must fit in a control frame (123 bytes of UTF-8).
    data = text.encode()
    return text if len(data) <= 120 else data[:117].decode(errors="ignore") + "..."
