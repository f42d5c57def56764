"""The thin asyncio shell around `BotSession`: connect, decode each frame once, reply at once (inside
`data_received`, without a coroutine hop per message). The WebSocket protocol itself is websockets' sans-I/O
`ClientProtocol`, driven by `ClientStream` (shared with the controller)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass

from websockets.client import ClientProtocol
from websockets.exceptions import InvalidHandshake, InvalidURI
from websockets.frames import CloseCode
from websockets.protocol import State

from sacbot.client.identity import BotIdentity, resolve_identity
from sacbot.client.policy import BotPolicy
from sacbot.client.session import BotSession, SessionStats
from sacbot.errors import UserError
from sacbot.protocol import Message, ProtocolError, TickEventForBot, decode, encode
from sacbot.settings import load_bot_environment
from sacbot.wsclient import ClientStream


@dataclass
class SessionEnd:
    """How a connection ended: the game ended, was aborted, or the server closed first."""

    game_ended: bool
    aborted: bool
    close_code: int | None
    close_reason: str
    stats: SessionStats


async def play(
    policy: BotPolicy,
    identity: BotIdentity | None = None,
    server_url: str | None = None,
    server_secret: str | None = None,
    *,
    open_timeout: float = 10.0,
) -> SessionEnd:
    """Play one game on a Tank Royale server.

    Missing arguments come from SERVER_URL, SERVER_SECRET and the identity order (`resolve_identity`). A
    refused connection, a rejected secret (close 1008) or a server of another major version raise UserError.
    """
    if identity is None:
        identity = resolve_identity()
    if server_url is None or server_secret is None:
        env = load_bot_environment()
        server_url = server_url if server_url is not None else env.server_url
        server_secret = server_secret if server_secret is not None else env.server_secret
    session = BotSession(policy, identity, server_secret)
    try:
        ws = await _SessionStream.open(server_url, max_size=None, timeout=open_timeout)
    except InvalidURI:
        raise UserError(f"bad server URL {server_url!r}: expected ws://host:port", exit_code=2) from None
    except (OSError, InvalidHandshake, TimeoutError) as exc:
        raise UserError(f"cannot connect to the Tank Royale server at {server_url}: {exc}") from None
    try:
        ws.start(session)
        await ws.wait_done()
    except UserError:
        await ws.close(CloseCode.POLICY_VIOLATION, "incompatible server")
        raise
    except ProtocolError as exc:
        await ws.close(CloseCode.PROTOCOL_ERROR, "bad message")
        raise UserError(f"the server at {server_url} sent a bad message: {exc}") from None
    except asyncio.CancelledError:  # stopped from outside (SIGINT, SIGTERM, a `ClientInterrupt`)
        await ws.close(CloseCode.GOING_AWAY, "stopped")
        raise
    except BaseException:
        await ws.close(CloseCode.INTERNAL_ERROR)
        raise
    await ws.close(CloseCode.NORMAL_CLOSURE, "game over" if session.finished else "")
    rcvd = ws.protocol.close_rcvd
    code, reason = (rcvd.code, rcvd.reason) if rcvd is not None else (None, "")
    if code == CloseCode.POLICY_VIOLATION and not session.finished:
        hint = " (check SERVER_SECRET)" if "secret" in reason.lower() else ""
        raise UserError(f"the server refused this bot: {reason or 'policy violation'} (close 1008){hint}")
    return SessionEnd(
        game_ended=session.finished and not session.aborted,
        aborted=session.aborted,
        close_code=code,
        close_reason=reason,
        stats=session.stats,
    )


class _SessionStream(ClientStream):
    """Runs the session right inside `data_received`: decode, session, encode, write, with no coroutine
    wake-up, queue or lock per message (a `recv`/`send` loop costs about twice the CPU per turn).

    The first failure (a bad message, an incompatible server, a policy error) or the end of the game stops the
    session and wakes `wait_done`, which re-raises the failure in `play`, where it is handled as before; data
    arriving after that is dropped (nobody reads it).
    """

    def __init__(self, protocol: ClientProtocol, ping_interval: float | None = None) -> None:
        super().__init__(protocol, ping_interval)
        self.session: BotSession | None = None
        self.failure: BaseException | None = None
        self.done: asyncio.Future[None] = self.loop.create_future()
        self._early: list[bytes] = []  # messages that came before `start` (right behind the handshake)

    def start(self, session: BotSession) -> None:
        self.session = session
        early, self._early = self._early, []
        for data in early:
            self.on_message(data, True)
        if self.closed.done():
            self._stop(None)

    def on_message(self, data: bytes, text: bool) -> None:
        session = self.session
        if session is None:
            if not self.done.done():
                self._early.append(data)
            return
        try:
            self._handle(session, data)
        except BaseException as exc:  # handled in `play`, as when it came out of a recv loop
            self._stop(exc)

    def on_closed(self) -> None:
        if self.session is not None:
            self._stop(None)  # the connection went away mid-game: `play` reports how it closed

    def _handle(self, session: BotSession, data: bytes) -> None:
        # The realtime path: one decode per frame, no logging, the intent goes out as soon as on_tick returns.
        try:
            msg = decode(data)
        except ProtocolError as exc:
            if exc.field == "type" and not exc.msg_type:
                return  # a message type from a newer server: not for us
            raise
        if msg.__class__ is TickEventForBot:
            reply: Message | None = session.on_tick(msg)
        else:
            reply = session.receive(msg)
        if reply is not None and self.protocol.state is State.OPEN:
            self.protocol.send_text(encode(reply).encode())
            self.flush()
        if session.finished:
            self._stop(None)

    def _stop(self, failure: BaseException | None) -> None:
        self.session = None
        self.failure = failure
        if not self.done.done():
            self.done.set_result(None)

    async def wait_done(self) -> None:
        """Until the game ends, a failure, or the connection is lost; re-raises a failure."""
        await self.done
        if self.failure is not None:
            failure, self.failure = self.failure, None
            raise failure


class ClientInterrupt:
    """Ends a running `run_bot` from another thread: its task is cancelled, so the client closes the
    connection and `run_bot` raises `asyncio.CancelledError`. No signal is involved, so an interrupt that
    comes after the client has finished does nothing at all (a signal could land in whatever runs next)."""

    def __init__(self) -> None:
        self._lock = threading.RLock()  # a signal handler on the thread that holds it may call `interrupt`
        self._cancel: Callable[[], object] | None = None
        self._requested = False

    def interrupt(self) -> None:
        with self._lock:
            self._requested = True
            if self._cancel is not None:
                self._cancel()

    def _attach(self, loop: asyncio.AbstractEventLoop, task: asyncio.Task[SessionEnd]) -> None:
        with self._lock:
            self._cancel = lambda: loop.call_soon_threadsafe(task.cancel)
            if self._requested:
                task.cancel()

    def _detach(self) -> None:
        with self._lock:
            self._cancel = None


def run_bot(
    policy: BotPolicy,
    identity: BotIdentity | None = None,
    server_url: str | None = None,
    server_secret: str | None = None,
    interrupt: ClientInterrupt | None = None,
) -> SessionEnd:
    """Blocking form of `play` (runs its own event loop); `interrupt` lets another thread end it."""

    async def main() -> SessionEnd:
        task = asyncio.current_task()
        if interrupt is None or task is None:
            return await play(policy, identity, server_url, server_secret)
        interrupt._attach(asyncio.get_running_loop(), task)
        try:
            return await play(policy, identity, server_url, server_secret)
        finally:
            interrupt._detach()

    return asyncio.run(main())
