"""The bot side of a Tank Royale session as a pure state machine: messages in, at most one reply out.

No I/O: the transport decodes a frame, calls `receive`, and sends what comes back. The session trusts
the numbers inside messages rather than their order (the server handles messages on a thread pool): a tick
of a new round starts that round even before its RoundStartedEvent arrives; a tick older than one already
answered, or from a round that has ended, gets no reply; a late tick after skipped turns is simply answered.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from sacbot.client.identity import BotIdentity
from sacbot.client.policy import BotPolicy
from sacbot.errors import UserError
from sacbot.protocol import (
    BotIntent,
    BotReady,
    GameAbortedEvent,
    GameEndedEventForBot,
    GameStartedEventForBot,
    Message,
    RoundEndedEventForBot,
    RoundStartedEvent,
    ServerHandshake,
    SkippedTurnEvent,
    TickEventForBot,
)

# The protocol generation this client speaks; the official libraries accept a server with the same major.
PROTOCOL_MAJOR = 1


class Phase(enum.Enum):
    CONNECTING = "awaiting ServerHandshake"
    LOBBY = "in the lobby"
    GAME = "in a game"
    ENDED = "game over"


@dataclass
class SessionStats:
    ticks: int = 0
    intents: int = 0
    skipped_turns: int = 0
    stale_ticks: int = 0
    rounds_ended: int = 0


def check_server_version(version: str) -> None:
    """Raise UserError unless the server's version has our major number, as the official libraries check."""
    head = version.strip().split(".")
    try:
        major = int(head[0])
    except ValueError:
        raise UserError(f"the server reports an unreadable version {version!r}") from None
    if major != PROTOCOL_MAJOR:
        raise UserError(
            f"the server runs Tank Royale {version}, but this bot speaks protocol {PROTOCOL_MAJOR}.x; "
            "use a server with the same major version"
        )


def complete_intent(intent: BotIntent) -> BotIntent:
    """The intent with every numeric field and flag set (the server's defaults for the missing ones).

    The server resets omitted fields on the first intent of a turn anyway; sending them explicitly makes every
    intent mean the same on any server. Returns the same object when it is already complete.
    """
    if (
        intent.turn_rate is not None
        and intent.gun_turn_rate is not None
        and intent.radar_turn_rate is not None
        and intent.target_speed is not None
        and intent.firepower is not None
        and intent.adjust_gun_for_body_turn is not None
        and intent.adjust_radar_for_body_turn is not None
        and intent.adjust_radar_for_gun_turn is not None
        and intent.rescan is not None
        and intent.fire_assist is not None
    ):
        return intent
    return BotIntent(
        turn_rate=0.0 if intent.turn_rate is None else intent.turn_rate,
        gun_turn_rate=0.0 if intent.gun_turn_rate is None else intent.gun_turn_rate,
        radar_turn_rate=0.0 if intent.radar_turn_rate is None else intent.radar_turn_rate,
        target_speed=0.0 if intent.target_speed is None else intent.target_speed,
        firepower=0.0 if intent.firepower is None else intent.firepower,
        adjust_gun_for_body_turn=bool(intent.adjust_gun_for_body_turn),
        adjust_radar_for_body_turn=bool(intent.adjust_radar_for_body_turn),
        adjust_radar_for_gun_turn=bool(intent.adjust_radar_for_gun_turn),
        rescan=bool(intent.rescan),
        fire_assist=True if intent.fire_assist is None else intent.fire_assist,
        body_color=intent.body_color,
        turret_color=intent.turret_color,
        radar_color=intent.radar_color,
        bullet_color=intent.bullet_color,
        scan_color=intent.scan_color,
        tracks_color=intent.tracks_color,
        gun_color=intent.gun_color,
        std_out=intent.std_out,
        std_err=intent.std_err,
        team_messages=intent.team_messages,
        debug_graphics=intent.debug_graphics,
    )


