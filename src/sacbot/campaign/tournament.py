"""`sacbot tournament`: a round-robin of bot directories on the embedded arena, with ratings and a heatmap.

Every pair of bots plays one game of `rounds` rounds, each game on its own embedded arena (a free port, random
secrets) with its own bot processes, through `sacbot.arena.battle.run_battle` as `sacbot arena run` does.
Games run in parallel worker processes (`workers`; 1 plays them one after another in this process).

The out folder holds:
- `tournament.json`: what the tournament is (`TournamentSpec`: bots, rounds, game type, seed); a folder that
  holds another tournament is refused (`UserError`, exit code 2);
- `pairs.jsonl`: one `PairRecord` line per finished pair, appended (and fsynced) as each game ends; a rerun
  plays only the pairs missing there (resume);
- `heatmap.png`: the win-rate matrix (row bot against column bot);
- `results.json`: the whole result (`TournamentResult`, what `--json` prints);
- `logs/<A>-vs-<B>/`: the bots' output of the latest game of each pair.

Ratings come from OpenSkill (Plackett-Luce, its default parameters): every round of every pair is one match
(the winner first; a round nobody won is a draw), fed in a fixed order (pairs by their names, rounds in the
order played), so the same results always give the same ratings, whatever order the games finished in.

Pure parts (pairing, records, aggregation, the rating step, the picture) are functions here; `run_tournament`
ties them to the arena.
"""

from __future__ import annotations

import io
import json
import math
import multiprocessing
import os
import queue
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, ValidationError

from sacbot.arena.core_types import GameRecorder
from sacbot.errors import UserError

DEFAULT_OUT = Path("runs/tournament")
SPEC_FILE = "tournament.json"
PAIRS_FILE = "pairs.jsonl"
HEATMAP_FILE = "heatmap.png"
RESULTS_FILE = "results.json"
MAX_AUTO_WORKERS = 16
STOP_WAIT_S = 15.0  # how long a stopped game's process may take: its booter gives the bots up to 10 s to exit


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Bot(_Model):
    """One bot directory: `label` (the folder's name, unique in a tournament) and the name it announces."""

    label: str
    name: str
    dir: str


class TournamentSpec(_Model):
    """What makes two runs the same tournament: the bots (labels, sorted), rounds, game type and seed."""

    format: Literal["sacbot-tournament"] = "sacbot-tournament"
    version: Literal[1] = 1
    bots: tuple[str, ...]
    rounds: int
    game_type: str
    seed: int | None = None

    def describe(self) -> str:
        seed = "" if self.seed is None else f", seed {self.seed}"
        return f"bots {', '.join(self.bots)}; {self.rounds} rounds; {self.game_type}{seed}"


class PairRecord(_Model):
    """One finished pair: a line of `pairs.jsonl`. `a` < `b` (labels); `round_winners` holds, per round in the
    order played, the label of the bot that won it, or None when nobody did (both died in the same turn)."""

    a: str
    b: str
    name_a: str
    name_b: str
    rounds: int
    game_type: str
    wins_a: int
    wins_b: int
    draws: int
    score_a: float
    score_b: float
    share_a: float
    share_b: float
    round_winners: tuple[str | None, ...]
    seed: int | None = None
    duration_s: float = 0.0
    time: float = 0.0

    @property
    def key(self) -> tuple[str, str]:
        return (self.a, self.b)

    def wins_of(self, label: str) -> int:
        return self.wins_a if label == self.a else self.wins_b

    def share_of(self, label: str) -> float:
        return self.share_a if label == self.a else self.share_b


class Rating(_Model):
    """A bot's OpenSkill rating (Plackett-Luce); ranked by `ordinal` = mu - 3 sigma (the conservative one)."""

    label: str
    mu: float
    sigma: float
    ordinal: float
    rounds: int
    wins: int
    draws: int
    losses: int


class PairTask(_Model):
    """What a worker needs to play one pair."""

    index: int
    a: Bot
    b: Bot
    rounds: int
    game_type: str
    seed: int | None
    connect_timeout: float
    log_dir: str


class TournamentResult(_Model):
    """The whole result: what `results.json` holds and `--json` prints."""

    spec: TournamentSpec
    bots: tuple[Bot, ...]
    pairs: tuple[PairRecord, ...]
    ratings: tuple[Rating, ...]
    win_rate: dict[str, dict[str, float | None]]
    score_share: dict[str, dict[str, float | None]]
    played: tuple[tuple[str, str], ...]
    resumed: int
    paths: dict[str, str]


