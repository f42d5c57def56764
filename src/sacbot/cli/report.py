"""`sacbot report RUN_DIR`: learning curves and an eval summary."""

from __future__ import annotations

from pathlib import Path

import typer

from sacbot.errors import NotBuiltYet


def report(
    run_dir: Path = typer.Argument(...),
    out: Path | None = typer.Option(None, "--out"),
) -> None:
    """Write PNG learning curves and a Markdown summary for a campaign run folder."""
    raise NotBuiltYet("a trained run (issue: a bot that wins)")
