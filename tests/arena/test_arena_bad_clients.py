"""Misbehaving clients are closed with a clear code (or ignored) and never disturb the others.

One arena serves the whole module while two bench bots play a long game on it at TPS 300; after each bad
client, the game is still ticking for a well-behaved observer and a new client still gets its handshake.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, cast

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from sacbot.arena.connection import MAX_MESSAGE_BYTES
from sacbot.arena.controller import Controller
from sacbot.arena.server import EmbeddedArena
from sacbot.engine import game_setup_for

Arena = tuple[EmbeddedArena, list[subprocess.Popen[bytes]]]


@pytest.fixture(scope="module")
def arena(wait_for: Callable[[Callable[[], object], float, str], None]) -> Iterator[EmbeddedArena]:
    with EmbeddedArena(tps=300, bot_secrets={"bs"}) as arena:
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "sacbot.bench.benchbot"],
                env=dict(os.environ, SERVER_URL=arena.url, SERVER_SECRET="bs", BOT_NAME=f"Good{i}"),
                start_new_session=True,
            )
            for i in range(2)
        ]

        async def start() -> None:
            ctl = await Controller.connect(arena.url)
            bots = await ctl.wait_for_bots(["Good0", "Good1"], 30)
            await ctl.start_game(game_setup_for("1v1", number_of_rounds=1000), bots)
            await ctl.close()

        try:
            asyncio.run(start())
            wait_for(lambda: cast(int, arena.call(lambda c: c.stats.turns)) > 10, 20, "the background game")
            yield arena
        finally:
            for p in procs:
                p.kill()
                p.wait()


async def _hello(url: str) -> tuple[ClientConnection, str]:
    ws = await connect(url)
    hs = json.loads(await ws.recv())
    assert hs["type"] == "ServerHandshake"
    return ws, hs["sessionId"]


async def _as_bot(url: str, secret: str | None = "bs") -> ClientConnection:
    ws, sid = await _hello(url)
    msg: dict[str, Any] = {
        "type": "BotHandshake",
        "sessionId": sid,
        "name": "Bad",
        "version": "1",
        "authors": ["x"],
    }
    if secret:
        msg["secret"] = secret
    await ws.send(json.dumps(msg))
    return ws


async def _closed_with(ws: ClientConnection) -> tuple[int, str]:
    try:
        while True:
            await asyncio.wait_for(ws.recv(), 10)
    except ConnectionClosed as exc:
        assert exc.rcvd is not None, "closed without a close frame"
        return exc.rcvd.code, exc.rcvd.reason


def _others_unharmed(arena: EmbeddedArena) -> None:
    """The background game keeps ticking for a fresh observer, and the server still greets new clients."""

    async def check() -> None:
        obs = await Controller.connect(arena.url, observer=True)
        ticks = 0
        while ticks < 3:
            raw = await asyncio.wait_for(obs.ws.recv(), 10)
            ticks += '"TickEventForObserver"' in raw
        await obs.close()
        assert {b.name for b in obs.bots} >= {"Good0", "Good1"}

    asyncio.run(check())
    assert arena.call(lambda c: c.run is not None)


async def _malformed_json(url: str) -> ClientConnection:
    ws = await _as_bot(url)
    await ws.send('{"type": "BotIntent", "turnRate": ')
    return ws


async def _unknown_type(url: str) -> ClientConnection:
    ws = await _as_bot(url)
    await ws.send('{"type": "LaunchMissiles"}')
    return ws


async def _no_handshake(url: str) -> ClientConnection:
    ws, _ = await _hello(url)
    await ws.send('{"type": "BotReady"}')
    return ws


async def _bot_sends_control(url: str) -> ClientConnection:
    ws = await _as_bot(url)
    await ws.send('{"type": "StopGame"}')
    return ws


async def _observer_sends_control(url: str) -> ClientConnection:
    ws, sid = await _hello(url)
    await ws.send(json.dumps({"type": "ObserverHandshake", "sessionId": sid, "name": "o", "version": "1"}))
    await ws.send('{"type": "PauseGame"}')
    return ws


async def _flood(url: str) -> ClientConnection:
    ws = await _as_bot(url)
    intent = '{"type":"BotIntent","turnRate":1}'
    try:
        for _ in range(5000):
            await ws.send(intent)
    except ConnectionClosed:
        pass
    return ws


async def _flood_bytes(url: str) -> ClientConnection:
    ws = await _as_bot(url)
    big = '{"type":"BotIntent","stdOut":"%s"}' % ("y" * 900_000)
    try:
        for _ in range(40):
            await ws.send(big)
    except ConnectionClosed:
        pass
    return ws


def _intent_with(raw_number: str) -> Callable[[str], Awaitable[ClientConnection]]:
    async def send(url: str) -> ClientConnection:
        ws = await _as_bot(url)
        await ws.send(f'{{"type":"BotIntent","turnRate":{raw_number},"targetSpeed":8}}')
        return ws

    return send


async def _binary(url: str) -> ClientConnection:
    ws = await _as_bot(url)
    await ws.send(b"\x00\x01binary")
    return ws


async def _too_big(url: str) -> ClientConnection:
    ws = await _as_bot(url)
    try:
        await ws.send('{"type":"BotIntent","stdOut":"%s"}' % ("x" * (MAX_MESSAGE_BYTES + 10)))
    except ConnectionClosed:
        pass
    return ws


async def _wrong_secret(url: str) -> ClientConnection:
    return await _as_bot(url, secret="guess")


async def _wrong_session(url: str) -> ClientConnection:
    ws, _ = await _hello(url)
    await ws.send(
        json.dumps(
            {
                "type": "BotHandshake",
                "sessionId": "x" * 22,
                "name": "B",
                "version": "1",
                "authors": ["a"],
                "secret": "bs",
            }
        )
    )
    return ws


CASES: list[tuple[str, Callable[[str], Awaitable[ClientConnection]], int, str]] = [
    ("malformed JSON", _malformed_json, 1007, "not valid JSON"),
    ("unknown type", _unknown_type, 1007, "unknown message type"),
    ("message before the handshake", _no_handshake, 1008, "Expected a handshake"),
    ("bot sends a control command", _bot_sends_control, 1008, "not allowed for the bot role"),
    ("observer sends a control command", _observer_sends_control, 1008, "not allowed for the observer role"),
    ("flooding", _flood, 1008, "Flooding"),
    ("flooding with big messages", _flood_bytes, 1008, "Flooding"),
    ("NaN in an intent", _intent_with("NaN"), 1007, "turnRate"),
    ("infinity in an intent", _intent_with("Infinity"), 1007, "turnRate"),
    ("overflowing number in an intent", _intent_with("1e999"), 1007, "turnRate"),
    ("huge integer in an intent", _intent_with("9" * 400), 1007, "Invalid message"),
    ("huge finite number in an intent", _intent_with("1e300"), 1007, "out of range"),
    ("binary frame", _binary, 1003, "Binary"),
    ("message over the size limit", _too_big, 1009, ""),
    ("wrong secret", _wrong_secret, 1008, "Invalid secret"),
    ("wrong session id", _wrong_session, 1008, "session id"),
]


@pytest.mark.parametrize(("what", "misbehave", "code", "reason"), CASES, ids=[c[0] for c in CASES])
def test_bad_client_is_closed_and_others_are_served(
    arena: EmbeddedArena,
    what: str,
    misbehave: Callable[[str], Awaitable[ClientConnection]],
    code: int,
    reason: str,
) -> None:
    async def run() -> tuple[int, str]:
        ws = await misbehave(arena.url)
        return await _closed_with(ws)

    got_code, got_reason = asyncio.run(run())
    assert got_code == code, (what, got_code, got_reason)
    assert reason in got_reason, (what, got_reason)
    _others_unharmed(arena)


def test_a_participant_sending_nan_is_dropped_and_the_game_goes_on() -> None:
    with EmbeddedArena() as arena:
        good = subprocess.Popen(
            [sys.executable, "-m", "sacbot.bench.benchbot"],
            env=dict(os.environ, SERVER_URL=arena.url, BOT_NAME="Good"),
            start_new_session=True,
        )
        try:

            async def run() -> tuple[int, Any]:
                bad = await _as_bot(arena.url)
                async with await Controller.connect(arena.url) as ctl:
                    bots = await ctl.wait_for_bots(["Good", "Bad"], 30)
                    game = asyncio.ensure_future(
                        ctl.run_game(game_setup_for("1v1", number_of_rounds=1), bots)
                    )
                    while True:
                        msg = json.loads(await bad.recv())
                        if msg["type"] == "GameStartedEventForBot":
                            await bad.send('{"type":"BotReady"}')
                        if msg["type"] == "TickEventForBot" and msg["turnNumber"] >= 3:
                            await bad.send('{"type":"BotIntent","firepower":NaN}')
                            break
                    code, _ = await _closed_with(bad)
                    result = await asyncio.wait_for(game, 60)
                return code, result

            code, result = asyncio.run(run())
        finally:
            good.kill()
            good.wait()
    assert code == 1007
    assert result.number_of_rounds == 1 and {r.name for r in result.results} == {"Good", "Bad"}
