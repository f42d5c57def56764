"""The per-round score share of the bot's rounds.jsonl (pure): own / (own + enemy) of each scored round, its
moving average, 50-round blocks (mean and pooled share), the first and last blocks per opponent, and the
summary's share facts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sacbot.records import RoundLine
from sacbot.report.data import RunData, opponent_group

SHARE_WINDOW = 50  # rounds in the per-round score share's moving average
SHARE_BLOCK = 50  # rounds per block of the per-round summary table


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
