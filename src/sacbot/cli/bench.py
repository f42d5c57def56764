"""`sacbot bench ...`: benchmarks that print figures (medians), never asserted by tests."""

from __future__ import annotations

import typer

from sacbot.errors import NotBuiltYet

app = typer.Typer(help="Benchmarks that print figures.", no_args_is_help=True)


@app.command("engine")
def engine(json_output: bool = typer.Option(False, "--json")) -> None:
    """Engine turns per second, 1v1 and 10-bot melee."""
    raise NotBuiltYet("the game engine (issue: engine)")
