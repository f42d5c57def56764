"""`sacbot bench play`: tick-to-intent latency of the real `sacbot play` process with its trainer flat out.

The arena (embedded, TPS -1, the 30 ms turn timeout) and the controller run in this process; `bots/SacBot` and
the opponent are booted as their own processes, as in a real game. SacBot trains flat out
(SACBOT_UTD_RATIO=0, no warm-up) into a temporary weights folder, from a fresh init or from `checkpoint`.
After `turns` turns the game is stopped, SacBot gets SIGTERM (its clean shutdown writes its per-tick
latencies to SACBOT_STATS_FILE) and the figures are computed from them.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from sacbot.errors import UserError
from sacbot.runtime.paths import repo_bot_dir


class _Enough(Exception):
    pass


async def _drive(url: str, secret: str, setup: Any, names: list[str], turns: int, alive: Any) -> int:
    from sacbot.arena.controller import Controller
    from sacbot.protocol import RoundEndedEventForObserver

    played = 0

    def on_event(msg: Any) -> None:
        nonlocal played
        if isinstance(msg, RoundEndedEventForObserver):
            played += int(msg.turn_number)
            if played >= turns:
                raise _Enough

    async with await Controller.connect(url, secret) as ctl:
        bots = await ctl.wait_for_bots(names, 120.0, alive=alive)
        try:
            await ctl.run_game(setup, bots, on_event=on_event, start_timeout=60.0)
        except _Enough:
            await ctl.stop_game()
    return played


def bench_play(
    turns: int = 20_000, opponent: str = "SpinBot", checkpoint: Path | None = None
) -> dict[str, Any]:
    from sacbot.arena.booter import Booter, read_bot_dir
    from sacbot.arena.server import EmbeddedArena
    from sacbot.engine import game_setup_for

    bots_root = repo_bot_dir().parent
    opponent_dir = Path(opponent) if Path(opponent).is_dir() else bots_root / opponent  # a name or a folder
    if not opponent_dir.is_dir():
        raise UserError(f"no bot directory {opponent_dir}", 2)
    if checkpoint is not None:
        from sacbot.checkpoint import read_meta

        checkpoint = checkpoint.expanduser().resolve()
        read_meta(checkpoint)  # a missing or broken archive fails here, in one line
    names = [read_bot_dir(repo_bot_dir()).name, read_bot_dir(opponent_dir).name]
    setup = game_setup_for("1v1", number_of_rounds=100_000)
    bot_secret, ctl_secret = secrets.token_urlsafe(12), secrets.token_urlsafe(12)
    with tempfile.TemporaryDirectory(prefix="sacbot-bench-play-") as tmp:
        stats_path = Path(tmp) / "stats.json"
        extra = {
            "SACBOT_WEIGHTS_DIR": str(Path(tmp) / "weights"),
            "SACBOT_STATS_FILE": str(stats_path),
            "SACBOT_UTD_RATIO": "0",
            "SACBOT_WARMUP_ROUNDS": "0",
            "SACBOT_SHIPPED": "0",  # without --checkpoint: a fresh init, not the shipped actor
        }
        if checkpoint is not None:  # a trained bot: its weights, its settings (radar mode), training on
            extra["SACBOT_CHECKPOINT"] = str(checkpoint)
        with (
            EmbeddedArena(bot_secrets={bot_secret}, controller_secrets={ctl_secret}, tps=-1) as arena,
            Booter(arena.url, bot_secret, log_dir=Path(tmp) / "logs", extra_env=extra) as booter,
            Booter(arena.url, bot_secret, log_dir=Path(tmp) / "opponent-logs") as opponent_booter,
        ):
            sacbot_proc = booter.boot(repo_bot_dir())[0]  # only SacBot gets the bench settings
            opponent_booter.boot(opponent_dir)

            def alive() -> None:
                for bot in booter.bots + opponent_booter.bots:
                    if bot.exit_code() is not None:
                        raise UserError(f"{bot.entry.name} exited early: {bot.log_tail()}")

            started = time.perf_counter()
            asyncio.run(_drive(arena.url, ctl_secret, setup, names, turns, alive))
            wall = time.perf_counter() - started
            booter.stop(sacbot_proc, timeout=60.0)  # SIGTERM: a clean shutdown writes the stats file
            if not stats_path.is_file():
                raise UserError(f"sacbot play wrote no stats: {sacbot_proc.log_tail(10)}")
        stats = json.loads(stats_path.read_text(encoding="utf-8"))
    lat = np.asarray(stats["latencies_ms"], dtype=np.float64)
    p50, p99 = (float(v) for v in np.percentile(lat, [50, 99])) if len(lat) else (0.0, 0.0)
    return {
        "turns": int(stats["turns"]),
        "skipped_turns": int(stats["skipped_turns"]),
        "p50_ms": round(p50, 4),
        "p99_ms": round(p99, 4),
        "max_ms": round(float(lat.max()) if len(lat) else 0.0, 4),
        "updates_per_s": round(float(stats["updates_per_s"]), 2),
        "updates": int(stats["updates"]),
        "wall_s": round(wall, 1),
        "opponent": names[1],
    }
