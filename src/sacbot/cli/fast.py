"""`sacbot train-fast`: in-process pretraining on the engine."""

from __future__ import annotations

from pathlib import Path

import typer

from sacbot.errors import NotBuiltYet


def train_fast(
    opponents: str = typer.Option("SpinBot", "--opponents", help="Comma-separated classic opponents."),
    steps: int = typer.Option(100_000, "--steps"),
    envs: int = typer.Option(8, "--envs"),
    out: Path = typer.Option(..., "--out"),
) -> None:
    """Train the SAC-GRU in-process against classic opponents, much faster than real time."""
    raise NotBuiltYet("the Gymnasium environment (issue: fast in-process training)")
