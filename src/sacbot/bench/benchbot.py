"""A minimal, fast bot process for `sacbot bench arena`: `python -m sacbot.bench.benchbot`.

It speaks the bot protocol over a real `websockets` connection, using the shared codec, and answers every tick
with one fixed, complete intent: drive, turn, sweep the radar, fire whenever the gun is cool. The bench then
measures the arena, not a policy. Like the server, it answers a frame right inside `data_received`, without
waking a coroutine per message. Identity comes from BOT_NAME / BOT_VERSION and the server from SERVER_URL /
SERVER_SECRET, as for a booted bot. With `--client` it runs the same intent on `sacbot.client` instead.
"""

from __future__ import annotations

import asyncio
import os
import sys

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed
from websockets.frames import Frame, Opcode
from websockets.protocol import Event

from sacbot.protocol import BotHandshake, BotIntent, BotReady, ServerHandshake, decode, encode

INTENT = encode(
    BotIntent(
        turn_rate=5.0,
        gun_turn_rate=10.0,
        radar_turn_rate=45.0,
        target_speed=8.0,
        firepower=1.0,
        adjust_gun_for_body_turn=False,
        adjust_radar_for_body_turn=False,
        adjust_radar_for_gun_turn=False,
        rescan=False,
        fire_assist=True,
    )
).encode()
READY = encode(BotReady()).encode()


class _BenchConnection(ClientConnection):
    playing = False

    def process_event(self, event: Event) -> None:
        if not self.playing or not isinstance(event, Frame) or event.opcode is not Opcode.TEXT:
            super().process_event(event)
            return
        # Only the message type matters here; the server writes `type` first.
        head = bytes(event.data[:40])
        if head.startswith(b'{"type":"TickEventForBot"'):
            reply = INTENT
        elif head.startswith(b'{"type":"GameStartedEventForBot"'):
            reply = READY
        else:
            return
        self.protocol.send_text(reply)
        self.send_data()


async def main() -> None:
    url = os.environ.get("SERVER_URL", "ws://localhost:7654")
    async with connect(url, compression=None, max_size=None, create_connection=_BenchConnection) as ws:
        hello = decode(await ws.recv())
        assert isinstance(hello, ServerHandshake)
        name = os.environ.get("BOT_NAME", "BenchBot")
        version = os.environ.get("BOT_VERSION", "1.0")
        secret = os.environ.get("SERVER_SECRET") or None
        hs = BotHandshake(
            session_id=hello.session_id, name=name, version=version, authors=["sacbot"], secret=secret
        )
        assert isinstance(ws, _BenchConnection)
        ws.playing = True
        await ws.send(encode(hs))
        await ws.wait_closed()


class FixedPolicy:
    """The same fixed intent as a `sacbot.client` policy (`--client`: the bench on our bot client)."""

    def __init__(self) -> None:
        self.intent = decode(INTENT)

    def on_game_started(self, event: object) -> None: ...

    def on_round_started(self, event: object) -> None: ...

    def on_tick(self, tick: object) -> BotIntent:
        assert isinstance(self.intent, BotIntent)
        return self.intent

    def on_round_ended(self, event: object) -> None: ...

    def on_game_ended(self, event: object) -> None: ...


def main_client() -> None:
    from sacbot.client import resolve_identity, run_bot

    identity = resolve_identity(
        {
            "name": os.environ.get("BOT_NAME", "BenchBot"),
            "version": os.environ.get("BOT_VERSION", "1.0"),
            "authors": ["sacbot"],
        }
    )
    run_bot(FixedPolicy(), identity)


if __name__ == "__main__":
    try:
        if "--client" in sys.argv[1:]:
            main_client()
        else:
            asyncio.run(main())
    except (ConnectionClosed, KeyboardInterrupt, OSError):
        pass
