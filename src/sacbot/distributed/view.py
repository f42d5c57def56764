"""The live terminal view of a `--ray` training run (rich): runners alive, env steps/s, updates/s, UTD."""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.live import Live
from rich.table import Table

from sacbot.distributed.learner import RayProgress


def progress_table(progress: RayProgress) -> Table:
    """One table: the run's counters and rates, and each runner's state."""
    fig = progress.figures()
    table = Table(title="sacbot train-fast --ray", show_header=False, expand=False)
    table.add_column("figure", style="bold")
    table.add_column("value", justify="right")
    table.add_row("runners alive", f"{fig['runners_alive']} / {fig['runners']}")
    table.add_row(
        "runners paused (learner lags)", f"{fig['runners_paused']} ({fig['runner_paused_s']:.1f} runner-s)"
    )
    table.add_row("runner restarts", str(fig["runner_restarts"]))
    table.add_row("env steps", f"{progress.env_steps:,} ({progress.run_env_steps:,} this run)")
    table.add_row("env steps/s", f"{fig['env_steps_per_s']:,.0f}")
    table.add_row("updates/s", f"{fig['updates_per_s']:,.2f}")
    table.add_row("UTD held / target", f"{fig['utd_held']:.4f} / {fig['utd_target']:.4f}")
    table.add_row("rounds", f"{progress.rounds:,}")
    table.add_row("bytes per env step", f"{fig['bytes_per_env_step']:,.0f}")
    table.add_row("weight put / get (ms)", f"{fig['weight_put_ms']:.2f} / {fig['weight_get_ms']:.2f}")
    return table


class LiveView:
    """A rich `Live` display on stderr, redrawn by each call (`train_ray(view=...)`)."""

    def __init__(self, console: Console | None = None) -> None:
        self._live = Live(console=console or Console(stderr=True), auto_refresh=False, transient=False)

    def __enter__(self) -> LiveView:
        self._live.__enter__()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._live.__exit__(kind, exc, tb)

    def __call__(self, progress: RayProgress) -> None:
        self._live.update(progress_table(progress), refresh=True)


__all__ = ["LiveView", "progress_table"]
