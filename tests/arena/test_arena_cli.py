"""`sacbot arena run` and `sacbot arena serve` as a user runs them, and the controller over real sockets."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from sacbot.arena.controller import Controller
from sacbot.arena.server import EmbeddedArena
from sacbot.engine import game_setup_for
from sacbot.errors import UserError
from sacbot.protocol import Message, TickEventForObserver

from .arena_support import AIM_BOT, BENCH_BOT_SH

SACBOT = [sys.executable, "-m", "sacbot"]


def _run(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SACBOT, *args], capture_output=True, text=True, timeout=timeout)


def test_arena_run_plays_and_prints_json_results(tmp_path: Path, make_bot_dir: Callable[..., Path]) -> None:
    dirs = [make_bot_dir(tmp_path, "Amber", sh=BENCH_BOT_SH), make_bot_dir(tmp_path, "Basil", py=AIM_BOT)]
    out = _run("arena", "run", *map(str, dirs), "--rounds", "2", "--game-type", "1v1", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    results = data["results"]
    assert {r["name"] for r in results} == {"Amber", "Basil"}
    for r in results:
        for key in (
            "id",
            "name",
            "version",
            "rank",
            "totalScore",
            "survival",
            "lastSurvivorBonus",
            "bulletDamage",
            "bulletKillBonus",
            "ramDamage",
            "ramKillBonus",
            "firstPlaces",
            "secondPlaces",
            "thirdPlaces",
        ):
            assert key in r, key
    assert sum(r["firstPlaces"] for r in results) >= 2 and data["numberOfRounds"] == 2


def test_arena_run_table(tmp_path: Path, make_bot_dir: Callable[..., Path]) -> None:
    dirs = [make_bot_dir(tmp_path, name, py=AIM_BOT) for name in ("Cedar", "Dill")]
    out = _run("arena", "run", *map(str, dirs), "--rounds", "1")
    assert out.returncode == 0, out.stderr
    assert "Cedar" in out.stdout and "Dill" in out.stdout and "Total" in out.stdout


def test_a_bot_that_never_connects_ends_with_a_clear_error(
    tmp_path: Path, make_bot_dir: Callable[..., Path]
) -> None:
    good = make_bot_dir(tmp_path, "Elm", sh=BENCH_BOT_SH)
    silent = make_bot_dir(tmp_path, "Mute", sh="#!/bin/bash\nsleep 300\n")
    out = _run("arena", "run", str(good), str(silent), "--connect-timeout", "3")
    assert out.returncode != 0
    assert "Traceback" not in out.stderr
    assert out.stderr.startswith("sacbot: error: timed out") and "Mute" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_a_bot_that_exits_at_once_is_reported(tmp_path: Path, make_bot_dir: Callable[..., Path]) -> None:
    good = make_bot_dir(tmp_path, "Fig", sh=BENCH_BOT_SH)
    dead = make_bot_dir(tmp_path, "Dead", sh="#!/bin/bash\necho 'no such module' >&2\nexit 3\n")
    out = _run(
        "arena", "run", str(good), str(dead), "--connect-timeout", "20", "--log-dir", str(tmp_path / "l")
    )
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert "Dead" in out.stderr and "code 3" in out.stderr and "no such module" in out.stderr


def test_arena_run_rejects_a_bad_directory(tmp_path: Path) -> None:
    out = _run("arena", "run", str(tmp_path / "nope"), str(tmp_path / "nope2"))
    assert out.returncode == 2 and out.stderr.startswith("sacbot: error: not a bot directory")


def test_serve_on_a_free_port_prints_it_and_stops_on_ctrl_c() -> None:
    proc = subprocess.Popen(
        [*SACBOT, "arena", "serve", "--port", "0", "--tps", "-1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "ws://127.0.0.1:" in line
        url = line.strip().split()[-1]

        async def hello() -> str:
            ctl = await Controller.connect(url)
            await ctl.close()
            return ctl.server.variant

        assert asyncio.run(hello()) == "Tank Royale"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_controller_runs_a_game_and_sees_every_tick() -> None:
    with EmbeddedArena(controller_secrets={"cs"}) as arena:
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", AIM_BOT],
                env=dict(os.environ, SERVER_URL=arena.url, BOT_NAME=n, BOT_VERSION="1"),
                start_new_session=True,
            )
            for n in ("Gin", "Hop")
        ]
        events: list[str] = []
        ticks: list[tuple[int, int]] = []

        def on_event(m: Message) -> None:
            events.append(m.type)

        def on_tick(t: TickEventForObserver) -> None:
            ticks.append((t.round_number, t.turn_number))

        async def play() -> object:
            with pytest.raises(UserError, match="refused"):
                await Controller.connect(arena.url, "wrong")
            async with await Controller.connect(arena.url, "cs") as ctl:
                with pytest.raises(UserError, match="missing Nobody"):
                    await ctl.wait_for_bots(["Nobody"], 0.5)
                bots = await ctl.wait_for_bots(["Gin", "Hop"], 30)
                return await ctl.run_game(
                    game_setup_for("1v1", number_of_rounds=2), bots, on_event=on_event, on_tick=on_tick
                )

        try:
            result = asyncio.run(play())
        finally:
            for p in procs:
                p.kill()
                p.wait()
    assert events[-1] == "GameEndedEventForObserver" and events.count("RoundEndedEventForObserver") == 2
    assert "GameStartedEventForObserver" in events
    for rnd in (1, 2):
        turns = [t for r, t in ticks if r == rnd]
        assert turns == list(range(1, len(turns) + 1)) and turns
    assert result is not None


def test_a_silent_participant_is_skipped_by_the_turn_timer() -> None:
    """Over real sockets: a bot that never answers gets a SkippedTurnEvent per turn and the game goes on."""
    with EmbeddedArena() as arena:
        aimer = subprocess.Popen(
            [sys.executable, "-c", AIM_BOT],
            env=dict(os.environ, SERVER_URL=arena.url, BOT_NAME="Aimer", BOT_VERSION="1"),
            start_new_session=True,
        )
        try:

            async def play() -> tuple[list[str], list[int]]:
                from websockets.asyncio.client import connect

                silent = await connect(arena.url)
                hello = json.loads(await silent.recv())
                await silent.send(
                    json.dumps(
                        {
                            "type": "BotHandshake",
                            "sessionId": hello["sessionId"],
                            "name": "Silent",
                            "version": "1",
                            "authors": ["t"],
                        }
                    )
                )
                async with await Controller.connect(arena.url) as ctl:
                    bots = await ctl.wait_for_bots(["Aimer", "Silent"], 30)
                    setup = game_setup_for("1v1", number_of_rounds=1, turn_timeout=5000)
                    game = asyncio.ensure_future(ctl.run_game(setup, bots))
                    seen: list[str] = []
                    skipped: list[int] = []
                    while "GameEndedEventForBot" not in seen:
                        msg = json.loads(await asyncio.wait_for(silent.recv(), 30))
                        seen.append(msg["type"])
                        if msg["type"] == "GameStartedEventForBot":
                            await silent.send('{"type":"BotReady"}')
                        if msg["type"] == "SkippedTurnEvent":
                            skipped.append(msg["turnNumber"])
                    await asyncio.wait_for(game, 30)
                await silent.close()
                return seen, skipped

            seen, skipped = asyncio.run(play())
        finally:
            aimer.kill()
            aimer.wait()
    ticks = seen.count("TickEventForBot")
    assert ticks > 10 and "RoundEndedEventForBot" in seen
    # Every tick after turn 1 follows a skip of the turn before it (the last may be the bot's death tick).
    assert skipped[:5] == [1, 2, 3, 4, 5] and len(skipped) >= ticks - 2
