"""Recorded games for the viewer tests, played in-process: the arena's real sans-I/O core, built-in opponents
answering over the wire codec, a controller starting the game and `RecordingWriter` recording it. A game of a
few hundred turns takes a fraction of a second, so tests get real `.battle.gz` files without processes."""

from __future__ import annotations

import collections
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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

# Drawn when the bot may debug: a 40x40 red square with its lower-left corner at arena (100, 100), in the
# official Bot API's SVG form (viewBox 0 0 5000 5000, arena units, y up).
DEBUG_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 5000 5000">\n'
    '<rect x="100" y="100" width="40" height="40" fill="#ff0000" stroke="none" stroke-width="0" />\n'
    "</svg>\n"
)


class _Transport:
    def __init__(self) -> None:
        self.pending: collections.deque[tuple[int, str]] = collections.deque()

    def send(self, conn_id: int, text: str) -> None:
        self.pending.append((conn_id, text))

    def close(self, conn_id: int, code: int, reason: str) -> None:
        raise AssertionError(f"the arena closed client {conn_id}: {code} {reason}")


class _Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


@dataclass
class Played:
    writer: RecordingWriter  # closed
    observed: list[str]  # every text the controller received, in order

    @property
    def path(self) -> Path:
        assert len(self.writer.files) == 1
        return self.writer.files[0]


def play(
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


def quiet_frames(ticks: list[dict[str, Any]]) -> list[int]:
    """Frames where nothing covers the bots' centres: no bullet within 12 units, no burst for 60 turns."""
    out = []
    for i, t in enumerate(ticks):
        if t["turnNumber"] < 5 or len(t["botStates"]) < 2:
            continue
        recent = [e for tt in ticks[max(0, i - 60) : i + 1] for e in tt["events"]]
        if any(e["type"] in ("BulletHitBotEvent", "BotDeathEvent", "BulletHitBulletEvent") for e in recent):
            continue
        bots = t["botStates"]
        if any(math.dist((b["x"], b["y"]), (u["x"], u["y"])) < 12 for b in bots for u in t["bulletStates"]):
            continue
        if math.dist((bots[0]["x"], bots[0]["y"]), (bots[1]["x"], bots[1]["y"])) < 60:
            continue
        out.append(i)
    return out


_SHARED: dict[str, Played] = {}


def shared_game(tmp_path_factory: Any) -> Played:
    """One recorded game for every test module of this folder (each module's `played` fixture): Corners
    against Fire, two rounds, seeded; Corners paints `DEBUG_SVG` once the controller lets it."""
    if "game" not in _SHARED:
        _SHARED["game"] = play(
            tmp_path_factory.mktemp("recorded"), ("Corners", "Fire"), rounds=2, painter="Corners"
        )
    return _SHARED["game"]


def messages(path: Path) -> list[dict[str, Any]]:
    from sacbot.viewer.recording import read_recording

    return [json.loads(line) for line in read_recording(path).lines]
