"""A minimal, fast bot process for `sacbot bench arena`: `python -m sacbot.bench.benchbot`.

It speaks the bot protocol over a real WebSocket connection (`sacbot.wsclient.ClientStream`: websockets'
sans-I/O client), using the shared codec, and answers every tick with one fixed, complete intent: drive, turn,
sweep the radar, fire whenever the gun is cool. The bench then measures the arena, not a policy. Like the
server, it answers a message right inside `data_received`, without waking a coroutine per message.
Identity comes from BOT_NAME / BOT_VERSION and the server from SERVER_URL / SERVER_SECRET, as for a booted
bot. With `--client` it runs the same intent on `sacbot.client` instead.
"""

from __future__ import annotations

import asyncio
import os
import sys

from websockets.exceptions import ConnectionClosed

from sacbot.protocol import BotHandshake, BotIntent, BotReady, ServerHandshake, decode, encode
from sacbot.wsclient import ClientStream

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


class _BenchStream(ClientStream):
    """Replies to ticks and the game start inside `data_received`; the server's handshake goes to `hello`."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.hello: asyncio.Future[bytes] = self.loop.create_future()

    def on_message(self, data: bytes, text: bool) -> None:
        if not self.hello.done():
            self.hello.set_result(data)
            return
        # Only the message type matters here; the server writes `type` first.
        head = data[:40]
        if head.startswith(b'{"type":"TickEventForBot"'):
            self.send_text(INTENT)
        elif head.startswith(b'{"type":"GameStartedEventForBot"'):
            self.send_text(READY)


async def main() -> None:
    url = os.environ.get("SERVER_URL", "ws://localhost:7654")
    ws = await _BenchStream.open(url, max_size=None, timeout=10.0)
    hello = decode(await ws.hello)
    assert isinstance(hello, ServerHandshake)
    name = os.environ.get("BOT_NAME", "BenchBot")
    version = os.environ.get("BOT_VERSION", "1.0")
    secret = os.environ.get("SERVER_SECRET") or None
    hs = BotHandshake(
        session_id=hello.session_id, name=name, version=version, authors=["sacbot"], secret=secret
    )
    ws.send_text(encode(hs).encode())
    await ws.closed


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
