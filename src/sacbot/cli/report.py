"""`sacbot report RUN_DIR`: learning curves and an eval summary (or a weights folder's per-round summary)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer


def report(
    run_dir: Path = typer.Argument(
        ...,
        help="A campaign run folder (e.g. runs/standard), or a weights folder of sacbot play / train-fast.",
    ),
    out: Path | None = typer.Option(None, "--out", help="Where to write (default: RUN_DIR/report)."),
) -> None:
    """Write PNG learning curves and a Markdown summary for a campaign run folder or a weights folder."""
    from sacbot.report import write_report  # matplotlib stays out of `sacbot --help`

    outcome = write_report(run_dir, out)
    if outcome.malformed:
        detail = ", ".join(f"{name}: {n}" for name, n in sorted(outcome.malformed.items()))
        print(
            f"sacbot report: skipped {sum(outcome.malformed.values())} malformed line(s) ({detail})",
            file=sys.stderr,
        )
    for note in outcome.notes:
        print(f"sacbot report: {note}", file=sys.stderr)
    for path in outcome.files:
        typer.echo(str(path))
    typer.echo(f"report: {outcome.out / 'report.md'}")
