"""The per-message send paths over websockets' sans-I/O protocols, on a recording transport (no sockets):
`ArenaServer.send` (a message's UTF-8 bytes, framed by `ServerProtocol.send_text`, written at once, dropped
once a close is under way), `WsStream.flush` and `ClientStream.send_text`."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from websockets.client import ClientProtocol
from websockets.exceptions import ConnectionClosed
from websockets.frames import Frame, Opcode
from websockets.protocol import State
from websockets.server import ServerProtocol
from websockets.uri import parse_uri

from sacbot.arena.connection import ArenaConnection
from sacbot.arena.server import ArenaServer
from sacbot.wsclient import ClientStream


class RecTransport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.chunks: list[bytes] = []
        self.eof = False
        self.aborted = False

    def write(self, data: Any) -> None:
        self.chunks.append(bytes(data))

    def get_write_buffer_size(self) -> int:
        return 0

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 40000) if name == "peername" else default

    def can_write_eof(self) -> bool:
        return True

    def write_eof(self) -> None:
        self.eof = True

    def abort(self) -> None:
        self.aborted = True

    def close(self) -> None:
        self.aborted = True


class StubCore:
    """What `ArenaServer._answer` needs of the core: the next id and `connect`."""

    _next_id = 7
    deadline = None

    def connect(self, host: str, port: int) -> int:
        self._next_id += 1
        return self._next_id - 1


def _frames(client: ClientProtocol, chunks: list[bytes]) -> list[Frame]:
    for chunk in chunks:
        client.receive_data(chunk)
    return [e for e in client.events_received() if isinstance(e, Frame)]


async def _open_arena_connection(
    tap: list[tuple[int, str]] | None = None,
) -> tuple[ArenaServer, ArenaConnection, ClientProtocol, RecTransport]:
    server = ArenaServer(port=0, tap=(lambda cid, text: tap.append((cid, text))) if tap is not None else None)
    server._loop = asyncio.get_running_loop()
    server.core = StubCore()  # type: ignore[assignment]
    conn = ArenaConnection(server)
    transport = RecTransport()
    conn.connection_made(transport)
    client = ClientProtocol(parse_uri("ws://localhost/"))
    client.send_request(client.connect())
    for data in client.data_to_send():
        conn.data_received(data)
    assert conn.protocol.state is State.OPEN and conn.cid == 7
    for chunk in transport.chunks:  # the handshake's response
        client.receive_data(chunk)
    assert client.state is State.OPEN
    client.events_received()
    transport.chunks.clear()
    return server, conn, client, transport


def test_server_send_frames_each_text_and_drops_it_once_closing() -> None:
    asyncio.run(_server_send_frames_each_text_and_drops_it_once_closing())


async def _server_send_frames_each_text_and_drops_it_once_closing() -> None:
    tap: list[tuple[int, str]] = []
    server, conn, client, transport = await _open_arena_connection(tap)
    server.send(7, b'{"type":"A"}')
    server.send(7, b'{"type":"B"}')
    server.send(99, b'{"type":"nobody"}')  # an unknown connection: nothing happens
    assert len(transport.chunks) == 2  # one write per message
    frames = _frames(client, transport.chunks)
    assert [(f.opcode, f.data) for f in frames] == [
        (Opcode.TEXT, b'{"type":"A"}'),
        (Opcode.TEXT, b'{"type":"B"}'),
    ]
    assert tap == [(7, '{"type":"A"}'), (7, '{"type":"B"}')]
    # A close under way: the text is neither sent nor shown to the tap.
    transport.chunks.clear()
    conn.close(1000, "bye")
    assert conn.protocol.state is State.CLOSING
    closing = list(transport.chunks)
    server.send(7, b'{"type":"C"}')
    assert transport.chunks == closing
    assert tap[-1] == (7, '{"type":"B"}')
    if conn._timer is not None:
        conn._timer.cancel()


def test_server_send_writes_the_same_bytes_for_every_connection() -> None:
    asyncio.run(_server_send_writes_the_same_bytes_for_every_connection())


async def _server_send_writes_the_same_bytes_for_every_connection() -> None:
    # The core encodes an observer message once and hands every observer the same bytes: framed as they are.
    server, conn, client, transport = await _open_arena_connection()
    data = ('{"type":"TickEventForObserver","x":"' + "y" * 300 + '"}').encode()
    server.send(7, data)
    server.send(7, data)
    assert [f.data for f in _frames(client, transport.chunks)] == [data] * 2
    if conn._timer is not None:
        conn._timer.cancel()


def test_flush_writes_nothing_and_keeps_state_when_nothing_is_queued() -> None:
    asyncio.run(_flush_writes_nothing_and_keeps_state_when_nothing_is_queued())


async def _flush_writes_nothing_and_keeps_state_when_nothing_is_queued() -> None:
    server, conn, client, transport = await _open_arena_connection()
    conn.flush()
    assert transport.chunks == [] and not conn._closing
    # A close frame from the client: echoed by the protocol, and the close timeout starts.
    client.send_close(1000, "done")
    for data in client.data_to_send():
        conn.data_received(data)
    assert conn._closing and conn.protocol.state is State.CLOSING
    assert any(f.opcode is Opcode.CLOSE for f in _frames(client, transport.chunks))
    if conn._timer is not None:
        conn._timer.cancel()


def test_client_stream_send_text_writes_now_and_raises_once_closed() -> None:
    asyncio.run(_client_stream_send_text_writes_now_and_raises_once_closed())


async def _client_stream_send_text_writes_now_and_raises_once_closed() -> None:
    protocol = ClientProtocol(parse_uri("ws://localhost/"))
    stream = ClientStream(protocol)
    transport = RecTransport()
    stream.connection_made(transport)  # sends the opening request
    peer = ServerProtocol()
    for chunk in transport.chunks:
        peer.receive_data(chunk)
    [request] = peer.events_received()
    peer.send_response(peer.accept(request))  # type: ignore[arg-type]
    for data in peer.data_to_send():
        stream.data_received(data)
    assert stream.state is State.OPEN
    transport.chunks.clear()

    stream.send_text(b'{"type":"BotReady"}')
    assert len(transport.chunks) == 1
    for chunk in transport.chunks:
        peer.receive_data(chunk)
    [frame] = peer.events_received()
    assert isinstance(frame, Frame) and frame.opcode is Opcode.TEXT and frame.data == b'{"type":"BotReady"}'

    # Closing: the message is dropped silently; closed: ConnectionClosed.
    protocol.send_close(1000, "")
    stream.flush()
    transport.chunks.clear()
    stream.send_text(b"{}")
    assert transport.chunks == []
    stream.connection_lost(None)
    assert protocol.state is State.CLOSED
    with pytest.raises(ConnectionClosed):
        stream.send_text(b"{}")
