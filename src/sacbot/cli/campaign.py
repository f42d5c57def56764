"""`sacbot train-campaign`, `sacbot eval`, `sacbot make-twin`."""

from __future__ import annotations

from pathlib import Path

import typer

from sacbot.errors import NotBuiltYet


def train_campaign(
    file: Path = typer.Argument(..., help="A campaign TOML file, e.g. campaigns/smoke.toml."),
    out: Path | None = typer.Option(None, "--out", help="Run folder (default: from the file)."),
    json_output: bool = typer.Option(False, "--json", help="JSON progress lines instead of tables."),
) -> None:
    """Chunked training against weighted opponents with crash-restart, eval and best-gating."""
    raise NotBuiltYet("the campaign runner (issue: `sacbot train-campaign`)")


def eval_command(
    checkpoint: Path = typer.Option(..., "--checkpoint", help="The archive to evaluate."),
    opponents: str = typer.Option(..., "--opponents", help="Comma-separated opponent names."),
    rounds: int = typer.Option(100, "--rounds"),
    json_output: bool = typer.Option(False, "--json"),
) -> None:
    """Deterministic eval games with a frozen policy."""
    raise NotBuiltYet("the campaign runner (issue: `sacbot eval`)")


def make_twin(
    source: Path | None = typer.Option(None, "--from", help="Source checkpoint (default: the global best)."),
    name: str = typer.Option("SacTwin", "--name"),
    bots_dir: Path = typer.Option(Path("bots"), "--bots-dir"),
    learning: bool = typer.Option(False, "--learning", help="Let the twin train its own copy."),
) -> None:
    """Write a self-play clone bot directory seeded from a frozen checkpoint."""
    raise NotBuiltYet("the campaign runner (issue: `sacbot make-twin`)")
