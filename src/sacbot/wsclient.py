"""A WebSocket client connection of ours: an asyncio protocol driving websockets' sans-I/O `ClientProtocol`
through its public methods only. The bot client (`sacbot.client.transport`) and the arena's controller client
(`sacbot.arena.controller`) both run on it, each with its own handling of the messages it receives.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Self

from websockets.client import ClientProtocol
from websockets.exceptions import InvalidState
from websockets.frames import CloseCode
from websockets.protocol import State
from websockets.uri import parse_uri
from websockets.version import version as websockets_version

from sacbot.wsstream import WsStream

USER_AGENT = f"Python/{sys.version_info[0]}.{sys.version_info[1]} websockets/{websockets_version}"
CLOSE_TIMEOUT_S = 10.0  # after a close frame, how long the peer gets to end the TCP connection
PING_INTERVAL_S = 20.0  # keepalive: a ping this often; no pong by the next one closes with 1011


class ClientStream(WsStream[ClientProtocol]):
    """A WebSocket client connection: a `WsStream` over websockets' sans-I/O `ClientProtocol`.

    Complete data messages (fragments joined) go to `on_message`, right inside `data_received`. `open(url)`
    connects and waits for the opening handshake; `close(code, reason)` runs the closing one. Shared by the
    controller and the bot client.
    """

    def __init__(self, protocol: ClientProtocol, ping_interval: float | None = None) -> None:
        super().__init__(protocol)
        self.loop = asyncio.get_running_loop()
        self.opened: asyncio.Future[None] = self.loop.create_future()  # the handshake done, or its error
        self.closed: asyncio.Future[None] = self.loop.create_future()  # the TCP connection gone
        self._ping_interval = ping_interval
        self._ping_timer: asyncio.TimerHandle | None = None
        self._close_timer: asyncio.TimerHandle | None = None

    @classmethod
    async def open(
        cls, url: str, *, max_size: int | None, timeout: float, ping_interval: float | None = None
    ) -> Self:
        """Connect to `url` (ws:// or wss://) and complete the opening handshake within `timeout` seconds.

        Raises InvalidURI, OSError, TimeoutError or the handshake's InvalidHandshake."""
        uri = parse_uri(url)
        loop = asyncio.get_running_loop()
        stream = cls(ClientProtocol(uri, max_size=max_size), ping_interval)
        try:
            async with asyncio.timeout(timeout):
                await loop.create_connection(lambda: stream, uri.host, uri.port, ssl=uri.secure or None)
                await stream.opened
        except BaseException:
            stream.abort()
            raise
        return stream

    @property
    def state(self) -> State:
        return self.protocol.state

    def on_closed(self) -> None:
        """The TCP connection is gone (`protocol.state` is CLOSED)."""

    def send_text(self, data: bytes) -> None:
        """Send one text message now (no await); raises ConnectionClosed once the connection is closed."""
        protocol = self.protocol
        try:
            protocol.send_text(data)  # InvalidState unless the connection is open
        except InvalidState:
            if protocol.state is State.CLOSED:
                raise protocol.close_exc from None
            return  # connecting or closing: the message would be dropped by the peer anyway
        self.flush()

    async def close(self, code: int = CloseCode.NORMAL_CLOSURE, reason: str = "") -> None:
        """Start the closing handshake (if still open) and wait until the connection is gone."""
        if self.protocol.state is State.OPEN:
            self.protocol.send_close(code, reason)
            self.flush()
        elif self.protocol.state is State.CONNECTING:
            self.abort()
        await asyncio.shield(self.closed)

    def abort(self) -> None:
        if self.transport is not None:
            self.transport.abort()

    def on_closing(self) -> None:
        self._close_timer = self.loop.call_later(CLOSE_TIMEOUT_S, self.abort)

    # ---- asyncio.Protocol --------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        request = self.protocol.connect()
        request.headers["User-Agent"] = USER_AGENT
        self.protocol.send_request(request)
        self.flush()

    def on_handshake(self, event: object) -> None:
        self._opened()

    def connection_lost(self, exc: Exception | None) -> None:
        self.protocol.receive_eof()  # idempotent: the state is CLOSED from here on
        for timer in (self._ping_timer, self._close_timer):
            if timer is not None:
                timer.cancel()
        if not self.opened.done():
            self.opened.set_exception(exc or ConnectionError("connection closed during the handshake"))
            self.opened.exception()  # retrieved: nobody may be waiting any more
        if not self.closed.done():
            self.closed.set_result(None)
        self.on_closed()

    # ---- frames -----------------------------------------------------------------------------------

    def _opened(self) -> None:
        if self.opened.done():
            return
        failure = self.protocol.handshake_exc
        if failure is not None:
            self.opened.set_exception(failure)
            return
        self.opened.set_result(None)
        if self._ping_interval is not None:
            self._ping_timer = self.loop.call_later(self._ping_interval, self._keepalive)

    def _keepalive(self) -> None:
        self._ping_timer = None
        self.keepalive()
        if self._ping_interval is not None and self.protocol.state is State.OPEN:
            self._ping_timer = self.loop.call_later(self._ping_interval, self._keepalive)
