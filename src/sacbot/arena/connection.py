"""One client socket of the arena: a `sacbot.wsstream.WsStream` over websockets' sans-I/O `ServerProtocol`
(the opening handshake, the open and close timeouts). What a socket
receives goes to its `ArenaServer` (`sacbot.arena.server`), which owns the core.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from websockets.http11 import Request
from websockets.protocol import State
from websockets.server import ServerProtocol

from sacbot.wsstream import WsStream

if TYPE_CHECKING:
    from sacbot.arena.server import ArenaServer

MAX_MESSAGE_BYTES = 1 << 20  # the official clients' own limit
OPEN_TIMEOUT_S = 10.0  # a socket that has not finished its opening handshake by then is dropped
CLOSE_TIMEOUT_S = 3.0  # after a close frame, how long the client gets to end the TCP connection


class ArenaConnection(WsStream[ServerProtocol]):
    """One client socket: a `WsStream` over websockets' sans-I/O `ServerProtocol`.

    Complete data messages go to the server, hence the core, right inside `data_received`. `ServerProtocol`
    itself enforces the message size limit (close 1009); the opening handshake is the server's `_answer`.
    """

    def __init__(self, server: ArenaServer) -> None:
        super().__init__(ServerProtocol(max_size=MAX_MESSAGE_BYTES))
        self.server = server
        self.cid: int | None = None  # the core's id once the handshake is done
        self._timer: asyncio.TimerHandle | None = None  # the open timeout, then the close timeout

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.server._sockets.add(self)
        self._timer = asyncio.get_running_loop().call_later(OPEN_TIMEOUT_S, self._open_timeout)

    def on_handshake(self, event: object) -> None:
        assert isinstance(event, Request)
        self.server._answer(self, event)

    def on_message(self, data: bytes, text: bool) -> None:
        self.server._message(self, data if text else None)

    def on_closing(self) -> None:
        # The open timeout gives way to the close timeout: the client gets `CLOSE_TIMEOUT_S` to end it.
        if self._timer is not None:
            self._timer.cancel()
        self._timer = asyncio.get_running_loop().call_later(CLOSE_TIMEOUT_S, self.abort)

    def connection_lost(self, exc: Exception | None) -> None:
        self.protocol.receive_eof()  # idempotent: the state is CLOSED from here on
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.server._gone(self)

    def close(self, code: int, reason: str) -> None:
        """Start the closing handshake; the socket is dropped if the client does not finish it in time."""
        if self.protocol.state is State.OPEN:
            self.protocol.send_close(code, reason)
            self.flush()
        elif self.protocol.state is State.CONNECTING:
            self.abort()

    def _open_timeout(self) -> None:
        self._timer = None
        if self.protocol.state is State.CONNECTING:
            self.abort()

    def abort(self) -> None:
        self.transport.abort()
