"""`sacbot arena ...`: the embedded Tank Royale-compatible server."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path
from typing import Any

import typer

from sacbot.errors import UserError
from sacbot.interrupts import stops_on_sigterm

app = typer.Typer(help="The embedded Tank Royale-compatible server.", no_args_is_help=True)


def _secrets(values: list[str]) -> frozenset[str]:
    # Accept both "--bot-secrets a,b" (the Java server's form) and repeated options.
    return frozenset(s.strip() for v in values for s in v.split(",") if s.strip())


@app.command("serve")
def serve(
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to bind (0.0.0.0 for every interface)."),
    port: int = typer.Option(7654, "--port", "-p", help="Port; 0 picks a free one and prints it."),
    bot_secrets: list[str] = typer.Option(
        [], "--bot-secrets", "-b", help="Secrets bots must present (a,b,...)."
    ),
    controller_secrets: list[str] = typer.Option(
        [], "--controller-secrets", "-c", help="Secrets observers and controllers must present (a,b,...)."
    ),
    tps: int = typer.Option(30, "--tps", "-t", help="Turns per second: -1 unthrottled, 0 paused, up to 999."),
    games: str = typer.Option(
        "classic,1v1,twinduel,melee,custom", "--games", "-g", help="Game types served."
    ),
    seed: int | None = typer.Option(None, "--seed", help="Seed every game (default: a fresh random seed)."),
    enable_initial_position: bool = typer.Option(
        False, "--enable-initial-position", "-i", help="Honour bots' handshake initial positions."
    ),
    record: Path | None = typer.Option(
        None, "--record", help="Record every game into this folder (game-<time>.battle.gz files)."
    ),
    debug_graphics: bool = typer.Option(
        False,
        "--debug-graphics",
        help="Let every bot paint debug graphics (observers and recordings get them).",
    ),
) -> None:
    """Serve bots, observers and controllers until Ctrl-C; a browser at the same address gets the viewer."""
    import asyncio
    import logging

    from sacbot.arena.core import ArenaConfig
    from sacbot.arena.server import ArenaServer
    from sacbot.viewer.pages import live_pages
    from sacbot.viewer.recording import RecordingWriter

    if not -1 <= tps <= 999:
        raise UserError("--tps must be between -1 and 999", 2)
    if not 0 <= port <= 65535:
        raise UserError("--port must be between 0 and 65535", 2)
    game_types = tuple(g.strip() for g in games.split(",") if g.strip())
    if not game_types:
        raise UserError("--games needs at least one game type", 2)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    # Every page load is a plain HTTP request that websockets logs as a rejected handshake: not news.
    logging.getLogger("websockets.server").setLevel(logging.WARNING)
    config = ArenaConfig(
        game_types=game_types,
        bot_secrets=_secrets(bot_secrets),
        controller_secrets=_secrets(controller_secrets),
        tps=tps,
        seed=seed,
        enable_initial_position=enable_initial_position,
        debug_graphics=debug_graphics,
    )
    recorder = RecordingWriter(record) if record is not None else None

    async def main() -> None:
        server = ArenaServer(config, host=host, port=port, recorder=recorder, http_handler=live_pages())
        await server.start()
        typer.echo(f"sacbot arena listening on {server.url}", err=False)
        typer.echo(f"viewer: {server.url.replace('ws://', 'http://', 1)}/", err=False)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await stop.wait()
        await server.stop()

    try:
        asyncio.run(main())
    finally:
        if recorder is not None:
            recorder.close()


_COLUMNS = [
    ("rank", "Rank"),
    ("name", "Name"),
    ("version", "Version"),
    ("total_score", "Total"),
    ("survival", "Survival"),
    ("last_survivor_bonus", "Surv. bonus"),
    ("bullet_damage", "Bullet dmg"),
    ("bullet_kill_bonus", "Bullet bonus"),
    ("ram_damage", "Ram dmg"),
    ("ram_kill_bonus", "Ram bonus"),
    ("first_places", "1st"),
    ("second_places", "2nd"),
    ("third_places", "3rd"),
]


@app.command("run")
def run(
    dirs: list[Path] = typer.Argument(..., help="Bot directories (<Dir>/<Dir>.json plus .sh or .py)."),
    rounds: int | None = typer.Option(
        None, "--rounds", "-r", min=1, help="Number of rounds (default: preset)."
    ),
    game_type: str = typer.Option(
        "1v1", "--game-type", "-g", help="classic, 1v1, melee, twinduel or custom."
    ),
    json_output: bool = typer.Option(False, "--json", help='Print {"results": [...]} instead of a table.'),
    connect_timeout: float = typer.Option(
        30.0, "--connect-timeout", help="Seconds to wait for bots to connect."
    ),
    tps: int = typer.Option(-1, "--tps", help="Turns per second (-1: as fast as the bots answer)."),
    seed: int | None = typer.Option(None, "--seed", help="Seed the game."),
    log_dir: Path | None = typer.Option(None, "--log-dir", help="Keep each bot's output here."),
    record: Path | None = typer.Option(
        None, "--record", help="Record the game into this folder (a game-<time>.battle.gz file)."
    ),
    debug_graphics: bool = typer.Option(
        False, "--debug-graphics", help="Let every bot paint debug graphics (the recording keeps them)."
    ),
) -> None:
    """Start an embedded server, boot bot directories, play, print results."""
    from sacbot.arena.battle import run_battle
    from sacbot.engine import game_setup_for
    from sacbot.protocol import to_dict
    from sacbot.viewer.recording import RecordingWriter

    if not -1 <= tps <= 999 or tps == 0:
        raise UserError("--tps must be -1 or between 1 and 999", 2)
    overrides: dict[str, Any] = {}
    if rounds is not None:
        overrides["number_of_rounds"] = rounds
    setup = game_setup_for(game_type, **overrides)
    recorder = RecordingWriter(record) if record is not None else None
    # Ctrl-C and SIGTERM both unwind through the booter's clean-up: no bot process is left behind.
    with stops_on_sigterm():
        try:
            result = run_battle(
                dirs,
                setup,
                connect_timeout=connect_timeout,
                tps=tps,
                seed=seed,
                log_dir=log_dir,
                recorder=recorder,
                debug_graphics=debug_graphics,
            )
        except KeyboardInterrupt:
            raise UserError("interrupted; every bot process was stopped", 130) from None
        finally:
            if recorder is not None:
                recorder.close()
                for path in recorder.files:
                    typer.echo(f"recorded: {path}", err=True)
    if json_output:
        typer.echo(
            json.dumps(
                {"numberOfRounds": result.number_of_rounds, "results": [to_dict(r) for r in result.results]}
            )
        )
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{game_type}: {result.number_of_rounds} rounds")
    for _, title in _COLUMNS:
        text = title in ("Name", "Version")
        table.add_column(title, justify="left" if text else "right", no_wrap=text)
    for r in result.results:
        table.add_row(*(str(getattr(r, key)) for key, _ in _COLUMNS))
    # Piped output is not squeezed to 80 columns.
    Console(width=None if sys.stdout.isatty() else 200).print(table)
