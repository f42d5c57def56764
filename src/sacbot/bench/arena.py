"""`sacbot bench arena`: turns per second of a 1v1 between two bot processes over WebSocket at TPS -1.

The server runs on this process's loop with a controller connected (as in `sacbot arena run`); the two bots
are `sacbot.bench.benchbot` processes. After a warm-up, the turn counter is read over a few fixed windows; the
figures are medians over the windows. `server_us_per_turn` is the core's own time per turn (engine turn, tick
views, encoding and writing); `process_cpu_us_per_turn` is all CPU of this process (server, sockets,
controller) per turn; `bot_cpu_us_per_turn` is one bot process's CPU per turn. The machines are shared, so
`cpu_bound_turns_per_s_2_cores` adds what two free cores could sustain at those CPU costs (an upper bound: it
ignores the latency of the tick -> intent round trip).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import time
from typing import Any

from sacbot.arena.controller import Controller
from sacbot.arena.core import ArenaConfig
from sacbot.arena.core_types import GameRecorder
from sacbot.arena.server import ArenaServer
from sacbot.engine import game_setup_for

_FIGURES = (
    "turns_per_s",
    "server_us_per_turn",
    "process_cpu_us_per_turn",
    "bot_cpu_us_per_turn",
    "cpu_bound_turns_per_s_2_cores",
)


async def _bench(
    windows: int,
    window_s: float,
    warmup_s: float,
    client: bool,
    recorder: GameRecorder | None,
    compare: bool,
) -> dict[str, Any]:
    server = ArenaServer(ArenaConfig(tps=-1), port=0, recorder=recorder)
    await server.start()
    core = server.core
    assert core is not None
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "sacbot.bench.benchbot", *(["--client"] if client else [])],
            env=dict(os.environ, SERVER_URL=server.url, BOT_NAME=f"Bench{i}", BOT_VERSION="1.0"),
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        for i in range(2)
    ]
    # Per mode (recording or not), the figures of each window.
    samples: dict[bool, dict[str, list[float]]] = {
        mode: {name: [] for name in _FIGURES} for mode in (False, True)
    }

    async def window(recording: bool) -> None:
        core.recorder = recorder if recording else None
        turns0, secs0 = core.stats.turns, core.stats.turn_seconds
        wall0, cpu0, bots0 = time.perf_counter(), time.process_time(), _cpu_seconds(procs)
        await asyncio.sleep(window_s)
        turns = core.stats.turns - turns0
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        bots_cpu = _cpu_seconds(procs) - bots0
        if turns:
            got = samples[recording]
            got["turns_per_s"].append(turns / wall)
            got["server_us_per_turn"].append((core.stats.turn_seconds - secs0) / turns * 1e6)
            got["process_cpu_us_per_turn"].append(cpu / turns * 1e6)
            got["bot_cpu_us_per_turn"].append(bots_cpu / 2 / turns * 1e6)
            # What two free cores could sustain: the server's CPU or half of everyone's, whichever binds.
            got["cpu_bound_turns_per_s_2_cores"].append(turns / max(cpu, (cpu + bots_cpu) / 2))

    try:
        ctl = await Controller.connect(server.url)
        bots = await ctl.wait_for_bots(["Bench0", "Bench1"], 30.0)
        setup = game_setup_for("1v1", number_of_rounds=1_000_000)
        game = asyncio.ensure_future(ctl.run_game(setup, bots))
        await asyncio.sleep(warmup_s)
        for n in range(windows):
            if compare:
                # Windows with and without the recorder, alternating (and in turn first), under the same load.
                for recording in (True, False) if n % 2 else (False, True):
                    await window(recording)
            else:
                await window(recorder is not None)
        core.recorder = recorder
        await ctl.stop_game()
        try:
            await asyncio.wait_for(game, 5)
        except Exception:
            pass
        await ctl.close()
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
        await server.stop()
    figures: dict[str, Any] = {}
    for mode in (False, True) if compare else (recorder is not None,):
        suffix = "_recording" if compare and mode else ""
        got = samples[mode]
        for name in _FIGURES:
            figures[name + suffix] = round(statistics.median(got[name]), 1) if got[name] else None
    if compare:
        plain, rec = figures["turns_per_s"], figures["turns_per_s_recording"]
        if plain and rec:
            figures["recording_slowdown_pct"] = round(100 * (1 - rec / plain), 1)
        cpu, cpu_rec = figures["process_cpu_us_per_turn"], figures["process_cpu_us_per_turn_recording"]
        if cpu and cpu_rec:
            figures["recording_cpu_us_per_turn"] = round(cpu_rec - cpu, 1)
    figures.update(
        {
            "windows": len(samples[False]["turns_per_s"]) + len(samples[True]["turns_per_s"]),
            "window_s": window_s,
            "turns": core.stats.turns,
            "rounds": core.stats.rounds,
        }
    )
    return figures


def _cpu_seconds(procs: list[subprocess.Popen[bytes]]) -> float:
    """User + system CPU of the bot processes so far (Linux /proc; 0 elsewhere)."""
    total = 0.0
    for p in procs:
        try:
            with open(f"/proc/{p.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def bench_arena(
    windows: int = 3,
    window_s: float = 2.0,
    warmup_s: float = 1.5,
    client: bool = False,
    recorder: GameRecorder | None = None,
    compare: bool = False,
) -> dict[str, Any]:
    """`client=True` runs the bots on `sacbot.client` instead of the minimal frame-level bench bot;
    `recorder` records the game (`sacbot bench arena --record DIR`). `compare=True` (with a recorder)
    alternates windows with and without it, `windows` of each, and reports both side by side
    (`..._recording` figures, the slowdown and the CPU per turn recording adds); the file then has gaps."""
    if compare and recorder is None:
        raise ValueError("compare needs a recorder")
    figures = asyncio.run(_bench(windows, window_s, warmup_s, client, recorder, compare))
    figures["bots"] = "sacbot.client" if client else "benchbot"
    figures["recording"] = "compared" if compare else recorder is not None
    return figures
