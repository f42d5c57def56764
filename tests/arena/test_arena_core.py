"""The arena's sans-I/O core with the real engine, a recording transport and a hand-driven clock."""

from __future__ import annotations

import gc
import json
import math
import sys
from collections import defaultdict
from typing import Any

from sacbot.arena.core import ArenaConfig, ArenaCore
from sacbot.engine import game_setup_for
from sacbot.protocol import BotAddress, StartGame, encode

from .arena_support import validate


class Rec:
    """Transport that records what the core sends, validating every message against the official schemas."""

    def __init__(self) -> None:
        self.sent: dict[int, list[dict[str, Any]]] = defaultdict(list)
        self.closed: dict[int, tuple[int, str]] = {}

    def send(self, cid: int, data: bytes) -> None:
        self.sent[cid].append(validate(data.decode()))

    def close(self, cid: int, code: int, reason: str) -> None:
        self.closed[cid] = (code, reason)

    def types(self, cid: int) -> list[str]:
        return [m["type"] for m in self.sent[cid]]

    def take(self, cid: int) -> list[dict[str, Any]]:
        out = self.sent[cid]
        self.sent[cid] = []
        return out


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


class World:
    def __init__(self, **config: Any) -> None:
        self.rec = Rec()
        self.clock = Clock()
        self.core = ArenaCore(self.rec, ArenaConfig(**config), clock=self.clock)
        self.ports: dict[int, int] = {}

    def connect(self) -> tuple[int, str]:
        port = 40000 + len(self.ports)
        cid = self.core.connect("127.0.0.1", port)
        self.ports[cid] = port
        hs = self.rec.take(cid)[0]
        assert hs["type"] == "ServerHandshake"
        return cid, hs["sessionId"]

    def bot(self, name: str, secret: str | None = None) -> int:
        cid, sid = self.connect()
        msg: dict[str, Any] = {
            "type": "BotHandshake",
            "sessionId": sid,
            "name": name,
            "version": "1.0",
            "authors": ["tests"],
        }
        if secret:
            msg["secret"] = secret
        self.send(cid, msg)
        return cid

    def controller(self, secret: str | None = None) -> int:
        cid, sid = self.connect()
        self.send(
            cid,
            {"type": "ControllerHandshake", "sessionId": sid, "name": "c", "version": "1", "secret": secret},
        )
        return cid

    def send(self, cid: int, msg: dict[str, Any]) -> None:
        self.core.receive(cid, json.dumps({k: v for k, v in msg.items() if v is not None}))

    def start(self, ctl: int, bots: list[int], game_type: str = "1v1", **over: Any) -> None:
        over.setdefault("number_of_rounds", 2)
        setup = game_setup_for(game_type, **over)
        addrs = [BotAddress(host="localhost", port=self.ports[b]) for b in bots]
        self.core.receive(ctl, encode(StartGame(game_setup=setup, bot_addresses=addrs)))

    def ready_all(self, bots: list[int]) -> None:
        for b in bots:
            self.send(b, {"type": "BotReady"})

    def intent(self, cid: int, **fields: Any) -> None:
        msg = {
            "type": "BotIntent",
            "turnRate": 0,
            "gunTurnRate": 0,
            "radarTurnRate": 45,
            "targetSpeed": 0,
            "firepower": 0,
        }
        msg.update(fields)
        self.send(cid, msg)


def game_on(w: World, n: int = 2, **over: Any) -> tuple[int, list[int]]:
    ctl = w.controller()
    bots = [w.bot(f"B{i}") for i in range(n)]
    w.start(ctl, bots, "1v1" if n == 2 else "custom", **over)
    w.ready_all(bots)
    return ctl, bots


def test_handshakes_check_session_id_and_secrets() -> None:
    w = World(bot_secrets=frozenset({"bs"}), controller_secrets=frozenset({"cs"}))
    cid, _ = w.connect()
    w.send(
        cid,
        {
            "type": "BotHandshake",
            "sessionId": "nope",
            "name": "X",
            "version": "1",
            "authors": ["a"],
            "secret": "bs",
        },
    )
    assert w.rec.closed[cid][0] == 1008
    bad = w.bot("X", secret="wrong")
    assert w.rec.closed[bad] == (1008, "Invalid secret")
    bad_ctl = w.controller(secret="bs")
    assert w.rec.closed[bad_ctl] == (1008, "Invalid secret")
    ctl = w.controller(secret="cs")
    assert w.rec.take(ctl) == [{"type": "BotListUpdate", "bots": []}]
    good = w.bot("Good", secret="bs")
    update = w.rec.take(ctl)
    assert [m["type"] for m in update] == ["BotListUpdate"]
    (info,) = update[0]["bots"]
    assert (info["name"], info["host"], info["port"]) == ("Good", "127.0.0.1", w.ports[good])
    assert "secret" not in info  # never leaked to observers
    w.core.disconnect(good)
    assert w.rec.take(ctl) == [{"type": "BotListUpdate", "bots": []}]


