"""`sacbot checkpoint ...`: inspect, verify, gate and promote archives."""

from __future__ import annotations

import typer

from sacbot.errors import NotBuiltYet

app = typer.Typer(help="Inspect, verify, gate and promote checkpoint archives.", no_args_is_help=True)


@app.command("show")
def show(path: str = typer.Argument(...)) -> None:
    """Show a checkpoint file or a weights folder."""
    raise NotBuiltYet("the checkpoint format (issue: checkpoints)")
