"""Scores (`score/ScoreTracker.kt`, `ScoreAndDamage.kt`, `ScoreCalculator.kt`,
`AccumulatedScoreCalculator.kt`).

Per round and bot: bullet damage (1 per point dealt), bullet kill bonus (20% of all damage dealt to each enemy
this bot killed with a bullet), ram damage (2 x 0.6 per ram hit), ram kill bonus (30% of all damage dealt to
each enemy killed by ramming), survival (50 for every turn in which another participant died while this one
lived) and the last survivor bonus (10 per dead bot, once, when one bot is left). Round ranks share places on
equal totals; rank 1/2/3 counts a first/second/third place. Game results are the sums over finished rounds.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from sacbot.engine.rules import (
    BONUS_PER_BULLET_KILL,
    BONUS_PER_LAST_SURVIVOR,
    BONUS_PER_RAM_KILL,
    RAM_DAMAGE,
    SCORE_PER_BULLET_DAMAGE,
    SCORE_PER_RAM_DAMAGE,
    SCORE_PER_SURVIVAL,
)


class Score:
    """Raw float scores of one bot (or team), with places and a rank."""

    __slots__ = (
        "bot_id",
        "bullet_damage",
        "bullet_kill_bonus",
        "ram_damage",
        "ram_kill_bonus",
        "survival",
        "last_survivor_bonus",
        "first_places",
        "second_places",
        "third_places",
        "rank",
    )

    def __init__(self, bot_id: int) -> None:
        self.bot_id = bot_id
        self.bullet_damage = 0.0
        self.bullet_kill_bonus = 0.0
        self.ram_damage = 0.0
        self.ram_kill_bonus = 0.0
        self.survival = 0.0
        self.last_survivor_bonus = 0.0
        self.first_places = 0
        self.second_places = 0
        self.third_places = 0
        self.rank = 0

    @property
    def total(self) -> float:
        return (
            self.bullet_damage
            + self.bullet_kill_bonus
            + self.ram_damage
            + self.ram_kill_bonus
            + self.survival
            + self.last_survivor_bonus
        )

    def accumulate(self, other: Score) -> None:
        self.bullet_damage += other.bullet_damage
        self.bullet_kill_bonus += other.bullet_kill_bonus
        self.ram_damage += other.ram_damage
        self.ram_kill_bonus += other.ram_kill_bonus
        self.survival += other.survival
        self.last_survivor_bonus += other.last_survivor_bonus
        self.first_places += other.first_places
        self.second_places += other.second_places
        self.third_places += other.third_places

    def copy(self, bot_id: int | None = None) -> Score:
        new = Score(self.bot_id if bot_id is None else bot_id)
        new.accumulate(self)
        new.rank = self.rank
        return new

    def __repr__(self) -> str:
        return f"Score(bot_id={self.bot_id}, total={self.total:.3f}, rank={self.rank})"


class _Record:
    """What one bot did to the others during a round (`ScoreAndDamage`)."""

    __slots__ = (
        "bullet_damage",
        "ram_hits",
        "bullet_kills",
        "ram_kills",
        "survival_count",
        "last_survivor_count",
    )

    def __init__(self) -> None:
        self.bullet_damage: dict[int, float] = {}
        self.ram_hits: dict[int, int] = {}
        self.bullet_kills: list[int] = []
        self.ram_kills: list[int] = []
        self.survival_count = 0
        self.last_survivor_count = 0

    def total_damage_to(self, enemy: int) -> float:
        return self.bullet_damage.get(enemy, 0.0) + self.ram_hits.get(enemy, 0) * RAM_DAMAGE


class RoundScoreTracker:
    """Scores of the running round."""

    def __init__(self, bot_ids: Sequence[int]) -> None:
        self.bot_ids = list(bot_ids)
        self._records = {bot_id: _Record() for bot_id in self.bot_ids}
        self._alive = set(self.bot_ids)
        self._last_survivors_given = False

    def register_bullet_hit(self, shooter: int, victim: int, damage: float, killed: bool) -> None:
        record = self._records[shooter]
        record.bullet_damage[victim] = record.bullet_damage.get(victim, 0.0) + damage
        if killed and victim not in record.bullet_kills:
            record.bullet_kills.append(victim)

    def register_ram_hit(self, rammer: int, victim: int, killed: bool) -> None:
        record = self._records[rammer]
        record.ram_hits[victim] = record.ram_hits.get(victim, 0) + 1
        if killed and victim not in record.ram_kills:
            record.ram_kills.append(victim)

    def register_deaths(self, victims: Iterable[int]) -> None:
        """Once per turn with deaths: every survivor gets one survival count; the last survivor bonus is given
        when one bot is left (or to all who died together when none is)."""
        victims = set(victims)
        if not victims:
            return
        before = set(self._alive)
        self._alive -= victims
        for bot_id in self._alive:
            self._records[bot_id].survival_count += 1
        if not self._last_survivors_given:
            dead_count = len(self.bot_ids) - len(self._alive)
            if len(self._alive) == 0:
                survivors: set[int] | None = before
            elif len(self._alive) == 1:
                survivors = self._alive
            else:
                survivors = None
            if survivors is not None:
                self._last_survivors_given = True
                for bot_id in survivors:
                    self._records[bot_id].last_survivor_count += dead_count

    def score(self, bot_id: int) -> Score:
        record = self._records[bot_id]
        s = Score(bot_id)
        s.bullet_damage = SCORE_PER_BULLET_DAMAGE * sum(record.bullet_damage.values())
        s.bullet_kill_bonus = BONUS_PER_BULLET_KILL * sum(
            record.total_damage_to(e) for e in record.bullet_kills
        )
        s.ram_damage = SCORE_PER_RAM_DAMAGE * (sum(record.ram_hits.values()) * RAM_DAMAGE)
        s.ram_kill_bonus = BONUS_PER_RAM_KILL * sum(record.total_damage_to(e) for e in record.ram_kills)
        s.survival = SCORE_PER_SURVIVAL * record.survival_count
        s.last_survivor_bonus = BONUS_PER_LAST_SURVIVOR * record.last_survivor_count
        return s

    def round_scores(self) -> list[Score]:
        """Scores sorted by total (highest first, then bot id), ranked, with this round's places counted."""
        scores = rank_scores([self.score(bot_id) for bot_id in self.bot_ids])
        for s in scores:
            if s.rank == 1:
                s.first_places = 1
            elif s.rank == 2:
                s.second_places = 1
            elif s.rank == 3:
                s.third_places = 1
        return scores


def rank_scores(scores: list[Score]) -> list[Score]:
    """Sort by total descending (stable: ties keep the given order) and give shared ranks on equal totals."""
    ordered = sorted(scores, key=lambda s: -s.total)
    last_total: float | None = None
    rank = 0
    for index, s in enumerate(ordered):
        total = s.total
        if total != last_total:
            rank = index + 1
            last_total = total
        s.rank = rank
    return ordered


def round_half_up(value: float) -> int:
    """Kotlin's `roundToInt` (Math.round): halves go up."""
    return math.floor(value + 0.5)
