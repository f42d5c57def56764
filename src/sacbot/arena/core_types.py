"""What the arena core and its shell share: the server's identity, close codes and limits, the
`ServerState` enum, the configuration, a connection's record, the turn counters, the `Transport` and
`GameRecorder` protocols, and small wire helpers."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Protocol

from sacbot.protocol import BotHandshake

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
INTENT_NUMBERS = ("turn_rate", "gun_turn_rate", "radar_turn_rate", "target_speed", "firepower")


class ServerState(enum.Enum):
    """The server's state, as the Tank Royale server's `ServerState`. A game exists (`ArenaCore.run` is set)
    exactly in the three middle states."""

    WAIT_FOR_PARTICIPANTS_TO_JOIN = "WAIT_FOR_PARTICIPANTS_TO_JOIN"  # no game has been started yet
    WAIT_FOR_READY_PARTICIPANTS = "WAIT_FOR_READY_PARTICIPANTS"  # StartGame accepted, waiting for BotReady
    GAME_RUNNING = "GAME_RUNNING"  # the turn loop runs
    GAME_PAUSED = "GAME_PAUSED"  # a controller paused it: turns only on NextTurn
    GAME_STOPPED = "GAME_STOPPED"  # the last game ended or was aborted (or the server shut down)


# The states in which a game has started (turns run), and those in which a game exists at all.
PLAYING = frozenset({ServerState.GAME_RUNNING, ServerState.GAME_PAUSED})
IN_GAME = frozenset({ServerState.WAIT_FOR_READY_PARTICIPANTS, *PLAYING})


class Transport(Protocol):
    def send(self, conn_id: int, data: bytes) -> None:
        """One message to one client: its JSON text as UTF-8, as `sacbot.protocol.encode_bytes` gives it."""

    def close(self, conn_id: int, code: int, reason: str) -> None: ...


class GameRecorder(Protocol):
    """Takes the observer messages of every game that a recording keeps (GameStarted, RoundStarted, ticks,
    RoundEnded, GameEnded or GameAborted), as the very bytes sent to observers (their UTF-8 JSON). Called on
    the turn's path: an implementation only queues them (e.g. `sacbot.viewer.recording.RecordingWriter`)."""

    def start_game(self) -> None: ...

    def record(self, data: bytes) -> None: ...

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


def identity_fields(h: BotHandshake) -> dict[str, Any]:
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


def norm_host(host: str) -> str:
    host = host.lower()
    if host in ("localhost", "::1", "::ffff:127.0.0.1"):
        return "127.0.0.1"
    if host.startswith("::ffff:"):
        return host[7:]
    return host


def short_reason(text: str) -> str:
    # A close reason must fit in a control frame (123 bytes of UTF-8).
    data = text.encode()
    return text if len(data) <= 120 else data[:117].decode(errors="ignore") + "..."