def test_server_handshake_is_tank_royale_1x() -> None:
    w = World()
    cid = w.core.connect("127.0.0.1", 1234)
    hs = w.rec.sent[cid][0]
    assert hs["variant"] == "Tank Royale" and hs["version"].split(".")[0] == "1"
    assert len(hs["sessionId"]) == 22 and "1v1" in hs["gameTypes"]


def test_start_game_is_validated_and_numbers_bots_by_session_id() -> None:
    w = World()
    ctl = w.controller()
    bots = [w.bot("A"), w.bot("B")]
    w.start(ctl, bots, number_of_rounds=0)
    odd = game_setup_for("1v1")
    odd.game_type = "nosuchtype"
    addrs = [BotAddress(host="127.0.0.1", port=w.ports[b]) for b in bots]
    w.core.receive(ctl, encode(StartGame(game_setup=odd, bot_addresses=addrs)))
    w.core.receive(
        ctl,
        encode(
            StartGame(game_setup=game_setup_for("1v1"), bot_addresses=[BotAddress(host="10.0.0.9", port=1)])
        ),
    )
    assert all("GameStartedEventForBot" not in w.rec.types(b) for b in bots)
    w.start(ctl, bots)
    sids = {b: w.core.conns[b].session_id for b in bots}
    for b in bots:
        (started,) = w.rec.take(b)
        assert started["type"] == "GameStartedEventForBot"
        assert started["myId"] == sorted(sids.values()).index(sids[b]) + 1
        setup = started["gameSetup"]
        assert setup["gameType"] == "1v1" and "isReadyTimeoutLocked" in setup
        assert (
            18 <= started["startX"] <= 782 and 18 <= started["startY"] <= 582 and "startDirection" in started
        )


def test_turn_runs_as_soon_as_every_bot_answered() -> None:
    w = World()
    ctl, bots = game_on(w)
    types = w.rec.types(ctl)
    assert types[-3:] == ["GameStartedEventForObserver", "RoundStartedEvent", "TickEventForObserver"]
    for b in bots:
        assert w.rec.types(b)[-2:] == ["RoundStartedEvent", "TickEventForBot"]
        w.rec.take(b)
    w.intent(bots[0])
    assert w.rec.sent[bots[0]] == []  # one of two answered: no turn yet, and no timer ran
    w.intent(bots[1])
    for b in bots:
        (tick,) = w.rec.take(b)
        assert (tick["type"], tick["turnNumber"]) == ("TickEventForBot", 2)


def test_turn_timeout_skips_a_late_bot_and_repeats_its_intent() -> None:
    w = World(seed=5)  # both bots start clear of the walls; a random placement could put one against a wall
    ctl, bots = game_on(w)
    for b in bots:
        w.rec.take(b)
    w.intent(bots[0], targetSpeed=8)
    w.intent(bots[1], targetSpeed=8)
    for b in bots:
        w.rec.take(b)
    w.intent(bots[0], targetSpeed=8)
    assert w.core.deadline is not None
    w.clock.t = w.core.deadline - 0.01
    w.core.on_timer()  # too early: nothing happens
    assert w.rec.sent[bots[1]] == []
    w.clock.t = w.core.deadline
    w.core.on_timer()
    late = w.rec.take(bots[1])
    assert [m["type"] for m in late] == ["SkippedTurnEvent", "TickEventForBot"]
    assert late[0]["turnNumber"] == 2 and late[1]["turnNumber"] == 3
    assert late[1]["botState"]["speed"] > 1  # the last intent (speed 8) repeated
    assert [m["type"] for m in w.rec.take(bots[0])] == ["TickEventForBot"]


def test_pause_next_turn_resume_and_tps() -> None:
    w = World()
    ctl, bots = game_on(w)
    w.rec.take(ctl)
    w.send(ctl, {"type": "PauseGame"})
    assert w.rec.take(ctl) == [{"type": "GamePausedEventForObserver", "pauseCause": "pause"}]
    for b in bots:
        w.intent(b)
    assert w.core.deadline is None and w.rec.sent[ctl] == []
    w.send(ctl, {"type": "NextTurn"})
    assert [m["turnNumber"] for m in w.rec.take(ctl)] == [2]
    w.send(ctl, {"type": "ResumeGame"})
    assert w.rec.take(ctl) == [{"type": "GameResumedEventForObserver"}]
    w.send(ctl, {"type": "ChangeTps", "tps": 10})
    assert w.rec.take(ctl) == [{"type": "TpsChangedEvent", "tps": 10}]
    for b in bots:
        w.intent(b)
    ticks = w.rec.take(ctl)  # answered, but TPS 10 holds the turn back for 0.1 s after the last tick
    assert ticks == [] and w.core.deadline is not None
    w.clock.t = w.core.deadline
    w.core.on_timer()
    assert [m["turnNumber"] for m in w.rec.take(ctl)] == [3]
    w.send(ctl, {"type": "ChangeTps", "tps": 5000})  # out of range: ignored
    assert w.rec.take(ctl) == []


