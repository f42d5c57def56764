"""The thin asyncio `websockets` shell around `BotSession`: connect, decode each frame once, reply at once
(inside `data_received`, without a coroutine hop per message)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, cast

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI
from websockets.frames import DATA_OPCODES, CloseCode, Frame, Opcode
from websockets.protocol import Event, State

from sacbot.client.identity import BotIdentity, resolve_identity
from sacbot.client.policy import BotPolicy
from sacbot.client.session import BotSession, SessionStats
from sacbot.errors import UserError
from sacbot.protocol import Message, ProtocolError, TickEventForBot, decode, encode
from sacbot.settings import load_bot_environment


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
    # A subclass per connection carries the session into the connection websockets creates.
    conn_class = cast(
        "type[_SessionConnection]", type("_BotConnection", (_SessionConnection,), {"session": session})
    )
    try:
        ws = await connect(
            server_url,
            open_timeout=open_timeout,
            compression=None,
            max_size=None,
            ping_interval=None,
            create_connection=conn_class,
        )
    except InvalidURI:
        raise UserError(f"bad server URL {server_url!r}: expected ws://host:port", exit_code=2) from None
    except (OSError, InvalidHandshake, TimeoutError) as exc:
        raise UserError(f"cannot connect to the Tank Royale server at {server_url}: {exc}") from None
    assert isinstance(ws, _SessionConnection)
    async with ws:
        try:
            await ws.wait_done()
        except ConnectionClosed:
            pass
        except UserError:
            await ws.close(CloseCode.POLICY_VIOLATION, "incompatible server")
            raise
        except ProtocolError as exc:
            await ws.close(CloseCode.PROTOCOL_ERROR, "bad message")
            raise UserError(f"the server at {server_url} sent a bad message: {exc}") from None
        if session.finished:
            await ws.close(CloseCode.NORMAL_CLOSURE, "game over")
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


class _SessionConnection(ClientConnection):
    """Runs the session right inside `data_received`: decode, session, encode, write, with no coroutine
    wake-up, queue or lock per message (the stock `recv`/`send` path costs about twice the CPU per turn).

    Control frames (ping, pong, close) and the HTTP handshake keep the stock handling. The first failure (a
    bad message, an incompatible server, a policy error) or the end of the game stops the fast path and
    wakes `wait_done`, which re-raises the failure in `play`, where it is handled as before.
    """

    session: BotSession | None = None  # set by the per-connection subclass that `play` makes
    failure: BaseException | None = None
    _parts: list[bytes] | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.done: asyncio.Future[None] = self.loop.create_future()

    def process_event(self, event: Event) -> None:
        session = self.session
        if session is None or event.__class__ is not Frame:
            if self.done.done() and event.__class__ is Frame:
                assert isinstance(event, Frame)
                if event.opcode in DATA_OPCODES:
                    return  # after the game or a failure nobody reads: drop rather than queue
            super().process_event(event)
            return
        assert isinstance(event, Frame)
        op = event.opcode
        if op is Opcode.TEXT or op is Opcode.BINARY:
            data = event.data
            if not event.fin:  # fragmented: collect the pieces
                self._parts = [bytes(data)]
                return
        elif op is Opcode.CONT:
            if self._parts is None:
                return
            self._parts.append(bytes(event.data))
            if not event.fin:
                return
            data, self._parts = b"".join(self._parts), None
        else:
            super().process_event(event)
            return
        try:
            self._handle(session, data)
        except BaseException as exc:  # handled in `play`, as when it came out of a recv loop
            self._stop(exc)

    def _handle(self, session: BotSession, data: bytes | bytearray | memoryview) -> None:
        # The realtime path: one decode per frame, no logging, the intent goes out as soon as on_tick returns.
        try:
            msg = decode(data if data.__class__ is bytes else bytes(data))
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
            try:
                self.send_data()
            except Exception as exc:  # as `data_received` does: the close handling reports it
                self.set_connection_exc(exc)
        if session.finished:
            self._stop(None)

    def _stop(self, failure: BaseException | None) -> None:
        self.session = None
        self.failure = failure
        if not self.done.done():
            self.done.set_result(None)

    async def wait_done(self) -> None:
        """Until the game ends, a failure, or the connection is lost; re-raises a failure."""
        await asyncio.wait((self.done, self.connection_lost_waiter), return_when=asyncio.FIRST_COMPLETED)
        if self.failure is not None:
            failure, self.failure = self.failure, None
            raise failure
        self.session = None  # or the connection went away mid-game: `play` reports how it closed


def run_bot(
    policy: BotPolicy,
    identity: BotIdentity | None = None,
    server_url: str | None = None,
    server_secret: str | None = None,
) -> SessionEnd:
    """Blocking form of `play` (runs its own event loop)."""
    return asyncio.run(play(policy, identity, server_url, server_secret))
