"""One pair of a tournament: who plays whom (`pairings`, `pair_seed`), the pair's game on its own embedded
arena (`play_pair`, from a `PairTask`) and its result (`PairRecord`, one line of `pairs.jsonl`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from sacbot.arena.core_types import GameRecorder
from sacbot.errors import UserError


class TournamentModel(BaseModel):
    """The tournament's records: no unknown fields, frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Bot(TournamentModel):
    """One bot directory: `label` (the folder's name, unique in a tournament) and the name it announces."""

    label: str
    name: str
    dir: str


class PairRecord(TournamentModel):
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


class PairTask(TournamentModel):
    """What a worker needs to play one pair."""

    index: int
    a: Bot
    b: Bot
    rounds: int
    game_type: str
    seed: int | None
    connect_timeout: float
    log_dir: str


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


class PairRecorder(GameRecorder, Protocol):
    """Records one game (`sacbot.viewer.recording.game_recorder`); closed after it."""

    def close(self) -> None: ...


# label ("A-vs-B") -> a recorder of that game; picklable, as game processes are spawned
RecorderFactory = Callable[[str], PairRecorder]


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
