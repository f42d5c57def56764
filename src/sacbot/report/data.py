"""A run folder's JSONL files as typed rows (pure), and the run's two x axes: active time and env steps.

The files (written by `sacbot train-campaign`, `sacbot play` and `sacbot train-fast`):
- `campaign_log.jsonl`: campaign events (`event`, `time`, ...): start, chunk_start, chunk_done, chunk_failed,
  eval_done (with the composite), promoted, pretrain_done, finished, ...
- `eval_log.jsonl`: one line per eval of one opponent (opponent, rounds, wins, win_rate, score_share, chunk,
  time).
- `weights/training_metrics.jsonl` (play) and `pretrain/training_metrics.jsonl` (train-fast): one line per
  train pass or save: time, env_steps, updates and, once updates ran, critic/actor/alpha losses and alpha.
- `weights/rounds.jsonl` (play) and `pretrain/rounds.jsonl` (train-fast): one line per round (opponent,
  outcome, own and enemy score; play's also skipped turns, tick-to-intent latencies, dropped transitions).
- `campaign_log.jsonl`'s `league_draw` events (with `[league]`) and `pretrain/league.jsonl` (train-fast with
  `--sampling`): the league's pool probabilities per chunk / per save, the opponent drawn, snapshots taken.

A bare weights folder (`sacbot play`'s `SACBOT_WEIGHTS_DIR`, or a `sacbot train-fast --out` folder) is read as
a run with only `weights/` (and its `league.jsonl` as the fast league): see `WEIGHTS_FOLDER_FILES`.

Each line is read through its record model (`sacbot.records`): every optional field may be missing, null or
odd (read as missing). A line that is not a JSON object, or that its model refuses (a metrics line without
`time`/`env_steps`), is malformed: counted per file, never fatal.

Wall time is *active* time: the sum of the campaign's sessions (each `start` event to the last thing written
before the next one), so the hours a stopped campaign sat idle before being resumed do not stretch the curves.
Env steps at a moment come from the metrics lines around it. `opponent_group` names an opponent's curve (the
learner's own snapshots share one).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sacbot import jsonl
from sacbot.records import (
    LEAGUE_LINE,
    TRAIN_FAST,
    CampaignEvent,
    EvalRecord,
    LeagueLine,
    MetricsLine,
    RoundLine,
    eval_history,
    parse_rows,
)
from sacbot.rundir import LEAGUE_LOG, ROUNDS, TRAINING_METRICS, RunPaths

_RUN = RunPaths(Path())  # a run folder's files, relative to it
CAMPAIGN_LOG = _RUN.campaign_log.as_posix()
EVAL_LOG = _RUN.eval_log.as_posix()
PLAY_METRICS = _RUN.weights.training_metrics.as_posix()
PLAY_ROUNDS = _RUN.weights.rounds.as_posix()
PRETRAIN_METRICS = _RUN.pretrain.training_metrics.as_posix()
PRETRAIN_ROUNDS = _RUN.pretrain.rounds.as_posix()
FAST_LEAGUE = _RUN.pretrain.league_log.as_posix()
JSONL_FILES = (
    CAMPAIGN_LOG, EVAL_LOG, PLAY_METRICS, PLAY_ROUNDS, PRETRAIN_METRICS, PRETRAIN_ROUNDS, FAST_LEAGUE
)  # fmt: skip
# A bare weights folder's files, and where they stand in a campaign run folder.
WEIGHTS_FOLDER_FILES = {TRAINING_METRICS: PLAY_METRICS, ROUNDS: PLAY_ROUNDS, LEAGUE_LOG: FAST_LEAGUE}
LOSS_KEYS = (
    "critic_loss", "actor_loss", "alpha_loss", "kickstart_loss", "self_imitation_loss", "hindsight_aim_loss",
    "anchor_loss",
)  # fmt: skip
# The opt-in actor terms (drawn only when not all 0), as a loss panel's caption names them.
OPT_IN_LOSS_TERMS = {
    "kickstart_loss": "the teacher's term",
    "self_imitation_loss": "the self-imitation term",
    "hindsight_aim_loss": "the hindsight aim term",
    "anchor_loss": "the anchor term",
}
# The learner's own snapshots in a pool (`sacbot.campaign.config.SNAPSHOT_PREFIX`, `sacbot.env.league.
# FAST_SNAPSHOT_PREFIX`; spelled here so a report does not import the trainer): drawn as one group each.
SNAPSHOT_PREFIXES = ("SacSnap", "FastSnap")


@dataclass(frozen=True)
class MetricPoint:
    """One training_metrics line; `source` is "play" or "pretrain"."""

    time: float
    env_steps: int
    source: str
    updates: int | None = None
    losses: Mapping[str, float | None] = field(default_factory=dict)
    alpha: float | None = None
    replay_size: int | None = None


def metric_points(lines: Sequence[MetricsLine], source: str) -> list[MetricPoint]:
    return [
        MetricPoint(
            time=line.time,
            env_steps=line.env_steps,
            source=source,
            updates=line.updates,
            losses={key: getattr(line, key) for key in LOSS_KEYS},
            alpha=line.alpha,
            replay_size=line.replay_size,
        )
        for line in lines
    ]


@dataclass(frozen=True)
class BestInfo:
    """The global best as the run folder tells it: the `best_score.json` mirror and/or best.zip's metadata."""

    score: float | None = None
    kind: str | None = None
    chunk: int | None = None
    env_steps: int | None = None


