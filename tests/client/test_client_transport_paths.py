"""The client's in-`data_received` fast path over a real socket: fragmented frames, bad messages, policy
errors and a server that goes away mid-game are handled as a plain recv loop would handle them."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any

import pytest
from websockets.asyncio.server import ServerConnection
from websockets.sync.server import ServerConnection as SyncConnection
from websockets.sync.server import serve as serve_sync

from sacbot.client.transport import ClientInterrupt, run_bot
from sacbot.errors import UserError
from sacbot.protocol import BotIntent, GameStartedEventForBot, RoundStartedEvent, TickEventForBot, encode

from .client_support import IDENTITY, SECRET, RecordingPolicy, _handshake, _recv, _run, _setup, _tick


async def _into_round(ws: ServerConnection, seen: dict[str, Any]) -> None:
    await ws.send(encode(_handshake()))
    await _recv(ws, seen)  # BotHandshake
    await ws.send(encode(GameStartedEventForBot(my_id=1, game_setup=_setup())))
    await _recv(ws, seen)  # BotReady
    await ws.send(encode(RoundStartedEvent(round_number=1)))


async def _fragments_then_close(ws: ServerConnection, seen: dict[str, Any]) -> None:
    await _into_round(ws, seen)
    text = encode(_tick(1, 1))
    await ws.send([text[:10], text[10:50], text[50:]])  # one message in three frames
    seen["intent"] = await _recv(ws, seen)
    await ws.close(1001, "going away")


def test_fragmented_tick_is_answered_and_a_server_close_ends_the_play() -> None:
    policy = RecordingPolicy()
    result, seen = asyncio.run(_run(_fragments_then_close, policy))
    assert isinstance(seen["intent"], BotIntent) and seen["intent"].target_speed == 1.0
    assert ("tick", (1, 1)) in policy.calls
    assert not result.game_ended and not result.aborted
    assert result.close_code == 1001 and result.close_reason == "going away"
    assert result.stats.intents == 1


async def _bad_tick(ws: ServerConnection, seen: dict[str, Any]) -> None:
    await _into_round(ws, seen)
    tick = json.loads(encode(_tick(1, 1)))
    tick["botState"]["energy"] = "lots"
    await ws.send(json.dumps(tick))
    await asyncio.wait_for(ws.wait_closed(), timeout=10)


def test_a_bad_message_names_its_field_and_closes_with_1002() -> None:
    seen: list[dict[str, Any]] = []

    async def handler(ws: ServerConnection, s: dict[str, Any]) -> None:
        seen.append(s)
        await _bad_tick(ws, s)

    with pytest.raises(UserError) as info:
        asyncio.run(_run(handler, RecordingPolicy()))
    assert "botState.energy" in str(info.value) and "TickEventForBot" in str(info.value)
    assert seen[0]["close_code"] == 1002


class _Exploding(RecordingPolicy):
    def on_tick(self, tick: TickEventForBot) -> BotIntent:
        raise RuntimeError("policy bug")


async def _one_tick(ws: ServerConnection, seen: dict[str, Any]) -> None:
    await _into_round(ws, seen)
    await ws.send(encode(_tick(1, 1)))
    await asyncio.wait_for(ws.wait_closed(), timeout=10)


def test_a_policy_error_propagates_and_closes_with_1011() -> None:
    seen: list[dict[str, Any]] = []

    async def handler(ws: ServerConnection, s: dict[str, Any]) -> None:
        seen.append(s)
        await _one_tick(ws, s)

    with pytest.raises(RuntimeError, match="policy bug"):
        asyncio.run(_run(handler, _Exploding(), secret=SECRET))
    assert seen[0]["close_code"] == 1011


def test_an_interrupt_from_another_thread_closes_the_client_and_a_late_one_does_nothing() -> None:
    """How `sacbot play` ends its client on SIGTERM: the task is cancelled, the connection closes with 1001;
    an interrupt that comes after the client has finished must not land anywhere."""
    seen: dict[str, Any] = {}
    ready = threading.Event()

    def handler(ws: SyncConnection) -> None:
        ws.send(encode(_handshake()))
        ws.recv(timeout=10)  # BotHandshake
        ws.send(encode(GameStartedEventForBot(my_id=1, game_setup=_setup())))
        ws.recv(timeout=10)  # BotReady
        ready.set()
        try:
            ws.recv(timeout=10)
        except Exception:
            pass
        seen["close_code"] = ws.close_code

    interrupt = ClientInterrupt()
    with serve_sync(handler, "127.0.0.1", 0) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        port = server.socket.getsockname()[1]

        def stop_when_ready() -> None:
            if ready.wait(10):
                interrupt.interrupt()

        threading.Thread(target=stop_when_ready, daemon=True).start()
        with pytest.raises(asyncio.CancelledError):
            run_bot(RecordingPolicy(), IDENTITY, f"ws://127.0.0.1:{port}", SECRET, interrupt)
        deadline = time.monotonic() + 10
        while "close_code" not in seen and time.monotonic() < deadline:
            time.sleep(0.01)
        server.shutdown()
    assert seen["close_code"] == 1001
    interrupt.interrupt()  # the client is gone: nothing is cancelled, nothing is raised here
    time.sleep(0.05)