# ---- Pure parts --------------------------------------------------------------------------------------------


def check_settings(rounds: int, workers: int | None, connect_timeout: float = 30.0) -> None:
    if rounds < 1:
        raise UserError(f"--rounds must be at least 1 (got {rounds})", 2)
    if workers is not None and workers < 1:
        raise UserError(f"--workers must be at least 1 (got {workers})", 2)
    if not connect_timeout > 0:
        raise UserError("--connect-timeout must be positive", 2)


def resolve_bots(dirs: Sequence[str | os.PathLike[str]]) -> list[Bot]:
    """Read every bot directory (its JSON and its launcher) before anything starts; sorted by label."""
    from sacbot.arena.booter import launch_command, read_bot_dir

    if len(dirs) < 2:
        raise UserError(f"a tournament needs at least 2 bot directories (got {len(dirs)})", 2)
    bots: list[Bot] = []
    for d in dirs:
        entry = read_bot_dir(d)
        if entry.team_members:
            raise UserError(f"{d}: team directories cannot play in a tournament", 2)
        launch_command(entry)  # no launcher: one clear line now, not a failed game later
        bots.append(Bot(label=entry.dir.name, name=entry.name, dir=str(entry.dir)))
    for what in ("label", "name"):
        seen: dict[str, str] = {}
        for bot in bots:
            value = getattr(bot, what)
            if value in seen:
                if seen[value] == bot.dir:
                    raise UserError(f"bot directory {bot.dir} is named twice", 2)
                kind = "folder name" if what == "label" else "bot name"
                raise UserError(f"{seen[value]} and {bot.dir} have the same {kind} {value!r}", 2)
            seen[value] = bot.dir
    return sorted(bots, key=lambda b: b.label)


def pairings(labels: Iterable[str]) -> list[tuple[str, str]]:
    """Every unordered pair once, as (a, b) with a < b, sorted: the canonical order of a tournament."""
    ordered = sorted(set(labels))
    return [(a, b) for i, a in enumerate(ordered) for b in ordered[i + 1 :]]


def pair_seed(seed: int | None, index: int) -> int | None:
    return None if seed is None else seed + index


def round_winners(rounds_results: Sequence[Mapping[str, float]], a: str, b: str) -> list[str | None]:
    """Per round, the winner's key from each round's accumulated last-survivor bonus (`{key: bonus}` after
    each round): the bot whose bonus rose survived the round; None when neither did."""
    out: list[str | None] = []
    before = {a: 0.0, b: 0.0}
    for row in rounds_results:
        rose = [k for k in (a, b) if row.get(k, 0.0) > before[k]]
        out.append(rose[0] if len(rose) == 1 else None)
        before = {k: row.get(k, before[k]) for k in (a, b)}
    return out


def make_record(
    a: Bot,
    b: Bot,
    game_type: str,
    winners: Sequence[str | None],
    score_a: float,
    score_b: float,
    seed: int | None = None,
    duration_s: float = 0.0,
    finished: float | None = None,
) -> PairRecord:
    total = score_a + score_b
    share_a = score_a / total if total > 0 else 0.5  # nobody scored: even
    return PairRecord(
        a=a.label,
        b=b.label,
        name_a=a.name,
        name_b=b.name,
        rounds=len(winners),
        game_type=game_type,
        wins_a=sum(1 for w in winners if w == a.label),
        wins_b=sum(1 for w in winners if w == b.label),
        draws=sum(1 for w in winners if w is None),
        score_a=score_a,
        score_b=score_b,
        share_a=share_a,
        share_b=1.0 - share_a,
        round_winners=tuple(winners),
        seed=seed,
        duration_s=round(duration_s, 3),
        time=time.time() if finished is None else finished,
    )


def matrices(
    labels: Sequence[str], records: Iterable[PairRecord]
) -> tuple[dict[str, dict[str, float | None]], dict[str, dict[str, float | None]]]:
    """(win rate, score share) of the row bot against the column bot; None on the diagonal and for pairs not
    played."""
    win: dict[str, dict[str, float | None]] = {r: {c: None for c in labels} for r in labels}
    share: dict[str, dict[str, float | None]] = {r: {c: None for c in labels} for r in labels}
    for rec in records:
        for me, other in ((rec.a, rec.b), (rec.b, rec.a)):
            if me in win and other in win:
                win[me][other] = rec.wins_of(me) / rec.rounds if rec.rounds else 0.0
                share[me][other] = rec.share_of(me)
    return win, share


