"""`sacbot train-campaign`, `sacbot eval`, `sacbot make-twin`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer

from sacbot.errors import UserError
from sacbot.interrupts import stops_on_sigterm


def _json_line(obj: dict[str, Any]) -> None:
    print(json.dumps(obj, separators=(",", ":")), flush=True)


def train_campaign(
    file: Path = typer.Argument(..., help="A campaign TOML file, e.g. campaigns/smoke.toml."),
    out: Path | None = typer.Option(None, "--out", help="Run folder (default: from the file)."),
    json_output: bool = typer.Option(False, "--json", help="JSON progress lines instead of tables."),
    seed: int | None = typer.Option(
        None,
        "--seed",
        min=0,
        help="The run's seed (default: the file's `seed`); a run resumes only with the seed it began with.",
    ),
    tensorboard: Path | None = typer.Option(
        None,
        "--tensorboard",
        metavar="DIR",
        help="TensorBoard scalars of pretraining, chunks and evals here (default: the file's \\[log] table; "
        "needs sacbot\\[tensorboard]).",
    ),
) -> None:
    """Chunked training against weighted opponents with crash-restart, eval and best-gating."""
    from rich.console import Console
    from rich.live import Live

    from sacbot.campaign.config import load_campaign
    from sacbot.campaign.loop import CampaignLoop
    from sacbot.campaign.runner import ArenaBackend
    from sacbot.campaign.view import CampaignView
    from sacbot.rundir import RunPaths

    campaign = load_campaign(file)
    if seed is not None:
        campaign = campaign.model_copy(update={"seed": seed})
    if tensorboard is not None:
        campaign = campaign.model_copy(
            update={"log": campaign.log.model_copy(update={"tensorboard": tensorboard})}
        )
    run_dir = campaign.out_dir(out)
    remote_eval = None
    if campaign.ray is not None:
        from sacbot.distributed import require_ray

        require_ray(f"{file}: [ray]")
        if campaign.ray.evals:
            from functools import partial

            from sacbot.distributed.games import evaluate_ray

            remote_eval = partial(evaluate_ray, address=campaign.ray.address)
    recorder = None
    if campaign.record is not None:
        from sacbot.viewer.recording import SelectedGames

        rec = campaign.record
        recorder = SelectedGames.open(RunPaths(run_dir).recordings, rec.kinds(), rec.keep_last)
    backend = ArenaBackend(campaign, RunPaths(run_dir), recorder)
    view = CampaignView(campaign.name, campaign.chunks.budget)
    console = Console(stderr=False)
    live: Live | None = None

    def report(event: dict[str, Any]) -> None:
        view.update(event)
        if json_output:
            _json_line(event)
        elif live is not None:
            live.update(view.render())

    loop = CampaignLoop(campaign, run_dir, backend, report, remote_eval=remote_eval)
    view.best = loop.best_composite()
    try:
        with stops_on_sigterm():  # a supervisor's SIGTERM stops the run as Ctrl-C does
            if json_output:
                loop.run()
            else:
                with Live(view.render(), console=console, refresh_per_second=4, transient=False) as live_view:
                    live = live_view
                    loop.run()
                live = None
                console.print()
                console.print(view.summary())
                console.print(f"run folder: {run_dir}")
    except KeyboardInterrupt:
        raise UserError(
            f"interrupted; saved in {run_dir} (pretraining: this very step; a chunk: its last completed "
            "round); re-run the same command to resume",
            130,
        ) from None
    finally:
        backend.close()


def eval_command(
    checkpoint: Path | None = typer.Option(
        None, "--checkpoint", help="The archive to evaluate (default: the shipped actor)."
    ),
    opponents: str = typer.Option(..., "--opponents", help="Comma-separated opponent names."),
    rounds: int = typer.Option(100, "--rounds"),
    json_output: bool = typer.Option(False, "--json"),
    record: Path | None = typer.Option(
        None, "--record", metavar="DIR", help="Record every eval game into DIR (.battle.gz)."
    ),
    use_ray: bool = typer.Option(
        False, "--ray", help="Each game a Ray task (RAY_ADDRESS joins a cluster; needs sacbot\\[ray])."
    ),
    actions: str = typer.Option(
        "mean",
        "--actions",
        help="mean: the policy's mean (deterministic); sampled: every action drawn, as training play draws "
        "them; speed: the mean with its target speed drawn.",
    ),
) -> None:
    """Eval games with a frozen policy: deterministic unless --actions says otherwise."""
    from rich.console import Console
    from rich.table import Table

    from sacbot.agent.inference import ACTION_MODES, as_action_mode
    from sacbot.campaign.evaluate import evaluate

    if checkpoint is None:
        from sacbot.runtime.startup import SHIPPED_ACTOR

        checkpoint = SHIPPED_ACTOR
    mode = as_action_mode(actions)
    if mode is None:
        raise UserError(f"--actions: {actions!r} is not one of {', '.join(ACTION_MODES)}", 2)
    names = [n.strip() for n in opponents.split(",") if n.strip()]
    recorder = None
    if record is not None:
        from sacbot.viewer.recording import SelectedGames

        recorder = SelectedGames.open(record, ("eval",))
    remote = None
    if use_ray:
        from sacbot.distributed import require_ray

        require_ray()
        from sacbot.distributed.games import evaluate_ray

        remote = evaluate_ray
    results = evaluate(checkpoint, names, rounds, recorder=recorder, remote=remote, actions=mode)
    if json_output:
        rows = [
            {
                "opponent": name,
                "rounds": s.rounds,
                "wins": s.wins,
                "win_rate": s.win_rate,
                "score_share": s.score_share,
            }
            for name, s in results
        ]
        print(json.dumps(rows))
        return
    table = Table(title=f"eval of {checkpoint}", title_justify="left")
    for col in ("opponent", "rounds", "wins", "win rate", "score share", "bullet damage"):
        table.add_column(col, justify="left" if col == "opponent" else "right")
    for name, s in results:
        table.add_row(
            name,
            str(s.rounds),
            str(s.wins),
            f"{s.win_rate:.3f}",
            f"{s.score_share:.3f}",
            f"{s.bullet_damage:.0f}",
        )
    Console().print(table)


def make_twin(
    source: Path | None = typer.Option(None, "--from", help="Source checkpoint (default: the global best)."),
    name: str = typer.Option("SacTwin", "--name"),
    bots_dir: Path = typer.Option(Path("bots"), "--bots-dir"),
    learning: bool = typer.Option(False, "--learning", help="Let the twin train its own copy."),
) -> None:
    """Write a self-play clone bot directory seeded from a frozen checkpoint."""
    from sacbot.campaign.twin import make_twin as write_twin

    result = write_twin(source, name, bots_dir, learning)
    mode = "learning" if result.learning else "frozen (eval mode)"
    action = "reset" if result.reset else "wrote"
    print(f"{action} twin {result.folder} ({mode}) from {result.source}", file=sys.stdout)
