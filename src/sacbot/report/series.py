"""The curves a report draws from a run's rows (pure): eval win rates and the composite, placed on both x
axes (env steps and active wall time); the training win rate over a moving window of rounds, overall and per
opponent (the learner's own snapshots as one curve); the losses, alpha and SAC updates per second against env
steps.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

from sacbot.campaign.scoring import composite
from sacbot.records import CampaignEvent, EvalRecord
from sacbot.report.data import (
    LOSS_KEYS,
    OPT_IN_LOSS_TERMS,
    ActiveClock,
    MetricPoint,
    RunData,
    env_steps_at,
    env_steps_placer,
    opponent_group,
)

TRAINING_WINDOW = 50  # rounds in the training win-rate's moving window
MIN_OPPONENT_ROUNDS = 10  # rounds against one opponent before its training win-rate curve begins


@dataclass(frozen=True)
class Point:
    """One value at one moment of the run, on both x axes (env steps None when the run has no metrics)."""

    env_steps: int | None
    active_s: float
    value: float
    chunk: int | None = None


def eval_opponents(evals: Sequence[EvalRecord]) -> list[str]:
    """Eval opponents in order of first appearance."""
    return list(dict.fromkeys(r.opponent for r in evals))


def win_rate_series(data: RunData, clock: ActiveClock) -> dict[str, list[Point]]:
    out: dict[str, list[Point]] = {name: [] for name in eval_opponents(data.evals)}
    for rec in sorted(data.evals, key=lambda r: (r.time, r.chunk)):
        out[rec.opponent].append(
            Point(env_steps_at(data.metrics, rec.time), clock(rec.time), rec.win_rate, rec.chunk)
        )
    return out


def composite_series(data: RunData, clock: ActiveClock) -> tuple[list[Point], str]:
    """The campaign's composite per eval (from its eval_done events) and what it measures.

    Without a campaign log it is recomputed from eval_log.jsonl with the campaign defaults (score share,
    moving average over 5 evals), and the label says so.
    """
    kind = data.best.kind or ""
    label = "composite"
    if kind.startswith("campaign-eval-composite:"):
        _, metric, window = (kind.split(":") + ["", ""])[:3]
        label = f"composite ({metric}, {window})"
    points = []
    for ev in data.events:
        if ev.event == "eval_done" and ev.composite is not None:
            points.append(Point(env_steps_at(data.metrics, ev.time), clock(ev.time), ev.composite, ev.chunk))
    if points or data.events:
        return points, label
    names = eval_opponents(data.evals)
    by_chunk: dict[int, float] = {}
    for rec in data.evals:
        by_chunk[rec.chunk] = max(by_chunk.get(rec.chunk, rec.time), rec.time)
    for chunk in sorted(by_chunk):
        history = [r for r in data.evals if r.chunk <= chunk]
        value_or_none = composite(history, names, "score_share", 5)
        if value_or_none is not None:
            t = by_chunk[chunk]
            points.append(Point(env_steps_at(data.metrics, t), clock(t), value_or_none, chunk))
    return points, "composite (score_share, ma5, recomputed)"


def loss_series(metrics: Sequence[MetricPoint]) -> dict[str, list[tuple[int, float]]]:
    out: dict[str, list[tuple[int, float]]] = {key: [] for key in LOSS_KEYS}
    for p in metrics:
        for key in LOSS_KEYS:
            value = p.losses.get(key)
            if value is not None:
                out[key].append((p.env_steps, value))
    for key in OPT_IN_LOSS_TERMS:
        if not any(v for _, v in out[key]):
            out[key] = []  # the term off: the trainer logs a constant 0 (or nothing)
    return out


def training_win_rate_series(data: RunData, clock: ActiveClock, window: int = TRAINING_WINDOW) -> list[Point]:
    """Win rate of the last `window` training rounds (the stochastic policy, every opponent), after each round
    from the `window`-th on, pretraining and real-time chunks alike."""
    out: list[Point] = []
    won = [w for _, w in data.training_outcomes]
    place = env_steps_placer(data.metrics)
    running = 0
    for i, (t, w) in enumerate(data.training_outcomes):
        running += w
        if i >= window:
            running -= won[i - window]
        if i + 1 >= window:
            out.append(Point(place(t), clock(t), running / window))
    return out


def training_win_rate_by_opponent(
    data: RunData,
    clock: ActiveClock,
    window: int = TRAINING_WINDOW,
    min_rounds: int = MIN_OPPONENT_ROUNDS,
) -> dict[str, list[Point]]:
    """Per opponent (snapshots grouped, see `opponent_group`): the win rate over its last `window` training
    rounds (fewer until it has played that many), after each of its rounds from the `min_rounds`-th on, placed
    at the env steps when the round ended; pretraining's rounds and the real-time chunks' alike, the same
    rounds as `training_win_rate_series`. Opponents with fewer than `min_rounds` rounds have no curve."""
    rows = sorted(
        (r.time, opponent_group(r.opponent), r.outcome == "won")
        for r in data.pretrain_round_rows + data.rounds
        if r.time is not None and r.outcome is not None
    )
    place = env_steps_placer(data.metrics)
    recent: dict[str, list[bool]] = {}
    out: dict[str, list[Point]] = {}
    for t, name, won in rows:
        history = recent.setdefault(name, [])
        history.append(won)
        if len(history) >= min_rounds:
            last = history[-window:]
            out.setdefault(name, []).append(Point(place(t), clock(t), sum(last) / len(last)))
    return out


def alpha_series(metrics: Sequence[MetricPoint]) -> list[tuple[int, float]]:
    return [(p.env_steps, p.alpha) for p in metrics if p.alpha is not None]


def session_boundaries(events: Sequence[CampaignEvent]) -> list[float]:
    """Moments a new process began (a campaign start, a chunk attempt, the switch from pretraining)."""
    kinds = ("start", "chunk_start", "pretrain_start", "pretrain_done")
    return sorted(e.time for e in events if e.event in kinds)


def updates_per_s_series(
    metrics: Sequence[MetricPoint], boundaries: Sequence[float]
) -> list[tuple[int, float]]:
    """Updates per second between consecutive metrics lines of one process.

    A pair is left out when a new process began between them (its interval holds boot time, and the update
    counter may restart from an older checkpoint), when the counter went backwards, or when no time passed.
    """
    out: list[tuple[int, float]] = []
    for source in ("pretrain", "play"):
        points = [p for p in metrics if p.source == source and p.updates is not None]
        for a, b in zip(points, points[1:], strict=False):
            assert a.updates is not None and b.updates is not None
            dt, du = b.time - a.time, b.updates - a.updates
            crossed = bisect.bisect_right(boundaries, b.time) > bisect.bisect_right(boundaries, a.time)
            if dt > 0 and du >= 0 and not crossed:
                out.append((b.env_steps, du / dt))
    return sorted(out)
