"""`sacbot train-fast`: in-process pretraining on the engine."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from sacbot.interrupts import stops_once


def train_fast(
    opponents: str = typer.Option(
        "SpinBot",
        "--opponents",
        help="Comma-separated opponents, each optionally Name:weight (with --sampling).",
    ),
    steps: int = typer.Option(100_000, "--steps", min=1, help="Environment steps, summed over the arenas."),
    envs: int = typer.Option(8, "--envs", min=1, help="Arenas stepped together (one batched actor call)."),
    out: Path = typer.Option(..., "--out", help="Weights folder (created; resumed from its latest.zip)."),
    seed: int = typer.Option(0, "--seed"),
    updates_per_step: float = typer.Option(
        1.0, "--updates-per-step", min=0.0, help="SAC updates per vector step (fractions carry over)."
    ),
    save_every: int = typer.Option(20_000, "--save-every", min=1, help="Environment steps between saves."),
    workers: int = typer.Option(0, "--workers", min=0, help="Processes stepping the arenas (0: this one)."),
    teacher_lead: int = typer.Option(
        0,
        "--teacher-lead",
        min=0,
        help="First N env steps: the scripted teacher acts, with noise (with SACBOT_KICKSTART).",
    ),
    torch_threads: int = typer.Option(
        1,
        "--torch-threads",
        min=1,
        help="torch threads for the updates (2 on an idle 2-core machine: ~1.5x).",
    ),
    rounds_per_game: int = typer.Option(
        10, "--rounds-per-game", min=1, help="Rounds per game; each new game draws its opponent (--sampling)."
    ),
    sampling: str = typer.Option(
        "spread",
        "--sampling",
        help="spread: arena i plays opponent i mod n; weights: drawn per game by weight; pfsp: weights x "
        "max(floor, (1 - recent win rate)^power).",
    ),
    snapshot_every: int = typer.Option(
        0,
        "--snapshot-every",
        min=0,
        help="Env steps between frozen snapshots of the learner in the pool (0: none).",
    ),
    snapshot_cap: int = typer.Option(
        3, "--snapshot-cap", min=1, help="Snapshots kept in the pool, oldest out."
    ),
    snapshot_weight: float = typer.Option(
        1.0, "--snapshot-weight", min=0.0, help="The snapshots' weight in the pool, shared evenly."
    ),
    pfsp_curve: str = typer.Option(
        "hard",
        "--pfsp-curve",
        help="hard: (1 - win rate)^p, most games where it loses; variance: (4 win rate (1 - win rate))^p, "
        "most games where it wins half.",
    ),
    pfsp_power: float = typer.Option(2.0, "--pfsp-power", min=0.0, help="p, the PFSP curve's exponent."),
    pfsp_floor: float = typer.Option(0.05, "--pfsp-floor", help="PFSP's lowest factor, in (0, 1]."),
    pfsp_window: int = typer.Option(30, "--pfsp-window", min=1, help="Recent rounds per opponent for PFSP."),
    pfsp_revisit: int = typer.Option(
        0,
        "--pfsp-revisit",
        help="PFSP: an opponent with no round among the last N finished rounds draws at factor 1 (0: off).",
    ),
    tensorboard: Path | None = typer.Option(
        None,
        "--tensorboard",
        metavar="DIR",
        help="Also write rounds and training metrics as TensorBoard scalars here "
        "(needs sacbot\\[tensorboard]).",
    ),
    start_actor: Path | None = typer.Option(
        None,
        "--start-actor",
        metavar="ARCHIVE",
        help="With no latest.zip in --out yet: start from this archive's actor over fresh critics, its "
        "counters kept (a fine-tune; SACBOT_CRITIC_WARMUP: updates that step the critics alone).",
    ),
    use_ray: bool = typer.Option(
        False, "--ray", help="Env runners as Ray actors feeding this process's learner (needs sacbot\\[ray])."
    ),
    ray_address: str | None = typer.Option(
        None, "--ray-address", help="With --ray: join this Ray cluster (default: start a local one)."
    ),
    runners: int = typer.Option(2, "--runners", min=1, help="With --ray: env runners, --envs arenas each."),
    utd: float | None = typer.Option(
        None,
        "--utd",
        min=0.0,
        help="With --ray: SAC updates per env step, held by throttling (default: updates-per-step / envs).",
    ),
) -> None:
    """Train the SAC-GRU in-process against classic opponents (and frozen snapshots of itself), fast."""
    from pydantic import ValidationError

    from sacbot.env.league import SAMPLINGS
    from sacbot.env.train import train_fast as run
    from sacbot.errors import UserError
    from sacbot.opponents.sampling import LeagueConfig

    if use_ray:
        _train_ray(opponents, out, steps, envs, seed, updates_per_step, save_every, torch_threads,
                   rounds_per_game, runners, utd, ray_address, workers=workers, teacher_lead=teacher_lead,
                   sampling=sampling, tensorboard=tensorboard, snapshot_every=snapshot_every,
                   start_actor=start_actor)  # fmt: skip
        return
    if ray_address is not None or utd is not None:
        raise UserError("--ray-address and --utd go with --ray", exit_code=2)
    if sampling not in SAMPLINGS:
        raise UserError(f"--sampling must be one of {', '.join(SAMPLINGS)}, not {sampling!r}", exit_code=2)
    league = None
    if sampling == "spread":
        if snapshot_every:
            raise UserError("--snapshot-every needs --sampling weights or pfsp", exit_code=2)
    else:
        try:
            league = LeagueConfig.model_validate(dict(
                sampling=sampling, snapshot_every=snapshot_every, snapshot_cap=snapshot_cap,
                snapshot_weight=snapshot_weight, pfsp_power=pfsp_power, pfsp_floor=pfsp_floor,
                pfsp_window=pfsp_window, pfsp_curve=pfsp_curve, pfsp_revisit=pfsp_revisit,
            ))  # fmt: skip
        except ValidationError as exc:
            err = exc.errors()[0]
            option = "--" + str(err["loc"][0]).replace("_", "-") if err["loc"] else "a league option"
            raise UserError(f"{option}: {err['msg'].removeprefix('Value error, ')}", exit_code=2) from None

    with stops_once():  # Ctrl-C or SIGTERM: save where the run stands, keep the replay, exit 130
        try:
            summary = run(
                opponents,
                out,
                steps=steps,
                envs=envs,
                seed=seed,
                updates_per_step=updates_per_step,
                save_every=save_every,
                workers=workers,
                torch_threads=torch_threads,
                teacher_lead=teacher_lead,
                rounds_per_game=rounds_per_game,
                league_config=league,
                replay_keep=_replay_keep(),
                tensorboard=tensorboard,
                start_actor=start_actor,
                log=lambda line: print(f"sacbot train-fast: {line}", file=sys.stderr, flush=True),
            )
        except KeyboardInterrupt:
            raise UserError(
                f"interrupted; latest.zip and the kept replay are in {out}; run the same command to resume",
                130,
            ) from None
    rate = summary.steps_run / max(summary.seconds, 1e-9)
    typer.echo(
        f"trained {summary.steps_run} env steps in {summary.seconds:.1f} s "
        f"({rate:,.0f} steps/s incl. updates); the run now has {summary.env_steps} env steps, "
        f"{summary.updates} updates, {summary.rounds} rounds; weights in {summary.out}"
    )
    for name, share in summary.score_share.items():
        typer.echo(f"  {name}: score share {share:.3f} over the last rounds, {summary.wins[name]} rounds won")
    if summary.snapshot_rounds:
        typer.echo(
            f"  frozen snapshots: {summary.snapshot_rounds} rounds, {summary.snapshot_wins} won "
            f"(in the pool now: {', '.join(summary.snapshots) or 'none'})"
        )


def _train_ray(
    opponents: str,
    out: Path,
    steps: int,
    envs: int,
    seed: int,
    updates_per_step: float,
    save_every: int,
    torch_threads: int,
    rounds_per_game: int,
    runners: int,
    utd: float | None,
    ray_address: str | None,
    *,
    workers: int,
    teacher_lead: int,
    sampling: str,
    tensorboard: Path | None,
    snapshot_every: int,
    start_actor: Path | None,
) -> None:
    from sacbot.distributed import require_ray
    from sacbot.errors import UserError

    require_ray()
    unsupported = {
        "--workers": workers != 0, "--teacher-lead": teacher_lead != 0, "--sampling": sampling != "spread",
        "--tensorboard": tensorboard is not None, "--snapshot-every": snapshot_every != 0,
        "--start-actor": start_actor is not None,
    }  # fmt: skip
    for option, given in unsupported.items():
        if given:
            raise UserError(f"--ray runs the arenas in Ray runners: {option} is not taken with it", 2)
    from sacbot.distributed.learner import train_ray
    from sacbot.distributed.view import LiveView

    def log(line: str) -> None:
        print(f"sacbot train-fast: {line}", file=sys.stderr, flush=True)

    kwargs = dict(
        steps=steps, runners=runners, envs=envs, seed=seed,
        utd=updates_per_step / envs if utd is None else utd, save_every=save_every,
        torch_threads=torch_threads, rounds_per_game=rounds_per_game,
        replay_keep=_replay_keep(), address=ray_address, log=log,
    )  # fmt: skip
    if sys.stderr.isatty():
        with LiveView() as view:
            summary = train_ray(opponents, out, view=view, **kwargs)  # type: ignore[arg-type]
    else:
        summary = train_ray(opponents, out, **kwargs)  # type: ignore[arg-type]
    fig = summary.figures
    typer.echo(
        f"trained {summary.env_steps} env steps, {summary.updates} updates, {summary.rounds} rounds in "
        f"{summary.seconds:.1f} s on {fig['runners']} Ray runners "
        f"({fig['env_steps_per_s']:,.0f} env steps/s, "
        f"{fig['updates_per_s']:.2f} updates/s, UTD {fig['utd_held']:.4f} for {fig['utd_target']:.4f}, "
        f"{fig['runner_restarts']} restarts); weights in {summary.out}"
    )
    for name, share in summary.score_share.items():
        typer.echo(f"  {name}: score share {share:.3f} over the last rounds, {summary.wins[name]} rounds won")


def _replay_keep() -> int:
    """The replay a run keeps when it ends or is stopped: all of it (its capacity), so that a resumed run goes
    on with the data it had, unless SACBOT_REPLAY_KEEP sets a number (0: none)."""
    from sacbot.agent.trainer_config import TrainerConfig
    from sacbot.settings import load_sacbot_settings

    settings = load_sacbot_settings()
    if "replay_keep" in settings.model_fields_set:
        return settings.replay_keep
    return TrainerConfig().replay_capacity
