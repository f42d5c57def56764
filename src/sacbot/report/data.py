"""A campaign run folder's JSONL files as typed rows, and the series a report draws from them (pure).

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
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sacbot import jsonl
from sacbot.campaign.scoring import composite
from sacbot.records import (
    LEAGUE_LINE,
    TRAIN_FAST,
    CampaignEvent,
    EvalRecord,
    LeagueLine,
    LeaguePoolLine,
    LeagueSnapshotLine,
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
LOSS_KEYS = ("critic_loss", "actor_loss", "alpha_loss", "kickstart_loss")
TRAINING_WINDOW = 50  # rounds in the training win-rate's moving window
SHARE_WINDOW = 50  # rounds in the per-round score share's moving average
SHARE_BLOCK = 50  # rounds per block of the per-round summary table
MIN_OPPONENT_ROUNDS = 10  # rounds against one opponent before its training win-rate curve begins
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


# -- series --------------------------------------------------------------------------------------------------


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
    if not any(v for _, v in out["kickstart_loss"]):
        out["kickstart_loss"] = []  # kickstarting off: the trainer logs a constant 0
    return out


def interpolated_env_steps(metrics: Sequence[MetricPoint], t: float) -> int | None:
    """Env steps at time `t`, linear between the metrics lines around it (a save line comes every
    20,000 steps in pretraining: rounds between two lines get their share)."""
    return env_steps_placer(metrics)(t)


def env_steps_placer(metrics: Sequence[MetricPoint]) -> Callable[[float], int | None]:
    """`interpolated_env_steps` for many moments: the metrics' times are listed once."""
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


def opponent_group(name: str | None) -> str:
    """An opponent's curve: its name; the learner's own snapshots (SacSnap<c>, FastSnap<n>) share one."""
    if not name:
        return "(opponent not set)"
    for prefix in SNAPSHOT_PREFIXES:
        if name.startswith(prefix) and name[len(prefix) :].isdigit():
            return f"{prefix}* (own snapshots)"
    return name


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


def pretrain_end_steps(data: RunData) -> int | None:
    """Env steps where pretraining handed over to real-time play (None without a pretraining phase)."""
    pre = [p.env_steps for p in data.metrics if p.source == "pretrain"]
    return max(pre) if pre else None


# -- per-round score share -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ShareRound:
    """One scored round of a rounds.jsonl; `index` is 1-based, in the order the rounds were written."""

    index: int
    opponent: str
    own: float
    enemy: float
    won: bool

    @property
    def share(self) -> float:
        return round_share(self.own, self.enemy)


def round_share(own: float, enemy: float) -> float:
    """own / (own + enemy) of one round (negative scores as 0; 0.5 when nobody scored), as the saver's
    windows count it (`sacbot.runtime.scoring.score_share`)."""
    own, enemy = max(0.0, own), max(0.0, enemy)
    return 0.5 if own + enemy <= 0.0 else own / (own + enemy)


def rounds_what(data: RunData) -> str:
    """What the bot's rounds.jsonl holds: real-time rounds, or (bare folder) train-fast's in-process ones."""
    return "in-process train-fast" if data.kind == "train-fast" else "real-time"


def share_rounds(rows: Sequence[RoundLine]) -> list[ShareRound]:
    """The rounds that carry both scores (a truncated train-fast round has none), numbered in file order."""
    scored = [(r, own, enemy) for r in rows if (own := r.own) is not None and (enemy := r.enemy) is not None]
    return [
        ShareRound(i + 1, opponent_group(r.opponent), own, enemy, r.outcome == "won")
        for i, (r, own, enemy) in enumerate(scored)
    ]


def moving_average(values: Sequence[float], window: int) -> list[float]:
    """The mean of the last `window` values at each position (of all of them before the window is full)."""
    out: list[float] = []
    acc = 0.0
    for i, v in enumerate(values):
        acc += v
        if i >= window:
            acc -= values[i - window]
        out.append(acc / min(i + 1, window))
    return out


@dataclass(frozen=True)
class ShareBlock:
    """Rounds `first`..`last` (1-based, inclusive): how many, won, the mean of the per-round shares, and the
    pooled share sum(own) / sum(own + enemy) over them."""

    first: int
    last: int
    rounds: int
    wins: int
    mean_share: float
    pooled_share: float
    opponents: tuple[str, ...]


