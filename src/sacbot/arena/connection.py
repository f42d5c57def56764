"""One client socket of the arena: an asyncio protocol of ours driving websockets' sans-I/O `ServerProtocol`
through its public methods (opening handshake, frames, pings, the closing handshake, timeouts). What a socket
receives goes to its `ArenaServer` (`sacbot.arena.server`), which owns the core.
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING

from websockets.frames import CloseCode, Frame, Opcode
from websockets.http11 import Request
from websockets.protocol import State
from websockets.server import ServerProtocol

if TYPE_CHECKING:
    from sacbot.arena.server import ArenaServer

MAX_MESSAGE_BYTES = 1 << 20  # the official clients' own limit
OPEN_TIMEOUT_S = 10.0  # a socket that has not finished its opening handshake by then is dropped
CLOSE_TIMEOUT_S = 3.0  # after a close frame, how long the client gets to end the TCP connection


class ArenaConnection(asyncio.Protocol):
    """One client socket: an asyncio protocol driving websockets' sans-I/O `ServerProtocol`.

    Complete data messages (fragments joined) go to the server, hence the core, right inside
    `data_received`: no queue or coroutine wake-up per message. `ServerProtocol` itself enforces the message
    size limit (close 1009), answers pings and echoes close frames; the opening handshake is the server's
    `_answer`.
    """

    def __init__(self, server: ArenaServer) -> None:
        self.server = server
        self.protocol = ServerProtocol(max_size=MAX_MESSAGE_BYTES)
        self.transport: asyncio.Transport = None  # type: ignore[assignment]  # set in connection_made
        self.cid: int | None = None  # the core's id once the handshake is done
        self._parts: list[bytes] | None = None  # a fragmented message so far
        self._binary = False
        self._ping_out = False
        self._closing = False  # a close is under way (`ServerProtocol.close_expected`)
        self._timer: asyncio.TimerHandle | None = None  # the open timeout, then the close timeout

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.server._sockets.add(self)
        self._timer = asyncio.get_running_loop().call_later(OPEN_TIMEOUT_S, self._open_timeout)

    def data_received(self, data: bytes) -> None:
        protocol = self.protocol
        protocol.receive_data(data)
        events = protocol.events_received()
        self.flush()
        for event in events:
            if event.__class__ is Frame:
                assert isinstance(event, Frame)
                self._frame(event)
            elif isinstance(event, Request):
                self.server._answer(self, event)

    def eof_received(self) -> None:
        self.protocol.receive_eof()
        self.flush()

    def connection_lost(self, exc: Exception | None) -> None:
        self.protocol.receive_eof()  # idempotent: the state is CLOSED from here on
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.server._gone(self)

    def _frame(self, frame: Frame) -> None:
        op = frame.opcode
        if op is Opcode.TEXT or op is Opcode.BINARY:
            data = frame.data if frame.data.__class__ is bytes else bytes(frame.data)
            if not frame.fin:
                self._parts, self._binary = [data], op is Opcode.BINARY
                return
            self.server._message(self, None if op is Opcode.BINARY else data)
        elif op is Opcode.CONT:
            if self._parts is None:
                return
            self._parts.append(bytes(frame.data))
            if frame.fin:
                data, self._parts = b"".join(self._parts), None
                self.server._message(self, None if self._binary else data)
        elif op is Opcode.PONG:
            self._ping_out = False
        # PING and CLOSE: `ServerProtocol` has queued the pong or the echo (and the end of the stream), and
        # `flush` sent it.

    def flush(self) -> None:
        """Write what the protocol has to send; after a close frame, give the client `CLOSE_TIMEOUT_S`."""
        transport = self.transport
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
        if not self._closing and self.protocol.close_expected():
            self._closing = True  # the open timeout gives way to the close timeout
            if self._timer is not None:
                self._timer.cancel()
            self._timer = asyncio.get_running_loop().call_later(CLOSE_TIMEOUT_S, self.abort)

    def close(self, code: int, reason: str) -> None:
        """Start the closing handshake; the socket is dropped if the client does not finish it in time."""
        if self.protocol.state is State.OPEN:
            self.protocol.send_close(code, reason)
            self.flush()
        elif self.protocol.state is State.CONNECTING:
            self.abort()

    def keepalive(self) -> None:
        if self.protocol.state is not State.OPEN:
            return
        if self._ping_out:  # no pong since the last ping
            self.protocol.fail(CloseCode.INTERNAL_ERROR, "keepalive ping timeout")
        else:
            self._ping_out = True
            self.protocol.send_ping(os.urandom(4))
        self.flush()

    def _open_timeout(self) -> None:
        self._timer = None
        if self.protocol.state is State.CONNECTING:
            self.abort()

    def abort(self) -> None:
        self.transport.abort()