def test_stop_game_aborts_for_observers_and_bots() -> None:
    w = World()
    ctl, bots = game_on(w)
    w.send(ctl, {"type": "StopGame"})
    assert w.rec.types(ctl)[-1] == "GameAbortedEvent"
    assert all(w.rec.types(b)[-1] == "GameAbortedEvent" for b in bots)
    assert w.core.run is None and w.core.deadline is None


def test_ready_timeout_drops_silent_bots_or_aborts() -> None:
    w = World()
    ctl = w.controller()
    bots = [w.bot(f"B{i}") for i in range(3)]
    w.start(ctl, bots, "custom")  # min 2 participants
    w.ready_all(bots[:2])
    assert "GameStartedEventForObserver" not in w.rec.types(ctl)
    assert w.core.deadline is not None
    w.clock.t = w.core.deadline
    w.core.on_timer()
    started = [m for m in w.rec.sent[ctl] if m["type"] == "GameStartedEventForObserver"]
    assert len(started[0]["participants"]) == 2
    assert "TickEventForBot" not in w.rec.types(bots[2])

    w2 = World()
    ctl2 = w2.controller()
    bots2 = [w2.bot("A"), w2.bot("B")]
    w2.start(ctl2, bots2)
    w2.ready_all(bots2[:1])
    w2.clock.t = w2.core.deadline or 0
    w2.core.on_timer()
    assert w2.rec.types(ctl2)[-1] == "GameAbortedEvent" and w2.core.run is None


def test_a_bot_leaving_mid_game_keeps_the_game_going_until_the_last_one_leaves() -> None:
    w = World()
    ctl, bots = game_on(w)
    w.core.disconnect(bots[1])
    assert w.rec.types(ctl)[-1] == "BotListUpdate"
    w.rec.take(bots[0])
    w.intent(bots[0])  # the only connected bot answered: the turn runs at once
    assert [m["type"] for m in w.rec.take(bots[0])] == ["TickEventForBot"]
    w.core.disconnect(bots[0])
    assert w.rec.types(ctl)[-2:] == ["GameAbortedEvent", "BotListUpdate"]


def aim(w: World, cid: int) -> float:
    """Gun turn towards the other bot (read from the engine: the test plays a perfect gunner)."""
    run = w.core.run
    assert run is not None
    me = run.conn_bot[cid]
    game = run.game
    other = next(b for b in game.bot_ids if b != me)
    a, o = game.bot(me), game.bot(other)
    want = math.degrees(math.atan2(o.y - a.y, o.x - a.x))
    return max(-20.0, min(20.0, (want - a.gun_direction + 180) % 360 - 180))


def test_a_whole_game_ends_with_results_for_bots_and_observers() -> None:
    w = World(seed=3)
    ctl, bots = game_on(w, number_of_rounds=2)
    turns = 0
    while w.core.run is not None and turns < 20000:
        answered = False
        for b in bots:
            last = w.rec.sent[b][-1]["type"] if w.rec.sent[b] else ""
            if last == "TickEventForBot":
                w.intent(b, gunTurnRate=aim(w, b), firepower=3)
                answered = True
        if not answered and w.core.deadline is not None:  # between rounds
            w.clock.t = max(w.clock.t, w.core.deadline)
            w.core.on_timer()
        turns += 1
    for b in bots:
        types = w.rec.types(b)
        assert types.count("RoundEndedEventForBot") == 2 and types[-1] == "GameEndedEventForBot"
        assert "SkippedTurnEvent" not in types
    ended = w.rec.sent[ctl][-1]
    assert ended["type"] == "GameEndedEventForObserver" and ended["numberOfRounds"] == 2
    assert sorted(r["rank"] for r in ended["results"])[0] == 1


class Null:
    """A transport that only remembers, per client, whether the last message was a tick."""

    def __init__(self) -> None:
        self.tick_for: set[int] = set()

    def send(self, cid: int, data: bytes) -> None:
        if data.startswith(b'{"type":"TickEventForBot"'):
            self.tick_for.add(cid)

    def close(self, cid: int, code: int, reason: str) -> None:
        raise AssertionError(f"client {cid} closed: {code} {reason}")