@dataclass
class RunData:
    """Everything a report reads from one run folder."""

    events: list[CampaignEvent] = field(default_factory=list)
    evals: list[EvalRecord] = field(default_factory=list)
    metrics: list[MetricPoint] = field(default_factory=list)  # play and pretrain, by time
    rounds: list[RoundLine] = field(default_factory=list)  # play's rounds only (a bare folder's rounds)
    pretrain_rounds: int = 0
    pretrain_round_rows: list[RoundLine] = field(default_factory=list)
    fast_league: list[LeagueLine] = field(default_factory=list)  # train-fast's league.jsonl lines
    # "campaign" (a run folder), or a bare weights folder: "play" (sacbot play's) or "train-fast"
    kind: str = "campaign"
    # (time, won) of every training round, pretraining's and play's, in time order
    training_outcomes: list[tuple[float, bool]] = field(default_factory=list)
    malformed: dict[str, int] = field(default_factory=dict)  # file -> malformed lines
    best: BestInfo = field(default_factory=BestInfo)
    round_counter: int | None = None
    # (name, env steps) where each `[[pretrain.stages]]` fine-tune began, in the order they ran
    stage_starts: list[tuple[str, int]] = field(default_factory=list)

    @property
    def usable(self) -> bool:
        return bool(self.events or self.evals or self.metrics or self.rounds)


def parse_run(
    texts: Mapping[str, str | None], best: BestInfo | None = None, weights_folder: bool = False
) -> RunData:
    """`texts`: file (one of JSONL_FILES) -> its text, None when missing. `weights_folder`: the texts are a
    bare weights folder's (see `weights_folder_texts`); its kind ("play" or "train-fast") follows from the
    lines' `written_by`."""
    data = RunData(best=best or BestInfo())
    rows: dict[str, list[jsonl.Row]] = {}
    for name in JSONL_FILES:
        text = texts.get(name)
        lines = jsonl.parse(text) if text is not None else jsonl.Lines()
        rows[name] = lines.rows
        _count(data.malformed, name, lines.malformed)
    data.events, bad = parse_rows(CampaignEvent.model_validate, rows[CAMPAIGN_LOG])
    _count(data.malformed, CAMPAIGN_LOG, bad)
    data.evals, bad = eval_history(rows[EVAL_LOG])
    _count(data.malformed, EVAL_LOG, bad)
    play, bad = parse_rows(MetricsLine.model_validate, rows[PLAY_METRICS])
    _count(data.malformed, PLAY_METRICS, bad)
    pre, bad = parse_rows(MetricsLine.model_validate, rows[PRETRAIN_METRICS])
    _count(data.malformed, PRETRAIN_METRICS, bad)
    data.metrics = sorted(metric_points(pre, "pretrain") + metric_points(play, "play"), key=lambda p: p.time)
    data.rounds = parse_rows(RoundLine.model_validate, rows[PLAY_ROUNDS])[0]  # every object is a round line
    data.pretrain_round_rows = parse_rows(RoundLine.model_validate, rows[PRETRAIN_ROUNDS])[0]
    data.pretrain_rounds = len(data.pretrain_round_rows)
    data.training_outcomes = sorted(
        (r.time, r.outcome == "won")
        for r in data.pretrain_round_rows + data.rounds
        if r.time is not None and r.outcome is not None
    )
    data.fast_league, bad = parse_rows(LEAGUE_LINE.validate_python, rows[FAST_LEAGUE])
    _count(data.malformed, FAST_LEAGUE, bad)
    if weights_folder:
        writers = {r.written_by for r in data.rounds} | {m.written_by for m in play}
        data.kind = "train-fast" if TRAIN_FAST in writers else "play"
    return data


