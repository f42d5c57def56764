"""Suite-wide settings, and the one fixture tests of several folders share: `record_game`, a real game
played in-process and recorded (the arena's real sans-I/O core, built-in opponents answering over the wire
codec, a controller starting the game and `RecordingWriter` recording it). A game of a few hundred turns
takes a fraction of a second, so tests get real `.battle.gz` files without processes."""

from __future__ import annotations

import collections
import json
import signal
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from sacbot.arena.core import ArenaConfig, ArenaCore
from sacbot.engine import game_setup_for
from sacbot.opponents import ClassicBot, make_opponent
from sacbot.protocol import (
    BotAddress,
    BotHandshake,
    BotIntent,
    BotPolicyUpdate,
    BotReady,
    ControllerHandshake,
    GameEndedEventForBot,
    GameStartedEventForBot,
    RoundEndedEventForBot,
    RoundStartedEvent,
    ServerHandshake,
    StartGame,
    StopGame,
    TickEventForBot,
    decode,
    encode,
)
from sacbot.viewer.recording import RecordingWriter

from .viewer.viewer_support import DEBUG_SVG, Played

# No per-example deadline: on a loaded 2-core CI machine a slow example is noise, not a failure. The property
# tests check results, never time.
settings.register_profile("sacbot", deadline=None)
settings.load_profile("sacbot")

# A suite started as a background job (`cmd &` without job control) inherits an ignored SIGINT, and so would
# every process a test starts: the Ctrl-C tests would then signal processes that cannot hear it. The suite
# runs as from a terminal, where Ctrl-C interrupts.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


class _Transport:
    def __init__(self) -> None:
        self.pending: collections.deque[tuple[int, str]] = collections.deque()

    def send(self, conn_id: int, data: bytes) -> None:
        self.pending.append((conn_id, data.decode()))

    def close(self, conn_id: int, code: int, reason: str) -> None:
        raise AssertionError(f"the arena closed client {conn_id}: {code} {reason}")


class _Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def _play(
    directory: Path,
    opponents: Sequence[str] = ("Corners", "Fire"),
    *,
    rounds: int = 2,
    seed: int = 7,
    arena: tuple[int, int] = (800, 600),
    painter: str | None = None,
    paint_always: bool = False,
    enable_painter: bool = True,
    debug_graphics: bool = False,
    stop_after_turns: int | None = None,
    on_tick: Callable[[RecordingWriter, str], None] | None = None,
    flush_s: float = 1.0,
) -> Played:
    """Play one game, recorded into `directory`.

    `painter` names an opponent whose intents carry `DEBUG_SVG` whenever its tick says it may debug (always,
    with `paint_always`); `debug_graphics` turns graphical debugging on for every bot (`--debug-graphics`);
    otherwise the controller enables it for the painter with a BotPolicyUpdate unless `enable_painter` is
    false. `on_tick(writer, text)` runs on every observer tick; `stop_after_turns` ends the game with
    a StopGame."""
    transport = _Transport()
    clock = _Clock()
    writer = RecordingWriter(directory, flush_s=flush_s)
    observed: list[str] = []
    core = ArenaCore(
        transport,
        ArenaConfig(seed=seed, tps=-1, debug_graphics=debug_graphics),
        clock=clock,
        recorder=writer,
    )
    bots: dict[int, ClassicBot] = {}
    names: dict[int, str] = {}
    ports: dict[int, int] = {}
    for i, name in enumerate(opponents):
        cid = core.connect("127.0.0.1", 41000 + i)
        bots[cid] = make_opponent(name, seed=seed + i)
        names[cid] = name
        ports[cid] = 41000 + i
    ctl = core.connect("127.0.0.1", 42000)
    state: dict[str, Any] = {"ended": False, "turns": 0, "ids": {}}

    def bot_message(cid: int, text: str) -> None:
        msg = decode(text)
        bot = bots[cid]
        if isinstance(msg, ServerHandshake):
            hs = BotHandshake(session_id=msg.session_id, name=names[cid], version="1.0", authors=["tests"])
            core.receive(cid, encode(hs))
        elif isinstance(msg, GameStartedEventForBot):
            state["ids"][names[cid]] = msg.my_id
            bot.on_game_started(msg)
            core.receive(cid, encode(BotReady()))
        elif isinstance(msg, RoundStartedEvent):
            bot.on_round_started(msg)
        elif isinstance(msg, TickEventForBot):
            intent: BotIntent = bot.on_tick(msg)
            if names[cid] == painter:
                may = msg.bot_state.is_debugging_enabled or paint_always
                intent.debug_graphics = DEBUG_SVG if may else None
            core.receive(cid, encode(intent))
        elif isinstance(msg, RoundEndedEventForBot):
            bot.on_round_ended(msg)
        elif isinstance(msg, GameEndedEventForBot):
            bot.on_game_ended(msg)

    def controller_message(text: str) -> None:
        observed.append(text)
        kind = json.loads(text)["type"]
        if kind == "ServerHandshake":
            sid = json.loads(text)["sessionId"]
            core.receive(
                ctl, encode(ControllerHandshake(session_id=sid, name="tests", version="1", author="t"))
            )
        elif kind == "GameStartedEventForObserver" and painter and enable_painter and not debug_graphics:
            (bot_id,) = [p["id"] for p in json.loads(text)["participants"] if p["name"] == painter]
            core.receive(ctl, encode(BotPolicyUpdate(bot_id=bot_id, debugging_enabled=True)))
        elif kind == "TickEventForObserver":
            state["turns"] += 1
            if on_tick is not None:
                on_tick(writer, text)
            if stop_after_turns is not None and state["turns"] == stop_after_turns:
                core.receive(ctl, encode(StopGame()))
        elif kind in ("GameEndedEventForObserver", "GameAbortedEvent"):
            state["ended"] = True

    def pump() -> None:
        while transport.pending:
            cid, text = transport.pending.popleft()
            if cid == ctl:
                controller_message(text)
            elif cid in bots:
                bot_message(cid, text)

    pump()
    width, height = arena
    setup = game_setup_for("1v1", number_of_rounds=rounds, arena_width=width, arena_height=height)
    addresses = [BotAddress(host="127.0.0.1", port=ports[c]) for c in bots]
    core.receive(ctl, encode(StartGame(game_setup=setup, bot_addresses=addresses)))
    pump()
    while not state["ended"]:
        if core.deadline is None:
            raise AssertionError("the game stalled")
        clock.t = max(clock.t, core.deadline)
        core.on_timer()
        pump()
    writer.close()
    return Played(writer, observed)


@pytest.fixture(scope="session")
def record_game() -> Callable[..., Played]:
    """`record_game(directory, opponents=("Corners", "Fire"), *, rounds=..., seed=..., painter=...)`: a game
    played in-process and recorded in directory."""
    return _play
