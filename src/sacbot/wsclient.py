"""A WebSocket client connection of ours: an asyncio protocol driving websockets' sans-I/O `ClientProtocol`
through its public methods only. The bot client (`sacbot.client.transport`) and the arena's controller client
(`sacbot.arena.controller`) both run on it, each with its own handling of the messages it receives.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Self

from websockets.client import ClientProtocol
from websockets.frames import CloseCode, Frame, Opcode
from websockets.protocol import State
from websockets.uri import parse_uri
from websockets.version import version as websockets_version

USER_AGENT = f"Python/{sys.version_info[0]}.{sys.version_info[1]} websockets/{websockets_version}"
CLOSE_TIMEOUT_S = 10.0  # after a close frame, how long the peer gets to end the TCP connection
PING_INTERVAL_S = 20.0  # keepalive: a ping this often; no pong by the next one closes with 1011


class ClientStream(asyncio.Protocol):
    """A WebSocket client connection: an asyncio protocol of ours driving websockets' sans-I/O
    `ClientProtocol` through its public methods (`connect`, `send_request`, `receive_data`,
    `events_received`, `data_to_send`, `send_text`, `send_close`, `send_ping`, `fail`).

    Pings are answered and close frames echoed by `ClientProtocol` itself; complete data messages (fragments
    joined) go to `on_message`, right inside `data_received`. `open(url)` connects and waits for the opening
    handshake; `close(code, reason)` runs the closing one. Shared by the controller and the bot client.
    """

    def __init__(self, protocol: ClientProtocol, ping_interval: float | None = None) -> None:
        self.protocol = protocol
        self.loop = asyncio.get_running_loop()
        self.transport: asyncio.Transport | None = None
        self.opened: asyncio.Future[None] = self.loop.create_future()  # the handshake done, or its error
        self.closed: asyncio.Future[None] = self.loop.create_future()  # the TCP connection gone
        self._parts: list[bytes] | None = None  # a fragmented message so far
        self._text = True
        self._ping_interval = ping_interval
        self._ping_timer: asyncio.TimerHandle | None = None
        self._ping_out = False
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

    def on_message(self, data: bytes, text: bool) -> None:
        """One complete data message (the bytes of a text message are not decoded yet)."""

    def on_closed(self) -> None:
        """The TCP connection is gone (`protocol.state` is CLOSED)."""

    def send_text(self, data: bytes) -> None:
        """Send one text message now (no await); raises ConnectionClosed once the connection is closed."""
        protocol = self.protocol
        if protocol.state is not State.OPEN:
            if protocol.state is State.CLOSED:
                raise protocol.close_exc
            return  # closing: the message would be dropped by the peer anyway
        protocol.send_text(data)
        self._flush()

    async def close(self, code: int = CloseCode.NORMAL_CLOSURE, reason: str = "") -> None:
        """Start the closing handshake (if still open) and wait until the connection is gone."""
        if self.protocol.state is State.OPEN:
            self.protocol.send_close(code, reason)
            self._flush()
        elif self.protocol.state is State.CONNECTING:
            self.abort()
        await asyncio.shield(self.closed)

    def abort(self) -> None:
        if self.transport is not None:
            self.transport.abort()

    def _flush(self) -> None:
        transport = self.transport
        if transport is None:
            return
        for data in self.protocol.data_to_send():
            if data:
                transport.write(data)
            elif transport.can_write_eof():  # the end of the stream: half-close when possible
                try:
                    transport.write_eof()
                except Exception:
                    pass
            else:
                transport.close()
        if self._close_timer is None and self.protocol.close_expected():
            self._close_timer = self.loop.call_later(CLOSE_TIMEOUT_S, transport.abort)

    # ---- asyncio.Protocol --------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        request = self.protocol.connect()
        request.headers["User-Agent"] = USER_AGENT
        self.protocol.send_request(request)
        self._flush()

    def data_received(self, data: bytes) -> None:
        protocol = self.protocol
        protocol.receive_data(data)
        events = protocol.events_received()
        self._flush()
        for event in events:
            if event.__class__ is Frame:
                assert isinstance(event, Frame)
                self._frame(event)
            else:  # the handshake response
                self._opened()

    def eof_received(self) -> None:
        self.protocol.receive_eof()
        self._flush()

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

    def _frame(self, frame: Frame) -> None:
        op = frame.opcode
        data = frame.data if frame.data.__class__ is bytes else bytes(frame.data)
        if op is Opcode.TEXT or op is Opcode.BINARY:
            if not frame.fin:
                self._parts, self._text = [data], op is Opcode.TEXT
                return
            self.on_message(data, op is Opcode.TEXT)
        elif op is Opcode.CONT:
            if self._parts is None:
                return
            self._parts.append(data)
            if frame.fin:
                data, self._parts = b"".join(self._parts), None
                self.on_message(data, self._text)
        elif op is Opcode.PONG:
            self._ping_out = False
        # PING and CLOSE: `ClientProtocol` has queued the pong or the echo, and `_flush` sent it.

    def _keepalive(self) -> None:
        self._ping_timer = None
        if self.protocol.state is not State.OPEN:
            return
        if self._ping_out:  # no pong since the last ping
            self.protocol.fail(CloseCode.INTERNAL_ERROR, "keepalive ping timeout")
        else:
            self._ping_out = True
            self.protocol.send_ping(os.urandom(4))
        self._flush()
        if self._ping_interval is not None and self.protocol.state is State.OPEN:
            self._ping_timer = self.loop.call_later(self._ping_interval, self._keepalive)
