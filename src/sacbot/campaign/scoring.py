"""Eval results, the composite score and the global-best promotion rule (pure).

Composite = the mean over the eval opponents of each opponent's moving average over its last `window` evals of
one metric (score share or win rate). The global best is promoted only when the composite strictly improves;
the checkpoint gate (`sacbot.checkpoint.offer_best`) applies the same rule to the score stored in `best.zip`,
which stays the truth across restarts.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Literal

from sacbot.records import EvalRecord

Metric = Literal["score_share", "win_rate"]


def score_kind(metric: Metric, window: int) -> str:
    """What a campaign's best score measures; the gate never compares scores of different kinds."""
    return f"campaign-eval-composite:{metric}:ma{window}"


def moving_average(history: Iterable[EvalRecord], opponent: str, metric: Metric, window: int) -> float | None:
    values = [getattr(r, metric) for r in history if r.opponent == opponent][-window:]
    return sum(values) / len(values) if values else None


def composite(
    history: Sequence[EvalRecord], opponents: Sequence[str], metric: Metric, window: int
) -> float | None:
    """None until every eval opponent has at least one eval."""
    if not opponents:
        return None
    averages = [moving_average(history, name, metric, window) for name in opponents]
    if any(a is None for a in averages):
        return None
    return sum(a for a in averages if a is not None) / len(averages)


def should_promote(candidate: float | None, incumbent: float | None) -> bool:
    """Strict improvement only: a tie keeps the incumbent, a missing candidate never wins."""
    if candidate is None:
        return False
    return incumbent is None or candidate > incumbent


def _field(item: dict[str, Any], camel: str, snake: str) -> float:
    return float(item.get(camel, item.get(snake, 0)) or 0)


class RoundWins:
    """Counts the rounds bot `me` won, from the accumulated results after each round (RoundEndedForObserver).

    A round is won when the bot was the last one standing: its last survivor bonus rose in that round. First
    places are not wins: equal totals share rank 1, so a round in which both bots die together (of inactivity,
    say) gives each a first place and a total of 0.
    """

    def __init__(self, me: str) -> None:
        self.me = me
        self.wins = 0
        self._bonus = 0.0

    def absorb(self, accumulated: Sequence[dict[str, Any]]) -> None:
        mine = [r for r in accumulated if r.get("name") == self.me]
        if not mine:
            return
        bonus = _field(mine[0], "lastSurvivorBonus", "last_survivor_bonus")
        if bonus > self._bonus:
            self.wins += 1
        self._bonus = bonus


def summarize_results(
    results: Sequence[dict[str, Any]], me: str, rounds: int, wins: int
) -> tuple[int, float, float, float]:
    """(wins, win_rate, score_share, bullet_damage) of bot `me` from accumulated observer results.

    `results` are ResultsForObserver as dicts (camelCase or snake_case keys); `wins` comes from `RoundWins`.
    """
    mine = [r for r in results if r.get("name") == me]
    if not mine:
        return 0, 0.0, 0.0, 0.0
    total_all = sum(_field(r, "totalScore", "total_score") for r in results)
    my_total = _field(mine[0], "totalScore", "total_score")
    share = my_total / total_all if total_all > 0 else 0.0
    win_rate = wins / rounds if rounds > 0 else 0.0
    return wins, win_rate, share, _field(mine[0], "bulletDamage", "bullet_damage")
