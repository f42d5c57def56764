"""The arena's thin asyncio `websockets` shell around `ArenaCore`, and `EmbeddedArena` (a server in a thread).

One coroutine per client reads frames and hands them to the core; the core's sends are written straight into
the connection's transport (no task or queue per message), and one loop timer follows `core.deadline`. A
client that stops reading while its write buffer passes `MAX_BACKLOG` is closed, so no client can make the
server grow.
"""

from __future__ import annotations

import asyncio
import http
import logging
import threading
import weakref
from collections.abc import Callable
from types import TracebackType

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.frames import DATA_OPCODES, Frame, Opcode
from websockets.http11 import Request, Response
from websockets.protocol import Event, State

from sacbot.arena.core import ArenaConfig, ArenaCore
from sacbot.arena.core_types import CLOSE_INTERNAL, CLOSE_POLICY, GameRecorder
from sacbot.errors import UserError

log = logging.getLogger(__name__)

DEFAULT_PORT = 7654
MAX_MESSAGE_BYTES = 1 << 20  # the official clients' own limit
MAX_BACKLOG = 16 << 20  # unsent bytes per client before we give up on it

# Plain HTTP on the server's port (a request without a WebSocket upgrade): request path -> (status, content
# type, body). `sacbot arena serve` answers with the viewer page (`sacbot.viewer.pages`).
HttpHandler = Callable[[str], tuple[int, str, bytes]]