class BotSession:
    """One bot connection: handshake, lobby, one game of rounds and turns, then done."""

    def __init__(self, policy: BotPolicy, identity: BotIdentity, secret: str | None = None) -> None:
        self.policy = policy
        self.identity = identity
        self.secret = secret
        self.phase = Phase.CONNECTING
        self.server: ServerHandshake | None = None
        self.game: GameStartedEventForBot | None = None
        self.aborted = False
        self.stats = SessionStats()
        # Round bookkeeping by the numbers inside messages.
        self.round = 0  # highest round started
        self.round_open = False  # `round` has started and not ended
        self.last_turn = 0  # highest turn answered in `round`
        self._on_skipped = getattr(policy, "on_skipped_turn", None)
        self._on_aborted = getattr(policy, "on_game_aborted", None)

    @property
    def finished(self) -> bool:
        return self.phase is Phase.ENDED

    def on_tick(self, tick: TickEventForBot) -> BotIntent | None:
        """The realtime path: the complete intent for this tick, or None for a stale one."""
        self.stats.ticks += 1
        rnd = tick.round_number
        if self.phase is not Phase.GAME or rnd < self.round or (rnd == self.round and not self.round_open):
            self.stats.stale_ticks += 1
            return None
        if rnd > self.round:
            self._start_round(rnd)  # the tick overtook its RoundStartedEvent
        elif tick.turn_number <= self.last_turn:
            self.stats.stale_ticks += 1
            return None
        self.last_turn = tick.turn_number
        intent = complete_intent(self.policy.on_tick(tick))
        self.stats.intents += 1
        return intent

    def receive(self, msg: Message) -> Message | None:
        """Feed one message from the server; returns the reply to send, if any."""
        cls = msg.__class__
        if cls is TickEventForBot:
            return self.on_tick(msg)  # type: ignore[arg-type]
        if cls is SkippedTurnEvent:
            self.stats.skipped_turns += 1
            if self._on_skipped is not None and self.phase is Phase.GAME:
                self._on_skipped(msg)
            return None
        if cls is ServerHandshake:
            assert isinstance(msg, ServerHandshake)
            if self.phase is not Phase.CONNECTING:
                return None
            check_server_version(msg.version)
            self.server = msg
            self.phase = Phase.LOBBY
            return self.identity.handshake(msg.session_id, self.secret)
        if cls is GameStartedEventForBot:
            assert isinstance(msg, GameStartedEventForBot)
            if self.phase is not Phase.LOBBY:
                return None
            self.game = msg
            self.phase = Phase.GAME
            self.round, self.round_open, self.last_turn = 0, False, 0
            self.policy.on_game_started(msg)
            return BotReady()
        if cls is RoundStartedEvent:
            assert isinstance(msg, RoundStartedEvent)
            if self.phase is Phase.GAME and msg.round_number > self.round:
                self._start_round(msg.round_number, msg)
            return None
        if cls is RoundEndedEventForBot:
            assert isinstance(msg, RoundEndedEventForBot)
            if self.phase is Phase.GAME and msg.round_number >= self.round:
                if msg.round_number > self.round:  # its round's messages never reached us; still a round end
                    self.round = msg.round_number
                self.round_open = False
                self.stats.rounds_ended += 1
                self.policy.on_round_ended(msg)
            return None
        if cls is GameEndedEventForBot:
            assert isinstance(msg, GameEndedEventForBot)
            if self.phase is Phase.GAME:
                self.round_open = False
                self.phase = Phase.ENDED
                self.policy.on_game_ended(msg)
            return None
        if cls is GameAbortedEvent:
            if self.phase is Phase.GAME or self.phase is Phase.LOBBY:
                self.phase = Phase.ENDED
                self.aborted = True
                if self._on_aborted is not None:
                    self._on_aborted()
            return None
        return None  # messages for other roles or of no interest to a bot

    def _start_round(self, number: int, event: RoundStartedEvent | None = None) -> None:
        self.round, self.round_open, self.last_turn = number, True, 0
        self.policy.on_round_started(event if event is not None else RoundStartedEvent(round_number=number))
