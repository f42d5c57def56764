"""`sacbot play`: the two-thread realtime bot."""

from __future__ import annotations

import sys
from pathlib import Path

import typer


def play(
    eval_mode: bool = typer.Option(
        False,
        "--eval",
        help="Frozen policy, its mean unless SACBOT_EVAL_ACTIONS says otherwise: no training, no saving "
        "(also SACBOT_EVAL_MODE=1).",
    ),
    tensorboard: Path | None = typer.Option(
        None,
        "--tensorboard",
        metavar="DIR",
        help="Also write the round and training metrics as TensorBoard scalars here "
        "(also SACBOT_TENSORBOARD; needs sacbot[tensorboard]).",
    ),
) -> None:
    """Run the SAC-GRU bot against a Tank Royale server (SERVER_URL), learning while it fights."""
    try:
        from sacbot.runtime.app import run_play  # heavy imports (torch) stay out of `sacbot --help`

        run_play(eval_mode, tensorboard=tensorboard)
    except KeyboardInterrupt:  # Ctrl-C before the game loop took over: nothing to save yet
        print("sacbot play: interrupted", file=sys.stderr)
        raise typer.Exit(130) from None
