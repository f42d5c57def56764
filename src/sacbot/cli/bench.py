"""`sacbot bench ...`: benchmarks that print figures (medians), never asserted by tests.

Each command calls one library function of its area and prints its figures; `--json` prints one JSON object.
"""

from __future__ import annotations

import typer

from sacbot.errors import NotBuiltYet

app = typer.Typer(help="Benchmarks that print figures.", no_args_is_help=True)


@app.command("engine")
def engine(json_output: bool = typer.Option(False, "--json")) -> None:
    """Engine turns per second, 1v1 and 10-bot melee."""
    raise NotBuiltYet("the game engine (issue: engine)")


@app.command("arena")
def arena(json_output: bool = typer.Option(False, "--json")) -> None:
    """Arena turns per second for a 1v1 between two bot processes over WebSocket."""
    raise NotBuiltYet("the arena server (issue: arena)")


@app.command("inference")
def inference(json_output: bool = typer.Option(False, "--json")) -> None:
    """One actor step at batch 1: fast path against torch."""
    raise NotBuiltYet("the learning core (issue: SAC-GRU core)")


@app.command("trainer")
def trainer(json_output: bool = typer.Option(False, "--json")) -> None:
    """SAC-GRU updates per second."""
    raise NotBuiltYet("the learning core (issue: SAC-GRU core)")


@app.command("play")
def play(json_output: bool = typer.Option(False, "--json")) -> None:
    """Tick-to-intent latency of `sacbot play` with the trainer running flat out."""
    raise NotBuiltYet("the realtime bot (issue: `sacbot play`)")


@app.command("env")
def env(json_output: bool = typer.Option(False, "--json")) -> None:
    """Gymnasium environment steps per second, single and vectorised."""
    raise NotBuiltYet("the Gymnasium environment (issue: fast in-process training)")
