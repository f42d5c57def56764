"""The arena's thin asyncio shell around `ArenaCore`, and `EmbeddedArena` (a server in a thread).

Each client socket is an asyncio protocol of ours (`sacbot.arena.connection.ArenaConnection`) driving
websockets' sans-I/O `ServerProtocol` through its public methods. Complete data messages go to the core
right inside `data_received`; the core's sends are framed by the protocol and written straight into the
transport (no task or queue per message), and one loop timer follows `core.deadline`. A client that stops
reading while its write buffer passes `MAX_BACKLOG` is closed, so no client can make the server grow.
"""

from __future__ import annotations

import asyncio
import http
import logging
import sys
import threading
from collections.abc import Callable
from types import TracebackType

from websockets.datastructures import Headers
from websockets.exceptions import InvalidState
from websockets.frames import CloseCode
from websockets.http11 import Request, Response
from websockets.protocol import State
from websockets.version import version as websockets_version

from sacbot.arena.connection import ArenaConnection
from sacbot.arena.core import ArenaConfig, ArenaCore
from sacbot.arena.core_types import CLOSE_INTERNAL, CLOSE_POLICY, GameRecorder
from sacbot.errors import UserError

log = logging.getLogger(__name__)

DEFAULT_PORT = 7654
MAX_BACKLOG = 16 << 20  # unsent bytes per client before we give up on it
PING_INTERVAL_S = 20.0  # keepalive: a ping this often; no pong by the next one closes with 1011
SERVER_HEADER = f"Python/{sys.version_info[0]}.{sys.version_info[1]} websockets/{websockets_version}"

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
        self._tap = tap  # sees every message the server sends, as text (tests validate them by schema)
        self._recorder = recorder
        self._http = http_handler
        self._conns: dict[int, ArenaConnection] = {}  # open WebSocket clients, by core id
        self._sockets: set[ArenaConnection] = set()  # every socket alive, handshake done or not
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at: float | None = None
        self._keepalive: asyncio.TimerHandle | None = None
        self._server: asyncio.Server | None = None
        self.core: ArenaCore | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"ws://{host}:{self.port}"

    async def start(self) -> None:
        self._loop = loop = asyncio.get_running_loop()
        self.core = ArenaCore(self, self.config, clock=loop.time, recorder=self._recorder)
        try:
            # No compression (no extensions offered): frames are small and deflate would cost more CPU than
            # the bytes it saves.
            self._server = await loop.create_server(lambda: ArenaConnection(self), self.host, self.port)
        except OSError as exc:
            raise UserError(f"cannot listen on {self.host}:{self.port}: {exc.strerror or exc}", 2) from None
        sock = next(iter(self._server.sockets))
        self.port = sock.getsockname()[1]
        self._keepalive = loop.call_later(PING_INTERVAL_S, self._ping_all)

    async def stop(self) -> None:
        if self.core is not None:
            self.core.shutdown()
            self._sync_timer()
        if self._keepalive is not None:
            self._keepalive.cancel()
            self._keepalive = None
        if self._server is not None:
            self._server.close()  # no new sockets
            # A socket that never finished its opening handshake (a browser's spare pre-connection to the
            # viewer page) would hold the close until its open timeout: drop those now.
            for conn in list(self._sockets):
                if conn.protocol.state is State.CONNECTING:
                    conn.abort()
            try:
                async with asyncio.timeout(5):
                    while self._sockets:
                        await asyncio.sleep(0.01)
            except TimeoutError:
                for conn in list(self._sockets):
                    conn.abort()
            try:
                await asyncio.wait_for(self._server.wait_closed(), 1)
            except TimeoutError:
                pass

    async def serve_forever(self) -> None:
        assert self._server is not None
        await self._server.serve_forever()

    # ---- Transport, called by the core --------------------------------------------------------------

    def send(self, conn_id: int, data: bytes) -> None:
        # The hot path (every tick of every client): one dict lookup, the protocol's own framing, one write.
        # Observers all get the very same bytes (the core encodes a message once for all of them).
        conn = self._conns.get(conn_id)
        if conn is None:
            return
        protocol = conn.protocol
        if self._tap is not None:
            if protocol.state is not State.OPEN:
                return
            self._tap(conn_id, data.decode())
        try:
            protocol.send_text(data)
        except InvalidState:  # not open (a close is under way): the message is dropped
            return
        transport = conn.transport
        try:
            for chunk in protocol.data_to_send():
                transport.write(chunk)
        except Exception:  # the socket just died; connection_lost will tell the core
            return
        if transport.get_write_buffer_size() > MAX_BACKLOG and self._loop is not None:
            # Not now: the core is in the middle of a send loop.
            self._loop.call_soon(self._kick_slow, conn_id)

    def _kick_slow(self, conn_id: int) -> None:
        if self.core is not None:
            self.core.kick(conn_id, CLOSE_POLICY, "Client does not read its messages")
            self._sync_timer()

    def close(self, conn_id: int, code: int, reason: str) -> None:
        conn = self._conns.pop(conn_id, None)
        if conn is not None:
            conn.close(code, reason)

    # ---- connections ------------------------------------------------------------------------------

    def _answer(self, conn: ArenaConnection, request: Request) -> None:
        """The opening handshake: accept a WebSocket upgrade (then the client joins the core), or give a plain
        HTTP GET the HTTP handler's answer."""
        protocol = conn.protocol
        if self._http is not None and "websocket" not in request.headers.get("Upgrade", "").lower():
            try:
                status, content_type, body = self._http(request.path)
            except Exception:
                log.exception("HTTP %s", request.path)
                status, content_type, body = 500, "text/plain; charset=utf-8", b"Internal server error\n"
            headers = Headers(
                [
                    ("Content-Type", content_type),
                    ("Content-Length", str(len(body))),
                    ("Cache-Control", "no-store"),
                    ("Connection", "close"),
                ]
            )
            response = Response(status, http.HTTPStatus(status).phrase, headers, body)
        else:
            response = protocol.accept(request)
        response.headers["Server"] = SERVER_HEADER
        protocol.send_response(response)
        conn.flush()
        if protocol.state is not State.OPEN:
            return  # an HTTP answer or a refused handshake: the socket closes
        core = self.core
        if core is None:
            conn.close(CloseCode.GOING_AWAY, "Server shutting down")
            return
        peer = conn.transport.get_extra_info("peername")
        host, port = (str(peer[0]), int(peer[1])) if peer else ("unknown", 0)
        # Register before the core sends the ServerHandshake through us.
        cid = conn.cid = core._next_id
        self._conns[cid] = conn
        got = core.connect(host, port)
        assert got == cid
        self._sync_timer()

    def _message(self, conn: ArenaConnection, data: bytes | None) -> None:
        """One complete data message from a client (None: a binary one, which the core refuses)."""
        core, cid = self.core, conn.cid
        if core is None or cid is None:
            return
        try:
            core.receive(cid, b"" if data is None else data.decode())
        except Exception:
            log.exception("client %d", cid)
            core.kick(cid, CLOSE_INTERNAL, "Internal server error")
        self._sync_timer()

    def _gone(self, conn: ArenaConnection) -> None:
        self._sockets.discard(conn)
        cid = conn.cid
        if cid is None:
            return
        conn.cid = None
        if self._conns.get(cid) is conn:
            del self._conns[cid]
        if self.core is not None:
            self.core.disconnect(cid)
            self._sync_timer()

    def _ping_all(self) -> None:
        """Keepalive: a client that has not answered the previous ping by now is closed with 1011."""
        assert self._loop is not None
        self._keepalive = self._loop.call_later(PING_INTERVAL_S, self._ping_all)
        for conn in list(self._conns.values()):
            conn.keepalive()

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
