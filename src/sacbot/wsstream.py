"""What a WebSocket connection of ours does the same on either side: `WsStream`, an asyncio protocol over one
of websockets' sans-I/O protocols (`ServerProtocol` for the arena's sockets, `ClientProtocol` for the
clients), driven through its public methods only.

It writes what the protocol has to send (`flush`), hands each complete data message (fragments joined) to
`on_message` right inside `data_received`, with no queue or coroutine wake-up per message, and runs one
keepalive step at a time (`keepalive`). Pings are answered and close frames echoed by the protocol itself.
The sides differ only in their opening handshake (`on_handshake`), their timers and what a message is for.
"""

from __future__ import annotations

import asyncio
import os
from typing import Generic, TypeVar

from websockets.frames import CloseCode, Frame, Opcode
from websockets.protocol import Protocol, State

P = TypeVar("P", bound=Protocol)


class WsStream(asyncio.Protocol, Generic[P]):
    def __init__(self, protocol: P) -> None:
        self.protocol = protocol
        # Set in connection_made, before any data arrives (`flush` copes with a stream never connected).
        self.transport: asyncio.Transport = None  # type: ignore[assignment]
        self._parts: list[bytes] | None = None  # a fragmented message so far
        self._text = True  # whether that message is text
        self._ping_out = False  # a ping has gone out and no pong came back yet
        self._closing = False  # the protocol expects the connection to close (a close frame went either way)

    # ---- what the sides define ---------------------------------------------------------------------------

    def on_message(self, data: bytes, text: bool) -> None:
        """One complete data message (the bytes of a text message are not decoded yet)."""

    def on_handshake(self, event: object) -> None:
        """The opening handshake's request (server side) or response (client side) arrived."""

    def on_closing(self) -> None:
        """A close frame went out or came in: the connection is expected to end (start a close timeout)."""

    # ---- the shared mechanics ------------------------------------------------------------------------------

    def flush(self) -> None:
        """Write what the protocol has to send (a half-close for the end of the stream, when possible)."""
        transport = self.transport
        if transport is None:
            return
        writes = self.protocol.data_to_send()
        if not writes:
            # Nothing queued (the common case after a data frame came in): the protocol only expects the
            # connection to close after queueing a close frame or the end of the stream, so nothing changed.
            return
        for data in writes:
            if data:
                transport.write(data)
            elif transport.can_write_eof():
                try:
                    transport.write_eof()
                except Exception:
                    pass
            else:
                transport.close()
        if not self._closing and self.protocol.close_expected():
            self._closing = True
            self.on_closing()

    def keepalive(self) -> None:
        """One keepalive step: close with 1011 when the last ping got no pong, else ping."""
        if self.protocol.state is not State.OPEN:
            return
        if self._ping_out:
            self.protocol.fail(CloseCode.INTERNAL_ERROR, "keepalive ping timeout")
        else:
            self._ping_out = True
            self.protocol.send_ping(os.urandom(4))
        self.flush()

    def data_received(self, data: bytes) -> None:
        protocol = self.protocol
        protocol.receive_data(data)
        events = protocol.events_received()
        self.flush()
        for event in events:
            if event.__class__ is Frame:
                assert isinstance(event, Frame)
                self._frame(event)
            else:
                self.on_handshake(event)

    def eof_received(self) -> None:
        self.protocol.receive_eof()
        self.flush()

    def _frame(self, frame: Frame) -> None:
        op = frame.opcode
        if op is Opcode.TEXT or op is Opcode.BINARY:
            data = frame.data if frame.data.__class__ is bytes else bytes(frame.data)
            if not frame.fin:
                self._parts, self._text = [data], op is Opcode.TEXT
                return
            self.on_message(data, op is Opcode.TEXT)
        elif op is Opcode.CONT:
            if self._parts is None:
                return
            self._parts.append(bytes(frame.data))
            if frame.fin:
                data, self._parts = b"".join(self._parts), None
                self.on_message(data, self._text)
        elif op is Opcode.PONG:
            self._ping_out = False
        # PING and CLOSE: the protocol has queued the pong or the echo, and `flush` sent it.