def rate(labels: Sequence[str], records: Iterable[PairRecord]) -> list[Rating]:
    """OpenSkill ratings from every round, fed in the canonical order; best first (ordinal, then label)."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    current = {label: model.rating(name=label) for label in sorted(labels)}
    tally = {label: [0, 0, 0, 0] for label in current}  # rounds, wins, draws, losses
    for rec in sorted(records, key=lambda r: r.key):
        if rec.a not in current or rec.b not in current:
            continue
        for winner in rec.round_winners:
            # Rank 1 first; equal ranks are a draw.
            ranks = [1.0, 1.0] if winner is None else [1.0, 2.0] if winner == rec.a else [2.0, 1.0]
            (new_a,), (new_b,) = model.rate([[current[rec.a]], [current[rec.b]]], ranks=ranks)
            current[rec.a], current[rec.b] = new_a, new_b
            for me in (rec.a, rec.b):
                t = tally[me]
                t[0] += 1
                t[1 if winner == me else 2 if winner is None else 3] += 1
    ratings = [
        Rating(
            label=label,
            mu=r.mu,
            sigma=r.sigma,
            ordinal=r.ordinal(),
            rounds=tally[label][0],
            wins=tally[label][1],
            draws=tally[label][2],
            losses=tally[label][3],
        )
        for label, r in current.items()
    ]
    return sorted(ratings, key=lambda r: (-r.ordinal, r.label))


def heatmap_png(
    order: Sequence[str],
    win: Mapping[str, Mapping[str, float | None]],
    title: str,
    share: Mapping[str, Mapping[str, float | None]] | None = None,
) -> bytes:
    """The win-rate matrix as a PNG (Agg canvas, no pyplot state): the row bot's win rate against the column
    bot, coloured, with the row bot's score share below each figure when `share` is given."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    n = len(order)
    values = [[math.nan if win[r][c] is None else float(win[r][c] or 0.0) for c in order] for r in order]
    side = max(4.0, 1.0 + 0.75 * n)
    fig = Figure(figsize=(side + 1.4, side), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    image = ax.imshow(values, cmap="RdYlGn", vmin=0.0, vmax=1.0)
    for i in range(n):
        for j in range(n):
            v = values[i][j]
            text = "-" if math.isnan(v) else f"{v:.0%}"
            cell = None if share is None else share[order[i]][order[j]]
            if cell is not None:
                text += f"\n{cell:.2f}"
            ax.text(j, i, text, ha="center", va="center", fontsize=9, color="black")
    ax.set_xticks(range(n), labels=list(order), rotation=45, ha="right")
    ax.set_yticks(range(n), labels=list(order))
    ax.set_xlabel("opponent (column)")
    ax.set_ylabel("bot (row)")
    ax.set_title(title, fontsize=10)
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04, label="row bot's win rate")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


# ---- The out folder ----------------------------------------------------------------------------------------


def _read_lines(path: Path) -> tuple[list[PairRecord], bool]:
    """Every valid record, and whether some line was torn or foreign (to be dropped by a rewrite)."""
    from sacbot import jsonl
    from sacbot.records import parse_rows

    lines = jsonl.read(path)
    records, refused = parse_rows(PairRecord.model_validate, lines.rows)
    return records, bool(lines.malformed or refused or not lines.complete)


def open_out_dir(out: Path, spec: TournamentSpec) -> dict[tuple[str, str], PairRecord]:
    """Claim `out` for `spec` (refusing another tournament's folder) and return its finished pairs."""
    from sacbot.checkpoint.atomic import atomic_write_json, atomic_write_text

    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out} is not a folder", 2)
    spec_path, pairs_path = out / SPEC_FILE, out / PAIRS_FILE
    refuse = (
        f"{out} holds another tournament ({{}}), not this one ({spec.describe()}): "
        "choose another --out or remove that folder"
    )
    if spec_path.exists():
        try:
            old = TournamentSpec.model_validate(json.loads(spec_path.read_text(encoding="utf-8")))
        except (OSError, ValueError, ValidationError):
            raise UserError(f"{spec_path} is not a sacbot tournament file; choose another --out", 2) from None
        if old != spec:
            raise UserError(refuse.format(old.describe()), 2)
    records, bad = _read_lines(pairs_path)
    wanted = set(pairings(spec.bots))
    for rec in records:
        if rec.key not in wanted or rec.rounds != spec.rounds or rec.game_type != spec.game_type:
            raise UserError(
                refuse.format(f"{PAIRS_FILE} has {rec.a} vs {rec.b}, {rec.rounds} rounds, {rec.game_type}"), 2
            )
    if bad:  # a line torn by a kill: keep the good lines, so the next append starts on a fresh line
        atomic_write_text(pairs_path, "".join(r.model_dump_json() + "\n" for r in records))
    if not spec_path.exists():
        atomic_write_json(spec_path, spec.model_dump(mode="json"))
    finished: dict[tuple[str, str], PairRecord] = {}
    for rec in records:
        finished.setdefault(rec.key, rec)
    return finished


