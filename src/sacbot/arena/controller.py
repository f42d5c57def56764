"""A controller client: connect with a secret, wait for named bots, start a game, stream its events, return
results.

It uses only the public controller protocol (REFERENCE.md section 9), so it drives the real Java server
exactly as it drives `sacbot arena`. Async API (`Controller`), plus `play_game(...)`, a blocking one-call
wrapper.
"""

from __future__ import annotations

import asyncio
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from websockets.client import ClientProtocol
from websockets.exceptions import ConnectionClosed, WebSocketException
from websockets.frames import CloseCode

from sacbot import __version__
from sacbot.errors import UserError
from sacbot.protocol import (
    BotAddress,
    BotInfo,
    BotListUpdate,
    ChangeTps,
    ControllerHandshake,
    GameAbortedEvent,
    GameEndedEventForObserver,
    GameSetup,
    GameStartedEventForObserver,
    Message,
    NextTurn,
    ObserverHandshake,
    Participant,
    PauseGame,
    ProtocolError,
    ResultsForObserver,
    ResumeGame,
    ServerHandshake,
    StartGame,
    StopGame,
    TickEventForObserver,
    decode,
    encode,
)
from sacbot.wsclient import PING_INTERVAL_S, ClientStream

GAME_START_TIMEOUT_S = 10.0  # as the official runner


class GameAborted(UserError):
    """The server aborted the game (a StopGame, too few bots ready, every participant gone)."""


@dataclass
class GameResult:
    number_of_rounds: int
    results: list[ResultsForObserver]  # sorted by rank
    participants: list[Participant]


_OBSERVER_TICK = b'{"type":"TickEventForObserver"'


class _ControllerStream(ClientStream):
    """The controller's connection: messages queue for `recv`, decoded to str (text) or left as bytes.

    While `skip_ticks` is set (a game followed without `on_tick`), observer ticks are dropped as they arrive,
    so the one message of every turn costs no queueing, decoding or coroutine wake-up. Reading pauses while
    `MAX_QUEUE` messages wait, as websockets' own connections do."""

    MAX_QUEUE = 16
    skip_ticks = False

    def __init__(self, protocol: ClientProtocol, ping_interval: float | None = None) -> None:
        super().__init__(protocol, ping_interval)
        self._queue: deque[str | bytes] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._paused = False

    def on_message(self, data: bytes, text: bool) -> None:
        if text and self.skip_ticks and data[: len(_OBSERVER_TICK)] == _OBSERVER_TICK:
            return
        try:
            msg: str | bytes = data.decode() if text else data
        except UnicodeDecodeError as exc:
            self.protocol.fail(CloseCode.INVALID_DATA, f"{exc.reason} at position {exc.start}")
            self.flush()
            return
        self._queue.append(msg)
        self._wake()
        if len(self._queue) >= self.MAX_QUEUE and not self._paused and self.transport is not None:
            self._paused = True
            self.transport.pause_reading()

    def on_closed(self) -> None:
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def recv(self) -> str | bytes:
        """The next message; raises ConnectionClosed once the connection is closed and nothing is left."""
        queue = self._queue
        while not queue:
            if self.closed.done():
                raise self.protocol.close_exc
            self._waiter = self.loop.create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        msg = queue.popleft()
        if self._paused and len(queue) <= self.MAX_QUEUE // 4 and self.transport is not None:
            self._paused = False
            self.transport.resume_reading()
        return msg

    async def send(self, text: str) -> None:
        self.send_text(text.encode())