def weights_folder_texts(texts: Mapping[str, str | None]) -> dict[str, str | None]:
    """A bare weights folder's files (`WEIGHTS_FOLDER_FILES` names -> text) as a run folder's JSONL_FILES."""
    return {name: texts.get(bare) for bare, name in WEIGHTS_FOLDER_FILES.items()}


def _count(malformed: dict[str, int], name: str, bad: int) -> None:
    if bad:
        malformed[name] = malformed.get(name, 0) + bad


# -- time and env-step axes ----------------------------------------------------------------------------------


def all_times(data: RunData) -> list[float]:
    times = [e.time for e in data.events]
    times += [r.time for r in data.evals] + [p.time for p in data.metrics]
    times += [r.time for r in data.rounds if r.time is not None]
    return sorted(times)


@dataclass(frozen=True)
class ActiveClock:
    """Maps a timestamp to active seconds since the run began (idle gaps between sessions left out)."""

    starts: tuple[float, ...]
    offsets: tuple[float, ...]  # active seconds before each session
    total_s: float
    span_s: float  # first to last timestamp, gaps included

    def __call__(self, t: float) -> float:
        i = bisect.bisect_right(self.starts, t) - 1
        if i < 0:
            return 0.0
        return self.offsets[i] + (t - self.starts[i])


def active_clock(data: RunData) -> ActiveClock:
    times = all_times(data)
    if not times:
        return ActiveClock((0.0,), (0.0,), 0.0, 0.0)
    starts = sorted(e.time for e in data.events if e.event == "start")
    if not starts or starts[0] > times[0]:
        starts.insert(0, times[0])  # something was written before the first logged start
    offsets: list[float] = []
    active = 0.0
    for i, begin in enumerate(starts):
        end_limit = starts[i + 1] if i + 1 < len(starts) else math.inf
        inside = [t for t in times if begin <= t < end_limit]
        offsets.append(active)
        active += (max(inside) - begin) if inside else 0.0
    return ActiveClock(tuple(starts), tuple(offsets), active, times[-1] - times[0])


def env_steps_at(metrics: Sequence[MetricPoint], t: float) -> int | None:
    """Env steps of the last metrics line written at or before `t` (None without metrics; 0 before any)."""
    if not metrics:
        return None
    i = bisect.bisect_right([p.time for p in metrics], t) - 1
    return metrics[i].env_steps if i >= 0 else 0


def env_steps_placer(metrics: Sequence[MetricPoint]) -> Callable[[float], int | None]:
    """Env steps at a time `t`, linear between the metrics lines around it (a save line comes every 20,000
    steps in pretraining: rounds between two lines get their share). The metrics' times are listed once, for
    many moments."""
    times = [p.time for p in metrics]
    return lambda t: _interpolate(metrics, times, t)


def _interpolate(metrics: Sequence[MetricPoint], times: Sequence[float], t: float) -> int | None:
    if not metrics:
        return None
    i = bisect.bisect_right(times, t)
    if i == 0:
        return 0 if t < times[0] else metrics[0].env_steps
    if i == len(metrics):
        return metrics[-1].env_steps
    a, b = metrics[i - 1], metrics[i]
    if b.time <= a.time or b.env_steps < a.env_steps:
        return a.env_steps  # a new session (resume) or a clock step: no straight line between them
    share = (t - a.time) / (b.time - a.time)
    return int(round(a.env_steps + share * (b.env_steps - a.env_steps)))


def pretrain_end_steps(data: RunData) -> int | None:
    """Env steps where pretraining handed over to real-time play (None without a pretraining phase)."""
    pre = [p.env_steps for p in data.metrics if p.source == "pretrain"]
    return max(pre) if pre else None


@dataclass(frozen=True)
class Phases:
    """Where a run's phases hand over, in env steps: the start of each pretraining stage (name, steps), then
    `end`, where the pretraining (its stages included) handed over to real-time play."""

    end: int
    stages: tuple[tuple[str, int], ...] = ()


def run_phases(data: RunData) -> Phases | None:
    """The run's phases (None without a pretraining phase)."""
    end = pretrain_end_steps(data)
    return None if end is None else Phases(end, tuple(data.stage_starts))


# -- opponent names ------------------------------------------------------------------------------------------


def opponent_group(name: str | None) -> str:
    """An opponent's curve: its name; the learner's own snapshots (SacSnap<c>, FastSnap<n>) share one."""
    if not name:
        return "(opponent not set)"
    for prefix in SNAPSHOT_PREFIXES:
        if name.startswith(prefix) and name[len(prefix) :].isdigit():
            return f"{prefix}* (own snapshots)"
    return name