def share_block(rounds: Sequence[ShareRound]) -> ShareBlock:
    if not rounds:
        raise ValueError("a block of no rounds")
    return ShareBlock(
        first=rounds[0].index,
        last=rounds[-1].index,
        rounds=len(rounds),
        wins=sum(r.won for r in rounds),
        mean_share=sum(r.share for r in rounds) / len(rounds),
        pooled_share=round_share(
            sum(max(0.0, r.own) for r in rounds), sum(max(0.0, r.enemy) for r in rounds)
        ),
        opponents=tuple(dict.fromkeys(r.opponent for r in rounds)),
    )


def share_blocks(rounds: Sequence[ShareRound], size: int = SHARE_BLOCK) -> list[ShareBlock]:
    """Rounds 1-50, 51-100, ... (the last block may be shorter)."""
    return [share_block(rounds[i : i + size]) for i in range(0, len(rounds), size)]


def share_facts(rounds: Sequence[ShareRound], size: int = SHARE_BLOCK) -> list[tuple[str, str]]:
    """Rounds, wins, the mean per-round share over the first and the last `size` rounds and the change."""
    if not rounds:
        return []
    n = len(rounds)
    wins = sum(r.won for r in rounds)
    facts = [("rounds", str(n)), ("wins", f"{wins} ({wins / n:.1%})")]
    counts: dict[str, int] = {}
    for r in rounds:
        counts[r.opponent] = counts.get(r.opponent, 0) + 1
    facts.append(("opponents", ", ".join(f"{name} ({k})" for name, k in counts.items())))
    first = share_block(rounds[:size])
    facts.append((f"mean score share, rounds {first.first}-{first.last}", f"{first.mean_share:.3f}"))
    if n > size:
        last = share_block(rounds[-size:])
        facts.append((f"mean score share, rounds {last.first}-{last.last}", f"{last.mean_share:.3f}"))
        change = last.mean_share - first.mean_share
        facts.append((f"change, last {size} minus first {size}", f"{change:+.3f}"))
    facts.append(("mean score share, all rounds", f"{sum(r.share for r in rounds) / n:.3f}"))
    return facts


def share_by_opponent(
    rounds: Sequence[ShareRound], size: int = SHARE_BLOCK
) -> list[tuple[str, ShareBlock, ShareBlock]]:
    """Per opponent (first-appearance order): its first and its last `size` rounds as blocks."""
    mine: dict[str, list[ShareRound]] = {}
    for r in rounds:
        mine.setdefault(r.opponent, []).append(r)
    return [(name, share_block(rs[:size]), share_block(rs[-size:])) for name, rs in mine.items()]


# -- the league's opponent mix -------------------------------------------------------------------------------


@dataclass(frozen=True)
class LeagueMix:
    """The pool's probabilities at each x (chunk, or env steps), per opponent group (snapshots grouped,
    stacked last); the opponent drawn at x, when known; and where snapshots were taken."""

    x_label: str
    xs: list[float]
    shares: dict[str, list[float]]
    drawn: list[tuple[float, str]] = field(default_factory=list)
    snapshots: list[float] = field(default_factory=list)


def _mix(
    x_label: str,
    points: Sequence[tuple[float, dict[str, float]]],
    drawn: list[tuple[float, str]],
    snaps: list[float],
) -> LeagueMix | None:
    if not points:
        return None
    names: list[str] = []
    for _, probs in points:
        for name in probs:
            group = opponent_group(name)
            if group not in names:
                names.append(group)
    names.sort(key=lambda g: g.endswith("(own snapshots)"))  # stable: opponents first, snapshots on top
    shares: dict[str, list[float]] = {g: [] for g in names}
    for _, probs in points:
        total = sum(probs.values()) or 1.0
        grouped = dict.fromkeys(names, 0.0)
        for name, p in probs.items():
            grouped[opponent_group(name)] += p / total
        for g in names:
            shares[g].append(grouped[g])
    return LeagueMix(x_label, [x for x, _ in points], shares, drawn, snaps)


