"""Opponent sampling: fixed weights, and prioritised fictitious self-play (PFSP) over a league pool.

The weighted sampler: the opponent of chunk k depends only on (seed, k). That makes a resumed or retried chunk
play the same opponent it would have played the first time.

PFSP: each opponent's weight is its base weight times f(win rate), never below `floor`, on one of
AlphaStar's two curves. "hard" (the default): f = (1 - win rate) ** power, so the bot meets most often the
opponents it loses to, and never stops meeting one it beats (the floor). "variance":
f = (4 win rate (1 - win rate)) ** power, highest for the opponents it beats half the time, so the games go
where its rounds are neither all won nor all lost (with power 1 AlphaStar's x(1 - x), scaled to peak at 1 so
that the floor means the same). The win rate is taken over the most recent `window` rounds against that
opponent and smoothed as (wins + 0.5) / (rounds + 1): an opponent not yet played counts as 0.5.

Revisits (`pfsp_revisit` N > 0): an entry none of whose rounds is among the run's last N rounds (all
opponents) draws at factor 1, whatever its recorded win rate. Without it an opponent the bot once beat keeps
its old all-win record, PFSP keeps it at the floor, and, drawn so rarely, it is never met again to correct
that record: the bot can forget how to beat it unseen. With it every entry is met again within about N
rounds, and its fresh rounds then set its weight.
Pure functions of their inputs: the same pool, results and (seed, key) draw the same opponent.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Sampling = Literal["weights", "pfsp"]
PfspCurve = Literal["hard", "variance"]


class LeagueConfig(BaseModel):
    """How opponents are drawn, and frozen snapshots of the learner in the pool (the campaign's `[league]`
    table, `[pretrain.league]`, and `sacbot train-fast --sampling ...`).

    The `[league]` table (`snapshot_every` counts completed chunks) and `[pretrain.league]` (env steps).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)  # a typo in a campaign file is an error

    sampling: Sampling = "weights"
    snapshot_every: int = Field(default=0, ge=0, description="0 = no snapshots")
    snapshot_cap: int = Field(default=3, ge=1, description="snapshots kept in the pool, oldest out")
    snapshot_weight: float = Field(default=1.0, ge=0.0, allow_inf_nan=False)  # all snapshots together
    pfsp_curve: PfspCurve = "hard"  # hard: (1 - win rate) ** power; variance: (4 wr (1 - wr)) ** power
    pfsp_power: float = Field(default=2.0, ge=0.0, allow_inf_nan=False)  # the curve's exponent
    pfsp_floor: float = Field(default=0.05, gt=0.0, le=1.0, allow_inf_nan=False)  # f never below it
    pfsp_window: int = Field(default=30, ge=1, description="recent rounds per opponent behind its win rate")
    pfsp_revisit: int = Field(default=0, ge=0, description="rounds; unmet that long: factor 1")

    @model_validator(mode="after")
    def _snapshots_weigh(self) -> LeagueConfig:
        if self.snapshot_every > 0 and not self.snapshot_weight > 0:
            raise ValueError("snapshot_weight: must be > 0 when snapshot_every > 0")
        return self


class OpponentSampler:
    def __init__(self, weights: Mapping[str, float], seed: int) -> None:
        pool = [(name, float(w)) for name, w in weights.items() if w > 0]
        if not pool:
            raise ValueError("the opponent pool needs at least one positive weight")
        self._names = [name for name, _ in pool]
        self._weights = [w for _, w in pool]
        self._seed = seed

    def sample(self, chunk: int) -> str:
        return draw(self._names, self._weights, f"sacbot-campaign:{self._seed}:{chunk}")


def draw(names: Sequence[str], weights: Sequence[float], key: str) -> str:
    """One name drawn by weight from a generator seeded with `key` (a string seed is hashed
    deterministically, sha512, by random.Random, unlike a tuple)."""
    rng = random.Random(key)
    return rng.choices(list(names), weights=list(weights), k=1)[0]


@dataclass(frozen=True)
class Record:
    """Rounds played against one opponent, and how many of them were won (a chunk, an eval, one round)."""

    opponent: str
    rounds: int
    wins: float


def recent_results(records: Iterable[Record], window: int) -> dict[str, tuple[float, int]]:
    """Per opponent (wins, rounds) over its most recent `window` rounds; `records` oldest first.

    A record that straddles the window's edge counts with the share of its rounds that fits (its wins scaled
    alike), so every opponent's figure covers at most `window` rounds.
    """
    if window < 1:
        raise ValueError("window must be at least 1")
    out: dict[str, tuple[float, int]] = {}
    for rec in reversed(list(records)):
        if rec.rounds <= 0:
            continue
        wins, rounds = out.get(rec.opponent, (0.0, 0))
        room = window - rounds
        if room <= 0:
            continue
        take = min(room, rec.rounds)
        out[rec.opponent] = (wins + rec.wins * take / rec.rounds, rounds + take)
    return out


