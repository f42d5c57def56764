"""The thin asyncio `websockets` shell around `BotSession`: connect, decode each frame once, reply at once."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI
from websockets.frames import CloseCode

from sacbot.client.identity import BotIdentity, resolve_identity
from sacbot.client.policy import BotPolicy
from sacbot.client.session import BotSession, SessionStats
from sacbot.errors import UserError
from sacbot.protocol import ProtocolError, TickEventForBot, decode, encode
from sacbot.settings import load_tank_royale_env


@dataclass
class PlayResult:
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
) -> PlayResult:
    """Play one game on a Tank Royale server.

    Missing arguments come from SERVER_URL, SERVER_SECRET and the identity order (`resolve_identity`). A
    refused connection, a rejected secret (close 1008) or a server of another major version raise UserError.
    """
    if identity is None:
        identity = resolve_identity()
    if server_url is None or server_secret is None:
        env = load_tank_royale_env()
        server_url = server_url if server_url is not None else env.server_url
        server_secret = server_secret if server_secret is not None else env.server_secret
    session = BotSession(policy, identity, server_secret)
    try:
        ws = await connect(
            server_url, open_timeout=open_timeout, compression=None, max_size=None, ping_interval=None
        )
    except InvalidURI:
        raise UserError(f"bad server URL {server_url!r}: expected ws://host:port", exit_code=2) from None
    except (OSError, InvalidHandshake, TimeoutError) as exc:
        raise UserError(f"cannot connect to the Tank Royale server at {server_url}: {exc}") from None
    async with ws:
        try:
            await _pump(ws, session)
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
    return PlayResult(
        game_ended=session.finished and not session.aborted,
        aborted=session.aborted,
        close_code=code,
        close_reason=reason,
        stats=session.stats,
    )


async def _pump(ws: ClientConnection, session: BotSession) -> None:
    # The realtime loop: one decode per frame, no logging, the intent goes out as soon as on_tick returns.
    receive = session.receive
    on_tick = session.on_tick
    async for frame in ws:
        try:
            msg = decode(frame)
        except ProtocolError as exc:
            if exc.field == "type" and not exc.msg_type:
                continue  # a message type from a newer server: not for us
            raise
        reply = on_tick(msg) if msg.__class__ is TickEventForBot else receive(msg)
        if reply is not None:
            await ws.send(encode(reply))
        if session.finished:
            return


def run_bot(
    policy: BotPolicy,
    identity: BotIdentity | None = None,
    server_url: str | None = None,
    server_secret: str | None = None,
) -> PlayResult:
    """Blocking form of `play` (runs its own event loop)."""
    return asyncio.run(play(policy, identity, server_url, server_secret))