def league_draws(events: Sequence[CampaignEvent]) -> dict[int, tuple[CampaignEvent, dict[str, float]]]:
    """Chunk -> its first `league_draw` event with a probability table, and that table (a resumed chunk keeps
    the opponent its first draw logged), in chunk order."""
    first: dict[int, tuple[CampaignEvent, dict[str, float]]] = {}
    for ev in events:
        chunk = ev.chunk
        if ev.event == "league_draw" and chunk is not None and chunk not in first:
            probabilities = ev.probabilities()
            if probabilities is not None:
                first[chunk] = (ev, probabilities)
    return {c: first[c] for c in sorted(first)}


def campaign_league_mix(events: Sequence[CampaignEvent]) -> LeagueMix | None:
    """The campaign's `league_draw` events: per chunk the pool's probabilities and the opponent drawn;
    `snapshot` events' chunks. None without draws."""
    draws = league_draws(events)
    points = [(float(c), probabilities) for c, (_, probabilities) in draws.items()]
    drawn = [(float(c), opponent_group(ev.opponent)) for c, (ev, _) in draws.items() if ev.opponent]
    snaps = sorted({float(ev.chunk) for ev in events if ev.event == "snapshot" and ev.chunk is not None})
    return _mix("chunk", points, drawn, snaps)


def fast_league_mix(lines: Sequence[LeagueLine]) -> LeagueMix | None:
    """train-fast's league.jsonl: the pool's probabilities at each save, by env steps; snapshots' steps."""
    points = sorted(
        ((float(line.env_steps), line.pool) for line in lines if isinstance(line, LeaguePoolLine)),
        key=lambda point: point[0],
    )
    snaps = sorted({float(line.env_steps) for line in lines if isinstance(line, LeagueSnapshotLine)})
    return _mix("env steps", points, [], snaps)


# -- tables and facts ----------------------------------------------------------------------------------------


def latest_evals(evals: Sequence[EvalRecord]) -> list[EvalRecord]:
    """Each opponent's most recent eval, in first-appearance order."""
    last: dict[str, EvalRecord] = {}
    for rec in sorted(evals, key=lambda r: (r.chunk, r.time)):
        last[rec.opponent] = rec
    return [last[name] for name in eval_opponents(evals)]


def evals_at_chunk(evals: Sequence[EvalRecord], chunk: int) -> list[EvalRecord]:
    return [r for r in evals if r.chunk == chunk]


def best_chunk(data: RunData) -> int | None:
    """The chunk whose candidate became the global best last (campaign log, else the best_score mirror)."""
    promoted = [e.chunk for e in data.events if e.event == "promoted"]
    chunks = [c for c in promoted if c is not None]
    return chunks[-1] if chunks else data.best.chunk


@dataclass(frozen=True)
class Totals:
    rounds: int
    wins: int
    win_rate: float
    score_share: float  # mean over opponents


def totals(rows: Sequence[EvalRecord]) -> Totals | None:
    if not rows:
        return None
    rounds = sum(r.rounds for r in rows)
    wins = sum(r.wins for r in rows)
    return Totals(
        rounds, wins, wins / rounds if rounds else 0.0, sum(r.score_share for r in rows) / len(rows)
    )