class Controller:
    """One controller (or, with `observer=True`, observer) connection."""

    def __init__(self, ws: _ControllerStream, handshake: ServerHandshake) -> None:
        self.ws = ws
        self.server = handshake
        self.bots: list[BotInfo] = []  # the latest BotListUpdate

    @classmethod
    async def connect(
        cls,
        url: str,
        secret: str | None = None,
        *,
        name: str = "sacbot controller",
        observer: bool = False,
        timeout: float = 10.0,
    ) -> Controller:
        try:
            async with asyncio.timeout(timeout):
                ws = await _ControllerStream.open(
                    url, max_size=None, timeout=timeout, ping_interval=PING_INTERVAL_S
                )
        except (OSError, TimeoutError, WebSocketException) as exc:
            raise UserError(f"cannot connect to the server at {url}: {exc or 'timed out'}") from None
        try:
            async with asyncio.timeout(timeout):
                first = await ws.recv()
            hs = decode(first)
            if not isinstance(hs, ServerHandshake):
                raise UserError(f"{url} did not greet with a ServerHandshake")
            kind = ObserverHandshake if observer else ControllerHandshake
            await ws.send(
                encode(
                    kind(
                        session_id=hs.session_id,
                        name=name,
                        version=__version__,
                        author="sacbot",
                        secret=secret,
                    )
                )
            )
        except BaseException:
            await ws.close()
            raise
        self = cls(ws, hs)
        # The server answers a good handshake with the bot list; a bad secret closes the socket.
        try:
            async with asyncio.timeout(timeout):
                await self._until(BotListUpdate)
        except ConnectionClosed as exc:
            reason = exc.rcvd.reason if exc.rcvd else "connection lost"
            raise UserError(f"the server refused the controller: {reason}") from None
        return self

    async def _recv(self) -> Message:
        while True:
            msg = _decode(await self.ws.recv())
            if msg is None:
                continue
            if isinstance(msg, BotListUpdate):
                self.bots = msg.bots
            return msg

    async def _until(self, cls: type) -> Any:
        while True:
            msg = await self._recv()
            if isinstance(msg, cls):
                return msg

    async def wait_for_bots(
        self, names: Sequence[str], timeout: float = 30.0, alive: Callable[[], None] | None = None
    ) -> list[BotInfo]:
        """Wait until the bot list holds every name in `names` (a name twice means two such bots).

        `alive()` is called about every 0.2 s while waiting; it may raise to give up early (e.g. a booted
        process died)."""
        want = Counter(names)
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while True:
            picked = _match(self.bots, want)
            if picked is not None:
                return picked
            left = end - loop.time()
            if left <= 0:
                have = ", ".join(sorted(f"{b.name} {b.version}" for b in self.bots)) or "none"
                missing = want - Counter(b.name for b in self.bots)
                raise UserError(
                    f"timed out after {timeout:g} s waiting for bots to connect: "
                    f"missing {', '.join(sorted(missing.elements()))} (connected: {have})"
                )
            if alive is not None:
                alive()
            try:
                async with asyncio.timeout(min(left, 0.2)):
                    await self._until(BotListUpdate)
            except TimeoutError:
                pass

    async def start_game(self, setup: GameSetup, bots: Sequence[BotInfo], debug_mode: bool = False) -> None:
        addresses = [BotAddress(host=b.host, port=b.port) for b in bots]
        await self.ws.send(
            encode(StartGame(game_setup=setup, bot_addresses=addresses, debug_mode=debug_mode or None))
        )

    async def run_game(
        self,
        setup: GameSetup,
        bots: Sequence[BotInfo],
        *,
        on_event: Callable[[Message], None] | None = None,
        on_tick: Callable[[TickEventForObserver], None] | None = None,
        start_timeout: float = GAME_START_TIMEOUT_S,
    ) -> GameResult:
        """Start a game and follow it to its end. Ticks are decoded only when `on_tick` is given."""
        await self.start_game(setup, bots)
        ws = self.ws
        ws.skip_ticks = on_tick is None
        try:
            return await self._follow(on_event, on_tick, start_timeout)
        finally:
            ws.skip_ticks = False

    async def _follow(
        self,
        on_event: Callable[[Message], None] | None,
        on_tick: Callable[[TickEventForObserver], None] | None,
        start_timeout: float,
    ) -> GameResult:
        try:
            async with asyncio.timeout(start_timeout):
                started = await self._until_started(on_event)
        except TimeoutError:
            raise UserError(
                f"the server did not start the game within {start_timeout:g} s "
                "(it rejected the StartGame or the bots never got ready)"
            ) from None
        while True:
            raw = await self.ws.recv()
            if on_tick is None and isinstance(raw, str) and raw.startswith('{"type":"TickEventForObserver"'):
                continue  # the common case, skipped without parsing
            msg = _decode(raw)
            if msg is None:
                continue
            if isinstance(msg, TickEventForObserver):
                if on_tick is not None:
                    on_tick(msg)
                continue
            if isinstance(msg, BotListUpdate):
                self.bots = msg.bots
            if on_event is not None:
                on_event(msg)
            if isinstance(msg, GameEndedEventForObserver):
                results = sorted(msg.results, key=lambda r: (r.rank, -r.total_score, r.id))
                return GameResult(msg.number_of_rounds, results, started.participants)
            if isinstance(msg, GameAbortedEvent):
                raise GameAborted("the server aborted the game")

    async def _until_started(self, on_event: Callable[[Message], None] | None) -> GameStartedEventForObserver:
        while True:
            msg = await self._recv()
            if on_event is not None:
                on_event(msg)
            if isinstance(msg, GameStartedEventForObserver):
                return msg
            if isinstance(msg, GameAbortedEvent):
                raise GameAborted("the server aborted the game before it started")

    async def stop_game(self) -> None:
        await self.ws.send(encode(StopGame()))

    async def pause(self) -> None:
        await self.ws.send(encode(PauseGame()))

    async def resume(self) -> None:
        await self.ws.send(encode(ResumeGame()))

    async def next_turn(self) -> None:
        await self.ws.send(encode(NextTurn()))

    async def change_tps(self, tps: int) -> None:
        await self.ws.send(encode(ChangeTps(tps=tps)))

    async def close(self) -> None:
        await self.ws.close()

    async def __aenter__(self) -> Controller:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()