def append_record(out: Path, record: PairRecord) -> None:
    from sacbot import jsonl

    jsonl.append(out / PAIRS_FILE, record.model_dump(mode="json"), allow_nan=False)


# ---- Playing -----------------------------------------------------------------------------------------------


class Reporter(Protocol):
    """Progress callbacks of `run_tournament`, all on the calling thread: the CLI draws a progress bar."""

    def start(self, pending: Sequence[tuple[str, str]], rounds: int, workers: int) -> None: ...

    def round_done(self, pair: tuple[str, str], round_number: int) -> None: ...

    def pair_done(self, record: PairRecord) -> None: ...

    def pair_failed(self, pair: tuple[str, str], attempt: int, reason: str) -> None: ...


class SilentReporter:
    """A `Reporter` that says nothing."""

    def start(self, pending: Sequence[tuple[str, str]], rounds: int, workers: int) -> None:
        pass

    def round_done(self, pair: tuple[str, str], round_number: int) -> None:
        pass

    def pair_done(self, record: PairRecord) -> None:
        pass

    def pair_failed(self, pair: tuple[str, str], attempt: int, reason: str) -> None:
        pass


class PairRecorder(GameRecorder, Protocol):
    """Records one game (`sacbot.viewer.recording.game_recorder`); closed after it."""

    def close(self) -> None: ...


# label ("A-vs-B") -> a recorder of that game; picklable, as game processes are spawned
RecorderFactory = Callable[[str], PairRecorder]


# Plays every task (each retried `retries` times), handing each record to `done` as it comes and raising one
# UserError for the pairs that failed every attempt: `sacbot.distributed.games.play_pairs_ray`.
PlayAll = Callable[
    [Sequence[PairTask], int, "Reporter", Callable[[PairRecord], None], RecorderFactory | None], None
]


def play_pair(
    task: PairTask,
    on_round: Callable[[int], None] | None = None,
    recorder_factory: RecorderFactory | None = None,
) -> PairRecord:
    """Play one game between the two bots on its own embedded arena; raises `UserError` when it fails.
    `recorder_factory` records it."""
    from sacbot.arena.battle import run_battle
    from sacbot.engine import game_setup_for
    from sacbot.protocol import Message, RoundEndedEventForObserver

    a, b = task.a, task.b
    label_of = {a.name: a.label, b.name: b.label}
    bonus_rows: list[dict[str, float]] = []

    def on_event(msg: Message) -> None:
        if isinstance(msg, RoundEndedEventForObserver):
            bonus_rows.append(
                {label_of[r.name]: float(r.last_survivor_bonus) for r in msg.results if r.name in label_of}
            )
            if on_round is not None:
                on_round(msg.round_number)

    setup = game_setup_for(task.game_type, number_of_rounds=task.rounds)
    log_dir = Path(task.log_dir)
    log_dir.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    recorder = recorder_factory(f"{a.label}-vs-{b.label}") if recorder_factory is not None else None
    try:
        result = run_battle(
            [a.dir, b.dir],
            setup,
            connect_timeout=task.connect_timeout,
            seed=task.seed,
            log_dir=log_dir,
            on_event=on_event,
            recorder=recorder,
        )
    finally:
        if recorder is not None:
            recorder.close()
    totals = {label_of[r.name]: float(r.total_score) for r in result.results if r.name in label_of}
    winners = round_winners(bonus_rows, a.label, b.label)
    if len(winners) != task.rounds:
        raise UserError(f"{a.label} vs {b.label}: saw {len(winners)} of {task.rounds} rounds end")
    return make_record(
        a,
        b,
        task.game_type,
        winners,
        totals.get(a.label, 0.0),
        totals.get(b.label, 0.0),
        seed=task.seed,
        duration_s=time.monotonic() - start,
    )