class ArenaServer:
    """The server on an asyncio loop: `await start()`, then `await stop()`."""

    def __init__(
        self,
        config: ArenaConfig | None = None,
        host: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        tap: Callable[[int, str], None] | None = None,
        recorder: GameRecorder | None = None,
        http_handler: HttpHandler | None = None,
    ) -> None:
        self.config = config or ArenaConfig()
        self.host = host
        self.port = port
        self._tap = tap  # sees every text the server sends (tests validate them against the schemas)
        self._recorder = recorder
        self._http = http_handler
        self._conns: dict[int, ServerConnection] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at: float | None = None
        self._server: Server | None = None
        self._last_text: str | None = None
        self._last_frame = b""
        self.core: ArenaCore | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"ws://{host}:{self.port}"

    async def start(self) -> None:
        self._loop = loop = asyncio.get_running_loop()
        self.core = ArenaCore(self, self.config, clock=loop.time, recorder=self._recorder)
        try:
            # No compression: frames are small and deflate would cost more CPU than the bytes it saves.
            self._server = await serve(
                self._handle,
                self.host,
                self.port,
                max_size=MAX_MESSAGE_BYTES,
                compression=None,
                max_queue=16,
                create_connection=_ArenaConnection,
                process_request=self._process_request if self._http is not None else None,
            )
        except OSError as exc:
            raise UserError(f"cannot listen on {self.host}:{self.port}: {exc.strerror or exc}", 2) from None
        sock = next(iter(self._server.sockets))
        self.port = sock.getsockname()[1]

    async def stop(self) -> None:
        if self.core is not None:
            self.core.shutdown()
            self._sync_timer()
        if self._server is not None:
            self._server.close(close_connections=False)
            # A socket that never finished its opening handshake (a browser's spare pre-connection to the
            # viewer page) would hold the close until its open timeout: drop those now.
            for conn in list(_ArenaConnection.sockets):
                if conn.server is self._server and conn.protocol.state is State.CONNECTING:
                    conn.transport.abort()
            try:
                await asyncio.wait_for(self._server.wait_closed(), 5)
            except TimeoutError:
                pass

    async def serve_forever(self) -> None:
        assert self._server is not None
        await self._server.serve_forever()

    # ---- Transport, called by the core --------------------------------------------------------------

    def send(self, conn_id: int, text: str) -> None:
        ws = self._conns.get(conn_id)
        if ws is None or ws.protocol.state is not State.OPEN:
            return
        if self._tap is not None:
            self._tap(conn_id, text)
        if text is not self._last_text:  # observers all get the same text: frame it once
            self._last_text, self._last_frame = text, _text_frame(text.encode())
        try:
            # What `ws.send` does for one unfragmented, uncompressed text message from a server (no mask),
            # minus the await: write the frame to the transport now.
            ws.transport.write(self._last_frame)
        except Exception:  # the socket just died; its reader will see the close and tell the core
            return
        if ws.transport.get_write_buffer_size() > MAX_BACKLOG and self._loop is not None:
            # Not now: the core is in the middle of a send loop.
            self._loop.call_soon(self._kick_slow, conn_id)

    def _kick_slow(self, conn_id: int) -> None:
        if self.core is not None:
            self.core.kick(conn_id, CLOSE_POLICY, "Client does not read its messages")
            self._sync_timer()

    def close(self, conn_id: int, code: int, reason: str) -> None:
        ws = self._conns.pop(conn_id, None)
        if ws is not None:
            asyncio.ensure_future(_close(ws, code, reason))

    # ---- websockets side --------------------------------------------------------------------------

    def _process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        """A plain HTTP GET (no WebSocket upgrade) gets the HTTP handler's answer; upgrades go on as usual."""
        if self._http is None or "websocket" in request.headers.get("Upgrade", "").lower():
            return None
        status, content_type, body = self._http(request.path)
        headers = Headers(
            [
                ("Content-Type", content_type),
                ("Content-Length", str(len(body))),
                ("Cache-Control", "no-store"),
                ("Connection", "close"),
            ]
        )
        return Response(status, http.HTTPStatus(status).phrase, headers, body)

    async def _handle(self, ws: ServerConnection) -> None:
        core = self.core
        assert core is not None and isinstance(ws, _ArenaConnection)
        addr = ws.remote_address
        host, port = (str(addr[0]), int(addr[1])) if addr else ("unknown", 0)
        # Register before the core sends the ServerHandshake through us.
        cid = core._next_id
        self._conns[cid] = ws

        def on_frame(data: bytes | None) -> None:
            try:
                if data is None:
                    core.receive(cid, b"")  # a binary frame: refused
                else:
                    core.receive(cid, data.decode())
            except Exception:
                log.exception("client %d", cid)
                core.kick(cid, CLOSE_INTERNAL, "Internal server error")
            self._sync_timer()

        got = core.connect(host, port)
        assert got == cid
        ws.on_frame = on_frame
        try:
            await ws.wait_closed()
        finally:
            ws.on_frame = None
            self._conns.pop(cid, None)
            core.disconnect(cid)
            self._sync_timer()

    def _sync_timer(self) -> None:
        """Make sure a loop timer fires by `core.deadline`.

        A pending timer that fires earlier is kept (the core ignores an early fire and `_fire` re-arms), so a
        turn that moves the deadline on costs no timer work."""
        deadline = self.core.deadline if self.core is not None else None
        if deadline is None:
            return
        at = self._timer_at
        if at is not None and at <= deadline:
            return
        if self._timer is not None:
            self._timer.cancel()
        assert self._loop is not None
        self._timer_at = deadline
        self._timer = self._loop.call_at(deadline, self._fire)

    def _fire(self) -> None:
        core = self.core
        assert core is not None
        self._timer = None
        self._timer_at = None
        try:
            core.on_timer()
        except Exception:
            log.exception("timer")
        self._sync_timer()


def _text_frame(payload: bytes) -> bytes:
    """One final, unmasked text frame (RFC 6455 section 5.2)."""
    n = len(payload)
    if n < 126:
        return bytes((0x81, n)) + payload
    if n < 65536:
        return b"\x81\x7e" + n.to_bytes(2, "big") + payload
    return b"\x81\x7f" + n.to_bytes(8, "big") + payload


