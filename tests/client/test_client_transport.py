"""The client over a real socket: a scripted `websockets` server on 127.0.0.1 plays a short game with it."""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

import pytest
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from sacbot.client import run_bot
from sacbot.errors import UserError
from sacbot.protocol import (
    BotHandshake,
    BotIntent,
    BotListUpdate,
    BotReady,
    GameEndedEventForBot,
    GameStartedEventForBot,
    ResultsForBot,
    RoundEndedEventForBot,
    RoundStartedEvent,
    SkippedTurnEvent,
    WonRoundEvent,
    decode,
    encode,
)

from .client_support import IDENTITY, SECRET, RecordingPolicy, _handshake, _recv, _run, _setup, _tick


def _results(score: int) -> ResultsForBot:
    return ResultsForBot(
        rank=1,
        survival=50,
        last_survivor_bonus=10,
        bullet_damage=score - 60,
        bullet_kill_bonus=0,
        ram_damage=0,
        ram_kill_bonus=0,
        total_score=score,
        first_places=1,
        second_places=0,
        third_places=0,
    )


async def _intent(ws: ServerConnection, seen: dict[str, Any]) -> tuple[float, float]:
    intent = await _recv(ws, seen)
    assert isinstance(intent, BotIntent)
    return (intent.turn_rate or 0.0, intent.target_speed or 0.0)


async def _game(ws: ServerConnection, seen: dict[str, Any]) -> None:
    await ws.send(encode(_handshake()))
    seen["handshake"] = await _recv(ws, seen)
    await ws.send(encode(GameStartedEventForBot(my_id=1, game_setup=_setup())))
    seen["ready"] = await _recv(ws, seen)
    await ws.send(json.dumps({"type": "SomeFutureMessage", "x": 1}))  # unknown types are ignored
    await ws.send(encode(BotListUpdate(bots=[])))  # not for bots: ignored
    answered: list[tuple[float, float]] = []
    # Round 1: in order, then a skipped turn and a late tick.
    await ws.send(encode(RoundStartedEvent(round_number=1)))
    for turn in (1, 2):
        await ws.send(encode(_tick(1, turn)))
        answered.append(await _intent(ws, seen))
    await ws.send(encode(_tick(1, 3)))
    await ws.send(encode(SkippedTurnEvent(turn_number=3)))  # the server gave up on turn 3 ...
    await ws.send(encode(_tick(1, 4)))
    answered.append(await _intent(ws, seen))  # ... the late answer to tick 3 arrives anyway
    answered.append(await _intent(ws, seen))
    await ws.send(encode(_tick(1, 2)))  # a stale tick: no answer
    await ws.send(encode(_tick(1, 5, [WonRoundEvent(turn_number=5)])))
    answered.append(await _intent(ws, seen))
    await ws.send(encode(RoundEndedEventForBot(round_number=1, turn_number=5, results=_results(70))))
    await ws.send(encode(_tick(1, 6)))  # after the round's end: no answer
    # Round 2: the first tick overtakes its RoundStartedEvent.
    await ws.send(encode(_tick(2, 1)))
    answered.append(await _intent(ws, seen))
    await ws.send(encode(RoundStartedEvent(round_number=2)))
    await ws.send(encode(_tick(2, 2)))
    answered.append(await _intent(ws, seen))
    await ws.send(encode(RoundEndedEventForBot(round_number=2, turn_number=2, results=_results(140))))
    await ws.send(encode(GameEndedEventForBot(number_of_rounds=2, results=_results(140))))
    seen["answered"] = answered
    await asyncio.wait_for(ws.wait_closed(), timeout=10)


def test_client_plays_a_scripted_two_round_game_over_a_real_socket() -> None:
    policy = RecordingPolicy()
    result, seen = asyncio.run(_run(_game, policy))

    hs = seen["handshake"]
    assert isinstance(hs, BotHandshake)
    assert (
        hs.session_id == "sess-42"
        and hs.secret == SECRET
        and hs.name == "TestBot"
        and hs.authors == ["Tester"]
    )
    assert isinstance(seen["ready"], BotReady)
    # One answer per fresh tick, in order; the late tick 3 is answered, the stale and post-round ones are not.
    assert seen["answered"] == [
        (1.0, 1.0),
        (1.0, 2.0),
        (1.0, 3.0),
        (1.0, 4.0),
        (1.0, 5.0),
        (2.0, 1.0),
        (2.0, 2.0),
    ]
    intents = [json.loads(f) for f in seen["frames"] if '"BotIntent"' in f]
    assert len(intents) == 7
    complete = {
        "turnRate",
        "gunTurnRate",
        "radarTurnRate",
        "targetSpeed",
        "firepower",
        "adjustGunForBodyTurn",
    }
    complete |= {"adjustRadarForBodyTurn", "adjustRadarForGunTurn", "rescan", "fireAssist"}
    for intent in intents:
        assert set(intent) == complete | {"type"}  # complete, and no turn number
    assert (
        intents[0]["fireAssist"] is True
        and intents[0]["gunTurnRate"] == 0.0
        and intents[0]["firepower"] == 1.0
    )
    assert policy.calls == [
        ("game_started", 1),
        ("round_started", 1),
        ("tick", (1, 1)),
        ("tick", (1, 2)),
        ("tick", (1, 3)),
        ("skipped", 3),
        ("tick", (1, 4)),
        ("tick", (1, 5)),
        ("round_ended", 1),
        ("round_started", 2),
        ("tick", (2, 1)),
        ("tick", (2, 2)),
        ("round_ended", 2),
        ("game_ended", 140),
    ]
    assert result.game_ended and not result.aborted
    assert result.stats.skipped_turns == 1 and result.stats.stale_ticks == 2 and result.stats.intents == 7
    assert seen["close_code"] == 1000  # the bot closed cleanly after the game


async def _wrong_secret(ws: ServerConnection, seen: dict[str, Any]) -> None:
    await ws.send(encode(_handshake()))
    hs = decode(await ws.recv())
    assert isinstance(hs, BotHandshake)
    seen["secret"] = hs.secret
    await ws.close(1008, "Invalid secret")


def test_wrong_secret_ends_with_a_clear_user_error() -> None:
    with pytest.raises(UserError) as info:
        asyncio.run(_run(_wrong_secret, RecordingPolicy(), secret="nope"))
    message = str(info.value)
    assert "Invalid secret" in message and "1008" in message and "SERVER_SECRET" in message
    assert info.value.exit_code != 0


async def _future_server(ws: ServerConnection, seen: dict[str, Any]) -> None:
    await ws.send(encode(_handshake(version="2.0.0")))
    try:
        seen["reply"] = await asyncio.wait_for(ws.recv(), timeout=10)
    except ConnectionClosed as exc:
        seen["reply"] = None
        seen["client_close"] = exc.rcvd.code if exc.rcvd else None


def test_server_with_another_major_version_is_refused() -> None:
    policy = RecordingPolicy()
    with pytest.raises(UserError) as info:
        asyncio.run(_run(_future_server, policy))
    assert "2.0.0" in str(info.value) and "1.x" in str(info.value)
    assert policy.calls == []


def test_refused_connection_ends_with_a_clear_user_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(UserError) as info:
        run_bot(RecordingPolicy(), IDENTITY, f"ws://127.0.0.1:{port}", None)
    assert f"127.0.0.1:{port}" in str(info.value) and "cannot connect" in str(info.value)
    with pytest.raises(UserError) as info:
        run_bot(RecordingPolicy(), IDENTITY, "http://127.0.0.1:1", None)
    assert info.value.exit_code == 2