def default_workers(pending: int) -> int:
    """What the machine has: one game per CPU this process may use, at most MAX_AUTO_WORKERS and the pairs."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, MAX_AUTO_WORKERS, pending))


def run_tournament(
    dirs: Sequence[str | os.PathLike[str]],
    rounds: int,
    game_type: str = "1v1",
    out: str | os.PathLike[str] = DEFAULT_OUT,
    *,
    workers: int | None = None,
    seed: int | None = None,
    connect_timeout: float = 30.0,
    retries: int = 1,
    reporter: Reporter | None = None,
    recorder_factory: RecorderFactory | None = None,
    play_all: PlayAll | None = None,
) -> TournamentResult:
    """Play every pair not yet in `out`'s `pairs.jsonl`, then rate, draw and write the results;
    `recorder_factory` records each game (`sacbot tournament --record`)."""
    from sacbot.checkpoint.atomic import atomic_write_bytes, atomic_write_json
    from sacbot.engine import game_setup_for

    check_settings(rounds, workers, connect_timeout)
    game_setup_for(game_type, number_of_rounds=rounds)  # an unknown game type: one line before anything
    bots = resolve_bots(dirs)
    by_label = {b.label: b for b in bots}
    spec = TournamentSpec(bots=tuple(by_label), rounds=rounds, game_type=game_type, seed=seed)
    out_dir = Path(out)
    finished = open_out_dir(out_dir, spec)
    all_pairs = pairings(spec.bots)
    pending = [p for p in all_pairs if p not in finished]
    resumed = len(finished)
    rep: Reporter = reporter or SilentReporter()
    tasks = [
        PairTask(
            index=all_pairs.index(p),
            a=by_label[p[0]],
            b=by_label[p[1]],
            rounds=rounds,
            game_type=game_type,
            seed=pair_seed(seed, all_pairs.index(p)),
            connect_timeout=connect_timeout,
            log_dir=str(out_dir / "logs" / f"{p[0]}-vs-{p[1]}"),
        )
        for p in pending
    ]
    count = min(workers or default_workers(len(tasks)), max(1, len(tasks)))
    rep.start(pending, rounds, count)
    played: list[tuple[str, str]] = []

    def done(record: PairRecord) -> None:
        append_record(out_dir, record)
        finished[record.key] = record
        played.append(record.key)
        rep.pair_done(record)

    if tasks:
        if play_all is not None:  # elsewhere, e.g. each game a Ray task (`sacbot tournament --ray`)
            play_all(tasks, retries, rep, done, recorder_factory)
        elif count == 1:
            _play_here(tasks, retries, rep, done, recorder_factory)
        else:
            _play_pool(tasks, count, retries, rep, done, recorder_factory)

    records = [finished[p] for p in all_pairs]
    ratings = rate(spec.bots, records)
    win, share = matrices(spec.bots, records)
    order = [r.label for r in ratings]
    paths = {
        "out": str(out_dir),
        "spec": str(out_dir / SPEC_FILE),
        "pairs": str(out_dir / PAIRS_FILE),
        "heatmap": str(out_dir / HEATMAP_FILE),
        "results": str(out_dir / RESULTS_FILE),
    }
    title = f"Win rate (score share below), row bot against column bot\n{game_type}, {rounds} rounds a pair"
    atomic_write_bytes(out_dir / HEATMAP_FILE, heatmap_png(order, win, title, share))
    result = TournamentResult(
        spec=spec,
        bots=tuple(bots),
        pairs=tuple(records),
        ratings=tuple(ratings),
        win_rate=win,
        score_share=share,
        played=tuple(played),
        resumed=resumed,
        paths=paths,
    )
    atomic_write_json(out_dir / RESULTS_FILE, result.model_dump(mode="json"))
    return result


def _failed(failures: Sequence[tuple[PairTask, str]]) -> UserError:
    """One line for the pairs that failed every attempt (the other pairs were played and kept)."""
    task, reason = failures[0]
    more = f" (and {len(failures) - 1} more pair(s))" if len(failures) > 1 else ""
    return UserError(
        f"{task.a.label} vs {task.b.label} failed{more}: {reason} (bot output in {task.log_dir}; "
        "finished pairs are kept: run the same command again to resume)"
    )


def _play_here(
    tasks: Sequence[PairTask],
    retries: int,
    rep: Reporter,
    done: Callable[[PairRecord], None],
    recorder_factory: RecorderFactory | None = None,
) -> None:
    def rounds_of(pair: tuple[str, str]) -> Callable[[int], None]:
        return lambda n: rep.round_done(pair, n)

    failures: list[tuple[PairTask, str]] = []
    for task in tasks:
        pair = (task.a.label, task.b.label)
        for attempt in range(1, retries + 2):
            try:
                record = play_pair(task, rounds_of(pair), recorder_factory)
            except Exception as exc:  # noqa: BLE001 - any failure is one line, as from a game process
                reason = str(exc) or type(exc).__name__
                rep.pair_failed(pair, attempt, reason)
                if attempt > retries:
                    failures.append((task, reason))
                continue
            done(record)
            break
    if failures:
        raise _failed(failures)


def _play_pool(
    tasks: Sequence[PairTask],
    count: int,
    retries: int,
    rep: Reporter,
    done: Callable[[PairRecord], None],
    recorder_factory: RecorderFactory | None = None,
) -> None:
    """Up to `count` games at once, each in its own process (spawned: a fresh interpreter, whatever threads
    this one runs), which reports its rounds and its result on one queue."""
    ctx = multiprocessing.get_context("spawn")
    events = ctx.Queue()
    todo = deque(tasks)
    attempts = {(t.a.label, t.b.label): 0 for t in tasks}
    running: dict[tuple[str, str], tuple[Any, PairTask]] = {}
    answers: dict[tuple[str, str], tuple[str, Any]] = {}
    failures: list[tuple[PairTask, str]] = []
    try:
        while running or todo:
            while todo and len(running) < count:
                task = todo.popleft()
                pair = (task.a.label, task.b.label)
                attempts[pair] += 1
                answers.pop(pair, None)
                proc = ctx.Process(
                    target=_game_process,
                    args=(task, events, recorder_factory),
                    name=f"sacbot-{pair[0]}-vs-{pair[1]}",
                )
                proc.daemon = True
                proc.start()
                running[pair] = (proc, task)
            _drain(events, rep, answers, timeout=0.2)
            for pair, (proc, task) in list(running.items()):
                if proc.is_alive():
                    continue
                proc.join()
                # Its last message was flushed to the pipe before it exited: read what is there.
                _drain(events, rep, answers, timeout=0.0)
                del running[pair]
                kind, payload = answers.pop(pair, ("failed", f"its process exited with code {proc.exitcode}"))
                if kind == "done":
                    done(PairRecord.model_validate(payload))
                    continue
                rep.pair_failed(pair, attempts[pair], str(payload))
                if attempts[pair] <= retries:
                    todo.append(task)  # again, after the others: a bot's trouble may pass
                else:
                    failures.append((task, str(payload)))
    except BaseException:
        # Ctrl-C reached the games too (one process group); SIGTERM reaches them here. Each one unwinds
        # through its booter, which stops that game's bot processes.
        for proc, _ in running.values():
            proc.terminate()
        for proc, _ in running.values():
            proc.join(STOP_WAIT_S)
            if proc.is_alive():
                proc.kill()
                proc.join(1.0)
        raise
    finally:
        events.close()
        events.join_thread()
    if failures:
        raise _failed(sorted(failures, key=lambda f: f[0].index))


def _game_process(task: PairTask, events: Any, recorder_factory: RecorderFactory | None = None) -> None:
    """A game process: play the pair; put ("round" | "done" | "failed", a, b, payload) messages."""
    import signal

    signal.signal(signal.SIGTERM, _stop_once)
    signal.signal(signal.SIGINT, _stop_once)
    a, b = task.a.label, task.b.label
    try:
        record = play_pair(task, lambda n: events.put(("round", a, b, n)), recorder_factory)
    except KeyboardInterrupt:
        return  # stopped: the booter has stopped the bots; nothing to report
    except Exception as exc:  # noqa: BLE001 - any failure is one line for the parent
        events.put(("failed", a, b, str(exc) or type(exc).__name__))
        return
    events.put(("done", a, b, record.model_dump(mode="json")))


def _stop_once(signum: int, frame: Any) -> None:
    """Unwind like Ctrl-C, once: a second signal must not cut the booter's clean-up short."""
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise KeyboardInterrupt


def _drain(
    events: Any, rep: Reporter, answers: dict[tuple[str, str], tuple[str, Any]], timeout: float
) -> None:
    """Hand rounds to the reporter and keep each game's answer; wait up to `timeout` for the first message."""
    wait_s: float | None = timeout
    while True:
        try:
            kind, a, b, payload = events.get(timeout=wait_s) if wait_s else events.get_nowait()
        except queue.Empty:
            return
        wait_s = None
        if kind == "round":
            rep.round_done((a, b), int(payload))
        else:
            answers[(a, b)] = (kind, payload)