def duration_text(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 120:
        return f"{seconds:.0f} s"
    minutes = seconds / 60
    if minutes < 120:
        return f"{minutes:.1f} min"
    return f"{int(minutes // 60)} h {int(minutes % 60):02d} min"


def run_facts(data: RunData, clock: ActiveClock) -> list[tuple[str, str]]:
    """(name, value) lines for the summary; only facts the folder actually holds."""
    facts: list[tuple[str, str]] = []
    starts = [e for e in data.events if e.event == "start"]
    name = next((e.campaign for e in starts if e.campaign is not None), None)
    if name:
        facts.append(("campaign", name))
    done = {e.chunk for e in data.events if e.event == "chunk_done" and e.chunk is not None}
    budget = next((e.budget for e in reversed(starts) if e.budget is not None), None)
    if done or budget is not None:
        facts.append(("chunks completed", f"{len(done)}" + (f" of {budget}" if budget is not None else "")))
    finished = [e for e in data.events if e.event == "finished"]
    if data.events:
        facts.append(("finished", "yes" if finished else "no (interrupted, failed or still running)"))
        facts.append(("sessions (starts and resumes)", str(len(starts))))
        retries = sum(1 for e in data.events if e.event == "chunk_failed")
        gave_up = sum(1 for e in data.events if e.event == "gave_up")
        facts.append(
            ("retried chunk/eval attempts", str(retries) + (f" (gave up {gave_up}x)" if gave_up else ""))
        )
        restarts = sum(1 for e in data.events if e.event == "server_restart")
        if restarts:
            facts.append(("server restarts", str(restarts)))
    facts.append(("active time", duration_text(clock.total_s)))
    if clock.span_s > clock.total_s + 1:
        facts.append(("wall-clock span (idle gaps included)", duration_text(clock.span_s)))
    trained = [e for e in data.events if e.event == "chunk_done"]
    rounds = sum(e.rounds or 0 for e in trained)
    wins = sum(e.wins or 0 for e in trained)
    if rounds:
        facts.append(("training rounds (completed chunks)", f"{rounds} ({wins / rounds:.1%} won)"))
    if data.pretrain_rounds:
        facts.append(("pretraining rounds (train-fast)", str(data.pretrain_rounds)))
    if data.metrics:
        last = data.metrics[-1]
        facts.append(("env steps", f"{last.env_steps:,}"))
        if last.updates is not None:
            facts.append(("updates", f"{last.updates:,}"))
        pre = pretrain_end_steps(data)
        if pre is not None:
            facts.append(("env steps from pretraining", f"{pre:,}"))
    if data.rounds and data.kind == "train-fast":
        facts.append(("rounds logged (train-fast, in-process)", str(len(data.rounds))))
    elif data.rounds:
        skipped = sum(r.skipped_turns or 0 for r in data.rounds)
        facts.append(("real-time rounds logged by the bot", str(len(data.rounds))))
        facts.append(("skipped turns (all real-time rounds)", str(skipped)))
        p99 = sorted(r.tick_to_intent_p99_ms for r in data.rounds if r.tick_to_intent_p99_ms is not None)
        if p99:
            facts.append(("tick-to-intent p99, median over rounds", f"{p99[len(p99) // 2]:.2f} ms"))
        worst = [r.tick_to_intent_max_ms for r in data.rounds if r.tick_to_intent_max_ms is not None]
        if worst:
            facts.append(("tick-to-intent max, worst round", f"{max(worst):.2f} ms"))
        facts.append(("dropped transitions", str(sum(r.dropped_transitions or 0 for r in data.rounds))))
    facts += league_facts(data)
    score, kind = data.best.score, data.best.kind
    if score is None:  # no best_score mirror nor readable best.zip: the campaign log's last word on the best
        logged = [e.best for e in data.events if e.event in ("eval_done", "finished") and e.best is not None]
        score = logged[-1] if logged else None
    if score is not None:
        chunk = best_chunk(data)
        where = f" at chunk {chunk}" if chunk is not None else ""
        facts.append(("best composite", f"{score:.4f}{where} ({kind or 'kind not recorded'})"))
    if data.best.env_steps is not None:
        facts.append(("best checkpoint env steps", f"{data.best.env_steps:,}"))
    if data.round_counter is not None:
        facts.append(("bot round counter", str(data.round_counter)))
    return facts


def league_facts(data: RunData) -> list[tuple[str, str]]:
    """How often the league drew each opponent (campaign), and the fast league's saves and snapshots."""
    facts: list[tuple[str, str]] = []
    draws = league_draws(data.events)
    if draws:
        counts: dict[str, int] = {}
        for ev, _ in draws.values():
            name = ev.opponent or "(not logged)"
            counts[name] = counts.get(name, 0) + 1
        drawn = ", ".join(f"{name} {k}x" for name, k in sorted(counts.items(), key=lambda kv: -kv[1]))
        facts.append(("league draws (chunks)", f"{len(draws)}: {drawn}"))
        snapshots = {e.name for e in data.events if e.event == "snapshot"}
        if snapshots:
            facts.append(("league snapshots taken", str(len(snapshots))))
    fast = fast_league_mix(data.fast_league)
    if fast is not None:
        facts.append(("fast league pool lines (train-fast saves)", str(len(fast.xs))))
        if fast.snapshots:
            facts.append(("fast league snapshots taken", str(len(fast.snapshots))))
    return facts