def _decode(raw: str | bytes) -> Message | None:
    """A message, or None for a type this client does not know (a newer server may send more kinds)."""
    try:
        return decode(raw)
    except ProtocolError as exc:
        if exc.field == "type" and "unknown message type" in exc.problem:
            return None
        raise


def _match(bots: Sequence[BotInfo], want: Counter[str]) -> list[BotInfo] | None:
    picked: list[BotInfo] = []
    for name, count in want.items():
        same = [b for b in bots if b.name == name]
        if len(same) < count:
            return None
        picked.extend(same[:count])
    return picked


async def play_game_async(
    url: str,
    setup: GameSetup,
    bot_names: Sequence[str],
    *,
    secret: str | None = None,
    connect_timeout: float = 30.0,
    on_event: Callable[[Message], None] | None = None,
    on_tick: Callable[[TickEventForObserver], None] | None = None,
    alive: Callable[[], None] | None = None,
) -> GameResult:
    async with await Controller.connect(url, secret) as ctl:
        bots = await ctl.wait_for_bots(bot_names, connect_timeout, alive=alive)
        return await ctl.run_game(setup, bots, on_event=on_event, on_tick=on_tick)


def play_game(
    url: str,
    setup: GameSetup,
    bot_names: Sequence[str],
    *,
    secret: str | None = None,
    connect_timeout: float = 30.0,
    on_event: Callable[[Message], None] | None = None,
    on_tick: Callable[[TickEventForObserver], None] | None = None,
    alive: Callable[[], None] | None = None,
) -> GameResult:
    """Blocking: connect as a controller, wait for the named bots, play one game, return its results."""
    return asyncio.run(
        play_game_async(
            url,
            setup,
            bot_names,
            secret=secret,
            connect_timeout=connect_timeout,
            on_event=on_event,
            on_tick=on_tick,
            alive=alive,
        )
    )
