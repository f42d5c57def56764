"""`sacbot checkpoint ...`: create, inspect, verify, gate/promote and export checkpoint archives."""

from __future__ import annotations

import contextlib
import json
import math
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import typer

from sacbot.errors import UserError


@contextlib.contextmanager
def _disk_errors() -> Iterator[None]:
    """A file-system failure (permissions, full disk) is one line, not a traceback."""
    try:
        yield
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        raise UserError(f"{where}{exc.strerror or exc}") from None


app = typer.Typer(help="Create, inspect, verify, gate and promote checkpoint archives.", no_args_is_help=True)


def _fresh_trainer(seed: int, sizes: dict[str, Any] | None = None) -> Any:
    """A freshly initialised cpu trainer (torch is imported only here, so `--help` stays fast).

    The replay is tiny: it is never part of an archive, and a fresh trainer only provides weights and specs.
    """
    from sacbot.agent.networks import NetworkSizes
    from sacbot.agent.trainer import SacTrainer
    from sacbot.agent.trainer_config import TrainerConfig

    try:
        network_sizes = NetworkSizes(**sizes) if sizes else NetworkSizes()
        config = TrainerConfig(sizes=network_sizes, seed=seed, device="cpu", replay_capacity=64)
        return SacTrainer(config)
    except (TypeError, ValueError, RuntimeError) as exc:
        raise UserError(f"cannot build networks of sizes {sizes}: {exc}") from None


def _refuse_overwrite(out: Path, force: bool) -> None:
    if out.exists() and not force:
        raise UserError(f"{out} already exists; pass --force to replace it", exit_code=1)
    if out.is_dir():
        raise UserError(f"{out} is a folder; give a file name ending in .zip", exit_code=2)


@app.command("new")
def new(
    out: Path = typer.Argument(..., help="The archive to write, e.g. weights/latest.zip."),
    seed: int = typer.Option(0, "--seed", help="Seed of the random initialisation."),
    force: bool = typer.Option(False, "--force", help="Replace OUT if it exists."),
) -> None:
    """Write a freshly initialised archive (full training state, no score)."""
    from sacbot.checkpoint.trainer_io import save_trainer

    _refuse_overwrite(out, force)
    trainer = _fresh_trainer(seed)
    with _disk_errors():
        meta = save_trainer(out, trainer, extra={"seed": seed})
    typer.echo(f"wrote {out}: fresh init, seed {seed}, sizes {json.dumps(dict(meta.network_sizes))}")


@app.command("show")
def show(
    path: Path = typer.Argument(..., help="An archive or a weights folder."),
    as_json: bool = typer.Option(
        False, "--json", help="Print JSON (one object per slot) instead of a table."
    ),
) -> None:
    """Show a checkpoint file, or every slot of a weights folder: scores, steps, updates, sizes, age."""
    from rich.console import Console
    from rich.table import Table

    from sacbot.checkpoint.inspect import compact_sizes, describe, human_age

    with _disk_errors():
        rows = describe(path)
    if as_json:
        typer.echo(json.dumps([row.to_json_dict() for row in rows], indent=1))
        return
    if not rows:
        typer.echo(f"{path}: no checkpoints (latest.zip, best.zip, opponents/*.zip)")
        return
    if len(rows) == 1 and rows[0].slot == "file" and rows[0].error:
        raise UserError(rows[0].error)
    table = Table(title=str(path))
    for column in ("slot", "score", "kind", "env steps", "updates", "sizes", "values", "age", "status"):
        table.add_column(
            column, justify="right" if column in ("score", "env steps", "updates", "values") else "left"
        )
    for row in rows:
        meta = row.meta
        score = "-" if meta is None or meta.score is None else f"{meta.score:g}"
        status = "ok" if row.error is None else f"[red]unreadable[/red]: {row.error}"
        if row.error is None and meta is None:
            status = "ok (older layout: no meta, ranks -inf)"
        table.add_row(
            row.slot if row.slot != "file" else row.path.name,
            score,
            (meta.score_kind or "-") if meta else "-",
            str(meta.env_steps) if meta else "-",
            str(meta.updates) if meta else "-",
            compact_sizes(dict(meta.network_sizes)) if meta else "-",
            f"{row.values:,}",
            human_age(row.age_s),
            status,
        )
    # Not a terminal (a pipe, a log): wide enough that rows do not wrap.
    console = Console() if sys.stdout.isatty() else Console(width=200)
    console.print(table)


@app.command("verify")
def verify(file: Path = typer.Argument(..., help="The archive to check.")) -> None:
    """Exit 0 if FILE loads cleanly and matches the networks its meta names, else 1 with the reason."""
    from sacbot.checkpoint.archive import actor_archive_specs, check_specs, load_checkpoint

    arrays, meta = load_checkpoint(file)
    checked = "structure only (no network sizes in the archive)"
    if meta is not None and meta.network_sizes:
        trainer = _fresh_trainer(0, dict(meta.network_sizes))
        specs = trainer.array_specs()
        if meta.contents == "actor":
            specs = actor_archive_specs(specs, arrays)
        check_specs(arrays, specs, str(file))
        checked = f"structure and every {meta.contents} network shape"
    values = sum(int(a.size) for a in arrays.values())
    if meta is None:
        layout = "older layout (no meta.json, ranks -inf)"
    elif meta.score is None:
        layout = "no score"
    else:
        layout = f"score {meta.score:g} ({meta.score_kind})"
    typer.echo(f"ok: {file}: {len(arrays)} arrays, {values:,} values, {layout}; checked {checked}")


