"""The `sacbot` command: a Typer app that parses, calls one library function per command, and renders.

Every area keeps its commands in its own module here; this file only assembles them and turns `UserError`
into one line on stderr and an exit code.
"""

from __future__ import annotations

import sys

import typer

from sacbot import __version__
from sacbot.cli import (
    arena,
    bench,
    campaign,
    checkpoint,
    engine,
    export,
    fast,
    opponent,
    play,
    report,
    tournament,
    viewer,
)
from sacbot.errors import UserError

app = typer.Typer(
    name="sacbot",
    help="A recurrent Soft Actor-Critic tank for Robocode Tank Royale.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"sacbot {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """A recurrent Soft Actor-Critic tank for Robocode Tank Royale."""


app.command("play")(play.play)
app.command("train-campaign")(campaign.train_campaign)
app.command("eval")(campaign.eval_command)
app.command("make-twin")(campaign.make_twin)
app.command("export-bot")(export.export_bot)
app.command("train-fast")(fast.train_fast)
app.command("opponent")(opponent.opponent)
app.command("report")(report.report)
app.command("build-engine")(engine.build_engine)
app.command("tournament")(tournament.tournament)
app.command("replay")(viewer.replay)
app.command("render")(viewer.render)
app.add_typer(checkpoint.app, name="checkpoint")
app.add_typer(arena.app, name="arena")
app.add_typer(bench.app, name="bench")


def run() -> None:
    """Console-script entry point: usage errors are click's; our own errors are one line on stderr."""
    try:
        app()
    except UserError as exc:
        print(f"sacbot: error: {exc}", file=sys.stderr)
        sys.exit(exc.exit_code)
