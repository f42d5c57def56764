"""`sacbot play`: the two-thread realtime bot."""

from __future__ import annotations

import typer

from sacbot.errors import NotBuiltYet
from sacbot.settings import load_sacbot_settings, load_tank_royale_env


def play(
    eval_mode: bool = typer.Option(
        False, "--eval", help="Frozen deterministic policy: no training, no saving."
    ),
) -> None:
    """Run the SAC-GRU bot against a Tank Royale server (SERVER_URL), learning while it fights."""
    load_tank_royale_env()
    load_sacbot_settings()
    raise NotBuiltYet("the realtime bot runtime (issue: `sacbot play`)")
