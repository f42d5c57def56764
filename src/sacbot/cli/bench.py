"""`sacbot bench ...`: benchmarks that print figures (medians), never asserted by tests.

Each command calls one library function of its area and prints its figures; `--json` prints one JSON object.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import typer

from sacbot.errors import UserError

app = typer.Typer(help="Benchmarks that print figures.", no_args_is_help=True)


def _print_figures(figures: Mapping[str, Any], json_output: bool) -> None:
    """One JSON object for scripts, else one `name: value` line per figure."""
    if json_output:
        typer.echo(json.dumps(figures))
        return
    width = max(map(len, figures), default=0)
    for name, value in figures.items():
        typer.echo(
            f"{name:>{width}}: {value:,.4g}" if isinstance(value, float) else f"{name:>{width}}: {value}"
        )


@app.command("engine")
def engine(json_output: bool = typer.Option(False, "--json")) -> None:
    """Engine turns per second, 1v1 and 10-bot melee (medians of 5 runs; wall-clock, and per CPU-second)."""
    from sacbot.bench.engine import bench_engine

    figures = bench_engine()
    _print_figures(figures, json_output)


@app.command("arena")
def arena(
    json_output: bool = typer.Option(False, "--json"),
    windows: int = typer.Option(3, "--windows", min=1, help="Measurement windows (the figures are medians)."),
    window_s: float = typer.Option(2.0, "--window-s", min=0.2, help="Seconds per window."),
    client: bool = typer.Option(False, "--client", help="Run the two bots on sacbot.client."),
    record: Path | None = typer.Option(
        None, "--record", help="Record the game into this folder while measuring (the cost of recording)."
    ),
    compare: bool = typer.Option(
        False,
        "--compare",
        help="With --record: alternate windows with and without recording and print both side by side.",
    ),
) -> None:
    """Arena turns per second for a 1v1 between two bot processes over WebSocket."""
    from sacbot.bench.arena import bench_arena
    from sacbot.viewer.recording import RecordingWriter

    if compare and record is None:
        raise UserError("--compare needs --record DIR", exit_code=2)
    recorder = RecordingWriter(record) if record is not None else None
    try:
        figures = bench_arena(
            windows=windows, window_s=window_s, client=client, recorder=recorder, compare=compare
        )
    finally:
        if recorder is not None:
            recorder.close()
    if recorder is not None:
        size = sum(p.stat().st_size for p in recorder.files)
        figures["recorded_mb"] = round(recorder.stats.bytes_in / 1e6, 2)
        figures["recorded_gz_mb"] = round(size / 1e6, 2)
    _print_figures(figures, json_output)


@app.command("inference")
def inference(
    json_output: bool = typer.Option(False, "--json"),
    steps: int = typer.Option(20000, "--steps", help="Actor steps timed per path."),
) -> None:
    """One actor step at batch 1: fast path against torch."""
    from sacbot.bench.trainer import bench_inference

    if steps < 200:
        raise UserError("--steps must be at least 200", exit_code=2)
    figures = bench_inference(steps=steps)
    _print_figures(figures, json_output)


@app.command("trainer")
def trainer(
    json_output: bool = typer.Option(False, "--json"),
    batch: int = typer.Option(64, "--batch", help="Windows per update."),
    threads: int = typer.Option(1, "--threads", help="torch intra-op threads."),
    seconds: float = typer.Option(10.0, "--seconds", help="How long to measure."),
    device: str = typer.Option("cpu", "--device", help="cpu, cuda or auto."),
    compare_eager: bool = typer.Option(
        False,
        "--compare-eager",
        help="Alternate updates with a straightforward eager implementation (cpu) and report both medians.",
    ),
    recipe: bool = typer.Option(
        False,
        "--recipe",
        help="The networks' inputs and training terms of the SACBOT_* settings (a campaign's [bot] table),"
        " not the defaults.",
    ),
) -> None:
    """SAC-GRU updates per second."""
    from sacbot.bench import trainer as trainer_bench

    if batch < 1 or threads < 1 or seconds <= 0:
        raise UserError("--batch and --threads must be at least 1 and --seconds positive", exit_code=2)
    if device not in ("cpu", "cuda", "auto"):
        raise UserError(f"--device must be cpu, cuda or auto, not {device!r}", exit_code=2)
    import torch

    if device == "cuda" and not torch.cuda.is_available():
        raise UserError("--device cuda: no CUDA device is available", exit_code=2)
    if compare_eager:
        if device == "cuda" or recipe:
            raise UserError("--compare-eager runs the default sizes and terms on the cpu", exit_code=2)
        figures = trainer_bench.compare_eager(batch=batch, threads=threads, seconds=seconds)
    else:
        figures = trainer_bench.bench_trainer(
            batch=batch, threads=threads, seconds=seconds, device=device, recipe=recipe
        )
    _print_figures(figures, json_output)


@app.command("play")
def play(
    json_output: bool = typer.Option(False, "--json"),
    turns: int = typer.Option(20_000, "--turns", min=1, help="Turns to play (summed over rounds)."),
    opponent: str = typer.Option(
        "SpinBot", "--opponent", help="Opponent: a name under bots/, or a bot folder."
    ),
    checkpoint: Path | None = typer.Option(
        None, "--checkpoint", help="Start the bot from this archive (else a fresh init)."
    ),
) -> None:
    """Tick-to-intent latency of `sacbot play` with the trainer running flat out."""
    from sacbot.bench.play import bench_play

    figures = bench_play(turns, opponent, checkpoint)
    _print_figures(figures, json_output)


@app.command("env")
def env(
    json_output: bool = typer.Option(False, "--json"),
    steps: int = typer.Option(20_000, "--steps", min=100, help="Steps per run (3 runs; the median)."),
    opponent: str = typer.Option("SpinBot", "--opponent", help="The classic opponent in every arena."),
) -> None:
    """Gymnasium environment steps per second, single and 16 vectorised arenas (random actions)."""
    from sacbot.bench.env import bench_env
    from sacbot.opponents import opponent_class

    figures = bench_env(steps=steps, opponent=opponent_class(opponent).name)
    _print_figures(figures, json_output)


@app.command("codec")
def codec(
    json_output: bool = typer.Option(False, "--json"),
    number: int = typer.Option(5000, "--number", min=100, help="Operations per run (9 runs; the median)."),
) -> None:
    """Codec microseconds (decode a tick, encode an intent, construct a tick): ours vs pydantic."""
    from sacbot.bench.protocol import run_codec_bench

    figures = run_codec_bench(number=number)
    if json_output:
        typer.echo(json.dumps(figures))
        return
    for name, ops in figures.items():
        typer.echo(f"{name}: " + ", ".join(f"{op} {us:.2f} us" for op, us in ops.items()))


@app.command("ray")
def ray_bench(
    json_output: bool = typer.Option(False, "--json"),
    opponents: str = typer.Option("SpinBot", "--opponents", help="Opponents spread over the arenas."),
    envs: int = typer.Option(8, "--envs", min=1, help="Arenas per runner (and in-process)."),
    window_s: float = typer.Option(5.0, "--window-s", min=0.5, help="Seconds per measurement."),
    address: str | None = typer.Option(None, "--ray-address", help="Join this Ray cluster (default: local)."),
) -> None:
    """Ray runners vs the in-process path: env steps/s, bytes per env step, learner updates/s fed and
    standalone, weight-broadcast latency (sizes a deployment: docs/scaling.md)."""
    from sacbot.distributed import require_ray

    require_ray()
    from sacbot.bench.ray import bench_ray

    _print_figures(bench_ray(opponents, envs, window_s=window_s, address=address), json_output)
