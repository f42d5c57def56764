"""What the live campaign view shows, folded from the loop's and the runner's events (rendering with rich)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text


def _fmt(value: Any, spec: str = ".3f") -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return format(value, spec)
    return str(value)


def _phase_name(label: str) -> str:
    """`pretrain` -> pretraining, `stage-surf` -> stage surf."""
    return "pretraining" if label == "pretrain" else label.replace("-", " ", 1)


@dataclass
class CampaignView:
    name: str
    budget: int
    completed: int = 0
    chunk: int | None = None
    attempt: int = 1
    opponent: str = "-"
    phase: str = "starting"
    round: dict[str, Any] = field(default_factory=dict)
    evals: dict[str, dict[str, Any]] = field(default_factory=dict)
    composite: float | None = None
    best: float | None = None
    retries: int = 0
    last_problem: str = ""
    chunks: list[dict[str, Any]] = field(default_factory=list)

    def update(self, event: dict[str, Any]) -> None:
        kind = event.get("event")
        if kind == "start":
            self.completed = int(event.get("completed", 0))
        elif kind == "chunk_start":
            self.chunk, self.attempt = event["chunk"], event["attempt"]
            self.opponent, self.phase, self.round = event["opponent"], "training", {}
        elif kind == "round" and not event.get("eval"):
            self.round = event
        elif kind == "round":
            self.phase = f"eval vs {event.get('opponent')}: round {event.get('round')}/{event.get('rounds')}"
        elif kind == "chunk_done":
            self.completed = event["chunk"]
            self.chunks.append(event)
            self.phase = "chunk done"
        elif kind == "chunk_failed":
            self.retries += 1
            self.last_problem = (
                f"chunk {event.get('chunk')} attempt {event.get('attempt')}: {event.get('reason')}"
            )
            self.phase = f"retrying in {event.get('retry_in_s', 0):.1f} s"
        elif kind == "server_restart":
            self.last_problem = f"server restarted: {event.get('reason')}"
        elif kind == "eval_result":
            self.evals[event["opponent"]] = event
        elif kind == "eval_done":
            self.composite, self.best = event.get("composite"), event.get("best")
            self.phase = "eval done" + (" (new best)" if event.get("promoted") else "")
        elif kind == "finished":
            self.phase, self.best = "finished", event.get("best", self.best)
        elif kind == "pretrain_start":  # the pretraining or one of its stages (`name`: stage-<name>)
            label = str(event.get("name") or "pretrain")
            self.phase = f"{_phase_name(label)}: sacbot train-fast, its output in logs/{label}.log"
        elif kind == "pretrain_progress":
            label = str(event.get("name") or "pretrain")
            steps = f"env steps {event.get('env_steps', 0):,} of {event.get('until', 0):,}"
            self.phase = (
                f"{_phase_name(label)}: {steps}, updates {event.get('updates', 0):,} (logs/{label}.log)"
            )
        elif kind == "pretrain_done":
            self.phase = "pretraining done"
        elif kind in ("interrupted", "gave_up"):
            self.phase = str(kind)

    def render(self) -> RenderableType:
        head = Table.grid(padding=(0, 2))
        head.add_column(style="bold")
        head.add_column()
        r = self.round
        losses = r.get("losses") or {}
        head.add_row("campaign", self.name)
        current = _fmt(self.chunk) + (f" (attempt {self.attempt})" if self.attempt > 1 else "")
        head.add_row("chunk", f"{current} of {self.budget}   completed {self.completed}   ({self.phase})")
        head.add_row("opponent", Text(self.opponent))
        head.add_row(
            "rounds", f"{r.get('round', 0)}/{r.get('rounds', '-')}   win rate {_fmt(r.get('win_rate'))}"
        )
        head.add_row(
            "training",
            f"skipped turns {_fmt(r.get('skipped_turns'))}   updates/s {_fmt(r.get('updates_per_s'), '.1f')}"
            f"   alpha {_fmt(r.get('alpha'), '.4f')}",
        )
        head.add_row("losses", "  ".join(f"{k} {v:.4g}" for k, v in losses.items()) or "-")
        head.add_row("composite", f"{_fmt(self.composite)}   best {_fmt(self.best)}   retries {self.retries}")
        if self.last_problem:
            head.add_row("last problem", Text(self.last_problem))
        return Group(head, self.eval_table())

    def eval_table(self) -> Table:
        table = Table(title="last eval", title_justify="left")
        for col in ("opponent", "chunk", "rounds", "wins", "win rate", "score share"):
            table.add_column(col, justify="left" if col == "opponent" else "right")
        for name, e in self.evals.items():
            table.add_row(
                name,
                str(e["chunk"]),
                str(e["rounds"]),
                str(e["wins"]),
                _fmt(e["win_rate"]),
                _fmt(e["score_share"]),
            )
        return table

    def summary(self) -> Table:
        table = Table(
            title=f"campaign {self.name}: {self.completed} of {self.budget} chunks", title_justify="left"
        )
        for col in ("chunk", "opponent", "attempts", "rounds", "wins", "win rate", "score share", "seconds"):
            table.add_column(col, justify="left" if col == "opponent" else "right")
        for c in self.chunks:
            table.add_row(
                str(c["chunk"]),
                str(c["opponent"]),
                str(c.get("attempt", 1)),
                str(c["rounds"]),
                str(c["wins"]),
                _fmt(c["win_rate"]),
                _fmt(c["score_share"]),
                _fmt(c.get("seconds"), ".1f"),
            )
        table.caption = f"best composite {_fmt(self.best)}; retries {self.retries}"
        return table
