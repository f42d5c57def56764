"""`sacbot export-bot`: a bot folder for the official Python Bot API, without sacbot or torch."""

from __future__ import annotations

from pathlib import Path

import typer


def export_bot(
    checkpoint: Path = typer.Option(..., "--checkpoint", help="The archive to play (full or actor-only)."),
    name: str = typer.Option(
        ..., "--name", help="The bot's name: its folder, its file names and its handshake name."
    ),
    out: Path = typer.Option(
        ...,
        "--out",
        help="A bot root directory (as in the official GUI's 'Bot Root Directories'); the bot is OUT/NAME/.",
    ),
    force: bool = typer.Option(
        False, "--force", help="Replace OUT/NAME/ if it exists (its installed venv/ is kept)."
    ),
    radar_mode: str | None = typer.Option(
        None,
        "--radar-mode",
        help="spin or lock (default: the mode the checkpoint was trained with, else spin).",
    ),
    actions: str = typer.Option(
        "mean",
        "--actions",
        help="mean: the policy's mean (deterministic); speed: the mean with its target speed drawn from the "
        "policy; sampled: every action drawn.",
    ),
    bot_version: str = typer.Option("1.0", "--bot-version", help="The version in NAME.json."),
    authors: str = typer.Option("sacbot", "--authors", help="Comma-separated authors for NAME.json."),
) -> None:
    """Write OUT/NAME/: a bot folder that plays CHECKPOINT as `sacbot play --eval` does, on the official
    Python Bot API (robocode-tank-royale and numpy; no sacbot, no torch). The official booter starts it by
    NAME.sh / NAME.cmd (which install requirements.txt into OUT/NAME/venv once) or, with no script, as
    `python3 NAME.py`."""
    from sacbot.export.writer import export_bot as write

    names = [a.strip() for a in authors.split(",") if a.strip()]
    result = write(
        checkpoint,
        name,
        out,
        force=force,
        radar_mode=radar_mode,
        actions=actions,
        version=bot_version,
        authors=names,
    )
    updates = "?" if result.updates is None else str(result.updates)
    typer.echo(
        f"wrote {result.folder}/ from {checkpoint} (updates {updates}; radar {result.radar_mode}, "
        f"{result.radar_source}); try it: sacbot arena run {result.folder} bots/SpinBot --rounds 10"
    )