@app.command("promote")
def promote(
    candidate: Path = typer.Argument(..., help="The archive to promote."),
    weights_dir: Path = typer.Option(..., "--weights-dir", help="The weights folder holding the slots."),
    slot: str = typer.Option("best", "--slot", help="'best' or an opponent name (opponents/<NAME>.zip)."),
    score: float | None = typer.Option(None, "--score", help="The candidate's score (default: its meta's)."),
    score_kind: str | None = typer.Option(
        None, "--score-kind", help="What the score measures (default: the candidate's, else the slot's)."
    ),
    force: bool = typer.Option(False, "--force", help="Store it even if the gate says no (with a warning)."),
) -> None:
    """Gate CANDIDATE into a best slot: stored (atomically) only if its score is strictly greater."""
    from sacbot.checkpoint.archive import CheckpointMeta, load_checkpoint, read_meta
    from sacbot.checkpoint.slots import LATEST, slot_path
    from sacbot.checkpoint.slots import promote as promote_slot

    if slot == LATEST:
        raise UserError("'latest' is the resume slot and is not gated; promote into 'best' or an opponent", 2)
    target = slot_path(weights_dir, slot)
    if weights_dir.exists() and not weights_dir.is_dir():
        raise UserError(f"--weights-dir {weights_dir} is not a folder", exit_code=2)
    arrays, meta = load_checkpoint(candidate)
    meta = meta or CheckpointMeta()
    if meta.contents != "full":
        raise UserError(f"{candidate} is an actor-only export; slots hold the full training state", 2)
    if score is None:
        score = meta.score
    if score is None:
        raise UserError(f"{candidate} carries no score; pass --score S", exit_code=2)
    if not math.isfinite(score):
        raise UserError(f"--score must be a finite number, got {score}", exit_code=2)
    if score_kind is None:
        score_kind = meta.score_kind
    if score_kind is None and target.is_file():
        try:
            stored = read_meta(target)
        except UserError:
            stored = None
        score_kind = stored.score_kind if stored else None
    score_kind = score_kind or "manual"
    if slot != "best" and meta.opponent is None:
        meta = replace(meta, opponent=slot)
    with _disk_errors():
        result = promote_slot(target, arrays, meta, score, score_kind, force=force)
    if result.promoted:
        typer.echo(f"promoted {candidate} -> {target} ({'forced: ' if result.forced else ''}{result.reason})")
    else:
        typer.echo(f"not promoted: {result.reason}; {target} unchanged")


def _read_provenance(path: Path) -> dict[str, Any]:
    """The JSON object `--provenance` names; anything else is one line and exit code 2."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UserError(f"--provenance {path}: {exc.strerror or exc}", exit_code=2) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(f"--provenance {path}: not valid JSON ({exc})", exit_code=2) from None
    if not isinstance(data, dict):
        raise UserError(f"--provenance {path}: must hold a JSON object", exit_code=2)
    return data


@app.command("export")
def export(
    file: Path = typer.Argument(..., help="The archive to export from."),
    out: Path = typer.Argument(..., help="The archive to write."),
    actor_only: bool = typer.Option(
        False, "--actor-only", help="Only the actor's arrays and its temperature, for deployment."
    ),
    provenance: Path | None = typer.Option(
        None,
        "--provenance",
        metavar="FILE.json",
        help="A JSON object stored as the meta's extra.provenance (e.g. campaign, commit, eval table).",
    ),
    force: bool = typer.Option(False, "--force", help="Replace OUT if it exists."),
) -> None:
    """Write a verified copy of FILE to OUT; with --actor-only, a small archive of the actor and
    its temperature (a training start from it keeps the entropy weight the actor learnt with)."""
    from sacbot.checkpoint.archive import (
        ACTOR_PREFIX,
        CheckpointMeta,
        in_actor_archive,
        load_checkpoint,
        save_checkpoint,
    )

    _refuse_overwrite(out, force)
    record = _read_provenance(provenance) if provenance is not None else None
    arrays, meta = load_checkpoint(file)
    if record is not None:
        base = meta or CheckpointMeta()
        meta = replace(base, extra={**base.extra, "provenance": record})
    if actor_only:
        arrays = {name: a for name, a in arrays.items() if in_actor_archive(name)}
        if not any(name.startswith(ACTOR_PREFIX) for name in arrays):
            raise UserError(f"{file} holds no actor arrays (names starting with {ACTOR_PREFIX!r})")
        meta = replace(meta or CheckpointMeta(), contents="actor")
    save_checkpoint(out, arrays, meta)
    values = sum(int(a.size) for a in arrays.values())
    typer.echo(
        f"wrote {out}: {len(arrays)} arrays, {values:,} values ({'actor only' if actor_only else 'full'})"
    )