def test_memory_stays_flat_over_many_games_and_rounds() -> None:
    null = Null()
    clock = Clock()
    core = ArenaCore(null, ArenaConfig(seed=1), clock=clock)
    w = World()
    w.core, w.rec = core, null  # type: ignore[assignment]
    ctl = core.connect("127.0.0.1", 1)
    core.receive(
        ctl,
        json.dumps(
            {
                "type": "ControllerHandshake",
                "sessionId": core.conns[ctl].session_id,
                "name": "c",
                "version": "1",
            }
        ),
    )
    bots = []
    for i in range(2):
        cid = core.connect("127.0.0.1", 100 + i)
        w.ports[cid] = 100 + i
        sid = core.conns[cid].session_id
        core.receive(
            cid,
            json.dumps(
                {"type": "BotHandshake", "sessionId": sid, "name": f"B{i}", "version": "1", "authors": ["t"]}
            ),
        )
        bots.append(cid)
    setup = game_setup_for("1v1", number_of_rounds=5, arena_width=400, arena_height=400, gun_cooling_rate=2.0)
    addrs = [BotAddress(host="127.0.0.1", port=w.ports[b]) for b in bots]
    start = encode(StartGame(game_setup=setup, bot_addresses=addrs))

    def play_game() -> None:
        core.receive(ctl, start)
        for b in bots:
            core.receive(b, '{"type":"BotReady"}')
        while core.run is not None:
            answered = False
            for b in bots:
                if b in null.tick_for and core.run is not None and core.run.in_round:
                    null.tick_for.discard(b)
                    w.intent(b, gunTurnRate=aim(w, b), firepower=3)
                    answered = True
            if not answered and core.deadline is not None:
                clock.t = max(clock.t, core.deadline)
                core.on_timer()

    # Allocated blocks rather than tracemalloc: tracing would slow every allocation of the game down.
    for _ in range(3):
        play_game()
    gc.collect()
    before = sys.getallocatedblocks()
    rounds_before, turns_before = core.stats.rounds, core.stats.turns
    for _ in range(12):
        play_game()
    gc.collect()
    grown = sys.getallocatedblocks() - before
    assert core.stats.rounds - rounds_before == 60 and core.stats.games == 15
    turns = core.stats.turns - turns_before
    assert grown < 2000, f"{grown} more memory blocks after {turns} more turns"


def test_the_next_round_waits_for_the_answers_to_the_last_tick() -> None:
    """An answer to a round's last tick must not count for the next round's tick 1: the bot would then play
    that whole round one turn late. The next round starts once both answered (or at the turn timeout)."""
    w = World(seed=3)
    ctl, bots = game_on(w, number_of_rounds=3)
    while not all(w.rec.sent[b] and w.rec.sent[b][-1]["type"] == "RoundEndedEventForBot" for b in bots):
        for b in bots:
            if w.rec.sent[b] and w.rec.sent[b][-1]["type"] == "TickEventForBot":
                w.intent(b, gunTurnRate=aim(w, b), firepower=3)
    for b in bots:
        w.rec.take(b)
    w.core.on_timer()  # due at once before the fix; now the round waits for the answers
    assert all(w.rec.sent[b] == [] for b in bots)
    w.intent(bots[0], targetSpeed=-8)  # the answers to the last tick, reversing
    w.core.on_timer()
    assert all(w.rec.sent[b] == [] for b in bots)
    w.intent(bots[1], targetSpeed=-8)
    assert w.core.deadline is not None
    w.clock.t = max(w.clock.t, w.core.deadline)
    w.core.on_timer()
    for b in bots:
        assert [(m["type"], m.get("turnNumber")) for m in w.rec.take(b)] == [
            ("RoundStartedEvent", None),
            ("TickEventForBot", 1),
        ]
    for b in bots:
        w.intent(b, targetSpeed=8)  # the answers to round 2's tick 1: these drive turn 2
    for b in bots:
        (tick,) = w.rec.take(b)
        assert (tick["turnNumber"], tick["botState"]["speed"]) == (2, 1.0)
    for b in bots:
        w.intent(b)

    # A bot that never answers the last tick holds the next round up to the turn timeout, no longer.
    while not all(w.rec.sent[b] and w.rec.sent[b][-1]["type"] == "RoundEndedEventForBot" for b in bots):
        for b in bots:
            if w.rec.sent[b] and w.rec.sent[b][-1]["type"] == "TickEventForBot":
                w.intent(b, gunTurnRate=aim(w, b), firepower=3)
    w.intent(bots[0])
    assert w.core.deadline is not None
    w.clock.t = w.core.deadline - 0.001
    w.core.on_timer()
    assert w.rec.types(bots[0])[-1] == "RoundEndedEventForBot"
    w.clock.t = w.core.deadline
    w.core.on_timer()
    assert w.rec.types(bots[0])[-2:] == ["RoundStartedEvent", "TickEventForBot"]
