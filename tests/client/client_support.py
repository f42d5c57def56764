"""Shared by the client tests: a scripted `websockets` server on 127.0.0.1 (`_run`) and the messages it sends,
and a policy that records what the client hands it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from sacbot.client import BotIdentity, SessionEnd, play
from sacbot.protocol import (
    BotIntent,
    BotState,
    GameEndedEventForBot,
    GameSetup,
    GameStartedEventForBot,
    Message,
    RoundEndedEventForBot,
    RoundStartedEvent,
    ServerHandshake,
    SkippedTurnEvent,
    TickEventForBot,
    decode,
)

SECRET = "s3cr3t"
IDENTITY = BotIdentity(name="TestBot", version="1.0", authors=["Tester"], game_types=["1v1"])


class RecordingPolicy:
    """Answers each tick with an intent that names the tick (round in turnRate, turn in targetSpeed)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def on_game_started(self, event: GameStartedEventForBot) -> None:
        self.calls.append(("game_started", event.my_id))

    def on_round_started(self, event: RoundStartedEvent) -> None:
        self.calls.append(("round_started", event.round_number))

    def on_tick(self, tick: TickEventForBot) -> BotIntent:
        self.calls.append(("tick", (tick.round_number, tick.turn_number)))
        # Deliberately incomplete: the client must complete it.
        return BotIntent(
            turn_rate=float(tick.round_number), target_speed=float(tick.turn_number), firepower=1.0
        )

    def on_round_ended(self, event: RoundEndedEventForBot) -> None:
        self.calls.append(("round_ended", event.round_number))

    def on_game_ended(self, event: GameEndedEventForBot) -> None:
        self.calls.append(("game_ended", event.results.total_score))

    def on_skipped_turn(self, event: SkippedTurnEvent) -> None:
        self.calls.append(("skipped", event.turn_number))


def _handshake(version: str = "1.1.0") -> ServerHandshake:
    return ServerHandshake(
        session_id="sess-42", name="scripted", variant="Tank Royale", version=version, game_types=["1v1"]
    )


def _setup() -> GameSetup:
    return GameSetup(
        game_type="1v1",
        arena_width=800,
        is_arena_width_locked=True,
        arena_height=600,
        is_arena_height_locked=True,
        min_number_of_participants=2,
        is_min_number_of_participants_locked=True,
        is_max_number_of_participants_locked=True,
        number_of_rounds=2,
        is_number_of_rounds_locked=False,
        gun_cooling_rate=0.1,
        is_gun_cooling_rate_locked=False,
        max_inactivity_turns=450,
        is_max_inactivity_turns_locked=False,
        turn_timeout=30_000,
        is_turn_timeout_locked=False,
        ready_timeout=1_000_000,
        is_ready_timeout_locked=False,
        default_turns_per_second=30,
    )


def _tick(rnd: int, turn: int, events: list[Any] | None = None) -> TickEventForBot:
    state = BotState(
        energy=100.0,
        x=400.0,
        y=300.0,
        direction=0.0,
        gun_direction=0.0,
        radar_direction=0.0,
        radar_sweep=0.0,
        speed=0.0,
        turn_rate=0.0,
        gun_turn_rate=0.0,
        radar_turn_rate=0.0,
        gun_heat=0.0,
        enemy_count=1,
    )
    return TickEventForBot(
        turn_number=turn, round_number=rnd, bot_state=state, bullet_states=[], events=events or []
    )


Handler = Callable[[ServerConnection, dict[str, Any]], Awaitable[None]]


async def _run(
    handler: Handler, policy: Any, secret: str | None = SECRET
) -> tuple[SessionEnd, dict[str, Any]]:
    seen: dict[str, Any] = {"frames": []}

    async def wrapped(ws: ServerConnection) -> None:
        try:
            await handler(ws, seen)
        except ConnectionClosed:
            pass
        seen["close_code"] = ws.close_code

    async with serve(wrapped, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        result = await asyncio.wait_for(play(policy, IDENTITY, f"ws://127.0.0.1:{port}", secret), timeout=20)
    return result, seen


async def _recv(ws: ServerConnection, seen: dict[str, Any]) -> Message:
    frame = await asyncio.wait_for(ws.recv(), timeout=10)
    assert isinstance(frame, str), "Tank Royale uses text frames"
    seen["frames"].append(frame)
    return decode(frame)
