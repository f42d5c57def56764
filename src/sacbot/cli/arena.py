"""`sacbot arena ...`: the embedded Tank Royale-compatible server."""

from __future__ import annotations

import typer

from sacbot.errors import NotBuiltYet

app = typer.Typer(help="The embedded Tank Royale-compatible server.", no_args_is_help=True)


@app.command("serve")
def serve() -> None:
    """Serve bots, observers and controllers."""
    raise NotBuiltYet("the arena server (issue: arena)")


@app.command("run")
def run() -> None:
    """Start an embedded server, boot bot directories, play, print results."""
    raise NotBuiltYet("the arena server (issue: arena)")