class RoundsSince:
    """How many rounds (against any opponent) the run has played since each opponent's last round: what
    `pfsp_revisit` reads. Fed oldest first; an opponent never met counts every round played so far."""

    def __init__(self) -> None:
        self.total = 0
        self.last: dict[str, int] = {}  # opponent -> `total` just after its latest round

    def add(self, opponent: str, rounds: int) -> None:
        if rounds > 0:
            self.total += rounds
            self.last[opponent] = self.total

    def since(self, opponent: str) -> int:
        return self.total - self.last.get(opponent, 0)

    def stale(self, names: Iterable[str], revisit: int) -> list[str]:
        """The names unmet for at least `revisit` rounds (none when `revisit` is 0), in the given order."""
        return [n for n in names if self.since(n) >= revisit] if revisit > 0 else []


def rounds_since(records: Iterable[Record]) -> RoundsSince:
    """`RoundsSince` over `records`, oldest first."""
    tracker = RoundsSince()
    for rec in records:
        tracker.add(rec.opponent, rec.rounds)
    return tracker


def smoothed_win_rate(wins: float, rounds: int) -> float:
    """(wins + 0.5) / (rounds + 1): 0.5 before any round, then close to wins / rounds."""
    return (wins + 0.5) / (rounds + 1)


def pfsp_factor(win_rate: float, power: float, floor: float, curve: PfspCurve = "hard") -> float:
    """AlphaStar's hard weighting (1 - win rate) ** power, or its variance weighting scaled to peak at 1,
    (4 win rate (1 - win rate)) ** power; never below `floor` (> 0)."""
    p = min(max(win_rate, 0.0), 1.0)
    base = 1.0 - p if curve == "hard" else 4.0 * p * (1.0 - p)
    return max(floor, base**power)


@dataclass(frozen=True)
class LeagueDraw:
    """The weights one draw used, and its outcome (what the logs record per chunk or game)."""

    opponent: str
    weights: dict[str, float]  # entry -> unnormalised weight, in pool order
    win_rates: dict[str, float]  # entry -> the smoothed win rate PFSP used (every entry, also in "weights")
    rounds: dict[str, int]  # entry -> rounds behind its win rate

    @property
    def probabilities(self) -> dict[str, float]:
        total = sum(self.weights.values())
        return {name: w / total for name, w in self.weights.items()}


def league_weights(
    base: Mapping[str, float],
    results: Mapping[str, tuple[float, int]],
    sampling: Sampling,
    power: float = 2.0,
    floor: float = 0.05,
    curve: PfspCurve = "hard",
    stale: Collection[str] = (),
) -> tuple[dict[str, float], dict[str, float], dict[str, int]]:
    """(weights, win rates, rounds) per entry with a positive base weight, in `base`'s order.

    "weights" keeps the base weights as they are; "pfsp" multiplies each by `pfsp_factor` of its win rate
    on `curve`, or by 1 for the entries in `stale` (unmet for `pfsp_revisit` rounds).
    `results` is keyed like `base` (entries missing from it have not been played).
    """
    if not floor > 0:
        raise ValueError("the PFSP floor must be > 0")
    weights: dict[str, float] = {}
    rates: dict[str, float] = {}
    counts: dict[str, int] = {}
    for name, w in base.items():
        if not w > 0:
            continue
        wins, rounds = results.get(name, (0.0, 0))
        rate = smoothed_win_rate(wins, rounds)
        rates[name], counts[name] = rate, rounds
        factor = 1.0
        if sampling == "pfsp" and name not in stale:
            factor = pfsp_factor(rate, power, floor, curve)
        weights[name] = float(w) * factor
    if not weights:
        raise ValueError("the opponent pool needs at least one positive weight")
    return weights, rates, counts


def league_draw(
    base: Mapping[str, float],
    results: Mapping[str, tuple[float, int]],
    sampling: Sampling,
    key: str,
    power: float = 2.0,
    floor: float = 0.05,
    curve: PfspCurve = "hard",
    stale: Collection[str] = (),
) -> LeagueDraw:
    """One draw from the pool: deterministic in (base, results, sampling, key, power, floor, curve, stale).

    With sampling "weights" it draws exactly what `OpponentSampler` draws for the same weights and key.
    """
    weights, rates, counts = league_weights(base, results, sampling, power, floor, curve, stale)
    opponent = draw(list(weights), list(weights.values()), key)
    return LeagueDraw(opponent, weights, rates, counts)