class _ArenaConnection(ServerConnection):
    """Hands each complete data message to `on_frame` right inside `data_received`.

    The stock path queues frames and wakes the handler coroutine once per message; calling the core directly
    saves that hop on every intent. Control frames (ping, pong, close) keep the stock handling.
    """

    on_frame: Callable[[bytes | None], None] | None = None
    _parts: list[bytes] | None = None
    _binary = False
    sockets: weakref.WeakSet[_ArenaConnection] = weakref.WeakSet()  # every connection alive, for `stop`

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        _ArenaConnection.sockets.add(self)

    def process_event(self, event: Event) -> None:
        deliver = self.on_frame
        if deliver is None or not isinstance(event, Frame) or event.opcode not in DATA_OPCODES:
            super().process_event(event)
            return
        op = event.opcode
        chunk = event.data if isinstance(event.data, bytes) else bytes(event.data)
        if op is Opcode.CONT:
            if self._parts is None:
                return
            self._parts.append(chunk)
            if not event.fin:
                return
            data, binary = b"".join(self._parts), self._binary
            self._parts = None
        elif not event.fin:
            self._parts, self._binary = [chunk], op is Opcode.BINARY
            return
        else:
            data, binary = chunk, op is Opcode.BINARY
        deliver(None if binary else data)


async def _close(ws: ServerConnection, code: int, reason: str) -> None:
    try:
        await asyncio.wait_for(ws.close(code, reason), 3)
    except Exception:
        ws.transport.abort()


class EmbeddedArena:
    """An arena server on its own thread and loop, on 127.0.0.1 and a free port (tests, `arena run`, benches).

    `with EmbeddedArena() as arena: ... arena.url ...`; or `arena = EmbeddedArena().start()` ...
    `arena.stop()`.
    """

    def __init__(
        self,
        *,
        bot_secrets: frozenset[str] | set[str] = frozenset(),
        controller_secrets: frozenset[str] | set[str] = frozenset(),
        tps: int = -1,
        seed: int | None = None,
        game_types: tuple[str, ...] | None = None,
        tap: Callable[[int, str], None] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        recorder: GameRecorder | None = None,
        http_handler: HttpHandler | None = None,
        debug_graphics: bool = False,
    ) -> None:
        config = ArenaConfig(
            bot_secrets=frozenset(bot_secrets),
            controller_secrets=frozenset(controller_secrets),
            tps=tps,
            seed=seed,
            debug_graphics=debug_graphics,
        )
        if game_types is not None:
            config.game_types = game_types
        self.server = ArenaServer(
            config, host=host, port=port, tap=tap, recorder=recorder, http_handler=http_handler
        )
        self._loop = asyncio.new_event_loop()
        self._thread: threading.Thread | None = None
        self._started = threading.Event()
        self._error: BaseException | None = None
        self._stop: asyncio.Event | None = None

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def port(self) -> int:
        return self.server.port

    def start(self) -> EmbeddedArena:
        self._thread = threading.Thread(target=self._main, name="sacbot-arena", daemon=True)
        self._thread.start()
        self._started.wait()
        if self._error is not None:
            raise self._error
        return self

    def _main(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._serve())
        finally:
            self._loop.close()

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        try:
            await self.server.start()
        except BaseException as exc:
            self._error = exc
            self._started.set()
            return
        self._started.set()
        await self._stop.wait()
        await self.server.stop()

    def call(self, fn: Callable[[ArenaCore], object]) -> object:
        """Run `fn(core)` on the server's loop and return its result (for tests and stats)."""

        async def run() -> object:
            assert self.server.core is not None
            return fn(self.server.core)

        return asyncio.run_coroutine_threadsafe(run(), self._loop).result(10)

    def stop(self) -> None:
        if self._thread is None:
            return
        if self._stop is not None and not self._loop.is_closed():
            try:
                self._loop.call_soon_threadsafe(self._stop.set)
            except RuntimeError:
                pass
        self._thread.join(10)
        self._thread = None

    def __enter__(self) -> EmbeddedArena:
        return self.start() if self._thread is None else self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
