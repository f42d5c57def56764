"""`sacbot build-engine`: compile the engine with mypyc (what `pip install` does), e.g. after editing it."""

from __future__ import annotations

import importlib.util
import time

import typer

from sacbot import compiled
from sacbot.errors import UserError


def build_engine(
    verbose: bool = typer.Option(False, "--verbose", help="Show mypyc's own output."),
) -> None:
    """Compile the engine modules with mypyc into the cache (a no-op when this source is built already)."""
    if importlib.util.find_spec("mypyc") is None:
        raise UserError("building the engine needs mypyc: pip install mypy (it ships mypyc)", 2)
    folder = compiled.build_folder()
    if compiled.compiled_files(folder) is not None:
        typer.echo(f"the compiled engine for these sources is already built: {folder}")
        return
    typer.echo(f"compiling {len(compiled.COMPILED_MODULES)} engine modules with mypyc (a few minutes)...")
    start = time.monotonic()
    try:
        folder = compiled.build(verbose=verbose)
    except (RuntimeError, OSError, TimeoutError) as exc:
        first = str(exc).strip().splitlines()
        raise UserError(f"the engine build failed: {first[-1] if first else exc!r}", 1) from None
    typer.echo(f"built in {time.monotonic() - start:.0f} s: {folder} (used from the next sacbot process on)")
