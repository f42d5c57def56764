"""`sacbot opponent NAME`: run one of the classic sample behaviours as a bot."""

from __future__ import annotations

import typer

from sacbot.errors import NotBuiltYet


def opponent(name: str = typer.Argument(..., help="Corners, Crazy, Fire, MyFirstBot, RamFire, ...")) -> None:
    """Run a classic opponent against the server at SERVER_URL."""
    raise NotBuiltYet("the classic opponents (issue: classic opponents)")
