"""The arena server's protocol core: connections, roles, handshakes, the lobby, dispatch by role and the
server's state (`ServerState`). The controller's commands (StartGame, pause, TPS, ...) are the `core_control`
mixin, the game run (ready, turns, pacing, round and game end) the `core_game` mixin it builds on; the shared
types, constants and protocols are in `core_types`.

Sans-I/O: the shell (`server.py`) feeds it `connect` / `receive` / `disconnect` / `on_timer` and gives it a
`Transport` (send a message as the UTF-8 bytes of its JSON, close with a code) and a clock. After every call
the shell re-arms one timer at `core.deadline`. A turn runs inside the `receive` call of the last missing
intent, so at TPS -1 nothing ever sleeps or polls; the timer only serves the turn timeout, the ready timeout,
TPS pacing and the gap between rounds.

Behaviour follows the Tank Royale 1.1.0 server (REFERENCE.md sections 1-5, 9) with the deliberate differences
listed in docs/arena.md.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable
from typing import Any

from sacbot.arena.core_control import ControlCommands
from sacbot.arena.core_game import Run
from sacbot.arena.core_types import (
    BEHAVIOR_VERSION,
    BUCKET_CAP,
    BUCKET_RATE,
    BYTES_CAP,
    BYTES_RATE,
    CLOSE_INTERNAL,
    CLOSE_INVALID,
    CLOSE_POLICY,
    CLOSE_SHUTDOWN,
    CLOSE_UNSUPPORTED,
    INTENT_NUMBERS,
    MAX_INTENT_NUMBER,
    SERVER_NAME,
    VARIANT,
    VERSION,
    ArenaConfig,
    Conn,
    GameRecorder,
    ServerState,
    Transport,
    TurnStats,
    identity_fields,
    short_reason,
)
from sacbot.protocol import (
    BotHandshake,
    BotInfo,
    BotIntent,
    BotListUpdate,
    BotReady,
    ControllerHandshake,
    GameSetup,
    ObserverHandshake,
    ServerHandshake,
    decode,
    encode_bytes,
)

__all__ = ["ArenaConfig", "ArenaCore"]

log = logging.getLogger(__name__)


class ArenaCore(ControlCommands):
    """The server core: connections, roles, the lobby, the controller's commands (`ControlCommands`) and the
    `ServerState` (`state`; the game itself, while one exists, is `run`)."""

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
        self.state = ServerState.WAIT_FOR_PARTICIPANTS_TO_JOIN
        self.run: Run | None = None  # set exactly in the IN_GAME states
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
        self.transport.send(cid, encode_bytes(hs))
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
            self.kick(cid, CLOSE_INVALID, short_reason(f"Invalid message: {exc}"))
            return
        try:
            self._dispatch(conn, msg)
        except Exception:
            log.exception("error handling %s from client %d", type(msg).__name__, cid)
            self.kick(cid, CLOSE_INTERNAL, "Internal server error")

    def on_timer(self) -> None:
        """The shell calls this when `deadline` has passed."""
        if self.deadline is None or self.clock() < self.deadline - 0.0005:
            return
        self.deadline = None
        state = self.state
        if state is ServerState.WAIT_FOR_READY_PARTICIPANTS:
            self._ready_timeout()
        elif state is ServerState.GAME_RUNNING and self.tps != 0:
            self._next_turn()

    def shutdown(self) -> None:
        """Close every client (code 4001) and drop the game."""
        self._stop()
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
        self.transport.send(conn.id, encode_bytes(self._bot_list()))

    def _bot_list(self) -> BotListUpdate:
        infos = []
        for c in self.conns.values():
            if c.role == "bot" and c.bot is not None:
                infos.append(BotInfo(**identity_fields(c.bot), host=c.host, port=c.port))
        return BotListUpdate(bots=infos)

    def _broadcast_bot_list(self) -> None:
        if self._observers:
            self._to_observers(encode_bytes(self._bot_list()))

    # ---- bots in a game (the rest is in core_game) ---------------------------------------------------------

    def _on_intent(self, conn: Conn, intent: BotIntent) -> None:
        for name in INTENT_NUMBERS:
            v = getattr(intent, name)
            if v is not None and not -MAX_INTENT_NUMBER < v < MAX_INTENT_NUMBER:
                # Finite but absurd: no rule needs it, and it only invites overflow downstream.
                self.kick(
                    conn.id, CLOSE_INVALID, f"Invalid message: BotIntent field '{name}' is out of range"
                )
                return
        self._take_intent(conn, intent)
